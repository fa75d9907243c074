// The smallest user-level suite: process identity and the basic calls every
// later suite relies on. Runs in our guest and on the Linux host alike.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static int n, failed;

static void check(int ok, const char *name)
{
    n++;
    failed += !ok;
    printf("%s %d - %s\n", ok ? "ok" : "not ok", n, name);
}

int main(void)
{
    check(getpid() > 0, "getpid is positive");
    check(getppid() >= 0, "getppid is not negative");
    struct utsname u;
    check(uname(&u) == 0 && strcmp(u.machine, "x86_64") == 0, "uname machine is x86_64");
    struct timespec a, b;
    check(clock_gettime(CLOCK_MONOTONIC, &a) == 0 && clock_gettime(CLOCK_MONOTONIC, &b) == 0 &&
              (b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec)),
          "CLOCK_MONOTONIC does not go back");
    // The wall clock through each of its calls: the same second (give or take
    // one: a second may begin between two calls). time(2) is a raw system call:
    // C libraries may answer it without the kernel.
    struct timeval tv;
    long t = syscall(SYS_time, 0L);
    check(clock_gettime(CLOCK_REALTIME, &a) == 0 && gettimeofday(&tv, NULL) == 0 &&
              a.tv_sec - t <= 1 && a.tv_sec >= t && tv.tv_sec - a.tv_sec <= 1 &&
              tv.tv_sec >= a.tv_sec,
          "time, CLOCK_REALTIME and gettimeofday agree");
    errno = 0;
    check(write(-1, "x", 1) == -1 && errno == EBADF, "write to fd -1 is EBADF");
    printf("%d passed, %d failed\n", n - failed, failed);
    return failed != 0;
}
