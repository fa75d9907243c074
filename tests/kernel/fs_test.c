// ScaleFS semantics, one case at a time: path resolution, create, mkdir,
// unlink, rmdir, link, symlinks, device nodes, with every error the interface
// promises; directory times, chmod, stat's fields and mask, inode numbers per
// CPU, the memory of a small directory. (Rename, file data, readdir, the
// directory hash and the rest have files of their own: fs_NAME_test.c.)
#include "fstest.h"
#include "inode.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "sync/refcache.h"
#include "x86/smp.h"
#include "x86/x86.h"

static struct inode *D; // the test's scratch directory

static bool setup(const char *name)
{
    D = fst_scratch(name);
    return D != NULL;
}

static void teardown(const char *name)
{
    char path[64];
    fs_iput(D);
    ksnprintf(path, sizeof path, "/%s", name);
    fst_rm_rf(path);
}

static int mkfile(const char *path)
{
    struct inode *ip;
    int err = fs_create(D, path, 0644, FS_EXCL, &ip);
    if (!err)
        fs_iput(ip);
    return err;
}

static uint64_t ino_of(const char *path, int flags)
{
    struct fs_stat st;
    if (fs_stat_path(D, path, flags, STATX_INO, &st))
        return 0;
    return st.ino;
}

static uint32_t mode_of(const char *path, int flags)
{
    struct fs_stat st;
    if (fs_stat_path(D, path, flags, STATX_MODE, &st))
        return 0;
    return st.mode;
}

static int64_t nlink_of(const char *path)
{
    struct fs_stat st;
    if (fs_stat_path(D, path, FS_NOFOLLOW, STATX_NLINK, &st))
        return -1;
    return (int64_t)st.nlink;
}

KTEST(fs_lookup_paths)
{
    KREQUIRE(setup("t_lookup"));
    KCHECK_EQ(fs_mkdir(D, "a", 0755), 0);
    KCHECK_EQ(fs_mkdir(D, "a/b", 0755), 0);
    KCHECK_EQ(mkfile("a/b/f"), 0);
    uint64_t f = ino_of("a/b/f", 0);
    KCHECK(f != 0);
    KCHECK_EQ(ino_of("a//b///f", 0), f);
    KCHECK_EQ(ino_of("./a/./b/../b/f", 0), f);
    KCHECK_EQ(ino_of("/t_lookup/a/b/f", 0), f);
    KCHECK_EQ(ino_of("a/b/", 0), ino_of("a/b", 0));
    KCHECK_EQ(ino_of("a/b/.", 0), ino_of("a/b", 0));
    KCHECK_EQ(ino_of("a/b/..", 0), ino_of("a", 0));
    KCHECK_EQ(ino_of("..", 0), fs_ino(fs_root()));
    KCHECK_EQ(ino_of("/..", 0), fs_ino(fs_root()));
    KCHECK_EQ(ino_of("/../../.", 0), fs_ino(fs_root()));
    KCHECK_EQ(ino_of("/", 0), fs_ino(fs_root()));
    KCHECK_EQ(ino_of("///", 0), fs_ino(fs_root()));
    KCHECK(S_ISDIR(mode_of(".", 0)));

    struct inode *ip;
    KCHECK_EQ(fs_lookup(D, "", 0, &ip), -ENOENT);
    KCHECK_EQ(fs_lookup(D, "nope", 0, &ip), -ENOENT);
    KCHECK_EQ(fs_lookup(D, "nope/x", 0, &ip), -ENOENT);
    KCHECK_EQ(fs_lookup(D, "a/b/f/", 0, &ip), -ENOTDIR);   // trailing slash on a file
    KCHECK_EQ(fs_lookup(D, "a/b/f/x", 0, &ip), -ENOTDIR);  // file in the middle
    KCHECK_EQ(fs_lookup(D, "a/b/f/.", 0, &ip), -ENOTDIR);
    // Relative lookups from a file as the starting directory.
    KREQUIRE(fs_lookup(D, "a/b/f", 0, &ip) == 0);
    struct inode *ip2 = NULL;
    KCHECK_EQ(fs_lookup(ip, "x", 0, &ip2), -ENOTDIR);
    KCHECK_EQ(fs_lookup(ip, "/t_lookup/a", 0, &ip2), 0); // absolute: the start is ignored
    if (ip2)
        fs_iput(ip2);
    fs_iput(ip);

    // Name and path length limits.
    char *p = kmalloc(FS_PATH_MAX + 8);
    KREQUIRE(p);
    memset(p, 'n', 255);
    p[255] = 0;
    KCHECK_EQ(mkfile(p), 0);               // 255 bytes: fine
    KCHECK(ino_of(p, 0) != 0);
    p[255] = 'n';
    p[256] = 0;
    KCHECK_EQ(mkfile(p), -ENAMETOOLONG);   // 256
    KCHECK_EQ(fs_lookup(D, p, 0, &ip), -ENAMETOOLONG);
    KCHECK_EQ(fs_mkdir(D, p, 0755), -ENAMETOOLONG);
    memcpy(p + 256, "/x", 3);
    KCHECK_EQ(fs_lookup(D, p, 0, &ip), -ENAMETOOLONG); // in the middle too
    for (int i = 0; i < FS_PATH_MAX; i++)
        p[i] = i % 2 ? '/' : '.';
    p[FS_PATH_MAX] = 0;
    KCHECK_EQ(fs_lookup(D, p, 0, &ip), -ENAMETOOLONG); // 4096 bytes + NUL
    p[FS_PATH_MAX - 1] = 0;
    ip = NULL;
    KCHECK_EQ(fs_lookup(D, p, 0, &ip), 0);              // 4095: fine ("././.../.")
    if (ip)
        fs_iput(ip);
    kfree(p);
    teardown("t_lookup");
}

