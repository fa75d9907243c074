// File descriptors: lowest-fd allocation, close, dup/dup2/dup3, fcntl,
// close_range, O_CLOEXEC, shared open file descriptions, and errno on bad fds
// and flags, RLIMIT_NOFILE (EMFILE). Runs in our guest and on the Linux host.
#include "suite.h"
#include <sys/resource.h>
#include <sys/utsname.h>

#define CLOSE_RANGE_CLOEXEC 4 // Linux's value (not in musl's headers)

#ifndef O_ANYFD
#define O_ANYFD 040000000 // our extension (kernel/uapi/ext.h)
#endif

// The lowest fd not open now (probe with F_GETFD).
static int lowest_free(void)
{
    for (int fd = 0;; fd++)
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF)
            return fd;
}

static void lowest_fd(void)
{
    int low = lowest_free();
    int a = open("f", O_RDWR | O_CREAT, 0644), b = open("f", O_RDONLY), c = open("f", O_RDONLY);
    check(a == low && b > a && c > b, "open returns the lowest free fds in order");
    close(b);
    int d = open("f", O_RDONLY);
    check(d == b, "a closed fd is reused first");
    close(a);
    check(dup(c) == a, "dup returns the lowest free fd");
    close(a);
    close(c);
    close(d);
    check(lowest_free() == low, "all closed again");
}

static void close_errors(void)
{
    CHECK_ERR(close(-1), EBADF, "close(-1) is EBADF");
    CHECK_ERR(close(1 << 30), EBADF, "close of a huge fd is EBADF");
    int fd = open("f", O_RDONLY);
    check(close(fd) == 0, "close succeeds");
    CHECK_ERR(close(fd), EBADF, "second close is EBADF");
    CHECK_ERR(read(fd, &fd, 1), EBADF, "read of a closed fd is EBADF");
    CHECK_ERR(fstat(fd, &(struct stat){0}), EBADF, "fstat of a closed fd is EBADF");
}

static void dups(void)
{
    int fd = open("f", O_RDWR);
    check(dup2(fd, 40) == 40, "dup2 to a chosen fd");
    check(fcntl(40, F_GETFD) == 0, "dup2 clears FD_CLOEXEC");
    check(dup2(fd, fd) == fd, "dup2(fd, fd) returns fd");
    CHECK_ERR(dup2(77, 78), EBADF, "dup2 of a closed fd is EBADF");
    CHECK_ERR(dup2(77, 77), EBADF, "dup2(bad, bad) is EBADF");
    CHECK_ERR(dup2(fd, -1), EBADF, "dup2 to -1 is EBADF");
    CHECK_ERR(dup2(fd, 0x7fffffff), EBADF, "dup2 to INT_MAX is EBADF");
    int other = open("f", O_RDONLY);
    check(dup2(other, 40) == 40 && (fcntl(40, F_GETFL) & O_ACCMODE) == O_RDONLY,
          "dup2 onto an open fd replaces it");
    CHECK_ERR(dup3(fd, fd, 0), EINVAL, "dup3(fd, fd) is EINVAL");
    CHECK_ERR(syscall(SYS_dup3, fd, 41, 1), EINVAL, "dup3 with a bad flag is EINVAL");
    check(dup3(fd, 41, O_CLOEXEC) == 41 && fcntl(41, F_GETFD) == FD_CLOEXEC,
          "dup3 O_CLOEXEC sets FD_CLOEXEC");
    CHECK_ERR(dup(-5), EBADF, "dup(-5) is EBADF");
    close(40);
    close(41);
    close(other);
    close(fd);
}

