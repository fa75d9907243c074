// Physical page allocator: shared buddy pools with a per-CPU page cache in front.
//
// Scalability. page_alloc() and page_free() on different CPUs commute (each hands
// out or takes back a page nobody else holds), so in the common case they touch
// only the calling CPU's own cache lines -- and the pages themselves stay with
// the CPU that freed them, so a page one CPU just used (and wrote) is not what
// another CPU is handed next:
//  - Each CPU keeps up to PCACHE_MAX free pages in a `struct pcache` array in its
//    per-CPU area, and behind it a spill: a list of colder pages it freed, linked
//    through the free pages themselves. Alloc pops, free pushes; the lock guarding
//    both lives in the same per-CPU area and is only ever contended when memory
//    runs out (below).
//  - page_free_cold() puts a page straight onto the spill: one that other CPUs
//    used last (a copy-on-write page whose last sharer lets go at this CPU's
//    tick) is not the page this CPU hands out next, while their caches still
//    hold its lines.
//  - When the array is full, its coldest PCACHE_BATCH pages go to the spill; when
//    it is empty, it refills from the spill first. Only a spill grown past an
//    eighth of memory per CPU (spill_max) sends pages back to the shared pools,
//    and only an empty spill takes pages from them: the pools see traffic when a
//    CPU frees more than it allocates (or the reverse) for a long time, not every
//    time a process comes and goes.
//  - The shared memory is split into up to PAGE_NPOOL pools, each a buddy allocator
//    for its own physical range under its own lock, on its own cache lines. CPU c
//    refills from pool c % npools first, so refills on different CPUs rarely meet.
//  - The read-mostly layout (ranges, metadata pointers) sits on lines of its own
//    that nobody writes after page_init.
//  - Contiguous runs of up to RUN_CACHE_PAGES pages (kmalloc's large sizes, the
//    argument and stack buffers every exec and posix_spawn uses for a moment)
//    also go back to a small per-CPU cache of runs, reused for a request of the
//    same length; longer runs, and runs that do not fit the cache, come from and
//    go to the pools.
// When a CPU finds every pool empty it drains every CPU's cache, spill and runs
// into the pools (hence the per-CPU locks) before giving up, and a caller that
// may sleep also waits for the pages on their way back (page_wait_for_frees),
// so NULL really means "no free page".
//
// Metadata. Each page has a struct pmeta on a cache line of its own, so the
// metadata of neighbouring pages used by different CPUs never shares a line:
//  - a state byte: is it RAM we manage, and is it the head of a free buddy block
//    of which order. Only the pools write it, under their lock; the per-CPU fast
//    path never touches it.
//  - an owner word for kmalloc (slab or large allocation) and for user pages'
//    reference counts (uvm_pageref.c, fs page caches).
// Buddy free lists are linked through the free blocks themselves (struct
// free_block at the start of the block's first page): a free page is touched by
// nobody else, so those links share no line with anyone's live data. The per-CPU
// array holds pointers, not a list through the pages, so popping one page touches
// no other page.
//
// Allocation sites (the boot word `pagesites`, for finding leaks): every
// allocated page's metadata also holds the return addresses of the first
// PAGE_SITE_FRAMES callers of the allocator, cleared when the page is freed;
// /proc/pagesites (pagesites.c) sums the pages in use by them. A walk of a few
// frames and a write of the page's metadata line per allocation: off unless asked.
//
// Double free (debug check, O(1) in the common case): page_free stamps the page's
// first word with a cookie derived from its address, page_alloc clears it. Freeing
// a page whose word already holds the cookie is suspicious; page_free then looks
// for the page in every CPU cache and spill and in the buddy state, and panics if
// it is there. Pages going into a pool are also checked against the state bytes,
// which catches a page that is freed twice through page_free_contig.
#include "bootinfo.h"
#include "lib/kstats.h"
#include "lib/panic.h"
#include "mm/mm.h"
#include "proc/sched.h"
#include "sync/cpumask.h"
#include "sync/epoch.h"
#include "sync/percpu.h"
#include "sync/refcache.h"
#include "sync/spinlock.h"
#include "x86/smp.h"

#define PAGE_MAX_ORDER 10   // largest buddy block: 2^10 pages = 4 MiB
#define PAGE_NPOOL 8        // at most this many shared pools ...
#define POOL_MIN_PAGES 16384 // ... each with at least 64 MiB
#define PCACHE_MAX 128      // pages a CPU may cache
#define PCACHE_BATCH 32     // pages moved between a cache and the pools at once
#define RUN_CACHE_PAGES 16  // the longest run a CPU caches ...
#define RUN_CACHE_MAX 8     // ... of at most this many runs ...
#define RUN_CACHE_TOTAL 48  // ... and this many pages in all (a posix_spawn uses 40)
#define LOW_MEMORY 0x100000 // memory below 1 MiB is left to firmware and AP start-up

