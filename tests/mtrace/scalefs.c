// Guest program for ScaleFS's sharing test (issue 3): two CPUs looking up,
// creating and unlinking *different* names in one directory must write no cache
// line the other touches. Each pair runs as one mtrace test, call 0 on CPU 0 and
// call 1 on CPU 1, one after the other, REPEAT times; the host side
// (tools/mtrace/validate --kernel ours) checks the plugin's verdicts. Built
// against our libc; runs on our kernel (and, proving nothing, on Linux).
//
// The private pairs commute: stat of two existing names, open(O_CREAT|O_EXCL)
// of two new names (O_ANYFD when the two share an fd table), unlink of two
// names, mkdir of two names, rename of two names to two others, link of two
// files to two new names, open of two files and of one, stat of one file. The
// shared pairs are the controls that let the test fail: two writes
// to one pipe, and open(O_CREAT) of one name (the second open finds the file
// the first created: they do not commute).
//
// For each test it prints the line the host side reads:
//   mtrace-test ID CALL0 CALL1 NAME expect=shared|private
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
#include <sys/wait.h>
#include <unistd.h>

#ifndef O_ANYFD
#define O_ANYFD 040000000                 // kernel/uapi/ext.h
#endif

#define REPEAT 5                          // runs per pair: the verdict must be stable
#define DIR "/tmp/mtrace-scalefs"

struct pair {
    const char *name, *call0, *call1;
    int threads;                          // 1: two threads of one process; 0: two processes
    const char *expect;                   // shared or private
    void (*prepare)(void);                // before the fork / thread, outside windows
    void (*call)(int side);               // the traced call
    void (*cleanup)(int side);            // on the side's CPU, after its window
};

static int own_fd[2];
static int pipefd[2];
// Each side's stat buffer on its own cache lines: the kernel writes them.
static struct side_stat {
    struct stat st;
} __attribute__((aligned(64))) st[2];

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

// DIR/<prefix><side>, in one of two buffers per side used in turn (so that a
// call can name two paths); each side's buffers on lines of their own.
static struct side_names {
    char buf[2][sizeof DIR + 3];
    int turn;
} __attribute__((aligned(64))) names[2];
static const char *name(char prefix, int side)
{
    struct side_names *n = &names[side];
    char *b = n->buf[n->turn++ & 1];
    snprintf(b, sizeof n->buf[0], DIR "/%c%d", prefix, side);
    return b;
}

static void make_file(const char *path)
{
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    if (fd < 0)
        die(path);
    close(fd);
}

// After the fork, parent and child share their data and stack pages copy-on-
// write: the first store to one in a window would copy it there, and the two
// copies touch the shared page's metadata. Each side writes what its call will
// write before opening its window.
static void own_pages(int side)
{
    volatile char stack[16384];
    for (size_t i = 0; i < sizeof stack; i += 64)
        stack[i] = 0;
    own_fd[side] = -1;
    memset(&st[side], 0, sizeof st[side]);
    name('x', side), name('x', side);
}

static void nothing(void) {}
static void nothing_side(int side) { (void)side; }
static void close_own(int side) { close(own_fd[side]); }

// The directory holds FILLER other names too, so that its hash table has
// grown to a few hundred buckets: two names share a bucket (and so its line)
// only with probability 1 / buckets, which no design of a hash table avoids.
#define FILLER 500
static void make_dir(void)
{
    char path[sizeof DIR + 16];
    if (mkdir(DIR, 0755) != 0)
        die("mkdir " DIR);
    for (int i = 0; i < FILLER; i++) {
        snprintf(path, sizeof path, DIR "/f%d", i);
        make_file(path);
    }
}

static void call_stat(int side)
{
    if (stat(name('s', side), &st[side].st) != 0)
        die("stat");
}

static void prepare_creat(void)
{
    unlink(name('n', 0)), unlink(name('n', 1));
}
static void call_creat_excl(int side)
{
    if ((own_fd[side] = open(name('n', side), O_CREAT | O_EXCL | O_WRONLY, 0600)) < 0)
        die("open O_CREAT|O_EXCL");
}
static void call_creat_excl_anyfd(int side)
{
    own_fd[side] = open(name('n', side), O_CREAT | O_EXCL | O_WRONLY | O_ANYFD, 0600);
    if (own_fd[side] < 0)
        die("open O_CREAT|O_EXCL|O_ANYFD");
}

