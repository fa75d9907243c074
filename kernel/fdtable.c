// File-descriptor tables: lock-free allocation, lookup and close.
//
// Commute, and share no written cache line:
//  - O_ANYFD allocations (open, pipe2, dup3 with O_ANYFD) on different CPUs:
//    each CPU allocates from its own partition, chunks 1 + c, 1 + c + ncpu, ...
//    A chunk is one page: a cache line of bitmap words, then its slots, so two
//    partitions share no line. Besides its partition an O_ANYFD allocation only
//    reads the table header and the chunk directory, which change only when the
//    table grows (rarely; see below).
//  - lookups (read, write, fstat, ...) of any fds with each other: the reader
//    loads the directory, the chunk pointer and the slot, inside an epoch
//    section, and takes a reference on the file only if another thread shares
//    the table. Nothing in the table is written.
//  - closes and lookups of different fds, and operations on fds in different
//    chunks: a close writes the fd's slot and bitmap word only.
// Lowest-fd allocation (POSIX, no O_ANYFD) does not commute with other
// allocations: it scans the bitmap from fd 0 (or minfd) and claims the first
// clear bit with compare-and-swap. Threads racing to allocate therefore get
// distinct fds, each the lowest free one at the moment of its claim.
//
// Slots hold a struct file pointer, with FD_CLOEXEC in bit 0. A bit is set
// before its slot is filled and cleared after it is emptied, so a set bit with an
// empty slot is an allocation or close in progress (a few instructions with
// preemption off): dup2 onto it waits for it to finish.
//
// Growth: chunks never move once made. The directory (chunk index -> chunk) is
// replaced by a bigger copy under the table's grow lock and the old one freed a
// grace period later, so lock-free readers never stop. New chunks are also
// installed under that lock, once per 504 fds.
#include "fdtable.h"
#include "epoch.h"
#include "file.h"
#include "mm.h"
#include "percpu.h"
#include "spinlock.h"
#include "uapi/errno.h"
#include "x86.h"

#define CHUNK_WORDS 8
#define CHUNK_FDS 504 // 8 bitmap words (the top 8 bits unused) + 504 slots = one page
#define NCHUNKS_MAX ((FD_MAX + CHUNK_FDS - 1) / CHUNK_FDS)
#define SLOT_CLOEXEC 1UL

struct fdchunk {
    uint64_t bits[CHUNK_WORDS]; // one cache line: bit i set = fd base+i in use
    uintptr_t slot[CHUNK_FDS];  // struct file * | SLOT_CLOEXEC
};
_Static_assert(sizeof(struct fdchunk) == PGSIZE, "a chunk is one page");

struct fddir {
    uint32_t n;
    struct epoch_cb free_cb;
    struct fdchunk *chunk[];
};

struct fdtable {
    struct fddir *dir;               // read by every operation; replaced on growth
    struct spinlock grow_lock __cacheline_aligned; // directory growth, chunk creation
    int users __cacheline_aligned;   // holders (processes, threads)
};

int fd_chunk_of(int fd) { return fd / CHUNK_FDS; }
int fdtable_partition_of_cpu(int c) { return 1 + c; }

static uintptr_t slot_load(uintptr_t *s) { return __atomic_load_n(s, __ATOMIC_ACQUIRE); }
static struct file *slot_file(uintptr_t v) { return (struct file *)(v & ~SLOT_CLOEXEC); }
static struct fddir *dir_load(struct fdtable *t) { return __atomic_load_n(&t->dir, __ATOMIC_ACQUIRE); }

static struct fddir *dir_alloc(uint32_t n)
{
    struct fddir *d = kzalloc(sizeof *d + n * sizeof d->chunk[0]);
    if (d)
        d->n = n;
    return d;
}

// Chunk idx, empty. Bits that stand for no fd (504..511, and in the last chunk
// those at FD_MAX and above) are marked used forever.
static struct fdchunk *chunk_alloc(int idx)
{
    struct fdchunk *c = page_alloc_zeroed();
    if (!c)
        return NULL;
    int valid = MIN(CHUNK_FDS, FD_MAX - idx * CHUNK_FDS);
    for (int b = valid; b < CHUNK_WORDS * 64; b++)
        c->bits[b / 64] |= 1ULL << (b % 64);
    return c;
}

struct fdtable *fdtable_new(void)
{
    struct fdtable *t = kzalloc(sizeof *t);
    if (!t)
        return NULL;
    // Room for chunk 0 and one partition per CPU from the start.
    if (!(t->dir = dir_alloc(MIN(1 + ncpu, NCHUNKS_MAX)))) {
        kfree(t);
        return NULL;
    }
    spin_init(&t->grow_lock, "fdtable grow");
    t->users = 1;
    return t;
}

static void dir_free_cb(struct epoch_cb *cb) { kfree(container_of(cb, struct fddir, free_cb)); }

