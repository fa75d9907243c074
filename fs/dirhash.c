// Directories as concurrent hash tables.
//
// Commute: lookups of any names; creates, unlinks, links and renames of
// different names (in one directory or in different ones); and all of those
// with lookups of other names. Each touches only the bucket its name hashes to:
// writers lock that bucket with a bit in the bucket word itself and change
// only that chain; readers take no lock and write nothing, they only load the
// bucket word and follow the chain. Each bucket word has a cache line of its own
// (the rest of the line is unused: 64 bytes per bucket), so two operations on
// different names share a line only if both names hash into the same bucket
// (probability 1 / buckets for two random names), plus the directory's line 0
// (table pointer, seed, state), which every operation reads and only a resize or
// an rmdir writes. With 8 buckets per line instead, two creates in a directory
// of 16 buckets shared their bucket line half of the time (the mtrace sharing
// test, tests/mtrace/scalefs.c, saw it on every run).
//
// Structure. A table has 2^order buckets; a name with 32-bit hash h is in bucket
// h >> (32 - order), so buckets cover consecutive hash ranges and the table is
// in hash order whatever its size. Chains are sorted by key = (hash, seq), seq
// telling apart names with equal hashes. Readdir positions are keys: they stay
// valid across resizes, inserts and removals.
//
// Bucket word: head pointer | LOCK | MIGRATED. Readers ignore LOCK.
//
// Resizing without stopping lookups. One thread at a time (DH_RESIZING) builds a
// table of 2^k times (k = 1 to 6) or half the size, publishes it as old->next
// and moves the buckets one at a time, each under its old bucket's lock.
// Because chains are sorted and buckets are hash ranges, moving is pointer
// surgery, no copying:
//  - grow: old bucket i becomes new buckets i*2^k .. i*2^k + 2^k - 1, the
//    stretches of its chain: set the new heads (all new buckets locked), mark
//    i MIGRATED, cut the chain between the stretches, then unlock the new
//    buckets (a writer must not link after a stretch's last entry before the
//    cut, which would drop its change).
//  - shrink: old buckets 2i and 2i+1 become new bucket i: append chain 2i+1 to
//    chain 2i, set the new head, mark both MIGRATED.
// A reader that misses in an old bucket reloads its word; if it is MIGRATED by
// now (the cut comes after the mark, so a reader cut short always sees it), it
// looks again in the next table. Writers lock the bucket, and if it turns out
// MIGRATED, unlock and go to the next table. When every bucket has moved, the
// directory points at the new table and the old one is freed a grace period
// later (epoch_defer): readers that still hold it follow its next pointer.
//
// When to resize, without a shared entry counter (which every create and unlink
// would write): an insert that makes its chain longer than GROW_CHAIN, or a
// remove that empties its bucket, leaves fewer than 2 names in its group of 8
// neighbouring buckets and is the SHRINK_EVERY-th of a run of removals on its
// CPU, hints;
// the hint is checked by counting the entries in SAMPLE buckets around it (reads
// only), and acted on only if the sample says the average load is above
// GROW_LOAD or below 1/SHRINK_DIV.
//
// Small directories are spread, not packed. At an average load of 2 a table of
// a few names has 2 buckets, and two operations on different names share a
// bucket line half of the time (the pairwise mtrace suite saw every link,
// rename, unlink and lookup pair of its scratch directory conflict so). So
// below SPREAD_ORDER (64 buckets) a table grows whenever an insert lands in a
// non-empty bucket, until that name has a bucket of its own: chains there stay
// one entry long, and a table grows with the square of its names, not linearly
// (a one-entry directory keeps its 2 buckets and 256 bytes). Such tables never
// shrink, and big ones shrink no further than SPREAD_ORDER: a remove must not
// resize a small directory under a concurrent operation on another name (a
// resize writes every bucket), and a directory that had a few names once will
// likely have them again.
//
// Directories that CPUs share are spread further. At an average load of 1 (64
// names in 64 buckets) about two names in three share their bucket with
// another, and in a directory where each of 64 CPUs renames, or creates and
// unlinks, names of its own, each such operation then moves another CPU's
// bucket line: 5 transfers per rename with 64 workers renaming in one
// directory (bench-cost). So each bucket's line also records which CPU last
// changed the chain, in which epoch, and for which name (a word beside the
// bucket word, on the line the change writes anyway). An insert that lands
// beside another name, in a bucket where another CPU changed another name in
// this epoch or the last, is a meeting; SPREAD_VOTES meetings in one
// directory on a CPU, with fewer than SPREAD_PATIENCE other inserts there
// between, hint "spread": from SPREAD_ORDER up to SHARED_ORDER, a table whose
// sampled load is above 1 / SHARED_LOAD_DIV grows in one resize to half that
// (64 CPUs' 128 names: from 64 buckets to 4096), and such a
// table shrinks only below 1 / SHARED_SHRINK_DIV, so that it does not flap
// between the two (a table that outgrows SHARED_ORDER for its load drops the
// mark). Memory goes
// only to directories where CPUs keep meeting: one filled by a single CPU (an
// unpacked archive, /bin), or by one CPU after another, or where one name
// moves between CPUs (removed here, made again there), keeps the ordinary
// load.
//
// rmdir (dirhash_kill) must decide "empty" atomically with respect to inserts:
// it holds DH_RESIZING (no table change), try-locks every bucket, checks them all
// empty, and sets DH_DEAD, which inserts check under their bucket lock.
#include "dirhash.h"
#include "fs.h"
#include "mm/mm.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "x86/x86.h"