// State byte of each page.
#define PS_USED 0x00     // allocated, in a CPU cache, or inside a free block
#define PS_RESERVED 0x40 // not RAM we manage: hole, firmware, our own metadata
#define PS_FREE 0x80     // | order: first page of a free block of 2^order pages
#define PS_ORDER(s) ((s) & 0x3f)

// Written into the first word of each page in a CPU cache; see "Double free" above.
#define FREE_COOKIE(pa) (0x46524545504147ULL ^ (pa)) // "FREEPAG"

// The start of every free buddy block.
struct free_block {
    uint64_t cookie; // same place as the page_free cookie: keep it intact
    struct free_block *next, *prev;
};

// One shared pool: a buddy allocator for the pfns [start, end).
struct pool {
    struct spinlock lock;
    uint64_t start, end;
    size_t nfree;                                  // pages in the free lists
    uint64_t locks;                                // times locked (test statistic)
    struct free_block *free[PAGE_MAX_ORDER + 1];   // free blocks of each order
} __cacheline_aligned;

static struct pool pools[PAGE_NPOOL];

// Each page's metadata, on a cache line of its own (1/64 of memory, as Linux's
// struct page): neighbouring pages' owners on different CPUs share nothing.
struct pmeta {
    uintptr_t owner;     // kmalloc's owner word, or a user page's extra references
    uint8_t state;       // PS_*
    uintptr_t site[PAGE_SITE_FRAMES]; // who allocated it, under `pagesites` (below)
} __cacheline_aligned;
_Static_assert(sizeof(struct pmeta) == CACHELINE, "a page's metadata is one line");

// Read-mostly layout, written only by page_init.
static struct {
    struct pmeta *meta;  // per-page metadata, indexed by pfn - base
    uint64_t base, end;  // pfn range covered by meta[]
    size_t total;        // pages managed
    int npools;
    uint64_t pool_start[PAGE_NPOOL]; // copy of pools[i].start, off the lock's line
} pm __cacheline_aligned;

// Each CPU's page cache. Only its CPU uses it, except when memory runs out and
// another CPU drains it, or page_count_free() reads it; the lock is for those.
struct pcache {
    struct spinlock lock;
    unsigned n;
    size_t nspill;
    struct free_block *spill; // colder pages, linked through their free_block
    void *page[PCACHE_MAX];   // page[n-1] is the most recently freed (hottest)
    unsigned nruns, run_pages; // runs cached, and their pages in all
    struct {
        void *va;
        size_t npages;
    } run[RUN_CACHE_MAX];     // run[nruns-1] is the most recently freed
};
DEFINE_PERCPU(struct pcache, pcache) = {.lock = SPINLOCK_INIT("pcache")};

// ---- addresses and state ----------------------------------------------------

static inline uint64_t va2pfn(const void *va) { return V2P(va) >> PGSHIFT; }
static inline void *pfn2va(uint64_t pfn) { return P2V(pfn << PGSHIFT); }
static inline struct pmeta *pmeta(uint64_t pfn) { return &pm.meta[pfn - pm.base]; }
static inline uint8_t *pstate(uint64_t pfn) { return &pmeta(pfn)->state; }

static bool managed_va(const void *va)
{
    uintptr_t a = (uintptr_t)va;
    if (a < DIRECTMAP_BASE || a % PGSIZE)
        return false;
    uint64_t pfn = va2pfn(va);
    return pfn >= pm.base && pfn < pm.end;
}

// The pfn of a page being freed; anything the allocator did not hand out is a bug.
static uint64_t checked_pfn(const void *va, const char *who)
{
    if (!managed_va(va) || *pstate(va2pfn(va)) == PS_RESERVED)
        panic("%s: %p is not an allocated page", who, va);
    return va2pfn(va);
}

static struct pool *pool_of(uint64_t pfn)
{
    for (int i = pm.npools - 1; i > 0; i--)
        if (pfn >= pm.pool_start[i])
            return &pools[i];
    return &pools[0];
}

// Is pfn inside a free buddy block? A block of order k containing pfn starts at
// pfn rounded down to 2^k, so look at each such candidate head.
static bool pfn_in_free_block(struct pool *p, uint64_t pfn)
{
    for (int k = 0; k <= PAGE_MAX_ORDER; k++) {
        uint64_t head = pfn & ~((1UL << k) - 1);
        if (head < p->start)
            break;
        uint8_t s = *pstate(head);
        if ((s & PS_FREE) && PS_ORDER(s) >= k)
            return true;
    }
    return false;
}