KTEST(fs_create_cases)
{
    KREQUIRE(setup("t_create"));
    struct inode *a, *b;
    KREQUIRE(fs_create(D, "f", 0640, FS_EXCL, &a) == 0);
    KCHECK_EQ(fs_create(D, "f", 0640, FS_EXCL, &b), -EEXIST);
    KCHECK_EQ(fs_create(D, "f", 0640, 0, &b), 0); // open(O_CREAT) of an existing file
    KCHECK(a == b);
    fs_iput(b);
    KCHECK_EQ(fs_mode(a), S_IFREG | 0640);
    fs_iput(a);
    KCHECK_EQ(fs_create(D, "f/", 0640, 0, &b), -EISDIR);
    KCHECK_EQ(fs_create(D, "g/", 0640, 0, &b), -EISDIR);
    KCHECK_EQ(fs_create(D, ".", 0640, 0, &b), -EISDIR);
    KCHECK_EQ(fs_create(D, ".", 0640, FS_EXCL, &b), -EEXIST);
    KCHECK_EQ(fs_mkdir(D, "d", 0755), 0);
    KCHECK_EQ(fs_create(D, "d", 0640, 0, &b), -EISDIR);
    KCHECK_EQ(fs_create(D, "d", 0640, FS_EXCL, &b), -EEXIST);
    KCHECK_EQ(fs_create(D, "missing/f", 0640, 0, &b), -ENOENT);
    KCHECK_EQ(fs_create(D, "f/x", 0640, 0, &b), -ENOTDIR);
    KCHECK_EQ(fs_create(D, "", 0640, 0, &b), -ENOENT);
    KCHECK_EQ(fs_create(D, "d/new", 0600, 0, NULL), 0); // no reference wanted
    KCHECK_EQ(mode_of("d/new", 0), S_IFREG | 0600);
    teardown("t_create");
}

KTEST(fs_mkdir_cases)
{
    KREQUIRE(setup("t_mkdir"));
    KCHECK_EQ(nlink_of("."), 2);
    KCHECK_EQ(fs_mkdir(D, "d", 0750), 0);
    KCHECK_EQ(mode_of("d", 0), S_IFDIR | 0750);
    KCHECK_EQ(nlink_of("d"), 2);
    KCHECK_EQ(nlink_of("."), 3); // d's ".."
    KCHECK_EQ(fs_mkdir(D, "d", 0750), -EEXIST);
    KCHECK_EQ(fs_mkdir(D, "d/", 0750), -EEXIST);
    KCHECK_EQ(fs_mkdir(D, "e/", 0750), 0); // a trailing slash is fine for mkdir
    KCHECK_EQ(fs_mkdir(D, ".", 0750), -EEXIST);
    KCHECK_EQ(fs_mkdir(D, "..", 0750), -EEXIST);
    KCHECK_EQ(fs_mkdir(NULL, "/", 0750), -EEXIST);
    KCHECK_EQ(fs_mkdir(D, "d/.", 0750), -EEXIST);
    KCHECK_EQ(fs_mkdir(D, "x/y", 0750), -ENOENT);
    KCHECK_EQ(mkfile("f"), 0);
    KCHECK_EQ(fs_mkdir(D, "f", 0750), -EEXIST);
    KCHECK_EQ(fs_mkdir(D, "f/y", 0750), -ENOTDIR);
    KCHECK_EQ(fs_mkdir(D, "d/sub", 0750), 0);
    KCHECK_EQ(nlink_of("d"), 3);
    KCHECK_EQ(ino_of("d/sub/..", 0), ino_of("d", 0));
    teardown("t_mkdir");
}

