// Inode time stamps, kept per CPU.
//
// Commute: writes and reads of different parts of one file (POSIX: a write
// marks mtime and ctime, a read atime); creates, unlinks, links, renames and
// mkdirs of different names in one directory (its mtime and ctime); a rename of
// a file and a read or write of it (its ctime). With the times in the inode
// every one of them would write one line of it, and Linux's relatime would make
// every read read the mtime line too. Here a change records "now" in the calling
// CPU's own cache of (inode, atime, mtime, ctime) slots, one cache line per
// slot, in its per-CPU area: changes on different CPUs write different lines
// and read nothing of each other. atime is therefore strict (POSIX's rule: every
// read marks it): a read writes only its own CPU's slot, and relatime's test
// would need every CPU's mtime.
//
// An inode's own fields receive a slot's times (the larger of the two) when the
// slot is evicted by another inode hashing to it, and when the CPU flushes its
// refcache (refcache_set_flush_hook: once per refcache epoch) if the slot was
// not changed since the CPU's flush before. A slot a CPU keeps
// changing stays with it: the inode's line is written when the CPU stops, not
// once per epoch, so a file that CPUs keep reading or executing (a shell's
// binary, exec'd on every CPU) does not have each CPU's flush write the line
// of its size, which every read and exec reads (bench-cost: filedata_size<-
// fs_stat in fork+exec+wait).
//
// Lifetime. A slot records how many flushes its CPU had made at its last
// change (the CPU's own count: reading the global epoch instead made every
// change after an advance fetch the line the advancing CPU wrote), and the
// second flush after the change empties it. A running CPU flushes once in
// every refcache epoch (the epoch advances only when all have; a CPU whose
// tick stopped holds no slots), so a change in epoch e is emptied by the
// CPU's flush in epoch e + 2 at the latest. A change needs a reference to the
// inode, so its count reaches zero only after the last change, in an epoch
// r >= e; refcache releases an inode at a review in epoch r + 3 or later (its
// grace, fs/inode.c: one epoch more than other objects), after every CPU
// flushed in epoch r + 2 (the epoch advances only then). So by the free no
// slot names the inode. (Emptying at the first flush after the change needs
// no longer grace, but a flush may come just before a CPU's next change, and
// then even a slot changed every millisecond goes.) Under kpoison, inode_free
// checks that no slot names the inode (itime_check_unnamed).
//
// stat reads the one slot the inode hashes to on every CPU that may hold cached
// times for it (the inode's shard of the kernel's active set for link counts,
// times and link pins of its kind, files or directories, sync/activeset.h:
// CPUs that changed a time or a link count of, or pinned, an object of that
// kind and shard in the last several seconds; inode_touch's T_DIR says the
// kind, so that it need not read the inode's mode),
// one line per such CPU, under the slot's own sequence, which only the owning
// CPU moves, with interrupts off; and then the inode's fields. So a stat's
// cost follows the CPUs that use files like it, not the CPUs online. A flush
// moves the times into the inode before it empties the slot, so a time moved
// while stat runs is seen in one or the other. It writes nothing. utimensat
// (fs_set_times) empties every CPU's cache first (an xcall), so that an
// explicit time is not overridden by a cached one.
#include "inode.h"
#include "lib/hash.h"
#include "mm/mm.h"
#include "sync/activeset.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "sync/seqlock.h"
#include "sync/xcall.h"
#include "x86/smp.h"

#define IT_BITS 8
#define IT_SLOTS (1 << IT_BITS) // per CPU

struct it_slot {
    uint32_t seq; // odd while the owner changes the slot (interrupts off, so a
                  // flush from the tick or an xcall cannot run inside it)
    struct inode *ip;
    uint8_t set;      // ip's active set (ACTIVE_FILES or ACTIVE_DIRS)
    uint64_t time[3]; // atime, mtime, ctime; 0: not changed here
    uint64_t flushes; // it_flushes at the last change
} __cacheline_aligned;

static DEFINE_PERCPU(struct it_slot, it_slots[IT_SLOTS]);
static DEFINE_PERCPU(uint64_t, it_flushes); // [p] this CPU's periodic flushes


// Each CPU salts the index (percpu_slot), as refcache does: with one index for
// all, two CPUs that both cached inode X's times and then both change inode O,
// which shares X's slot, would both evict X and write its line together, for
// calls on O that commute. h is mix64 of the inode's address, computed once
// by a reader that visits many CPUs.
static inline uint64_t inode_hash(const struct inode *ip) { return mix64((uintptr_t)ip); }

static inline struct it_slot *slot_at(int cpu, uint64_t h)
{
    return &per_cpu_ptr(&it_slots, cpu)[0][percpu_slot(h, cpu, IT_BITS)];
}

static uint64_t *inode_field(struct inode *ip, int i)
{
    return i == 0 ? &ip->atime : i == 1 ? &ip->mtime : &ip->ctime;
}

uint64_t fs_time_now(void) { return realtime_nsec(); }

static void store_max(uint64_t *f, uint64_t t)
{
    uint64_t v = load_relaxed(f);
    while (v < t && !__atomic_compare_exchange_n(f, &v, t, false, __ATOMIC_RELAXED,
                                                 __ATOMIC_RELAXED))
        ;
}

