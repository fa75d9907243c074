// Tests for the file-descriptor table: lowest-fd allocation raced by threads on
// several CPUs (distinct fds, exactly the lowest ones), O_ANYFD partitions per
// CPU (different chunks and cache lines, checked by address), lookups racing
// with close (never a freed file), growth under readers, fork-style copies and
// close-on-exec. bench_fdtable (make bench) reports ns per operation.
#include "file/fdtable.h"
#include "file/file.h"
#include "fs.h"
#include "fstest.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "testutil.h"
#include "x86/smp.h"

#define LIVE 0x11fe11fe
#define DEAD 0xdeaddead

// Test files: priv points at a magic word the release hook kills.
static int released;
struct tfile {
    volatile uint32_t magic;
};

static void tfile_release(struct file *f)
{
    struct tfile *t = f->priv;
    t->magic = DEAD;
    fetch_add_relaxed(&released, 1);
    kfree(t);
}

static const struct file_ops tfile_ops = {.release = tfile_release};

static struct file *tfile_new(void)
{
    struct tfile *t = kmalloc(sizeof *t);
    if (!t)
        return NULL;
    t->magic = LIVE;
    struct file *f = file_alloc(&tfile_ops, O_RDWR, NULL, t);
    if (!f)
        kfree(t);
    return f;
}

static void settle(void)
{
    epoch_synchronize();
    epoch_synchronize();
}

// ---- threads on every CPU ------------------------------------------------------------

struct worker {
    struct fdtable *t;
    int cpu, n, id;
    int *fds;
    bool anyfd;
    volatile int *go;
    int errors;
};

static void run_workers(struct worker *w, int nw, void (*fn)(void *))
{
    struct thread *th[16];
    for (int i = 0; i < nw; i++) {
        cpumask_t m;
        cpumask_clear(&m);
        cpumask_set(&m, w[i].cpu);
        th[i] = kthread_create("fdt test", fn, &w[i], &m);
    }
    store_release(w[0].go, 1);
    for (int i = 0; i < nw; i++)
        thread_join(th[i]);
}

static void alloc_worker(void *arg)
{
    struct worker *w = arg;
    fdtable_hold(w->t);
    while (!load_acquire(w->go))
        pause();
    for (int i = 0; i < w->n; i++) {
        struct file *f = tfile_new();
        int fd = f ? fd_install(w->t, f, false, w->anyfd, 0, FD_MAX) : -1;
        if (fd < 0) {
            w->errors++;
            if (f)
                file_put(f);
        }
        w->fds[i] = fd;
        if (w->anyfd && fd >= 0 && fd_chunk_of(fd) % ncpu != (fdtable_partition_of_cpu(cpu_id()) % ncpu))
            w->errors++; // not from this CPU's partition
    }
    fdtable_release(w->t);
}

#define NW 4
#define PER 300

KTEST(fdtable_lowest_fd_racing_threads)
{
    struct fdtable *t = fdtable_new();
    KREQUIRE(t);
    static int fds[NW][PER];
    static bool seen[NW * PER];
    volatile int go = 0;
    struct worker w[NW];
    for (int i = 0; i < NW; i++)
        w[i] = (struct worker){.t = t, .cpu = i % ncpu, .n = PER, .fds = fds[i], .go = &go};
    run_workers(w, NW, alloc_worker);
    memset(seen, 0, sizeof seen);
    int bad = 0;
    for (int i = 0; i < NW; i++) {
        KCHECK_EQ(w[i].errors, 0);
        for (int j = 0; j < PER; j++) {
            int fd = fds[i][j];
            if (fd < 0 || fd >= NW * PER || seen[fd])
                bad++; // outside 0..N-1, or twice
            else
                seen[fd] = true;
            // Each thread's own fds increase: a later allocation never finds a
            // lower free fd, since nothing is closed.
            if (j > 0 && fd <= fds[i][j - 1])
                bad++;
        }
    }
    KCHECK_EQ(bad, 0); // so the fds are exactly 0 .. NW*PER-1
    released = 0;
    fdtable_release(t);
    settle();
    KCHECK_EQ(released, NW * PER);
}

