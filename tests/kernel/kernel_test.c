// Tests for the kernel image's page protections (W^X): text and rodata are
// read-only, data is not executable. Each store or call must fault.
#include "ktest/ktest.h"
#include "testutil.h"
#include "x86/trap.h"

static void write_text(void) { *(volatile uint8_t *)(uintptr_t)write_text = 0xc3; }
static void write_rodata(void)
{
    static const uint64_t constant = 42;
    *(volatile uint64_t *)&constant = 7;
}
static void exec_data(void)
{
    static uint8_t code[16] = {0xc3}; // ret, in a writable (so non-executable) page
    ((void (*)(void))(uintptr_t)code)();
}

KTEST(kernel_text_is_readonly) { KCHECK_EQ(run_catching(write_text), T_PF); }
KTEST(kernel_rodata_is_readonly) { KCHECK_EQ(run_catching(write_rodata), T_PF); }
KTEST(kernel_data_is_not_executable) { KCHECK_EQ(run_catching(exec_data), T_PF); }
