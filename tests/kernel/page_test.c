// Tests for the physical page allocator (kernel/mm/page.c): conservation of the free
// count, zeroing, contiguous runs, exhaustion, per-CPU cache locality, cold frees, and many
// CPUs allocating at once without ever getting the same page.
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "sync/atomic.h"
#include "sync/epoch.h"
#include "sync/percpu.h"
#include "sync/xcall.h"
#include "testutil.h"
#include "x86/smp.h"
#include "x86/x86.h"

#define MAX_CONTIG 1024 // page.c's largest block, in pages

static size_t pow2_at_least(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

// A page's stamp: 8 words spread over it, so a page handed out twice is noticed
// whichever part the other owner wrote.
static void stamp(void *page, uint64_t tag)
{
    for (int i = 0; i < 8; i++)
        ((uint64_t *)page)[i * 64] = tag ^ i;
}

static bool stamp_ok(void *page, uint64_t tag)
{
    for (int i = 0; i < 8; i++)
        if (((uint64_t *)page)[i * 64] != (tag ^ i))
            return false;
    return true;
}

KTEST(page_count_total_is_sane)
{
    KCHECK(page_count_total() > 0);
    KCHECK(page_count_free() <= page_count_total());
    KCHECK(page_count_free() > 0);
}

KTEST(page_alloc_free_conserves)
{
    enum { N = 300 }; // more than a CPU cache holds, so the pools take part
    static void *p[N];
    // Pages earlier tests let go of a grace period later (an exited process's
    // fd table, epoch_defer) are freed first, not in the middle of the count.
    epoch_synchronize();
    epoch_synchronize();
    size_t before = page_count_free();
    for (int i = 0; i < N; i++) {
        p[i] = page_alloc();
        KREQUIRE(p[i] != NULL);
        KREQUIRE((uintptr_t)p[i] % PGSIZE == 0);
        stamp(p[i], i);
        KCHECK_EQ(page_count_free(), before - i - 1);
    }
    for (int i = 0; i < N; i++)
        KCHECK(stamp_ok(p[i], i)); // all distinct: nobody's stamp was overwritten
    for (int i = 0; i < N; i++) {
        page_free(p[i]);
        KCHECK_EQ(page_count_free(), before - N + i + 1);
    }
    page_drain_cpu_cache();
    KCHECK_EQ(page_count_free(), before);
}

KTEST(page_alloc_zeroed_is_zero)
{
    enum { N = 8 };
    void *p[N];
    // Dirty some pages and free them: the cache hands the same ones back next.
    for (int i = 0; i < N; i++) {
        p[i] = page_alloc();
        KREQUIRE(p[i]);
        memset(p[i], 0xa5, PGSIZE);
    }
    for (int i = N - 1; i >= 0; i--)
        page_free(p[i]);
    for (int i = 0; i < N; i++) {
        p[i] = page_alloc_zeroed();
        KREQUIRE(p[i]);
        const uint64_t *w = p[i];
        bool zero = true;
        for (size_t j = 0; j < PGSIZE / 8; j++)
            zero &= w[j] == 0;
        KCHECK(zero);
    }
    for (int i = 0; i < N; i++)
        page_free(p[i]);
}

KTEST(page_contig_aligned_contiguous_conserved)
{
    static const size_t sizes[] = {2, 3, 5, 8, 17, 64, 100, 255, 512, 513, 1024};
    void *p[ARRAY_SIZE(sizes)];
    size_t before = page_count_free(), used = 0;
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        size_t n = sizes[i];
        p[i] = page_alloc_contig(n);
        KREQUIRE(p[i] != NULL);
        used += n;
        KCHECK_EQ(page_count_free(), before - used);
        // The direct map is linear, so virtually contiguous is physically contiguous.
        KCHECK_EQ(V2P(p[i]) % (pow2_at_least(n) * PGSIZE), 0);
        for (size_t j = 0; j < n; j++)
            stamp((char *)p[i] + j * PGSIZE, i << 32 | j);
    }
    // Every page of every run still carries its own stamp: no two runs overlap.
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        bool ok = true;
        for (size_t j = 0; j < sizes[i]; j++)
            ok &= stamp_ok((char *)p[i] + j * PGSIZE, i << 32 | j);
        KCHECK(ok);
    }
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
        page_free_contig(p[i], sizes[i]);
    KCHECK_EQ(page_count_free(), before);
}

