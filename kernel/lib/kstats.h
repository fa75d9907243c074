// Kernel statistics: per-CPU event counters (counter.h) that user space reads
// with the kstats system call (uapi/ext.h). Counting commutes across CPUs and
// shares no cache line; reading sums nothing, it reports every CPU separately.
#pragma once
#include "sync/counter.h"

DECLARE_COUNTER(kst_ipi_sent);
DECLARE_COUNTER(kst_ipi_received);
DECLARE_COUNTER(kst_shootdowns);
DECLARE_COUNTER(kst_tlb_flushes);
DECLARE_COUNTER(kst_async_flushes);
DECLARE_COUNTER(kst_page_faults);
DECLARE_COUNTER(kst_pages_alloc);
DECLARE_COUNTER(kst_pages_freed);

static inline void kstat_ipi_sent(void) { counter_inc(kst_ipi_sent); }
static inline void kstat_ipi_received(void) { counter_inc(kst_ipi_received); }
static inline void kstat_shootdown(void) { counter_inc(kst_shootdowns); }
static inline void kstat_tlb_flush(void) { counter_inc(kst_tlb_flushes); }
static inline void kstat_async_flush(void) { counter_inc(kst_async_flushes); }
static inline void kstat_page_fault(void) { counter_inc(kst_page_faults); }
static inline void kstat_pages_alloc(size_t n) { counter_add(kst_pages_alloc, n); }
static inline void kstat_pages_free(size_t n) { counter_add(kst_pages_freed, n); }

struct kstats_cpu;
void kstats_read(int cpu, struct kstats_cpu *out);
int64_t kstats_ipis_sent(void); // sum over all CPUs (tests, benchmarks)
