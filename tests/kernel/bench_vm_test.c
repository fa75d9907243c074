// Benchmark: mmap + touch + munmap per CPU, one address space loaded on every
// CPU (a multi-threaded process), synchronous munmap vs MADV_UNMAP_ASYNC.
// "local": each CPU touches only its own mappings (sync munmap needs no IPI
// either). "shared": before each munmap the next CPU reads every page of the
// mapping (a lockstep handshake), so that CPU caches translations of it and a
// synchronous munmap must shoot it down: one IPI per operation from 2 CPUs on.
// Reports ops/s per CPU and IPIs per operation (`make bench`).
#include "fstest.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "sync/atomic.h"
#include "uapi/abi.h"
#include "vmtest.h"

#define OPS 300
#define NPAGES 4

static struct vmspace *VS;
static volatile int failures, ready, go;
struct slot {
    uintptr_t addr;  // the owner's current mapping
    int64_t seq;     // its operation number (the owner writes)
    int64_t peeked;  // the operation the neighbour has read (the neighbour writes)
} __cacheline_aligned;
static struct slot slots[NCPU_MAX];
static bool async, shared;

static void bench_worker(void *arg)
{
    int me = (int)(uintptr_t)arg, n = ncpu_online;
    vmt_enter(VS);
    add_fetch(&ready, 1);
    while (!load_acquire(&go))
        pause();
    uint64_t v;
    for (int k = 0; k < OPS; k++) {
        long a = uvm_map(VS, 0, NPAGES * PGSIZE, VM_READ | VM_WRITE, 0);
        if (a < 0) {
            fetch_add_relaxed(&failures, 1);
            continue;
        }
        for (int i = 0; i < NPAGES; i++)
            vmt_touch(a + i * PGSIZE, k);
        if (shared) {
            // Publish ours, read the previous CPU's, wait until ours was read.
            int prev = (me + n - 1) % n;
            slots[me].addr = a;
            store_release(&slots[me].seq, k + 1);
            while (load_acquire(&slots[prev].seq) < k + 1)
                pause();
            for (int i = 0; i < NPAGES; i++)
                if (!vmt_peek(slots[prev].addr + i * PGSIZE, &v) || v != (uint64_t)k)
                    fetch_add_relaxed(&failures, 1);
            store_release(&slots[prev].peeked, k + 1);
            while (load_acquire(&slots[me].peeked) < k + 1)
                pause();
        }
        int err = async ? uvm_unmap_async(VS, a, NPAGES * PGSIZE) : uvm_unmap(VS, a, NPAGES * PGSIZE);
        if (err)
            fetch_add_relaxed(&failures, 1);
    }
    vmt_leave(VS);
}

static void run(const char *name)
{
    int n = ncpu_online;
    VS = vmspace_new();
    KREQUIRE(VS);
    failures = ready = go = 0;
    memset(slots, 0, sizeof slots);
    struct thread *t[NCPU_MAX];
    for (int c = 0; c < n; c++)
        KREQUIRE((t[c] = vmt_on_cpu(c, "vmt-bench", bench_worker, (void *)(uintptr_t)c)) != NULL);
    while (load_acquire(&ready) < n)
        sched_yield();
    int64_t ipi0 = kstats_ipis_sent();
    uint64_t t0 = nsec_now();
    store_release(&go, 1);
    for (int c = 0; c < n; c++)
        thread_join(t[c]);
    uint64_t ns = nsec_now() - t0;
    int64_t ipis = kstats_ipis_sent() - ipi0;
    KCHECK_EQ(failures, 0);
    vmspace_put(VS);
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

// Benchmark: page faults on a file mapping. Map a MAP_SHARED file of FPAGES
// pages, read one word of each page (one fault each, which takes a reference
// on the file's page), unmap (which drops them); ns per page for the whole
// round trip, on the calling CPU (run it at 1 vCPU to compare builds).
#define FPAGES 64
#define FROUNDS 40

KTEST(bench_vm_file_fault)
{
    struct inode *d = fst_scratch("t_fbench"), *ip;
    KREQUIRE(d);
    KREQUIRE(fs_create(d, "f", 0644, FS_EXCL, &ip) == 0);
    KCHECK_EQ(fs_truncate(ip, FPAGES * PGSIZE), 0);
    for (uint64_t pg = 0; pg < FPAGES; pg++)
        KCHECK_EQ(fs_write(ip, &pg, sizeof pg, pg * PGSIZE), (int64_t)sizeof pg);
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    vmt_enter(vs);
    uint64_t ns = 0;
    for (int r = 0; r < FROUNDS; r++) {
        uint64_t t0 = nsec_now();
        long a = uvm_map_file(vs, 0, FPAGES * PGSIZE, VM_READ, UVM_SHARED, ip, 0);
        KCHECK(a > 0);
        for (uint64_t pg = 0; a > 0 && pg < FPAGES; pg++) {
            uint64_t v = ~0UL;
            KCHECK(vmt_peek(a + pg * PGSIZE, &v) && v == pg);
        }
        KCHECK_EQ(a > 0 ? uvm_unmap(vs, a, FPAGES * PGSIZE) : 0, 0);
        ns += nsec_now() - t0;
    }
    vmt_leave(vs);
    vmspace_put(vs);
    KBENCH("vm_file_fault_unmap_ns_per_page", ns / (FROUNDS * FPAGES), "ns");
    fs_iput(ip);
    KCHECK_EQ(fs_unlink(d, "f"), 0);
    fs_iput(d);
    fst_rm_rf("/t_fbench");
}