// Before a block goes back into pool p: it must be ours, and no page of it free.
static void check_block_not_free(struct pool *p, uint64_t pfn, int order)
{
    if (pfn < p->start || pfn + (1UL << order) > p->end)
        panic("page: freeing pfn %lx order %d outside its pool", pfn, order);
    if (pfn_in_free_block(p, pfn))
        panic("page: double free of pfn %lx", pfn);
    for (uint64_t i = 0; i < (1UL << order); i++) {
        uint8_t s = *pstate(pfn + i);
        if (s == PS_RESERVED)
            panic("page: freeing reserved pfn %lx", pfn + i);
        if (s & PS_FREE)
            panic("page: double free of pfn %lx", pfn + i);
    }
}

// ---- one pool: a buddy allocator; caller holds p->lock ----------------------

static void freelist_push(struct pool *p, int order, uint64_t pfn)
{
    struct free_block *b = pfn2va(pfn);
    b->prev = NULL;
    b->next = p->free[order];
    if (b->next)
        b->next->prev = b;
    p->free[order] = b;
    *pstate(pfn) = PS_FREE | order;
}

static void freelist_remove(struct pool *p, int order, uint64_t pfn)
{
    struct free_block *b = pfn2va(pfn);
    if (b->prev)
        b->prev->next = b->next;
    else
        p->free[order] = b->next;
    if (b->next)
        b->next->prev = b->prev;
    *pstate(pfn) = PS_USED;
}

// Take a block of 2^order pages; returns its pfn, or 0 (pfn 0 is never managed).
static uint64_t buddy_alloc(struct pool *p, int order)
{
    int k = order;
    while (k <= PAGE_MAX_ORDER && !p->free[k])
        k++;
    if (k > PAGE_MAX_ORDER)
        return 0;
    uint64_t pfn = va2pfn(p->free[k]);
    freelist_remove(p, k, pfn);
    // Split: keep the lower half, give the upper half back, until small enough.
    while (k > order) {
        k--;
        freelist_push(p, k, pfn + (1UL << k));
    }
    p->nfree -= 1UL << order;
    return pfn;
}

// Return a block of 2^order pages, merging it with its free buddies.
static void buddy_free(struct pool *p, uint64_t pfn, int order)
{
    check_block_not_free(p, pfn, order);
    p->nfree += 1UL << order;
    while (order < PAGE_MAX_ORDER) {
        uint64_t buddy = pfn ^ (1UL << order);
        if (buddy < p->start || buddy >= p->end || *pstate(buddy) != (PS_FREE | order))
            break;
        freelist_remove(p, order, buddy);
        pfn = MIN(pfn, buddy);
        order++;
    }
    freelist_push(p, order, pfn);
}

// Return the pfns [start, end) as the largest aligned blocks that fit.
static void buddy_free_run(struct pool *p, uint64_t start, uint64_t end)
{
    while (start < end) {
        int k = 0;
        while (k < PAGE_MAX_ORDER && (start & (1UL << k)) == 0 &&
               start + (2UL << k) <= end)
            k++;
        buddy_free(p, start, k);
        start += 1UL << k;
    }
}

static void pool_lock(struct pool *p)
{
    spin_lock(&p->lock);
    p->locks++;
}

// ---- per-CPU caches -----------------------------------------------------------

// Before page_init (or without any RAM) there are no pools; loops over them run 0 times.
static int home_pool(void) { return pm.npools ? cpu_id() % pm.npools : 0; }

// The spill may hold this many pages: an eighth of memory shared by the CPUs.
static size_t spill_max(void) { return pm.total / (8 * (size_t)MAX(1, READ_ONCE(ncpu))); }

// Fill an empty cache with up to PCACHE_BATCH pages: the CPU's own spill first
// (pages it freed itself), then the pools, home pool first.
static void cache_refill(struct pcache *pc)
{
    while (pc->n < PCACHE_BATCH && pc->spill) {
        struct free_block *b = pc->spill;
        pc->spill = b->next;
        pc->nspill--;
        pc->page[pc->n++] = b;
    }
    int home = home_pool();
    for (int i = 0; i < pm.npools && pc->n < PCACHE_BATCH; i++) {
        struct pool *p = &pools[(home + i) % pm.npools];
        if (READ_ONCE(p->nfree) == 0) // racy peek: only saves a lock on an empty pool
            continue;
        pool_lock(p);
        uint64_t pfn;
        while (pc->n < PCACHE_BATCH && (pfn = buddy_alloc(p, 0)))
            pc->page[pc->n++] = pfn2va(pfn);
        spin_unlock(&p->lock);
    }
}

// Giving pages back to the pools they came from, taking each pool lock once per run.
struct pool_putter {
    struct pool *cur; // locked
};

static void pool_put(struct pool_putter *pp, void *va)
{
    uint64_t pfn = va2pfn(va);
    struct pool *p = pool_of(pfn);
    if (p != pp->cur) {
        if (pp->cur)
            spin_unlock(&pp->cur->lock);
        pool_lock(p);
        pp->cur = p;
    }
    buddy_free(p, pfn, 0);
}

static void pool_put_done(struct pool_putter *pp)
{
    if (pp->cur)
        spin_unlock(&pp->cur->lock);
    pp->cur = NULL;
}

