// Per-CPU page tables (kernel/mm/uvm_pgtable.c): a range operation clears the
// page's entry in the table of every CPU that mapped it, through the look at
// one block's leaf tables (struct ptwalk), kept in the walk itself while at
// most PTWALK_FEW CPUs have one there and in a page beyond that; entries of a
// neighbouring page on the same line stay. White-box: the test reads the
// per-CPU tables.
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "mm/uvm_internal.h"
#include "sync/atomic.h"
#include "uapi/errno.h"
#include "vmtest.h"

#define BASE 0x400000UL

static struct vmspace *VS;

// On another CPU: load VS, read the page at arg, switch away (the entry stays
// in that CPU's table).
static void peek_there(void *arg)
{
    uint64_t v;
    vmt_enter(VS);
    vmt_peek((uintptr_t)arg, &v);
    vmt_leave(VS);
}

static void peek_on(int c, uintptr_t va)
{
    thread_join(vmt_on_cpu(c, "vmt-peek", peek_there, (void *)va));
}

// Whether CPU c's table for VS has a present entry for va.
static bool has_entry(int c, uintptr_t va)
{
    struct vmcore *vc = load_acquire(&VS->core[c]);
    pte_t *e = vc ? pte_find(vc->pml4, va, false) : NULL;
    return e && (load_relaxed(e) & PTE_P);
}

// CPUs 0..upto map BASE (and CPU 1 its neighbour), then op(BASE) must leave
// no entry for BASE in any table and the neighbour's in CPU 1's.
static void clears_everywhere(int upto, int (*op)(void))
{
    KREQUIRE(vmt_pin(0) == 0);
    KREQUIRE((VS = vmspace_new()) != NULL);
    vmt_enter(VS);
    uintptr_t next = BASE + PGSIZE; // on the same line of every table
    KCHECK_EQ(uvm_map(VS, BASE, 2 * PGSIZE, VM_READ | VM_WRITE, UVM_FIXED), (long)BASE);
    KCHECK(vmt_touch(BASE, 1));
    KCHECK(vmt_touch(next, 2));
    peek_on(1, next);
    for (int c = 1; c <= upto; c++)
        peek_on(c, BASE);
    for (int c = 0; c <= upto; c++)
        KCHECK(has_entry(c, BASE));
    KCHECK_EQ(op(), 0);
    for (int c = 0; c <= upto; c++)
        KCHECK(!has_entry(c, BASE));
    KCHECK(has_entry(1, next));
    KCHECK_EQ(uvm_unmap(VS, next, PGSIZE), 0);
    KCHECK(!has_entry(0, next) && !has_entry(1, next));
    vmt_leave(VS);
    vmspace_put(VS);
    KCHECK_EQ(thread_set_affinity(thread_current(), &cpu_online_mask), 0);
}

static int unmap_base(void) { return uvm_unmap(VS, BASE, PGSIZE); }
static int protect_base(void) { return uvm_protect(VS, BASE, PGSIZE, VM_READ); }

static bool enough_cpus(void)
{
    if (ncpu_online >= 2)
        return true;
    kprintf("# needs 2 CPUs; nothing to check\n");
    return false;
}

KTEST(vm_pgtable_unmap_clears_every_cpus_entry)
{
    if (!enough_cpus())
        return;
    clears_everywhere(MIN(ncpu_online - 1, PTWALK_FEW - 1), unmap_base);
    if (ncpu_online > PTWALK_FEW) // more tables in the block than the walk itself keeps
        clears_everywhere(MIN(ncpu_online - 1, PTWALK_FEW + 3), unmap_base);
}

// mprotect to read-only must take writable entries from every CPU: a store
// through a stale one would get past the protection.
KTEST(vm_pgtable_mprotect_clears_every_cpus_entry)
{
    if (!enough_cpus())
        return;
    clears_everywhere(MIN(ncpu_online - 1, PTWALK_FEW + 3), protect_base);
}

// 16 pages, two lines of every table: CPU 0 touched them all, each other CPU
// maps one of them (on either line, some on the same one), CPU 1 two. op on
// the whole range must leave no entry for any of them in any table: the walk
// looks at the tables' entries a line at a time.
static void clears_every_line(int (*op)(void))
{
    enum { PAGES = 16 };
    int upto = MIN(ncpu_online - 1, PTWALK_FEW + 3);
    KREQUIRE(vmt_pin(0) == 0);
    KREQUIRE((VS = vmspace_new()) != NULL);
    vmt_enter(VS);
    KCHECK_EQ(uvm_map(VS, BASE, PAGES * PGSIZE, VM_READ | VM_WRITE, UVM_FIXED), (long)BASE);
    for (int i = 0; i < PAGES; i++)
        KCHECK(vmt_touch(BASE + i * PGSIZE, i));
    peek_on(1, BASE + (PAGES - 1) * PGSIZE);
    for (int c = 1; c <= upto; c++)
        peek_on(c, BASE + (c * 5 % PAGES) * PGSIZE);
    KCHECK(has_entry(1, BASE + (PAGES - 1) * PGSIZE) && has_entry(1, BASE + 5 * PGSIZE));
    KCHECK_EQ(op(), 0);
    for (int c = 0; c <= upto; c++)
        for (int i = 0; i < PAGES; i++)
            KCHECK(!has_entry(c, BASE + i * PGSIZE));
    vmt_leave(VS);
    vmspace_put(VS);
    KCHECK_EQ(thread_set_affinity(thread_current(), &cpu_online_mask), 0);
}

static int unmap_16(void) { return uvm_unmap(VS, BASE, 16 * PGSIZE); }
static int dontneed_16(void) { return uvm_dontneed(VS, BASE, 16 * PGSIZE); }

KTEST(vm_pgtable_range_clears_every_line)
{
    if (!enough_cpus())
        return;
    clears_every_line(unmap_16);
    clears_every_line(dontneed_16);
}
