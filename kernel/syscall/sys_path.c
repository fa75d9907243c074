// System calls on path names: open/openat/creat, the stat family and statx,
// mkdir, mknod, unlink/rmdir, rename, link, symlink, readlink, truncate, chdir,
// getcwd, access, utimensat, chmod, umask. The legacy calls without "at" are
// the *at ones with AT_FDCWD.
//
// Paths are copied into a kernel page first, then resolved by ScaleFS from the
// directory dirfd names (fs_context.c), or by /proc for its paths (procfs.h,
// proc_call below); whether two calls commute is ScaleFS's
// business (fs/README.md). stat asks ScaleFS only for what it will report:
// statx without STATX_NLINK never reads the link count, so it commutes with
// link and unlink of the same file.
#include "file/dev.h"
#include "file/fdtable.h"
#include "file/file.h"
#include "file/fs_context.h"
#include "file/procfs.h"
#include "file/stat.h"
#include "fs.h"
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "proc/proc.h"
#include "syscall/syscall.h"
#include "uapi/errno.h"
#include "uapi/ext.h"

// A user path in a fresh kernel page (free with page_free): 0, -EFAULT,
// -ENAMETOOLONG or -ENOMEM. Empty paths are the caller's to judge.
static long get_path(uint64_t upath, char **out)
{
    char *p = page_alloc();
    if (!p)
        return -ENOMEM;
    long n = strncpy_from_user(p, upath, FS_PATH_MAX);
    if (n < 0) {
        page_free(p);
        return n;
    }
    *out = p;
    return 0;
}

// ---- /proc --------------------------------------------------------------------------------

// Paths that /proc answers (procfs.h): an absolute path whose first component
// is "proc", a relative one from a descriptor of a /proc directory, or from a
// cwd that is /proc. Cheap for every other path: the first component is
// compared, a dirfd looked at only when it is not AT_FDCWD, and the cwd
// pointer compared (a line every relative lookup reads anyway).
static bool proc_absolute(const char *path)
{
    const char *s = path;
    while (*s == '/')
        s++;
    return strncmp(s, "proc", 4) == 0 && (!s[4] || s[4] == '/');
}

// path from base (a /proc directory's path; NULL: path is absolute) through
// procfs_path, into *abs (a page): 1, /proc's path; 0, ScaleFS's (".." left
// /proc: *abs is the absolute path it names); or -errno (*abs NULL).
static int proc_route_base(const char *base, const char *path, char **abs)
{
    if (!(*abs = page_alloc()))
        return -ENOMEM;
    int ret = procfs_path(base, path, *abs);
    if (ret < 0) {
        page_free(*abs);
        *abs = NULL;
    }
    return ret;
}

// The /proc directory a relative path from dirfd starts in ("/proc" for a cwd
// that is /proc; an open /proc directory's path, *r held until fd_put), or
// NULL; *is_proc: the path is /proc's to look at.
static const char *proc_base(int dirfd, const char *path, struct fd_ref *r, bool *is_proc)
{
    *r = (struct fd_ref){0};
    *is_proc = false;
    if (path[0] == '/') {
        *is_proc = proc_absolute(path);
        return NULL;
    }
    if (!path[0])
        return NULL;
    if (dirfd == AT_FDCWD) {
        *is_proc = fsctx_cwd_is(procfs_mountpoint());
        return "/proc";
    }
    if (!fdt_current())
        return NULL;
    *r = fd_get(fdt_current(), dirfd);
    if (!r->f || !procfs_is_dir(r->f)) {
        if (r->f)
            fd_put(*r);
        *r = (struct fd_ref){0};
        return NULL;
    }
    *is_proc = true;
    return procfs_dir_path(r->f);
}

