// Tests for refcache: exact reads, release only at a true zero, exactly once,
// also when references move between CPUs (and hop among all of them at random).
#include "ktest/ktest.h"
#include "proc/sched.h"
#include "testutil.h"
#include "sync/activeset.h"
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

// References that hop between every CPU at random, against the review's
// argument (kernel/sync/refcache.c): an object is released only once no
// reference is left, whatever order the CPUs' cached deltas reach the shared
// count in. Each CPU's thread holds references of its own, duplicates and
// drops them, and hands them to other CPUs through mailboxes; the test keeps
// the true count beside refcache's (held), and the release callback checks it.
#define HOP_OBJS 64
#define HOP_HOLD 32 // references one thread holds at most
#define HOP_ROUNDS 4
#define HOP_ROUND_NSEC 250000000ULL

struct hop_obj {
    struct refcache_obj rc;
    int64_t held;  // [a] references the threads hold or have in a mailbox
    int released;  // [a] release callbacks
    int early;     // [a] of them while held was not zero
};
static struct hop_obj hop[HOP_OBJS];
static struct {
    int obj; // [a] 1 + the object whose reference waits here, 0 if empty
} __cacheline_aligned mailbox[NCPU_MAX];
static int hop_stop;

static void hop_release(struct refcache_obj *o)
{
    struct hop_obj *h = container_of(o, struct hop_obj, rc);
    if (load_acquire(&h->held) != 0)
        fetch_add(&h->early, 1);
    fetch_add(&h->released, 1);
}

// Drop one reference. Interrupts off from the drop to the count: epochs need
// this CPU's tick, so no release can run in between.
static void hop_drop(int i)
{
    push_off();
    refcache_dec(&hop[i].rc);
    fetch_sub(&hop[i].held, 1);
    pop_off();
}

static void hopper(void *arg)
{
    int me = cpu_id(), n = ncpu_online, held[HOP_HOLD], nheld = 0;
    uint64_t seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(me + 1);
    for (int i = me; i < HOP_OBJS && nheld < HOP_HOLD; i += n)
        held[nheld++] = i; // the creator's reference of each object of ours
    (void)arg;
    while (!load_acquire(&hop_stop)) {
        uint64_t r = rnd(&seed);
        int k = nheld ? (int)((r >> 8) % (uint64_t)nheld) : 0;
        switch (r % 4) {
        case 0: // duplicate one (objects keep one or two references: the
                // shared count then passes through zero often)
            if (nheld && nheld < HOP_HOLD && load_relaxed(&hop[held[k]].held) < 2) {
                fetch_add(&hop[held[k]].held, 1);
                refcache_inc(&hop[held[k]].rc);
                held[nheld++] = held[k];
            }
            break;
        case 1: // drop one, the last of an object rarely
            if (nheld && (load_relaxed(&hop[held[k]].held) > 1 || (r >> 32) % 64 == 0)) {
                hop_drop(held[k]);
                held[k] = held[--nheld];
            }
            break;
        case 2: { // hand one to another CPU
            int to = (int)((r >> 40) % n), want = 0;
            if (nheld && to != me && cas(&mailbox[to].obj, &want, held[k] + 1))
                held[k] = held[--nheld];
            break;
        }
        default: { // take what was handed to us
            int got = xchg(&mailbox[me].obj, 0);
            if (got && nheld < HOP_HOLD)
                held[nheld++] = got - 1;
            else if (got)
                hop_drop(got - 1);
        }
        }
    }
    while (nheld)
        hop_drop(held[--nheld]);
}

static bool all_released(void)
{
    for (int i = 0; i < HOP_OBJS; i++)
        if (!load_acquire(&hop[i].released))
            return false;
    return true;
}

KTEST(refcache_hopping_references_never_release_early)
{
    if (ncpu_online < 2) {
        kprintf("# needs 2 CPUs; nothing to check\n");
        return;
    }
    int early = 0, wrong = 0;
    for (int round = 0; round < HOP_ROUNDS; round++) {
        memset(hop, 0, sizeof hop);
        memset(mailbox, 0, sizeof mailbox);
        for (int i = 0; i < HOP_OBJS; i++) {
            hop[i].held = 1;
            refcache_init(&hop[i].rc, 1, hop_release);
        }
        store_release(&hop_stop, 0);
        struct thread *t[NCPU_MAX];
        int n = ncpu_online;
        for (int c = 0; c < n; c++) {
            cpumask_t m;
            cpumask_clear(&m);
            cpumask_set(&m, c);
            t[c] = kthread_create("hopper", hopper, NULL, &m);
            KREQUIRE(t[c]);
        }
        sched_sleep_until(nsec_now() + HOP_ROUND_NSEC);
        store_release(&hop_stop, 1);
        for (int c = 0; c < n; c++)
            thread_join(t[c]);
        for (int c = 0; c < n; c++) { // references still in a mailbox
            int got = xchg(&mailbox[c].obj, 0);
            if (got)
                hop_drop(got - 1);
        }
        // Every object goes a few epochs after its last drop (more when a
        // review finds it touched); with many CPUs an epoch may take long.
        for (int e = 0; e < 40 && !all_released(); e++)
            wait_epochs(1);
        wait_epochs(3); // (a second release would come now)
        for (int i = 0; i < HOP_OBJS; i++) {
            early += load_acquire(&hop[i].early);
            wrong += load_acquire(&hop[i].released) != 1;
        }
    }
    KCHECK_EQ(early, 0);
    KCHECK_EQ(wrong, 0);
}

// A read-mostly count's delta stays in slots of its own: updates of 8192
// ordinary objects on its CPU, which leave hardly any of the 1024 ordinary
// slots unevicted, flush other objects' deltas, never its.
static volatile int rm_released;

static void on_rm_release(struct refcache_obj *o)
{
    (void)o;
    fetch_add(&rm_released, 1);
}

KTEST(refcache_read_mostly_slots_apart)
{
    enum { PAGES = 128, PER_PAGE = PGSIZE / sizeof(struct robj) };
    struct robj *pg[PAGES] = {0};
    struct refcache_rm r;
    bool ok = true;
    for (int i = 0; i < PAGES; i++)
        ok &= (pg[i] = page_alloc()) != NULL;
    if (ok) {
        rm_released = 0;
        refcache_init(&r.o, 1, on_rm_release);
        push_off(); // no tick, and so no flush, until the look
        refcache_rm_add(&r, 1, ACTIVE_FILES);
        for (int i = 0; i < PAGES; i++)
            for (size_t k = 0; k < PER_PAGE; k++) {
                refcache_init(&pg[i][k].rc, 0, on_release); // one reference, ours, kept
                refcache_inc(&pg[i][k].rc);
            }
        int64_t shared = READ_ONCE(r.o.count);
        pop_off();
        KCHECK_EQ(shared, 1); // the +1 is still in this CPU's cache
        KCHECK_EQ(refcache_rm_read_exact(&r, ACTIVE_FILES), 2);
        wait_epochs(3); // every slot flushed: none names the objects any more
        KCHECK_EQ(READ_ONCE(r.o.count), 2);
        refcache_rm_add(&r, -2, ACTIVE_FILES);
        wait_epochs(4);
        KCHECK_EQ(rm_released, 1);
    }
    for (int i = 0; i < PAGES; i++)
        if (pg[i])
            page_free(pg[i]);
    KCHECK(ok);
}