KTEST(fdtable_lowest_fd_fills_holes_exactly)
{
    struct fdtable *t = fdtable_new();
    KREQUIRE(t);
    enum { N = 1200, HOLES = 400 }; // spans three chunks
    for (int i = 0; i < N; i++)
        KREQUIRE(fd_install(t, tfile_new(), false, false, 0, FD_MAX) == i);
    uint64_t s = 12345;
    int closed = 0;
    while (closed < HOLES) {
        int fd = rnd(&s) % N;
        if (fd_close(t, fd) == 0)
            closed++;
    }
    static int fds[NW][HOLES / NW];
    volatile int go = 0;
    struct worker w[NW];
    for (int i = 0; i < NW; i++)
        w[i] = (struct worker){.t = t, .cpu = i % ncpu, .n = HOLES / NW, .fds = fds[i], .go = &go};
    run_workers(w, NW, alloc_worker);
    int above = 0;
    for (int i = 0; i < NW; i++)
        for (int j = 0; j < HOLES / NW; j++)
            above += fds[i][j] >= N;
    KCHECK_EQ(above, 0); // the holes, and only the holes, were filled
    int open = 0;
    for (int fd = 0; fd < N; fd++) {
        struct fd_ref r = fd_get(t, fd);
        open += r.f != NULL;
        fd_put(r);
    }
    KCHECK_EQ(open, N);
    KCHECK_EQ(fd_install(t, tfile_new(), false, false, 0, FD_MAX), N);
    fdtable_release(t);
    settle();
}

// Cache lines (address / 64) a CPU's O_ANYFD allocations wrote: their slots.
static void lines_of(struct fdtable *t, int *fds, int n, uintptr_t *lines)
{
    for (int i = 0; i < n; i++)
        lines[i] = (uintptr_t)fdtable_debug_slot(t, fds[i]) / CACHELINE;
}

KTEST(fdtable_anyfd_per_cpu_partitions)
{
    struct fdtable *t = fdtable_new();
    KREQUIRE(t);
    int nw = MIN(ncpu, NW);
    static int fds[NW][PER];
    static uintptr_t lines[NW][PER];
    volatile int go = 0;
    struct worker w[NW];
    for (int i = 0; i < nw; i++)
        w[i] = (struct worker){.t = t, .cpu = i, .n = PER, .fds = fds[i], .anyfd = true, .go = &go};
    run_workers(w, nw, alloc_worker);
    for (int i = 0; i < nw; i++) {
        KCHECK_EQ(w[i].errors, 0);
        KCHECK_EQ(fd_chunk_of(fds[i][0]), fdtable_partition_of_cpu(i));
        lines_of(t, fds[i], PER, lines[i]);
    }
    // No cache line written by one CPU's allocations is written by another's.
    int shared = 0;
    for (int a = 0; a < nw; a++)
        for (int b = a + 1; b < nw; b++)
            for (int i = 0; i < PER; i++)
                for (int j = 0; j < PER; j++)
                    shared += lines[a][i] == lines[b][j];
    KCHECK_EQ(shared, 0);
    // Lowest-fd allocation still sees them: fd 0 is free, partitions are not.
    KCHECK_EQ(fd_install(t, tfile_new(), false, false, 0, FD_MAX), 0);
    fdtable_release(t);
    settle();
}

// A CPU's first O_ANYFD allocation in a new table makes its partition's chunk
// without replacing the directory (a write of t->dir, which every lookup
// reads), for the CPUs a new directory has room for (fdtable.c, DIR_FIRST_CPUS).
KTEST(fdtable_first_anyfd_keeps_directory)
{
    struct fdtable *t = fdtable_new();
    KREQUIRE(t);
    const void *dir = fdtable_debug_dir(t);
    int nw = MIN(ncpu, NW);
    static int fds[NW][1];
    volatile int go = 0;
    struct worker w[NW];
    int top = MIN(ncpu, 60); // the highest partitions it has room for
    for (int i = 0; i < nw; i++)
        w[i] = (struct worker){.t = t, .cpu = top - 1 - i, .n = 1, .fds = fds[i], .anyfd = true,
                               .go = &go};
    run_workers(w, nw, alloc_worker);
    for (int i = 0; i < nw; i++) {
        KCHECK_EQ(w[i].errors, 0);
        KCHECK_EQ(fd_chunk_of(fds[i][0]), fdtable_partition_of_cpu(w[i].cpu));
    }
    KCHECK(fdtable_debug_dir(t) == dir);
    fdtable_release(t);
    settle();
}

