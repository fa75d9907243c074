// User address spaces: one PML4 per process whose upper half (entries 256..511) is
// the kernel's, a sorted list of anonymous regions, and zero pages filled in on the
// first touch.
//
// Scalability: operations on different address spaces commute and share nothing;
// each has its own lock, page tables and CPU mask, and the kernel half is shared
// read-only (its PML4 entries are all created at boot, so they never change
// afterwards). Within one address space everything is serialised by its lock:
// the threads of one process (and a vfork child) contend on it; RadixVM will
// replace this. fork copies eagerly (vmspace_copy); copy_page is where
// copy-on-write will share the page instead.
//
// TLB shootdowns go only to the CPUs in vs->cpus: a CPU sets its bit before it
// loads the page table and clears it after loading another one.
#include "mm.h"
#include "percpu.h"
#include "smp.h"
#include "uapi/errno.h"
#include "uvm.h"
#include "x86.h"

void uvm_init(void)
{
    // Later kernel mappings (stacks, MMIO) go into tables below these entries and
    // so appear in every address space, which copies them once at creation.
    for (int i = 256; i < 512; i++) {
        if (kernel_pml4[i] & PTE_P)
            continue;
        pte_t *t = page_alloc_zeroed();
        if (!t)
            panic("uvm: no memory for the kernel page tables");
        kernel_pml4[i] = V2P(t) | PTE_P | PTE_W;
    }
}

struct vmspace *vmspace_new(void)
{
    struct vmspace *vs = kzalloc(sizeof *vs);
    if (!vs)
        return NULL;
    vs->pml4 = page_alloc_zeroed();
    if (!vs->pml4) {
        kfree(vs);
        return NULL;
    }
    memcpy(vs->pml4 + 256, kernel_pml4 + 256, 256 * sizeof(pte_t));
    spin_init(&vs->lock, "vmspace");
    list_init(&vs->regions);
    vs->refs = 1;
    return vs;
}

void vmspace_hold(struct vmspace *vs) { __atomic_add_fetch(&vs->refs, 1, __ATOMIC_RELAXED); }

void vmspace_put(struct vmspace *vs)
{
    if (__atomic_sub_fetch(&vs->refs, 1, __ATOMIC_ACQ_REL) == 0)
        vmspace_free(vs);
}

// PTE for va, allocating tables if alloc; NULL if absent or out of memory.
static pte_t *walk(pte_t *pml4, uintptr_t va, bool alloc)
{
    pte_t *table = pml4;
    for (int l = 3; l > 0; l--) {
        pte_t *e = &table[PX(l, va)];
        if (!(*e & PTE_P)) {
            if (!alloc)
                return NULL;
            pte_t *next = page_alloc_zeroed();
            if (!next)
                return NULL;
            *e = V2P(next) | PTE_P | PTE_W | PTE_U;
        }
        table = P2V(PTE_ADDR(*e));
    }
    return &table[PX(0, va)];
}

static void free_table(pte_t *t, int level)
{
    for (int i = 0; i < 512; i++) {
        if (!(t[i] & PTE_P))
            continue;
        void *p = P2V(PTE_ADDR(t[i]));
        if (level > 0)
            free_table(p, level - 1);
        else
            page_free(p);
    }
    page_free(t);
}

void vmspace_free(struct vmspace *vs)
{
    for (int i = 0; i < 256; i++)
        if (vs->pml4[i] & PTE_P)
            free_table(P2V(PTE_ADDR(vs->pml4[i])), 2);
    page_free(vs->pml4);
    while (!list_empty(&vs->regions)) {
        struct vmregion *r = list_entry(vs->regions.next, struct vmregion, link);
        list_remove(&r->link);
        kfree(r);
    }
    kfree(vs);
}

void uvm_switch(struct vmspace *prev, struct vmspace *next)
{
    int me = cpu_id();
    if (next) {
        __atomic_fetch_or(&next->cpus.w[me / 64], 1UL << (me % 64), __ATOMIC_SEQ_CST);
        write_cr3(V2P(next->pml4));
    } else {
        write_cr3(V2P(kernel_pml4));
    }
    if (prev)
        __atomic_fetch_and(&prev->cpus.w[me / 64], ~(1UL << (me % 64)), __ATOMIC_SEQ_CST);
}

// ---- regions ------------------------------------------------------------------

