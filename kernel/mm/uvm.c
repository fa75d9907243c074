// User address spaces, after RadixVM (Clements et al., EuroSys 2013): making,
// holding and freeing one, and what the rest of the kernel asks of it. The
// design is told at the top of uvm_internal.h, with a map of the other pieces:
// the descriptor tree (uvm_tree.c), per-CPU page tables and the switch
// (uvm_pgtable.c), page references (uvm_pageref.c), file mappings and truncate
// (uvm_file.c), mmap and its siblings (uvm_map.c), faults (uvm_fault.c), fork
// and kernel access (uvm_fork.c); uvm.h is the interface.
//
// Commute: everything here on different address spaces. On one space, the
// queries only read (a descriptor, or every CPU's count), and holding or
// dropping it writes only its reference count.
#include "mm/uvm_internal.h"

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
    vs->root = page_alloc_zeroed();
    if (!vs->root) {
        kfree(vs);
        return NULL;
    }
    spin_init(&vs->brk_lock, "brk");
    vs->refs = 1;
    return vs;
}

void vmspace_hold(struct vmspace *vs) { fetch_add_relaxed(&vs->refs, 1); }

bool vmspace_tryhold(struct vmspace *vs)
{
    int r = load_relaxed(&vs->refs);
    while (r > 0)
        if (__atomic_compare_exchange_n(&vs->refs, &r, r + 1, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return true;
    return false;
}

static void vmspace_free(struct vmspace *vs);

// A truncate that finds a space's record holds it while it works in it
// (fmap_collect): whoever lets go last frees it.
void vmspace_put(struct vmspace *vs)
{
    if (sub_fetch(&vs->refs, 1) == 0)
        vmspace_free(vs);
}

static void free_table(pte_t *t, int level)
{
    if (level > 0)
        for (int i = 0; i < 512; i++)
            if (t[i] & PTE_P)
                free_table(P2V(PTE_ADDR(t[i])), level - 1);
    page_free(t);
}

static void free_tree(void *node, int level, struct wrun *wr)
{
    if (level == 0) {
        struct vleaf *l = node;
        for (size_t i = 0; i < LEAF_PAGES; i++) {
            uint64_t w = l->vp[i].word;
            if (VP_PA(w) && !(w & VP_FILEPG))
                page_unref(P2V(VP_PA(w)), (w & (VP_COW | VP_SHARED)) || l->vp[i].ip);
            if (l->vp[i].ip) // after its page: the inode may hold the last reference
                wrun_drop(wr, l->vp[i].ip, w & VP_WRITER);
        }
    } else {
        struct vmnode *n = node;
        for (size_t i = 0; i < NODE_SLOTS; i++)
            if (n->slot[i] && n->slot[i] != SLOT_DEAD)
                free_tree(n->slot[i], level - 1, wr);
    }
    page_free(node);
}

static void vmspace_kfree(struct epoch_cb *cb) { kfree(container_of(cb, struct vmspace, free_cb)); }

static void vmspace_free(struct vmspace *vs)
{
    // The pages this CPU's COW breaks still hold may be ours alone after this:
    // settle them now, so that a parent writing after its child exits (on this
    // CPU) takes its pages back instead of copying them.
    cow_defer_settle();
    for_each_cpu(c, &vs->cores) { // no one else uses vs now
        struct vmcore *vc = vs->core[c];
        if (!vc)
            continue;
        for (int i = 0; i < 256; i++)
            if (vc->pml4[i] & PTE_P)
                free_table(P2V(PTE_ADDR(vc->pml4[i])), 2);
        page_free(vc->pml4);
        fmap_forget_all(vc, c);
        kfree(vc);
    }
    struct wrun wr = {NULL, 0};
    free_tree(vs->root, TREE_LEVELS, &wr);
    wrun_put(&wr);
    if (vs->image) { // the executable may be written again (ETXTBSY)
        fs_allow_write(vs->image);
        fs_iput(vs->image);
    }
    kfree(vs->exe);
    epoch_defer(&vs->free_cb, vmspace_kfree);
}

size_t uvm_resident(struct vmspace *vs)
{
    int64_t n = READ_ONCE(vs->truncated);
    cpumask_t cores;
    uvm_cores(vs, &cores);
    for_each_cpu(c, &cores) {
        struct vmcore *vc = load_acquire(&vs->core[c]);
        if (vc)
            n += READ_ONCE(vc->resident);
    }
    return n;
}

static bool region_extends(const struct uvm_region *a, const struct uvm_region *b)
{
    return a->end == b->start && a->prot == b->prot && a->shared == b->shared &&
           a->ino == b->ino && (!a->ino || a->offset + (a->end - a->start) == b->offset);
}

// The descriptors are read as they are, unlocked: a page being changed shows
// its old or its new state. The tree walk skips absent blocks.
void uvm_regions(struct vmspace *vs, void (*fn)(const struct uvm_region *r, void *arg), void *arg)
{
    struct uvm_region cur = {0};
    struct vpage *vp = NULL;
    uintptr_t va = 0;
    epoch_enter();
    for (; (vp = vpage_iter(vs, vp, &va, USER_END)); va += PGSIZE) {
        uint64_t w = load_acquire(&vp->word);
        if (!(w & VP_MAPPED) || (w & VP_DEAD))
            continue;
        struct inode *ip = READ_ONCE(vp->ip); // alive: freed a grace period after
        struct uvm_region r = {
            .start = va, .end = va + PGSIZE, .prot = VP_PROT(w), .shared = w & VP_SHARED,
            .image = ip && ip == vs->image, .ino = ip ? fs_ino(ip) : 0,
            .offset = ip ? READ_ONCE(vp->pgoff) * PGSIZE : 0,
        };
        if (cur.end && region_extends(&cur, &r)) {
            cur.end = r.end;
            continue;
        }
        if (cur.end)
            fn(&cur, arg);
        cur = r;
    }
    if (cur.end)
        fn(&cur, arg);
    epoch_exit();
}

bool uvm_mapped(struct vmspace *vs, uintptr_t va, int *prot)
{
    if (va >= USER_END)
        return false;
    epoch_enter();
    struct vpage *vp = vpage_find(vs, va, false, NULL);
    uint64_t w = vp ? load_acquire(&vp->word) : 0;
    epoch_exit();
    if ((w & VP_MAPPED) && prot)
        *prot = VP_PROT(w);
    return w & VP_MAPPED;
}

uintptr_t uvm_page_pa(struct vmspace *vs, uintptr_t va)
{
    epoch_enter();
    struct vpage *vp = va < USER_END ? vpage_find(vs, va, false, NULL) : NULL;
    uintptr_t pa = vp ? VP_PA(load_acquire(&vp->word)) : 0;
    epoch_exit();
    return pa;
}
