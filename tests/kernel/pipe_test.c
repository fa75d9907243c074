// Tests for pipes between kernel threads on different CPUs that borrow one user
// address space (pipe data moves through user memory): blocking in both
// directions, order, PIPE_BUF atomicity of write and writev with two writers,
// EOF and EPIPE waking blocked threads; the ring's pages come with the writes,
// and a write that gets no page fails whole. bench_pipe (make bench) reports
// throughput.
#include "file/file.h"
#include "file/pipe.h"
#include "fstest.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "mm/uvm.h"
#include "proc/sched.h"
#include "sync/percpu.h"
#include "testutil.h"
#include "uapi/errno.h"
#include "x86/smp.h"

#define BASE 0x400000UL
#define AREA (1UL << 20) // each thread's user buffer

static struct vmspace *vs;

static void enter_vm(void)
{
    struct thread *t = thread_current();
    push_off();
    t->vm = vs;
    uvm_switch(NULL, vs);
    pop_off();
}

static void leave_vm(void)
{
    struct thread *t = thread_current();
    push_off();
    t->vm = NULL;
    uvm_switch(vs, NULL);
    pop_off();
}

struct pworker {
    struct file *f;
    int id, cpu;
    size_t total, chunk;
    uint64_t ubuf;
    long result;
    int errors;
    uint64_t ns;
};

static void start(struct pworker *w, int n, void (**fn)(void *))
{
    struct thread *th[4];
    for (int i = 0; i < n; i++) {
        cpumask_t m;
        cpumask_clear(&m);
        cpumask_set(&m, w[i].cpu);
        w[i].ubuf = BASE + i * AREA;
        th[i] = kthread_create("pipe test", fn[i], &w[i], &m);
    }
    for (int i = 0; i < n; i++)
        thread_join(th[i]);
}

// Writes `total` bytes in writes of `chunk`: the sequence i*7 (id 0), or
// whatever the buffer holds (id 1, benchmarks).
static void writer(void *arg)
{
    struct pworker *w = arg;
    enter_vm();
    char k[256];
    uint64_t t0 = nsec_now();
    for (size_t done = 0; done < w->total;) {
        size_t n = MIN(w->chunk, w->total - done);
        for (size_t i = 0; i < n && w->id == 0; i += sizeof k) { // id 1: benchmark, no pattern
            size_t m = MIN(sizeof k, n - i);
            for (size_t j = 0; j < m; j++)
                k[j] = (char)((done + i + j) * 7);
            copy_to_user(w->ubuf + i, k, m);
        }
        long r = file_write(w->f, w->ubuf, n, NULL);
        if (r <= 0) {
            w->result = r;
            break;
        }
        done += r;
        w->result = (long)done;
    }
    w->ns = nsec_now() - t0;
    leave_vm();
}

// Reads until EOF, checking the sequence (single writer, id 0).
static void reader(void *arg)
{
    struct pworker *w = arg;
    enter_vm();
    char k[256];
    size_t got = 0;
    uint64_t t0 = nsec_now();
    for (;;) {
        long r = file_read(w->f, w->ubuf, w->chunk, NULL);
        if (r <= 0) {
            w->result = r;
            break;
        }
        for (long i = 0; i < r && w->id == 0; i += sizeof k) {
            long m = MIN((long)sizeof k, r - i);
            copy_from_user(k, w->ubuf + i, m);
            for (long j = 0; j < m; j++)
                w->errors += k[j] != (char)((got + i + j) * 7);
        }
        got += r;
    }
    w->total = got;
    w->ns = nsec_now() - t0;
    leave_vm();
}

static bool setup(void)
{
    if (!(vs = vmspace_new()))
        return false;
    return uvm_map(vs, BASE, 4 * AREA, VM_READ | VM_WRITE, true) == (long)BASE;
}

static void teardown(void) { vmspace_put(vs); }

KTEST(pipe_blocking_order_and_eof)
{
    KREQUIRE(setup());
    struct file *rd, *wr;
    KREQUIRE(pipe_create(0, &rd, &wr) == 0);
    // Odd write sizes and a small read size: the writer blocks on a full pipe,
    // the reader on an empty one, many times over.
    struct pworker w[2] = {
        {.f = wr, .id = 0, .cpu = 0, .total = 3 << 20, .chunk = 10007},
        {.f = rd, .id = 0, .cpu = 1 % ncpu, .chunk = 3001},
    };
    void (*fn[2])(void *) = {writer, reader};
    struct thread *rt;
    cpumask_t m;
    cpumask_clear(&m);
    cpumask_set(&m, w[1].cpu);
    w[1].ubuf = BASE + AREA;
    rt = kthread_create("pipe reader", reader, &w[1], &m);
    start(w, 1, fn);
    file_put(wr); // last writer: the blocked reader must wake with EOF
    thread_join(rt);
    KCHECK_EQ(w[0].result, 3 << 20);
    KCHECK_EQ(w[1].result, 0);
    KCHECK_EQ(w[1].total, 3 << 20);
    KCHECK_EQ(w[1].errors, 0);
    file_put(rd);
    teardown();
}

