// Rename: move a name, atomically replacing the target name if it exists; or
// (FS_EXCHANGE) swap the files two names refer to.
//
// Commute: renames of different names (within a directory or across
// directories), and renames with operations on other names. A rename locks
// the source and target buckets only (dirhash_lock2, address order), so it
// touches the same lines as an unlink of the source plus a create of the target;
// and only one that will change them: failures and renames between two names of
// one file are decided from lock-free lookups and write nothing. A rename over
// a file of the same kind (not a directory) locks only the source's bucket and
// changes the target's entry in place (rebind, below): it commutes with, and
// shares no line with, calls that only ask whether the target name exists (a
// link to it failing with EEXIST, a rename of it onto itself). Before an entry
// goes (moved or replaced) or is rebound it is retired: marked dying, and links
// that pinned it as their source finish first (linkpin.c); that reads one slot
// line per CPU of the entry's shard of the active set.
// The one global lock, rename_lock, is taken only by renames that move a
// directory to a different parent: those must check that the target directory is
// not inside the moved one, by following ".." pointers up to the root, and those
// pointers change only under rename_lock. Linux does the same (s_vfs_rename_mutex).
// Same-directory renames and file renames never take it.
//
// Atomicity: the target, if any, is replaced by one pointer store in its chain,
// or rebound by one store of its inode pointer (never missing); the new name
// appears before the old one goes, so there is a moment when both name the file
// (as in Linux; rename(2) documents it).
// Failure cases (ENOENT, EISDIR, ENOTDIR, EINVAL, EBUSY) are decided from the
// entries' types; ENOTEMPTY needs the target directory's table (dirhash_kill).
//
// Exchange: both entries are replaced by new ones with the inodes swapped, under
// the same two bucket locks, so it shares lines as two replacing renames would.
// Neither name is ever missing; between the two pointer stores, both names
// can show the same file, as rename's moment above. A directory exchanged
// across directories takes rename_lock, as a directory move does.
#include "inode.h"
#include "mm/mm.h"
#include "sync/spinlock.h"
#include "x86/x86.h"

static struct spinlock rename_lock = SPINLOCK_INIT("fs rename");

// Is dir the directory `d` or below it? rename_lock is held.
static bool inside(struct inode *dir, struct inode *d)
{
    for (struct inode *p = dir;; p = dir_parent(p)) {
        if (p == d)
            return true;
        if (p == fs_root_inode)
            return false;
    }
}

struct rename_ctx {
    struct nameidata o, n;
    struct dent *ne;            // the new entry, allocated before locking
    struct dent *oe;            // exchange: the old name's new entry
    struct iput_later *oldparent; // drop of the moved directory's old ".." reference
    struct iput_later *newparent; // exchange: the same for the target directory
    struct iput_later *oldtarget; // rebind: drop of the replaced file's reference
    struct resize_hint rh;
    int flags;                  // FS_NOREPLACE, FS_EXCHANGE
};

#define RENAME_NOOP 1      // the same file under both names: nothing to do
#define RENAME_NEED_LOCK 2 // a directory moves across directories: take rename_lock

// Do entries a and b name one file? Both bindings as of one moment: a rebind
// of either while they are read (bseq moved, or odd) answers no, and the
// caller then decides under the locks, where the bindings hold still.
static bool same_file(const struct dent *a, const struct dent *b)
{
    if (a == b)
        return true; // reads nothing a rebind of the name writes
    uint32_t sa = load_acquire(&a->bseq), sb = load_acquire(&b->bseq);
    bool same = dent_ip(a) == dent_ip(b);
    return same && !((sa | sb) & 1) && load_acquire(&a->bseq) == sa && load_acquire(&b->bseq) == sb;
}

