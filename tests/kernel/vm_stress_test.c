// Stress: one address space loaded on every CPU; each CPU loops mmap (non-fixed),
// touch, check, mprotect, and munmap (synchronous or MADV_UNMAP_ASYNC), while
// peeking at its neighbour's latest mapping. Invariants: a fresh mapping reads as
// zeros, what a CPU wrote it reads back (no two mappings overlap), and when all
// is done no page is resident and every page came back to the allocator.
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "sync/atomic.h"
#include "sync/epoch.h"
#include "testutil.h"
#include "uapi/errno.h"
#include "vmtest.h"

#define ROUNDS 150
#define MAXPAGES 6

static struct vmspace *VS;
static volatile int failures;
static volatile uintptr_t latest[NCPU_MAX];

static void fail(void) { fetch_add_relaxed(&failures, 1); }

static void stress_worker(void *arg)
{
    int me = (int)(uintptr_t)arg, n = ncpu_online;
    uint64_t seed = 0x9e3779b97f4a7c15ULL * (me + 1);
    vmt_enter(VS);
    for (int r = 0; r < ROUNDS; r++) {
        size_t np = 1 + rnd(&seed) % MAXPAGES;
        long a = uvm_map(VS, 0, np * PGSIZE, VM_READ | VM_WRITE, 0);
        if (a < 0) {
            fail();
            continue;
        }
        uint64_t tag = (uint64_t)me << 32 | r, v;
        for (size_t i = 0; i < np; i++)
            if (!vmt_peek(a + i * PGSIZE, &v) || v != 0 || !vmt_touch(a + i * PGSIZE + 8, tag + i))
                fail();
        latest[me] = a;
        uintptr_t other = latest[(me + 1) % n];
        if (other)
            vmt_peek(other + 8, &v); // may fault if already unmapped: fine
        if (rnd(&seed) % 4 == 0 && uvm_protect(VS, a, PGSIZE, VM_READ) != 0)
            fail();
        for (size_t i = 0; i < np; i++)
            if (!vmt_peek(a + i * PGSIZE + 8, &v) || v != tag + i)
                fail();
        latest[me] = 0;
        bool async = rnd(&seed) % 2;
        if ((async ? uvm_unmap_async(VS, a, np * PGSIZE) : uvm_unmap(VS, a, np * PGSIZE)) != 0)
            fail();
    }
    vmt_leave(VS);
}

static void run_stress(void)
{
    int n = ncpu_online;
    struct thread *t[NCPU_MAX];
    KREQUIRE((VS = vmspace_new()) != NULL);
    failures = 0;
    memset((void *)latest, 0, sizeof latest);
    for (int c = 0; c < n; c++)
        KREQUIRE((t[c] = vmt_on_cpu(c, "vmt-stress", stress_worker, (void *)(uintptr_t)c)) != NULL);
    for (int c = 0; c < n; c++)
        thread_join(t[c]);
    KCHECK_EQ(failures, 0);
    KCHECK_EQ(uvm_resident(VS), 0);
    vmspace_put(VS);
    // Deferred frees run on each unmapping CPU's tick a grace period later.
    epoch_synchronize();
    epoch_synchronize();
    sched_sleep_until(nsec_now() + 50000000);
    kmalloc_drain_all();
    page_drain_all_caches();
}

// The first run warms per-CPU caches that keep pages; the second must give back
// every page it took, up to what the kernel-stack caches keep: a worker's stack
// is taken from the creating CPU's cache but freed into its own CPU's, so a
// couple of stacks per CPU can stay out (independent of ROUNDS: measured).
KTEST(vm_stress_all_cpus)
{
    run_stress();
    size_t free0 = page_count_free(), slack = 4 + 2 * KSTACK_PAGES * ncpu_online;
    run_stress();
    if (page_count_free() < free0)
        kprintf("# %lu pages not back\n", (unsigned long)(free0 - page_count_free()));
    KCHECK(page_count_free() + slack >= free0);
}

// Every CPU maps, touches and unmaps its own pages of the same few radix leaves
// (page k of a leaf belongs to CPU k % n), so munmaps keep emptying leaves that
// other CPUs are mapping into, faulting in and unmapping at the same time
// (tree_trim against range_lock and faults). A page reads back what its CPU
// wrote, a fresh page reads zeros, and a page a CPU never mapped faults.
#define LEAF_BASE 0x7000000000UL
#define LEAF_ROUNDS 1500

static void leaf_worker(void *arg)
{
    int me = (int)(uintptr_t)arg, n = ncpu_online;
    uint64_t seed = 0x2545f4914f6cdd1dULL * (me + 1), v;
    vmt_enter(VS);
    for (int r = 0; r < LEAF_ROUNDS; r++) {
        uintptr_t leaf = LEAF_BASE + (rnd(&seed) % 4) * 64 * PGSIZE;
        uintptr_t a = leaf + ((rnd(&seed) % (64 / n ? 64 / n : 1)) * n + me) * PGSIZE;
        if (uvm_map(VS, a, PGSIZE, VM_READ | VM_WRITE, UVM_FIXED) != (long)a) {
            fail();
            continue;
        }
        uint64_t tag = (uint64_t)me << 32 | r;
        if (!vmt_peek(a, &v) || v != 0 || !vmt_touch(a, tag) || !vmt_peek(a, &v) || v != tag)
            fail();
        if (uvm_unmap(VS, a, PGSIZE) != 0 || vmt_peek(a, &v))
            fail();
    }
    vmt_leave(VS);
}

KTEST(vm_stress_shared_leaves)
{
    int n = ncpu_online;
    struct thread *t[NCPU_MAX];
    KREQUIRE((VS = vmspace_new()) != NULL);
    failures = 0;
    for (int c = 0; c < n; c++)
        KREQUIRE((t[c] = vmt_on_cpu(c, "vmt-leaf", leaf_worker, (void *)(uintptr_t)c)) != NULL);
    for (int c = 0; c < n; c++)
        thread_join(t[c]);
    KCHECK_EQ(failures, 0);
    KCHECK_EQ(uvm_resident(VS), 0);
    vmspace_put(VS);
}
