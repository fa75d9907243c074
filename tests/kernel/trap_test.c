// Tests for exception handling and recovery: a fault in a test, or in code run
// with a recovery point armed, is caught and reported with its vector.
#include "ktest/ktest.h"
#include "lib/panic.h"
#include "testutil.h"
#include "x86/trap.h"
#include "x86/x86.h"

static void read_unmapped(void) { (void)*(volatile uint64_t *)0x1000; }
static void do_ud2(void) { asm volatile("ud2"); }
static void read_noncanonical(void) { (void)*(volatile uint64_t *)0x8000000000000000UL; }

KTEST(trap_recovers_page_fault) { KCHECK_EQ(run_catching(read_unmapped), T_PF); }
KTEST(trap_recovers_invalid_opcode) { KCHECK_EQ(run_catching(do_ud2), T_UD); }
KTEST(trap_recovers_general_protection) { KCHECK_EQ(run_catching(read_noncanonical), T_GP); }
KTEST(trap_no_exception_no_recovery) { KCHECK_EQ(run_catching(backtrace), -1); }

// The harness itself must catch a test that faults: this one passes only if the
// fault below is caught and reported.
KTEST_FAULT(trap_fault_in_test_is_caught) { read_unmapped(); }