#define B_LOCK 0x1UL
#define B_MIGRATED 0x2UL
#define B_FLAGS (B_LOCK | B_MIGRATED)
#define B_HEAD(w) ((struct dent *)((w) & ~B_FLAGS))

#define MIN_ORDER 1           // 2 buckets: an empty directory's table is 256 bytes
#define SPREAD_ORDER DH_SPREAD_ORDER // below: one name per bucket; never shrink below
#define MAX_ORDER 24
#define STRIDE (CACHELINE / sizeof(uintptr_t)) // words per bucket: one line each
#define CHUNK_ORDER 6         // big tables are pages of 64 buckets
#define CHUNK_BUCKETS (1U << CHUNK_ORDER)
#define INLINE_MAX_ORDER 5    // up to this order, buckets follow the header's line
#define GROUP 8               // neighbouring buckets a shrink hint looks at
#define GROW_CHAIN 4
#define GROW_LOAD 2
#define SHRINK_DIV DH_SHRINK_DIV
#define SHRINK_EVERY DH_SHRINK_EVERY // net removals on a CPU between looks at shrinking
#define SAMPLE 64
#define MAX_JUMP CHUNK_ORDER  // most doublings in one resize: a bucket becomes a page at most
#define SHARED_ORDER 12       // spread shared directories up to 4096 buckets (256 KiB)
#define SHARED_LOAD_DIV 16    // until at most one name per 16 buckets
#define SHARED_SHRINK_DIV 64  // and shrink them only below one per 64
#define SPREAD_VOTES 4        // meetings that hint "spread"
#define SPREAD_PATIENCE 16    // inserts without a meeting that start the count again

_Static_assert(sizeof(struct epoch_cb) + 24 <= CACHELINE, "the table header fits one line");
_Static_assert(CHUNK_BUCKETS * CACHELINE == PGSIZE, "a chunk is one page");
_Static_assert(INLINE_MAX_ORDER + 1 == CHUNK_ORDER, "every order is inline or chunked");

struct dtable {
    uint32_t order;
    bool chunked;
    bool shared;              // spread for CPUs that meet (its successors too)
    struct dtable *next;      // the table a resize is moving entries to
    struct epoch_cb cb;
    uintptr_t *chunk[];       // 1 << (order - CHUNK_ORDER) pages, or 1 inline array
};

static inline uint32_t nbuckets(const struct dtable *t) { return 1U << t->order; }
static inline uint32_t bindex(const struct dtable *t, uint32_t hash)
{
    return hash >> (32 - t->order);
}
static inline uintptr_t *bucket(const struct dtable *t, uint32_t i)
{
    return &t->chunk[i >> CHUNK_ORDER][(i & (CHUNK_BUCKETS - 1)) * STRIDE];
}
// The word after a bucket word: the last change of its chain, as the epoch it
// was made in (low 32 bits) << 32 | the CPU that made it + 1 << 16 | the low 16
// bits of the changed name's hash (0: none since the table was made). Written
// with the bucket locked.
#define LAST_CHANGE(w) ((w)[1])
// Last hash of bucket i's range.
static inline uint32_t bucket_hi(const struct dtable *t, uint32_t i)
{
    return (uint32_t)((((uint64_t)i + 1) << (32 - t->order)) - 1);
}

