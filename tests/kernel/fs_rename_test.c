// ScaleFS rename in all its cases: files and directories, within and across
// directories, over what exists; exchange (FS_EXCHANGE) and FS_NOREPLACE.
#include "fstest.h"
#include "inode.h"
#include "ktest/ktest.h"
#include "sync/atomic.h"
#include "sync/percpu.h"

static struct inode *D;

static uint64_t ino_of(const char *path)
{
    struct fs_stat st;
    if (fs_stat_path(D, path, FS_NOFOLLOW, STATX_INO, &st))
        return 0;
    return st.ino;
}

static int64_t nlink_of(const char *path)
{
    struct fs_stat st;
    if (fs_stat_path(D, path, FS_NOFOLLOW, STATX_NLINK, &st))
        return -1;
    return (int64_t)st.nlink;
}

static int mkfile(const char *path, const char *content)
{
    struct inode *ip;
    int err = fs_create(D, path, 0644, FS_EXCL, &ip);
    if (err)
        return err;
    if (content)
        fs_write(ip, content, strlen(content), 0);
    fs_iput(ip);
    return 0;
}

static bool content_is(const char *path, const char *want)
{
    struct inode *ip;
    char buf[64] = {0};
    if (fs_lookup(D, path, 0, &ip))
        return false;
    int64_t n = fs_read(ip, buf, sizeof buf - 1, 0);
    fs_iput(ip);
    return n == (int64_t)strlen(want) && memcmp(buf, want, n) == 0;
}

KTEST(fs_rename_files)
{
    KREQUIRE((D = fst_scratch("t_rename")) != NULL);
    KCHECK_EQ(mkfile("a", "A"), 0);
    uint64_t a = ino_of("a");
    KCHECK_EQ(fs_rename(D, "a", D, "b"), 0);           // same directory
    KCHECK_EQ(ino_of("a"), 0);
    KCHECK_EQ(ino_of("b"), a);
    KCHECK(content_is("b", "A"));
    KCHECK_EQ(fs_mkdir(D, "d", 0755), 0);
    KCHECK_EQ(fs_rename(D, "b", D, "d/c"), 0);         // across directories
    KCHECK_EQ(ino_of("d/c"), a);
    KCHECK_EQ(nlink_of("d/c"), 1);
    // Over an existing file: replaced atomically; the old target loses its link.
    KCHECK_EQ(mkfile("t", "T"), 0);
    struct inode *t;
    KREQUIRE(fs_lookup(D, "t", 0, &t) == 0);
    KCHECK_EQ(fs_rename(D, "d/c", D, "t"), 0);
    KCHECK_EQ(ino_of("t"), a);
    KCHECK(content_is("t", "A"));
    KCHECK_EQ(fst_nlink(t), 0);
    fs_iput(t);
    KCHECK_EQ(ino_of("d/c"), 0);
    // Onto itself, or onto another name of the same file: success, no change.
    KCHECK_EQ(fs_rename(D, "t", D, "t"), 0);
    KCHECK_EQ(fs_link(D, "t", D, "t2", 0), 0);
    KCHECK_EQ(fs_rename(D, "t", D, "t2"), 0);
    KCHECK_EQ(ino_of("t"), a);
    KCHECK_EQ(ino_of("t2"), a);
    KCHECK_EQ(nlink_of("t"), 2);
    // Errors.
    KCHECK_EQ(fs_rename(D, "nope", D, "x"), -ENOENT);
    KCHECK_EQ(fs_rename(D, "t", D, "nope/x"), -ENOENT);
    KCHECK_EQ(fs_rename(D, "t", D, "d"), -EISDIR);     // file over directory
    KCHECK_EQ(fs_rename(D, "t", D, "x/"), -ENOTDIR);   // file with a trailing slash
    KCHECK_EQ(fs_rename(D, "t/", D, "x"), -ENOTDIR);
    KCHECK_EQ(fs_rename(D, "t", D, "t2/x"), -ENOTDIR);
    KCHECK_EQ(fs_rename(D, ".", D, "x"), -EBUSY);
    KCHECK_EQ(fs_rename(D, "t", D, ".."), -EBUSY);
    KCHECK_EQ(fs_rename(NULL, "/", D, "x"), -EBUSY);
    // A symlink is renamed, not followed.
    KCHECK_EQ(fs_symlink(D, "t", "s"), 0);
    KCHECK_EQ(fs_rename(D, "s", D, "s2"), 0);
    KCHECK_EQ(ino_of("t"), a);
    char buf[8];
    KCHECK_EQ(fs_readlink(D, "s2", buf, sizeof buf), 1);
    fs_iput(D);
    fst_rm_rf("/t_rename");
}

