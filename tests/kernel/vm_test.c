// Address-space semantics: copy-on-write fork, shared memory across fork,
// fault signals (si_code, si_addr), mprotect (and the calls it decides without
// locking), MADV_DONTNEED, MAP_POPULATE, MAP_FIXED and MAP_FIXED_NOREPLACE,
// munmap giving the tree back.
//
// Targeted shootdowns and asynchronous unmap: munmap of pages only this CPU
// touched sends no IPI; pages another CPU touched cost exactly that CPU; a CPU
// that has the space loaded but never touched the page is left alone, and so is
// one that touched it and switched away since;
// MADV_UNMAP_ASYNC sends nothing, and its pages are not freed while a writer on
// another CPU can still reach them through a stale translation.
//
// An exec that fails late against a truncate of its program.
// (File mappings, fork against truncate, stress and benchmarks have files of
// their own: vm_NAME_test.c, bench_vm_test.c.)
#include "fstest.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "mm/tlb.h"
#include "proc/proc.h"
#include "sync/atomic.h"
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

// Placement starts a mapping of 8 pages or more on a page-table line (8
// entries), so that slices of whole lines share no line of any CPU's table;
// smaller ones are placed on any page. Each after a 1-page mapping, which
// leaves the next free page off a line boundary.
KTEST(vm_placement_starts_line_sized_mappings_on_lines)
{
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    vmt_enter(vs);
    const size_t line = 8 * PGSIZE, sizes[] = {8, 16, 9, 4, 1, 300};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        long one = uvm_map(vs, 0, PGSIZE, VM_READ, 0);
        long a = uvm_map(vs, 0, sizes[i] * PGSIZE, VM_READ | VM_WRITE, 0);
        KCHECK(one > 0 && a > 0);
        if (sizes[i] >= 8)
            KCHECK_EQ(a % line, 0);
        else // not moved off the page below the last mapping
            KCHECK_EQ(a + sizes[i] * PGSIZE, (size_t)one);
        KCHECK(vmt_touch(a, 1) && vmt_touch(a + (sizes[i] - 1) * PGSIZE, 2));
    }
    vmt_leave(vs);
    vmspace_put(vs);
}

// A CPU that keeps mapping and unmapping a few pages of a leaf (a thread's own
// slice of a shared region) keeps the leaf while it does (trim_tick: its tick
// does not read the neighbours' descriptors), and gives it back once it has
// stopped for a tick: 200 rounds of 4 pages, then quiet ticks, leave nothing.
KTEST(vm_partial_unmap_over_and_over_then_trimmed)
{
    const uintptr_t va = 0x300000000UL; // alone in its leaf and nodes
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    vmt_enter(vs);
    KCHECK_EQ(uvm_map(vs, BASE, PGSIZE, VM_READ | VM_WRITE, UVM_FIXED), (long)BASE);
    KCHECK(vmt_touch(BASE, 1)); // this CPU's tables and the tree's top exist
    settle();
    size_t free0 = page_count_free();
    for (int round = 0; round < 200; round++) {
        KCHECK_EQ(uvm_map(vs, va, 4 * PGSIZE, VM_READ | VM_WRITE, UVM_FIXED), (long)va);
        KCHECK(vmt_touch(va + (round % 4) * PGSIZE, (uint64_t)round));
        KCHECK_EQ(round % 2 ? uvm_unmap_async(vs, va, 4 * PGSIZE) : uvm_unmap(vs, va, 4 * PGSIZE), 0);
    }
    for (uint64_t e = epoch_current(); epoch_current() < e + 4;)
        pause(); // ticks on this CPU, with the space loaded
    settle();
    // This CPU's two new page-table pages stay with the space; a leaf and node
    // kept would make it 4 pages.
    KCHECK(fst_pages_back(free0, page_count_free(), 2));
    vmt_leave(vs);
    vmspace_put(vs);
}

// ---- shootdowns and asynchronous unmap ------------------------------------------

