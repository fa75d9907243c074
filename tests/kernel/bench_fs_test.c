// Benchmark: ScaleFS throughput at the current CPU count, creates/s, lookups/s,
// links/s and unlinks/s, one thread per CPU, each in its own directory or all in
// one shared directory; links also all from one source name (linkpin.c: a link
// writes nothing a lookup or another link of its source reads). Reports figures (`make bench`); checks only that every operation
// succeeded. Under TCG absolute figures mean little; compare ratios in one run.
#include "fstest.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "x86/smp.h"

#define NCREATE 1000
#define NLOOKUP 4000

static struct inode *P;
static bool shared;
static volatile int failures;

static void dirname(char *buf, int t) { ksnprintf(buf, 24, shared ? "same" : "own%d", t); }

static void creates(int t, void *arg)
{
    (void)arg;
    char path[48], dir[24];
    dirname(dir, t);
    for (int k = 0; k < NCREATE; k++) {
        ksnprintf(path, sizeof path, "%s/x%d_%d", dir, t, k);
        if (fs_create(P, path, 0644, FS_EXCL, NULL))
            fetch_add_relaxed(&failures, 1);
    }
}

static void lookups(int t, void *arg)
{
    (void)arg;
    char path[48], dir[24];
    dirname(dir, t);
    struct inode *d;
    if (fs_lookup(P, dir, 0, &d)) {
        fetch_add_relaxed(&failures, 1);
        return;
    }
    for (int k = 0; k < NLOOKUP; k++) {
        // Shared: every thread looks up the same names (thread 0's).
        ksnprintf(path, sizeof path, "x%d_%d", shared ? 0 : t, k % NCREATE);
        struct inode *ip;
        if (fs_lookup(d, path, 0, &ip))
            fetch_add_relaxed(&failures, 1);
        else
            fs_iput(ip);
    }
    fs_iput(d);
}

// New names in the thread's directory for thread 0's first file (shared: every
// thread links one source name), then their unlinks.
static void links(int t, void *arg)
{
    (void)arg;
    char path[48], src[48], dir[24];
    dirname(dir, t);
    ksnprintf(src, sizeof src, "%s/x%d_0", dir, shared ? 0 : t);
    for (int k = 0; k < NCREATE; k++) {
        ksnprintf(path, sizeof path, "%s/l%d_%d", dir, t, k);
        if (fs_link(P, src, P, path, 0))
            fetch_add_relaxed(&failures, 1);
    }
}

static void unlinks(int t, void *arg)
{
    (void)arg;
    char path[48], dir[24];
    dirname(dir, t);
    for (int k = 0; k < NCREATE; k++) {
        ksnprintf(path, sizeof path, "%s/l%d_%d", dir, t, k);
        if (fs_unlink(P, path))
            fetch_add_relaxed(&failures, 1);
    }
}

static uint64_t per_sec(uint64_t ops, uint64_t ns) { return ns ? ops * 1000000000ULL / ns : 0; }

KTEST(bench_fs_creates_lookups)
{
    KREQUIRE((P = fst_scratch("t_perf")) != NULL);
    int n = ncpu_online;
    char dir[24];
    for (int t = 0; t < n; t++) {
        shared = false;
        dirname(dir, t);
        KREQUIRE(fs_mkdir(P, dir, 0755) == 0);
    }
    KREQUIRE(fs_mkdir(P, "same", 0755) == 0);
    failures = 0;
    uint64_t ns[8];
    for (int i = 0; i < 2; i++) {
        shared = i == 1;
        uint64_t t0 = nsec_now();
        KCHECK(fst_run(n, creates, NULL));
        ns[i] = nsec_now() - t0;
    }
    for (int i = 0; i < 2; i++) {
        shared = i == 1;
        uint64_t t0 = nsec_now();
        KCHECK(fst_run(n, lookups, NULL));
        ns[2 + i] = nsec_now() - t0;
    }
    for (int i = 0; i < 2; i++) {
        shared = i == 1;
        uint64_t t0 = nsec_now();
        KCHECK(fst_run(n, links, NULL));
        ns[4 + i] = nsec_now() - t0;
        t0 = nsec_now();
        KCHECK(fst_run(n, unlinks, NULL));
        ns[6 + i] = nsec_now() - t0;
    }
    KCHECK_EQ(failures, 0);
    KBENCH("fs_create_own_dirs", per_sec((uint64_t)n * NCREATE, ns[0]), "ops/s");
    KBENCH("fs_create_one_dir", per_sec((uint64_t)n * NCREATE, ns[1]), "ops/s");
    KBENCH("fs_lookup_own_dirs", per_sec((uint64_t)n * NLOOKUP, ns[2]), "ops/s");
    KBENCH("fs_lookup_one_dir", per_sec((uint64_t)n * NLOOKUP, ns[3]), "ops/s");
    KBENCH("fs_link_own_dirs", per_sec((uint64_t)n * NCREATE, ns[4]), "ops/s");
    KBENCH("fs_link_one_source", per_sec((uint64_t)n * NCREATE, ns[5]), "ops/s");
    KBENCH("fs_unlink_own_dirs", per_sec((uint64_t)n * NCREATE, ns[6]), "ops/s");
    KBENCH("fs_unlink_one_dir", per_sec((uint64_t)n * NCREATE, ns[7]), "ops/s");
    fs_iput(P);
    fst_rm_rf("/t_perf");
}

// One file shared by every thread: in-place writes of each thread's own page
// (their time stamps go to per-CPU slots, fs/itime.c) and stats of the file
// with its times (which read every online CPU's slot for it).
#define NONEFILE 4000
static struct inode *F;

static void own_page_writes(int t, void *arg)
{
    (void)arg;
    for (int k = 0; k < NONEFILE; k++)
        if (fs_write(F, "w", 1, (uint64_t)t * PGSIZE + k % PGSIZE) != 1)
            fetch_add_relaxed(&failures, 1);
}

static void stats_with_times(int t, void *arg)
{
    (void)t, (void)arg;
    struct fs_stat st;
    for (int k = 0; k < NONEFILE; k++)
        if (fs_stat(F, STATX_BASIC_STATS, &st))
            fetch_add_relaxed(&failures, 1);
}

KTEST(bench_fs_one_file)
{
    KREQUIRE((P = fst_scratch("t_perf1")) != NULL);
    int n = ncpu_online;
    KREQUIRE(fs_create(P, "f", 0644, FS_EXCL, &F) == 0);
    KREQUIRE(fs_truncate(F, (int64_t)n * PGSIZE) == 0);
    for (int t = 0; t < n; t++) // the pages exist: the writes are in place
        KREQUIRE(fs_write(F, "w", 1, (uint64_t)t * PGSIZE) == 1);
    failures = 0;
    uint64_t t0 = nsec_now();
    KCHECK(fst_run(n, own_page_writes, NULL));
    uint64_t wns = nsec_now() - t0;
    t0 = nsec_now();
    KCHECK(fst_run(n, stats_with_times, NULL));
    uint64_t sns = nsec_now() - t0;
    KCHECK_EQ(failures, 0);
    KBENCH("fs_write_own_page_one_file", per_sec((uint64_t)n * NONEFILE, wns), "ops/s");
    KBENCH("fs_stat_one_file", per_sec((uint64_t)n * NONEFILE, sns), "ops/s");
    fs_iput(F);
    fs_iput(P);
    fst_rm_rf("/t_perf1");
}