// Neighbouring fds (installed, closed, looked up by commuting calls) never share
// a cache line, and claiming the lowest fd writes only that fd's line.
KTEST(fdtable_one_line_per_fd)
{
    struct fdtable *t = fdtable_new();
    KREQUIRE(t);
    enum { N = 70 }; // across the first chunk boundary
    uintptr_t lines[N];
    for (int fd = 0; fd < N; fd++) {
        KREQUIRE(fd_install(t, tfile_new(), false, false, 0, FD_MAX) == fd);
        lines[fd] = (uintptr_t)fdtable_debug_slot(t, fd) / CACHELINE;
    }
    int shared = 0;
    for (int a = 0; a < N; a++)
        for (int b = a + 1; b < N; b++)
            shared += lines[a] == lines[b];
    KCHECK_EQ(shared, 0);
    KCHECK_EQ(fd_close(t, 5), 0);
    KCHECK_EQ(fd_close(t, 66), 0);
    KCHECK_EQ(fd_install(t, tfile_new(), false, false, 0, FD_MAX), 5); // still the lowest
    KCHECK_EQ(fd_install(t, tfile_new(), false, false, 6, FD_MAX), 66);
    fdtable_release(t);
    settle();
}

// ---- lookups racing with close ----------------------------------------------------------

#define HOT_FD 7

static void lookup_worker(void *arg)
{
    struct worker *w = arg;
    while (!load_acquire(w->go))
        pause();
    for (int i = 0; i < w->n; i++) {
        struct fd_ref r = fd_get(w->t, HOT_FD);
        if (r.f) {
            struct tfile *tf = r.f->priv;
            for (int k = 0; k < 20; k++) // hold it a while, as a read would
                if (tf->magic != LIVE)
                    w->errors++;
            fd_put(r);
        } else {
            w->id++; // caught between a close and the next install
        }
    }
}

static void churn_worker(void *arg)
{
    struct worker *w = arg;
    while (!load_acquire(w->go))
        pause();
    for (int i = 0; i < w->n; i++) {
        if (i % 2)
            fd_close(w->t, HOT_FD);
        struct file *f = tfile_new();
        if (fd_install_at(w->t, HOT_FD, f, false) != HOT_FD) {
            w->errors++;
            file_put(f);
        }
    }
}

KTEST(fdtable_close_while_lookup)
{
    struct fdtable *t = fdtable_new();
    KREQUIRE(t);
    fdtable_hold(t); // two users: lookups take references, as in a threaded process
    KREQUIRE(fd_install_at(t, HOT_FD, tfile_new(), false) == HOT_FD);
    volatile int go = 0;
    struct worker w[3] = {
        {.t = t, .cpu = 0, .n = 20000, .go = &go},
        {.t = t, .cpu = 1 % ncpu, .n = 20000, .go = &go},
        {.t = t, .cpu = 1 % ncpu, .n = 5000, .go = &go},
    };
    struct thread *th[3];
    for (int i = 0; i < 3; i++) {
        cpumask_t m;
        cpumask_clear(&m);
        cpumask_set(&m, w[i].cpu);
        th[i] = kthread_create("fdt race", i < 2 ? lookup_worker : churn_worker, &w[i], &m);
    }
    go = 1;
    for (int i = 0; i < 3; i++)
        thread_join(th[i]);
    KCHECK_EQ(w[0].errors + w[1].errors, 0); // never a released file
    KCHECK_EQ(w[2].errors, 0);
    released = 0;
    fdtable_release(t);
    fdtable_release(t);
    settle();
    KCHECK_EQ(released, 1); // only the last file was still open
}

// In a shared table a lookup borrows the file: a close meanwhile leaves it
// open until the borrow ends, and then it is released at once, exactly once.
KTEST(fdtable_close_while_borrowed)
{
    struct fdtable *t = fdtable_new();
    KREQUIRE(t);
    fdtable_hold(t); // two users: lookups borrow
    struct file *f = tfile_new();
    KREQUIRE(f);
    struct tfile *tf = f->priv;
    KREQUIRE(fd_install(t, f, false, false, 0, FD_MAX) == 0);
    struct fd_ref a = fd_get(t, 0), b = fd_get(t, 0);
    KCHECK(a.f == f && a.borrowed && b.f == f && b.borrowed);
    KCHECK_EQ(f->refs, 1); // borrows leave the descriptor count alone
    released = 0;
    KCHECK_EQ(fd_close(t, 0), 0);
    KCHECK(fd_get(t, 0).f == NULL);
    KCHECK_EQ(released, 0);
    KCHECK_EQ(tf->magic, LIVE);
    fd_put(a);
    KCHECK_EQ(released, 0);
    fd_put(b);
    KCHECK_EQ(released, 1); // the last borrow released it, at once
    // A single-holder table writes nothing, and the last close releases at once.
    fdtable_release(t);
    struct file *g = tfile_new();
    KREQUIRE(g && fd_install(t, g, false, false, 0, FD_MAX) == 0);
    struct fd_ref c = fd_get(t, 0);
    KCHECK(c.f == g && !c.borrowed);
    fd_put(c);
    KCHECK_EQ(fd_close(t, 0), 0);
    KCHECK_EQ(released, 2);
    fdtable_release(t);
    settle();
    KCHECK_EQ(released, 2);
}

