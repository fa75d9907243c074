// Thin system-call wrappers: file descriptors, paths, identities, memory maps.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include "libc.h"

ssize_t read(int fd, void *buf, size_t n) { return sys(__NR_read, fd, buf, n); }
ssize_t write(int fd, const void *buf, size_t n) { return sys(__NR_write, fd, buf, n); }
ssize_t pread(int fd, void *buf, size_t n, off_t off) { return sys(__NR_pread64, fd, buf, n, off); }
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    return sys(__NR_pwrite64, fd, buf, n, off);
}
ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count)
{
    return sys(__NR_sendfile, out_fd, in_fd, offset, count);
}
ssize_t readv(int fd, const struct iovec *iov, int n) { return sys(__NR_readv, fd, iov, n); }
ssize_t writev(int fd, const struct iovec *iov, int n) { return sys(__NR_writev, fd, iov, n); }
ssize_t preadv(int fd, const struct iovec *iov, int n, off_t off)
{
    return sys(__NR_preadv, fd, iov, n, off, 0);
}
ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
    return sys(__NR_pwritev, fd, iov, n, off, 0);
}
int close(int fd)
{
    long r = __sys(__NR_close, fd);
    return r == -EINTR ? 0 : (int)__syscall_ret(r);  // the fd is gone either way
}
off_t lseek(int fd, off_t off, int whence) { return sys(__NR_lseek, fd, off, whence); }
int dup(int fd) { return sys(__NR_dup, fd); }
int dup2(int fd, int newfd) { return sys(__NR_dup2, fd, newfd); }
int dup3(int fd, int newfd, int flags) { return sys(__NR_dup3, fd, newfd, flags); }
int pipe(int fds[2]) { return sys(__NR_pipe, fds); }
int pipe2(int fds[2], int flags) { return sys(__NR_pipe2, fds, flags); }
int fsync(int fd) { return sys(__NR_fsync, fd); }
void sync(void) { syscall(__NR_sync); }
int fdatasync(int fd) { return sys(__NR_fdatasync, fd); }
int ftruncate(int fd, off_t len) { return sys(__NR_ftruncate, fd, len); }
int truncate(const char *path, off_t len) { return sys(__NR_truncate, path, len); }
int access(const char *path, int mode) { return sys(__NR_access, path, mode); }
int faccessat(int dirfd, const char *path, int mode, int flags)
{
    if (flags)
        return sys(439 /* faccessat2 */, dirfd, path, mode, flags);
    return sys(__NR_faccessat, dirfd, path, mode);
}
int chdir(const char *path) { return sys(__NR_chdir, path); }
int fchdir(int fd) { return sys(__NR_fchdir, fd); }
char *getcwd(char *buf, size_t size)
{
    if (buf)
        return sys(__NR_getcwd, buf, size) < 0 ? NULL : buf;
    char tmp[4096];
    if (sys(__NR_getcwd, tmp, sizeof tmp) < 0)
        return NULL;
    return strdup(tmp);
}
int unlink(const char *path) { return sys(__NR_unlink, path); }
int unlinkat(int dirfd, const char *path, int flags) { return sys(__NR_unlinkat, dirfd, path, flags); }
int rmdir(const char *path) { return sys(__NR_rmdir, path); }
int link(const char *from, const char *to) { return sys(__NR_link, from, to); }
int linkat(int fromdir, const char *from, int todir, const char *to, int flags)
{
    return sys(__NR_linkat, fromdir, from, todir, to, flags);
}
int symlink(const char *target, const char *path) { return sys(__NR_symlink, target, path); }
int symlinkat(const char *target, int dirfd, const char *path)
{
    return sys(__NR_symlinkat, target, dirfd, path);
}
ssize_t readlink(const char *restrict path, char *restrict buf, size_t n)
{
    return sys(__NR_readlink, path, buf, n);
}
ssize_t readlinkat(int dirfd, const char *restrict path, char *restrict buf, size_t n)
{
    return sys(__NR_readlinkat, dirfd, path, buf, n);
}
int rename(const char *from, const char *to) { return sys(__NR_rename, from, to); }
int chown(const char *path, uid_t uid, gid_t gid) { return sys(__NR_chown, path, uid, gid); }
int fchown(int fd, uid_t uid, gid_t gid) { return sys(__NR_fchown, fd, uid, gid); }
int lchown(const char *path, uid_t uid, gid_t gid) { return sys(__NR_lchown, path, uid, gid); }

int open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    return sys(__NR_open, path, flags, mode);
}
int openat(int dirfd, const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    return sys(__NR_openat, dirfd, path, flags, mode);
}
int creat(const char *path, mode_t mode) { return open(path, O_CREAT | O_WRONLY | O_TRUNC, mode); }
int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    return sys(__NR_fcntl, fd, cmd, arg);
}
int ioctl(int fd, unsigned long req, ...)
{
    va_list ap;
    va_start(ap, req);
    long arg = va_arg(ap, long);
    va_end(ap);
    return sys(__NR_ioctl, fd, req, arg);
}
int poll(struct pollfd *fds, nfds_t n, int timeout) { return sys(__NR_poll, fds, n, timeout); }
int select(int n, fd_set *restrict r, fd_set *restrict w, fd_set *restrict e,
           struct timeval *restrict timeout)
{
    return sys(__NR_select, n, r, w, e, timeout);
}
int pselect(int n, fd_set *restrict r, fd_set *restrict w, fd_set *restrict e,
            const struct timespec *restrict timeout, const sigset_t *restrict mask)
{
    // The kernel takes the mask as {pointer, size}.
    struct {
        const void *set;
        size_t size;
    } m = {mask, 8};
    return sys(__NR_pselect6, n, r, w, e, timeout, mask ? &m : NULL);
}

