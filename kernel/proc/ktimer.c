// Kernel timers: call a function at a deadline, from a timer tick.
//
// Commute: timers armed on different CPUs. Each CPU keeps its own list,
// sorted by deadline, under its own lock in its per-CPU area; a timer goes on
// the list of the CPU that arms it (unless its function is running: then it
// stays with the CPU running it, so that it never runs on two CPUs at once),
// so arming, firing and re-arming from the function touch that CPU's lines
// only. Cancelling a timer another CPU armed
// takes that CPU's lock: rare (a process changing or ending its alarm after
// it moved). Resolution is the tick (TIMER_HZ); a tick with nothing due reads
// one word of its own list.
#include "proc/ktimer.h"
#include "sync/percpu.h"
#include "sync/spinlock.h"
#include "x86/smp.h"
#include "x86/x86.h"

struct ktimer_cpu {
    struct spinlock lock;
    struct ktimer *first; // [l] by deadline
};
static DEFINE_PERCPU(struct ktimer_cpu, ktimer_cpu) = {.lock = SPINLOCK_INIT("ktimer")};

void ktimer_init(struct ktimer *t, void (*fn)(struct ktimer *))
{
    *t = (struct ktimer){.cpu = -1, .fn = fn};
}

// Lock the list t is on (or was last on), even as t moves: NULL if none.
static struct ktimer_cpu *lock_list_of(struct ktimer *t)
{
    for (;;) {
        int cpu = READ_ONCE(t->cpu);
        if (cpu < 0)
            return NULL;
        struct ktimer_cpu *kc = per_cpu_ptr(&ktimer_cpu, cpu);
        spin_lock(&kc->lock);
        if (READ_ONCE(t->cpu) == cpu)
            return kc;
        spin_unlock(&kc->lock);
    }
}

static void unlink(struct ktimer_cpu *kc, struct ktimer *t)
{
    for (struct ktimer **pp = &kc->first; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    t->armed = false;
}

void ktimer_arm(struct ktimer *t, uint64_t deadline)
{
    push_off(); // stay on this CPU while we use its list
    struct ktimer_cpu *kc = this_cpu_ptr(&ktimer_cpu), *old = lock_list_of(t);
    if (old && t->armed)
        unlink(old, t);
    // A timer whose function runs now stays on the list of the CPU running
    // it: only that CPU's tick can fire it again, after the function returns,
    // so it never runs on two CPUs at once, and the tick clears `running`
    // under the lock of the list the timer is on.
    if (old && t->running)
        kc = old;
    if (old != kc) {
        if (old)
            spin_unlock(&old->lock);
        spin_lock(&kc->lock);
        WRITE_ONCE(t->cpu, cpu_id());
    }
    t->deadline = deadline;
    struct ktimer **pp = &kc->first;
    while (*pp && (*pp)->deadline <= deadline)
        pp = &(*pp)->next;
    t->next = *pp;
    *pp = t;
    t->armed = true;
    spin_unlock(&kc->lock);
    pop_off();
}

bool ktimer_cancel(struct ktimer *t)
{
    struct ktimer_cpu *kc = lock_list_of(t);
    if (!kc)
        return false;
    bool armed = t->armed;
    if (armed)
        unlink(kc, t);
    spin_unlock(&kc->lock);
    return armed;
}

void ktimer_cancel_sync(struct ktimer *t)
{
    for (;;) {
        struct ktimer_cpu *kc = lock_list_of(t);
        if (!kc)
            return;
        if (t->armed)
            unlink(kc, t);
        bool running = t->running;
        spin_unlock(&kc->lock);
        if (!running)
            return;
        // Its function is running on that CPU: wait for it to end (it may
        // re-arm the timer, which the next round takes off again).
        while (READ_ONCE(t->running))
            pause();
    }
}

uint64_t ktimer_next_deadline(void)
{
    struct ktimer_cpu *kc = this_cpu_ptr(&ktimer_cpu);
    if (!READ_ONCE(kc->first))
        return UINT64_MAX;
    spin_lock(&kc->lock); // a cancel on another CPU may take it off and free it
    uint64_t d = kc->first ? kc->first->deadline : UINT64_MAX;
    spin_unlock(&kc->lock);
    return d;
}

void ktimer_tick(void)
{
    struct ktimer_cpu *kc = this_cpu_ptr(&ktimer_cpu);
    if (!READ_ONCE(kc->first))
        return;
    uint64_t now = nsec_now();
    spin_lock(&kc->lock);
    struct ktimer *t;
    while ((t = kc->first) && t->deadline <= now) {
        kc->first = t->next;
        t->armed = false;
        t->running = true;
        spin_unlock(&kc->lock);
        t->fn(t);
        spin_lock(&kc->lock);
        WRITE_ONCE(t->running, false);
    }
    spin_unlock(&kc->lock);
}
