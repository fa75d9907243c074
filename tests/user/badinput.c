// Bad input for every system call the kernel implements (kernel/syscall/syscall.c's
// table): NULL, kernel and unmapped pointers, buffers that run into an unmapped
// page, misaligned futex words, bad and wrong-type fds, unknown flag bits, huge
// and negative sizes, overlong and empty names. Each row is one raw call and
// the errno Linux returns for it (0: Linux succeeds); the suite passes on the
// Linux host, so the table is Linux's behaviour, and our kernel must match it.
// Calls that would end the test process (exit, rt_sigreturn) run in a child.
// A failing call must leave no fd behind: each row checks the lowest free fd.
// Not here: pause (no arguments, it only blocks). Our extensions (posix_spawn,
// kstats) are ENOSYS on Linux; their rows say what ours returns (`ours`), and
// no other row has one: there are no documented divergences left.
#include "suite.h"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers" // rows leave `ours` out
#include <limits.h>
#include <stdbool.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#define K1 0xffff800000000000L // the start of the kernel half
#define K2 0xffffffff80000000L // where kernels are linked
#define NONCANON 0x0000800000000000L

// Linux values musl's headers or ours lack.
#define CLOSE_RANGE_CLOEXEC 4
#define RENAME_NOREPLACE 1
#define RENAME_EXCHANGE 2
#define STATX_BASIC_STATS 0x7ffu
#define STATX__RESERVED 0x80000000u
#define AT_STATX_SYNC_TYPE 0x6000
#define GRND_RANDOM 2
#define GRND_INSECURE 4
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_WAIT_BITSET 9
#define FUTEX_PRIVATE 128
#define FUTEX_CLOCK_REALTIME 256
#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004
#define SEEK_DATA 3
#define SEEK_HOLE 4
#define MAP_SHARED_VALIDATE 3
#define CLONE_VM 0x100
#define CLONE_FS 0x200
#define CLONE_SIGHAND 0x800
#define CLONE_THREAD 0x10000
#define CLONE_NEWNS 0x20000
#define REBOOT_MAGIC1 0xfee1deadL
#define REBOOT_MAGIC2 672274793L

#include "../kernel/progs/raw.h" // raw6, raw_spawn: the kernel's own values

enum { CLOSE_RET = 1, UNMAP_RET = 2, SPAWN = 4 };

struct row {
    const char *name;
    long nr;
    long a[6];
    int err;   // Linux's errno, or 0 when the call succeeds there
    int after; // CLOSE_RET: close the fd it returns; UNMAP_RET: munmap a[1] bytes; SPAWN: reap
    int ours;  // a documented divergence: the errno our kernel returns instead
};
#define OURS_OK (-1) // `ours`: our kernel succeeds (an extension Linux lacks)

static bool on_ours; // our kernel, not Linux (uname's release says so)

static int lowest_free_fd(void)
{
    int fd = (int)raw6(SYS_dup, 0, 0, 0, 0, 0, 0);
    raw6(SYS_close, fd, 0, 0, 0, 0, 0);
    return fd;
}

static long straddle8;

static void run_rows(const struct row *r, size_t n)
{
    for (; n--; r++) {
        memset((void *)straddle8, 'a', 8); // no NUL before the hole: a string runs into it
        int low = lowest_free_fd();
        long ret = r->after & SPAWN ? raw_spawn(r->nr, r->a[0], r->a[1], r->a[2], r->a[3], r->a[4])
                                    : raw6(r->nr, r->a[0], r->a[1], r->a[2], r->a[3], r->a[4], r->a[5]);
        bool failed = ret < 0 && ret >= -4095;
        int want = on_ours && r->ours ? (r->ours == OURS_OK ? 0 : r->ours) : r->err;
        bool leaked = failed && lowest_free_fd() != low;
        bool ok = (want ? ret == -want : !failed) && !leaked;
        char name[200];
        snprintf(name, sizeof name, "%s -> %s%s", r->name, want ? strerror(want) : "success",
                 r->ours && r->err == ENOSYS ? " (our extension; Linux: ENOSYS)"
                 : r->ours ? " (divergence: Linux returns another errno)" : "");
        check(ok, name);
        if (!ok)
            printf("# got %ld%s%s%s\n", ret, failed ? " " : "", failed ? strerror((int)-ret) : "",
                   leaked ? ", and an fd was left open" : "");
        if (failed)
            continue;
        if (r->after & CLOSE_RET)
            close((int)ret);
        if (r->after & UNMAP_RET)
            munmap((void *)ret, (size_t)r->a[1]);
        if ((r->after & SPAWN) && ret > 0)
            raw6(SYS_wait4, ret, 0, 0x40000000 /* __WALL */, 0, 0, 0);
    }
}

#define RUN(rows) run_rows(rows, sizeof rows / sizeof rows[0])

// Objects the rows use, made in a scratch directory.
static int file, rdonly, wronly, dir, pipe_r, pipe_w, closed_fd, nofile;
static long unmapped, straddle4, buf;
static char *longpath, *pathmax, *okpath, *longname, *name255;
static char bufmem[8192] __attribute__((aligned(16)));

static const char content[] = "0123456789abcdefghijklmn"; // 24 bytes

