// ScaleFS directory hash tables (fs/dirhash.c): a table grows and shrinks with
// its directory, and a small directory spreads its names over buckets of their
// own.
#include "fstest.h"
#include "inode.h"
#include "ktest/ktest.h"
#include "proc/sched.h"
#include "sync/percpu.h"
#include "x86/smp.h"

// The table grows as entries arrive and shrinks back as they go; lookups find
// every name at every size.
KTEST(fs_dirhash_grow_and_shrink)
{
    struct inode *d = fst_scratch("t_grow");
    KREQUIRE(d);
    char name[16];
    uint32_t o0 = dirhash_order(&d->dir);
    int lost = 0;
    for (int k = 0; k < 20000; k++) {
        ksnprintf(name, sizeof name, "g%d", k);
        KREQUIRE(fs_create(d, name, 0644, FS_EXCL, NULL) == 0);
        if (k % 997 == 0) // spot checks while it grows
            for (int j = 0; j <= k; j += 101) {
                struct inode *ip;
                ksnprintf(name, sizeof name, "g%d", j);
                if (fs_lookup(d, name, 0, &ip))
                    lost++;
                else
                    fs_iput(ip);
            }
    }
    uint32_t o1 = dirhash_order(&d->dir);
    KCHECK_EQ(lost, 0);
    KCHECK_EQ(fst_count_entries(d), 20000);
    KCHECK(o1 >= 12); // 20000 entries at <= 2 per bucket on average (sampled): >= 4096 buckets
    for (int k = 0; k < 20000; k++) {
        ksnprintf(name, sizeof name, "g%d", k);
        KCHECK_EQ(fs_unlink(d, name), 0);
    }
    uint32_t o2 = dirhash_order(&d->dir);
    kprintf("# table order %u -> %u (20000 entries) -> %u (empty), %zu bytes\n", o0, o1, o2,
            dirhash_table_bytes(&d->dir));
    KCHECK(o0 < DH_SPREAD_ORDER);
    KCHECK_EQ(o2, DH_SPREAD_ORDER); // back to the smallest spread table, no further
    KCHECK_EQ(fst_count_entries(d), 0);
    fs_iput(d);
    KCHECK_EQ(fs_rmdir(NULL, "/t_grow"), 0);
}

// A small directory gives each name a bucket of its own (so operations on
// different names share no bucket line) until it has 64 buckets, and removing
// its names does not shrink it under other operations.
KTEST(fs_dirhash_small_spread)
{
    struct inode *d = fst_scratch("t_spread");
    KREQUIRE(d);
    enum { N = 8 };
    char name[N][16];
    uint32_t hash[N];
    KCHECK_EQ(dirhash_order(&d->dir), 1);
    int shared = 0;
    uint32_t o = 0;
    for (int k = 0; k < N; k++) {
        ksnprintf(name[k], sizeof name[k], "f%d", k);
        hash[k] = dirhash_hash(&d->dir, name[k], strlen(name[k]));
        KREQUIRE(fs_create(d, name[k], 0644, FS_EXCL, NULL) == 0);
        o = dirhash_order(&d->dir);
        for (int i = 0; i <= k; i++)
            for (int j = 0; j < i; j++)
                shared += o < 6 && hash[i] >> (32 - o) == hash[j] >> (32 - o);
        if (k == 0)
            KCHECK_EQ(o, 1); // one name: still the 256-byte table
    }
    kprintf("# %d names: table order %u\n", N, o);
    KCHECK_EQ(shared, 0);
    for (int k = 0; k < N; k++)
        KCHECK_EQ(fs_unlink(d, name[k]), 0);
    KCHECK_EQ(dirhash_order(&d->dir), o);
    fs_iput(d);
    KCHECK_EQ(fs_rmdir(NULL, "/t_spread"), 0);
}

// Each thread keeps PER_CPU names of its own in one directory and renames them
// back and forth, as the benchmark's rename workers do.
enum { PER_CPU = 64, ROUNDS = 12 };
static struct inode *meet_dir;

static int meet_threads, meet_step[8]; // renames each thread has made

// Keep within a few renames of the other threads: on a loaded host one vCPU
// may otherwise finish its renames before another starts, and names of CPUs
// that never work at the same time do not meet.
static void keep_pace(int i, int step)
{
    for (int j = 0; j < meet_threads; j++)
        while (j != i && load_acquire(&meet_step[j]) < step - 2)
            sched_yield(); // (with one CPU online, the other thread runs here)
}

static void rename_own(int i, void *arg)
{
    (void)arg;
    char a[24], b[24];
    for (int k = 0; k < PER_CPU; k++) {
        ksnprintf(a, sizeof a, "c%d_%d", i, k);
        if (fs_create(meet_dir, a, 0644, FS_EXCL, NULL))
            ktest_failed(__FILE__, __LINE__, "create %s", a);
    }
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < PER_CPU; k++) {
            int step = r * PER_CPU + k;
            keep_pace(i, step);
            ksnprintf(a, sizeof a, r % 2 ? "c%d_%d_x" : "c%d_%d", i, k);
            ksnprintf(b, sizeof b, r % 2 ? "c%d_%d" : "c%d_%d_x", i, k);
            if (fs_rename(meet_dir, a, meet_dir, b))
                ktest_failed(__FILE__, __LINE__, "rename %s", a);
            store_release(&meet_step[i], step + 1);
        }
}

