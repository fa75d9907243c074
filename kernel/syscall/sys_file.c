// System calls on file descriptors: read, write and their vector and
// positioned forms, lseek, close, dup*, fcntl, close_range, fstat, ftruncate,
// fsync, getdents64, ioctl, fchdir, fchmod, pipe/pipe2.
//
// Each looks its fd up without a lock (fdtable.c) and works on the open file
// description (file.c); whether two calls commute is decided there and in the
// file's kind (ScaleFS, pipe.c, tty.c, dev.c).
#include "file/fdtable.h"
#include "file/file.h"
#include "file/fs_context.h"
#include "file/pipe.h"
#include "file/procfs.h"
#include "file/stat.h"
#include "fs.h"
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "proc/proc.h"
#include "syscall/syscall.h"
#include "uapi/errno.h"
#include "uapi/ext.h"

static struct fdtable *fdt(void) { return fdt_current(); }

// RLIMIT_NOFILE's soft limit bounds the fds a caller names (dup2, dup3, F_DUPFD)
// and the fds the kernel picks (fd_install), as in Linux.
static int nofile(void) { return proc_nofile(proc_current()); }

// Look up fd into a struct fd_ref named r, or return -EBADF.
#define GET_FD(r, fd)                                                                    \
    struct fd_ref r = fd_get(fdt(), (fd));                                               \
    if (!r.f)                                                                            \
        return -EBADF

long sys_read(int fd, uint64_t buf, size_t n)
{
    GET_FD(r, fd);
    long ret = file_read(r.f, buf, n, NULL);
    fd_put(r);
    return ret;
}

long sys_write(int fd, uint64_t buf, size_t n)
{
    GET_FD(r, fd);
    long ret = file_write(r.f, buf, n, NULL);
    fd_put(r);
    return ret;
}

long sys_pread64(int fd, uint64_t buf, size_t n, int64_t off)
{
    if (off < 0)
        return -EINVAL; // before the fd, as Linux
    GET_FD(r, fd);
    long ret = file_read(r.f, buf, n, &off);
    fd_put(r);
    return ret;
}

long sys_pwrite64(int fd, uint64_t buf, size_t n, int64_t off)
{
    if (off < 0)
        return -EINVAL;
    GET_FD(r, fd);
    long ret = file_write(r.f, buf, n, &off);
    fd_put(r);
    return ret;
}

// sendfile(out_fd, in_fd, offset, count): in_fd's bytes from *offset (or its
// own offset, which then advances) written to out_fd, through a kernel bounce
// buffer that the two files' ordinary read and write take as the caller's
// memory (usercopy_kio_begin): every file kind works as out_fd, with its own
// checks, blocking and signals. A copy, not Linux's splice. Linux's order of
// errors: the offset's EFAULT; in_fd's EBADF, ESPIPE, EINVAL; out_fd's EBADF,
// and EINVAL for O_APPEND. in_fd must be seekable (a file, as the classic
// rule: EINVAL for pipes and sockets). The count done, short at the end of
// in_fd or where out_fd took less.
#define SENDFILE_CHUNK (64 * 1024)

static long sendfile_copy(struct file *in, struct file *out, int64_t *pos, size_t count)
{
    char *buf = kmalloc(SENDFILE_CHUNK);
    if (!buf)
        return -ENOMEM;
    usercopy_kio_begin(buf, SENDFILE_CHUNK);
    long done = 0, err = 0;
    while ((size_t)done < count) {
        size_t n = MIN(count - (size_t)done, SENDFILE_CHUNK);
        long r = file_read(in, (uint64_t)buf, n, pos);
        if (r <= 0) {
            err = r;
            break;
        }
        long w = file_write(out, (uint64_t)buf, (size_t)r, NULL);
        if (w <= 0) {
            err = w;
            break;
        }
        done += w;
        *pos += w;
        if (w < r || (size_t)r < n)
            break; // out_fd took less, or in_fd ended
    }
    usercopy_kio_end();
    kfree(buf);
    return done ? done : err;
}

