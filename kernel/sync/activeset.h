// Active sets: which CPUs may hold per-CPU state of one kind, so that a reader
// that must see all of it visits those CPUs instead of every online one.
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
// Commute: whatever the mechanism's writers commute on stays free of shared
// lines in steady state: a writer reads and writes only its own CPU's
// active_mark while it stays in the set. Joining writes the set's mask, a line
// every reader reads, once per stretch of activity: a CPU that uses the
// mechanism continually never rejoins, and one that idles leaves (after the
// linger, or at once when it has been idle for a second and stops its tick:
// proc/tickless.c), and costs its next writer one shared write when it comes
// back. The kernel's mechanisms
// share one set (kernel_active, below), so that a CPU doing file work, which
// uses them all, stays in through any of them and joins once.
//
// Ordering, for a reader that must see every write that finished before it
// began: a writer joins with a locked instruction (a full fence on x86) before
// it writes its slot, and a reader loads the mask after its own fence or
// seqcount read; a CPU leaves only with its slots empty, their contents already
// moved to where readers look after the slots. For Dekker-style protocols
// (store, fence, read the other side) the join counts as part of the writer's
// store: a reader that misses the join misses the slot too, and the writer's
// later read sees the reader's store.
//
//     struct active_set set;            one per mechanism, shared, read-mostly
//     struct active_mark mark;          one per CPU, in its per-CPU data
//     active_join(&set, &mark)          preemption off, before writing a slot
//     active_decay(&set, &mark, empty)  the owner's periodic flush
//     active_snapshot(&set, &cpus)      a reader: then for_each_cpu(c, &cpus)
#pragma once
#include "kernel.h"
#include "sync/atomic.h"
#include "sync/cpumask.h"
#include "sync/percpu.h"

#define ACTIVE_LINGER 512 // idle periodic flushes (refcache epochs) before a CPU leaves a set

struct active_set {
    cpumask_t mask; // joins and leaves only; readers walk it
} __cacheline_aligned;

struct active_mark {
    bool in;           // this CPU's bit is set in the set's mask
    bool used;         // joined or wrote since the last decay
    uint16_t idle;     // decays in a row that found it unused
};

// The calling CPU is about to put state in its slots. Preemption must be off.
static inline void active_join(struct active_set *set, struct active_mark *m)
{
    m->used = true;
    if (!m->in) {
        m->in = true;
        m->idle = 0;
        // A locked OR: globally visible, and a full fence, before the slot write.
        fetch_or(&set->mask.w[cpu_id() / 64], 1UL << (cpu_id() % 64));
    }
}

// The owning CPU's periodic flush: leave the set once `empty` (its slots hold
// nothing now) and nothing was joined for ACTIVE_LINGER flushes in a row.
static inline void active_decay(struct active_set *set, struct active_mark *m, bool empty)
{
    if (!m->in)
        return;
    if (m->used || !empty) {
        m->used = false;
        m->idle = 0;
        return;
    }
    if (++m->idle < ACTIVE_LINGER)
        return;
    m->in = false;
    fetch_and(&set->mask.w[cpu_id() / 64], ~(1UL << (cpu_id() % 64)));
}

// Leave at once (an idle CPU stopping its tick, sync/refcache.c): the owner
// has just emptied its slots.
static inline void active_leave(struct active_set *set, struct active_mark *m)
{
    if (!m->in)
        return;
    m->in = false;
    m->idle = 0;
    fetch_and(&set->mask.w[cpu_id() / 64], ~(1UL << (cpu_id() % 64)));
}

// A copy of the set now, for a reader to walk (the same CPUs each time if it
// walks more than once).
static inline void active_snapshot(const struct active_set *set, cpumask_t *out)
{
    for (int i = 0; i < CPUMASK_WORDS; i++)
        out->w[i] = load_acquire(&set->mask.w[i]);
}

// The kernel's active set: the CPUs that may hold refcache deltas, cached file
// times (fs/itime.c) or a link pin (fs/linkpin.c). Refcache's periodic flush
// decays it (sync/refcache.c), after its flush hook emptied the others.
extern struct active_set kernel_active;
DECLARE_PERCPU(struct active_mark, kernel_active_mark);

// Preemption off, before writing per-CPU state of any of those kinds.
static inline void kernel_active_join(void)
{
    active_join(&kernel_active, this_cpu_ptr(&kernel_active_mark));
}
