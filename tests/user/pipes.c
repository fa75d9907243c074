// Pipes and devices: pipe/pipe2, data in order, EOF, EPIPE, O_NONBLOCK, the
// PIPE_BUF guarantee, fstat, errno on bad input; /dev/null and /dev/zero.
// Single-threaded: blocking waits need a second thread or process (later).
// Runs in our guest and on the Linux host.
#include "suite.h"
#include <limits.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>

static void basics(void)
{
    int p[2];
    char buf[32];
    check(pipe(p) == 0 && p[0] >= 0 && p[1] >= 0 && p[0] != p[1], "pipe gives two fds");
    check(write(p[1], "hello", 5) == 5 && write(p[1], " world", 6) == 6, "write to a pipe");
    int avail = -1;
    check(ioctl(p[0], FIONREAD, &avail) == 0 && avail == 11, "FIONREAD counts the bytes waiting");
    check(read(p[0], buf, 3) == 3 && !memcmp(buf, "hel", 3), "read part");
    check(read(p[0], buf, sizeof buf) == 8 && !memcmp(buf, "lo world", 8), "read returns what is there, in order");
    CHECK_ERR(read(p[1], buf, 1), EBADF, "read from the write end is EBADF");
    CHECK_ERR(write(p[0], "x", 1), EBADF, "write to the read end is EBADF");
    CHECK_ERR(lseek(p[0], 0, SEEK_SET), ESPIPE, "lseek on a pipe is ESPIPE");
    CHECK_ERR(pread(p[0], buf, 1, 0), ESPIPE, "pread on a pipe is ESPIPE");
    CHECK_ERR(fsync(p[1]), EINVAL, "fsync of a pipe is EINVAL");
    CHECK_ERR(ioctl(p[0], TCGETS, &(struct termios){0}), ENOTTY, "TCGETS on a pipe is ENOTTY");
    struct stat st;
    check(fstat(p[0], &st) == 0 && S_ISFIFO(st.st_mode), "fstat says FIFO");
    check(write(p[1], "", 0) == 0, "a zero-length write returns 0");
    struct iovec iov[3] = {{"ab", 2}, {"", 0}, {"cde", 3}};
    check(writev(p[1], iov, 3) == 5 && read(p[0], buf, sizeof buf) == 5 && !memcmp(buf, "abcde", 5),
          "writev to a pipe gathers the segments in order");
    struct iovec bad[2] = {{"ab", 2}, {KERNEL_PTR, 3}};
    CHECK_ERR(writev(p[1], bad, 2), EFAULT, "writev with a kernel address in a segment is EFAULT");
    close(p[1]);
    check(read(p[0], buf, sizeof buf) == 0, "read after the last writer closed is EOF");
    close(p[0]);
}

static void epipe(void)
{
    int p[2];
    signal(SIGPIPE, SIG_IGN); // Linux would kill us otherwise
    pipe(p);
    close(p[0]);
    CHECK_ERR(write(p[1], "x", 1), EPIPE, "write with no reader is EPIPE");
    close(p[1]);
}

static void nonblock(void)
{
    int p[2];
    char buf[PIPE_BUF];
    check(pipe2(p, O_NONBLOCK) == 0 && (fcntl(p[0], F_GETFL) & O_NONBLOCK), "pipe2 O_NONBLOCK");
    CHECK_ERR(read(p[0], buf, 1), EAGAIN, "read of an empty non-blocking pipe is EAGAIN");
    memset(buf, 'a', sizeof buf);
    long total = 0, k;
    while ((k = write(p[1], buf, 1000)) > 0)
        total += k;
    check(k == -1 && errno == EAGAIN && total >= PIPE_BUF, "writes fill the pipe, then EAGAIN");
    check(read(p[0], buf, 10) == 10, "read a little");
    // Room for 10 bytes is not room for PIPE_BUF: no partial write may happen.
    CHECK_ERR(write(p[1], buf, PIPE_BUF), EAGAIN, "a PIPE_BUF write without room for all of it is EAGAIN");
    long drained = 10;
    while ((k = read(p[0], buf, sizeof buf)) > 0)
        drained += k;
    check(drained == total, "every byte written comes out");
    check(write(p[1], buf, PIPE_BUF) == PIPE_BUF, "a PIPE_BUF write into an empty pipe goes in whole");
    close(p[0]);
    close(p[1]);
}

