// Active sets: which CPUs may hold per-CPU state about an object, so that a
// reader that must see all of it visits those CPUs instead of every online one.
//
// Several mechanisms keep what would be one shared word as one slot per CPU
// (refcache deltas, file time stamps, link pins): writers on different CPUs then
// share nothing, and a reader that needs the exact value adds up every CPU's
// slot. Visiting every online CPU makes that reader's cost grow with the size of
// the machine, even when one CPU did all the writing. An active set is the
// record of the CPUs worth visiting: a CPU joins before it first puts state in
// its slots, and leaves only once its slots are empty and it has put nothing in
// them for a while (ACTIVE_LINGER of its periodic flushes, several seconds). So
// a reader's cost follows the CPUs that recently used the mechanism, not the
// CPUs online. The linger is long because a join is a write that readers see
// (below): a CPU that works in bursts a second apart should not pay it, and
// reading the slot of a CPU that lingers is cheap (a line no one writes).
//
// Shards. One set for all objects would still make a reader's cost grow with
// the CPUs at work: 64 CPUs that each stat their own file would each visit all
// 64. So a set is ACTIVE_SHARDS sets, and an object belongs to the shard of the
// page it lies in (active_shard): a CPU joins the shard of the object it puts
// state for, and a reader visits the CPUs of its object's shard, those that
// recently held state for an object on a page of that shard. Per-CPU
// allocators put the objects a CPU makes on pages of its own, which it reuses,
// so CPUs that each use objects of their own meet in few shards (objects that
// they all use, such as the root directory, put every CPU in theirs).
//
// A CPU that uses objects on many pages (a shell, a test runner, anything that
// makes and drops files on many CPUs' pages) would keep joining shards, each
// join a shared write. So once it is in ACTIVE_SHARDS_MAX shards, its next
// join puts it in `every`, a set that readers of every shard visit, where it
// stays, joining nothing more, until it has used none of the mechanisms for
// the linger: such a CPU pays at most ACTIVE_SHARDS_MAX + 1 joins per stretch
// of activity, about as with a single set, and readers visit it as they would
// have then. Why 8: workers of the scaling benchmark that each use files of
// their own are in 1 to 8 shards; with 32, the pairwise suite's CPUs stayed in
// shards and kept joining them inside its tests (docs/bench-cost.md).
//
// Commute: whatever the mechanism's writers commute on stays free of shared
// lines in steady state: a writer reads and writes only its own CPU's marks
// while it stays in its object's shard. Joining writes the shard's mask, a line
// that readers of that shard's objects read, once per stretch of activity: a
// CPU that keeps using objects of a shard never rejoins it, and one that stops
// leaves (after the linger, or at once from every shard when it has been idle
// for a second and stops its tick: proc/tickless.c), and costs its next writer
// there one shared write when it comes back. The kernel has three sharded sets
// (kernel_active, below), one for references and one each for what a stat or
// an unlink reads exactly of files and of directories, so that a reader of one
// kind does not visit the CPUs that hold only state of another: everything
// that uses a file holds a reference on it, far more CPUs than those that
// change its links and times, and every CPU that makes a name in a directory
// changes the directory's times.
//
// Ordering, for a reader that must see every write that finished before it
// began: a writer joins with a locked instruction (a full fence on x86) before
// it writes its slot, and a reader loads the shard's mask after its own fence
// or seqcount read; a CPU leaves a shard only with its slots empty of that
// shard's objects, their contents already moved to where readers look after the
// slots. For Dekker-style protocols (store, fence, read the other side) the
// join counts as part of the writer's store: a reader that misses the join
// misses the slot too, and the writer's later read sees the reader's store.
//
//     struct active_sets sets;           one per mechanism, shared, read-mostly
//     struct active_marks marks;         one per CPU, in its per-CPU data
//     active_join(&sets, &marks, k)      interrupts off, before writing a slot for an
//                                        object of shard k = active_shard(obj)
//     active_keep(&marks, k)             the owner's periodic flush keeps state there
//     active_decay(&sets, &marks)        then leaves the shards idle for the linger
//     active_snapshot_shard(&sets, k, &cpus)
//                                        a reader: then for_each_cpu(c, &cpus)
#pragma once
#include "kernel.h"
#include "lib/hash.h"
#include "mm/mmu.h"
#include "sync/atomic.h"
#include "sync/cpumask.h"
#include "sync/percpu.h"

#define ACTIVE_LINGER 512 // idle periodic flushes (refcache epochs) before a CPU leaves a shard
#define ACTIVE_SHARD_BITS 8
#define ACTIVE_SHARDS (1 << ACTIVE_SHARD_BITS)
#define ACTIVE_WORDS (ACTIVE_SHARDS / 64)
#define ACTIVE_SHARDS_MAX 8 // shards a CPU is in before it joins `every` instead

