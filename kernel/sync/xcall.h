// Cross-CPU calls (xcall.c): run a function on other CPUs, delivered by IPI
// (vector T_XCALL, x86/smp.h).
#pragma once
#include "kernel.h"
#include "sync/cpumask.h"

// Run fn(arg) on each CPU in mask (the caller included if it is in the
// mask). With wait, return only after every target has finished. fn runs with
// interrupts off. A waiting caller keeps serving xcalls sent to it, so xcalls may
// be made with interrupts off and from inside other xcalls -- but never while
// holding a lock that a target might be spinning on with interrupts off.
typedef void (*xcall_fn)(void *arg);
void xcall(const cpumask_t *mask, xcall_fn fn, void *arg, bool wait);
void xcall_all(xcall_fn fn, void *arg); // every online CPU, caller too, waits
void xcall_poll(void);                  // run whatever xcalls are queued for this CPU
void xcall_init(void);                  // once, on the boot CPU, before any CPU starts