KTEST(fs_unlink_cases)
{
    KREQUIRE(setup("t_unlink"));
    KCHECK_EQ(mkfile("f"), 0);
    KCHECK_EQ(fs_mkdir(D, "d", 0755), 0);
    KCHECK_EQ(fs_unlink(D, "f/"), -ENOTDIR);
    KCHECK_EQ(fs_unlink(D, "d"), -EISDIR);
    KCHECK_EQ(fs_unlink(D, "d/"), -EISDIR);
    KCHECK_EQ(fs_unlink(D, "."), -EISDIR);
    KCHECK_EQ(fs_unlink(D, ".."), -EISDIR);
    KCHECK_EQ(fs_unlink(NULL, "/"), -EISDIR);
    KCHECK_EQ(fs_unlink(D, "nope"), -ENOENT);
    KCHECK_EQ(fs_unlink(D, "nope/x"), -ENOENT);
    KCHECK_EQ(fs_unlink(D, "f/x"), -ENOTDIR);
    struct inode *ip;
    KREQUIRE(fs_lookup(D, "f", 0, &ip) == 0);
    KCHECK_EQ(fs_unlink(D, "f"), 0);
    KCHECK_EQ(fs_unlink(D, "f"), -ENOENT);
    KCHECK_EQ(ino_of("f", 0), 0);
    KCHECK_EQ(fst_nlink(ip), 0);
    // The open reference keeps the file usable after its last name is gone.
    KCHECK_EQ(fs_write(ip, "abc", 3, 0), 3);
    char buf[4] = {0};
    KCHECK_EQ(fs_read(ip, buf, 3, 0), 3);
    KCHECK(memcmp(buf, "abc", 3) == 0);
    fs_iput(ip);
    teardown("t_unlink");
}

KTEST(fs_rmdir_cases)
{
    KREQUIRE(setup("t_rmdir"));
    KCHECK_EQ(fs_mkdir(D, "d", 0755), 0);
    KCHECK_EQ(mkfile("d/f"), 0);
    KCHECK_EQ(fs_rmdir(D, "d"), -ENOTEMPTY);
    KCHECK_EQ(fs_rmdir(D, "d/f"), -ENOTDIR);
    KCHECK_EQ(fs_rmdir(D, "d/."), -EINVAL);
    KCHECK_EQ(fs_rmdir(D, "."), -EINVAL);
    KCHECK_EQ(fs_rmdir(D, "d/.."), -ENOTEMPTY);
    KCHECK_EQ(fs_rmdir(NULL, "/"), -EBUSY);
    KCHECK_EQ(fs_rmdir(D, "nope"), -ENOENT);
    KCHECK_EQ(fs_unlink(D, "d/f"), 0);
    struct inode *d;
    KREQUIRE(fs_lookup(D, "d", 0, &d) == 0);
    KCHECK_EQ(nlink_of("."), 3);
    KCHECK_EQ(fs_rmdir(D, "d/"), 0); // trailing slash is fine
    KCHECK_EQ(fs_rmdir(D, "d"), -ENOENT);
    KCHECK_EQ(nlink_of("."), 2);
    KCHECK_EQ(fst_nlink(d), 0);
    // A removed directory still held (a cwd, say) is empty and stays so.
    KCHECK_EQ(fs_create(d, "x", 0644, 0, NULL), -ENOENT);
    KCHECK_EQ(fs_mkdir(d, "x", 0755), -ENOENT);
    KCHECK_EQ(fst_count_entries(d), 0);
    struct inode *up;
    KCHECK_EQ(fs_lookup(d, "..", 0, &up), 0); // ".." still leads back
    if (up) {
        KCHECK(up == D);
        fs_iput(up);
    }
    fs_iput(d);
    teardown("t_rmdir");
}

