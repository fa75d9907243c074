// Tests for cross-CPU calls: exact delivery to subsets, asynchronous calls, calls
// from every CPU to every CPU at once, calls from inside calls, and full rings.
#include "ktest/ktest.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "sync/xcall.h"
#include "x86/smp.h"
#include "x86/x86.h"

struct hits {
    uint64_t n;
    uint64_t irq_on; // times fn ran with interrupts enabled (must stay 0)
} __cacheline_aligned;
static struct hits hits[NCPU_MAX];

static void hit(void *arg)
{
    (void)arg;
    struct hits *h = &hits[cpu_id()];
    fetch_add_relaxed(&h->n, 1);
    if (read_rflags() & RFLAGS_IF)
        fetch_add_relaxed(&h->irq_on, 1);
}

static void reset_hits(void) { memset(hits, 0, sizeof hits); }

static uint64_t total_hits(void)
{
    uint64_t t = 0;
    for (int c = 0; c < NCPU_MAX; c++)
        t += READ_ONCE(hits[c].n);
    return t;
}

// Poll until `total_hits() == want` or a generous deadline; the async calls run
// on the other CPUs in their own time.
static bool wait_hits(uint64_t want)
{
    uint64_t deadline = nsec_now() + 5000000000ULL;
    while (total_hits() < want && nsec_now() < deadline)
        xcall_poll();
    return total_hits() == want;
}

static void check_exactly(const cpumask_t *m, uint64_t times)
{
    for (int c = 0; c < NCPU_MAX; c++) {
        KCHECK_EQ(hits[c].n, cpumask_test(m, c) ? times : 0);
        KCHECK_EQ(hits[c].irq_on, 0);
    }
}

KTEST(xcall_reaches_exactly_the_mask)
{
    cpumask_t m;
    // Each subset shape: all, none, self only, odd CPUs, even CPUs, the last CPU.
    for (int shape = 0; shape < 6; shape++) {
        cpumask_clear(&m);
        for (int c = 0; c < ncpu; c++) {
            bool in = shape == 0 || (shape == 2 && c == 0) || (shape == 3 && c % 2 == 1) ||
                      (shape == 4 && c % 2 == 0) || (shape == 5 && c == ncpu - 1);
            if (in)
                cpumask_set(&m, c);
        }
        reset_hits();
        xcall(&m, hit, NULL, true);
        check_exactly(&m, 1);
    }
}

KTEST(xcall_skips_offline_cpus)
{
    cpumask_t m;
    cpumask_clear(&m);
    for (int c = ncpu; c < NCPU_MAX; c++)
        cpumask_set(&m, c); // no such CPUs
    reset_hits();
    xcall(&m, hit, NULL, true);
    KCHECK_EQ(total_hits(), 0);
}

KTEST(xcall_nowait_delivers)
{
    cpumask_t m = cpu_online_mask;
    reset_hits();
    for (int i = 0; i < 3; i++)
        xcall(&m, hit, NULL, false);
    KCHECK(wait_hits(3 * (uint64_t)ncpu_online));
    check_exactly(&m, 3);
}

// From every CPU at once to every CPU, waiting and not waiting, with the callers
// themselves inside an xcall handler (interrupts off): only polling one's own
// queue while waiting keeps this from deadlocking.
struct storm {
    int rounds;
    int arrived, finished;
};

static void storm_cpu(void *arg)
{
    struct storm *st = arg;
    fetch_add(&st->arrived, 1);
    for (long i = 0; i < 2000000 && READ_ONCE(st->arrived) < ncpu_online; i++)
        xcall_poll(); // start together, but keep serving calls meanwhile
    cpumask_t all = cpu_online_mask, next;
    int succ = cpumask_next(&all, cpu_id() + 1); // the next online CPU, cyclically
    cpumask_clear(&next);
    cpumask_set(&next, succ < NCPU_MAX ? succ : cpumask_next(&all, 0));
    for (int r = 0; r < st->rounds; r++) {
        xcall(&all, hit, NULL, true);
        xcall(&next, hit, NULL, false);
    }
    fetch_add(&st->finished, 1);
}

KTEST(xcall_all_to_all_concurrent)
{
    struct storm st = {.rounds = MAX(3, 512 / ncpu_online)};
    reset_hits();
    cpumask_t others = cpu_online_mask;
    cpumask_unset(&others, cpu_id());
    xcall(&others, storm_cpu, &st, false);
    storm_cpu(&st);
    uint64_t deadline = nsec_now() + 60000000000ULL;
    while (READ_ONCE(st.finished) < ncpu_online && nsec_now() < deadline)
        xcall_poll();
    KREQUIRE(st.finished == ncpu_online);
    // Every CPU sent `rounds` waited calls to each CPU and `rounds` unwaited ones to
    // its successor: each CPU gets (ncpu + 1) * rounds.
    uint64_t n = ncpu_online, want = n * (n + 1) * st.rounds;
    KCHECK(wait_hits(want));
    for (int c = 0; c < ncpu; c++) {
        KCHECK_EQ(hits[c].n, (n + 1) * st.rounds);
        KCHECK_EQ(hits[c].irq_on, 0);
    }
    kprintf("# %lu CPUs x %d rounds: %lu calls\n", n, st.rounds, want);
}

// More unwaited calls to one CPU than its ring holds, from every CPU at once.
struct flood {
    int target, per_cpu;
    int finished;
};

static void flood_cpu(void *arg)
{
    struct flood *f = arg;
    cpumask_t m;
    cpumask_clear(&m);
    cpumask_set(&m, f->target);
    for (int i = 0; i < f->per_cpu; i++)
        xcall(&m, hit, NULL, false);
    fetch_add(&f->finished, 1);
}

KTEST(xcall_full_ring_waits_and_delivers)
{
    // At least 400 calls in all, several times the ring's 64 slots; fewer per CPU
    // with many CPUs, whose spinning senders would otherwise starve the target
    // of host time under TCG.
    struct flood f = {.target = ncpu - 1, .per_cpu = MAX(8, 400 / ncpu_online)};
    reset_hits();
    cpumask_t others = cpu_online_mask;
    cpumask_unset(&others, cpu_id());
    xcall(&others, flood_cpu, &f, false);
    flood_cpu(&f);
    uint64_t want = (uint64_t)ncpu_online * f.per_cpu;
    KCHECK(wait_hits(want));
    // The target may have run every call before the last sender counted itself
    // finished: wait for that too (a hang is what this test is after).
    uint64_t deadline = nsec_now() + 60000000000ULL;
    while (READ_ONCE(f.finished) < ncpu_online && nsec_now() < deadline)
        xcall_poll();
    KCHECK_EQ(f.finished, ncpu_online);
    KCHECK_EQ(hits[f.target].n, want);
}

// A call whose function makes a waited call to every CPU, the original caller
// included while it waits for the outer call.
static void nested(void *arg)
{
    (void)arg;
    xcall_all(hit, NULL);
}

KTEST(xcall_nested_in_handler)
{
    cpumask_t m;
    cpumask_clear(&m);
    cpumask_set(&m, ncpu - 1);
    reset_hits();
    xcall(&m, nested, NULL, true);
    KCHECK_EQ(total_hits(), ncpu_online);
    check_exactly(&cpu_online_mask, 1);
}
