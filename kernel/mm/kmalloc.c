// Kernel heap: kmalloc/kzalloc/kfree for objects of any size.
//
// Small objects (1..2048 bytes) come from eight power-of-two size classes, 16 to
// 2048 bytes. Each class has slabs (runs of 1-8 pages cut into equal objects);
// every slab belongs to the CPU that made it, which keeps its partially free
// slabs on a list of its own, and every CPU keeps a magazine of up to KMAG_MAX
// free objects per class in its per-CPU area in front of those lists. Larger
// requests get whole pages from page_alloc_contig.
//
// Scalability. kmalloc and kfree on different CPUs commute (each hands out or takes
// back an object nobody else holds), so in the common case they touch only the
// calling CPU's lines: its magazine (per-CPU area, lock included), the class's
// read-only constants, and the object's page owner word, which is only read here.
// kfree puts the object into the *freeing* CPU's magazine, wherever it was
// allocated, and does not look at the slab header. A magazine goes to the slabs
// only to refill (empty) or flush (full), KMAG_BATCH objects at a time, and a
// refill takes objects only from the CPU's own slabs: objects another CPU
// flushed into its own slabs never come back to this one, so neither do the
// lines it wrote. (An object flushed by a CPU other than its slab's owner goes
// back to the owner's slab, under the owner's lock: the one remote write, and
// only for objects that were passed between CPUs anyway.) The per-CPU slab lists
// and their lock sit on a cache line of their own in the per-CPU area.
// The owner words (page.c) are written only when a slab or large allocation is
// created or destroyed, each on a cache line of its own.
//
// Running out: before kmalloc returns NULL it flushes every CPU's magazines (so
// cached objects and the pages of empty slabs are used first) and then takes
// objects from any CPU's partially free slabs.
//
// Slab layout: a 128-byte header at the start of the slab's first page, objects
// after it from offset max(128, size), so each object is aligned to its class size.
// Every page of a slab has the owner word (slab address | class + 1); the first
// page of a large allocation has (npages << PGSHIFT | OWNER_LARGE). That is how
// kfree finds size and class without a header in front of each object.
//
// Guarantees:
//  - kmalloc(n), 1 <= n <= 2048: aligned to the class size, i.e. the smallest power
//    of two >= max(n, 16) (so at least 16 bytes, and 64 for n > 32).
//  - kmalloc(n), n > 2048: whole pages, page aligned (up to 4 MiB; larger is NULL).
//  - kmalloc(0) returns a unique 16-byte object that must be passed to kfree.
//  - Exhaustion returns NULL; before that, every CPU's magazines are flushed so
//    that cached objects and the pages of empty slabs are used first, and other
//    CPUs' partially free slabs are drawn on.
//  - kfree(NULL) does nothing; kfree of anything kmalloc did not return panics.
//    A double free is caught (panic) when the second copy reaches its slab.
//
// Poisoning (the boot word `kpoison`; on by default in `test=` boots, and
// `make test`, `make fuzz` and `make fsstress` turn it on for their programs):
// kfree fills a small object with KPOISON_BYTE, and kmalloc checks that nothing
// but its first word (the free-list link) changed before handing it out again.
// A write through a stale pointer then panics at the next allocation of that
// object, naming the offset and the bytes written, and a spinlock in freed
// memory reads as corrupt the moment somebody takes it (spinlock.c), instead of
// both silently corrupting whatever object took the memory's place. It costs a
// fill and a scan of the object per call, so it is off by default (benchmarks).
#include "mm/mm.h"
#include "sync/percpu.h"
#include "sync/spinlock.h"

#define KM_MIN_SHIFT 4              // 16 bytes
#define KM_NCLASS 8                 // 16, 32, ..., 2048
#define KM_MAX_SMALL (1UL << (KM_MIN_SHIFT + KM_NCLASS - 1))
#define KMAG_MAX 32                 // objects per magazine
#define KMAG_BATCH 16               // objects moved to or from the slabs at once
#define SLAB_HDR 128                // room reserved for struct slab
#define SLAB_MAGIC 0x534c4142u      // "SLAB"
#define OWNER_LARGE 0x800UL         // owner word tag of a large allocation
#define OWNER_CLASS(w) ((int)((w) & 0x7ff) - 1)
#define KM_MAX_LARGE (4UL << 20)    // page.c's largest contiguous run: more never fits

bool kmalloc_poison; // [i] the boot word `kpoison`

