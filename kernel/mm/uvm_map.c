// mmap, munmap, mprotect, madvise and brk on an address space: range locking,
// the placement of mappings the caller did not fix, and the calls themselves.
// The design is in uvm_internal.h; the descriptors they drop go through the zap
// (vp_drop, uvm_pageref.c), the tree nodes munmap empties through
// trim_after_unmap (uvm_tree.c).
//
// Commute: any two of these calls on disjoint page ranges, and each with faults
// on other pages. A range operation locks the descriptors of exactly its pages,
// in ascending address order (range_lock), and writes only their lines; one
// that finds nothing to do decides so from a lock-free look and writes nothing
// (range_idle, protect_peek). Placement searches below the calling CPU's own
// hint in its own zone, so mmaps on different CPUs look at different parts of
// the tree and write different lines of the space (the hint is in each CPU's
// part). brk takes the space's brk_lock: a space has one break.
#include "mm/tlb.h"
#include "mm/uvm_internal.h"
#include "uapi/errno.h"

// ---- range locking -----------------------------------------------------------------

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
        idle = !(load_acquire(&vp->word) & (VP_MAPPED | VP_LOCK));
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

// Unmap the locked range [start, end). This CPU's records of files mapped
// there go at its next record (fmap_note's sweep), not now: a truncate of the
// file on another CPU reads the records' counters and lock, and the munmap
// should write neither (the two commute).
static void unmap_locked(struct vmspace *vs, struct vmcore *vc, uintptr_t start, uintptr_t end,
                         struct zap *z)
{
    struct vpage *vp = NULL;
    bool files = false;
    ptwalk_begin(&z->walk); // the range is locked: one look at the tables per block
    for (uintptr_t va = start; (vp = vpage_iter(vs, vp, &va, end)); va += PGSIZE) {
        if (vp_mine(vp) && (vp->word & VP_MAPPED)) {
            files |= vp->ip != NULL;
            vp_drop(vs, &vc->resident, vp, va, z, false);
        }
    }
    ptwalk_end(&z->walk);
    if (files)
        vc->fmaps_stale = true;
}

// ---- placement ---------------------------------------------------------------------

// Where placement starts a mapping of len bytes: a mapping of at least one
// page-table line's worth of pages (8 entries share a 64-byte line) starts on
// a line boundary. Threads that split it into slices of whole lines (8, 16
// pages) then fill and clear entries of lines of their own in each CPU's
// table: unaligned, every slice's edge line was another CPU's too, and
// clearing a page read the line its neighbour's faults had just written
// (touch+MADV_DONTNEED of own 16-page slices in 8 threads moved 3.3 lines per
// operation that way, in a region placed where earlier mappings had left off;
// make bench-cost). Linux 6.1 aligns nothing; later versions align anonymous
// mappings of 2 MiB or more to 2 MiB, for huge pages.
#define PTE_LINE_SPAN (8 * PGSIZE)
static size_t placement_align(size_t len) { return len >= PTE_LINE_SPAN ? PTE_LINE_SPAN : PGSIZE; }

// The highest start of len bytes, aligned to align, in the free run [va, end); 0 if none.
static uintptr_t fit(uintptr_t va, uintptr_t end, size_t len, size_t align)
{
    if (end - va < len)
        return 0;
    uintptr_t a = (end - len) & ~(align - 1);
    return a >= va ? a : 0;
}

// Highest start in [lo, hi) of len bytes that look free, aligned as placement
// wants (a lock-free look; the caller verifies under the locks). 0 if none.
static uintptr_t find_free(struct vmspace *vs, uintptr_t lo, uintptr_t hi, size_t len)
{
    size_t align = placement_align(len);
    uintptr_t end = hi, va = hi, a;
    while (va > lo && va - lo >= PGSIZE) {
        if ((a = fit(va, end, len, align)))
            return a;
        size_t skip = 0;
        struct vpage *vp = vpage_find(vs, va - PGSIZE, false, &skip);
        if (!vp) {
            // An absent node: everything in its aligned block is free.
            uintptr_t base = (va - PGSIZE) & ~(skip - 1);
            va = MAX(base, lo);
            if ((a = fit(va, end, len, align)))
                return a;
            continue;
        }
        va -= PGSIZE;
        if (load_acquire(&vp->word) & (VP_MAPPED | VP_LOCK))
            end = va;
    }
    return fit(va, end, len, align);
}

