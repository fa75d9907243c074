// malloc: per-thread caches in front of a shared, per-size-class heap.
//
// Commutativity: malloc and free calls by different threads commute, and in the
// common case share no cache line: each thread allocates from and frees into its
// own cache (the bins in its thread control block), touching only its own
// memory and the blocks themselves. A bin that runs empty (or overflows) moves a
// batch of blocks from (to) the central pool of its size class; each class has
// its own lock on its own cache line, so threads busy in different classes do
// not meet there either. Blocks freed by a thread other than the allocator go
// to the freeing thread's cache (memory migrates; no remote writes).
//
// New blocks are carved from a chunk of the allocating thread's own, never from
// a chunk another thread carves from too: two threads' fresh blocks never share
// a page, so their first touches (page faults, in the kernel: the page's
// descriptor, its zeroing) do not meet either. Blocks that went through the
// central pools may of course come back to any thread.
//
// Blocks up to 64 KiB come in 43 size classes (16-byte steps to 128, then four
// per power of two). Each block starts with a 16-byte header naming its class;
// larger requests are their own anonymous mappings and are unmapped on free.
// Small-class memory is carved from 256 KiB chunks and never returned to the
// system, except the pages of a chunk no block was carved from (when the thread
// moves on to a new chunk, or exits).
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "libc.h"

#define NCLASS 43
#define MAX_SMALL 65536
#define CHUNK (256 * 1024)
#define HDR 16
#define CLASS_LARGE 0xfffe
#define CLASS_ALIGNED 0xfffd
#define MAGIC_LIVE 0xa110c8edU
#define MAGIC_FREE 0xf4eeb10cU

_Static_assert(NCLASS <= MALLOC_NCLASS, "tcache bins");

struct hdr {
    uint32_t cls;
    uint32_t magic;
    size_t size;  // CLASS_LARGE: mapping length; CLASS_ALIGNED: offset to the real block
};

struct central {
    struct lock lock;
    void *free;       // singly linked through each block's first word after the header
    size_t nfree;
} __attribute__((aligned(64)));

static struct central central[NCLASS];

static unsigned class_of(size_t total)
{
    if (total <= 128)
        return total <= 32 ? 0 : (unsigned)((total + 15) / 16 - 2);
    unsigned b = 63 - __builtin_clzl(total - 1);
    return 7 + (b - 7) * 4 + (unsigned)((total - 1 - (1UL << b)) >> (b - 2));
}

static size_t class_size(unsigned c)
{
    if (c < 7)
        return (c + 2) * 16;
    unsigned k = c - 7, b = 7 + k / 4;
    return (1UL << b) + (k % 4 + 1) * (1UL << (b - 2));
}

static unsigned bin_limit(unsigned c)
{
    size_t n = 64 * 1024 / class_size(c);
    return n < 8 ? 8 : n > 256 ? 256 : (unsigned)n;
}

static inline void *next_of(void *b) { return *(void **)((char *)b + HDR); }
static inline void set_next(void *b, void *n) { *(void **)((char *)b + HDR) = n; }

// The first page boundary at or after p.
static uintptr_t page_up(const char *p)
{
    return ((uintptr_t)p + __page_size - 1) & ~(uintptr_t)(__page_size - 1);
}

// Give back the pages of the thread's chunk that no block was carved from.
static void bump_trim(struct pthread *t)
{
    uintptr_t from = page_up(t->bump);
    if (t->bump && from < (uintptr_t)t->bump_end)
        munmap((void *)from, (uintptr_t)t->bump_end - from);
    t->bump = t->bump_end = NULL;
}

// A fresh chunk for t, the unused pages of its old one given back. 0 or -1.
static int bump_refill(struct pthread *t)
{
    void *m = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    bump_trim(t);
    t->bump = m;
    t->bump_end = (char *)m + CHUNK;
    return 0;
}

