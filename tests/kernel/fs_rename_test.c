// ScaleFS semantics: rename in all its cases (and exchange), stat (fields, mask, times) and
// readdir basics.
#include "fstest.h"
#include "inode.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "proc/sched.h"
#include "sync/percpu.h"
#include "x86/smp.h"

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

KTEST(fs_stat_fields)
{
    KREQUIRE((D = fst_scratch("t_stat")) != NULL);
    struct inode *f;
    KREQUIRE(fs_create(D, "f", 0604, FS_EXCL, &f) == 0);
    struct fs_stat st;
    KCHECK_EQ(fs_stat(f, STATX_BASIC_STATS, &st), 0);
    KCHECK_EQ(st.mask, STATX_BASIC_STATS);
    KCHECK_EQ(st.mode, S_IFREG | 0604);
    KCHECK_EQ(st.nlink, 1);
    KCHECK_EQ(st.uid, 0);
    KCHECK_EQ(st.gid, 0);
    KCHECK_EQ(st.size, 0);
    KCHECK_EQ(st.blocks, 0);
    KCHECK(st.ino >> 40 >= 1); // CPU + 1 in the high bits
    KCHECK(st.mtime.sec >= (int64_t)FS_EPOCH_SEC);
    KCHECK(st.mtime.nsec < 1000000000);
    // Only what is asked for is filled in.
    KCHECK_EQ(fs_stat(f, STATX_SIZE, &st), 0);
    KCHECK_EQ(st.mask, STATX_SIZE);
    KCHECK_EQ(st.nlink, 0);
    KCHECK_EQ(st.ino, 0);
    // Writing moves mtime and ctime.
    KCHECK_EQ(fs_stat(f, STATX_MTIME | STATX_CTIME, &st), 0);
    struct fs_timespec m0 = st.mtime;
    sched_sleep_until(nsec_now() + 1000000);
    KCHECK_EQ(fs_write(f, "x", 1, 10000), 1);
    KCHECK_EQ(fs_stat(f, STATX_BASIC_STATS, &st), 0);
    KCHECK(st.mtime.sec > m0.sec || (st.mtime.sec == m0.sec && st.mtime.nsec > m0.nsec));
    KCHECK_EQ(st.size, 10001);
    KCHECK_EQ(st.blocks, 8); // one page (2); pages 0 and 1 are holes
    fs_iput(f);
    // Directory and symlink.
    KCHECK_EQ(fs_symlink(D, "abcdef", "l"), 0);
    KCHECK_EQ(fs_stat_path(D, "l", FS_NOFOLLOW, STATX_BASIC_STATS, &st), 0);
    KCHECK_EQ(st.mode, S_IFLNK | 0777);
    KCHECK_EQ(st.size, 6);
    KCHECK_EQ(fs_stat(D, STATX_BASIC_STATS, &st), 0);
    KCHECK_EQ(st.mode, S_IFDIR | 0755);
    KCHECK_EQ(st.nlink, 2);
    fs_iput(D);
    fst_rm_rf("/t_stat");
}

static void create_on_cpu(int i, void *arg)
{
    char name[16];
    ksnprintf(name, sizeof name, "f%d", i);
    struct inode *ip;
    if (fs_create(arg, name, 0644, FS_EXCL, &ip) == 0) {
        if (fs_ino(ip) >> 40 != (uint64_t)(i % ncpu_online) + 1)
            ktest_failed(__FILE__, __LINE__, "ino %lx made on cpu %d", fs_ino(ip), i % ncpu_online);
        fs_iput(ip);
    } else {
        ktest_failed(__FILE__, __LINE__, "create %s", name);
    }
}

KTEST(fs_ino_per_cpu)
{
    KREQUIRE((D = fst_scratch("t_ino")) != NULL);
    KCHECK(fst_run(ncpu_online, create_on_cpu, D));
    KCHECK_EQ(fst_count_entries(D), ncpu_online);
    fs_iput(D);
    fst_rm_rf("/t_ino");
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
    KCHECK_EQ(mkfile("x", NULL), 0);
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
