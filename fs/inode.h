// ScaleFS internals shared by the files of fs/: the inode, path resolution,
// directory-entry lifetime and time stamps. Not for use outside fs/.
#pragma once
#include "dirhash.h"
#include "filedata.h"
#include "fs.h"
#include "mm/mm.h"
#include "sync/activeset.h"
#include "sync/refcache.h"
#include "sync/seqlock.h"

// An inode, 256 bytes (one kmalloc class), laid out by who writes what:
//   line 0   read by every lookup and data access; written at creation (and
//            `parent` by a directory rename across directories, `wc` once by
//            the file's first open for writing or exec)
//   line 1   the size seqlock, size, atime and a file's page-tree root:
//            written by size changes, by a flush of a CPU's cached atime
//            (itime.c: once per refcache epoch at most, or when the CPU's slot
//            is needed for another inode), and the root when the tree gains a
//            level, gets its first page or loses all of them (truncate); read
//            by every data access and page fault, which read the size anyway.
//            Not by opens, lookups or stats without size and times.
//   lines 2-3 the two refcache objects, mtime and ctime: written only when a
//            flush brings a CPU's cached delta or times here (refcache.c,
//            itime.c)
//
// Who may write each field (docs/conventions.md): [i] immutable once published,
// [a] atomic (sync/atomic.h), no lock; [s] the size seqlock's spinlock, read
// lock-free (acquire loads; a shrink moves the sequence so readers retry);
// [n] rename_lock with both bucket locks, read lock-free inside an epoch section
// (the old value is dropped a grace period later).
struct inode {
    uint64_t ino;                 // [i]
    uint32_t mode;                // [a] S_IF* type ([i]) and permission bits
    uint32_t releases;            // [a] refcache objects not yet released (2 -> 0: free)
    union {
        struct dirhash dir;       // directories (its own synchronisation, dirhash.c)
        struct {
            char *target;         // [i] symlinks: target, NUL-terminated
            uint32_t len;         // [i]
        } link;
        uint32_t rdev;            // [i] device nodes (S_IFCHR): the device number
        struct {                  // regular files (filedata.c):
            // a truncate could not take its pages out of every mapping (out
            // of memory): detached pages are kept in orphans until the inode goes
            bool maps_stale;      // [a] set once
            struct freebatch *orphans; // [a] pushed lock-free
        } file;
    };
    struct inode *parent;         // [n] directories: ".." (holds a reference on it)
    // Regular files: writers and executors (writecount.c), allocated by the
    // first open for writing or exec and installed once (NULL before).
    struct writecount *wc;        // [a] set once

    // The size seqlock: its sequence changes only while a truncate shrinks the
    // file, so readers retry only then; its spinlock serialises size changes.
    struct seqlock sizelock __cacheline_aligned;
    uint64_t size;                // [s] regular files
    uint64_t atime, mtime, ctime; // [a] nanoseconds since 1970, less what CPUs cache (itime.c)

    // The two counts: ref on the third line whole, with nlink's first word
    // (its release function, read only when the inode goes); nlink's count
    // and the rest on the fourth, which stat reads anyway (npages). A CPU
    // writes an object's fields when it flushes or evicts the object from its
    // refcache slot: ref's often (every lookup and close counts, and 64 CPUs
    // statting one file flushed it each epoch under every stat's exact read
    // of nlink's count, when that sat on ref's line: bench-cost), nlink's only
    // with a name's creation or removal.
    struct refcache_obj ref __cacheline_aligned; // dents + open references + children's ".." + callers
    struct refcache_rm nlink;     // names (+1 for "." and per subdirectory)
    // Regular files (filedata.c): the page tree, and the pages the size
    // covers, all a fault asks (is its page inside the file?). On the fourth
    // line, with nlink's rarely written fields: not on the size's line (a
    // write or truncate inside the last page does not change them), not on
    // ref's (a CPU evicting ref wrote the line a read or stat of the file on
    // another CPU read: mtrace spawn-own-child-2proc and fstat-one-fd-2thread,
    // some runs), and not on the first line, which open and stat read (mode,
    // ino, wc): an extension past a page or a truncate, which write npages,
    // shared it with them (about 50 tests of the page suite at 3104fd9).
    struct filemap map;           // [a] nodes installed by compare-and-swap
    uint64_t npages;              // [s]
};

static inline bool inode_isdir(const struct inode *ip) { return S_ISDIR(ip->mode); }
static inline uint8_t mode_to_dtype(uint32_t mode)
{
    return S_ISDIR(mode) ? DT_DIR : S_ISLNK(mode) ? DT_LNK : S_ISREG(mode) ? DT_REG
         : S_ISCHR(mode) ? DT_CHR : (mode & S_IFMT) == S_IFSOCK ? DT_SOCK : DT_UNKNOWN;
}

// writecount.c
void writecount_free(struct inode *ip); // inode_free: drop ip->wc

// inode.c
// Live inodes and directory entries, per-CPU counters (statistics and tests).
void fs_count_objects(int64_t *inodes, int64_t *dents);
void fs_count_dent(int delta);
struct inode *inode_alloc(uint32_t mode, int *err); // nlink 1 (dirs 2), ref 1; not yet visible
void inode_free_unpublished(struct inode *ip);      // undo inode_alloc before publication
extern struct inode *fs_root_inode;

