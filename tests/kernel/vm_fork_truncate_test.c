// Fork against truncate (uvm_fork.c's forkstate, uvm_file.c): one CPU forks a
// space that maps a file (MAP_SHARED and MAP_PRIVATE, every page touched) while
// another truncates the file to one page. Once both are done, the child must
// hold no page past the new end (a fault there is SIGBUS), whichever came first;
// a fork that copied a descriptor before the truncate must have been found by
// it. The truncate starts at a random point inside the fork (up to about one
// fork's duration before or after it), round after round. With 3 CPUs or more,
// the regrow test adds a third thread that extends the file again (a hole) as
// soon as the truncate has stored its size, while the truncate still looks for
// mappings: the child must still hold no page from before. In the free-running
// test the two just loop (fork and drop the child; shrink and grow the file), so
// that children are dropped while truncates may hold them, and the truncating
// thread also maps a page of the file further up each round (so that forks
// meet mappings their child has no record for yet). When all is done, every
// page came back.
#include "fstest.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "sync/atomic.h"
#include "testutil.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "vmtest.h"

#define NPAGES 48
#define SHARED_BASE 0x400000UL
#define PRIVATE_BASE 0x800000UL
#define FAR_BASE 0x40000000UL
#define ROUNDS 120
#define FREE_RUN_ROUNDS 100

static struct vmspace *VS;
static struct inode *FIP;
static volatile int met, stale, errors, nthreads;
static volatile bool regrow, truncated;
static volatile uint64_t fork_ns;  // how long the last fork took
static volatile int64_t offset_ns; // > 0: truncate that much after the fork starts

static void meet(int k) // the k-th meeting of the two threads
{
    fetch_add(&met, 1);
    while (load_seqcst(&met) < nthreads * k)
        pause();
}

static void wait_ns(uint64_t ns)
{
    uint64_t end = nsec_now() + ns;
    while (nsec_now() < end)
        pause();
}

static void error(void) { fetch_add_relaxed(&errors, 1); }

static bool grow_and_touch(uint64_t tag)
{
    static uint64_t buf[PGSIZE / 8];
    bool ok = true;
    for (int i = 1; i < NPAGES; i++) {
        buf[0] = tag + i;
        ok &= fs_write(FIP, buf, PGSIZE, (uint64_t)i * PGSIZE) == PGSIZE;
    }
    for (int i = 0; i < NPAGES; i++) {
        uint64_t v;
        ok &= uvm_read(VS, SHARED_BASE + i * PGSIZE, &v, 8) == 0;
        ok &= uvm_read(VS, PRIVATE_BASE + i * PGSIZE, &v, 8) == 0;
        ok &= i == 0 || v == tag + i;
    }
    return ok;
}

// Pages 1.. of both mappings of c lie past the end: no page, SIGBUS (with the
// regrow, a hole: no page from before, zeros).
static void check_child(struct vmspace *c)
{
    for (int i = 0; i < NPAGES; i++) {
        uintptr_t va[2] = {SHARED_BASE + i * PGSIZE, PRIVATE_BASE + i * PGSIZE};
        for (int k = 0; k < 2; k++) {
            uint64_t v = 0;
            if (i == 0) {
                if (uvm_read(c, va[k], &v, 8) != 0)
                    error();
                continue;
            }
            struct fault_info fi = {0, 0, 0};
            bool bad = uvm_page_pa(c, va[k]) != 0;
            if (regrow)
                bad |= uvm_read(c, va[k], &v, 8) != 0 || v != 0;
            else
                bad |= uvm_fault(c, va[k], 0, &fi) != SIGBUS;
            if (bad)
                fetch_add_relaxed(&stale, 1);
        }
    }
}

