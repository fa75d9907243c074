// Epoch-based reclamation.
//
// Commute: read sections on different CPUs, and epoch_defer on different CPUs.
// Readers write only their own CPU's state (nesting depth, the epoch they
// entered in); deferred callbacks go on the deferring CPU's own lists. The only
// shared line is the global epoch, which readers only read and which is written
// once per grace period (every few timer ticks), not per operation.
//
// Protocol. Each CPU acknowledges the global epoch at its timer tick: if it is
// not inside a read section it acks the current global epoch G, otherwise the
// epoch it entered its read section in. The boot CPU advances G to G+1 once every
// online CPU has acked G. A callback deferred while the global epoch was E runs
// when G reaches E+2: by then every CPU has acked E+1, so every reader that is
// still running entered after G became E+1, which happened after the object was
// unlinked, and cannot have found it.
#include "sync/epoch.h"
#include "mm/tlb.h"
#include "mm/uvm.h"
#include "proc/hangcheck.h"
#include "proc/tickless.h"
#include "sync/atomic.h"
#include "sync/cpumask.h"
#include "sync/percpu.h"
#include "x86/smp.h"
#include "x86/x86.h"

static uint64_t global_epoch __cacheline_alone = 2; // [a]

#define NLISTS 3 // callbacks of epochs E, E-1, E-2 are pending at most

// [p]: only this CPU writes, preemption or interrupts off; [r] the epoch
// advancer reads it racily (docs/conventions.md).
struct epoch_cpu {
    int depth;               // [p] read-section nesting
    uint64_t entered;        // [p] global epoch when the outermost section began
    struct epoch_cb *head[NLISTS], **tail[NLISTS]; // [p]
    uint64_t list_epoch[NLISTS]; // [p]
    uint64_t pending;        // [p,r] callbacks waiting on this CPU (read by stall reports)
    // The advancer reads it once per epoch: off the line that every read
    // section's entry writes.
    uint64_t acked __cacheline_aligned; // [p,r] the epoch this CPU last acknowledged
};
static DEFINE_PERCPU(struct epoch_cpu, epoch_cpu);

uint64_t epoch_current(void) { return READ_ONCE(global_epoch); }

void epoch_enter(void)
{
    preempt_disable();
    struct epoch_cpu *e = this_cpu_ptr(&epoch_cpu);
    if (e->depth++ == 0) {
        e->entered = READ_ONCE(global_epoch);
        // The reads that follow must not be satisfied before the epoch read and
        // the depth store are visible to the CPU that advances the epoch.
        fence();
    }
}

void epoch_exit(void)
{
    struct epoch_cpu *e = this_cpu_ptr(&epoch_cpu);
    assert(e->depth > 0);
    barrier();
    e->depth--;
    preempt_enable();
}

bool epoch_in_reader(void) { return this_cpu_ptr(&epoch_cpu)->depth > 0; }

void epoch_defer(struct epoch_cb *cb, void (*fn)(struct epoch_cb *cb))
{
    // The caller's unpublishing store must be visible before we read the epoch,
    // or the callback could be tagged one epoch late and run one epoch early.
    fence();
    push_off(); // the tick runs callbacks from an interrupt on this CPU
    struct epoch_cpu *e = this_cpu_ptr(&epoch_cpu);
    uint64_t now = READ_ONCE(global_epoch);
    int i = now % NLISTS;
    if (e->list_epoch[i] != now) {
        // The list still holds epoch now-3 callbacks only if they were never run,
        // which epoch_tick prevents; start it fresh for this epoch.
        assert(e->head[i] == NULL);
        e->list_epoch[i] = now;
        e->tail[i] = &e->head[i];
    }
    cb->fn = fn;
    cb->epoch = now;
    cb->next = NULL;
    *e->tail[i] = cb;
    e->tail[i] = &cb->next;
    e->pending++;
    pop_off();
}

// Run this CPU's callbacks whose grace period has passed. Interrupts are off.
static void run_callbacks(struct epoch_cpu *e, uint64_t now)
{
    for (int i = 0; i < NLISTS; i++) {
        if (!e->head[i] || e->list_epoch[i] + 2 > now)
            continue;
        struct epoch_cb *cb = e->head[i];
        e->head[i] = NULL;
        e->tail[i] = &e->head[i];
        while (cb) {
            struct epoch_cb *next = cb->next;
            e->pending--;
            cb->fn(cb);
            cb = next;
        }
    }
}

