// File-descriptor tables: lock-free allocation, lookup and close.
//
// Commute, and share no written cache line:
//  - operations on different fds: every fd has a cache line of its own (its
//    slot), so installing, closing, dup2-ing or looking up fd A writes nothing
//    that an operation on fd B reads. There is no shared bitmap: a slot's own
//    word says whether the fd is free (0), so claiming an fd is one
//    compare-and-swap on its line.
//  - O_ANYFD allocations (open, pipe2, dup3 with O_ANYFD) on different CPUs:
//    each CPU allocates from its own partition, chunks 1 + c, 1 + c + ncpu, ...
//  - lookups (read, write, fstat, ...) of any fds with each other: the reader
//    loads the directory, the chunk pointer and the slot, inside an epoch
//    section, and borrows the file (a per-CPU count, file.c) only if another
//    thread shares the table. Nothing in the table or the file is written.
//  - fdtable_copy (fork, posix_spawn) with anything that leaves the copied
//    slots alone: the child's slots hold their files in per-CPU counts
//    (file.h), so copying them, the child's use of them and its exit write
//    nothing the parent's threads read. (The copy reads every slot: an open or
//    close in a sibling thread meanwhile shares that slot's line with it.)
// Lowest-fd allocation (POSIX, no O_ANYFD) reads the slots from minfd up and
// claims the first free one with compare-and-swap: it writes only the line of
// the fd it returns, so it commutes with closes and lookups of higher fds.
// Threads racing to allocate get distinct fds, each the lowest free one at the
// moment of its claim. The price is a cache line read per lower open fd
// (Linux reads a bit).
//
// RLIMIT_NOFILE: the caller passes the soft limit (read from its struct proc;
// nothing shared is written). Lowest-fd allocation claims only fds below it and
// returns EMFILE when every one of them in [minfd, limit) is taken, as Linux.
// O_ANYFD fds come from the partitions, which lie above the low fds and may lie
// above the limit by design: a CPU uses only the rounds of partitions (chunk
// 1 + c + r * ncpu for round r) that begin below the limit, so O_ANYFD fds stay
// below limit + 64 * ncpu and their number is bounded without a shared count.
// When the CPU's allowed partition chunks are full, O_ANYFD falls back to the
// lowest free fd below the limit (sharing lines as POSIX allocation does), and
// only then fails with EMFILE. A limit of 64 or less leaves no partition:
// O_ANYFD then gives lowest fds, so a process that lowered its limit to
// confine itself never gets an fd at or above it.
//
// Slots hold a struct file pointer, with FD_CLOEXEC in bit 0 and in bit 1
// whether the slot's reference is held (file.h) rather than owned.
//
// Growth: chunks (a page: 64 fds) never move once made. The directory (chunk
// index -> chunk, one cache line per entry, so that making one partition's
// chunk writes no line another fd's lookup reads) is replaced by a bigger copy
// under the table's grow lock and the old one freed a grace period later, so
// lock-free readers never stop. New chunks are also installed under that lock.
// The directory starts with room for chunk 0 and the first partitions of CPUs
// 0 .. DIR_FIRST_CPUS-1 (one page at most, zeroed), so that the first O_ANYFD
// open of those CPUs in a table writes only its own entry's line; a CPU above
// them grows the directory on its first O_ANYFD open in a table (a write of
// t->dir, which every lookup reads: once per table and CPU). A new table thus
// costs at most a page whatever the number of CPUs.
//
// Walks over a whole table (fork and posix_spawn's copy, exec's close-on-exec,
// close_range, exit) visit the chunks made, listed in the order made beside the
// directory, not every directory entry: their cost is the table's content,
// never the number of CPUs or the highest partition used.
//
// Memory: a page per 64 fds in use (64 bytes per fd), and a 64-byte directory
// entry and 2 bytes of list per chunk index up to the highest chunk made.
#include "file/fdtable.h"
#include "file/file.h"
#include "mm/mm.h"
#include "sync/atomic.h"
#include "sync/epoch.h"
#include "sync/percpu.h"
#include "sync/spinlock.h"
#include "uapi/errno.h"
#include "x86/x86.h"

