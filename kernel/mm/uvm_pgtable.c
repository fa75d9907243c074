// Per-CPU page tables: each CPU's part of an address space (struct vmcore, made
// by that CPU on first use), entries found in one CPU's table or cleared in all
// of them, and the table a CPU loads when it switches to a space. The design is
// in uvm_internal.h; faults fill the tables (uvm_fault.c), range operations and
// COW breaks clear them (uvm_map.c, uvm_pageref.c) and flush the TLBs of the
// CPUs that had an entry (zap_flush, uvm_pageref.c).
//
// Commute: faults on different CPUs, which fill only their own CPU's table
// (only CPU c adds tables to CPU c's); and range operations with faults on
// other pages: a range operation reads every CPU's table for its own pages and
// writes only the entries it finds present. What they share is the x86
// format's: 8 entries to a line, and one table for 512 neighbouring pages. A
// switch writes only the switching CPU's part of the space ("loaded", on a line
// of its own that others read only to decide whom to shoot down).
#include "mm/tlb.h"
#include "mm/uvm_internal.h"

DEFINE_PERCPU(struct vmspace *, loaded_vs); // what uvm_switch loaded here (uvm_tick, uvm_fault)

struct vmcore *core_get(struct vmspace *vs, int c)
{
    struct vmcore *vc = load_acquire(&vs->core[c]);
    if (vc)
        return vc;
    vc = kzalloc(sizeof *vc);
    if (!vc)
        return NULL;
    vc->pml4 = page_alloc_zeroed();
    if (!vc->pml4) {
        kfree(vc);
        return NULL;
    }
    memcpy(vc->pml4 + 256, kernel_pml4 + 256, 256 * sizeof(pte_t));
    vc->hint = USER_MMAP_TOP - (uintptr_t)(c % (NCPU_MAX)) * ZONE_SIZE;
    // In the mask before the part appears, and so before any entry of this
    // CPU's table does (a locked OR: a full fence): a walk that misses the bit
    // misses the entries too (vp_clear_ptes).
    fetch_or(&vs->cores.w[c / 64], 1UL << (c % 64));
    store_release(&vs->core[c], vc); // only CPU c stores here
    return vc;
}

// The leaf table (512 entries) for va in a CPU's table, or NULL if it has none.
static inline pte_t *leaf_table(pte_t *pml4, uintptr_t va)
{
    pte_t *table = pml4;
    for (int l = 3; l > 0; l--) {
        pte_t v = load_acquire(&table[PX(l, va)]);
        if (!(v & PTE_P))
            return NULL;
        table = P2V(PTE_ADDR(v));
    }
    return table;
}

// PTE for va in a CPU's table, allocating tables if alloc (the owning CPU only:
// others only read the tables and clear leaf entries). NULL if absent / no memory.
pte_t *pte_find(pte_t *pml4, uintptr_t va, bool alloc)
{
    if (!alloc) {
        pte_t *leaf = leaf_table(pml4, va);
        return leaf ? &leaf[PX(0, va)] : NULL;
    }
    pte_t *table = pml4;
    for (int l = 3; l > 0; l--) {
        pte_t *e = &table[PX(l, va)];
        pte_t v = load_acquire(e);
        if (!(v & PTE_P)) {
            pte_t *next = page_alloc_zeroed();
            if (!next)
                return NULL;
            v = V2P(next) | PTE_P | PTE_W | PTE_U;
            store_release(e, v);
        }
        table = P2V(PTE_ADDR(v));
    }
    return &table[PX(0, va)];
}

// Clear the page's entry in every CPU's table for the space and add the CPUs that
// had one present to *tlb (their TLBs may still cache the page). The page is
// locked: the caller's lock CAS came before these loads (see fill_checked). Only
// present entries are written, so CPUs that never touched the page only have
// their tables read. Callers skip descriptors without a physical page: no table
// has an entry for those (a fault fills only a page the descriptor names, and
// whoever takes the page from a descriptor clears the entries first), and
// reading other CPUs' tables for them would share the lines those CPUs write
// when they fault on neighbouring pages (8 entries to a cache line).
static inline void clear_entry(pte_t *e, int c, cpumask_t *tlb)
{
    if (e && (load_seqcst(e) & PTE_P)) {
        store_seqcst(e, 0);
        cpumask_set(tlb, c);
    }
}

