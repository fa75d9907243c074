// Tests for refcache: exact reads, release only at a true zero, exactly once,
// also when references move between CPUs.
#include "ktest/ktest.h"
#include "sync/atomic.h"
#include "sync/cpumask.h"
#include "sync/percpu.h"
#include "sync/refcache.h"
#include "sync/xcall.h"
#include "x86/smp.h"
#include "x86/x86.h"

struct robj {
    struct refcache_obj rc;
    volatile int released;
};

static void on_release(struct refcache_obj *o)
{
    fetch_add(&container_of(o, struct robj, rc)->released, 1);
}

// Let n refcache epochs pass (each needs every CPU's tick).
static void wait_epochs(int n)
{
    uint64_t target = refcache_epoch() + n;
    uint64_t end = nsec_now() + 10000000000UL;
    while (refcache_epoch() < target && nsec_now() < end)
        hlt();
}

KTEST(refcache_exact_count_single_cpu)
{
    struct robj o = {0};
    refcache_init(&o.rc, 1, on_release);
    for (int i = 0; i < 5; i++)
        refcache_inc(&o.rc);
    KCHECK_EQ(refcache_read_exact(&o.rc), 6);
    for (int i = 0; i < 5; i++)
        refcache_dec(&o.rc);
    KCHECK_EQ(refcache_read_exact(&o.rc), 1);
    wait_epochs(4);
    KCHECK_EQ(o.released, 0);
    refcache_dec(&o.rc);
    KCHECK_EQ(refcache_read_exact(&o.rc), 0);
    wait_epochs(4);
    KCHECK_EQ(o.released, 1);
}

static struct robj shared;
static void inc_dec_many(void *arg)
{
    long n = (long)arg;
    for (long i = 0; i < n; i++)
        refcache_inc(&shared.rc);
    for (long i = 0; i < n - 1; i++)
        refcache_dec(&shared.rc);
    // Each CPU keeps one reference: the count must be 1 + ncpu afterwards.
}
static void drop_one(void *arg)
{
    (void)arg;
    refcache_dec(&shared.rc);
}

KTEST(refcache_concurrent_exact_and_release_once)
{
    memset(&shared, 0, sizeof shared);
    refcache_init(&shared.rc, 1, on_release);
    xcall_all(inc_dec_many, (void *)1000L);
    KCHECK_EQ(refcache_read_exact(&shared.rc), 1 + ncpu_online);
    refcache_flush_all();
    KCHECK_EQ(refcache_read_exact(&shared.rc), 1 + ncpu_online);
    xcall_all(drop_one, NULL);
    wait_epochs(4);
    KCHECK_EQ(shared.released, 0); // the test's own reference is still there
    KCHECK_EQ(refcache_read_exact(&shared.rc), 1);
    refcache_dec(&shared.rc);
    wait_epochs(4);
    KCHECK_EQ(shared.released, 1);
    wait_epochs(3);
    KCHECK_EQ(shared.released, 1); // exactly once
}

// A reference taken on CPU 1 and the creator's reference dropped on CPU 0: the
// shared count passes through zero while CPU 1's +1 is still cached. The object
// must survive that.
static void inc_only(void *arg)
{
    (void)arg;
    refcache_inc(&shared.rc);
}

KTEST(refcache_moving_reference_survives_transient_zero)
{
    if (ncpu_online < 2) {
        kprintf("# needs 2 CPUs; nothing to check\n");
        return;
    }
    memset(&shared, 0, sizeof shared);
    refcache_init(&shared.rc, 1, on_release);
    cpumask_t one;
    cpumask_clear(&one);
    cpumask_set(&one, 1);
    xcall(&one, inc_only, NULL, true);   // CPU 1 caches +1
    refcache_dec(&shared.rc);            // CPU 0 caches -1 ...
    refcache_flush_cpu();                // ... and flushes it alone: shared count 0
    wait_epochs(5);
    KCHECK_EQ(shared.released, 0);
    KCHECK_EQ(refcache_read_exact(&shared.rc), 1);
    xcall(&one, drop_one, NULL, true);
    wait_epochs(5);
    KCHECK_EQ(shared.released, 1);
}

// refcache_add_direct changes the shared count at once, as a flush would: the
// exact count follows it, an object whose only reference goes that way is
// released once, and one whose shared count it brings to zero while another
// CPU caches +1 survives until that +1 is dropped too.
KTEST(refcache_direct_drop)
{
    struct robj o = {0};
    refcache_init(&o.rc, 2, on_release);
    refcache_add_direct(&o.rc, -1);
    KCHECK_EQ(refcache_read_exact(&o.rc), 1);
    refcache_add_direct(&o.rc, -1);
    KCHECK_EQ(refcache_read_exact(&o.rc), 0);
    wait_epochs(4);
    KCHECK_EQ(o.released, 1);
    if (ncpu_online < 2) {
        kprintf("# needs 2 CPUs for the rest; nothing more to check\n");
        return;
    }
    memset(&shared, 0, sizeof shared);
    refcache_init(&shared.rc, 1, on_release);
    cpumask_t one;
    cpumask_clear(&one);
    cpumask_set(&one, 1);
    xcall(&one, inc_only, NULL, true); // CPU 1 caches +1
    refcache_add_direct(&shared.rc, -1); // the shared count reaches zero
    wait_epochs(5);
    KCHECK_EQ(shared.released, 0);
    KCHECK_EQ(refcache_read_exact(&shared.rc), 1);
    xcall(&one, drop_one, NULL, true);
    wait_epochs(5);
    KCHECK_EQ(shared.released, 1);
}