KTEST(fs_rename_dirs)
{
    KREQUIRE((D = fst_scratch("t_renamed")) != NULL);
    KCHECK_EQ(fs_mkdir(D, "a", 0755), 0);
    KCHECK_EQ(fs_mkdir(D, "a/sub", 0755), 0);
    KCHECK_EQ(mkfile("a/sub/f", "F"), 0);
    KCHECK_EQ(fs_mkdir(D, "b", 0755), 0);
    uint64_t a = ino_of("a");
    // Same directory.
    KCHECK_EQ(fs_rename(D, "a", D, "a2"), 0);
    KCHECK_EQ(ino_of("a2"), a);
    KCHECK_EQ(nlink_of("."), 4); // a2, b, and its own "."... 2 + 2 subdirectories
    // Across directories: ".." follows, link counts of both parents change.
    KCHECK_EQ(fs_rename(D, "a2", D, "b/a3/"), 0);
    KCHECK_EQ(ino_of("b/a3"), a);
    KCHECK_EQ(ino_of("b/a3/.."), ino_of("b"));
    KCHECK_EQ(ino_of("b/a3/sub/../.."), ino_of("b"));
    KCHECK_EQ(nlink_of("."), 3);
    KCHECK_EQ(nlink_of("b"), 3);
    KCHECK(content_is("b/a3/sub/f", "F"));
    // Into its own subtree.
    KCHECK_EQ(fs_rename(D, "b", D, "b/a3/sub/x"), -EINVAL);
    KCHECK_EQ(fs_rename(D, "b", D, "b/x"), -EINVAL);
    KCHECK_EQ(fs_rename(D, "b/a3", D, "b/a3/x"), -EINVAL);
    // Over a non-empty directory, a file, an empty directory.
    KCHECK_EQ(fs_mkdir(D, "full", 0755), 0);
    KCHECK_EQ(mkfile("full/f", NULL), 0);
    KCHECK_EQ(fs_rename(D, "b/a3", D, "full"), -ENOTEMPTY);
    KCHECK_EQ(mkfile("file", NULL), 0);
    KCHECK_EQ(fs_rename(D, "b/a3", D, "file"), -ENOTDIR);
    KCHECK_EQ(fs_mkdir(D, "empty", 0755), 0);
    struct inode *empty;
    KREQUIRE(fs_lookup(D, "empty", 0, &empty) == 0);
    KCHECK_EQ(nlink_of("."), 5); // b, full, empty
    KCHECK_EQ(fs_rename(D, "b/a3", D, "empty"), 0);
    KCHECK_EQ(ino_of("empty"), a);
    KCHECK_EQ(fst_nlink(empty), 0);
    KCHECK_EQ(fs_create(empty, "x", 0644, 0, NULL), -ENOENT); // the replaced one is dead
    fs_iput(empty);
    KCHECK_EQ(nlink_of("."), 5); // b, full, and a (as "empty")
    KCHECK_EQ(nlink_of("b"), 2);
    // The target an ancestor of the source: not empty.
    KCHECK_EQ(fs_rename(D, "empty/sub", D, "empty"), -ENOTEMPTY);
    // A directory onto itself.
    KCHECK_EQ(fs_rename(D, "empty", D, "empty"), 0);
    KCHECK_EQ(fs_rename(D, "empty/sub", D, "empty/sub/"), 0);
    fs_iput(D);
    fst_rm_rf("/t_renamed");
}

