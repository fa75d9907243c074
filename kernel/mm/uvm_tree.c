// The descriptor tree of an address space: finding a page's descriptor (adding
// tree nodes on the way), walking the present ones, and giving back the nodes
// munmap emptied. The design, the tree's shape and the descriptor lock (inline
// there, for the fault path) are in uvm_internal.h; range locking over the lock
// is in uvm_map.c.
//
// Commute: lookups and inserts of different pages. A lookup only reads the tree
// nodes on its way down (an acquire load of each slot); an insert writes one
// slot of the parent, with one compare-and-swap, only where no node is yet (the
// first use of a leaf's or a node's stretch of address space). Each descriptor
// is a cache line of its own, so neighbouring pages share only the tree nodes
// above them, which the others only read. Giving back a leaf or node (below)
// takes only one that is empty and that nobody works in.
#include "mm/uvm_internal.h"

// ---- finding descriptors -----------------------------------------------------------

// The descriptor of va, adding tree nodes if alloc. NULL if absent or out of
// memory; *skip (if not NULL) is then the size of the absent aligned block.
// Callers are in an epoch read section (tree_trim frees nodes after one).
struct vpage *vpage_find(struct vmspace *vs, uintptr_t va, bool alloc, size_t *skip)
{
again:;
    struct vmnode *n = vs->root;
    for (int level = TREE_LEVELS; level >= 1; level--) {
        void **slot = &n->slot[level_index(va, level)];
        void *child = load_acquire(slot);
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
            if (!cas(slot, &expected, child)) {
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

// The descriptor of *va or of the first present page after it, skipping absent
// tree blocks; NULL once *va reaches end. prev is the descriptor the previous call
// returned (for *va - PGSIZE) or NULL.
struct vpage *vpage_iter(struct vmspace *vs, struct vpage *prev, uintptr_t *va, uintptr_t end)
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
//
// Giving a page back allocates nothing, so that trimming works when memory
// has run out (the failure paths of mmap trim what they added, uvm_map.c):
// the pages wait for their grace period on a list of the CPU that took them
// out, linked through their page owner words (page.c; no one else uses a tree
// page's), behind one epoch callback per CPU. Pages taken out while that
// callback waits go on a second list, which waits for a grace period of its
// own once the first is freed.
struct tree_gone {
    struct epoch_cb cb;
    bool deferred; // cb is with the epoch, for the pages on `waiting`
    void *waiting; // out of the tree before cb was deferred
    void *next;    // out of the tree since
};
static DEFINE_PERCPU(struct tree_gone, tree_gone);

static void *gone_push(void *list, void *pg)
{
    page_owner_set(pg, (uintptr_t)list);
    return pg;
}

// From this CPU's tick, interrupts off.
static void tree_gone_cb(struct epoch_cb *cb)
{
    struct tree_gone *g = container_of(cb, struct tree_gone, cb);
    for (void *pg = g->waiting, *next; pg; pg = next) {
        next = (void *)page_owner_get(pg);
        page_owner_set(pg, 0); // page.c hands pages out with owner 0
        page_free(pg);
    }
    g->waiting = g->next;
    g->next = NULL;
    g->deferred = g->waiting != NULL;
    if (g->deferred)
        epoch_defer(&g->cb, tree_gone_cb);
}

// Free pg, a leaf or node just taken out of the tree, a grace period from now.
static void tree_page_gone(void *pg)
{
    push_off(); // the tick runs tree_gone_cb on this CPU
    struct tree_gone *g = this_cpu_ptr(&tree_gone);
    if (g->deferred) {
        g->next = gone_push(g->next, pg);
    } else {
        g->waiting = gone_push(g->waiting, pg);
        g->deferred = true;
        epoch_defer(&g->cb, tree_gone_cb);
    }
    pop_off();
}

static bool vp_trylock_empty(struct vpage *vp)
{
    uint64_t w = 0;
    return vp->ip == NULL && __atomic_compare_exchange_n(&vp->word, &w, my_lock(), false,
                                                         __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

// Take the leaf at path[0] out of path[1]'s slot idx if it is empty and idle.
// The caller's own pages [first, last] are looked at first: if one of them is
// in use again (the common case when the tick comes), the neighbours'
// descriptors, which other CPUs write, are not read at all, so their next
// writes need not take their lines back from this CPU.
static bool leaf_remove(struct vmnode *parent, unsigned idx, struct vleaf *l, size_t first,
                        size_t last)
{
    for (size_t i = first; i <= last; i++)
        if (load_acquire(&l->vp[i].word) != 0)
            return false;
    for (size_t i = 0; i < LEAF_PAGES; i++)
        if ((i < first || i > last) && load_acquire(&l->vp[i].word) != 0)
            return false;
    size_t locked = 0;
    while (locked < LEAF_PAGES && vp_trylock_empty(&l->vp[locked]))
        locked++;
    if (locked < LEAF_PAGES) {
        for (size_t i = 0; i < locked; i++)
            vp_unlock(&l->vp[i], 0);
        return false;
    }
    store_seqcst(&parent->slot[idx], NULL);
    for (size_t i = 0; i < LEAF_PAGES; i++)
        store_release(&l->vp[i].word, VP_DEAD);
    tree_page_gone(l);
    return true;
}

// Take node n out of parent's slot idx if all its slots are empty.
static bool node_remove(struct vmnode *parent, unsigned idx, struct vmnode *n)
{
    for (size_t i = 0; i < NODE_SLOTS; i++)
        if (load_acquire(&n->slot[i]))
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
            store_release(&n->slot[i], NULL);
        return false;
    }
    store_seqcst(&parent->slot[idx], NULL);
    tree_page_gone(n);
    return true;
}

// Give back the leaves of [start, end) that are empty, and the nodes above them
// that become empty (never the root), but for leaves that meet [xlo, xhi).
static void trim_except(struct vmspace *vs, uintptr_t start, uintptr_t end, uintptr_t xlo,
                        uintptr_t xhi)
{
    size_t leaf_span = level_span(1);
    for (uintptr_t va = start & ~(leaf_span - 1); va < end; va += leaf_span) {
        if (va < xhi && xlo < va + leaf_span)
            continue;
        struct vmnode *path[TREE_LEVELS + 1];
        path[TREE_LEVELS] = vs->root;
        int level = TREE_LEVELS;
        for (; level >= 1; level--) {
            void *child = load_acquire(&path[level]->slot[level_index(va, level)]);
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
        uintptr_t lo = MAX(va, start), hi = MIN(va + leaf_span, end);
        size_t first = (lo - va) / PGSIZE, last = (hi - 1 - va) / PGSIZE;
        if (!leaf_remove(path[1], level_index(va, 1), (struct vleaf *)path[0], first, last))
            continue;
        for (level = 1; level < TREE_LEVELS; level++)
            if (!node_remove(path[level + 1], level_index(va, level + 1), path[level]))
                break;
    }
}

// In an epoch read section, no locks held.
void tree_trim(struct vmspace *vs, uintptr_t start, uintptr_t end)
{
    trim_except(vs, start, end, 0, 0);
}

// After munmap of [start, end): the leaves it covered whole go now (no operation
// that commutes with this munmap works in them). Emptying a leaf it covers only
// in part needs a look at the neighbours' descriptors, which commuting calls on
// those pages write: that waits for this CPU's tick (trim_tick), outside any
// system call, if the space is still loaded then (else for the space's free).
static void trim_later(struct vmspace *vs, uintptr_t start, uintptr_t end, uintptr_t *lo_,
                       uintptr_t *hi_)
{
    size_t span = level_span(1);
    uintptr_t lo = (start + span - 1) & ~(span - 1), hi = end & ~(span - 1);
    if (lo < hi)
        tree_trim(vs, lo, hi);
    if (lo < hi && lo == start && hi == end)
        return;
    push_off();
    *lo_ = *hi_ > *lo_ ? MIN(*lo_, start) : start;
    *hi_ = MAX(*hi_, end);
    pop_off();
}

void trim_after_unmap(struct vmspace *vs, struct vmcore *vc, uintptr_t start, uintptr_t end)
{
    trim_later(vs, start, end, &vc->trim_lo, &vc->trim_hi);
}

// After a failed mmap of [start, end), the tree nodes it added: as after an
// unmap, but at the next tick whatever else this CPU unmaps (a process
// running memory out retries where it failed, and must get those pages back
// while it still asks).
void trim_after_failure(struct vmspace *vs, struct vmcore *vc, uintptr_t start, uintptr_t end)
{
    trim_later(vs, start, end, &vc->cool_lo, &vc->cool_hi);
}

// A leaf this CPU unmapped in part waits a tick more if this CPU unmapped near
// it again since the last tick: a thread that maps and unmaps its own slice of
// a shared region over and over finds its pages empty at some ticks, and
// reading the neighbours' descriptors then makes each neighbour's next lock of
// its page take the line back (mmap+touch+MADV_UNMAP_ASYNC in 8 threads moved
// 4.6 lines per operation that way, make bench-cost). Near: within the hull of
// this tick's unmaps if it spans at most TRIM_HOT_LEAVES leaves; a wider hull
// (unmaps all over) holds nothing back, so no leaf waits for ever. A CPU going
// idle gives back everything at once.
#define TRIM_HOT_LEAVES 4

void trim_tick(struct vmspace *vs, struct vmcore *vc, bool idle)
{
    uintptr_t clo = vc->cool_lo, chi = vc->cool_hi, lo = vc->trim_lo, hi = vc->trim_hi;
    bool hot = !idle && hi > lo && hi - lo <= TRIM_HOT_LEAVES * level_span(1);
    vc->trim_lo = vc->trim_hi = 0;
    vc->cool_lo = hot ? lo : 0;
    vc->cool_hi = hot ? hi : 0;
    if (chi <= clo && (hot || hi <= lo))
        return;
    epoch_enter();
    if (chi > clo)
        trim_except(vs, clo, chi, hot ? lo : 0, hot ? hi : 0);
    if (!hot && hi > lo)
        tree_trim(vs, lo, hi);
    epoch_exit();
}
