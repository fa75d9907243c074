// User address spaces, after RadixVM (Clements et al., EuroSys 2013).
//
// The truth about an address space is a radix tree indexed by virtual page
// number whose leaves hold one mapping descriptor per page (struct vpage, a cache
// line each): mapped or not, protection, copy-on-write and shared flags, the
// physical page once touched. Page tables are per CPU: a CPU fills its own table
// for the address space on fault, and those tables are the record of which CPUs
// may cache a translation of a page (a present entry), so a fault writes nothing
// another CPU's fault of the same page reads.
//
// Commute: mmap, munmap, mprotect, madvise and page faults on disjoint page ranges
// of one address space (and anything on different address spaces). None of them
// takes an address-space-wide lock or writes a shared line:
//  - A range operation locks the descriptors of exactly its pages (a lock bit in
//    each descriptor's word, taken in ascending address order, so two range
//    operations never deadlock) and writes only those descriptors' lines. Tree
//    nodes are added with one compare-and-swap on the parent slot, once per
//    2^6 (leaf) or 2^9 (node) pages of address space; munmap gives empty ones
//    back a grace period later (tree_trim), and everything that walks the tree
//    does so in an epoch read section.
//  - A fault reads the descriptor without locking it (one acquire load of its
//    word), fills its own CPU's page table, then re-reads the word: if a range
//    operation locked the page in between, the fault backs its entry out and
//    retries (fill_checked spells out why the two cannot miss each other).
//    Faults that must change the descriptor (first touch allocates the page, a
//    write breaks copy-on-write) lock that one descriptor.
//  - munmap/mprotect/madvise/COW breaks walk the page tables of every CPU that
//    has one for the space (only for pages that have a physical page: no table
//    maps one that has none), clear the entries they find present and shoot down
//    only those CPUs, and only if they have the space loaded (a flag each CPU
//    keeps in its own part of the space): pages touched only by the calling CPU
//    cost no IPI. Reading other CPUs' tables is fine for the page itself: those
//    calls do not commute with accesses to it. What remains shared is the x86
//    format's: 8 entries to a cache line, and one table (and the entries above
//    it) for 512 neighbouring pages, which a CPU writes when it first faults on
//    any of them. MADV_UNMAP_ASYNC does not wait for those CPUs at all
//    (tlb_flush_later, page references dropped a grace period later, see
//    uvm_unmap_async).
//  - munmap of nothing, and mprotect that changes nothing or must refuse
//    (ENOMEM, EACCES), decide from a lock-free look and write nothing.
//  - Non-fixed placement searches a per-CPU zone below the CPU's own hint.
//  - Counts (resident pages) are per CPU.
// Descriptors sit on their own cache lines, so operations on different pages never
// share a line in the tree either; neighbouring pages share only the (read-only)
// tree nodes and the page-table pages of each CPU that maps both.
//
// Page references: a private page touched once has one owner, its descriptor.
// Fork shares pages (copy-on-write, or MAP_SHARED); the page owner word of
// page.c then counts the extra references (0 = one owner), so the unshared
// common case never touches it. Increments (fork) reach the word at once, but a
// COW break drops its reference to the shared page later, from a per-CPU list
// drained at the epoch tick (cow_defer): two processes breaking the same page
// then only read the word and the page. The word is thus never below the true
// count, and a COW break that reads 0 may take the page as its own.
//
// File-backed pages are the file's own pages (fs_map_page): MAP_SHARED maps them
// writable, so stores and read(2)/write(2) see each other; MAP_PRIVATE maps them
// copy-on-write. The descriptor holds the inode, the page index and an inode
// reference, but no reference to the page (VP_FILEPG): the inode keeps its
// pages, a truncate takes the pages it frees out of every descriptor before
// freeing them (see "truncate"; if it cannot, the file keeps them), and a
// dropped descriptor gives its inode reference back only once no TLB reaches the
// page (struct wrun). So faults of one file page in many address spaces (the
// text of a program many processes run) write nothing of the page; a COW break
// of a file page always copies. Faults past the end of the file get SIGBUS,
// decided without locking the descriptor (file_page_past_end). A page mapped
// through a description open for writing (VP_WRITER) also holds write access
// to the file (ETXTBSY, fs/writecount.c) until its descriptor is unmapped, and
// a fork's copy holds its own; those counts are added and dropped in runs of
// pages of one file (struct wrun), one refcache update per run, and an unmap
// drops them with the pages, once no TLB can reach them.
//
// MAP_SHARED anonymous memory is filled in at mmap time (as with MAP_POPULATE):
// fork then shares the pages themselves, and no shared backing object is needed.
// Pages are freed only after every CPU that may map them has flushed (with
// interrupts off during the fill-and-recheck, a shootdown waits for the fault
// to finish).
#include "fs.h"
#include "lib/kstats.h"
#include "mm/mm.h"
#include "mm/tlb.h"
#include "mm/uvm.h"
#include "proc/sched.h"
#include "sync/counter.h"
#include "sync/epoch.h"
#include "sync/percpu.h"
#include "sync/xcall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "x86/smp.h"
#include "x86/x86.h"

// ---- descriptors and the radix tree ----------------------------------------------

#define VP_LOCK (1UL << 0)   // with the holder's CPU in VP_OWNER (preemption is off)
#define VP_OWNER_SHIFT 52
#define VP_LOCKBITS (VP_LOCK | 0x7ffUL << VP_OWNER_SHIFT)
#define VP_MAPPED (1UL << 1)
#define VP_COW (1UL << 2)    // page shared with another address space: copy on write
#define VP_SHARED (1UL << 3) // MAP_SHARED: fork shares the page
#define VP_PROT_SHIFT 4      // VM_READ | VM_WRITE | VM_EXEC
#define VP_NOWRITE (1UL << 7) // mprotect may not add VM_WRITE (UVM_NOWRITE)
#define VP_DEAD (1UL << 8)   // the leaf was taken out of the tree: look the page up again
#define VP_WRITER (1UL << 9) // holds write access to ip (UVM_WRITER; see wrun)
#define VP_FILEPG (1UL << 10) // the page is ip's own, held without a reference
#define VP_PA(w) PTE_ADDR(w)
#define VP_PROT(w) ((int)((w) >> VP_PROT_SHIFT) & 7)

struct vpage {
    uint64_t word;     // VP_* flags, protection and the physical page (0: not touched)
    struct inode *ip;  // backing file (holds a reference), NULL for anonymous memory
    uint64_t pgoff;    // page index in the file
} __cacheline_aligned;

#define LEAF_BITS 6
#define LEAF_PAGES (1UL << LEAF_BITS)
#define NODE_BITS 9
#define NODE_SLOTS (1UL << NODE_BITS)
#define TREE_LEVELS 4 // interior levels: 6 + 4 * 9 bits >= 35 bits of user page number

struct vleaf {
    struct vpage vp[LEAF_PAGES];
};
_Static_assert(sizeof(struct vleaf) == PGSIZE, "a leaf is one page");

struct vmnode {
    void *slot[NODE_SLOTS]; // level 1: leaves; above: nodes
};
#define SLOT_DEAD ((void *)1) // in every slot of a node being taken out (tree_trim)

// Per-CPU part of an address space, allocated by that CPU when it first uses it.
// Other CPUs read pml4 (vp_clear_ptes) and loaded (zap_remote); what the owner
// writes as it works in the space is on another line, and loaded, which the owner
// writes at each switch, on a third.
struct vmcore {
    pte_t *pml4;      // this CPU's page table for the space
    uintptr_t hint __cacheline_aligned; // non-fixed placement searches below here
    int64_t resident; // pages this CPU put in minus those it took out
    struct fmap *fmaps; // files this CPU mapped into the space (see "truncate")
    uintptr_t trim_lo, trim_hi; // leaves munmap left for this CPU's tick (tree_trim)
    bool loaded __cacheline_aligned; // this CPU runs on pml4 now (uvm_switch)
} __cacheline_aligned;

static DEFINE_PERCPU(struct vmspace *, loaded_vs); // what uvm_switch loaded here

#define ZONE_SIZE (16UL << 30) // each CPU's placement zone below USER_MMAP_TOP

static unsigned level_index(uintptr_t va, int level)
{
    return (va >> (PGSHIFT + LEAF_BITS + NODE_BITS * (level - 1))) & (NODE_SLOTS - 1);
}

static size_t level_span(int level) // bytes of address space under one slot at level
{
    return PGSIZE * LEAF_PAGES << (NODE_BITS * (level - 1));
}

