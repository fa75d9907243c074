// Kernel timers (kernel/proc/ktimer.c): a timer fires once its deadline has
// passed and not before, a cancelled one does not fire, and a timer re-armed
// from another CPU while its function runs never runs on two CPUs at once
// (which would let ktimer_cancel_sync return while it still runs, and the
// owner free it under the running function).
#include "ktest/ktest.h"
#include "proc/ktimer.h"
#include "proc/sched.h"
#include "sync/cpumask.h"
#include "sync/percpu.h"
#include "x86/smp.h"
#include "x86/x86.h"

#define MS 1000000ULL

static volatile int runs;
static volatile uint64_t fired_at;

static void count(struct ktimer *t)
{
    (void)t;
    fired_at = nsec_now();
    __atomic_add_fetch(&runs, 1, __ATOMIC_SEQ_CST);
}

// Wait (interrupts on, so ticks come) until runs reaches n or ms pass.
static void wait_runs(int n, uint64_t ms)
{
    uint64_t end = nsec_now() + ms * MS;
    while (READ_ONCE(runs) < n && nsec_now() < end)
        sched_yield();
}

KTEST(ktimer_fires_after_its_deadline)
{
    struct ktimer t;
    ktimer_init(&t, count);
    runs = 0;
    uint64_t deadline = nsec_now() + 30 * MS;
    ktimer_arm(&t, deadline);
    wait_runs(1, 2000);
    ktimer_cancel_sync(&t);
    KCHECK_EQ(runs, 1);
    KCHECK(fired_at >= deadline);
}

KTEST(ktimer_cancelled_does_not_fire)
{
    struct ktimer t;
    ktimer_init(&t, count);
    runs = 0;
    ktimer_arm(&t, nsec_now() + 50 * MS);
    KCHECK(ktimer_cancel(&t));
    wait_runs(1, 200);
    KCHECK(!ktimer_cancel(&t));
    ktimer_cancel_sync(&t);
    KCHECK_EQ(runs, 0);
}

// The function stays inside for 30 ms; a thread on another CPU re-arms the
// timer, due at once, while it is inside.
static struct ktimer slow;
static volatile int inside, overlapped, rearmed_inside;

static void slow_fn(struct ktimer *t)
{
    (void)t;
    if (__atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST) > 1)
        overlapped = 1;
    __atomic_add_fetch(&runs, 1, __ATOMIC_SEQ_CST);
    uint64_t end = nsec_now() + 30 * MS;
    while (nsec_now() < end)
        pause();
    __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
}

static void rearm_while_running(void *arg)
{
    (void)arg;
    uint64_t end = nsec_now() + 2000 * MS;
    while (!READ_ONCE(inside) && nsec_now() < end)
        pause();
    rearmed_inside = READ_ONCE(inside);
    ktimer_arm(&slow, nsec_now());
    wait_runs(2, 2000);
    ktimer_cancel_sync(&slow);
}

KTEST(ktimer_rearmed_elsewhere_never_runs_twice_at_once)
{
    if (ncpu_online < 2) {
        kprintf("# needs 2 CPUs; nothing to check\n");
        return;
    }
    ktimer_init(&slow, slow_fn);
    runs = inside = overlapped = rearmed_inside = 0;
    push_off();
    int me = cpu_id();
    ktimer_arm(&slow, nsec_now() + 200 * MS); // time for the other thread to start
    pop_off();
    cpumask_t other;
    cpumask_clear(&other);
    cpumask_set(&other, me == 0 ? 1 : 0);
    struct thread *r = kthread_create("rearm", rearm_while_running, NULL, &other);
    KREQUIRE(r);
    thread_join(r);
    KCHECK(rearmed_inside); // else the race was not tried
    KCHECK(runs >= 2);
    KCHECK(!overlapped);
    KCHECK_EQ(inside, 0);
}
