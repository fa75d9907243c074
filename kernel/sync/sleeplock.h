// Sleeping locks: mutual exclusion for sections that may sleep or fault on user
// memory (a pipe's buffer, an open file's offset). A waiter gives up its CPU
// instead of spinning. Uncontended, lock and unlock are one atomic exchange and
// one store plus a fence on the lock's own line.
#pragma once
#include "proc/sched.h"
#include "sync/atomic.h"

struct sleeplock {
    int locked;
    struct waitq wq;
};

static inline void sleeplock_init(struct sleeplock *l, const char *name)
{
    l->locked = 0;
    waitq_init(&l->wq, name);
}

static inline void sleeplock_acquire(struct sleeplock *l)
{
    while (xchg_acquire(&l->locked, 1))
        wait_event(&l->wq, !READ_ONCE(l->locked));
}

// Take it if it is free, without waiting: false if it is held.
static inline bool sleeplock_try(struct sleeplock *l) { return !xchg_acquire(&l->locked, 1); }

static inline void sleeplock_release(struct sleeplock *l)
{
    // The sequentially consistent store orders the release before the check of
    // the wait list: a waiter links itself (under the queue's lock) before it
    // tests `locked`, so either it sees 0 or we see it on the list.
    store_seqcst(&l->locked, 0);
    if (!list_empty(&l->wq.waiters))
        waitq_wake_one(&l->wq);
}