// FS_EXCHANGE (renameat2 RENAME_EXCHANGE): the names swap their files; two
// directories across parents each get the other's parent as "..", and the
// parents' link counts stay; each name always resolves.
KTEST(fs_rename_exchange)
{
    KREQUIRE((D = fst_scratch("t_exchange")) != NULL);
    KCHECK_EQ(fs_mkdir(D, "p", 0755), 0);
    KCHECK_EQ(fs_mkdir(D, "q", 0755), 0);
    KCHECK_EQ(fs_mkdir(D, "p/a", 0755), 0);
    KCHECK_EQ(fs_mkdir(D, "q/b", 0755), 0);
    KCHECK_EQ(fs_mkdir(D, "q/b/c", 0755), 0);
    KCHECK_EQ(mkfile("p/a/f", "A"), 0);
    uint64_t a = ino_of("p/a"), b = ino_of("q/b");
    KCHECK_EQ(fs_rename_flags(D, "p/a", D, "q/b", FS_EXCHANGE), 0);
    KCHECK_EQ(ino_of("p/a"), b);
    KCHECK_EQ(ino_of("q/b"), a);
    KCHECK_EQ(ino_of("p/a/.."), ino_of("p"));
    KCHECK_EQ(ino_of("q/b/.."), ino_of("q"));
    KCHECK_EQ(ino_of("p/a/c/../.."), ino_of("p"));
    KCHECK(content_is("q/b/f", "A"));
    KCHECK_EQ(nlink_of("p"), 3);
    KCHECK_EQ(nlink_of("q"), 3);
    KCHECK_EQ(nlink_of("p/a"), 3); // its child c
    // A directory and a file across parents: the counts move with the directory.
    KCHECK_EQ(mkfile("q/g", "G"), 0);
    KCHECK_EQ(fs_rename_flags(D, "p/a", D, "q/g", FS_EXCHANGE), 0);
    KCHECK(content_is("p/a", "G"));
    KCHECK_EQ(ino_of("q/g"), b);
    KCHECK_EQ(ino_of("q/g/.."), ino_of("q"));
    KCHECK_EQ(nlink_of("p"), 2);
    KCHECK_EQ(nlink_of("q"), 4);
    // Errors, and nothing changed by them.
    KCHECK_EQ(fs_rename_flags(D, "q", D, "q/g/c", FS_EXCHANGE), -EINVAL);
    KCHECK_EQ(fs_rename_flags(D, "q/g/c", D, "q", FS_EXCHANGE), -EINVAL);
    KCHECK_EQ(fs_rename_flags(D, "p/a", D, "p/none", FS_EXCHANGE), -ENOENT);
    KCHECK_EQ(fs_rename_flags(D, "p/a/", D, "q/b", FS_EXCHANGE), -ENOTDIR);
    KCHECK_EQ(fs_rename_flags(D, "p/a", D, "q/b", FS_EXCHANGE | FS_NOREPLACE), -EINVAL);
    KCHECK_EQ(fs_rename_flags(D, "p/a", D, "p/a", FS_EXCHANGE), 0);
    KCHECK(content_is("p/a", "G"));
    KCHECK_EQ(ino_of("q/g"), b);
    fs_iput(D);
    fst_rm_rf("/t_exchange");
}

KTEST(fs_rename_noreplace)
{
    KREQUIRE((D = fst_scratch("t_noreplace")) != NULL);
    KREQUIRE(mkfile("a", NULL) == 0 && mkfile("b", NULL) == 0);
    uint64_t a = ino_of("a");
    KCHECK_EQ(fs_rename_flags(D, "a", D, "b", FS_NOREPLACE), -EEXIST);
    KCHECK_EQ(fs_rename_flags(D, "a", D, "a", FS_NOREPLACE), -EEXIST); // as Linux
    KCHECK_EQ(fs_rename_flags(D, "a", D, "c", FS_NOREPLACE), 0);
    KCHECK_EQ(ino_of("c"), a);
    KCHECK_EQ(ino_of("a"), 0);
    KCHECK_EQ(fs_mkdir(D, "d", 0755), 0);
    KCHECK_EQ(fs_mkdir(D, "e", 0755), 0);
    KCHECK_EQ(fs_rename_flags(D, "d", D, "e", FS_NOREPLACE), -EEXIST); // even an empty dir
    KCHECK_EQ(fs_rename_flags(D, "d", D, "e/d", FS_NOREPLACE), 0);
    fs_iput(D);
    fst_rm_rf("/t_noreplace");
}

static struct dent *entry_of(const char *name)
{
    epoch_enter(); // entries of D are only removed by this test's calls
    struct dent *e = dirhash_lookup(&D->dir, name, strlen(name), dirhash_hash(&D->dir, name, strlen(name)));
    epoch_exit();
    return e;
}