static struct vmspace *VS;
static volatile int phase;       // helper's instructions
static volatile int helper_state; // what the helper has done
static volatile uint64_t writes_ok, writes_after;
static volatile bool saw_free_page;
static volatile uintptr_t watched_pa;

// What the helper does before the unmap.
enum { LOAD_ONLY, TOUCH, TOUCH_AND_LEAVE };

// Helper on another CPU: load VS, touch page BASE (or not), then stay loaded
// (or switch away) until told to end.
static void toucher(void *arg)
{
    int what = (int)(uintptr_t)arg;
    vmt_enter(VS);
    uint64_t v;
    if (what != LOAD_ONLY)
        vmt_peek(BASE, &v);
    if (what == TOUCH_AND_LEAVE)
        vmt_leave(VS);
    store_release(&helper_state, 1);
    while (load_acquire(&phase) == 0)
        pause();
    if (what != TOUCH_AND_LEAVE)
        vmt_leave(VS);
}

static int64_t unmap_with_helper(int what, bool async)
{
    phase = 0;
    helper_state = 0;
    KCHECK_EQ(uvm_map(VS, BASE, PGSIZE, VM_READ | VM_WRITE, UVM_FIXED), (long)BASE);
    KCHECK(vmt_touch(BASE, 1));
    struct thread *t = vmt_on_cpu(1, "vmt-touch", toucher, (void *)(uintptr_t)what);
    while (load_acquire(&helper_state) == 0)
        sched_yield();
    push_off(); // count only this call's IPIs, on this CPU
    int64_t before = vmt_ipis_sent_here();
    KCHECK_EQ(async ? uvm_unmap_async(VS, BASE, PGSIZE) : uvm_unmap(VS, BASE, PGSIZE), 0);
    int64_t sent = vmt_ipis_sent_here() - before;
    pop_off();
    store_release(&phase, 1);
    thread_join(t);
    return sent;
}

KTEST(vm_munmap_ipis_only_to_users)
{
    KREQUIRE(vmt_pin(0) == 0);
    KREQUIRE((VS = vmspace_new()) != NULL);
    vmt_enter(VS);
    // Touched here only: no IPI.
    KCHECK_EQ(uvm_map(VS, BASE, 16 * PGSIZE, VM_READ | VM_WRITE, UVM_FIXED), (long)BASE);
    for (int i = 0; i < 16; i++)
        KCHECK(vmt_touch(BASE + i * PGSIZE, i));
    push_off();
    int64_t before = vmt_ipis_sent_here();
    KCHECK_EQ(uvm_unmap(VS, BASE, 16 * PGSIZE), 0);
    KCHECK_EQ(uvm_protect(VS, BASE, PGSIZE, VM_READ), -ENOMEM);
    KCHECK_EQ(vmt_ipis_sent_here() - before, 0);
    pop_off();
    if (ncpu_online >= 2) {
        uint64_t got = tlb_shootdowns_received(1);
        KCHECK_EQ(unmap_with_helper(TOUCH, false), 1);     // the other CPU used it
        KCHECK_EQ(tlb_shootdowns_received(1), got + 1);
        KCHECK_EQ(unmap_with_helper(LOAD_ONLY, false), 0); // loaded there, never touched
        KCHECK_EQ(unmap_with_helper(TOUCH_AND_LEAVE, false), 0); // flushed when it left
        KCHECK_EQ(tlb_shootdowns_received(1), got + 1);
        KCHECK_EQ(unmap_with_helper(TOUCH, true), 0);      // async: nothing sent
    }
    vmt_leave(VS);
    vmspace_put(VS);
    KCHECK_EQ(thread_set_affinity(thread_current(), &cpu_online_mask), 0);
}

