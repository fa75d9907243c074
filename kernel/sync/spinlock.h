// Spinning mutual exclusion with interrupts off while held.
#pragma once
#include "kernel.h"

struct spinlock {
    volatile uint32_t locked;
    int owner;          // CPU id of the holder, -1 when free (debugging)
    const char *name;
};

#define SPINLOCK_INIT(n) { .locked = 0, .owner = -1, .name = (n) }

void spin_init(struct spinlock *l, const char *name);
void spin_lock(struct spinlock *l);
bool spin_trylock(struct spinlock *l);
void spin_unlock(struct spinlock *l);
bool spin_holding(struct spinlock *l);

// Context switches and returns to user space call this: holding a spinlock there
// would deadlock the next CPU that wants it, so it is a bug and panics.
void assert_no_locks_held(const char *where);