KTEST(fs_link_cases)
{
    KREQUIRE(setup("t_link"));
    KCHECK_EQ(mkfile("f"), 0);
    KCHECK_EQ(fs_mkdir(D, "d", 0755), 0);
    KCHECK_EQ(nlink_of("f"), 1);
    KCHECK_EQ(fs_link(D, "f", D, "d/g", 0), 0);
    KCHECK_EQ(nlink_of("f"), 2);
    KCHECK_EQ(ino_of("d/g", 0), ino_of("f", 0));
    KCHECK_EQ(fs_link(D, "f", D, "d/g", 0), -EEXIST);
    KCHECK_EQ(fs_link(D, "f", D, "d", 0), -EEXIST);
    KCHECK_EQ(fs_link(D, "d", D, "dd", 0), -EPERM);
    KCHECK_EQ(fs_link(D, ".", D, "dd", 0), -EPERM);
    KCHECK_EQ(fs_link(D, "nope", D, "x", 0), -ENOENT);
    KCHECK_EQ(fs_link(D, "f", D, "nope/x", 0), -ENOENT);
    KCHECK_EQ(fs_link(D, "f", D, "d/.", 0), -EEXIST);
    KCHECK_EQ(fs_link(D, "f", D, "h/", 0), -ENOENT);
    KCHECK_EQ(fs_link(D, "f/", D, "h", 0), -ENOTDIR);
    KCHECK_EQ(fs_unlink(D, "f"), 0);
    KCHECK_EQ(nlink_of("d/g"), 1);
    KCHECK_EQ(fs_link(D, "f", D, "h", 0), -ENOENT);
    // link does not follow a symlink unless asked to.
    KCHECK_EQ(fs_symlink(D, "d/g", "s"), 0);
    KCHECK_EQ(fs_link(D, "s", D, "s2", 0), 0);
    KCHECK(S_ISLNK(mode_of("s2", FS_NOFOLLOW)));
    KCHECK_EQ(fs_link(D, "s", D, "g2", FS_FOLLOW), 0);
    KCHECK_EQ(ino_of("g2", FS_NOFOLLOW), ino_of("d/g", 0));
    KCHECK_EQ(nlink_of("d/g"), 2);
    teardown("t_link");
}

// link against removers of its source name (linkpin.c): one thread keeps
// replacing "a" by a new file (rename "x" over it) or unlinking it, the others
// keep linking "a" to names of their own and removing them. A link that
// succeeds names a file that still had "a" then, so its count is at least the
// new name's, and no file is freed while a name holds it: afterwards every
// inode and entry is gone again.
struct link_race {
    struct inode *dir;
    volatile int stop;
    volatile long linked;
};

static void link_race_thread(int i, void *arg)
{
    struct link_race *r = arg;
    if (i == 0) {
        // Until some link went through too: on one CPU the linkers run only
        // when this thread yields.
        for (int k = 0; k < 3000 || (!r->linked && k < 300000); k++) {
            if (k % 64 == 63)
                sched_yield();
            struct inode *ip;
            if (fs_create(r->dir, "x", 0644, FS_EXCL, &ip) == 0)
                fs_iput(ip);
            int err = k % 3 ? fs_rename(r->dir, "x", r->dir, "a") : fs_unlink(r->dir, "a");
            if (err && err != -ENOENT)
                ktest_failed(__FILE__, __LINE__, "remover: %d", err);
        }
        r->stop = 1;
        return;
    }
    char name[16];
    ksnprintf(name, sizeof name, "l%d", i);
    while (!r->stop) {
        int err = fs_link(r->dir, "a", r->dir, name, 0);
        if (err == -ENOENT)
            continue;
        if (err) {
            ktest_failed(__FILE__, __LINE__, "link: %d", err);
            return;
        }
        fetch_add_relaxed(&r->linked, 1);
        struct inode *ip;
        if (fs_lookup(r->dir, name, 0, &ip) == 0) {
            if (fst_nlink(ip) < 1)
                ktest_failed(__FILE__, __LINE__, "a linked file without links");
            fs_iput(ip);
        } else {
            ktest_failed(__FILE__, __LINE__, "the new name is missing");
        }
        if (fs_unlink(r->dir, name) != 0)
            ktest_failed(__FILE__, __LINE__, "unlink of the new name");
    }
}

