// One fuzzer worker: a process the supervisor forks, with its own memory to
// play in, a few fds of the shared directory, and cfg.threads threads that each
// make random calls (calls.c) for ever, bumping their progress counter in the
// supervisor's shared mapping before each call. Its seed comes from the run's
// seed, its index and its generation (how many times it has been restarted);
// each thread's from that and the thread's index.
#include "fuzz.h"
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARENA_PAGES 32
#define STABLE_PAGES 4
#define CHILD_CALLS 16 // calls a forked child makes before it exits

struct memory mem;
static int my_worker;
static struct fz ctx[FUZZ_MAX_THREADS];

void remember_child(int pid)
{
    struct worker_rec *w = &shared->w[my_worker];
    unsigned i = __atomic_fetch_add(&w->nchildren, 1, __ATOMIC_RELAXED) % FUZZ_MAX_CHILDREN;
    w->children[i] = pid;
}

int sibling_pid(struct fz *z)
{
    return shared->w[below(&z->rng, (uint64_t)cfg.workers)].pid;
}

// A region of n usable pages followed by a PROT_NONE guard page, so that a
// huge length that starts inside it stops at the guard, not in our own data.
static long guarded(long n)
{
    char *p = mmap(NULL, (size_t)(n + 1) * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        raw6(SYS_exit_group, 3, 0, 0, 0, 0, 0);
    mprotect(p + n * PG, PG, PROT_NONE);
    return (long)p;
}

static void setup_memory(void)
{
    mem.stable = guarded(STABLE_PAGES);
    mem.stable_len = STABLE_PAGES * PG;
    mem.arena = guarded(ARENA_PAGES);
    mem.arena_len = ARENA_PAGES * PG;
    for (long i = 3; i < ARENA_PAGES; i += 4) // holes: buffers that straddle them
        munmap((void *)(mem.arena + i * PG), PG);
    mem.brk0 = raw6(SYS_brk, 0, 0, 0, 0, 0, 0);
    raw6(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, (long)&mem.fs_base, 0, 0, 0, 0);
}

// The console stays the supervisor's: our 0, 1 and 2 are /dev/null, and only a
// replay (-v) keeps a copy of it, at LOG_FD, for its log.
static void setup_fds(void)
{
    if (cfg.verbose)
        dup2(1, LOG_FD);
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; fd++)
        dup2(null, fd);
    raw6(SYS_close_range, 3, LOG_FD - 1, 0, 0, 0, 0);
    raw6(SYS_close_range, LOG_FD + 1, ~0U, 0, 0, 0, 0);
    if (chdir(cfg.dir) != 0)
        raw6(SYS_exit_group, 3, 0, 0, 0, 0, 0);
    static const char *const start[] = {"f0", "f1", "d0", "d0/f0", "n0"};
    for (unsigned i = 0; i < sizeof start / sizeof start[0]; i++) {
        int fd = open(start[i], i == 2 ? O_RDONLY | O_DIRECTORY : O_RDWR);
        if (fd >= 0)
            fd_remember(fd);
    }
    int p[2];
    if (pipe(p) == 0) {
        fd_remember(p[0]);
        fd_remember(p[1]);
    }
}

static void catch_signal(int sig) { (void)sig; }

// Caught signals, and the C library's signal return trampoline for
// rt_sigaction's restorer field.
static void setup_signals(void)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_UNBLOCK, &all, NULL);
    struct sigaction sa = {.sa_handler = catch_signal};
    static const int caught[] = {SIGUSR1, SIGUSR2, SIGWINCH, SIGURG, SIGALRM, 34, 40, 64};
    for (unsigned i = 0; i < sizeof caught / sizeof caught[0]; i++)
        sigaction(caught[i], &sa, NULL);
    long old[4];
    raw6(SYS_rt_sigaction, SIGUSR1, 0, (long)old, 8, 0, 0);
    mem.restorer = old[2];
}

static int pick_call(struct fz *z)
{
    for (;;) {
        int i = (int)below(&z->rng, (uint64_t)ncalls);
        if ((calls[i].flags & RARE) && !chance(&z->rng, 5))
            continue;
        if (z->child && (calls[i].flags & NOCHILD))
            continue;
        if (!(cfg.call_mask[i / 64] >> (i % 64) & 1))
            continue;
        return i;
    }
}

// Memory exhaustion (-m): map and fill 8 to 64 MiB, kept until the next few
// replace it (calls.c's ring of far mappings).
static void exhaust(struct fz *z)
{
    long len = (long)(8 + below(&z->rng, 57)) << 20;
    char *p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    for (long off = 0; off < len; off += PG)
        p[off] = 1;
    remember_far((long)p, len);
}

// Records why a call's result is impossible: errnos run from 1 to 133.
static void check_result(struct fz *z, int i, long r)
{
    if (r >= -133 || r < -4095 || calls[i].nr == SYS_mmap || calls[i].nr < 0)
        return;
    struct worker_rec *w = &shared->w[z->worker];
    w->bad_ret = r;
    w->bad_call = i;
    w->bad_thread = z->thread;
    w->bad_index = z->slot->calls;
}

void fuzz_thread_loop(struct fz *z)
{
    z->slot->tid = (int)raw6(SYS_gettid, 0, 0, 0, 0, 0, 0);
    z->slot->state = SLOT_USER;
    for (;;) {
        if (cfg.max_calls && z->slot->calls >= cfg.max_calls) {
            z->slot->state = SLOT_EXITED;
            raw6(SYS_exit, 0, 0, 0, 0, 0, 0);
        }
        int i = pick_call(z);
        z->slot->call = i;
        z->slot->calls++;
        z->slot->state = SLOT_CALL;
        long r = do_call(z, i);
        z->slot->state = SLOT_USER;
        check_result(z, i, r);
        if (z->slot->calls % 64 == 0) // reap what the calls left behind
            while (raw6(SYS_wait4, -1, 0, 1 /* WNOHANG */ | 0x40000000 /* __WALL */, 0, 0, 0) > 0)
                ;
        if (cfg.exhaust && chance(&z->rng, 1))
            exhaust(z);
    }
}

// A forked child: a few calls of its own (none that makes processes or moves
// groups), then it exits. Its progress is nobody's: it counts in a slot of its own.
void fuzz_child(struct fz *z)
{
    static struct slot own;
    own = *z->slot;
    z->slot = &own;
    z->child = true;
    z->rng = mix(z->rng, 0xc41d);
    for (int n = 0; n < CHILD_CALLS; n++) {
        own.calls++;
        do_call(z, pick_call(z));
    }
    raw6(SYS_exit_group, 0, 0, 0, 0, 0, 0);
}

static void *thread_start(void *arg)
{
    fuzz_thread_loop(arg);
    return NULL;
}

void worker_main(int w, int gen)
{
    my_worker = w;
    setpgid(0, 0); // a group of its own: kill(0, ...) never reaches the supervisor
    setup_signals();
    setup_memory();
    setup_fds();
    uint64_t seed = mix(mix(cfg.seed, (uint64_t)w), (uint64_t)gen);
    for (int t = 0; t < cfg.threads; t++) {
        ctx[t].rng = mix(seed, (uint64_t)t);
        ctx[t].worker = w;
        ctx[t].thread = t;
        ctx[t].slot = &shared->w[w].slot[t];
    }
    for (int t = 1; t < cfg.threads; t++) {
        pthread_t th;
        pthread_create(&th, NULL, thread_start, &ctx[t]);
    }
    fuzz_thread_loop(&ctx[0]);
}