static struct vmregion *find_region(struct vmspace *vs, uintptr_t va)
{
    list_for_each(it, &vs->regions) {
        struct vmregion *r = list_entry(it, struct vmregion, link);
        if (va < r->start)
            return NULL;
        if (va < r->end)
            return r;
    }
    return NULL;
}

bool uvm_mapped(struct vmspace *vs, uintptr_t va, int *prot)
{
    spin_lock(&vs->lock);
    struct vmregion *r = find_region(vs, va);
    if (r && prot)
        *prot = r->prot;
    spin_unlock(&vs->lock);
    return r != NULL;
}

static uint64_t pte_perm(int prot)
{
    uint64_t perm = PTE_P | PTE_U;
    if (prot & VM_WRITE)
        perm |= PTE_W;
    if (!(prot & VM_EXEC))
        perm |= PTE_NX;
    return perm;
}

// Pages unmapped under the lock are freed only after the shootdown: until then a
// CPU may still reach them through a stale translation. They are chained through
// their own first word.
struct freelist {
    void *head;
    uintptr_t lo, hi; // range to shoot down
};

static void defer_free(struct freelist *fl, void *page, uintptr_t va)
{
    *(void **)page = fl->head;
    fl->head = page;
    fl->lo = MIN(fl->lo, va);
    fl->hi = MAX(fl->hi, va + PGSIZE);
}

static void finish_free(struct vmspace *vs, struct freelist *fl)
{
    if (fl->hi > fl->lo) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST); // PTE changes before reading the mask
        cpumask_t m = vs->cpus;
        tlb_shootdown(&m, fl->lo, fl->hi - fl->lo);
    }
    while (fl->head) {
        void *p = fl->head;
        fl->head = *(void **)p;
        page_free(p);
    }
}

// Apply prot (or unmap when prot < 0) to the present pages of [start, end).
static void update_ptes(struct vmspace *vs, uintptr_t start, uintptr_t end, int prot,
                        struct freelist *fl)
{
    for (uintptr_t va = start; va < end; va += PGSIZE) {
        pte_t *e = walk(vs->pml4, va, false);
        if (!e || !(*e & PTE_P))
            continue;
        if (prot < 0) {
            defer_free(fl, P2V(PTE_ADDR(*e)), va);
            *e = 0;
            vs->pages--;
        } else {
            *e = PTE_ADDR(*e) | pte_perm(prot);
            fl->lo = MIN(fl->lo, va);
            fl->hi = MAX(fl->hi, va + PGSIZE);
        }
    }
}

// Make region boundaries fall at addr (split the region containing it).
static int split_at(struct vmspace *vs, uintptr_t addr)
{
    struct vmregion *r = find_region(vs, addr);
    if (!r || r->start == addr)
        return 0;
    struct vmregion *n = kmalloc(sizeof *n);
    if (!n)
        return -ENOMEM;
    n->start = addr;
    n->end = r->end;
    n->prot = r->prot;
    r->end = addr;
    list_insert_between(&n->link, &r->link, r->link.next);
    return 0;
}

// Change (prot >= 0) or remove (prot < 0) everything in [start, end). Locked.
static int change_range(struct vmspace *vs, uintptr_t start, uintptr_t end, int prot,
                        struct freelist *fl)
{
    int err = split_at(vs, start);
    if (!err)
        err = split_at(vs, end);
    if (err)
        return err;
    list_for_each_safe(it, tmp, &vs->regions) {
        struct vmregion *r = list_entry(it, struct vmregion, link);
        if (r->end <= start || r->start >= end)
            continue;
        update_ptes(vs, r->start, r->end, prot, fl);
        if (prot < 0) {
            list_remove(&r->link);
            kfree(r);
        } else {
            r->prot = prot;
        }
    }
    return 0;
}

static bool range_free(struct vmspace *vs, uintptr_t start, uintptr_t end)
{
    list_for_each(it, &vs->regions) {
        struct vmregion *r = list_entry(it, struct vmregion, link);
        if (r->start < end && start < r->end)
            return false;
    }
    return true;
}

// Highest free gap of len bytes ending at or below USER_MMAP_TOP.
static uintptr_t find_gap(struct vmspace *vs, size_t len)
{
    uintptr_t top = USER_MMAP_TOP;
    for (struct list *it = vs->regions.prev; it != &vs->regions; it = it->prev) {
        struct vmregion *r = list_entry(it, struct vmregion, link);
        if (r->start >= top)
            continue;
        if (r->end <= top && top - r->end >= len)
            return top - len;
        top = MIN(top, r->start);
    }
    return top >= USER_MIN + len ? top - len : 0;
}