KTEST(page_contig_limits)
{
    size_t before = page_count_free();
    KCHECK(page_alloc_contig(0) == NULL);
    KCHECK(page_alloc_contig(MAX_CONTIG + 1) == NULL);
    KCHECK(page_alloc_contig((size_t)-1) == NULL);
    KCHECK_EQ(page_count_free(), before);
    void *p = page_alloc_contig(1); // same as page_alloc
    KREQUIRE(p);
    KCHECK_EQ(page_count_free(), before - 1);
    page_free_contig(p, 1);
    KCHECK_EQ(page_count_free(), before);
}

// How many blocks of the largest size can be had right now (all given back).
static size_t count_max_blocks(void)
{
    void *head = NULL;
    size_t n = 0;
    void *p;
    while ((p = page_alloc_contig(MAX_CONTIG))) {
        *(void **)p = head;
        head = p;
        n++;
    }
    while (head) {
        p = head;
        head = *(void **)p;
        page_free_contig(p, MAX_CONTIG);
    }
    return n;
}

#define PCACHE_MAX 128 // page.c: pages in a CPU's cache array; more go to its spill
#define SPILLED 64     // past the array: well under any spill limit (memory/8/CPUs)

// Pages linked through a word in their middle (page_free keeps the first words).
#define LINK(p) (*(void **)((char *)(p) + 2048))

// Leaves free pages in the calling CPU's cache array and in its spill.
static void fill_cache(void *arg __unused)
{
    void *head = NULL, *p;
    for (int i = 0; i < PCACHE_MAX + SPILLED && (p = page_alloc()); i++) {
        LINK(p) = head;
        head = p;
    }
    while (head) {
        p = head;
        head = LINK(p);
        page_free(p);
    }
}

KTEST(page_exhaustion_returns_null_and_recovers)
{
    drop_caches_settled(); // what the exhaustion would drop, dropped first
    size_t before = page_count_free();
    size_t blocks = count_max_blocks();
    KCHECK(blocks > 0);
    KCHECK_EQ(page_count_free(), before);
    // Every CPU's cache and spill hold pages now: running out must reach them too.
    xcall_all(fill_cache, NULL);
    KCHECK_EQ(page_count_free(), before);

    // Take every page, linking them through their first word.
    void *head = NULL, *p;
    size_t n = 0;
    while ((p = page_alloc())) {
        *(void **)p = head;
        head = p;
        n++;
    }
    KCHECK_EQ(n, before);        // NULL only once nothing at all was left ...
    KCHECK_EQ(page_count_free(), 0); // ... in the pools or any CPU's cache
    KCHECK(page_alloc_zeroed() == NULL);
    KCHECK(page_alloc_contig(2) == NULL);
    KCHECK(kmalloc(3 * PGSIZE) == NULL);

    // One page back: one page can be had again, and only one.
    p = head;
    head = *(void **)p;
    page_free(p);
    p = page_alloc();
    KCHECK(p != NULL);
    KCHECK(page_alloc() == NULL);
    if (p) {
        *(void **)p = head;
        head = p;
    }

    while (head) {
        p = head;
        head = *(void **)p;
        page_free(p);
    }
    KCHECK_EQ(page_count_free(), before);
    // The buddies merged again: as many 4 MiB blocks as before the exhaustion.
    KCHECK_EQ(count_max_blocks(), blocks);
    KCHECK_EQ(page_count_free(), before);
}

KTEST(page_contig_exhaustion_recovers)
{
    drop_caches_settled();
    size_t before = page_count_free();
    void *head = NULL, *p;
    size_t n = 0;
    while ((p = page_alloc_contig(3))) { // odd size: tails go back each time
        *(void **)p = head;
        head = p;
        n++;
    }
    KCHECK(n > 0);
    KCHECK(page_count_free() < before);
    KCHECK(page_alloc_contig(4) == NULL);
    while (head) {
        p = head;
        head = *(void **)p;
        page_free_contig(p, 3);
    }
    KCHECK_EQ(page_count_free(), before);
}

