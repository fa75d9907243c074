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
//    maps one that has none; a range operation looks once per 2 MiB block for
//    the CPUs with a leaf table there, then once per 8 pages at a line of each
//    of those, struct ptwalk), clear the entries they find present and shoot down
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
// freeing them (uvm_file.c; if it cannot, the file keeps them), and a
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
//
// The pieces, each opening with what it holds and what commutes there, from
// the bottom up:
//   uvm_internal.h  this design; what the pieces share: the descriptors and
//                   their lock, the tree's shape, each CPU's part of a space,
//                   the zap (what a range change drops, once TLBs are flushed)
//   uvm_tree.c      descriptors in the radix tree: find, iterate, give back
//                   empty tree nodes
//   uvm_pgtable.c   per-CPU page tables: each CPU's part of a space, entries
//                   found and cleared, the table loaded at a switch
//   uvm_pageref.c   page references: COW breaks and the drops they defer,
//                   descriptors dropped into a zap, TLB flushes before release
//   uvm_file.c      which address spaces map a file, and truncate
//   uvm.c           address spaces: create, free, queries
//   uvm_map.c       range locking, placement, mmap, munmap, mprotect, madvise, brk
//   uvm_fault.c     page faults: the lock-free fill, the locked slow path, a
//                   descriptor given its page
//   uvm_fork.c      kernel access to user memory, and fork
//   ustack.c        the stack, grown on faults below it
// uvm.h is the interface for the rest of the kernel; this header is for these
// files only.
#pragma once
#include "fs.h"
#include "mm/mm.h"
#include "mm/uvm.h"
#include "sync/atomic.h"
#include "sync/epoch.h"
#include "sync/percpu.h"
#include "sync/xcall.h"
#include "x86/smp.h"
#include "x86/x86.h"

// ---- descriptors and the radix tree (uvm_tree.c) -----------------------------------

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
    struct fmap *fmaps; // files this CPU mapped into the space (uvm_file.c)
    uint32_t nfmaps, fmaps_sweep_at; // records in fmaps; how many make fmap_note sweep them
    bool fmaps_stale; // this CPU unmapped a file's pages since the last sweep
    uintptr_t trim_lo, trim_hi; // leaves munmap left for this CPU's tick (trim_tick)
    uintptr_t cool_lo, cool_hi; // leaves the last tick left for the next one
    bool loaded __cacheline_aligned; // this CPU runs on pml4 now (uvm_switch)
} __cacheline_aligned;

DECLARE_PERCPU(struct vmspace *, loaded_vs); // what uvm_switch loaded here (uvm_pgtable.c)

#define ZONE_SIZE (16UL << 30) // each CPU's placement zone below USER_MMAP_TOP

static inline unsigned level_index(uintptr_t va, int level)
{
    return (va >> (PGSHIFT + LEAF_BITS + NODE_BITS * (level - 1))) & (NODE_SLOTS - 1);
}

static inline size_t level_span(int level) // bytes of address space under one slot at level
{
    return PGSIZE * LEAF_PAGES << (NODE_BITS * (level - 1));
}

// The descriptor of va (adding tree nodes if alloc), or NULL and the size of
// the absent block in *skip; in an epoch read section.
struct vpage *vpage_find(struct vmspace *vs, uintptr_t va, bool alloc, size_t *skip);
// The descriptor of *va or of the first present page after it, below end.
struct vpage *vpage_iter(struct vmspace *vs, struct vpage *prev, uintptr_t *va, uintptr_t end);

// The next page's descriptor: the neighbour in the same leaf, or a new lookup.
static inline struct vpage *vpage_next(struct vmspace *vs, struct vpage *prev, uintptr_t va,
                                       bool alloc)
{
    if (prev && (va >> PGSHIFT) % LEAF_PAGES != 0)
        return prev + 1;
    return vpage_find(vs, va, alloc, NULL);
}

// Lock one descriptor; returns its word (without the lock bit). Interrupts may be
// off (faults inside usercopy), and the holder may be waiting for our CPU to
// answer a shootdown: keep answering cross-CPU calls while spinning.
static inline uint64_t my_lock(void) { return VP_LOCK | (uint64_t)cpu_id() << VP_OWNER_SHIFT; }