// Inside a write section: move the slot's times into its inode, empty it.
static void flush_slot(struct it_slot *s)
{
    for (int i = 0; i < 3; i++) {
        if (s->ip && s->time[i])
            store_max(inode_field(s->ip, i), s->time[i]);
        WRITE_ONCE(s->time[i], 0);
    }
    store_release(&s->ip, NULL); // after the inode's fields (read_slot)
}

void inode_touch(struct inode *ip, int which)
{
    uint64_t now = fs_time_now();
    push_off(); // stay on this CPU: the cache must be our own
    struct it_slot *s = slot_at(cpu_id(), inode_hash(ip));
    int set = attr_set(which & T_DIR);
    inode_kind_check(ip, which & T_DIR);
    if (which & T_DIR) // a constant set each way: the join's indexing folds
        kernel_active_join(ACTIVE_DIRS, ip);
    else
        kernel_active_join(ACTIVE_FILES, ip);
    seqcount_write_begin(&s->seq);
    if (s->ip != ip) {
        flush_slot(s);
        WRITE_ONCE(s->ip, ip);
        s->set = (uint8_t)set;
    }
    for (int i = 0; i < 3; i++)
        if ((which & (T_ATIME << i)) && s->time[i] < now)
            WRITE_ONCE(s->time[i], now);
    s->flushes = this_cpu_read(it_flushes);
    seqcount_write_end(&s->seq);
    pop_off();
}

bool itime_flush_cpu(bool all)
{
    bool kept = false;
    push_off();
    uint64_t n = this_cpu_read(it_flushes);
    if (!all)
        this_cpu_write(it_flushes, ++n);
    for (int i = 0; i < IT_SLOTS; i++) {
        struct it_slot *s = &this_cpu_ptr(&it_slots)[0][i];
        if (!s->ip)
            continue;
        if (!all && s->flushes + 1 >= n) {
            kept = true; // changed since the flush before: look again next time
            kernel_active_keep(s->set, s->ip);
            continue;
        }
        seqcount_write_begin(&s->seq);
        flush_slot(s);
        seqcount_write_end(&s->seq);
    }
    pop_off();
    return kept;
}

static void flush_xcall(void *arg)
{
    (void)arg;
    itime_flush_cpu(true);
}

void itime_flush_all(void) { xcall_all(flush_xcall, NULL); }

// CPU c's cached times for ip (at h), if its slot names ip. A slot that names
// another inode needs no sequence: if it named ip before, its flush put ip's
// times in the inode first, where inode_times looks after the slots; if it
// names ip only later, those times come after this read.
static void read_slot(int c, uint64_t h, struct inode *ip, uint64_t t[3])
{
    struct it_slot *s = slot_at(c, h);
    if (load_acquire(&s->ip) != ip)
        return;
    uint32_t seq;
    uint64_t got[3];
    do {
        seq = seqcount_read_begin(&s->seq);
        bool mine = READ_ONCE(s->ip) == ip;
        for (int i = 0; i < 3; i++)
            got[i] = mine ? READ_ONCE(s->time[i]) : 0;
    } while (seqcount_read_retry(&s->seq, seq));
    for (int i = 0; i < 3; i++)
        t[i] = MAX(t[i], got[i]);
}

void inode_times(struct inode *ip, uint64_t t[3])
{
    cpumask_t cpus; // a CPU outside it has no slot for ip: its times are in the inode
    kernel_active_snapshot(attr_set(S_ISDIR(ip->mode)), ip, &cpus);
    t[0] = t[1] = t[2] = 0;
    uint64_t h = inode_hash(ip);
    for (int i = 0; i < CPUMASK_WORDS; i++) // a word at a time (refcache.c's read_exact)
        for (uint64_t w = cpus.w[i]; w; w &= w - 1)
            read_slot(i * 64 + __builtin_ctzll(w), h, ip, t);
    // After the slots: a flush fills the inode before it empties a slot.
    for (int i = 0; i < 3; i++)
        t[i] = MAX(t[i], READ_ONCE(*inode_field(ip, i)));
}

// Being freed: under kpoison, panic if a CPU's slot still names ip, since its
// flush would write into freed memory (the lifetime argument above; kpoison's
// check at the next allocation misses a write that comes after it). Racy
// reads, enough to see a slot that was never emptied. Every online CPU, not
// only ip's shard of the active set: a slot left on a CPU outside it would be
// a reader's miss too.
void itime_check_unnamed(struct inode *ip)
{
    if (!kmalloc_poisoning())
        return;
    uint64_t h = inode_hash(ip);
    for_each_cpu(c, &cpu_online_mask)
        if (READ_ONCE(slot_at(c, h)->ip) == ip)
            panic("itime: inode %p freed while cpu %d's time slot names it", ip, c);
}

void fs_set_times(struct inode *ip, uint64_t atime, uint64_t mtime)
{
    itime_flush_all(); // no cached time may override the one set here
    uint64_t now = fs_time_now();
    if (atime != FS_TIME_OMIT)
        WRITE_ONCE(ip->atime, atime == FS_TIME_NOW ? now : atime);
    if (mtime != FS_TIME_OMIT)
        WRITE_ONCE(ip->mtime, mtime == FS_TIME_NOW ? now : mtime);
    WRITE_ONCE(ip->ctime, now);
}