static void setup(void)
{
    int fd = open("f", O_RDWR | O_CREAT, 0644);
    write(fd, content, 24);
    close(fd);
    mkdir("d", 0755);
    mkdir("full", 0755);
    close(open("full/x", O_CREAT | O_WRONLY, 0644));
    symlink("f", "l");
    symlink("nowhere", "dl");
    symlink("la", "lb");
    symlink("lb", "la");
    fd = open("junk", O_CREAT | O_WRONLY, 0755);
    write(fd, "junk junk junk junk\n", 20);
    close(fd);
    file = open("f", O_RDWR);
    rdonly = open("f", O_RDONLY);
    wronly = open("f", O_WRONLY);
    dir = open("d", O_RDONLY | O_DIRECTORY);
    int p[2];
    pipe(p);
    pipe_r = p[0];
    pipe_w = p[1];
    closed_fd = dup(file);
    close(closed_fd);
    nofile = (int)sysconf(_SC_OPEN_MAX);

    // PATH_MAX+1 and PATH_MAX bytes (no room for the NUL): too long. PATH_MAX-1
    // bytes of ./././f: fine. NAME_MAX+1 bytes: one component too long.
    longpath = malloc(PATH_MAX + 2);
    memset(longpath, 'a', PATH_MAX + 1);
    for (int i = 1; i < PATH_MAX; i += 2)
        longpath[i] = '/';
    longpath[PATH_MAX + 1] = 0;
    pathmax = strdup(longpath);
    pathmax[PATH_MAX] = 0;
    okpath = malloc(PATH_MAX);
    for (int i = 0; i < PATH_MAX - 2; i += 2)
        memcpy(okpath + i, "./", 2);
    strcpy(okpath + PATH_MAX - 2, "f");
    longname = malloc(NAME_MAX + 2);
    memset(longname, 'n', NAME_MAX + 1);
    longname[NAME_MAX + 1] = 0;
    name255 = strdup(longname);
    name255[NAME_MAX] = 0;

    // Far from where either kernel places mappings, so that nothing the suite
    // (or printf's buffers) maps later fills the holes.
    buf = (long)bufmem;
    unmapped = 0x5e0000000000L;
    char *two = mmap((void *)0x5d0000000000L, 8192, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    munmap(two + 4096, 4096);
    straddle8 = (long)(two + 4096 - 8);
    straddle4 = (long)(two + 4096 - 4);
}

// Bad fds common to every fd-taking call.
#define BADFDS(call, nr, ...)                                          \
    {call "(-1)", nr, {-1, __VA_ARGS__}, EBADF, 0},                    \
    {call "(1000000)", nr, {1000000, __VA_ARGS__}, EBADF, 0},          \
    {call "(INT_MAX)", nr, {INT_MAX, __VA_ARGS__}, EBADF, 0},          \
    {call "(closed fd)", nr, {closed_fd, __VA_ARGS__}, EBADF, 0}

static void fd_calls(void)
{
    static long iov_bad[2], iov_neg[2], iov_ok[2], iov_two_max[4];
    iov_bad[0] = K1, iov_bad[1] = 16;
    iov_neg[0] = buf, iov_neg[1] = -1;
    iov_ok[0] = buf, iov_ok[1] = 16;
    iov_two_max[0] = buf, iov_two_max[1] = LONG_MAX / 2 + 1;
    iov_two_max[2] = buf, iov_two_max[3] = LONG_MAX / 2 + 1;
    static long ts_zero[2], ts_neg[2] = {0, -1}, ts_negsec[2] = {-1, 0}, sigarg[2];
    sigarg[0] = buf, sigarg[1] = 4;
    const struct row rows[] = {
        BADFDS("read", SYS_read, buf, 1),
        {"read(file, NULL, 16)", SYS_read, {file, 0, 16}, EFAULT, 0},
        {"read(file, kernel 0xffff8..., 16)", SYS_read, {file, K1, 16}, EFAULT, 0},
        {"read(file, kernel 0xffffffff8..., 16)", SYS_read, {file, K2, 16}, EFAULT, 0},
        {"read(file, non-canonical, 16)", SYS_read, {file, NONCANON, 16}, EFAULT, 0},
        {"read(file, unmapped, 16)", SYS_read, {file, unmapped, 16}, EFAULT, 0},
        {"read(file, buf, SIZE_MAX)", SYS_read, {file, buf, -1}, EFAULT, 0},
        {"read(write-only fd)", SYS_read, {wronly, buf, 1}, EBADF, 0},
        {"read(pipe's write end)", SYS_read, {pipe_w, buf, 1}, EBADF, 0},
        {"read(directory)", SYS_read, {dir, buf, 16}, EISDIR, 0},
        {"read(file, NULL, 0)", SYS_read, {file, 0, 0}, 0, 0},
        {"read(fd with high bits: truncated to int)", SYS_read, {0x100000000L | file, buf, 0}, 0, 0},
        BADFDS("write", SYS_write, buf, 1),
        {"write(file, NULL, 16)", SYS_write, {file, 0, 16}, EFAULT, 0},
        {"write(file, kernel, 16)", SYS_write, {file, K2, 16}, EFAULT, 0},
        {"write(file, unmapped, 16)", SYS_write, {file, unmapped, 16}, EFAULT, 0},
        {"write(file, buf, SIZE_MAX)", SYS_write, {file, buf, -1}, EFAULT, 0},
        {"write(read-only fd)", SYS_write, {rdonly, buf, 1}, EBADF, 0},
        {"write(pipe's read end)", SYS_write, {pipe_r, buf, 1}, EBADF, 0},
        {"write(directory)", SYS_write, {dir, buf, 1}, EBADF, 0},
        BADFDS("pread64", SYS_pread64, buf, 1, 0),
        {"pread64(file, NULL, 16, 0)", SYS_pread64, {file, 0, 16, 0}, EFAULT, 0},
        {"pread64(file, kernel, 16, 0)", SYS_pread64, {file, K1, 16, 0}, EFAULT, 0},
        {"pread64(file, buf, 1, -1)", SYS_pread64, {file, buf, 1, -1}, EINVAL, 0},
        {"pread64(pipe)", SYS_pread64, {pipe_r, buf, 1, 0}, ESPIPE, 0},
        {"pread64(directory)", SYS_pread64, {dir, buf, 1, 0}, EISDIR, 0},
        {"pread64(write-only fd)", SYS_pread64, {wronly, buf, 1, 0}, EBADF, 0},
        {"pread64(file, straddling buffer, 16, 0): 8 bytes", SYS_pread64, {file, straddle8, 16, 0}, 0, 0},
        {"pread64(file, buf, SIZE_MAX, 0)", SYS_pread64, {file, buf, -1, 0}, EFAULT, 0},
        BADFDS("pwrite64", SYS_pwrite64, buf, 1, 0),
        {"pwrite64(file, straddling buffer, 16, 100): 8 bytes", SYS_pwrite64, {file, straddle8, 16, 100}, 0, 0},
        {"write(file, straddling buffer, 16): 8 bytes", SYS_write, {file, straddle8, 16}, 0, 0},
        {"ftruncate(file, 24)", SYS_ftruncate, {file, 24}, 0, 0},
        {"pwrite64(file, NULL, 16, 0)", SYS_pwrite64, {file, 0, 16, 0}, EFAULT, 0},
        {"pwrite64(file, buf, 1, -1)", SYS_pwrite64, {file, buf, 1, -1}, EINVAL, 0},
        {"pwrite64(pipe)", SYS_pwrite64, {pipe_w, buf, 1, 0}, ESPIPE, 0},
        {"pwrite64(read-only fd)", SYS_pwrite64, {rdonly, buf, 1, 0}, EBADF, 0},
        {"pwrite64(directory)", SYS_pwrite64, {dir, buf, 1, 0}, EBADF, 0},
        BADFDS("readv", SYS_readv, (long)iov_ok, 1),
        {"readv(file, NULL iov, 1)", SYS_readv, {file, 0, 1}, EFAULT, 0},
        {"readv(file, kernel iov, 1)", SYS_readv, {file, K1, 1}, EFAULT, 0},
        {"readv(file, iov, -1)", SYS_readv, {file, (long)iov_ok, -1}, EINVAL, 0},
        {"readv(file, iov, IOV_MAX+1)", SYS_readv, {file, (long)iov_ok, IOV_MAX + 1}, EINVAL, 0},
        {"readv(file, iov with a kernel base, 1)", SYS_readv, {file, (long)iov_bad, 1}, EFAULT, 0},
        {"readv(file, iov with a negative length, 1)", SYS_readv, {file, (long)iov_neg, 1}, EINVAL, 0},
        {"readv(file, iov, 0)", SYS_readv, {file, (long)iov_ok, 0}, 0, 0},
        {"readv(directory)", SYS_readv, {dir, (long)iov_ok, 1}, EISDIR, 0},
        {"readv(pipe's write end)", SYS_readv, {pipe_w, (long)iov_ok, 1}, EBADF, 0},
        BADFDS("writev", SYS_writev, (long)iov_ok, 1),
        {"writev(file, NULL iov, 1)", SYS_writev, {file, 0, 1}, EFAULT, 0},
        {"writev(file, iov, -1)", SYS_writev, {file, (long)iov_ok, -1}, EINVAL, 0},
        {"writev(file, iov, IOV_MAX+1)", SYS_writev, {file, (long)iov_ok, IOV_MAX + 1}, EINVAL, 0},
        {"writev(file, iov with a kernel base, 1)", SYS_writev, {file, (long)iov_bad, 1}, EFAULT, 0},
        {"writev(file, iov with a negative length, 1)", SYS_writev, {file, (long)iov_neg, 1}, EINVAL, 0},
        {"writev(file, two iovs of LONG_MAX/2+1, 2)", SYS_writev, {file, (long)iov_two_max, 2}, EFAULT, 0},
        {"writev(read-only fd)", SYS_writev, {rdonly, (long)iov_ok, 1}, EBADF, 0},
        BADFDS("lseek", SYS_lseek, 0, SEEK_SET),
        {"lseek(pipe)", SYS_lseek, {pipe_r, 0, SEEK_SET}, ESPIPE, 0},
        {"lseek(file, -1, SEEK_SET)", SYS_lseek, {file, -1, SEEK_SET}, EINVAL, 0},
        {"lseek(file, -100, SEEK_END)", SYS_lseek, {file, -100, SEEK_END}, EINVAL, 0},
        {"lseek(file, 0, whence 5)", SYS_lseek, {file, 0, 5}, EINVAL, 0},
        {"lseek(file, 0, whence -1)", SYS_lseek, {file, 0, -1}, EINVAL, 0},
        {"lseek(file, 100, SEEK_DATA) past the end", SYS_lseek, {file, 100, SEEK_DATA}, ENXIO, 0},
        {"lseek(file, 0, SEEK_DATA)", SYS_lseek, {file, 0, SEEK_DATA}, 0, 0},
        {"lseek(file, 0, SEEK_HOLE)", SYS_lseek, {file, 0, SEEK_HOLE}, 0, 0},
        {"lseek(directory, 0, SEEK_SET)", SYS_lseek, {dir, 0, SEEK_SET}, 0, 0},
        {"lseek(file, 0, SEEK_SET)", SYS_lseek, {file, 0, SEEK_SET}, 0, 0},
        BADFDS("close", SYS_close, 0),
        BADFDS("dup", SYS_dup, 0),
        BADFDS("dup2", SYS_dup2, 50),
        {"dup2(file, -1)", SYS_dup2, {file, -1}, EBADF, 0},
        {"dup2(file, RLIMIT_NOFILE)", SYS_dup2, {file, nofile}, EBADF, 0},
        {"dup2(file, INT_MAX)", SYS_dup2, {file, INT_MAX}, EBADF, 0},
        BADFDS("dup3", SYS_dup3, 50, 0),
        {"dup3(file, file, 0)", SYS_dup3, {file, file, 0}, EINVAL, 0},
        {"dup3(file, 50, unknown flags)", SYS_dup3, {file, 50, ~O_CLOEXEC}, EINVAL, 0},
        {"dup3(file, -1, 0)", SYS_dup3, {file, -1, 0}, EBADF, 0},
        {"dup3(file, RLIMIT_NOFILE, 0)", SYS_dup3, {file, nofile, 0}, EBADF, 0},
        BADFDS("fcntl", SYS_fcntl, F_GETFD),
        {"fcntl(file, cmd 9999)", SYS_fcntl, {file, 9999}, EINVAL, 0},
        {"fcntl(file, cmd -1)", SYS_fcntl, {file, -1}, EINVAL, 0},
        {"fcntl(file, F_DUPFD, -1)", SYS_fcntl, {file, F_DUPFD, -1}, EINVAL, 0},
        {"fcntl(file, F_DUPFD, RLIMIT_NOFILE)", SYS_fcntl, {file, F_DUPFD, nofile}, EINVAL, 0},
        {"fcntl(file, F_DUPFD_CLOEXEC, INT_MAX)", SYS_fcntl, {file, F_DUPFD_CLOEXEC, INT_MAX}, EINVAL, 0},
        {"fcntl(file, F_SETFD, all bits)", SYS_fcntl, {file, F_SETFD, -2}, 0, 0},
        {"fcntl(file, F_SETFD, 0)", SYS_fcntl, {file, F_SETFD, 0}, 0, 0},
        {"fcntl(file, F_SETFL, an unknown bit)", SYS_fcntl, {file, F_SETFL, 0x80000000L}, 0, 0},
        {"close_range(10, 5, 0)", SYS_close_range, {10, 5, 0}, EINVAL, 0},
        {"close_range(unknown flags)", SYS_close_range, {1000000, ~0U, 0x80}, EINVAL, 0},
        {"close_range(all unknown flag bits)", SYS_close_range, {1000000, ~0U, ~6L}, EINVAL, 0},
        {"close_range(1000000, ~0, 0): nothing open", SYS_close_range, {1000000, ~0U, 0}, 0, 0},
        {"close_range(1000000, ~0, CLOEXEC)", SYS_close_range, {1000000, ~0U, CLOSE_RANGE_CLOEXEC}, 0, 0},
        BADFDS("fstat", SYS_fstat, buf),
        {"fstat(file, NULL)", SYS_fstat, {file, 0}, EFAULT, 0},
        {"fstat(file, kernel)", SYS_fstat, {file, K1}, EFAULT, 0},
        {"fstat(file, unmapped)", SYS_fstat, {file, unmapped}, EFAULT, 0},
        {"fstat(file, straddling buffer)", SYS_fstat, {file, straddle8}, EFAULT, 0},
        {"fstat(pipe)", SYS_fstat, {pipe_r, buf}, 0, 0},
        BADFDS("ftruncate", SYS_ftruncate, 0),
        {"ftruncate(file, -1)", SYS_ftruncate, {file, -1}, EINVAL, 0},
        {"ftruncate(read-only fd)", SYS_ftruncate, {rdonly, 0}, EINVAL, 0},
        {"ftruncate(pipe)", SYS_ftruncate, {pipe_w, 0}, EINVAL, 0},
        {"ftruncate(directory)", SYS_ftruncate, {dir, 0}, EINVAL, 0},
        BADFDS("fsync", SYS_fsync, 0),
        {"fsync(pipe)", SYS_fsync, {pipe_w}, EINVAL, 0},
        {"fsync(file)", SYS_fsync, {file}, 0, 0},
        BADFDS("fdatasync", SYS_fdatasync, 0),
        {"fdatasync(pipe)", SYS_fdatasync, {pipe_r}, EINVAL, 0},
        BADFDS("getdents64", SYS_getdents64, buf, 4096),
        {"getdents64(file)", SYS_getdents64, {file, buf, 4096}, ENOTDIR, 0},
        {"getdents64(pipe)", SYS_getdents64, {pipe_r, buf, 4096}, ENOTDIR, 0},
        {"getdents64(dir, buf, 0)", SYS_getdents64, {dir, buf, 0}, EINVAL, 0},
        {"getdents64(dir, buf, 1)", SYS_getdents64, {dir, buf, 1}, EINVAL, 0},
        {"getdents64(dir, kernel, 4096)", SYS_getdents64, {dir, K1, 4096}, EFAULT, 0},
        {"getdents64(dir, NULL, 4096)", SYS_getdents64, {dir, 0, 4096}, EFAULT, 0},
        {"getdents64(dir, unmapped, 4096)", SYS_getdents64, {dir, unmapped, 4096}, EFAULT, 0},
        BADFDS("ioctl", SYS_ioctl, TCGETS, buf),
        {"ioctl(file, TCGETS)", SYS_ioctl, {file, TCGETS, buf}, ENOTTY, 0},
        {"ioctl(pipe, TCGETS)", SYS_ioctl, {pipe_r, TCGETS, buf}, ENOTTY, 0},
        {"ioctl(file, unknown request)", SYS_ioctl, {file, 0xdeadbeef, 0}, ENOTTY, 0},
        {"ioctl(pipe, FIONREAD, NULL)", SYS_ioctl, {pipe_r, FIONREAD, 0}, EFAULT, 0},
        {"ioctl(pipe, FIONREAD, kernel)", SYS_ioctl, {pipe_r, FIONREAD, K1}, EFAULT, 0},
        {"ioctl(pipe, FIONREAD, buf)", SYS_ioctl, {pipe_r, FIONREAD, buf}, 0, 0},
        BADFDS("fchdir", SYS_fchdir, 0),
        {"fchdir(file)", SYS_fchdir, {file}, ENOTDIR, 0},
        {"fchdir(pipe)", SYS_fchdir, {pipe_r}, ENOTDIR, 0},
        BADFDS("fchmod", SYS_fchmod, 0644),
        {"fchmod(file, 0644 with type bits)", SYS_fchmod, {file, S_IFDIR | 0644}, 0, 0},
        {"pipe(NULL)", SYS_pipe, {0}, EFAULT, 0},
        {"pipe(kernel)", SYS_pipe, {K1}, EFAULT, 0},
        {"pipe(unmapped)", SYS_pipe, {unmapped}, EFAULT, 0},
        {"pipe(4 bytes before a hole)", SYS_pipe, {straddle4}, EFAULT, 0},
        {"pipe2(NULL, 0)", SYS_pipe2, {0, 0}, EFAULT, 0},
        {"pipe2(buf, all flag bits)", SYS_pipe2, {buf, -1}, EINVAL, 0},
        {"pipe2(buf, an unknown bit)", SYS_pipe2, {buf, 0x80000000L}, EINVAL, 0},
        {"pipe2(buf, O_RDWR)", SYS_pipe2, {buf, O_RDWR}, EINVAL, 0},
        {"memfd_create(NULL, 0)", SYS_memfd_create, {0, 0}, EFAULT, 0},
        {"memfd_create(kernel, 0)", SYS_memfd_create, {K1, 0}, EFAULT, 0},
        {"memfd_create(straddling name, 0)", SYS_memfd_create, {straddle8, 0}, EFAULT, 0},
        {"memfd_create(\"x\", all flag bits)", SYS_memfd_create, {(long)"x", -1}, EINVAL, 0},
        {"memfd_create(NAME_MAX+1 name, 0)", SYS_memfd_create, {(long)longname, 0}, EINVAL, 0},
        {"poll(NULL, 1)", SYS_poll, {0, 1, 0}, EFAULT, 0},
        {"poll(kernel, 1)", SYS_poll, {K1, 1, 0}, EFAULT, 0},
        {"poll(4 bytes before a hole, 1)", SYS_poll, {straddle4, 1, 0}, EFAULT, 0},
        {"poll(buf, 2^30)", SYS_poll, {buf, 1L << 30, 0}, EINVAL, 0},
        {"poll(NULL, 0, 0)", SYS_poll, {0, 0, 0}, 0, 0},
        {"ppoll(kernel timeout)", SYS_ppoll, {buf, 0, K1, 0, 8}, EFAULT, 0},
        {"ppoll(tv_nsec -1)", SYS_ppoll, {buf, 0, (long)ts_neg, 0, 8}, EINVAL, 0},
        {"ppoll(kernel sigmask)", SYS_ppoll, {buf, 0, (long)ts_zero, K1, 8}, EFAULT, 0},
        {"ppoll(sigset size 16)", SYS_ppoll, {buf, 0, (long)ts_zero, buf, 16}, EINVAL, 0},
        {"select(-1)", SYS_select, {-1, 0, 0, 0, (long)ts_zero}, EINVAL, 0},
        {"select(1, kernel set)", SYS_select, {1, K1, 0, 0, (long)ts_zero}, EFAULT, 0},
        {"select(INT_MAX, no sets, zero timeout)", SYS_select, {INT_MAX, 0, 0, 0, (long)ts_zero}, 0, 0},
        {"select(kernel timeout)", SYS_select, {0, 0, 0, 0, K1}, EFAULT, 0},
        {"select(tv_sec -1)", SYS_select, {0, 0, 0, 0, (long)ts_negsec}, EINVAL, 0},
        {"pselect6(-1)", SYS_pselect6, {-1, 0, 0, 0, (long)ts_zero, 0}, EINVAL, 0},
        {"pselect6(tv_nsec -1)", SYS_pselect6, {0, 0, 0, 0, (long)ts_neg, 0}, EINVAL, 0},
        {"pselect6(kernel sigmask struct)", SYS_pselect6, {0, 0, 0, 0, (long)ts_zero, K1}, EFAULT, 0},
        {"pselect6(sigset size 4)", SYS_pselect6, {0, 0, 0, 0, (long)ts_zero, (long)sigarg}, EINVAL, 0},
        {"memfd_create(\"\", MFD_CLOEXEC)", SYS_memfd_create, {(long)"", MFD_CLOEXEC}, 0, CLOSE_RET},
    };
    RUN(rows);
}

static void path_calls(void)
{
    static char argv_bad[16], *argv0[] = {NULL}, *argv_kernel[] = {(char *)K1, NULL};
    (void)argv_bad;
    static long ts_badnsec[4] = {0, 1000000000L, 0, 0}, ts_omit[4] = {0, (1L << 30) - 2, 0, (1L << 30) - 2};
    const long L = (long)longname, P = (long)longpath, PM = (long)pathmax;
    const struct row rows[] = {
        {"open(NULL)", SYS_open, {0, O_RDONLY}, EFAULT, 0},
        {"open(kernel 0xffff8...)", SYS_open, {K1, O_RDONLY}, EFAULT, 0},
        {"open(kernel 0xffffffff8...)", SYS_open, {K2, O_RDONLY}, EFAULT, 0},
        {"open(non-canonical)", SYS_open, {NONCANON, O_RDONLY}, EFAULT, 0},
        {"open(unmapped)", SYS_open, {unmapped, O_RDONLY}, EFAULT, 0},
        {"open(name running into a hole)", SYS_open, {straddle8, O_RDONLY}, EFAULT, 0},
        {"open(\"\")", SYS_open, {(long)"", O_RDONLY}, ENOENT, 0},
        {"open(PATH_MAX+1 bytes)", SYS_open, {P, O_RDONLY}, ENAMETOOLONG, 0},
        {"open(PATH_MAX bytes)", SYS_open, {PM, O_RDONLY}, ENAMETOOLONG, 0},
        {"open(PATH_MAX-1 bytes of ./././f)", SYS_open, {(long)okpath, O_RDONLY}, 0, CLOSE_RET},
        {"open(NAME_MAX+1 component)", SYS_open, {L, O_RDONLY}, ENAMETOOLONG, 0},
        {"open(NAME_MAX+1 component, O_CREAT)", SYS_open, {L, O_CREAT | O_WRONLY, 0644}, ENAMETOOLONG, 0},
        {"open(NAME_MAX component, missing)", SYS_open, {(long)name255, O_RDONLY}, ENOENT, 0},
        {"open(missing)", SYS_open, {(long)"nope", O_RDONLY}, ENOENT, 0},
        {"open(missing/x)", SYS_open, {(long)"nope/x", O_RDONLY}, ENOENT, 0},
        {"open(file/x)", SYS_open, {(long)"f/x", O_RDONLY}, ENOTDIR, 0},
        {"open(file/)", SYS_open, {(long)"f/", O_RDONLY}, ENOTDIR, 0},
        {"open(file, O_DIRECTORY)", SYS_open, {(long)"f", O_RDONLY | O_DIRECTORY}, ENOTDIR, 0},
        {"open(dir, O_WRONLY)", SYS_open, {(long)"d", O_WRONLY}, EISDIR, 0},
        {"open(dir, O_RDWR)", SYS_open, {(long)"d", O_RDWR}, EISDIR, 0},
        {"open(dir, O_CREAT)", SYS_open, {(long)"d", O_RDONLY | O_CREAT, 0644}, EISDIR, 0},
        {"open(dir, O_TRUNC)", SYS_open, {(long)"d", O_RDONLY | O_TRUNC}, EISDIR, 0},
        {"open(file, O_CREAT|O_EXCL)", SYS_open, {(long)"f", O_CREAT | O_EXCL | O_RDWR, 0644}, EEXIST, 0},
        {"open(dangling symlink, O_CREAT|O_EXCL)", SYS_open, {(long)"dl", O_CREAT | O_EXCL | O_RDWR, 0644}, EEXIST, 0},
        {"open(symlink, O_NOFOLLOW)", SYS_open, {(long)"l", O_RDONLY | O_NOFOLLOW}, ELOOP, 0},
        {"open(symlink loop)", SYS_open, {(long)"la", O_RDONLY}, ELOOP, 0},
        {"open(file, an unknown bit)", SYS_open, {(long)"f", O_RDONLY | 0x80000000L}, 0, CLOSE_RET},
        {"open(file, access mode 3)", SYS_open, {(long)"f", 3}, 0, CLOSE_RET},
        {"openat(-1, \"f\")", SYS_openat, {-1, (long)"f", O_RDONLY}, EBADF, 0},
        {"openat(1000000, \"f\")", SYS_openat, {1000000, (long)"f", O_RDONLY}, EBADF, 0},
        {"openat(closed fd, \"f\")", SYS_openat, {closed_fd, (long)"f", O_RDONLY}, EBADF, 0},
        {"openat(file, \"x\")", SYS_openat, {file, (long)"x", O_RDONLY}, ENOTDIR, 0},
        {"openat(pipe, \"x\")", SYS_openat, {pipe_r, (long)"x", O_RDONLY}, ENOTDIR, 0},
        {"openat(dir, \"\")", SYS_openat, {dir, (long)"", O_RDONLY}, ENOENT, 0},
        {"openat(dir, NULL)", SYS_openat, {dir, 0, O_RDONLY}, EFAULT, 0},
        {"openat(-1, \"/\"): absolute", SYS_openat, {-1, (long)"/", O_RDONLY}, 0, CLOSE_RET},
        {"creat(NULL)", SYS_creat, {0, 0644}, EFAULT, 0},
        {"creat(dir)", SYS_creat, {(long)"d", 0644}, EISDIR, 0},
        {"creat(missing/x)", SYS_creat, {(long)"nope/x", 0644}, ENOENT, 0},
        {"creat(\"\")", SYS_creat, {(long)"", 0644}, ENOENT, 0},
        {"creat(NAME_MAX+1)", SYS_creat, {L, 0644}, ENAMETOOLONG, 0},
        {"stat(NULL, buf)", SYS_stat, {0, buf}, EFAULT, 0},
        {"stat(kernel, buf)", SYS_stat, {K1, buf}, EFAULT, 0},
        {"stat(\"f\", NULL)", SYS_stat, {(long)"f", 0}, EFAULT, 0},
        {"stat(\"f\", kernel)", SYS_stat, {(long)"f", K2}, EFAULT, 0},
        {"stat(\"f\", straddling buffer)", SYS_stat, {(long)"f", straddle8}, EFAULT, 0},
        {"stat(\"\")", SYS_stat, {(long)"", buf}, ENOENT, 0},
        {"stat(PATH_MAX+1)", SYS_stat, {P, buf}, ENAMETOOLONG, 0},
        {"stat(NAME_MAX+1)", SYS_stat, {L, buf}, ENAMETOOLONG, 0},
        {"stat(file/)", SYS_stat, {(long)"f/", buf}, ENOTDIR, 0},
        {"stat(dangling symlink)", SYS_stat, {(long)"dl", buf}, ENOENT, 0},
        {"stat(symlink loop)", SYS_stat, {(long)"la", buf}, ELOOP, 0},
        {"lstat(dangling symlink)", SYS_lstat, {(long)"dl", buf}, 0, 0},
        {"lstat(NULL)", SYS_lstat, {0, buf}, EFAULT, 0},
        {"lstat(\"f\", NULL)", SYS_lstat, {(long)"f", 0}, EFAULT, 0},
        {"lstat(\"\")", SYS_lstat, {(long)"", buf}, ENOENT, 0},
        {"newfstatat(all flag bits)", SYS_newfstatat, {AT_FDCWD, (long)"f", buf, -1}, EINVAL, 0},
        {"newfstatat(an unknown flag)", SYS_newfstatat, {AT_FDCWD, (long)"f", buf, 1}, EINVAL, 0},
        {"newfstatat(file, \"\", AT_EMPTY_PATH)", SYS_newfstatat, {file, (long)"", buf, AT_EMPTY_PATH}, 0, 0},
        {"newfstatat(pipe, \"\", AT_EMPTY_PATH)", SYS_newfstatat, {pipe_r, (long)"", buf, AT_EMPTY_PATH}, 0, 0},
        {"newfstatat(file, \"\", 0)", SYS_newfstatat, {file, (long)"", buf, 0}, ENOENT, 0},
        {"newfstatat(-1, \"f\")", SYS_newfstatat, {-1, (long)"f", buf, 0}, EBADF, 0},
        {"newfstatat(-1, \"\", AT_EMPTY_PATH)", SYS_newfstatat, {-1, (long)"", buf, AT_EMPTY_PATH}, EBADF, 0},
        {"newfstatat(file, \"x\")", SYS_newfstatat, {file, (long)"x", buf, 0}, ENOTDIR, 0},
        {"newfstatat(\"f\", NULL buf)", SYS_newfstatat, {AT_FDCWD, (long)"f", 0, 0}, EFAULT, 0},
        {"statx(all flag bits)", SYS_statx, {AT_FDCWD, (long)"f", -1, STATX_BASIC_STATS, buf}, EINVAL, 0},
        {"statx(FORCE_SYNC|DONT_SYNC)", SYS_statx, {AT_FDCWD, (long)"f", AT_STATX_SYNC_TYPE, STATX_BASIC_STATS, buf}, EINVAL, 0},
        {"statx(STATX__RESERVED mask)", SYS_statx, {AT_FDCWD, (long)"f", 0, STATX__RESERVED, buf}, EINVAL, 0},
        {"statx(NULL buf)", SYS_statx, {AT_FDCWD, (long)"f", 0, STATX_BASIC_STATS, 0}, EFAULT, 0},
        {"statx(kernel buf)", SYS_statx, {AT_FDCWD, (long)"f", 0, STATX_BASIC_STATS, K1}, EFAULT, 0},
        {"statx(NULL path)", SYS_statx, {AT_FDCWD, 0, 0, STATX_BASIC_STATS, buf}, EFAULT, 0},
        {"statx(\"\")", SYS_statx, {AT_FDCWD, (long)"", 0, STATX_BASIC_STATS, buf}, ENOENT, 0},
        {"statx(-1, \"f\")", SYS_statx, {-1, (long)"f", 0, STATX_BASIC_STATS, buf}, EBADF, 0},
        {"statx(file, \"\", AT_EMPTY_PATH, mask 0)", SYS_statx, {file, (long)"", AT_EMPTY_PATH, 0, buf}, 0, 0},
        {"mkdir(NULL)", SYS_mkdir, {0, 0755}, EFAULT, 0},
        {"mkdir(kernel)", SYS_mkdir, {K2, 0755}, EFAULT, 0},
        {"mkdir(file)", SYS_mkdir, {(long)"f", 0755}, EEXIST, 0},
        {"mkdir(dir)", SYS_mkdir, {(long)"d", 0755}, EEXIST, 0},
        {"mkdir(dangling symlink)", SYS_mkdir, {(long)"dl", 0755}, EEXIST, 0},
        {"mkdir(\"\")", SYS_mkdir, {(long)"", 0755}, ENOENT, 0},
        {"mkdir(missing/x)", SYS_mkdir, {(long)"nope/x", 0755}, ENOENT, 0},
        {"mkdir(file/x)", SYS_mkdir, {(long)"f/x", 0755}, ENOTDIR, 0},
        {"mkdir(NAME_MAX+1)", SYS_mkdir, {L, 0755}, ENAMETOOLONG, 0},
        {"mkdir(PATH_MAX+1)", SYS_mkdir, {P, 0755}, ENAMETOOLONG, 0},
        {"mkdir(\".\")", SYS_mkdir, {(long)".", 0755}, EEXIST, 0},
        {"mkdirat(-1, \"x\")", SYS_mkdirat, {-1, (long)"x", 0755}, EBADF, 0},
        {"mkdirat(file, \"x\")", SYS_mkdirat, {file, (long)"x", 0755}, ENOTDIR, 0},
        {"mknod(file, S_IFREG)", SYS_mknod, {(long)"f", S_IFREG | 0644, 0}, EEXIST, 0},
        {"mknod(x, bad type)", SYS_mknod, {(long)"x", 0170000 | 0644, 0}, EINVAL, 0},
        {"mknod(x, S_IFDIR)", SYS_mknod, {(long)"x", S_IFDIR | 0755, 0}, EPERM, 0},
        {"mknod(NULL)", SYS_mknod, {0, S_IFREG | 0644, 0}, EFAULT, 0},
        {"mknod(missing/x)", SYS_mknod, {(long)"nope/x", S_IFREG | 0644, 0}, ENOENT, 0},
        {"mknod(NAME_MAX+1)", SYS_mknod, {L, S_IFREG | 0644, 0}, ENAMETOOLONG, 0},
        {"mknodat(-1, \"x\")", SYS_mknodat, {-1, (long)"x", S_IFREG | 0644, 0}, EBADF, 0},
        {"mknodat(file, \"x\")", SYS_mknodat, {file, (long)"x", S_IFREG | 0644, 0}, ENOTDIR, 0},
        {"unlink(NULL)", SYS_unlink, {0}, EFAULT, 0},
        {"unlink(kernel)", SYS_unlink, {K1}, EFAULT, 0},
        {"unlink(\"\")", SYS_unlink, {(long)""}, ENOENT, 0},
        {"unlink(missing)", SYS_unlink, {(long)"nope"}, ENOENT, 0},
        {"unlink(dir)", SYS_unlink, {(long)"d"}, EISDIR, 0},
        {"unlink(file/)", SYS_unlink, {(long)"f/"}, ENOTDIR, 0},
        {"unlink(NAME_MAX+1)", SYS_unlink, {L}, ENAMETOOLONG, 0},
        {"unlink(PATH_MAX+1)", SYS_unlink, {P}, ENAMETOOLONG, 0},
        {"rmdir(NULL)", SYS_rmdir, {0}, EFAULT, 0},
        {"rmdir(file)", SYS_rmdir, {(long)"f"}, ENOTDIR, 0},
        {"rmdir(symlink to a file)", SYS_rmdir, {(long)"l"}, ENOTDIR, 0},
        {"rmdir(\".\")", SYS_rmdir, {(long)"."}, EINVAL, 0},
        {"rmdir(\"d/.\")", SYS_rmdir, {(long)"d/."}, EINVAL, 0},
        {"rmdir(\"..\")", SYS_rmdir, {(long)".."}, ENOTEMPTY, 0},
        {"rmdir(non-empty)", SYS_rmdir, {(long)"full"}, ENOTEMPTY, 0},
        {"rmdir(missing)", SYS_rmdir, {(long)"nope"}, ENOENT, 0},
        {"rmdir(\"\")", SYS_rmdir, {(long)""}, ENOENT, 0},
        {"rmdir(NAME_MAX+1)", SYS_rmdir, {L}, ENAMETOOLONG, 0},
        {"unlinkat(all flag bits)", SYS_unlinkat, {AT_FDCWD, (long)"f", -1}, EINVAL, 0},
        {"unlinkat(file, AT_REMOVEDIR)", SYS_unlinkat, {AT_FDCWD, (long)"f", AT_REMOVEDIR}, ENOTDIR, 0},
        {"unlinkat(dir, 0)", SYS_unlinkat, {AT_FDCWD, (long)"d", 0}, EISDIR, 0},
        {"unlinkat(-1, \"f\")", SYS_unlinkat, {-1, (long)"f", 0}, EBADF, 0},
        {"unlinkat(file, \"x\")", SYS_unlinkat, {file, (long)"x", 0}, ENOTDIR, 0},
        {"rename(NULL, \"x\")", SYS_rename, {0, (long)"x"}, EFAULT, 0},
        {"rename(\"f\", NULL)", SYS_rename, {(long)"f", 0}, EFAULT, 0},
        {"rename(\"f\", kernel)", SYS_rename, {(long)"f", K1}, EFAULT, 0},
        {"rename(missing, \"x\")", SYS_rename, {(long)"nope", (long)"x"}, ENOENT, 0},
        {"rename(\"\", \"x\")", SYS_rename, {(long)"", (long)"x"}, ENOENT, 0},
        {"rename(\"f\", \"\")", SYS_rename, {(long)"f", (long)""}, ENOENT, 0},
        {"rename(\"f\", missing/x)", SYS_rename, {(long)"f", (long)"nope/x"}, ENOENT, 0},
        {"rename(dir, its own subdir)", SYS_rename, {(long)"d", (long)"d/sub"}, EINVAL, 0},
        {"rename(file, dir)", SYS_rename, {(long)"f", (long)"d"}, EISDIR, 0},
        {"rename(dir, file)", SYS_rename, {(long)"d", (long)"f"}, ENOTDIR, 0},
        {"rename(dir, non-empty dir)", SYS_rename, {(long)"d", (long)"full"}, ENOTEMPTY, 0},
        {"rename(\".\", \"x\")", SYS_rename, {(long)".", (long)"x"}, EBUSY, 0},
        {"rename(\"f\", \".\")", SYS_rename, {(long)"f", (long)"."}, EBUSY, 0},
        {"rename(\"f\", NAME_MAX+1)", SYS_rename, {(long)"f", L}, ENAMETOOLONG, 0},
        {"rename(\"f\", \"f\"): nothing to do", SYS_rename, {(long)"f", (long)"f"}, 0, 0},
        {"renameat(-1, \"f\", ...)", SYS_renameat, {-1, (long)"f", AT_FDCWD, (long)"x"}, EBADF, 0},
        {"renameat(..., -1, \"x\")", SYS_renameat, {AT_FDCWD, (long)"f", -1, (long)"x"}, EBADF, 0},
        {"renameat(file, \"x\", ...)", SYS_renameat, {file, (long)"x", AT_FDCWD, (long)"y"}, ENOTDIR, 0},
        {"renameat2(all flag bits)", SYS_renameat2, {AT_FDCWD, (long)"f", AT_FDCWD, (long)"x", -1}, EINVAL, 0},
        {"renameat2(an unknown flag)", SYS_renameat2, {AT_FDCWD, (long)"f", AT_FDCWD, (long)"x", 8}, EINVAL, 0},
        {"renameat2(NOREPLACE|EXCHANGE)", SYS_renameat2, {AT_FDCWD, (long)"f", AT_FDCWD, (long)"l", RENAME_NOREPLACE | RENAME_EXCHANGE}, EINVAL, 0},
        {"renameat2(NOREPLACE onto a name)", SYS_renameat2, {AT_FDCWD, (long)"f", AT_FDCWD, (long)"l", RENAME_NOREPLACE}, EEXIST, 0},
        {"renameat2(EXCHANGE with a missing name)", SYS_renameat2, {AT_FDCWD, (long)"f", AT_FDCWD, (long)"nope", RENAME_EXCHANGE}, ENOENT, 0},
        {"renameat2(EXCHANGE from a missing name)", SYS_renameat2, {AT_FDCWD, (long)"nope", AT_FDCWD, (long)"f", RENAME_EXCHANGE}, ENOENT, 0},
        {"renameat2(EXCHANGE of a file with a trailing slash)", SYS_renameat2, {AT_FDCWD, (long)"f", AT_FDCWD, (long)"l/", RENAME_EXCHANGE}, ENOTDIR, 0},
        {"renameat2(EXCHANGE of a dir with its child)", SYS_renameat2, {AT_FDCWD, (long)"full", AT_FDCWD, (long)"full/x", RENAME_EXCHANGE}, EINVAL, 0},
        {"renameat2(EXCHANGE of \".\")", SYS_renameat2, {AT_FDCWD, (long)".", AT_FDCWD, (long)"f", RENAME_EXCHANGE}, EBUSY, 0},
        {"link(dir, \"x\")", SYS_link, {(long)"d", (long)"x"}, EPERM, 0},
        {"link(\"f\", existing)", SYS_link, {(long)"f", (long)"l"}, EEXIST, 0},
        {"link(missing, \"x\")", SYS_link, {(long)"nope", (long)"x"}, ENOENT, 0},
        {"link(NULL, \"x\")", SYS_link, {0, (long)"x"}, EFAULT, 0},
        {"link(\"f\", NULL)", SYS_link, {(long)"f", 0}, EFAULT, 0},
        {"link(\"f\", \"\")", SYS_link, {(long)"f", (long)""}, ENOENT, 0},
        {"link(\"\", \"x\")", SYS_link, {(long)"", (long)"x"}, ENOENT, 0},
        {"link(\"f\", missing/x)", SYS_link, {(long)"f", (long)"nope/x"}, ENOENT, 0},
        {"link(\"f\", NAME_MAX+1)", SYS_link, {(long)"f", L}, ENAMETOOLONG, 0},
        {"linkat(all flag bits)", SYS_linkat, {AT_FDCWD, (long)"f", AT_FDCWD, (long)"x", -1}, EINVAL, 0},
        {"linkat(-1, \"f\", ...)", SYS_linkat, {-1, (long)"f", AT_FDCWD, (long)"x", 0}, EBADF, 0},
        {"linkat(file, \"\", ..., 0)", SYS_linkat, {file, (long)"", AT_FDCWD, (long)"x", 0}, ENOENT, 0},
        {"symlink(\"x\", existing)", SYS_symlink, {(long)"x", (long)"f"}, EEXIST, 0},
        {"symlink(NULL, \"x\")", SYS_symlink, {0, (long)"x"}, EFAULT, 0},
        {"symlink(\"x\", NULL)", SYS_symlink, {(long)"x", 0}, EFAULT, 0},
        {"symlink(\"\", \"x\")", SYS_symlink, {(long)"", (long)"x"}, ENOENT, 0},
        {"symlink(\"x\", \"\")", SYS_symlink, {(long)"x", (long)""}, ENOENT, 0},
        {"symlink(\"x\", missing/y)", SYS_symlink, {(long)"x", (long)"nope/y"}, ENOENT, 0},
        {"symlink(PATH_MAX+1 target, \"x\")", SYS_symlink, {P, (long)"x"}, ENAMETOOLONG, 0},
        {"symlink(\"x\", NAME_MAX+1)", SYS_symlink, {(long)"x", L}, ENAMETOOLONG, 0},
        {"symlinkat(\"x\", -1, \"y\")", SYS_symlinkat, {(long)"x", -1, (long)"y"}, EBADF, 0},
        {"readlink(file)", SYS_readlink, {(long)"f", buf, 64}, EINVAL, 0},
        {"readlink(symlink, buf, 0)", SYS_readlink, {(long)"l", buf, 0}, EINVAL, 0},
        {"readlink(symlink, buf, -1)", SYS_readlink, {(long)"l", buf, -1}, EINVAL, 0},
        {"readlink(symlink, NULL, 64)", SYS_readlink, {(long)"l", 0, 64}, EFAULT, 0},
        {"readlink(symlink, kernel, 64)", SYS_readlink, {(long)"l", K1, 64}, EFAULT, 0},
        {"readlink(symlink, buf, 1): truncated", SYS_readlink, {(long)"l", buf, 1}, 0, 0},
        {"readlink(missing)", SYS_readlink, {(long)"nope", buf, 64}, ENOENT, 0},
        {"readlink(\"\")", SYS_readlink, {(long)"", buf, 64}, ENOENT, 0},
        {"readlink(NULL)", SYS_readlink, {0, buf, 64}, EFAULT, 0},
        {"readlinkat(-1, \"l\")", SYS_readlinkat, {-1, (long)"l", buf, 64}, EBADF, 0},
        {"readlinkat(file, \"\")", SYS_readlinkat, {file, (long)"", buf, 64}, ENOENT, 0},
        {"truncate(dir)", SYS_truncate, {(long)"d", 0}, EISDIR, 0},
        {"truncate(\"f\", -1)", SYS_truncate, {(long)"f", -1}, EINVAL, 0},
        {"truncate(missing)", SYS_truncate, {(long)"nope", 0}, ENOENT, 0},
        {"truncate(NULL)", SYS_truncate, {0, 0}, EFAULT, 0},
        {"truncate(\"\")", SYS_truncate, {(long)"", 0}, ENOENT, 0},
        {"truncate(file/)", SYS_truncate, {(long)"f/", 0}, ENOTDIR, 0},
        {"chdir(file)", SYS_chdir, {(long)"f"}, ENOTDIR, 0},
        {"chdir(NULL)", SYS_chdir, {0}, EFAULT, 0},
        {"chdir(\"\")", SYS_chdir, {(long)""}, ENOENT, 0},
        {"chdir(missing)", SYS_chdir, {(long)"nope"}, ENOENT, 0},
        {"chdir(NAME_MAX+1)", SYS_chdir, {L}, ENAMETOOLONG, 0},
        {"chdir(PATH_MAX+1)", SYS_chdir, {P}, ENAMETOOLONG, 0},
        {"getcwd(buf, 0)", SYS_getcwd, {buf, 0}, ERANGE, 0},
        {"getcwd(buf, 1)", SYS_getcwd, {buf, 1}, ERANGE, 0},
        {"getcwd(NULL, 4096)", SYS_getcwd, {0, 4096}, EFAULT, 0},
        {"getcwd(kernel, 4096)", SYS_getcwd, {K1, 4096}, EFAULT, 0},
        {"getcwd(straddling buffer, 4096)", SYS_getcwd, {straddle8, 4096}, EFAULT, 0},
        {"getcwd(buf, SIZE_MAX)", SYS_getcwd, {buf, -1}, 0, 0},
        {"access(\"f\", all mode bits)", SYS_access, {(long)"f", -1}, EINVAL, 0},
        {"access(\"f\", 8)", SYS_access, {(long)"f", 8}, EINVAL, 0},
        {"access(missing)", SYS_access, {(long)"nope", 0}, ENOENT, 0},
        {"access(NULL)", SYS_access, {0, 0}, EFAULT, 0},
        {"access(\"\")", SYS_access, {(long)"", 0}, ENOENT, 0},
        {"faccessat(\"f\", F_OK, flags ignored)", SYS_faccessat, {AT_FDCWD, (long)"f", 0, -1}, 0, 0},
        {"faccessat(-1, \"f\")", SYS_faccessat, {-1, (long)"f", 0}, EBADF, 0},
        {"faccessat(\"f\", mode 8)", SYS_faccessat, {AT_FDCWD, (long)"f", 8}, EINVAL, 0},
        {"faccessat2(all flag bits)", SYS_faccessat2, {AT_FDCWD, (long)"f", 0, -1}, EINVAL, 0},
        {"faccessat2(\"f\", mode 8)", SYS_faccessat2, {AT_FDCWD, (long)"f", 8, 0}, EINVAL, 0},
        {"faccessat2(file, \"\", AT_EMPTY_PATH)", SYS_faccessat2, {file, (long)"", 0, AT_EMPTY_PATH}, 0, 0},
        {"faccessat2(file, \"\", 0)", SYS_faccessat2, {file, (long)"", 0, 0}, ENOENT, 0},
        {"utimensat(all flag bits)", SYS_utimensat, {AT_FDCWD, (long)"f", 0, -1}, EINVAL, 0},
        {"utimensat(tv_nsec 1e9)", SYS_utimensat, {AT_FDCWD, (long)"f", (long)ts_badnsec, 0}, EINVAL, 0},
        {"utimensat(kernel times)", SYS_utimensat, {AT_FDCWD, (long)"f", K1, 0}, EFAULT, 0},
        {"utimensat(UTIME_OMIT twice)", SYS_utimensat, {AT_FDCWD, (long)"f", (long)ts_omit, 0}, 0, 0},
        {"utimensat(missing)", SYS_utimensat, {AT_FDCWD, (long)"nope", 0, 0}, ENOENT, 0},
        {"utimensat(\"\")", SYS_utimensat, {AT_FDCWD, (long)"", 0, 0}, ENOENT, 0},
        {"utimensat(file, NULL path)", SYS_utimensat, {file, 0, 0, 0}, 0, 0},
        {"utimensat(file, NULL path, AT_SYMLINK_NOFOLLOW)", SYS_utimensat, {file, 0, 0, AT_SYMLINK_NOFOLLOW}, EINVAL, 0},
        {"utimensat(-1, NULL path)", SYS_utimensat, {-1, 0, 0, 0}, EBADF, 0},
        {"chmod(NULL)", SYS_chmod, {0, 0644}, EFAULT, 0},
        {"chmod(missing)", SYS_chmod, {(long)"nope", 0644}, ENOENT, 0},
        {"chmod(\"\")", SYS_chmod, {(long)"", 0644}, ENOENT, 0},
        {"fchmodat(\"f\", flags ignored)", SYS_fchmodat, {AT_FDCWD, (long)"f", 0644, -1}, 0, 0},
        {"fchmodat(-1, \"f\")", SYS_fchmodat, {-1, (long)"f", 0644}, EBADF, 0},
        {"execve(NULL)", SYS_execve, {0, (long)argv0, 0}, EFAULT, 0},
        {"execve(kernel)", SYS_execve, {K1, (long)argv0, 0}, EFAULT, 0},
        {"execve(\"\")", SYS_execve, {(long)"", (long)argv0, 0}, ENOENT, 0},
        {"execve(missing)", SYS_execve, {(long)"nope", (long)argv0, 0}, ENOENT, 0},
        {"execve(dir)", SYS_execve, {(long)"d", (long)argv0, 0}, EACCES, 0},
        {"execve(file without x bits)", SYS_execve, {(long)"f", (long)argv0, 0}, EACCES, 0},
        {"execve(not an executable)", SYS_execve, {(long)"junk", (long)argv0, 0}, ENOEXEC, 0},
        {"execve(junk, kernel argv)", SYS_execve, {(long)"junk", K1, 0}, EFAULT, 0},
        {"execve(junk, argv with a kernel string)", SYS_execve, {(long)"junk", (long)argv_kernel, 0}, EFAULT, 0},
        {"execve(junk, argv0, kernel envp)", SYS_execve, {(long)"junk", (long)argv0, K1}, EFAULT, 0},
        {"execve(PATH_MAX+1)", SYS_execve, {P, (long)argv0, 0}, ENAMETOOLONG, 0},
        {"execve(NAME_MAX+1)", SYS_execve, {L, (long)argv0, 0}, ENAMETOOLONG, 0},
    };
    RUN(rows);
}

static void memory_calls(void)
{
    static int word = 1;
    static long ts_bad[2] = {0, -1}, ts_zero[2] = {0, 0};
    long page = (long)mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    const long RW = PROT_READ | PROT_WRITE, PA = MAP_PRIVATE | MAP_ANONYMOUS, W = (long)&word;
    const struct row rows[] = {
        {"brk(0)", SYS_brk, {0}, 0, 0},
        {"brk(kernel): the old break", SYS_brk, {K1}, 0, 0},
        {"brk(1): the old break", SYS_brk, {1}, 0, 0},
        {"mmap(length 0)", SYS_mmap, {0, 0, RW, PA, -1, 0}, EINVAL, 0},
        {"mmap(neither shared nor private)", SYS_mmap, {0, 4096, RW, MAP_ANONYMOUS, -1, 0}, EINVAL, 0},
        {"mmap(-1, not anonymous)", SYS_mmap, {0, 4096, RW, MAP_PRIVATE, -1, 0}, EBADF, 0},
        {"mmap(closed fd)", SYS_mmap, {0, 4096, RW, MAP_PRIVATE, closed_fd, 0}, EBADF, 0},
        {"mmap(pipe)", SYS_mmap, {0, 4096, RW, MAP_PRIVATE, pipe_r, 0}, ENODEV, 0},
        {"mmap(directory)", SYS_mmap, {0, 4096, PROT_READ, MAP_PRIVATE, dir, 0}, ENODEV, 0},
        {"mmap(read-only fd, shared, writable)", SYS_mmap, {0, 4096, RW, MAP_SHARED, rdonly, 0}, EACCES, 0},
        {"mmap(write-only fd)", SYS_mmap, {0, 4096, PROT_READ, MAP_PRIVATE, wronly, 0}, EACCES, 0},
        {"mmap(file, offset 1)", SYS_mmap, {0, 4096, PROT_READ, MAP_PRIVATE, file, 1}, EINVAL, 0},
        {"mmap(anonymous, offset 1)", SYS_mmap, {0, 4096, RW, PA, -1, 1}, EINVAL, 0},
        {"mmap(MAP_FIXED at address 1)", SYS_mmap, {1, 4096, RW, PA | MAP_FIXED, -1, 0}, EINVAL, 0},
        {"mmap(MAP_FIXED in the kernel)", SYS_mmap, {K1, 4096, RW, PA | MAP_FIXED, -1, 0}, ENOMEM, 0},
        {"mmap(MAP_FIXED at the end of user space)", SYS_mmap, {0x7ffffffff000L, 8192, RW, PA | MAP_FIXED, -1, 0}, ENOMEM, 0},
        {"mmap(length SIZE_MAX)", SYS_mmap, {0, -1, RW, PA, -1, 0}, ENOMEM, 0},
        {"mmap(length 2^47)", SYS_mmap, {0, 1L << 47, RW, PA, -1, 0}, ENOMEM, 0},
        {"mmap(file, offset -4096)", SYS_mmap, {0, 4096, PROT_READ, MAP_PRIVATE, file, -4096}, EOVERFLOW, 0},
        {"mmap(anonymous, MAP_SHARED_VALIDATE)", SYS_mmap, {0, 4096, RW, MAP_SHARED_VALIDATE | MAP_ANONYMOUS, -1, 0}, EINVAL, 0},
        {"mmap(file, MAP_SHARED_VALIDATE, unknown flag)", SYS_mmap, {0, 4096, PROT_READ, MAP_SHARED_VALIDATE | 0x800000, file, 0}, EOPNOTSUPP, 0},
        {"mmap(an unknown flag bit)", SYS_mmap, {0, 4096, RW, PA | 0x800000, -1, 0}, 0, UNMAP_RET},
        {"mmap(MAP_STACK)", SYS_mmap, {0, 4096, RW, PA | 0x20000, -1, 0}, 0, UNMAP_RET},
        {"mmap(file, offset 2^62, 4 GiB): fine", SYS_mmap, {0, 1L << 32, PROT_READ, MAP_PRIVATE, file, 1L << 62}, 0, UNMAP_RET},
        {"mmap(file, offset 2^63-4096, 8 KiB)", SYS_mmap, {0, 8192, PROT_READ, MAP_PRIVATE, file, LONG_MAX - 4095}, EOVERFLOW, 0},
        {"mmap(kernel hint): placed elsewhere", SYS_mmap, {K1, 4096, RW, PA, -1, 0}, 0, UNMAP_RET},
        {"munmap(address 1)", SYS_munmap, {1, 4096}, EINVAL, 0},
        {"munmap(length 0)", SYS_munmap, {page, 0}, EINVAL, 0},
        {"munmap(kernel)", SYS_munmap, {K1, 4096}, EINVAL, 0},
        {"munmap(length SIZE_MAX)", SYS_munmap, {page, -1}, EINVAL, 0},
        {"munmap(unmapped): nothing to do", SYS_munmap, {unmapped, 4096}, 0, 0},
        {"mprotect(address 1)", SYS_mprotect, {1, 4096, PROT_READ}, EINVAL, 0},
        {"mprotect(unmapped)", SYS_mprotect, {unmapped, 4096, PROT_READ}, ENOMEM, 0},
        {"mprotect(all prot bits)", SYS_mprotect, {page, 4096, -1}, EINVAL, 0},
        {"mprotect(kernel)", SYS_mprotect, {K1, 4096, PROT_READ}, ENOMEM, 0},
        {"mprotect(length 0)", SYS_mprotect, {page, 0, PROT_READ}, 0, 0},
        {"mprotect(length SIZE_MAX)", SYS_mprotect, {page, -1, PROT_READ}, ENOMEM, 0},
        {"madvise(address 1)", SYS_madvise, {1, 4096, MADV_DONTNEED}, EINVAL, 0},
        {"madvise(advice 9999)", SYS_madvise, {page, 4096, 9999}, EINVAL, 0},
        {"madvise(advice -1)", SYS_madvise, {page, 4096, -1}, EINVAL, 0},
        {"madvise(unmapped)", SYS_madvise, {unmapped, 4096, MADV_NORMAL}, ENOMEM, 0},
        {"madvise(length 0)", SYS_madvise, {page, 0, MADV_DONTNEED}, 0, 0},
        {"madvise(length SIZE_MAX)", SYS_madvise, {page, -1, MADV_DONTNEED}, EINVAL, 0},
        {"futex(NULL, WAIT)", SYS_futex, {0, FUTEX_WAIT, 1, 0}, EFAULT, 0},
        {"futex(kernel, WAIT)", SYS_futex, {K1, FUTEX_WAIT, 1, 0}, EFAULT, 0},
        {"futex(unmapped, WAIT)", SYS_futex, {unmapped, FUTEX_WAIT, 1, 0}, EFAULT, 0},
        {"futex(misaligned, WAIT)", SYS_futex, {W + 1, FUTEX_WAIT, 1, 0}, EINVAL, 0},
        {"futex(misaligned, WAKE)", SYS_futex, {W + 2, FUTEX_WAKE, 1}, EINVAL, 0},
        {"futex(misaligned, WAKE|PRIVATE)", SYS_futex, {W + 3, FUTEX_WAKE | FUTEX_PRIVATE, 1}, EINVAL, 0},
        {"futex(op 9999)", SYS_futex, {W, 9999, 0}, ENOSYS, 0},
        {"futex(WAKE|CLOCK_REALTIME)", SYS_futex, {W, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1}, ENOSYS, 0},
        {"futex(WAIT, value differs)", SYS_futex, {W, FUTEX_WAIT, 0, 0}, EAGAIN, 0},
        {"futex(WAIT, tv_nsec -1)", SYS_futex, {W, FUTEX_WAIT, 1, (long)ts_bad}, EINVAL, 0},
        {"futex(WAIT, kernel timeout)", SYS_futex, {W, FUTEX_WAIT, 1, K1}, EFAULT, 0},
        {"futex(WAIT, zero timeout)", SYS_futex, {W, FUTEX_WAIT | FUTEX_PRIVATE, 1, (long)ts_zero}, ETIMEDOUT, 0},
        {"futex(WAIT_BITSET, bitset 0)", SYS_futex, {W, FUTEX_WAIT_BITSET, 1, 0, 0, 0}, EINVAL, 0},
        {"futex(WAKE, -1 waiters)", SYS_futex, {W, FUTEX_WAKE, -1}, 0, 0},
        {"futex(unmapped, WAKE|PRIVATE): no waiters", SYS_futex, {unmapped, FUTEX_WAKE | FUTEX_PRIVATE, 1}, 0, 0},
        {"futex(NULL, WAKE)", SYS_futex, {0, FUTEX_WAKE, 1}, EFAULT, 0},
    };
    RUN(rows);
    munmap((void *)page, 4096);
}

static void process_calls(void)
{
    static long rl_inverted[2] = {100, 10}, rl[2];
    static unsigned long zero_mask, mask;
    const long pid = getpid(), tid = raw6(SYS_gettid, 0, 0, 0, 0, 0, 0);
    const long G = 0x5a5a5a5a5a5aL; // garbage for calls without arguments
    const struct row rows[] = {
        {"wait4(-1) without children", SYS_wait4, {-1, buf, 0, 0}, ECHILD, 0},
        {"wait4(all option bits)", SYS_wait4, {-1, buf, -1, 0}, EINVAL, 0},
        {"wait4(INT_MAX)", SYS_wait4, {INT_MAX, buf, 0, 0}, ECHILD, 0},
        {"wait4(INT_MIN)", SYS_wait4, {INT_MIN, buf, 0, 0}, ESRCH, 0},
        {"waitid(idtype 99)", SYS_waitid, {99, 0, buf, WEXITED, 0}, EINVAL, 0},
        {"waitid(options 0)", SYS_waitid, {P_ALL, 0, buf, 0, 0}, EINVAL, 0},
        {"waitid(all option bits)", SYS_waitid, {P_ALL, 0, buf, -1, 0}, EINVAL, 0},
        {"waitid(P_PID, INT_MAX)", SYS_waitid, {P_PID, INT_MAX, buf, WEXITED, 0}, ECHILD, 0},
        {"waitid(P_PID, -1)", SYS_waitid, {P_PID, -1, buf, WEXITED, 0}, EINVAL, 0},
        {"waitid(P_PGID, -1)", SYS_waitid, {P_PGID, -1, buf, WEXITED, 0}, EINVAL, 0},
        {"waitid(P_ALL) without children", SYS_waitid, {P_ALL, 0, buf, WEXITED, 0}, ECHILD, 0},
        {"getpid(garbage)", SYS_getpid, {G, G, G, G, G, G}, 0, 0},
        {"getppid(garbage)", SYS_getppid, {G, G, G, G, G, G}, 0, 0},
        {"gettid(garbage)", SYS_gettid, {G, G, G, G, G, G}, 0, 0},
        {"getuid(garbage)", SYS_getuid, {G, G, G, G, G, G}, 0, 0},
        {"geteuid(garbage)", SYS_geteuid, {G, G, G, G, G, G}, 0, 0},
        {"getgid(garbage)", SYS_getgid, {G, G, G, G, G, G}, 0, 0},
        {"getegid(garbage)", SYS_getegid, {G, G, G, G, G, G}, 0, 0},
        {"getpgrp(garbage)", SYS_getpgrp, {G, G, G, G, G, G}, 0, 0},
        {"sched_yield(garbage)", SYS_sched_yield, {G, G, G, G, G, G}, 0, 0},
        {"arch_prctl(code 0x9999)", SYS_arch_prctl, {0x9999, 0}, EINVAL, 0},
        {"arch_prctl(SET_FS, kernel)", SYS_arch_prctl, {ARCH_SET_FS, K1}, EPERM, 0},
        {"arch_prctl(SET_FS, non-canonical)", SYS_arch_prctl, {ARCH_SET_FS, NONCANON}, EPERM, 0},
        {"arch_prctl(SET_FS, last user page)", SYS_arch_prctl, {ARCH_SET_FS, 0x7ffffffff000L}, EPERM, 0},
        {"arch_prctl(SET_GS, kernel)", SYS_arch_prctl, {ARCH_SET_GS, K2}, EPERM, 0},
        {"arch_prctl(SET_GS, non-canonical)", SYS_arch_prctl, {ARCH_SET_GS, NONCANON}, EPERM, 0},
        {"arch_prctl(SET_GS, last user page)", SYS_arch_prctl, {ARCH_SET_GS, 0x7ffffffff000L}, EPERM, 0},
        {"arch_prctl(GET_FS, NULL)", SYS_arch_prctl, {ARCH_GET_FS, 0}, EFAULT, 0},
        {"arch_prctl(GET_FS, kernel)", SYS_arch_prctl, {ARCH_GET_FS, K1}, EFAULT, 0},
        {"arch_prctl(GET_GS, NULL)", SYS_arch_prctl, {ARCH_GET_GS, 0}, EFAULT, 0},
        {"arch_prctl(GET_GS, unmapped)", SYS_arch_prctl, {ARCH_GET_GS, unmapped}, EFAULT, 0},
        {"uname(NULL)", SYS_uname, {0}, EFAULT, 0},
        {"uname(kernel)", SYS_uname, {K1}, EFAULT, 0},
        {"uname(straddling buffer)", SYS_uname, {straddle8}, EFAULT, 0},
        {"sysinfo(NULL)", SYS_sysinfo, {0}, EFAULT, 0},
        {"sysinfo(kernel)", SYS_sysinfo, {K1}, EFAULT, 0},
        {"sysinfo(straddling buffer)", SYS_sysinfo, {straddle8}, EFAULT, 0},
        {"getcpu(NULL, NULL)", SYS_getcpu, {0, 0, 0}, 0, 0},
        {"getcpu(kernel, NULL)", SYS_getcpu, {K1, 0, 0}, EFAULT, 0},
        {"getcpu(NULL, kernel)", SYS_getcpu, {0, K1, 0}, EFAULT, 0},
        {"sched_setaffinity(NULL mask)", SYS_sched_setaffinity, {0, 8, 0}, EFAULT, 0},
        {"sched_setaffinity(empty mask)", SYS_sched_setaffinity, {0, 8, (long)&zero_mask}, EINVAL, 0},
        {"sched_setaffinity(length 0)", SYS_sched_setaffinity, {0, 0, (long)&mask}, EINVAL, 0},
        {"sched_setaffinity(INT_MAX)", SYS_sched_setaffinity, {INT_MAX, 8, (long)&mask}, ESRCH, 0},
        {"sched_setaffinity(-1)", SYS_sched_setaffinity, {-1, 8, (long)&mask}, ESRCH, 0},
        {"sched_getaffinity(length 0)", SYS_sched_getaffinity, {0, 0, buf}, EINVAL, 0},
        {"sched_getaffinity(length 3)", SYS_sched_getaffinity, {0, 3, buf}, EINVAL, 0},
        {"sched_getaffinity(NULL)", SYS_sched_getaffinity, {0, 8, 0}, EFAULT, 0},
        {"sched_getaffinity(kernel)", SYS_sched_getaffinity, {0, 8, K1}, EFAULT, 0},
        {"sched_getaffinity(INT_MAX)", SYS_sched_getaffinity, {INT_MAX, 8, buf}, ESRCH, 0},
        {"getrandom(all flag bits)", SYS_getrandom, {buf, 16, -1}, EINVAL, 0},
        {"getrandom(RANDOM|INSECURE)", SYS_getrandom, {buf, 16, GRND_RANDOM | GRND_INSECURE}, EINVAL, 0},
        {"getrandom(NULL, 16)", SYS_getrandom, {0, 16, 0}, EFAULT, 0},
        {"getrandom(kernel, 16)", SYS_getrandom, {K1, 16, 0}, EFAULT, 0},
        {"getrandom(buf, 0)", SYS_getrandom, {buf, 0, 0}, 0, 0},
        {"getrandom(straddling buffer, 16): 8 bytes", SYS_getrandom, {straddle8, 16, 0}, 0, 0},
        {"reboot(bad magic)", SYS_reboot, {0, 0, 0, 0}, EINVAL, 0},
        {"reboot(bad second magic)", SYS_reboot, {REBOOT_MAGIC1, 0, 0, 0}, EINVAL, 0},
        {"reboot(unknown command)", SYS_reboot, {REBOOT_MAGIC1, REBOOT_MAGIC2, 0xdeadbeefL, 0}, EINVAL, 0},
        {"prlimit64(resource 999)", SYS_prlimit64, {0, 999, 0, (long)rl}, EINVAL, 0},
        {"prlimit64(resource -1)", SYS_prlimit64, {0, -1, 0, (long)rl}, EINVAL, 0},
        {"prlimit64(INT_MAX)", SYS_prlimit64, {INT_MAX, RLIMIT_NOFILE, 0, (long)rl}, ESRCH, 0},
        {"prlimit64(kernel new)", SYS_prlimit64, {0, RLIMIT_NOFILE, K1, 0}, EFAULT, 0},
        {"prlimit64(kernel old)", SYS_prlimit64, {0, RLIMIT_NOFILE, 0, K1}, EFAULT, 0},
        {"prlimit64(soft > hard)", SYS_prlimit64, {0, RLIMIT_NOFILE, (long)rl_inverted, 0}, EINVAL, 0},
        {"getrlimit(resource 999)", SYS_getrlimit, {999, (long)rl}, EINVAL, 0},
        {"getrlimit(NULL)", SYS_getrlimit, {RLIMIT_NOFILE, 0}, EFAULT, 0},
        {"setrlimit(resource 999)", SYS_setrlimit, {999, (long)rl}, EINVAL, 0},
        {"setrlimit(NULL)", SYS_setrlimit, {RLIMIT_NOFILE, 0}, EFAULT, 0},
        {"setrlimit(soft > hard)", SYS_setrlimit, {RLIMIT_NOFILE, (long)rl_inverted}, EINVAL, 0},
        {"clone(CLONE_THREAD alone)", SYS_clone, {CLONE_THREAD, 0, 0, 0, 0}, EINVAL, SPAWN},
        {"clone(CLONE_SIGHAND alone)", SYS_clone, {CLONE_SIGHAND, 0, 0, 0, 0}, EINVAL, SPAWN},
        {"clone(CLONE_NEWNS|CLONE_FS)", SYS_clone, {CLONE_NEWNS | CLONE_FS, 0, 0, 0, 0}, EINVAL, SPAWN},
        {"clone(all flag bits)", SYS_clone, {-1, 0, 0, 0, 0}, EINVAL, SPAWN},
        {"clone(exit signal 0xff)", SYS_clone, {0xff, 0, 0, 0, 0}, 0, SPAWN},
        {"fork(garbage)", SYS_fork, {G, G, G, G, G}, 0, SPAWN},
        {"vfork(garbage)", SYS_vfork, {G, G, G, G, G}, 0, SPAWN},
        {"kill(self, signal 1000)", SYS_kill, {pid, 1000}, EINVAL, 0},
        {"kill(self, signal -1)", SYS_kill, {pid, -1}, EINVAL, 0},
        {"kill(self, signal 65)", SYS_kill, {pid, 65}, EINVAL, 0},
        {"kill(INT_MAX, 0)", SYS_kill, {INT_MAX, 0}, ESRCH, 0},
        {"kill(INT_MIN, 0)", SYS_kill, {INT_MIN, 0}, ESRCH, 0},
        {"kill(-INT_MAX, 0)", SYS_kill, {-INT_MAX, 0}, ESRCH, 0},
        {"kill(self, 0)", SYS_kill, {pid, 0}, 0, 0},
        {"tkill(0, 0)", SYS_tkill, {0, 0}, EINVAL, 0},
        {"tkill(-1, 0)", SYS_tkill, {-1, 0}, EINVAL, 0},
        {"tkill(self, signal 1000)", SYS_tkill, {tid, 1000}, EINVAL, 0},
        {"tkill(INT_MAX, 0)", SYS_tkill, {INT_MAX, 0}, ESRCH, 0},
        {"tgkill(0, tid, 0)", SYS_tgkill, {0, tid, 0}, EINVAL, 0},
        {"tgkill(pid, 0, 0)", SYS_tgkill, {pid, 0, 0}, EINVAL, 0},
        {"tgkill(pid, -1, 0)", SYS_tgkill, {pid, -1, 0}, EINVAL, 0},
        {"tgkill(pid, tid, signal 1000)", SYS_tgkill, {pid, tid, 1000}, EINVAL, 0},
        {"tgkill(pid, INT_MAX, 0)", SYS_tgkill, {pid, INT_MAX, 0}, ESRCH, 0},
        {"tgkill(INT_MAX, tid, 0): wrong group", SYS_tgkill, {INT_MAX, tid, 0}, ESRCH, 0},
        {"tgkill(pid, tid, 0)", SYS_tgkill, {pid, tid, 0}, 0, 0},
        {"setpgid(0, -1)", SYS_setpgid, {0, -1}, EINVAL, 0},
        {"setpgid(INT_MAX, 0)", SYS_setpgid, {INT_MAX, 0}, ESRCH, 0},
        {"setpgid(-1, 0)", SYS_setpgid, {-1, 0}, EINVAL, 0},
        {"getpgid(INT_MAX)", SYS_getpgid, {INT_MAX}, ESRCH, 0},
        {"getpgid(-1)", SYS_getpgid, {-1}, ESRCH, 0},
        {"getsid(INT_MAX)", SYS_getsid, {INT_MAX}, ESRCH, 0},
        {"getsid(-1)", SYS_getsid, {-1}, ESRCH, 0},
    };
    raw6(SYS_sched_getaffinity, 0, 8, (long)&mask, 0, 0, 0);
    RUN(rows);
}

static void signal_calls(void)
{
    static unsigned long set = 1UL << (SIGUSR2 - 1);
    static long ts_zero[2] = {0, 0}, ts_bad[2] = {0, 1000000000L};
    static struct {
        long handler, flags, restorer;
        unsigned long mask;
    } act = {0, 0, 0, 0};
    static struct {
        long sp;
        int flags;
        long size;
    } ss_badflags = {0, -1, 1 << 16}, ss_small = {0, 0, 100};
    ss_badflags.sp = ss_small.sp = buf;
    const struct row rows[] = {
        {"rt_sigprocmask(size 4)", SYS_rt_sigprocmask, {SIG_BLOCK, (long)&set, 0, 4}, EINVAL, 0},
        {"rt_sigprocmask(size 16)", SYS_rt_sigprocmask, {SIG_BLOCK, (long)&set, 0, 16}, EINVAL, 0},
        {"rt_sigprocmask(how 99)", SYS_rt_sigprocmask, {99, (long)&set, 0, 8}, EINVAL, 0},
        {"rt_sigprocmask(how 99, no set)", SYS_rt_sigprocmask, {99, 0, buf, 8}, 0, 0},
        {"rt_sigprocmask(kernel set)", SYS_rt_sigprocmask, {SIG_BLOCK, K1, 0, 8}, EFAULT, 0},
        {"rt_sigprocmask(unmapped set)", SYS_rt_sigprocmask, {SIG_BLOCK, unmapped, 0, 8}, EFAULT, 0},
        {"rt_sigprocmask(kernel oldset)", SYS_rt_sigprocmask, {SIG_BLOCK, 0, K1, 8}, EFAULT, 0},
        {"rt_sigprocmask(4 bytes before a hole)", SYS_rt_sigprocmask, {SIG_BLOCK, 0, straddle4, 8}, EFAULT, 0},
        {"rt_sigaction(0)", SYS_rt_sigaction, {0, 0, buf, 8}, EINVAL, 0},
        {"rt_sigaction(65)", SYS_rt_sigaction, {65, 0, buf, 8}, EINVAL, 0},
        {"rt_sigaction(-1)", SYS_rt_sigaction, {-1, 0, buf, 8}, EINVAL, 0},
        {"rt_sigaction(SIGKILL, act)", SYS_rt_sigaction, {SIGKILL, (long)&act, 0, 8}, EINVAL, 0},
        {"rt_sigaction(SIGSTOP, act)", SYS_rt_sigaction, {SIGSTOP, (long)&act, 0, 8}, EINVAL, 0},
        {"rt_sigaction(SIGKILL, NULL, old)", SYS_rt_sigaction, {SIGKILL, 0, buf, 8}, 0, 0},
        {"rt_sigaction(size 4)", SYS_rt_sigaction, {SIGUSR1, 0, buf, 4}, EINVAL, 0},
        {"rt_sigaction(kernel act)", SYS_rt_sigaction, {SIGUSR1, K1, 0, 8}, EFAULT, 0},
        {"rt_sigaction(kernel old)", SYS_rt_sigaction, {SIGUSR1, 0, K1, 8}, EFAULT, 0},
        {"rt_sigaction(unmapped act)", SYS_rt_sigaction, {SIGUSR1, unmapped, 0, 8}, EFAULT, 0},
        {"rt_sigpending(size 16)", SYS_rt_sigpending, {buf, 16}, EINVAL, 0},
        {"rt_sigpending(size 4)", SYS_rt_sigpending, {buf, 4}, 0, 0},
        {"rt_sigpending(NULL)", SYS_rt_sigpending, {0, 8}, EFAULT, 0},
        {"rt_sigpending(kernel)", SYS_rt_sigpending, {K1, 8}, EFAULT, 0},
        {"rt_sigsuspend(size 4)", SYS_rt_sigsuspend, {(long)&set, 4}, EINVAL, 0},
        {"rt_sigsuspend(NULL)", SYS_rt_sigsuspend, {0, 8}, EFAULT, 0},
        {"rt_sigsuspend(kernel)", SYS_rt_sigsuspend, {K1, 8}, EFAULT, 0},
        {"rt_sigtimedwait(size 4)", SYS_rt_sigtimedwait, {(long)&set, 0, (long)ts_zero, 4}, EINVAL, 0},
        {"rt_sigtimedwait(kernel set)", SYS_rt_sigtimedwait, {K1, 0, (long)ts_zero, 8}, EFAULT, 0},
        {"rt_sigtimedwait(tv_nsec 1e9)", SYS_rt_sigtimedwait, {(long)&set, 0, (long)ts_bad, 8}, EINVAL, 0},
        {"rt_sigtimedwait(kernel timeout)", SYS_rt_sigtimedwait, {(long)&set, 0, K1, 8}, EFAULT, 0},
        {"rt_sigtimedwait(zero timeout)", SYS_rt_sigtimedwait, {(long)&set, 0, (long)ts_zero, 8}, EAGAIN, 0},
        {"sigaltstack(kernel new)", SYS_sigaltstack, {K1, 0}, EFAULT, 0},
        {"sigaltstack(NULL, kernel old)", SYS_sigaltstack, {0, K1}, EFAULT, 0},
        {"sigaltstack(all flag bits)", SYS_sigaltstack, {(long)&ss_badflags, 0}, EINVAL, 0},
        {"sigaltstack(100 bytes)", SYS_sigaltstack, {(long)&ss_small, 0}, ENOMEM, 0},
        {"sigaltstack(NULL, NULL)", SYS_sigaltstack, {0, 0}, 0, 0},
    };
    RUN(rows);
}

static void time_calls(void)
{
    static long ts_zero[2] = {0, 0}, ts_neg_nsec[2] = {0, -1}, ts_big_nsec[2] = {0, 1000000000L},
                ts_neg_sec[2] = {-1, 0};
    const struct row rows[] = {
        {"clock_gettime(clock 999)", SYS_clock_gettime, {999, buf}, EINVAL, 0},
        {"clock_gettime(clock -1)", SYS_clock_gettime, {-1, buf}, EINVAL, 0},
        {"clock_gettime(NULL)", SYS_clock_gettime, {CLOCK_MONOTONIC, 0}, EFAULT, 0},
        {"clock_gettime(kernel)", SYS_clock_gettime, {CLOCK_REALTIME, K1}, EFAULT, 0},
        {"clock_gettime(straddling buffer)", SYS_clock_gettime, {CLOCK_MONOTONIC, straddle8}, EFAULT, 0},
        {"gettimeofday(kernel, NULL)", SYS_gettimeofday, {K1, 0}, EFAULT, 0},
        {"gettimeofday(NULL, kernel)", SYS_gettimeofday, {0, K1}, EFAULT, 0},
        {"gettimeofday(NULL, NULL)", SYS_gettimeofday, {0, 0}, 0, 0},
        {"nanosleep(tv_nsec -1)", SYS_nanosleep, {(long)ts_neg_nsec, 0}, EINVAL, 0},
        {"nanosleep(tv_nsec 1e9)", SYS_nanosleep, {(long)ts_big_nsec, 0}, EINVAL, 0},
        {"nanosleep(tv_sec -1)", SYS_nanosleep, {(long)ts_neg_sec, 0}, EINVAL, 0},
        {"nanosleep(NULL)", SYS_nanosleep, {0, 0}, EFAULT, 0},
        {"nanosleep(kernel)", SYS_nanosleep, {K1, 0}, EFAULT, 0},
        {"nanosleep(zero, kernel rem)", SYS_nanosleep, {(long)ts_zero, K1}, 0, 0},
        {"clock_nanosleep(clock 999)", SYS_clock_nanosleep, {999, 0, (long)ts_zero, 0}, EINVAL, 0},
        {"clock_nanosleep(THREAD_CPUTIME)", SYS_clock_nanosleep, {CLOCK_THREAD_CPUTIME_ID, 0, (long)ts_zero, 0}, EOPNOTSUPP, 0},
        {"clock_nanosleep(tv_nsec 1e9)", SYS_clock_nanosleep, {CLOCK_MONOTONIC, 0, (long)ts_big_nsec, 0}, EINVAL, 0},
        {"clock_nanosleep(NULL)", SYS_clock_nanosleep, {CLOCK_MONOTONIC, 0, 0, 0}, EFAULT, 0},
        {"clock_nanosleep(unknown flags)", SYS_clock_nanosleep, {CLOCK_MONOTONIC, ~1L, (long)ts_zero, 0}, 0, 0},
    };
    RUN(rows);
}

// A terminal that is not our controlling one: a pseudo-terminal on Linux, the
// console on ours (which has no pseudo-terminals). -1 if there is none; *m is
// the master to close afterwards (or -1).
static int open_terminal(int *m)
{
    *m = -1;
    if (on_ours)
        return open("/dev/console", O_RDWR | O_NOCTTY);
    int unlock = 0, n;
    *m = open("/dev/ptmx", O_RDWR | O_NOCTTY);
    char path[64];
    if (*m < 0 || ioctl(*m, 0x40045431 /* TIOCSPTLCK */, &unlock) != 0 ||
        ioctl(*m, 0x80045430 /* TIOCGPTN */, &n) != 0)
        return -1;
    snprintf(path, sizeof path, "/dev/pts/%d", n);
    return open(path, O_RDWR | O_NOCTTY);
}

static void terminal_calls(void)
{
    int master, tty = open_terminal(&master);
    if (tty < 0) {
        if (master >= 0)
            close(master);
        check(1, "terminal ioctls # skip: no terminal");
        return;
    }
    const struct row rows[] = {
        {"ioctl(tty, TCGETS, NULL)", SYS_ioctl, {tty, TCGETS, 0}, EFAULT, 0},
        {"ioctl(tty, TCGETS, kernel)", SYS_ioctl, {tty, TCGETS, K1}, EFAULT, 0},
        {"ioctl(tty, TCGETS, straddling buffer)", SYS_ioctl, {tty, TCGETS, straddle8}, EFAULT, 0},
        {"ioctl(tty, TCSETS, kernel)", SYS_ioctl, {tty, TCSETS, K1}, EFAULT, 0},
        {"ioctl(tty, TCSETS, unmapped)", SYS_ioctl, {tty, TCSETS, unmapped}, EFAULT, 0},
        {"ioctl(tty, TIOCGWINSZ, NULL)", SYS_ioctl, {tty, TIOCGWINSZ, 0}, EFAULT, 0},
        {"ioctl(tty, TIOCSWINSZ, kernel)", SYS_ioctl, {tty, TIOCSWINSZ, K2}, EFAULT, 0},
        {"ioctl(tty, FIONREAD, kernel)", SYS_ioctl, {tty, FIONREAD, K1}, EFAULT, 0},
        {"ioctl(tty, unknown request)", SYS_ioctl, {tty, 0x5480, buf}, ENOTTY, 0},
        {"ioctl(tty, TIOCGPGRP): not our terminal", SYS_ioctl, {tty, TIOCGPGRP, buf}, ENOTTY, 0},
        {"ioctl(tty, TIOCSPGRP): not our terminal", SYS_ioctl, {tty, TIOCSPGRP, buf}, ENOTTY, 0},
        {"ioctl(tty, TIOCGSID): not our terminal", SYS_ioctl, {tty, TIOCGSID, buf}, ENOTTY, 0},
        {"ioctl(tty, TIOCNOTTY): not our terminal", SYS_ioctl, {tty, TIOCNOTTY, 0}, ENOTTY, 0},
        {"lseek(tty)", SYS_lseek, {tty, 0, SEEK_SET}, ESPIPE, 0},
        {"pread64(tty)", SYS_pread64, {tty, buf, 1, 0}, ESPIPE, 0},
        {"mmap(tty)", SYS_mmap, {0, 4096, PROT_READ, MAP_SHARED, tty, 0}, ENODEV, 0},
        {"getdents64(tty)", SYS_getdents64, {tty, buf, 4096}, ENOTDIR, 0},
        {"fchdir(tty)", SYS_fchdir, {tty}, ENOTDIR, 0},
    };
    RUN(rows);
    close(tty);
    if (master >= 0)
        close(master);
}

// Our extensions: ENOSYS on Linux; on ours, Linux-style errors for bad input.
static void extension_calls(void)
{
    static int pid;
    static char *argv0[] = {"x", NULL}, *argv_kernel[] = {(char *)K1, NULL};
    const long A = (long)argv0, P = (long)&pid;
    const struct row rows[] = {
        {"posix_spawn(NULL path)", SYS_posix_spawn, {P, 0, 0, 0, A, 0}, ENOSYS, 0, EFAULT},
        {"posix_spawn(kernel path)", SYS_posix_spawn, {P, K1, 0, 0, A, 0}, ENOSYS, 0, EFAULT},
        {"posix_spawn(path running into a hole)", SYS_posix_spawn, {P, straddle8, 0, 0, A, 0}, ENOSYS, 0, EFAULT},
        {"posix_spawn(kernel pid pointer)", SYS_posix_spawn, {K1, (long)"junk", 0, 0, A, 0}, ENOSYS, 0, EFAULT},
        {"posix_spawn(kernel file actions)", SYS_posix_spawn, {P, (long)"junk", K1, 0, A, 0}, ENOSYS, 0, EFAULT},
        {"posix_spawn(kernel attributes)", SYS_posix_spawn, {P, (long)"junk", 0, K1, A, 0}, ENOSYS, 0, EFAULT},
        {"posix_spawn(kernel argv)", SYS_posix_spawn, {P, (long)"junk", 0, 0, K1, 0}, ENOSYS, 0, EFAULT},
        {"posix_spawn(argv with a kernel string)", SYS_posix_spawn, {P, (long)"junk", 0, 0, (long)argv_kernel, 0}, ENOSYS, 0, EFAULT},
        {"posix_spawn(kernel envp)", SYS_posix_spawn, {P, (long)"junk", 0, 0, A, K1}, ENOSYS, 0, EFAULT},
        {"posix_spawn(missing)", SYS_posix_spawn, {P, (long)"nope", 0, 0, A, 0}, ENOSYS, 0, ENOENT},
        {"posix_spawn(\"\")", SYS_posix_spawn, {P, (long)"", 0, 0, A, 0}, ENOSYS, 0, ENOENT},
        {"posix_spawn(directory)", SYS_posix_spawn, {P, (long)"d", 0, 0, A, 0}, ENOSYS, 0, EACCES},
        {"posix_spawn(not an executable)", SYS_posix_spawn, {P, (long)"junk", 0, 0, A, 0}, ENOSYS, 0, ENOEXEC},
        {"posix_spawn(PATH_MAX+1)", SYS_posix_spawn, {P, (long)longpath, 0, 0, A, 0}, ENOSYS, 0, ENAMETOOLONG},
        {"posix_spawn(NAME_MAX+1)", SYS_posix_spawn, {P, (long)longname, 0, 0, A, 0}, ENOSYS, 0, ENAMETOOLONG},
        {"kstats(NULL, 0)", __NR_kstats, {0, 0}, ENOSYS, 0, OURS_OK},
        {"kstats(NULL, 1)", __NR_kstats, {0, 1}, ENOSYS, 0, EFAULT},
        {"kstats(kernel, 1)", __NR_kstats, {K1, 1}, ENOSYS, 0, EFAULT},
        {"kstats(straddling buffer, 1)", __NR_kstats, {straddle8, 1}, ENOSYS, 0, EFAULT},
        {"kstats(buf, 1)", __NR_kstats, {buf, 1}, ENOSYS, 0, OURS_OK},
    };
    RUN(rows);
}

// Calls that end or replace the process, or need a child: in children.
static int child_status(pid_t pid)
{
    int st = -1;
    waitpid(pid, &st, 0);
    return st;
}

static void deadly_calls(void)
{
    pid_t pid = fork();
    if (pid == 0)
        raw6(SYS_exit_group, 0x1234, 0, 0, 0, 0, 0);
    int st = child_status(pid);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0x34, "exit_group(0x1234): status 0x34");
    pid = fork();
    if (pid == 0)
        raw6(SYS_exit, -1, 0, 0, 0, 0, 0);
    st = child_status(pid);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 255, "exit(-1): status 255");

    // rt_sigreturn with the stack pointer in the kernel, or over a frame of
    // garbage: SIGSEGV, never a kernel fault.
    pid = fork();
    if (pid == 0)
        __asm__ volatile("mov %0, %%rsp\n\tmov $15, %%eax\n\tsyscall" ::"r"(K1) : "memory");
    st = child_status(pid);
    check(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "rt_sigreturn(stack in the kernel) -> SIGSEGV");
    for (int fill = 0; fill <= 0xff; fill += 0xff) {
        pid = fork();
        if (pid == 0) {
            memset(bufmem, fill, sizeof bufmem);
            __asm__ volatile("mov %0, %%rsp\n\tmov $15, %%eax\n\tsyscall" ::"r"(bufmem + 8) : "memory");
        }
        st = child_status(pid);
        check(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
              fill ? "rt_sigreturn(frame of 0xff bytes) -> SIGSEGV" : "rt_sigreturn(frame of zeros) -> SIGSEGV");
    }

    // A child that exits with its clear_child_tid in the kernel exits normally.
    pid = fork();
    if (pid == 0) {
        raw6(SYS_set_tid_address, K1, 0, 0, 0, 0, 0);
        raw6(SYS_exit_group, 3, 0, 0, 0, 0, 0);
    }
    st = child_status(pid);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 3, "set_tid_address(kernel), then exit");

    // wait4 and waitid with a bad status pointer: EFAULT, and the child is reaped.
    pid = fork();
    if (pid == 0)
        raw6(SYS_exit_group, 0, 0, 0, 0, 0, 0);
    raw6(SYS_waitid, P_PID, pid, 0, WEXITED | WNOWAIT, 0, 0);
    check(raw6(SYS_wait4, pid, K1, 0, 0, 0, 0) == -EFAULT, "wait4(child, kernel status) -> EFAULT");
    check(raw6(SYS_wait4, pid, 0, WNOHANG, 0, 0, 0) == -ECHILD, "... and the child was reaped");
    pid = fork();
    if (pid == 0)
        raw6(SYS_exit_group, 0, 0, 0, 0, 0, 0);
    raw6(SYS_waitid, P_PID, pid, 0, WEXITED | WNOWAIT, 0, 0);
    check(raw6(SYS_waitid, P_PID, pid, K1, WEXITED, 0, 0) == -EFAULT, "waitid(child, kernel infop) -> EFAULT");
    check(raw6(SYS_wait4, pid, 0, WNOHANG, 0, 0, 0) == -ECHILD, "... and the child was reaped");

    // setsid: a new session's leader may not make another.
    pid = fork();
    if (pid == 0) {
        long a = raw6(SYS_setsid, 0, 0, 0, 0, 0, 0), b = raw6(SYS_setsid, 0, 0, 0, 0, 0, 0);
        raw6(SYS_exit_group, a > 0 && b == -EPERM ? 0 : 1, 0, 0, 0, 0, 0);
    }
    st = child_status(pid);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "setsid twice -> EPERM the second time");
    // setpgid into a group of another session: EPERM.
    pid = fork();
    if (pid == 0) {
        raw6(SYS_setsid, 0, 0, 0, 0, 0, 0);
        long r = raw6(SYS_setpgid, 0, getppid() == 1 ? 1 : raw6(SYS_getpgid, getppid(), 0, 0, 0, 0, 0), 0, 0, 0, 0);
        raw6(SYS_exit_group, r == -EPERM ? 0 : 1, 0, 0, 0, 0, 0);
    }
    st = child_status(pid);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "setpgid into another session's group -> EPERM");
}

// fds the failing calls made must not stay behind.
static void no_leaks(int before)
{
    int fd = dup(0);
    close(fd);
    check(fd == before, "no fd left behind by the failing calls");
}

int main(void)
{
    struct utsname u;
    on_ours = uname(&u) == 0 && strstr(u.release, "scalable");
    if (enter_scratch("badinput") != 0)
        return 1;
    setup();
    int lowest = dup(0);
    close(lowest);
    fd_calls();
    path_calls();
    memory_calls();
    process_calls();
    signal_calls();
    time_calls();
    extension_calls();
    terminal_calls();
    deadly_calls();
    no_leaks(lowest);
    return suite_end();
}
