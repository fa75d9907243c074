// Refcache: scalable reference counts (see refcache.h).
//
// Commute: increments and decrements of one object's count on different CPUs
// (their order cannot be observed until the count is read exactly or reaches
// zero). Each CPU keeps a direct-mapped cache of (object, delta) slots in its
// per-CPU area, guarded by a per-CPU lock that only this CPU takes on the fast
// path, so inc/dec touch no shared cache line — not even the object's. The shared
// count is written only when a slot is evicted (another object hashes to it) or
// flushed (once per refcache epoch).
//
// Release. A flush that brings the shared count to zero puts the object on the
// flushing CPU's review list. Every CPU flushes its whole cache once per epoch,
// and the epoch advances only when all have. Two epochs after entering review,
// if the count is still zero and no flush touched it meanwhile (dirty), every
// delta that existed when it hit zero has been applied and none has appeared
// since — and since only a reference holder can make a new reference, the true
// count is zero and stays zero: release the object. If it was touched, review it
// again; if the count is no longer zero, drop it from review.
//
// Exact reads (st_nlink, a last close) write nothing. An object maps to one
// slot in each CPU's cache, and each slot has a sequence its owner bumps (odd
// while changing) around every change to it, including flushing it into the
// shared count. A reader adds up the shared count and the object's slot in
// every CPU that may hold a delta for it (the object's shard of the kernel's
// active set, sync/activeset.h: CPUs that updated an object of that shard in
// the last several seconds), and retries if any of those slots' sequences moved
// meanwhile. So its cost follows the CPUs that use objects like it, not the
// CPUs online. Two stats share no line, and a stat shares a line with another
// CPU's refcache updates only when they are to an object that hashes to the
// read object's slot there (a slot is a cache line: chance 1 / RC_SLOTS), or
// when that CPU joins the object's shard. Counts read exactly far more often
// than they change (struct refcache_rm: link counts) take their slots from a
// smaller set of their own, RC_RM_SLOTS per CPU, so a stat meets only other
// CPUs' links and unlinks there, not the reference counts every lookup
// updates (with 1024 slots for both, one CPU of 64 whose lookups hit
// the link count's slot cost every stat of that file a transfer).
#include "sync/refcache.h"
#include "lib/hash.h"
#include "sync/activeset.h"
#include "sync/atomic.h"
#include "sync/counter.h"
#include "sync/cpumask.h"
#include "sync/percpu.h"
#include "sync/seqlock.h"
#include "sync/xcall.h"
#include "x86/smp.h"
#include "x86/x86.h"

#define RC_BITS 10
#define RC_RM_BITS 8
#define RC_SLOTS (1 << RC_BITS)       // per CPU
#define RC_RM_SLOTS (1 << RC_RM_BITS) // per CPU, for read-mostly objects

// [p]: only the owning CPU writes, holding its rc_cpu lock; [s] other CPUs read
// lock-free under the slot's sequence; [r] racily (docs/conventions.md).
struct rc_slot {
    struct refcache_obj *obj;      // [p,s]
    int64_t delta;                 // [p,s]
    uint32_t seq;                  // [p,r] odd while the owner changes obj or delta
} __cacheline_aligned;

struct rc_cpu {
    struct spinlock lock;          // only the owner takes it (exact readers check slot sequences)
    struct refcache_obj *review;   // [p] objects this CPU is reviewing
    // Read by other CPUs (the epoch advancer, once per epoch; reports): off the
    // lock's line, which every update writes.
    uint64_t flushed_epoch __cacheline_aligned; // [p,r] last epoch this CPU flushed in
    uint64_t nreview;              // [p,r] how many under review (the out-of-memory report)
    struct rc_slot slot[RC_SLOTS];
    struct rc_slot rm_slot[RC_RM_SLOTS];
};
static DEFINE_PERCPU(struct rc_cpu, rc_cpu);

static uint64_t rc_global_epoch __cacheline_alone = 1; // [a]
struct active_sets kernel_active[ACTIVE_KINDS]; // CPUs whose caches may hold deltas (and more: activeset.h)
DEFINE_PERCPU(struct kernel_active_marks, kernel_active_marks);
static bool (*flush_hook)(void);