#define CHUNK_FDS 64 // one page of one-line slots
#define DIR_FIRST_CPUS 60 // 1 + 60 entries and their list fit one page (dir_alloc)
#define NCHUNKS_MAX (FD_MAX / CHUNK_FDS)
#define SLOT_CLOEXEC ((uintptr_t)FDI_CLOEXEC)
#define SLOT_HELD ((uintptr_t)FDI_HELD)
#define SLOT_FLAGS (SLOT_CLOEXEC | SLOT_HELD)

// Who may write each field (docs/conventions.md): [i] immutable once published,
// [a] atomic (sync/atomic.h), no lock; [g] the table's grow_lock, [r] also read
// without it (acquire loads), [e] inside an epoch section (the directory).
struct fdslot {
    uintptr_t v; // [a] struct file * | SLOT_CLOEXEC | SLOT_HELD, or 0: free
} __cacheline_aligned;

struct fdchunk {
    struct fdslot slot[CHUNK_FDS];
};
_Static_assert(sizeof(struct fdchunk) == PGSIZE, "a chunk is one page");
_Static_assert(FD_MAX % CHUNK_FDS == 0, "whole chunks");

struct fddirent {
    struct fdchunk *chunk; // [g,r] set once
} __cacheline_aligned;

// The chunks made, in the order made. Written only when a chunk is made, and
// on lines of its own after the directory's entries: lookups never read it.
struct fdmade {
    uint32_t n;       // [g,r] how many of idx[] are set
    uint16_t idx[];   // [g] chunk indices; idx[k] is set before n covers it
};
_Static_assert(FD_MAX / CHUNK_FDS <= 65536, "chunk indices fit 16 bits");

struct fddir {
    uint32_t n;            // [i]
    struct fdmade *made;   // [i] just after ent[n]
    struct epoch_cb free_cb;
    struct fddirent ent[]; // from the second cache line on
};

_Static_assert(sizeof(struct fddir) + (1 + DIR_FIRST_CPUS) * (sizeof(struct fddirent) + 2) +
                       sizeof(struct fdmade) <= PGSIZE,
               "a new directory fits one page");

struct fdtable {
    struct fddir *dir;               // [g,e] read by every operation; replaced on growth
    struct spinlock grow_lock __cacheline_aligned; // directory growth, chunk creation
    int users __cacheline_aligned;   // [a] holders (processes, threads)
    struct epoch_cb free_cb;         // the last holder's: memory freed a grace period later
};

int fd_chunk_of(int fd) { return fd / CHUNK_FDS; }
int fdtable_partition_of_cpu(int c) { return 1 + c; }

static struct file *slot_file(uintptr_t v) { return (struct file *)(v & ~SLOT_FLAGS); }
static uintptr_t slot_value(struct file *f, unsigned how)
{
    return (uintptr_t)f | (how & SLOT_FLAGS);
}

// Drop the reference a slot's value v held.
static void slot_drop(uintptr_t v)
{
    if (v & SLOT_HELD)
        file_unhold(slot_file(v));
    else
        file_put(slot_file(v));
}

void fd_ref_drop(struct file *f, unsigned how) { slot_drop(slot_value(f, how)); }

// Slot s's value, with a held (hold) or borrowed reference to its file taken (0:
// the slot is free). The reference is taken inside an epoch section and then
// the slot is read again: if it still holds the file, a close that empties it
// later sees the new reference (file.c); if the file left meanwhile (closed or
// replaced), the reference is dropped and we look again.
static uintptr_t ref_slot(uintptr_t *s, bool hold)
{
    for (;;) {
        epoch_enter();
        uintptr_t v = load_acquire(s);
        struct file *f = slot_file(v);
        if (f)
            hold ? file_hold(f) : file_borrow(f);
        bool stayed = !f || slot_file(load_acquire(s)) == f;
        epoch_exit();
        if (stayed)
            return v;
        hold ? file_unhold(f) : file_unborrow(f);
    }
}

