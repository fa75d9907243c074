// The system-call fuzzer's supervisor (tests/README.md, "Fuzzer").
//
//   fuzz [-s SEED] [-t SECONDS] [-u WARMUP] [-w WORKERS] [-T THREADS] [-m] [-l PAGES]
//        [-c CALL,CALL... | -x CALL,CALL...]   (only those calls | all but those)
//   fuzz -s SEED -W WORKER -g GEN [-n CALLS] -v     (replay one worker)
//
// Makes a directory for the run, forks the workers (worker.c), and until the
// time is up: restarts workers that die; sends SIGCONT to, then kills, a worker
// with a thread whose progress counter has not moved for a while (a hang when
// that thread sits in a call that never waits, or when the worker outlives
// SIGKILL). Then it kills them all, removes the directory and compares the
// kernel's net page count (kstats: pages allocated minus pages freed, every
// CPU) with the count taken after a warm-up run (-u, a third of -t).
//
// Prints ok/not ok lines and a closing `N passed, N failed` like the suites;
// every failure names the seed, worker, generation, thread and call index that
// replay it. With no arguments it runs `make test`'s short fixed-seed run.
#include "fuzz.h"
#include "../stress/netpages.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STALL_S 10  // no progress for this long: SIGCONT; twice as long: judged and killed
#define REPORT_S 300 // a progress line this often
#define KILL_S 20   // a killed worker must be gone within this
#define SHM_PAGES 8

struct config cfg = {
    .seed = 1, .workers = 4, .threads = 2, .seconds = 24,
    .only_worker = -1, .only_gen = 0,
};
struct shared *shared;
static long leak_limit = -1; // pages (-1: 16 per worker; kernel caches grow with their number)
static int warmup = -1;       // seconds before the page count is taken (-1: a third of the run)

static int n_results, n_failed;

static void check(bool ok, const char *name)
{
    n_results++;
    n_failed += !ok;
    printf("%s %d - fuzz: %s\n", ok ? "ok" : "not ok", n_results, name);
    fflush(stdout);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
    nanosleep(&ts, NULL);
}

// ---- the directory ------------------------------------------------------------------

static void put_file(const char *name, const char *text, mode_t mode)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", cfg.dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd >= 0) {
        write(fd, text, strlen(text));
        close(fd);
    }
}

static void at(char *buf, const char *name)
{
    snprintf(buf, PATH_MAX, "%s/%s", cfg.dir, name);
}

// What the workers start from (args.c's names): files, directories, symlinks
// (one to a file, one to a directory, two in a loop), a FIFO, a null device,
// a #! script that runs /bin/true and an executable file of garbage.
static void make_tree(void)
{
    char p[PATH_MAX], q[PATH_MAX];
    mkdir("/tmp", 01777);
    mkdir(cfg.dir, 0777);
    static const char *const dirs[] = {"d0", "d1", "d2", "d0/d3"};
    for (unsigned i = 0; i < 4; i++) {
        at(p, dirs[i]);
        mkdir(p, 0755);
    }
    static const char *const files[] = {"f0", "f1", "f2", "f3", "d0/f0", "d0/f1", "d1/f2", "d0/d3/f0"};
    for (unsigned i = 0; i < 8; i++)
        put_file(files[i], "0123456789abcdefghijklmnopqrstuvwxyz\n", 0644);
    put_file("s0", "#!/bin/true\n", 0755);
    put_file("x0", "\177ELF garbage\n", 0755);
    static const char *const links[][2] = {{"f0", "l0"}, {"d0", "l1"}, {"l3", "l2"}, {"l2", "l3"}};
    for (unsigned i = 0; i < 4; i++) {
        at(q, links[i][1]);
        symlink(links[i][0], q);
    }
    at(p, "p0");
    raw6(SYS_mknod, (long)p, S_IFIFO | 0644, 0, 0, 0, 0); // (no mknod in our libc)
    at(p, "n0");
    raw6(SYS_mknod, (long)p, S_IFCHR | 0666, (long)makedev(1, 3), 0, 0, 0);
}

