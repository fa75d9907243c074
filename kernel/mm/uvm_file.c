// Which address spaces map a file, and truncate. Faults mark the records kept
// here (vp_populate, uvm_fault.c), fork copies them (uvm_fork.c, where
// forkstate tells why a fork and a truncate cannot miss each other); the design
// of the whole is in uvm_internal.h.
//
// Commute: mmaps on different CPUs, of any files; a truncate with munmap,
// mprotect and faults of mappings that never held a page of the file, and with
// everything on files whose records it does not find. How, below.
//
// A truncate that shrinks a file must take the pages past the new end out of
// every address space that maps them. Each uvm_map_file records (space, file,
// address hull) once per CPU and file, on that CPU's own list (under that CPU's
// lock, which only a truncate or the freeing of a space ever takes elsewhere):
// mmaps on different CPUs, of any files, share no line. A record holds a file
// reference (so a fault may look at the file of a descriptor without its lock);
// truncate looks at the lists of the CPUs in fmap_cpus and walks only the
// hulls of the file's records that may hold pages.
//
// Which CPUs to look at. A truncate and a fork (uvm_fork.c, fork_wait) must
// see every CPU's records and truncates under way, but visiting every CPU
// online would make them cost more on a bigger machine although the same few
// CPUs map files. fmap_cpus is the set of CPUs whose list holds a record or
// counts a truncate: a CPU joins, under its list's lock and with a locked OR
// (a full barrier) before the count a reader looks for, when its list gains
// the first; it leaves, under the same lock and only with neither left, at
// its tick after FMAP_LINGER ticks (a second) without any, idle or not. (At
// once when it went idle, the pairwise suite's CPUs, idle for a moment
// between tests, rejoined inside the next test, whose truncate then read the
// mask the join wrote.) An idle CPU in the set with nothing listed keeps its
// tick until it has left (fmap_may_stop_tick). A CPU that keeps mapping files
// stays in and writes the shared mask only once; a reader's cost follows the
// CPUs that map files, not the CPUs online. A reader that loads the mask after its own barrier and misses
// a CPU's bit missed the join, so the count came later still, and the Dekker
// arguments below and in uvm_fork.c hold with the join as part of the count.
//
// When records go. A record is needed while a descriptor in its hull names
// its file through a mapping its CPU made (other CPUs' mappings and faults
// use records of their own). A CPU that makes a record first sweeps its
// part's records (fmap_sweep) if it has unmapped a file's pages since the
// last sweep, or if the part holds max(8, twice what the last sweep kept):
// a record whose hull holds no descriptor naming its file (or locked, as one
// being mapped or faulted is) goes. The count rule catches mappings that
// another CPU unmapped (a thread that moved, another thread), and spreads the
// sweeps' cost over the records made. munmap itself only marks its part: a
// truncate of the file on another CPU reads the records' counters and lock,
// and the two commute. So a space holds on to a file it unmapped only until
// it maps another (or for as long as it lives, if it never does). A record
// leaves the lists at once and is freed with its file reference a grace
// period later: fork reads other CPUs' chains lock-free, and a fault that
// loaded a descriptor's file before the unmap may still be using it.
//
#include "mm/uvm_internal.h"
#include "sync/activeset.h"
#include "uapi/errno.h"

DEFINE_PERCPU(struct fmap_list, fmap_list) = {.lock = SPINLOCK_INIT("fmap")};

#define FMAP_LINGER 100 // ticks (1 s) a CPU stays in fmap_cpus with nothing listed

// Joins and leaves only; readers walk it. A line of its own (the type's
// alignment pads it): the kernel's page-table root sat beside it, and every
// fault that reads it shared a line with a join.
static struct active_set fmap_cpus;

void fmap_cpus_snapshot(cpumask_t *out) { active_snapshot(&fmap_cpus, out); }

// CPU c's list l is about to count a record or a truncate. With l's lock held.
static void fmap_join(struct fmap_list *l, int c)
{
    WRITE_ONCE(l->idle, 0);
    if (!l->in) {
        l->in = true;
        active_mask_add(&fmap_cpus, c); // a full barrier
    }
}

