// Tickless idle (kernel/proc/tickless.c): an idle CPU stops its tick, and a
// stopped CPU still does what it must: it runs cross-calls sent to it, wakes
// a timed sleeper on time, lets epochs advance, and takes work queued behind
// a busy CPU's running thread. CPU 1 is the subject; the tests run on CPU 0.
#include "ktest/ktest.h"
#include "proc/sched.h"
#include "proc/tickless.h"
#include "sync/cpumask.h"
#include "sync/activeset.h"
#include "sync/epoch.h"
#include "sync/percpu.h"
#include "sync/refcache.h"
#include "sync/xcall.h"
#include "x86/smp.h"
#include "x86/x86.h"

#define MS 1000000UL

// Wait (sleeping, so CPU 0 stays usable) until CPU 1's tick stops, up to
// 30 s: a CPU keeps ticking while it may hold refcache deltas (several
// seconds after it last did file work).
static bool cpu1_stopped(void)
{
    uint64_t end = nsec_now() + 30000 * MS;
    while (!tickless_stopped(1) && nsec_now() < end)
        sched_sleep_until(nsec_now() + 20 * MS);
    return tickless_stopped(1);
}

static bool enough_cpus(void)
{
    if (ncpu_online >= 2)
        return true;
    kprintf("# needs 2 CPUs; nothing to check\n");
    return false;
}

static cpumask_t only_cpu1(void)
{
    cpumask_t one;
    cpumask_clear(&one);
    cpumask_set(&one, 1);
    return one;
}

KTEST(tickless_idle_cpu_stops_its_tick)
{
    if (!enough_cpus())
        return;
    KREQUIRE(cpu1_stopped());
    uint64_t t0 = timer_ticks(1), stops0 = tickless_stops(1);
    sched_sleep_until(nsec_now() + 300 * MS);
    // The count first: stopped now with no stop since means no wake-up came
    // before the count was read (a woken CPU is stopped again only by a stop).
    uint64_t t1 = timer_ticks(1);
    if (tickless_stopped(1) && tickless_stops(1) == stops0) // nothing woke it meanwhile
        KCHECK_EQ(t1, t0);
    KCHECK(tickless_stops(1) > 0);
}

static volatile int ran_on;
static void note_cpu(void *arg)
{
    (void)arg;
    ran_on = cpu_id();
}

KTEST(tickless_stopped_cpu_runs_xcalls)
{
    if (!enough_cpus())
        return;
    KREQUIRE(cpu1_stopped());
    cpumask_t one = only_cpu1();
    ran_on = -1;
    uint64_t stops = tickless_stops(1);
    xcall(&one, note_cpu, NULL, true);
    KCHECK_EQ(ran_on, 1);
    // It ticks again for a while (20 ticks): stopped now only if it stopped
    // again since, while a loaded host held this CPU back.
    KCHECK(!tickless_stopped(1) || tickless_stops(1) > stops);
}

static volatile uint64_t woke_at;
static void sleep_until_deadline(void *arg)
{
    uint64_t deadline = *(uint64_t *)arg;
    sched_sleep_until(deadline);
    woke_at = nsec_now();
}

// The sleeper's CPU stops its tick while it sleeps; the one-shot timer at the
// deadline wakes it.
KTEST(tickless_timed_sleeper_wakes_on_time)
{
    if (!enough_cpus())
        return;
    KREQUIRE(cpu1_stopped());
    cpumask_t one = only_cpu1();
    uint64_t stops0 = tickless_stops(1);
    static uint64_t deadline;
    deadline = nsec_now() + 600 * MS;
    woke_at = 0;
    struct thread *t = kthread_create("sleeper", sleep_until_deadline, &deadline, &one);
    KREQUIRE(t);
    thread_join(t);
    KCHECK(woke_at >= deadline);
    KCHECK(woke_at < deadline + 1000 * MS);
    KCHECK(tickless_stops(1) > stops0); // it stopped while the thread slept
    kprintf("# woke %lu ms after its deadline\n", (woke_at - deadline) / MS);
}

KTEST(tickless_epochs_advance_while_ticks_stopped)
{
    if (!enough_cpus())
        return;
    KREQUIRE(cpu1_stopped());
    uint64_t e0 = epoch_current(), t0 = nsec_now();
    epoch_synchronize();
    KCHECK(epoch_current() >= e0 + 2);
    KCHECK(nsec_now() - t0 < 5000 * MS);
}