struct active_set {
    cpumask_t mask; // joins and leaves only; readers walk it
} __cacheline_aligned;

struct active_sets {
    struct active_set every; // CPUs counted in every shard
    struct active_set shard[ACTIVE_SHARDS];
};

struct active_marks {
    uint64_t in[ACTIVE_WORDS];      // shards whose mask has this CPU's bit
    uint64_t used[ACTIVE_WORDS];    // shards joined or kept since the last decay
    uint16_t idle[ACTIVE_SHARDS];   // decays in a row that found the shard unused
    uint16_t nin;                   // shards in
    bool every;                     // in `every`: joins of shards pass
    bool used_any;                  // joined or kept anything since the last decay
    uint16_t idle_every;            // decays in a row that found nothing used
};

// An object's shard: that of the page it lies in. A CPU's allocator hands out
// objects from pages of its own and reuses them, so a CPU that keeps making
// and dropping objects (files, inodes, directory entries) cycles through the
// shards of its slabs' pages, where a shard per object address would have it
// join a new shard at nearly every object it makes. While freed objects wait
// out their epochs those are many pages, and such a CPU soon joins `every`. (A
// shard per home, the CPU whose slab holds the object, kept it in one shard,
// but a CPU in few shards then joined the shard of each CPU whose objects it
// touched inside calls that commute with a reader of them: docs/bench-cost.md,
// tried and reverted.)
static inline unsigned active_shard(const void *obj)
{
    return mix64((uintptr_t)obj >> PGSHIFT) >> (64 - ACTIVE_SHARD_BITS);
}

static inline void active_mask_add(struct active_set *s, int c)
{
    fetch_or(&s->mask.w[c / 64], 1UL << (c % 64)); // locked: a full fence too
}

static inline void active_mask_remove(struct active_set *s, int c)
{
    fetch_and(&s->mask.w[c / 64], ~(1UL << (c % 64)));
}

// The calling CPU is about to put state in its slots for an object of shard k.
// Interrupts must be off: the tick's decay changes the marks. `peer`, if not
// NULL, is the CPU's marks in a set that shares this one's budget of shards:
// the shards it is in there count toward ACTIVE_SHARDS_MAX here.
static inline void active_join_budget(struct active_sets *s, struct active_marks *m, unsigned k,
                                      const struct active_marks *peer)
{
    uint64_t bit = 1UL << (k % 64);
    m->used_any = true;
    if (m->every)
        return;
    m->used[k / 64] |= bit;
    if (m->in[k / 64] & bit)
        return;
    if (m->nin + (peer ? peer->nin : 0) >= ACTIVE_SHARDS_MAX) {
        m->every = true;
        m->idle_every = 0;
        active_mask_add(&s->every, cpu_id()); // before the slot write
        return;
    }
    m->in[k / 64] |= bit;
    m->nin++;
    m->idle[k] = 0;
    active_mask_add(&s->shard[k], cpu_id()); // before the slot write
}

static inline void active_join(struct active_sets *s, struct active_marks *m, unsigned k)
{
    active_join_budget(s, m, k, NULL);
}

// The owner's periodic flush, before it decays: it keeps state in its slots
// for an object of shard k, which must stay as if joined. Interrupts off.
static inline void active_keep(struct active_marks *m, unsigned k)
{
    m->used_any = true;
    m->used[k / 64] |= 1UL << (k % 64);
}

// The owning CPU's periodic flush, interrupts off, after its slots were
// emptied of all but what it kept: leave each shard that nothing joined or
// kept for ACTIVE_LINGER flushes in a row, and `every` likewise. (A CPU in
// `every` joins no shard, so those it was in go after the linger; its slots
// are empty when it leaves `every`.)
static inline void active_decay(struct active_sets *s, struct active_marks *m)
{
    for (int i = 0; i < ACTIVE_WORDS; i++) {
        uint64_t keep = m->used[i];
        m->used[i] = 0;
        for (uint64_t w = m->in[i]; w; w &= w - 1) {
            unsigned k = i * 64 + __builtin_ctzll(w);
            if (keep >> (k % 64) & 1)
                m->idle[k] = 0;
            else if (++m->idle[k] >= ACTIVE_LINGER) {
                m->in[i] &= ~(1UL << (k % 64));
                m->nin--;
                active_mask_remove(&s->shard[k], cpu_id());
            }
        }
    }
    if (m->every) {
        if (m->used_any)
            m->idle_every = 0;
        else if (++m->idle_every >= ACTIVE_LINGER) {
            m->every = false;
            active_mask_remove(&s->every, cpu_id());
        }
    }
    m->used_any = false;
}

