// The ABI structures our public headers define by value must match Linux
// x86-64 (the kernel's ABI) byte for byte: sizes and offsets.
#include <dirent.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <termios.h>
#include <poll.h>
#include <unistd.h>
#include "tap.h"

#define SIZE(type, n) check(sizeof(type) == (n), "sizeof(" #type ") == " #n " (%zu)", sizeof(type))
#define OFF(type, field, n) \
    check(offsetof(type, field) == (n), "offsetof(" #type ", " #field ") == " #n " (%zu)", offsetof(type, field))

int main(void)
{
    SIZE(struct stat, 144);
    OFF(struct stat, st_ino, 8);
    OFF(struct stat, st_nlink, 16);
    OFF(struct stat, st_mode, 24);
    OFF(struct stat, st_uid, 28);
    OFF(struct stat, st_rdev, 40);
    OFF(struct stat, st_size, 48);
    OFF(struct stat, st_blksize, 56);
    OFF(struct stat, st_blocks, 64);
    OFF(struct stat, st_atim, 72);
    OFF(struct stat, st_mtim, 88);
    OFF(struct stat, st_ctim, 104);
    SIZE(struct timespec, 16);
    SIZE(struct timeval, 16);
    SIZE(struct utsname, 390);
    SIZE(struct iovec, 16);
    SIZE(struct winsize, 8);
    SIZE(struct pollfd, 8);
    SIZE(struct rlimit, 16);
    SIZE(struct rusage, 144);
    SIZE(siginfo_t, 128);
    OFF(siginfo_t, si_code, 8);
    OFF(siginfo_t, si_pid, 16);
    OFF(siginfo_t, si_uid, 20);
    OFF(siginfo_t, si_status, 24);
    OFF(siginfo_t, si_addr, 16);
    SIZE(stack_t, 24);
    OFF(struct termios, c_line, 16);
    OFF(struct termios, c_cc, 17);
    SIZE(off_t, 8);
    SIZE(pid_t, 4);

    // The kernel fills struct stat: check a field it sets.
    struct stat st;
    check(stat("/", &st) == 0 && S_ISDIR(st.st_mode) && st.st_nlink >= 2 && st.st_blksize > 0,
          "stat(\"/\") fills the layout we declare");
    struct stat fs;
    check(fstat(1, &fs) == 0 && lstat("/proc/self/exe", &st) == 0 && S_ISLNK(st.st_mode),
          "fstat/lstat");
    struct utsname u;
    check(uname(&u) == 0 && strcmp(u.machine, "x86_64") == 0, "uname (%s)", u.machine);
    struct rlimit rl;
    check(getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 0 && rl.rlim_cur <= rl.rlim_max,
          "getrlimit");
    int p[2];
    pipe(p);
    fd_set r, w;
    FD_ZERO(&r);
    FD_ZERO(&w);
    FD_SET(p[0], &r);
    FD_SET(p[1], &w);
    struct timeval tv = {0, 0};
    int n = select(p[1] + 1, &r, &w, NULL, &tv);
    check(n == 1 && !FD_ISSET(p[0], &r) && FD_ISSET(p[1], &w), "select: an empty pipe is writable only");
    write(p[1], "x", 1);
    FD_SET(p[0], &r);
    struct timespec ts = {1, 0};
    n = pselect(p[0] + 1, &r, NULL, NULL, &ts, NULL);
    check(n == 1 && FD_ISSET(p[0], &r), "pselect: readable after a write");
    close(p[0]);
    close(p[1]);
    check(sysconf(_SC_PAGESIZE) == 4096 && sysconf(_SC_NPROCESSORS_ONLN) >= 1, "sysconf");
    return tap_done();
}
