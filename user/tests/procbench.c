// Process benchmarks (figures, no assertions): getpid, fork+wait, fork+exec+wait
// and pthread create+join, in ns per operation. Run in the guest with
// `make qemu CMDLINE=init=procbench` (it execs /bin/argcheck), or on the host
// from build/user/ (it then execs argcheck next to itself).
#include <pthread.h>
#include <stdio.h>
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

int main(int argc, char **argv)
{
    (void)argc;
    char target[256] = "/bin/argcheck";
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

    t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            char *a[] = {"argcheck", NULL};
            execv(target, a);
            _exit(127);
        }
        waitpid(pid, NULL, 0);
    }
    report("fork+exec+wait", t0, iters);

    t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        pthread_t t;
        pthread_create(&t, NULL, nothing, NULL);
        pthread_join(t, NULL);
    }
    report("pthread create+join", t0, iters);
    return 0;
}