// Every call on a path asks this first: if (dirfd, path) is /proc's, *mine is
// set and op's result on its absolute path returned (or the routing's -errno).
// Otherwise ScaleFS resolves path, which a ".." out of /proc has rewritten in
// place (path: a page from get_path) into the absolute path it names.
static long proc_call(int dirfd, char *path, bool *mine,
                      long (*op)(const char *abs, void *arg), void *arg)
{
    struct fd_ref r;
    bool is_proc;
    const char *base = proc_base(dirfd, path, &r, &is_proc);
    *mine = false;
    if (!is_proc)
        return 0;
    char *abs;
    long ret = proc_route_base(base, path, &abs);
    if (r.f)
        fd_put(r);
    if (ret == 0 && abs)
        strlcpy(path, abs, FS_PATH_MAX);
    else if (ret != 0)
        *mine = true;
    if (ret > 0)
        ret = op(abs, arg);
    if (abs)
        page_free(abs);
    return ret;
}

static long op_refuse(const char *abs, void *arg)
{
    (void)abs, (void)arg;
    return -EACCES;
}

// Calls that would make or remove names in /proc: EACCES (Linux: its
// directories are 0555), before ScaleFS's empty /proc could take a name.
static bool proc_refuses(int dirfd, char *path)
{
    bool mine;
    proc_call(dirfd, path, &mine, op_refuse, NULL);
    return mine;
}

struct open_args {
    struct fdtable *t;
    int flags;
};

static long op_open(const char *abs, void *arg)
{
    struct open_args *a = arg;
    struct file *f;
    long err = procfs_path_open(abs, a->flags, &f);
    if (err)
        return err;
    struct proc *p = proc_current();
    err = fd_install(a->t, f, (a->flags & O_CLOEXEC) ? FDI_CLOEXEC : 0, a->flags & O_ANYFD, 0,
                     p ? proc_nofile(p) : FD_MAX);
    if (err < 0)
        file_put(f);
    return err;
}

// ---- open -------------------------------------------------------------------------------

// O_PATH: a descriptor that only names the file (fstat, fchdir, a dirfd);
// reads and writes give EBADF. Only O_CLOEXEC, O_DIRECTORY, O_NOFOLLOW (which then
// opens the symlink itself) and O_ANYFD count with it, as in Linux.
static const struct file_ops path_ops;

static long open_path(struct inode *ip, int flags, struct file **out)
{
    if ((flags & O_DIRECTORY) && !S_ISDIR(fs_mode(ip)))
        return -ENOTDIR;
    return (*out = file_alloc(&path_ops, O_PATH, ip, NULL)) ? 0 : -ENOMEM;
}

int path_open_file(struct inode *dir, const char *path, int flags, uint32_t mode,
                   uint32_t umask, struct file **out)
{
    if (flags & O_PATH)
        flags &= O_PATH | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW | O_ANYFD;
    if ((flags & O_TMPFILE) == O_TMPFILE)
        return -EOPNOTSUPP; // no unnamed files yet
    if (path[0] == 0)
        return -ENOENT;
    // posix_spawn's open actions come here directly, from the child's cwd.
    bool proc = path[0] == '/' ? proc_absolute(path) : dir == procfs_mountpoint();
    char *abs = NULL;
    int err = proc ? proc_route_base(path[0] == '/' ? NULL : "/proc", path, &abs) : 0;
    if (err > 0)
        err = procfs_path_open(abs, flags, out);
    if (err) {
        if (abs)
            page_free(abs);
        return err;
    }
    if (abs) // ".." led out of /proc: the absolute path it names
        path = abs;
    if (path[0] == '/')
        dir = fs_root();
    struct inode *ip;
    if (flags & O_CREAT) {
        int cf = (flags & O_EXCL ? FS_EXCL : 0) | (flags & O_NOFOLLOW ? FS_NOFOLLOW : 0);
        err = fs_create(dir, path, (mode & 07777) & ~umask, cf, &ip);
    } else {
        err = fs_lookup(dir, path, flags & O_NOFOLLOW ? FS_NOFOLLOW : 0, &ip);
    }
    if (abs)
        page_free(abs);
    if (err)
        return err;
    if ((err = (flags & O_PATH) ? open_path(ip, flags, out) : file_open_inode(ip, flags, out)))
        fs_iput(ip);
    return err;
}