// Lock [start, start+len) if nothing there is mapped: 0, -EEXIST or -ENOMEM.
// On failure the tree nodes the try added go again (trim_after_failure, as after
// a munmap), so that failed calls leave nothing allocated.
static int lock_if_free(struct vmspace *vs, struct vmcore *vc, uintptr_t start, size_t len)
{
    int err = range_lock(vs, start, start + len, true);
    struct vpage *vp = NULL;
    for (uintptr_t va = start; !err && va < start + len; va += PGSIZE) {
        vp = vpage_next(vs, vp, va, false);
        if (vp->word & VP_MAPPED) {
            range_unlock(vs, start, start + len);
            err = -EEXIST;
        }
    }
    if (err)
        trim_after_failure(vs, vc, start, start + len);
    return err;
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
        int err = lock_if_free(vs, vc, want, len);
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
            int err = lock_if_free(vs, vc, a, len);
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

// ---- mmap, munmap, mprotect, madvise -----------------------------------------------

long uvm_map(struct vmspace *vs, uintptr_t addr, size_t len, int prot, int flags)
{
    return uvm_map_file(vs, addr, len, prot, flags, NULL, 0);
}

// Every page of a mapping has a descriptor from mmap on (uvm_tree.c), and the
// mmap makes them all, page by page, inside one epoch read section. A mapping
// whose descriptors would fill more than a quarter of memory fails at once
// (ENOMEM, as Linux refuses an obvious overcommit): the loop would otherwise
// run until memory is gone, holding back every CPU's deferred frees meanwhile
// (a 1 TiB mmap on a 1 GiB guest kept the epoch from advancing for a minute,
// `make fuzz FUZZ_ARGS=-m`, and every other allocation failed). A 1 GiB
// machine maps at most 16 GiB at once.
static bool describable(size_t len)
{
    return len / PGSIZE / LEAF_PAGES <= page_count_total() / 4;
}

long uvm_map_file(struct vmspace *vs, uintptr_t addr, size_t len, int prot, int flags,
                  struct inode *ip, uint64_t pgoff)
{
    bool fixed = flags & (UVM_FIXED | UVM_NOREPLACE);
    if (len == 0 || (fixed && addr % PGSIZE) || (prot & ~(VM_READ | VM_WRITE | VM_EXEC)))
        return -EINVAL;
    len = PGROUNDUP(len);
    if (len == 0 || len > USER_TOP || !describable(len))
        return -ENOMEM;
    if (fixed && !user_range_ok(addr, len))
        return -EINVAL;
    epoch_enter(); // tree nodes stay allocated; descriptor locks are held only by running threads
    struct vmcore *vc = my_core(vs);
    long ret = vc ? 0 : -ENOMEM;
    struct zap z;
    zap_init(&z);
    if (ret == 0 && (flags & UVM_NOREPLACE)) {
        ret = lock_if_free(vs, vc, addr, len);
    } else if (ret == 0 && fixed) {
        if ((ret = range_lock(vs, addr, addr + len, true)) < 0)
            trim_after_failure(vs, vc, addr, addr + len); // the nodes it added
    } else if (ret == 0 && (ret = place_and_lock(vs, vc, PGROUNDDOWN(addr), len)) > 0) {
        addr = ret;
    }
    if (ret < 0) {
        epoch_exit();
        return ret;
    }
    // Recorded before any descriptor names the file (truncate, vmspace_fork).
    if (ip && fmap_note(vs, vc, cpu_id(), ip, addr, addr + len, false, false) < 0) {
        range_unlock(vs, addr, addr + len);
        trim_after_failure(vs, vc, addr, addr + len);
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
    // its own shared object. Past the first page it cannot have, the rest of
    // the range stays unmapped (and locked): the call fails (ENOMEM) and takes
    // back what it made, pages and tree nodes, so that it leaves nothing
    // allocated; a later munmap of the range would find nothing to do.
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
        if (populate && vp_populate(vs, vc, vp, va) == -ENOMEM && must) {
            ret = -ENOMEM;
            break;
        }
    }
    if (ret < 0)
        unmap_locked(vs, vc, addr, addr + len, &z);
    zap_flush(vs, &z);
    range_unlock(vs, addr, addr + len);
    zap_finish_sync(vs, &z);
    if (ret < 0)
        trim_after_failure(vs, vc, addr, addr + len);
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

// The opening munmap and MADV_UNMAP_ASYNC share: check the range, decide from
// a lock-free look that nothing is mapped there (and then write nothing), or
// else enter an epoch read section, which the caller leaves, lock the range and
// unmap it into z. Returns 1 when it unmapped (with *len rounded up to pages and
// *vcp this CPU's part of vs), or what the call returns: 0 if nothing was
// mapped, -EINVAL or -ENOMEM.
static inline int unmap_begin(struct vmspace *vs, uintptr_t addr, size_t *len,
                              struct vmcore **vcp, struct zap *z)
{
    if (*len == 0 || check_range(addr, len))
        return -EINVAL;
    if (range_idle(vs, addr, addr + *len))
        return 0;
    epoch_enter();
    struct vmcore *vc = my_core(vs);
    if (!vc) {
        epoch_exit();
        return -ENOMEM;
    }
    zap_init(z);
    range_lock(vs, addr, addr + *len, false);
    unmap_locked(vs, vc, addr, addr + *len, z);
    *vcp = vc;
    return 1;
}

int uvm_unmap(struct vmspace *vs, uintptr_t addr, size_t len)
{
    struct vmcore *vc;
    struct zap z;
    int ret = unmap_begin(vs, addr, &len, &vc, &z);
    if (ret <= 0)
        return ret;
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
    struct vmcore *vc;
    struct zap z;
    int ret = unmap_begin(vs, addr, &len, &vc, &z);
    if (ret <= 0)
        return ret;
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
        uint64_t w = load_acquire(&vp->word);
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
    ptwalk_begin(&z.walk); // the range is locked: one look at the tables per block
    for (uintptr_t va = addr; !err && va < addr + len; va += PGSIZE) {
        vp = vpage_next(vs, vp, va, false);
        uint64_t w = vp_val(vp);
        int old = VP_PROT(w);
        // Granting more needs no shootdown: a stale, stricter entry only faults,
        // and the fault refills it. A page without a physical page is in no table.
        if ((old & ~prot) && VP_PA(w)) {
            vp_clear_ptes(vs, va, &z);
            zap_range(&z, va);
        }
        vp_set(vp, (w & ~(7UL << VP_PROT_SHIFT)) | (uint64_t)prot << VP_PROT_SHIFT);
    }
    ptwalk_end(&z.walk);
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
    ptwalk_begin(&z.walk); // the range is locked: one look at the tables per block
    for (uintptr_t va = addr; (vp = vpage_iter(vs, vp, &va, addr + len)); va += PGSIZE) {
        if (!vp_mine(vp) || !(vp->word & VP_MAPPED))
            continue;
        mapped++;
        if (!(vp->word & VP_SHARED)) // shared memory keeps its contents
            vp_drop(vs, &vc->resident, vp, va, &z, true);
    }
    // Linux: -ENOMEM if part of the range is not mapped (the rest is done).
    int err = mapped == len / PGSIZE ? 0 : -ENOMEM;
    ptwalk_end(&z.walk);
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
