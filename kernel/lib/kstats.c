// Kernel statistics counters and the kstats system call (uapi/ext.h).
//
// Commute: every event count on every CPU -- each CPU adds to its own copy
// (counter.h). kstats reads each CPU's copies without stopping anyone.
#include "lib/kstats.h"
#include "mm/usercopy.h"
#include "sync/percpu.h"
#include "syscall/syscall.h"
#include "uapi/errno.h"
#include "uapi/ext.h"

DEFINE_COUNTER(kst_ipi_sent);
DEFINE_COUNTER(kst_ipi_received);
DEFINE_COUNTER(kst_shootdowns);
DEFINE_COUNTER(kst_tlb_flushes);
DEFINE_COUNTER(kst_async_flushes);
DEFINE_COUNTER(kst_page_faults);
DEFINE_COUNTER(kst_pages_alloc);
DEFINE_COUNTER(kst_pages_freed);

void kstats_read(int c, struct kstats_cpu *o)
{
    o->ipi_sent = counter_read_cpu(&kst_ipi_sent, c);
    o->ipi_received = counter_read_cpu(&kst_ipi_received, c);
    o->tlb_shootdowns = counter_read_cpu(&kst_shootdowns, c);
    o->tlb_flushes = counter_read_cpu(&kst_tlb_flushes, c);
    o->tlb_async_flushes = counter_read_cpu(&kst_async_flushes, c);
    o->page_faults = counter_read_cpu(&kst_page_faults, c);
    o->pages_alloc = counter_read_cpu(&kst_pages_alloc, c);
    o->pages_freed = counter_read_cpu(&kst_pages_freed, c);
}

int64_t kstats_ipis_sent(void) { return counter_read(&kst_ipi_sent); }

// kstats(buf, n): records for CPUs 0..min(n, ncpu)-1; returns the CPU count.
long sys_kstats(uint64_t ubuf, uint64_t n)
{
    int total = ncpu_online;
    for (int c = 0; c < total && (uint64_t)c < n; c++) {
        struct kstats_cpu rec;
        kstats_read(c, &rec);
        if (copy_to_user(ubuf + c * sizeof rec, &rec, sizeof rec) < 0)
            return -EFAULT;
    }
    return total;
}