long path_openat(struct fdtable *t, int dirfd, char *path, int flags, uint32_t mode)
{
    struct inode *dir;
    struct file *f;
    bool mine;
    long err = proc_call(dirfd, path, &mine, op_open, &(struct open_args){t, flags});
    if (mine)
        return err;
    err = dirfd_inode(dirfd, path, &dir);
    if (err)
        return err;
    err = path_open_file(dir, path, flags, mode, fsctx_umask(), &f);
    fs_iput(dir);
    if (err)
        return err;
    struct proc *p = proc_current();
    if (p && t == fdt_current()) // the console may become our controlling terminal
        tty_opened(f, flags, p->pid, READ_ONCE(p->sid), READ_ONCE(p->pgid));
    err = fd_install(t, f, (flags & O_CLOEXEC) ? FDI_CLOEXEC : 0, flags & O_ANYFD, 0,
                     p ? proc_nofile(p) : FD_MAX);
    if (err < 0)
        file_put(f);
    return err;
}

long sys_openat(int dirfd, uint64_t upath, int flags, uint32_t mode)
{
    char *path;
    long err = get_path(upath, &path);
    if (err)
        return err;
    err = path_openat(fdt_current(), dirfd, path, flags, mode);
    page_free(path);
    return err;
}

long sys_open(uint64_t upath, int flags, uint32_t mode) { return sys_openat(AT_FDCWD, upath, flags, mode); }
long sys_creat(uint64_t upath, uint32_t mode)
{
    return sys_openat(AT_FDCWD, upath, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

// memfd_create(name, flags): a read/write descriptor for a ScaleFS regular file
// that has no name. The name (at most 249 bytes, as in Linux) is only checked:
// /proc/PID/fd shows the file by inode number, not by name. Of the flags only MFD_CLOEXEC is supported
// (sealing and huge pages are not: EINVAL).
#define MFD_CLOEXEC 0x1
#define MFD_NAME_MAX 249
long sys_memfd_create(uint64_t uname, unsigned flags)
{
    char name[MFD_NAME_MAX + 1];
    if (flags & ~MFD_CLOEXEC)
        return -EINVAL;
    long err = strncpy_from_user(name, uname, sizeof name);
    if (err < 0)
        return err == -ENAMETOOLONG ? -EINVAL : err;
    struct inode *ip;
    if ((err = fs_create_unlinked(0777, &ip)))
        return err;
    struct file *f;
    if ((err = file_open_inode(ip, O_RDWR, &f))) {
        fs_iput(ip);
        return err;
    }
    struct proc *p = proc_current();
    err = fd_install(fdt_current(), f, (flags & MFD_CLOEXEC) ? FDI_CLOEXEC : 0, false, 0, proc_nofile(p));
    if (err < 0)
        file_put(f);
    return err;
}

// ---- stat -------------------------------------------------------------------------------

long stat_copyout(const struct fs_stat *st, uint64_t ubuf)
{
    struct stat s = {
        .st_dev = FS_DEV,
        .st_ino = st->ino,
        .st_nlink = st->nlink,
        .st_mode = st->mode,
        .st_uid = st->uid,
        .st_gid = st->gid,
        .st_rdev = st->rdev,
        .st_size = (int64_t)st->size,
        .st_blksize = PGSIZE,
        .st_blocks = (int64_t)st->blocks,
        .st_atim = {st->atime.sec, st->atime.nsec},
        .st_mtim = {st->mtime.sec, st->mtime.nsec},
        .st_ctim = {st->ctime.sec, st->ctime.nsec},
    };
    return copy_to_user(ubuf, &s, sizeof s);
}

long statx_copyout(const struct fs_stat *st, uint64_t ubuf)
{
    struct statx s = {
        .stx_mask = st->mask,
        .stx_blksize = PGSIZE,
        .stx_nlink = (uint32_t)st->nlink,
        .stx_uid = st->uid,
        .stx_gid = st->gid,
        .stx_mode = (uint16_t)st->mode,
        .stx_ino = st->ino,
        .stx_size = st->size,
        .stx_blocks = st->blocks,
        .stx_atime = {st->atime.sec, st->atime.nsec, 0},
        .stx_ctime = {st->ctime.sec, st->ctime.nsec, 0},
        .stx_mtime = {st->mtime.sec, st->mtime.nsec, 0},
        .stx_rdev_major = DEV_MAJOR(st->rdev),
        .stx_rdev_minor = DEV_MINOR(st->rdev),
        .stx_dev_major = DEV_MAJOR(FS_DEV),
        .stx_dev_minor = DEV_MINOR(FS_DEV),
    };
    return copy_to_user(ubuf, &s, sizeof s);
}

struct stat_args {
    bool nofollow;
    uint32_t mask;
    struct fs_stat *st;
};

static long op_stat(const char *abs, void *arg)
{
    struct stat_args *a = arg;
    return procfs_path_stat(abs, a->nofollow, a->mask, a->st);
}

// Attributes of what (dirfd, path, flags) names; with AT_EMPTY_PATH and an
// empty path, of the open file dirfd itself (pipes included).
static long stat_at(int dirfd, uint64_t upath, int flags, uint32_t mask, struct fs_stat *st)
{
    char *path;
    long err = get_path(upath, &path);
    if (err)
        return err;
    if (path[0] == 0 && (flags & AT_EMPTY_PATH) && dirfd != AT_FDCWD) {
        struct fd_ref r = fd_get(fdt_current(), dirfd);
        err = r.f ? file_stat(r.f, mask, st) : -EBADF;
        if (r.f)
            fd_put(r);
    } else {
        bool mine;
        struct stat_args a = {flags & AT_SYMLINK_NOFOLLOW, mask, st};
        err = proc_call(dirfd, path, &mine, op_stat, &a);
        if (!mine)
            err = path_stat_at(dirfd, path, flags & (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH), mask, st);
    }
    page_free(path);
    return err;
}

long sys_newfstatat(int dirfd, uint64_t upath, uint64_t ubuf, int flags)
{
    if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT))
        return -EINVAL;
    struct fs_stat st;
    long err = stat_at(dirfd, upath, flags, STATX_BASIC_STATS, &st);
    return err ? err : stat_copyout(&st, ubuf);
}