static void pipe_flags(void)
{
    int p[2];
    check(pipe2(p, O_CLOEXEC) == 0 && fcntl(p[0], F_GETFD) == FD_CLOEXEC && fcntl(p[1], F_GETFD) == FD_CLOEXEC,
          "pipe2 O_CLOEXEC marks both ends");
    close(p[0]);
    close(p[1]);
    CHECK_ERR(pipe2(p, O_APPEND), EINVAL, "pipe2 with a bad flag is EINVAL");
    CHECK_ERR(syscall(SYS_pipe, NULL), EFAULT, "pipe(NULL) is EFAULT");
    CHECK_ERR(syscall(SYS_pipe, KERNEL_PTR), EFAULT, "pipe into a kernel address is EFAULT");
    int low = open("/dev/null", O_RDONLY);
    close(low);
    CHECK_ERR(syscall(SYS_pipe2, unmapped_page(), 0), EFAULT, "pipe2 into an unmapped page is EFAULT");
    int again = open("/dev/null", O_RDONLY);
    check(again == low, "a failed pipe leaves no fds behind");
    close(again);
    pipe(p);
    int fl = fcntl(p[1], F_GETFL);
    check(fcntl(p[1], F_SETFL, fl | O_NONBLOCK) == 0 && (fcntl(p[1], F_GETFL) & O_NONBLOCK),
          "F_SETFL O_NONBLOCK on a pipe");
    CHECK_ERR(read(p[0], (void *)KERNEL_PTR, 1), EFAULT, "pipe read into a kernel address is EFAULT");
    write(p[1], "abc", 3);
    CHECK_ERR(read(p[0], unmapped_page(), 3), EFAULT, "pipe read into an unmapped page is EFAULT");
    char buf[4];
    check(read(p[0], buf, 3) == 3 && !memcmp(buf, "abc", 3), "a failed read consumes nothing");
    CHECK_ERR(write(p[1], unmapped_page(), 3), EFAULT, "pipe write from an unmapped page is EFAULT");
    close(p[0]);
    close(p[1]);
}

static void devices(void)
{
    struct stat st;
    check(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3,
          "/dev/null is character device 1,3");
    check(stat("/dev/zero", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 5,
          "/dev/zero is character device 1,5");
    int fd = open("/dev/null", O_RDWR);
    char buf[64];
    check(fd >= 0 && write(fd, "gone", 4) == 4, "writes to /dev/null succeed");
    check(read(fd, buf, sizeof buf) == 0, "reads from /dev/null are EOF");
    check(fstat(fd, &st) == 0 && S_ISCHR(st.st_mode), "fstat of /dev/null");
    struct termios tio;
    CHECK_ERR(ioctl(fd, TCGETS, &tio), ENOTTY, "TCGETS on /dev/null is ENOTTY");
    CHECK_ERR(ioctl(-1, TCGETS, &tio), EBADF, "ioctl of fd -1 is EBADF");
    close(fd);
    fd = open("/dev/zero", O_RDONLY);
    memset(buf, 1, sizeof buf);
    int zero = 1;
    check(fd >= 0 && read(fd, buf, sizeof buf) == sizeof buf, "read from /dev/zero");
    for (size_t i = 0; i < sizeof buf; i++)
        zero &= buf[i] == 0;
    check(zero, "/dev/zero reads zeros");
    CHECK_ERR(read(fd, KERNEL_PTR, 8), EFAULT, "/dev/zero into a kernel address is EFAULT");
    close(fd);
    CHECK_ERR(open("/dev/null/x", O_RDONLY), ENOTDIR, "a device in the middle of a path is ENOTDIR");
}

int main(void)
{
    basics();
    epipe();
    nonblock();
    pipe_flags();
    devices();
    return suite_end();
}
