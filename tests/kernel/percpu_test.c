// Tests for per-CPU variables and interrupt/preemption guards on one CPU
// (smp_test.c checks that different CPUs' copies are distinct).
#include "ktest/ktest.h"
#include "sync/percpu.h"
#include "x86/x86.h"

static DEFINE_PERCPU(uint64_t, test_counter);

KTEST(percpu_read_write_own_copy)
{
    this_cpu_write(test_counter, 41);
    this_cpu_inc(test_counter);
    KCHECK_EQ(this_cpu_read(test_counter), 42);
    KCHECK_EQ(*this_cpu_ptr(&test_counter), 42);
    KCHECK(this_cpu_ptr(&test_counter) == per_cpu_ptr(&test_counter, cpu_id()));
    // The template is never the live copy.
    KCHECK(this_cpu_ptr(&test_counter) != &test_counter);
}

KTEST(percpu_irq_guard_nests)
{
    bool was = read_rflags() & RFLAGS_IF;
    sti();
    push_off();
    push_off();
    KCHECK(!(read_rflags() & RFLAGS_IF));
    pop_off();
    KCHECK(!(read_rflags() & RFLAGS_IF)); // still inside the outer guard
    pop_off();
    KCHECK(read_rflags() & RFLAGS_IF);    // restored
    cli();
    push_off();
    pop_off();
    KCHECK(!(read_rflags() & RFLAGS_IF)); // stays off if it was off
    if (was)
        sti();
}

KTEST(percpu_preempt_guard_nests)
{
    int d = this_cpu_read(cpu.preempt_depth);
    preempt_disable();
    preempt_disable();
    KCHECK_EQ(this_cpu_read(cpu.preempt_depth), d + 2);
    preempt_enable();
    preempt_enable();
    KCHECK_EQ(this_cpu_read(cpu.preempt_depth), d);
}
