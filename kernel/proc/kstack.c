// Kernel stacks. Each stack lives in its own slot of a dedicated kernel virtual
// region (KSTACK_BASE): the top KSTACK_PAGES pages of a slot are mapped, the rest
// below stays unmapped, so running off the bottom of a stack faults (a double
// fault on the IST stack, which panics with a backtrace) instead of silently
// corrupting whatever lies below.
//
// Scalability: allocations and frees on different CPUs commute and share no cache
// line in the common case. Freed stacks stay mapped and go to a per-CPU cache; a
// CPU takes from its own cache first. Only when a cache overflows or runs dry does
// a CPU touch the shared overflow list (one lock), and only a brand-new slot takes
// one atomic add on the shared slot counter plus the kernel page-table lock.
// Stacks are never unmapped, so freeing needs no TLB shootdown.
#include "mm/mm.h"
#include "mm/uvm.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "sync/spinlock.h"
#include "uapi/errno.h"

#define KSTACK_BASE 0xffffd00000000000ULL
#define KSTACK_SLOT (2 * KSTACK_SIZE) // the lower half is the guard
#define KSTACK_SLOTS (1UL << 24)      // 512 GiB of address space: one PML4 entry
#define KSTACK_CACHE 8

struct free_stack {
    struct free_stack *next;
};

struct kstack_cache {
    struct free_stack *head;
    int n;
};
static DEFINE_PERCPU(struct kstack_cache, kstack_cache);

// The shared overflow list, on a line of its own: its lock is written by every
// CPU whose cache overflows or runs dry, and must not share a line with
// read-mostly globals (ncpu, say) that everyone reads.
struct kstack_overflow {
    struct spinlock lock;
    struct free_stack *head;
} __cacheline_aligned; // the type: padded to a whole line
static struct kstack_overflow overflow = {.lock = SPINLOCK_INIT("kstack")};
static uint64_t next_slot __cacheline_aligned;

bool kstack_is_guard(uintptr_t va)
{
    if (va < KSTACK_BASE || va >= KSTACK_BASE + KSTACK_SLOTS * KSTACK_SLOT)
        return false;
    return (va - KSTACK_BASE) % KSTACK_SLOT < KSTACK_SLOT - KSTACK_SIZE;
}

static void *new_stack(void)
{
    uint64_t slot = fetch_add_relaxed(&next_slot, 1);
    if (slot >= KSTACK_SLOTS)
        return NULL;
    uintptr_t base = KSTACK_BASE + slot * KSTACK_SLOT + (KSTACK_SLOT - KSTACK_SIZE);
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
    push_off();
    struct kstack_cache *c = this_cpu_ptr(&kstack_cache);
    struct free_stack *s = c->head;
    if (s) {
        c->head = s->next;
        c->n--;
    }
    pop_off();
    if (s)
        return s;
    spin_lock(&overflow.lock);
    s = overflow.head;
    if (s)
        overflow.head = s->next;
    spin_unlock(&overflow.lock);
    return s ? (void *)s : new_stack();
}

void kstack_free(void *stack)
{
    struct free_stack *s = stack;
    push_off();
    struct kstack_cache *c = this_cpu_ptr(&kstack_cache);
    if (c->n < KSTACK_CACHE) {
        s->next = c->head;
        c->head = s;
        c->n++;
        pop_off();
        return;
    }
    pop_off();
    spin_lock(&overflow.lock);
    s->next = overflow.head;
    overflow.head = s;
    spin_unlock(&overflow.lock);
}