// The writer keeps storing through its translation of BASE until a store faults;
// after each successful store it checks that the page is not free.
static void writer(void *arg)
{
    (void)arg;
    vmt_enter(VS);
    uint64_t i = 1;
    while (vmt_touch(BASE + 64, i)) {
        if (load_acquire(&phase))
            writes_after++; // a doomed write: the mapping is already gone
        uintptr_t pa = watched_pa;
        if (pa && page_free_stamped(P2V(pa)))
            saw_free_page = true;
        store_release(&writes_ok, i++);
    }
    store_release(&helper_state, 2);
    vmt_leave(VS);
}

KTEST(vm_async_unmap_never_frees_a_reachable_page)
{
    if (ncpu_online < 2) {
        kprintf("# needs a second CPU for the writer\n");
        return;
    }
    KREQUIRE((VS = vmspace_new()) != NULL);
    phase = 0;
    helper_state = 0;
    writes_ok = writes_after = 0;
    saw_free_page = false;
    watched_pa = 0;
    KCHECK_EQ(uvm_map(VS, BASE, PGSIZE, VM_READ | VM_WRITE, UVM_FIXED), (long)BASE);
    struct thread *t = vmt_on_cpu(1, "vmt-writer", writer, NULL);
    while (load_acquire(&writes_ok) < 1000)
        sched_yield();
    uintptr_t pa = uvm_page_pa(VS, BASE);
    KREQUIRE(pa != 0);
    watched_pa = pa;
    int64_t before = kstats_ipis_sent();
    KCHECK_EQ(uvm_unmap_async(VS, BASE, PGSIZE), 0);
    store_release(&phase, 1);
    KCHECK(!uvm_mapped(VS, BASE, NULL));
    // Until the writer's CPU flushes, the page must stay allocated.
    while (load_acquire(&helper_state) != 2) {
        KCHECK(!page_free_stamped(P2V(pa)));
        pause();
    }
    KCHECK(kstats_ipis_sent() - before <= 1); // at most the scheduler's own xcalls
    thread_join(t);
    KCHECK(!saw_free_page);
    kprintf("# doomed writes after MADV_UNMAP_ASYNC returned: %lu\n", (unsigned long)writes_after);
    // A grace period later the page is back with the allocator.
    epoch_synchronize();
    epoch_barrier();
    KCHECK(page_free_stamped(P2V(pa)));
    vmspace_put(VS);
}

// N CPUs each unmap, asynchronously, pages that every CPU touched: no call sends
// an IPI.
static volatile int started, stage;
static volatile int64_t ipis_during;

static void async_worker(void *arg)
{
    int me = (int)(uintptr_t)arg, n = ncpu_online;
    vmt_enter(VS);
    uint64_t v;
    add_fetch(&started, 1);
    while (load_acquire(&started) < n)
        pause();
    for (int c = 0; c < n; c++) // touch everybody's page
        vmt_peek(BASE + c * PGSIZE, &v);
    add_fetch(&stage, 1);
    while (load_acquire(&stage) < n)
        pause();
    push_off();
    int64_t before = vmt_ipis_sent_here();
    uvm_unmap_async(VS, BASE + me * PGSIZE, PGSIZE);
    fetch_add_relaxed(&ipis_during, vmt_ipis_sent_here() - before);
    pop_off();
    add_fetch(&stage, 1);
    while (load_acquire(&stage) < 2 * n)
        pause();
    vmt_leave(VS);
}

KTEST(vm_async_unmap_from_all_cpus_sends_no_ipi)
{
    int n = ncpu_online;
    KREQUIRE((VS = vmspace_new()) != NULL);
    started = stage = 0;
    ipis_during = 0;
    KCHECK_EQ(uvm_map(VS, BASE, n * PGSIZE, VM_READ | VM_WRITE, UVM_FIXED | UVM_POPULATE), (long)BASE);
    struct thread *t[NCPU_MAX];
    for (int c = 0; c < n; c++)
        KREQUIRE((t[c] = vmt_on_cpu(c, "vmt-async", async_worker, (void *)(uintptr_t)c)) != NULL);
    for (int c = 0; c < n; c++)
        thread_join(t[c]);
    KCHECK_EQ(ipis_during, 0);
    for (int c = 0; c < n; c++)
        KCHECK(!uvm_mapped(VS, BASE + c * PGSIZE, NULL));
    vmspace_put(VS);
}

