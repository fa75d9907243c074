// ScaleFS readdir: the basics (".", "..", every name once, resuming at the
// returned position, errors), and positions are stable: while other CPUs create
// and remove thousands of names (so the table grows and shrinks under the
// scan), a listing read a few entries per call returns every name that exists
// throughout exactly once, and no name twice.
#include "fstest.h"
#include "inode.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "x86/smp.h"

// ---- basics -----------------------------------------------------------------------

static struct inode *D;

static uint64_t ino_of(const char *path)
{
    struct fs_stat st;
    if (fs_stat_path(D, path, FS_NOFOLLOW, STATX_INO, &st))
        return 0;
    return st.ino;
}

struct listing {
    char names[16][8];
    uint64_t ino[16];
    int n;
    int stop_after;
};

static int fill(void *arg, const char *name, size_t len, uint64_t ino, unsigned type)
{
    (void)type;
    struct listing *l = arg;
    if (l->n == l->stop_after || l->n == 16)
        return 1;
    memcpy(l->names[l->n], name, MIN(len, 7UL));
    l->names[l->n][MIN(len, 7UL)] = 0;
    l->ino[l->n++] = ino;
    return 0;
}

KTEST(fs_readdir_basic)
{
    KREQUIRE((D = fst_scratch("t_readdir")) != NULL);
    KCHECK_EQ(fs_create(D, "x", 0644, FS_EXCL, NULL), 0);
    KCHECK_EQ(fs_mkdir(D, "y", 0755), 0);
    KCHECK_EQ(fs_symlink(D, "x", "z"), 0);
    struct listing l = {.stop_after = 100};
    uint64_t pos = 0;
    KCHECK_EQ(fs_readdir(D, &pos, fill, &l), 0);
    KREQUIRE(l.n == 5);
    KCHECK(strcmp(l.names[0], ".") == 0 && l.ino[0] == fs_ino(D));
    KCHECK(strcmp(l.names[1], "..") == 0 && l.ino[1] == fs_ino(fs_root()));
    int seen = 0;
    for (int i = 2; i < 5; i++) {
        seen |= strcmp(l.names[i], "x") == 0 ? 1 : strcmp(l.names[i], "y") == 0 ? 2
              : strcmp(l.names[i], "z") == 0 ? 4 : 8;
        KCHECK_EQ(l.ino[i], ino_of(l.names[i]));
    }
    KCHECK_EQ(seen, 7);
    KCHECK_EQ(fs_readdir(D, &pos, fill, &l), 0); // at the end: nothing more
    KCHECK_EQ(l.n, 5);
    // One entry per call, resuming at the returned position.
    struct listing one = {.stop_after = 1};
    int calls = 0;
    pos = 0;
    for (;;) {
        one.n = 0;
        int r = fs_readdir(D, &pos, fill, &one);
        if (one.n == 0)
            break;
        KCHECK(r == 1 || calls == 4); // stopped by fill, except after the last
        KCHECK(strcmp(one.names[0], l.names[calls]) == 0);
        calls++;
    }
    KCHECK_EQ(calls, 5);
    struct inode *x;
    KREQUIRE(fs_lookup(D, "x", 0, &x) == 0);
    KCHECK_EQ(fs_readdir(x, &pos, fill, &l), -ENOTDIR);
    KCHECK_EQ(fs_read(D, NULL, 0, 0), -EISDIR);
    fs_iput(x);
    fs_iput(D);
    fst_rm_rf("/t_readdir");
}

// ---- stable under churn ---------------------------------------------------------

#define NSTABLE 300
#define NCHURN 1500          // most names per churning thread per cycle
#define CHUNK 5              // entries per fs_readdir call

static struct inode *R;
static volatile int stop_churn, cycles, churn_go;
static int nchurners, nper; // nper names per churner per cycle: ~3000 in all

static void churn(int t, void *arg)
{
    (void)arg;
    char name[24];
    while (!READ_ONCE(churn_go)) // until the scanner has seen the table unchurned
        sched_yield();
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
    // The order before any churn: the churners' names then make the table grow
    // past it, and the scans, which go on until they see that, run across the
    // resize whatever the timing (a host slow to run the churners included).
    uint32_t omin = dirhash_order(&R->dir), omax = omin;
    WRITE_ONCE(churn_go, 1);
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
    stop_churn = cycles = churn_go = 0;
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