void refcache_set_flush_hook(bool (*fn)(void)) { flush_hook = fn; }

// True if this CPU still holds per-CPU state of the hook's kinds (the hook
// keeps those objects' shards of the active sets: kernel_active_keep).
static bool call_flush_hook(void) { return flush_hook && flush_hook(); }

uint64_t refcache_epoch(void) { return READ_ONCE(rc_global_epoch); }

// An object's slot in CPU c's cache (percpu_slot: each CPU salts the index,
// so a collision on one CPU is not one on every CPU). h is mix64 of the
// object's address: every bit of the address spreads over the index, so
// objects that CPUs allocate symmetrically (the same offset in pages a power
// of two apart) do not share slots either.
static inline uint64_t obj_hash(struct refcache_obj *o) { return mix64((uintptr_t)o); }

static inline struct rc_slot *slot_at(int c, uint64_t h, bool rm)
{
    struct rc_cpu *rc = per_cpu_ptr(&rc_cpu, c);
    return rm ? &rc->rm_slot[percpu_slot(h, c, RC_RM_BITS)]
              : &rc->slot[percpu_slot(h, c, RC_BITS)];
}

static void review_add(struct rc_cpu *rc, struct refcache_obj *o)
{
    o->reviewing = true;
    o->dirty = false;
    o->review_epoch = READ_ONCE(rc_global_epoch);
    o->review_next = rc->review;
    rc->review = o;
    WRITE_ONCE(rc->nreview, rc->nreview + 1);
}

// Apply a slot's delta to its object's shared count. Called with rc->lock held.
static void flush_slot(struct rc_cpu *rc, struct rc_slot *s)
{
    struct refcache_obj *o = s->obj;
    if (o && !s->delta && o->reviewing) {
        // A reference that moved between CPUs leaves a zero delta behind; it
        // still means the object was in use, so review it again.
        spin_lock(&o->lock);
        o->dirty = true;
        spin_unlock(&o->lock);
    } else if (o && s->delta) {
        spin_lock(&o->lock);
        // The shared count may dip below zero: other CPUs can still hold the
        // matching increments in their caches.
        o->count += s->delta;
        if (o->reviewing)
            o->dirty = true;
        else if (o->count == 0)
            review_add(rc, o);
        spin_unlock(&o->lock);
    }
    WRITE_ONCE(s->obj, NULL);
    WRITE_ONCE(s->delta, 0);
}

static void update(struct refcache_obj *o, int64_t d, bool rm, int set)
{
    struct rc_cpu *rc;
    push_off(); // stay on this CPU: the cache we lock must be our own
    rc = this_cpu_ptr(&rc_cpu);
    spin_lock(&rc->lock);
    struct rc_slot *s = slot_at(cpu_id(), obj_hash(o), rm);
    kernel_active_join(set, o);
    seqcount_write_begin(&s->seq);
    if (s->obj != o) {
        flush_slot(rc, s);
        WRITE_ONCE(s->obj, o);
    }
    WRITE_ONCE(s->delta, s->delta + d);
    seqcount_write_end(&s->seq);
    spin_unlock(&rc->lock);
    pop_off();
}

void refcache_init(struct refcache_obj *o, int64_t initial, void (*release)(struct refcache_obj *))
{
    o->count = initial;
    spin_init(&o->lock, "refcache obj");
    o->dirty = false;
    o->reviewing = false;
    o->grace = 2;
    o->review_next = NULL;
    o->release = release;
}

void refcache_add_direct(struct refcache_obj *o, int64_t d)
{
    push_off(); // the review list we may join is this CPU's
    struct rc_cpu *rc = this_cpu_ptr(&rc_cpu);
    spin_lock(&rc->lock);
    spin_lock(&o->lock);
    o->count += d;
    if (o->reviewing)
        o->dirty = true;
    else if (o->count == 0)
        review_add(rc, o);
    spin_unlock(&o->lock);
    spin_unlock(&rc->lock);
    pop_off();
}