// ---- growth, copy, close-on-exec ----------------------------------------------------------

static void reader_worker(void *arg)
{
    struct worker *w = arg;
    while (!load_acquire(w->go))
        pause();
    while (load_acquire(w->go) == 1) {
        struct fd_ref r = fd_get(w->t, 0);
        if (!r.f)
            w->errors++;
        fd_put(r);
        w->id++;
    }
}

KTEST(fdtable_grows_under_readers)
{
    struct fdtable *t = fdtable_new();
    KREQUIRE(t);
    fdtable_hold(t);
    KREQUIRE(fd_install(t, tfile_new(), false, false, 0, FD_MAX) == 0);
    volatile int go = 0;
    struct worker w = {.t = t, .cpu = 1 % ncpu, .go = &go};
    cpumask_t m;
    cpumask_clear(&m);
    cpumask_set(&m, w.cpu);
    struct thread *th = kthread_create("fdt reader", reader_worker, &w, &m);
    go = 1;
    int got = 0;
    for (int fd = 1000; fd < FD_MAX; fd = fd * 3 + 1) // the directory doubles several times
        got += fd_install_at(t, fd, tfile_new(), false) == fd;
    KCHECK(fd_install(t, tfile_new(), false, false, 500000, FD_MAX) == 500000);
    KCHECK_EQ(fd_install_at(t, FD_MAX, tfile_new(), false), -EBADF);
    go = 2;
    thread_join(th);
    KCHECK_EQ(w.errors, 0);
    KCHECK(got >= 6);
    fdtable_release(t);
    fdtable_release(t);
    settle();
}

// A copied table's fds hold their files (per-CPU counts): the owned count
// stays as it was, and a file the parent closes lives on until the child's
// last fd to it goes, then is released at once, exactly once.
KTEST(fdtable_copy_and_close_on_exec)
{
    struct fdtable *t = fdtable_new();
    KREQUIRE(t);
    struct file *a = tfile_new(), *b = tfile_new();
    KREQUIRE(fd_install(t, a, false, false, 0, FD_MAX) == 0);
    KREQUIRE(fd_install(t, b, true, false, 0, FD_MAX) == 1);
    KREQUIRE(fd_install_at(t, 3000, (file_get(a), a), false) == 3000);
    struct fdtable *c = fdtable_copy(t);
    KREQUIRE(c);
    struct fd_ref r0 = fd_get(c, 0), r1 = fd_get(c, 1), r2 = fd_get(c, 3000);
    KCHECK(r0.f == a && r1.f == b && r2.f == a); // the same descriptions
    fd_put(r0), fd_put(r1), fd_put(r2);
    KCHECK_EQ(fd_get_cloexec(c, 1), 1);
    KCHECK_EQ(a->refs, 2); // the parent's, untouched by the copy
    KCHECK_EQ(refcache_read_exact(&a->shared), 1 + 2 * FILE_HOLD); // base + 2 holds
    fdtable_close_on_exec(c);
    KCHECK(fd_get(c, 1).f == NULL);
    KCHECK(fd_get(t, 1).f == b); // the original keeps it
    KCHECK_EQ(b->refs, 1);
    KCHECK_EQ(refcache_read_exact(&b->shared), 1);
    KCHECK_EQ(fd_close(c, 2), -EBADF);
    released = 0;
    KCHECK_EQ(fd_close(t, 0), 0); // the parent lets go of a: the child's fds keep it
    KCHECK_EQ(fd_close(t, 3000), 0);
    KCHECK_EQ(a->refs, 0);
    KCHECK_EQ(released, 0);
    KCHECK_EQ(fd_close(c, 0), 0);
    KCHECK_EQ(released, 0);
    fdtable_release(c); // its fd 3000 was a's last reference
    KCHECK_EQ(released, 1);
    fdtable_release(t);
    settle();
    KCHECK_EQ(released, 2);
}

