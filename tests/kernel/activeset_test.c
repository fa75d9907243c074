// Tests for active sets (sync/activeset.h): joining, lingering, leaving, and a
// reader that must still see the deltas of a CPU that left and came back.
#include "ktest/ktest.h"
#include "sync/activeset.h"
#include "sync/refcache.h"
#include "sync/xcall.h"
#include "x86/smp.h"
#include "x86/x86.h"

static bool in_set(const struct active_set *s, int c)
{
    cpumask_t m;
    active_snapshot(s, &m);
    return cpumask_test(&m, c);
}

KTEST(activeset_join_linger_leave)
{
    static struct active_set s;
    struct active_mark m = {0};
    push_off(); // the mark is this CPU's
    int me = cpu_id();
    KCHECK(!in_set(&s, me));
    active_join(&s, &m);
    KCHECK(in_set(&s, me));
    // The decay right after a join only forgets the join.
    active_decay(&s, &m, true);
    for (int i = 0; i < ACTIVE_LINGER - 1; i++)
        active_decay(&s, &m, true);
    KCHECK(in_set(&s, me));
    // State left in the slots keeps it in, however long it idles.
    for (int i = 0; i < 2 * ACTIVE_LINGER; i++)
        active_decay(&s, &m, false);
    KCHECK(in_set(&s, me));
    for (int i = 0; i < ACTIVE_LINGER; i++)
        active_decay(&s, &m, true);
    KCHECK(!in_set(&s, me));
    active_join(&s, &m);
    KCHECK(in_set(&s, me));
    // A join within the linger period starts it again.
    for (int i = 0; i < ACTIVE_LINGER - 1; i++)
        active_decay(&s, &m, true);
    active_join(&s, &m);
    for (int i = 0; i < ACTIVE_LINGER - 1; i++)
        active_decay(&s, &m, true);
    KCHECK(in_set(&s, me));
    pop_off();
}

static struct refcache_obj counted;
static void release_none(struct refcache_obj *o) { (void)o; }
static void inc_here(void *arg) { (void)arg; refcache_inc(&counted); }
static void dec_here(void *arg) { (void)arg; refcache_dec(&counted); }

// What ACTIVE_LINGER idle epochs do on this CPU, at once: empty the caches (the
// flush hook empties the file times too) and decay until the CPU leaves.
static void leave_here(void *arg)
{
    (void)arg;
    refcache_flush_cpu();
    for (int i = 0; i <= ACTIVE_LINGER; i++)
        active_decay(&kernel_active, this_cpu_ptr(&kernel_active_mark), true);
}

static void run_on(int c, xcall_fn fn)
{
    cpumask_t m;
    cpumask_clear(&m);
    cpumask_set(&m, c);
    xcall(&m, fn, NULL, true);
}

// An exact read visits only the CPUs in the kernel's active set. A CPU that
// left it must have left nothing behind, and its next update must be seen at
// once: it rejoins before it writes its cache.
KTEST(activeset_refcache_reader_sees_rejoined_cpu)
{
    if (ncpu < 2)
        return;
    int other = cpu_id() == 0 ? 1 : 0;
    refcache_init(&counted, 1, release_none);
    run_on(other, inc_here);
    KCHECK(in_set(&kernel_active, other));
    KCHECK_EQ(refcache_read_exact(&counted), 2);
    run_on(other, leave_here);
    KCHECK(!in_set(&kernel_active, other));
    KCHECK_EQ(refcache_read_exact(&counted), 2);
    run_on(other, dec_here);
    KCHECK(in_set(&kernel_active, other));
    KCHECK_EQ(refcache_read_exact(&counted), 1);
    run_on(other, inc_here);
    KCHECK_EQ(refcache_read_exact(&counted), 2);
    run_on(other, dec_here); // keep the count above zero: never released
}