long sys_stat(uint64_t upath, uint64_t ubuf) { return sys_newfstatat(AT_FDCWD, upath, ubuf, 0); }
long sys_lstat(uint64_t upath, uint64_t ubuf)
{
    return sys_newfstatat(AT_FDCWD, upath, ubuf, AT_SYMLINK_NOFOLLOW);
}

// What statx always reports: type, mode, ino, uid, gid live on the inode's first
// line, which only creation writes, so they cost no conflict. The rest only on
// request; the link count in particular (STATX_NLINK).
#define STATX_CHEAP (STATX_TYPE | STATX_MODE | STATX_INO | STATX_UID | STATX_GID)

long sys_statx(int dirfd, uint64_t upath, int flags, uint32_t mask, uint64_t ubuf)
{
    if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE))
        return -EINVAL;
    if ((flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE || (mask & STATX__RESERVED))
        return -EINVAL;
    struct fs_stat st;
    long err = stat_at(dirfd, upath, flags, (mask & STATX_BASIC_STATS) | STATX_CHEAP, &st);
    return err ? err : statx_copyout(&st, ubuf);
}

// ---- names ------------------------------------------------------------------------------

// Run op on (directory of dirfd, path).
static long with_dir(int dirfd, uint64_t upath, long (*op)(struct inode *, const char *, long),
                     long arg)
{
    char *path;
    long err = get_path(upath, &path);
    if (err)
        return err;
    struct inode *dir;
    if (proc_refuses(dirfd, path))
        err = -EACCES;
    else if (!(err = dirfd_inode(dirfd, path, &dir))) {
        err = op(dir, path, arg);
        fs_iput(dir);
    }
    page_free(path);
    return err;
}

static long op_mkdir(struct inode *dir, const char *path, long mode)
{
    return fs_mkdir(dir, path, (uint32_t)mode & 07777 & ~fsctx_umask());
}

long sys_mkdirat(int dirfd, uint64_t upath, uint32_t mode) { return with_dir(dirfd, upath, op_mkdir, mode); }
long sys_mkdir(uint64_t upath, uint32_t mode) { return sys_mkdirat(AT_FDCWD, upath, mode); }

