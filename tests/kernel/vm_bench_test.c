// Benchmark: mmap + touch + munmap per CPU, one address space loaded on every
// CPU (a multi-threaded process), synchronous munmap vs MADV_UNMAP_ASYNC.
// "local": each CPU touches only its own mappings (sync munmap needs no IPI
// either). "shared": each CPU also reads its neighbour's latest mapping, so the
// neighbour's CPU caches translations of it and a synchronous munmap must shoot
// it down. Reports ops/s per CPU and IPIs per operation (`make bench`).
#include "ktest.h"
#include "mm.h"
#include "vmtest.h"

#define OPS 300
#define NPAGES 4

static struct vmspace *VS;
static volatile int failures, ready, go;
static volatile uintptr_t latest[NCPU_MAX];
static bool async, shared;

static void bench_worker(void *arg)
{
    int me = (int)(uintptr_t)arg, n = ncpu_online;
    vmt_enter(VS);
    __atomic_fetch_add(&ready, 1, __ATOMIC_ACQ_REL);
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        pause();
    uint64_t v;
    for (int k = 0; k < OPS; k++) {
        long a = uvm_map(VS, 0, NPAGES * PGSIZE, VM_READ | VM_WRITE, 0);
        if (a < 0) {
            __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
            continue;
        }
        for (int i = 0; i < NPAGES; i++)
            vmt_touch(a + i * PGSIZE, k);
        if (shared) {
            latest[me] = a;
            uintptr_t o = latest[(me + 1) % n];
            if (o)
                vmt_peek(o, &v); // may fault once unmapped: fine
        }
        int err = async ? uvm_unmap_async(VS, a, NPAGES * PGSIZE) : uvm_unmap(VS, a, NPAGES * PGSIZE);
        if (err)
            __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
    }
    vmt_leave(VS);
}

static void run(const char *name)
{
    int n = ncpu_online;
    VS = vmspace_new();
    KREQUIRE(VS);
    failures = ready = go = 0;
    memset((void *)latest, 0, sizeof latest);
    struct thread *t[NCPU_MAX];
    for (int c = 0; c < n; c++)
        KREQUIRE((t[c] = vmt_on_cpu(c, "vmt-bench", bench_worker, (void *)(uintptr_t)c)) != NULL);
    while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < n)
        sched_yield();
    int64_t ipi0 = kstats_ipis_sent();
    uint64_t t0 = nsec_now();
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    for (int c = 0; c < n; c++)
        thread_join(t[c]);
    uint64_t ns = nsec_now() - t0;
    int64_t ipis = kstats_ipis_sent() - ipi0;
    KCHECK_EQ(failures, 0);
    vmspace_free(VS);
    char label[64];
    ksnprintf(label, sizeof label, "vm_%s_ops_per_cpu_per_s", name);
    KBENCH(label, ns ? (uint64_t)OPS * 1000000000ULL / ns : 0, "ops/s");
    ksnprintf(label, sizeof label, "vm_%s_ipis_per_1000_ops", name);
    KBENCH(label, (uint64_t)ipis * 1000 / ((uint64_t)OPS * n), "ipis");
}

KTEST(bench_vm_mmap_touch_munmap)
{
    shared = false;
    async = false;
    run("local_sync");
    async = true;
    run("local_async");
    shared = true;
    async = false;
    run("shared_sync");
    async = true;
    run("shared_async");
}