// ---- exec against truncate ------------------------------------------------------

// An exec that fails after it mapped the program (too many arguments: the
// stack is built last) drops its new space while a truncate of the program may
// hold it (image_load): the space must outlive the truncate's walk, and every
// page comes back.
#define EXEC_ROUNDS 50
#define MAX_EXEC_ARGS 1024 // elf.c: more is E2BIG
static char *prog_data;
static size_t prog_len;
static const char **big_argv;
static volatile int e2big, exec_errors;
static struct inode *prog_ip;

static void exec_error(void) { fetch_add_relaxed(&exec_errors, 1); }

static void exec_vs_truncate(int i, void *arg)
{
    (void)arg;
    for (int r = 0; r < EXEC_ROUNDS; r++) {
        if (i == 0) {
            struct proc *p;
            int err = proc_spawn_file("/t_vmexectrunc/prog", big_argv, NULL, 0, &p);
            if (err == -E2BIG)
                e2big++;
            else if (err != -ENOEXEC && err != -EFAULT)
                exec_error();
        } else if (fs_truncate(prog_ip, prog_len / 2) != 0 ||
                   fs_write(prog_ip, prog_data + prog_len / 2, prog_len - prog_len / 2, prog_len / 2) !=
                       (int64_t)(prog_len - prog_len / 2)) {
            exec_error();
        }
    }
}

KTEST(vm_exec_failure_vs_truncate)
{
    if (ncpu_online < 2) {
        kprintf("# needs 2 CPUs; nothing to check\n");
        return;
    }
    struct inode *d = fst_scratch("t_vmexectrunc"), *bin;
    KREQUIRE(d);
    KREQUIRE(fs_lookup(NULL, "/bin/true", 0, &bin) == 0);
    struct fs_stat st;
    KREQUIRE(fs_stat(bin, STATX_SIZE, &st) == 0 && st.size > PGSIZE);
    prog_len = st.size;
    prog_data = kmalloc(prog_len);
    big_argv = kmalloc((MAX_EXEC_ARGS + 2) * sizeof *big_argv);
    KREQUIRE(prog_data && big_argv);
    KREQUIRE(fs_read(bin, prog_data, prog_len, 0) == (int64_t)prog_len);
    fs_iput(bin);
    for (int i = 0; i <= MAX_EXEC_ARGS; i++)
        big_argv[i] = "x";
    big_argv[MAX_EXEC_ARGS + 1] = NULL;
    KREQUIRE(fs_create(d, "prog", 0755, FS_EXCL, &prog_ip) == 0);
    KREQUIRE(fs_write(prog_ip, prog_data, prog_len, 0) == (int64_t)prog_len);
    // The first exec makes the file's write count (fs/writecount.c), which
    // stays with the file: make it now, or a slab page it may need counts.
    KREQUIRE(fs_deny_write(prog_ip) == 0);
    fs_allow_write(prog_ip);
    exec_errors = 0;
    size_t free0 = fst_free_pages();
    e2big = 0;
    KCHECK(fst_run(2, exec_vs_truncate, NULL));
    kprintf("# %d of %d execs failed late (E2BIG), %d errors\n", e2big, EXEC_ROUNDS, exec_errors);
    KCHECK(e2big > 0);
    KCHECK_EQ(exec_errors, 0);
    KCHECK_EQ(fst_free_pages(), free0);
    fs_iput(prog_ip);
    prog_ip = NULL;
    KCHECK_EQ(fs_unlink(d, "prog"), 0);
    fs_iput(d);
    fst_rm_rf("/t_vmexectrunc");
    kfree(prog_data);
    kfree(big_argv);
}