static struct fddir *dir_alloc(uint32_t n)
{
    struct fddir *d = kzalloc(sizeof *d + n * sizeof d->ent[0] + sizeof(struct fdmade) +
                              n * sizeof d->made->idx[0]);
    if (d) {
        d->n = n;
        d->made = (struct fdmade *)&d->ent[n];
    }
    return d;
}

struct fdtable *fdtable_new(void)
{
    struct fdtable *t = kzalloc(sizeof *t);
    if (!t)
        return NULL;
    // Chunk 0 and the first CPUs' partitions (see the top); grown on demand.
    if (!(t->dir = dir_alloc(1 + (uint32_t)MIN(READ_ONCE(ncpu), DIR_FIRST_CPUS)))) {
        kfree(t);
        return NULL;
    }
    spin_init(&t->grow_lock, "fdtable grow");
    t->users = 1;
    return t;
}

static void dir_free_cb(struct epoch_cb *cb) { kfree(container_of(cb, struct fddir, free_cb)); }

// Chunk idx as the directory says now (NULL: not made). The epoch section keeps
// the directory allocated while we look; the chunk itself never moves.
static struct fdchunk *chunk_find(struct fdtable *t, int idx)
{
    epoch_enter();
    struct fddir *d = load_acquire(&t->dir);
    struct fdchunk *c = (uint32_t)idx < d->n ? load_acquire(&d->ent[idx].chunk) : NULL;
    epoch_exit();
    return c;
}

// The k-th chunk made (in the order made), and its index in *idx; NULL when
// fewer than k + 1 chunks have been made.
static struct fdchunk *chunk_made(struct fdtable *t, uint32_t k, int *idx)
{
    struct fdchunk *c = NULL;
    epoch_enter();
    struct fddir *d = load_acquire(&t->dir);
    if (k < load_acquire(&d->made->n)) {
        *idx = d->made->idx[k];
        c = load_acquire(&d->ent[*idx].chunk);
    }
    epoch_exit();
    return c;
}

// A copy of d with room for chunk idx; the caller holds the grow lock.
static struct fddir *dir_grow(struct fddir *d, int idx)
{
    struct fddir *nd = dir_alloc(MIN(MAX(2 * d->n, (uint32_t)idx + 1), NCHUNKS_MAX));
    if (nd) {
        memcpy(nd->ent, d->ent, d->n * sizeof d->ent[0]);
        memcpy(nd->made->idx, d->made->idx, d->made->n * sizeof d->made->idx[0]);
        nd->made->n = d->made->n;
    }
    return nd;
}

// Chunk idx, made (empty) if missing and create is set; NULL if absent or out of
// memory.
static struct fdchunk *chunk_get(struct fdtable *t, int idx, bool create)
{
    struct fdchunk *c = chunk_find(t, idx);
    if (c || !create || idx < 0 || idx >= NCHUNKS_MAX)
        return c;
    spin_lock(&t->grow_lock);
    struct fddir *d = t->dir;
    if ((uint32_t)idx >= d->n) {
        struct fddir *nd = dir_grow(d, idx);
        if (!nd)
            goto out;
        store_release(&t->dir, nd);
        epoch_defer(&d->free_cb, dir_free_cb); // readers may still hold the old one
        d = nd;
    }
    if (!(c = d->ent[idx].chunk) && (c = page_alloc_zeroed())) {
        store_release(&d->ent[idx].chunk, c);
        d->made->idx[d->made->n] = (uint16_t)idx;
        store_release(&d->made->n, d->made->n + 1);
    }
out:
    spin_unlock(&t->grow_lock);
    return c;
}

