// Targeted shootdowns and asynchronous unmap: munmap of pages only this CPU
// touched sends no IPI; pages another CPU touched cost exactly that CPU; a CPU
// that has the space loaded but never touched the page is left alone, and so is
// one that touched it and switched away since;
// MADV_UNMAP_ASYNC sends nothing, and its pages are not freed while a writer on
// another CPU can still reach them through a stale translation.
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "mm/tlb.h"
#include "sync/atomic.h"
#include "sync/epoch.h"
#include "uapi/errno.h"
#include "vmtest.h"

#define BASE 0x400000UL

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
    cpumask_t me;
    cpumask_clear(&me);
    cpumask_set(&me, 0);
    KREQUIRE(thread_set_affinity(thread_current(), &me) == 0);
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