// Chunk idx, made if missing and create is set; NULL if absent or out of memory.
static struct fdchunk *chunk_get(struct fdtable *t, int idx, bool create)
{
    struct fddir *d = dir_load(t);
    struct fdchunk *c = (uint32_t)idx < d->n ? __atomic_load_n(&d->chunk[idx], __ATOMIC_ACQUIRE) : NULL;
    if (c || !create || idx >= NCHUNKS_MAX)
        return c;
    spin_lock(&t->grow_lock);
    d = t->dir;
    if ((uint32_t)idx >= d->n) {
        struct fddir *nd = dir_alloc(MIN(MAX(2 * d->n, (uint32_t)idx + 1), NCHUNKS_MAX));
        if (!nd)
            goto out;
        memcpy(nd->chunk, d->chunk, d->n * sizeof d->chunk[0]);
        __atomic_store_n(&t->dir, nd, __ATOMIC_RELEASE);
        epoch_defer(&d->free_cb, dir_free_cb); // readers may still hold the old one
        d = nd;
    }
    if (!(c = d->chunk[idx]) && (c = chunk_alloc(idx)))
        __atomic_store_n(&d->chunk[idx], c, __ATOMIC_RELEASE);
out:
    spin_unlock(&t->grow_lock);
    return c;
}

