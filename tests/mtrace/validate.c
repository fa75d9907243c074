// Guest program for mtrace's self-test: pairs of calls whose footprints are
// known to share a cache line in Linux 6.1 (a written pipe, a directory, a
// process's fd table or address space, the dentry of a file both close, a page
// both read into) or known not to (calls that only touch the caller's own task,
// fd table, files, pipes and address space). Each pair runs as one mtrace test,
// call 0 on CPU 0 and call 1 on CPU 1, one after the other, REPEAT times; the
// host side (tools/mtrace/validate) checks the plugin's verdicts.
//
// The private pairs also check that the plugin skips interrupts: without that,
// a timer tick inside one window writes jiffies and the clock, which the other
// call reads (mmap-2proc did in most runs). mmap in two processes is private at
// byte granularity only: now and then one call zeroes a new object in a line
// where the other reads a neighbouring one.
//
// For each test it prints the runner-log line the analysis reads:
//   mtrace-test ID CALL0 CALL1 NAME expect=shared|private|bytes-private
// Needs 2 CPUs. Without the plugin it runs the same and proves nothing.
#define _GNU_SOURCE
#include "../../tools/mtrace/markers.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define REPEAT 5                          // runs per pair: the verdict must be stable

// What a pair shares before it forks or spawns its thread.
static int pipefd[2];
static int own_fd[2];                     // per side: an fd the side opened itself
static void *mapped[2];

struct pair {
    const char *name, *call0, *call1;
    int threads;                          // 1: two threads of one process; 0: two processes
    const char *expect;                   // shared, private, or bytes-private: no byte
                                          // shared, lines may be (false sharing)
    void (*prepare)(void);                // before the fork / thread, outside windows
    void (*setup)(int side);              // on the side's CPU, outside its window
    void (*call)(int side);               // the traced call
    void (*cleanup)(int side);            // on the side's CPU, after its window
};

static void die(const char *what)
{
    perror(what);
    exit(2);
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        die("sched_setaffinity");
}

static void nothing(void) {}
static void nothing_side(int side) { (void)side; }

static void call_getpid(int side) { (void)side; syscall(SYS_getpid); }

static void open_devnull(int side)
{
    if ((own_fd[side] = open("/dev/null", O_WRONLY)) < 0)
        die("open /dev/null");
}
static void close_own(int side) { close(own_fd[side]); }
static void call_write_own(int side)
{
    if (write(own_fd[side], "x", 1) != 1)
        die("write");
}

static void make_pipe(void)
{
    if (pipe(pipefd) != 0)
        die("pipe");
}
static void call_write_pipe(int side)
{
    (void)side;
    if (write(pipefd[1], "x", 1) != 1)
        die("write pipe");
}

static int own_pipe[2][2];
static void make_own_pipe(int side)
{
    if (pipe(own_pipe[side]) != 0 || write(own_pipe[side][1], "p", 1) != 1)
        die("own pipe");
}
static void call_write_own_pipe(int side)
{
    if (write(own_pipe[side][1], "x", 1) != 1)
        die("write own pipe");
}
static void close_own_pipe(int side) { close(own_pipe[side][0]), close(own_pipe[side][1]); }

static void call_close_own(int side) { close(own_fd[side]); }

// One page of a memfd, mapped by each side itself after the fork, so at
// different virtual addresses: the calls share it only physically.
static int memfd;
static char *view[2];
static void make_memfd(void)
{
    if ((memfd = memfd_create("mtrace", 0)) < 0 || ftruncate(memfd, 4096) != 0)
        die("memfd");
}
static void map_view(int side)
{
    make_own_pipe(side);
    // Both processes have the same layout: ask for different addresses.
    void *hint = (void *)(0x200000000000UL + side * 0x100000UL);
    view[side] = mmap(hint, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (view[side] == MAP_FAILED)
        die("mmap memfd");
    view[side][0] = 0;                    // fault it in outside the window
}
static void call_read_into_view(int side)
{
    if (read(own_pipe[side][0], view[side], 1) != 1)
        die("read into view");
}
static void unmap_view(int side)
{
    close_own_pipe(side);
    munmap(view[side], 4096);
    if (side == 0)
        close(memfd);
}

// The directory also holds FILLER other names, so that a hash-table directory
// (ours, fs/dirhash.c) has grown to a few hundred buckets and "0" and "1" are in
// different ones but for a chance of about 1 / buckets. Linux shares the
// directory's lock and inode whatever it holds.
#define FILLER 500
static void make_dir(void)
{
    static int filled;
    char path[32];
    mkdir("/tmp/v", 0755);
    for (; filled < FILLER; filled++) {
        snprintf(path, sizeof path, "/tmp/v/f%d", filled);
        int fd = open(path, O_CREAT | O_WRONLY, 0600);
        if (fd < 0)
            die("filler");
        close(fd);
    }
    unlink("/tmp/v/0");
    unlink("/tmp/v/1");
}
static void call_creat(int side)
{
    char path[] = "/tmp/v/0";
    path[7] += side;
    if ((own_fd[side] = open(path, O_CREAT | O_WRONLY, 0600)) < 0)
        die("creat");
}

static void call_open_devnull(int side) { open_devnull(side); }

static void call_mmap(int side)
{
    mapped[side] = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped[side] == MAP_FAILED)
        die("mmap");
}
static void unmap(int side) { munmap(mapped[side], 4096); }