// Two writers of PIPE_BUF-sized records: each record must arrive whole.
static void record_reader(void *arg)
{
    struct pworker *w = arg;
    enter_vm();
    static char rec[PIPE_BUF];
    size_t got = 0;
    for (;;) {
        long r = file_read(w->f, w->ubuf, PIPE_BUF - got % PIPE_BUF, NULL);
        if (r <= 0)
            break;
        copy_from_user(rec + got % PIPE_BUF, w->ubuf, r);
        got += r;
        if (got % PIPE_BUF == 0) {
            for (int i = 1; i < PIPE_BUF; i++)
                w->errors += rec[i] != rec[0];
            w->result++;
        }
    }
    w->total = got;
    leave_vm();
}

static void record_writer(void *arg)
{
    struct pworker *w = arg;
    enter_vm();
    static char rec[2][PIPE_BUF];
    memset(rec[w->id], 'A' + w->id, PIPE_BUF);
    copy_to_user(w->ubuf, rec[w->id], PIPE_BUF);
    // chunk != 0: as writev of two segments (chunk bytes, then the rest).
    struct iovec v[2] = {{w->ubuf, w->chunk}, {w->ubuf + w->chunk, PIPE_BUF - w->chunk}};
    for (size_t i = 0; i < w->total; i++) {
        long r = w->chunk ? w->f->ops->writev(w->f, v, 2, PIPE_BUF)
                          : file_write(w->f, w->ubuf, PIPE_BUF, NULL);
        w->errors += r != PIPE_BUF;
    }
    leave_vm();
}

static void records(size_t split)
{
    KREQUIRE(setup());
    struct file *rd, *wr;
    KREQUIRE(pipe_create(0, &rd, &wr) == 0);
    struct pworker w[3] = {
        {.f = wr, .id = 0, .cpu = 0, .total = 300, .chunk = split},
        {.f = wr, .id = 1, .cpu = 1 % ncpu, .total = 300, .chunk = split},
        {.f = rd, .cpu = 1 % ncpu},
    };
    cpumask_t m;
    cpumask_clear(&m);
    cpumask_set(&m, w[2].cpu);
    w[2].ubuf = BASE + 2 * AREA;
    struct thread *rt = kthread_create("pipe reader", record_reader, &w[2], &m);
    void (*fn[2])(void *) = {record_writer, record_writer};
    start(w, 2, fn);
    file_put(wr);
    thread_join(rt);
    KCHECK_EQ(w[0].errors + w[1].errors, 0);
    KCHECK_EQ(w[2].errors, 0); // no record mixes two writers
    KCHECK_EQ(w[2].result, 600);
    file_put(rd);
    teardown();
}

KTEST(pipe_buf_writes_are_atomic) { records(0); }
KTEST(pipe_buf_writevs_are_atomic) { records(1000); }

KTEST(pipe_epipe_wakes_blocked_writer)
{
    KREQUIRE(setup());
    struct file *rd, *wr;
    KREQUIRE(pipe_create(0, &rd, &wr) == 0);
    struct pworker w = {.f = wr, .id = 0, .cpu = 1 % ncpu, .total = 1 << 20, .chunk = 1 << 20};
    cpumask_t m;
    cpumask_clear(&m);
    cpumask_set(&m, w.cpu);
    w.ubuf = BASE;
    struct thread *wt = kthread_create("pipe writer", writer, &w, &m);
    sched_sleep_until(nsec_now() + 20000000); // let it fill the pipe and block
    file_put(rd);
    thread_join(wt);
    // It wrote what fit, then the reader went: a short count (or EPIPE).
    KCHECK(w.result == -EPIPE || (w.result >= PIPE_PAGES * 4096 && w.result < 1 << 20));
    file_put(wr);
    teardown();
}

static long in_ring(struct file *f)
{
    int n = -1;
    long r = file_ioctl(f, FIONREAD, BASE + AREA); // through the user page
    KCHECK_EQ(r, 0);
    copy_from_user(&n, BASE + AREA, sizeof n);
    return n;
}