// `kpoison` or `kpoison=1` turns poisoning on, `kpoison=0` off; without either
// it is on in a boot that runs the in-kernel tests (`test=`).
void kmalloc_init(void)
{
    size_t len;
    const char *v = cmdline_get("kpoison", &len);
    if (v)
        kmalloc_poison = !(len == 1 && v[0] == '0');
    else
        kmalloc_poison = cmdline_get("test", NULL) != NULL;
    if (kmalloc_poison)
        kprintf("kmalloc: freed objects are poisoned (kpoison)\n");
}

struct slab {
    uint32_t magic;
    uint16_t nobj;           // objects in this slab
    uint16_t nfree;          // of which on the free list
    int16_t cls;
    int16_t owner;           // the CPU whose partial list it is on
    void *freelist;          // free objects, linked through their first word
    struct slab *next, *prev; // on the owner's partial list while 0 < nfree < nobj
    uint64_t freemap[4];     // bit i: object i is on the free list (double-free check)
};
_Static_assert(sizeof(struct slab) <= SLAB_HDR, "slab header too big");

// A CPU's slabs: the partially free ones of each class. Used by that CPU, and by
// others to give back objects of its slabs (mag_flush) or, when memory runs out,
// to take objects from them (mag_steal).
struct kslabs {
    struct spinlock lock;
    struct slab *partial[KM_NCLASS]; // slabs with some, but not all, objects free
    size_t nslabs;
    uint64_t locks;                  // times locked (test statistic)
} __cacheline_aligned;
static DEFINE_PERCPU(struct kslabs, kslabs) = {.lock = SPINLOCK_INIT("kmalloc slabs")};

// A CPU's magazines. Only that CPU uses them, except when another CPU flushes
// them to reclaim memory (kmalloc_drain_all); the lock is for that.
struct kmag {
    unsigned n;
    void *obj[KMAG_MAX];     // obj[n-1] is the most recently freed
};
struct kcpu {
    struct spinlock lock;
    struct kmag mag[KM_NCLASS];
};
DEFINE_PERCPU(struct kcpu, kcpu) = {.lock = SPINLOCK_INIT("kmalloc cpu")};

// ---- size classes ---------------------------------------------------------------

static int size_class(size_t size)
{
    if (size <= (1UL << KM_MIN_SHIFT))
        return 0;
    return 64 - __builtin_clzl(size - 1) - KM_MIN_SHIFT;
}

static size_t class_size(int c) { return 1UL << (KM_MIN_SHIFT + c); }
// Bigger classes get more pages so the header wastes at most 1/16 of a slab.
static size_t class_pages(int c) { return MAX(1UL, class_size(c) / 256); }
static size_t obj_start(int c) { return MAX((size_t)SLAB_HDR, class_size(c)); }
static size_t obj_index(struct slab *s, void *obj)
{
    return ((uintptr_t)obj - (uintptr_t)s - obj_start(s->cls)) / class_size(s->cls);
}

// ---- slabs; the owner's kslabs lock is held unless said otherwise -----------------

static void partial_add(struct kslabs *k, struct slab *s)
{
    struct slab **head = &k->partial[s->cls];
    s->prev = NULL;
    s->next = *head;
    if (s->next)
        s->next->prev = s;
    *head = s;
}

static void partial_remove(struct kslabs *k, struct slab *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        k->partial[s->cls] = s->next;
    if (s->next)
        s->next->prev = s->prev;
}

// A new slab of this CPU's with every object free. No lock needed: nobody else
// sees it yet.
static struct slab *slab_new(int c)
{
    size_t npages = class_pages(c), size = class_size(c);
    struct slab *s = page_alloc_contig(npages);
    if (!s)
        return NULL;
    memset(s, 0, sizeof *s);
    s->magic = SLAB_MAGIC;
    s->cls = c;
    s->owner = cpu_id();
    s->nobj = (npages * PGSIZE - obj_start(c)) / size;
    if (kmalloc_poison)
        memset((char *)s + obj_start(c), KPOISON_BYTE, s->nobj * size);
    for (int i = s->nobj - 1; i >= 0; i--) {
        void **obj = (void **)((char *)s + obj_start(c) + i * size);
        *obj = s->freelist;
        s->freelist = obj;
        s->freemap[i / 64] |= 1UL << (i % 64);
    }
    s->nfree = s->nobj;
    for (size_t i = 0; i < npages; i++)
        page_owner_set((char *)s + i * PGSIZE, (uintptr_t)s | (c + 1));
    return s;
}

