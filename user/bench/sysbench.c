// System-call costs, measured the same way on our kernel and on Linux: one
// static binary (our libc), run in the guest by `make bench` and as the only
// program of Debian's Linux 6.1 in the same QEMU (tools/linuxguest).
//
//   sysbench [NAME...]     run the named benchmarks (default: all; "write"
//                          runs the nine file-write figures)
//
// Prints `bench: NAME VALUE ns/op` lines (tools/bench reads them). Figures only:
// under TCG on a loaded machine compare ratios within one run, not absolutes.
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../../kernel/uapi/ext.h"

#define FILE_PATH "/tmp/sysbench.f"

extern char **environ;
static const char *self; // our own path, for the exec benchmarks

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void report(const char *name, long long ns, long n)
{
    printf("bench: %s %lld ns/op\n", name, ns / n);
    fflush(stdout);
}

static void bench_getpid(void)
{
    long n = 20000;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++)
        syscall(SYS_getpid); // not getpid(): a libc may cache it
    report("getpid", now_ns() - t0, n);
}

static void open_close(const char *name, int extra)
{
    long n = 5000;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++) {
        int fd = open(FILE_PATH, O_RDONLY | extra);
        if (fd < 0) {
            perror("open");
            exit(1);
        }
        close(fd);
    }
    report(name, now_ns() - t0, n);
}

static void bench_open_close(void) { open_close("open_close", 0); }
static void bench_open_close_anyfd(void) { open_close("open_close_anyfd", O_ANYFD); }

static void bench_stat(void)
{
    long n = 5000;
    struct stat st;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++)
        if (stat(FILE_PATH, &st) != 0) {
            perror("stat");
            exit(1);
        }
    report("stat", now_ns() - t0, n);
}

// First touches of a shared file mapping: mmap 16 pages of a file, read one
// byte of each (a fault that maps the file's page), munmap; the figure is per
// page touched, mmap and munmap included.
#define MAP_PAGES 16
static void bench_mmap_file_touch(void)
{
    long n = 200;
    int fd = open("/tmp/sysbench.map", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, MAP_PAGES * 4096L) != 0) {
        perror("mmap_file_touch: file");
        exit(1);
    }
    volatile unsigned sum = 0;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++) {
        unsigned char *p = mmap(NULL, MAP_PAGES * 4096L, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            perror("mmap");
            exit(1);
        }
        for (int k = 0; k < MAP_PAGES; k++)
            sum += p[k * 4096L];
        munmap(p, MAP_PAGES * 4096L);
    }
    report("mmap_file_touch", now_ns() - t0, n * MAP_PAGES);
    close(fd);
    unlink("/tmp/sysbench.map");
}

// One byte there and back between two processes; the figure is per round trip.
static void bench_pipe_pingpong(void)
{
    long n = 2000;
    int ab[2], ba[2];
    if (pipe(ab) || pipe(ba)) {
        perror("pipe");
        exit(1);
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(ab[1]); // so the parent's close is our end of file
        close(ba[0]);
        char c;
        while (read(ab[0], &c, 1) == 1)
            write(ba[1], &c, 1);
        _exit(0);
    }
    close(ab[0]);
    close(ba[1]);
    char c = 'x';
    long long t0 = now_ns();
    for (long i = 0; i < n; i++) {
        write(ab[1], &c, 1);
        read(ba[0], &c, 1);
    }
    long long dt = now_ns() - t0;
    close(ab[1]);
    close(ba[0]);
    waitpid(pid, NULL, 0);
    report("pipe_pingpong", dt, n);
}

// File writes of n bytes at a time, sysbench.w. "over_same": over the same
// bytes each time, with the data already there; "over_diff": over the same
// bytes, alternating between two contents; "new": into a file emptied every
// 1 MiB, so each write fills fresh pages. n = 64, 4096 and 1 MiB.
#define WFILE "/tmp/sysbench.w"
#define WMAX (1 << 20)
static char wbuf[2][WMAX];

static void file_write(const char *kind, size_t n, long iters)
{
    int fd = open(WFILE, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(WFILE);
        exit(1);
    }
    memset(wbuf[0], 'a', WMAX);
    memset(wbuf[1], 'b', WMAX);
    bool fresh = kind[0] == 'n', diff = strcmp(kind, "over_diff") == 0;
    if (!fresh && pwrite(fd, wbuf[0], n, 0) != (ssize_t)n) {
        perror("pwrite");
        exit(1);
    }
    long long t0 = now_ns();
    for (long i = 0; i < iters; i++) {
        off_t off = fresh ? (off_t)(i * n % WMAX) : 0;
        if (fresh && off == 0 && ftruncate(fd, 0) != 0) {
            perror("ftruncate");
            exit(1);
        }
        if (pwrite(fd, wbuf[diff ? i & 1 : 0], n, off) != (ssize_t)n) {
            perror("pwrite");
            exit(1);
        }
    }
    long long dt = now_ns() - t0;
    close(fd);
    unlink(WFILE);
    char name[64];
    snprintf(name, sizeof name, "write_%s_%s", kind, n == 64 ? "64" : n == 4096 ? "4k" : "1m");
    report(name, dt, iters);
}