// After warming up, alloc/free pairs on one CPU never take a pool lock.
KTEST(page_cache_stays_local)
{
    enum { WARM = 16 };
    void *p[WARM];
    for (int i = 0; i < WARM; i++)
        KREQUIRE((p[i] = page_alloc()));
    for (int i = 0; i < WARM; i++)
        page_free(p[i]);
    uint64_t locks = page_stat_pool_locks();
    for (int r = 0; r < 1000; r++) {
        void *q = page_alloc();
        KREQUIRE(q);
        page_free(q);
    }
    for (int r = 0; r < 100; r++) {
        for (int i = 0; i < WARM; i++)
            KREQUIRE((p[i] = page_alloc()));
        for (int i = 0; i < WARM; i++)
            page_free(p[i]);
    }
    KCHECK_EQ(page_stat_pool_locks(), locks);

    // The statistic does see pool traffic: an emptied cache must refill.
    page_drain_cpu_cache();
    uint64_t drained = page_stat_pool_locks();
    KCHECK(drained > locks);
    void *q = page_alloc();
    KREQUIRE(q);
    KCHECK(page_stat_pool_locks() > drained);
    page_free(q);
}

// A freed run of up to 16 pages is kept by its CPU and handed out again for a
// request of the same length, with no pool lock: exec and posix_spawn take and
// give back such buffers every time. A longer run goes straight back to the
// pools. The runs a CPU keeps still count as free.
KTEST(page_runs_stay_local)
{
    size_t free0 = page_count_free();
    void *a = page_alloc_contig(16), *b = page_alloc_contig(3);
    KREQUIRE(a && b);
    page_free_contig(a, 16);
    page_free_contig(b, 3);
    KCHECK_EQ(page_count_free(), free0);
    uint64_t locks = page_stat_pool_locks();
    for (int r = 0; r < 100; r++) {
        void *x = page_alloc_contig(16), *y = page_alloc_contig(3);
        KREQUIRE(x && y);
        KCHECK(x == a && y == b); // the very runs freed here
        page_free_contig(y, 3);
        page_free_contig(x, 16);
    }
    KCHECK_EQ(page_stat_pool_locks(), locks);
    void *big = page_alloc_contig(32);
    KREQUIRE(big);
    KCHECK(page_stat_pool_locks() > locks); // not cached: from a pool ...
    locks = page_stat_pool_locks();
    page_free_contig(big, 32);
    KCHECK(page_stat_pool_locks() > locks); // ... and back to it
    KCHECK_EQ(page_count_free(), free0);
    page_drain_cpu_cache(); // the runs go back to the pools too
    KCHECK_EQ(page_count_free(), free0);
}

// Pages a CPU frees beyond its cache array go to its own spill, not to the shared
// pools, and are what it gets back next: no pool lock either way.
KTEST(page_spill_keeps_freed_pages_local)
{
    enum { N = PCACHE_MAX + SPILLED };
    const uint64_t tag = 0x5350494c4c454421ULL; // "SPILLED!"
    void *head = NULL, *p;
    for (int i = 0; i < N; i++) {
        KREQUIRE((p = page_alloc()));
        LINK(p) = head;
        ((uint64_t *)p)[PGSIZE / 8 - 1] = tag;
        head = p;
    }
    uint64_t locks = page_stat_pool_locks();
    size_t free_before = page_count_free();
    while (head) {
        p = head;
        head = LINK(p);
        page_free(p);
    }
    KCHECK_EQ(page_count_free(), free_before + N);
    int tagged = 0;
    for (int i = 0; i < N; i++) {
        KREQUIRE((p = page_alloc()));
        tagged += ((uint64_t *)p)[PGSIZE / 8 - 1] == tag;
        ((uint64_t *)p)[PGSIZE / 8 - 1] = 0;
        LINK(p) = head;
        head = p;
    }
    KCHECK_EQ(tagged, N);                     // the same pages came back ...
    KCHECK_EQ(page_stat_pool_locks(), locks); // ... without the pools taking part
    while (head) {
        p = head;
        head = LINK(p);
        page_free(p);
    }
    // Draining the cache does return the spill to the pools.
    page_drain_cpu_cache();
    KCHECK(page_stat_pool_locks() > locks);
}

// ---- all CPUs at once ------------------------------------------------------------

struct stress {
    int rounds;
    int ran;          // CPUs that took part
    int errors;       // stamps found overwritten, unexpected NULLs
    size_t allocated; // pages handed out in total
};

