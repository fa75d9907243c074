// Spinlocks. Interrupts stay off while a lock is held on this CPU: an interrupt
// handler that takes the same lock would otherwise spin forever on its own CPU.
#include "sync/spinlock.h"
#include "mm/mm.h"
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

// A lock word is 0 or 1. Anything else means the lock's memory was overwritten,
// or freed and reused (under kpoison a freed object reads 0x6b6b6b6b): say so
// now, with the address, instead of spinning on it (or calling it held).
static void check_word(struct spinlock *l, uint32_t v)
{
    if (v > 1)
        panic("spin_lock: the lock at %p holds %#x: its memory was %s", l, v,
              v == 0x01010101u * KPOISON_BYTE ? "freed (kmalloc's poison)" : "overwritten");
}

void spin_lock(struct spinlock *l)
{
    push_off();
    if (spin_holding(l)) {
        check_word(l, l->locked); // (a corrupt word may only look like ours)
        panic("spin_lock: %s already held by this CPU", l->name);
    }
    uint32_t v;
    if ((v = xchg_acquire(&l->locked, 1)) != 0) {
        // Contended: say which lock we wait for (a hang report names it and
        // its holder), and spin on a plain read so waiters share the line
        // instead of bouncing it.
        this_cpu_write(cpu.spinning_on, l);
        do {
            check_word(l, v);
            while ((v = READ_ONCE(l->locked)) != 0) {
                check_word(l, v);
                pause();
            }
        } while ((v = xchg_acquire(&l->locked, 1)) != 0);
        this_cpu_write(cpu.spinning_on, NULL);
    }
    acquired(l);
}

bool spin_trylock(struct spinlock *l)
{
    push_off();
    uint32_t v = xchg_acquire(&l->locked, 1);
    if (v == 0) {
        acquired(l);
        return true;
    }
    check_word(l, v);
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
