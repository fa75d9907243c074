// Tests for TLB shootdown: it reaches exactly the CPUs asked for, and those CPUs
// really drop a stale translation (QEMU's TCG keeps translations cached until
// told, so a missing invalidation shows up as a read of the old page).
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "mm/tlb.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "sync/xcall.h"
#include "x86/smp.h"
#include "x86/x86.h"

static void snapshot(uint64_t *before)
{
    for (int c = 0; c < ncpu; c++)
        before[c] = tlb_shootdowns_received(c);
}

static void check_deltas(const uint64_t *before, const cpumask_t *m)
{
    for (int c = 0; c < ncpu; c++)
        KCHECK_EQ(tlb_shootdowns_received(c) - before[c], cpumask_test(m, c) ? 1 : 0);
}

static void mask_parity(cpumask_t *m, int parity, bool with_self)
{
    cpumask_clear(m);
    for (int c = 0; c < ncpu; c++)
        if (c % 2 == parity)
            cpumask_set(m, c);
    if (with_self)
        cpumask_set(m, cpu_id());
    else
        cpumask_unset(m, cpu_id());
}

static uint64_t before[NCPU_MAX];

KTEST(tlb_shootdown_reaches_exactly_targets)
{
    cpumask_t m;
    mask_parity(&m, 1, true); // odd CPUs and the caller; a few pages
    snapshot(before);
    tlb_shootdown(&m, (uintptr_t)&before, 3 * PGSIZE);
    check_deltas(before, &m);

    mask_parity(&m, 0, false); // even CPUs but not the caller; a full flush
    snapshot(before);
    tlb_shootdown(&m, DIRECTMAP_BASE, (TLB_FULL_FLUSH_PAGES + 1) * PGSIZE);
    check_deltas(before, &m);

    cpumask_clear(&m); // nobody
    snapshot(before);
    tlb_shootdown(&m, DIRECTMAP_BASE, PGSIZE);
    check_deltas(before, &m);
}

// ---- a real stale translation ------------------------------------------------

#define A_PATTERN 0xaaaaaaaaaaaaaaaaULL
#define B_PATTERN 0xbbbbbbbbbbbbbbbbULL

// The test maps one page at the bottom of an otherwise unused 512 GiB of the
// kernel half (PML4 entry 509). The kernel's upper-half PML4 entries are shared by
// every address space, so all CPUs see the mapping whatever they run.
#define SCRATCH_SLOT 509

struct scratch {
    uintptr_t va;
    pte_t *pdpt;        // the slot's PDPT (the kernel's, or ours if it had none)
    bool own_pdpt;
    bool mapped;
    pte_t *pd, *pt;
    uint64_t *a, *b;    // the two physical pages, via the direct map
};

static bool table_empty(const pte_t *t)
{
    for (int i = 0; i < 512; i++)
        if (t[i])
            return false;
    return true;
}

static bool scratch_map(struct scratch *s)
{
    s->va = 0xffff000000000000ULL | (uintptr_t)SCRATCH_SLOT << 39;
    pte_t e = kernel_pml4[SCRATCH_SLOT];
    if (e & PTE_P) {
        s->pdpt = P2V(PTE_ADDR(e));
        if (!table_empty(s->pdpt)) {
            kprintf("# PML4 entry %d is in use; pick another scratch slot\n", SCRATCH_SLOT);
            return false;
        }
    } else {
        s->pdpt = page_alloc_zeroed();
        s->own_pdpt = true;
    }
    s->pd = page_alloc_zeroed();
    s->pt = page_alloc_zeroed();
    s->a = page_alloc();
    s->b = page_alloc();
    if (!s->pdpt || !s->pd || !s->pt || !s->a || !s->b)
        return false;
    s->a[0] = A_PATTERN;
    s->b[0] = B_PATTERN;
    s->pd[0] = V2P(s->pt) | PTE_P | PTE_W;
    store_seqcst(&s->pdpt[0], V2P(s->pd) | PTE_P | PTE_W);
    if (s->own_pdpt)
        store_seqcst(&kernel_pml4[SCRATCH_SLOT], V2P(s->pdpt) | PTE_P | PTE_W);
    s->mapped = true;
    return true;
}