// Put a free page on the spill if it has room; caller holds pc->lock.
static bool spill_push(struct pcache *pc, void *va)
{
    if (pc->nspill >= spill_max())
        return false;
    struct free_block *b = va; // its first word keeps the cookie
    b->next = pc->spill;
    pc->spill = b;
    pc->nspill++;
    return true;
}

// Take the n coldest pages (the bottom of the stack) out of the array; caller
// holds pc->lock. They go to the spill while it has room, else to the pools.
static void cache_shrink(struct pcache *pc, unsigned n, bool to_pools)
{
    n = MIN(n, pc->n);
    struct pool_putter pp = {NULL};
    for (unsigned i = 0; i < n; i++)
        if (to_pools || !spill_push(pc, pc->page[i]))
            pool_put(&pp, pc->page[i]);
    pool_put_done(&pp);
    memmove(pc->page, pc->page + n, (pc->n - n) * sizeof pc->page[0]);
    pc->n -= n;
}

// Give a run back to its pool.
static void run_to_pool(void *va, size_t npages)
{
    uint64_t pfn = va2pfn(va);
    struct pool *p = pool_of(pfn);
    pool_lock(p);
    buddy_free_run(p, pfn, pfn + npages); // checks every block, panics on a bad one
    spin_unlock(&p->lock);
}

// Drop run i from the run cache (its pages stay wherever the caller puts them).
static void run_remove(struct pcache *pc, unsigned i)
{
    pc->run_pages -= pc->run[i].npages;
    memmove(&pc->run[i], &pc->run[i + 1], (pc->nruns - i - 1) * sizeof pc->run[0]);
    pc->nruns--;
}

// Everything the cache holds, array, spill and runs, to the pools; caller holds
// pc->lock.
static void cache_drain(struct pcache *pc)
{
    while (pc->nruns) {
        run_to_pool(pc->run[0].va, pc->run[0].npages);
        run_remove(pc, 0);
    }
    cache_shrink(pc, pc->n, true);
    struct pool_putter pp = {NULL};
    while (pc->spill) {
        struct free_block *b = pc->spill;
        pc->spill = b->next;
        pool_put(&pp, b);
    }
    pool_put_done(&pp);
    pc->nspill = 0;
}

static struct pcache *cpu_cache(int c)
{
    return READ_ONCE(percpu_offset[c]) ? per_cpu_ptr(&pcache, c) : NULL;
}

void page_drain_cpu_cache(void)
{
    struct pcache *pc = this_cpu_ptr(&pcache);
    spin_lock(&pc->lock);
    cache_drain(pc);
    spin_unlock(&pc->lock);
}

// Empty every CPU's cache into the pools: the last resort before failing an
// allocation, and a way for tests to reach a known state. Takes one cache lock at
// a time, so two CPUs doing this at once cannot deadlock.
void page_drain_all_caches(void)
{
    for (int c = 0; c < NCPU_MAX; c++) {
        struct pcache *pc = cpu_cache(c);
        if (!pc)
            continue;
        spin_lock(&pc->lock);
        cache_drain(pc);
        spin_unlock(&pc->lock);
    }
}

static void *cache_pop(void)
{
    struct pcache *pc = this_cpu_ptr(&pcache);
    spin_lock(&pc->lock);
    if (pc->n == 0)
        cache_refill(pc);
    void *va = pc->n ? pc->page[--pc->n] : NULL;
    spin_unlock(&pc->lock);
    return va;
}

static void cache_push(void *va)
{
    struct pcache *pc = this_cpu_ptr(&pcache);
    spin_lock(&pc->lock);
    if (pc->n == PCACHE_MAX)
        cache_shrink(pc, PCACHE_BATCH, false);
    pc->page[pc->n++] = va;
    spin_unlock(&pc->lock);
}

// ---- running out ----------------------------------------------------------------

// Freed objects come back late: a deferred free after two epochs
// (sync/epoch.c), an object whose last reference went after three refcache
// epochs and then the epochs of its own deferred free (sync/refcache.c). Each
// epoch needs a tick from every online CPU, so with many vCPUs on a busy host
// one can take half a second, and CPUs that free fast (fsstress at 64 vCPUs:
// 10,000 callbacks and 14,000 objects in review) find every pool empty while
// most of memory is on its way back. An allocation that may sleep waits for
// them, an epoch at a time, trying again after each, for at most
// FREES_WAIT_EPOCHS epochs (what is pending now has landed by then: three
// refcache epochs, then three epochs), after giving back what the kernel's
// caches hold (drop_caches: kmalloc's magazines and empty slabs, cached
// kernel stacks, which at 255 CPUs can be 64 MiB); one that may not (interrupts or
// preemption off, a spinlock held) fails at once, and its caller may wait and
// run again (page_wait_if_short). Counting epochs, not seconds, keeps a real
// exhaustion on a small machine quick to fail (epochs are short there). Only
// the failing path reads every CPU's counts.
#define FREES_WAIT_EPOCHS 8
#define FREES_STEP_NS (2 * 1000000000ULL) // an epoch that takes longer: give up
#define FREES_POLL_NS (2 * 1000000ULL)