static int insert_region(struct vmspace *vs, uintptr_t start, uintptr_t end, int prot)
{
    struct vmregion *n = kmalloc(sizeof *n);
    if (!n)
        return -ENOMEM;
    n->start = start;
    n->end = end;
    n->prot = prot;
    struct list *pos = &vs->regions;
    list_for_each(it, &vs->regions) {
        if (list_entry(it, struct vmregion, link)->start > start) {
            pos = it;
            break;
        }
    }
    list_insert_before(pos, &n->link);
    return 0;
}

static bool user_range_ok(uintptr_t addr, size_t len)
{
    return addr >= USER_MIN && len <= USER_TOP && addr <= USER_TOP - len;
}

long uvm_map(struct vmspace *vs, uintptr_t addr, size_t len, int prot, bool fixed)
{
    if (len == 0 || addr % PGSIZE)
        return -EINVAL;
    len = PGROUNDUP(len);
    if (len == 0)
        return -ENOMEM;
    struct freelist fl = {NULL, UINTPTR_MAX, 0};
    long ret;
    spin_lock(&vs->lock);
    if (fixed) {
        ret = user_range_ok(addr, len) ? change_range(vs, addr, addr + len, -1, &fl) : -EINVAL;
        if (ret == 0)
            ret = insert_region(vs, addr, addr + len, prot);
        if (ret == 0)
            ret = addr;
    } else {
        if (!(addr && user_range_ok(addr, len) && range_free(vs, addr, addr + len)))
            addr = find_gap(vs, len);
        ret = addr ? insert_region(vs, addr, addr + len, prot) : -ENOMEM;
        if (ret == 0)
            ret = addr;
    }
    spin_unlock(&vs->lock);
    finish_free(vs, &fl);
    return ret;
}

int uvm_unmap(struct vmspace *vs, uintptr_t addr, size_t len)
{
    if (addr % PGSIZE || len == 0)
        return -EINVAL;
    len = PGROUNDUP(len);
    if (addr >= USER_END || len > USER_END - addr)
        return -EINVAL;
    struct freelist fl = {NULL, UINTPTR_MAX, 0};
    spin_lock(&vs->lock);
    int err = change_range(vs, addr, addr + len, -1, &fl);
    spin_unlock(&vs->lock);
    finish_free(vs, &fl);
    return err;
}

int uvm_protect(struct vmspace *vs, uintptr_t addr, size_t len, int prot)
{
    if (addr % PGSIZE || (prot & ~(VM_READ | VM_WRITE | VM_EXEC)))
        return -EINVAL;
    len = PGROUNDUP(len);
    if (addr >= USER_END || len > USER_END - addr)
        return -EINVAL;
    if (len == 0)
        return 0;
    struct freelist fl = {NULL, UINTPTR_MAX, 0};
    spin_lock(&vs->lock);
    // Linux: -ENOMEM if part of the range is not mapped.
    int err = 0;
    for (uintptr_t va = addr; va < addr + len && !err;) {
        struct vmregion *r = find_region(vs, va);
        if (!r)
            err = -ENOMEM;
        else
            va = r->end;
    }
    if (!err)
        err = change_range(vs, addr, addr + len, prot, &fl);
    spin_unlock(&vs->lock);
    finish_free(vs, &fl);
    return err;
}

long uvm_brk(struct vmspace *vs, uintptr_t newbrk)
{
    spin_lock(&vs->lock);
    uintptr_t old = vs->brk;
    spin_unlock(&vs->lock);
    if (newbrk < vs->brk_start || newbrk >= USER_MMAP_TOP)
        return old;
    uintptr_t oldend = PGROUNDUP(old), newend = PGROUNDUP(newbrk);
    if (newend > oldend) {
        spin_lock(&vs->lock);
        bool ok = range_free(vs, oldend, newend);
        spin_unlock(&vs->lock);
        if (!ok || uvm_map(vs, oldend, newend - oldend, VM_READ | VM_WRITE, true) < 0)
            return old;
    } else if (newend < oldend) {
        uvm_unmap(vs, newend, oldend - newend);
    }
    spin_lock(&vs->lock);
    vs->brk = newbrk;
    spin_unlock(&vs->lock);
    return newbrk;
}

