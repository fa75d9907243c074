// Multicore scaling: W workers, pinned one per CPU, repeat one operation for a
// fixed time (or a fixed count); the figure is operations per second per CPU.
// Every operation but the calibration one commutes across workers: each worker
// has its own names, descriptors and memory, so a kernel that follows the
// scalable commutativity rule can run them without sharing a cache line, and
// the per-CPU rate with W workers should equal the rate of one worker.
// One static binary (our libc) that runs the same on our kernel and on Linux:
// `make bench-scale` runs it on both in one QEMU (tools/benchscale).
//
//   scale [-d SECONDS] [-n ITERATIONS] [-s SECONDS] [-W WARMUP] [-w W1,W2,...] [--mark]
//         [--list] [OP...]
//
// -d runs each operation for SECONDS (default 1); -n instead makes each worker
// run exactly ITERATIONS operations. -s lets the workers start only SECONDS
// after they have set up (default 0): time for the CPUs that started the
// program to go idle (on our kernel an idle CPU then leaves the set of CPUs
// whose per-CPU counts exact reads visit: proc/tickless.c). -W makes every
// worker first run WARMUP operations, all workers at once, unmeasured and
// unmarked; the measured ones start when all are done: what a structure's
// first contact with this load costs (a directory spreading its names for the
// CPUs that meet in it, a first look at the page tables other CPUs made) is
// then left out, as on hardware a one-second run all but leaves it out; under
// the plugin, where 64 vCPUs share a host thread, the spreading alone lasts
// half of a run of 100 renames per worker. -w lists the worker counts (default 1 and
// the number of CPUs this process may run on); worker i runs on the i-th of
// those CPUs (CPU i in a guest). OPs name the operations (default: all); --list
// prints them with a description each. Every operation runs with the first
// worker count, then every one with the next (main). Per operation and worker
// count, one line
//   scale: OP W CPUS TOTAL_OPS ELAPSED_NS
// (TOTAL_OPS over all workers; ELAPSED_NS from the first worker's start to the
// last one's end), or `scale: OP skipped REASON` for an operation this kernel
// lacks. --mark maps the marker region of tools/mtrace/markers.h, prints
// `cost-op ID NAME` once per operation (ID: its index in the table below) and
// brackets each single operation of each worker with mtrace_cost_begin(ID) and
// mtrace_cost_end(), on the worker's own CPU (make bench-cost counts
// instructions and cache-line transfers inside those windows).
//
// The workers set up (their own files, pipes, ...), meet at a barrier, run,
// and stop when a coordinator (the main thread or process, asleep meanwhile)
// raises a flag. Each control word sits on a line of its own, so the only
// lines the workers share are the flag's (read by all, written once) and the
// calibration op's counter.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../../kernel/uapi/ext.h"
#include "../../tools/mtrace/markers.h"

#define MAX_WORKERS 256
#define MAX_RUNS 16         // worker counts in -w
#define PAGE 4096L
#define SLICE_PAGES 16      // a worker's pages in the one-region operations
#define SLICE (SLICE_PAGES * PAGE)
#define MMAP_PAGES 4        // mmap-munmap's mapping

extern char **environ;

// ---- what the workers share with the coordinator ----------------------------

struct slot {               // one worker's result, on lines of its own
    long ops;
    long long t0, t1;       // CLOCK_MONOTONIC ns: first operation, after the last
    int err;                // errno that stopped it, 0 if none
    int in_setup;           // err came from its setup
} __attribute__((aligned(64)));

struct control {
    int arrived __attribute__((aligned(64)));  // workers done with their setup
    int go __attribute__((aligned(64)));       // 1: run; -1: a setup failed, stop
    int warmed __attribute__((aligned(64)));   // workers done with their warm-up
    int measure __attribute__((aligned(64)));  // all are: start the measured operations
    long warmup;                               // -W, set before the workers start
    int stop __attribute__((aligned(64)));     // the time is up
    long counter __attribute__((aligned(64))); // shared-counter's word
    struct slot slot[MAX_WORKERS];
};

