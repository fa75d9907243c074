// The pairwise conformance runner: runs a generated commutativity suite
// (suite.h: the page suite, built from tests/commuter/data, or with -S bytes
// the byte suite, from tests/commuter/data-bytes) against the kernel it runs on.
// The suite's unit is the size of one data value (4096 or 1 bytes): the model's
// offsets, lengths and counts are multiplied by it, and its values expanded to
// whole units (pattern.h) when written and compared whole when read.
//
// Per test and per order (both orders for a commuting test, A then B for a
// sequential one): the runner, pinned to the setup CPU, builds the initial
// state in a scratch directory -- files under temporary names, linked to the
// test's names (f0, f1, and d/f2 in a subdirectory) -- then forks one process per model process; each closes every
// descriptor and rebuilds its own table, pipes and test pages, and reports
// ready. The runner unlinks the temporary names and lets the calls go: call c
// runs on CPU c (a thread of its process, pinned), strictly one after the
// other behind a turn counter in shared memory, bracketed by the mtrace
// markers (per order: mtrace_test_id(test id), open/close around each call on
// its CPU, mtrace_test_done()). Each result is checked against the model's;
// for a commuting test both orders must match it, and must leave states that
// later operations cannot tell apart: afterwards each process observes its
// descriptors (kind, inode, offset, mode, size, link count, what a pipe holds)
// and test pages, and the runner the names and their contents; the two
// orders' observations must be equal. Everything a test made dies with its
// processes, and its names are unlinked before the next test. posix_spawn
// tests start commuter-child (tests/commuter/child.c) and wait for it inside
// the call; on Linux (-L) MADV_UNMAP_ASYNC tests call munmap instead.
//
// usage: commuter [-S page|bytes] [-n SHARDS -p SHARD] [-f PAIR,...] [-t NAME-SUBSTRING]
//                 [-s PER-PAIR] [-L] [-J summary.json] [-d DIR] [-l] [-x CHILD]
//   -S     the suite (default page)
//   -n/-p  run shard p of n (tests whose id % n == p)
//   -f     only these pairs (open/link,...); -t only names containing NAME
//   -s     a sample: about PER-PAIR tests spread over each pair's tests
//   -L     on Linux: skip tests that rely on O_ANYFD (Linux ignores it), and
//          run MADV_UNMAP_ASYNC as munmap (Linux lacks it: EINVAL)
//   -x     the program posix_spawn tests start (default: commuter-child next
//          to this program, found through argv[0])
//   -J     write {tests, passed, failed, skipped, per_pair} as JSON
//   -d     where to make the scratch directory (default /tmp)
//   -l     list every test (id, name, commute or sequential) and run none:
//          the id is what mtrace_test_id() reports to the mtrace plugin
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../kernel/uapi/ext.h"
#include "../../tools/mtrace/markers.h"
#include "pattern.h"
#include "suite.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define TEST_VA 0x200000000000UL        // the fixed test pages: 32 TiB
#define PAGE 4096UL
#define CALL_TIMEOUT_S 5

static void *page_va(int k) { return (void *)(TEST_VA + (unsigned long)k * PAGE); }

// The suite (-S) and its unit, the bytes of one data value.
static const struct ct_suite *S = &ct_suite_page;
static long unit;
// The most units a file (model DATA) or a pipe (PIPEMAX) holds, and one more
// unit, so that reading it all shows whether there is more.
#define MAX_UNITS 9

// What one call did, written by the process that ran it into shared memory.
struct outcome {
    int done;
    long ret;
    int err;
    int sig, code;              // a memory access's signal and its si_code
    int vals[2];                // the values of the units read (CT_GARBLED: none)
    ino_t ino;
    nlink_t nlink;
    off_t size;
    mode_t mode;
    int fds[2];
};

// What a process can observe of its state after both calls, and what anyone
// can observe of the names: for a commuting test both orders must agree on
// all of it (SIM commutativity's "indistinguishable states").
#define OBS_FDS 6
struct file_obs {
    int8_t kind;        // 0 none, 1 regular file, 2 pipe
    int8_t ino;         // which inode: see canonical_inodes
    ino_t raw;          // its number (a freed inode's may be reused: not compared)
    int8_t mode;        // O_ACCMODE bits
    int32_t n;          // bytes read: the file's contents, or what the pipe held
    int32_t off, size;
    int16_t nlink;
    uint64_t sum;       // a hash of those bytes
};
struct proc_obs {
    struct file_obs fd[OBS_FDS];
    int8_t sig[2], code[2];
    uint64_t page[2];   // a hash of the modelled units of each test page
};

struct shared {
    volatile int ready;         // processes done with their setup
    volatile int go;            // the runner unlinked the temporary names
    volatile int turn;          // position in the order of the call allowed to run
    char setup_error[128];
    struct outcome out[2];
    struct proc_obs obs[2];     // by model process
};

static struct shared *shm;
static int ncpus, setup_cpu;
static int linux_mode;                  // -L
static char child_path[512];            // -x: the program posix_spawn starts

// ---- small helpers -----------------------------------------------------------

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu % ncpus, &set);
    sched_setaffinity(0, sizeof set, &set);
}

