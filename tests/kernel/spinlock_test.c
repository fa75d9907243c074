// Tests for spinlocks on one CPU: state, interrupt masking, trylock, bookkeeping.
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "proc/sched.h"
#include "sync/percpu.h"
#include "sync/spinlock.h"
#include "syscall/syscall.h"
#include "x86/x86.h"

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

// The debug checks: a CPU that holds a spinlock must not switch threads or go
// back to user mode. Both end in panic(), which these tests catch.
static struct spinlock held_lock = SPINLOCK_INIT("held across");

KTEST_PANIC(spinlock_held_across_context_switch_panics)
{
    spin_init(&held_lock, "held across");
    spin_lock(&held_lock);
    sched_yield();
}

KTEST_PANIC(spinlock_held_on_return_to_user_panics)
{
    spin_init(&held_lock, "held across");
    spin_lock(&held_lock);
    user_return(NULL);
}

// And without a lock held, the same switch is fine.
KTEST(spinlock_no_lock_no_panic)
{
    sched_yield();
    KCHECK_EQ(this_cpu_read(cpu.locks_held), 0);
}

// A lock word is 0 or 1: a lock whose memory was freed and poisoned (or
// overwritten) is reported at once, not spun on forever or called held.
static struct spinlock poisoned_lock;

KTEST_PANIC(spinlock_poisoned_word_panics)
{
    memset(&poisoned_lock, KPOISON_BYTE, sizeof poisoned_lock);
    spin_lock(&poisoned_lock);
}