static void scratch_unmap(struct scratch *s)
{
    cpumask_t all = cpu_online_mask;
    if (s->mapped) {
        if (s->own_pdpt)
            store_seqcst(&kernel_pml4[SCRATCH_SLOT], 0);
        else
            store_seqcst(&s->pdpt[0], 0);
    }
    // A full flush also drops the paging-structure caches that held our tables.
    tlb_shootdown(&all, s->va, (TLB_FULL_FLUSH_PAGES + 1) * PGSIZE);
    void *pages[] = {s->own_pdpt ? s->pdpt : NULL, s->pd, s->pt, s->a, s->b};
    for (size_t i = 0; i < ARRAY_SIZE(pages); i++)
        if (pages[i])
            page_free(pages[i]);
}

struct reading {
    uint64_t v;
} __cacheline_aligned;
static struct reading readings[NCPU_MAX];
static volatile uintptr_t read_va;

static void read_test_va(void *arg)
{
    (void)arg;
    readings[cpu_id()].v = *(volatile uint64_t *)read_va;
}

// Point the test VA at `page`, make every CPU read (and so cache) it.
static void map_and_warm(struct scratch *s, uint64_t *page, uint64_t extra)
{
    cpumask_t all = cpu_online_mask;
    store_seqcst(&s->pt[0], V2P(page) | PTE_P | PTE_W | PTE_NX | extra);
    tlb_shootdown(&all, s->va, PGSIZE); // forget any earlier translation
    read_va = s->va;
    xcall_all(read_test_va, NULL);
}

// Remap to B, shoot down `m` over `len` bytes, and check that each target now
// reads B. Non-targets may read either page: nothing is asserted about them.
static int remap_and_check(struct scratch *s, const cpumask_t *m, size_t len, int *stale_others)
{
    store_seqcst(&s->pt[0], (s->pt[0] & ~PTE_ADDR(~0UL)) | V2P(s->b));
    tlb_shootdown(m, s->va, len);
    xcall_all(read_test_va, NULL);
    int wrong = 0;
    for (int c = 0; c < ncpu; c++) {
        if (cpumask_test(m, c) && readings[c].v != B_PATTERN) {
            kprintf("# cpu %d still reads %lx after the shootdown\n", c, readings[c].v);
            wrong++;
        }
        if (!cpumask_test(m, c) && readings[c].v == A_PATTERN)
            (*stale_others)++;
    }
    return wrong;
}

KTEST(tlb_shootdown_removes_stale_translation)
{
    struct scratch s = {0};
    bool ok = scratch_map(&s);
    KCHECK(ok);
    if (ok) {
        cpumask_t m;
        int stale_others = 0;

        // Small range (invlpg), odd CPUs and the caller.
        map_and_warm(&s, s.a, 0);
        for (int c = 0; c < ncpu; c++)
            KCHECK_EQ(readings[c].v, A_PATTERN);
        mask_parity(&m, 1, true);
        KCHECK_EQ(remap_and_check(&s, &m, PGSIZE, &stale_others), 0);

        // Large range (full flush), even CPUs but not the caller, and a global
        // mapping, which a plain CR3 reload would keep on real hardware (TCG's
        // TLB drops global entries on a CR3 write too, so it cannot catch that).
        map_and_warm(&s, s.a, PTE_G);
        mask_parity(&m, 0, false);
        KCHECK_EQ(remap_and_check(&s, &m, (TLB_FULL_FLUSH_PAGES + 8) * PGSIZE, &stale_others), 0);
        kprintf("# non-targets still reading the old page: %d\n", stale_others);
    }
    scratch_unmap(&s);
}