// The thread whose allocation failed, so that a caller that could not wait
// learns that an ENOMEM was for want of pages (not of address space).
static void note_short_of_pages(void)
{
    struct thread *t = thread_current();
    if (t)
        t->short_of_pages = true;
}

bool page_wait_for_frees(uint64_t *until)
{
    if (!sched_may_sleep())
        return false;
    if (!*until) {
        // The first failure of this allocation: what the kernel keeps for
        // reuse goes back (slabs at once, stacks a grace period later), and
        // the caller tries again.
        drop_caches();
        *until = epoch_current() + FREES_WAIT_EPOCHS;
        return true;
    }
    if (!epoch_pending() && !refcache_reviewing())
        return false;
    uint64_t ep = epoch_current(), rc = refcache_epoch();
    if (ep >= *until)
        return false;
    // A CPU acknowledges an epoch and runs its callbacks that are due in one
    // tick, and refcache reviews at its flush: each new epoch frees some.
    uint64_t deadline = nsec_now() + FREES_STEP_NS;
    while (refcache_epoch() == rc && epoch_current() == ep) {
        if (nsec_now() >= deadline)
            return false;
        sched_sleep_until(nsec_now() + FREES_POLL_NS);
    }
    return true;
}

void page_shortage_clear(void) { thread_current()->short_of_pages = false; }

bool page_wait_if_short(uint64_t *until)
{
    struct thread *t = thread_current();
    bool short_of_pages = t->short_of_pages;
    t->short_of_pages = false;
    return short_of_pages && page_wait_for_frees(until);
}

// ---- allocation sites (`pagesites`) ---------------------------------------------

static bool sites_on; // [i] the boot word `pagesites`

// Is this return address inside the allocators (page_alloc*, and kmalloc's
// slab_new, mag_refill, mag_pop, kmalloc*, kzalloc)? Those frames say nothing:
// a slab's pages are put on the kmalloc that made the slab.
static bool in_allocator(uintptr_t ret)
{
    static const char *const names[] = {"page_alloc", "slab_new", "mag_refill", "mag_pop",
                                        "kmalloc", "kzalloc"};
    uintptr_t off;
    const char *name = symbol_lookup(ret - 1, &off);
    for (size_t i = 0; name && i < ARRAY_SIZE(names); i++)
        if (strncmp(name, names[i], strlen(names[i])) == 0)
            return true;
    return false;
}

// Record who asked for the npages pages at va: the allocator's callers.
static __attribute__((noinline)) void site_note(void *va, size_t npages)
{
    uintptr_t pcs[PAGE_SITE_FRAMES + 3], site[PAGE_SITE_FRAMES] = {0};
    int n = backtrace_collect((uintptr_t)__builtin_frame_address(0), 0, pcs, ARRAY_SIZE(pcs));
    int i = 0, k = 0;
    while (i < n && in_allocator(pcs[i]))
        i++;
    while (i < n && k < PAGE_SITE_FRAMES)
        site[k++] = pcs[i++];
    if (!site[0])
        site[0] = (uintptr_t)site_note; // (no frame to name: still "in use")
    for (size_t p = 0; p < npages; p++)
        memcpy(pmeta(va2pfn(va) + p)->site, site, sizeof site);
}

static void site_clear(void *va, size_t npages)
{
    for (size_t p = 0; p < npages; p++)
        WRITE_ONCE(pmeta(va2pfn(va) + p)->site[0], 0);
}

bool page_sites_on(void) { return sites_on; }

// Tests: turn site keeping on or off, returning the old setting. Pages that
// came while it was off have no site; pages that go while it is off keep
// theirs, so a test frees what it allocated before it turns keeping off.
// Not in mm.h on purpose.
bool page_sites_set(bool on)
{
    bool was = sites_on;
    WRITE_ONCE(sites_on, on);
    return was;
}

// fn(site, arg) for every page in use with a recorded site, in physical order.
// Reads without locks: pages allocated and freed meanwhile may or may not be seen.
void page_sites_each(void (*fn)(const uintptr_t *site, void *arg), void *arg)
{
    if (!sites_on)
        return;
    for (uint64_t pfn = pm.base; pfn < pm.end; pfn++) {
        struct pmeta *m = pmeta(pfn);
        uintptr_t site[PAGE_SITE_FRAMES];
        if (READ_ONCE(m->state) == PS_RESERVED || !READ_ONCE(m->site[0]))
            continue;
        for (int f = 0; f < PAGE_SITE_FRAMES; f++)
            site[f] = READ_ONCE(m->site[f]);
        if (site[0])
            fn(site, arg);
    }
}