// Tickless idle (interrupts off): not while this CPU is in the set with
// nothing listed, so that it leaves at its tick before it stops. (With
// records it stays in, idle or not.)
bool fmap_may_stop_tick(void)
{
    struct fmap_list *l = this_cpu_ptr(&fmap_list);
    return !READ_ONCE(l->in) || READ_ONCE(l->nrec) || READ_ONCE(l->ntrunc);
}

void fmap_tick(void)
{
    struct fmap_list *l = this_cpu_ptr(&fmap_list);
    if (!READ_ONCE(l->in))
        return;
    if (READ_ONCE(l->nrec) || READ_ONCE(l->ntrunc)) {
        if (READ_ONCE(l->idle))
            WRITE_ONCE(l->idle, 0);
        return;
    }
    uint16_t n = READ_ONCE(l->idle) + 1;
    WRITE_ONCE(l->idle, n);
    if (n < FMAP_LINGER)
        return;
    spin_lock(&l->lock);
    if (!l->nrec && !l->ntrunc) {
        l->in = false;
        active_mask_remove(&fmap_cpus, cpu_id());
    }
    WRITE_ONCE(l->idle, 0);
    spin_unlock(&l->lock);
}

static void fmap_free_cb(struct epoch_cb *cb)
{
    struct fmap *f = container_of(cb, struct fmap, cb);
    fs_iput(f->ip);
    kfree(f);
}

// Take record f off its CPU's list l (and out of the count truncate reads).
static void fmap_unlist(struct fmap_list *l, struct fmap *f)
{
    spin_lock(&l->lock);
    *f->lprev = f->lnext;
    if (f->lnext)
        f->lnext->lprev = f->lprev;
    fetch_sub_relaxed(&l->nfile[fmap_hash(f->ip)], 1);
    l->nrec--;
    spin_unlock(&l->lock);
}

// Take the record *pp of vc (CPU c's part, on c's list) out of both lists;
// freed a grace period later.
static void fmap_remove(struct vmcore *vc, int c, struct fmap **pp)
{
    struct fmap *f = *pp;
    fmap_unlist(per_cpu_ptr(&fmap_list, c), f);
    store_release(pp, f->cnext); // (a reader on f goes on to f->cnext)
    vc->nfmaps--;
    fence(); // epoch_defer: the unlinking stores before its read of the epoch
    epoch_defer(&f->cb, fmap_free_cb);
}

// Does a descriptor in f's hull name its file (or is one locked, and may)?
// A lock-free look, in an epoch read section.
static bool fmap_in_use(struct vmspace *vs, const struct fmap *f)
{
    struct vpage *vp = NULL;
    for (uintptr_t va = f->lo; (vp = vpage_iter(vs, vp, &va, f->hi)); va += PGSIZE) {
        uint64_t w = load_acquire(&vp->word);
        if ((w & VP_LOCK) || ((w & VP_MAPPED) && load_acquire(&vp->ip) == f->ip))
            return true;
    }
    return false;
}

#define FMAP_SWEEP_MIN 8 // records a part of a space may have before a sweep

// Drop vc's records that nothing in their hulls uses any more (see above).
static void fmap_sweep(struct vmspace *vs, struct vmcore *vc, int c)
{
    for (struct fmap **pp = &vc->fmaps; *pp;) {
        if (fmap_in_use(vs, *pp))
            pp = &(*pp)->cnext;
        else
            fmap_remove(vc, c, pp);
    }
    vc->fmaps_sweep_at = MAX(FMAP_SWEEP_MIN, 2 * vc->nfmaps);
    vc->fmaps_stale = false;
}