// mknod: device nodes, regular files and socket nodes (which no socket is bound
// to); FIFOs are not supported (EPERM, from ScaleFS).
static long op_mknod(struct inode *dir, const char *path, long arg)
{
    uint32_t mode = (uint32_t)arg, dev = (uint32_t)(arg >> 32);
    return fs_mknod(dir, path, (mode & S_IFMT) | (mode & 07777 & ~fsctx_umask()), dev);
}

long sys_mknodat(int dirfd, uint64_t upath, uint32_t mode, uint32_t dev)
{
    // The type first, before the path (Linux): a directory is mkdir's (EPERM),
    // a type that does not exist is EINVAL.
    switch (mode & S_IFMT) {
    case 0: case S_IFREG: case S_IFCHR: case S_IFBLK: case S_IFIFO: case S_IFSOCK:
        break;
    case S_IFDIR:
        return -EPERM;
    default:
        return -EINVAL;
    }
    return with_dir(dirfd, upath, op_mknod, (long)((uint64_t)dev << 32 | mode));
}
long sys_mknod(uint64_t upath, uint32_t mode, uint32_t dev) { return sys_mknodat(AT_FDCWD, upath, mode, dev); }

static long op_unlink(struct inode *dir, const char *path, long flags)
{
    return (flags & AT_REMOVEDIR) ? fs_rmdir(dir, path) : fs_unlink(dir, path);
}

long sys_unlinkat(int dirfd, uint64_t upath, int flags)
{
    if (flags & ~AT_REMOVEDIR)
        return -EINVAL;
    return with_dir(dirfd, upath, op_unlink, flags);
}
long sys_unlink(uint64_t upath) { return sys_unlinkat(AT_FDCWD, upath, 0); }
long sys_rmdir(uint64_t upath) { return sys_unlinkat(AT_FDCWD, upath, AT_REMOVEDIR); }

struct readlink_args {
    uint64_t ubuf;
    size_t n;
};

static long op_readlink(struct inode *dir, const char *path, long arg)
{
    struct readlink_args *a = (void *)arg;
    char *buf = page_alloc();
    if (!buf)
        return -ENOMEM;
    long n = fs_readlink(dir, path, buf, MIN(a->n, PGSIZE));
    if (n > 0 && copy_to_user(a->ubuf, buf, n) < 0)
        n = -EFAULT;
    page_free(buf);
    return n;
}

// A /proc link (procfs.h): /proc/self, /proc/PID/exe and /proc/PID/fd/N.
static long op_proc_readlink(const char *abs, void *arg)
{
    struct readlink_args *a = arg;
    char *buf = page_alloc();
    if (!buf)
        return -ENOMEM;
    long len = procfs_path_readlink(abs, buf, MIN(a->n, PGSIZE));
    if (len > 0 && copy_to_user(a->ubuf, buf, len) < 0)
        len = -EFAULT;
    page_free(buf);
    return len;
}

long sys_readlinkat(int dirfd, uint64_t upath, uint64_t ubuf, int bufsiz)
{
    if (bufsiz <= 0)
        return -EINVAL;
    char *path;
    long err = get_path(upath, &path);
    if (err)
        return err;
    bool mine;
    struct readlink_args a = {ubuf, (size_t)bufsiz};
    err = proc_call(dirfd, path, &mine, op_proc_readlink, &a);
    page_free(path);
    if (mine)
        return err;
    return with_dir(dirfd, upath, op_readlink, (long)&a);
}
long sys_readlink(uint64_t upath, uint64_t ubuf, int bufsiz)
{
    return sys_readlinkat(AT_FDCWD, upath, ubuf, bufsiz);
}

// Two paths, each from its own directory.
static long two_paths(int olddirfd, uint64_t uold, int newdirfd, uint64_t unew,
                      long (*op)(struct inode *, const char *, struct inode *, const char *, int),
                      int flags)
{
    char *oldp = NULL, *newp = NULL;
    struct inode *od = NULL, *nd = NULL;
    long err = get_path(uold, &oldp);
    if (!err)
        err = get_path(unew, &newp);
    if (!err && (proc_refuses(olddirfd, oldp) || proc_refuses(newdirfd, newp)))
        err = -EACCES;
    if (!err)
        err = dirfd_inode(olddirfd, oldp, &od);
    if (!err)
        err = dirfd_inode(newdirfd, newp, &nd);
    if (!err)
        err = op(od, oldp, nd, newp, flags);
    if (od)
        fs_iput(od);
    if (nd)
        fs_iput(nd);
    if (oldp)
        page_free(oldp);
    if (newp)
        page_free(newp);
    return err;
}