// Give an empty slab's pages back. No lock needed: it is on no list any more.
static void slab_destroy(struct slab *s)
{
    size_t npages = class_pages(s->cls);
    s->magic = 0;
    for (size_t i = 0; i < npages; i++)
        page_owner_set((char *)s + i * PGSIZE, 0);
    page_free_contig(s, npages);
}

static void *slab_take(struct kslabs *k, struct slab *s)
{
    void **obj = s->freelist;
    size_t i = obj_index(s, obj);
    s->freelist = *obj;
    s->freemap[i / 64] &= ~(1UL << (i % 64));
    if (--s->nfree == 0)
        partial_remove(k, s);
    return obj;
}

// Put obj back on its slab; true if the slab is now empty (and off the list).
static bool slab_put(struct kslabs *k, struct slab *s, void *obj)
{
    size_t i = obj_index(s, obj);
    if (s->freemap[i / 64] & (1UL << (i % 64)))
        panic("kfree: double free of %p", obj);
    s->freemap[i / 64] |= 1UL << (i % 64);
    *(void **)obj = s->freelist;
    s->freelist = obj;
    unsigned was = s->nfree++;
    if (s->nfree == s->nobj) {
        if (was > 0)
            partial_remove(k, s);
        return true;
    }
    if (was == 0)
        partial_add(k, s);
    return false;
}

static struct kslabs *slabs_lock(int cpu)
{
    struct kslabs *k = per_cpu_ptr(&kslabs, cpu);
    spin_lock(&k->lock);
    k->locks++;
    return k;
}

// ---- magazines; the caller holds the magazine's kcpu lock ---------------------------

// Move up to KMAG_BATCH - m->n objects of class c from cpu's partial slabs into m.
static void mag_take(struct kmag *m, int c, int cpu)
{
    struct kslabs *k = slabs_lock(cpu);
    while (m->n < KMAG_BATCH && k->partial[c])
        m->obj[m->n++] = slab_take(k, k->partial[c]);
    spin_unlock(&k->lock);
}

// Fill an empty magazine with up to KMAG_BATCH objects from this CPU's own slabs,
// from a new slab if need be, and only when no page is left from other CPUs'.
static void mag_refill(struct kmag *m, int c)
{
    int me = cpu_id();
    mag_take(m, c, me);
    if (m->n > 0)
        return;
    struct slab *s = slab_new(c); // page allocation outside the slabs lock
    if (s) {
        struct kslabs *k = slabs_lock(me);
        k->nslabs++;
        partial_add(k, s);
        spin_unlock(&k->lock);
        mag_take(m, c, me);
        return;
    }
    for (int cpu = 0; cpu < NCPU_MAX && m->n == 0; cpu++)
        if (cpu != me && READ_ONCE(percpu_offset[cpu]))
            mag_take(m, c, cpu);
}

// Return the n coldest objects (the bottom of the magazine) to their slabs, each
// under its owner's lock (taken once per run of objects of one owner).
static void mag_flush(struct kmag *m, unsigned n)
{
    struct kslabs *k = NULL;
    struct slab *empty = NULL;
    n = MIN(n, m->n);
    for (unsigned i = 0; i < n; i++) {
        void *obj = m->obj[i];
        struct slab *s = (struct slab *)(page_owner_get(obj) & ~(PGSIZE - 1));
        if (s->magic != SLAB_MAGIC)
            panic("kfree: slab %p of %p is corrupt", s, obj);
        if (!k || k != per_cpu_ptr(&kslabs, s->owner)) {
            if (k)
                spin_unlock(&k->lock);
            k = slabs_lock(s->owner);
        }
        if (slab_put(k, s, obj)) {
            k->nslabs--;
            s->next = empty;
            empty = s;
        }
    }
    if (k)
        spin_unlock(&k->lock);
    memmove(m->obj, m->obj + n, (m->n - n) * sizeof m->obj[0]);
    m->n -= n;
    while (empty) { // free pages outside the slabs lock
        struct slab *s = empty;
        empty = s->next;
        slab_destroy(s);
    }
}

static void kcpu_flush(struct kcpu *kc)
{
    spin_lock(&kc->lock);
    for (int c = 0; c < KM_NCLASS; c++)
        mag_flush(&kc->mag[c], kc->mag[c].n);
    spin_unlock(&kc->lock);
}

// Flush this CPU's magazines to the slabs (and empty slabs to the page allocator).
void kmalloc_drain_cpu_cache(void) { kcpu_flush(this_cpu_ptr(&kcpu)); }