// Record that vs maps ip in [lo, hi), on vc (CPU c's part of vs: the caller's
// own, or the one a fork fills the child through), and with `pages` that a page
// of ip is about to be put there; forking for a fork's child. Writes nothing
// when the record already says so. In an epoch read section.
int fmap_note(struct vmspace *vs, struct vmcore *vc, int c, struct inode *ip,
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
            fence();
            return 0;
        }
    }
    // (Not a child's: the fork still walks those, and its space is not filled.)
    if (!forking && (vc->fmaps_stale || vc->nfmaps >= MAX(vc->fmaps_sweep_at, FMAP_SWEEP_MIN)))
        fmap_sweep(vs, vc, c);
    struct fmap *f = kzalloc(sizeof *f);
    if (!f)
        return -ENOMEM;
    fs_iget(ip);
    *f = (struct fmap){.vs = vs, .ip = ip, .lo = lo, .hi = hi, .pages = pages,
                       .forking = forking, .cnext = vc->fmaps};
    spin_lock(&l->lock);
    fmap_join(l, c);
    f->lnext = l->head;
    f->lprev = &l->head;
    if (l->head)
        l->head->lprev = &f->lnext;
    l->head = f;
    l->nrec++;
    // A full barrier (locked add) before any descriptor names the file: a
    // truncate that does not see the count has stored the new size before its
    // look, so every fault through this mapping sees that size (fmap_collect).
    fetch_add(&l->nfile[fmap_hash(ip)], 1);
    spin_unlock(&l->lock);
    vc->nfmaps++;
    store_release(&vc->fmaps, f); // fork reads other CPUs' lists
    return 0;
}

// Drop the records CPU c made for its part vc of a space being freed (nobody
// else looks at them now).
void fmap_forget_all(struct vmcore *vc, int c)
{
    struct fmap_list *l = per_cpu_ptr(&fmap_list, c);
    for (struct fmap *f = vc->fmaps, *next; f; f = next) {
        next = f->cnext;
        fmap_unlist(l, f);
        fs_iput(f->ip);
        kfree(f);
    }
    vc->fmaps = NULL;
    vc->nfmaps = 0;
}

// ---- truncate ----------------------------------------------------------------------

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
        uint64_t peek = load_acquire(&vp->word);
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
        fetch_add_relaxed(&vs->truncated, dropped);
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
    cpumask_t cpus;
    fmap_cpus_snapshot(&cpus);
    *n = 0;
    for_each_cpu(c, &cpus) {
        struct fmap_list *l = per_cpu_ptr(&fmap_list, c);
        if (!load_acquire(&l->nfile[h]))
            continue;
        spin_lock(&l->lock);
        for (struct fmap *f = l->head; f; f = f->lnext) {
            if (f->ip != ip || !f->pages)
                continue; // no page of ip was put there: nothing to take out
            if (*n == cap) {
                spin_unlock(&l->lock);
                return false;
            }
            if (vmspace_tryhold(f->vs)) // (a dying space: its free waits for us)
                found[(*n)++] = *f;
        }
        spin_unlock(&l->lock);
    }
    return true;
}

// Has any CPU a record of a file with hash h? (Reads only.)
static bool fmap_any(unsigned h)
{
    cpumask_t cpus;
    fmap_cpus_snapshot(&cpus);
    for_each_cpu(c, &cpus)
        if (load_acquire(&per_cpu_ptr(&fmap_list, c)->nfile[h]))
            return true;
    return false;
}

// Count a truncate of a file with hash h as under way on this CPU's list
// (forkstate), joining fmap_cpus first; followed by a full barrier. The
// list to give to truncate_end, whichever CPU that runs on.
static struct fmap_list *truncate_begin(unsigned h)
{
    push_off();
    int c = cpu_id();
    struct fmap_list *l = per_cpu_ptr(&fmap_list, c);
    spin_lock(&l->lock);
    fmap_join(l, c);
    l->ntrunc++;
    fetch_add(&l->truncating[h], 1);
    spin_unlock(&l->lock);
    pop_off();
    fence();
    return l;
}

static void truncate_end(struct fmap_list *l, unsigned h)
{
    spin_lock(&l->lock);
    __atomic_fetch_sub(&l->truncating[h], 1, __ATOMIC_RELEASE);
    l->ntrunc--;
    spin_unlock(&l->lock);
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
    struct fmap_list *busy = truncate_begin(h);
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
            truncate_end(busy, h);
            return false;
        }
    }
    // The children of forks under way after everything else (forkstate).
    for (int forking = 0; forking <= 1; forking++)
        for (size_t i = 0; i < n; i++)
            if (found[i].forking == forking)
                truncate_space(found[i].vs, ip, from, found[i].lo, found[i].hi);
    truncate_end(busy, h);
    for (size_t i = 0; i < n; i++)
        vmspace_put(found[i].vs);
    if (found != local)
        kfree(found);
    return true;
}