// Removes everything in the directory dirfd (which it closes). Names are taken
// relative to their directory, so depth and path length do not matter (the
// workers make chains of directories past PATH_MAX), and a directory that
// keeps an entry costs one more pass of its own, not one per ancestor.
static void empty_dir(int dirfd)
{
    DIR *d = fdopendir(dirfd);
    if (!d) {
        close(dirfd);
        return;
    }
    for (int pass = 0; pass < 3; pass++) { // removing while reading may skip names
        bool left = false;
        rewinddir(d);
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            if (unlinkat(dirfd, e->d_name, 0) == 0)
                continue;
            fchmodat(dirfd, e->d_name, 0700, 0); // modes may have been changed to 0
            int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            if (sub >= 0)
                empty_dir(sub);
            left |= unlinkat(dirfd, e->d_name, AT_REMOVEDIR) != 0;
        }
        if (!left)
            break;
    }
    closedir(d);
}

// Removes path and everything under it.
static int remove_tree(const char *path)
{
    chmod(path, 0700);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? 0 : unlink(path);
    empty_dir(fd);
    return rmdir(path);
}

// ---- workers -------------------------------------------------------------------------

struct watch {
    uint64_t last[FUZZ_MAX_THREADS];
    double since[FUZZ_MAX_THREADS];
    int stage;         // 0 running, 1 sent SIGCONT, 2 sent SIGKILL, 3 reported unkillable
    double killed_at;
    long utime[FUZZ_MAX_THREADS], stime[FUZZ_MAX_THREADS]; // CPU time when SIGCONT went
};

static struct watch watch[FUZZ_MAX_WORKERS];
// The workers' pids as fork returned them. The copies in `shared` are for the
// workers to aim at; a worker running on garbage registers (rt_sigreturn with
// no frame, a handler at a random address) may have overwritten them.
static int worker_pid[FUZZ_MAX_WORKERS], worker_gen[FUZZ_MAX_WORKERS];
// Every worker's pid is the id of the group it made; its children stay there
// (they make no calls that move them), also after it died.
#define MAX_GROUPS 8192
static int groups[MAX_GROUPS];
static int ngroups;

// Sends SIGKILL to what is left of a dead worker's family: children blocked
// for ever, or stopped, would otherwise outlive the run and hold memory.
static void kill_group(int pgid)
{
    if (!protected_pid(pgid))
        kill(-pgid, SIGKILL);
}
static uint64_t total_calls;
static int restarts, hangs, unkillable, bad_results, stalls_killed;
static int deaths_by_signal[65];
static bool ending;

static void replay_hint(int w, int gen, int t, uint64_t call)
{
    printf("# replay: fuzz -s %llu -W %d -g %d -T %d -n %llu -v   (thread %d, call %llu)\n",
           (unsigned long long)cfg.seed, w, gen, cfg.threads, (unsigned long long)call, t,
           (unsigned long long)call);
}

static void start_worker(int w)
{
    struct worker_rec *r = &shared->w[w];
    memset((void *)r->slot, 0, sizeof r->slot);
    memset(&watch[w], 0, sizeof watch[w]);
    for (int t = 0; t < FUZZ_MAX_THREADS; t++)
        watch[w].since[t] = now();
    r->bad_ret = 0;
    r->gen = worker_gen[w]; // (for a replay's log)
    fflush(stdout);
    int pid = fork();
    if (pid == 0) {
        worker_main(w, worker_gen[w]);
        _exit(0);
    }
    worker_pid[w] = r->pid = pid > 0 ? pid : 0;
    if (pid > 0 && ngroups < MAX_GROUPS)
        groups[ngroups++] = pid;
}