KTEST(fs_link_pin_race)
{
    KREQUIRE(setup("t_linkrace"));
    fst_quiesce();
    int64_t inodes0, dents0, inodes1, dents1;
    fs_count_objects(&inodes0, &dents0);
    struct link_race r = {.dir = D};
    KCHECK(fst_run(MAX(ncpu_online, 2), link_race_thread, &r));
    KCHECK(r.linked > 0);
    fs_unlink(D, "a");
    fs_unlink(D, "x");
    KCHECK_EQ(fst_count_entries(D), 0);
    fst_quiesce();
    fs_count_objects(&inodes1, &dents1);
    KCHECK_EQ(inodes1, inodes0);
    KCHECK_EQ(dents1, dents0);
    teardown("t_linkrace");
}

// The pin itself: an unlink of a pinned entry returns only after the pin goes,
// and once it returned the entry cannot be pinned again.
struct pin_wait {
    struct dent *e;
    volatile int pinned, repinned;
    volatile uint64_t unpinned, unlinked;
};

static void pin_wait_thread(int i, void *arg)
{
    struct pin_wait *w = arg;
    if (i == 1) {
        while (!w->pinned)
            sched_yield();
        KCHECK_EQ(fs_unlink(D, "a"), 0);
        w->unlinked = nsec_now();
        return;
    }
    epoch_enter(); // e stays readable
    preempt_disable();
    w->pinned = link_pin(w->e) ? 1 : -1;
    uint64_t until = nsec_now() + 20000000;
    while (nsec_now() < until)
        pause();
    w->unpinned = nsec_now();
    link_unpin(w->e);
    preempt_enable();
    while (!w->unlinked)
        sched_yield();
    preempt_disable();
    w->repinned = link_pin(w->e);
    if (w->repinned)
        link_unpin(w->e);
    preempt_enable();
    epoch_exit();
}

KTEST(fs_link_pin_waits)
{
    KREQUIRE(setup("t_linkpin"));
    KCHECK_EQ(mkfile("a"), 0);
    struct pin_wait w = {0};
    epoch_enter();
    w.e = dirhash_lookup(&D->dir, "a", 1, dirhash_hash(&D->dir, "a", 1));
    epoch_exit();
    KREQUIRE(w.e != NULL);
    KCHECK(fst_run(2, pin_wait_thread, &w));
    KCHECK_EQ(w.pinned, 1);
    KCHECK(w.unlinked > w.unpinned);
    KCHECK(!w.repinned);
    teardown("t_linkpin");
}

