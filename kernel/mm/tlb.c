// TLB shootdown: after a mapping is changed or removed, make the CPUs that may
// cache the old translation drop it, and wait until they have.
//
// Built on xcall: each target invalidates the range locally (invlpg page by page
// for small ranges; a full flush above TLB_FULL_FLUSH_PAGES, where one flush
// costs less than many invlpgs). Shootdowns to disjoint CPU sets commute and share
// no cache line: the request lives on the sender's stack and is only read, and
// each target counts what it received in its own per-CPU variable. Only the CPUs
// in the mask are interrupted -- callers that track which CPUs use an address
// space keep everybody else out of it.
//
// Deferred flushes (tlb_flush_later, for MADV_UNMAP_ASYNC) send nothing: they set
// a flag in each target's per-CPU area, and the target flushes its whole TLB at its
// next epoch tick (before it acknowledges the epoch, so a grace period after the
// request every target has flushed) or context switch, whichever comes first.
// Requests from any number of CPUs to one target collapse into one flush. The
// kernel's own mappings given back (kernel stacks, tlb_flush_kernel_later) go
// the same way with the global entries included, on every online CPU; a CPU
// whose tick is stopped does its part before it next switches threads.
#include "lib/kstats.h"
#include "mm/mmu.h"
#include "mm/tlb.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "sync/xcall.h"
#include "x86/smp.h"
#include "x86/x86.h"

struct tlb_req {
    uintptr_t start, end; // page aligned (used unless all)
    bool all;             // flush everything instead
    bool global;          // the range reaches the kernel half, whose entries are global
};

#define KERNEL_HALF DIRECTMAP_BASE // the lowest upper-half address

static DEFINE_PERCPU(uint64_t, received);
static DEFINE_PERCPU(uint32_t, flush_pending) __cacheline_aligned; // written by others
static DEFINE_PERCPU(uint32_t, kflush_pending) __cacheline_aligned; // global entries too

// Kernel mappings are global (PTE_G) and survive a CR3 reload; turning CR4.PGE
// off and on again drops them too.
static void flush_everything(bool global)
{
    uint64_t cr4 = read_cr4();
    if (global && (cr4 & CR4_PGE)) {
        write_cr4(cr4 & ~CR4_PGE);
        write_cr4(cr4);
    } else {
        flush_tlb_local();
    }
}

static void flush_local(const struct tlb_req *r)
{
    if (r->all) {
        flush_everything(r->global);
        return;
    }
    for (uintptr_t a = r->start; a != r->end; a += PGSIZE)
        invlpg(a);
}

static void shootdown_fn(void *arg)
{
    flush_local(arg);
    this_cpu_inc(received);
    kstat_tlb_flush();
}

void tlb_shootdown(const cpumask_t *mask, uintptr_t va, size_t len)
{
    struct tlb_req r;
    r.start = PGROUNDDOWN(va);
    r.end = PGROUNDUP(va + len);
    r.all = len > TLB_FULL_FLUSH_PAGES * PGSIZE || r.end < r.start || // wraps around
            (r.end - r.start) / PGSIZE > TLB_FULL_FLUSH_PAGES;
    r.global = va >= KERNEL_HALF || len > KERNEL_HALF - va;
    xcall(mask, shootdown_fn, &r, true);
}

uint64_t tlb_shootdowns_received(int c) { return READ_ONCE(*per_cpu_ptr(&received, c)); }

// The caller has cleared the entries; a CPU's flag is then read, and set if it
// is clear. Against the CPU's own flush (clear the flag, fence, flush): the
// fence first keeps the loads below from passing the caller's page-table
// stores (x86 lets a load pass an earlier store), so either we find the flag
// clear and set it (the CPU flushes again at its next tick), or the CPU
// cleared it after our look, and so flushes after our stores are visible: it
// cannot load the old entry again. Without it, a look that found the flag
// still set from an earlier request could be followed by a flush made before
// the entries were cleared, which left a stale entry for pages freed a grace
// period later.
void tlb_flush_later(const cpumask_t *mask)
{
    fence();
    for_each_cpu(c, mask)
        if (!load_relaxed(per_cpu_ptr(&flush_pending, c)))
            store_relaxed(per_cpu_ptr(&flush_pending, c), 1);
    fence(); // flags before the caller's epoch_defer
}

void tlb_flush_kernel_later(void)
{
    fence(); // the caller's kernel page-table stores before the flags (see above)
    for_each_cpu(c, &cpu_online_mask)
        if (!load_relaxed(per_cpu_ptr(&kflush_pending, c)))
            store_relaxed(per_cpu_ptr(&kflush_pending, c), 1);
    fence(); // flags before the caller's epoch_defer
}

// Cleared before the flush: a request that finds the flag still set was made
// before our flush, which then covers it.
void tlb_kernel_flush_now(void)
{
    if (!this_cpu_read(kflush_pending))
        return;
    this_cpu_write(kflush_pending, 0);
    fence();
    flush_everything(true);
    kstat_async_flush();
}

// Epoch tick (interrupts off), after the CPU has read the epoch it will acknowledge.
void tlb_tick(void)
{
    tlb_kernel_flush_now();
    if (!this_cpu_read(flush_pending))
        return;
    this_cpu_write(flush_pending, 0);
    flush_tlb_local();
    kstat_async_flush();
}

// Context switch, before the CR3 load that flushes the TLB anyway.
void tlb_switch_flush(void)
{
    if (this_cpu_read(flush_pending))
        this_cpu_write(flush_pending, 0);
}
