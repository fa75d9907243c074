// Page references and deferred release: what becomes of a user page when a
// descriptor lets go of it. The design is in uvm_internal.h ("Page
// references").
//  - A COW break (vp_break_cow) takes the page if nobody else holds it, or
//    copies it and drops its reference to the shared page later, from a
//    per-CPU list drained at the epoch tick (cow_defer, uvm_tick).
//  - A range change drops descriptors into a zap (vp_drop): their pages,
//    inode references and write access wait in batches until every TLB that
//    may reach the pages is flushed (zap_flush), then go (batch_release): at
//    once, or a grace period later for MADV_UNMAP_ASYNC (uvm_map.c).
//
// Commute: COW breaks of one shared page in different address spaces (each
// reads the page's owner word and writes only its own CPU's list), and range
// changes of pages no other CPU touched: those read other CPUs' page tables
// but interrupt nobody (zap_remote asks only the CPUs that had an entry, and
// of those only the ones that have the space loaded). Batches belong to one
// operation, lists to one CPU.
#include "lib/kstats.h"
#include "mm/tlb.h"
#include "mm/uvm_internal.h"

// ---- copy-on-write breaks ----------------------------------------------------------

// References to shared pages that COW breaks dropped, per CPU, not yet taken off
// the pages' owner words: the epoch tick (or a full list) does that, so commuting
// COW breaks of one page in different address spaces write no shared line.
#define COW_DEFER_MAX 31
struct cow_defer {
    uint64_t n;
    void *pg[COW_DEFER_MAX];
};
static DEFINE_PERCPU(struct cow_defer, cow_defer);

// A page whose last reference goes here was copied by its other sharers on
// their CPUs: it goes to the cold end of this CPU's cache, not to be handed out
// next (to a path buffer, say) while those CPUs still hold its lines.
static void cow_defer_drain(struct cow_defer *d) // interrupts off
{
    for (uint64_t i = 0; i < d->n; i++)
        if (page_unref_last(d->pg[i], true))
            page_free_cold(d->pg[i]);
    d->n = 0;
}

static void cow_defer_put(void *pg)
{
    push_off(); // the tick drains this list
    struct cow_defer *d = this_cpu_ptr(&cow_defer);
    if (d->n == COW_DEFER_MAX)
        cow_defer_drain(d);
    d->pg[d->n++] = pg;
    pop_off();
}

void cow_defer_settle(void)
{
    push_off();
    struct cow_defer *d = this_cpu_ptr(&cow_defer);
    if (d->n)
        cow_defer_drain(d);
    pop_off();
}

// Give a locked copy-on-write page its own copy (or take the page if nobody else
// holds it). The old page may be in other CPUs' tables for this space: clear and
// shoot them down before the new page appears.
int vp_break_cow(struct vmspace *vs, struct vpage *vp, uintptr_t va)
{
    // LAB cow BEGIN
    uint64_t w = vp_val(vp);
    void *old = P2V(VP_PA(w));
    if (!(w & VP_FILEPG) && page_owner_get(old) == 0) { // ours alone: the other side let go
        vp_set(vp, w & ~VP_COW);
        return 0;
    }
    void *pg = page_alloc();
    if (!pg)
        return -ENOMEM;
    memcpy(pg, old, PGSIZE);
    struct zap z;
    zap_init(&z);
    vp_clear_ptes(vs, va, &z);
    zap_range(&z, va);
    vp_set(vp, (w & ~(VP_COW | VP_FILEPG | PTE_ADDR(~0UL))) | V2P(pg));
    zap_finish_sync(vs, &z);
    if (!(w & VP_FILEPG)) // (the file keeps its own page)
        cow_defer_put(old);
    return 0;
    // LAB cow SKELETON
    // // TODO (labs/cow): give vp its own copy of the page (or take the page if
    // // nobody else holds it). Until then a write to a shared page fails as if
    // // memory had run out, and kills the writer.
    // (void)vs;
    // (void)vp;
    // (void)va;
    // (void)cow_defer_put;
    // return -ENOMEM;
    // LAB cow END
}

void uvm_tick(bool idle)
{
    cow_defer_settle();
    fmap_tick();
    // The loaded space cannot be freed before we switch away from it.
    struct vmspace *vs = this_cpu_read(loaded_vs);
    struct vmcore *vc = vs ? vs->core[cpu_id()] : NULL;
    if (vc)
        trim_tick(vs, vc, idle);
}

// ---- dropping descriptors, flushing, releasing -------------------------------------

void batch_release(struct batch *b)
{
    while (b) {
        struct batch *next = b->next;
        for (uint32_t i = 0; i < b->n; i++) {
            uintptr_t e = b->pg[i];
            if (e & 2) { // a run of dropped file descriptors (zap_file)
                struct wrun r = {(struct inode *)(e & ~2UL), (int64_t)b->pg[++i]};
                wrun_put(&r);
            } else {
                page_unref((void *)(e & ~1UL), e & 1);
            }
        }
        page_free(b);
        b = next;
    }
}