static long op_rename(struct inode *od, const char *o, struct inode *nd, const char *n, int flags)
{
    return fs_rename_flags(od, o, nd, n, (flags & RENAME_NOREPLACE ? FS_NOREPLACE : 0) |
                                         (flags & RENAME_EXCHANGE ? FS_EXCHANGE : 0));
}

// RENAME_WHITEOUT is not supported: EINVAL. NOREPLACE with EXCHANGE is EINVAL (Linux).
long sys_renameat2(int olddirfd, uint64_t uold, int newdirfd, uint64_t unew, unsigned flags)
{
    if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
        return -EINVAL;
    if ((flags & RENAME_NOREPLACE) && (flags & RENAME_EXCHANGE))
        return -EINVAL;
    return two_paths(olddirfd, uold, newdirfd, unew, op_rename, (int)flags);
}
long sys_renameat(int olddirfd, uint64_t uold, int newdirfd, uint64_t unew)
{
    return sys_renameat2(olddirfd, uold, newdirfd, unew, 0);
}
long sys_rename(uint64_t uold, uint64_t unew) { return sys_renameat2(AT_FDCWD, uold, AT_FDCWD, unew, 0); }

static long op_link(struct inode *od, const char *o, struct inode *nd, const char *n, int flags)
{
    return fs_link(od, o, nd, n, flags & AT_SYMLINK_FOLLOW ? FS_FOLLOW : 0);
}

// AT_EMPTY_PATH (link an open file by descriptor) is not supported: EINVAL.
long sys_linkat(int olddirfd, uint64_t uold, int newdirfd, uint64_t unew, int flags)
{
    if (flags & ~AT_SYMLINK_FOLLOW)
        return -EINVAL;
    return two_paths(olddirfd, uold, newdirfd, unew, op_link, flags);
}
long sys_link(uint64_t uold, uint64_t unew) { return sys_linkat(AT_FDCWD, uold, AT_FDCWD, unew, 0); }

long sys_symlinkat(uint64_t utarget, int newdirfd, uint64_t ulink)
{
    char *target;
    long err = get_path(utarget, &target);
    if (err)
        return err;
    char *path;
    if (!(err = get_path(ulink, &path))) {
        struct inode *dir;
        if (proc_refuses(newdirfd, path))
            err = -EACCES;
        else if (!(err = dirfd_inode(newdirfd, path, &dir))) {
            err = fs_symlink(dir, target, path);
            fs_iput(dir);
        }
        page_free(path);
    }
    page_free(target);
    return err;
}
long sys_symlink(uint64_t utarget, uint64_t ulink) { return sys_symlinkat(utarget, AT_FDCWD, ulink); }

// ---- attributes ---------------------------------------------------------------------------

// Look up (dirfd, path) following symlinks unless nofollow; ip referenced.
// /proc has no inodes: EACCES there (truncate, chdir, utimensat, chmod).
static long lookup_user(int dirfd, uint64_t upath, int flags, struct inode **ip)
{
    char *path;
    long err = get_path(upath, &path);
    if (err)
        return err;
    err = proc_refuses(dirfd, path) ? -EACCES : path_lookup_at(dirfd, path, flags, ip);
    page_free(path);
    return err;
}

long sys_truncate(uint64_t upath, int64_t len)
{
    if (len < 0)
        return -EINVAL; // before the path (Linux)
    struct inode *ip;
    long err = lookup_user(AT_FDCWD, upath, 0, &ip);
    if (err)
        return err;
    err = fs_get_write(ip); // ETXTBSY while the file is executed
    if (!err) {
        err = fs_truncate(ip, len);
        fs_put_write(ip);
    }
    fs_iput(ip);
    return err;
}