long sys_sendfile(int out_fd, int in_fd, uint64_t uoff, size_t count)
{
    int64_t pos = 0;
    if (uoff && copy_from_user(&pos, uoff, sizeof pos))
        return -EFAULT;
    GET_FD(in, in_fd);
    long ret = 0;
    if (!file_readable(in.f))
        ret = -EBADF;
    else if (!in.f->ops->seekable)
        ret = uoff ? -ESPIPE : -EINVAL;
    else if (pos < 0)
        ret = -EINVAL;
    if (ret) {
        fd_put(in);
        return ret;
    }
    struct fd_ref out = fd_get(fdt(), out_fd);
    if (!out.f || !file_writable(out.f))
        ret = -EBADF;
    else if (READ_ONCE(out.f->flags) & O_APPEND)
        ret = -EINVAL;
    if (!ret) {
        if (!uoff)
            pos = (int64_t)READ_ONCE(in.f->pos);
        ret = sendfile_copy(in.f, out.f, &pos, MIN(count, (size_t)0x7ffff000));
        if (!uoff && ret > 0) {
            sleeplock_acquire(&in.f->poslock);
            WRITE_ONCE(in.f->pos, (uint64_t)pos);
            sleeplock_release(&in.f->poslock);
        }
    }
    if (out.f)
        fd_put(out);
    fd_put(in);
    if (uoff && ret >= 0 && copy_to_user(uoff, &pos, sizeof pos))
        return -EFAULT;
    return ret;
}

#define IOV_MAX 1024

// readv/writev: segment by segment; a short transfer ends the call. The
// description's access mode and the vector are checked before anything moves.
static long rwv(int fd, uint64_t uiov, int iovcnt, bool write)
{
    GET_FD(r, fd);
    long total = 0, err = 0;
    struct iovec *v = NULL;
    if (write ? !file_writable(r.f) : !file_readable(r.f))
        err = -EBADF;
    else if (iovcnt < 0 || iovcnt > IOV_MAX)
        err = -EINVAL;
    else if (iovcnt > 0 && !(v = kmalloc(iovcnt * sizeof *v)))
        err = -ENOMEM;
    else if (copy_from_user(v, uiov, iovcnt * sizeof *v) < 0)
        err = -EFAULT;
    // Linux's order: any length beyond SSIZE_MAX is EINVAL, then any segment
    // outside user space EFAULT (so the sum stays below 1024 * 2^47).
    for (int i = 0; !err && i < iovcnt; i++)
        if ((int64_t)v[i].iov_len < 0)
            err = -EINVAL;
    for (int i = 0; !err && i < iovcnt; i++) {
        if (!user_range_valid(v[i].iov_base, v[i].iov_len))
            err = -EFAULT;
        total += v[i].iov_len;
    }
    if (!err && write && r.f->ops->writev) { // one write (pipes: PIPE_BUF atomicity)
        if (!err)
            total = r.f->ops->writev(r.f, v, iovcnt, (size_t)total);
        kfree(v);
        fd_put(r);
        return err ? err : total;
    }
    total = 0;
    for (int i = 0; !err && i < iovcnt; i++) {
        if (v[i].iov_len == 0)
            continue;
        long k = write ? file_write(r.f, v[i].iov_base, v[i].iov_len, NULL)
                       : file_read(r.f, v[i].iov_base, v[i].iov_len, NULL);
        if (k < 0) {
            if (!total)
                err = k;
            break;
        }
        total += k;
        if ((size_t)k < v[i].iov_len)
            break;
    }
    kfree(v);
    fd_put(r);
    return err ? err : total;
}

long sys_readv(int fd, uint64_t iov, int iovcnt) { return rwv(fd, iov, iovcnt, false); }
long sys_writev(int fd, uint64_t iov, int iovcnt) { return rwv(fd, iov, iovcnt, true); }

long sys_lseek(int fd, int64_t off, int whence)
{
    GET_FD(r, fd);
    long ret = file_lseek(r.f, off, whence);
    fd_put(r);
    return ret;
}

long sys_close(int fd) { return fd_close(fdt(), fd); }

// A new fd for fd's description: the lowest >= minfd, or (anyfd) any. Its
// reference is owned while the description has owned ones (file.h).
static long dup_from(int fd, int minfd, bool cloexec, bool anyfd)
{
    unsigned how;
    struct file *f = fd_dup_ref(fdt(), fd, true, &how);
    if (!f)
        return -EBADF;
    long nfd = fd_install(fdt(), f, how | (cloexec ? FDI_CLOEXEC : 0), anyfd, minfd, nofile());
    if (nfd < 0)
        fd_ref_drop(f, how);
    return nfd;
}

long sys_dup(int fd) { return dup_from(fd, 0, false, false); }

