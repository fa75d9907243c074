// Page faults: the lock-free fill of a page the descriptor already names into
// this CPU's table, and the locked slow path that gives a descriptor its page
// (vp_populate, also used by MAP_POPULATE and kernel access) or its own copy
// (vp_break_cow, uvm_pageref.c). The design is in uvm_internal.h; the stack's
// growth on a fault below it is in ustack.c.
//
// Out of memory (no page for the data, a copy, or a page-table page) ends the
// fault with -ENOMEM, never with a retry: the retry loop below only repeats
// when a range operation changed the descriptor under the fill, and a fault
// that found no memory would find none the next time round either (and,
// inside its epoch read section, it would keep the deferred frees that could
// give some back from ever running). What the caller does with -ENOMEM:
// user_exception (proc.c) kills the process, usercopy_fault makes the copy
// fail with -ENOMEM (usercopy.c).
//
// Commute: faults on different pages, and faults of one page on different CPUs
// once it has its page: the fast path reads the descriptor without locking it
// (one acquire load) and writes only this CPU's page table; fill_checked tells
// why it cannot miss a range operation on the page. Only a first touch and a
// write to a copy-on-write page lock the descriptor and write it. A fault past
// the end of a file decides SIGBUS without writing anything
// (file_page_past_end).
#include "lib/kstats.h"
#include "mm/uvm_internal.h"
#include "uapi/abi.h"
#include "uapi/errno.h"

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

// Give a locked, mapped descriptor that has no page one: a zeroed page, or the
// file's page (copy-on-write for a private mapping). -ENOMEM, or -EFAULT past
// the end of the file.
int vp_populate(struct vmspace *vs, struct vmcore *vc, struct vpage *vp, uintptr_t va)
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

enum fill { FILLED, FILL_CHANGED, FILL_NOMEM };

// Put the page into this CPU's table and re-check the descriptor (interrupts off,
// so a shootdown for it waits until we are done). FILL_CHANGED if it changed:
// the entry was backed out, look again. FILL_NOMEM if no page-table page could
// be had: nothing was written.
static enum fill fill_checked(struct vmcore *vc, struct vpage *vp, uintptr_t va, uint64_t w)
{
    push_off();
    pte_t *e = pte_find(vc->pml4, va, true);
    enum fill r = e ? FILLED : FILL_NOMEM;
    if (e) {
        // Against a range operation on the page (vp_lock, then vp_clear_ptes):
        //   fault: store entry; load word     range op: CAS word (lock); load entry
        // All four are sequentially consistent, so at least one side sees the
        // other's store: either our load sees the lock (or a later word) and we
        // take the entry back out, or the range op's walk sees our entry, clears
        // it and shoots us down (the IPI waits until interrupts are back on).
        store_seqcst(e, VP_PA(w) | pte_perm(w));
        if (load_seqcst(&vp->word) != w) {
            store_seqcst(e, 0);
            r = FILL_CHANGED;
        }
        invlpg(va); // an older, stricter entry may linger
    }
    pop_off();
    return r;
}

// Is vp's file page, not in the descriptor yet (word w), past the end of its
// file? Asked without locking the descriptor, so that a fault that ends in
// SIGBUS writes nothing there (two such faults, or one and a call that only reads
// the page's state, commute). The file may be looked at without the lock: the
// record of the mapping holds a reference, and a record that goes lets go of
// it only a grace period after the descriptors it covered were unmapped
// (uvm_file.c), so not before this epoch read section ends. The answer counts
// only if the descriptor still says the same after the size was looked at.
static bool file_page_past_end(struct vpage *vp, uint64_t w)
{
    struct inode *ip = load_acquire(&vp->ip);
    uint64_t pgoff = load_acquire(&vp->pgoff);
    if (!ip || load_acquire(&vp->word) != w)
        return false;
    int err = fs_map_page(ip, pgoff, NULL); // the locked path takes the page
    return err == -EFAULT && load_acquire(&vp->word) == w && load_acquire(&vp->ip) == ip &&
           load_acquire(&vp->pgoff) == pgoff;
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
// 0, the signal, or -ENOMEM.
static int fault_locked(struct vmspace *vs, struct vmcore *vc, struct vpage *vp, uintptr_t va,
                        uint64_t err, struct fault_info *fi, uintptr_t addr)
{
    uint64_t w = vp_lock(vp);
    int sig = 0, e = 0;
    if (!(w & VP_MAPPED))
        sig = fault_fail(fi, SIGSEGV, SEGV_MAPERR, addr);
    else if (!access_ok(VP_PROT(w), err))
        sig = fault_fail(fi, SIGSEGV, SEGV_ACCERR, addr);
    else if ((e = vp_populate(vs, vc, vp, PGROUNDDOWN(va))) == 0 &&
             (err & PF_WRITE) && (vp->word & VP_COW))
        e = vp_break_cow(vs, vp, va);
    if (e == -ENOMEM)
        sig = -ENOMEM;
    else if (e)
        sig = fault_fail(fi, SIGBUS, BUS_ADRERR, addr); // past the end of the file
    if (!sig) {
        w = vp_val(vp);
        push_off();
        pte_t *pte = pte_find(vc->pml4, va, true);
        if (pte) {
            store_release(pte, VP_PA(w) | pte_perm(w));
            invlpg(va);
        } else {
            sig = -ENOMEM; // the page stays in the descriptor, for the space's free
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
        return -ENOMEM;
    }
    if (read_cr3() == V2P(kernel_pml4) && this_cpu_read(loaded_vs) == vs) {
        store_seqcst(&vc->loaded, true); // as uvm_switch
        write_cr3(V2P(vc->pml4)); // uvm_switch could not allocate it
    }
    for (;;) {
        struct vpage *vp = vpage_find(vs, va, false, NULL);
        uint64_t w = vp ? load_acquire(&vp->word) : 0;
        if (w & VP_LOCK) {
            sig = fault_locked(vs, vc, vp, va, err, fi, addr);
            break;
        }
        if (!(w & VP_MAPPED)) {
            int grown = ustack_grow(vs, va);
            if (grown > 0)
                continue;
            sig = grown < 0 ? grown : fault_fail(fi, SIGSEGV, SEGV_MAPERR, addr);
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
        enum fill f = fill_checked(vc, vp, va, w);
        if (f == FILL_NOMEM)
            sig = -ENOMEM;
        if (f != FILL_CHANGED)
            break;
    }
    epoch_exit();
    return sig;
}
