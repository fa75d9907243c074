// The system-call fuzzer (tests/README.md, "Fuzzer"): what its four files share.
//
//   fuzz.c    options, the supervisor: starts workers, restarts those that die,
//             watches their progress counters, kills them at the end, removes the
//             directory and compares the kernel's net page count
//   worker.c  one worker process: its memory, fds and threads, and the loop that
//             makes one random call after another
//   calls.c   the table of system calls, and those that need more than the
//             generic arguments (processes, signals, memory)
//   args.c    the random sequence and the argument generators
//
// Everything the supervisor learns from a worker is in `struct shared`, a
// MAP_SHARED mapping made before the first fork: a worker can die at any point
// and the supervisor still knows how far each of its threads got.
#pragma once
#define _GNU_SOURCE
#include "../kernel/progs/raw.h" // raw6, raw_spawn
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>

#define FUZZ_MAX_WORKERS 16
#define FUZZ_MAX_THREADS 4
#define FUZZ_MAX_CHILDREN 16 // forked children a worker remembers, for the supervisor to kill
#define PG 4096L
#define LOG_FD 1000 // where a replay's workers log their calls (-v)

enum slot_state { SLOT_UNUSED, SLOT_USER, SLOT_CALL, SLOT_EXITED };

// One fuzzing thread, written by it, read by the supervisor. A line of its own:
// threads bump their counters on different CPUs.
struct slot {
    volatile uint64_t calls; // calls started: the progress counter and the call index
    volatile int call;       // the table index of the call in progress
    volatile int state;      // enum slot_state
    volatile int tid;
} __attribute__((aligned(64)));

struct worker_rec {
    volatile int pid;
    volatile int gen; // how many times this worker has been (re)started, from 0
    volatile int children[FUZZ_MAX_CHILDREN]; // pids it forked (a ring)
    volatile unsigned nchildren;
    volatile long bad_ret;     // an impossible result (an errno beyond 133), or 0
    volatile int bad_call, bad_thread;
    volatile uint64_t bad_index;
    struct slot slot[FUZZ_MAX_THREADS];
};

struct shared {
    struct worker_rec w[FUZZ_MAX_WORKERS];
};

// The run's settings, fixed before the first worker starts.
struct config {
    uint64_t seed;
    int workers, threads;
    int seconds;
    bool exhaust;          // memory exhaustion: workers also map and fill big regions
    bool verbose;          // print every call (replays)
    int only_worker;       // replay: this worker (-1: all) ...
    int only_gen;          // ... in this generation
    uint64_t max_calls;    // replay: each thread stops after this many calls (0: no limit)
    uint64_t call_mask[2]; // the calls of the table it may make (-c, -x); all by default
    int supervisor_pid;    // never a target of kill, setpgid, prlimit
    int supervisor_pgid;
    int parent_pid;        // (its parent, the shell that started it: neither)
    char dir[64];          // the directory every worker works in
};

extern struct config cfg;
extern struct shared *shared;

// args.c: the random sequence.
uint64_t mix(uint64_t a, uint64_t b);
uint64_t rnd(uint64_t *s);
static inline uint64_t below(uint64_t *s, uint64_t n) { return n ? rnd(s) % n : 0; }
static inline bool chance(uint64_t *s, unsigned percent) { return below(s, 100) < percent; }

// A fuzzing thread's state (one per thread; a forked child keeps its parent's copy).
struct fz {
    uint64_t rng;
    int worker, thread;
    bool child;            // a forked child: a short run of calls without process calls
    struct slot *slot;
    int npath;             // which of path[] the next path argument fills
    char path[2][PATH_MAX + 64];
    long ts[4];            // timespecs and other small inputs the generators point at
    long arg_lo;           // the last confined address ('a'), for 'L'
    long arg_hi;           // the end of its range
    long sigact[4];        // a struct sigaction for rt_sigaction
    long argv[3];          // execve's argv
};

// args.c: argument generators, one per letter of a call's signature (calls.c).
long gen_arg(struct fz *z, char kind);
long gen_pointer(struct fz *z);
long gen_pid(struct fz *z);
bool protected_pid(long pid);
long gen_signal(struct fz *z);
void scramble_window(struct fz *z);
void fd_remember(int fd);
int fd_pick(struct fz *z);

// worker.c: the process-wide state the generators draw from.
struct memory {
    long arena, arena_len;   // private pages, some unmapped: mmap/munmap/mprotect play here
    long shm, shm_len;       // the MAP_SHARED region every worker inherits
    long stable, stable_len; // buffers no call unmaps (a guard page follows)
    long brk0;               // the break at start: brk never goes below it
    long fs_base;            // the thread pointer arch_prctl may set back
    long restorer;           // the C library's signal return trampoline
};
extern struct memory mem;
void worker_main(int w, int gen);
void fuzz_thread_loop(struct fz *z);
void remember_child(int pid);
void remember_far(long addr, long len);
int sibling_pid(struct fz *z);

// calls.c
struct call {
    const char *name;
    long nr;
    const char *args; // one generator letter per argument (args.c)
    unsigned flags;
    long (*run)(struct fz *z, long a[6]); // calls that need more than raw(nr, a)
};
enum {
    BLOCKS = 1,  // may wait for ever on valid input: a stall is not a hang
    NOCHILD = 2, // not in forked children (process and group changes)
    RARE = 4,    // one time in twenty (calls that end the thread or process)
    RETFD = 8,   // returns a new fd: remember it
};
extern const struct call calls[];
extern const int ncalls;
long do_call(struct fz *z, int i);
bool call_allowed(long nr); // in the selection (-c, -x)