static void note_bad_result(int w)
{
    struct worker_rec *r = &shared->w[w];
    if (!r->bad_ret)
        return;
    int c = r->bad_call;
    bad_results++;
    printf("# impossible result: worker %d gen %d thread %d call %llu (%s) returned %ld\n", w, worker_gen[w],
           r->bad_thread, (unsigned long long)r->bad_index, c >= 0 && c < ncalls ? calls[c].name : "?",
           r->bad_ret);
    replay_hint(w, worker_gen[w], r->bad_thread, r->bad_index);
    r->bad_ret = 0;
}

// Adds what each thread's counter moved since the last look. A thread that runs
// on garbage registers may write anything there: implausible moves count nothing.
static void account(int w)
{
    struct watch *wa = &watch[w];
    double t_now = now();
    for (int t = 0; t < cfg.threads; t++) {
        struct slot *s = &shared->w[w].slot[t];
        uint64_t c = s->calls;
        if (c == wa->last[t] && (s->state == SLOT_USER || s->state == SLOT_CALL))
            continue;
        if (c > wa->last[t] && c - wa->last[t] < 1000000)
            total_calls += c - wa->last[t];
        wa->last[t] = c;
        wa->since[t] = t_now;
    }
}

static void worker_gone(int w, int status)
{
    account(w);
    note_bad_result(w);
    if (WIFSIGNALED(status) && WTERMSIG(status) < 65)
        deaths_by_signal[WTERMSIG(status)]++;
    if (cfg.verbose)
        printf("# worker %d gen %d pid %d: %s %d\n", w, worker_gen[w], worker_pid[w],
               WIFSIGNALED(status) ? "killed by signal" : "exited with", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    kill_group(worker_pid[w]);
    worker_pid[w] = shared->w[w].pid = 0;
    if (ending || cfg.only_worker >= 0)
        return;
    worker_gen[w]++;
    restarts++;
    start_worker(w);
}

static void reap(void)
{
    int status, pid;
    while ((pid = waitpid(-1, &status, WNOHANG | WUNTRACED)) > 0) {
        int w = -1;
        for (int i = 0; i < cfg.workers; i++)
            if (worker_pid[i] == pid)
                w = i;
        if (w < 0)
            continue; // a clone whose exit signal came our way
        if (WIFSTOPPED(status))
            kill(pid, SIGCONT);
        else
            worker_gone(w, status);
    }
}

// A small /proc file of the worker's thread into buf ("" if it cannot be read).
static void read_task_file(int w, int tid, const char *name, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/%s", worker_pid[w], tid, name);
    buf[0] = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
}

// The thread's state letter from task/TID/stat ("PID (NAME) S ppid ..."), 0
// if gone, and its CPU time in user and kernel mode (fields 14 and 15).
static char task_state(int w, int tid, long *utime, long *stime)
{
    char buf[512];
    read_task_file(w, tid, "stat", buf, sizeof buf);
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ')
        return 0;
    long field[13] = {0}; // fields 4..15 after the state
    int n = 0;
    for (char *q = p + 4; n < 13 && *q; n++) {
        char *end;
        field[n] = strtol(q, &end, 10);
        q = *end ? end + 1 : end;
    }
    if (utime)
        *utime = field[10], *stime = field[11];
    return p[2];
}

// Where each thread of a worker is (for a hang report): its call, its state
// and, where the kernel shows it, where it waits in the kernel.
static void print_threads(int w)
{
    for (int t = 0; t < cfg.threads; t++) {
        struct slot *s = &shared->w[w].slot[t];
        int c = s->call, st = s->state;
        char state = task_state(w, s->tid, NULL, NULL);
        printf("#   thread %d (tid %d, state %c): call %llu, %s%s\n", t, s->tid, state ? state : '-',
               (unsigned long long)s->calls,
               st == SLOT_CALL ? "in " : st == SLOT_USER ? "in user code after " : "gone after ",
               c >= 0 && c < ncalls ? calls[c].name : "?");
        char stack[1024];
        read_task_file(w, s->tid, "stack", stack, sizeof stack);
        for (char *line = strtok(stack, "\n"); line; line = strtok(NULL, "\n"))
            printf("#     %s\n", line);
    }
}

// A thread whose counter has not moved for 2 * STALL_S: a hang if it is in a
// call that never waits; either way the worker is killed (and must die).
static void judge_stall(int w, int t)
{
    struct worker_rec *r = &shared->w[w];
    struct slot *s = &r->slot[t];
    int c = s->call;
    // Stopped again after our SIGCONT (by its own family's SIGSTOP), or it
    // has run in user mode since (so the call returned: a handler at a
    // garbage address faults for ever, entered as the call returned): no
    // hang in the call.
    long ut = 0, st = 0;
    char state = task_state(w, s->tid, &ut, &st);
    bool stopped = state == 'T';
    bool user_spin = state == 'R' && ut > watch[w].utime[t];
    if (s->state == SLOT_CALL && c >= 0 && c < ncalls && !(calls[c].flags & BLOCKS) && !stopped &&
        !user_spin) {
        hangs++;
        printf("# hang: worker %d gen %d thread %d call %llu (%s) made no progress for %d s\n", w, worker_gen[w],
               t, (unsigned long long)s->calls, calls[c].name, 2 * STALL_S);
        replay_hint(w, worker_gen[w], t, s->calls);
        print_threads(w);
    } else {
        stalls_killed++;
        if (cfg.verbose)
            printf("# worker %d gen %d thread %d %s in %s: killed\n", w, worker_gen[w], t,
                   stopped ? "stopped" : user_spin ? "spins in user mode after" : "waits",
                   s->state == SLOT_CALL && c >= 0 && c < ncalls ? calls[c].name : "user code");
    }
}

static void watch_worker(int w)
{
    struct watch *wa = &watch[w];
    if (!worker_pid[w])
        return;
    double t_now = now();
    if (wa->stage >= 2) {
        if (wa->stage == 2 && t_now - wa->killed_at > KILL_S) {
            unkillable++;
            wa->stage = 3;
            printf("# hang: worker %d gen %d (pid %d) still there %d s after SIGKILL\n", w, worker_gen[w], worker_pid[w], KILL_S);
            print_threads(w);
        }
        return;
    }
    account(w);
    double worst = 0;
    int worst_t = -1;
    for (int t = 0; t < cfg.threads; t++) {
        if (t_now - wa->since[t] > worst) {
            worst = t_now - wa->since[t];
            worst_t = t;
        }
    }
    if (worst > STALL_S && wa->stage == 0) {
        kill(worker_pid[w], SIGCONT); // a stopped worker is no hang
        for (int t = 0; t < cfg.threads; t++)
            task_state(w, shared->w[w].slot[t].tid, &wa->utime[t], &wa->stime[t]);
        wa->stage = 1;
    } else if (worst > 2 * STALL_S && wa->stage == 1) {
        judge_stall(w, worst_t);
        kill(worker_pid[w], SIGKILL);
        wa->stage = 2;
        wa->killed_at = t_now;
    } else if (worst <= STALL_S) {
        wa->stage = 0;
    }
}

static int first_worker(void) { return cfg.only_worker >= 0 ? cfg.only_worker : 0; }
static int end_worker(void) { return cfg.only_worker >= 0 ? cfg.only_worker + 1 : cfg.workers; }

static bool any_worker(void)
{
    for (int w = first_worker(); w < end_worker(); w++)
        if (worker_pid[w])
            return true;
    return false;
}

// Runs the workers for a while. Generations go on counting across phases, so
// that (worker, generation) names one seed for the whole run.
static void run_workers(int seconds)
{
    ending = false;
    for (int w = first_worker(); w < end_worker(); w++) {
        if (cfg.only_worker >= 0)
            worker_gen[w] = cfg.only_gen;
        start_worker(w);
    }
    double start = now(), end = start + seconds, next_report = start + REPORT_S;
    while (now() < end && (cfg.only_worker < 0 || any_worker())) {
        pause_ms(100);
        reap();
        for (int w = first_worker(); w < end_worker(); w++)
            watch_worker(w);
        if (now() >= next_report) { // a long run shows it is alive, and where it stopped if not
            printf("# fuzz: %.0f of %d s, %llu calls so far, %d restarts\n", now() - start, seconds,
                   (unsigned long long)total_calls, restarts);
            next_report += REPORT_S;
        }
    }
}

// SIGKILL to every worker, its group and the children it forked; all must go.
static bool kill_everything(void)
{
    ending = true;
    for (int w = first_worker(); w < end_worker(); w++) {
        if (worker_pid[w])
            kill(worker_pid[w], SIGKILL);
        for (int i = 0; i < FUZZ_MAX_CHILDREN; i++)
            if (!protected_pid(shared->w[w].children[i]))
                kill(shared->w[w].children[i], SIGKILL);
    }
    for (int i = 0; i < ngroups; i++)
        kill_group(groups[i]);
    double start = now();
    while (any_worker() && now() - start < KILL_S) {
        pause_ms(50);
        reap();
    }
    bool all_gone = !any_worker();
    for (int w = first_worker(); w < end_worker(); w++)
        if (worker_pid[w]) {
            printf("# hang: worker %d (pid %d) still there %d s after SIGKILL\n", w, worker_pid[w], KILL_S);
            print_threads(w);
        }
    // Their children were reparented to init, which reaps them.
    for (int w = first_worker(); w < end_worker(); w++)
        for (int i = 0; i < FUZZ_MAX_CHILDREN; i++) {
            int c = shared->w[w].children[i];
            while (!protected_pid(c) && kill(c, 0) == 0 && now() - start < KILL_S)
                pause_ms(50);
        }
    return all_gone;
}

// ---- main ---------------------------------------------------------------------------------

static void usage(void)
{
    fprintf(stderr, "usage: fuzz [-s seed] [-t seconds] [-u warm-up-seconds] [-w workers] [-T threads] [-m]\n"
                    "            [-l leak-pages]\n"
                    "            [-c call,call... | -x call,call...]\n"
                    "       fuzz -s seed -W worker -g gen [-T threads] [-n calls] -v\n");
    exit(2);
}

// -c: only the calls named (comma-separated), -x: all but those.
static void select_calls(char *list, bool only)
{
    uint64_t named[2] = {0, 0};
    for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
        int i = 0;
        while (i < ncalls && strcmp(calls[i].name, name))
            i++;
        if (i == ncalls) {
            fprintf(stderr, "fuzz: no call %s\n", name);
            exit(2);
        }
        named[i / 64] |= 1ULL << (i % 64);
    }
    for (int k = 0; k < 2; k++)
        cfg.call_mask[k] = only ? named[k] : cfg.call_mask[k] & ~named[k];
}