// The same for every CPU: kmalloc's last resort before failing, and a known state
// for tests. One CPU's lock at a time, so concurrent callers cannot deadlock.
void kmalloc_drain_all(void)
{
    for (int c = 0; c < NCPU_MAX; c++)
        if (READ_ONCE(percpu_offset[c]))
            kcpu_flush(per_cpu_ptr(&kcpu, c));
}

// Test statistic: how often any CPU's slab lists were locked. Not in mm.h on purpose.
uint64_t kmalloc_stat_class_locks(void)
{
    uint64_t n = 0;
    for (int c = 0; c < NCPU_MAX; c++)
        if (READ_ONCE(percpu_offset[c]))
            n += READ_ONCE(per_cpu_ptr(&kslabs, c)->locks);
    return n;
}

static void *mag_pop(int c)
{
    struct kcpu *kc = this_cpu_ptr(&kcpu);
    spin_lock(&kc->lock);
    struct kmag *m = &kc->mag[c];
    if (m->n == 0)
        mag_refill(m, c);
    void *obj = m->n ? m->obj[--m->n] : NULL;
    spin_unlock(&kc->lock);
    return obj;
}

static void mag_push(int c, void *obj)
{
    struct kcpu *kc = this_cpu_ptr(&kcpu);
    spin_lock(&kc->lock);
    struct kmag *m = &kc->mag[c];
    if (m->n == KMAG_MAX)
        mag_flush(m, KMAG_BATCH);
    m->obj[m->n++] = obj;
    spin_unlock(&kc->lock);
}

// ---- the interface ----------------------------------------------------------------

static void *kmalloc_large(size_t size)
{
    size_t npages = size / PGSIZE + (size % PGSIZE != 0);
    void *p = page_alloc_contig(npages); // NULL if npages is beyond the largest block
    if (p)
        page_owner_set(p, npages << PGSHIFT | OWNER_LARGE);
    return p;
}

// Panics unless the object of class c at p still holds the poison kfree put in
// (after its first word, which the slab's free list may have used).
static void check_poison(const void *p, int c)
{
    const uint64_t *w = p, fill = 0x0101010101010101UL * KPOISON_BYTE;
    for (size_t i = 1; i < class_size(c) / 8; i++)
        if (w[i] != fill)
            panic("kmalloc: %zu-byte object %p written after kfree: bytes %zu-%zu hold %#lx",
                  class_size(c), p, i * 8, i * 8 + 7, w[i]);
}

static void *kmalloc_once(size_t size)
{
    if (size > KM_MAX_SMALL)
        return kmalloc_large(size);
    int c = size_class(size);
    void *p = mag_pop(c);
    if (p && kmalloc_poison)
        check_poison(p, c);
    return p;
}

void *kmalloc(size_t size)
{
    void *p = kmalloc_once(size);
    if (!p && size <= KM_MAX_LARGE) {
        // Out of memory: objects cached on other CPUs, and the pages of the slabs
        // that emptying every magazine frees, are all that is left.
        kmalloc_drain_all();
        p = kmalloc_once(size);
    }
    return p;
}

void *kzalloc(size_t size)
{
    void *p = kmalloc(size);
    if (p)
        memset(p, 0, size);
    return p;
}

// Panics unless p is the start of an object of slab-class c at owner word w.
static void check_object(void *p, uintptr_t w, int c)
{
    uintptr_t off = (uintptr_t)p - (w & ~(PGSIZE - 1));
    size_t start = obj_start(c), size = class_size(c);
    if (off < start || (off - start) % size ||
        (off - start) / size >= (class_pages(c) * PGSIZE - start) / size)
        panic("kfree: %p is not the start of a %zu-byte object", p, size);
}

void kfree(void *p)
{
    if (!p)
        return;
    uintptr_t w = page_owner_get(p);
    if (w & OWNER_LARGE) {
        if ((uintptr_t)p % PGSIZE)
            panic("kfree: %p is inside a large allocation", p);
        page_owner_set(p, 0);
        page_free_contig(p, w >> PGSHIFT);
        return;
    }
    int c = OWNER_CLASS(w);
    if (w == 0 || c < 0 || c >= KM_NCLASS)
        panic("kfree: %p was not allocated by kmalloc", p);
    check_object(p, w, c);
    if (kmalloc_poison)
        memset(p, KPOISON_BYTE, class_size(c));
    mag_push(c, p);
}