// Minus the removals this CPU made since its last insert (in any directory),
// capped at -SHRINK_EVERY, where it looks at shrinking and starts again
// (dirhash_remove_locked). Changed with a bucket locked, so on one CPU.
static DEFINE_PERCPU(int, dh_net);

// ---- bucket locks -----------------------------------------------------------
// A bit in the bucket word, so a lock costs no memory and no extra line.
// Preemption stays off while one is held.

static void block(uintptr_t *w)
{
    preempt_disable();
    for (;;) {
        uintptr_t v = load_relaxed(w);
        if (!(v & B_LOCK) && cas_acquire(w, &v, v | B_LOCK))
            return;
        pause();
    }
}

static bool btrylock(uintptr_t *w)
{
    uintptr_t v = load_relaxed(w);
    preempt_disable();
    if (!(v & B_LOCK) && cas_acquire(w, &v, v | B_LOCK))
        return true;
    preempt_enable();
    return false;
}

static void bunlock(uintptr_t *w)
{
    fetch_and_release(w, ~B_LOCK);
    preempt_enable();
}

// ---- tables -----------------------------------------------------------------

static void table_free(struct dtable *t)
{
    if (t->chunked)
        for (uint32_t i = 0; i < nbuckets(t) / CHUNK_BUCKETS; i++)
            if (t->chunk[i])
                page_free(t->chunk[i]);
    kfree(t);
}

static void table_free_cb(struct epoch_cb *cb) { table_free(container_of(cb, struct dtable, cb)); }

static struct dtable *table_alloc(uint32_t order)
{
    size_t n = 1UL << order;
    struct dtable *t;
    if (order <= INLINE_MAX_ORDER) {
        // kmalloc aligns to the class size (>= 256 here), so the buckets after
        // the header's line start on a line of their own.
        t = kzalloc(CACHELINE + n * CACHELINE);
        if (!t)
            return NULL;
        t->chunk[0] = (uintptr_t *)((char *)t + CACHELINE);
    } else {
        size_t nchunks = n / CHUNK_BUCKETS;
        t = kzalloc(sizeof *t + nchunks * sizeof(uintptr_t *));
        if (!t)
            return NULL;
        t->chunked = true;
        t->order = order; // table_free needs it
        for (size_t i = 0; i < nchunks; i++) {
            if (!(t->chunk[i] = page_alloc_zeroed())) {
                table_free(t);
                return NULL;
            }
        }
    }
    t->order = order;
    return t;
}

int dirhash_init(struct dirhash *dh, uint32_t seed)
{
    dh->seed = seed;
    dh->state = 0;
    dh->tab = table_alloc(MIN_ORDER);
    return dh->tab ? 0 : -ENOMEM;
}

void dirhash_destroy(struct dirhash *dh)
{
    // Only dead (hence empty) directories are destroyed, and a resize has
    // always finished by then (kill holds DH_RESIZING).
    if (dh->tab)
        table_free(dh->tab);
    dh->tab = NULL;
}

size_t dirhash_table_bytes(struct dirhash *dh)
{
    struct dtable *t = load_acquire(&dh->tab);
    if (!t->chunked)
        return CACHELINE + nbuckets(t) * CACHELINE;
    return sizeof *t + nbuckets(t) / CHUNK_BUCKETS * (sizeof(uintptr_t *) + PGSIZE);
}

uint32_t dirhash_order(struct dirhash *dh) { return load_acquire(&dh->tab)->order; }