// Into /proc itself (ScaleFS's mount point, whose relative paths proc_call
// sends to procfs), not below it: EACCES.
static long op_chdir(const char *abs, void *arg)
{
    (void)arg;
    long err = procfs_path_is_root(abs);
    if (err <= 0)
        return err ? err : -EACCES;
    fs_iget(procfs_mountpoint());
    fsctx_set_cwd(procfs_mountpoint());
    return 0;
}

long sys_chdir(uint64_t upath)
{
    char *path;
    long err = get_path(upath, &path);
    if (err)
        return err;
    bool mine;
    err = proc_call(AT_FDCWD, path, &mine, op_chdir, NULL);
    page_free(path);
    if (mine)
        return err;
    struct inode *ip;
    err = lookup_user(AT_FDCWD, upath, 0, &ip);
    if (err)
        return err;
    if (!S_ISDIR(fs_mode(ip))) {
        fs_iput(ip);
        return -ENOTDIR;
    }
    fsctx_set_cwd(ip);
    return 0;
}

// The name under which dir's parent lists dir (by inode number).
struct find_name {
    uint64_t ino;
    char name[FS_NAME_MAX + 1];
    bool found;
};

static int match_ino(void *arg, const char *name, size_t len, uint64_t ino, unsigned type)
{
    struct find_name *fn = arg;
    if (ino != fn->ino || type != DT_DIR || (len <= 2 && name[0] == '.'))
        return 0;
    memcpy(fn->name, name, len);
    fn->name[len] = 0;
    fn->found = true;
    return 1;
}

char *path_of_dir(struct inode *dir, char *buf, long *err)
{
    char *p = buf + FS_PATH_MAX - 1;
    *p = 0;
    struct find_name *fn = kmalloc(sizeof *fn);
    if (!fn) {
        *err = -ENOMEM;
        return NULL;
    }
    fs_iget(dir);
    *err = 0;
    while (dir != fs_root() && !*err) {
        struct inode *parent;
        if ((*err = fs_lookup(dir, "..", 0, &parent)))
            break;
        fn->ino = fs_ino(dir);
        fn->found = false;
        uint64_t pos = 0;
        if (fs_readdir(parent, &pos, match_ino, fn) < 0 || !fn->found) {
            *err = -ENOENT; // removed: it has no name any more
        } else {
            size_t len = strlen(fn->name);
            if ((size_t)(p - buf) < len + 1)
                *err = -ENAMETOOLONG;
            else {
                p -= len;
                memcpy(p, fn->name, len);
                *--p = '/';
            }
        }
        fs_iput(dir);
        dir = parent;
    }
    fs_iput(dir);
    kfree(fn);
    if (*err)
        return NULL;
    if (!*p)
        *--p = '/';
    return p;
}

long sys_getcwd(uint64_t ubuf, size_t size)
{
    char *buf = page_alloc();
    if (!buf)
        return -ENOMEM;
    struct inode *cwd = fsctx_cwd();
    long err;
    char *p = path_of_dir(cwd, buf, &err);
    fs_iput(cwd);
    if (p) {
        size_t len = strlen(p) + 1;
        if (size < len)
            err = -ERANGE;
        else if (copy_to_user(ubuf, p, len) < 0)
            err = -EFAULT;
        else
            err = (long)len;
    }
    page_free(buf);
    return err;
}

// Everyone is root: read and write are always allowed, execute needs an x bit
// somewhere (or a directory), as for Linux's root.
struct access_args {
    int mode;
    bool nofollow;
};

// Only search and execute need a bit (there are no users): a directory is
// always searchable, anything else executable only with an x bit.
static long access_mode(int mode, uint32_t st_mode)
{
    return (mode & X_OK) && !S_ISDIR(st_mode) && !(st_mode & 0111) ? -EACCES : 0;
}

// /proc: exists, and only directories are searchable.
static long op_access(const char *abs, void *arg)
{
    struct access_args *a = arg;
    struct fs_stat st;
    long err = procfs_path_stat(abs, a->nofollow, STATX_TYPE | STATX_MODE, &st);
    return err ? err : access_mode(a->mode, st.mode);
}