static void setup_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(shm->setup_error, sizeof shm->setup_error, fmt, ap);
    va_end(ap);
    _exit(2);
}

// The model's names: f0 and f1 in the scratch directory, and the last one in
// its subdirectory d, so that link and rename also cross directories and
// paths have two components (the model needs no change: within one file
// system a regular file's name behaves alike in any directory).
#define SUBDIR "d"
static void name_of(char *buf, int n) { snprintf(buf, 8, n == 2 ? SUBDIR "/f%d" : "f%d", n); }
static void tmp_of(char *buf, int i) { snprintf(buf, 8, "t%d", i); }

static void clean_dir(void)
{
    char b[8];
    for (int n = 0; n < 3; n++) {
        name_of(b, n);
        unlink(b);
    }
    for (int i = 0; i < 4; i++) {
        tmp_of(b, i);
        unlink(b);
    }
}

// ---- faults in memory reads and writes ------------------------------------------

// volatile: the stores must not move past the access they guard.
static __thread sigjmp_buf *volatile fault_jb;
static __thread volatile int fault_code;

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    if (fault_jb) {
        fault_code = si->si_code;
        siglongjmp(*fault_jb, sig);
    }
    _exit(3);
}

// Copies n bytes from p to v, or from v to p if write: 0, or the signal the
// first faulting access raised (its si_code in *code).
static int guarded(volatile unsigned char *p, unsigned char *v, size_t n, bool write, int *code)
{
    sigjmp_buf jb;
    int sig = sigsetjmp(jb, 1);
    *code = 0;
    if (sig) {
        fault_jb = NULL;
        *code = fault_code;
        return sig;
    }
    fault_jb = &jb;
    for (size_t i = 0; i < n; i++) {
        if (write)
            p[i] = v[i];
        else
            v[i] = p[i];
    }
    fault_jb = NULL;
    return 0;
}

