// ScaleFS under concurrent storms on every CPU: creates, unlinks, links,
// renames and exchanges (files and directories, within and across directories), mkdir and
// rmdir, lookups and stats, in one shared directory tree and in per-thread
// private directories. Then, after quiescence:
//  - private directories hold exactly what their owner's model says (every
//    return code was checked against the model as it went);
//  - no directory lists a name twice, and every listed name is found by lookup;
//  - every file's exact link count equals the number of names it has;
//  - every directory's link count is 2 + its subdirectories;
//  - once everything is removed, every page is back.
#include "fstest.h"
#include "inode.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "sync/percpu.h"
#include "testutil.h"

#define NPRIV 48    // names per private directory
#define NSHARED 32  // file names in the shared directory
#define NSDIRS 6    // directory names in the shared directory
#define OPS 3000

static struct inode *S;        // /t_stress
static int nthreads;

struct priv {
    bool exists[NPRIV];
};

static void fail(int line, const char *what, int err)
{
    ktest_failed(__FILE__, line, "%s: unexpected result %d", what, err);
}
#define EXPECT(what, err, ok) do { if (!(ok)) fail(__LINE__, what, err); } while (0)

static bool is(int err, int a, int b, int c, int d) { return err == a || err == b || err == c || err == d; }

static uint64_t ino_of(const char *path)
{
    struct fs_stat st;
    return fs_stat_path(S, path, FS_NOFOLLOW, STATX_INO, &st) ? 0 : st.ino;
}

