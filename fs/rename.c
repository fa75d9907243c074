// Rename: move a name, atomically replacing the target name if it exists.
//
// Commute: renames of different names (within a directory or across
// directories), and renames with operations on other names. A rename locks
// the source and target buckets only (dirhash_lock2, address order), so it
// touches the same lines as an unlink of the source plus a create of the target;
// and only one that will change them: failures and renames between two names of
// one file are decided from lock-free lookups and write nothing.
// The one global lock, rename_lock, is taken only by renames that move a
// directory to a different parent: those must check that the target directory is
// not inside the moved one, by following ".." pointers up to the root, and those
// pointers change only under rename_lock. Linux does the same (s_vfs_rename_mutex).
// Same-directory renames and file renames never take it.
//
// Atomicity: the target, if any, is replaced by one pointer store in its chain
// (never missing); the new name appears before the old one goes, so there is a
// moment when both name the file (as in Linux; rename(2) documents it).
// Failure cases (ENOENT, EISDIR, ENOTDIR, EINVAL, EBUSY) are decided from the
// entries' types; ENOTEMPTY needs the target directory's table (dirhash_kill).
#include "inode.h"
#include "mm.h"
#include "spinlock.h"
#include "x86.h"

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
    struct iput_later *oldparent; // drop of the moved directory's old ".." reference
    struct resize_hint rh;
    int flags;                  // FS_NOREPLACE
};

#define RENAME_NOOP 1      // the same file under both names: nothing to do
#define RENAME_NEED_LOCK 2 // a directory moves across directories: take rename_lock

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
    if (tgt && (c->flags & FS_NOREPLACE))
        return -EEXIST;         // even another name of the same file (Linux)
    if (isdir && cross && !have_lock)
        return RENAME_NEED_LOCK;
    if (!isdir && (o->slash || n->slash))
        return -ENOTDIR;
    if (tgt && tgt->ip == src->ip)
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

// The locked part. *retry asks the caller to start again: a lock was
// contended, or (*need_lock) the source turned out to be a directory moving
// across directories, which needs rename_lock.
static int rename_locked(struct rename_ctx *c, bool have_lock, bool *retry, bool *need_lock)
{
    struct nameidata *o = &c->o, *n = &c->n;
    bool cross = o->dir != n->dir;
    uint32_t h1 = nd_hash(o), h2 = c->ne->hash;
    struct dbucket b1, b2;
    dirhash_lock2(&o->dir->dir, h1, &b1, &n->dir->dir, h2, &b2);
    struct dent *src = dirhash_find_locked(&b1, o->name, o->len, h1);
    struct dent *tgt = dirhash_find_locked(&b2, n->name, n->len, h2);
    bool isdir = src && src->type == DT_DIR;
    int err = rename_check(c, src, tgt, have_lock);
    if (err == RENAME_NEED_LOCK)
        err = -EAGAIN, *need_lock = true; // a directory after all
    else if (!err && isdir && tgt)
        err = dirhash_kill(&tgt->ip->dir); // ENOTEMPTY, EAGAIN, or dead for good
    if (err) {
        dirhash_unlock2(&b1, &b2);
        if (err == -EAGAIN)
            *retry = true;
        return err == RENAME_NOOP ? 0 : err;
    }
    // From here on only the insert can fail (the new parent is dead: ENOENT),
    // and it comes before any change that others can see.
    struct inode *ip = src->ip;
    dent_set_same(c->ne, src);
    if (tgt) {
        dirhash_replace_locked(&b2, tgt, c->ne);
    } else if ((err = dirhash_insert_locked(&b2, c->ne))) {
        dirhash_unlock2(&b1, &b2);
        return err;
    }
    refcache_inc(&ip->ref); // the new entry's; the old one's goes with src
    dirhash_remove_locked(&b1, src);
    if (tgt) {
        refcache_dec(&tgt->ip->nlink);
        if (isdir) {
            refcache_dec(&tgt->ip->nlink);  // its "."
            refcache_dec(&n->dir->nlink);   // its ".."
        }
    }
    if (isdir && cross) {
        refcache_dec(&o->dir->nlink);
        refcache_inc(&n->dir->nlink);
        fs_iget(n->dir);
        WRITE_ONCE(ip->parent, n->dir);
        iput_later(c->oldparent, o->dir); // readers may still be following the old ".."
        c->oldparent = NULL;
    }
    dirhash_unlock2(&b1, &b2);
    c->ne = NULL;
    dent_put_later(src);
    if (tgt)
        dent_put_later(tgt);
    inode_touch(o->dir, T_MTIME | T_CTIME);
    if (cross)
        inode_touch(n->dir, T_MTIME | T_CTIME);
    inode_touch(ip, T_CTIME);
    hint_note(&c->rh, &b1, o->dir, h1);
    hint_note(&c->rh, &b2, n->dir, h2);
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
    int err = rename_check(c, e, dirhash_lookup(&n->dir->dir, n->name, n->len, h2), false);
    if ((err < 0 || err == RENAME_NOOP) && dirhash_lookup(&o->dir->dir, o->name, o->len, h1) == e)
        return err == RENAME_NOOP ? 0 : err;
    bool lock = *need_lock || err == RENAME_NEED_LOCK;
    if (!(c->ne = dent_alloc(n->name, n->len)))
        return -ENOMEM;
    c->ne->hash = h2;
    if (lock && !(c->oldparent = iput_later_alloc()))
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
        if (c->oldparent)
            iput_later_cancel(c->oldparent);
        c->ne = NULL;
        c->oldparent = NULL;
        if (retry)
            pause();
    } while (retry);
    hint_run(&c->rh);
    kfree(c);
    return err;
}
