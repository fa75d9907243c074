// Distributed reference counts in the style of refcache (Clements et al.,
// RadixVM, EuroSys 2013). Increments and decrements go to a per-CPU cache of
// deltas; the deltas reach the object's shared count once per refcache epoch; an
// object is released only after its shared count has stayed zero, untouched, for
// a whole epoch, which proves its true count is zero.
#pragma once
#include "kernel.h"
#include "sync/spinlock.h"

// Who may write each field (docs/conventions.md): [i] immutable once
// initialised; [l] the object's lock, [r] also read without it (exact reads);
// [v] the reviewing CPU: the one whose review list holds the object.
// release comes first: read only when the object goes, it is the word of an
// object laid out right after another's (the inode's nlink after ref) that
// may share the other's line without anyone reading it there.
struct refcache_obj {
    void (*release)(struct refcache_obj *o); // [i] called once the true count is zero
    int64_t count;                 // [l,r] shared count: true count minus cached deltas
    struct spinlock lock;          // guards count and the review state
    bool dirty;                    // [l] count changed since the object entered review
    bool reviewing;                // [l] on some CPU's review list
    uint8_t grace;                 // [i] epochs in review before release (refcache_set_grace)
    uint64_t review_epoch;         // [l,v] (the reviewing CPU reads it without the lock)
    struct refcache_obj *review_next; // [v]
};

// Start with `initial` references (held by the caller, counted in the shared count).
void refcache_init(struct refcache_obj *o, int64_t initial, void (*release)(struct refcache_obj *));
// Release o only `epochs` (more than 2) epochs after its count was seen at zero,
// instead of 2: for an object that per-CPU caches other than refcache's may
// still name for an epoch after its last reference went (fs/itime.c). Before
// o is shared.
static inline void refcache_set_grace(struct refcache_obj *o, uint8_t epochs) { o->grace = epochs; }
void refcache_inc(struct refcache_obj *o);
void refcache_dec(struct refcache_obj *o);
void refcache_add(struct refcache_obj *o, int64_t d); // d references at once (either sign)
// d straight into the shared count, as a flush would, bypassing this CPU's cache:
// for a drop that writes the object's line anyway (the base reference of an
// object that is going), so that short-lived objects do not pass through the
// per-CPU slots that other CPUs' exact reads visit.
void refcache_add_direct(struct refcache_obj *o, int64_t d);
// The exact count now: shared count plus every CPU's cached delta. Costs a visit
// to the cache of each CPU that used refcache lately (not of every CPU online);
// for callers that must have the number (st_nlink, a last close).
int64_t refcache_read_exact(struct refcache_obj *o);
int64_t refcache_exact_reads(int cpu); // exact reads made on cpu so far (tests)

// A count read exactly far more often than it changes (st_nlink): each CPU
// caches its deltas in a small set of slots of their own, which only such
// counts share, so that its exact reads do not visit slots that busy counts
// (every lookup's inode reference) keep writing. A type of its own, so that
// every update and read names the set, and none has to read the object to
// find it (an update touches no line but its CPU's). Initialise, set the
// grace and see the release through .o.
struct refcache_rm {
    struct refcache_obj o;
};
// `set` names the kernel's active set (sync/activeset.h) of the CPUs that hold
// deltas of r: every update and exact read of one count must name the same.
void refcache_rm_add(struct refcache_rm *r, int64_t d, int set);
int64_t refcache_rm_read_exact(struct refcache_rm *r, int set);

void refcache_tick(void);       // each CPU's timer tick: flush and review
// Tickless idle (proc/tickless.c), interrupts off: false if this CPU's cache
// may still hold deltas (unless `leave`: then it empties them and leaves every
// shard of the active set) or it reviews objects; and waking again.
bool refcache_stop_tick(bool leave);
void refcache_restart_tick(void);
void refcache_flush_cpu(void);  // flush this CPU's cache now (tests)
void refcache_flush_all(void);  // flush every CPU's cache now (tests; xcall)
uint64_t refcache_epoch(void);
uint64_t refcache_reviewing(void); // objects under review, all CPUs (racy: reports)
// One function each CPU calls, preemption off, right before it flushes its
// cache (each epoch, and in refcache_flush_cpu): for per-CPU caches that name
// objects by pointer and must be empty of an object before refcache releases it
// (fs/itime.c). It returns true if the CPU still holds per-CPU state (a time
// it kept, a link pin), and keeps those objects' shards of the kernel's active
// sets (sync/activeset.h: kernel_active_keep).
void refcache_set_flush_hook(bool (*fn)(void));
