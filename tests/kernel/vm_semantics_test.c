// Address-space semantics: copy-on-write fork, shared memory across fork,
// fault signals (si_code, si_addr), mprotect (and the calls it decides without
// locking), MADV_DONTNEED, MAP_POPULATE, MAP_FIXED and MAP_FIXED_NOREPLACE.
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "sync/epoch.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "vmtest.h"

#define BASE 0x400000UL

KTEST(vm_cow_fork_private_pages)
{
    kmalloc_drain_all();
    page_drain_all_caches();
    size_t free0 = page_count_free();
    struct vmspace *p = vmspace_new();
    KREQUIRE(p);
    KCHECK_EQ(uvm_map(p, BASE, 4 * PGSIZE, VM_READ | VM_WRITE, UVM_FIXED), (long)BASE);
    KCHECK_EQ(uvm_write(p, BASE, "parent", 7), 0);
    KCHECK_EQ(uvm_write(p, BASE + PGSIZE, "second", 7), 0);
    struct vmspace *c = vmspace_fork(p);
    KREQUIRE(c);
    char buf[8];
    KCHECK_EQ(uvm_read(c, BASE, buf, 7), 0);
    KCHECK(strcmp(buf, "parent") == 0);
    KCHECK_EQ(uvm_page_pa(c, BASE), uvm_page_pa(p, BASE)); // shared until a write
    KCHECK_EQ(uvm_page_pa(c, BASE + 2 * PGSIZE), 0);      // untouched stays untouched
    // The child writes through a real fault: it gets its own copy.
    vmt_enter(c);
    KCHECK(vmt_touch(BASE, 0x6464646464646464UL));
    uint64_t v = 0;
    KCHECK(vmt_peek(BASE + PGSIZE, &v) && (char)v == 's');
    vmt_leave(c);
    KCHECK(uvm_page_pa(c, BASE) != uvm_page_pa(p, BASE));
    KCHECK_EQ(uvm_page_pa(c, BASE + PGSIZE), uvm_page_pa(p, BASE + PGSIZE)); // only read
    KCHECK_EQ(uvm_read(p, BASE, buf, 7), 0);
    KCHECK(strcmp(buf, "parent") == 0);
    // The parent writes the second page: the child keeps the old contents.
    vmt_enter(p);
    KCHECK(vmt_touch(BASE + PGSIZE, 0x5858585858585858UL));
    vmt_leave(p);
    KCHECK_EQ(uvm_read(c, BASE + PGSIZE, buf, 7), 0);
    KCHECK(strcmp(buf, "second") == 0);
    // The child exits first; the parent's copy-on-write pages are its own again.
    vmspace_put(c);
    uintptr_t pa = uvm_page_pa(p, BASE);
    KCHECK_EQ(uvm_write(p, BASE, "again", 6), 0);
    KCHECK_EQ(uvm_page_pa(p, BASE), pa); // no copy needed
    vmspace_put(p);
    kmalloc_drain_all();
    page_drain_all_caches();
    KCHECK(page_count_free() + 2 >= free0);
}

KTEST(vm_shared_memory_survives_fork)
{
    struct vmspace *p = vmspace_new();
    KREQUIRE(p);
    KCHECK_EQ(uvm_map(p, BASE, 2 * PGSIZE, VM_READ | VM_WRITE, UVM_FIXED | UVM_SHARED), (long)BASE);
    KCHECK_EQ(uvm_resident(p), 2); // shared memory exists before anyone forks
    struct vmspace *c = vmspace_fork(p);
    KREQUIRE(c);
    vmt_enter(c);
    KCHECK(vmt_touch(BASE + PGSIZE, 42));
    vmt_leave(c);
    uint64_t v = 0;
    KCHECK_EQ(uvm_read(p, BASE + PGSIZE, &v, 8), 0);
    KCHECK_EQ(v, 42);
    KCHECK_EQ(uvm_dontneed(p, BASE, 2 * PGSIZE), 0); // shared: contents stay
    KCHECK_EQ(uvm_read(c, BASE + PGSIZE, &v, 8), 0);
    KCHECK_EQ(v, 42);
    vmspace_put(p);
    KCHECK_EQ(uvm_read(c, BASE + PGSIZE, &v, 8), 0); // the child's reference keeps it
    KCHECK_EQ(v, 42);
    vmspace_put(c);
}

