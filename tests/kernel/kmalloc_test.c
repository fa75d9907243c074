// Tests for the kernel heap (kernel/mm/kmalloc.c): alignment and disjointness of every
// size class, zeroing, kmalloc(0), large allocations, conservation of pages,
// exhaustion, magazine and slab locality, and all CPUs allocating and freeing each
// other's objects at once.
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "sync/atomic.h"
#include "sync/epoch.h"
#include "sync/percpu.h"
#include "sync/xcall.h"
#include "testutil.h"
#include "x86/smp.h"
#include "x86/x86.h"

// What kmalloc.c promises about alignment.
static size_t promised_align(size_t size)
{
    if (size > 2048)
        return PGSIZE;
    size_t a = 16;
    while (a < size)
        a <<= 1;
    return a;
}

// Free pages once every cache is empty: the baseline for conservation checks.
static size_t drained_free_pages(void)
{
    drop_caches_settled();
    return page_count_free();
}

// Earlier tests leave frees deferred by epoch reclamation; wait until the count
// stops moving across grace periods, so only this test's own pages are compared.
static size_t settled_free_pages(void)
{
    size_t n = drained_free_pages(), prev;
    do {
        prev = n;
        epoch_synchronize();
        epoch_synchronize();
        n = drained_free_pages();
    } while (n != prev);
    return n;
}

// Some online CPU other than this one, or -1.
static int next_other_cpu(void)
{
    for (int c = 0; c < NCPU_MAX; c++)
        if (c != cpu_id() && cpumask_test(&cpu_online_mask, c))
            return c;
    return -1;
}

// Fill an object with bytes derived from tag; check them later. Objects longer
// than 512 bytes get their first 512 and last 64 bytes done (that is enough to
// notice an overlap, and keeps TCG fast).
static void fill_range(uint8_t *p, size_t from, size_t to, uint64_t tag)
{
    for (size_t i = from; i < to; i++)
        p[i] = (uint8_t)(tag >> (i % 8 * 8)) ^ (uint8_t)i;
}

static bool check_range(const uint8_t *p, size_t from, size_t to, uint64_t tag)
{
    for (size_t i = from; i < to; i++)
        if (p[i] != ((uint8_t)(tag >> (i % 8 * 8)) ^ (uint8_t)i))
            return false;
    return true;
}

static void fill(void *p, size_t size, uint64_t tag)
{
    fill_range(p, 0, MIN(size, 512), tag);
    if (size > 512)
        fill_range(p, MAX(512, size - 64), size, tag);
}

static bool filled(const void *p, size_t size, uint64_t tag)
{
    return check_range(p, 0, MIN(size, 512), tag) &&
           (size <= 512 || check_range(p, MAX(512, size - 64), size, tag));
}

static const size_t sizes[] = {
    0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 200, 255, 256,
    257, 500, 512, 513, 1000, 1024, 1025, 2000, 2047, 2048, 2049, 3000, 4096, 4097,
    10000, 65536,
};

KTEST(kmalloc_sizes_aligned_disjoint)
{
    enum { COPIES = 5 };
    static void *p[ARRAY_SIZE(sizes)][COPIES];
    size_t before = settled_free_pages();
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        for (int j = 0; j < COPIES; j++) {
            p[i][j] = kmalloc(sizes[i]);
            KREQUIRE(p[i][j] != NULL);
            KCHECK_EQ((uintptr_t)p[i][j] % promised_align(sizes[i]), 0);
            fill(p[i][j], sizes[i], i << 8 | j);
        }
    }
    // Every object still holds its own bytes: none overlaps another.
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
        for (int j = 0; j < COPIES; j++)
            KCHECK(filled(p[i][j], sizes[i], i << 8 | j));
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
        for (int j = 0; j < COPIES; j++)
            kfree(p[i][j]);
    KCHECK_EQ(settled_free_pages(), before);
}

KTEST(kmalloc_zero_size_is_unique)
{
    void *a = kmalloc(0), *b = kmalloc(0);
    KCHECK(a != NULL && b != NULL);
    KCHECK(a != b);
    kfree(a);
    kfree(b);
    kfree(NULL); // no-op
}

KTEST(kmalloc_kzalloc_is_zero)
{
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        size_t n = sizes[i];
        // Dirty an object and free it; the magazine hands the same one back next.
        void *d = kmalloc(n);
        KREQUIRE(d);
        memset(d, 0xff, n);
        kfree(d);
        uint8_t *z = kzalloc(n);
        KREQUIRE(z);
        bool zero = true;
        for (size_t j = 0; j < n; j++)
            zero &= z[j] == 0;
        KCHECK(zero);
        kfree(z);
    }
}