static void storm(int t, void *arg)
{
    (void)arg;
    struct priv *pv = kzalloc(sizeof *pv);
    char a[64], b[64];
    uint64_t seed = 0x9e3779b97f4a7c15ULL * (t + 1);
    if (!pv)
        return;
    for (int op = 0; op < OPS; op++) {
        uint64_t r = rnd(&seed);
        int i = r % NPRIV, j = (r >> 8) % NPRIV, s = (r >> 16) % NSHARED, s2 = (r >> 24) % NSHARED;
        int d = (r >> 32) % NSDIRS, d2 = (r >> 40) % NSDIRS;
        int err;
        switch ((r >> 48) % 16) {
        case 0: // private create
            ksnprintf(a, sizeof a, "p%d/n%d", t, i);
            err = fs_create(S, a, 0644, FS_EXCL, NULL);
            EXPECT("create private", err, pv->exists[i] ? err == -EEXIST : err == 0);
            pv->exists[i] = true;
            break;
        case 1: // private unlink
            ksnprintf(a, sizeof a, "p%d/n%d", t, i);
            err = fs_unlink(S, a);
            EXPECT("unlink private", err, pv->exists[i] ? err == 0 : err == -ENOENT);
            pv->exists[i] = false;
            break;
        case 2: { // private rename; two links to one file: no-op, both stay
            ksnprintf(a, sizeof a, "p%d/n%d", t, i);
            ksnprintf(b, sizeof b, "p%d/n%d", t, j);
            bool same = i == j || (pv->exists[i] && pv->exists[j] && ino_of(a) == ino_of(b));
            err = fs_rename(S, a, S, b);
            EXPECT("rename private", err, pv->exists[i] ? err == 0 : err == -ENOENT);
            if (!err && !same) {
                pv->exists[j] = true;
                pv->exists[i] = false;
            }
            break;
        }
        case 3: // private link
            ksnprintf(a, sizeof a, "p%d/n%d", t, i);
            ksnprintf(b, sizeof b, "p%d/n%d", t, j);
            err = fs_link(S, a, S, b, 0);
            EXPECT("link private", err,
                   !pv->exists[i] ? err == -ENOENT : pv->exists[j] ? err == -EEXIST : err == 0);
            if (!err)
                pv->exists[j] = true;
            break;
        case 4: // private -> shared
            ksnprintf(a, sizeof a, "p%d/n%d", t, i);
            ksnprintf(b, sizeof b, "shared/s%d", s);
            err = fs_rename(S, a, S, b);
            EXPECT("rename to shared", err, pv->exists[i] ? err == 0 : err == -ENOENT);
            if (!err) // gone, unless the target was another name of the same file
                pv->exists[i] = ino_of(a) != 0;
            break;
        case 5: // shared -> private
            ksnprintf(a, sizeof a, "shared/s%d", s);
            ksnprintf(b, sizeof b, "p%d/n%d", t, i);
            err = fs_rename(S, a, S, b);
            EXPECT("rename from shared", err, err == 0 || err == -ENOENT);
            if (!err)
                pv->exists[i] = true;
            break;
        case 6: // link private -> shared
            ksnprintf(a, sizeof a, "p%d/n%d", t, i);
            ksnprintf(b, sizeof b, "shared/s%d", s);
            err = fs_link(S, a, S, b, 0);
            EXPECT("link to shared", err,
                   pv->exists[i] ? (err == 0 || err == -EEXIST) : err == -ENOENT);
            break;
        case 7: // shared create / unlink
            ksnprintf(a, sizeof a, "shared/s%d", s);
            if (r & 1) {
                err = fs_create(S, a, 0644, FS_EXCL, NULL);
                EXPECT("create shared", err, err == 0 || err == -EEXIST);
            } else {
                err = fs_unlink(S, a);
                EXPECT("unlink shared", err, err == 0 || err == -ENOENT);
            }
            break;
        case 8: // shared rename and link
            ksnprintf(a, sizeof a, "shared/s%d", s);
            ksnprintf(b, sizeof b, "shared/s%d", s2);
            err = (r & 1) ? fs_rename(S, a, S, b) : fs_link(S, a, S, b, 0);
            EXPECT("rename/link shared", err, is(err, 0, -ENOENT, -EEXIST, 0));
            break;
        case 9: // file into or out of a shared directory
            ksnprintf(a, sizeof a, "shared/s%d", s);
            ksnprintf(b, sizeof b, "shared/d%d/s%d", d, s2);
            err = (r & 1) ? fs_rename(S, a, S, b) : fs_rename(S, b, S, a);
            EXPECT("rename file across", err, err == 0 || err == -ENOENT);
            break;
        case 10: // mkdir / rmdir
            ksnprintf(a, sizeof a, "shared/d%d", d);
            if (r & 1) {
                err = fs_mkdir(S, a, 0755);
                EXPECT("mkdir", err, err == 0 || err == -EEXIST);
            } else {
                err = fs_rmdir(S, a);
                EXPECT("rmdir", err, is(err, 0, -ENOENT, -ENOTEMPTY, 0));
            }
            break;
        case 11: // directory renames: same parent, and into another (rename lock)
            ksnprintf(a, sizeof a, "shared/d%d", d);
            if (r & 1)
                ksnprintf(b, sizeof b, "shared/d%d", d2);
            else
                ksnprintf(b, sizeof b, "shared/d%d/d%d", d2, d);
            err = fs_rename(S, a, S, b);
            EXPECT("rename dir", err, is(err, 0, -ENOENT, -ENOTEMPTY, -EINVAL));
            break;
        case 12: // and back up
            ksnprintf(a, sizeof a, "shared/d%d/d%d", d2, d);
            ksnprintf(b, sizeof b, "shared/d%d", d);
            err = fs_rename(S, a, S, b);
            EXPECT("rename dir up", err, is(err, 0, -ENOENT, -ENOTEMPTY, -EINVAL));
            break;
        case 13: { // exchanges, of two files or two directories, in one directory or across
            int k = (r >> 56) % NSDIRS;
            const char *fa[] = {"shared/s%d", "shared/s%d", "shared/d%d", "shared/d%d"};
            ksnprintf(a, sizeof a, fa[r & 3], (r & 2) ? d : s);
            if ((r & 3) == 0)
                ksnprintf(b, sizeof b, "shared/s%d", s2);
            else if ((r & 3) == 1)
                ksnprintf(b, sizeof b, "shared/d%d/s%d", d, s2);
            else if ((r & 3) == 2)
                ksnprintf(b, sizeof b, "shared/d%d", d2);
            else
                ksnprintf(b, sizeof b, "shared/d%d/d%d", d2, k);
            err = fs_rename_flags(S, a, S, b, FS_EXCHANGE);
            EXPECT("exchange", err, is(err, 0, -ENOENT, -EINVAL, 0));
            break;
        }
        default: { // lookups and stats of anything
            struct fs_stat st;
            ksnprintf(a, sizeof a, (r & 1) ? "shared/s%d" : "shared/d%d/s%d", (r & 1) ? s : d, s2);
            err = fs_stat_path(S, a, 0, (r & 2) ? STATX_BASIC_STATS : STATX_INO, &st);
            EXPECT("stat", err, is(err, 0, -ENOENT, -ENOTDIR, 0));
            if (!err && (r & 2) && st.nlink > 64)
                fail(__LINE__, "nlink", (int)st.nlink);
            break;
        }
        }
    }
    // The model against the directory itself.
    for (int i = 0; i < NPRIV; i++) {
        struct inode *ip;
        ksnprintf(a, sizeof a, "p%d/n%d", t, i);
        int err = fs_lookup(S, a, 0, &ip);
        EXPECT("final lookup", err, pv->exists[i] ? err == 0 : err == -ENOENT);
        if (!err)
            fs_iput(ip);
    }
    kfree(pv);
}

// ---- invariants ----------------------------------------------------------------

