// Kernel stacks. Each stack lives in its own slot of a dedicated kernel virtual
// region (KSTACK_BASE): the top KSTACK_PAGES pages of a slot are mapped, the rest
// below stays unmapped, so running off the bottom of a stack faults (a double
// fault on the IST stack, which panics with a backtrace) instead of silently
// corrupting whatever lies below.
//
// Scalability: allocations and frees on different CPUs commute and share no cache
// line in the common case. Freed stacks stay mapped and go to a per-CPU cache
// (its lock on the CPU's own line, taken elsewhere only to give the cache
// back); a CPU takes from its own cache first. Only when a cache overflows or runs dry does
// a CPU touch the shared overflow list (one lock), and only a new slot takes
// one atomic add on the shared slot counter plus the kernel page-table lock.
//
// Giving memory back. The overflow list holds at most KSTACK_KEEP stacks; a
// stack freed beyond that is given back: its pages leave the kernel page table
// at once, and every CPU is asked to drop its global TLB entries at its next
// tick or context switch (tlb_flush_kernel_later), which needs no IPI. A grace
// period later every CPU that runs anything has done so, and the pages go back
// to the page allocator and the slot to the clean slots, which new stacks take
// before new slots. A CPU whose tick was stopped meanwhile may still hold an
// entry of the old pages; it drops it before it runs any thread
// (sched.c's switch_to) or makes a stack (kstack_alloc), the only ways it could
// use the slot again. Asking reads one flag per online CPU (and writes those
// not set yet): a cost that grows with the CPUs, paid only by a free beyond
// the caches, that is by bursts of threads, not by a thread's steady churn.
// Without this, a burst of threads kept its stacks for good: 200 threads at
// once left 787 pages that never came back.
#include "mm/mm.h"
#include "mm/tlb.h"
#include "mm/uvm.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/epoch.h"
#include "sync/percpu.h"
#include "sync/spinlock.h"
#include "uapi/errno.h"

#define KSTACK_BASE 0xffffd00000000000ULL
#define KSTACK_SLOT (2 * KSTACK_SIZE) // the lower half is the guard
#define KSTACK_SLOTS (1UL << 24)      // 512 GiB of address space: one PML4 entry
#define KSTACK_CLEAN 4096 // clean slots remembered; beyond, a slot's address space is lost

struct free_stack {
    struct free_stack *next;
};

// A CPU's cache: only that CPU uses it, except when memory runs out or caches
// are dropped and another CPU empties it (kstack_drop_cached); the lock is for
// that, and is otherwise uncontended on the CPU's own line.
struct kstack_cache {
    struct spinlock lock;
    struct free_stack *head;
    int n;
};
static DEFINE_PERCPU(struct kstack_cache, kstack_cache) = {.lock = SPINLOCK_INIT("kstack cache")};

// The shared overflow list, on a line of its own: its lock is written by every
// CPU whose cache overflows or runs dry, and must not share a line with
// read-mostly globals (ncpu, say) that everyone reads.
struct kstack_overflow {
    struct spinlock lock;
    struct free_stack *head;
    int n;
} __cacheline_aligned; // the type: padded to a whole line
static struct kstack_overflow overflow = {.lock = SPINLOCK_INIT("kstack")};
static uint64_t next_slot __cacheline_alone;

// Slots of stacks given back, whose old entries every running CPU has dropped.
static struct {
    struct spinlock lock;
    int n;
    uintptr_t base[KSTACK_CLEAN];
} clean __cacheline_aligned = {.lock = SPINLOCK_INIT("kstack clean")};

static int going; // [a] given back, pages not yet freed (tests)

// A stack being given back, written into its own first page (through the direct
// map: the stack's mapping is gone) for the grace period.
struct gone_stack {
    struct epoch_cb cb;
    uintptr_t base;
    void *pg[KSTACK_PAGES];
};

bool kstack_is_guard(uintptr_t va)
{
    if (va < KSTACK_BASE || va >= KSTACK_BASE + KSTACK_SLOTS * KSTACK_SLOT)
        return false;
    return (va - KSTACK_BASE) % KSTACK_SLOT < KSTACK_SLOT - KSTACK_SIZE;
}

// A clean slot's stack base, or 0.
static uintptr_t clean_slot(void)
{
    uintptr_t base = 0;
    spin_lock(&clean.lock);
    if (clean.n > 0)
        base = clean.base[--clean.n];
    spin_unlock(&clean.lock);
    return base;
}