#define PTE_LINE_PAGES 8 // pages whose entries share a cache line of a table

// Which CPUs have a leaf table for va's block (struct ptwalk).
static void ptwalk_look(struct vmspace *vs, struct ptwalk *w, uintptr_t va)
{
    w->looked = true;
    w->block = va & ~(HUGEPGSIZE - 1);
    w->line = 1;
    w->n = 0;
    w->leaves = w->many ? w->many : w->few;
    cpumask_t cores;
    uvm_cores(vs, &cores);
    for_each_cpu(c, &cores) {
        struct vmcore *vc = load_seqcst(&vs->core[c]);
        pte_t *leaf = vc ? leaf_table(vc->pml4, va) : NULL;
        if (!leaf)
            continue;
        if (w->n == PTWALK_FEW && w->leaves == w->few) {
            if (!(w->many = page_alloc())) {
                w->n = -1; // walk every table for each page instead
                return;
            }
            memcpy(w->many, w->few, sizeof w->few);
            w->leaves = w->many;
        }
        w->leaves[w->n++] = (struct ptleaf){c, leaf};
    }
}

// Which of the look's leaf tables have an entry present for a page of va's line.
static void ptwalk_line(struct ptwalk *w, uintptr_t va)
{
    w->line = va & ~(PTE_LINE_PAGES * PGSIZE - 1);
    for (int k = 0; k * 64 < w->n; k++)
        w->hit[k] = 0;
    for (int i = 0; i < w->n; i++) {
        pte_t *e = &w->leaves[i].leaf[PX(0, w->line)], any = 0;
        for (int k = 0; k < PTE_LINE_PAGES; k++)
            any |= load_seqcst(&e[k]);
        if (any & PTE_P)
            w->hit[i / 64] |= 1UL << (i % 64);
    }
}

void vp_clear_ptes(struct vmspace *vs, uintptr_t va, struct zap *z)
{
    struct ptwalk *w = &z->walk;
    if (w->on && (!w->looked || w->block != (va & ~(HUGEPGSIZE - 1))))
        ptwalk_look(vs, w, va);
    if (w->on && w->n >= 0 && w->n <= PTWALK_FEW) {
        for (int i = 0; i < w->n; i++)
            clear_entry(&w->leaves[i].leaf[PX(0, va)], w->leaves[i].cpu, &z->tlb);
        return;
    }
    if (w->on && w->n >= 0) { // many tables: first, which have an entry near va
        if (w->line != (va & ~(PTE_LINE_PAGES * PGSIZE - 1)))
            ptwalk_line(w, va);
        for (int k = 0; k * 64 < w->n; k++)
            for (uint64_t m = w->hit[k]; m; m &= m - 1) {
                struct ptleaf *l = &w->leaves[k * 64 + __builtin_ctzll(m)];
                clear_entry(&l->leaf[PX(0, va)], l->cpu, &z->tlb);
            }
        return;
    }
    cpumask_t cores;
    uvm_cores(vs, &cores);
    for_each_cpu(c, &cores) {
        struct vmcore *vc = load_seqcst(&vs->core[c]);
        clear_entry(vc ? pte_find(vc->pml4, va, false) : NULL, c, &z->tlb);
    }
}

void uvm_switch(struct vmspace *prev, struct vmspace *next)
{
    push_off(); // the tick reads loaded_vs
    int me = cpu_id();
    pte_t *pml4 = kernel_pml4;
    struct vmcore *vc = next ? core_get(next, me) : NULL;
    if (vc) { // else the first fault tries again (uvm_fault)
        // Said before the CR3 load: a range operation that cleared entries and
        // then finds us not loaded knows that our walks will see them cleared.
        store_seqcst(&vc->loaded, true);
        pml4 = vc->pml4;
    }
    tlb_switch_flush(); // the CR3 load flushes what async unmaps asked us to
    write_cr3(V2P(pml4));
    this_cpu_write(loaded_vs, next);
    struct vmcore *pvc = prev ? prev->core[me] : NULL;
    if (pvc) // after the CR3 load, which flushed prev's translations
        store_seqcst(&pvc->loaded, false);
    pop_off();
}