// ---- faults -------------------------------------------------------------------

#define PF_PRESENT 1
#define PF_WRITE 2
#define PF_INSTR 16

static bool access_ok(int prot, uint64_t err)
{
    if (err & PF_WRITE)
        return prot & VM_WRITE;
    if (err & PF_INSTR)
        return prot & VM_EXEC;
    return prot & (VM_READ | VM_WRITE | VM_EXEC);
}

// The page at va, present. Locked.
static pte_t *fault_in(struct vmspace *vs, struct vmregion *r, uintptr_t va)
{
    pte_t *e = walk(vs->pml4, va, true);
    if (!e)
        return NULL;
    if (!(*e & PTE_P)) {
        void *pg = page_alloc_zeroed();
        if (!pg)
            return NULL;
        *e = V2P(pg) | pte_perm(r->prot);
        vs->pages++;
    }
    return e;
}

int uvm_fault(struct vmspace *vs, uintptr_t va, uint64_t err)
{
    if (!vs || va >= USER_END)
        return -EFAULT;
    va = PGROUNDDOWN(va);
    spin_lock(&vs->lock);
    struct vmregion *r = find_region(vs, va);
    int ret = -EFAULT;
    if (r && access_ok(r->prot, err))
        ret = fault_in(vs, r, va) ? 0 : -ENOMEM;
    spin_unlock(&vs->lock);
    // A present page whose region allows the access was a stale translation after
    // mprotect on another CPU: retrying is enough. (No copy-on-write yet.)
    return ret;
}

static int rw(struct vmspace *vs, uintptr_t va, void *buf, size_t n, bool write)
{
    spin_lock(&vs->lock);
    int ret = 0;
    while (n > 0) {
        struct vmregion *r = find_region(vs, va);
        pte_t *e = r ? fault_in(vs, r, PGROUNDDOWN(va)) : NULL;
        if (!e) {
            ret = r ? -ENOMEM : -EFAULT;
            break;
        }
        size_t off = va % PGSIZE, chunk = MIN(n, PGSIZE - off);
        char *k = (char *)P2V(PTE_ADDR(*e)) + off;
        if (write)
            memcpy(k, buf, chunk);
        else
            memcpy(buf, k, chunk);
        buf = (char *)buf + chunk;
        va += chunk;
        n -= chunk;
    }
    spin_unlock(&vs->lock);
    return ret;
}

int uvm_write(struct vmspace *vs, uintptr_t va, const void *src, size_t n)
{
    return rw(vs, va, (void *)src, n, true);
}

int uvm_read(struct vmspace *vs, uintptr_t va, void *dst, size_t n) { return rw(vs, va, dst, n, false); }

// ---- fork ---------------------------------------------------------------------

// Give dst a private copy of the page src maps at va. Copy-on-write would map the
// same page read-only in both instead.
static int copy_page(struct vmspace *dst, pte_t spte, uintptr_t va)
{
    pte_t *e = walk(dst->pml4, va, true);
    void *pg = e ? page_alloc() : NULL;
    if (!pg)
        return -ENOMEM;
    memcpy(pg, P2V(PTE_ADDR(spte)), PGSIZE);
    *e = V2P(pg) | (spte & (PTE_P | PTE_W | PTE_U | PTE_NX));
    dst->pages++;
    return 0;
}

static int copy_region(struct vmspace *dst, struct vmspace *src, struct vmregion *r)
{
    if (insert_region(dst, r->start, r->end, r->prot) < 0)
        return -ENOMEM;
    for (uintptr_t va = r->start; va < r->end; va += PGSIZE) {
        pte_t *e = walk(src->pml4, va, false);
        if (e && (*e & PTE_P) && copy_page(dst, *e, va) < 0)
            return -ENOMEM;
    }
    return 0;
}

struct vmspace *vmspace_copy(struct vmspace *src)
{
    struct vmspace *dst = vmspace_new();
    if (!dst)
        return NULL;
    spin_lock(&src->lock);
    int err = 0;
    list_for_each(it, &src->regions) {
        err = copy_region(dst, src, list_entry(it, struct vmregion, link));
        if (err)
            break;
    }
    dst->brk_start = src->brk_start;
    dst->brk = src->brk;
    spin_unlock(&src->lock);
    if (err) {
        vmspace_free(dst);
        return NULL;
    }
    return dst;
}
