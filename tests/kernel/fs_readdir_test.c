// Readdir positions are stable: while other CPUs create and remove thousands of
// names (so the table grows and shrinks under the scan), a listing read a few
// entries per call returns every name that exists throughout exactly once, and
// no name twice.
#include "fstest.h"
#include "inode.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "x86/smp.h"

#define NSTABLE 300
#define NCHURN 1500          // most names per churning thread per cycle
#define CHUNK 5              // entries per fs_readdir call

static struct inode *R;
static volatile int stop_churn, cycles;
static int nchurners, nper; // nper names per churner per cycle: ~3000 in all

static void churn(int t, void *arg)
{
    (void)arg;
    char name[24];
    while (!READ_ONCE(stop_churn)) {
        for (int k = 0; k < nper; k++) {
            ksnprintf(name, sizeof name, "c%d_%d", t, k);
            if (fs_create(R, name, 0644, FS_EXCL, NULL))
                ktest_failed(__FILE__, __LINE__, "create %s", name);
            if (k % 64 == 63)
                sched_yield(); // on one CPU, let the scanner see the table mid-cycle
        }
        for (int k = 0; k < nper; k++) {
            ksnprintf(name, sizeof name, "c%d_%d", t, k);
            if (fs_unlink(R, name))
                ktest_failed(__FILE__, __LINE__, "unlink %s", name);
            if (k % 64 == 63)
                sched_yield();
        }
        fetch_add_relaxed(&cycles, 1);
    }
}

struct pass {
    uint8_t stable[NSTABLE];
    uint8_t *churn;          // nchurners * NCHURN
    int dups, bad, n;
};

static int parse_int(const char *s, size_t len, size_t *used)
{
    int v = 0;
    size_t i = 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
        v = v * 10 + s[i] - '0';
    *used = i;
    return v;
}

static int see(void *arg, const char *name, size_t len, uint64_t ino, unsigned type)
{
    (void)ino;
    (void)type;
    struct pass *p = arg;
    if (p->n == CHUNK)
        return 1;
    p->n++;
    size_t used;
    if (name[0] == 's') {
        int k = parse_int(name + 1, len - 1, &used);
        if (k < NSTABLE && p->stable[k]++)
            p->dups++;
    } else if (name[0] == 'c') {
        int t = parse_int(name + 1, len - 1, &used);
        int k = parse_int(name + 2 + used, len - 2 - used, &used);
        if (t >= nchurners || k >= NCHURN)
            p->bad++;
        else if (p->churn[t * NCHURN + k]++)
            p->dups++;
    } else if (name[0] != '.') {
        p->bad++;
    }
    return 0;
}

static void scanner(struct pass *p, uint32_t *omin, uint32_t *omax)
{
    uint64_t pos = 0;
    memset(p->stable, 0, sizeof p->stable);
    memset(p->churn, 0, nchurners * NCHURN);
    for (;;) {
        p->n = 0;
        fs_readdir(R, &pos, see, p);
        uint32_t o = dirhash_order(&R->dir);
        *omin = MIN(*omin, o);
        *omax = MAX(*omax, o);
        if (p->n < CHUNK)
            break;
    }
}

static void run(int i, void *arg)
{
    if (i > 0) {
        churn(i - 1, NULL);
        return;
    }
    struct pass *p = arg;
    uint32_t omin = 99, omax = 0;
    int passes = 0, missing = 0;
    uint64_t end = nsec_now() + 20000000000ULL;
    // Until the churners have grown and shrunk the table a few times, and the
    // scans have seen it change size.
    while (passes < 3 || READ_ONCE(cycles) < 2 * nchurners || omax == omin) {
        scanner(p, &omin, &omax);
        for (int k = 0; k < NSTABLE; k++)
            missing += p->stable[k] == 0;
        passes++;
        if (nsec_now() > end)
            break;
    }
    WRITE_ONCE(stop_churn, 1);
    KCHECK_EQ(p->dups, 0);
    KCHECK_EQ(p->bad, 0);
    KCHECK_EQ(missing, 0);
    kprintf("# %d passes, %d churn cycles, table order %u..%u during the scans\n", passes,
            cycles, omin, omax);
    KCHECK(omax > omin); // the scans did run across resizes
}

KTEST(fs_readdir_stable_under_churn)
{
    KREQUIRE((R = fst_scratch("t_rdstable")) != NULL);
    char name[16];
    for (int k = 0; k < NSTABLE; k++) {
        ksnprintf(name, sizeof name, "s%d", k);
        KREQUIRE(fs_create(R, name, 0644, FS_EXCL, NULL) == 0);
    }
    nchurners = MAX(1, ncpu_online - 1);
    nper = MIN(NCHURN, MAX(400, 3000 / nchurners));
    stop_churn = cycles = 0;
    struct pass *p = kzalloc(sizeof *p);
    KREQUIRE(p && (p->churn = kmalloc(nchurners * NCHURN)));
    // Thread 0 (the scanner) on CPU 0, churners on the other CPUs.
    KCHECK(fst_run(1 + nchurners, run, p));
    KCHECK_EQ(fst_count_entries(R), NSTABLE);
    kfree(p->churn);
    kfree(p);
    fs_iput(R);
    fst_rm_rf("/t_rdstable");
}

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
    KCHECK(o0 < 6);
    KCHECK_EQ(o2, 6); // back to the smallest spread table (dirhash.c), no further
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