// Order of the table after `threads` threads, one per CPU, each renamed its own
// names in one new directory (then emptied).
static uint32_t order_after_renames(int threads)
{
    if (!(meet_dir = fst_scratch("t_meet"))) {
        KCHECK(meet_dir != NULL);
        return 0;
    }
    meet_threads = threads;
    for (int j = 0; j < threads; j++)
        meet_step[j] = 0;
    KCHECK(fst_run(threads, rename_own, NULL));
    uint32_t o = dirhash_order(&meet_dir->dir);
    KCHECK_EQ(fst_count_entries(meet_dir), threads * PER_CPU);
    fs_iput(meet_dir);
    KCHECK_EQ(fst_rm_rf("/t_meet"), 0);
    return o;
}

// Names of different CPUs that keep meeting in buckets spread the table to
// 16 to 32 buckets per name (at most 4096 buckets); one CPU alone, with as
// many names, keeps the ordinary load of up to 2 per bucket.
KTEST(fs_dirhash_spreads_where_cpus_meet)
{
    int n = ncpu_online < 2 ? 2 : ncpu_online > 8 ? 8 : ncpu_online;
    uint32_t alone = order_after_renames(1);
    kprintf("# %d names of one CPU: table order %u\n", PER_CPU, alone);
    KCHECK(alone <= 6);
    // With one CPU online both threads run there: nothing meets.
    uint32_t met = order_after_renames(n);
    kprintf("# %d names of %d threads on %d CPUs: table order %u\n", n * PER_CPU, n,
            ncpu_online, met);
    if (ncpu_online == 1) {
        KCHECK(met <= 8);
    } else {
        uint32_t names = n * PER_CPU, buckets = 1U << met;
        KCHECK(buckets >= 4 * names); // sampled: about 16 per name
        KCHECK(met <= 12);
    }
}

// A resize that jumps several orders at once (a spread from 64 buckets to 2048:
// each old bucket cut into 32 stretches) loses no name for the lookups and
// renames that run meanwhile on other CPUs.
enum { JUMP_NAMES = 128, JUMP_ROUNDS = 8, JUMP_ORDER = 11 }; // 16 buckets per name
static struct inode *jump_dir;
static int jump_threads, jump_started, jump_done, jump_missed, jump_failed;
static uint32_t jump_from, jump_to;

static void jump_worker(int t, void *arg)
{
    (void)arg;
    char a[24], b[24];
    if (t == 0) { // the resizer: once the others run, spread the table
        while (load_acquire(&jump_started) < jump_threads - 1)
            sched_yield();
        // (A resize that the renames started may hold the directory: try again.)
        jump_from = dirhash_order(&jump_dir->dir);
        uint64_t give_up = nsec_now() + 5000000000ULL;
        while (dirhash_order(&jump_dir->dir) < JUMP_ORDER && nsec_now() < give_up) {
            dirhash_resize_check(&jump_dir->dir, dirhash_hash(&jump_dir->dir, "j0", 2),
                                 DH_HINT_SPREAD);
            sched_yield();
        }
        jump_to = dirhash_order(&jump_dir->dir);
        store_release(&jump_done, 1);
        return;
    }
    ksnprintf(a, sizeof a, "r%d", t);
    ksnprintf(b, sizeof b, "r%d_x", t);
    if (t % 2 && fs_create(jump_dir, a, 0644, FS_EXCL, NULL))
        fetch_add_relaxed(&jump_failed, 1);
    fetch_add_relaxed(&jump_started, 1);
    for (int k = t; !load_acquire(&jump_done); k++) {
        char name[16];
        struct inode *ip;
        ksnprintf(name, sizeof name, "j%d", k % JUMP_NAMES);
        if (fs_lookup(jump_dir, name, 0, &ip))
            fetch_add_relaxed(&jump_missed, 1);
        else
            fs_iput(ip);
        bool back = (k - t) % 2; // the file is named b after an odd number of renames
        if (t % 2 && fs_rename(jump_dir, back ? b : a, jump_dir, back ? a : b))
            fetch_add_relaxed(&jump_failed, 1);
    }
}

KTEST(fs_dirhash_jumps_lose_no_name)
{
    jump_threads = ncpu_online < 3 ? 3 : ncpu_online > 8 ? 8 : ncpu_online;
    jump_missed = jump_failed = 0;
    for (int r = 0; r < JUMP_ROUNDS; r++) {
        KREQUIRE(jump_dir = fst_scratch("t_jump"));
        char name[16];
        for (int k = 0; k < JUMP_NAMES; k++) {
            ksnprintf(name, sizeof name, "j%d", k);
            KREQUIRE(fs_create(jump_dir, name, 0644, FS_EXCL, NULL) == 0);
        }
        jump_started = jump_done = 0;
        KCHECK(fst_run(jump_threads, jump_worker, NULL));
        if (r == 0 || jump_to < JUMP_ORDER)
            kprintf("# %d names, %d threads: table order %u -> %u\n",
                    JUMP_NAMES, jump_threads, jump_from, jump_to);
        KCHECK(jump_to >= JUMP_ORDER);
        KCHECK_EQ(fst_count_entries(jump_dir), JUMP_NAMES + jump_threads / 2);
        fs_iput(jump_dir);
        KCHECK_EQ(fst_rm_rf("/t_jump"), 0);
    }
    KCHECK_EQ(jump_missed, 0);
    KCHECK_EQ(jump_failed, 0);
}