KTEST(kmalloc_large_uses_whole_pages)
{
    static const struct {
        size_t size, pages;
    } cases[] = {{2049, 1}, {4096, 1}, {4097, 2}, {5000, 2}, {3 * PGSIZE, 3},
                 {1 << 20, 256}, {4 << 20, 1024}};
    size_t before = settled_free_pages();
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        void *p = kmalloc(cases[i].size);
        KREQUIRE(p != NULL);
        KCHECK_EQ((uintptr_t)p % PGSIZE, 0);
        KCHECK_EQ(page_count_free(), before - cases[i].pages);
        memset(p, 0x5a, cases[i].size); // all of it is ours
        kfree(p);
        KCHECK_EQ(page_count_free(), before);
    }
    // Beyond the largest contiguous run, or absurd: NULL, and nothing leaks.
    KCHECK(kmalloc((4 << 20) + 1) == NULL);
    KCHECK(kmalloc(1UL << 40) == NULL);
    KCHECK(kmalloc((size_t)-1) == NULL);
    KCHECK(kzalloc((size_t)-1) == NULL);
    KCHECK_EQ(settled_free_pages(), before);
}

KTEST(kmalloc_mixed_conserves_pages)
{
    enum { N = 3000 };
    void **p = kmalloc(N * sizeof *p);
    size_t *sz = kmalloc(N * sizeof *sz);
    KREQUIRE(p && sz);
    size_t before = settled_free_pages();
    uint64_t seed = 12345;
    for (int i = 0; i < N; i++) {
        sz[i] = rnd(&seed) % 8 == 0 ? rnd(&seed) % 6000 : rnd(&seed) % 300;
        p[i] = kmalloc(sz[i]);
        KREQUIRE(p[i]);
        fill(p[i], sz[i], i);
    }
    KCHECK(page_count_free() < before);
    // Free in a scrambled order so slabs empty in no particular sequence.
    for (int i = 0; i < N; i++) {
        int j = (i * 7919) % N; // 7919 is prime, so this visits every index once
        KCHECK(filled(p[j], sz[j], j));
        kfree(p[j]);
    }
    KCHECK_EQ(settled_free_pages(), before); // empty slabs went back to the pages
    kfree(p);
    kfree(sz);
}

KTEST(kmalloc_magazine_stays_local)
{
    enum { WARM = 16 };
    void *p[WARM];
    static const size_t warm_sizes[] = {16, 32, 64, 128, 256, 512, 1024, 2048};
    for (size_t s = 0; s < ARRAY_SIZE(warm_sizes); s++) {
        for (int i = 0; i < WARM; i++)
            KREQUIRE((p[i] = kmalloc(warm_sizes[s])));
        for (int i = 0; i < WARM; i++)
            kfree(p[i]);
    }
    uint64_t classes = kmalloc_stat_class_locks(), pools = page_stat_pool_locks();
    for (int r = 0; r < 200; r++) {
        for (size_t s = 0; s < ARRAY_SIZE(warm_sizes); s++) {
            void *q = kmalloc(warm_sizes[s] - 3);
            KREQUIRE(q);
            kfree(q);
        }
        for (int i = 0; i < WARM; i++)
            KREQUIRE((p[i] = kmalloc(40)));
        for (int i = 0; i < WARM; i++)
            kfree(p[i]);
    }
    KCHECK_EQ(kmalloc_stat_class_locks(), classes);
    KCHECK_EQ(page_stat_pool_locks(), pools);

    // The statistic does see shared traffic: an emptied magazine must refill.
    kmalloc_drain_cpu_cache();
    uint64_t drained = kmalloc_stat_class_locks();
    KCHECK(drained > classes);
    void *q = kmalloc(64);
    KREQUIRE(q);
    KCHECK(kmalloc_stat_class_locks() > drained);
    kfree(q);
}

// What another CPU leaves in its own slabs: N objects of 64 bytes allocated
// there, all but one freed and flushed back to their slabs (kept holds the one).
enum { OTHER_N = 40 };
struct other_slabs {
    void *kept;
    void *slab[OTHER_N]; // the slab of each object it had
};

static void other_cpu_fills_slabs(void *arg)
{
    struct other_slabs *o = arg;
    void *p[OTHER_N];
    for (int i = 0; i < OTHER_N; i++) {
        p[i] = kmalloc(64);
        o->slab[i] = p[i] ? (void *)PGROUNDDOWN(p[i]) : NULL;
    }
    o->kept = p[0];
    for (int i = 1; i < OTHER_N; i++)
        kfree(p[i]);
    kmalloc_drain_cpu_cache(); // the objects go back to the slabs, which stay partial
}