// Advance the global epoch if every online CPU has acknowledged it.
// The boot CPU's scan for the CPUs that have acknowledged `now`. It resumes
// where the last tick stopped (acknowledgements only grow), so a tick reads the
// lines of the CPUs that acknowledged since, not every CPU's again: over one
// epoch the scan reads each CPU's line about once, whatever the ticks per epoch.
// A CPU that comes online behind the cursor is not waited for in this epoch: it
// entered no read section before this epoch began.
static struct {
    uint64_t epoch;
    int next;
    uint64_t since;  // when the scan began on this epoch (nsec_now)
    bool reported;   // the stall of this epoch was reported
    uint64_t stalls; // [r] stalls reported so far
} scan;

uint64_t epoch_stalls(void) { return READ_ONCE(scan.stalls); }

// A grace period that does not end leaves every deferred free waiting, and the
// threads that wait for one (an allocation short of pages, a test that counts
// epochs) block with no CPU spinning, which the hang detector cannot see. So
// once an epoch has waited for one CPU as long as the hang detector's limit,
// say which CPU, what it acknowledged and whether its tick is stopped, and
// print its stack. Once per stalled epoch; the waits go on.
static void report_stall(uint64_t now, int c)
{
    uint32_t limit = hangcheck_limit();
    uint64_t waited = nsec_now() - scan.since;
    if (scan.reported || !limit || waited < (uint64_t)limit * 1000000000ULL)
        return;
    scan.reported = true;
    WRITE_ONCE(scan.stalls, scan.stalls + 1);
    kprintf("epoch: epoch %lu has waited %lu s for CPU %d: it acknowledged %lu, its tick %s, "
            "%lu callbacks pending there\n", now, (unsigned long)(waited / 1000000000ULL), c,
            READ_ONCE(per_cpu_ptr(&epoch_cpu, c)->acked),
            tickless_stopped(c) ? "stopped" : "running",
            READ_ONCE(per_cpu_ptr(&epoch_cpu, c)->pending));
    if (c != cpu_id())
        hangcheck_dump_cpu(c);
}

static void try_advance(uint64_t now)
{
    if (scan.epoch != now) {
        scan.epoch = now;
        scan.next = 0;
        scan.since = nsec_now();
        scan.reported = false;
    }
    for (; scan.next < READ_ONCE(ncpu); scan.next++)
        if (cpumask_test(&cpu_online_mask, scan.next) &&
            READ_ONCE(per_cpu_ptr(&epoch_cpu, scan.next)->acked) < now) {
            report_stall(now, scan.next);
            return;
        }
    __atomic_compare_exchange_n(&global_epoch, &now, now + 1, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_RELAXED);
}

void epoch_tick(void)
{
    struct epoch_cpu *e = this_cpu_ptr(&epoch_cpu);
    uint64_t now = READ_ONCE(global_epoch);
    // Deferred TLB flushes requested before the epoch reached `now` are done
    // before we acknowledge it (tlb_flush_later): the flag is read after the
    // epoch, so a request made before the epoch advanced is seen here.
    fence();
    tlb_tick();
    uvm_tick(false);
    WRITE_ONCE(e->acked, e->depth ? e->entered : now);
    if (cpu_id() == 0)
        try_advance(now);
    if (e->pending)
        run_callbacks(e, READ_ONCE(global_epoch));
}

// Tickless idle (proc/tickless.c). A CPU that stops its tick acknowledges
// every epoch to come: it is in no read section, and it enters none before it
// wakes. It may not stop while callbacks of its own wait (only its tick runs
// them). Interrupts are off.
#define EPOCH_TICK_STOPPED UINT64_MAX

bool epoch_stop_tick(void)
{
    struct epoch_cpu *e = this_cpu_ptr(&epoch_cpu);
    if (e->pending || e->depth)
        return false;
    WRITE_ONCE(e->acked, EPOCH_TICK_STOPPED);
    return true;
}

// Waking, before anything on this CPU enters a read section: acknowledge the
// epoch read now. The epoch may have advanced past it meanwhile (the advancer
// counted us as stopped): then the advancer waits for our next tick, as for a
// CPU that is behind. The fence orders the store before the read sections'
// own reads of the global epoch.
void epoch_restart_tick(void)
{
    struct epoch_cpu *e = this_cpu_ptr(&epoch_cpu);
    WRITE_ONCE(e->acked, READ_ONCE(global_epoch));
    fence();
}

uint64_t epoch_pending(void)
{
    uint64_t n = 0;
    for (int c = 0; c < READ_ONCE(ncpu); c++)
        n += READ_ONCE(per_cpu_ptr(&epoch_cpu, c)->pending);
    return n;
}

void epoch_synchronize(void)
{
    assert(!epoch_in_reader());
    uint64_t target = READ_ONCE(global_epoch) + 2;
    while (READ_ONCE(global_epoch) < target)
        hlt(); // the next timer tick wakes us
}

void epoch_barrier(void)
{
    assert(!epoch_in_reader());
    while (READ_ONCE(this_cpu_ptr(&epoch_cpu)->pending))
        hlt();
}