// LAB rename BEGIN
// rename_check for FS_EXCHANGE (src exists): both names must exist, and
// either type may go to either place, but no directory into its own subtree.
static int exchange_check(struct rename_ctx *c, const struct dent *src, const struct dent *tgt,
                          bool have_lock)
{
    struct nameidata *o = &c->o, *n = &c->n;
    bool cross = o->dir != n->dir, sdir = src->type == DT_DIR, tdir = tgt && tgt->type == DT_DIR;
    if (!tgt)
        return -ENOENT;
    if ((sdir || tdir) && cross && !have_lock)
        return RENAME_NEED_LOCK;
    if ((!sdir && o->slash) || (!tdir && n->slash))
        return -ENOTDIR;
    if (cross && ((sdir && inside(n->dir, src->ip)) || (tdir && inside(o->dir, tgt->ip))))
        return -EINVAL;         // either would go into its own subtree
    if (same_file(tgt, src))
        return RENAME_NOOP;
    return 0;
}
// LAB rename END

// What the two entries decide, in Linux's order of checks: an error,
// RENAME_NOOP, RENAME_NEED_LOCK, or 0 to go on. With have_lock (rename_lock
// and both bucket locks held) it also decides EINVAL; ENOTEMPTY for a
// non-empty target directory is left to dirhash_kill.
static int rename_check(struct rename_ctx *c, const struct dent *src, const struct dent *tgt,
                        bool have_lock)
{
    struct nameidata *o = &c->o, *n = &c->n;
    bool cross = o->dir != n->dir, isdir = src && src->type == DT_DIR;
    if (!src)
        return -ENOENT;
    // LAB rename BEGIN
    if (c->flags & FS_EXCHANGE)
        return exchange_check(c, src, tgt, have_lock);
    // LAB rename END
    if (tgt && (c->flags & FS_NOREPLACE))
        return -EEXIST;         // even another name of the same file (Linux)
    if (isdir && cross && !have_lock)
        return RENAME_NEED_LOCK;
    if (!isdir && (o->slash || n->slash))
        return -ENOTDIR;
    if (tgt && same_file(tgt, src))
        return RENAME_NOOP;
    if (isdir && cross && inside(n->dir, src->ip))
        return -EINVAL;         // into its own subtree
    if (isdir && tgt && tgt->type != DT_DIR)
        return -ENOTDIR;
    if (!isdir && tgt && tgt->type == DT_DIR)
        return -EISDIR;
    if (isdir && tgt && tgt->ip == o->dir)
        return -ENOTEMPTY;      // the target holds the source
    return 0;
}

// Both parents' mtime and ctime, after a rename changed their entries.
static void touch_parents(struct rename_ctx *c)
{
    inode_touch(c->o.dir, T_MTIME | T_CTIME | T_DIR);
    if (c->n.dir != c->o.dir)
        inode_touch(c->n.dir, T_MTIME | T_CTIME | T_DIR);
}

// Directory ip moves from `from` to `to`: its ".." and the parents' link counts
// follow. rename_lock and both bucket locks are held.
static void reparent(struct inode *ip, struct inode *from, struct inode *to, struct iput_later *l)
{
    nlink_add(from, -1, true);
    nlink_add(to, 1, true);
    fs_iget(to);
    WRITE_ONCE(ip->parent, to);
    iput_later(l, from); // readers may still be following the old ".."
}

// LAB rename BEGIN
// Swap the files of two checked entries: each name gets a new entry naming the
// other's inode. Nothing can fail here: both directories hold an entry, so
// neither is dead. Link counts of the files stay; directories changing parent
// move a link of each parent.
static void exchange_locked(struct rename_ctx *c, struct dbucket *b1, struct dent *src,
                            struct dbucket *b2, struct dent *tgt)
{
    struct nameidata *o = &c->o, *n = &c->n;
    dent_set_same(c->ne, src);
    dent_set_same(c->oe, tgt);
    dirhash_replace_locked(b2, tgt, c->ne);
    dirhash_replace_locked(b1, src, c->oe);
    refcache_inc(&src->ip->ref); // the new entries'; the old ones' go with src and tgt
    refcache_inc(&tgt->ip->ref);
    if (o->dir != n->dir && src->type == DT_DIR) {
        reparent(src->ip, o->dir, n->dir, c->oldparent);
        c->oldparent = NULL;
    }
    if (o->dir != n->dir && tgt->type == DT_DIR) {
        reparent(tgt->ip, n->dir, o->dir, c->newparent);
        c->newparent = NULL;
    }
    c->ne = c->oe = NULL;
}
// LAB rename END