static void other_cpu_frees_kept(void *arg)
{
    struct other_slabs *o = arg;
    kfree(o->kept);
    kmalloc_drain_cpu_cache();
}

// A refill takes objects only from the CPU's own slabs: what another CPU gave
// back to its slabs (and wrote) stays there while this CPU has pages for its own.
KTEST(kmalloc_refill_takes_own_slabs)
{
    int other = next_other_cpu();
    if (other < 0) {
        kprintf("# needs 2 CPUs; nothing to check\n");
        return;
    }
    kmalloc_drain_all();
    cpumask_t one;
    cpumask_clear(&one);
    cpumask_set(&one, other);
    static struct other_slabs o;
    memset(&o, 0, sizeof o);
    xcall(&one, other_cpu_fills_slabs, &o, true);
    KREQUIRE(o.kept != NULL);

    void *p[OTHER_N];
    int theirs = 0;
    for (int i = 0; i < OTHER_N; i++) {
        KREQUIRE((p[i] = kmalloc(64)));
        bool from_theirs = false;
        for (int j = 0; j < OTHER_N; j++)
            from_theirs |= o.slab[j] == (void *)PGROUNDDOWN(p[i]);
        theirs += from_theirs;
    }
    KCHECK_EQ(theirs, 0); // objects of ours that came from the other CPU's slabs
    for (int i = 0; i < OTHER_N; i++)
        kfree(p[i]);
    xcall(&one, other_cpu_frees_kept, &o, true);
}

// Leaves 16-byte objects in the calling CPU's magazine.
static void fill_magazine(void *arg __unused)
{
    enum { N = 20 };
    void *p[N];
    for (int i = 0; i < N; i++)
        p[i] = kmalloc(16);
    for (int i = 0; i < N; i++)
        kfree(p[i]);
}

// Counts in *arg whether kmalloc(16) still succeeds on the calling CPU.
static void try_kmalloc16(void *arg)
{
    void *p = kmalloc(16);
    if (p) {
        fetch_add_relaxed((int *)arg, 1);
        kfree(p);
    }
}

KTEST(kmalloc_exhaustion_returns_null_and_recovers)
{
    size_t before = settled_free_pages();
    // Every CPU caches some objects, whose slabs hold pages ...
    xcall_all(fill_magazine, NULL);
    // ... then take every page (not in a context that may sleep, where the
    // first failure would drop those caches: here kmalloc must find them) ...
    void *pages = NULL, *p;
    preempt_disable();
    while ((p = page_alloc())) {
        *(void **)p = pages;
        pages = p;
    }
    preempt_enable();
    // ... then every 16-byte object still to be had: kmalloc must reach the other
    // CPUs' magazines (and the slab pages that flushing them frees).
    void *objs = NULL;
    size_t nobj = 0;
    while ((p = kmalloc(16))) {
        *(void **)p = objs;
        objs = p;
        nobj++;
    }
    KCHECK(nobj >= 20 * (size_t)ncpu_online);
    int succeeded = 0; // no CPU kept a cached object back from us
    xcall_all(try_kmalloc16, &succeeded);
    KCHECK_EQ(succeeded, 0);
    KCHECK(kmalloc(16) == NULL);
    KCHECK(kmalloc(PGSIZE) == NULL);
    KCHECK(kzalloc(3 * PGSIZE) == NULL);
    KCHECK_EQ(page_count_free(), 0);

    // One page back is enough for a new 16-byte slab.
    p = pages;
    pages = *(void **)p;
    page_free(p);
    void *q = kmalloc(16);
    KCHECK(q != NULL);
    kfree(q);

    while (objs) {
        p = objs;
        objs = *(void **)p;
        kfree(p);
    }
    while (pages) {
        p = pages;
        pages = *(void **)p;
        page_free(p);
    }
    KCHECK_EQ(settled_free_pages(), before);
    q = kmalloc(16);
    KCHECK(q != NULL);
    kfree(q);
    kprintf("# kmalloc exhaustion: %lu objects of 16 bytes after the pages ran out\n", nobj);
}

// ---- all CPUs at once ------------------------------------------------------------

#define XSLOTS 48

struct obj {
    void *p;
    size_t size;
    uint64_t tag;
};

struct kstress {
    int rounds;
    int ran, ran2;    // CPUs that started phase 1, phase 2
    int errors;
    struct obj (*tab)[XSLOTS]; // [NCPU_MAX][XSLOTS]: what each CPU leaves for the next
};

// Wait (a bounded while) until every online CPU has arrived, so that they really
// run at the same time; if the CPUs are started one after another, go on anyway.
static void start_together(int *arrived)
{
    fetch_add(arrived, 1);
    for (long i = 0; i < 2000000 && READ_ONCE(*arrived) < ncpu_online; i++)
        pause();
}

