// Spinlocks. Interrupts stay off while a lock is held on this CPU: an interrupt
// handler that takes the same lock would otherwise spin forever on its own CPU.
#include "sync/spinlock.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "x86/x86.h"

void spin_init(struct spinlock *l, const char *name)
{
    l->locked = 0;
    l->owner = -1;
    l->name = name;
}

bool spin_holding(struct spinlock *l)
{
    return l->locked && l->owner == cpu_id();
}

static void acquired(struct spinlock *l)
{
    // The xchg that took the lock is a full barrier; nothing to add here.
    l->owner = cpu_id();
    this_cpu_inc(cpu.locks_held);
}

void spin_lock(struct spinlock *l)
{
    push_off();
    if (spin_holding(l))
        panic("spin_lock: %s already held by this CPU", l->name);
    if (xchg_acquire(&l->locked, 1) != 0) {
        // Contended: say which lock we wait for (a hang report names it and
        // its holder), and spin on a plain read so waiters share the line
        // instead of bouncing it.
        this_cpu_write(cpu.spinning_on, l);
        do {
            while (READ_ONCE(l->locked))
                pause();
        } while (xchg_acquire(&l->locked, 1) != 0);
        this_cpu_write(cpu.spinning_on, NULL);
    }
    acquired(l);
}

bool spin_trylock(struct spinlock *l)
{
    push_off();
    if (xchg_acquire(&l->locked, 1) == 0) {
        acquired(l);
        return true;
    }
    pop_off();
    return false;
}

void spin_unlock(struct spinlock *l)
{
    if (!spin_holding(l))
        panic("spin_unlock: %s not held by this CPU", l->name);
    l->owner = -1;
    this_cpu_dec(cpu.locks_held);
    store_release(&l->locked, 0);
    pop_off();
}

void assert_no_locks_held(const char *where)
{
    int n = this_cpu_read(cpu.locks_held);
    if (n != 0)
        panic("%s with %d spinlock(s) held", where, n);
}