// ---- benchmark (reports, asserts nothing about speed) -----------------------------------

struct bench {
    struct fdtable *t;
    struct inode *dir;
    int cpu;
    bool anyfd, full;
    volatile int *go;
    uint64_t ns;
    int n, errors;
};

// What openat+close do past the path copy: look up, open, install, close.
static void bench_worker(void *arg)
{
    struct bench *b = arg;
    char name[16];
    ksnprintf(name, sizeof name, "b%d", b->cpu);
    struct inode *ip;
    if (fs_create(b->dir, name, 0644, 0, &ip) == 0)
        fs_iput(ip);
    struct file *pre = tfile_new();
    while (!load_acquire(b->go))
        pause();
    uint64_t t0 = nsec_now();
    for (int i = 0; i < b->n; i++) {
        if (b->full) {
            struct file *f;
            if (fs_lookup(b->dir, name, 0, &ip) || file_open_inode(ip, O_RDONLY, &f)) {
                b->errors++;
                continue;
            }
            int fd = fd_install(b->t, f, false, b->anyfd, 0, FD_MAX);
            b->errors += fd < 0 || fd_close(b->t, fd) != 0;
        } else {
            file_get(pre);
            int fd = fd_install(b->t, pre, false, b->anyfd, 0, FD_MAX);
            b->errors += fd < 0 || fd_close(b->t, fd) != 0;
        }
    }
    b->ns = nsec_now() - t0;
    file_put(pre);
}

static void bench_one(struct inode *dir, int ncpus, bool anyfd, bool full)
{
    settle(); // earlier rounds' deferred frees run now, not during the timing
    struct fdtable *t = fdtable_new();
    if (!t)
        return;
    for (int i = 0; i < 3; i++) // 0, 1 and 2 are taken, as in a process
        fd_install(t, tfile_new(), false, false, 0, FD_MAX);
    volatile int go = 0;
    struct bench b[NW];
    struct thread *th[NW];
    for (int i = 0; i < ncpus; i++) {
        b[i] = (struct bench){.t = t, .dir = dir, .cpu = i, .anyfd = anyfd, .full = full, .go = &go,
                              .n = full ? 2000 : 20000};
        if (i)
            fdtable_hold(t);
        cpumask_t m;
        cpumask_clear(&m);
        cpumask_set(&m, i);
        th[i] = kthread_create("fdt bench", bench_worker, &b[i], &m);
    }
    go = 1;
    uint64_t ns = 0;
    int ops = 0, errors = 0;
    for (int i = 0; i < ncpus; i++) {
        thread_join(th[i]);
        ns = MAX(ns, b[i].ns);
        ops += b[i].n;
        errors += b[i].errors;
    }
    kprintf("# fdtable_bench: %d CPU(s), %s, %s: %lu ns per open+close per CPU, %lu ops/ms total%s\n",
            ncpus, full ? "lookup+open+install+close" : "install+close", anyfd ? "O_ANYFD" : "lowest fd",
            ns * ncpus / ops, ops * 1000000UL / (ns ? ns : 1), errors ? " (ERRORS)" : "");
    KCHECK_EQ(errors, 0);
    for (int i = 0; i < ncpus; i++)
        fdtable_release(t);
}

KTEST(bench_fdtable)
{
    struct inode *dir;
    fs_mkdir(NULL, "/fdtbench", 0755);
    KREQUIRE(fs_lookup(NULL, "/fdtbench", 0, &dir) == 0);
    int counts[2] = {1, MIN(ncpu, NW)};
    for (int c = 0; c < (ncpu > 1 ? 2 : 1); c++)
        for (int full = 0; full < 2; full++)
            for (int any = 1; any >= 0; any--)
                bench_one(dir, counts[c], any, full);
    fs_iput(dir);
    fst_rm_rf("/fdtbench"); // leave the root as we found it
    settle();
}