static void parse(int argc, char **argv)
{
    int c;
    for (int i = 0; i < ncalls; i++)
        cfg.call_mask[i / 64] |= 1ULL << (i % 64);
    while ((c = getopt(argc, argv, "s:t:w:T:ml:u:W:g:n:vc:x:")) != -1) {
        switch (c) {
        case 's': cfg.seed = strtoull(optarg, NULL, 0); break;
        case 't': cfg.seconds = atoi(optarg); break;
        case 'w': cfg.workers = atoi(optarg); break;
        case 'T': cfg.threads = atoi(optarg); break;
        case 'm': cfg.exhaust = true; break;
        case 'l': leak_limit = atol(optarg); break;
        case 'u': warmup = atoi(optarg); break;
        case 'W': cfg.only_worker = atoi(optarg); break;
        case 'g': cfg.only_gen = atoi(optarg); break;
        case 'n': cfg.max_calls = strtoull(optarg, NULL, 0); break;
        case 'v': cfg.verbose = true; break;
        case 'c': select_calls(optarg, true); break;
        case 'x': select_calls(optarg, false); break;
        default: usage();
        }
    }
    if (cfg.workers < 1 || cfg.workers > FUZZ_MAX_WORKERS || cfg.threads < 1 ||
        cfg.threads > FUZZ_MAX_THREADS || cfg.only_worker >= FUZZ_MAX_WORKERS || cfg.seconds < 0)
        usage();
    if (leak_limit < 0)
        leak_limit = 16L * cfg.workers;
    if (warmup < 0)
        warmup = cfg.only_worker >= 0 ? 0 : cfg.seconds / 3;
    if (cfg.only_worker >= cfg.workers)
        cfg.workers = cfg.only_worker + 1; // sibling pids are picked among this many
}