static void *ld(void **p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static uint64_t ldw(uint64_t *w) { return __atomic_load_n(w, __ATOMIC_ACQUIRE); }

// The descriptor of va, adding tree nodes if alloc. NULL if absent or out of
// memory; *skip (if not NULL) is then the size of the absent aligned block.
// Callers are in an epoch read section (tree_trim frees nodes after one).
static struct vpage *vpage_find(struct vmspace *vs, uintptr_t va, bool alloc, size_t *skip)
{
again:;
    struct vmnode *n = vs->root;
    for (int level = TREE_LEVELS; level >= 1; level--) {
        void **slot = &n->slot[level_index(va, level)];
        void *child = ld(slot);
        if (child == SLOT_DEAD && alloc) { // n is being taken out: wait until it is
            pause();
            goto again;
        }
        if (!child || child == SLOT_DEAD) {
            if (skip)
                *skip = level_span(level);
            if (!alloc || !(child = page_alloc_zeroed()))
                return NULL;
            void *expected = NULL;
            if (!__atomic_compare_exchange_n(slot, &expected, child, false, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE)) {
                page_free(child);
                if (expected == SLOT_DEAD)
                    goto again;
                child = expected;
            }
        }
        n = child;
    }
    return &((struct vleaf *)n)->vp[(va >> PGSHIFT) & (LEAF_PAGES - 1)];
}

// The next page's descriptor: the neighbour in the same leaf, or a new lookup.
static struct vpage *vpage_next(struct vmspace *vs, struct vpage *prev, uintptr_t va, bool alloc)
{
    if (prev && (va >> PGSHIFT) % LEAF_PAGES != 0)
        return prev + 1;
    return vpage_find(vs, va, alloc, NULL);
}

// The descriptor of *va or of the first present page after it, skipping absent
// tree blocks; NULL once *va reaches end. prev is the descriptor the previous call
// returned (for *va - PGSIZE) or NULL.
static struct vpage *vpage_iter(struct vmspace *vs, struct vpage *prev, uintptr_t *va, uintptr_t end)
{
    while (*va < end) {
        if (prev && (*va >> PGSHIFT) % LEAF_PAGES != 0)
            return prev + 1;
        size_t skip = 0;
        struct vpage *vp = vpage_find(vs, *va, false, &skip);
        if (vp)
            return vp;
        *va = (*va & ~(skip - 1)) + skip;
        prev = NULL;
    }
    return NULL;
}

// Lock one descriptor; returns its word (without the lock bit). Interrupts may be
// off (faults inside usercopy), and the holder may be waiting for our CPU to
// answer a shootdown: keep answering cross-CPU calls while spinning.
static uint64_t my_lock(void) { return VP_LOCK | (uint64_t)cpu_id() << VP_OWNER_SHIFT; }

static uint64_t vp_lock(struct vpage *vp)
{
    for (;;) {
        uint64_t w = ldw(&vp->word);
        if (!(w & VP_LOCK) && __atomic_compare_exchange_n(&vp->word, &w, w | my_lock(), false,
                                                          __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
            return w;
        xcall_poll();
        pause();
    }
}

// The word of a descriptor we hold, without the lock bits.
static uint64_t vp_val(struct vpage *vp) { return vp->word & ~VP_LOCKBITS; }

// Did this CPU lock it? (A range operation's later passes may meet descriptors
// in tree nodes added after its locking pass; those are not its own.)
static bool vp_mine(struct vpage *vp) { return (ldw(&vp->word) & VP_LOCKBITS) == my_lock(); }

static void vp_set(struct vpage *vp, uint64_t w) // still locked
{
    __atomic_store_n(&vp->word, (w & ~VP_LOCKBITS) | my_lock(), __ATOMIC_RELEASE);
}

static void vp_unlock(struct vpage *vp, uint64_t w)
{
    __atomic_store_n(&vp->word, w & ~VP_LOCKBITS, __ATOMIC_RELEASE);
}

// ---- per-CPU page tables -----------------------------------------------------------

static struct vmcore *core_get(struct vmspace *vs, int c)
{
    struct vmcore *vc = ld((void **)&vs->core[c]);
    if (vc)
        return vc;
    vc = kzalloc(sizeof *vc);
    if (!vc)
        return NULL;
    vc->pml4 = page_alloc_zeroed();
    if (!vc->pml4) {
        kfree(vc);
        return NULL;
    }
    memcpy(vc->pml4 + 256, kernel_pml4 + 256, 256 * sizeof(pte_t));
    vc->hint = USER_MMAP_TOP - (uintptr_t)(c % (NCPU_MAX)) * ZONE_SIZE;
    __atomic_store_n(&vs->core[c], vc, __ATOMIC_RELEASE); // only CPU c stores here
    return vc;
}

// PTE for va in a CPU's table, allocating tables if alloc (the owning CPU only:
// others only read the tables and clear leaf entries). NULL if absent / no memory.
static pte_t *pte_find(pte_t *pml4, uintptr_t va, bool alloc)
{
    pte_t *table = pml4;
    for (int l = 3; l > 0; l--) {
        pte_t *e = &table[PX(l, va)];
        pte_t v = __atomic_load_n(e, __ATOMIC_ACQUIRE);
        if (!(v & PTE_P)) {
            if (!alloc)
                return NULL;
            pte_t *next = page_alloc_zeroed();
            if (!next)
                return NULL;
            v = V2P(next) | PTE_P | PTE_W | PTE_U;
            __atomic_store_n(e, v, __ATOMIC_RELEASE);
        }
        table = P2V(PTE_ADDR(v));
    }
    return &table[PX(0, va)];
}

static uint64_t pte_perm(uint64_t w)
{
    int prot = VP_PROT(w);
    uint64_t perm = PTE_P | PTE_U;
    if ((prot & VM_WRITE) && !(w & VP_COW))
        perm |= PTE_W;
    if (!(prot & VM_EXEC))
        perm |= PTE_NX;
    return perm;
}

// Clear the page's entry in every CPU's table for the space and add the CPUs that
// had one present to *tlb (their TLBs may still cache the page). The page is
// locked: the caller's lock CAS came before these loads (see fill_checked). Only
// present entries are written, so CPUs that never touched the page only have
// their tables read. Callers skip descriptors without a physical page: no table
// has an entry for those (a fault fills only a page the descriptor names, and
// whoever takes the page from a descriptor clears the entries first), and
// reading other CPUs' tables for them would share the lines those CPUs write
// when they fault on neighbouring pages (8 entries to a cache line).
static void vp_clear_ptes(struct vmspace *vs, uintptr_t va, cpumask_t *tlb)
{
    int n = READ_ONCE(ncpu);
    for (int c = 0; c < n; c++) {
        struct vmcore *vc = __atomic_load_n(&vs->core[c], __ATOMIC_SEQ_CST);
        pte_t *e = vc ? pte_find(vc->pml4, va, false) : NULL;
        if (e && (__atomic_load_n(e, __ATOMIC_SEQ_CST) & PTE_P)) {
            __atomic_store_n(e, 0, __ATOMIC_SEQ_CST);
            cpumask_set(tlb, c);
        }
    }
}

// ---- page references and deferred release -------------------------------------

static void page_unref(void *pg, bool shared)
{
    // Pages that were never shared have no extra references to look at.
    if (shared && page_owner_add(pg, -1) != 0)
        return;
    if (shared)
        page_owner_set(pg, 0);
    page_free(pg);
}

// References to shared pages that COW breaks dropped, per CPU, not yet taken off
// the pages' owner words: the epoch tick (or a full list) does that, so commuting
// COW breaks of one page in different address spaces write no shared line.
#define COW_DEFER_MAX 31
struct cow_defer {
    uint64_t n;
    void *pg[COW_DEFER_MAX];
};
static DEFINE_PERCPU(struct cow_defer, cow_defer);

static void cow_defer_drain(struct cow_defer *d) // interrupts off
{
    for (uint64_t i = 0; i < d->n; i++)
        page_unref(d->pg[i], true);
    d->n = 0;
}

static void cow_defer_put(void *pg)
{
    push_off(); // the tick drains this list
    struct cow_defer *d = this_cpu_ptr(&cow_defer);
    if (d->n == COW_DEFER_MAX)
        cow_defer_drain(d);
    d->pg[d->n++] = pg;
    pop_off();
}

static void tree_trim(struct vmspace *vs, uintptr_t start, uintptr_t end);

static void cow_defer_settle(void)
{
    push_off();
    struct cow_defer *d = this_cpu_ptr(&cow_defer);
    if (d->n)
        cow_defer_drain(d);
    pop_off();
}

void uvm_tick(void)
{
    cow_defer_settle();
    // The loaded space cannot be freed before we switch away from it.
    struct vmspace *vs = this_cpu_read(loaded_vs);
    struct vmcore *vc = vs ? vs->core[cpu_id()] : NULL;
    if (vc && vc->trim_hi > vc->trim_lo) {
        uintptr_t lo = vc->trim_lo, hi = vc->trim_hi;
        vc->trim_lo = vc->trim_hi = 0;
        epoch_enter();
        tree_trim(vs, lo, hi);
        epoch_exit();
    }
}

// Dropped descriptors of a file, in runs of consecutive descriptors of one file:
// their inode references (a run keeps its first one and gives it back last) and
// the write access of the VP_WRITER ones, one writer per page, given back in one
// refcache update (fs/writecount.c) however many pages the run has.
struct wrun {
    struct inode *ip; // NULL: no run
    int64_t n;        // write access held by the run's descriptors
};

static void wrun_put(struct wrun *r)
{
    if (r->ip) {
        fs_put_write_n(r->ip, r->n);
        fs_iput(r->ip);
        r->ip = NULL;
    }
}

// A dropped descriptor of ip: its inode reference, and its write access if writer.
static void wrun_drop(struct wrun *r, struct inode *ip, bool writer)
{
    if (r->ip == ip) {
        r->n += writer;
        fs_iput(ip); // the run holds one
        return;
    }
    wrun_put(r);
    r->ip = ip;
    r->n = writer;
}

// Pages whose references are dropped once the TLBs that may reach them are
// flushed. A batch is one page of entries; the low bit of an entry says the page
// may be shared. An entry with bit 1 set is a run of write access (an inode
// pointer; the next entry is its count), given back with the pages.
#define BATCH_MAX ((PGSIZE - 48) / sizeof(uintptr_t))
struct batch {
    struct epoch_cb cb;
    struct batch *next;
    uint32_t n;
    uintptr_t pg[BATCH_MAX];
};
_Static_assert(sizeof(struct batch) <= PGSIZE, "a batch is one page");

// What a range change leaves to do once the descriptors are updated.
struct zap {
    cpumask_t tlb;      // CPUs whose TLB may cache a dropped translation
    uintptr_t lo, hi;   // the range to flush
    struct batch *pages;
    bool nomem;         // a batch could not be allocated: flush synchronously
    struct wrun wrun;   // inode references and write access of dropped descriptors
};

static void zap_init(struct zap *z)
{
    memset(z, 0, sizeof *z);
    z->lo = UINTPTR_MAX;
}

static void batch_release(struct batch *b)
{
    while (b) {
        struct batch *next = b->next;
        for (uint32_t i = 0; i < b->n; i++) {
            uintptr_t e = b->pg[i];
            if (e & 2) { // a run of dropped file descriptors (zap_file)
                struct wrun r = {(struct inode *)(e & ~2UL), (int64_t)b->pg[++i]};
                wrun_put(&r);
            } else {
                page_unref((void *)(e & ~1UL), e & 1);
            }
        }
        page_free(b);
        b = next;
    }
}

static void zap_range(struct zap *z, uintptr_t va)
{
    z->lo = MIN(z->lo, va);
    z->hi = MAX(z->hi, va + PGSIZE);
}

// Room for k more entries in z's batch; false if no batch could be had.
static bool zap_room(struct zap *z, uint32_t k)
{
    if (!z->pages || z->pages->n + k > BATCH_MAX) {
        struct batch *b = page_alloc();
        if (!b) {
            z->nomem = true;
            return false;
        }
        b->n = 0;
        b->next = z->pages;
        z->pages = b;
    }
    return true;
}

// Hand the page's reference to z. Returns false if no batch could be had; the
// caller then flushes what it has and drops the reference itself.
static bool zap_page(struct zap *z, void *pg, bool shared)
{
    if (!zap_room(z, 1))
        return false;
    z->pages->pg[z->pages->n++] = (uintptr_t)pg | shared;
    return true;
}

// Flush the TLBs in z->tlb that have vs loaded (the others flushed when they
// switched away, and their tables no longer map the pages). Range operations
// flush before they unlock: once a page is unlocked, the next operation on it
// finds no entries and so no CPU to flush, and must not be able to free or
// share the page while a TLB still reaches it.
// The CPUs of tlb other than this one that have vs loaded now (the others flushed
// when they switched away). Each CPU says so in its own part of vs (a line it
// writes only at a switch), and only the CPUs that had an entry are asked: a
// range operation shares no line with threads of the space being scheduled on
// other CPUs, and none at all when no other CPU touched its pages.
static void zap_remote(struct vmspace *vs, const cpumask_t *tlb, cpumask_t *m)
{
    // The cleared entries must be visible before we read who has vs loaded: a
    // CPU that loads it later walks the cleared tables.
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int me = cpu_id();
    cpumask_clear(m);
    for_each_cpu(c, tlb) // each had an entry, so it has its part of vs
        if (c != me && __atomic_load_n(&vs->core[c]->loaded, __ATOMIC_RELAXED))
            cpumask_set(m, c);
}

static void zap_flush(struct vmspace *vs, struct zap *z)
{
    if (z->hi > z->lo) {
        cpumask_t m;
        zap_remote(vs, &z->tlb, &m);
        if (cpumask_test(&z->tlb, cpu_id())) {
            for (uintptr_t a = z->lo; a < z->hi && z->hi - z->lo <= 32 * PGSIZE; a += PGSIZE)
                invlpg(a);
            if (z->hi - z->lo > 32 * PGSIZE)
                flush_tlb_local();
        }
        if (cpumask_weight(&m)) {
            tlb_shootdown(&m, z->lo, z->hi - z->lo);
            kstat_shootdown();
        }
    }
    z->lo = UINTPTR_MAX;
    z->hi = 0;
    cpumask_clear(&z->tlb);
}

// Flush, then drop the pages (and the inode references and write access).
static void zap_finish_sync(struct vmspace *vs, struct zap *z)
{
    zap_flush(vs, z);
    wrun_put(&z->wrun);
    batch_release(z->pages);
    z->pages = NULL;
}

// Hand z's run of file descriptors to its batch, to go with the pages (or,
// without a batch, flush and give it back now).
static void zap_files_batch(struct vmspace *vs, struct zap *z)
{
    if (!z->wrun.ip)
        return;
    if (!zap_room(z, 2)) {
        zap_finish_sync(vs, z);
        return;
    }
    // (Inodes are cache-line aligned: bit 1 of the pointer is free.)
    z->pages->pg[z->pages->n++] = (uintptr_t)z->wrun.ip | 2;
    z->pages->pg[z->pages->n++] = (uintptr_t)z->wrun.n;
    z->wrun.ip = NULL;
}

// A dropped descriptor of ip: its inode reference (which keeps the page if it is
// the file's) and its write access go back once no TLB reaches the pages
// dropped with it.
static void zap_file(struct vmspace *vs, struct zap *z, struct inode *ip, bool writer)
{
    if (z->wrun.ip != ip)
        zap_files_batch(vs, z);
    wrun_drop(&z->wrun, ip, writer);
}

// Drop a page while the caller holds locks: flush first if it cannot be batched.
static void zap_or_flush(struct vmspace *vs, struct zap *z, void *pg, bool shared)
{
    if (zap_page(z, pg, shared))
        return;
    zap_finish_sync(vs, z);
    page_unref(pg, shared);
}

// ---- which address spaces map a file (for truncate) ------------------------------
//
// A truncate that shrinks a file must take the pages past the new end out of
// every address space that maps them. Each uvm_map_file records (space, file,
// address hull) once per CPU and file, on that CPU's own list (under that CPU's
// lock, which only a truncate or the freeing of a space ever takes elsewhere):
// mmaps on different CPUs, of any files, share no line. Records live until the
// space is freed and hold a file reference (so every file a descriptor of the
// space ever named stays, and a fault may look at it without the descriptor's
// lock); truncate looks at every CPU's list and walks only the hulls of the
// file's records that may hold pages.
//
// Which records may hold pages: a record starts empty (mmap maps no file page
// until a fault asks for it), and vp_populate marks the record of its own CPU
// (making one if that CPU has none for the file, or widening it to cover the
// page) before it asks the file for the page: once per space, CPU and file,
// the later faults on that CPU only read the mark. A truncate skips empty
// records, so it reads no descriptor of a mapping that never held a page of
// the file: munmap, mprotect and faults of such mappings (and of the pages
// around them) commute with it and share no line with it. Against a racing
// fault: the fault stores the mark and then (full barrier) loads the file's
// size; the truncate stores the size and then (full barrier) reads the marks;
// so either the truncate sees the mark and walks the hull, or the fault sees
// the new size.
//
// Whether to look at all: each CPU also counts its records by a hash of the
// file (nfile), and a truncate reads the file's counter on every CPU. Only
// mmaps that make a record write a counter, their own CPU's; page faults,
// reads, writes and stats of the file write nothing for truncate's sake (a
// flag in the inode, set by the first fault, put that write on the file's size
// line). A truncate shares a counter's line only with mmaps, on any CPU, of
// the file itself or of files whose hash falls on that line (1 in 64).
//
// Fork (vmspace_fork) copies descriptors that name files into a space the
// truncate may not have found: a truncate of a file that has records also
// says, on its own CPU's line, that it is under way (truncating), and walks the
// spaces a fork is still filling after all the others. Why that suffices is
// told at forkstate.
#define FMAP_HASH_BITS 10
struct fmap {
    struct vmspace *vs;
    struct inode *ip;
    uintptr_t lo, hi;   // every mapping of ip this record covers lies in [lo, hi)
    bool pages;         // a page of ip may have been put in [lo, hi) (see above)
    bool forking;       // of a child a fork is still copying into
    struct fmap *lnext; // the CPU's list of all records
    struct fmap *cnext; // the space's records made on this CPU (vmcore.fmaps)
};

struct fmap_list {
    struct spinlock lock;
    struct fmap *head;
    uint32_t nfile[1U << FMAP_HASH_BITS] __cacheline_aligned; // records by file hash
    uint32_t truncating[1U << FMAP_HASH_BITS] __cacheline_aligned; // truncates under way here
};
static DEFINE_PERCPU(struct fmap_list, fmap_list) = {.lock = SPINLOCK_INIT("fmap")};

static unsigned fmap_hash(const struct inode *ip)
{
    return (unsigned)((((uintptr_t)ip >> 8) * 0x9E3779B97F4A7C15ULL) >> (64 - FMAP_HASH_BITS));
}

// Record that vs maps ip in [lo, hi), on vc (CPU c's part of vs: the caller's
// own, or the one a fork fills the child through), and with `pages` that a page
// of ip is about to be put there; forking for a fork's child. Writes nothing
// when the record already says so.
static int fmap_note(struct vmspace *vs, struct vmcore *vc, int c, struct inode *ip,
                     uintptr_t lo, uintptr_t hi, bool pages, bool forking)
{
    struct fmap_list *l = per_cpu_ptr(&fmap_list, c);
    for (struct fmap *f = vc->fmaps; f; f = f->cnext) {
        if (f->ip == ip) {
            if (f->lo <= lo && hi <= f->hi && (f->pages || !pages))
                return 0;
            spin_lock(&l->lock);
            f->lo = MIN(f->lo, lo);
            f->hi = MAX(f->hi, hi);
            f->pages |= pages;
            spin_unlock(&l->lock);
            // The mark before the fault's size load (see above); the locked
            // add below serves a new record.
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            return 0;
        }
    }
    struct fmap *f = kzalloc(sizeof *f);
    if (!f)
        return -ENOMEM;
    fs_iget(ip);
    *f = (struct fmap){.vs = vs, .ip = ip, .lo = lo, .hi = hi, .pages = pages,
                       .forking = forking, .cnext = vc->fmaps};
    spin_lock(&l->lock);
    f->lnext = l->head;
    l->head = f;
    // A full barrier (locked add) before any descriptor names the file: a
    // truncate that does not see the count has stored the new size before its
    // look, so every fault through this mapping sees that size (fmap_collect).
    __atomic_fetch_add(&l->nfile[fmap_hash(ip)], 1, __ATOMIC_SEQ_CST);
    spin_unlock(&l->lock);
    __atomic_store_n(&vc->fmaps, f, __ATOMIC_RELEASE); // fork reads other CPUs' lists
    return 0;
}

// Drop the records CPU c made for its part vc of a space being freed.
static void fmap_forget_all(struct vmcore *vc, int c)
{
    struct fmap_list *l = per_cpu_ptr(&fmap_list, c);
    for (struct fmap *f = vc->fmaps, *next; f; f = next) {
        next = f->cnext;
        spin_lock(&l->lock);
        struct fmap **pp = &l->head;
        while (*pp != f)
            pp = &(*pp)->lnext;
        *pp = f->lnext;
        __atomic_fetch_sub(&l->nfile[fmap_hash(f->ip)], 1, __ATOMIC_RELAXED);
        spin_unlock(&l->lock);
        fs_iput(f->ip);
        kfree(f);
    }
    vc->fmaps = NULL;
}

// ---- address spaces --------------------------------------------------------------

void uvm_init(void)
{
    // Later kernel mappings (stacks, MMIO) go into tables below these entries and
    // so appear in every address space, which copies them once at creation.
    for (int i = 256; i < 512; i++) {
        if (kernel_pml4[i] & PTE_P)
            continue;
        pte_t *t = page_alloc_zeroed();
        if (!t)
            panic("uvm: no memory for the kernel page tables");
        kernel_pml4[i] = V2P(t) | PTE_P | PTE_W;
    }
}

struct vmspace *vmspace_new(void)
{
    struct vmspace *vs = kzalloc(sizeof *vs);
    if (!vs)
        return NULL;
    vs->root = page_alloc_zeroed();
    if (!vs->root) {
        kfree(vs);
        return NULL;
    }
    spin_init(&vs->brk_lock, "brk");
    vs->refs = 1;
    return vs;
}

void vmspace_hold(struct vmspace *vs) { __atomic_add_fetch(&vs->refs, 1, __ATOMIC_RELAXED); }

static void vmspace_free(struct vmspace *vs);

// A truncate that finds a space's record holds it while it works in it
// (fmap_collect): whoever lets go last frees it.
void vmspace_put(struct vmspace *vs)
{
    if (__atomic_sub_fetch(&vs->refs, 1, __ATOMIC_ACQ_REL) == 0)
        vmspace_free(vs);
}

static void free_table(pte_t *t, int level)
{
    if (level > 0)
        for (int i = 0; i < 512; i++)
            if (t[i] & PTE_P)
                free_table(P2V(PTE_ADDR(t[i])), level - 1);
    page_free(t);
}

static void free_tree(void *node, int level, struct wrun *wr)
{
    if (level == 0) {
        struct vleaf *l = node;
        for (size_t i = 0; i < LEAF_PAGES; i++) {
            uint64_t w = l->vp[i].word;
            if (VP_PA(w) && !(w & VP_FILEPG))
                page_unref(P2V(VP_PA(w)), (w & (VP_COW | VP_SHARED)) || l->vp[i].ip);
            if (l->vp[i].ip) // after its page: the inode may hold the last reference
                wrun_drop(wr, l->vp[i].ip, w & VP_WRITER);
        }
    } else {
        struct vmnode *n = node;
        for (size_t i = 0; i < NODE_SLOTS; i++)
            if (n->slot[i] && n->slot[i] != SLOT_DEAD)
                free_tree(n->slot[i], level - 1, wr);
    }
    page_free(node);
}

static void vmspace_free(struct vmspace *vs)
{
    // The pages this CPU's COW breaks still hold may be ours alone after this:
    // settle them now, so that a parent writing after its child exits (on this
    // CPU) takes its pages back instead of copying them.
    cow_defer_settle();
    for (int c = 0; c < NCPU_MAX; c++) {
        struct vmcore *vc = vs->core[c];
        if (!vc)
            continue;
        for (int i = 0; i < 256; i++)
            if (vc->pml4[i] & PTE_P)
                free_table(P2V(PTE_ADDR(vc->pml4[i])), 2);
        page_free(vc->pml4);
        fmap_forget_all(vc, c);
        kfree(vc);
    }
    struct wrun wr = {NULL, 0};
    free_tree(vs->root, TREE_LEVELS, &wr);
    wrun_put(&wr);
    if (vs->image) { // the executable may be written again (ETXTBSY)
        fs_allow_write(vs->image);
        fs_iput(vs->image);
    }
    kfree(vs);
}

void uvm_switch(struct vmspace *prev, struct vmspace *next)
{
    push_off(); // the tick reads loaded_vs
    int me = cpu_id();
    pte_t *pml4 = kernel_pml4;
    struct vmcore *vc = next ? core_get(next, me) : NULL;
    if (vc) { // else the first fault tries again (uvm_fault)
        // Said before the CR3 load: a range operation that cleared entries and
        // then finds us not loaded knows that our walks will see them cleared.
        __atomic_store_n(&vc->loaded, true, __ATOMIC_SEQ_CST);
        pml4 = vc->pml4;
    }
    tlb_switch_flush(); // the CR3 load flushes what async unmaps asked us to
    write_cr3(V2P(pml4));
    this_cpu_write(loaded_vs, next);
    struct vmcore *pvc = prev ? prev->core[me] : NULL;
    if (pvc) // after the CR3 load, which flushed prev's translations
        __atomic_store_n(&pvc->loaded, false, __ATOMIC_SEQ_CST);
    pop_off();
}

size_t uvm_resident(struct vmspace *vs)
{
    int64_t n = READ_ONCE(vs->truncated);
    for (int c = 0; c < NCPU_MAX; c++)
        if (vs->core[c])
            n += READ_ONCE(vs->core[c]->resident);
    return n;
}

bool uvm_mapped(struct vmspace *vs, uintptr_t va, int *prot)
{
    if (va >= USER_END)
        return false;
    epoch_enter();
    struct vpage *vp = vpage_find(vs, va, false, NULL);
    uint64_t w = vp ? ldw(&vp->word) : 0;
    epoch_exit();
    if ((w & VP_MAPPED) && prot)
        *prot = VP_PROT(w);
    return w & VP_MAPPED;
}

uintptr_t uvm_page_pa(struct vmspace *vs, uintptr_t va)
{
    epoch_enter();
    struct vpage *vp = va < USER_END ? vpage_find(vs, va, false, NULL) : NULL;
    uintptr_t pa = vp ? VP_PA(ldw(&vp->word)) : 0;
    epoch_exit();
    return pa;
}

// ---- range locking ----------------------------------------------------------------

// Lock the descriptors of [start, end) in ascending order, adding tree nodes if
// alloc. Without alloc, pages under absent nodes are skipped (nothing is mapped
// there). -ENOMEM (nothing left locked) if nodes could not be added.
static int range_lock(struct vmspace *vs, uintptr_t start, uintptr_t end, bool alloc)
{
    struct vpage *vp = NULL;
    if (!alloc) {
        for (uintptr_t va = start; (vp = vpage_iter(vs, vp, &va, end)); va += PGSIZE) {
            if (vp_lock(vp) & VP_DEAD) { // its leaf left the tree: look again
                vp_unlock(vp, VP_DEAD);
                vp = NULL;
                va -= PGSIZE;
            }
        }
        return 0;
    }
    for (uintptr_t va = start; va < end; va += PGSIZE) {
        vp = vpage_next(vs, vp, va, true);
        if (vp) {
            if (vp_lock(vp) & VP_DEAD) {
                vp_unlock(vp, VP_DEAD);
                vp = NULL;
                va -= PGSIZE;
            }
        } else {
            for (uintptr_t a = start; a < va; a += PGSIZE) {
                struct vpage *v = vpage_find(vs, a, false, NULL);
                vp_unlock(v, v->word);
            }
            return -ENOMEM;
        }
    }
    return 0;
}

// Does [start, end) look empty: nothing mapped, nothing locked? (One lock-free
// pass.) A range operation that finds so has nothing to do and may return
// without writing a descriptor (munmap of a hole then commutes with faults on
// it). A range operation that maps pages locks them all before it maps any, so
// the pass cannot miss half of one; it can only be ordered differently against
// other range operations on the same pages running at the same time.
static bool range_idle(struct vmspace *vs, uintptr_t start, uintptr_t end)
{
    bool idle = true;
    epoch_enter();
    struct vpage *vp = NULL;
    for (uintptr_t va = start; idle && (vp = vpage_iter(vs, vp, &va, end)); va += PGSIZE)
        idle = !(ldw(&vp->word) & (VP_MAPPED | VP_LOCK));
    epoch_exit();
    return idle;
}

static void range_unlock(struct vmspace *vs, uintptr_t start, uintptr_t end)
{
    struct vpage *vp = NULL;
    for (uintptr_t va = start; (vp = vpage_iter(vs, vp, &va, end)); va += PGSIZE)
        if (vp_mine(vp))
            vp_unlock(vp, vp->word);
}

static struct vmcore *my_core(struct vmspace *vs) { return core_get(vs, cpu_id()); }

// Remove the page's mapping or just its contents; locked. The page table entries
// go now, the page's reference to z.
static void vp_drop(struct vmspace *vs, int64_t *resident, struct vpage *vp, uintptr_t va,
                    struct zap *z, bool keep_mapping)
{
    uint64_t w = vp_val(vp);
    if (VP_PA(w)) {
        vp_clear_ptes(vs, va, &z->tlb);
        zap_range(z, va);
        (*resident)--;
        vp_set(vp, keep_mapping ? (w & ~(PTE_ADDR(~0UL) | VP_COW | VP_FILEPG)) : 0);
        if (!(w & VP_FILEPG)) // the file's own page has no reference to drop
            zap_or_flush(vs, z, P2V(VP_PA(w)), (w & (VP_COW | VP_SHARED)) || vp->ip);
    } else {
        vp_set(vp, keep_mapping ? w : 0);
    }
    if (!keep_mapping && vp->ip) {
        zap_file(vs, z, vp->ip, w & VP_WRITER);
        vp->ip = NULL;
    }
}

// Unmap the locked range [start, end).
static void unmap_locked(struct vmspace *vs, struct vmcore *vc, uintptr_t start, uintptr_t end,
                         struct zap *z)
{
    struct vpage *vp = NULL;
    for (uintptr_t va = start; (vp = vpage_iter(vs, vp, &va, end)); va += PGSIZE)
        if (vp_mine(vp) && (vp->word & VP_MAPPED))
            vp_drop(vs, &vc->resident, vp, va, z, false);
}

// ---- giving back empty tree nodes -------------------------------------------------
//
// munmap takes the leaves it emptied out of the tree, and the nodes that leaves
// that way, so that sparse use does not keep tree pages forever. Everything that
// walks the tree does so in an epoch read section, and the pages are freed a
// grace period after they left it. A leaf leaves only with all its descriptors
// locked (taken with trylock: a leaf somebody else is working in stays) and
// unmapped; they are then marked VP_DEAD, so that a range operation that finds
// one locks nothing there and looks the page up again from the root (where a
// new leaf may have been added meanwhile). A node leaves once each of its empty
// slots holds SLOT_DEAD (a compare-and-swap each, so no child can be added in
// between); an insert that meets SLOT_DEAD looks again from the root. Only the
// CPU that marked a leaf or node dead clears the parent's slot, so that slot
// changes hands only through one compare-and-swap from NULL and one store back.

struct tree_free {
    struct epoch_cb cb;
    void *page;
};

static void tree_free_cb(struct epoch_cb *cb)
{
    struct tree_free *tf = container_of(cb, struct tree_free, cb);
    page_free(tf->page);
    kfree(tf);
}

static bool vp_trylock_empty(struct vpage *vp)
{
    uint64_t w = 0;
    return vp->ip == NULL && __atomic_compare_exchange_n(&vp->word, &w, my_lock(), false,
                                                         __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

// Take the leaf at path[0] out of path[1]'s slot idx if it is empty and idle.
static bool leaf_remove(struct vmnode *parent, unsigned idx, struct vleaf *l)
{
    for (size_t i = 0; i < LEAF_PAGES; i++)
        if (ldw(&l->vp[i].word) != 0)
            return false;
    struct tree_free *tf = kmalloc(sizeof *tf);
    if (!tf)
        return false;
    size_t locked = 0;
    while (locked < LEAF_PAGES && vp_trylock_empty(&l->vp[locked]))
        locked++;
    if (locked < LEAF_PAGES) {
        for (size_t i = 0; i < locked; i++)
            vp_unlock(&l->vp[i], 0);
        kfree(tf);
        return false;
    }
    __atomic_store_n(&parent->slot[idx], NULL, __ATOMIC_SEQ_CST);
    for (size_t i = 0; i < LEAF_PAGES; i++)
        __atomic_store_n(&l->vp[i].word, VP_DEAD, __ATOMIC_RELEASE);
    tf->page = l;
    epoch_defer(&tf->cb, tree_free_cb);
    return true;
}

// Take node n out of parent's slot idx if all its slots are empty.
static bool node_remove(struct vmnode *parent, unsigned idx, struct vmnode *n)
{
    for (size_t i = 0; i < NODE_SLOTS; i++)
        if (ld(&n->slot[i]))
            return false;
    struct tree_free *tf = kmalloc(sizeof *tf);
    if (!tf)
        return false;
    size_t marked = 0;
    for (; marked < NODE_SLOTS; marked++) {
        void *expected = NULL;
        if (!__atomic_compare_exchange_n(&n->slot[marked], &expected, SLOT_DEAD, false,
                                         __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
            break;
    }
    if (marked < NODE_SLOTS) { // a child arrived (or another remover is at work)
        for (size_t i = 0; i < marked; i++)
            __atomic_store_n(&n->slot[i], NULL, __ATOMIC_RELEASE);
        kfree(tf);
        return false;
    }
    __atomic_store_n(&parent->slot[idx], NULL, __ATOMIC_SEQ_CST);
    tf->page = n;
    epoch_defer(&tf->cb, tree_free_cb);
    return true;
}

// Give back the leaves of [start, end) that are empty, and the nodes above them
// that become empty (never the root). In an epoch read section, no locks held.
static void tree_trim(struct vmspace *vs, uintptr_t start, uintptr_t end)
{
    size_t leaf_span = level_span(1);
    for (uintptr_t va = start & ~(leaf_span - 1); va < end; va += leaf_span) {
        struct vmnode *path[TREE_LEVELS + 1];
        path[TREE_LEVELS] = vs->root;
        int level = TREE_LEVELS;
        for (; level >= 1; level--) {
            void *child = ld(&path[level]->slot[level_index(va, level)]);
            if (!child || child == SLOT_DEAD)
                break;
            path[level - 1] = child;
        }
        if (level >= 1) { // no leaf here: skip the whole absent block
            uintptr_t next = (va & ~(level_span(level) - 1)) + level_span(level);
            va = next - leaf_span;
            if (next == 0)
                break;
            continue;
        }
        if (!leaf_remove(path[1], level_index(va, 1), (struct vleaf *)path[0]))
            continue;
        for (level = 1; level < TREE_LEVELS; level++)
            if (!node_remove(path[level + 1], level_index(va, level + 1), path[level]))
                break;
    }
}

// After munmap of [start, end): the leaves it covered whole go now (no operation
// that commutes with this munmap works in them). Emptying a leaf it covers only
// in part needs a look at the neighbours' descriptors, which commuting calls on
// those pages write: that waits for this CPU's next tick (uvm_tick), outside any
// system call, if the space is still loaded then (else for the space's free).
static void trim_after_unmap(struct vmspace *vs, struct vmcore *vc, uintptr_t start, uintptr_t end)
{
    size_t span = level_span(1);
    uintptr_t lo = (start + span - 1) & ~(span - 1), hi = end & ~(span - 1);
    if (lo < hi)
        tree_trim(vs, lo, hi);
    if (lo < hi && lo == start && hi == end)
        return;
    push_off();
    vc->trim_lo = vc->trim_hi > vc->trim_lo ? MIN(vc->trim_lo, start) : start;
    vc->trim_hi = MAX(vc->trim_hi, end);
    pop_off();
}

// ---- placement ---------------------------------------------------------------------

// Highest start in [lo, hi) of len bytes that look free (a lock-free look; the
// caller verifies under the locks). 0 if none.
static uintptr_t find_free(struct vmspace *vs, uintptr_t lo, uintptr_t hi, size_t len)
{
    uintptr_t end = hi, va = hi;
    while (va > lo && va - lo >= PGSIZE) {
        if (end - va >= len)
            return end - len;
        size_t skip = 0;
        struct vpage *vp = vpage_find(vs, va - PGSIZE, false, &skip);
        if (!vp) {
            // An absent node: everything in its aligned block is free.
            uintptr_t base = (va - PGSIZE) & ~(skip - 1);
            va = MAX(base, lo);
            if (end - va >= len)
                return end - len;
            continue;
        }
        va -= PGSIZE;
        if (ldw(&vp->word) & (VP_MAPPED | VP_LOCK))
            end = va;
    }
    return end - va >= len ? end - len : 0;
}

// Lock [start, start+len) if nothing there is mapped: 0, -EEXIST or -ENOMEM.
static int lock_if_free(struct vmspace *vs, uintptr_t start, size_t len)
{
    int err = range_lock(vs, start, start + len, true);
    if (err)
        return err;
    struct vpage *vp = NULL;
    for (uintptr_t va = start; va < start + len; va += PGSIZE) {
        vp = vpage_next(vs, vp, va, false);
        if (vp->word & VP_MAPPED) {
            range_unlock(vs, start, start + len);
            return -EEXIST;
        }
    }
    return 0;
}

static bool user_range_ok(uintptr_t addr, size_t len)
{
    return addr >= USER_MIN && len <= USER_TOP && addr <= USER_TOP - len;
}

// Choose and lock a free range of len bytes: the caller's hint if free, else below
// this CPU's own hint in its zone, else anywhere. Returns the address or -errno.
static long place_and_lock(struct vmspace *vs, struct vmcore *vc, uintptr_t want, size_t len)
{
    if (want && user_range_ok(want, len)) {
        int err = lock_if_free(vs, want, len);
        if (err != -EEXIST)
            return err ? err : (long)want;
    }
    int me = cpu_id();
    uintptr_t ztop = USER_MMAP_TOP - (uintptr_t)me * ZONE_SIZE, zbot = ztop - ZONE_SIZE;
    struct { uintptr_t lo, hi; } tries[3] = {
        {zbot, MIN(vc->hint, ztop)}, {zbot, ztop}, {USER_MIN, USER_MMAP_TOP}};
    for (int t = 0; t < 3; t++) {
        uintptr_t hi = tries[t].hi;
        for (;;) {
            uintptr_t a = find_free(vs, tries[t].lo, hi, len);
            if (!a)
                break;
            int err = lock_if_free(vs, a, len);
            if (err == 0) {
                vc->hint = a;
                return a;
            }
            if (err != -EEXIST)
                return err;
            hi = a + len - PGSIZE; // someone mapped part of it meanwhile: look lower
        }
    }
    return -ENOMEM;
}

// ---- mmap, munmap, mprotect, madvise ----------------------------------------------

// Give a locked, mapped descriptor that has no page one: a zeroed page, or the
// file's page (copy-on-write for a private mapping). -ENOMEM, or -EFAULT past
// the end of the file.
static int vp_populate(struct vmspace *vs, struct vmcore *vc, struct vpage *vp, uintptr_t va)
{
    if (VP_PA(vp->word))
        return 0;
    void *pg = NULL;
    uint64_t flags = 0;
    if (vp->ip) {
        // Marked before the file's size is looked at (truncate, fmap_note).
        int err = fmap_note(vs, vc, cpu_id(), vp->ip, va, va + PGSIZE, true, false);
        if (!err)
            err = fs_map_page(vp->ip, vp->pgoff, &pg);
        if (err)
            return err;
        flags = VP_FILEPG | ((vp->word & VP_SHARED) ? 0 : VP_COW);
    } else if (!(pg = page_alloc_zeroed())) {
        return -ENOMEM;
    }
    vc->resident++;
    vp_set(vp, vp->word | flags | V2P(pg));
    return 0;
}

long uvm_map(struct vmspace *vs, uintptr_t addr, size_t len, int prot, int flags)
{
    return uvm_map_file(vs, addr, len, prot, flags, NULL, 0);
}

long uvm_map_file(struct vmspace *vs, uintptr_t addr, size_t len, int prot, int flags,
                  struct inode *ip, uint64_t pgoff)
{
    bool fixed = flags & (UVM_FIXED | UVM_NOREPLACE);
    if (len == 0 || (fixed && addr % PGSIZE) || (prot & ~(VM_READ | VM_WRITE | VM_EXEC)))
        return -EINVAL;
    len = PGROUNDUP(len);
    if (len == 0 || len > USER_TOP)
        return -ENOMEM;
    if (fixed && !user_range_ok(addr, len))
        return -EINVAL;
    epoch_enter(); // tree nodes stay allocated; descriptor locks are held only by running threads
    struct vmcore *vc = my_core(vs);
    long ret = vc ? 0 : -ENOMEM;
    struct zap z;
    zap_init(&z);
    if (ret == 0 && (flags & UVM_NOREPLACE))
        ret = lock_if_free(vs, addr, len);
    else if (ret == 0 && fixed)
        ret = range_lock(vs, addr, addr + len, true);
    else if (ret == 0 && (ret = place_and_lock(vs, vc, PGROUNDDOWN(addr), len)) > 0)
        addr = ret;
    if (ret < 0) {
        epoch_exit();
        return ret;
    }
    // Recorded before any descriptor names the file (truncate, vmspace_fork).
    if (ip && fmap_note(vs, vc, cpu_id(), ip, addr, addr + len, false, false) < 0) {
        range_unlock(vs, addr, addr + len);
        epoch_exit();
        return -ENOMEM;
    }
    if (flags & UVM_FIXED)
        unmap_locked(vs, vc, addr, addr + len, &z);
    uint64_t w = VP_MAPPED | (uint64_t)prot << VP_PROT_SHIFT | ((flags & UVM_SHARED) ? VP_SHARED : 0) |
                 ((flags & UVM_NOWRITE) ? VP_NOWRITE : 0);
    if (ip && (flags & UVM_WRITER)) { // the caller's write access covers the pages' (ETXTBSY)
        w |= VP_WRITER;
        fs_get_write_again(ip, len / PGSIZE);
    }
    // Shared anonymous memory must exist before a fork can share it; a file is
    // its own shared object.
    bool must = (flags & UVM_SHARED) && !ip, populate = must || (flags & UVM_POPULATE);
    struct vpage *vp = NULL;
    for (uintptr_t va = addr; va < addr + len; va += PGSIZE) {
        vp = vpage_next(vs, vp, va, false);
        vp_set(vp, w);
        if (ip) {
            fs_iget(ip);
            vp->ip = ip;
            vp->pgoff = pgoff + (va - addr) / PGSIZE;
        }
        if (populate && vp_populate(vs, vc, vp, va) == -ENOMEM && must)
            ret = -ENOMEM;
    }
    if (ret < 0)
        unmap_locked(vs, vc, addr, addr + len, &z);
    zap_flush(vs, &z);
    range_unlock(vs, addr, addr + len);
    zap_finish_sync(vs, &z);
    epoch_exit();
    return ret < 0 ? ret : (long)addr;
}

static int check_range(uintptr_t addr, size_t *len)
{
    if (addr % PGSIZE)
        return -EINVAL;
    *len = PGROUNDUP(*len);
    if (addr >= USER_END || *len > USER_END - addr)
        return -EINVAL;
    return 0;
}

int uvm_unmap(struct vmspace *vs, uintptr_t addr, size_t len)
{
    if (len == 0 || check_range(addr, &len))
        return -EINVAL;
    if (range_idle(vs, addr, addr + len))
        return 0;
    epoch_enter();
    struct vmcore *vc = my_core(vs);
    if (!vc) {
        epoch_exit();
        return -ENOMEM;
    }
    struct zap z;
    zap_init(&z);
    range_lock(vs, addr, addr + len, false);
    unmap_locked(vs, vc, addr, addr + len, &z);
    zap_flush(vs, &z);
    range_unlock(vs, addr, addr + len);
    zap_finish_sync(vs, &z);
    trim_after_unmap(vs, vc, addr, addr + len);
    epoch_exit();
    return 0;
}

// A grace period after an async unmap every CPU has passed an epoch tick, and
// each flushes its TLB there if the unmap asked it to (tlb_flush_later) before it
// acknowledges the epoch: no translation can reach the pages any more.
static void async_release(struct epoch_cb *cb)
{
    batch_release(container_of(cb, struct batch, cb));
}

int uvm_unmap_async(struct vmspace *vs, uintptr_t addr, size_t len)
{
    if (len == 0 || check_range(addr, &len))
        return -EINVAL;
    if (range_idle(vs, addr, addr + len))
        return 0;
    epoch_enter();
    struct vmcore *vc = my_core(vs);
    if (!vc) {
        epoch_exit();
        return -ENOMEM;
    }
    struct zap z;
    zap_init(&z);
    range_lock(vs, addr, addr + len, false);
    unmap_locked(vs, vc, addr, addr + len, &z);
    zap_files_batch(vs, &z); // inode references and write access go with the pages
    if (z.nomem) {
        zap_finish_sync(vs, &z); // out of memory for batches: fall back to waiting
        range_unlock(vs, addr, addr + len);
        epoch_exit();
        return 0;
    }
    range_unlock(vs, addr, addr + len);
    bool remote = false;
    if (z.hi > z.lo) {
        cpumask_t m;
        zap_remote(vs, &z.tlb, &m);
        if (cpumask_test(&z.tlb, cpu_id())) {
            for (uintptr_t a = z.lo; a < z.hi; a += PGSIZE)
                invlpg(a);
        }
        remote = cpumask_weight(&m) != 0;
        tlb_flush_later(&m);
    }
    // Touched by no other CPU that has the space loaded: nothing can reach the
    // pages any more, free them now. Otherwise each batch waits for a grace
    // period (epoch_defer orders the flags above before it reads the epoch).
    if (!remote) {
        batch_release(z.pages);
        z.pages = NULL;
    }
    for (struct batch *b = z.pages, *next; b; b = next) {
        next = b->next;
        b->next = NULL;
        epoch_defer(&b->cb, async_release);
    }
    trim_after_unmap(vs, vc, addr, addr + len);
    epoch_exit();
    return 0;
}

// What mprotect of [start, end) to prot can decide from one lock-free look at
// each descriptor, without writing one (so that it commutes conflict-free with
// faults and other calls on the pages): -ENOMEM if nothing there is mapped (as
// range_idle); -EACCES if it asks write of a page that may never be written (one
// such page decides the call, whatever the others hold); 0 if every page is
// mapped with prot already, so there is nothing to change. 1: lock and look again.
// The last answer rests on each page's own look, as a reader of the pages one by
// one would see them; a call that changes nothing needs no more.
static int protect_peek(struct vmspace *vs, uintptr_t start, uintptr_t end, int prot)
{
    size_t same = 0, seen = 0;
    int ret = 1;
    epoch_enter();
    struct vpage *vp = NULL;
    for (uintptr_t va = start; ret == 1 && (vp = vpage_iter(vs, vp, &va, end)); va += PGSIZE) {
        uint64_t w = ldw(&vp->word);
        if (w & VP_LOCK) {
            seen++;
            continue;
        }
        if (!(w & VP_MAPPED))
            continue;
        seen++;
        if ((prot & VM_WRITE) && (w & VP_NOWRITE))
            ret = -EACCES;
        same += VP_PROT(w) == prot;
    }
    epoch_exit();
    if (ret == 1 && seen == 0)
        return -ENOMEM; // nothing there: Linux fails the same way
    if (ret == 1 && same == (end - start) / PGSIZE)
        return 0;
    return ret;
}

int uvm_protect(struct vmspace *vs, uintptr_t addr, size_t len, int prot)
{
    if (check_range(addr, &len) || (prot & ~(VM_READ | VM_WRITE | VM_EXEC)))
        return -EINVAL;
    if (len == 0)
        return 0;
    int peek = protect_peek(vs, addr, addr + len, prot);
    if (peek <= 0)
        return peek;
    epoch_enter();
    struct zap z;
    zap_init(&z);
    range_lock(vs, addr, addr + len, false);
    // Linux: -ENOMEM (and no change) if part of the range is not mapped;
    // -EACCES if write is asked of a shared mapping of a read-only file.
    size_t mapped = 0;
    bool nowrite = false;
    struct vpage *vp = NULL;
    for (uintptr_t va = addr; (vp = vpage_iter(vs, vp, &va, addr + len)); va += PGSIZE) {
        bool mine = vp_mine(vp) && (vp->word & VP_MAPPED);
        mapped += mine;
        nowrite |= mine && (vp->word & VP_NOWRITE);
    }
    int err = (prot & VM_WRITE) && nowrite ? -EACCES : mapped == len / PGSIZE ? 0 : -ENOMEM;
    vp = NULL;
    for (uintptr_t va = addr; !err && va < addr + len; va += PGSIZE) {
        vp = vpage_next(vs, vp, va, false);
        uint64_t w = vp_val(vp);
        int old = VP_PROT(w);
        // Granting more needs no shootdown: a stale, stricter entry only faults,
        // and the fault refills it. A page without a physical page is in no table.
        if ((old & ~prot) && VP_PA(w)) {
            vp_clear_ptes(vs, va, &z.tlb);
            zap_range(&z, va);
        }
        vp_set(vp, (w & ~(7UL << VP_PROT_SHIFT)) | (uint64_t)prot << VP_PROT_SHIFT);
    }
    zap_flush(vs, &z);
    range_unlock(vs, addr, addr + len);
    zap_finish_sync(vs, &z);
    epoch_exit();
    return err;
}

int uvm_dontneed(struct vmspace *vs, uintptr_t addr, size_t len)
{
    if (check_range(addr, &len))
        return -EINVAL;
    if (len && range_idle(vs, addr, addr + len))
        return -ENOMEM;
    epoch_enter();
    struct vmcore *vc = my_core(vs);
    if (!vc) {
        epoch_exit();
        return -ENOMEM;
    }
    struct zap z;
    zap_init(&z);
    range_lock(vs, addr, addr + len, false);
    size_t mapped = 0;
    struct vpage *vp = NULL;
    for (uintptr_t va = addr; (vp = vpage_iter(vs, vp, &va, addr + len)); va += PGSIZE) {
        if (!vp_mine(vp) || !(vp->word & VP_MAPPED))
            continue;
        mapped++;
        if (!(vp->word & VP_SHARED)) // shared memory keeps its contents
            vp_drop(vs, &vc->resident, vp, va, &z, true);
    }
    // Linux: -ENOMEM if part of the range is not mapped (the rest is done).
    int err = mapped == len / PGSIZE ? 0 : -ENOMEM;
    zap_flush(vs, &z);
    range_unlock(vs, addr, addr + len);
    zap_finish_sync(vs, &z);
    epoch_exit();
    return err;
}

long uvm_brk(struct vmspace *vs, uintptr_t newbrk)
{
    spin_lock(&vs->brk_lock);
    uintptr_t old = vs->brk;
    long ret = old;
    uintptr_t oldend = PGROUNDUP(old), newend = PGROUNDUP(newbrk);
    if (newbrk < vs->brk_start || newbrk >= USER_MMAP_TOP) {
        // unchanged
    } else if (newend > oldend) {
        if (uvm_map(vs, oldend, newend - oldend, VM_READ | VM_WRITE, UVM_NOREPLACE) >= 0)
            ret = vs->brk = newbrk;
    } else {
        if (newend < oldend)
            uvm_unmap(vs, newend, oldend - newend);
        ret = vs->brk = newbrk;
    }
    spin_unlock(&vs->brk_lock);
    return ret;
}

// ---- faults -----------------------------------------------------------------------

#define PF_PRESENT 1
#define PF_WRITE 2
#define PF_INSTR 16

static bool access_ok(int prot, uint64_t err)
{
    if (err & PF_WRITE)
        return prot & VM_WRITE;
    if (err & PF_INSTR)
        return prot & VM_EXEC;
    return prot & (VM_READ | VM_WRITE | VM_EXEC);
}

// Give a locked copy-on-write page its own copy (or take the page if nobody else
// holds it). The old page may be in other CPUs' tables for this space: clear and
// shoot them down before the new page appears.
static int vp_break_cow(struct vmspace *vs, struct vpage *vp, uintptr_t va)
{
    uint64_t w = vp_val(vp);
    void *old = P2V(VP_PA(w));
    if (!(w & VP_FILEPG) && page_owner_get(old) == 0) { // ours alone: the other side let go
        vp_set(vp, w & ~VP_COW);
        return 0;
    }
    void *pg = page_alloc();
    if (!pg)
        return -ENOMEM;
    memcpy(pg, old, PGSIZE);
    struct zap z;
    zap_init(&z);
    vp_clear_ptes(vs, va, &z.tlb);
    zap_range(&z, va);
    vp_set(vp, (w & ~(VP_COW | VP_FILEPG | PTE_ADDR(~0UL))) | V2P(pg));
    zap_finish_sync(vs, &z);
    if (!(w & VP_FILEPG)) // (the file keeps its own page)
        cow_defer_put(old);
    return 0;
}

// Put the page into this CPU's table and re-check the descriptor (interrupts off,
// so a shootdown for it waits until we are done). False if it changed: the entry
// was backed out.
static bool fill_checked(struct vmcore *vc, struct vpage *vp, uintptr_t va, uint64_t w)
{
    push_off();
    pte_t *e = pte_find(vc->pml4, va, true);
    bool ok = e != NULL;
    if (e) {
        // Against a range operation on the page (vp_lock, then vp_clear_ptes):
        //   fault: store entry; load word     range op: CAS word (lock); load entry
        // All four are sequentially consistent, so at least one side sees the
        // other's store: either our load sees the lock (or a later word) and we
        // take the entry back out, or the range op's walk sees our entry, clears
        // it and shoots us down (the IPI waits until interrupts are back on).
        __atomic_store_n(e, VP_PA(w) | pte_perm(w), __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&vp->word, __ATOMIC_SEQ_CST) != w) {
            __atomic_store_n(e, 0, __ATOMIC_SEQ_CST);
            ok = false;
        }
        invlpg(va); // an older, stricter entry may linger
    }
    pop_off();
    return ok;
}

// Is vp's file page, not in the descriptor yet (word w), past the end of its
// file? Asked without locking the descriptor, so that a fault that ends in
// SIGBUS writes nothing there (two such faults, or one and a call that only reads
// the page's state, commute). The file may be looked at without the lock: every
// file a descriptor of the space ever named keeps a reference from the space's
// fmap records until the space is freed. The answer counts only if the
// descriptor still says the same after the size was looked at.
static bool file_page_past_end(struct vpage *vp, uint64_t w)
{
    struct inode *ip = ld((void **)&vp->ip);
    uint64_t pgoff = ldw(&vp->pgoff);
    if (!ip || ldw(&vp->word) != w)
        return false;
    int err = fs_map_page(ip, pgoff, NULL); // the locked path takes the page
    return err == -EFAULT && ldw(&vp->word) == w && ld((void **)&vp->ip) == ip &&
           ldw(&vp->pgoff) == pgoff;
}

static int fault_fail(struct fault_info *fi, int signo, int code, uintptr_t addr)
{
    if (fi) {
        fi->signo = signo;
        fi->code = code;
        fi->addr = addr;
    }
    return signo;
}

// Slow path: lock the descriptor, give it a page (or its own copy), fill.
static int fault_locked(struct vmspace *vs, struct vmcore *vc, struct vpage *vp, uintptr_t va,
                        uint64_t err, struct fault_info *fi, uintptr_t addr)
{
    uint64_t w = vp_lock(vp);
    int sig = 0;
    if (!(w & VP_MAPPED))
        sig = fault_fail(fi, SIGSEGV, SEGV_MAPERR, addr);
    else if (!access_ok(VP_PROT(w), err))
        sig = fault_fail(fi, SIGSEGV, SEGV_ACCERR, addr);
    else if (vp_populate(vs, vc, vp, PGROUNDDOWN(va)) < 0 ||
             ((err & PF_WRITE) && (vp->word & VP_COW) && vp_break_cow(vs, vp, va) < 0))
        sig = fault_fail(fi, SIGBUS, BUS_ADRERR, addr); // past the end of the file, or no memory
    if (!sig) {
        w = vp_val(vp);
        push_off();
        pte_t *e = pte_find(vc->pml4, va, true);
        if (e) {
            __atomic_store_n(e, VP_PA(w) | pte_perm(w), __ATOMIC_RELEASE);
            invlpg(va);
        } else {
            sig = fault_fail(fi, SIGBUS, BUS_ADRERR, addr);
        }
        pop_off();
    }
    vp_unlock(vp, vp->word);
    return sig;
}

int uvm_fault(struct vmspace *vs, uintptr_t addr, uint64_t err, struct fault_info *fi)
{
    kstat_page_fault();
    if (!vs || addr >= USER_END)
        return fault_fail(fi, SIGSEGV, SEGV_MAPERR, addr);
    uintptr_t va = PGROUNDDOWN(addr);
    epoch_enter(); // we fill this CPU's table; tree nodes stay allocated
    int me = cpu_id(), sig = 0;
    struct vmcore *vc = core_get(vs, me);
    if (!vc) {
        epoch_exit();
        return fault_fail(fi, SIGBUS, BUS_ADRERR, addr);
    }
    if (read_cr3() == V2P(kernel_pml4) && this_cpu_read(loaded_vs) == vs) {
        __atomic_store_n(&vc->loaded, true, __ATOMIC_SEQ_CST); // as uvm_switch
        write_cr3(V2P(vc->pml4)); // uvm_switch could not allocate it
    }
    for (;;) {
        struct vpage *vp = vpage_find(vs, va, false, NULL);
        uint64_t w = vp ? ldw(&vp->word) : 0;
        if (w & VP_LOCK) {
            sig = fault_locked(vs, vc, vp, va, err, fi, addr);
            break;
        }
        if (!(w & VP_MAPPED)) {
            if (ustack_grow(vs, va))
                continue;
            sig = fault_fail(fi, SIGSEGV, SEGV_MAPERR, addr);
            break;
        }
        if (!access_ok(VP_PROT(w), err)) {
            sig = fault_fail(fi, SIGSEGV, SEGV_ACCERR, addr);
            break;
        }
        if (!VP_PA(w) && file_page_past_end(vp, w)) {
            sig = fault_fail(fi, SIGBUS, BUS_ADRERR, addr);
            break;
        }
        if (!VP_PA(w) || ((err & PF_WRITE) && (w & VP_COW))) {
            sig = fault_locked(vs, vc, vp, va, err, fi, addr);
            break;
        }
        if (fill_checked(vc, vp, va, w))
            break;
    }
    epoch_exit();
    return sig;
}

// ---- truncate ----------------------------------------------------------------------

static bool vmspace_hold_unless_zero(struct vmspace *vs)
{
    int r = __atomic_load_n(&vs->refs, __ATOMIC_RELAXED);
    while (r > 0)
        if (__atomic_compare_exchange_n(&vs->refs, &r, r + 1, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return true;
    return false;
}

// Drop vs's pages of ip from page `from` on within [lo, hi); the descriptors stay
// mapped, so the next access faults and finds the file's end (SIGBUS) or, once
// the file grew again, a fresh page.
static void truncate_space(struct vmspace *vs, struct inode *ip, uint64_t from, uintptr_t lo,
                           uintptr_t hi)
{
    epoch_enter();
    struct zap z;
    zap_init(&z);
    int64_t dropped = 0;
    struct vpage *vp = NULL;
    for (uintptr_t va = lo; (vp = vpage_iter(vs, vp, &va, hi)); va += PGSIZE) {
        // A locked descriptor without a page may be a fault that checked the
        // old size and is about to install the page: wait for it (vp_lock).
        uint64_t peek = ldw(&vp->word);
        if (!VP_PA(peek) && !(peek & VP_LOCK))
            continue;
        uint64_t w = vp_lock(vp);
        if ((w & VP_MAPPED) && VP_PA(w) && vp->ip == ip && vp->pgoff >= from)
            vp_drop(vs, &dropped, vp, va, &z, true);
        vp_unlock(vp, vp->word);
    }
    // Counted apart: this CPU may have no part of vs, and making one would write
    // the line of vs->core that the space's own CPUs read.
    if (dropped)
        __atomic_add_fetch(&vs->truncated, dropped, __ATOMIC_RELAXED);
    // The batch holds the pages until every TLB that may reach them is flushed.
    zap_finish_sync(vs, &z);
    epoch_exit();
}

// Hold the spaces that recorded ip with pages, in found[0..n) (with their hulls). False if
// there were more than cap. A CPU whose count for ip's hash is zero has no
// record of ip: its list and lock are left alone (no lock, no write), so a
// truncate shares nothing with mmaps of other files on other CPUs. The caller's
// full barrier orders that read after the new size (see fmap_note).
static bool fmap_collect(struct inode *ip, struct fmap *found, size_t cap, size_t *n)
{
    unsigned h = fmap_hash(ip);
    *n = 0;
    for (int c = 0; c < NCPU_MAX; c++) {
        if (!READ_ONCE(percpu_offset[c]))
            continue;
        struct fmap_list *l = per_cpu_ptr(&fmap_list, c);
        if (!__atomic_load_n(&l->nfile[h], __ATOMIC_ACQUIRE))
            continue;
        spin_lock(&l->lock);
        for (struct fmap *f = l->head; f; f = f->lnext) {
            if (f->ip != ip || !f->pages)
                continue; // no page of ip was put there: nothing to take out
            if (*n == cap) {
                spin_unlock(&l->lock);
                return false;
            }
            if (vmspace_hold_unless_zero(f->vs)) // (a dying space: its free waits for us)
                found[(*n)++] = *f;
        }
        spin_unlock(&l->lock);
    }
    return true;
}

// Has any CPU a record of a file with hash h? (Reads only.)
static bool fmap_any(unsigned h)
{
    for (int c = 0; c < NCPU_MAX; c++)
        if (READ_ONCE(percpu_offset[c]) &&
            __atomic_load_n(&per_cpu_ptr(&fmap_list, c)->nfile[h], __ATOMIC_ACQUIRE))
            return true;
    return false;
}

bool uvm_truncate_file(struct inode *ip, uint64_t from)
{
    // The file's new size is visible, and ordered before what follows by the
    // caller's full barrier: a fault that populates a page after we lock its
    // descriptor sees it, and spaces that record the file after our look map
    // it after the size changed. A few records fit on the stack, so the
    // common truncate allocates nothing.
    unsigned h = fmap_hash(ip);
    if (!fmap_any(h))
        return true; // (no space can hold a page of ip from before the new size)
    // Under way, before the look (forkstate); on this CPU's line, whichever
    // CPU we end on.
    uint32_t *busy = &this_cpu_ptr(&fmap_list)->truncating[h];
    __atomic_fetch_add(busy, 1, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    struct fmap local[4], *found = local;
    size_t n = 0, cap = ARRAY_SIZE(local);
    while (!fmap_collect(ip, found, cap, &n)) {
        for (size_t i = 0; i < n; i++)
            vmspace_put(found[i].vs);
        if (found != local)
            kfree(found);
        cap *= 2;
        found = kmalloc(cap * sizeof *found);
        if (!found) { // out of memory: the pages stay mapped (as before truncate)
            __atomic_fetch_sub(busy, 1, __ATOMIC_RELEASE);
            return false;
        }
    }
    // The children of forks under way after everything else (forkstate).
    for (int forking = 0; forking <= 1; forking++)
        for (size_t i = 0; i < n; i++)
            if (found[i].forking == forking)
                truncate_space(found[i].vs, ip, from, found[i].lo, found[i].hi);
    __atomic_fetch_sub(busy, 1, __ATOMIC_RELEASE);
    for (size_t i = 0; i < n; i++)
        vmspace_put(found[i].vs);
    if (found != local)
        kfree(found);
    return true;
}

// ---- kernel access, fork ---------------------------------------------------------

static int rw(struct vmspace *vs, uintptr_t va, void *buf, size_t n, bool write)
{
    epoch_enter();
    struct vmcore *vc = my_core(vs);
    int ret = vc ? 0 : -ENOMEM;
    while (n > 0 && ret == 0) {
        struct vpage *vp = va < USER_END ? vpage_find(vs, va, false, NULL) : NULL;
        if (!vp || !(ldw(&vp->word) & VP_MAPPED)) {
            ret = -EFAULT;
            break;
        }
        vp_lock(vp);
        if (!(vp->word & VP_MAPPED))
            ret = -EFAULT;
        else if (vp_populate(vs, vc, vp, PGROUNDDOWN(va)) < 0 ||
                 (write && (vp->word & VP_COW) && vp_break_cow(vs, vp, PGROUNDDOWN(va)) < 0))
            ret = -ENOMEM;
        if (ret == 0) {
            size_t off = va % PGSIZE, chunk = MIN(n, PGSIZE - off);
            char *k = (char *)P2V(VP_PA(vp->word)) + off;
            if (write)
                memcpy(k, buf, chunk);
            else
                memcpy(buf, k, chunk);
            buf = (char *)buf + chunk;
            va += chunk;
            n -= chunk;
        }
        vp_unlock(vp, vp->word);
    }
    epoch_exit();
    return ret;
}

int uvm_write(struct vmspace *vs, uintptr_t va, const void *src, size_t n)
{
    return rw(vs, va, (void *)src, n, true);
}

int uvm_read(struct vmspace *vs, uintptr_t va, void *dst, size_t n) { return rw(vs, va, dst, n, false); }

// Fork works leaf by leaf: lock the parent's mapped pages of the leaf, copy their
// descriptors into the child (private pages become copy-on-write on both sides),
// shoot down the parent's writable entries, unlock.
//
// Against truncate, which must take a page past the file's new end out of the
// child too if the child got it. Before any descriptor naming a file is copied,
// the child has a record of the file covering the page (made with forking set,
// and marked if the page is there), and the fork has waited, after a full
// barrier, until no truncate of a file with that hash was under way on any CPU
// (fork_wait). A truncate T says it is under way before its look for records
// (after a full barrier), and walks the spaces of records with forking set
// last. For a page p past T's new end that the parent holds:
//  - T was under way when the fork looked: the fork waited until T was done,
//    so p had left the parent before the copy (and the parent can get only
//    pages inside the new size back).
//  - T said so after the fork looked (the fork: record, fence, load T's count;
//    T: count, fence, load records): T's look found the child's record, and T
//    walks the child after the parent. If the fork copied p before T's walk
//    of the parent reached p's descriptor, the copy came before the fork let
//    go of that descriptor and so before T's walk of the child, which finds
//    the child's descriptor and takes p out. Otherwise p was gone from the
//    parent before the fork came to it.
//  - T was over when the fork looked: p was gone from the parent already.
// A record found with forking clear was made by a fork that had finished
// copying before the look. The hull and mark of a record count the same way:
// a fork that widens or marks one waits as after making one. Records of files
// the parent maps only after the fork began are made when a leaf meets them:
// the fork lets go of the leaf, makes the record, waits, and does the leaf
// again. (The size alone cannot decide it: the file may have grown again
// between a truncate's look and the fork's.)
struct forkstate {
    struct vmspace *parent, *child;
    struct vmcore *cvc;   // the child's part its records hang on
    int cpu;              // whose part that is (and on whose list they are)
    struct fmap *last;    // the child's record the last file page fell in
    struct inode *need;   // a leaf names this file at need_va, not yet recorded
    uintptr_t need_va;
    bool need_pages;      // (with a page there: the record must say so)
    uintptr_t resume;     // the leaves below this are done
    struct zap z;
    size_t pages;
    int err;
    struct wrun wrun; // the child's copies of VP_WRITER pages: n beyond the first
};

// Count the child's write access that f->wrun has not counted yet.
static void fork_writers_end(struct forkstate *f)
{
    if (f->wrun.ip)
        fs_get_write_again(f->wrun.ip, f->wrun.n);
    f->wrun.ip = NULL;
}

// The child's copy of a VP_WRITER page of ip holds write access too. The first
// page of a run is counted at once, while the parent's page (locked) still
// holds access and so keeps executors out; the rest of the run, which that
// first count covers, when the run ends.
static void fork_writer(struct forkstate *f, struct inode *ip)
{
    if (f->wrun.ip == ip) {
        f->wrun.n++;
        return;
    }
    fork_writers_end(f);
    fs_get_write_again(ip, 1);
    f->wrun.ip = ip;
    f->wrun.n = 0;
}

// Wait until no truncate of a file with ip's hash is under way on any CPU
// (each CPU's count seen at zero once), after a full barrier behind the
// child's record. Holds no lock and is outside any epoch read section: a
// truncate may need the parent's descriptors, or this CPU.
static void fork_wait(struct inode *ip)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    unsigned h = fmap_hash(ip);
    for (int c = 0; c < NCPU_MAX; c++) {
        if (!READ_ONCE(percpu_offset[c]))
            continue;
        uint32_t *busy = &per_cpu_ptr(&fmap_list, c)->truncating[h];
        while (__atomic_load_n(busy, __ATOMIC_ACQUIRE))
            sched_yield();
    }
}

// Does record m cover page va of ip (and say that it may hold pages, if pages)?
static bool covers(const struct fmap *m, struct inode *ip, uintptr_t va, bool pages)
{
    return m->ip == ip && m->lo <= va && va < m->hi && (m->pages || !pages);
}

// Does one of the child's records cover it? (The last match first.)
static bool fork_covered(struct forkstate *f, struct inode *ip, uintptr_t va, bool pages)
{
    if (f->last && covers(f->last, ip, va, pages))
        return true;
    for (struct fmap *m = f->cvc->fmaps; m; m = m->cnext) {
        if (covers(m, ip, va, pages)) {
            f->last = m;
            return true;
        }
    }
    return false;
}

static void fork_page(struct forkstate *f, struct vpage *vp, uint64_t w, uintptr_t va)
{
    struct vpage *cv = vpage_find(f->child, va, true, NULL);
    if (!cv) {
        f->err = -ENOMEM;
        return;
    }
    void *pg = VP_PA(w) ? P2V(VP_PA(w)) : NULL;
    if (pg && !(w & VP_SHARED)) {
        if (!(w & VP_COW) && (VP_PROT(w) & VM_WRITE)) {
            vp_clear_ptes(f->parent, va, &f->z.tlb); // writable entries must go
            zap_range(&f->z, va);
        }
        w |= VP_COW;
        vp_set(vp, w);
    }
    if (pg) {
        if (!(w & VP_FILEPG)) // the child's inode reference keeps the file's own page
            page_owner_add(pg, 1);
        f->pages++;
    }
    if (vp->ip) {
        fs_iget(vp->ip);
        cv->ip = vp->ip;
        cv->pgoff = vp->pgoff;
        if (w & VP_WRITER)
            fork_writer(f, vp->ip);
    }
    // Last: a truncate walking the child (see forkstate) may lock it now.
    __atomic_store_n(&cv->word, w, __ATOMIC_RELEASE);
}

static void fork_leaf(struct forkstate *f, struct vleaf *l, uintptr_t base)
{
    uint64_t locked = 0;
    for (size_t i = 0; i < LEAF_PAGES; i++) {
        if (!(ldw(&l->vp[i].word) & VP_MAPPED))
            continue;
        vp_lock(&l->vp[i]);
        locked |= 1UL << i;
    }
    for (size_t i = 0; i < LEAF_PAGES && !f->need; i++) {
        struct vpage *vp = &l->vp[i];
        uintptr_t va = base + i * PGSIZE;
        bool pages = VP_PA(vp->word);
        if ((locked >> i & 1) && (vp->word & VP_MAPPED) && vp->ip &&
            !fork_covered(f, vp->ip, va, pages)) {
            f->need = vp->ip; // stays: the parent's record holds it
            f->need_va = va;
            f->need_pages = pages;
            f->resume = base;
        }
    }
    for (size_t i = 0; i < LEAF_PAGES && !f->need && !f->err; i++)
        if ((locked >> i & 1) && (l->vp[i].word & VP_MAPPED))
            fork_page(f, &l->vp[i], vp_val(&l->vp[i]), base + i * PGSIZE);
    zap_finish_sync(f->parent, &f->z);
    zap_init(&f->z);
    for (size_t i = 0; i < LEAF_PAGES; i++)
        if (locked >> i & 1)
            vp_unlock(&l->vp[i], l->vp[i].word);
}

static void fork_tree(struct forkstate *f, void *node, int level, uintptr_t base)
{
    if (level == 0) {
        fork_leaf(f, node, base);
        return;
    }
    struct vmnode *n = node;
    for (size_t i = 0; i < NODE_SLOTS && !f->err && !f->need; i++) {
        uintptr_t b = base + i * level_span(level);
        if (b + level_span(level) <= f->resume)
            continue; // done before a wait (fork_leaf)
        void *child = ld(&n->slot[i]);
        if (child && child != SLOT_DEAD)
            fork_tree(f, child, level - 1, b);
    }
}

// Record ip for the child where a leaf met it uncovered (fork_leaf): the leaf
// and the hulls the parent's records of ip have now, then wait.
static int fork_record_need(struct forkstate *f)
{
    uintptr_t lo = f->need_va & ~(level_span(1) - 1), hi = lo + level_span(1);
    for (int c = 0; c < NCPU_MAX; c++) {
        struct vmcore *pvc = ld((void **)&f->parent->core[c]);
        for (struct fmap *m = pvc ? ld((void **)&pvc->fmaps) : NULL; m; m = m->cnext) {
            if (m->ip == f->need) {
                lo = MIN(lo, m->lo);
                hi = MAX(hi, m->hi);
            }
        }
    }
    int err = fmap_note(f->child, f->cvc, f->cpu, f->need, lo, hi, f->need_pages, true);
    if (!err)
        fork_wait(f->need);
    f->need = NULL;
    return err;
}

// The child's records of the parent's files (hulls and marks as the parent's
// records have them now), each then waited for.
static int fork_records(struct forkstate *f)
{
    for (int c = 0; c < NCPU_MAX; c++) {
        struct vmcore *pvc = ld((void **)&f->parent->core[c]);
        struct fmap *m = pvc ? ld((void **)&pvc->fmaps) : NULL;
        for (; m; m = m->cnext) {
            int err = fmap_note(f->child, f->cvc, f->cpu, m->ip, m->lo, m->hi,
                                __atomic_load_n(&m->pages, __ATOMIC_RELAXED), true);
            if (err)
                return err;
        }
    }
    for (struct fmap *m = f->cvc->fmaps; m; m = m->cnext)
        fork_wait(m->ip);
    return 0;
}

struct vmspace *vmspace_fork(struct vmspace *parent)
{
    struct forkstate f = {.parent = parent, .child = vmspace_new()};
    if (!f.child)
        return NULL;
    // Before the pages: the stack may grow meanwhile, and the child's grows
    // again where it was not copied. (Without its lock bit, ustack.c.)
    f.child->stack = __atomic_load_n(&parent->stack, __ATOMIC_ACQUIRE) & ~1UL;
    zap_init(&f.z);
    f.cpu = cpu_id(); // (may change while we wait: the child's part stays this one)
    f.cvc = core_get(f.child, f.cpu);
    f.err = f.cvc ? fork_records(&f) : -ENOMEM;
    epoch_enter();
    while (!f.err) {
        fork_tree(&f, parent->root, TREE_LEVELS, 0);
        if (!f.need)
            break;
        epoch_exit(); // a leaf names a file not recorded yet (fork_leaf)
        f.err = fork_record_need(&f);
        epoch_enter();
    }
    epoch_exit();
    fork_writers_end(&f); // (the copies made count, even if the fork fails)
    if (f.cvc)
        f.cvc->resident = f.pages;
    // Copied: truncates may walk the child in any order now.
    struct fmap_list *l = per_cpu_ptr(&fmap_list, f.cpu);
    for (struct fmap *m = f.cvc ? f.cvc->fmaps : NULL; m; m = m->cnext) {
        spin_lock(&l->lock);
        m->forking = false;
        spin_unlock(&l->lock);
    }
    if (f.err) {
        vmspace_put(f.child); // a truncate may hold it (it has records)
        return NULL;
    }
    spin_lock(&parent->brk_lock);
    f.child->brk_start = parent->brk_start;
    f.child->brk = parent->brk;
    spin_unlock(&parent->brk_lock);
    // The child executes the parent's image too (the parent's deny-write
    // stands meanwhile, so no writer can be open).
    if (parent->image) {
        fs_deny_write_again(parent->image);
        fs_iget(parent->image);
        f.child->image = parent->image;
    }
    return f.child;
}