// Leave every shard at once (an idle CPU stopping its tick, sync/refcache.c):
// the owner has just emptied its slots.
static inline void active_leave(struct active_sets *s, struct active_marks *m)
{
    for (int i = 0; i < ACTIVE_WORDS; i++) {
        for (uint64_t w = m->in[i]; w; w &= w - 1)
            active_mask_remove(&s->shard[i * 64 + __builtin_ctzll(w)], cpu_id());
        m->in[i] = m->used[i] = 0;
    }
    if (m->every)
        active_mask_remove(&s->every, cpu_id());
    m->nin = 0;
    m->every = m->used_any = false;
}

// Is the calling CPU in any shard? Interrupts off.
static inline bool active_in_any(const struct active_marks *m) { return m->nin || m->every; }

// A copy of one set now, for a reader to walk (the same CPUs each time if it
// walks more than once).
static inline void active_snapshot(const struct active_set *set, cpumask_t *out)
{
    for (int i = 0; i < CPUMASK_WORDS; i++)
        out->w[i] = load_acquire(&set->mask.w[i]);
}

// The CPUs that may hold state for an object of shard k: the shard's and
// those in every shard.
static inline void active_snapshot_shard(const struct active_sets *s, unsigned k, cpumask_t *out)
{
    for (int i = 0; i < CPUMASK_WORDS; i++)
        out->w[i] = load_acquire(&s->shard[k].mask.w[i]) | load_acquire(&s->every.mask.w[i]);
}

// The kernel's active sets, by kind of per-CPU state: the CPUs that may hold
//   ACTIVE_REFS   refcache deltas of reference counts (refcache_inc/dec), read
//                 exactly by a last close of a file threads share and exec's
//                 check for writers;
//   ACTIVE_FILES  deltas of link counts (refcache_rm), cached times
//                 (fs/itime.c) and link pins (fs/linkpin.c) of files (all but
//                 directories), read exactly by stat and unlink;
//   ACTIVE_DIRS   the same of directories, read exactly by stat;
// for objects of each shard. Apart because a reference is held by whatever
// uses a file (an open file, a mapping, a current directory): with one set, a
// stat of a file visited every CPU that mapped another file on its page. And
// every CPU that makes or removes a name in a directory changes its times:
// with directories among files, a stat of a file visited every CPU that made
// a file in a directory whose inode lay on its page. A CPU doing file work
// joins shards of several; each set decays on its own at refcache's periodic
// flush (sync/refcache.c), after its flush hook emptied the others. Files and
// directories share one budget of ACTIVE_SHARDS_MAX shards: a CPU that uses
// objects on many pages of either kind joins `every` of each as it did when
// they were one set (with a budget each, the pairwise suite's CPUs stayed in
// files' shards and kept joining them inside its tests: 11 tests against 5);
// the sets apart matter for the CPUs that stay in few shards, the ones a
// reader visits by shard.
enum { ACTIVE_REFS, ACTIVE_FILES, ACTIVE_DIRS, ACTIVE_KINDS };
struct kernel_active_marks {
    struct active_marks kind[ACTIVE_KINDS];
};
extern struct active_sets kernel_active[ACTIVE_KINDS];
DECLARE_PERCPU(struct kernel_active_marks, kernel_active_marks);

static inline struct active_marks *kernel_marks(int kind)
{
    return &this_cpu_ptr(&kernel_active_marks)->kind[kind];
}

// Interrupts off, before writing per-CPU state of that kind for obj.
static inline void kernel_active_join(int kind, const void *obj)
{
    const struct active_marks *peer = kind == ACTIVE_FILES  ? kernel_marks(ACTIVE_DIRS)
                                      : kind == ACTIVE_DIRS ? kernel_marks(ACTIVE_FILES)
                                                            : NULL;
    active_join_budget(&kernel_active[kind], kernel_marks(kind), active_shard(obj), peer);
}

// Refcache's flush hook, for state of that kind it keeps for obj.
static inline void kernel_active_keep(int kind, const void *obj)
{
    active_keep(kernel_marks(kind), active_shard(obj));
}

// Refcache's periodic flush, after its hook: decay each set (active_decay).
static inline void kernel_active_decay(void)
{
    for (int k = 0; k < ACTIVE_KINDS; k++)
        active_decay(&kernel_active[k], kernel_marks(k));
}

// An idle CPU with its caches empty: leave every set at once (active_leave).
static inline void kernel_active_leave(void)
{
    for (int k = 0; k < ACTIVE_KINDS; k++)
        active_leave(&kernel_active[k], kernel_marks(k));
}

// Is the calling CPU in any shard of any set? Interrupts off.
static inline bool kernel_active_in_any(void)
{
    for (int k = 0; k < ACTIVE_KINDS; k++)
        if (active_in_any(kernel_marks(k)))
            return true;
    return false;
}

// The CPUs that may hold state of that kind for obj, for an exact reader.
static inline void kernel_active_snapshot(int kind, const void *obj, cpumask_t *out)
{
    active_snapshot_shard(&kernel_active[kind], active_shard(obj), out);
}
