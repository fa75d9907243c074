// By hand (make qemu CMDLINE=init=benchfiles): ns per open+close of one file,
// with and without O_ANYFD, and pipe throughput within one process. Reports
// figures only.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef O_ANYFD
#define O_ANYFD 040000000 // our extension (kernel/uapi/ext.h)
#endif

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void open_close(const char *what, int flags)
{
    enum { N = 20000 };
    long long t0 = now_ns();
    for (int i = 0; i < N; i++) {
        int fd = open("/tmp/bench-f", O_RDONLY | flags);
        if (fd < 0 || close(fd) != 0) {
            printf("open/close failed\n");
            return;
        }
    }
    printf("open+close (%s): %lld ns\n", what, (now_ns() - t0) / N);
}

static void pipe_throughput(size_t chunk)
{
    int p[2];
    if (pipe(p) != 0)
        return;
    char *buf = malloc(chunk);
    memset(buf, 'x', chunk);
    size_t total = 64 << 20;
    long long t0 = now_ns();
    for (size_t done = 0; done < total; done += chunk) {
        if (write(p[1], buf, chunk) != (ssize_t)chunk || read(p[0], buf, chunk) != (ssize_t)chunk) {
            printf("pipe I/O failed\n");
            return;
        }
    }
    long long ns = now_ns() - t0;
    printf("pipe, %zu-byte write then read: %lld MiB/s\n", chunk, (long long)(total >> 20) * 1000000000LL / ns);
    close(p[0]);
    close(p[1]);
    free(buf);
}

int main(void)
{
    mkdir("/tmp", 01777);
    close(open("/tmp/bench-f", O_RDWR | O_CREAT, 0644));
    for (int round = 0; round < 2; round++) {
        open_close("lowest fd", 0);
        open_close("O_ANYFD", O_ANYFD);
    }
    pipe_throughput(4096);
    pipe_throughput(65536);
    unlink("/tmp/bench-f");
    return 0;
}
