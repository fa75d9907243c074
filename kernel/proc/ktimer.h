// Kernel timers: a function called from a CPU's timer tick once a deadline
// has passed (ktimer.c).
#pragma once
#include "kernel.h"

// [c]: under the lock of the list it is on (that CPU's).
struct ktimer {
    struct ktimer *next;         // [c] on a CPU's list, by deadline
    bool armed;                  // [c] on a list
    bool running;                // [c] its function is running now
    int cpu;                     // [c] whose list it is on, or last was; -1 never armed
    uint64_t deadline;           // [c] nsec_now() clock
    void (*fn)(struct ktimer *); // called from the tick, interrupts off: keep it short
};

void ktimer_init(struct ktimer *t, void (*fn)(struct ktimer *));
// Arm (or re-arm) t for deadline on this CPU's list, or, while its function
// runs, on the list of the CPU running it. Its function may do it.
void ktimer_arm(struct ktimer *t, uint64_t deadline);
// Disarm t; whether it was armed. Its function may be running on another CPU.
bool ktimer_cancel(struct ktimer *t);
// Disarm t and wait until its function is not running: then t may be freed.
// Not from the function, nor holding a lock the function takes.
void ktimer_cancel_sync(struct ktimer *t);
void ktimer_tick(void); // each CPU's timer tick: run its due timers
// The earliest deadline on this CPU's list, UINT64_MAX if none (interrupts
// off; tickless idle). Only this CPU adds timers to its list.
uint64_t ktimer_next_deadline(void);