// 64-bit FNV-1a: observations compare contents of up to MAX_UNITS pages by it.
static uint64_t hash(const unsigned char *b, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

// Call c's transfer buffer: written (so faulted in, and a write's patterns
// filled) by prepare_call before the calls start, so that a call's window
// holds its system call and no page fault of the runner's own memory. Page
// aligned: unaligned, the end of call 0's buffer and the start of call 1's
// shared a cache line, which mtrace counted against the kernel (45 tests of
// the page suite at b10ab71, copies to and from user memory in both calls).
static unsigned char iobuf[2][2 * PAGE] __attribute__((aligned(4096)));

static void prepare_call(const struct ct_call *c, int k)
{
    const int16_t *a = c->args;
    unsigned char *b = iobuf[k];
    memset(b, 0xee, sizeof iobuf[k]);
    if (c->op == OP_WRITE || c->op == OP_PWRITE) {
        int v0 = c->op == OP_WRITE ? 2 : 3;
        ct_fill(b, a[v0], unit);
        ct_fill(b + unit, a[v0 + 1], unit);
    } else if (c->op == OP_MEMWRITE) {
        ct_fill(b, a[2], unit);
    }
}

// The values of the n bytes at b, one per whole unit read.
static void values(const unsigned char *b, long n, int vals[2])
{
    for (long k = 0; k < 2; k++)
        vals[k] = (k + 1) * unit <= n ? ct_value(b + k * unit, unit) : 0;
}

// ---- the calls -------------------------------------------------------------------

static const int accmode[3] = {O_RDONLY, O_WRONLY, O_RDWR};

static void record_stat(struct outcome *o, const struct stat *st)
{
    o->ino = st->st_ino;
    o->nlink = st->st_nlink;
    o->size = st->st_size;
    o->mode = st->st_mode;
}

// posix_spawn with at most one file action on the child's descriptor cfd,
// then wait for the child: returns how it ended (its exit status, or 256 +
// the signal that killed it), or -1 with errno set if there is no child.
static long do_spawn(const int16_t *a)
{
    char name[8], fd[8], val[8], units[8];
    name_of(name, a[2]);
    snprintf(fd, sizeof fd, "%d", a[3]);
    snprintf(val, sizeof val, "%d", a[5]);
    snprintf(units, sizeof units, "%ld", unit);
    char *argv[] = {"commuter-child", a[0] == SPAWN_WRITE ? "w" : "r", fd, val, units, NULL};
    char *envp[] = {NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    int err = 0;
    switch (a[1]) {
    case FA_OPEN:
    case FA_CREAT:
        err = posix_spawn_file_actions_addopen(&fa, a[3], name,
                                               O_RDWR | (a[1] == FA_CREAT ? O_CREAT : 0), 0666);
        break;
    case FA_CLOSE:
        err = posix_spawn_file_actions_addclose(&fa, a[3]);
        break;
    case FA_DUP2:
        err = posix_spawn_file_actions_adddup2(&fa, a[4], a[3]);
        break;
    }
    pid_t pid;
    if (!err)
        err = posix_spawn(&pid, a[0] == SPAWN_EXEC ? name : child_path, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    if (err) {
        errno = err;
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 256 + WTERMSIG(status)
                                                                          : 512;
}

static void do_call(const struct ct_call *c, int k, struct outcome *o)
{
    const int16_t *a = c->args;
    char p1[8], p2[8];
    unsigned char *buf = iobuf[k];
    struct stat st;
    void *addr;
    long r = 0;

    switch (c->op) {
    case OP_OPEN:
        name_of(p1, a[0]);
        r = open(p1, accmode[a[5]] | (a[1] ? O_CREAT : 0) | (a[2] ? O_EXCL : 0) |
                     (a[3] ? O_TRUNC : 0) | (a[4] ? O_ANYFD : 0), 0666);
        break;
    case OP_LINK:
        name_of(p1, a[0]);
        name_of(p2, a[1]);
        r = link(p1, p2);
        break;
    case OP_UNLINK:
        name_of(p1, a[0]);
        r = unlink(p1);
        break;
    case OP_RENAME:
        name_of(p1, a[0]);
        name_of(p2, a[1]);
        r = rename(p1, p2);
        break;
    case OP_STAT:
        name_of(p1, a[0]);
        r = stat(p1, &st);
        if (r == 0)
            record_stat(o, &st);
        break;
    case OP_FSTAT:
        r = fstat(a[0], &st);
        if (r == 0)
            record_stat(o, &st);
        break;
    case OP_LSEEK:
        r = lseek(a[0], a[1] * unit, a[2]);
        break;
    case OP_CLOSE:
        r = close(a[0]);
        break;
    case OP_PIPE:
        r = pipe(o->fds);
        break;
    case OP_READ:
        r = read(a[0], buf, a[1] * unit);
        values(buf, r, o->vals);
        break;
    case OP_WRITE:
        r = write(a[0], buf, a[1] * unit);
        break;
    case OP_PREAD:
        r = pread(a[0], buf, a[1] * unit, a[2] * unit);
        values(buf, r, o->vals);
        break;
    case OP_PWRITE:
        r = pwrite(a[0], buf, a[1] * unit, a[2] * unit);
        break;
    case OP_MMAP:
        addr = mmap(a[2] ? page_va(a[0]) : NULL, PAGE, PROT_READ | (a[3] ? PROT_WRITE : 0),
                    (a[1] ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED) | (a[2] ? MAP_FIXED : 0),
                    a[1] ? -1 : a[4], (off_t)a[5] * PAGE);
        r = addr == MAP_FAILED ? -1 : (long)addr;
        break;
    case OP_MUNMAP:
        r = munmap(page_va(a[0]), PAGE);
        break;
    case OP_MPROTECT:
        r = mprotect(page_va(a[0]), PAGE, a[1] == 0 ? PROT_NONE :
                     a[1] == 1 ? PROT_READ : PROT_READ | PROT_WRITE);
        break;
    case OP_MEMREAD:
        o->sig = guarded((unsigned char *)page_va(a[0]) + a[1] * unit, buf, unit, false, &o->code);
        r = ct_value(buf, unit);
        break;
    case OP_MEMWRITE:
        o->sig = guarded((unsigned char *)page_va(a[0]) + a[1] * unit, buf, unit, true, &o->code);
        break;
    case OP_SPAWN:
        r = do_spawn(a);
        break;
    case OP_UNMAPASYNC:
        r = linux_mode ? munmap(page_va(a[0]), PAGE)
                       : madvise(page_va(a[0]), PAGE, MADV_UNMAP_ASYNC);
        break;
    }
    o->err = r == -1 ? errno : 0;
    o->ret = r;
}

// ---- one order of one test ----------------------------------------------------------

struct executor {
    const struct ct_test *t;
    int call;       // which call this thread runs
    int pos;        // its position in the order
};

static void wait_turn(int pos)
{
    while (shm->turn != pos)
        sched_yield();
}

static void *execute(void *arg)
{
    struct executor *e = arg;
    pin(e->call);
    wait_turn(e->pos);
    __sync_synchronize();
    mtrace_open(e->call);
    do_call(&e->t->calls[e->call], e->call, &shm->out[e->call]);
    mtrace_close(e->call);
    shm->out[e->call].done = 1;
    // Park on the setup CPU until the other call is done too. Not on this CPU:
    // the address space would stay loaded here, and the other call's COW breaks
    // would have to shoot this CPU down. And not by exiting: the thread would
    // hand its malloc cache to the central pools in the middle of the test, and
    // the other call's thread would then allocate from this one's pages.
    pin(setup_cpu);
    __sync_synchronize();
    shm->turn = e->pos + 1;
    wait_turn(2);
    return NULL;
}

// Writes the patterns of n values to fd, as one write: 0, or -1 with errno.
static int write_units(int fd, const uint8_t *vals, int n)
{
    static unsigned char b[MAX_UNITS * PAGE];
    for (int k = 0; k < n; k++)
        ct_fill(b + k * unit, vals[k], unit);
    long r = write(fd, b, n * unit);
    if (r >= 0 && r != n * unit)
        errno = EIO;
    return r == n * unit ? 0 : -1;
}

// Moves fd to a high number so that the low ones can be placed exactly.
static int high(int fd)
{
    if (fd < 0)
        setup_fail("setup: open/pipe failed: %s", strerror(errno));
    int h = fcntl(fd, F_DUPFD, 32);
    close(fd);
    return h;
}

static void setup_fds(const struct ct_proc *p)
{
    int pipefd[1][2] = {{-1, -1}}, tmpfd[3];
    char b[8];
    for (int k = 0; k < p->npipes; k++) {
        int pf[2];
        if (pipe(pf) < 0)
            setup_fail("setup: pipe: %s", strerror(errno));
        pipefd[p->pipes[k].pipe][0] = high(pf[0]);
        pipefd[p->pipes[k].pipe][1] = high(pf[1]);
        int w = pipefd[p->pipes[k].pipe][1];
        if (p->pipes[k].len && write_units(w, p->pipes[k].data, p->pipes[k].len) < 0)
            setup_fail("setup: pipe write: %s", strerror(errno));
    }
    for (int k = 0; k < p->nfds; k++) {
        const struct ct_fd *f = &p->fds[k];
        if (f->kind == FD_FILE) {
            tmp_of(b, f->ino);
            tmpfd[k] = high(open(b, accmode[f->mode]));
            if (lseek(tmpfd[k], f->off * unit, SEEK_SET) != f->off * unit)
                setup_fail("setup: lseek: %s", strerror(errno));
        } else {
            tmpfd[k] = pipefd[f->pipe][f->kind == FD_PIPE_W];
        }
    }
    for (int k = 0; k < p->nfds; k++)
        if (dup2(tmpfd[k], p->fds[k].fd) < 0)
            setup_fail("setup: dup2: %s", strerror(errno));
    for (int fd = 32; fd < 64; fd++)
        close(fd);
}

static void setup_pages(const struct ct_proc *p)
{
    static const int prots[3] = {PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE};
    char b[8];
    for (int k = 0; k < p->npages; k++) {
        const struct ct_page *g = &p->pages[k];
        void *va = page_va(g->page), *m;
        if (g->anon) {
            m = mmap(va, PAGE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
            if (m == va) {
                for (unsigned u = 0; u < S->pageb; u++)
                    ct_fill((unsigned char *)va + u * unit, g->data[u], unit);
                if (mprotect(va, PAGE, prots[g->prot]) < 0)
                    setup_fail("setup: mprotect: %s", strerror(errno));
            }
        } else {
            tmp_of(b, g->ino);
            int fd = open(b, g->fw ? O_RDWR : O_RDONLY);
            m = mmap(va, PAGE, prots[g->prot], MAP_SHARED | MAP_FIXED, fd, g->fpage * PAGE);
            close(fd);
        }
        if (m != va)
            setup_fail("setup: mmap page %d: %s", g->page, strerror(errno));
    }
}

static ino_t initial_ino[2];
static unsigned char obsbuf[MAX_UNITS * PAGE];

// A file's or pipe's observable state through descriptor fd (or a path).
static void observe_file(int fd, struct file_obs *o)
{
    struct stat st;
    memset(o, 0, sizeof *o);
    o->ino = -1;
    if (fstat(fd, &st) < 0)
        return;
    o->mode = fcntl(fd, F_GETFL) & O_ACCMODE;
    if (S_ISFIFO(st.st_mode)) {
        o->kind = 2;
        if (o->mode == O_RDONLY) {
            fcntl(fd, F_SETFL, O_NONBLOCK);
            long n = read(fd, obsbuf, MAX_UNITS * unit);
            o->n = n > 0 ? n : 0;
            o->sum = hash(obsbuf, o->n);
        }
        return;
    }
    o->kind = 1;
    o->raw = st.st_ino;
    o->size = st.st_size;
    o->nlink = st.st_nlink;
    o->off = lseek(fd, 0, SEEK_CUR);
}

static void observe_process(const struct ct_test *t, int p)
{
    struct proc_obs *o = &shm->obs[p];
    for (int fd = 0; fd < OBS_FDS; fd++) {
        // Where O_ANYFD put a descriptor is the kernel's choice.
        int any = 0;
        for (int c = 0; c < 2; c++)
            any |= t->calls[c].proc == p && t->expect[c].kind == R_ANYFD && shm->out[c].ret == fd;
        if (!any)
            observe_file(fd, &o->fd[fd]);
    }
    for (int k = 0; k < 2; k++) {
        int code;
        o->sig[k] = guarded((unsigned char *)page_va(k), obsbuf, S->pageb * unit, false, &code);
        o->code[k] = code;
        o->page[k] = o->sig[k] ? 0 : hash(obsbuf, S->pageb * unit);
    }
}

// The names, observed by the runner once the processes are gone.
static void observe_names(struct file_obs names[3])
{
    char b[8];
    for (int n = 0; n < 3; n++) {
        name_of(b, n);
        int fd = open(b, O_RDONLY);
        memset(&names[n], 0, sizeof names[n]);
        if (fd < 0)
            continue;
        observe_file(fd, &names[n]);
        names[n].mode = names[n].off = 0;
        long r = pread(fd, obsbuf, MAX_UNITS * unit, 0);
        names[n].n = r > 0 ? r : 0;
        names[n].sum = hash(obsbuf, names[n].n);
        close(fd);
    }
}

// The body of the forked process that plays model process p.
static void process_main(const struct ct_test *t, int p, const struct ct_proc *pr, int order)
{
    struct sigaction sa = {.sa_sigaction = on_fault};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NODEFER | SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    // The runner blocks SIGCHLD for its own sigtimedwait; a test process starts
    // with nothing blocked, so its spawned children's SIGCHLD (ignored by
    // default) is discarded instead of left pending for the other call to see.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_IGN);
    for (int fd = 0; fd < 64; fd++)
        close(fd);
    if (pr) {
        setup_fds(pr);
        setup_pages(pr);
    }
    for (int c = 0; c < 2; c++)
        if (t->calls[c].proc == p)
            prepare_call(&t->calls[c], c);
    // Fault in the shared pages now, not inside a call's window.
    (void)*(volatile char *)MTRACE_BASE;
    __sync_fetch_and_add(&shm->ready, 1);
    while (!shm->go)
        sched_yield();

    struct executor ex[2];
    int n = 0;
    for (int c = 0; c < 2; c++)
        if (t->calls[c].proc == p)
            ex[n++] = (struct executor){t, c, order == 0 ? c : 1 - c};
    pthread_t th;
    if (n == 2 && pthread_create(&th, NULL, execute, &ex[1]) != 0)
        setup_fail("setup: pthread_create failed");
    execute(&ex[0]);
    if (n == 2)
        pthread_join(th, NULL);
    pin(setup_cpu);
    while (shm->turn != 2)
        sched_yield();
    observe_process(t, p);
    _exit(0);
}

// Runs the test's calls in one order (0: A then B, 1: B then A). Returns 0, or
// -1 with a reason in why.
static int run_order(const struct ct_test *t, int order, char *why, size_t whylen)
{
    char b[8], f[8];
    pin(setup_cpu);
    clean_dir();
    memset(shm, 0, sizeof *shm);
    memset(initial_ino, 0, sizeof initial_ino);
    for (int k = 0; k < t->ninodes; k++) {
        const struct ct_inode *in = &t->inodes[k];
        struct stat st;
        tmp_of(b, in->ino);
        int fd = open(b, O_CREAT | O_EXCL | O_RDWR, 0666);
        if (fd < 0 || (in->len && write_units(fd, in->data, in->len) < 0) || fstat(fd, &st) < 0) {
            snprintf(why, whylen, "setup: file %s: %s", b, strerror(errno));
            return -1;
        }
        initial_ino[in->ino] = st.st_ino;
        close(fd);
    }
    for (int k = 0; k < t->nnames; k++) {
        tmp_of(b, t->names[k].ino);
        name_of(f, t->names[k].name);
        if (link(b, f) < 0) {
            snprintf(why, whylen, "setup: link %s %s: %s", b, f, strerror(errno));
            return -1;
        }
    }

    // One process per model process the calls use.
    int procs[2], nprocs = 0;
    pid_t pids[2];
    procs[nprocs++] = t->calls[0].proc;
    if (t->calls[1].proc != t->calls[0].proc)
        procs[nprocs++] = t->calls[1].proc;
    for (int k = 0; k < nprocs; k++) {
        const struct ct_proc *pr = NULL;
        for (int j = 0; j < t->nprocs; j++)
            if (t->procs[j].proc == procs[k])
                pr = &t->procs[j];
        pids[k] = fork();
        if (pids[k] == 0)
            process_main(t, procs[k], pr, order);
        if (pids[k] < 0) {
            snprintf(why, whylen, "fork: %s", strerror(errno));
            return -1;
        }
    }

    // Wait for the setups, then drop the temporary names and let the calls go.
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int status, failed = 0, left = nprocs;
    while (shm->ready < nprocs) {
        if (waitpid(-1, &status, WNOHANG) > 0) {
            failed = 1;
            left--;
            break;
        }
        sched_yield();
    }
    for (int k = 0; k < t->ninodes; k++) {
        tmp_of(b, t->inodes[k].ino);
        unlink(b);
    }
    shm->go = 1;

    // Reap, killing whatever hangs (a call the model thought would not block).
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    while (left > 0) {
        pid_t w = waitpid(-1, &status, WNOHANG);
        if (w > 0) {
            left--;
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                failed = 1;
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > CALL_TIMEOUT_S) {
            for (int k = 0; k < nprocs; k++)
                kill(pids[k], SIGKILL);
            snprintf(why, whylen, "timeout (a call blocked)");
            while (left > 0 && waitpid(-1, &status, 0) > 0)
                left--;
            return -1;
        }
        struct timespec ts = {0, 1000000};
        sigtimedwait(&chld, NULL, &ts);
    }
    if (failed) {
        snprintf(why, whylen, "%s", shm->setup_error[0] ? shm->setup_error
                                                         : "a test process died");
        return -1;
    }
    return 0;
}

// ---- checking ------------------------------------------------------------------------

static int in_setup(const struct ct_test *t, int proc, long fd)
{
    for (int j = 0; j < t->nprocs; j++)
        if (t->procs[j].proc == proc)
            for (int k = 0; k < t->procs[j].nfds; k++)
                if (t->procs[j].fds[k].fd == fd)
                    return 1;
    return 0;
}

// What a call returns, in bytes, for the model's `ret` in units.
static long scaled(int op, long ret)
{
    switch (op) {
    case OP_LSEEK: case OP_READ: case OP_WRITE: case OP_PREAD: case OP_PWRITE:
        return ret * unit;
    }
    return ret;
}

static int check(const struct ct_test *t, int c, const struct outcome *o, char *why, size_t n)
{
    const struct ct_result *e = &t->expect[c];
    const int op = t->calls[c].op;
    long want = scaled(op, e->ret);
    int ok = 1;
    if (e->kind != R_ERR && o->ret == -1 && o->sig == 0) {
        snprintf(why, n, "call %d (%s): expected success, got errno %d (%s)", c,
                 S->opnames[op], o->err, strerror(o->err));
        return 0;
    }
    switch (e->kind) {
    case R_ERR:
        ok = o->ret == -1 && o->err == e->err;
        break;
    case R_RET:
        ok = o->ret == want && o->sig == 0;
        break;
    case R_ANYFD:
        ok = o->ret >= 0 && !in_setup(t, t->calls[c].proc, o->ret);
        break;
    case R_DATA:
        ok = o->ret == want;
        for (int k = 0; k < e->ret; k++)
            ok = ok && o->vals[k] == e->data[k];
        break;
    case R_STAT:
        ok = o->ret == 0 && S_ISREG(o->mode) && (long)o->nlink == e->nlink &&
             o->size == e->size * unit;
        if (e->ino < 2)
            ok = ok && o->ino == initial_ino[e->ino];
        else
            for (int k = 0; k < t->ninodes; k++)
                ok = ok && o->ino != initial_ino[t->inodes[k].ino];
        break;
    case R_FIFO:
        ok = o->ret == 0 && S_ISFIFO(o->mode);
        break;
    case R_PIPE:
        ok = o->ret == 0 && o->fds[0] == e->fds[0] && o->fds[1] == e->fds[1];
        break;
    case R_ADDR:
        if (e->ret >= 0)
            ok = o->ret == (long)page_va(e->ret);
        else
            ok = o->ret != -1 && (o->ret < (long)TEST_VA || o->ret >= (long)page_va(4));
        break;
    case R_VAL:
        ok = o->sig == 0 && o->ret == e->ret;
        break;
    case R_SIG:
        ok = o->sig == e->ret && o->code == e->code;
        break;
    case R_STATUS:
        ok = o->ret == e->ret;
        break;
    }
    if (!ok)
        snprintf(why, n, "call %d (%s): got ret %ld errno %d sig %d code %d data %d,%d nlink %ld "
                 "size %ld; expected kind %d ret %ld err %d code %d data %d,%d", c,
                 S->opnames[op], o->ret, o->err, o->sig, o->code, o->vals[0], o->vals[1],
                 (long)o->nlink, (long)o->size, e->kind, want, e->err, e->code, e->data[0],
                 e->data[1]);
    return ok;
}

// Which files share an inode is observable; the inode numbers are not
// comparable across orders (a number freed by an unlink may be reused by a
// create). Number the inodes by first appearance: names, then each process's
// descriptors.
static void canonical_inodes(struct file_obs names[3], struct proc_obs obs[2])
{
    struct file_obs *all[3 + 2 * OBS_FDS];
    int n = 0;
    for (int k = 0; k < 3; k++)
        all[n++] = &names[k];
    for (int p = 0; p < 2; p++)
        for (int fd = 0; fd < OBS_FDS; fd++)
            all[n++] = &obs[p].fd[fd];
    for (int i = 0; i < n; i++) {
        all[i]->ino = -1;
        for (int j = 0; j < i && all[i]->kind == 1; j++)
            if (all[j]->kind == 1 && all[j]->raw == all[i]->raw) {
                all[i]->ino = all[j]->ino;
                break;
            }
        if (all[i]->kind == 1 && all[i]->ino < 0)
            all[i]->ino = i;
    }
    for (int i = 0; i < n; i++)
        all[i]->raw = 0;
}

// 1 passed, 0 failed.
static int run_test(unsigned id, const struct ct_test *t, char *why, size_t n)
{
    static const char *const order_name[2] = {"AB", "BA"};
    struct file_obs names[2][3];
    struct proc_obs obs[2][2];
    for (int order = 0; order < (t->commute ? 2 : 1); order++) {
        struct outcome out[2];
        mtrace_test_id(id);
        int r = run_order(t, order, why, n);
        mtrace_test_done();
        if (r < 0)
            return 0;
        memcpy(out, shm->out, sizeof out);
        memcpy(obs[order], shm->obs, sizeof obs[order]);
        observe_names(names[order]);
        canonical_inodes(names[order], obs[order]);
        for (int c = 0; c < 2; c++) {
            if (!out[c].done) {
                snprintf(why, n, "order %s: call %d did not run", order_name[order], c);
                return 0;
            }
            char w[200];
            if (!check(t, c, &out[c], w, sizeof w)) {
                snprintf(why, n, "order %s: %s", order_name[order], w);
                return 0;
            }
        }
    }
    if (!t->commute)
        return 1;
    // Both orders must leave states no later operation can tell apart.
    for (int k = 0; k < 3; k++)
        if (memcmp(&names[0][k], &names[1][k], sizeof names[0][k]) != 0) {
            snprintf(why, n, "orders disagree on name f%d afterwards", k);
            return 0;
        }
    for (int p = 0; p < 2; p++) {
        for (int fd = 0; fd < OBS_FDS; fd++)
            if (memcmp(&obs[0][p].fd[fd], &obs[1][p].fd[fd], sizeof obs[0][p].fd[fd]) != 0) {
                snprintf(why, n, "orders disagree on process %d fd %d afterwards", p, fd);
                return 0;
            }
        if (memcmp(obs[0][p].sig, obs[1][p].sig, 2) != 0 ||
            memcmp(obs[0][p].code, obs[1][p].code, 2) != 0 ||
            memcmp(obs[0][p].page, obs[1][p].page, sizeof obs[0][p].page) != 0) {
            snprintf(why, n, "orders disagree on process %d's test pages afterwards", p);
            return 0;
        }
    }
    return 1;
}

// ---- main ------------------------------------------------------------------------------

static int listed(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p; p = strchr(p, ',')) {
        if (*p == ',')
            p++;
        if (strncmp(p, word, n) == 0 && (p[n] == ',' || p[n] == 0))
            return 1;
    }
    return 0;
}

// Sets child_path from -x, or to commuter-child in argv[0]'s directory; made
// absolute against the current directory. 0 if that is impossible.
static int child_program(const char *opt, const char *self)
{
    char rel[256] = "", cwd[256] = "";
    if (opt) {
        snprintf(rel, sizeof rel, "%s", opt);
    } else {
        const char *slash = strrchr(self, '/');
        int dirlen = slash ? (int)(slash - self) : 0;
        snprintf(rel, sizeof rel, "%.*s%scommuter-child", dirlen, self, slash ? "/" : "");
    }
    if (rel[0] != '/' && !getcwd(cwd, sizeof cwd)) {
        perror("commuter: getcwd");
        return 0;
    }
    snprintf(child_path, sizeof child_path, "%s%s%s", cwd, cwd[0] ? "/" : "", rel);
    if (access(child_path, X_OK) < 0)  // the spawn tests will fail; the others can run
        printf("# warning: %s: %s (-x names the posix_spawn child)\n", child_path,
               strerror(errno));
    return 1;
}

// The runner's code is mapped from its file and faulted in lazily. Code that
// only the test processes run (the calls, the fault handler) would otherwise
// be faulted in again by every test's fresh processes, inside the windows of
// both calls at once: the mapping's first fill, shared by the two calls, is the
// runner's and not the calls'. Read each page of the text here, so forks start
// with it mapped.
extern const char __executable_start[], etext[];

static void map_text(void)
{
    uintptr_t p = (uintptr_t)__executable_start & ~(uintptr_t)(PAGE - 1);
    for (; p < (uintptr_t)etext; p += PAGE)
        (void)*(volatile const char *)p;
}

int main(int argc, char **argv)
{
    int shards = 1, shard = 0, per_pair = 0, opt;
    const char *pairs = NULL, *name = NULL, *json = NULL, *dir = "/tmp";
    int list = 0;
    const char *child = NULL;
    map_text();
    while ((opt = getopt(argc, argv, "S:n:p:f:t:s:LJ:d:lx:")) != -1) {
        switch (opt) {
        case 'S':
            if (strcmp(optarg, ct_suite_bytes.name) == 0)
                S = &ct_suite_bytes;
            else if (strcmp(optarg, ct_suite_page.name) != 0)
                opt = '?';
            break;
        case 'n': shards = atoi(optarg); break;
        case 'p': shard = atoi(optarg); break;
        case 'f': pairs = optarg; break;
        case 't': name = optarg; break;
        case 's': per_pair = atoi(optarg); break;
        case 'L': linux_mode = 1; break;
        case 'J': json = optarg; break;
        case 'd': dir = optarg; break;
        case 'l': list = 1; break;
        case 'x': child = optarg; break;
        default:
            opt = '?';
        }
        if (opt == '?') {
            fprintf(stderr, "usage: %s [-S page|bytes] [-n SHARDS -p SHARD] [-f PAIR,...] [-t NAME] "
                            "[-s PER-PAIR] [-L] [-J FILE] [-d DIR] [-l] [-x CHILD]\n", argv[0]);
            return 2;
        }
    }
    unit = S->unit;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (list) {
        for (unsigned i = 0; i < S->ntests; i++)
            printf("%u %s %s\n", i, S->tests[i].name, S->tests[i].commute ? "commute" : "sequential");
        return 0;
    }

    cpu_set_t set;
    sched_getaffinity(0, sizeof set, &set);
    ncpus = CPU_COUNT(&set);
    setup_cpu = ncpus > 2 ? 2 : 0;
    if (ncpus < 2)
        printf("# only %d CPU: both calls run on CPU 0\n", ncpus);
    else if (ncpus == 2)
        printf("# 2 CPUs: setup runs on CPU 0 (no third CPU)\n");

    // Shared, so that the forked test processes store to the same pages
    // without copy-on-write faults inside a call's window. A kernel without
    // MAP_FIXED_NOREPLACE may put the mapping elsewhere: then ask for MAP_FIXED.
    void *mt = mmap((void *)MTRACE_BASE, MTRACE_SIZE, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (mt != MAP_FAILED && mt != (void *)MTRACE_BASE)
        munmap(mt, MTRACE_SIZE);
    if (mt != (void *)MTRACE_BASE)
        mt = mmap((void *)MTRACE_BASE, MTRACE_SIZE, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (mt != (void *)MTRACE_BASE) {
        perror("commuter: mapping the mtrace markers");
        return 2;
    }
    // The child program's path, absolute: the tests run in the scratch directory.
    if (!child_program(child, argv[0]))
        return 2;
    // Opened before moving into the scratch directory: the path may be relative.
    FILE *jf = json ? fopen(json, "w") : NULL;
    if (json && !jf) {
        perror(json);
        return 2;
    }
    shm = mmap(NULL, sizeof *shm, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char path[256];
    snprintf(path, sizeof path, "%s/commuter.XXXXXX", dir);
    if (shm == MAP_FAILED || !mkdtemp(path) || chdir(path) < 0 || mkdir(SUBDIR, 0777) < 0) {
        perror("commuter: setup");
        return 2;
    }
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);

    // Select: the shard, the pairs, the name, and a per-pair sample spread
    // evenly over each pair's tests.
    static unsigned char chosen[1 << 20];
    unsigned *pair_count = calloc(S->npairs, sizeof *pair_count);
    unsigned *pair_seen = calloc(S->npairs, sizeof *pair_seen);
    unsigned total = 0;
    for (unsigned i = 0; i < S->ntests; i++)
        pair_count[S->tests[i].pair]++;
    for (unsigned i = 0; i < S->ntests; i++) {
        const struct ct_test *t = &S->tests[i];
        unsigned k = pair_seen[t->pair]++, cnt = pair_count[t->pair];
        int pick = i % shards == (unsigned)shard;
        pick = pick && (!pairs || listed(pairs, S->pairs[t->pair]));
        pick = pick && (!name || strstr(t->name, name));
        if (per_pair && cnt > (unsigned)per_pair)
            pick = pick && (k * per_pair) / cnt != ((k + 1) * per_pair) / cnt;
        chosen[i] = pick;
        total += pick;
    }

    unsigned *tests = calloc(S->npairs, sizeof *tests), *passed = calloc(S->npairs, sizeof *passed);
    unsigned *skipped = calloc(S->npairs, sizeof *skipped);
    unsigned n = 0, npass = 0, nfail = 0, nskip = 0;
    for (unsigned i = 0; i < S->ntests; i++) {
        if (!chosen[i])
            continue;
        const struct ct_test *t = &S->tests[i];
        char why[320] = "";
        n++;
        tests[t->pair]++;
        if (linux_mode && t->linux_skip) {
            nskip++;
            skipped[t->pair]++;
            printf("ok %u - %s # SKIP Linux ignores O_ANYFD\n", n, t->name);
            continue;
        }
        // For the mtrace analysis: which pair this test id belongs to.
        printf("# mtrace-test %u %s %s\n", i, S->pairs[t->pair], t->name);
        int ok = run_test(i, t, why, sizeof why);
        passed[t->pair] += ok;
        npass += ok;
        nfail += !ok;
        if (!ok)
            printf("not ok %u - %s # %s\n", n, t->name, why);
        else
            printf("ok %u - %s\n", n, t->name);
        if (n % 1000 == 0)
            printf("# progress: %u/%u tests, %u failed\n", n, total, nfail);
    }
    clean_dir();
    rmdir(SUBDIR);
    chdir("/");
    rmdir(path);

    for (unsigned p = 0; p < S->npairs; p++)
        if (tests[p])
            printf("# pair %-18s tests %5u passed %5u skipped %4u\n", S->pairs[p], tests[p],
                   passed[p], skipped[p]);
    if (jf) {
        FILE *f = jf;
        {
            fprintf(f, "{\"tests\": %u, \"passed\": %u, \"failed\": %u, \"skipped\": %u,\n"
                       " \"per_pair\": {", n, npass, nfail, nskip);
            int first = 1;
            for (unsigned p = 0; p < S->npairs; p++) {
                if (!tests[p])
                    continue;
                fprintf(f, "%s\n  \"%s\": {\"tests\": %u, \"passed\": %u, \"skipped\": %u}",
                        first ? "" : ",", S->pairs[p], tests[p], passed[p], skipped[p]);
                first = 0;
            }
            fprintf(f, "}}\n");
            fclose(f);
        }
    }
    printf("%u passed, %u failed\n", npass + nskip, nfail);
    return nfail ? 1 : 0;
}