void refcache_inc(struct refcache_obj *o) { update(o, 1, false, ACTIVE_REFS); }
void refcache_add(struct refcache_obj *o, int64_t d) { update(o, d, false, ACTIVE_REFS); }
void refcache_dec(struct refcache_obj *o) { update(o, -1, false, ACTIVE_REFS); }
void refcache_rm_add(struct refcache_rm *r, int64_t d, int set) { update(&r->o, d, true, set); }

// Sum of the sequences of the slots at h in the CPUs of `cpus`. Sequences
// only grow, so an unchanged sum means no slot changed. (Here and below the
// mask is walked a word at a time, lowest bit first: a step is a few
// instructions, where for_each_cpu's search for the next CPU costs as much
// as the visit.)
static uint64_t slot_seq_sum(uint64_t h, bool rm, const cpumask_t *cpus)
{
    uint64_t sum = 0;
    for (int i = 0; i < CPUMASK_WORDS; i++)
        for (uint64_t w = cpus->w[i]; w; w &= w - 1)
            sum += READ_ONCE(slot_at(i * 64 + __builtin_ctzll(w), h, rm)->seq);
    return sum;
}

static DEFINE_COUNTER(exact_reads);

int64_t refcache_exact_reads(int cpu) { return counter_read_cpu(&exact_reads, cpu); }

// One pass adds up the object's deltas and the slots' sequences, waiting out
// changes in progress; then the shared count; then the sequences again. If
// none moved, every slot held what was read from it when the count was read:
// a flush, which moves a delta into the count, changes its slot's sequence.
// Each active CPU costs one slot address and three reads per pass.
static int64_t read_exact(struct refcache_obj *o, bool rm, int set)
{
    counter_inc(exact_reads);
    uint64_t h = obj_hash(o);
    cpumask_t cpus; // a CPU outside it has no slot for o: its deltas are in count
    kernel_active_snapshot(set, o, &cpus);
    for (;;) {
        uint64_t seqs = 0;
        int64_t sum = 0;
        for (int i = 0; i < CPUMASK_WORDS; i++)
            for (uint64_t w = cpus.w[i]; w; w &= w - 1) {
                struct rc_slot *s = slot_at(i * 64 + __builtin_ctzll(w), h, rm);
                uint32_t v;
                while ((v = READ_ONCE(s->seq)) & 1)
                    pause();
                fence_acquire();
                seqs += v;
                if (READ_ONCE(s->obj) == o)
                    sum += READ_ONCE(s->delta);
            }
        fence_acquire();
        sum += READ_ONCE(o->count);
        fence_acquire();
        if (slot_seq_sum(h, rm, &cpus) == seqs)
            return sum;
    }
}

int64_t refcache_read_exact(struct refcache_obj *o) { return read_exact(o, false, ACTIVE_REFS); }
int64_t refcache_rm_read_exact(struct refcache_rm *r, int set)
{
    return read_exact(&r->o, true, set);
}

static void flush_slots(struct rc_cpu *rc, struct rc_slot *slot, int n)
{
    for (int i = 0; i < n; i++)
        if (slot[i].obj) {
            seqcount_write_begin(&slot[i].seq);
            flush_slot(rc, &slot[i]);
            seqcount_write_end(&slot[i].seq);
        }
}

static void flush_all_slots(struct rc_cpu *rc)
{
    flush_slots(rc, rc->slot, RC_SLOTS);
    flush_slots(rc, rc->rm_slot, RC_RM_SLOTS);
}

// Decide the fate of objects that have been under review for two epochs.
static void review(struct rc_cpu *rc, uint64_t now)
{
    struct refcache_obj **pp = &rc->review, *release_list = NULL;
    while (*pp) {
        struct refcache_obj *o = *pp;
        if (o->review_epoch + o->grace > now) {
            pp = &o->review_next;
            continue;
        }
        spin_lock(&o->lock);
        if (o->count == 0 && o->dirty) {
            o->dirty = false;               // touched: look again next time
            o->review_epoch = now;
            spin_unlock(&o->lock);
            pp = &o->review_next;
            continue;
        }
        *pp = o->review_next;
        WRITE_ONCE(rc->nreview, rc->nreview - 1);
        o->reviewing = false;
        bool dead = o->count == 0;
        spin_unlock(&o->lock);
        if (dead) {
            o->review_next = release_list;
            release_list = o;
        }
    }
    while (release_list) {
        struct refcache_obj *o = release_list;
        release_list = o->review_next;
        o->release(o);
    }
}

