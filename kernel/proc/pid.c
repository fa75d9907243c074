// Process ids and the pid -> process table.
//
// Commute: allocating pids on different CPUs, and lookups of any pids. A pid is
// (CPU number << 22) | (that CPU's counter), so each CPU hands out ids from its own
// range with a per-CPU counter and no shared line; the first process started on
// CPU 0 gets pid 1. Lookups take no lock: readers walk a hash chain inside an
// epoch read section while writers (insert at creation, remove at reaping) lock
// just that chain's bucket, one cache line each. A removed process is freed only
// after an epoch grace period (proc.c), so a reader never sees freed memory.
// The table is split by the CPU bits of the pid: each CPU's pids hash into
// buckets in that CPU's per-CPU area, so processes made on different CPUs never
// share a bucket, and a CPU that forks and reaps in a loop writes only its own
// buckets (one shared table's buckets would all, over time, have been written
// last by some other CPU).
#include "proc/proc.h"
#include "sync/atomic.h"
#include "sync/percpu.h"

#define PID_CPU_SHIFT 22
#define PID_COUNTER_MAX ((1 << PID_CPU_SHIFT) - 1)
#define NBUCKET 128 // per CPU

struct bucket {
    struct spinlock lock;
    struct proc *head;
} __cacheline_aligned;

static DEFINE_PERCPU(struct bucket, pid_table[NBUCKET]);
static DEFINE_PERCPU(uint32_t, pid_counter);

// The bucket of pid, in the table of the CPU that made it; NULL if no such CPU.
static struct bucket *bucket_of(int pid)
{
    uint32_t c = (uint32_t)pid >> PID_CPU_SHIFT;
    if (c >= NCPU_MAX || !READ_ONCE(percpu_offset[c]))
        return NULL;
    uint32_t h = ((uint32_t)pid & PID_COUNTER_MAX) * 2654435761u;
    return &per_cpu_ptr(&pid_table, c)[0][(h ^ (h >> 16)) % NBUCKET];
}

int pid_alloc(void)
{
    for (;;) {
        preempt_disable();
        uint32_t n = this_cpu_read(pid_counter) % PID_COUNTER_MAX + 1; // 1..MAX, wraps
        this_cpu_write(pid_counter, n);
        int pid = (int)((uint32_t)cpu_id() << PID_CPU_SHIFT | n);
        preempt_enable();
        epoch_enter();
        bool used = pid_lookup(pid) != NULL; // only after a wrap-around
        epoch_exit();
        if (!used)
            return pid;
    }
}

void pid_insert(struct proc *p)
{
    struct bucket *b = bucket_of(p->pid);
    spin_lock(&b->lock);
    p->hash_next = b->head;
    store_release(&b->head, p); // readers see a complete p
    spin_unlock(&b->lock);
}

void pid_remove(struct proc *p)
{
    struct bucket *b = bucket_of(p->pid);
    spin_lock(&b->lock);
    for (struct proc **pp = &b->head; *pp; pp = &(*pp)->hash_next) {
        if (*pp == p) {
            store_release(pp, p->hash_next);
            break;
        }
    }
    spin_unlock(&b->lock);
}

// fn on every process in the table (kill(-1), /proc's listing, sysinfo),
// inside the caller's epoch read section: a process removed meanwhile may or may not be seen. Reads every
// bucket, so it shares lines with every insert and removal, as "all processes"
// must.
void pid_for_each(void (*fn)(struct proc *p, void *arg), void *arg)
{
    assert(epoch_in_reader());
    for (int c = 0; c < NCPU_MAX; c++) {
        if (!READ_ONCE(percpu_offset[c]))
            continue;
        struct bucket *t = per_cpu_ptr(&pid_table, c)[0];
        for (int i = 0; i < NBUCKET; i++)
            for (struct proc *p = load_acquire(&t[i].head); p; p = load_acquire(&p->hash_next))
                fn(p, arg);
    }
}

struct proc *pid_lookup(int pid)
{
    assert(epoch_in_reader());
    struct bucket *b = bucket_of(pid);
    struct proc *p = b ? load_acquire(&b->head) : NULL;
    for (; p; p = load_acquire(&p->hash_next))
        if (p->pid == pid)
            return p;
    return NULL;
}
