// TLB shootdown (tlb.c).
#pragma once
#include "kernel.h"
#include "sync/cpumask.h"

// Invalidate a range of kernel or current-address-space translations on the
// CPUs in mask (and locally if the caller is in it). Waits for completion.
void tlb_shootdown(const cpumask_t *mask, uintptr_t va, size_t len);
uint64_t tlb_shootdowns_received(int c); // per-CPU count, for tests
// Ask these CPUs to flush their TLB at their next epoch tick or context switch,
// without an IPI; a grace period (epoch_defer) later all of them have.
void tlb_flush_later(const cpumask_t *mask);
void tlb_tick(void);         // epoch_tick: do a requested flush
void tlb_switch_flush(void); // context switch: the CR3 load does it
// Kernel mappings removed for good (a kernel stack given back): every online CPU
// drops its global entries too, at its next epoch tick or context switch,
// whichever comes first; a grace period after the call every CPU that runs
// anything has. tlb_kernel_flush_now does this CPU's part at once (interrupts off).
void tlb_flush_kernel_later(void);
void tlb_kernel_flush_now(void);
#define TLB_FULL_FLUSH_PAGES 32          // above this many pages, flush everything