KTEST(fdtable_limits)
{
    struct fdtable *t = fdtable_new();
    KREQUIRE(t);
    struct file *f = tfile_new();
    KREQUIRE(f);
    KCHECK_EQ(fd_install(t, f, false, false, FD_MAX - 1, FD_MAX), FD_MAX - 1);
    file_get(f);
    KCHECK_EQ(fd_install(t, f, false, false, FD_MAX - 1, FD_MAX), -EMFILE); // nothing above the last
    KCHECK_EQ(fd_install(t, f, false, false, FD_MAX, FD_MAX), -EINVAL);
    KCHECK_EQ(fd_install(t, f, false, false, -1, FD_MAX), -EINVAL);
    KCHECK_EQ(fd_install_at(t, -1, f, false), -EBADF);
    KCHECK(fd_get(t, FD_MAX).f == NULL && fd_get(t, -1).f == NULL);
    KCHECK_EQ(fd_close(t, FD_MAX), -EBADF);
    file_put(f);
    fd_close_range(t, 0, ~0U, false);
    KCHECK(fd_get(t, FD_MAX - 1).f == NULL);
    fdtable_release(t);
    settle();
}

// Whole-table walks (copy, close-on-exec, close_range) visit the chunks made,
// in whatever order they were made, and nothing else: fds in chunks made out
// of index order are all found, and no chunk is made in the copy for an empty
// one.
KTEST(fdtable_walks_visit_chunks_made)
{
    struct fdtable *t = fdtable_new();
    KREQUIRE(t);
    struct file *a = tfile_new(), *b = tfile_new(), *c = tfile_new();
    KREQUIRE(a && b && c);
    KREQUIRE(fd_install_at(t, 3000, a, false) == 3000); // chunk 46 first
    KREQUIRE(fd_install_at(t, 130, b, FDI_CLOEXEC) == 130); // then chunk 2
    KREQUIRE(fd_install(t, c, false, false, 0, FD_MAX) == 0); // then chunk 0
    KREQUIRE(fd_install_at(t, 70, (file_get(c), c), false) == 70); // chunk 1
    KCHECK_EQ(fd_close(t, 70), 0); // chunk 1 stays, empty
    struct fdtable *cp = fdtable_copy(t);
    KREQUIRE(cp);
    KCHECK(fd_get(cp, 0).f == c && fd_get(cp, 130).f == b && fd_get(cp, 3000).f == a);
    KCHECK(fdtable_debug_slot(cp, 70) == NULL); // an empty chunk is not copied
    fdtable_close_on_exec(cp);
    KCHECK(fd_get(cp, 130).f == NULL);
    KCHECK(fd_get(cp, 3000).f == a && fd_get(cp, 0).f == c);
    fd_close_range(t, 1, 3000, false); // chunks 46 and 2, not fd 0
    KCHECK(fd_get(t, 3000).f == NULL && fd_get(t, 130).f == NULL);
    KCHECK(fd_get(t, 0).f == c);
    fd_close_range(cp, 0, 2999, true); // marks fd 0 only
    KCHECK_EQ(fd_get_cloexec(cp, 0), 1);
    KCHECK_EQ(fd_get_cloexec(cp, 3000), 0);
    fdtable_release(cp);
    fdtable_release(t);
    settle();
}

// RLIMIT_NOFILE as fd_install's limit: lowest-fd allocation stops below it and
// makes no chunk above it; O_ANYFD uses only partition rounds that begin below
// it, and with none (limit <= 64) gives the lowest free fd.
KTEST(fdtable_nofile_limit)
{
    struct fdtable *t = fdtable_new();
    KREQUIRE(t);
    for (int i = 0; i < 10; i++)
        KREQUIRE(fd_install(t, tfile_new(), false, false, 0, 10) == i);
    struct file *f = tfile_new();
    KREQUIRE(f);
    KCHECK_EQ(fd_install(t, f, false, false, 0, 10), -EMFILE);
    KCHECK_EQ(fd_install(t, f, false, false, 10, 10), -EMFILE);
    KCHECK_EQ(fd_install(t, f, false, true, 0, 10), -EMFILE);
    KCHECK(fdtable_debug_slot(t, 64) == NULL); // nothing made above the limit
    KCHECK_EQ(fd_close(t, 7), 0);
    KCHECK_EQ(fd_install(t, f, false, true, 0, 64), 7); // no partition below 64: lowest
    int fd = fd_install(t, tfile_new(), false, true, 0, 65);
    KCHECK(fd >= 64 && fd < 65 + 64 * ncpu); // one round of partitions
    KCHECK_EQ(fd_install(t, tfile_new(), false, false, 0, FD_MAX), 10); // the limit is per call
    fdtable_release(t);
    settle();
}