static void bench_write(void)
{
    static const char *const kinds[] = {"over_same", "over_diff", "new"};
    for (int k = 0; k < 3; k++) {
        file_write(kinds[k], 64, 40000);
        file_write(kinds[k], 4096, 10000);
        file_write(kinds[k], WMAX, 300);
    }
}

static char *const child_argv[] = {"sysbench", "--exit", NULL};

static void bench_fork_exec_wait(void)
{
    long n = 100;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            execve(self, child_argv, environ);
            _exit(127);
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || st != 0) {
            fprintf(stderr, "fork+exec: child failed (status %d)\n", st);
            exit(1);
        }
    }
    report("fork_exec_wait", now_ns() - t0, n);
}

static void bench_spawn_wait(void)
{
    long n = 100;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++) {
        pid_t pid;
        int err = posix_spawn(&pid, self, NULL, NULL, child_argv, environ);
        int st;
        if (err || waitpid(pid, &st, 0) != pid || st != 0) {
            fprintf(stderr, "posix_spawn: failed (%d)\n", err);
            exit(1);
        }
    }
    report("posix_spawn_wait", now_ns() - t0, n);
}

// ---- TCP over 127.0.0.1 --------------------------------------------------------

// Linux as the only program (tools/linuxguest) starts with its loopback
// interface down: bring it up. Ours is always up; there the ioctl fails and
// changes nothing.
static void loopback_up(void)
{
    struct {
        char name[16];
        short flags;
        char pad[22];
    } ifr = {.name = "lo"};               // Linux's struct ifreq, 40 bytes
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0)
        return;
    if (ioctl(s, 0x8913, &ifr) == 0 && !(ifr.flags & 1)) { // SIOCGIFFLAGS, IFF_UP
        ifr.flags |= 1;
        ioctl(s, 0x8914, &ifr);           // SIOCSIFFLAGS
    }
    close(s);
}

static int tcp_listener(struct sockaddr_in *a)
{
    socklen_t len = sizeof *a;
    *a = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)a, sizeof *a) != 0 || listen(l, 16) != 0 ||
        getsockname(l, (struct sockaddr *)a, &len) != 0) {
        perror("tcp listener");
        exit(1);
    }
    return l;
}

static int tcp_connect(const struct sockaddr_in *a)
{
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (c < 0 || connect(c, (const struct sockaddr *)a, sizeof *a) != 0) {
        perror("connect");
        exit(1);
    }
    return c;
}

// One operation: a connection made, accepted, and closed at both ends.
static void bench_tcp_connect(void)
{
    loopback_up();
    struct sockaddr_in a;
    int l = tcp_listener(&a);
    long n = 300;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++) {
        int c = tcp_connect(&a), s = accept(l, NULL, NULL);
        if (s < 0) {
            perror("accept");
            exit(1);
        }
        close(c);
        close(s);
    }
    report("tcp_connect_close", now_ns() - t0, n);
    close(l);
}

// One operation: 64 KiB written to a connection and read by another process
// (which discards it); the clock stops when the reader has had it all.
static void bench_tcp_stream(void)
{
    static char buf[65536];
    loopback_up();
    struct sockaddr_in a;
    int l = tcp_listener(&a);
    pid_t pid = fork();
    if (pid == 0) {
        int s = accept(l, NULL, NULL);
        while (s >= 0 && read(s, buf, sizeof buf) > 0)
            ;
        _exit(s < 0);
    }
    int c = tcp_connect(&a), st;
    memset(buf, 'x', sizeof buf);
    long n = 160; // 10 MiB
    long long t0 = now_ns();
    for (long i = 0; i < n; i++)
        for (size_t done = 0; done < sizeof buf;) {
            ssize_t k = write(c, buf + done, sizeof buf - done);
            if (k <= 0) {
                perror("write");
                exit(1);
            }
            done += k;
        }
    shutdown(c, SHUT_WR);
    if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0) {
        fprintf(stderr, "tcp_stream: the reader failed\n");
        exit(1);
    }
    report("tcp_stream_64KiB", now_ns() - t0, n);
    close(c);
    close(l);
}

static const struct {
    const char *name;
    void (*fn)(void);
} benches[] = {
    {"getpid", bench_getpid},
    {"open_close", bench_open_close},
    {"open_close_anyfd", bench_open_close_anyfd},
    {"stat", bench_stat},
    {"pipe_pingpong", bench_pipe_pingpong},
    {"mmap_file_touch", bench_mmap_file_touch},
    {"fork_exec_wait", bench_fork_exec_wait},
    {"posix_spawn_wait", bench_spawn_wait},
    {"write", bench_write},
    {"tcp_connect_close", bench_tcp_connect},
    {"tcp_stream_64KiB", bench_tcp_stream},
};

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--exit") == 0)
        return 0; // the exec benchmarks' child
    self = argv[0];
    mkdir("/tmp", 01777);
    int fd = open(FILE_PATH, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(FILE_PATH);
        return 1;
    }
    close(fd);
    // Pinned to one CPU: the figures are per-call costs, not migrations.
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    sched_setaffinity(0, sizeof one, &one);
    for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++) {
        bool run = argc == 1;
        for (int a = 1; a < argc; a++)
            run |= strcmp(argv[a], benches[i].name) == 0;
        if (run)
            benches[i].fn();
    }
    unlink(FILE_PATH);
    return 0;
}