// ---- the interface ------------------------------------------------------------

void *page_alloc(void)
{
    void *va = cache_pop();
    if (!va) {
        page_drain_all_caches();
        va = cache_pop();
    }
    for (uint64_t until = 0; !va && page_wait_for_frees(&until);) {
        page_drain_all_caches();
        va = cache_pop();
    }
    if (!va)
        note_short_of_pages();
    if (va) {
        *(uint64_t *)va = 0; // not a free page any more (see "Double free" above)
        kstat_pages_alloc(1);
        if (sites_on)
            site_note(va, 1);
    }
    return va;
}

void *page_alloc_zeroed(void)
{
    void *va = page_alloc();
    if (va)
        memset(va, 0, PGSIZE);
    return va;
}

static bool cache_holds(struct pcache *pc, void *va)
{
    for (unsigned i = 0; i < pc->nruns; i++)
        if (pc->run[i].va == va)
            return true;
    for (unsigned i = 0; i < pc->n; i++)
        if (pc->page[i] == va)
            return true;
    for (struct free_block *b = pc->spill; b; b = b->next)
        if (b == va)
            return true;
    return false;
}

// The cookie says va may already be free (a page, or the first page of a run).
// Look for it everywhere it could be.
static void check_double_free(void *va)
{
    for (int c = 0; c < NCPU_MAX; c++) {
        struct pcache *pc = cpu_cache(c);
        if (!pc)
            continue;
        spin_lock(&pc->lock);
        bool dup = cache_holds(pc, va);
        spin_unlock(&pc->lock);
        if (dup)
            panic("page_free: double free of %p (in cpu %d's cache)", va, c);
    }
    struct pool *p = pool_of(va2pfn(va));
    spin_lock(&p->lock);
    bool dup = pfn_in_free_block(p, va2pfn(va));
    spin_unlock(&p->lock);
    if (dup)
        panic("page_free: double free of %p (in a pool)", va);
}

// Stamp a page being freed (panics on one that is not ours or is free already).
static void free_stamp(void *va)
{
    // Only the cheap range check here: the pool checks the state byte when the
    // page leaves the cache, under its lock.
    if (!managed_va(va))
        panic("page_free: %p is not an allocated page", va);
    uint64_t pa = V2P(va);
    uint64_t *w = va;
    if (*w == FREE_COOKIE(pa))
        check_double_free(va);
    *w = FREE_COOKIE(pa);
    kstat_pages_free(1);
    if (sites_on)
        site_clear(va, 1);
}

void page_free(void *va)
{
    free_stamp(va);
    cache_push(va);
}

void page_free_cold(void *va)
{
    free_stamp(va);
    struct pcache *pc = this_cpu_ptr(&pcache);
    spin_lock(&pc->lock);
    bool kept = spill_push(pc, va);
    spin_unlock(&pc->lock);
    if (!kept)
        cache_push(va);
}

static int order_for(size_t npages)
{
    int k = 0;
    while ((1UL << k) < npages)
        k++;
    return k;
}

// A block of 2^order pages from pool p, with the pages past npages given back.
static uint64_t pool_alloc_contig(struct pool *p, int order, size_t npages)
{
    pool_lock(p);
    uint64_t pfn = buddy_alloc(p, order);
    if (pfn)
        buddy_free_run(p, pfn + npages, pfn + (1UL << order));
    spin_unlock(&p->lock);
    return pfn;
}

static uint64_t pools_alloc_contig(int order, size_t npages)
{
    int home = home_pool();
    for (int i = 0; i < pm.npools; i++) {
        struct pool *p = &pools[(home + i) % pm.npools];
        if (READ_ONCE(p->nfree) < npages)
            continue;
        uint64_t pfn = pool_alloc_contig(p, order, npages);
        if (pfn)
            return pfn;
    }
    return 0;
}

// Physically contiguous pages straight from a pool. The run starts on a multiple
// of its size rounded up to a power of two (e.g. 3 pages: 16 KiB aligned).
// A cached run of exactly npages, most recently freed first; NULL if none.
static void *run_pop(size_t npages)
{
    struct pcache *pc = this_cpu_ptr(&pcache);
    void *va = NULL;
    spin_lock(&pc->lock);
    for (unsigned i = pc->nruns; i-- > 0;) {
        if (pc->run[i].npages == npages) {
            va = pc->run[i].va;
            run_remove(pc, i);
            break;
        }
    }
    spin_unlock(&pc->lock);
    return va;
}

