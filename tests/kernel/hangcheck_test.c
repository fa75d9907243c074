// The hang detector (kernel/proc/hangcheck.c): a CPU held without a preemption
// point, or with interrupts off, is reported from where it spins. The tests put a
// report hook in place of the panic and a 1-second limit, hang a CPU on purpose
// until the report arrives (or 10 s pass), and check who reported what.
#include "ktest/ktest.h"
#include "lib/panic.h"
#include "proc/hangcheck.h"
#include "proc/sched.h"
#include "proc/tickless.h"
#include "sync/cpumask.h"
#include "sync/percpu.h"
#include "sync/spinlock.h"
#include "sync/xcall.h"
#include "x86/smp.h"
#include "x86/trap.h"
#include "x86/x86.h"

static volatile int reports;
static volatile int report_cpu;
static volatile bool report_nmi;
static volatile uintptr_t report_rip;

static struct spinlock *volatile report_lock_seen;

static void record(int who, struct trapframe *tf, bool nmi)
{
    report_lock_seen = this_cpu_read(cpu.spinning_on);
    report_cpu = who;
    report_nmi = nmi;
    report_rip = tf->rip;
    __atomic_add_fetch(&reports, 1, __ATOMIC_SEQ_CST);
}

// The hang itself: no call inside the loop, so the report's rip lands here.
static __attribute__((noinline)) void spin_until_reported(uint64_t cycles)
{
    uint64_t end = rdtsc() + cycles;
    while (!READ_ONCE(reports) && rdtsc() < end)
        pause();
}

static bool in_spin(uintptr_t rip)
{
    uintptr_t off;
    const char *name = symbol_lookup(rip, &off);
    return name && strcmp(name, "spin_until_reported") == 0;
}

static uint32_t begin(void)
{
    uint32_t old = hangcheck_limit();
    reports = 0;
    report_cpu = -1;
    hangcheck_configure(1, record);
    return old;
}

KTEST(hangcheck_reports_cpu_never_preemptible)
{
    uint32_t old = begin();
    preempt_disable(); // interrupts stay on: the ticks come, none may preempt
    int me = cpu_id();
    spin_until_reported(10 * tsc_hz());
    preempt_enable();
    hangcheck_configure(old, NULL);
    KREQUIRE(reports >= 1);
    KCHECK_EQ(report_cpu, me);
    KCHECK(!report_nmi);
    KCHECK(in_spin(report_rip));
}

static void spin_interrupts_off(void *arg)
{
    (void)arg;
    cli();
    spin_until_reported(10 * tsc_hz());
    sti();
}

KTEST(hangcheck_nmi_reports_cpu_with_interrupts_off)
{
    if (ncpu_online < 2) {
        kprintf("# needs 2 CPUs; nothing to check\n");
        return;
    }
    cpumask_t one;
    cpumask_clear(&one);
    cpumask_set(&one, 1); // watched by CPU 0, where this test runs
    uint32_t old = begin();
    struct thread *t = kthread_create("hang", spin_interrupts_off, NULL, &one);
    KREQUIRE(t);
    thread_join(t);
    hangcheck_configure(old, NULL);
    KREQUIRE(reports >= 1);
    KCHECK_EQ(report_cpu, 1);
    KCHECK(report_nmi);
    KCHECK(in_spin(report_rip));
}

// A CPU hung waiting for a spinlock: the report names the lock (and asks its
// holder for its stack). CPU 2 holds the lock with interrupts off until the
// report; CPU 1 waits for it; CPU 0 watches CPU 1.
static struct spinlock held = SPINLOCK_INIT("hangcheck test");
static volatile bool holding;

static void hold_lock(void *arg)
{
    (void)arg;
    spin_lock(&held);
    holding = true;
    uint64_t end = rdtsc() + 10 * tsc_hz();
    while (!READ_ONCE(reports) && rdtsc() < end)
        pause();
    spin_unlock(&held);
}

static void wait_for_lock(void *arg)
{
    (void)arg;
    while (!READ_ONCE(holding))
        pause();
    spin_lock(&held);
    spin_unlock(&held);
}

KTEST(hangcheck_names_the_lock_a_cpu_waits_for)
{
    if (ncpu_online < 3) {
        kprintf("# needs 3 CPUs; nothing to check\n");
        return;
    }
    cpumask_t one, two;
    cpumask_clear(&one);
    cpumask_set(&one, 1);
    cpumask_clear(&two);
    cpumask_set(&two, 2);
    uint32_t old = begin();
    holding = false;
    report_lock_seen = NULL;
    struct thread *h = kthread_create("holder", hold_lock, NULL, &two);
    KREQUIRE(h);
    struct thread *w = kthread_create("waiter", wait_for_lock, NULL, &one);
    KREQUIRE(w);
    thread_join(w);
    thread_join(h);
    hangcheck_configure(old, NULL);
    KREQUIRE(reports >= 1);
    KCHECK_EQ(report_cpu, 1);
    KCHECK(report_nmi);
    KCHECK(report_lock_seen == &held);
}

// CPU 0 keeps its tick, so with every other CPU's tick stopped no ring
// neighbour watches it: the last CPU, stopped, wakes within the limit to look.
// CPU 0 (this test) spins with interrupts off once the others have stopped.
static void nothing(void *arg) { (void)arg; }

static bool all_others_stopped(void)
{
    for (int c = 1; c < ncpu_online; c++)
        if (!tickless_stopped(c))
            return false;
    return true;
}

KTEST(hangcheck_watches_cpu0_when_every_other_tick_stopped)
{
    int last = ncpu_online - 1;
    if (last < 1) {
        kprintf("# needs 2 CPUs; nothing to check\n");
        return;
    }
    uint32_t old = begin();
    // The last CPU takes the 1-second limit at its next stop: wake it, and
    // wait (sleeping) until it and every other CPU have stopped again.
    uint64_t stops = tickless_stops(last), end = nsec_now() + 30000000000ULL;
    cpumask_t m;
    cpumask_clear(&m);
    cpumask_set(&m, last);
    xcall(&m, nothing, NULL, true);
    while ((tickless_stops(last) == stops || !all_others_stopped()) && nsec_now() < end)
        sched_sleep_until(nsec_now() + 20000000);
    if (!all_others_stopped()) {
        hangcheck_configure(old, NULL);
        kprintf("# the other CPUs kept their ticks (tickless=0?); nothing to check\n");
        return;
    }
    cli();
    spin_until_reported(10 * tsc_hz());
    sti();
    hangcheck_configure(old, NULL);
    KREQUIRE(reports >= 1);
    KCHECK_EQ(report_cpu, 0);
    KCHECK(report_nmi);
    KCHECK(in_spin(report_rip));
}

// Preemptible work, however long, is not a hang: a second of a busy loop with
// preemption on draws no report.
KTEST(hangcheck_quiet_for_preemptible_work)
{
    uint32_t old = begin();
    spin_until_reported(2 * tsc_hz());
    hangcheck_configure(old, NULL);
    KCHECK_EQ(reports, 0);
}