// Put v into the lowest free slot in [from, to); its index, or -1 if none is
// free. Reads the slots below it, writes only its own.
static int claim_slot(struct fdchunk *c, int from, int to, uintptr_t v)
{
    for (int i = from; i < to; i++) {
        uintptr_t old = 0;
        if (!load_relaxed(&c->slot[i].v) && cas_fail_relaxed(&c->slot[i].v, &old, v))
            return i;
    }
    return -1;
}

// The lowest free fd in [minfd, limit), holding v; -EMFILE if there is none.
// Never looks at (or makes chunks for) fds at or above the limit.
static int claim_lowest(struct fdtable *t, uintptr_t v, int minfd, int limit)
{
    for (int idx = minfd / CHUNK_FDS, from = minfd % CHUNK_FDS; idx * CHUNK_FDS < limit;
         idx++, from = 0) {
        struct fdchunk *c = chunk_get(t, idx, true);
        if (!c)
            return -ENOMEM;
        int i = claim_slot(c, from, MIN(CHUNK_FDS, limit - idx * CHUNK_FDS), v);
        if (i >= 0)
            return idx * CHUNK_FDS + i;
    }
    return -EMFILE;
}

// LAB anyfd BEGIN
// O_ANYFD: a free fd in the calling CPU's partition, holding v; -EMFILE if the
// part of it the limit allows is full. Round r of the partitions is chunks
// 1 + r * ncpu ... ncpu + r * ncpu (one per CPU); only rounds that begin below
// the limit are used, so every fd returned is below limit + 64 * ncpu and the
// limit bounds the number of fds, computed from the limit alone: no count is
// shared between CPUs.
static int claim_in_partition(struct fdtable *t, uintptr_t v, int limit)
{
    int first = fdtable_partition_of_cpu(cpu_id());
    for (int r = 0; (1 + r * ncpu) * CHUNK_FDS < limit; r++) {
        int idx = first + r * ncpu;
        if (idx >= NCHUNKS_MAX)
            break;
        struct fdchunk *c = chunk_get(t, idx, true);
        if (!c)
            return -ENOMEM;
        int i = claim_slot(c, 0, CHUNK_FDS, v);
        if (i >= 0)
            return idx * CHUNK_FDS + i;
    }
    return -EMFILE;
}
// LAB anyfd END

// Files in a table that threads share may be borrowed (fd_get): say so now
// (file_lend), so that borrowers only read it. A table that becomes shared
// lends everything in it; its one user is the caller, so nothing changes
// meanwhile. With one user, nothing is lent here, and a file's last close
// then reads no per-CPU count (file.c).
static void lend_if_shared(struct fdtable *t, struct file *f)
{
    if (READ_ONCE(t->users) > 1)
        file_lend(f);
}

static void lend_all(struct fdtable *t)
{
    struct fdchunk *c;
    int idx;
    for (uint32_t k = 0; (c = chunk_made(t, k, &idx)); k++)
        for (int j = 0; j < CHUNK_FDS; j++)
            if (c->slot[j].v)
                file_lend(slot_file(c->slot[j].v));
}

int fd_install(struct fdtable *t, struct file *f, unsigned how, bool anyfd, int minfd, int limit)
{
    if (minfd < 0 || minfd >= FD_MAX)
        return -EINVAL;
    limit = MIN(limit, FD_MAX);
    lend_if_shared(t, f);
    uintptr_t v = slot_value(f, how);
    // LAB anyfd BEGIN
    if (anyfd) {
        int fd = claim_in_partition(t, v, limit);
        if (fd != -EMFILE)
            return fd;
        // The partition is full (or the limit leaves none): any free fd will do.
    }
    // LAB anyfd SKELETON
    // // TODO (labs/anyfd): an O_ANYFD fd from this CPU's own partition.
    // (void)anyfd;
    // LAB anyfd END
    return claim_lowest(t, v, minfd, limit);
}

static uintptr_t *slot_of(struct fdtable *t, int fd, bool create)
{
    if (fd < 0 || fd >= FD_MAX)
        return NULL;
    struct fdchunk *c = chunk_get(t, fd / CHUNK_FDS, create);
    return c ? &c->slot[fd % CHUNK_FDS].v : NULL;
}