// Keep a freed run in this CPU's cache, making room by giving the oldest back to
// the pools. False if it is too long to cache.
static bool run_push(void *va, size_t npages)
{
    if (npages > RUN_CACHE_PAGES)
        return false;
    struct pcache *pc = this_cpu_ptr(&pcache);
    spin_lock(&pc->lock);
    while (pc->nruns == RUN_CACHE_MAX || pc->run_pages + npages > RUN_CACHE_TOTAL) {
        run_to_pool(pc->run[0].va, pc->run[0].npages);
        run_remove(pc, 0);
    }
    pc->run[pc->nruns].va = va;
    pc->run[pc->nruns++].npages = npages;
    pc->run_pages += npages;
    spin_unlock(&pc->lock);
    return true;
}

void *page_alloc_contig(size_t npages)
{
    if (npages <= 1)
        return npages ? page_alloc() : NULL;
    if (npages > (1UL << PAGE_MAX_ORDER) || pm.npools == 0)
        return NULL;
    void *va = run_pop(npages);
    if (va) {
        *(uint64_t *)va = 0; // not free any more (see "Double free" above)
        kstat_pages_alloc(npages);
        if (sites_on)
            site_note(va, npages);
        return va;
    }
    int order = order_for(npages);
    uint64_t pfn = pools_alloc_contig(order, npages);
    if (!pfn) {
        // Cached single pages may be what keeps the buddies from merging.
        page_drain_all_caches();
        pfn = pools_alloc_contig(order, npages);
    }
    for (uint64_t until = 0; !pfn && page_wait_for_frees(&until);) {
        page_drain_all_caches();
        pfn = pools_alloc_contig(order, npages);
    }
    if (!pfn) {
        note_short_of_pages();
        return NULL;
    }
    *(uint64_t *)pfn2va(pfn) = 0; // a block's head keeps a cookie (struct free_block)
    kstat_pages_alloc(npages);
    if (sites_on)
        site_note(pfn2va(pfn), npages);
    return pfn2va(pfn);
}

void page_free_contig(void *va, size_t npages)
{
    if (npages <= 1) {
        if (npages)
            page_free(va);
        return;
    }
    checked_pfn(va, "page_free_contig");
    uint64_t *w = va;
    if (*w == FREE_COOKIE(V2P(va)))
        check_double_free(va);
    kstat_pages_free(npages);
    if (sites_on)
        site_clear(va, npages);
    if (npages <= RUN_CACHE_PAGES) {
        *w = FREE_COOKIE(V2P(va));
        if (run_push(va, npages))
            return;
    }
    run_to_pool(va, npages);
}

// Exact even while other CPUs allocate: every cache and pool is locked at once
// (caches in CPU order, then pools, the same order as everywhere else). The mask
// remembers which caches were locked, in case a CPU comes up meanwhile.
size_t page_count_free(void)
{
    cpumask_t locked;
    size_t n = 0;
    cpumask_clear(&locked);
    for (int c = 0; c < NCPU_MAX; c++) {
        if (cpu_cache(c)) {
            spin_lock(&cpu_cache(c)->lock);
            cpumask_set(&locked, c);
        }
    }
    for (int i = 0; i < pm.npools; i++)
        spin_lock(&pools[i].lock);
    for (int i = 0; i < pm.npools; i++)
        n += pools[i].nfree;
    for_each_cpu(c, &locked)
        n += cpu_cache(c)->n + cpu_cache(c)->nspill + cpu_cache(c)->run_pages;
    for (int i = pm.npools - 1; i >= 0; i--)
        spin_unlock(&pools[i].lock);
    for_each_cpu(c, &locked)
        spin_unlock(&cpu_cache(c)->lock);
    return n;
}

size_t page_count_total(void) { return pm.total; }

// Test statistic: how often any pool lock has been taken. Not in mm.h on purpose.
uint64_t page_stat_pool_locks(void)
{
    uint64_t n = 0;
    for (int i = 0; i < pm.npools; i++)
        n += READ_ONCE(pools[i].locks);
    return n;
}

// kmalloc's word of metadata per page: 0 unless kmalloc set it.
uintptr_t page_owner_get(const void *va)
{
    if (!managed_va((const void *)PGROUNDDOWN(va)))
        return 0;
    return READ_ONCE(pmeta(va2pfn(va))->owner);
}

intptr_t page_owner_add(void *va, intptr_t delta)
{
    uintptr_t *w = &pmeta(checked_pfn(va, "page_owner_add"))->owner;
    return (intptr_t)__atomic_fetch_add(w, (uintptr_t)delta, __ATOMIC_ACQ_REL);
}

bool page_free_stamped(const void *va) { return *(const uint64_t *)va == FREE_COOKIE(V2P(va)); }

void page_owner_set(void *va, uintptr_t owner)
{
    WRITE_ONCE(pmeta(checked_pfn(va, "page_owner_set"))->owner, owner);
}

// ---- start-up -------------------------------------------------------------------

// Usable RAM from the boot memory map, sorted, merged, and clipped to >= 1 MiB.
#define MAX_RANGES 256
static struct range {
    uint64_t start, end; // pfns
} ranges[MAX_RANGES];
static int nranges;