static long access_at(int dirfd, uint64_t upath, int mode, int flags)
{
    if (mode & ~(R_OK | W_OK | X_OK))
        return -EINVAL;
    if (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -EINVAL;
    char *path;
    long err = get_path(upath, &path);
    if (err)
        return err;
    bool mine;
    struct access_args a = {mode, flags & AT_SYMLINK_NOFOLLOW};
    err = proc_call(dirfd, path, &mine, op_access, &a);
    if (!mine) {
        struct fs_stat st;
        if (proc_refuses(dirfd, path))
            err = -EACCES;
        else if (!(err = path_stat_at(dirfd, path, flags & (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH),
                                      STATX_MODE, &st)))
            err = access_mode(mode, st.mode);
    }
    page_free(path);
    return err;
}

long sys_faccessat2(int dirfd, uint64_t upath, int mode, int flags)
{
    return access_at(dirfd, upath, mode, flags);
}
long sys_faccessat(int dirfd, uint64_t upath, int mode) { return access_at(dirfd, upath, mode, 0); }
long sys_access(uint64_t upath, int mode) { return access_at(AT_FDCWD, upath, mode, 0); }

static long time_arg(const struct timespec *t, uint64_t *ns)
{
    if (t->tv_nsec == UTIME_NOW)
        *ns = FS_TIME_NOW;
    else if (t->tv_nsec == UTIME_OMIT)
        *ns = FS_TIME_OMIT;
    else if (t->tv_nsec < 0 || t->tv_nsec >= 1000000000 || t->tv_sec < 0)
        return -EINVAL;
    else
        *ns = (uint64_t)t->tv_sec * 1000000000ULL + (uint64_t)t->tv_nsec;
    return 0;
}

// utimensat(dirfd, NULL, times, 0) sets the times of the open file dirfd
// (futimens).
long sys_utimensat(int dirfd, uint64_t upath, uint64_t utimes, int flags)
{
    if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -EINVAL;
    struct timespec t[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
    uint64_t a, m;
    if (utimes && copy_from_user(t, utimes, sizeof t) < 0)
        return -EFAULT;
    long err = time_arg(&t[0], &a);
    if (!err)
        err = time_arg(&t[1], &m);
    if (err)
        return err;
    struct inode *ip;
    if (!upath && (flags & AT_SYMLINK_NOFOLLOW))
        return -EINVAL; // futimens has no symlink to not follow (Linux)
    if (!upath) {
        struct fd_ref r = dirfd == AT_FDCWD ? (struct fd_ref){0} : fd_get(fdt_current(), dirfd);
        if (!r.f)
            return dirfd == AT_FDCWD ? -EFAULT : -EBADF;
        ip = r.f->ip;
        if (ip)
            fs_iget(ip);
        fd_put(r);
        if (!ip)
            return 0; // a pipe or terminal: nothing to record
    } else if ((err = lookup_user(dirfd, upath, flags, &ip))) {
        return err;
    }
    if (a != FS_TIME_OMIT || m != FS_TIME_OMIT)
        fs_set_times(ip, a, m);
    fs_iput(ip);
    return 0;
}

long sys_fchmodat(int dirfd, uint64_t upath, uint32_t mode)
{
    struct inode *ip;
    long err = lookup_user(dirfd, upath, 0, &ip);
    if (err)
        return err;
    fs_chmod(ip, mode);
    fs_iput(ip);
    return 0;
}
long sys_chmod(uint64_t upath, uint32_t mode) { return sys_fchmodat(AT_FDCWD, upath, mode); }

long sys_umask(uint32_t mask) { return fsctx_set_umask(mask); }

_Static_assert(sizeof(struct stat) == 144, "x86-64 struct stat is 144 bytes");
_Static_assert(sizeof(struct statx) == 256, "struct statx is 256 bytes");
_Static_assert(offsetof(struct statx, stx_ino) == 32 && offsetof(struct statx, stx_rdev_major) == 128,
               "struct statx layout");
_Static_assert(offsetof(struct linux_dirent64, d_name) == 19, "linux_dirent64 layout");