static void summary(void)
{
    printf("# %llu calls, %d restarts, %d stalled workers killed; deaths by signal (number:count):",
           (unsigned long long)total_calls, restarts, stalls_killed);
    for (int s = 1; s < 65; s++)
        if (deaths_by_signal[s])
            printf(" %d:%d", s, deaths_by_signal[s]);
    printf("\n");
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    cfg.supervisor_pid = getpid();
    cfg.supervisor_pgid = getpgrp();
    cfg.parent_pid = getppid();
    snprintf(cfg.dir, sizeof cfg.dir, "/tmp/fuzz.%llu", (unsigned long long)cfg.seed);
    printf("# fuzz: seed %llu, %d workers x %d threads, %d s after %d s of warm-up, %s%s\n",
           (unsigned long long)cfg.seed, cfg.workers, cfg.threads, cfg.seconds, warmup, cfg.dir,
           cfg.exhaust ? ", memory exhaustion" : "");

    // Only SIGKILL and SIGSTOP reach us (workers never aim at us; this is in case).
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    // Calls write into the shared region with huge lengths: a guard page
    // after it keeps them out of whatever the kernel placed next (`shared`).
    char *shm = mmap(NULL, (SHM_PAGES + 1) * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED || shm == MAP_FAILED || mprotect(shm + SHM_PAGES * PG, PG, PROT_NONE)) {
        printf("# cannot map the shared pages\n");
        return 2;
    }
    mem.shm = (long)shm;
    mem.shm_len = SHM_PAGES * PG;
    // The warm-up fills the kernel's caches and tables to the sizes the run
    // needs (slabs, hash tables): what it leaves is the baseline.
    remove_tree(cfg.dir);
    make_tree();
    bool all_gone = true;
    if (warmup) {
        run_workers(warmup);
        all_gone = kill_everything();
        for (int w = first_worker(); w < end_worker(); w++)
            worker_gen[w]++;
        remove_tree(cfg.dir);
        make_tree();
    }
    long before = settled_pages();
    struct sites *sites_before = sites_snapshot();

    printf("# fuzz: warm-up over, %ld net pages; the run starts\n", before);
    run_workers(cfg.seconds);
    printf("# fuzz: run over; killing the workers\n");
    all_gone &= kill_everything();
    for (int w = first_worker(); w < end_worker(); w++)
        note_bad_result(w);
    summary();
    bool removed = remove_tree(cfg.dir) == 0;
    long after = settled_pages();

    check(total_calls >= (cfg.only_worker >= 0 ? 1 : 100), "the workers made calls");
    check(hangs == 0 && unkillable == 0 && all_gone, "no worker hung");
    check(bad_results == 0, "every result is a value or an errno");
    check(removed, "the directory can be removed");
    if (before < 0) {
        printf("ok %d - fuzz: no pages leaked # SKIP no kstats (not our kernel)\n", ++n_results);
    } else {
        printf("# net pages allocated: %ld before, %ld after (%+ld; limit %ld)\n", before, after,
               after - before, leak_limit);
        sites_print_change(sites_before, sites_snapshot(), 10);
        check(after - before <= leak_limit, "no pages leaked");
    }
    printf("%d passed, %d failed\n", n_results - n_failed, n_failed);
    fflush(stdout);
    return n_failed != 0;
}