// A new pipe holds no page; the first write into each page of the ring takes
// it, and the pipe's last close gives every one back.
KTEST(pipe_pages_come_with_writes)
{
    KREQUIRE(setup());
    enter_vm();
    for (uint64_t va = BASE; va < BASE + 3 * PGSIZE; va += PGSIZE) // the user pages first
        KCHECK(copy_to_user(va, "x", 1) == 0);
    KCHECK(copy_to_user(BASE + AREA, "x", 1) == 0);
    struct file *rd[8], *wr[8];
    size_t free0 = fst_free_pages();
    for (int i = 0; i < 8; i++)
        KREQUIRE(pipe_create(O_NONBLOCK, &rd[i], &wr[i]) == 0);
    size_t made = free0 - fst_free_pages();
    kprintf("# 8 new pipes took %lu pages (kmalloc's slabs)\n", made);
    KCHECK(made < 8); // a 64 KiB ring each would be 128
    size_t free1 = fst_free_pages();
    KCHECK_EQ(file_write(wr[0], BASE, 100, NULL), 100);
    KCHECK_EQ(free1 - fst_free_pages(), 1);
    KCHECK_EQ(file_write(wr[0], BASE, 2 * PGSIZE, NULL), 2 * PGSIZE);
    KCHECK_EQ(free1 - fst_free_pages(), 3);
    KCHECK_EQ(file_read(rd[0], BASE, 2 * PGSIZE + 100, NULL), 2 * PGSIZE + 100);
    KCHECK_EQ(free1 - fst_free_pages(), 3); // kept for the next writes
    for (int i = 0; i < 8; i++) {
        file_put(rd[i]);
        file_put(wr[i]);
    }
    KCHECK(fst_pages_back(free0, fst_free_pages(), 0));
    leave_vm();
    teardown();
}

// With no free page, a write that needs a new page of the ring fails with
// ENOMEM and leaves nothing in it, even when its first bytes would fit in the
// page it has (a write of at most PIPE_BUF bytes goes in whole or not at all).
KTEST(pipe_write_without_a_page_fails_whole)
{
    KREQUIRE(setup());
    enter_vm();
    KCHECK(copy_to_user(BASE, "x", 1) == 0 && copy_to_user(BASE + AREA, "x", 1) == 0);
    struct file *rd, *wr;
    KREQUIRE(pipe_create(O_NONBLOCK, &rd, &wr) == 0);
    KCHECK_EQ(file_write(wr, BASE, PGSIZE - 100, NULL), PGSIZE - 100); // one page
    void *held = NULL;
    for (void *pg; (pg = page_alloc());) {
        *(void **)pg = held;
        held = pg;
    }
    KCHECK_EQ(file_write(wr, BASE, 200, NULL), -ENOMEM); // straddles into page 2
    KCHECK_EQ(in_ring(rd), PGSIZE - 100);
    KCHECK_EQ(file_write(wr, BASE, 100, NULL), 100); // fits the page it has
    KCHECK_EQ(file_write(wr, BASE, PGSIZE + 1, NULL), -ENOMEM); // more than PIPE_BUF
    while (held) {
        void *next = *(void **)held;
        page_free(held);
        held = next;
    }
    KCHECK_EQ(file_write(wr, BASE, 200, NULL), 200);
    KCHECK_EQ(in_ring(rd), PGSIZE + 200);
    file_put(rd);
    file_put(wr);
    leave_vm();
    teardown();
}

KTEST(bench_pipe)
{
    KREQUIRE(setup());
    for (int cpus = 1; cpus <= MIN(ncpu, 2); cpus++) {
        size_t chunks[2] = {4096, 65536};
        for (int c = 0; c < 2; c++) {
            struct file *rd, *wr;
            KREQUIRE(pipe_create(0, &rd, &wr) == 0);
            struct pworker w[2] = {
                {.f = wr, .id = 1, .cpu = 0, .total = 16 << 20, .chunk = chunks[c]},
                {.f = rd, .id = 1, .cpu = cpus - 1, .chunk = chunks[c]},
            };
            cpumask_t m;
            cpumask_clear(&m);
            cpumask_set(&m, w[1].cpu);
            w[1].ubuf = BASE + AREA;
            struct thread *rt = kthread_create("pipe reader", reader, &w[1], &m);
            void (*fn[1])(void *) = {writer};
            start(w, 1, fn);
            file_put(wr);
            thread_join(rt);
            KCHECK_EQ(w[1].total, 16 << 20);
            kprintf("# pipe_bench: writer and reader on %s, %lu-byte writes and reads: %lu MiB/s\n",
                    cpus == 1 ? "one CPU" : "two CPUs", chunks[c],
                    (16UL << 20) * 1000000000UL / (MAX(w[0].ns, w[1].ns) + 1) >> 20);
            file_put(rd);
        }
    }
    teardown();
}
