// Process benchmarks (figures, no assertions): getpid, fork+wait, fork+exec+wait,
// vfork+exec+wait, posix_spawn+wait (our system call; the C library's on Linux)
// and pthread create+join, in ns per operation; the three ways to start a
// program again with 32 MiB of the parent's memory touched. Run in the guest with
// `make qemu CMDLINE=init=procbench` (it execs /bin/argcheck), or on the host
// from build/user/ (it then execs argcheck next to itself).
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void report(const char *what, long long t0, int iters)
{
    printf("procbench: %-22s %10lld ns/op (%d ops)\n", what, (now_ns() - t0) / iters, iters);
}

static void *nothing(void *arg) { return arg; }

static char target[256] = "/bin/argcheck";
static char *args[] = {"argcheck", NULL};

static void fork_exec(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        execv(target, args);
        _exit(127);
    }
    waitpid(pid, NULL, 0);
}

static void vfork_exec(void)
{
    pid_t pid = vfork();
    if (pid == 0) {
        execv(target, args);
        _exit(127);
    }
    waitpid(pid, NULL, 0);
}

#define NR_posix_spawn 2048 // kernel/uapi/ext.h

static void spawn(void)
{
    pid_t pid;
    extern char **environ;
    if (syscall(NR_posix_spawn, &pid, target, NULL, NULL, args, environ) != 0 &&
        (errno != ENOSYS || posix_spawn(&pid, target, NULL, NULL, args, environ) != 0))
        return;
    waitpid(pid, NULL, 0);
}

static void time_starts(const char *suffix, int iters)
{
    struct { const char *name; void (*fn)(void); } ways[] = {
        {"fork+exec+wait", fork_exec}, {"vfork+exec+wait", vfork_exec},
        {"posix_spawn+wait", spawn}};
    for (int w = 0; w < 3; w++) {
        char name[64];
        snprintf(name, sizeof name, "%s%s", ways[w].name, suffix);
        long long t0 = now_ns();
        for (int i = 0; i < iters; i++)
            ways[w].fn();
        report(name, t0, iters);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *slash = strrchr(argv[0], '/');
    if (slash)
        snprintf(target, sizeof target, "%.*s/argcheck", (int)(slash - argv[0]), argv[0]);

    int iters = 100000;
    long long t0 = now_ns();
    for (int i = 0; i < iters; i++)
        syscall(SYS_getpid);
    report("getpid", t0, iters);

    iters = 200;
    t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        waitpid(pid, NULL, 0);
    }
    report("fork+wait", t0, iters);

    time_starts("", iters);

    t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        pthread_t t;
        pthread_create(&t, NULL, nothing, NULL);
        pthread_join(t, NULL);
    }
    report("pthread create+join", t0, iters);

    size_t big = 32 << 20;
    char *mem = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem != MAP_FAILED) {
        for (size_t o = 0; o < big; o += 4096)
            mem[o] = 1;
        time_starts(" (32M)", iters / 4);
    }
    return 0;
}
