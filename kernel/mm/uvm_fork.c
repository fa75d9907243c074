// Kernel access to user memory (uvm_read, uvm_write: loaders and tests) and
// fork (vmspace_fork), which copies an address space leaf by leaf. The design
// is in uvm_internal.h; the truncate side of the fork/truncate protocol told at
// forkstate is in uvm_file.c.
//
// Commute: a fork with anything on other address spaces. In the parent, a fork
// holds the descriptors of one leaf at a time, and shoots down only the CPUs
// that have writable entries of the private pages it makes copy-on-write.
#include "mm/uvm_internal.h"
#include "proc/sched.h"
#include "uapi/errno.h"

static int rw(struct vmspace *vs, uintptr_t va, void *buf, size_t n, bool write)
{
    epoch_enter();
    struct vmcore *vc = my_core(vs);
    int ret = vc ? 0 : -ENOMEM;
    while (n > 0 && ret == 0) {
        struct vpage *vp = va < USER_END ? vpage_find(vs, va, false, NULL) : NULL;
        if (!vp || !(load_acquire(&vp->word) & VP_MAPPED)) {
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
// child's record. A CPU out of fmap_cpus counts none (a truncate joins
// before it counts: uvm_file.c). Holds no lock and is outside any epoch read
// section: a truncate may need the parent's descriptors, or this CPU.
static void fork_wait(struct inode *ip)
{
    fence();
    unsigned h = fmap_hash(ip);
    cpumask_t cpus;
    fmap_cpus_snapshot(&cpus);
    for_each_cpu(c, &cpus) {
        uint32_t *busy = &per_cpu_ptr(&fmap_list, c)->truncating[h];
        while (load_acquire(busy))
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
            vp_clear_ptes(f->parent, va, &f->z); // writable entries must go
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
    store_release(&cv->word, w);
}

static void fork_leaf(struct forkstate *f, struct vleaf *l, uintptr_t base)
{
    uint64_t locked = 0;
    for (size_t i = 0; i < LEAF_PAGES; i++) {
        if (!(load_acquire(&l->vp[i].word) & VP_MAPPED))
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
            f->need = vp->ip; // held until recorded: the parent may unmap it meanwhile
            fs_iget(f->need);
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
        void *child = load_acquire(&n->slot[i]);
        if (child && child != SLOT_DEAD)
            fork_tree(f, child, level - 1, b);
    }
}

// Record ip for the child where a leaf met it uncovered (fork_leaf): the leaf
// and the hulls the parent's records of ip have now, then wait.
static int fork_record_need(struct forkstate *f)
{
    uintptr_t lo = f->need_va & ~(level_span(1) - 1), hi = lo + level_span(1);
    cpumask_t cores;
    uvm_cores(f->parent, &cores);
    epoch_enter(); // the parent's threads may drop records meanwhile (fmap_remove)
    for_each_cpu(c, &cores) {
        struct vmcore *pvc = load_acquire(&f->parent->core[c]);
        for (struct fmap *m = pvc ? load_acquire(&pvc->fmaps) : NULL; m; m = m->cnext) {
            if (m->ip == f->need) {
                lo = MIN(lo, m->lo);
                hi = MAX(hi, m->hi);
            }
        }
    }
    int err = fmap_note(f->child, f->cvc, f->cpu, f->need, lo, hi, f->need_pages, true);
    epoch_exit();
    if (!err)
        fork_wait(f->need);
    fs_iput(f->need);
    f->need = NULL;
    return err;
}

// The child's records of the parent's files (hulls and marks as the parent's
// records have them now), each then waited for.
static int fork_records(struct forkstate *f)
{
    cpumask_t cores;
    uvm_cores(f->parent, &cores);
    epoch_enter(); // the parent's threads may drop records meanwhile (fmap_remove)
    for_each_cpu(c, &cores) {
        struct vmcore *pvc = load_acquire(&f->parent->core[c]);
        struct fmap *m = pvc ? load_acquire(&pvc->fmaps) : NULL;
        for (; m; m = m->cnext) {
            int err = fmap_note(f->child, f->cvc, f->cpu, m->ip, m->lo, m->hi,
                                load_relaxed(&m->pages), true);
            if (err) {
                epoch_exit();
                return err;
            }
        }
    }
    epoch_exit();
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
    f.child->stack = load_acquire(&parent->stack) & ~1UL;
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
    size_t n = parent->exe ? strlen(parent->exe) + 1 : 0;
    if (n && (f.child->exe = kmalloc(n)))
        memcpy(f.child->exe, parent->exe, n);
    if (n && !f.child->exe) {
        vmspace_put(f.child);
        return NULL;
    }
    return f.child;
}
