// Tickless idle (tickless.c): an idle CPU with nothing to wait for stops its
// timer tick until an interrupt wakes it.
#pragma once
#include "kernel.h"
#include "sync/cpumask.h"
#include "sync/percpu.h"

DECLARE_PERCPU(bool, tick_stopped); // [p,r]

void tickless_start(void);        // boot CPU, once every CPU's scheduler is ready
void tickless_idle(void) __noreturn; // a CPU's idle loop
void tickless_tick(void);         // each tick: count the idle ticks in a row
void tickless_wake(void);         // an interrupt on a CPU whose tick stopped
// The first interrupt on a CPU whose tick stopped starts it again, before the
// handler runs (the handler may enter an epoch read section).
static inline void tickless_wake_if_stopped(void)
{
    if (this_cpu_read(tick_stopped))
        tickless_wake();
}
// Threads (the last one allowed on `allowed`, and on some CPU besides the busy
// one it waits for) pile up on a busy CPU's queue: wake a CPU it allows whose
// tick stopped (it would not look for work to steal otherwise), if any. The
// caller calls only for such a thread: the mask's line is written by every CPU
// that stops or starts its tick.
void tickless_kick(const cpumask_t *allowed);
bool tickless_stopped(int c);     // is CPU c's tick stopped now (racy)
uint64_t tickless_stops(int c);   // how often CPU c's tick stopped (tests)
uint64_t tickless_kicks(int c);   // how often CPU c woke a stopped one (tests)
