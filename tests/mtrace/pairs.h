// The harness of the mtrace guest programs (tests/mtrace/validate.c, which runs
// on Linux and ours, and scalefs.c and fds.c, on ours): each pair of calls runs as one mtrace test,
// call 0 on CPU 0 and call 1 on CPU 1, one after the other, PAIRS_REPEAT times,
// and prints the line tools/mtrace/validate reads:
//   mtrace-test ID CALL0 CALL1 NAME expect=shared|private|bytes-private
// A program defines its pairs and calls pairs_run(). Single translation unit.
#pragma once
#define _GNU_SOURCE
#include "../../tools/mtrace/markers.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef O_ANYFD
#define O_ANYFD 040000000                 // kernel/uapi/ext.h
#endif

#define PAIRS_REPEAT 5                    // runs per pair: the verdict must be stable

struct pair {
    const char *name, *call0, *call1;
    int threads;                          // 1: two threads of one process; 0: two processes
    const char *expect;                   // shared, private, or bytes-private: no byte
                                          // shared, lines may be (false sharing)
    void (*prepare)(void);                // before the fork / thread, outside windows
    void (*setup)(int side);              // on the side's CPU, before its window (or NULL)
    void (*call)(int side);               // the traced call
    void (*cleanup)(int side);            // on the side's CPU, after its window (or NULL)
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

// After a fork, parent and child share their data and stack pages copy-on-
// write: the first store to one in a window would copy it there, and the two
// copies touch the shared page's metadata. Each side writes its stack, and the
// program's own_data(side) the data its call writes, before its window.
static void own_data(int side);
static void own_pages(int side)
{
    volatile char stack[16384];
    for (size_t i = 0; i < sizeof stack; i += 64)
        stack[i] = 0;
    own_data(side);
}

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
    own_pages(1);
    if (s->p->setup)
        s->p->setup(1);
    if (write(s->ready[1], "r", 1) != 1 || read(s->go[0], &c, 1) != 1)
        die("side 1 sync");
    mtrace_open(1);
    s->p->call(1);
    mtrace_close(1);
    if (s->p->cleanup)
        s->p->cleanup(1);
    return NULL;
}

static void run_pair(const struct pair *p, unsigned long id)
{
    struct side1 s = { .p = p };
    pthread_t thread;
    pid_t child = 0;
    char c;
    if (p->prepare)
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
    if (p->setup)
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
    if (p->cleanup)
        p->cleanup(0);
    close(s.ready[0]), close(s.ready[1]), close(s.go[0]), close(s.go[1]);
}

// Maps the marker region, then runs every pair PAIRS_REPEAT times.
static void pairs_map(void)
{
    if (mmap((void *)MTRACE_BASE, MTRACE_SIZE, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_POPULATE, -1, 0)
        != (void *)MTRACE_BASE)
        die("mmap marker region");
    // Each CPU's partition of the fd table is made at its first O_ANYFD open:
    // once per process and CPU, so do it here rather than in a window.
    for (int cpu = 1; cpu >= 0; cpu--) {
        pin(cpu);
        int fd = open("/dev/null", O_RDONLY | O_ANYFD);
        if (fd < 0)
            die("open /dev/null");
        close(fd);
    }
}

static void pairs_run(const struct pair *pairs, size_t n)
{
    unsigned long id = 0;
    for (size_t i = 0; i < n; i++) {
        for (int r = 0; r < PAIRS_REPEAT; r++, id++) {
            printf("mtrace-test %lu %s %s %s expect=%s\n", id, pairs[i].call0, pairs[i].call1,
                   pairs[i].name, pairs[i].expect);
            fflush(stdout);
            run_pair(&pairs[i], id);
        }
    }
}