// Move src's file to the target name, replacing tgt if any. Only the insert
// can fail (the new parent is dead: ENOENT), and it comes before any change
// that others can see.
static int move_locked(struct rename_ctx *c, struct dbucket *b1, struct dent *src,
                       struct dbucket *b2, struct dent *tgt)
{
    struct nameidata *o = &c->o, *n = &c->n;
    struct inode *ip = src->ip;
    bool isdir = src->type == DT_DIR;
    dent_set_same(c->ne, src);
    if (tgt) {
        dirhash_replace_locked(b2, tgt, c->ne);
    } else {
        int err = dirhash_insert_locked(b2, c->ne);
        if (err)
            return err;
    }
    refcache_inc(&ip->ref); // the new entry's; the old one's goes with src
    dirhash_remove_locked(b1, src);
    if (tgt) {
        nlink_add(tgt->ip, -1, isdir); // checked: a directory replaces only a directory
        if (isdir) {
            nlink_add(tgt->ip, -1, true);  // its "."
            nlink_add(n->dir, -1, true);   // its ".."
        }
    }
    if (isdir && o->dir != n->dir) {
        reparent(ip, o->dir, n->dir, c->oldparent);
        c->oldparent = NULL;
    }
    c->ne = NULL;
    return 0;
}

// The locked part. *retry asks the caller to start again: a lock was
// contended, or (*need_lock) the source turned out to be a directory moving
// across directories, which needs rename_lock.
static int rename_locked(struct rename_ctx *c, bool have_lock, bool *retry, bool *need_lock)
{
    struct nameidata *o = &c->o, *n = &c->n;
    bool exchange = c->flags & FS_EXCHANGE;
    uint32_t h1 = nd_hash(o), h2 = c->ne->hash;
    struct dbucket b1, b2;
    dirhash_lock2(&o->dir->dir, h1, &b1, &n->dir->dir, h2, &b2);
    struct dent *src = dirhash_find_locked(&b1, o->name, o->len, h1);
    struct dent *tgt = dirhash_find_locked(&b2, n->name, n->len, h2);
    if (src)
        dent_settle(src); // a rebind under way finishes: then which file each names holds still
    if (tgt)
        dent_settle(tgt);
    int err = rename_check(c, src, tgt, have_lock);
    if (err == RENAME_NEED_LOCK)
        err = -EAGAIN, *need_lock = true; // a directory after all
    else if (!err && !exchange && src->type == DT_DIR && tgt)
        err = dirhash_kill(&tgt->ip->dir); // ENOTEMPTY, EAGAIN, or dead for good
    if (!err) {
        // Both entries go (or are replaced): links of them finish first.
        dent_retire(src);
        if (tgt)
            dent_retire(tgt);
        // LAB rename BEGIN
        if (exchange)
            exchange_locked(c, &b1, src, &b2, tgt);
        else if ((err = move_locked(c, &b1, src, &b2, tgt))) {
        // LAB rename SKELETON
        // if ((err = move_locked(c, &b1, src, &b2, tgt))) {
        // LAB rename END
            dent_unretire(src);
            if (tgt)
                dent_unretire(tgt);
        }
    }
    dirhash_unlock2(&b1, &b2);
    if (err) {
        if (err == -EAGAIN)
            *retry = true;
        return err == RENAME_NOOP ? 0 : err;
    }
    dent_put_later(src);
    if (tgt)
        dent_put_later(tgt);
    touch_parents(c);
    // The moved files' own ctime stays: POSIX lets rename leave it (Linux marks
    // it), and left alone, a stat of a file commutes with renaming it and shares
    // nothing with it. A replaced file's ctime moves with its link count.
    if (tgt && !exchange)
        inode_touch(tgt->ip, T_CTIME | (tgt->type == DT_DIR ? T_DIR : 0));
    hint_note(&c->rh, &b1, o->dir, h1);
    hint_note(&c->rh, &b2, n->dir, h2);
    return 0;
}