static void prepare_unlink(void)
{
    make_file(name('u', 0)), make_file(name('u', 1));
}
static void call_unlink(int side)
{
    if (unlink(name('u', side)) != 0)
        die("unlink");
}

static void prepare_mkdir(void)
{
    rmdir(name('m', 0)), rmdir(name('m', 1));
}
static void call_mkdir(int side)
{
    if (mkdir(name('m', side), 0755) != 0)
        die("mkdir");
}

// Each side renames its own name to another new name.
static char renamed[2][sizeof DIR + 3];
static void prepare_rename(void)
{
    for (int side = 0; side < 2; side++) {
        snprintf(renamed[side], sizeof renamed[side], DIR "/t%d", side);
        unlink(renamed[side]);
        make_file(name('r', side));
    }
}
static void call_rename(int side)
{
    if (rename(name('r', side), renamed[side]) != 0)
        die("rename");
}

static void prepare_link(void)
{
    unlink(name('l', 0)), unlink(name('l', 1));
}
static void call_link(int side)
{
    if (link(name('s', side), name('l', side)) != 0)
        die("link");
}

static void call_open_rdonly(int side)
{
    if ((own_fd[side] = open(name('s', side), O_RDONLY)) < 0)
        die("open");
}
static void call_open_same_rdonly(int side)
{
    if ((own_fd[side] = open(name('s', 0), O_RDONLY)) < 0)
        die("open");
}
static void call_stat_same(int side)
{
    if (stat(name('s', 0), &st[side].st) != 0)
        die("stat");
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
static void close_pipe_side(int side)
{
    (void)side;
    close(pipefd[0]), close(pipefd[1]);
}

static void call_creat_same(int side)
{
    if ((own_fd[side] = open(name('n', 0), O_CREAT | O_WRONLY, 0600)) < 0)
        die("open O_CREAT");
}

static const struct pair pairs[] = {
    { "stat-other-name-2proc", "stat", "stat", 0, "private", nothing, call_stat,
      nothing_side },
    { "stat-other-name-2thread", "stat", "stat", 1, "private", nothing, call_stat,
      nothing_side },
    { "creat-excl-other-name-2proc", "open", "open", 0, "private", prepare_creat,
      call_creat_excl, close_own },
    { "creat-excl-anyfd-other-name-2thread", "open", "open", 1, "private", prepare_creat,
      call_creat_excl_anyfd, close_own },
    { "unlink-other-name-2proc", "unlink", "unlink", 0, "private", prepare_unlink,
      call_unlink, nothing_side },
    { "mkdir-other-name-2proc", "mkdir", "mkdir", 0, "private", prepare_mkdir, call_mkdir,
      nothing_side },
    { "rename-other-names-2proc", "rename", "rename", 0, "private", prepare_rename,
      call_rename, nothing_side },
    { "link-other-names-2proc", "link", "link", 0, "private", prepare_link, call_link,
      nothing_side },
    { "open-other-name-2proc", "open", "open", 0, "private", nothing, call_open_rdonly,
      close_own },
    { "open-same-name-2proc", "open", "open", 0, "private", nothing, call_open_same_rdonly,
      close_own },
    { "stat-same-name-2proc", "stat", "stat", 0, "private", nothing, call_stat_same,
      nothing_side },
    { "write-same-pipe-2proc", "write", "write", 0, "shared", make_pipe, call_write_pipe,
      close_pipe_side },
    { "creat-same-name-2proc", "open", "open", 0, "shared", prepare_creat, call_creat_same,
      close_own },
};

// Side 1, on CPU 1: say ready, wait for the go, run the call in its window.
struct side1 {
    const struct pair *p;
    int ready[2], go[2];
};

static void *run_side1(void *arg)
{
    struct side1 *s = arg;
    char c;
    pin(1);
    own_pages(1);
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
    own_pages(0);
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
}

int main(void)
{
    if (mmap((void *)MTRACE_BASE, MTRACE_SIZE, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_POPULATE, -1, 0)
        != (void *)MTRACE_BASE)
        die("mmap marker region");
    // Each CPU's partition of the fd table is made at its first O_ANYFD open.
    for (int cpu = 1; cpu >= 0; cpu--) {
        pin(cpu);
        int fd = open("/dev/null", O_RDONLY | O_ANYFD);
        if (fd < 0)
            die("open /dev/null");
        close(fd);
    }
    make_dir();
    make_file(name('s', 0)), make_file(name('s', 1));
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