// ino -> names seen, and the inode (open addressing).
struct seen {
    uint64_t ino;
    struct inode *ip;
    int names;
    bool dir;
    int subdirs;
};
static struct seen *tab;
static size_t tabsize;
static int dup_names, lookup_mismatch, table_full;

static struct seen *seen_get(uint64_t ino)
{
    for (size_t k = 0; k < tabsize; k++) {
        struct seen *e = &tab[(ino * 0x9e3779b97f4a7c15ULL + k) % tabsize];
        if (e->ino == ino || e->ino == 0) {
            e->ino = ino;
            return e;
        }
    }
    table_full++;
    return NULL;
}

struct scan {
    struct inode *dir;
    char (*names)[16];
    int n, max;
};

static int scan_fill(void *arg, const char *name, size_t len, uint64_t ino, unsigned type)
{
    (void)ino;
    (void)type;
    struct scan *sc = arg;
    if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
        return 0;
    if (sc->n == sc->max || len >= 16)
        return 1;
    memcpy(sc->names[sc->n], name, len);
    sc->names[sc->n][len] = 0;
    sc->n++;
    return 0;
}

// Record every name below dir (recursively).
static void scan_dir(struct inode *dir, struct seen *self)
{
    struct scan sc = {.dir = dir, .max = 4096};
    sc.names = kmalloc(sc.max * 16);
    if (!sc.names)
        return;
    uint64_t pos = 0;
    fs_readdir(dir, &pos, scan_fill, &sc);
    for (int i = 0; i < sc.n; i++) {
        for (int j = 0; j < i; j++)
            if (strcmp(sc.names[i], sc.names[j]) == 0)
                dup_names++;
        struct inode *ip;
        if (fs_lookup(dir, sc.names[i], FS_NOFOLLOW, &ip)) {
            lookup_mismatch++;
            continue;
        }
        struct seen *e = seen_get(fs_ino(ip));
        if (!e) {
            fs_iput(ip);
            continue;
        }
        e->names++;
        if (!e->ip) {
            e->ip = ip;
            e->dir = S_ISDIR(fs_mode(ip));
            if (e->dir) {
                self->subdirs++;
                scan_dir(ip, e);
            }
        } else {
            fs_iput(ip);
        }
    }
    kfree(sc.names);
}

KTEST(fs_stress_storm)
{
    char path[32];
    nthreads = 2 * ncpu_online;
    fst_warm_threads(nthreads);
    size_t before = fst_free_pages();
    int64_t inodes0, dents0, inodes1, dents1;
    fs_count_objects(&inodes0, &dents0);
    KREQUIRE((S = fst_scratch("t_stress")) != NULL);
    KREQUIRE(fs_mkdir(S, "shared", 0755) == 0);
    for (int t = 0; t < nthreads; t++) {
        ksnprintf(path, sizeof path, "p%d", t);
        KREQUIRE(fs_mkdir(S, path, 0755) == 0);
    }
    KCHECK(fst_run(nthreads, storm, NULL));
    fst_quiesce();

    tabsize = 8192;
    tab = kzalloc(tabsize * sizeof *tab);
    KREQUIRE(tab);
    dup_names = lookup_mismatch = table_full = 0;
    struct seen root = {.dir = true};
    scan_dir(S, &root);
    KCHECK_EQ(dup_names, 0);
    KCHECK_EQ(lookup_mismatch, 0);
    KCHECK_EQ(table_full, 0);
    int files = 0, dirs = 0, bad_nlink = 0;
    for (size_t k = 0; k < tabsize; k++) {
        struct seen *e = &tab[k];
        if (!e->ip)
            continue;
        int64_t nl = fst_nlink(e->ip);
        int64_t want = e->dir ? 2 + e->subdirs : e->names;
        if (nl != want) {
            kprintf("# ino %lx (%s): nlink %ld, expected %ld\n", e->ino, e->dir ? "dir" : "file",
                    nl, want);
            bad_nlink++;
        }
        if (e->dir && e->names != 1)
            bad_nlink++; // a directory has exactly one name
        e->dir ? dirs++ : files++;
        fs_iput(e->ip);
    }
    KCHECK_EQ(fst_nlink(S), 2 + root.subdirs);
    KCHECK_EQ(bad_nlink, 0);
    kprintf("# %d threads x %d ops: %d files, %d directories left\n", nthreads, OPS, files, dirs);
    kfree(tab);

    fs_iput(S);
    KCHECK_EQ(fst_rm_rf("/t_stress"), 0);
    size_t after = fst_free_pages();
    fs_count_objects(&inodes1, &dents1);
    KCHECK_EQ(inodes1, inodes0);
    KCHECK_EQ(dents1, dents0);
    if (after != before)
        kprintf("# pages before %zu, after %zu\n", before, after);
    KCHECK_EQ(after, before);
}