// Room for k more entries in z's batch; false if no batch could be had.
static bool zap_room(struct zap *z, uint32_t k)
{
    if (!z->pages || z->pages->n + k > BATCH_MAX) {
        struct batch *b = page_alloc();
        if (!b) {
            z->nomem = true;
            return false;
        }
        b->n = 0;
        b->next = z->pages;
        z->pages = b;
    }
    return true;
}

// Hand the page's reference to z. Returns false if no batch could be had; the
// caller then flushes what it has and drops the reference itself.
static bool zap_page(struct zap *z, void *pg, bool shared)
{
    if (!zap_room(z, 1))
        return false;
    z->pages->pg[z->pages->n++] = (uintptr_t)pg | shared;
    return true;
}

// The CPUs of tlb other than this one that have vs loaded now (the others flushed
// when they switched away). Each CPU says so in its own part of vs (a line it
// writes only at a switch), and only the CPUs that had an entry are asked: a
// range operation shares no line with threads of the space being scheduled on
// other CPUs, and none at all when no other CPU touched its pages.
void zap_remote(struct vmspace *vs, const cpumask_t *tlb, cpumask_t *m)
{
    // The cleared entries must be visible before we read who has vs loaded: a
    // CPU that loads it later walks the cleared tables.
    fence();
    int me = cpu_id();
    cpumask_clear(m);
    for_each_cpu(c, tlb) // each had an entry, so it has its part of vs
        if (c != me && load_relaxed(&vs->core[c]->loaded))
            cpumask_set(m, c);
}

// Flush the TLBs in z->tlb that have vs loaded (the others flushed when they
// switched away, and their tables no longer map the pages). Range operations
// flush before they unlock: once a page is unlocked, the next operation on it
// finds no entries and so no CPU to flush, and must not be able to free or
// share the page while a TLB still reaches it.
void zap_flush(struct vmspace *vs, struct zap *z)
{
    if (z->hi > z->lo) {
        cpumask_t m;
        zap_remote(vs, &z->tlb, &m);
        if (cpumask_test(&z->tlb, cpu_id())) {
            for (uintptr_t a = z->lo; a < z->hi && z->hi - z->lo <= 32 * PGSIZE; a += PGSIZE)
                invlpg(a);
            if (z->hi - z->lo > 32 * PGSIZE)
                flush_tlb_local();
        }
        if (cpumask_weight(&m)) {
            tlb_shootdown(&m, z->lo, z->hi - z->lo);
            kstat_shootdown();
        }
    }
    z->lo = UINTPTR_MAX;
    z->hi = 0;
    cpumask_clear(&z->tlb);
}

// Hand z's run of file descriptors to its batch, to go with the pages (or,
// without a batch, flush and give it back now).
void zap_files_batch(struct vmspace *vs, struct zap *z)
{
    if (!z->wrun.ip)
        return;
    if (!zap_room(z, 2)) {
        zap_finish_sync(vs, z);
        return;
    }
    // (Inodes are cache-line aligned: bit 1 of the pointer is free.)
    z->pages->pg[z->pages->n++] = (uintptr_t)z->wrun.ip | 2;
    z->pages->pg[z->pages->n++] = (uintptr_t)z->wrun.n;
    z->wrun.ip = NULL;
}

// A dropped descriptor of ip: its inode reference (which keeps the page if it is
// the file's) and its write access go back once no TLB reaches the pages
// dropped with it.
static void zap_file(struct vmspace *vs, struct zap *z, struct inode *ip, bool writer)
{
    if (z->wrun.ip != ip)
        zap_files_batch(vs, z);
    wrun_drop(&z->wrun, ip, writer);
}

// Drop a page while the caller holds locks: flush first if it cannot be batched.
static void zap_or_flush(struct vmspace *vs, struct zap *z, void *pg, bool shared)
{
    if (zap_page(z, pg, shared))
        return;
    zap_finish_sync(vs, z);
    page_unref(pg, shared);
}

// Remove the page's mapping or just its contents; locked. The page table entries
// go now, the page's reference to z.
void vp_drop(struct vmspace *vs, int64_t *resident, struct vpage *vp, uintptr_t va,
             struct zap *z, bool keep_mapping)
{
    uint64_t w = vp_val(vp);
    if (VP_PA(w)) {
        vp_clear_ptes(vs, va, z);
        zap_range(z, va);
        (*resident)--;
        vp_set(vp, keep_mapping ? (w & ~(PTE_ADDR(~0UL) | VP_COW | VP_FILEPG)) : 0);
        if (!(w & VP_FILEPG)) // the file's own page has no reference to drop
            zap_or_flush(vs, z, P2V(VP_PA(w)), (w & (VP_COW | VP_SHARED)) || vp->ip);
    } else {
        vp_set(vp, keep_mapping ? w : 0);
    }
    if (!keep_mapping && vp->ip) {
        zap_file(vs, z, vp->ip, w & VP_WRITER);
        vp->ip = NULL;
    }
}