// A rename over a file of the same kind changes the target's entry in place
// (rebind): a lookup that only asks whether the name exists reads nothing it
// writes. Over another kind, the entry is replaced as before.
KTEST(fs_rename_over_rebinds_the_entry)
{
    KREQUIRE((D = fst_scratch("t_rebind")) != NULL);
    KREQUIRE(mkfile("a", "A") == 0 && mkfile("t", "T") == 0);
    uint64_t a = ino_of("a");
    struct dent *e = entry_of("t");
    struct inode *t;
    KREQUIRE(fs_lookup(D, "t", 0, &t) == 0);
    KCHECK_EQ(fs_rename(D, "a", D, "t"), 0);
    KCHECK(entry_of("t") == e);
    KCHECK_EQ(e->ino, a);
    KCHECK_EQ(ino_of("t"), a);
    KCHECK(content_is("t", "A"));
    KCHECK_EQ(ino_of("a"), 0);
    KCHECK_EQ(nlink_of("t"), 1);
    KCHECK_EQ(fst_nlink(t), 0);
    fs_iput(t);
    // Symlink over a file: kinds differ, a new entry.
    KCHECK_EQ(fs_symlink(D, "t", "s"), 0);
    KCHECK_EQ(fs_rename(D, "s", D, "t"), 0);
    KCHECK(entry_of("t") != e);
    char buf[8];
    KCHECK_EQ(fs_readlink(D, "t", buf, sizeof buf), 1);
    fs_iput(D);
    fst_rm_rf("/t_rebind");
}

// Rebinds against the calls that read or own the target: the name never goes
// missing, links of it always find a file with links, and the counts balance.
struct rebind_race {
    struct inode *dir;
    volatile int stop;
    uint64_t renamed, linked;
};

// Thread 0 makes files and renames them over t; the others, by i % 3: link t
// to a name of their own and unlink it; do the same as thread 0, so rebinds
// of t meet; look t up and rename it onto itself.
static void rebind_over_t(struct rebind_race *r, const char *name)
{
    int err = fs_create(r->dir, name, 0644, FS_EXCL, NULL);
    if (!err)
        err = fs_rename(r->dir, name, r->dir, "t");
    if (err)
        ktest_failed(__FILE__, __LINE__, "create+rename over t: %d", err);
    fetch_add_relaxed(&r->renamed, 1);
}

static void rebind_race_thread(int i, void *arg)
{
    struct rebind_race *r = arg;
    char name[16];
    ksnprintf(name, sizeof name, "n%d", i);
    if (i == 0) { // at least 300, and until the links have met some
        for (int k = 0; k < 300 || (load_relaxed(&r->linked) < 50 && k < 100000); k++)
            rebind_over_t(r, name);
        r->stop = 1;
        return;
    }
    while (!r->stop) {
        struct inode *ip;
        if (i % 3 == 2) {
            rebind_over_t(r, name);
        } else if (i % 3 == 1) {
            int err = fs_link(r->dir, "t", r->dir, name, 0);
            if (err) {
                ktest_failed(__FILE__, __LINE__, "link of t: %d", err);
                return;
            }
            fetch_add_relaxed(&r->linked, 1);
            if (fs_lookup(r->dir, name, 0, &ip) == 0) {
                if (fst_nlink(ip) < 1)
                    ktest_failed(__FILE__, __LINE__, "a linked file without links");
                fs_iput(ip);
            }
            if (fs_unlink(r->dir, name) != 0)
                ktest_failed(__FILE__, __LINE__, "unlink of the link");
        } else {
            if (fs_lookup(r->dir, "t", 0, &ip) != 0) {
                ktest_failed(__FILE__, __LINE__, "t went missing");
                return;
            }
            fs_iput(ip);
            if (fs_rename(r->dir, "t", r->dir, "t") != 0)
                ktest_failed(__FILE__, __LINE__, "rename of t onto itself");
        }
    }
}

KTEST(fs_rename_rebind_race)
{
    KREQUIRE((D = fst_scratch("t_rebindrace")) != NULL);
    KREQUIRE(mkfile("t", "T") == 0);
    fst_quiesce();
    int64_t inodes0, dents0, inodes1, dents1;
    fs_count_objects(&inodes0, &dents0);
    struct rebind_race r = {.dir = D};
    KCHECK(fst_run(MAX(ncpu_online, 4), rebind_race_thread, &r));
    KCHECK(r.renamed >= 300);
    KCHECK(r.linked >= 50);
    KCHECK_EQ(nlink_of("t"), 1);
    KCHECK_EQ(fs_unlink(D, "t"), 0);
    fst_quiesce();
    fs_count_objects(&inodes1, &dents1);
    KCHECK_EQ(inodes1, inodes0 - 1);
    KCHECK_EQ(dents1, dents0 - 1);
    fs_iput(D);
    fst_rm_rf("/t_rebindrace");
}