// Advance the epoch once every online CPU has flushed in the current one. The
// boot CPU's scan resumes where its last tick stopped (flushed epochs only
// grow), as sync/epoch.c's does: each CPU's line is read about once per epoch.
static struct {
    uint64_t epoch;
    int next;
} scan;

static void try_advance(uint64_t now)
{
    if (scan.epoch != now) {
        scan.epoch = now;
        scan.next = 0;
    }
    for (; scan.next < READ_ONCE(ncpu); scan.next++)
        if (cpumask_test(&cpu_online_mask, scan.next) &&
            READ_ONCE(per_cpu_ptr(&rc_cpu, scan.next)->flushed_epoch) < now)
            return;
    __atomic_compare_exchange_n(&rc_global_epoch, &now, now + 1, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_RELAXED);
}

static void flush_and_review(void)
{
    struct rc_cpu *rc = this_cpu_ptr(&rc_cpu);
    uint64_t now = READ_ONCE(rc_global_epoch);
    if (rc->flushed_epoch < now) {
        (void)call_flush_hook();
        spin_lock(&rc->lock);
        flush_all_slots(rc);
        kernel_active_decay();
        WRITE_ONCE(rc->flushed_epoch, now);
        spin_unlock(&rc->lock);
        // Release callbacks run without the cache lock: they may drop references.
        review(rc, now);
    }
    if (cpu_id() == 0)
        try_advance(now);
}

void refcache_tick(void) { flush_and_review(); }

// Tickless idle (proc/tickless.c), interrupts off. A CPU may stop its tick
// once its cache is empty for good (out of the active set) and it reviews
// nothing (only its tick decides those objects' fate). If it is still in the
// set, `leave` (it has been idle a while) empties its caches and leaves now
// rather than after ACTIVE_LINGER epochs: exact readers then stop visiting a
// CPU that does nothing. A stopped CPU counts as having flushed in every
// epoch to come.
#define RC_TICK_STOPPED UINT64_MAX

bool refcache_stop_tick(bool leave)
{
    struct rc_cpu *rc = this_cpu_ptr(&rc_cpu);
    if (kernel_active_in_any()) {
        if (!leave || call_flush_hook())
            return false;
        spin_lock(&rc->lock);
        flush_all_slots(rc);
        kernel_active_leave();
        spin_unlock(&rc->lock);
    }
    if (rc->review)
        return false; // the flush may have put objects there: the tick decides
    WRITE_ONCE(rc->flushed_epoch, RC_TICK_STOPPED);
    return true;
}

// Waking: flushed in the epoch read now (our cache is still empty). If the
// epoch moved on meanwhile, the advancer waits for our next tick's flush.
void refcache_restart_tick(void)
{
    struct rc_cpu *rc = this_cpu_ptr(&rc_cpu);
    WRITE_ONCE(rc->flushed_epoch, READ_ONCE(rc_global_epoch));
    fence();
}

uint64_t refcache_reviewing(void)
{
    uint64_t n = 0;
    for (int c = 0; c < READ_ONCE(ncpu); c++)
        n += READ_ONCE(per_cpu_ptr(&rc_cpu, c)->nreview);
    return n;
}

void refcache_flush_cpu(void)
{
    push_off();
    struct rc_cpu *rc = this_cpu_ptr(&rc_cpu);
    (void)call_flush_hook();
    spin_lock(&rc->lock);
    flush_all_slots(rc);
    spin_unlock(&rc->lock);
    pop_off();
}

static void flush_xcall(void *arg)
{
    (void)arg;
    refcache_flush_cpu();
}

void refcache_flush_all(void) { xcall_all(flush_xcall, NULL); }
