// Calibration program of mtrace's cost mode (tools/mtrace/cost.c), with answers
// known in advance; tools/mtrace/costcheck runs it under the plugin on both
// kernels (make test):
//   getpid          reads only the caller's own task: no transfer
//   private-counter each worker increments its own cache line: no transfer
//   shared-counter  every worker atomically increments one shared word: with
//                   W >= 2 workers taking turns, one transfer per operation
//                   (the line last written by another vCPU)
// Same command line as the scaling benchmark (user/bench/scale.c), so that
// `make bench-cost` can run either:
//   cost [-n ITERATIONS] [-w W1,W2,...] [--mark] [--list] [OP...]
// Worker i runs on CPU i and does ITERATIONS operations (default 1000) after a
// few unmeasured ones (cold misses are not the operation's cost); with --mark
// each is bracketed by mtrace_cost_begin/end and the op ids are named first
// ("cost-op ID NAME"). Prints "scale: OP W CPUS TOTAL_OPS ELAPSED_NS" per op and
// worker count. With several worker counts, each (op, W) has an op id of its
// own, named OP/W, so that one boot measures them apart (the plugin adds up
// per op id). Built against our libc; the same binary runs on Linux.
#define _GNU_SOURCE
#include "../../tools/mtrace/markers.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 256
#define WARMUP 8

struct line {
    _Alignas(64) unsigned long n;
};

static struct line shared_counter;
static struct line private_counter[MAX_WORKERS];

static void op_getpid(int w) { (void)w; syscall(SYS_getpid); }
static void op_private(int w) { __atomic_fetch_add(&private_counter[w].n, 1, __ATOMIC_SEQ_CST); }
static void op_shared(int w) { (void)w; __atomic_fetch_add(&shared_counter.n, 1, __ATOMIC_SEQ_CST); }

static const struct op {
    const char *name;
    void (*run)(int worker);
} ops[] = {
    { "getpid", op_getpid },
    { "private-counter", op_private },
    { "shared-counter", op_shared },
};
#define NOPS (sizeof ops / sizeof ops[0])

static long iterations = 1000;
static double settle; // -s: seconds to pause before the operations
static int mark;
static long cpus;                        // online; before pinning (sysconf may count the mask)

// One run of one op: the workers, and a barrier they all pass before starting.
struct run {
    const struct op *op;
    unsigned id;
    int workers;
    unsigned started;
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

static void work(struct run *r, int w)
{
    pin(w);
    for (int i = 0; i < WARMUP; i++)
        r->op->run(w);
    __atomic_fetch_add(&r->started, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&r->started, __ATOMIC_ACQUIRE) < (unsigned)r->workers)
        __asm__ volatile("pause");
    for (long i = 0; i < iterations; i++) {
        if (mark)
            mtrace_cost_begin(r->id);
        r->op->run(w);
        if (mark)
            mtrace_cost_end();
    }
}

struct worker_arg {
    struct run *run;
    int index;
};

static void *worker(void *arg)
{
    struct worker_arg *a = arg;
    work(a->run, a->index);
    return NULL;
}

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void run_op(const struct op *op, unsigned id, int workers)
{
    struct run r = { .op = op, .id = id, .workers = workers };
    pthread_t threads[MAX_WORKERS];
    struct worker_arg args[MAX_WORKERS];
    long long start = now_ns();
    for (int w = 1; w < workers; w++) {
        args[w] = (struct worker_arg){ &r, w };
        if (pthread_create(&threads[w], NULL, worker, &args[w]) != 0)
            die("pthread_create");
    }
    work(&r, 0);
    for (int w = 1; w < workers; w++)
        pthread_join(threads[w], NULL);
    printf("scale: %s %d %ld %ld %lld\n", op->name, workers,
           cpus, iterations * workers, now_ns() - start);
    fflush(stdout);
}

static int parse_workers(char *list, int *w)
{
    int n = 0;
    for (char *s = strtok(list, ","); s && n < 64; s = strtok(NULL, ","))
        w[n++] = atoi(s);
    return n;
}

static void usage(void)
{
    fprintf(stderr, "usage: cost [-n ITERATIONS] [-s SECONDS] [-w W1,W2,...] [--mark] [--list] [OP...]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int workers[64] = { 1 }, nworkers = 1;
    cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            iterations = atol(argv[++i]);
        else if (strcmp(argv[i], "-w") == 0 && i + 1 < argc)
            nworkers = parse_workers(argv[++i], workers);
        else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
            settle = atof(argv[++i]); // as scale's -s: a pause before the operations
        else if (strcmp(argv[i], "--mark") == 0)
            mark = 1;
        else if (strcmp(argv[i], "--list") == 0) {
            for (unsigned id = 0; id < NOPS; id++)
                printf("%s\n", ops[id].name);
            return 0;
        } else
            usage();
    }
    int selected[NOPS] = { 0 }, any = i < argc;
    for (; i < argc; i++) {
        unsigned id = 0;
        while (id < NOPS && strcmp(ops[id].name, argv[i]) != 0)
            id++;
        if (id == NOPS)
            usage();
        selected[id] = 1;
    }
    for (int k = 0; k < nworkers; k++) {
        if (workers[k] < 1 || workers[k] > cpus || workers[k] > MAX_WORKERS) {
            fprintf(stderr, "cost: %d workers: this machine has %ld CPUs\n", workers[k], cpus);
            return 2;
        }
    }
    if (mark &&
        mmap((void *)MTRACE_BASE, MTRACE_SIZE, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_POPULATE, -1, 0)
        != (void *)MTRACE_BASE)
        die("mmap marker region");
    if (settle > 0) {
        struct timespec ts = {(time_t)settle, (long)((settle - (time_t)settle) * 1e9)};
        nanosleep(&ts, NULL);
    }
    for (int k = 0; k < nworkers; k++) {
        for (unsigned o = 0; o < NOPS; o++) {
            if (!selected[o] && any)
                continue;
            unsigned id = o + k * NOPS;
            if (mark && nworkers == 1)
                printf("cost-op %u %s\n", id, ops[o].name);
            else if (mark)
                printf("cost-op %u %s/%d\n", id, ops[o].name, workers[k]);
            fflush(stdout);
            run_op(&ops[o], id, workers[k]);
        }
    }
    return 0;
}