// The kernel's active set (sync/activeset.h) of the CPUs that hold per-CPU
// link-count deltas, times and link pins of an inode: directories' apart from
// files', so that a stat of a file does not visit every CPU that made names in
// a directory whose inode lies on the file's page. Callers say which kind the
// inode is (they know it from its entry; reading the mode would read line 0);
// under kpoison, inode_kind_check holds them to it.
static inline int attr_set(bool dir) { return dir ? ACTIVE_DIRS : ACTIVE_FILES; }
void inode_kind_wrong(const struct inode *ip, bool dir);
static inline void inode_kind_check(const struct inode *ip, bool dir)
{
    if (kmalloc_poisoning() && S_ISDIR(ip->mode) != dir)
        inode_kind_wrong(ip, dir);
}
static inline void nlink_add(struct inode *ip, int64_t d, bool dir)
{
    inode_kind_check(ip, dir);
    refcache_rm_add(&ip->nlink, d, attr_set(dir));
}

// Time stamps (itime.c): an update goes to this CPU's slot for the inode; a
// read merges every CPU's slot with the inode's fields.
#define T_ATIME 1
#define T_MTIME 2
#define T_CTIME 4
#define T_DIR 8 // ip is a directory: its CPUs go to the directories' active set
uint64_t fs_time_now(void);                        // the wall clock, realtime_nsec
void inode_touch(struct inode *ip, int which);     // set the T_* times to now
void inode_times(struct inode *ip, uint64_t t[3]); // atime, mtime, ctime
bool itime_flush_cpu(bool all);                    // this CPU's slots (all, or those not changed
                                                   // since its last flush) into their inodes; true
                                                   // if any kept (their active-set shards too)
void itime_flush_all(void);                        // every CPU's (xcall)
void itime_check_unnamed(struct inode *ip);        // kpoison: panic if a slot still names ip

// Directory entries (dirops.c): allocated with the name, freed a grace period
// after they are unlinked, which is also when their reference on ip goes.
struct dent *dent_alloc(const char *name, size_t len);
void dent_set_inode(struct dent *e, struct inode *ip); // ip, ino and type
void dent_set_same(struct dent *e, const struct dent *old); // the same, from old
void dent_put_later(struct dent *e);  // unlinked: free + drop its ip reference later

// Link pins (linkpin.c): a link keeps its source entry in place without its lock.
bool link_pin(struct dent *e);        // preemption off; false: e is going, start again
bool link_pin_dying(const struct dent *e);
void link_unpin(struct dent *e);
void link_wait_gone(struct dirhash *dh, const char *name, size_t len, uint32_t hash, struct dent *e);
void dent_retire(struct dent *e);     // remover, bucket locked: own e, wait for e's links
void dent_unretire(struct dent *e);   // the removal failed after all (or a rebind is done)
bool dent_claim(struct dent *e);      // own e if no one does (a rebind, rename.c)
void dent_settle(const struct dent *e); // bucket locked: wait out a rebind of e
void dent_wait_pins(struct dent *e);  // e owned: wait for links of it
bool linkpin_keep(void);              // this CPU holds a pin now (and keeps its active-set shard)
void dent_free_unpublished(struct dent *e);

// A reference dropped a grace period from now (a pointer readers may still
// follow was just overwritten). Allocate first, so running out of memory is
// an error before anything changed.
struct iput_later;
struct iput_later *iput_later_alloc(void);
void iput_later(struct iput_later *l, struct inode *ip);
void iput_later_cancel(struct iput_later *l);

// namei.c: path resolution, inside an epoch section. Pointers found are valid
// until epoch_exit (see README, "Lifetime"); take a reference to keep one.
enum { LAST_NORM, LAST_DOT, LAST_DOTDOT, LAST_ROOT };
struct nd_frame {
    const char *p, *end;
};
struct nameidata {
    struct inode *dir;            // directory that holds the last component
    const char *name;             // the last component
    size_t len;
    int last;                     // LAST_*
    bool slash;                   // the last component had trailing slashes
    // walker state
    struct nd_frame cur;
    struct nd_frame saved[FS_SYMLOOP_MAX];
    int nsaved;
    int nlinks;
    bool pending_slash;
};
int path_check(const char *path);  // 0, -ENOENT (empty) or -ENAMETOOLONG
int namei_parent(struct inode *cwd, const char *path, struct nameidata *nd);
// Continue with a symlink met as the last component: walk its target to a new last.
int namei_follow(struct nameidata *nd, struct inode *link);
// The inode the last component names; follows a final symlink unless nofollow
// (a trailing slash always follows). -ENOTDIR if a trailing slash names a non-directory.
int namei_last(struct nameidata *nd, bool nofollow, struct inode **ipp);
struct inode *dir_parent(struct inode *dir);
static inline uint32_t nd_hash(struct nameidata *nd)
{
    return dirhash_hash(&nd->dir->dir, nd->name, nd->len);
}

// Resize hints collected by a namespace operation, acted on after epoch_exit.
struct resize_hint {
    struct inode *dir[2];         // referenced
    uint32_t hash[2];
    int hint[2];
};
void hint_note(struct resize_hint *rh, struct dbucket *b, struct inode *dir, uint32_t hash);
void hint_run(struct resize_hint *rh);