// pthread_create maps the new thread's first chunk (best effort), so that the
// thread's first allocations are page faults on its own pages, not a search of
// the address space for room.
void __malloc_thread_init(struct pthread *t) { bump_refill(t); }

// A new block of size sz from the calling thread's own chunk, or NULL.
static struct hdr *bump_carve(size_t sz)
{
    struct pthread *t = __self();
    if ((!t->bump || (size_t)(t->bump_end - t->bump) < sz) && bump_refill(t) < 0)
        return NULL;
    struct hdr *h = (struct hdr *)t->bump;
    t->bump += sz;
    return h;
}

// Move up to n blocks of class c onto list *head: freed ones from the central
// pool, then new ones from the thread's chunk.
static unsigned central_take(unsigned c, void **head, unsigned n)
{
    struct central *p = &central[c];
    unsigned got = 0;
    __lock(&p->lock);
    while (got < n && p->free) {
        void *b = p->free;
        p->free = next_of(b);
        p->nfree--;
        set_next(b, *head);
        *head = b;
        got++;
    }
    __unlock(&p->lock);
    size_t sz = class_size(c);
    for (; got < n; got++) {
        struct hdr *h = bump_carve(sz);
        if (!h)
            break;
        h->cls = c;
        set_next(h, *head);
        *head = h;
    }
    return got;
}

// Return the first n blocks of list *head to the central pool.
static void central_give(unsigned c, void **head, unsigned n)
{
    struct central *p = &central[c];
    if (n == 0)
        return;
    void *first = *head, *last = first;
    for (unsigned i = 1; i < n; i++)
        last = next_of(last);
    *head = next_of(last);
    __lock(&p->lock);
    set_next(last, p->free);
    p->free = first;
    p->nfree += n;
    __unlock(&p->lock);
}

static void *large_alloc(size_t total)
{
    size_t len = (total + __page_size - 1) & ~(__page_size - 1);
    if (len < total) {
        errno = ENOMEM;
        return NULL;
    }
    struct hdr *h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (h == MAP_FAILED) {
        errno = ENOMEM;
        return NULL;
    }
    h->cls = CLASS_LARGE;
    h->magic = MAGIC_LIVE;
    h->size = len;
    return (char *)h + HDR;
}

void *malloc(size_t n)
{
    if (n > PTRDIFF_MAX - 2 * HDR) {
        errno = ENOMEM;
        return NULL;
    }
    size_t total = n + HDR;
    if (total > MAX_SMALL)
        return large_alloc(total);
    unsigned c = class_of(total);
    struct tcache_bin *bin = &__self()->tcache[c];
    if (unlikely(!bin->head)) {
        if (!bin->limit)
            bin->limit = bin_limit(c);
        bin->count += central_take(c, &bin->head, bin->limit / 2);
        if (!bin->head) {
            errno = ENOMEM;
            return NULL;
        }
    }
    struct hdr *h = bin->head;
    bin->head = next_of(h);
    bin->count--;
    h->magic = MAGIC_LIVE;
    return (char *)h + HDR;
}

static struct hdr *header_of(void *p)
{
    struct hdr *h = (struct hdr *)((char *)p - HDR);
    if (h->magic != MAGIC_LIVE) {
        static const char msg[] = "malloc: free or realloc of a bad or freed pointer\n";
        write(2, msg, sizeof msg - 1);
        abort();
    }
    return h;
}

void free(void *p)
{
    if (!p)
        return;
    struct hdr *h = header_of(p);
    if (h->cls == CLASS_ALIGNED) {
        h->magic = MAGIC_FREE;
        free((char *)p - h->size);
        return;
    }
    h->magic = MAGIC_FREE;
    if (h->cls == CLASS_LARGE) {
        munmap(h, h->size);
        return;
    }
    struct tcache_bin *bin = &__self()->tcache[h->cls];
    if (unlikely(!bin->limit))
        bin->limit = bin_limit(h->cls);
    set_next(h, bin->head);
    bin->head = h;
    if (unlikely(++bin->count > bin->limit)) {
        central_give(h->cls, &bin->head, bin->limit / 2);
        bin->count -= bin->limit / 2;
    }
}