// ---- a rename over a name, in place ------------------------------------------
//
// rename(a, b) where b names a file of a's kind (not a directory) changes b's
// entry to name a's file (rebind), and takes only a's bucket lock: a lookup of
// b that only asks whether it exists (a link to b that fails with EEXIST, a
// rename of b onto itself) reads b's bucket and the second line of b's entry,
// neither of which this writes. b's entry is owned instead of locked
// (dent_claim): a rebind defers to a writer that holds b's bucket lock (gives
// the entry back and starts again), and such a writer that locked later waits
// for the rebind to finish (dent_settle) before it reads which file b names.

static bool can_rebind(const struct rename_ctx *c, const struct dent *src, const struct dent *tgt)
{
    return tgt && tgt != src && !(c->flags & FS_EXCHANGE) && src->type == tgt->type &&
           src->type != DT_DIR;
}

// Point the owned entry e at ip (number ino); returns the file it named.
// same_file's readers see bseq odd or moved meanwhile.
static struct inode *rebind_entry(struct dent *e, struct inode *ip, uint64_t ino)
{
    struct inode *old = e->ip;
    store_release(&e->bseq, e->bseq + 1);
    store_release(&e->ino, ino);
    store_release(&e->ip, ip);
    store_release(&e->bseq, e->bseq + 1);
    return old;
}

// Both entries owned, src's bucket locked, the checks passed.
static void rebind_locked(struct rename_ctx *c, struct dbucket *b1, struct dent *src,
                          struct dent *tgt)
{
    struct inode *ip = src->ip;
    dent_wait_pins(tgt); // links of b's old file finish first
    refcache_inc(&ip->ref); // tgt's; src's goes with src
    struct inode *old = rebind_entry(tgt, ip, src->ino);
    dirhash_remove_locked(b1, src); // after b names the file: it always has a name
    dent_unretire(tgt);
    nlink_add(old, -1, false);
    inode_touch(old, T_CTIME);
    iput_later(c->oldtarget, old); // lookups may still hold it, found through tgt
    c->oldtarget = NULL;
}

static int rename_rebind(struct rename_ctx *c, struct dent *tgt, bool *retry)
{
    struct nameidata *o = &c->o, *n = &c->n;
    uint32_t h1 = nd_hash(o), h2 = tgt->hash;
    if (!(c->oldtarget = iput_later_alloc()))
        return -ENOMEM;
    struct dbucket b1;
    dirhash_lock(&o->dir->dir, h1, &b1);
    struct dent *src = dirhash_find_locked(&b1, o->name, o->len, h1);
    int err = -EAGAIN; // changed since the first look, or tgt's bucket is busy: again
    if (src && can_rebind(c, src, tgt)) {
        dent_retire(src); // a rebind of a's name under way finishes first
        // Owned, tgt is still b's entry: a removed entry stays owned for good.
        if (dent_claim(tgt)) {
            if (!dirhash_bucket_busy(&n->dir->dir, h2, &b1))
                err = rename_check(c, src, tgt, false); // both owned: exact now
            if (!err)
                rebind_locked(c, &b1, src, tgt);
            else
                dent_unretire(tgt);
        }
        if (err)
            dent_unretire(src);
    }
    dirhash_unlock(&b1);
    if (err) {
        if (err == -EAGAIN)
            *retry = true;
        return err == RENAME_NOOP ? 0 : err;
    }
    dent_put_later(src);
    touch_parents(c);
    hint_note(&c->rh, &b1, o->dir, h1);
    return 0;
}