static void stress_error(struct stress *st, const char *what, void *p)
{
    if (fetch_add_relaxed(&st->errors, 1) < 5)
        kprintf("# cpu %d: %s %p\n", cpu_id(), what, p);
}

// Wait (a bounded while) until every online CPU has arrived, so that they really
// run at the same time; if the CPUs are started one after another, go on anyway.
static void start_together(int *arrived)
{
    fetch_add(arrived, 1);
    for (long i = 0; i < 2000000 && READ_ONCE(*arrived) < ncpu_online; i++)
        pause();
}

static void page_stress_cpu(void *arg)
{
    struct stress *st = arg;
    enum { HOLD = 64, RUN = 16 };
    void *held[HOLD];
    uint64_t id = cpu_id(), seed = 0x9e3779b97f4a7c15ULL * (id + 1);
    size_t total = 0;
    start_together(&st->ran);
    for (int r = 0; r < st->rounds; r++) {
        int k = 1 + rnd(&seed) % HOLD;
        int got = 0;
        for (; got < k; got++) {
            if (!(held[got] = page_alloc())) {
                stress_error(st, "page_alloc returned NULL", NULL);
                break;
            }
            stamp(held[got], id << 48 | (uint64_t)r << 16 | got);
        }
        // A run now and then, to mix the buddy paths in.
        size_t n = 2 + rnd(&seed) % RUN;
        char *run = (r % 4 == 0) ? page_alloc_contig(n) : NULL;
        for (size_t j = 0; run && j < n; j++)
            stamp(run + j * PGSIZE, id << 48 | 1UL << 40 | j);
        for (int i = got - 1; i >= 0; i--) {
            if (!stamp_ok(held[i], id << 48 | (uint64_t)r << 16 | i))
                stress_error(st, "page overwritten:", held[i]);
            page_free(held[i]);
        }
        for (size_t j = 0; run && j < n; j++)
            if (!stamp_ok(run + j * PGSIZE, id << 48 | 1UL << 40 | j))
                stress_error(st, "run overwritten:", run + j * PGSIZE);
        if (run)
            page_free_contig(run, n);
        total += got + (run ? n : 0);
    }
    fetch_add_relaxed(&st->allocated, total);
}

// A page freed cold goes behind the CPU's other cached pages: the next
// allocations on this CPU hand out the pages it freed the usual way first, and
// the cold one only when those are gone; the free count sees it at once.
KTEST(page_free_cold_comes_back_last)
{
    enum { N = 8 };
    void *hot[N], *cold;
    push_off(); // one CPU's cache throughout
    KREQUIRE((cold = page_alloc()));
    for (int i = 0; i < N; i++)
        KREQUIRE((hot[i] = page_alloc()));
    size_t free_before = page_count_free();
    for (int i = 0; i < N; i++)
        page_free(hot[i]);
    page_free_cold(cold); // freed last, so page_free would hand it out first
    KCHECK_EQ(page_count_free(), free_before + N + 1);
    int back = 0;
    for (int i = 0; i < N; i++) {
        void *p = page_alloc();
        KREQUIRE(p);
        back += p != cold;
        hot[i] = p;
    }
    KCHECK_EQ(back, N);
    for (int i = 0; i < N; i++)
        page_free(hot[i]);
    pop_off();
}

KTEST(page_smp_stress_conserves)
{
    size_t before = page_count_free();
    // About 2300 pages per CPU up to 64 CPUs; beyond that, the same total split up
    // (TCG runs all CPUs on a couple of host cores).
    struct stress st = {.rounds = ncpu_online <= 64 ? 64 : MAX(8, 4096 / ncpu_online)};
    xcall_all(page_stress_cpu, &st);
    KCHECK_EQ(st.ran, ncpu_online);
    KCHECK_EQ(st.errors, 0);
    KCHECK(st.allocated >= (size_t)st.rounds * st.ran);
    // The caches may hold pages anywhere; the count must not care ...
    KCHECK_EQ(page_count_free(), before);
    // ... and with every cache drained, the pools alone have them all back.
    page_drain_all_caches();
    KCHECK_EQ(page_count_free(), before);
    kprintf("# page stress: %d CPUs, %lu pages allocated\n", st.ran, st.allocated);
}
