// Tests for per-CPU counters (sync/counter.h): every CPU counts at once, in its
// own copy, and the sum sees all of it.
#include "ktest/ktest.h"
#include "sync/counter.h"
#include "sync/xcall.h"
#include "x86/smp.h"

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