int fd_install_at(struct fdtable *t, int fd, struct file *f, unsigned how)
{
    if (fd < 0 || fd >= FD_MAX)
        return -EBADF;
    uintptr_t *s = slot_of(t, fd, true);
    if (!s)
        return -ENOMEM;
    lend_if_shared(t, f);
    uintptr_t old = xchg(s, slot_value(f, how));
    if (old)
        slot_drop(old); // dup2 closes the fd it replaces
    return fd;
}

struct fd_ref fd_get(struct fdtable *t, int fd)
{
    struct fd_ref r = {NULL, false};
    uintptr_t *s = slot_of(t, fd, false);
    if (!s)
        return r;
    if (READ_ONCE(t->users) > 1) { // another thread may close fd meanwhile
        r.f = slot_file(ref_slot(s, false));
        r.borrowed = r.f != NULL;
    } else {
        r.f = slot_file(load_acquire(s));
    }
    return r;
}

struct file *fd_dup_ref(struct fdtable *t, int fd, bool owned, unsigned *how)
{
    uintptr_t *s = slot_of(t, fd, false);
    if (!s)
        return NULL;
    if (owned) {
        epoch_enter();
        struct file *f = slot_file(load_acquire(s));
        bool got = f && file_get_unless_zero(f); // refs > 0: f is alive
        epoch_exit();
        if (!f || got) {
            *how = 0;
            return f;
        }
    }
    *how = FDI_HELD;
    return slot_file(ref_slot(s, true));
}

void fd_put(struct fd_ref r)
{
    if (r.borrowed)
        file_unborrow(r.f);
}

// Empty a slot; the value it held (0: it was free).
static uintptr_t take_slot(uintptr_t *s)
{
    if (!s || !load_relaxed(s))
        return 0;
    return xchg(s, 0);
}

int fd_close(struct fdtable *t, int fd)
{
    uintptr_t v = take_slot(slot_of(t, fd, false));
    if (!v)
        return -EBADF;
    slot_drop(v);
    return 0;
}

int fd_get_cloexec(struct fdtable *t, int fd)
{
    uintptr_t *s = slot_of(t, fd, false);
    uintptr_t v = s ? load_acquire(s) : 0;
    return v ? (int)(v & SLOT_CLOEXEC) : -EBADF;
}

int fd_set_cloexec(struct fdtable *t, int fd, bool on)
{
    uintptr_t *s = slot_of(t, fd, false);
    uintptr_t v = s ? load_acquire(s) : 0;
    do {
        if (!v)
            return -EBADF;
        if ((v & SLOT_CLOEXEC) == (on ? SLOT_CLOEXEC : 0))
            return 0; // already so: write nothing
    } while (!cas(s, &v, (v & ~SLOT_CLOEXEC) | (on ? SLOT_CLOEXEC : 0)));
    return 0;
}

void fd_close_range(struct fdtable *t, unsigned lo, unsigned hi, bool cloexec)
{
    struct fdchunk *c;
    int idx;
    for (uint32_t k = 0; (c = chunk_made(t, k, &idx)); k++) {
        uint64_t base = (uint64_t)idx * CHUNK_FDS;
        uint64_t from = MAX(base, lo), to = MIN(base + CHUNK_FDS, (uint64_t)hi + 1);
        for (uint64_t fd = from; fd < to; fd++) {
            if (cloexec) {
                fd_set_cloexec(t, (int)fd, true);
            } else {
                uintptr_t v = take_slot(&c->slot[fd - base].v);
                if (v)
                    slot_drop(v);
            }
        }
    }
}

void fdtable_hold(struct fdtable *t)
{
    if (add_fetch(&t->users, 1) == 2)
        lend_all(t);
}

