// Tickless idle: a CPU with nothing to do stops its timer tick.
//
// Every CPU takes TIMER_HZ ticks a second, and each tick does the CPU's
// periodic work: acknowledging epochs, flushing refcache deltas, waking timed
// sleepers, running kernel timers, stealing work. An idle CPU's ticks find
// nothing to do, but under TCG each is emulated: an idle 255-vCPU guest kept
// a host core busy with them. So a CPU that has been idle for IDLE_TICKS
// ticks in a row, and holds no per-CPU state that needs its tick, stops the
// tick before it halts; the next interrupt of any kind starts it again
// (trap() calls tickless_wake_if_stopped first). What a stopped tick means
// to each mechanism:
//  - epochs (sync/epoch.c): the CPU acknowledges every epoch to come; it may
//    not stop with callbacks of its own waiting;
//  - refcache (sync/refcache.c): it counts as flushed in every epoch; it may
//    stop only with its cache empty and out of the active set (after 1 s of
//    idleness it empties its cache and leaves at once, so that exact readers
//    stop visiting it), and reviewing no objects;
//  - timed sleepers and kernel timers on this CPU: the timer fires once, at
//    the earliest deadline, instead of stopping;
//  - the scheduler: a stopped CPU looks for no work to steal, so a CPU that
//    queues a second thread behind a running one kicks a stopped CPU (an IPI)
//    to come and take one; idle time and the load average are made up at
//    waking;
//  - the hang detector watches the next CPU whose tick runs; the last CPU,
//    which watches CPU 0, wakes at least once per hangcheck limit to look.
// CPU 0 keeps its tick: it advances the epochs and refcache's epochs.
//
// Commute: stopping and starting write this CPU's own state and one bit of
// the mask of stopped CPUs, which is read only by a CPU whose queue holds two
// threads or more it cannot run yet, one of which another CPU may run; both
// happen in the idle loop or at interrupt entry, never in a system call.
#include "proc/tickless.h"
#include "proc/hangcheck.h"
#include "proc/ktimer.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/epoch.h"
#include "sync/refcache.h"
#include "mm/uvm.h"
#include "x86/smp.h"
#include "x86/trap.h"
#include "x86/x86.h"

#define IDLE_TICKS (TIMER_HZ / 5)      // idle this long (200 ms) before stopping
#define LEAVE_TICKS TIMER_HZ           // and this long (1 s) to leave the active set for it

struct tickless {
    uint32_t idle_ticks; // [p] ticks in a row that found the idle thread running
    uint64_t stops;      // [p,r] times it stopped
    uint64_t kicks;      // [p,r] times it woke a stopped CPU to take queued work
};
static DEFINE_PERCPU(struct tickless, tickless);
DEFINE_PERCPU(bool, tick_stopped);

static cpumask_t stopped_mask __cacheline_alone; // [a] CPUs whose tick is stopped
static bool enabled;                                // [i] tickless=0 turns it off

void tickless_start(void)
{
    size_t len;
    const char *v = cmdline_get("tickless", &len);
    WRITE_ONCE(enabled, !(v && len == 1 && v[0] == '0'));
}

void tickless_tick(void)
{
    struct tickless *tl = this_cpu_ptr(&tickless);
    tl->idle_ticks = thread_current()->is_idle ? tl->idle_ticks + 1 : 0;
}

// Interrupts off, in the idle thread. Whether nothing here needs the tick
// before `wake` (UINT64_MAX: nothing at all).
static bool nothing_to_tick_for(uint32_t idle_ticks, uint64_t now, uint64_t *wake)
{
    if (!sched_may_stop_tick(wake))
        return false;
    *wake = MIN(*wake, ktimer_next_deadline());
    if (*wake != UINT64_MAX && *wake < now + 2 * TICK_NS)
        return false; // due within a tick or two: keep ticking
    uvm_tick(true); // this CPU's deferred copy-on-write releases and trims
    if (!fmap_may_stop_tick())
        return false; // it leaves the file-mapping set at a tick first
    if (!refcache_stop_tick(idle_ticks >= LEAVE_TICKS))
        return false;
    if (!epoch_stop_tick()) {
        refcache_restart_tick();
        return false;
    }
    return true;
}

static void stop_tick(void)
{
    struct tickless *tl = this_cpu_ptr(&tickless);
    if (!READ_ONCE(enabled) || cpu_id() == 0 || tl->idle_ticks < IDLE_TICKS)
        return;
    uint64_t now = nsec_now(), wake;
    if (!nothing_to_tick_for(tl->idle_ticks, now, &wake))
        return;
    wake = MIN(wake, hangcheck_tick_stopping(now));
    sched_tick_stopped(now);
    WRITE_ONCE(tl->stops, tl->stops + 1);
    this_cpu_write(tick_stopped, true);
    cpumask_set_atomic(&stopped_mask, cpu_id());
    if (wake == UINT64_MAX)
        lapic_timer_stop();
    else
        lapic_timer_oneshot(wake - now);
}

void tickless_idle(void)
{
    for (;;) {
        cli();
        stop_tick();
        // sti takes effect after the next instruction, so an interrupt that
        // arrived since the cli (a kick, a wake-up) ends the hlt at once:
        // none is lost between the look and the halt.
        asm volatile("sti; hlt" ::: "memory");
    }
}

// At interrupt entry, interrupts off: before the handler may enter a read
// section or touch refcache, this CPU takes part in the epochs again.
void tickless_wake(void)
{
    struct tickless *tl = this_cpu_ptr(&tickless);
    epoch_restart_tick();
    refcache_restart_tick();
    this_cpu_write(tick_stopped, false);
    cpumask_clear_atomic(&stopped_mask, cpu_id());
    lapic_timer_restart();
    tl->idle_ticks = 0;
    sched_tick_restarted();
    hangcheck_tick_restarted(nsec_now());
}

void tickless_kick(const cpumask_t *allowed)
{
    for (int i = 0; i < CPUMASK_WORDS; i++) {
        if (!allowed->w[i])
            continue;
        uint64_t w = load_relaxed(&stopped_mask.w[i]) & allowed->w[i];
        if (w) {
            lapic_send_ipi(cpu_apicid[i * 64 + __builtin_ctzll(w)], T_RESCHED);
            struct tickless *tl = this_cpu_ptr(&tickless);
            WRITE_ONCE(tl->kicks, tl->kicks + 1);
            return;
        }
    }
}

bool tickless_stopped(int c) { return READ_ONCE(*per_cpu_ptr(&tick_stopped, c)); }

uint64_t tickless_stops(int c) { return READ_ONCE(per_cpu_ptr(&tickless, c)->stops); }

uint64_t tickless_kicks(int c) { return READ_ONCE(per_cpu_ptr(&tickless, c)->kicks); }