int stat(const char *restrict path, struct stat *restrict st) { return sys(__NR_stat, path, st); }
int lstat(const char *restrict path, struct stat *restrict st) { return sys(__NR_lstat, path, st); }
int fstat(int fd, struct stat *st) { return sys(__NR_fstat, fd, st); }
int fstatat(int dirfd, const char *restrict path, struct stat *restrict st, int flags)
{
    return sys(__NR_newfstatat, dirfd, path, st, flags);
}
int mkdir(const char *path, mode_t mode) { return sys(__NR_mkdir, path, mode); }
int mkdirat(int dirfd, const char *path, mode_t mode) { return sys(__NR_mkdirat, dirfd, path, mode); }

int utimensat(int dirfd, const char *path, const struct timespec times[2], int flags)
{
    return sys(__NR_utimensat, dirfd, path, times, flags);
}

int futimens(int fd, const struct timespec times[2]) { return utimensat(fd, NULL, times, 0); }
int mkfifo(const char *path, mode_t mode) { return sys(133 /* mknod */, path, mode | S_IFIFO, 0); }
int chmod(const char *path, mode_t mode) { return sys(__NR_chmod, path, mode); }
int fchmod(int fd, mode_t mode) { return sys(__NR_fchmod, fd, mode); }
int fchmodat(int dirfd, const char *path, mode_t mode, int flags)
{
    if (flags) {
        errno = EOPNOTSUPP;
        return -1;
    }
    return sys(__NR_fchmodat, dirfd, path, mode);
}
mode_t umask(mode_t mask) { return (mode_t)__sys(__NR_umask, mask); }

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return (void *)sys(__NR_mmap, addr, len, prot, flags, fd, off);
}
int munmap(void *addr, size_t len) { return sys(__NR_munmap, addr, len); }
int mprotect(void *addr, size_t len, int prot) { return sys(__NR_mprotect, addr, len, prot); }
int madvise(void *addr, size_t len, int advice) { return sys(__NR_madvise, addr, len, advice); }
int memfd_create(const char *name, unsigned flags) { return sys(__NR_memfd_create, name, flags); }
int msync(void *addr, size_t len, int flags) { return sys(__NR_msync, addr, len, flags); }
void *mremap(void *old, size_t oldlen, size_t newlen, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    void *new = (flags & MREMAP_FIXED) ? va_arg(ap, void *) : NULL;
    va_end(ap);
    return (void *)sys(__NR_mremap, old, oldlen, newlen, flags, new);
}
int brk(void *addr)
{
    void *r = (void *)__sys(__NR_brk, addr);
    if (r != addr) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}
void *sbrk(intptr_t inc)
{
    static uintptr_t cur;
    if (!cur)
        cur = (uintptr_t)__sys(__NR_brk, 0);
    uintptr_t old = cur;
    if (inc && brk((void *)(old + inc)) < 0)
        return (void *)-1;
    cur = old + inc;
    return (void *)old;
}

pid_t getpid(void) { return (pid_t)__sys(__NR_getpid); }
pid_t getppid(void) { return (pid_t)__sys(__NR_getppid); }
pid_t gettid(void) { return (pid_t)__sys(__NR_gettid); }
pid_t getpgrp(void) { return (pid_t)__sys(__NR_getpgrp); }
pid_t getpgid(pid_t pid) { return sys(__NR_getpgid, pid); }
int setpgid(pid_t pid, pid_t pgid) { return sys(__NR_setpgid, pid, pgid); }
pid_t setsid(void) { return sys(__NR_setsid); }
pid_t getsid(pid_t pid) { return sys(__NR_getsid, pid); }
uid_t getuid(void) { return (uid_t)__sys(__NR_getuid); }
uid_t geteuid(void) { return (uid_t)__sys(__NR_geteuid); }
gid_t getgid(void) { return (gid_t)__sys(__NR_getgid); }
gid_t getegid(void) { return (gid_t)__sys(__NR_getegid); }
int setuid(uid_t uid) { return sys(__NR_setuid, uid); }
int setgid(gid_t gid) { return sys(__NR_setgid, gid); }
int uname(struct utsname *u) { return sys(__NR_uname, u); }
int gethostname(char *name, size_t len)
{
    struct utsname u;
    if (uname(&u) < 0)
        return -1;
    size_t n = strlen(u.nodename);
    if (n >= len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(name, u.nodename, n + 1);
    return 0;
}
int getrlimit(int res, struct rlimit *r) { return sys(__NR_getrlimit, res, r); }
int setrlimit(int res, const struct rlimit *r) { return sys(__NR_setrlimit, res, r); }
int getrusage(int who, struct rusage *ru) { return sys(__NR_getrusage, who, ru); }
