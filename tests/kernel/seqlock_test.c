// Tests for seqlocks and per-CPU counters under concurrent use.
#include "ktest/ktest.h"
#include "sync/atomic.h"
#include "sync/counter.h"
#include "sync/seqlock.h"
#include "sync/xcall.h"
#include "x86/smp.h"

// Writers keep a == b; lock-free readers must never see them differ.
static struct seqlock pair_lock;
static volatile uint64_t pair_a, pair_b;
static volatile int torn;

static void seq_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000; i++) {
        if (i % 4 == 0) {
            seq_write_begin(&pair_lock);
            pair_a = pair_a + 1;
            pair_b = pair_b + 1;
            seq_write_end(&pair_lock);
            continue;
        }
        uint64_t a, b;
        uint32_t s;
        do {
            s = seq_read_begin(&pair_lock);
            a = pair_a;
            b = pair_b;
        } while (seq_read_retry(&pair_lock, s));
        if (a != b)
            fetch_add(&torn, 1);
    }
}

KTEST(seqlock_readers_never_see_torn_writes)
{
    seq_init(&pair_lock, "test pair");
    pair_a = pair_b = 0;
    torn = 0;
    xcall_all(seq_worker, NULL);
    KCHECK_EQ(torn, 0);
    KCHECK_EQ(pair_a, 500 * ncpu_online);
    KCHECK_EQ(pair_b, pair_a);
    KCHECK_EQ(pair_lock.seq % 2, 0);
}

static DEFINE_COUNTER(test_events);

static void count_events(void *arg)
{
    for (long i = 0; i < (long)arg; i++)
        counter_inc(test_events);
}

KTEST(counter_sums_all_cpus)
{
    int64_t before = counter_read(&test_events);
    xcall_all(count_events, (void *)1000L);
    KCHECK_EQ(counter_read(&test_events) - before, 1000 * ncpu_online);
    // Each CPU counted in its own copy.
    for_each_cpu(c, &cpu_online_mask)
        KCHECK(counter_read_cpu(&test_events, c) >= 1000);
}