// The table's memory, a grace period after its last holder let go: /proc
// may still be reading it (fd_peek).
static void fdtable_free(struct epoch_cb *cb)
{
    struct fdtable *t = container_of(cb, struct fdtable, free_cb);
    struct fddir *d = t->dir;
    for (uint32_t k = 0; k < d->made->n; k++)
        page_free(d->ent[d->made->idx[k]].chunk);
    kfree(d);
    kfree(t);
}

void fdtable_release(struct fdtable *t)
{
    if (sub_fetch(&t->users, 1) != 0)
        return;
    // Nobody else holds the table, so nobody uses its files any more; a
    // reader peeking in (fd_peek) takes no reference from the slots.
    struct fddir *d = t->dir;
    for (uint32_t k = 0; k < d->made->n; k++) {
        struct fdchunk *c = d->ent[d->made->idx[k]].chunk;
        for (int j = 0; j < CHUNK_FDS; j++)
            if (c->slot[j].v)
                slot_drop(c->slot[j].v);
    }
    epoch_defer(&t->free_cb, fdtable_free);
}

int fdtable_fill(struct fdtable *t, struct fdtable *src, bool (*skip)(int fd, void *arg), void *arg)
{
    // Other threads may open and close fds in src meanwhile (ref_slot copes).
    struct fdchunk *sc;
    int i;
    for (uint32_t k = 0; (sc = chunk_made(src, k, &i)); k++) {
        struct fdchunk *c = NULL;
        for (int j = 0; j < CHUNK_FDS; j++) {
            if (skip && skip(i * CHUNK_FDS + j, arg))
                continue; // not even read: the caller has its own for this fd
            uintptr_t v = ref_slot(&sc->slot[j].v, true);
            struct file *f = slot_file(v);
            if (!f)
                continue;
            if (!c && !(c = chunk_get(t, i, true))) {
                file_unhold(f);
                return -ENOMEM;
            }
            c->slot[j].v = v | SLOT_HELD; // the new table's reference is held
        }
    }
    return 0;
}

struct fdtable *fdtable_copy(struct fdtable *src)
{
    struct fdtable *t = fdtable_new();
    if (t && fdtable_fill(t, src, NULL, NULL)) {
        fdtable_release(t);
        t = NULL;
    }
    return t;
}

int fdtable_unshare(struct fdtable **tp)
{
    struct fdtable *old = *tp;
    if (load_acquire(&old->users) == 1)
        return 0; // only our reference: nobody can add one but us
    struct fdtable *copy = fdtable_copy(old);
    if (!copy)
        return -ENOMEM;
    *tp = copy;
    fdtable_release(old);
    return 0;
}

void fdtable_close_on_exec(struct fdtable *t)
{
    struct fdchunk *c;
    int idx;
    for (uint32_t k = 0; (c = chunk_made(t, k, &idx)); k++) {
        for (int j = 0; j < CHUNK_FDS; j++) {
            if (!(load_acquire(&c->slot[j].v) & SLOT_CLOEXEC))
                continue;
            uintptr_t v = take_slot(&c->slot[j].v);
            if (v)
                slot_drop(v);
        }
    }
}

void *fdtable_debug_slot(struct fdtable *t, int fd) { return slot_of(t, fd, false); }
const void *fdtable_debug_dir(struct fdtable *t) { return load_acquire(&t->dir); }

// Reads the slots of the chunks made (in the order made, so the lowest open fd
// above `from` is the least among every chunk's first); writes nothing.
struct file *fd_peek(struct fdtable *t, int fd)
{
    uintptr_t *s = slot_of(t, fd, false);
    return s ? slot_file(load_acquire(s)) : NULL;
}

int fd_next_open(struct fdtable *t, int from)
{
    int best = -1, idx;
    struct fdchunk *c;
    for (uint32_t k = 0; (c = chunk_made(t, k, &idx)); k++) {
        for (int i = 0; i < CHUNK_FDS; i++) {
            int fd = idx * CHUNK_FDS + i;
            if (fd >= from && (best < 0 || fd < best) && load_acquire(&c->slot[i].v))
                best = fd;
        }
    }
    return best;
}