static void *new_stack(void)
{
    uintptr_t base = clean_slot();
    if (base) {
        push_off();
        tlb_kernel_flush_now(); // we write the new stack (thread_alloc) before running it
        pop_off();
    } else {
        uint64_t slot = fetch_add_relaxed(&next_slot, 1);
        if (slot >= KSTACK_SLOTS)
            return NULL;
        base = KSTACK_BASE + slot * KSTACK_SLOT + (KSTACK_SLOT - KSTACK_SIZE);
    }
    for (size_t i = 0; i < KSTACK_PAGES; i++) {
        void *pg = page_alloc();
        if (!pg || kvm_map(base + i * PGSIZE, V2P(pg), PGSIZE, PTE_W | PTE_NX | PTE_G) < 0) {
            // The slot is lost (its address space only); give the pages back.
            if (pg)
                page_free(pg);
            while (i-- > 0)
                page_free(P2V(kvm_unmap_page(base + i * PGSIZE)));
            return NULL;
        }
    }
    return (void *)base;
}

void *kstack_alloc(void)
{
    push_off(); // stay on this CPU between finding its cache and locking it
    struct kstack_cache *c = this_cpu_ptr(&kstack_cache);
    spin_lock(&c->lock);
    struct free_stack *s = c->head;
    if (s) {
        c->head = s->next;
        c->n--;
    }
    spin_unlock(&c->lock);
    pop_off();
    if (s)
        return s;
    spin_lock(&overflow.lock);
    s = overflow.head;
    if (s) {
        overflow.head = s->next;
        overflow.n--;
    }
    spin_unlock(&overflow.lock);
    return s ? (void *)s : new_stack();
}

// A grace period after give_back (a tick, interrupts off): the pages go back,
// the slot is clean.
static void stack_gone(struct epoch_cb *cb)
{
    struct gone_stack *g = container_of(cb, struct gone_stack, cb);
    uintptr_t base = g->base;
    void *first = g->pg[0];
    for (size_t i = 1; i < KSTACK_PAGES; i++)
        page_free(g->pg[i]);
    page_free(first); // g with it
    fetch_add_relaxed(&going, -1);
    spin_lock(&clean.lock);
    if (clean.n < KSTACK_CLEAN)
        clean.base[clean.n++] = base;
    spin_unlock(&clean.lock);
}

static void give_back(void *stack)
{
    uintptr_t base = (uintptr_t)stack;
    void *pg[KSTACK_PAGES];
    for (size_t i = 0; i < KSTACK_PAGES; i++)
        pg[i] = P2V(kvm_unmap_page(base + i * PGSIZE));
    struct gone_stack *g = pg[0];
    g->base = base;
    for (size_t i = 0; i < KSTACK_PAGES; i++)
        g->pg[i] = pg[i];
    fetch_add_relaxed(&going, 1);
    tlb_flush_kernel_later();
    epoch_defer(&g->cb, stack_gone);
}

void kstack_free(void *stack)
{
    struct free_stack *s = stack;
    push_off();
    struct kstack_cache *c = this_cpu_ptr(&kstack_cache);
    spin_lock(&c->lock);
    bool cached = c->n < KSTACK_CACHE;
    if (cached) {
        s->next = c->head;
        c->head = s;
        c->n++;
    }
    spin_unlock(&c->lock);
    pop_off();
    if (cached)
        return;
    spin_lock(&overflow.lock);
    bool keep = overflow.n < KSTACK_KEEP;
    if (keep) {
        s->next = overflow.head;
        overflow.head = s;
        overflow.n++;
    }
    spin_unlock(&overflow.lock);
    if (!keep)
        give_back(stack);
}

// Give back every stack kept for reuse (drop_caches, and an allocation that
// found no page): each CPU's cache, under its lock, and the overflow list.
// The pages come back a grace period later.
void kstack_drop_cached(void)
{
    struct free_stack *all = NULL;
    for (int cpu = 0; cpu < NCPU_MAX; cpu++) {
        if (!READ_ONCE(percpu_offset[cpu]))
            continue;
        struct kstack_cache *c = per_cpu_ptr(&kstack_cache, cpu);
        spin_lock(&c->lock);
        while (c->head) {
            struct free_stack *s = c->head;
            c->head = s->next;
            s->next = all;
            all = s;
        }
        c->n = 0;
        spin_unlock(&c->lock);
    }
    spin_lock(&overflow.lock);
    while (overflow.head) {
        struct free_stack *s = overflow.head;
        overflow.head = s->next;
        s->next = all;
        all = s;
    }
    overflow.n = 0;
    spin_unlock(&overflow.lock);
    while (all) {
        struct free_stack *next = all->next;
        give_back(all);
        all = next;
    }
}

int kstack_kept(void)
{
    int n = READ_ONCE(overflow.n);
    for (int c = 0; c < ncpu; c++)
        if (READ_ONCE(percpu_offset[c]))
            n += READ_ONCE(per_cpu_ptr(&kstack_cache, c)->n);
    return n;
}

int kstack_going(void) { return load_relaxed(&going); }