// Two threads allowed on m, queued on CPU 0 behind the running test, which
// keeps the CPU (preemption off, the caller's): how many stopped CPUs CPU 0
// woke meanwhile to take them.
static uint64_t queue_two(const cpumask_t *m, void (*fn)(void *), struct thread *t[2])
{
    uint64_t kicks0 = tickless_kicks(cpu_id());
    for (long i = 0; i < 2; i++)
        t[i] = kthread_create("queued", fn, (void *)i, m);
    return tickless_kicks(cpu_id()) - kicks0;
}

static void join_two(struct thread *t[2])
{
    for (int i = 0; i < 2; i++)
        if (t[i])
            thread_join(t[i]);
}

// Only a CPU woken to steal one can run them.
static volatile int queued_ran[2];
static void note_queued(void *arg)
{
    queued_ran[(long)arg] = cpu_id() + 1;
}

KTEST(tickless_stopped_cpu_takes_queued_work)
{
    if (!enough_cpus())
        return;
    KREQUIRE(cpu1_stopped());
    cpumask_t both;
    cpumask_clear(&both);
    cpumask_set(&both, 0);
    cpumask_set(&both, 1);
    queued_ran[0] = queued_ran[1] = 0;
    preempt_disable();
    int me = cpu_id();
    struct thread *t[2];
    uint64_t kicks = queue_two(&both, note_queued, t);
    uint64_t end = nsec_now() + 5000 * MS;
    while (t[0] && t[1] && !READ_ONCE(queued_ran[0]) && !READ_ONCE(queued_ran[1]) &&
           nsec_now() < end)
        pause();
    int first = queued_ran[0] ? queued_ran[0] : queued_ran[1];
    preempt_enable();
    join_two(t);
    KREQUIRE(t[0] && t[1]);
    KCHECK_EQ(me, 0);
    KCHECK_EQ(first, 1 + 1); // CPU 1 took one while CPU 0 was held
    KCHECK(kicks > 0);
}

// Two threads that only CPU 0 may run: no other CPU could take them, so CPU 0
// wakes no stopped CPU (and reads no line of the stopped mask, which every
// CPU stopping or starting its tick writes).
static volatile int pinned_ran;
static void note_pinned(void *arg)
{
    (void)arg;
    fetch_add(&pinned_ran, 1);
}

KTEST(tickless_work_only_its_cpu_may_run_wakes_no_one)
{
    if (!enough_cpus())
        return;
    KREQUIRE(cpu1_stopped());
    cpumask_t zero;
    cpumask_clear(&zero);
    cpumask_set(&zero, 0);
    pinned_ran = 0;
    preempt_disable();
    int me = cpu_id();
    struct thread *t[2];
    uint64_t kicks = queue_two(&zero, note_pinned, t);
    preempt_enable();
    join_two(t);
    KREQUIRE(t[0] && t[1]);
    KCHECK_EQ(me, 0);
    KCHECK_EQ(kicks, 0);
    KCHECK_EQ(pinned_ran, 2);
}

// A CPU that used refcache and then idles for a second empties its cache and
// leaves every shard of the active set as its tick stops (exact readers stop
// visiting it); the object's exact count is still right.
static struct refcache_obj counted;
static void count_on_cpu1(void *arg)
{
    (void)arg;
    refcache_inc(&counted);
    refcache_inc(&counted);
    refcache_dec(&counted);
}

static void not_released(struct refcache_obj *o) { (void)o; }

KTEST(tickless_idle_cpu_leaves_the_active_set)
{
    if (!enough_cpus())
        return;
    refcache_init(&counted, 1, not_released);
    cpumask_t one = only_cpu1();
    struct thread *t = kthread_create("counter", count_on_cpu1, NULL, &one);
    KREQUIRE(t);
    thread_join(t);
    uint64_t t0 = nsec_now();
    KREQUIRE(cpu1_stopped());
    for (int k = 0; k < ACTIVE_SHARDS; k++) {
        cpumask_t active;
        for (int kind = 0; kind < ACTIVE_KINDS; kind++) {
            active_snapshot_shard(&kernel_active[kind], k, &active);
            KCHECK(!cpumask_test(&active, 1));
        }
    }
    KCHECK(nsec_now() - t0 < 10000 * MS); // not the linger's many epochs
    KCHECK_EQ(refcache_read_exact(&counted), 2); // kept: a static object is never released
    kprintf("# CPU 1 stopped and left the active set %lu ms after its last update\n",
            (nsec_now() - t0) / MS);
}