KTEST(vm_fault_signals_and_mprotect)
{
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    KCHECK_EQ(uvm_map(vs, BASE, 2 * PGSIZE, VM_READ, UVM_FIXED), (long)BASE);
    struct fault_info fi = {0, 0, 0};
    KCHECK_EQ(uvm_fault(vs, BASE + 2 * PGSIZE + 5, 2, &fi), SIGSEGV);
    KCHECK_EQ(fi.code, SEGV_MAPERR);
    KCHECK_EQ(fi.addr, BASE + 2 * PGSIZE + 5);
    KCHECK_EQ(uvm_fault(vs, BASE + 7, 2 /* write */, &fi), SIGSEGV);
    KCHECK_EQ(fi.code, SEGV_ACCERR);
    KCHECK_EQ(fi.addr, BASE + 7);
    KCHECK_EQ(uvm_fault(vs, 0xffff800000001000UL, 0, &fi), SIGSEGV);
    KCHECK_EQ(fi.code, SEGV_MAPERR);
    vmt_enter(vs);
    uint64_t v = 1;
    KCHECK(vmt_peek(BASE, &v) && v == 0);
    KCHECK(!vmt_touch(BASE, 1));                 // read-only
    KCHECK_EQ(uvm_protect(vs, BASE, PGSIZE, VM_READ | VM_WRITE), 0);
    KCHECK(vmt_touch(BASE, 7));                  // granted without a shootdown
    KCHECK_EQ(uvm_protect(vs, BASE, PGSIZE, VM_READ), 0);
    KCHECK(!vmt_touch(BASE, 8));                 // revoked: the stale entry is gone
    KCHECK(vmt_peek(BASE, &v) && v == 7);
    KCHECK_EQ(uvm_protect(vs, BASE, PGSIZE, 0), 0);
    KCHECK(!vmt_peek(BASE, &v));                 // PROT_NONE
    KCHECK_EQ(uvm_protect(vs, BASE, 3 * PGSIZE, VM_READ), -ENOMEM); // hole at the end
    KCHECK(!vmt_peek(BASE, &v));                 // ... and nothing changed
    vmt_leave(vs);
    vmspace_put(vs);
}

// mprotect decides some calls from a lock-free look (uvm_map.c, protect_peek): one
// that changes nothing, and one that asks write of a never-writable page. Those
// answers must be the locked path's: a hole anywhere still means -ENOMEM with
// nothing changed, and pages that differ still change.
KTEST(vm_mprotect_unchanged_or_refused)
{
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    KCHECK_EQ(uvm_map(vs, BASE, 4 * PGSIZE, VM_READ | VM_WRITE, UVM_FIXED), (long)BASE);
    vmt_enter(vs);
    KCHECK(vmt_touch(BASE, 3));
    uint64_t v = 0;
    int prot = 0;
    KCHECK_EQ(uvm_protect(vs, BASE, 4 * PGSIZE, VM_READ | VM_WRITE), 0); // nothing to change
    KCHECK(vmt_touch(BASE + PGSIZE, 4));
    KCHECK(vmt_peek(BASE, &v) && v == 3);
    // Same protection up to a hole at the end, or in the middle: -ENOMEM.
    KCHECK_EQ(uvm_protect(vs, BASE, 5 * PGSIZE, VM_READ | VM_WRITE), -ENOMEM);
    KCHECK_EQ(uvm_unmap(vs, BASE + 2 * PGSIZE, PGSIZE), 0);
    KCHECK_EQ(uvm_protect(vs, BASE, 4 * PGSIZE, VM_READ | VM_WRITE), -ENOMEM);
    KCHECK_EQ(uvm_protect(vs, BASE, 4 * PGSIZE, VM_READ), -ENOMEM);
    KCHECK(vmt_touch(BASE, 5));                  // ... and nothing changed
    // Pages that differ change, those that match stay (and stay readable).
    KCHECK_EQ(uvm_protect(vs, BASE, PGSIZE, VM_READ), 0);
    KCHECK_EQ(uvm_protect(vs, BASE, 2 * PGSIZE, VM_READ), 0);
    KCHECK(!vmt_touch(BASE + PGSIZE, 6));
    KCHECK(vmt_peek(BASE + PGSIZE, &v) && v == 4);
    KCHECK(uvm_mapped(vs, BASE, &prot) && prot == VM_READ);
    KCHECK_EQ(uvm_protect(vs, BASE, 2 * PGSIZE, VM_READ), 0); // both match now
    KCHECK(!vmt_touch(BASE, 7));
    KCHECK(vmt_peek(BASE, &v) && v == 5);
    KCHECK_EQ(uvm_protect(vs, BASE + 2 * PGSIZE, PGSIZE, VM_READ), -ENOMEM); // the hole alone
    // A page that may never be written: -EACCES for write, and the others in the
    // call keep their protection; asking what it has already is fine.
    KCHECK_EQ(uvm_map(vs, BASE + 2 * PGSIZE, PGSIZE, VM_READ, UVM_FIXED | UVM_NOWRITE),
              (long)(BASE + 2 * PGSIZE));
    KCHECK_EQ(uvm_protect(vs, BASE, 3 * PGSIZE, VM_READ | VM_WRITE), -EACCES);
    KCHECK(!vmt_touch(BASE, 8));
    KCHECK_EQ(uvm_protect(vs, BASE, 3 * PGSIZE, VM_READ), 0);
    KCHECK_EQ(uvm_protect(vs, BASE + 2 * PGSIZE, PGSIZE, 0), 0);
    KCHECK_EQ(uvm_protect(vs, BASE + 2 * PGSIZE, 2 * PGSIZE, VM_READ | VM_WRITE), -EACCES);
    KCHECK(uvm_mapped(vs, BASE + 3 * PGSIZE, &prot) && prot == (VM_READ | VM_WRITE));
    KCHECK_EQ(uvm_protect(vs, BASE + 2 * PGSIZE, PGSIZE, VM_READ), 0);
    vmt_leave(vs);
    vmspace_put(vs);
}

