// Link pins: what keeps a link's source name in place without locking it.
//
// link(a, b) must find a's entry still in place when b appears: otherwise a
// moment with neither name (a gone, b not yet there) could be seen, and the
// link count the new name adds to might already have reached zero. Locking a's
// bucket for the insert would do, but then the link writes the line that every
// lookup of a reads. Commute: links from one name to different new names, and a
// link with opens, stats and failing calls that look the source name up. None
// of them write anything the others read here.
//
// A link pins the entry instead: it stores the entry in a slot of its own CPU
// (one cache line per slot, 512 slots per CPU, chosen by the entry's address)
// and then checks that the entry is not being removed. A remover (unlink, or a
// rename that moves or replaces the entry; not of directories, which links
// refuse) marks the entry `dying` under its bucket lock, and then waits until
// no CPU's slot for the entry holds it. A rename that rebinds the entry in
// place (rename.c) marks it the same way for the moment it changes which file
// the entry names, and takes the mark back after. The two sides are Dekker's: each
// stores, fences and reads the other's store, so either the link sees `dying`
// and backs off, or the remover sees the pin and waits for the link to finish.
// A link backing off waits for the removal (or for a failed remover to clear
// the mark) and starts again.
//
// A pinned link runs with preemption off and waits for nothing but its new
// name's bucket lock, which it gives up on when its entry turns dying, so a
// remover's wait (with its bucket locks held) is short. Only a remover reads
// other CPUs' slots: one line per CPU in the entry's shard of the kernel's
// active set for files' link counts, times and link pins (CPUs that linked
// from, or changed a link count or a time of, a file or entry of that shard in
// the last several seconds: sync/activeset.h), under no lock, so its
// cost follows the CPUs that link, not the CPUs online. A link and a remover
// of entries that share a slot number (1 in 512) touch one line. The slot number is the same on every CPU: a pin lives only while one
// link runs, so unlike refcache's and itime's slots none holds state that a
// later collision evicts, and a salt per CPU would not make that 1 in 512 rarer.
// Why 512: CPUs that keep linking from one source write that source's slot at
// every link, and an unlink whose entry has the same number reads each of
// those lines just after its owner wrote it. With 64 CPUs linking one file to
// names of their own and unlinking them, 128 slots cost 1.2 transfers per
// link+unlink (bench-cost); 512 cost a quarter of that, for 24 KiB more per CPU.
#include "inode.h"
#include "lib/hash.h"
#include "sync/activeset.h"
#include "sync/atomic.h"
#include "sync/cpumask.h"
#include "sync/percpu.h"
#include "x86/x86.h"

#define LP_SLOTS 512 // per CPU; a power of two

struct lp_slot {
    struct dent *e;
} __cacheline_aligned;

static DEFINE_PERCPU(struct lp_slot, lp_slots[LP_SLOTS]);
// The entry this CPU's slot pins now, if any (one pin at a time: preemption is
// off while one is held).
static DEFINE_PERCPU(struct dent *, lp_pinned);

static unsigned slot_of(const struct dent *e)
{
    return mix64((uintptr_t)e) & (LP_SLOTS - 1);
}

// Pins e in this CPU's slot (preemption must be off until link_unpin). True if e
// may be linked: then it stays in place until link_unpin. False if it is being
// removed: e is unpinned, and link_wait_gone tells when to start again.
bool link_pin(struct dent *e)
{
    struct lp_slot *s = &this_cpu_ptr(&lp_slots)[0][slot_of(e)];
    // The slot is free: a pinned link on this CPU cannot be preempted, and no
    // interrupt handler links. Noted first: from then on the tick's flush keeps
    // us in e's shard (linkpin_keep).
    this_cpu_write(lp_pinned, e);
    push_off(); // the join's marks are the tick's too
    kernel_active_join(ACTIVE_FILES, e);
    pop_off();
    store_seqcst(&s->e, e);
    fence();
    if (!load_seqcst(&e->dying))
        return true;
    link_unpin(e);
    return false;
}

// Is e, pinned, being removed now? Its remover waits for the pin, so a link
// that waits for a lock must give up when this turns true.
bool link_pin_dying(const struct dent *e) { return load_acquire(&e->dying); }

void link_unpin(struct dent *e)
{
    struct lp_slot *s = &this_cpu_ptr(&lp_slots)[0][slot_of(e)];
    store_release(&s->e, NULL);
    this_cpu_write(lp_pinned, NULL);
}

// Refcache's flush hook (fs/inode.c), interrupts off.
bool linkpin_keep(void)
{
    struct dent *e = this_cpu_read(lp_pinned);
    if (e)
        kernel_active_keep(ACTIVE_FILES, e);
    return e != NULL;
}

// Wait until no link holds e pinned; e is ours (`dying` set by us, fenced).
void dent_wait_pins(struct dent *e)
{
    unsigned i = slot_of(e);
    cpumask_t cpus; // a CPU outside it holds no pin of e: its join comes before its pin
    kernel_active_snapshot(ACTIVE_FILES, e, &cpus);
    for_each_cpu(c, &cpus) {
        struct lp_slot *s = &per_cpu_ptr(&lp_slots, c)[0][i];
        while (load_acquire(&s->e) == e)
            pause();
    }
}

// Owning an entry. `dying` is also how a remover and a rebind (rename.c: a
// rename over a name that changes its entry in place, without that name's
// bucket lock) exclude each other: whoever sets it from 0 owns e. A rebind owns
// it for a moment and gives it back; a remover keeps it (e leaves its chain). A
// rebind that owns e then looks at e's bucket and gives e back if the bucket is
// locked, and a holder of the bucket lock waits for a rebind that got past
// that look (dent_settle): both sides store, fence and read the other's store.
bool dent_claim(struct dent *e)
{
    uint8_t free = 0;
    return cas(&e->dying, &free, 1); // locked: a full fence
}

// A holder of e's bucket lock that reads which file e names, before it owns e:
// wait for a rebind under way.
void dent_settle(const struct dent *e)
{
    while (load_acquire(&e->dying))
        pause();
}

// The remover's side, with e's bucket locked and the removal decided: own e
// (waiting out a rebind under way) and wait until no link holds it pinned.
void dent_retire(struct dent *e)
{
    if (e->type == DT_DIR)
        return; // links refuse directories (EPERM) before they pin; rebinds skip them
    while (!dent_claim(e))
        pause();
    dent_wait_pins(e);
}

// A remover that fails after dent_retire (rename's insert into a dead directory)
// takes the mark back: e stays. A rebind gives e back the same way.
void dent_unretire(struct dent *e) { store_release(&e->dying, 0); }

// A link that backed off: wait until e, found under name nd, is gone from it or
// no longer dying (its remover failed). Inside the caller's epoch, so e stays
// readable.
void link_wait_gone(struct dirhash *dh, const char *name, size_t len, uint32_t hash, struct dent *e)
{
    while (link_pin_dying(e) && dirhash_lookup(dh, name, len, hash) == e)
        pause();
}
