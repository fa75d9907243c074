// Directory modification times kept per CPU.
//
// Commute: creates, unlinks, links, renames and mkdirs of different names in one
// directory. POSIX has each of them set the directory's mtime and ctime; a
// shared time field would make every one of them write one line of the
// directory inode (Linux does: inode_set_mtime_to_ts under the directory's
// i_rwsem, which all of them already share). Here a change records "now" in the
// calling CPU's own cache of (directory, time) slots, in its per-CPU area, so two
// changes on different CPUs write different lines and read nothing of each other.
//
// The directory's own fields receive a slot's time (the larger of the two) when
// the slot is evicted by another directory hashing to it, and when the CPU
// flushes its refcache (refcache_set_flush_hook: once per refcache epoch). A
// directory is freed only after refcache has seen its references at zero for
// two epochs in which every CPU flushed; changing a directory needs a reference,
// so by then no slot names it. stat (and relatime) reads the directory's fields
// and every CPU's slot for it, writing nothing: each CPU's cache has a sequence
// its owner bumps around every slot change, and the reader retries if one moved.
// utimensat (fs_set_times) empties every CPU's cache first (an xcall), so that an
// explicit time is not overridden by a later cached one.
#include "inode.h"
#include "percpu.h"
#include "seqlock.h"
#include "smp.h"

#define DT_SLOTS 256 // per CPU; a power of two

struct dt_slot {
    struct inode *dir;
    uint64_t time;
};

struct dt_cpu {
    struct seqlock lock; // only the owner writes; readers check the sequence
    struct dt_slot slot[DT_SLOTS];
};
static DEFINE_PERCPU(struct dt_cpu, dt_cpu);

static struct dt_slot *slot_for(struct dt_cpu *dc, const struct inode *dir)
{
    uintptr_t h = (uintptr_t)dir >> 8; // inodes are 256-byte objects
    h ^= h >> 8;
    return &dc->slot[h & (DT_SLOTS - 1)];
}

static void store_max(uint64_t *f, uint64_t t)
{
    uint64_t v = __atomic_load_n(f, __ATOMIC_RELAXED);
    while (v < t && !__atomic_compare_exchange_n(f, &v, t, false, __ATOMIC_RELAXED,
                                                 __ATOMIC_RELAXED))
        ;
}

// Inside a write section of dc->lock.
static void flush_slot(struct dt_slot *s)
{
    if (s->dir) {
        store_max(&s->dir->mtime, s->time);
        store_max(&s->dir->ctime, s->time);
    }
    s->dir = NULL;
    s->time = 0;
}

void dirtime_touch(struct inode *dir, uint64_t now)
{
    push_off(); // stay on this CPU: the cache must be our own
    struct dt_cpu *dc = this_cpu_ptr(&dt_cpu);
    struct dt_slot *s = slot_for(dc, dir);
    seq_write_begin(&dc->lock);
    if (s->dir != dir) {
        flush_slot(s);
        s->dir = dir;
    }
    if (s->time < now)
        s->time = now;
    seq_write_end(&dc->lock);
    pop_off();
}

void dirtime_flush_cpu(void)
{
    push_off();
    struct dt_cpu *dc = this_cpu_ptr(&dt_cpu);
    seq_write_begin(&dc->lock);
    for (int i = 0; i < DT_SLOTS; i++)
        if (dc->slot[i].dir)
            flush_slot(&dc->slot[i]);
    seq_write_end(&dc->lock);
    pop_off();
}

static void flush_xcall(void *arg)
{
    (void)arg;
    dirtime_flush_cpu();
}

void dirtime_flush_all(void) { xcall_all(flush_xcall, NULL); }

// Sum of every online CPU's sequence; sequences only grow, so an unchanged sum
// means no CPU changed its cache.
static uint64_t seq_sum(bool begin)
{
    uint64_t sum = 0;
    for_each_cpu(c, &cpu_online_mask) {
        struct seqlock *l = &per_cpu_ptr(&dt_cpu, c)->lock;
        sum += begin ? seq_read_begin(l) : READ_ONCE(l->seq);
    }
    return sum;
}

void dirtime_read(struct inode *dir, uint64_t *mtime, uint64_t *ctime)
{
    uint64_t seqs, m, c;
    do {
        seqs = seq_sum(true);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        m = READ_ONCE(dir->mtime);
        c = READ_ONCE(dir->ctime);
        for_each_cpu(cpu, &cpu_online_mask) {
            struct dt_slot *s = slot_for(per_cpu_ptr(&dt_cpu, cpu), dir);
            if (READ_ONCE(s->dir) == dir) {
                uint64_t t = READ_ONCE(s->time);
                m = MAX(m, t);
                c = MAX(c, t);
            }
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
    } while (seq_sum(false) != seqs);
    *mtime = m;
    *ctime = c;
}