static inline uint64_t vp_lock(struct vpage *vp)
{
    for (;;) {
        uint64_t w = load_acquire(&vp->word);
        if (!(w & VP_LOCK) && __atomic_compare_exchange_n(&vp->word, &w, w | my_lock(), false,
                                                          __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
            return w;
        xcall_poll();
        pause();
    }
}

// The word of a descriptor we hold, without the lock bits.
static inline uint64_t vp_val(struct vpage *vp) { return vp->word & ~VP_LOCKBITS; }

// Did this CPU lock it? (A range operation's later passes may meet descriptors
// in tree nodes added after its locking pass; those are not its own.)
static inline bool vp_mine(struct vpage *vp)
{
    return (load_acquire(&vp->word) & VP_LOCKBITS) == my_lock();
}

static inline void vp_set(struct vpage *vp, uint64_t w) // still locked
{
    store_release(&vp->word, (w & ~VP_LOCKBITS) | my_lock());
}

static inline void vp_unlock(struct vpage *vp, uint64_t w)
{
    store_release(&vp->word, w & ~VP_LOCKBITS);
}

// Give back the empty leaves of [start, end) and the nodes they leave empty.
void tree_trim(struct vmspace *vs, uintptr_t start, uintptr_t end);
// After munmap of [start, end): trim what it covered whole now, the rest at the tick.
void trim_after_unmap(struct vmspace *vs, struct vmcore *vc, uintptr_t start, uintptr_t end);
// After a failed mmap of [start, end): the nodes it added, at the next tick.
void trim_after_failure(struct vmspace *vs, struct vmcore *vc, uintptr_t start, uintptr_t end);
// This CPU's tick, with vs loaded: the leaves trim_after_unmap left (idle: all now).
void trim_tick(struct vmspace *vs, struct vmcore *vc, bool idle);

// ---- per-CPU page tables (uvm_pgtable.c) -------------------------------------------

// CPU c's part of vs, made (by CPU c only) on first use; NULL if out of memory.
struct vmcore *core_get(struct vmspace *vs, int c);
// The entry for va in a CPU's table (tables added if alloc, by the owner only).
pte_t *pte_find(pte_t *pml4, uintptr_t va, bool alloc);
struct zap;
// Clear a locked page's present entries in every CPU's table; those CPUs go to
// z->tlb (with z->walk on: only the tables its look found, see struct ptwalk).
void vp_clear_ptes(struct vmspace *vs, uintptr_t va, struct zap *z);

static inline struct vmcore *my_core(struct vmspace *vs) { return core_get(vs, cpu_id()); }

// The CPUs that have (or are making) a part of vs, now. Sequentially
// consistent loads: callers that read tables after it rely on the order with
// the page lock they took before (see fill_checked).
static inline void uvm_cores(struct vmspace *vs, cpumask_t *out)
{
    for (int i = 0; i < CPUMASK_WORDS; i++)
        out->w[i] = load_seqcst(&vs->cores.w[i]);
}

// ---- page references and deferred release (uvm_pageref.c) --------------------------

static inline bool page_unref_last(void *pg, bool shared)
{
    // Pages that were never shared have no extra references to look at.
    if (shared && page_owner_add(pg, -1) != 0)
        return false;
    if (shared)
        page_owner_set(pg, 0);
    return true;
}

static inline void page_unref(void *pg, bool shared)
{
    if (page_unref_last(pg, shared))
        page_free(pg);
}

// Drop the references this CPU's COW breaks deferred (cow_defer), now.
void cow_defer_settle(void);
// Give a locked copy-on-write page its own copy, or take the page; -ENOMEM.
int vp_break_cow(struct vmspace *vs, struct vpage *vp, uintptr_t va);

// Dropped descriptors of a file, in runs of consecutive descriptors of one file:
// their inode references (a run keeps its first one and gives it back last) and
// the write access of the VP_WRITER ones, one writer per page, given back in one
// refcache update (fs/writecount.c) however many pages the run has.
struct wrun {
    struct inode *ip; // NULL: no run
    int64_t n;        // write access held by the run's descriptors
};

static inline void wrun_put(struct wrun *r)
{
    if (r->ip) {
        fs_put_write_n(r->ip, r->n);
        fs_iput(r->ip);
        r->ip = NULL;
    }
}

// A dropped descriptor of ip: its inode reference, and its write access if writer.
static inline void wrun_drop(struct wrun *r, struct inode *ip, bool writer)
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

// A range operation's look at which CPUs have a leaf page table for one 2 MiB
// block (only they can have an entry for a page in it), taken once per block
// instead of once per page: clearing a page then reads one entry in each of
// those tables, instead of walking every CPU's table from the top. Only while
// on (ptwalk_begin), which a caller turns on when it locked every page it will
// clear before the first look: a CPU that adds a leaf table afterwards cannot
// fill a locked page (its fault backs out, fill_checked), and tables go only
// with the space. A look that finds more CPUs than `few` holds lists them in a
// page taken then and given back by ptwalk_end, and then looks, once per 8
// pages (a cache line of each table holds their entries), at which of those
// tables have an entry present for any of them: a page costs only the CPUs that
// mapped a page near it, and reading a line's other entries touches no other
// line.
struct ptleaf {
    int cpu;
    pte_t *leaf; // CPU cpu's leaf table for the block
};
#define PTWALK_FEW 8
struct ptwalk {
    bool on;
    bool looked;          // block, n and leaves are filled in
    uintptr_t block;      // the block looked at (2 MiB aligned)
    int n;                // CPUs with a leaf table there; -1: no memory to list them
    struct ptleaf *leaves; // few, or many
    struct ptleaf *many;  // a page, once more than PTWALK_FEW were found
    struct ptleaf few[PTWALK_FEW];
    uintptr_t line;       // the line looked at (PTE_LINE_PAGES pages); 1: none
    uint64_t hit[NCPU_MAX / 64]; // bit i: leaves[i] has an entry present in line
};
_Static_assert(NCPU_MAX * sizeof(struct ptleaf) <= PGSIZE, "one page lists every CPU");

static inline void ptwalk_begin(struct ptwalk *w)
{
    w->on = true;
    w->looked = false;
    w->many = NULL;
}

static inline void ptwalk_end(struct ptwalk *w)
{
    if (w->many)
        page_free(w->many);
    w->many = NULL;
    w->on = w->looked = false;
}

// What a range change leaves to do once the descriptors are updated.
struct zap {
    cpumask_t tlb;      // CPUs whose TLB may cache a dropped translation
    uintptr_t lo, hi;   // the range to flush
    struct batch *pages;
    bool nomem;         // a batch could not be allocated: flush synchronously
    struct wrun wrun;   // inode references and write access of dropped descriptors
    struct ptwalk walk; // off unless the caller locked its whole range first
};

static inline void zap_init(struct zap *z)
{
    memset(z, 0, sizeof *z);
    z->lo = UINTPTR_MAX;
}

static inline void zap_range(struct zap *z, uintptr_t va)
{
    z->lo = MIN(z->lo, va);
    z->hi = MAX(z->hi, va + PGSIZE);
}

// Drop the references (and give back the runs of write access) of a batch list.
void batch_release(struct batch *b);
// The CPUs of tlb, other than this one, that have vs loaded now: into *m.
void zap_remote(struct vmspace *vs, const cpumask_t *tlb, cpumask_t *m);
// Flush the TLBs that may still reach what z dropped (before the range is unlocked).
void zap_flush(struct vmspace *vs, struct zap *z);

// Flush, then drop the pages (and the inode references and write access).
static inline void zap_finish_sync(struct vmspace *vs, struct zap *z)
{
    zap_flush(vs, z);
    wrun_put(&z->wrun);
    batch_release(z->pages);
    z->pages = NULL;
}

// Hand z's run of dropped file descriptors to its batch, to go with the pages.
void zap_files_batch(struct vmspace *vs, struct zap *z);
// Take a locked page's contents (and, unless keep_mapping, its mapping) out
// into z: entries cleared now, the page and the file's references with z.
void vp_drop(struct vmspace *vs, int64_t *resident, struct vpage *vp, uintptr_t va,
             struct zap *z, bool keep_mapping);

// ---- which address spaces map a file (uvm_file.c) ----------------------------------

#define FMAP_HASH_BITS 10
struct fmap {
    struct vmspace *vs;
    struct inode *ip;
    uintptr_t lo, hi;   // every mapping of ip this record covers lies in [lo, hi)
    bool pages;         // a page of ip may have been put in [lo, hi) (see uvm_file.c)
    bool forking;       // of a child a fork is still copying into
    struct fmap *lnext, **lprev; // the CPU's list of all records
    struct fmap *cnext; // the space's records made on this CPU (vmcore.fmaps)
    struct epoch_cb cb; // freed a grace period after it left the lists
};

struct fmap_list {
    struct spinlock lock;
    struct fmap *head;
    uint32_t nrec;      // [lock] records on the list
    uint32_t ntrunc;    // [lock] truncates under way that counted in `truncating`
    bool in;            // [lock] this CPU is in fmap_cpus
    uint16_t idle;      // [a] ticks in a row with neither: the owner's tick counts, joins reset
    uint32_t nfile[1U << FMAP_HASH_BITS] __cacheline_aligned; // records by file hash
    uint32_t truncating[1U << FMAP_HASH_BITS] __cacheline_aligned; // truncates under way here
};
DECLARE_PERCPU(struct fmap_list, fmap_list);

// The CPUs whose lists may hold records or count truncates under way: what
// a truncate and a fork look at, instead of every CPU (uvm_file.c).
void fmap_cpus_snapshot(cpumask_t *out);
void fmap_tick(void); // the CPU's tick: leave fmap_cpus once empty a while

static inline unsigned fmap_hash(const struct inode *ip)
{
    return (unsigned)((((uintptr_t)ip >> 8) * 0x9E3779B97F4A7C15ULL) >> (64 - FMAP_HASH_BITS));
}

// Record (on CPU c's list, for its part vc) that vs maps ip in [lo, hi), and
// with pages that a page of ip is about to be put there; 0 or -ENOMEM.
int fmap_note(struct vmspace *vs, struct vmcore *vc, int c, struct inode *ip,
              uintptr_t lo, uintptr_t hi, bool pages, bool forking);
// Drop the records CPU c made for its part vc of a space being freed.
void fmap_forget_all(struct vmcore *vc, int c);

// ---- faults (uvm_fault.c) ----------------------------------------------------------

// Give a locked, mapped descriptor without a page one: -ENOMEM, or -EFAULT
// past the end of its file.
int vp_populate(struct vmspace *vs, struct vmcore *vc, struct vpage *vp, uintptr_t va);