size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    struct hdr *h = header_of(p);
    if (h->cls == CLASS_ALIGNED)
        return malloc_usable_size((char *)p - h->size) - h->size;
    if (h->cls == CLASS_LARGE)
        return h->size - HDR;
    return class_size(h->cls) - HDR;
}

void *calloc(size_t nmemb, size_t size)
{
    size_t n;
    if (__builtin_mul_overflow(nmemb, size, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = malloc(n);
    // Fresh large mappings are already zero.
    if (p && ((struct hdr *)((char *)p - HDR))->cls != CLASS_LARGE)
        memset(p, 0, n);
    return p;
}

void *realloc(void *p, size_t n)
{
    if (!p)
        return malloc(n);
    size_t have = malloc_usable_size(p);
    struct hdr *h = header_of(p);
    // Keep the block if it fits and is not wastefully large.
    if (n <= have && (h->cls == CLASS_ALIGNED || n + HDR > MAX_SMALL ||
                      class_of(n + HDR) == h->cls))
        return p;
    void *q = malloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, have < n ? have : n);
    free(p);
    return q;
}

void *reallocarray(void *p, size_t nmemb, size_t size)
{
    size_t n;
    if (__builtin_mul_overflow(nmemb, size, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n);
}

void *aligned_alloc(size_t align, size_t n)
{
    if (align == 0 || (align & (align - 1))) {
        errno = EINVAL;
        return NULL;
    }
    if (align <= HDR)
        return malloc(n);
    if (n > PTRDIFF_MAX - align - 2 * HDR) {
        errno = ENOMEM;
        return NULL;
    }
    char *raw = malloc(n + align + HDR);
    if (!raw)
        return NULL;
    uintptr_t p = ((uintptr_t)raw + HDR + align - 1) & ~(uintptr_t)(align - 1);
    struct hdr *h = (struct hdr *)(p - HDR);
    h->cls = CLASS_ALIGNED;
    h->magic = MAGIC_LIVE;
    h->size = p - (uintptr_t)raw;
    return (void *)p;
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *))
        return EINVAL;
    int saved = errno;
    void *p = aligned_alloc(align, n);
    int err = errno;
    errno = saved;
    if (!p)
        return err;
    *out = p;
    return 0;
}

void *memalign(size_t align, size_t n) { return aligned_alloc(align, n); }
void *valloc(size_t n) { return aligned_alloc(__page_size, n); }

// A thread's cached blocks go back to the central pools when it exits, and the
// untouched rest of its chunk to the system.
void __malloc_thread_exit(struct pthread *t)
{
    for (unsigned c = 0; c < NCLASS; c++) {
        struct tcache_bin *bin = &t->tcache[c];
        if (bin->count)
            central_give(c, &bin->head, bin->count);
        bin->count = 0;
    }
    bump_trim(t);
}

// fork() copies only the calling thread: hold every central lock across it so
// the child does not inherit a lock some other thread held.
// After the fork, parent and child both skip to the next page of the chunk: the
// page the bump pointer is in is now shared copy-on-write, and carving from it
// would copy it (a child's first malloc, a page fault on a shared page).
void __malloc_atfork(int phase)
{
    for (unsigned c = 0; c < NCLASS; c++) {
        if (phase == 0)
            __lock(&central[c].lock);
        else if (phase == 1)
            __unlock(&central[c].lock);
        else
            central[c].lock.v = 0;
    }
    struct pthread *t = __self();
    if (phase != 0 && t->bump) {
        uintptr_t next = page_up(t->bump);
        t->bump = next < (uintptr_t)t->bump_end ? (char *)next : t->bump_end;
    }
}