static void add_range(uint64_t start, uint64_t end)
{
    int i = nranges;
    if (i == MAX_RANGES) {
        kprintf("page: more than %d memory ranges, ignoring %lx-%lx\n", MAX_RANGES,
                start << PGSHIFT, end << PGSHIFT);
        return;
    }
    for (; i > 0 && ranges[i - 1].start > start; i--)
        ranges[i] = ranges[i - 1];
    ranges[i] = (struct range){start, end};
    nranges++;
}

static void merge_ranges(void)
{
    int j = 0;
    for (int i = 1; i < nranges; i++) {
        if (ranges[i].start <= ranges[j].end)
            ranges[j].end = MAX(ranges[j].end, ranges[i].end);
        else
            ranges[++j] = ranges[i];
    }
    nranges = nranges ? j + 1 : 0;
}

static void collect_ranges(const struct bootinfo *bi)
{
    const struct bootmem *m = P2V(bi->mmap);
    for (uint64_t i = 0; i < bi->mmap_count; i++) {
        if (m[i].type != BOOTMEM_USABLE)
            continue;
        uint64_t start = MAX(m[i].base, LOW_MEMORY) >> PGSHIFT;
        uint64_t end = (m[i].base >> PGSHIFT) + m[i].npages;
        if (start < end)
            add_range(start, end);
    }
    merge_ranges();
}

// Take npages from the start of the first range big enough (for our metadata).
static uint64_t carve(uint64_t npages)
{
    for (int i = 0; i < nranges; i++) {
        if (ranges[i].end - ranges[i].start >= npages) {
            uint64_t pfn = ranges[i].start;
            ranges[i].start += npages;
            return pfn;
        }
    }
    panic("page: no room for %lu pages of page metadata", npages);
}

// Split the pfn space into pools holding about the same amount of RAM, at
// boundaries that are multiples of the largest block.
static void setup_pools(void)
{
    const uint64_t align = 1UL << PAGE_MAX_ORDER;
    int np = MAX(1, MIN(PAGE_NPOOL, (int)(pm.total / POOL_MIN_PAGES)));
    pm.npools = np;
    for (int i = 0; i < np; i++) {
        spin_init(&pools[i].lock, "page pool");
        pools[i].start = pm.base;
        pools[i].end = pm.end;
    }
    size_t seen = 0;
    int next = 1;
    for (int r = 0; r < nranges && next < np; r++) {
        for (uint64_t pfn = ranges[r].start; pfn < ranges[r].end && next < np;) {
            // Boundary `next` goes where the running count reaches next/np of the total.
            size_t want = pm.total * next / np;
            uint64_t step = MIN(ranges[r].end - pfn, want - seen);
            pfn += step;
            seen += step;
            if (seen == want) {
                uint64_t b = pm.base + ROUNDUP(pfn - pm.base, align);
                b = MAX(b, pools[next - 1].start);
                pools[next].start = pools[next - 1].end = MIN(b, pm.end);
                next++;
            }
        }
    }
    for (int i = 0; i < np; i++)
        pm.pool_start[i] = pools[i].start;
}

void page_init(const struct bootinfo *bi)
{
    collect_ranges(bi);
    if (nranges == 0) {
        kprintf("page: no usable memory above 1 MiB\n");
        return;
    }
    const uint64_t align = 1UL << PAGE_MAX_ORDER;
    pm.base = ranges[0].start & ~(align - 1);
    pm.end = ranges[nranges - 1].end;
    uint64_t span = pm.end - pm.base;
    uint64_t meta_pages = PGROUNDUP(span * sizeof(struct pmeta)) / PGSIZE;
    pm.meta = pfn2va(carve(meta_pages));
    for (uint64_t i = 0; i < span; i++)
        pm.meta[i] = (struct pmeta){.owner = 0, .state = PS_RESERVED};
    sites_on = cmdline_get("pagesites", NULL) != NULL;

    for (int r = 0; r < nranges; r++)
        pm.total += ranges[r].end - ranges[r].start;
    setup_pools();
    for (int r = 0; r < nranges; r++) {
        for (uint64_t pfn = ranges[r].start; pfn < ranges[r].end; pfn++)
            *pstate(pfn) = PS_USED;
        // A range may cross pool boundaries: give each pool its part.
        for (int i = 0; i < pm.npools; i++) {
            uint64_t s = MAX(ranges[r].start, pools[i].start);
            uint64_t e = MIN(ranges[r].end, pools[i].end);
            if (s < e) {
                pool_lock(&pools[i]);
                buddy_free_run(&pools[i], s, e);
                spin_unlock(&pools[i].lock);
            }
        }
    }
    kprintf("page: %lu MiB in %d ranges, %d pools, %lu KiB of metadata%s\n",
            pm.total * PGSIZE >> 20, nranges, pm.npools, meta_pages * PGSIZE >> 10,
            sites_on ? ", allocation sites kept (pagesites)" : "");
}
