// Tests for exception handling, recovery, kernel page protections and symbols.
#include "ktest/ktest.h"
#include "lib/panic.h"
#include "mm/mmu.h"
#include "testutil.h"
#include "x86/trap.h"
#include "x86/x86.h"

static void read_unmapped(void) { (void)*(volatile uint64_t *)0x1000; }
static void do_ud2(void) { asm volatile("ud2"); }
static void read_noncanonical(void) { (void)*(volatile uint64_t *)0x8000000000000000UL; }
static void write_text(void) { *(volatile uint8_t *)(uintptr_t)read_unmapped = 0xc3; }
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

KTEST(trap_recovers_page_fault) { KCHECK_EQ(run_catching(read_unmapped), T_PF); }
KTEST(trap_recovers_invalid_opcode) { KCHECK_EQ(run_catching(do_ud2), T_UD); }
KTEST(trap_recovers_general_protection) { KCHECK_EQ(run_catching(read_noncanonical), T_GP); }
KTEST(trap_no_exception_no_recovery) { KCHECK_EQ(run_catching(backtrace), -1); }

// W^X for the kernel image: text and rodata are read-only, data is not executable.
KTEST(kernel_text_is_readonly) { KCHECK_EQ(run_catching(write_text), T_PF); }
KTEST(kernel_rodata_is_readonly) { KCHECK_EQ(run_catching(write_rodata), T_PF); }
KTEST(kernel_data_is_not_executable) { KCHECK_EQ(run_catching(exec_data), T_PF); }

// The harness itself must catch a test that faults: this one passes only if the
// fault below is caught and reported.
KTEST_FAULT(trap_fault_in_test_is_caught) { read_unmapped(); }

void kmain(uint64_t);
KTEST(symbols_resolve_kernel_functions)
{
    uintptr_t off = 99;
    const char *name = symbol_lookup((uintptr_t)kmain + 3, &off);
    KREQUIRE(name != NULL);
    KCHECK(strcmp(name, "kmain") == 0);
    KCHECK_EQ(off, 3);
    KCHECK(symbol_lookup(0x1234, &off) == NULL);
}