KTEST(fs_symlink_cases)
{
    KREQUIRE(setup("t_symlink"));
    char buf[64];
    KCHECK_EQ(fs_mkdir(D, "d", 0755), 0);
    KCHECK_EQ(mkfile("d/f"), 0);
    KCHECK_EQ(fs_symlink(D, "d/f", "l"), 0);
    KCHECK_EQ(fs_readlink(D, "l", buf, sizeof buf), 3);
    KCHECK(memcmp(buf, "d/f", 3) == 0);
    KCHECK_EQ(fs_readlink(D, "l", buf, 2), 2); // truncated, like Linux
    KCHECK_EQ(fs_readlink(D, "l", buf, 0), -EINVAL);
    KCHECK_EQ(fs_readlink(D, "d/f", buf, sizeof buf), -EINVAL);
    KCHECK_EQ(fs_readlink(D, "nope", buf, sizeof buf), -ENOENT);
    KCHECK_EQ(ino_of("l", 0), ino_of("d/f", 0));
    KCHECK(S_ISLNK(mode_of("l", FS_NOFOLLOW)));
    struct fs_stat st;
    KCHECK_EQ(fs_stat_path(D, "l", FS_NOFOLLOW, STATX_SIZE, &st), 0);
    KCHECK_EQ(st.size, 3);
    KCHECK_EQ(fs_symlink(D, "x", "l"), -EEXIST);
    KCHECK_EQ(fs_symlink(D, "", "e"), -ENOENT);
    KCHECK_EQ(fs_symlink(D, "x", "new/"), -ENOENT);
    KCHECK_EQ(fs_symlink(D, "x", "d/"), -EEXIST);

    // In the middle of a path, relative and absolute.
    KCHECK_EQ(fs_symlink(D, "d", "ld"), 0);
    KCHECK_EQ(fs_symlink(D, "/t_symlink/d", "abs"), 0);
    KCHECK_EQ(ino_of("ld/f", 0), ino_of("d/f", 0));
    KCHECK_EQ(ino_of("abs/f", 0), ino_of("d/f", 0));
    KCHECK_EQ(ino_of("abs/../d/f", 0), ino_of("d/f", 0));
    KCHECK_EQ(fs_symlink(D, "..", "d/up"), 0);
    KCHECK_EQ(ino_of("d/up/d/f", 0), ino_of("d/f", 0));
    // A trailing slash follows even with NOFOLLOW; and must name a directory.
    KCHECK_EQ(ino_of("ld/", FS_NOFOLLOW), ino_of("d", 0));
    KCHECK(S_ISLNK(mode_of("ld", FS_NOFOLLOW)));
    struct inode *ip;
    KCHECK_EQ(fs_lookup(D, "l/", 0, &ip), -ENOTDIR);
    // Dangling.
    KCHECK_EQ(fs_symlink(D, "missing", "dang"), 0);
    KCHECK_EQ(fs_lookup(D, "dang", 0, &ip), -ENOENT);
    KCHECK_EQ(fs_lookup(D, "dang", FS_NOFOLLOW, &ip), 0);
    fs_iput(ip);
    // open(O_CREAT) through a dangling symlink creates its target; O_EXCL does not.
    KCHECK_EQ(fs_create(D, "dang", 0644, FS_EXCL, NULL), -EEXIST);
    KCHECK_EQ(fs_create(D, "dang", 0644, FS_NOFOLLOW, NULL), -ELOOP);
    KCHECK_EQ(fs_create(D, "dang", 0644, 0, NULL), 0);
    KCHECK(S_ISREG(mode_of("missing", FS_NOFOLLOW)));
    // Loops and the 40-link limit.
    KCHECK_EQ(fs_symlink(D, "lb", "la"), 0);
    KCHECK_EQ(fs_symlink(D, "la", "lb"), 0);
    KCHECK_EQ(fs_lookup(D, "la", 0, &ip), -ELOOP);
    KCHECK_EQ(fs_lookup(D, "la/x", 0, &ip), -ELOOP);
    KCHECK_EQ(fs_create(D, "la", 0644, 0, NULL), -ELOOP);
    KCHECK_EQ(fs_symlink(D, "self", "self"), 0);
    KCHECK_EQ(fs_lookup(D, "self", 0, &ip), -ELOOP);
    // c0 -> d/f, c1 -> c0, ... c40 -> c39: c39 takes 40 links, c40 takes 41.
    KCHECK_EQ(fs_symlink(D, "d/f", "c0"), 0);
    for (int i = 1; i <= 40; i++) {
        char name[8], target[8];
        ksnprintf(name, sizeof name, "c%d", i);
        ksnprintf(target, sizeof target, "c%d", i - 1);
        KCHECK_EQ(fs_symlink(D, target, name), 0);
    }
    KCHECK_EQ(ino_of("c39", 0), ino_of("d/f", 0));
    KCHECK_EQ(fs_lookup(D, "c40", 0, &ip), -ELOOP);
    KCHECK_EQ(fs_lookup(D, "c40", FS_NOFOLLOW, &ip), 0);
    fs_iput(ip);
    // Symlinks in the middle count too: "ld/" + 39 more through a chain of dirs.
    KCHECK_EQ(fs_symlink(D, "d", "e0"), 0);
    for (int i = 1; i <= 40; i++) {
        char name[8], target[8];
        ksnprintf(name, sizeof name, "e%d", i);
        ksnprintf(target, sizeof target, "e%d", i - 1);
        KCHECK_EQ(fs_symlink(D, target, name), 0);
    }
    KCHECK_EQ(fs_lookup(D, "e39/f", 0, &ip), 0);
    fs_iput(ip);
    KCHECK_EQ(fs_lookup(D, "e40/f", 0, &ip), -ELOOP);
    // A symlink does not keep its target alive.
    KCHECK_EQ(fs_unlink(D, "d/f"), 0);
    KCHECK_EQ(fs_lookup(D, "l", 0, &ip), -ENOENT);
    teardown("t_symlink");
}

