// Tests for spinlocks on one CPU: state, interrupt masking, trylock, bookkeeping.
#include "ktest.h"
#include "percpu.h"
#include "spinlock.h"
#include "x86.h"

KTEST(spinlock_basic)
{
    struct spinlock l;
    spin_init(&l, "test");
    int held = this_cpu_read(cpu.locks_held);
    spin_lock(&l);
    KCHECK(spin_holding(&l));
    KCHECK(!(read_rflags() & RFLAGS_IF)); // interrupts off while held
    KCHECK_EQ(this_cpu_read(cpu.locks_held), held + 1);
    KCHECK(!spin_trylock(&l) || (spin_unlock(&l), false)); // a held lock can't be retaken
    spin_unlock(&l);
    KCHECK(!spin_holding(&l));
    KCHECK_EQ(this_cpu_read(cpu.locks_held), held);
    KCHECK(spin_trylock(&l));
    spin_unlock(&l);
}

KTEST(spinlock_restores_interrupts)
{
    struct spinlock a = SPINLOCK_INIT("a"), b = SPINLOCK_INIT("b");
    sti();
    spin_lock(&a);
    spin_lock(&b);
    spin_unlock(&b);
    KCHECK(!(read_rflags() & RFLAGS_IF));
    spin_unlock(&a);
    KCHECK(read_rflags() & RFLAGS_IF);
}