// Claim the lowest clear bit at or after bit `from`; -1 if all are set.
static int claim_bit(struct fdchunk *c, int from)
{
    for (int w = from / 64; w < CHUNK_WORDS; w++) {
        uint64_t mask = w == from / 64 ? ~0ULL << (from % 64) : ~0ULL;
        uint64_t v = __atomic_load_n(&c->bits[w], __ATOMIC_RELAXED);
        while (~v & mask) {
            int b = __builtin_ctzll(~v & mask);
            if (__atomic_compare_exchange_n(&c->bits[w], &v, v | 1ULL << b, false,
                                            __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
                return w * 64 + b;
        }
    }
    return -1;
}

static void set_slot(struct fdchunk *c, int i, struct file *f, bool cloexec)
{
    __atomic_store_n(&c->slot[i], (uintptr_t)f | (cloexec ? SLOT_CLOEXEC : 0), __ATOMIC_RELEASE);
}

int fd_install(struct fdtable *t, struct file *f, bool cloexec, bool anyfd, int minfd)
{
    if (minfd < 0 || minfd >= FD_MAX)
        return -EINVAL;
    int idx = anyfd ? fdtable_partition_of_cpu(cpu_id()) : minfd / CHUNK_FDS;
    int from = anyfd ? 0 : minfd % CHUNK_FDS;
    int stride = anyfd ? ncpu : 1;
    for (; idx < NCHUNKS_MAX; idx += stride, from = 0) {
        struct fdchunk *c = chunk_get(t, idx, true);
        if (!c)
            return -ENOMEM;
        preempt_disable(); // keep the claimed-but-empty window short (see top)
        int b = claim_bit(c, from);
        if (b >= 0)
            set_slot(c, b, f, cloexec);
        preempt_enable();
        if (b >= 0)
            return idx * CHUNK_FDS + b;
    }
    return -EMFILE;
}

int fd_install_at(struct fdtable *t, int fd, struct file *f, bool cloexec)
{
    if (fd < 0 || fd >= FD_MAX)
        return -EBADF;
    struct fdchunk *c = chunk_get(t, fd / CHUNK_FDS, true);
    if (!c)
        return -ENOMEM;
    int i = fd % CHUNK_FDS;
    uint64_t bit = 1ULL << (i % 64), *w = &c->bits[i / 64];
    uintptr_t nv = (uintptr_t)f | (cloexec ? SLOT_CLOEXEC : 0);
    for (;;) {
        preempt_disable();
        uint64_t v = __atomic_fetch_or(w, bit, __ATOMIC_ACQ_REL);
        if (!(v & bit)) { // it was free: ours now
            set_slot(c, i, f, cloexec);
            preempt_enable();
            return fd;
        }
        preempt_enable();
        uintptr_t old = slot_load(&c->slot[i]);
        if (old && __atomic_compare_exchange_n(&c->slot[i], &old, nv, false, __ATOMIC_ACQ_REL,
                                               __ATOMIC_RELAXED)) {
            file_put(slot_file(old)); // dup2 closes the fd it replaces
            return fd;
        }
        pause(); // an allocation or close of fd in progress: let it finish
    }
}

struct fd_ref fd_get(struct fdtable *t, int fd)
{
    struct fd_ref r = {NULL, false};
    if (fd < 0 || fd >= FD_MAX)
        return r;
    bool shared = READ_ONCE(t->users) > 1;
    epoch_enter(); // the directory and the file stay allocated while we look
    struct fdchunk *c = chunk_get(t, fd / CHUNK_FDS, false);
    struct file *f = c ? slot_file(slot_load(&c->slot[fd % CHUNK_FDS])) : NULL;
    if (f && shared && !file_get_unless_zero(f))
        f = NULL; // closed under us, and already being released
    epoch_exit();
    r.f = f;
    r.counted = f && shared;
    return r;
}

void fd_put(struct fd_ref r)
{
    if (r.counted)
        file_put(r.f);
}

// Empty fd's slot and free its number; the file it held, or NULL.
static struct file *take_fd(struct fdchunk *c, int i)
{
    preempt_disable();
    uintptr_t old = __atomic_exchange_n(&c->slot[i], 0, __ATOMIC_ACQ_REL);
    if (old)
        __atomic_fetch_and(&c->bits[i / 64], ~(1ULL << (i % 64)), __ATOMIC_RELEASE);
    preempt_enable();
    return slot_file(old);
}

int fd_close(struct fdtable *t, int fd)
{
    if (fd < 0 || fd >= FD_MAX)
        return -EBADF;
    struct fdchunk *c = chunk_get(t, fd / CHUNK_FDS, false);
    struct file *f = c ? take_fd(c, fd % CHUNK_FDS) : NULL;
    if (!f)
        return -EBADF;
    file_put(f);
    return 0;
}

static uintptr_t *slot_of(struct fdtable *t, int fd)
{
    if (fd < 0 || fd >= FD_MAX)
        return NULL;
    struct fdchunk *c = chunk_get(t, fd / CHUNK_FDS, false);
    return c ? &c->slot[fd % CHUNK_FDS] : NULL;
}

int fd_get_cloexec(struct fdtable *t, int fd)
{
    uintptr_t *s = slot_of(t, fd);
    uintptr_t v = s ? slot_load(s) : 0;
    return v ? (int)(v & SLOT_CLOEXEC) : -EBADF;
}

int fd_set_cloexec(struct fdtable *t, int fd, bool on)
{
    uintptr_t *s = slot_of(t, fd);
    uintptr_t v = s ? slot_load(s) : 0;
    do {
        if (!v)
            return -EBADF;
    } while (!__atomic_compare_exchange_n(s, &v, (v & ~SLOT_CLOEXEC) | (on ? SLOT_CLOEXEC : 0),
                                          false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
    return 0;
}

void fd_close_range(struct fdtable *t, unsigned lo, unsigned hi, bool cloexec)
{
    struct fddir *d = dir_load(t);
    uint64_t end = MIN((uint64_t)hi + 1, (uint64_t)d->n * CHUNK_FDS);
    for (uint64_t fd = lo; fd < end; fd++) {
        struct fdchunk *c = chunk_get(t, fd / CHUNK_FDS, false);
        if (!c) {
            fd = (fd / CHUNK_FDS + 1) * CHUNK_FDS - 1; // a missing chunk has no fds
            continue;
        }
        if (cloexec) {
            fd_set_cloexec(t, (int)fd, true);
        } else {
            struct file *f = take_fd(c, fd % CHUNK_FDS);
            if (f)
                file_put(f);
        }
    }
}

void fdtable_hold(struct fdtable *t) { __atomic_add_fetch(&t->users, 1, __ATOMIC_ACQ_REL); }

void fdtable_release(struct fdtable *t)
{
    if (__atomic_sub_fetch(&t->users, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    // Nobody else holds the table, so nobody looks into it any more.
    struct fddir *d = t->dir;
    for (uint32_t i = 0; i < d->n; i++) {
        struct fdchunk *c = d->chunk[i];
        if (!c)
            continue;
        for (int j = 0; j < CHUNK_FDS; j++)
            if (c->slot[j])
                file_put(slot_file(c->slot[j]));
        page_free(c);
    }
    kfree(d);
    kfree(t);
}

struct fdtable *fdtable_copy(struct fdtable *src)
{
    struct fdtable *t = fdtable_new();
    if (!t)
        return NULL;
    epoch_enter(); // other threads may close fds meanwhile: their files stay valid
    struct fddir *d = dir_load(src);
    uint32_t n = d->n;
    epoch_exit();
    for (uint32_t i = 0; i < n; i++) {
        struct fdchunk *sc = chunk_get(src, i, false), *c = NULL;
        if (!sc)
            continue;
        for (int j = 0; j < CHUNK_FDS; j++) {
            epoch_enter();
            uintptr_t v = slot_load(&sc->slot[j]);
            struct file *f = slot_file(v);
            bool got = f && file_get_unless_zero(f);
            epoch_exit();
            if (!got)
                continue;
            if (!c && !(c = chunk_get(t, (int)i, true))) {
                file_put(f);
                fdtable_release(t);
                return NULL;
            }
            c->bits[j / 64] |= 1ULL << (j % 64);
            c->slot[j] = v;
        }
    }
    return t;
}

void fdtable_close_on_exec(struct fdtable *t)
{
    struct fddir *d = dir_load(t);
    for (uint32_t i = 0; i < d->n; i++) {
        struct fdchunk *c = chunk_get(t, i, false);
        for (int j = 0; c && j < CHUNK_FDS; j++) {
            if (!(slot_load(&c->slot[j]) & SLOT_CLOEXEC))
                continue;
            struct file *f = take_fd(c, j);
            if (f)
                file_put(f);
        }
    }
}

void fdtable_debug_addrs(struct fdtable *t, int fd, void **bitword, void **slot)
{
    struct fdchunk *c = chunk_get(t, fd / CHUNK_FDS, false);
    int i = fd % CHUNK_FDS;
    *bitword = c ? &c->bits[i / 64] : NULL;
    *slot = c ? &c->slot[i] : NULL;
}