KTEST(fs_mknod_device_nodes)
{
    KREQUIRE(setup("t_mknod"));
    KCHECK_EQ(fs_mknod(D, "null", S_IFCHR | 0666, MKDEV(1, 3)), 0);
    KCHECK_EQ(fs_mknod(D, "null", S_IFCHR | 0666, MKDEV(1, 3)), -EEXIST);
    KCHECK_EQ(fs_mknod(D, "fifo", S_IFIFO | 0666, 0), -EPERM);
    KCHECK_EQ(fs_mknod(D, "plain", 0644, 0), 0); // type 0: a regular file
    KCHECK_EQ(fs_mknod(D, "nodir/x", S_IFCHR | 0666, 1), -ENOENT);
    struct fs_stat st;
    KCHECK_EQ(fs_stat_path(D, "null", 0, STATX_TYPE | STATX_MODE, &st), 0);
    KCHECK(S_ISCHR(st.mode) && (st.mode & 07777) == 0666 && st.rdev == MKDEV(1, 3));
    KCHECK(S_ISREG(mode_of("plain", 0)));
    struct inode *ip;
    KREQUIRE(fs_lookup(D, "null", 0, &ip) == 0);
    KCHECK_EQ(fs_rdev(ip), MKDEV(1, 3));
    char buf[8];
    KCHECK_EQ(fs_read(ip, buf, sizeof buf, 0), -EINVAL); // no data: the device has it
    KCHECK_EQ(fs_lookup(D, "null/x", 0, &ip), -ENOTDIR);
    fs_iput(ip);
    KCHECK_EQ(fs_unlink(D, "null"), 0);
    teardown("t_mknod");
}

// Time stamps live in per-CPU slots between refcache flushes (fs/itime.c):
// stat sees them at once, an explicit time is not overridden by an older cached
// one, and a flush keeps the value. First a directory's mtime/ctime.
KTEST(fs_dir_times_per_cpu)
{
    struct fs_stat st, st2;
    KREQUIRE(setup("t_dirtime"));
    fs_set_times(D, FS_TIME_OMIT, 1000000000000ULL);
    fs_stat(D, STATX_MTIME, &st);
    KCHECK_EQ(st.mtime.sec, 1000);
    KREQUIRE(mkfile("a") == 0);
    fs_stat(D, STATX_MTIME | STATX_CTIME, &st);
    KCHECK(st.mtime.sec > 1000);
    KCHECK(st.ctime.sec >= st.mtime.sec);
    fs_set_times(D, FS_TIME_OMIT, 2000000000000ULL); // earlier than the cached time
    fs_stat(D, STATX_MTIME, &st);
    KCHECK_EQ(st.mtime.sec, 2000);
    refcache_flush_all();
    fs_stat(D, STATX_MTIME, &st);
    KCHECK_EQ(st.mtime.sec, 2000);
    KREQUIRE(fs_unlink(D, "a") == 0);
    fs_stat(D, STATX_MTIME | STATX_CTIME, &st);
    KCHECK(st.mtime.sec > 2000);
    refcache_flush_all(); // the slot's time moves into the inode: same value
    fs_stat(D, STATX_MTIME | STATX_CTIME, &st2);
    KCHECK_EQ(st2.mtime.sec, st.mtime.sec);
    KCHECK_EQ(st2.mtime.nsec, st.mtime.nsec);
    KCHECK_EQ(st2.ctime.nsec, st.ctime.nsec);
    teardown("t_dirtime");
}

KTEST(fs_chmod_and_times)
{
    KREQUIRE(setup("t_chmod"));
    KREQUIRE(mkfile("f") == 0);
    struct inode *ip;
    KREQUIRE(fs_lookup(D, "f", 0, &ip) == 0);
    fs_chmod(ip, 0100600); // type bits in the argument are ignored
    KCHECK_EQ(fs_mode(ip), S_IFREG | 0600);
    fs_set_times(ip, 5000000000ULL, FS_TIME_OMIT);
    struct fs_stat st, st2;
    fs_stat(ip, STATX_ATIME | STATX_MTIME | STATX_CTIME, &st);
    KCHECK_EQ(st.atime.sec, 5);
    KCHECK(st.mtime.sec > 5 && st.ctime.sec >= st.mtime.sec);
    fs_set_times(ip, FS_TIME_OMIT, FS_TIME_NOW);
    fs_stat(ip, STATX_ATIME | STATX_MTIME, &st2);
    KCHECK_EQ(st2.atime.sec, 5);
    KCHECK(st2.mtime.sec >= st.mtime.sec);
    fs_iput(ip);
    teardown("t_chmod");
}

// Thread 0 makes and removes "f" and symlink "l" again and again; the others
// stat and readlink them by path, which take no reference on what they find
// (fs_stat_path, fs_readlink): every answer must be a whole file or symlink, or
// ENOENT. With kpoison (make test), a stat that read an inode after its free
// would see the poison.
#define RACE_ROUNDS 2000
static volatile bool race_done;
static int race_bad;