// Shared memory: a memfd mapped MAP_SHARED, so that worker processes, which
// exec this program afresh (run), map it too and report here.
static struct control *ctl;
static int ctl_fd;

// ---- settings ------------------------------------------------------------------

static double seconds = 1;
static long iterations;             // 0: run for `seconds`
static double settle;               // -s: seconds between set-up and start
static long warmup;                 // -W: unmeasured operations per worker first
static bool mark;
static bool ours;                   // running on our kernel (uname release *-scalable)
static const char *self;            // our own path, for the exec operations
static char dir[64];                // scratch directory, /tmp/scale.XXXXXX
static int cpus[MAX_WORKERS];       // the CPUs we may run on; worker i gets cpus[i]
static int ncpus;
static char *region;                // touch-dontneed's and unmap-async's pages
static char *const child_argv[] = {"scale", "--exit", NULL};

// ---- the operations ------------------------------------------------------------

struct worker {
    int id;
    int fd;
    int pipefd[2];
    int flip;               // rename: which of its two names the file has
    char *mem;              // its slice of the region
    off_t off;              // its pages of the shared file
    char path[96], path2[96];
};

static int fail(void) { return errno ? errno : EIO; }

static int op_getpid(struct worker *w)
{
    (void)w;
    syscall(SYS_getpid); // not getpid(): a libc may cache it
    return 0;
}

static int create(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return fail();
    close(fd);
    return 0;
}

// Its own file in the one shared directory.
static int setup_own_file(struct worker *w)
{
    snprintf(w->path, sizeof w->path, "%s/d/f%d", dir, w->id);
    return create(w->path);
}

static void teardown_unlink(struct worker *w) { unlink(w->path); }

static int setup_shared_file(struct worker *w)
{
    snprintf(w->path, sizeof w->path, "%s/shared", dir);
    return 0;
}

static int op_stat(struct worker *w)
{
    struct stat st;
    return stat(w->path, &st) ? fail() : 0;
}

static int open_close(struct worker *w, int flags)
{
    int fd = open(w->path, O_RDONLY | flags);
    if (fd < 0)
        return fail();
    return close(fd) ? fail() : 0;
}

static int op_open_close(struct worker *w) { return open_close(w, 0); }
static int op_open_anyfd(struct worker *w) { return open_close(w, O_ANYFD); }

static const char *no_anyfd(void)
{
    // Linux ignores the flag (lowest free descriptor): nothing to measure.
    return ours ? NULL : "O_ANYFD is ours (this kernel ignores it)";
}

static int setup_creat_shared_dir(struct worker *w)
{
    snprintf(w->path, sizeof w->path, "%s/d/c%d", dir, w->id);
    unlink(w->path);
    return 0;
}

static int setup_creat_own_dir(struct worker *w)
{
    snprintf(w->path2, sizeof w->path2, "%s/w%d", dir, w->id);
    if (mkdir(w->path2, 0755) && errno != EEXIST)
        return fail();
    snprintf(w->path, sizeof w->path, "%s/w%d/c", dir, w->id);
    unlink(w->path);
    return 0;
}

static void teardown_own_dir(struct worker *w)
{
    unlink(w->path);
    rmdir(w->path2);
}

static int op_creat_unlink(struct worker *w)
{
    int fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return fail();
    close(fd);
    return unlink(w->path) ? fail() : 0;
}

// Own names in the shared directory for one file all workers share.
static int setup_link(struct worker *w)
{
    snprintf(w->path, sizeof w->path, "%s/d/l%d", dir, w->id);
    snprintf(w->path2, sizeof w->path2, "%s/linked", dir);
    unlink(w->path);
    return 0;
}

static int op_link_unlink(struct worker *w)
{
    if (link(w->path2, w->path))
        return fail();
    return unlink(w->path) ? fail() : 0;
}

static int setup_rename(struct worker *w)
{
    snprintf(w->path, sizeof w->path, "%s/d/ra%d", dir, w->id);
    snprintf(w->path2, sizeof w->path2, "%s/d/rb%d", dir, w->id);
    unlink(w->path2);
    return create(w->path);
}