static void kstress_error(struct kstress *st, const char *what, void *p)
{
    if (fetch_add_relaxed(&st->errors, 1) < 5)
        kprintf("# cpu %d: %s %p\n", cpu_id(), what, p);
}

// Mostly small objects, some up to 2048 bytes, a few large ones.
static size_t random_size(uint64_t *seed)
{
    uint64_t r = rnd(seed);
    switch (r % 16) {
    case 0:
        return 2049 + r / 16 % 12000;
    case 1: case 2: case 3:
        return r / 16 % 2049;
    default:
        return r / 16 % 257;
    }
}

static void obj_check_free(struct kstress *st, struct obj *o)
{
    if (!o->p)
        return;
    if (!filled(o->p, o->size, o->tag))
        kstress_error(st, "object overwritten:", o->p);
    kfree(o->p);
    o->p = NULL;
}

static void obj_alloc(struct kstress *st, struct obj *o, uint64_t *seed, uint64_t tag)
{
    o->size = random_size(seed);
    o->tag = tag;
    o->p = kmalloc(o->size);
    if (!o->p)
        kstress_error(st, "kmalloc returned NULL", NULL);
    else
        fill(o->p, o->size, tag);
}

// Phase 1: random allocs and frees on each CPU; leaves its table full.
static void kstress_own(void *arg)
{
    struct kstress *st = arg;
    uint64_t id = cpu_id(), seed = 0x2545f4914f6cdd1dULL * (id + 1);
    struct obj *tab = st->tab[id];
    start_together(&st->ran);
    for (int r = 0; r < st->rounds; r++) {
        struct obj *o = &tab[rnd(&seed) % XSLOTS];
        if (o->p)
            obj_check_free(st, o);
        else
            obj_alloc(st, o, &seed, id << 48 | (uint64_t)r << 8);
    }
    for (int i = 0; i < XSLOTS; i++)
        if (!tab[i].p)
            obj_alloc(st, &tab[i], &seed, id << 48 | 1UL << 40 | i);
}

static int next_online(int id)
{
    int c = cpumask_next(&cpu_online_mask, id + 1);
    if (c == NCPU_MAX)
        c = cpumask_next(&cpu_online_mask, 0);
    return c == NCPU_MAX ? id : c;
}

// Phase 2: free (into this CPU's magazines) what the next CPU allocated.
static void kstress_other(void *arg)
{
    struct kstress *st = arg;
    struct obj *tab = st->tab[next_online(cpu_id())];
    start_together(&st->ran2);
    for (int i = 0; i < XSLOTS; i++)
        obj_check_free(st, &tab[i]);
}

KTEST(kmalloc_smp_stress_conserves)
{
    size_t before = settled_free_pages();
    // 4000 operations per CPU up to 64 CPUs, then the same total split up (TCG).
    struct kstress st = {.rounds = ncpu_online <= 64 ? 4000 : MAX(500, 256000 / ncpu_online)};
    st.tab = kzalloc(NCPU_MAX * sizeof st.tab[0]);
    KREQUIRE(st.tab);
    xcall_all(kstress_own, &st);
    KCHECK_EQ(st.ran, ncpu_online);
    xcall_all(kstress_other, &st);
    KCHECK_EQ(st.ran2, ncpu_online);
    KCHECK_EQ(st.errors, 0);
    int left = 0;
    for (int c = 0; c < NCPU_MAX; c++)
        for (int i = 0; i < XSLOTS; i++)
            left += st.tab[c][i].p != NULL;
    KCHECK_EQ(left, 0); // every table was emptied by exactly one other CPU
    kfree(st.tab);
    KCHECK_EQ(settled_free_pages(), before);
}

// Poisoning (on in every test= boot unless the command line says kpoison=0):
// kfree fills the object, and the next kmalloc of that object finds the write
// made through a stale pointer and panics, naming it. The magazine is LIFO, so
// on one CPU the next 64-byte kmalloc is the object just freed.
KTEST_PANIC(kmalloc_write_after_free_panics)
{
    push_off(); // stay on this CPU, with its magazine
    uint8_t *p = kmalloc(64);
    KREQUIRE(p);
    memset(p, 0, 64);
    kfree(p);
    KCHECK_EQ(p[8], KPOISON_BYTE);
    KCHECK_EQ(p[63], KPOISON_BYTE);
    p[40] = 1; // the use after free
    void *q = kmalloc(64);
    kprintf("# kmalloc did not notice: %p again at %p\n", p, q);
    kfree(q);
    pop_off();
}