KTEST(vm_dontneed_populate_fixed)
{
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    KCHECK_EQ(uvm_map(vs, BASE, 8 * PGSIZE, VM_READ | VM_WRITE, UVM_FIXED | UVM_POPULATE), (long)BASE);
    KCHECK_EQ(uvm_resident(vs), 8);
    vmt_enter(vs);
    KCHECK(vmt_touch(BASE + 3 * PGSIZE, 99));
    KCHECK_EQ(uvm_dontneed(vs, BASE + 2 * PGSIZE, 2 * PGSIZE), 0);
    KCHECK_EQ(uvm_resident(vs), 6);
    uint64_t v = 1;
    KCHECK(vmt_peek(BASE + 3 * PGSIZE, &v) && v == 0); // zero-fill again
    KCHECK_EQ(uvm_dontneed(vs, BASE + 7 * PGSIZE, 2 * PGSIZE), -ENOMEM); // runs past the end
    // MAP_FIXED_NOREPLACE refuses, MAP_FIXED replaces with fresh zero pages.
    KCHECK_EQ(uvm_map(vs, BASE + 7 * PGSIZE, 2 * PGSIZE, VM_READ, UVM_NOREPLACE), -EEXIST);
    KCHECK(vmt_touch(BASE + 5 * PGSIZE, 5));
    KCHECK_EQ(uvm_map(vs, BASE + 5 * PGSIZE, PGSIZE, VM_READ | VM_WRITE, UVM_FIXED), (long)(BASE + 5 * PGSIZE));
    KCHECK(vmt_peek(BASE + 5 * PGSIZE, &v) && v == 0);
    KCHECK_EQ(uvm_map(vs, BASE + 8 * PGSIZE, PGSIZE, VM_READ, UVM_NOREPLACE), (long)(BASE + 8 * PGSIZE));
    // Non-fixed placement honours a free hint and never overlaps.
    long a = uvm_map(vs, BASE, PGSIZE, VM_READ, 0);
    KCHECK(a > 0 && (a >= (long)(BASE + 9 * PGSIZE) || a + (long)PGSIZE <= (long)BASE));
    long b = uvm_map(vs, 0x900000, PGSIZE, VM_READ, 0);
    KCHECK_EQ(b, 0x900000);
    vmt_leave(vs);
    vmspace_put(vs);
}

// munmap gives the radix tree's leaves and nodes back (a grace period later, and
// for a leaf it empties only in part, at the CPU's next tick): mapping, touching
// and unmapping pages scattered over 32 GiB, over and over, leaves no memory
// behind, although each of those pages needs a leaf and a node of its own.
static void settle(void)
{
    epoch_synchronize();
    epoch_synchronize();
    epoch_barrier();
    kmalloc_drain_all();
    page_drain_all_caches();
}

KTEST(vm_munmap_frees_tree_nodes)
{
    const uintptr_t sparse = 0x100000000UL, big = 0x40000000UL;
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    vmt_enter(vs);
    KCHECK_EQ(uvm_map(vs, BASE, PGSIZE, VM_READ | VM_WRITE, UVM_FIXED), (long)BASE);
    KCHECK_EQ(uvm_write(vs, BASE, "x", 1), 0);
    KCHECK_EQ(uvm_unmap(vs, BASE, PGSIZE), 0);
    settle();
    size_t free0 = page_count_free();
    for (int round = 0; round < 3; round++) {
        for (uintptr_t k = 0; k < 32; k++) {
            uintptr_t va = sparse + (k << 30) + k * PGSIZE;
            KCHECK_EQ(uvm_map(vs, va, PGSIZE, VM_READ | VM_WRITE, UVM_FIXED), (long)va);
            KCHECK_EQ(uvm_write(vs, va, &k, sizeof k), 0);
        }
        for (uintptr_t k = 0; k < 32; k++)
            KCHECK_EQ(uvm_unmap(vs, sparse + (k << 30) + k * PGSIZE, PGSIZE), 0);
        // Whole leaves at once: given back by the munmap itself.
        size_t len = 16 * 64 * PGSIZE;
        KCHECK_EQ(uvm_map(vs, big, len, VM_READ | VM_WRITE, UVM_FIXED), (long)big);
        for (size_t off = 0; off < len; off += 64 * PGSIZE)
            KCHECK_EQ(uvm_write(vs, big + off, "y", 1), 0);
        KCHECK_EQ(uvm_unmap(vs, big, len), 0);
    }
    settle();
    size_t free1 = page_count_free();
    KCHECK(free1 + 4 >= free0); // was about 85 pages short when nodes were never freed
    // The tree still works where nodes went.
    KCHECK_EQ(uvm_map(vs, sparse, PGSIZE, VM_READ | VM_WRITE, UVM_FIXED), (long)sparse);
    KCHECK(vmt_touch(sparse, 7));
    uint64_t v = 0;
    KCHECK(vmt_peek(sparse, &v) && v == 7);
    vmt_leave(vs);
    vmspace_put(vs);
}