static void fcntls(void)
{
    int fd = open("f", O_RDWR);
    check(fcntl(fd, F_DUPFD, 50) == 50, "F_DUPFD returns the lowest fd >= arg");
    check(fcntl(fd, F_DUPFD, 50) == 51, "F_DUPFD skips used fds");
    check(fcntl(fd, F_DUPFD_CLOEXEC, 50) == 52 && fcntl(52, F_GETFD) == FD_CLOEXEC,
          "F_DUPFD_CLOEXEC");
    CHECK_ERR(fcntl(fd, F_DUPFD, -1), EINVAL, "F_DUPFD with a negative minimum is EINVAL");
    check(fcntl(fd, F_GETFD) == 0, "F_GETFD of a fresh fd is 0");
    check(fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 && fcntl(fd, F_GETFD) == FD_CLOEXEC,
          "F_SETFD sets FD_CLOEXEC");
    check(fcntl(50, F_GETFD) == 0, "FD_CLOEXEC is per fd, not shared by dups");
    int fl = fcntl(fd, F_GETFL);
    check(fl >= 0 && (fl & O_ACCMODE) == O_RDWR && !(fl & O_APPEND), "F_GETFL: O_RDWR");
    check(fcntl(fd, F_SETFL, O_APPEND | O_NONBLOCK | O_WRONLY) == 0, "F_SETFL succeeds");
    fl = fcntl(50, F_GETFL);
    check((fl & O_APPEND) && (fl & O_NONBLOCK) && (fl & O_ACCMODE) == O_RDWR,
          "F_SETFL changes status flags of the shared description, not the access mode");
    CHECK_ERR(fcntl(fd, 12345), EINVAL, "an unknown fcntl command is EINVAL");
    CHECK_ERR(fcntl(-1, F_GETFL), EBADF, "F_GETFL of -1 is EBADF");
    CHECK_ERR(fcntl(99, F_SETFD, 1), EBADF, "F_SETFD of a closed fd is EBADF");
    int o = open("g", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    check(o >= 0 && fcntl(o, F_GETFD) == FD_CLOEXEC, "open O_CLOEXEC sets FD_CLOEXEC");
    close(o);
    close(50);
    close(51);
    close(52);
    close(fd);
}

static void shared_offset(void)
{
    int fd = open("off", O_RDWR | O_CREAT | O_TRUNC, 0644);
    int d = dup(fd);
    check(write(fd, "abcdef", 6) == 6, "write 6 bytes");
    check(lseek(d, 0, SEEK_CUR) == 6, "a dup shares the offset");
    check(lseek(d, 2, SEEK_SET) == 2, "lseek through the dup");
    char c = 0;
    check(read(fd, &c, 1) == 1 && c == 'c', "the original reads at the dup's offset");
    int other = open("off", O_RDONLY);
    check(lseek(other, 0, SEEK_CUR) == 0, "another open has its own offset");
    close(other);
    close(d);
    close(fd);
}

static void close_ranges(void)
{
    int fd = open("f", O_RDONLY);
    for (int i = 60; i < 65; i++)
        dup2(fd, i);
    check(syscall(SYS_close_range, 61, 63, 0) == 0, "close_range succeeds");
    check(fcntl(60, F_GETFD) == 0 && fcntl(64, F_GETFD) == 0, "close_range leaves the ends");
    int closed = 1;
    for (int i = 61; i <= 63; i++)
        closed &= fcntl(i, F_GETFD) == -1 && errno == EBADF;
    check(closed, "close_range closes the range");
    check(syscall(SYS_close_range, 60, 64, CLOSE_RANGE_CLOEXEC) == 0 &&
              fcntl(60, F_GETFD) == FD_CLOEXEC && fcntl(64, F_GETFD) == FD_CLOEXEC,
          "CLOSE_RANGE_CLOEXEC marks instead of closing");
    CHECK_ERR(syscall(SYS_close_range, 5, 4, 0), EINVAL, "close_range with lo > hi is EINVAL");
    CHECK_ERR(syscall(SYS_close_range, 60, 64, 0x80), EINVAL, "close_range with a bad flag is EINVAL");
    check(syscall(SYS_close_range, 60, ~0U, 0) == 0 && fcntl(60, F_GETFD) == -1,
          "close_range to ~0U closes everything above");
    close(fd);
}

static void anyfd(void)
{
    // O_ANYFD is ours: our kernel returns any free fd, Linux ignores the unknown
    // open flag and returns the lowest. Either way it must be a working fd.
    int fd = open("f", O_RDONLY | O_ANYFD);
    check(fd >= 0 && fcntl(fd, F_GETFD) == 0, "open O_ANYFD gives a working fd");
    int fds[2];
    // pipe2 with O_ANYFD: we accept it; Linux rejects the unknown flag (EINVAL).
    // Both are the documented behaviour (kernel/uapi/ext.h).
    int r = pipe2(fds, O_ANYFD);
    check((r == 0 && write(fds[1], "x", 1) == 1) || (r == -1 && errno == EINVAL),
          "pipe2 O_ANYFD works here, EINVAL on Linux");
    if (r == 0) {
        close(fds[0]);
        close(fds[1]);
    }
    close(fd);
}

// Our kernel, not Linux (uname's release says so).
static int on_ours(void)
{
    struct utsname u;
    return uname(&u) == 0 && strstr(u.release, "scalable") != NULL;
}

static int set_nofile(rlim_t cur, rlim_t max)
{
    return setrlimit(RLIMIT_NOFILE, &(struct rlimit){cur, max});
}

// RLIMIT_NOFILE's soft limit bounds the fds the kernel picks: EMFILE when the
// lowest free fd is at or above it (Linux's rule).
static void nofile_limit(void)
{
    struct rlimit old;
    check(getrlimit(RLIMIT_NOFILE, &old) == 0 && old.rlim_cur > 64, "getrlimit(RLIMIT_NOFILE)");
    syscall(SYS_close_range, 3, ~0U, 0); // whatever the runner left open: 0-2 remain
    // Keep the hard limit: raising it again needs privilege on Linux.
    check(set_nofile(8, old.rlim_max) == 0, "setrlimit(RLIMIT_NOFILE, 8)");
    int ok = 1;
    for (int fd = 3; fd < 8; fd++)
        ok &= open("f", O_RDONLY) == fd;
    check(ok, "open gives fds 3 .. 7 under a limit of 8");
    CHECK_ERR(open("f", O_RDONLY), EMFILE, "open at the limit is EMFILE");
    CHECK_ERR(open("f", O_RDONLY | O_ANYFD), EMFILE, "open O_ANYFD at a limit of 8 is EMFILE");
    CHECK_ERR(dup(0), EMFILE, "dup at the limit is EMFILE");
    CHECK_ERR(fcntl(0, F_DUPFD, 3), EMFILE, "F_DUPFD below the limit, all taken: EMFILE");
    CHECK_ERR(fcntl(0, F_DUPFD, 8), EINVAL, "F_DUPFD with arg == limit is EINVAL");
    CHECK_ERR(fcntl(0, F_DUPFD_CLOEXEC, 9), EINVAL, "F_DUPFD_CLOEXEC with arg > limit is EINVAL");
    CHECK_ERR(dup2(0, 8), EBADF, "dup2 to newfd == limit is EBADF");
    CHECK_ERR(syscall(SYS_memfd_create, "m", 0), EMFILE, "memfd_create at the limit is EMFILE");
    int fds[2] = {-1, -1};
    CHECK_ERR(pipe(fds), EMFILE, "pipe with no free fd is EMFILE");
    close(7);
    CHECK_ERR(pipe(fds), EMFILE, "pipe with one free fd is EMFILE");
    check(fcntl(7, F_GETFD) == -1 && errno == EBADF, "the failed pipe left no fd behind");
    CHECK_ERR(pipe2(fds, O_CLOEXEC), EMFILE, "pipe2 with one free fd is EMFILE");
    check(fcntl(7, F_GETFD) == -1 && errno == EBADF, "the failed pipe2 left no fd behind");
    check(fcntl(0, F_DUPFD, 7) == 7, "F_DUPFD to the last fd below the limit");
    close(7);
    check(open("f", O_RDONLY | O_ANYFD) == 7, "open O_ANYFD under a limit of 8 gives the free fd 7");
    close(7);
    if (on_ours()) { // O_ANYFD in pipe2 and dup3 is ours (Linux: EINVAL, EBADF)
        CHECK_ERR(pipe2(fds, O_ANYFD), EMFILE, "pipe2 O_ANYFD with one free fd is EMFILE");
        check(syscall(SYS_dup3, 0, -1, O_ANYFD) == 7, "dup3 O_ANYFD under a limit of 8 gives fd 7");
        CHECK_ERR(syscall(SYS_dup3, 0, -1, O_ANYFD), EMFILE, "dup3 O_ANYFD at the limit is EMFILE");
        close(7);
        // A limit above 64 lets O_ANYFD use the partitions (fds from 64 up, 64 per
        // CPU per round), but only the rounds that begin below the limit: with a
        // limit of 65, one chunk per CPU, so the fds end below 65 + 64 * ncpu.
        long ncpu = syscall(2048 + 1, NULL, 0); // kstats: the number of online CPUs
        check(set_nofile(65, old.rlim_max) == 0, "setrlimit(RLIMIT_NOFILE, 65)");
        int fd = open("f", O_RDONLY | O_ANYFD), n = 0, max = fd, err = 0;
        check(fd >= 64, "O_ANYFD under a limit of 65 takes a partition fd (>= 64)");
        while (fd >= 0 && n < 100000) {
            n++;
            max = fd > max ? fd : max;
            fd = open("f", O_RDONLY | O_ANYFD);
            err = errno;
        }
        check(fd == -1 && err == EMFILE, "O_ANYFD opens end with EMFILE");
        check(ncpu > 0 && max < 65 + 64 * ncpu && n <= 65 - 3 + 64 * ncpu,
              "O_ANYFD fds stay below limit + 64 * ncpu");
        check(fcntl(8, F_GETFD) == 0 && fcntl(63, F_GETFD) == 0,
              "a full partition falls back to the free fds below the limit");
        syscall(SYS_close_range, 3, ~0U, 0);
        check(set_nofile(8, old.rlim_max) == 0, "setrlimit(RLIMIT_NOFILE, 8) again");
        for (int i = 3; i < 8; i++)
            open("f", O_RDONLY);
    } else {
        check(open("f", O_RDONLY) == 7, "refill fd 7");
    }
    check(set_nofile(old.rlim_cur, old.rlim_max) == 0, "raise RLIMIT_NOFILE back");
    check(open("f", O_RDONLY) == 8, "after raising the limit open gives fd 8");
    int p = pipe(fds);
    check(p == 0 && fds[0] == 9 && fds[1] == 10, "and pipe gives 9 and 10");
    syscall(SYS_close_range, 3, ~0U, 0);
}

int main(void)
{
    if (enter_scratch("fds") != 0)
        return 1;
    close(open("f", O_RDWR | O_CREAT, 0644));
    lowest_fd();
    close_errors();
    dups();
    fcntls();
    shared_offset();
    close_ranges();
    anyfd();
    nofile_limit();
    unlink("f");
    unlink("g");
    unlink("off");
    chdir("/");
    check(rmdir(suite_dir) == 0, "scratch directory removed");
    return suite_end();
}