// FNV-1a over the name, seeded per directory, then a 64-bit finaliser so the top
// bits (which pick the bucket) depend on every byte.
uint32_t dirhash_hash(const struct dirhash *dh, const char *name, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ ((uint64_t)dh->seed * 0x9e3779b97f4a7c15ULL);
    for (size_t i = 0; i < len; i++) {
        h ^= (uint8_t)name[i];
        h *= 0x100000001b3ULL;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return (uint32_t)(h >> 32);
}

// ---- readers ------------------------------------------------------------------

static bool name_eq(const struct dent *e, const char *name, size_t len, uint32_t hash)
{
    return e->hash == hash && e->namelen == len && memcmp(e->name, name, len) == 0;
}

struct dent *dirhash_lookup(struct dirhash *dh, const char *name, size_t len, uint32_t hash)
{
    struct dtable *t = load_acquire(&dh->tab);
    for (;;) {
        uintptr_t *b = bucket(t, bindex(t, hash));
        uintptr_t w = load_acquire(b);
        if (!(w & B_MIGRATED)) {
            for (struct dent *e = B_HEAD(w); e && e->hash <= hash; e = load_acquire(&e->next))
                if (name_eq(e, name, len, hash))
                    return e;
            // A miss counts only if no resize moved the bucket meanwhile.
            if (!(load_acquire(b) & B_MIGRATED))
                return NULL;
        }
        t = load_acquire(&t->next);
    }
}

struct dent *dirhash_next(struct dirhash *dh, uint64_t key)
{
    while (key < DENT_KEY_END) {
        uint32_t hash = (uint32_t)(key >> DENT_SEQ_BITS);
        struct dtable *t = load_acquire(&dh->tab);
        uint64_t range_end;
        for (;;) {
            uint32_t i = bindex(t, hash);
            uintptr_t *b = bucket(t, i);
            uintptr_t w = load_acquire(b);
            if (!(w & B_MIGRATED)) {
                uint32_t hi = bucket_hi(t, i);
                for (struct dent *e = B_HEAD(w); e && e->hash <= hi; e = load_acquire(&e->next))
                    if (dent_key(e) >= key)
                        return e; // the chain before e is intact: e is the next key
                if (!(load_acquire(b) & B_MIGRATED)) {
                    range_end = ((uint64_t)hi + 1) << DENT_SEQ_BITS;
                    break;
                }
            }
            t = load_acquire(&t->next);
        }
        key = range_end;
    }
    return NULL;
}

// ---- writers ------------------------------------------------------------------

// The bucket that holds `hash` now (not MIGRATED), unlocked.
static uintptr_t *find_bucket(struct dirhash *dh, uint32_t hash, struct dtable **tp)
{
    struct dtable *t = load_acquire(&dh->tab);
    for (;;) {
        uintptr_t *b = bucket(t, bindex(t, hash));
        if (!(load_acquire(b) & B_MIGRATED)) {
            *tp = t;
            return b;
        }
        t = load_acquire(&t->next);
    }
}

static void fill(struct dbucket *b, struct dirhash *dh, struct dtable *t, uintptr_t *w, uint32_t hash)
{
    b->word = w;
    b->dh = dh;
    b->index = bindex(t, hash);
    b->order = t->order;
    b->chainlen = 0;
    b->hint = 0;
}

void dirhash_lock(struct dirhash *dh, uint32_t hash, struct dbucket *b)
{
    for (;;) {
        struct dtable *t;
        uintptr_t *w = find_bucket(dh, hash, &t);
        block(w);
        if (!(load_acquire(w) & B_MIGRATED)) {
            fill(b, dh, t, w, hash);
            return;
        }
        bunlock(w); // moved while we waited: it is final now, look again
    }
}

bool dirhash_trylock(struct dirhash *dh, uint32_t hash, struct dbucket *b)
{
    for (;;) {
        struct dtable *t;
        uintptr_t *w = find_bucket(dh, hash, &t);
        if (!btrylock(w))
            return false;
        if (!(load_acquire(w) & B_MIGRATED)) {
            fill(b, dh, t, w, hash);
            return true;
        }
        bunlock(w); // moved meanwhile: it is final now, look again
    }
}

// Locks are taken in address order, which every holder of two bucket locks
// follows (resizes take adjacent buckets of one table in order too).
void dirhash_lock2(struct dirhash *dh1, uint32_t h1, struct dbucket *b1, struct dirhash *dh2,
                   uint32_t h2, struct dbucket *b2)
{
    for (;;) {
        struct dtable *t1, *t2;
        uintptr_t *w1 = find_bucket(dh1, h1, &t1), *w2 = find_bucket(dh2, h2, &t2);
        if (w1 == w2) {
            block(w1);
            if (!(load_acquire(w1) & B_MIGRATED)) {
                fill(b1, dh1, t1, w1, h1);
                fill(b2, dh2, t2, w2, h2);
                return;
            }
            bunlock(w1);
            continue;
        }
        block(w1 < w2 ? w1 : w2);
        block(w1 < w2 ? w2 : w1);
        if (!(load_acquire(w1) & B_MIGRATED) && !(load_acquire(w2) & B_MIGRATED)) {
            fill(b1, dh1, t1, w1, h1);
            fill(b2, dh2, t2, w2, h2);
            return;
        }
        bunlock(w1);
        bunlock(w2);
    }
}

void dirhash_unlock(struct dbucket *b) { bunlock(b->word); }

void dirhash_unlock2(struct dbucket *b1, struct dbucket *b2)
{
    bunlock(b1->word);
    if (b2->word != b1->word)
        bunlock(b2->word);
}

bool dirhash_bucket_busy(struct dirhash *dh, uint32_t hash, const struct dbucket *mine)
{
    struct dtable *t;
    uintptr_t *w = find_bucket(dh, hash, &t); // a locked bucket cannot be MIGRATED meanwhile
    return !(mine && w == mine->word) && (load_acquire(w) & B_LOCK);
}

struct dent *dirhash_find_locked(struct dbucket *b, const char *name, size_t len, uint32_t hash)
{
    for (struct dent *e = B_HEAD(*b->word); e && e->hash <= hash; e = e->next)
        if (name_eq(e, name, len, hash))
            return e;
    return NULL;
}

// Make `e` the successor of prev (the head if prev is NULL).
static void link_after(struct dbucket *b, struct dent *prev, struct dent *e)
{
    if (prev)
        store_release(&prev->next, e);
    else
        store_release(b->word, (uintptr_t)e | B_LOCK);
}

static uint32_t chain_length(struct dent *e)
{
    uint32_t n = 0;
    for (; e; e = e->next)
        n++;
    return n;
}

// A CPU's record of meetings (see the top): in which directory, how many, and
// how many inserts there since the last (SPREAD_PATIENCE inserts without one
// start the count again: only CPUs that keep meeting spread a table).
struct meetings {
    struct dirhash *dh;
    uint32_t n, since;
};
static DEFINE_PERCPU(struct meetings, meetings);

// Record this CPU's change of b's chain, for the name with this hash. True if
// it is a meeting: an insert beside another name (beside_another), in a bucket
// where another CPU changed another name in this epoch or the last (not the
// same name: a name removed on one CPU and made again on another is one name
// moving, not two CPUs' names sharing a bucket).
static bool note_change(struct dbucket *b, uint32_t hash, bool beside_another)
{
    _Static_assert(NCPU_MAX < 0xffff, "a CPU number + 1 fits 16 bits");
    uint32_t now = (uint32_t)epoch_current(), mine = (uint32_t)cpu_id() + 1;
    uintptr_t last = LAST_CHANGE(b->word);
    uintptr_t change = (uintptr_t)now << 32 | (uintptr_t)mine << 16 | (hash & 0xffff);
    if (last != change)
        LAST_CHANGE(b->word) = change;
    uint32_t last_cpu = (last >> 16) & 0xffff, last_epoch = (uint32_t)(last >> 32);
    return beside_another && last_cpu && last_cpu != mine && (last & 0xffff) != (hash & 0xffff) &&
           now - last_epoch <= 1;
}

// Count an insert into b's directory; true if it makes SPREAD_VOTES meetings
// there (then the count starts again).
static bool count_meeting(struct dbucket *b, bool met)
{
    struct meetings *m = this_cpu_ptr(&meetings); // the bucket lock keeps preemption off
    if (m->dh != b->dh) {
        m->dh = b->dh;
        m->n = m->since = 0;
    }
    if (!met) {
        if (++m->since > SPREAD_PATIENCE)
            m->n = m->since = 0;
        return false;
    }
    m->since = 0;
    if (++m->n < SPREAD_VOTES)
        return false;
    m->n = 0;
    return true;
}

int dirhash_insert_locked(struct dbucket *b, struct dent *e)
{
    if (READ_ONCE(b->dh->state) & DH_DEAD)
        return -ENOENT;
    struct dent *prev = NULL, *cur = B_HEAD(*b->word);
    uint32_t seq = 0;
    // After every entry with a smaller hash, and after the equal ones: seq is
    // one more than the largest seq among names with this hash.
    for (; cur && cur->hash <= e->hash; prev = cur, cur = cur->next)
        if (cur->hash == e->hash)
            seq = cur->seq + 1;
    if (seq >= (1U << DENT_SEQ_BITS))
        return -ENOSPC;
    e->seq = seq;
    e->next = cur;
    link_after(b, prev, e);
    b->chainlen = chain_length(B_HEAD(*b->word));
    bool spread = count_meeting(b, note_change(b, e->hash, b->chainlen > 1));
    if (b->chainlen > (b->order < SPREAD_ORDER ? 1 : GROW_CHAIN) && b->order < MAX_ORDER)
        b->hint = DH_HINT_GROW;
    else if (spread && b->order < SHARED_ORDER)
        b->hint = DH_HINT_SPREAD;
    int *net = this_cpu_ptr(&dh_net);
    if (*net < 0)
        (*net)++;
    return 0;
}

static struct dent *find_prev(struct dbucket *b, struct dent *e)
{
    struct dent *prev = NULL;
    for (struct dent *cur = B_HEAD(*b->word); cur != e; cur = cur->next) {
        assert(cur);
        prev = cur;
    }
    return prev;
}

// Is the load of b's group of GROUP neighbouring buckets below the shrink
// rule's 1 / SHRINK_DIV? (A group never crosses a chunk: GROUP divides
// CHUNK_BUCKETS.) Not "all empty": at the rule's load a group is empty only one
// time in seven, so the last looks of a big removal run mostly passed and left
// the emptied table 4 times too big.
static bool group_sparse(struct dbucket *b)
{
    uint32_t first = b->index & ~(GROUP - 1), names = 0;
    for (uint32_t i = 0; i < GROUP && first + i < (1U << b->order); i++) {
        uintptr_t *w = b->word + ((long)(first + i) - (long)b->index) * (long)STRIDE;
        for (struct dent *e = B_HEAD(load_acquire(w)); e; e = load_acquire(&e->next))
            if (++names * SHRINK_DIV >= GROUP)
                return false;
    }
    return true;
}

void dirhash_remove_locked(struct dbucket *b, struct dent *e)
{
    // e keeps its next pointer, so readers standing on it carry on.
    link_after(b, find_prev(b, e), e->next);
    b->chainlen = chain_length(B_HEAD(*b->word));
    note_change(b, e->hash, false);
    // A shrink is worth a look only where names are going: at every
    // SHRINK_EVERY-th removal of a run with no insert between. Renames and
    // create-unlink cycles never look (a look reads the neighbours' bucket
    // lines, which their owners write: 1.4 transfers per rename with 64 CPUs
    // renaming in one directory, bench-cost). Buckets of a group are in one
    // chunk, so word arithmetic stays in it.
    int *net = this_cpu_ptr(&dh_net);
    if (--*net > -SHRINK_EVERY)
        return;
    *net = 0;
    if (b->chainlen == 0 && b->order > SPREAD_ORDER && group_sparse(b))
        b->hint = DH_HINT_SHRINK;
}

void dirhash_replace_locked(struct dbucket *b, struct dent *old, struct dent *e)
{
    e->hash = old->hash;
    e->seq = old->seq;
    e->next = old->next;
    link_after(b, find_prev(b, old), e);
    note_change(b, e->hash, false);
}

// ---- rmdir ----------------------------------------------------------------------

int dirhash_kill(struct dirhash *dh)
{
    uint32_t s = 0;
    if (!cas_acquire(&dh->state, &s, DH_RESIZING))
        return (s & DH_DEAD) ? -ENOENT : -EAGAIN;
    struct dtable *t = dh->tab; // stable while we hold DH_RESIZING
    uint32_t n = nbuckets(t), locked = 0;
    int err = 0;
    // Try-locks only: callers hold other bucket locks, in no order relative to ours.
    while (locked < n && btrylock(bucket(t, locked)))
        locked++;
    if (locked < n)
        err = -EAGAIN;
    for (uint32_t i = 0; !err && i < n; i++)
        if (B_HEAD(*bucket(t, i)))
            err = -ENOTEMPTY;
    if (!err)
        store_release(&dh->state, DH_RESIZING | DH_DEAD); // for good
    while (locked > 0)
        bunlock(bucket(t, --locked));
    if (err)
        fetch_and_release(&dh->state, ~DH_RESIZING);
    return err;
}

// ---- resizing ---------------------------------------------------------------------

// Entries in the SAMPLE buckets (or all, if fewer) around hash; *order, *shared
// and *nsampled say of which table and how many buckets.
static uint32_t sample(struct dirhash *dh, uint32_t hash, uint32_t *order, bool *shared,
                       uint32_t *nsampled)
{
    epoch_enter(); // before loading the table: a resize may free it
    struct dtable *t = load_acquire(&dh->tab);
    uint32_t n = nbuckets(t), cnt = MIN(n, SAMPLE);
    uint32_t first = (bindex(t, hash) & ~(SAMPLE - 1)) & (n - 1);
    uint32_t total = 0;
    *order = t->order;
    *shared = t->shared;
    for (uint32_t i = 0; i < cnt; i++) {
        uintptr_t *b = bucket(t, (first + i) & (n - 1));
        for (struct dent *e = B_HEAD(load_acquire(b)); e; e = load_acquire(&e->next))
            total++;
    }
    epoch_exit();
    *nsampled = cnt;
    return total;
}

// After a grow or spread hint that the sample turned down, this CPU passes
// over its next BACKOFF hints of that kind: a long chain in a table of normal
// load keeps hinting "grow" at every insert into it (a name renamed back and
// forth), two names that share a bucket in a spread table keep hinting
// "spread", and each look reads SAMPLE bucket lines that other CPUs write
// (1.05 transfers per rename with 64 CPUs renaming in one directory,
// bench-cost). A table that does need it is looked at again BACKOFF hints
// later. Kept apart per kind: in a table of normal load where CPUs meet, long
// chains hint "grow" and are turned down, and that must not make the CPU pass
// over the "spread" hints the table does need.
#define BACKOFF 32
struct backoff {
    uint32_t skip[2]; // grow hints, spread hints
};
static DEFINE_PERCPU(struct backoff, backoff);

static uint32_t *skip_count(int hint)
{
    return &this_cpu_ptr(&backoff)->skip[hint == DH_HINT_SPREAD];
}

static bool hint_skipped(int hint)
{
    push_off();
    uint32_t *skip = skip_count(hint);
    bool skipped = *skip > 0;
    if (skipped)
        (*skip)--;
    pop_off();
    return skipped;
}

static void hint_turned_down(int hint)
{
    push_off();
    *skip_count(hint) = BACKOFF;
    pop_off();
}

// How many times a table of this order must double, up to max_order, before
// a sample that now counts `need` against `have` counts no more than it: each
// doubling halves the names in the sampled buckets. At most MAX_JUMP at once:
// a table that CPUs meet in goes from 64 buckets to 4096 in one resize, not
// six, each of which would lock every bucket again (and under emulation, where
// a lock holder's vCPU waits for its turn, takes seconds).
static int doublings(uint64_t need, uint64_t have, uint32_t order, uint32_t max_order)
{
    int d = 0;
    while (need > have << d && order + d < max_order && d < MAX_JUMP)
        d++;
    return d;
}

// How many times to double (> 0) or halve (-1), 0 to leave the table alone. A
// small table doubles while hash shares its bucket with another name (reading
// that bucket only); a bigger one is sampled (*sampled).
static int decide(struct dirhash *dh, uint32_t hash, int hint, bool *sampled)
{
    epoch_enter(); // before loading the table: a resize may free it
    struct dtable *t = load_acquire(&dh->tab);
    bool small = t->order < SPREAD_ORDER;
    struct dent *e = small ? B_HEAD(load_acquire(bucket(t, bindex(t, hash)))) : NULL;
    bool crowded = e && load_acquire(&e->next);
    epoch_exit();
    *sampled = false;
    bool grow = hint == DH_HINT_GROW || hint == DH_HINT_SPREAD;
    if (small)
        return grow && crowded;
    if (grow && hint_skipped(hint))
        return 0;
    *sampled = true;
    uint32_t order, cnt;
    bool shared;
    uint32_t total = sample(dh, hash, &order, &shared, &cnt);
    if (hint == DH_HINT_GROW)
        return doublings(total, GROW_LOAD * cnt, order, MAX_ORDER);
    // A spread goes to half the load that asks for it (so that the next
    // sample, drawn near the threshold, does not ask for one more resize).
    if (hint == DH_HINT_SPREAD && total * SHARED_LOAD_DIV > cnt)
        return doublings(total * SHARED_LOAD_DIV * 2, cnt, order, SHARED_ORDER);
    if (hint == DH_HINT_SHRINK && total * (shared ? SHARED_SHRINK_DIV : SHRINK_DIV) < cnt &&
        order > SPREAD_ORDER)
        return -1;
    return 0;
}

// Old bucket i becomes new buckets i << k .. (i << k) + 2^k - 1 (k = the
// orders' difference, at most MAX_JUMP): the chain is sorted by hash, so each
// new bucket takes one stretch of it, cut off where the next one starts.
static void migrate_grow(struct dtable *t, struct dtable *n, uint32_t i)
{
    uintptr_t *ob = bucket(t, i);
    block(ob);
    uint32_t k = n->order - t->order, first = i << k;
    // The new buckets start locked: once ob is marked, writers go to them, and
    // until the cuts below a writer inserting after a stretch's last entry (or
    // removing it) would have its change undone by the cut.
    for (uint32_t j = 0; j < (1U << k); j++)
        store_relaxed(bucket(n, first + j), B_LOCK);
    struct dent *head = B_HEAD(*ob);
    uint32_t at = UINT32_MAX; // the new bucket of the stretch so far
    for (struct dent *e = head; e; e = e->next)
        if (bindex(n, e->hash) != at) {
            at = bindex(n, e->hash);
            store_relaxed(bucket(n, at), (uintptr_t)e | B_LOCK);
        }
    store_release(ob, B_MIGRATED | B_LOCK); // new heads are visible before the mark
    // The cuts come after the mark. A reader still in the old chain may meet
    // one before its hash: a miss there is checked against the mark and
    // looked up again in the new table (dirhash_lookup).
    for (struct dent *e = head, *next; e; e = next) {
        next = e->next;
        if (next && bindex(n, next->hash) != bindex(n, e->hash))
            store_release(&e->next, NULL);
    }
    for (uint32_t j = 0; j < (1U << k); j++)
        fetch_and_release(bucket(n, first + j), ~B_LOCK); // after the cuts
    bunlock(ob);
}

static void migrate_shrink(struct dtable *t, struct dtable *n, uint32_t i)
{
    uintptr_t *b0 = bucket(t, i), *b1 = bucket(t, i + 1);
    block(b0);
    block(b1);
    struct dent *h0 = B_HEAD(*b0), *h1 = B_HEAD(*b1);
    if (h0) {
        struct dent *last = h0;
        while (last->next)
            last = last->next;
        store_release(&last->next, h1); // readers of 2i may now wander into 2i+1's range: harmless
    }
    store_relaxed(bucket(n, i / 2), (uintptr_t)(h0 ? h0 : h1));
    store_release(b0, B_MIGRATED | B_LOCK);
    store_release(b1, B_MIGRATED | B_LOCK);
    bunlock(b1);
    bunlock(b0);
}

static void resize(struct dirhash *dh, struct dtable *t, int change, bool shared)
{
    struct dtable *n = table_alloc(t->order + change);
    if (!n)
        return; // keep the old size; chains only get longer (or stay sparse)
    // Past SHARED_ORDER the table grows for its load alone, and shrinks back
    // by the ordinary rule (a directory of 100,000 names, emptied).
    n->shared = (t->shared || shared) && n->order <= SHARED_ORDER;
    store_release(&t->next, n);
    if (change > 0)
        for (uint32_t i = 0; i < nbuckets(t); i++)
            migrate_grow(t, n, i);
    else
        for (uint32_t i = 0; i < nbuckets(t); i += 2)
            migrate_shrink(t, n, i);
    store_release(&dh->tab, n);
    // epoch_defer reads the epoch without a full fence: make the unpublishing
    // store visible first (x86 may otherwise let the load pass it).
    fence();
    epoch_defer(&t->cb, table_free_cb);
}

void dirhash_resize_check(struct dirhash *dh, uint32_t hash, int hint)
{
    assert(!epoch_in_reader());
    // Decide before claiming the directory: most hints come to nothing, and
    // the claim writes the directory's line 0.
    if (!hint || READ_ONCE(dh->state))
        return;
    bool sampled;
    if (!decide(dh, hash, hint, &sampled)) {
        if (hint != DH_HINT_SHRINK && sampled)
            hint_turned_down(hint);
        return;
    }
    uint32_t s = 0;
    if (!cas_acquire(&dh->state, &s, DH_RESIZING))
        return; // someone else is resizing, or the directory is dead
    int change;
    while ((change = decide(dh, hash, hint, &sampled)) != 0) {
        struct dtable *t = dh->tab;
        resize(dh, t, change, hint == DH_HINT_SPREAD);
        if (dh->tab == t)
            break; // out of memory
    }
    fetch_and_release(&dh->state, ~DH_RESIZING);
}