static long dup_to(int oldfd, int newfd, bool cloexec)
{
    if (newfd < 0 || newfd >= nofile())
        return -EBADF;
    unsigned how;
    struct file *f = fd_dup_ref(fdt(), oldfd, true, &how);
    if (!f)
        return -EBADF;
    long ret = fd_install_at(fdt(), newfd, f, how | (cloexec ? FDI_CLOEXEC : 0));
    if (ret < 0)
        fd_ref_drop(f, how);
    return ret;
}

long sys_dup2(int oldfd, int newfd)
{
    if (oldfd == newfd) { // nothing to do if it is open
        GET_FD(r, oldfd);
        fd_put(r);
        return newfd;
    }
    return dup_to(oldfd, newfd, false);
}

// dup3(oldfd, -1, O_ANYFD[|O_CLOEXEC]) returns any free fd from the calling
// CPU's partition (our extension, uapi/ext.h); with newfd >= 0 O_ANYFD changes
// nothing.
long sys_dup3(int oldfd, int newfd, int flags)
{
    if (flags & ~(O_CLOEXEC | O_ANYFD))
        return -EINVAL;
    if ((flags & O_ANYFD) && newfd == -1)
        return dup_from(oldfd, 0, flags & O_CLOEXEC, true);
    if (oldfd == newfd)
        return -EINVAL;
    return dup_to(oldfd, newfd, flags & O_CLOEXEC);
}

long sys_fcntl(int fd, int cmd, unsigned long arg)
{
    switch (cmd) {
    case F_DUPFD:
    case F_DUPFD_CLOEXEC:
        if (arg >= (unsigned long)nofile())
            return -EINVAL;
        return dup_from(fd, (int)arg, cmd == F_DUPFD_CLOEXEC, false);
    case F_GETFD:
        return fd_get_cloexec(fdt(), fd);
    case F_SETFD:
        return fd_set_cloexec(fdt(), fd, arg & FD_CLOEXEC);
    }
    GET_FD(r, fd);
    long ret = 0;
    if (cmd == F_GETFL) {
        ret = READ_ONCE(r.f->flags);
    } else if (cmd == F_SETFL) {
        uint32_t old = READ_ONCE(r.f->flags), new;
        do
            new = (old & ~FILE_SETFL_MASK) | ((uint32_t)arg & FILE_SETFL_MASK);
        while (!__atomic_compare_exchange_n(&r.f->flags, &old, new, false, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED));
    } else {
        ret = -EINVAL;
    }
    fd_put(r);
    return ret;
}

// CLOSE_RANGE_UNSHARE: if the calling thread shares its table (with threads
// or processes cloned with CLONE_FILES), it first gets a private copy, and the
// others keep their fds (Linux).
long sys_close_range(unsigned lo, unsigned hi, unsigned flags)
{
    if (flags & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC))
        return -EINVAL;
    if (lo > hi)
        return -EINVAL;
    if ((flags & CLOSE_RANGE_UNSHARE) && fdtable_unshare(&thread_current()->fdt) < 0)
        return -ENOMEM;
    fd_close_range(fdt(), lo, hi, flags & CLOSE_RANGE_CLOEXEC);
    return 0;
}

long sys_fstat(int fd, uint64_t ubuf)
{
    GET_FD(r, fd);
    struct fs_stat st;
    long ret = file_stat(r.f, STATX_BASIC_STATS, &st);
    fd_put(r);
    return ret ? ret : stat_copyout(&st, ubuf);
}

long sys_ftruncate(int fd, int64_t len)
{
    if (len < 0)
        return -EINVAL; // before the fd (Linux)
    GET_FD(r, fd);
    long ret;
    if (!r.f->ip || !S_ISREG(fs_mode(r.f->ip)) || !file_writable(r.f))
        ret = -EINVAL; // Linux: EINVAL for a description not open for writing, too
    else
        ret = fs_truncate(r.f->ip, len);
    fd_put(r);
    return ret;
}

// Everything is in memory: only files that could be synced say they were.
long sys_fsync(int fd)
{
    GET_FD(r, fd);
    long ret = r.f->ip && (S_ISREG(fs_mode(r.f->ip)) || S_ISDIR(fs_mode(r.f->ip))) ? 0 : -EINVAL;
    fd_put(r);
    return ret;
}

long sys_fdatasync(int fd) { return sys_fsync(fd); }

// ---- getdents64 ----------------------------------------------------------------------

struct dents_buf {
    char *buf;
    size_t size, len;
    struct linux_dirent64 *last; // its d_off is the position of the entry after it
    uint64_t *pos;
};

