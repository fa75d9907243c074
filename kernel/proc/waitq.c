// Wait queues: sleep until a condition holds (wait_event in sched.h).
//
// A sleeper links itself on the queue and marks itself T_SLEEPING under the
// queue's lock, then tests its condition, and only then gives up the CPU. A waker
// changes the condition first and then wakes the queue, so either the sleeper sees
// the new condition or the waker sees the sleeper: no wake-up is lost. The
// T_SLEEPING -> T_RUNNABLE step is a compare-and-swap (thread_wake), so a sleeper
// that found its condition true and a waker that saw it asleep cannot both resume
// it; the loser of that race (the sleeper) gives up the CPU once in waitq_finish
// and is resumed from its run queue. A timer preemption between waitq_prepare and
// schedule() acts as a wake-up (sched.c), so the sleeper is never left asleep
// with its condition unchecked.
//
// Scalability: a wait queue belongs to one object (a process, a pipe, a futex
// bucket); operations on different objects share nothing.
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/percpu.h"

void waitq_init(struct waitq *q, const char *name)
{
    spin_init(&q->lock, name);
    list_init(&q->waiters);
}

void waitq_prepare(struct waitq *q)
{
    struct thread *t = thread_current();
    spin_lock(&q->lock);
    if (t->wq != q) {
        assert(t->wq == NULL);
        list_push_back(&q->waiters, &t->wq_link);
        t->wq = q;
    }
    store_seqcst(&t->state, T_SLEEPING);
    spin_unlock(&q->lock);
}

void waitq_finish(struct waitq *q)
{
    struct thread *t = thread_current();
    spin_lock(&q->lock);
    if (t->wq == q) {
        list_remove(&t->wq_link);
        t->wq = NULL;
    }
    spin_unlock(&q->lock);
    int want = T_SLEEPING;
    if (!cas_fail_relaxed(&t->state, &want, T_RUNNING) && want == T_RUNNABLE)
        schedule(); // a waker queued us meanwhile: let the run queue resume us
}

static int wake(struct waitq *q, int max)
{
    int n = 0;
    spin_lock(&q->lock);
    while (n < max && !list_empty(&q->waiters)) {
        struct thread *t = list_entry(q->waiters.next, struct thread, wq_link);
        list_remove(&t->wq_link);
        t->wq = NULL;
        n += thread_wake(t);
    }
    spin_unlock(&q->lock);
    return n;
}

int waitq_wake_all(struct waitq *q) { return wake(q, 1 << 30); }
int waitq_wake_one(struct waitq *q) { return wake(q, 1); }