static void race(int i, void *arg)
{
    (void)arg;
    uint64_t seed = 0x9e3779b97f4a7c15ULL * (i + 1);
    for (int r = 0; r < ROUNDS; r++) {
        if (i == 2) { // extend again right after the truncate stored its size
            meet(3 * r + 1);
            struct fs_stat st;
            do
                fs_stat(FIP, STATX_SIZE, &st);
            while (st.size == NPAGES * PGSIZE && !load_acquire(&truncated));
            if (fs_truncate(FIP, NPAGES * PGSIZE) != 0)
                error();
            meet(3 * r + 2);
            meet(3 * r + 3);
            continue;
        }
        if (i == 1) { // choose where the truncate falls: -fork_ns .. +fork_ns
            uint64_t span = 2 * (fork_ns ? fork_ns : 100000) + 1;
            offset_ns = (int64_t)(rnd(&seed) % span) - (int64_t)(span / 2);
        }
        meet(3 * r + 1);
        if (i == 0) {
            if (offset_ns < 0)
                wait_ns(-offset_ns);
            uint64_t t0 = nsec_now();
            struct vmspace *c = vmspace_fork(VS);
            fork_ns = nsec_now() - t0;
            meet(3 * r + 2);
            if (c) {
                check_child(c);
                vmspace_put(c);
            } else {
                error();
            }
            meet(3 * r + 3);
        } else {
            if (offset_ns > 0)
                wait_ns(offset_ns);
            if (fs_truncate(FIP, 8) != 0)
                error();
            store_release(&truncated, true);
            meet(3 * r + 2);
            truncated = false;
            // (The parent lost its pages past the end as well.)
            if (uvm_page_pa(VS, SHARED_BASE + PGSIZE) || uvm_page_pa(VS, PRIVATE_BASE + PGSIZE))
                error();
            meet(3 * r + 3);
            if (!grow_and_touch((uint64_t)r << 16))
                error();
        }
    }
}

static void free_run(int i, void *arg)
{
    (void)arg;
    for (int r = 0; r < FREE_RUN_ROUNDS; r++) {
        if (i == 0) {
            struct vmspace *c = vmspace_fork(VS);
            if (c)
                vmspace_put(c);
            else
                error();
        } else {
            uintptr_t far = FAR_BASE + (uintptr_t)r * (2UL << 20);
            uint64_t v;
            if (fs_truncate(FIP, 8) != 0 || !grow_and_touch((uint64_t)r << 16) ||
                uvm_map_file(VS, far, PGSIZE, VM_READ | VM_WRITE, UVM_FIXED | UVM_SHARED, FIP, 1) !=
                    (long)far ||
                uvm_read(VS, far, &v, 8) != 0 || v != ((uint64_t)r << 16) + 1 ||
                uvm_unmap(VS, far - (2UL << 20), PGSIZE) != 0)
                error();
        }
    }
}

static bool setup(struct inode **d)
{
    *d = fst_scratch("t_vmforktrunc");
    if (!*d || fs_create(*d, "f", 0644, FS_EXCL, &FIP) != 0)
        return false;
    VS = vmspace_new();
    met = stale = errors = 0;
    fork_ns = 0;
    return VS &&
           uvm_map_file(VS, SHARED_BASE, NPAGES * PGSIZE, VM_READ | VM_WRITE,
                        UVM_FIXED | UVM_SHARED, FIP, 0) == (long)SHARED_BASE &&
           uvm_map_file(VS, PRIVATE_BASE, NPAGES * PGSIZE, VM_READ | VM_WRITE, UVM_FIXED, FIP,
                        0) == (long)PRIVATE_BASE &&
           fs_write(FIP, "x", 1, 0) == 1 && grow_and_touch(0);
}

static void teardown(struct inode *d)
{
    if (VS)
        vmspace_put(VS);
    VS = NULL;
    if (FIP) {
        fs_iput(FIP);
        FIP = NULL;
        KCHECK_EQ(fs_unlink(d, "f"), 0);
    }
    if (d)
        fs_iput(d);
    fst_rm_rf("/t_vmforktrunc");
}

static void run(void (*fn)(int, void *), int n, const char *what)
{
    if (ncpu_online < n) {
        kprintf("# needs %d CPUs; nothing to check\n", n);
        return;
    }
    nthreads = n;
    regrow = n == 3;
    struct inode *d = NULL;
    setup(&d); // once before counting: what the first use allocates for good
    teardown(d);
    size_t free0 = fst_free_pages();
    bool ok = setup(&d);
    KCHECK(ok);
    if (ok)
        KCHECK(fst_run(n, fn, NULL));
    kprintf("# %s: %d stale child pages, %d errors\n", what, stale, errors);
    KCHECK_EQ(stale, 0);
    KCHECK_EQ(errors, 0);
    teardown(d);
    KCHECK_EQ(fst_free_pages(), free0);
}

KTEST(vm_fork_truncate_no_page_past_end) { run(race, 2, "fork vs truncate"); }

KTEST(vm_fork_truncate_regrow) { run(race, 3, "fork vs truncate and regrow"); }

KTEST(vm_fork_truncate_free_running) { run(free_run, 2, "fork and drop vs truncate and grow"); }