static int op_rename(struct worker *w)
{
    const char *from = w->flip ? w->path2 : w->path, *to = w->flip ? w->path : w->path2;
    if (rename(from, to))
        return fail();
    w->flip ^= 1;
    return 0;
}

static void teardown_rename(struct worker *w)
{
    unlink(w->path);
    unlink(w->path2);
}

static void touch(char *p, int pages)
{
    for (int k = 0; k < pages; k++)
        *(volatile char *)(p + k * PAGE) = 1;
}

static int op_mmap_munmap(struct worker *w)
{
    (void)w;
    char *p = mmap(NULL, MMAP_PAGES * PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return fail();
    touch(p, MMAP_PAGES);
    return munmap(p, MMAP_PAGES * PAGE) ? fail() : 0;
}

static int setup_slice(struct worker *w)
{
    w->mem = region + w->id * SLICE;
    return 0;
}

static int op_touch_dontneed(struct worker *w)
{
    touch(w->mem, SLICE_PAGES);
    return madvise(w->mem, SLICE, MADV_DONTNEED) ? fail() : 0;
}

static int op_unmap_async(struct worker *w)
{
    if (mmap(w->mem, SLICE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
             -1, 0) != w->mem)
        return fail();
    touch(w->mem, SLICE_PAGES);
    return madvise(w->mem, SLICE, MADV_UNMAP_ASYNC) ? fail() : 0;
}

static int setup_pipe(struct worker *w) { return pipe(w->pipefd) ? fail() : 0; }

static void teardown_pipe(struct worker *w)
{
    close(w->pipefd[0]);
    close(w->pipefd[1]);
}

static int op_pipe(struct worker *w)
{
    char c = 'x';
    if (write(w->pipefd[1], &c, 1) != 1 || read(w->pipefd[0], &c, 1) != 1)
        return fail();
    return 0;
}

static int reap(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return fail();
    return st == 0 ? 0 : ECHILD;
}

static int op_spawn_wait(struct worker *w)
{
    (void)w;
    pid_t pid;
    int err = posix_spawn(&pid, self, NULL, NULL, child_argv, environ);
    return err ? err : reap(pid);
}

static int op_fork_exec_wait(struct worker *w)
{
    (void)w;
    pid_t pid = fork();
    if (pid < 0)
        return fail();
    if (pid == 0) {
        execve(self, child_argv, environ);
        _exit(127);
    }
    return reap(pid);
}

static int setup_faults(struct worker *w)
{
    char path[96];
    snprintf(path, sizeof path, "%s/faults", dir);
    w->fd = open(path, O_RDONLY);
    w->off = w->id * SLICE;
    return w->fd < 0 ? fail() : 0;
}

static void teardown_faults(struct worker *w) { close(w->fd); }

static int op_fault_shared_file(struct worker *w)
{
    char *p = mmap(NULL, SLICE, PROT_READ, MAP_SHARED, w->fd, w->off);
    if (p == MAP_FAILED)
        return fail();
    for (int k = 0; k < SLICE_PAGES; k++)
        (void)*(volatile char *)(p + k * PAGE);
    return munmap(p, SLICE) ? fail() : 0;
}

static int op_shared_counter(struct worker *w)
{
    (void)w;
    __atomic_fetch_add(&ctl->counter, 1, __ATOMIC_RELAXED);
    return 0;
}

// Things the coordinator makes for one run of W workers, and removes after.
static int prepare_region(int nworkers)
{
    region = mmap(NULL, nworkers * SLICE, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return region == MAP_FAILED ? fail() : 0;
}

static void finish_region(int nworkers) { munmap(region, nworkers * SLICE); }

static const char *no_unmap_async(void)
{
    // Linux rejects the advice it does not know: EINVAL.
    char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return "mmap failed";
    int r = madvise(p, PAGE, MADV_UNMAP_ASYNC);
    munmap(p, PAGE);
    return r == 0 ? NULL : "no MADV_UNMAP_ASYNC on this kernel";
}

static int prepare_faults(int nworkers)
{
    static char page[PAGE];
    char path[96];
    snprintf(path, sizeof path, "%s/faults", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return fail();
    memset(page, 'p', sizeof page);
    for (long i = 0; i < nworkers * SLICE_PAGES; i++)
        if (write(fd, page, PAGE) != PAGE) {
            close(fd);
            return fail();
        }
    close(fd);
    return 0;
}

static void finish_faults(int nworkers)
{
    (void)nworkers;
    char path[96];
    snprintf(path, sizeof path, "%s/faults", dir);
    unlink(path);
}

enum kind { PROCS, THREADS };

static const struct op {
    const char *name;
    enum kind kind;
    const char *desc;
    const char *(*skip)(void);          // why this kernel cannot run it, or NULL
    int (*prepare)(int nworkers);       // coordinator, before the workers start
    void (*finish)(int nworkers);
    int (*setup)(struct worker *);      // each worker, before the barrier
    int (*op)(struct worker *);         // one operation: 0 or an errno
    void (*teardown)(struct worker *);
    bool calibration;                   // shares on purpose: not a commuting op
} ops[] = {
    {"getpid", PROCS, "getpid system call (processes)",
     NULL, NULL, NULL, NULL, op_getpid, NULL, false},
    {"stat-own", PROCS, "stat of its own file, all in one shared directory (processes)",
     NULL, NULL, NULL, setup_own_file, op_stat, teardown_unlink, false},
    {"stat-shared", PROCS, "stat of one file all workers share (processes)",
     NULL, NULL, NULL, setup_shared_file, op_stat, NULL, false},
    {"open-close-proc", PROCS, "open+close of its own file, one shared directory (processes)",
     NULL, NULL, NULL, setup_own_file, op_open_close, teardown_unlink, false},
    {"open-close-thread", THREADS, "open+close of its own file, one shared directory "
     "(threads of one process)",
     NULL, NULL, NULL, setup_own_file, op_open_close, teardown_unlink, false},
    {"open-anyfd-thread", THREADS, "open(O_ANYFD)+close of its own file (threads of one "
     "process; ours only)",
     no_anyfd, NULL, NULL, setup_own_file, op_open_anyfd, teardown_unlink, false},
    {"creat-unlink-shared-dir", PROCS, "create+close+unlink of its own name in one shared "
     "directory (processes)",
     NULL, NULL, NULL, setup_creat_shared_dir, op_creat_unlink, teardown_unlink, false},
    {"creat-unlink-own-dir", PROCS, "create+close+unlink of a name in its own directory "
     "(processes)",
     NULL, NULL, NULL, setup_creat_own_dir, op_creat_unlink, teardown_own_dir, false},
    {"link-unlink", PROCS, "link+unlink of its own name for one shared file, one shared "
     "directory (processes)",
     NULL, NULL, NULL, setup_link, op_link_unlink, teardown_unlink, false},
    {"rename", PROCS, "rename of its own file between two own names in one shared "
     "directory (processes)",
     NULL, NULL, NULL, setup_rename, op_rename, teardown_rename, false},
    {"mmap-munmap", THREADS, "mmap 4 anonymous pages + touch each + munmap (threads)",
     NULL, NULL, NULL, NULL, op_mmap_munmap, NULL, false},
    {"touch-dontneed", THREADS, "write its own 16 pages of one shared region + "
     "MADV_DONTNEED them (threads)",
     NULL, prepare_region, finish_region, setup_slice, op_touch_dontneed, NULL, false},
    {"touch-unmap-async", THREADS, "mmap its own 16 pages of one region (MAP_FIXED) + write "
     "each + MADV_UNMAP_ASYNC (threads; ours only)",
     no_unmap_async, prepare_region, finish_region, setup_slice, op_unmap_async, NULL, false},
    {"pipe", PROCS, "write+read one byte through its own pipe (processes)",
     NULL, NULL, NULL, setup_pipe, op_pipe, teardown_pipe, false},
    {"spawn-wait", PROCS, "posix_spawn of this program (exits at once) + waitpid (processes)",
     NULL, NULL, NULL, NULL, op_spawn_wait, NULL, false},
    {"fork-exec-wait", PROCS, "fork + execve of this program (exits at once) + waitpid "
     "(processes)",
     NULL, NULL, NULL, NULL, op_fork_exec_wait, NULL, false},
    {"fault-shared-file", PROCS, "mmap its own 16 pages of one shared file + read-fault "
     "each + munmap (processes)",
     NULL, prepare_faults, finish_faults, setup_faults, op_fault_shared_file,
     teardown_faults, false},
    {"shared-counter", THREADS, "calibration: atomic increment of one shared word in user "
     "space (threads; does not commute, shares by design)",
     NULL, NULL, NULL, NULL, op_shared_counter, NULL, true},
};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

// ---- workers and coordinator ---------------------------------------------------

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void sleep_ns(long long ns)
{
    struct timespec t = {ns / 1000000000LL, ns % 1000000000LL};
    while (nanosleep(&t, &t) && errno == EINTR)
        ;
}

static int pin(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof one, &one) ? fail() : 0;
}

// The markers are only addresses stored to (tools/mtrace/markers.h): a
// private region, in each worker process its own.
static int map_markers(void)
{
    void *m = mmap((void *)MTRACE_BASE, MTRACE_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (m != MAP_FAILED && m != (void *)MTRACE_BASE)
        munmap(m, MTRACE_SIZE); // a kernel that ignores MAP_FIXED_NOREPLACE
    if (m != (void *)MTRACE_BASE)
        m = mmap((void *)MTRACE_BASE, MTRACE_SIZE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    return m == (void *)MTRACE_BASE ? 0 : fail();
}

// -W: the worker's unmeasured operations, then the barrier before the
// measured ones (it arrives even if an operation failed, so that none waits
// for it).
static int warm_up(const struct op *op, struct worker *w)
{
    long n = ctl->warmup;
    if (n == 0)
        return 0;
    int err = 0;
    for (long i = 0; i < n && !err; i++)
        err = op->op(w);
    __atomic_fetch_add(&ctl->warmed, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&ctl->measure, __ATOMIC_ACQUIRE))
        sched_yield();
    return err;
}

static void worker_main(const struct op *op, int id)
{
    struct worker w = {.id = id, .fd = -1};
    struct slot *s = &ctl->slot[id];
    unsigned opid = op - ops;
    int err = pin(cpus[id]);
    if (!err && op->setup)
        err = op->setup(&w);
    s->err = err;
    s->in_setup = err != 0;
    __atomic_fetch_add(&ctl->arrived, 1, __ATOMIC_RELEASE);
    int go;
    while ((go = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE)) == 0)
        sched_yield();
    if (go > 0 && !err) {
        long n = 0;
        err = warm_up(op, &w);
        s->t0 = now_ns();
        while (!err && (iterations ? n < iterations : !__atomic_load_n(&ctl->stop, __ATOMIC_RELAXED))) {
            if (mark)
                mtrace_cost_begin(opid);
            err = op->op(&w);
            if (mark)
                mtrace_cost_end();
            if (err)
                break;
            n++;
        }
        s->t1 = now_ns();
        s->ops = n;
        s->err = err;
    }
    if (op->teardown && !s->in_setup)
        op->teardown(&w);
}

struct thread_arg {
    const struct op *op;
    int id;
};

static void *thread_main(void *p)
{
    struct thread_arg *a = p;
    worker_main(a->op, a->id);
    return NULL;
}

// Lets the workers go once all have set up, and stops them after `seconds`.
static void coordinate(int nworkers)
{
    while (__atomic_load_n(&ctl->arrived, __ATOMIC_ACQUIRE) < nworkers)
        sleep_ns(1000000);
    bool failed = false;
    for (int i = 0; i < nworkers; i++)
        failed |= ctl->slot[i].err != 0;
    if (!failed && settle > 0)
        sleep_ns((long long)(settle * 1e9));
    if (mark)
        mtrace_cost_cold(); // count what the operations move, not boot's or set-up's writes
    __atomic_store_n(&ctl->go, failed ? -1 : 1, __ATOMIC_RELEASE);
    if (!failed && warmup) {
        while (__atomic_load_n(&ctl->warmed, __ATOMIC_ACQUIRE) < nworkers)
            sleep_ns(1000000);
        __atomic_store_n(&ctl->measure, 1, __ATOMIC_RELEASE);
    }
    if (!failed && !iterations) {
        sleep_ns((long long)(seconds * 1e9));
        __atomic_store_n(&ctl->stop, 1, __ATOMIC_RELEASE);
    }
}

// Worker id could not start: say why, and count it as arrived so that the
// coordinator does not wait for it.
static void setup_failed(int id, int err)
{
    ctl->slot[id].err = err;
    ctl->slot[id].in_setup = 1;
    __atomic_fetch_add(&ctl->arrived, 1, __ATOMIC_RELEASE);
}

// In a child of the coordinator: become worker id of op, a fresh image of
// this program (main's --worker). Should the exec fail, report it as the
// worker's set-up error.
static __attribute__((noreturn)) void exec_worker(const struct op *op, int id)
{
    char a[6][32];
    snprintf(a[0], sizeof a[0], "%d", (int)(op - ops));
    snprintf(a[1], sizeof a[1], "%d", id);
    snprintf(a[2], sizeof a[2], "%d", ctl_fd);
    snprintf(a[3], sizeof a[3], "%ld", iterations);
    snprintf(a[4], sizeof a[4], "%d", mark);
    snprintf(a[5], sizeof a[5], "%d", cpus[id]);
    char *argv[] = {(char *)self, "--worker", a[0], a[1], a[2], a[3], a[4], a[5], dir, NULL};
    execve(self, argv, environ);
    setup_failed(id, fail());
    _exit(127);
}

// main for `scale --worker OP ID CTLFD ITERATIONS MARK CPU DIR` (exec_worker).
static int worker_entry(char **argv)
{
    int opid = atoi(argv[2]), id = atoi(argv[3]);
    ctl_fd = atoi(argv[4]);
    iterations = atol(argv[5]);
    mark = atoi(argv[6]);
    snprintf(dir, sizeof dir, "%s", argv[8]);
    ctl = mmap(NULL, sizeof *ctl, PROT_READ | PROT_WRITE, MAP_SHARED, ctl_fd, 0);
    if (ctl == MAP_FAILED || id < 0 || id >= MAX_WORKERS)
        return 1;
    cpus[id] = atoi(argv[7]);
    if (opid < 0 || opid >= NOPS || (mark && map_markers())) {
        setup_failed(id, opid < 0 || opid >= NOPS ? EINVAL : fail());
        return 1;
    }
    worker_main(&ops[opid], id);
    return 0;
}

// Runs op with nworkers workers; 0 if every worker ran without error.
static int run(const struct op *op, int nworkers)
{
    memset(ctl, 0, sizeof *ctl);
    ctl->warmup = warmup;
    int err = op->prepare ? op->prepare(nworkers) : 0;
    if (err) {
        fprintf(stderr, "scale: %s: preparing %d workers: %s\n", op->name, nworkers,
                strerror(err));
        return 1;
    }
    fflush(stdout); // forked workers must not print our buffer again
    fflush(stderr);
    // A worker process runs this program afresh (exec_worker): forked from us
    // and no more, it would share our pages copy-on-write with every other
    // worker, and each fork of fork-exec-wait would count a reference on each
    // of them, a count the other workers' forks write too -- a cost of how the
    // workers were made, not of the operation (1,000 transfers per operation
    // on our kernel with 8 workers, 2 per page shared: docs/bench-cost.md).
    // Each worker is made from its own CPU and inherits it as its affinity (on
    // Linux too), so it never runs anywhere else, not even before it pins
    // itself. Otherwise an idle CPU may steal it first and keep per-CPU state
    // of it (on our kernel, a page table of the space that every unmap then
    // visits, refcache slots that exact reads visit for seconds): a cost of
    // the worker's history, not of the operation. Between runs this thread
    // stays on worker 0's CPU (main).
    if (op->kind == PROCS) {
        pid_t pids[MAX_WORKERS];
        int started = 0;
        for (; started < nworkers; started++) {
            if (pin(cpus[started]))
                break;
            pids[started] = fork();
            if (pids[started] == 0)
                exec_worker(op, started);
            if (pids[started] < 0)
                break;
        }
        if (started < nworkers || pin(cpus[0])) {
            err = fail();
            __atomic_store_n(&ctl->go, -1, __ATOMIC_RELEASE);
        } else {
            coordinate(nworkers);
        }
        for (int i = 0; i < started; i++)
            waitpid(pids[i], NULL, 0);
    } else {
        pthread_t t[MAX_WORKERS];
        struct thread_arg args[MAX_WORKERS];
        int started = 0;
        for (; started < nworkers; started++) {
            args[started] = (struct thread_arg){op, started};
            if ((err = pin(cpus[started])) ||
                (err = pthread_create(&t[started], NULL, thread_main, &args[started])))
                break;
        }
        if (pin(cpus[0]) && !err)
            err = fail();
        if (started < nworkers || err)
            __atomic_store_n(&ctl->go, -1, __ATOMIC_RELEASE);
        else
            coordinate(nworkers);
        for (int i = 0; i < started; i++)
            pthread_join(t[i], NULL);
    }
    if (op->finish)
        op->finish(nworkers);
    if (err) {
        fprintf(stderr, "scale: %s: starting %d workers: %s\n", op->name, nworkers,
                strerror(err));
        return 1;
    }
    long total = 0;
    long long t0 = 0, t1 = 0;
    for (int i = 0; i < nworkers; i++) {
        const struct slot *s = &ctl->slot[i];
        if (s->err) {
            fprintf(stderr, "scale: %s: worker %d (CPU %d): %s%s\n", op->name, i, cpus[i],
                    s->in_setup ? "setup: " : "", strerror(s->err));
            return 1;
        }
        total += s->ops;
        if (i == 0 || s->t0 < t0)
            t0 = s->t0;
        if (i == 0 || s->t1 > t1)
            t1 = s->t1;
    }
    printf("scale: %s %d %d %ld %lld\n", op->name, nworkers, ncpus, total, t1 - t0);
    fflush(stdout);
    return 0;
}

// ---- setup and command line ---------------------------------------------------

// The program's path for the exec operations: argv[0], or found on PATH.
static const char *find_self(const char *argv0)
{
    static char buf[256];
    if (strchr(argv0, '/'))
        return argv0;
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/bin:/usr/bin"; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, argv0);
        if (access(buf, X_OK) == 0)
            return buf;
        p += n + (p[n] == ':');
    }
    return argv0;
}

static int make_dir(void)
{
    char path[96];
    snprintf(dir, sizeof dir, "/tmp/scale.XXXXXX");
    if (!mkdtemp(dir))
        return fail();
    snprintf(path, sizeof path, "%s/d", dir);
    if (mkdir(path, 0755))
        return fail();
    snprintf(path, sizeof path, "%s/shared", dir);
    int err = create(path);
    snprintf(path, sizeof path, "%s/linked", dir);
    return err ? err : create(path);
}

static void remove_dir(void)
{
    char path[96];
    static const char *const names[] = {"shared", "linked", "faults", "d"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (unlink(path))
            rmdir(path);
    }
    rmdir(dir);
}

static int usage(void)
{
    fprintf(stderr, "usage: scale [-d SECONDS] [-n ITERATIONS] [-s SECONDS] [-W WARMUP] "
                    "[-w W1,W2,...] [--mark] [--list] [OP...]\n");
    return 2;
}

// "1,2,16" -> counts; 0 on a malformed list or a count outside 1..ncpus.
static int parse_workers(const char *s, int *counts)
{
    int n = 0;
    while (*s && n < MAX_RUNS) {
        char *end;
        long w = strtol(s, &end, 10);
        if (end == s || w < 1 || w > ncpus || (*end && *end != ',')) {
            fprintf(stderr, "scale: -w: worker counts are 1..%d (the CPUs we may use)\n", ncpus);
            return 0;
        }
        counts[n++] = w;
        s = *end ? end + 1 : end;
    }
    return *s ? 0 : n;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--exit") == 0)
        return 0; // the exec operations' child
    self = find_self(argv[0]);
    if (argc == 9 && strcmp(argv[1], "--worker") == 0)
        return worker_entry(argv);
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        perror("scale: sched_getaffinity");
        return 1;
    }
    for (int c = 0; c < CPU_SETSIZE && ncpus < MAX_WORKERS; c++)
        if (CPU_ISSET(c, &allowed))
            cpus[ncpus++] = c;
    if (ncpus == 0 || pin(cpus[0])) { // set-up and tear-down run where worker 0 does (run)
        perror("scale: sched_setaffinity");
        return 1;
    }

    int counts[MAX_RUNS] = {1, ncpus}, nruns = ncpus > 1 ? 2 : 1;
    bool list = false, chosen[NOPS] = {false}, any = false;
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "--mark") == 0) {
            mark = true;
        } else if (strcmp(arg, "--list") == 0) {
            list = true;
        } else if ((strcmp(arg, "-d") == 0 || strcmp(arg, "-n") == 0 || strcmp(arg, "-w") == 0 ||
                    strcmp(arg, "-s") == 0 || strcmp(arg, "-W") == 0)) {
            if (a + 1 >= argc)
                return usage();
            const char *v = argv[++a];
            char *end;
            if (arg[1] == 'd') {
                seconds = strtod(v, &end);
                if (*end || !(seconds > 0))
                    return usage();
            } else if (arg[1] == 'n') {
                iterations = strtol(v, &end, 10);
                if (*end || iterations < 1)
                    return usage();
            } else if (arg[1] == 'W') {
                warmup = strtol(v, &end, 10);
                if (*end || warmup < 0)
                    return usage();
            } else if (arg[1] == 's') {
                settle = strtod(v, &end);
                if (*end || !(settle >= 0))
                    return usage();
            } else if (!(nruns = parse_workers(v, counts))) {
                return usage();
            }
        } else if (arg[0] == '-') {
            return usage();
        } else {
            int i = 0;
            while (i < NOPS && strcmp(ops[i].name, arg) != 0)
                i++;
            if (i == NOPS) {
                fprintf(stderr, "scale: no operation %s (--list names them)\n", arg);
                return 2;
            }
            chosen[i] = any = true;
        }
    }
    if (list) {
        for (int i = 0; i < NOPS; i++)
            printf("%-24s %s\n", ops[i].name, ops[i].desc);
        return 0;
    }

    struct utsname u;
    ours = uname(&u) == 0 && strstr(u.release, "scalable") != NULL;
    ctl_fd = memfd_create("scale-control", 0); // not close-on-exec: the workers map it
    if (ctl_fd < 0 || ftruncate(ctl_fd, sizeof *ctl) != 0) {
        perror("scale: memfd_create");
        return 1;
    }
    ctl = mmap(NULL, sizeof *ctl, PROT_READ | PROT_WRITE, MAP_SHARED, ctl_fd, 0);
    if (ctl == MAP_FAILED) {
        perror("scale: mmap");
        return 1;
    }
    if (mark && map_markers()) {
        perror("scale: mapping the mtrace markers");
        return 1;
    }
    int err = make_dir();
    if (err) {
        fprintf(stderr, "scale: scratch directory %s: %s\n", dir, strerror(err));
        return 1;
    }
    printf("# scale: %s kernel %s, %d CPUs, ", ours ? "our" : "other", u.release, ncpus);
    if (iterations)
        printf("%ld operations per worker\n", iterations);
    else
        printf("%g s per operation and worker count\n", seconds);
    // Every operation with the first worker count, then every one with the
    // next: on our kernel the CPUs of a run with N workers stay in the kernel's
    // active set until they have idled a second, and a one-worker run right
    // after it would pay for visiting them in every exact read (a stat's).
    int status = 0;
    for (int r = 0; r < nruns; r++)
        for (int i = 0; i < NOPS; i++) {
            if (any && !chosen[i])
                continue;
            const char *why = ops[i].skip ? ops[i].skip() : NULL;
            if (why) {
                if (r == 0)
                    printf("scale: %s skipped %s\n", ops[i].name, why);
                continue;
            }
            if (mark && r == 0)
                printf("cost-op %d %s\n", i, ops[i].name);
            status |= run(&ops[i], counts[r]);
        }
    remove_dir();
    return status;
}