static int do_rename(struct rename_ctx *c, bool *retry, bool *need_lock)
{
    struct nameidata *o = &c->o, *n = &c->n;
    if (o->last != LAST_NORM || n->last != LAST_NORM)
        return -EBUSY; // ".", "..", "/" (Linux)
    if (o->len > FS_NAME_MAX || n->len > FS_NAME_MAX)
        return -ENAMETOOLONG;
    // A first look, without locks. Failures and the no-op are decided here and
    // write nothing. A missing source reads nothing of the target's bucket.
    // Otherwise the source entry, looked up again after the target's, was
    // there throughout (an entry never comes back once removed), so both
    // lookups' answers held when the second was made. The look also says
    // whether a directory moves across directories: only then is rename_lock
    // needed (re-checked under the locks).
    uint32_t h1 = nd_hash(o), h2 = nd_hash(n);
    struct dent *e = dirhash_lookup(&o->dir->dir, o->name, o->len, h1);
    if (!e)
        return -ENOENT;
    struct dent *t = dirhash_lookup(&n->dir->dir, n->name, n->len, h2);
    int err = rename_check(c, e, t, false);
    if ((err < 0 || err == RENAME_NOOP) && dirhash_lookup(&o->dir->dir, o->name, o->len, h1) == e)
        return err == RENAME_NOOP ? 0 : err;
    bool lock = *need_lock || err == RENAME_NEED_LOCK;
    if (!err && !lock && can_rebind(c, e, t))
        return rename_rebind(c, t, retry);
    if (!(c->ne = dent_alloc(n->name, n->len)))
        return -ENOMEM;
    c->ne->hash = h2;
    bool exchange = c->flags & FS_EXCHANGE;
    if (exchange && !(c->oe = dent_alloc(o->name, o->len)))
        return -ENOMEM;
    if (exchange)
        c->oe->hash = h1;
    if (lock && !(c->oldparent = iput_later_alloc()))
        return -ENOMEM;
    if (lock && exchange && !(c->newparent = iput_later_alloc()))
        return -ENOMEM;
    if (lock)
        spin_lock(&rename_lock);
    err = rename_locked(c, lock, retry, need_lock);
    if (lock)
        spin_unlock(&rename_lock);
    return err;
}

int fs_rename(struct inode *oldcwd, const char *oldpath, struct inode *newcwd, const char *newpath)
{
    return fs_rename_flags(oldcwd, oldpath, newcwd, newpath, 0);
}

int fs_rename_flags(struct inode *oldcwd, const char *oldpath, struct inode *newcwd,
                    const char *newpath, int flags)
{
    int err = path_check(oldpath);
    if (!err)
        err = path_check(newpath);
    if (err)
        return err;
    if ((flags & FS_EXCHANGE) && (flags & FS_NOREPLACE))
        return -EINVAL;
    // LAB rename BEGIN
    // LAB rename SKELETON
    // // TODO (labs/rename): exchange_check and exchange_locked, then remove this.
    // if (flags & FS_EXCHANGE)
    //     return -EINVAL;
    // LAB rename END
    struct rename_ctx *c = kzalloc(sizeof *c); // two nameidata: 1.5 KiB, not on the stack
    if (!c)
        return -ENOMEM;
    c->flags = flags;
    bool retry, need_lock = false;
    do {
        retry = false;
        epoch_enter();
        err = namei_parent(oldcwd, oldpath, &c->o);
        if (!err)
            err = namei_parent(newcwd, newpath, &c->n);
        if (!err)
            err = do_rename(c, &retry, &need_lock);
        epoch_exit();
        if (c->ne)
            dent_free_unpublished(c->ne);
        if (c->oe)
            dent_free_unpublished(c->oe);
        if (c->oldparent)
            iput_later_cancel(c->oldparent);
        if (c->newparent)
            iput_later_cancel(c->newparent);
        if (c->oldtarget)
            iput_later_cancel(c->oldtarget);
        c->ne = c->oe = NULL;
        c->oldparent = c->newparent = c->oldtarget = NULL;
        if (retry)
            pause();
    } while (retry);
    hint_run(&c->rh);
    kfree(c);
    return err;
}
