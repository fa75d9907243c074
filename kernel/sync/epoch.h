// Epoch-based deferred reclamation (RCU-style). Readers bracket lock-free reads
// with epoch_enter/epoch_exit; writers unlink an object and hand it to
// epoch_defer, which frees it once no reader that could still see it remains.
#pragma once
#include "kernel.h"

// [p]: written by the deferring CPU only, interrupts off (docs/conventions.md).
struct epoch_cb {
    struct epoch_cb *next;             // [p] on that CPU's list
    void (*fn)(struct epoch_cb *cb);   // [p]
    uint64_t epoch;    // [p] global epoch when deferred
};

void epoch_enter(void);   // nests; disables preemption
void epoch_exit(void);
bool epoch_in_reader(void);

// Call fn(cb) after every read section running now has ended. cb is usually
// embedded in the object (container_of gets it back). fn runs on the calling CPU,
// from its timer interrupt, with interrupts off: keep it short (free memory).
void epoch_defer(struct epoch_cb *cb, void (*fn)(struct epoch_cb *cb));

void epoch_tick(void);         // each CPU's timer tick: quiescent point + callbacks
void epoch_synchronize(void);  // wait for a full grace period (interrupts on)
void epoch_barrier(void);      // wait until this CPU's deferred callbacks have run
uint64_t epoch_current(void);
uint64_t epoch_pending(void);  // callbacks waiting, all CPUs (racy: reports)
uint64_t epoch_stalls(void);   // epochs reported stalled (see try_advance; tests)
// Tickless idle (proc/tickless.c), interrupts off: stop acknowledging (false
// if this CPU has callbacks waiting or is in a read section), and start again.
bool epoch_stop_tick(void);
void epoch_restart_tick(void);