static const struct pair pairs[] = {
    { "getpid-2proc", "getpid", "getpid", 0, "private", nothing, nothing_side, call_getpid,
      nothing_side },
    { "write-own-devnull-2proc", "write", "write", 0, "private", nothing, open_devnull,
      call_write_own, close_own },
    { "write-own-pipe-2proc", "write", "write", 0, "private", nothing, make_own_pipe,
      call_write_own_pipe, close_own_pipe },
    { "mmap-2proc", "mmap", "mmap", 0, "bytes-private", nothing, nothing_side, call_mmap, unmap },
    // Each process closes its own open file, but both files are /dev/null: the
    // last fput drops a reference on the shared dentry and on the device.
    { "close-own-devnull-2proc", "close", "close", 0, "shared", nothing, open_devnull,
      call_close_own, nothing_side },
    // Each process reads from its own pipe into its own mapping of one page: the
    // kernel writes the same physical line through different virtual addresses.
    { "read-into-one-page-2proc", "read", "read", 0, "shared", make_memfd, map_view,
      call_read_into_view, unmap_view },
    { "write-same-pipe-2proc", "write", "write", 0, "shared", make_pipe, nothing_side,
      call_write_pipe, nothing_side },
    { "creat-same-dir-2proc", "open", "open", 0, "shared", make_dir, nothing_side, call_creat,
      close_own },
    { "open-same-fdtable-2thread", "open", "open", 1, "shared", nothing, nothing_side,
      call_open_devnull, close_own },
    { "mmap-same-mm-2thread", "mmap", "mmap", 1, "shared", nothing, nothing_side, call_mmap,
      unmap },
};

// Side 1, on CPU 1: set up, say ready, wait for the go, run the call in its window.
struct side1 {
    const struct pair *p;
    int ready[2], go[2];
};

static void *run_side1(void *arg)
{
    struct side1 *s = arg;
    char c;
    pin(1);
    s->p->setup(1);
    if (write(s->ready[1], "r", 1) != 1 || read(s->go[0], &c, 1) != 1)
        die("side 1 sync");
    mtrace_open(1);
    s->p->call(1);
    mtrace_close(1);
    s->p->cleanup(1);
    return NULL;
}

static void run_pair(const struct pair *p, unsigned long id)
{
    struct side1 s = { .p = p };
    pthread_t thread;
    pid_t child = 0;
    char c;
    p->prepare();
    if (pipe(s.ready) != 0 || pipe(s.go) != 0)
        die("pipe");
    if (p->threads) {
        if (pthread_create(&thread, NULL, run_side1, &s) != 0)
            die("pthread_create");
    } else if ((child = fork()) == 0) {
        run_side1(&s);
        _exit(0);
    } else if (child < 0) {
        die("fork");
    }
    p->setup(0);
    // Side 1 is parked on CPU 1 before side 0 opens its window on CPU 0.
    if (read(s.ready[0], &c, 1) != 1)
        die("ready");
    mtrace_test_id(id);
    mtrace_open(0);
    p->call(0);
    mtrace_close(0);
    if (write(s.go[1], "g", 1) != 1)
        die("go");
    if (p->threads)
        pthread_join(thread, NULL);
    else
        waitpid(child, NULL, 0);
    mtrace_test_done();
    p->cleanup(0);
    close(s.ready[0]), close(s.ready[1]), close(s.go[0]), close(s.go[1]);
    if (p->prepare == make_pipe)
        close(pipefd[0]), close(pipefd[1]);
}

int main(void)
{
    if (mmap((void *)MTRACE_BASE, MTRACE_SIZE, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_POPULATE, -1, 0)
        != (void *)MTRACE_BASE)
        die("mmap marker region");
    // Loads are not messages: these would otherwise report a test 999.
    (void)*(volatile char *)(MTRACE_BASE + MTRACE_ID + 999);
    (void)*(volatile char *)(MTRACE_BASE + MTRACE_OPEN);
    (void)*(volatile char *)(MTRACE_BASE + MTRACE_DONE);
    pin(0);
    unsigned long id = 0;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        for (int r = 0; r < REPEAT; r++, id++) {
            printf("mtrace-test %lu %s %s %s expect=%s\n", id, pairs[i].call0, pairs[i].call1,
                   pairs[i].name, pairs[i].expect);
            fflush(stdout);
            run_pair(&pairs[i], id);
        }
    }
    return 0;
}