static void stat_race(int i, void *arg)
{
    (void)arg;
    if (i == 0) {
        for (int r = 0; r < RACE_ROUNDS; r++) {
            if (mkfile("f") || fs_symlink(D, "target", "l") || fs_unlink(D, "f") ||
                fs_unlink(D, "l"))
                __atomic_add_fetch(&race_bad, 1, __ATOMIC_RELAXED);
        }
        race_done = true;
        return;
    }
    while (!race_done) {
        struct fs_stat st;
        char buf[8];
        int err = fs_stat_path(D, "f", 0, STATX_BASIC_STATS, &st);
        if (err ? err != -ENOENT : st.mode != (S_IFREG | 0644) || st.nlink > 1 || st.size != 0)
            __atomic_add_fetch(&race_bad, 1, __ATOMIC_RELAXED);
        err = fs_readlink(D, "l", buf, sizeof buf);
        if (err != -ENOENT && (err != 6 || memcmp(buf, "target", 6)))
            __atomic_add_fetch(&race_bad, 1, __ATOMIC_RELAXED);
    }
}

KTEST(fs_stat_path_races_unlink)
{
    KREQUIRE(setup("t_stat_race"));
    race_done = false;
    race_bad = 0;
    KCHECK(fst_run(MAX(2, MIN(ncpu_online, 4)), stat_race, NULL));
    KCHECK_EQ(race_bad, 0);
    teardown("t_stat_race");
}

// References on the root are not counted (fs_iget): the ".." references of its
// subdirectories, taken by mkdir and rename and dropped when a subdirectory is
// freed or moved, must not be either, or each removed subdirectory would take
// one from the root's count until refcache released the root.
KTEST(fs_root_references_balance)
{
    struct inode *root = fs_root();
    fst_quiesce();
    int64_t before = refcache_read_exact(&root->ref);
    for (int i = 0; i < 4; i++) {
        KCHECK_EQ(fs_mkdir(root, "t_rootref", 0755), 0);
        KCHECK_EQ(fs_mkdir(root, "t_rootref2", 0755), 0);
        KCHECK_EQ(fs_rename(root, "t_rootref", root, "t_rootref2/d"), 0); // out of the root
        KCHECK_EQ(fs_rename(root, "t_rootref2/d", root, "t_rootref"), 0); // and back
        KCHECK_EQ(fs_rmdir(root, "t_rootref"), 0);
        KCHECK_EQ(fs_rmdir(root, "t_rootref2"), 0);
    }
    fst_quiesce(); // the subdirectories freed, the deferred ".." drops done
    KCHECK_EQ(refcache_read_exact(&root->ref), before);
}

KTEST(fs_stat_fields)
{
    KREQUIRE(setup("t_stat"));
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
    KCHECK(st.mtime.sec <= (int64_t)(realtime_nsec() / 1000000000ULL)); // made before now
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
    teardown("t_stat");
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
    KREQUIRE(setup("t_ino"));
    KCHECK(fst_run(ncpu_online, create_on_cpu, D));
    KCHECK_EQ(fst_count_entries(D), ncpu_online);
    teardown("t_ino");
}

// A directory with one entry stays small: under 1 KiB, and under 1.125 KiB
// with its file's inode (entries are two lines, dirhash.h: 1,114 bytes).
#define NSMALL 1000

KTEST(fs_dir_one_entry_memory)
{
    struct inode *top = fst_scratch("t_small");
    KREQUIRE(top);
    char name[32];
    size_t before = fst_free_pages();
    for (int i = 0; i < NSMALL; i++) {
        ksnprintf(name, sizeof name, "d%d", i);
        KREQUIRE(fs_mkdir(top, name, 0755) == 0);
        ksnprintf(name, sizeof name, "d%d/f", i);
        KREQUIRE(fs_create(top, name, 0644, FS_EXCL, NULL) == 0);
    }
    size_t after = fst_free_pages();
    // Each: the directory's inode, its table, its entry in top, the file's entry
    // and the file's inode; plus top's share of table growth.
    uint64_t per = (before - after) * PGSIZE / NSMALL;
    struct inode *d;
    KREQUIRE(fs_lookup(top, "d0", 0, &d) == 0);
    kprintf("# a directory with one file: %lu bytes with the file's inode, %lu without "
            "(inode %zu, table %zu + header, entries %zu + name)\n",
            per, per - 256, sizeof(struct inode), dirhash_table_bytes(&d->dir),
            sizeof(struct dent));
    fs_iput(d);
    KCHECK(per - 256 < 1024);  // the directory with its entry, without the file
    KCHECK(per < 1152);        // even counting the file's inode
    fs_iput(top);
    fst_rm_rf("/t_small");
}
