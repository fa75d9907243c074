// Cross-CPU calls: run fn(arg) on a set of CPUs, delivered by IPI (T_XCALL).
//
// Each CPU owns a request ring in its per-CPU area. A sender reserves a position
// in a target's ring with one atomic add, fills the slot, publishes it and sends
// the target an IPI; the target runs the requests in order from its interrupt
// handler. There is no global lock: xcalls from different senders to different
// targets commute and touch disjoint cache lines (each ring's tail, head and
// every slot have a line of their own). Senders to the same target share only
// that target's tail line -- the target is the point of contact anyway.
//
// A waiting sender counts its remote targets in a completion counter on its own
// stack (one line); each target decrements it after running fn.
//
// Deadlock freedom: handlers run with interrupts off, and a sender may itself be
// inside a handler or have interrupts off. So a CPU that waits -- for its calls to
// complete, or for space in a full ring -- keeps running the requests queued for
// it (xcall_poll). Two CPUs that call each other each run the other's request.
//
// Slot protocol (a bounded multi-producer ring with per-slot turns): slot s of
// ring position p = lap * XQ_SLOTS + s is free for lap when turn == 2*lap, holds
// lap's request when turn == 2*lap + 1, and is handed to lap + 1 by setting
// turn = 2*lap + 2. Zero-filled memory is therefore an empty ring, which is what
// a new CPU's per-CPU area starts with.
#include "lib/kstats.h"
#include "proc/hangcheck.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "sync/xcall.h"
#include "x86/smp.h"
#include "x86/trap.h"
#include "x86/x86.h"

#define XQ_SLOTS 64

struct xslot {
    uint64_t turn;
    xcall_fn fn;
    void *arg;
    uint32_t *pending; // sender's completion counter, NULL if it does not wait
} __cacheline_aligned;

struct xqueue {
    uint64_t tail __cacheline_aligned; // next position to reserve (any sender)
    uint64_t head __cacheline_aligned; // next position to run (the owner only)
    struct xslot slot[XQ_SLOTS];
};

static DEFINE_PERCPU(struct xqueue, xq);

// Run every published request in order. Interrupts are off, so only a nested
// drain from inside some fn (which re-reads head) can interleave with this one.
static void drain(void)
{
    struct xqueue *q = this_cpu_ptr(&xq);
    for (;;) {
        uint64_t pos = q->head, lap = pos / XQ_SLOTS;
        struct xslot *s = &q->slot[pos % XQ_SLOTS];
        if (load_acquire(&s->turn) != 2 * lap + 1)
            return; // empty, or the next sender has not published yet (its IPI follows)
        xcall_fn fn = s->fn;
        void *arg = s->arg;
        uint32_t *pending = s->pending;
        q->head = pos + 1;
        // Free the slot before running fn, so that a full ring drains even if fn
        // itself waits on other CPUs.
        store_release(&s->turn, 2 * lap + 2);
        fn(arg);
        if (pending)
            fetch_sub_release(pending, 1);
    }
}

void xcall_poll(void)
{
    push_off();
    drain();
    pop_off();
}

static void xcall_intr(struct trapframe *tf)
{
    (void)tf;
    // Acknowledge first: an IPI sent while we drain is then latched and runs the
    // handler again, so no published request is left waiting.
    lapic_eoi();
    kstat_ipi_received();
    drain();
}

void xcall_init(void) { irq_register(T_XCALL, xcall_intr); }

static void enqueue(int c, xcall_fn fn, void *arg, uint32_t *pending)
{
    struct xqueue *q = per_cpu_ptr(&xq, c);
    uint64_t pos = fetch_add_relaxed(&q->tail, 1), lap = pos / XQ_SLOTS;
    struct xslot *s = &q->slot[pos % XQ_SLOTS];
    while (load_acquire(&s->turn) != 2 * lap) {
        xcall_poll(); // the ring is full; its owner may be waiting on us
        pause();
    }
    s->fn = fn;
    s->arg = arg;
    s->pending = pending;
    store_release(&s->turn, 2 * lap + 1);
    lapic_send_ipi(cpu_apicid[c], T_XCALL);
    kstat_ipi_sent();
}

// A wait of a third of the hang detector's limit (20 s by default) is no load
// but a target that cannot run its requests (interrupts off, or a handler that
// does not return): say which targets still hold requests and ask them for
// their stacks, once per call, before the detector reports the waiter itself
// and ends the run (the fuzzer's 8-vCPU run of 90f85a3 lost the culprit so).
static void report_slow(const cpumask_t *targets, uint64_t waited)
{
    kprintf("xcall: cpu %d has waited %llu ms for", cpu_id(), (unsigned long long)(waited / 1000000));
    int asked = 0;
    for_each_cpu(c, targets) {
        struct xqueue *q = per_cpu_ptr(&xq, c);
        if (READ_ONCE(q->head) < READ_ONCE(q->tail)) {
            kprintf(" %d", c);
            if (asked++ < 4)
                hangcheck_dump_cpu(c);
        }
    }
    kprintf(asked ? " (requests not run yet)\n" : " a handler still running on one of them\n");
}

// Keep running our own requests while the targets run ours.
static void wait_for(uint32_t *pending, const cpumask_t *targets)
{
    uint64_t since = 0, slow = (uint64_t)hangcheck_limit() * 1000000000ULL / 3;
    for (uint32_t spins = 0; load_acquire(pending) != 0; spins++) {
        xcall_poll();
        pause();
        if (spins % 4096 || since == UINT64_MAX || slow == 0)
            continue;
        uint64_t now = nsec_now();
        if (!since)
            since = now;
        else if (now - since > slow) {
            report_slow(targets, now - since);
            since = UINT64_MAX;
        }
    }
}

void xcall(const cpumask_t *mask, xcall_fn fn, void *arg, bool wait)
{
    struct {
        uint32_t n;
    } __cacheline_aligned pending = {0}; // alone on its line: the targets write it

    preempt_disable();
    int self = cpu_id();
    cpumask_t targets; // one snapshot: CPUs may come online meanwhile
    for (int i = 0; i < CPUMASK_WORDS; i++)
        targets.w[i] = mask->w[i] & READ_ONCE(cpu_online_mask.w[i]);
    cpumask_unset(&targets, self);
    // Count first, publish after: a target may finish before the last is queued.
    for_each_cpu(c, &targets)
        pending.n++;
    for_each_cpu(c, &targets)
        enqueue(c, fn, arg, wait ? &pending.n : NULL);
    if (cpumask_test(mask, self)) {
        // As on the other CPUs, fn starts with interrupts off. (Not push_off: a
        // fn may turn them on, as a handler may.)
        bool was = read_rflags() & RFLAGS_IF;
        cli();
        fn(arg);
        if (was)
            sti();
        else
            cli();
    }
    if (wait)
        wait_for(&pending.n, &targets);
    preempt_enable();
}

void xcall_all(xcall_fn fn, void *arg)
{
    cpumask_t m = cpu_online_mask;
    xcall(&m, fn, arg, true);
}