static int fill_dirent(void *arg, const char *name, size_t len, uint64_t ino, unsigned type)
{
    struct dents_buf *b = arg;
    size_t reclen = ROUNDUP(offsetof(struct linux_dirent64, d_name) + len + 1, 8);
    if (b->len + reclen > b->size)
        return 1; // full: stop before this entry
    if (b->last)
        b->last->d_off = (int64_t)*b->pos; // where this entry starts
    struct linux_dirent64 *d = (struct linux_dirent64 *)(b->buf + b->len);
    d->d_ino = ino;
    d->d_off = 0;
    d->d_reclen = (uint16_t)reclen;
    d->d_type = (uint8_t)type;
    memcpy(d->d_name, name, len);
    memset(d->d_name + len, 0, reclen - offsetof(struct linux_dirent64, d_name) - len);
    b->len += reclen;
    b->last = d;
    return 0;
}

long sys_getdents64(int fd, uint64_t udirp, size_t count)
{
    GET_FD(r, fd);
    long ret;
    struct dents_buf b = {.size = MIN(count, PGSIZE)};
    bool proc = procfs_is_dir(r.f);
    if (!proc && (!r.f->ip || !S_ISDIR(fs_mode(r.f->ip)))) {
        ret = -ENOTDIR;
    } else if (!user_range_valid(udirp, count)) {
        ret = -EFAULT;
    } else if (!(b.buf = page_alloc())) {
        ret = -ENOMEM;
    } else {
        sleeplock_acquire(&r.f->poslock);
        uint64_t pos = r.f->pos;
        b.pos = &pos;
        ret = proc ? procfs_readdir(r.f, &pos, fill_dirent, &b)
                   : fs_readdir(r.f->ip, &pos, fill_dirent, &b);
        if (b.last)
            b.last->d_off = (int64_t)pos;
        if (ret >= 0 && b.len == 0 && ret == 1)
            ret = -EINVAL; // not even one entry fits
        else if (ret >= 0 && copy_to_user(udirp, b.buf, b.len) < 0)
            ret = -EFAULT; // the position stays, so nothing is lost
        else if (ret >= 0) {
            WRITE_ONCE(r.f->pos, pos);
            ret = (long)b.len;
        }
        sleeplock_release(&r.f->poslock);
        page_free(b.buf);
    }
    fd_put(r);
    return ret;
}

long sys_ioctl(int fd, unsigned long req, uint64_t arg)
{
    GET_FD(r, fd);
    long ret = file_ioctl(r.f, req, arg);
    fd_put(r);
    return ret;
}

long sys_fchdir(int fd)
{
    GET_FD(r, fd);
    long ret = 0;
    if (!r.f->ip || !S_ISDIR(fs_mode(r.f->ip)))
        ret = -ENOTDIR;
    else {
        fs_iget(r.f->ip);
        fsctx_set_cwd(r.f->ip);
    }
    fd_put(r);
    return ret;
}

long sys_fchmod(int fd, uint32_t mode)
{
    GET_FD(r, fd);
    if (r.f->ip)
        fs_chmod(r.f->ip, mode);
    fd_put(r);
    return 0;
}

// ---- pipes ------------------------------------------------------------------------------

// O_DIRECT ("packet mode") is not supported: EINVAL.
long sys_pipe2(uint64_t ufds, int flags)
{
    if (flags & ~(O_CLOEXEC | O_NONBLOCK | O_ANYFD))
        return -EINVAL;
    struct file *rd, *wr;
    int err = pipe_create(flags, &rd, &wr);
    if (err)
        return err;
    unsigned how = (flags & O_CLOEXEC) ? FDI_CLOEXEC : 0;
    bool any = flags & O_ANYFD;
    int fds[2];
    fds[0] = fd_install(fdt(), rd, how, any, 0, nofile());
    if (fds[0] < 0) {
        file_put(rd);
        file_put(wr);
        return fds[0];
    }
    fds[1] = fd_install(fdt(), wr, how, any, 0, nofile());
    if (fds[1] < 0) {
        file_put(wr);
        fd_close(fdt(), fds[0]);
        return fds[1];
    }
    if (copy_to_user(ufds, fds, sizeof fds) < 0) {
        fd_close(fdt(), fds[0]);
        fd_close(fdt(), fds[1]);
        return -EFAULT;
    }
    return 0;
}

long sys_pipe(uint64_t ufds) { return sys_pipe2(ufds, 0); }
