// Directories as concurrent hash tables (dirhash.c): the interface the
// namespace operations use. Internal to fs/.
#pragma once
#include "kernel.h"
#include "sync/atomic.h"
#include "sync/epoch.h"

struct inode;

// A directory entry. Readers find it without locks; it is freed a grace period
// after it is unlinked. Two lines. The second is what lookups compare (the
// name, its hash and key, its type), fixed once published except `next`. The
// first is the binding: which file the name names, which a rename over the name
// may change in place (rename.c, rebind), under `dying` and with `bseq` odd.
// Apart, so that a call that only asks whether a name exists (a link that
// fails with EEXIST, a rename of a name onto itself) reads nothing that a
// rename over that name writes.
struct dent {
    struct inode *ip;         // holds one reference on ip (dropped when freed)
    uint64_t ino;             // ip's number, so listing need not touch the inode
    struct epoch_cb cb;       // deferred free
    uint32_t bseq;            // odd while a rebind changes ip and ino
    uint8_t dying;            // owned by a remover or a rebind (linkpin.c)
    struct dent *next __cacheline_aligned; // chain, sorted by key
    uint32_t hash;
    uint32_t seq;             // tells apart names with equal hashes (< 2^24)
    uint8_t type;             // DT_*: lookups decide ENOTDIR/EISDIR from it; a rebind keeps it
    uint8_t namelen;
    char name[];              // namelen bytes and a NUL
};

// The file e names now, in one load: a rebind may change it between two
// (rename.c). What a caller finds stays alive until its epoch section ends.
static inline struct inode *dent_ip(const struct dent *e) { return load_acquire(&e->ip); }

// key = hash << 24 | seq orders the entries of a directory; readdir positions
// are keys, so they do not depend on the table size.
#define DENT_SEQ_BITS 24
static inline uint64_t dent_key(const struct dent *e)
{
    return (uint64_t)e->hash << DENT_SEQ_BITS | e->seq;
}
#define DENT_KEY_END (1ULL << (32 + DENT_SEQ_BITS))

struct dtable;

struct dirhash {
    struct dtable *tab;       // where lookups start (the old table during a resize)
    uint32_t seed;            // per-directory hash seed
    uint32_t state;           // DH_RESIZING, DH_DEAD
};
#define DH_RESIZING 0x1
#define DH_DEAD 0x2           // removed (rmdir, or replaced by rename): no inserts

// A locked bucket: where a writer may insert, remove or replace entries of one hash.
struct dbucket {
    uintptr_t *word;
    struct dirhash *dh;
    uint32_t index, order;    // bucket index and table order, for resize hints
    uint32_t chainlen;        // entries in the chain after the last update
    int hint;                 // DH_HINT_GROW/SHRINK after an update
};
// How far an emptied table shrinks (dirhash.c): not below DH_SPREAD_ORDER, and
// while the sampled load is below 1 / DH_SHRINK_DIV. Each CPU looks only at
// every DH_SHRINK_EVERY-th removal of a run, so after its last look up to
// DH_SHRINK_EVERY - 1 names per CPU go unseen: a directory that n CPUs empty
// keeps about n * DH_SHRINK_EVERY * DH_SHRINK_DIV buckets, at most.
#define DH_SPREAD_ORDER 6
#define DH_SHRINK_DIV 4
#define DH_SHRINK_EVERY 16

#define DH_HINT_GROW 1
#define DH_HINT_SHRINK 2
#define DH_HINT_SPREAD 3      // CPUs keep meeting in buckets: spread (dirhash.c)

uint32_t dirhash_hash(const struct dirhash *dh, const char *name, size_t len);
int dirhash_init(struct dirhash *dh, uint32_t seed);
void dirhash_destroy(struct dirhash *dh); // no readers or writers left

// Readers: inside an epoch section; the result stays valid until epoch_exit.
struct dent *dirhash_lookup(struct dirhash *dh, const char *name, size_t len, uint32_t hash);
// The entry with the smallest key >= *key, or NULL at the end.
struct dent *dirhash_next(struct dirhash *dh, uint64_t key);

// Writers: inside an epoch section. Lock the bucket for `hash` (two buckets,
// possibly of different directories, in a deadlock-free order; b2 may end up
// the same bucket as b1, then it is locked once).
void dirhash_lock(struct dirhash *dh, uint32_t hash, struct dbucket *b);
bool dirhash_trylock(struct dirhash *dh, uint32_t hash, struct dbucket *b);
void dirhash_lock2(struct dirhash *dh1, uint32_t h1, struct dbucket *b1, struct dirhash *dh2,
                   uint32_t h2, struct dbucket *b2);
void dirhash_unlock(struct dbucket *b);
void dirhash_unlock2(struct dbucket *b1, struct dbucket *b2);
struct dent *dirhash_find_locked(struct dbucket *b, const char *name, size_t len, uint32_t hash);
// Is the bucket that holds `hash` locked, other than by `mine` (may be NULL)?
// Reads only. For a rename that rebinds an entry without its bucket's lock
// (rename.c), after owning the entry: it defers to a holder of the lock.
bool dirhash_bucket_busy(struct dirhash *dh, uint32_t hash, const struct dbucket *mine);
// Insert e (its hash, name and ip filled in; seq is chosen here). -ENOENT if the
// directory is dead, -ENOSPC if 2^24 names share one hash.
int dirhash_insert_locked(struct dbucket *b, struct dent *e);
void dirhash_remove_locked(struct dbucket *b, struct dent *e);
// Put e in old's place with old's key, in one store (rename over a name).
void dirhash_replace_locked(struct dbucket *b, struct dent *old, struct dent *e);

// Mark an empty directory dead, atomically with respect to inserts.
// 0, -ENOTEMPTY, or -EAGAIN (contended: drop your locks and retry).
int dirhash_kill(struct dirhash *dh);

// Grow or shrink the table if b's hint says it may be worth it. Call outside any
// epoch section, holding a reference on the directory.
void dirhash_resize_check(struct dirhash *dh, uint32_t hash, int hint);

// Memory held by the table itself (not the entries), for tests.
size_t dirhash_table_bytes(struct dirhash *dh);
uint32_t dirhash_order(struct dirhash *dh);
