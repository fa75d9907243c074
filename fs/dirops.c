// Namespace operations on one name at a time: lookup, create, mkdir, symlink,
// readlink, link, unlink, rmdir, readdir, stat by path.
//
// Commute (different names, or lookups of anything): these touch the bucket
// of each name they change (dirhash.c), the new inode (private until published),
// per-CPU refcache slots for link counts and references, and the parent's
// per-CPU time slot (itime.c). They decide EEXIST, ENOENT, EISDIR, ENOTDIR,
// EPERM from directory entries alone, without reading or writing the target
// inode, and a failure from a lock-free lookup: an operation that fails writes
// nothing, not even a bucket lock that lookups of other names in that bucket
// would see. rmdir is the exception that must look inside its target:
// emptiness is a property of the child directory.
// See fs/README.md for the full list of what each one reads and writes.
#include "inode.h"
#include "mm/mm.h"
#include "sync/percpu.h"
#include "x86/x86.h"

// ---- directory entries ------------------------------------------------------

struct dent *dent_alloc(const char *name, size_t len)
{
    struct dent *e = kmalloc(offsetof(struct dent, name) + len + 1);
    if (!e)
        return NULL;
    fs_count_dent(1);
    e->next = NULL;
    e->ip = NULL;
    e->bseq = 0;
    e->dying = 0;
    e->namelen = (uint8_t)len;
    memcpy(e->name, name, len);
    e->name[len] = 0;
    return e;
}

void dent_set_inode(struct dent *e, struct inode *ip)
{
    e->ip = ip;
    e->ino = ip->ino;
    e->type = mode_to_dtype(ip->mode);
}

// Another name for old's inode (link, rename): copied from the entry, so the
// inode's line 0, which a truncate writes (the page-tree root), is not read.
void dent_set_same(struct dent *e, const struct dent *old)
{
    e->ip = old->ip;
    e->ino = old->ino;
    e->type = old->type;
}

static void dent_free_cb(struct epoch_cb *cb)
{
    struct dent *e = container_of(cb, struct dent, cb);
    struct inode *ip = e->ip;
    kfree(e);
    fs_count_dent(-1);
    refcache_dec(&ip->ref); // the entry's reference, now that no reader can hold e
}

void dent_put_later(struct dent *e) { epoch_defer(&e->cb, dent_free_cb); }
void dent_free_unpublished(struct dent *e)
{
    kfree(e);
    fs_count_dent(-1);
}

// ---- resize hints -------------------------------------------------------------

void hint_note(struct resize_hint *rh, struct dbucket *b, struct inode *dir, uint32_t hash)
{
    if (!b->hint)
        return;
    int i = rh->dir[0] && rh->dir[0] != dir ? 1 : 0;
    if (rh->dir[i])
        fs_iput(rh->dir[i]);
    fs_iget(dir); // keeps dir alive for the resize after epoch_exit
    rh->dir[i] = dir;
    rh->hash[i] = hash;
    rh->hint[i] = b->hint;
}

void hint_run(struct resize_hint *rh)
{
    for (int i = 0; i < 2; i++) {
        if (rh->dir[i]) {
            dirhash_resize_check(&rh->dir[i]->dir, rh->hash[i], rh->hint[i]);
            fs_iput(rh->dir[i]);
        }
    }
}

// ---- deciding on one name --------------------------------------------------------
//
// A failure is decided from a lock-free lookup, which is its linearisation
// point, so an operation that fails writes nothing: no bucket lock is taken on
// a line that lookups of other names in the bucket read. Only an operation
// that will change the name locks its bucket, finds the entry again and checks
// again (it may have changed since the lookup).

// The last component must be an ordinary name: `special` for ".", ".." and "/".
static int name_ok(const struct nameidata *nd, int special)
{
    if (nd->last != LAST_NORM)
        return special;
    if (nd->len > FS_NAME_MAX)
        return -ENAMETOOLONG;
    return 0;
}

// Lock the bucket of nd's name and find its entry there (NULL: none).
static struct dent *lock_name(struct nameidata *nd, uint32_t hash, struct dbucket *b)
{
    dirhash_lock(&nd->dir->dir, hash, b);
    return dirhash_find_locked(b, nd->name, nd->len, hash);
}

// What an operation may do with name nd, given its entry e (or NULL): 0 to go
// on, or the error. `mode` is the new node's, for creates.
typedef int name_check_fn(const struct nameidata *nd, const struct dent *e, uint32_t mode);

// Check nd's entry as a lock-free lookup finds it: a failure is final.
static int check_unlocked(struct nameidata *nd, uint32_t hash, name_check_fn *check, uint32_t mode)
{
    return check(nd, dirhash_lookup(&nd->dir->dir, nd->name, nd->len, hash), mode);
}

// Lock nd's bucket and check its entry again. 0 with the bucket locked and *ep
// set, or the error, unlocked.
static int lock_checked(struct nameidata *nd, uint32_t hash, name_check_fn *check, uint32_t mode,
                        struct dbucket *b, struct dent **ep)
{
    *ep = lock_name(nd, hash, b);
    int err = check(nd, *ep, mode);
    if (err)
        dirhash_unlock(b);
    return err;
}

// ---- lookup ---------------------------------------------------------------------

// What path names, found inside the caller's epoch section and valid until it
// ends (no reference taken).
static int lookup_in_epoch(struct inode *cwd, const char *path, bool nofollow, struct inode **ipp)
{
    struct nameidata nd;
    int err = namei_parent(cwd, path, &nd);
    return err ? err : namei_last(&nd, nofollow, ipp);
}

int fs_lookup(struct inode *cwd, const char *path, int flags, struct inode **ipp)
{
    struct inode *ip = NULL;
    int err = path_check(path);
    if (err)
        return err;
    epoch_enter();
    err = lookup_in_epoch(cwd, path, flags & FS_NOFOLLOW, &ip);
    if (!err)
        fs_iget(ip);
    epoch_exit();
    if (!err)
        *ipp = ip;
    return err;
}

// Lookup and stat in one epoch section, without a reference on the inode: it
// cannot go before the section ends (its entry's reference is dropped only a
// grace period after the entry is unpublished, inode.c). A reference would put
// a refcache delta on the inode and this CPU in its shard of the active set, so
// every CPU that stats a file would be one that later exact reads of its link
// count and times (this stat's included) must visit. cwd must stay alive too:
// referenced, or the caller's epoch section holds it.
int fs_stat_path(struct inode *cwd, const char *path, int flags, uint32_t mask, struct fs_stat *st)
{
    struct inode *ip = NULL;
    int err = path_check(path);
    if (err)
        return err;
    epoch_enter();
    err = lookup_in_epoch(cwd, path, flags & FS_NOFOLLOW, &ip);
    if (!err)
        err = fs_stat(ip, mask, st);
    epoch_exit();
    return err;
}

// ---- create ---------------------------------------------------------------------

static struct inode *new_inode(struct nameidata *nd, uint32_t mode, const char *target,
                               uint32_t rdev, struct dent **ep, int *err)
{
    struct inode *ip = inode_alloc(mode, err);
    if (!ip)
        return NULL;
    if (S_ISCHR(mode))
        ip->rdev = rdev;
    if (target) {
        size_t tlen = strlen(target);
        if (!(ip->link.target = kmalloc(tlen + 1))) {
            inode_free_unpublished(ip);
            *err = -ENOMEM;
            return NULL;
        }
        memcpy(ip->link.target, target, tlen + 1);
        ip->link.len = (uint32_t)tlen;
    }
    if (S_ISDIR(mode))
        ip->parent = nd->dir; // before publication: ".." must work at once
    if (!(*ep = dent_alloc(nd->name, nd->len))) {
        inode_free_unpublished(ip);
        *err = -ENOMEM;
        return NULL;
    }
    dent_set_inode(*ep, ip);
    return ip;
}

// Publish ip under the locked bucket b. The caller checked the name is free.
static int publish(struct nameidata *nd, struct dbucket *b, struct inode *ip, struct dent *e)
{
    int err = dirhash_insert_locked(b, e);
    if (err)
        return err;
    if (S_ISDIR(ip->mode)) {
        fs_iget(nd->dir);                 // the new ".." pointer's reference
        nlink_add(nd->dir, 1, true);    // the new ".." link
    }
    return 0;
}

static int create_check(const struct nameidata *nd, const struct dent *e, uint32_t mode)
{
    if (e)
        return -EEXIST;
    if (nd->slash && !S_ISDIR(mode))
        return -ENOENT; // "name/" asks for a directory (Linux)
    return 0;
}

// mkdir, symlink and mknod: the name must not exist, whatever it is.
static int create_node(struct nameidata *nd, uint32_t mode, const char *target, uint32_t rdev,
                       struct resize_hint *rh)
{
    int err = name_ok(nd, -EEXIST);
    if (err)
        return err;
    uint32_t hash = nd_hash(nd);
    if ((err = check_unlocked(nd, hash, create_check, mode)))
        return err;
    struct dent *e, *old;
    struct inode *ip = new_inode(nd, mode, target, rdev, &e, &err);
    if (!ip)
        return err;
    e->hash = hash;
    struct dbucket b;
    if (!(err = lock_checked(nd, hash, create_check, mode, &b, &old))) {
        err = publish(nd, &b, ip, e);
        dirhash_unlock(&b);
    }
    if (err) {
        dent_free_unpublished(e);
        inode_free_unpublished(ip);
        return err;
    }
    inode_touch(nd->dir, T_MTIME | T_CTIME | T_DIR);
    hint_note(rh, &b, nd->dir, hash);
    return 0;
}

// open(O_CREAT): an existing file is returned, a symlink followed.
static int create_file(struct nameidata *nd, uint32_t mode, int flags, struct inode **ipp,
                       struct resize_hint *rh)
{
    for (;;) {
        int err = name_ok(nd, (flags & FS_EXCL) ? -EEXIST : -EISDIR);
        if (err)
            return err;
        if (nd->slash)
            return -EISDIR;
        uint32_t hash = nd_hash(nd);
        struct dent *e = dirhash_lookup(&nd->dir->dir, nd->name, nd->len, hash);
        if (e) {
            if (flags & FS_EXCL)
                return -EEXIST;
            if (e->type == DT_LNK && !(flags & FS_NOFOLLOW)) {
                if ((err = namei_follow(nd, dent_ip(e))))
                    return err;
                continue;
            }
            if (e->type == DT_DIR)
                return -EISDIR;
            if (e->type == DT_LNK)
                return -ELOOP; // O_NOFOLLOW on a symlink
            if (ipp) {
                struct inode *ip = dent_ip(e);
                fs_iget(ip);
                *ipp = ip;
            }
            return 0;
        }
        struct inode *ip = new_inode(nd, S_IFREG | (mode & 07777), NULL, 0, &e, &err);
        if (!ip)
            return err;
        e->hash = hash;
        struct dbucket b;
        bool exists = lock_name(nd, hash, &b) != NULL;
        if (!exists && !(err = publish(nd, &b, ip, e)) && ipp) {
            fs_iget(ip);
            *ipp = ip;
        }
        dirhash_unlock(&b);
        if (exists || err) {
            dent_free_unpublished(e);
            inode_free_unpublished(ip);
            if (exists)
                continue; // created meanwhile: decide as if it had been there
            return err;
        }
        inode_touch(nd->dir, T_MTIME | T_CTIME | T_DIR);
        hint_note(rh, &b, nd->dir, hash);
        return 0;
    }
}

int fs_create(struct inode *cwd, const char *path, uint32_t mode, int flags, struct inode **ipp)
{
    struct nameidata nd;
    struct resize_hint rh = {0};
    int err = path_check(path);
    if (err)
        return err;
    epoch_enter();
    err = namei_parent(cwd, path, &nd);
    if (!err)
        err = create_file(&nd, mode, flags, ipp, &rh);
    epoch_exit();
    hint_run(&rh);
    return err;
}

int fs_mkdir(struct inode *cwd, const char *path, uint32_t mode)
{
    struct nameidata nd;
    struct resize_hint rh = {0};
    int err = path_check(path);
    if (err)
        return err;
    epoch_enter();
    err = namei_parent(cwd, path, &nd);
    if (!err)
        err = create_node(&nd, S_IFDIR | (mode & 07777), NULL, 0, &rh);
    epoch_exit();
    hint_run(&rh);
    return err;
}

int fs_symlink(struct inode *cwd, const char *target, const char *path)
{
    struct nameidata nd;
    struct resize_hint rh = {0};
    int err = path_check(path);
    if (err)
        return err;
    size_t tlen = strnlen(target, FS_PATH_MAX);
    if (tlen == 0)
        return -ENOENT; // as Linux
    if (tlen == FS_PATH_MAX)
        return -ENAMETOOLONG;
    epoch_enter();
    err = namei_parent(cwd, path, &nd);
    if (!err)
        err = create_node(&nd, S_IFLNK | 0777, target, 0, &rh);
    epoch_exit();
    hint_run(&rh);
    return err;
}

int fs_mknod(struct inode *cwd, const char *path, uint32_t mode, uint32_t rdev)
{
    struct nameidata nd;
    struct resize_hint rh = {0};
    if (!S_ISCHR(mode) && !S_ISREG(mode) && (mode & S_IFMT) != S_IFSOCK && (mode & S_IFMT) != 0)
        return -EPERM;
    if ((mode & S_IFMT) == 0)
        mode |= S_IFREG; // as Linux: type 0 is a regular file
    int err = path_check(path);
    if (err)
        return err;
    epoch_enter();
    err = namei_parent(cwd, path, &nd);
    if (!err)
        err = create_node(&nd, mode & (S_IFMT | 07777), NULL, rdev, &rh);
    epoch_exit();
    hint_run(&rh);
    return err;
}

// As fs_stat_path, in one epoch section without a reference on the link.
int fs_readlink(struct inode *cwd, const char *path, char *buf, size_t n)
{
    struct inode *ip = NULL;
    if (n == 0)
        return -EINVAL; // as Linux
    int err = path_check(path);
    if (err)
        return err;
    epoch_enter();
    err = lookup_in_epoch(cwd, path, true, &ip);
    if (!err && !S_ISLNK(ip->mode)) {
        err = -EINVAL;
    } else if (!err) {
        err = (int)MIN(n, (size_t)ip->link.len);
        memcpy(buf, ip->link.target, err);
        inode_touch(ip, T_ATIME);
    }
    epoch_exit();
    return err;
}

// ---- link -------------------------------------------------------------------------

// What link may do with the old name's entry e, whatever the new name is.
static int link_check_old(const struct nameidata *o, const struct dent *e)
{
    if (!e)
        return -ENOENT;
    if (e->type == DT_DIR)
        return -EPERM;
    if (o->slash)
        return -ENOTDIR;
    return 0;
}

// What link may do, given the old name's entry e and the new name's t.
static int link_check(const struct nameidata *o, const struct nameidata *n, const struct dent *e,
                      const struct dent *t)
{
    int err = link_check_old(o, e);
    if (err)
        return err;
    if (t)
        return -EEXIST;
    if (n->slash)
        return -ENOENT;
    return 0;
}

// The link itself, with the old name's entry e pinned (linkpin.c) rather than
// its bucket locked: a lookup of the old name reads nothing the link writes.
// -EAGAIN if e turned out to be going. On success *nep is published (NULL).
static int link_pinned(struct nameidata *o, struct nameidata *n, struct dent *e,
                       struct dent **nep, struct resize_hint *rh)
{
    uint32_t h2 = (*nep)->hash;
    struct dbucket b;
    int err = -EAGAIN;
    preempt_disable(); // a remover of e waits for the pin
    if (!link_pin(e))
        goto out;
    // Our pin holds e's remover, who may hold the lock we want: give up then.
    while (!dirhash_trylock(&n->dir->dir, h2, &b)) {
        if (link_pin_dying(e))
            goto unpin;
        pause();
    }
    // e is in place and holds a link, so the count cannot reach zero under us:
    // the increment is a legitimate one.
    err = link_check(o, n, e, dirhash_find_locked(&b, n->name, n->len, h2));
    if (!err) {
        dent_set_same(*nep, e);
        err = dirhash_insert_locked(&b, *nep);
    }
    if (!err) {
        nlink_add(e->ip, 1, false); // links refuse directories
        refcache_inc(&e->ip->ref); // the new entry's
        inode_touch(e->ip, T_CTIME); // its CPU's slot (itime.c)
        *nep = NULL;
    }
    dirhash_unlock(&b);
    if (!err)
        hint_note(rh, &b, n->dir, h2);
unpin:
    link_unpin(e);
out:
    preempt_enable();
    return err;
}

static int do_link(struct nameidata *o, struct nameidata *n, int flags, struct resize_hint *rh)
{
    int err = name_ok(o, -EPERM); // ".", ".." and "/" are directories
    if (err)
        return err;
    while (flags & FS_FOLLOW) {
        struct dent *e = dirhash_lookup(&o->dir->dir, o->name, o->len, nd_hash(o));
        if (!e || e->type != DT_LNK)
            break;
        if ((err = namei_follow(o, dent_ip(e))) || (err = name_ok(o, -EPERM)))
            return err;
    }
    if ((err = name_ok(n, -EEXIST)))
        return err;
    uint32_t h1 = nd_hash(o), h2 = nd_hash(n);
    struct dent *ne = NULL;
    for (;;) {
        // Failures without locks. The new name is looked up only if the old one
        // passes (a failure on the old name reads nothing of the new one's
        // bucket), and then the old name's entry again: it was there throughout
        // (an entry never comes back once removed), so both lookups' answers
        // held when the second was made.
        struct dent *e = dirhash_lookup(&o->dir->dir, o->name, o->len, h1);
        if ((err = link_check_old(o, e)))
            break;
        err = link_check(o, n, e, dirhash_lookup(&n->dir->dir, n->name, n->len, h2));
        if (err && dirhash_lookup(&o->dir->dir, o->name, o->len, h1) == e)
            break;
        if (!ne) {
            if (!(ne = dent_alloc(n->name, n->len))) {
                err = -ENOMEM;
                break;
            }
            ne->hash = h2;
        }
        if ((err = link_pinned(o, n, e, &ne, rh)) != -EAGAIN)
            break;
        link_wait_gone(&o->dir->dir, o->name, o->len, h1, e);
    }
    if (ne)
        dent_free_unpublished(ne);
    if (!err)
        inode_touch(n->dir, T_MTIME | T_CTIME | T_DIR);
    return err;
}

int fs_link(struct inode *oldcwd, const char *oldpath, struct inode *newcwd, const char *newpath,
            int flags)
{
    struct nameidata *o = kmalloc(2 * sizeof *o), *n = o + 1; // 1.5 KiB: not on the stack
    struct resize_hint rh = {0};
    if (!o)
        return -ENOMEM;
    int err = path_check(oldpath);
    if (!err)
        err = path_check(newpath);
    if (!err) {
        epoch_enter();
        err = namei_parent(oldcwd, oldpath, o);
        if (!err)
            err = namei_parent(newcwd, newpath, n);
        if (!err)
            err = do_link(o, n, flags, &rh);
        epoch_exit();
    }
    kfree(o);
    hint_run(&rh);
    return err;
}

// ---- unlink and rmdir ------------------------------------------------------------

static int unlink_check(const struct nameidata *nd, const struct dent *e, uint32_t mode)
{
    (void)mode;
    if (!e)
        return -ENOENT;
    if (e->type == DT_DIR)
        return -EISDIR;
    if (nd->slash)
        return -ENOTDIR;
    return 0;
}

static int do_unlink(struct nameidata *nd, struct resize_hint *rh)
{
    int err = name_ok(nd, -EISDIR); // ".", "..", "/" (Linux)
    if (err)
        return err;
    uint32_t hash = nd_hash(nd);
    struct dbucket b;
    struct dent *e;
    if ((err = check_unlocked(nd, hash, unlink_check, 0)) ||
        (err = lock_checked(nd, hash, unlink_check, 0, &b, &e)))
        return err;
    dent_retire(e); // links of it (linkpin.c)
    dirhash_remove_locked(&b, e);
    dirhash_unlock(&b);
    nlink_add(e->ip, -1, false); // not a directory: unlink_check
    inode_touch(e->ip, T_CTIME); // the entry's reference keeps it for now
    dent_put_later(e); // and with it the entry's reference
    inode_touch(nd->dir, T_MTIME | T_CTIME | T_DIR);
    hint_note(rh, &b, nd->dir, hash);
    return 0;
}

int fs_unlink(struct inode *cwd, const char *path)
{
    struct nameidata nd;
    struct resize_hint rh = {0};
    int err = path_check(path);
    if (err)
        return err;
    epoch_enter();
    err = namei_parent(cwd, path, &nd);
    if (!err)
        err = do_unlink(&nd, &rh);
    epoch_exit();
    hint_run(&rh);
    return err;
}

static int rmdir_check(const struct nameidata *nd, const struct dent *e, uint32_t mode)
{
    (void)nd, (void)mode;
    if (!e)
        return -ENOENT;
    if (e->type != DT_DIR)
        return -ENOTDIR;
    return 0;
}

static int do_rmdir(struct nameidata *nd, struct resize_hint *rh)
{
    if (nd->last == LAST_DOT)
        return -EINVAL;
    if (nd->last == LAST_DOTDOT)
        return -ENOTEMPTY;
    if (nd->last == LAST_ROOT)
        return -EBUSY;
    if (nd->len > FS_NAME_MAX)
        return -ENAMETOOLONG;
    uint32_t hash = nd_hash(nd);
    struct dbucket b;
    struct dent *e;
    int err;
    if ((err = check_unlocked(nd, hash, rmdir_check, 0)) ||
        (err = lock_checked(nd, hash, rmdir_check, 0, &b, &e)))
        return err;
    if (!(err = dirhash_kill(&e->ip->dir)))
        dirhash_remove_locked(&b, e);
    dirhash_unlock(&b);
    if (err)
        return err;
    nlink_add(e->ip, -1, true); // its name
    nlink_add(e->ip, -1, true); // its "."
    nlink_add(nd->dir, -1, true); // its ".."
    dent_put_later(e);
    inode_touch(nd->dir, T_MTIME | T_CTIME | T_DIR);
    hint_note(rh, &b, nd->dir, hash);
    return 0;
}

int fs_rmdir(struct inode *cwd, const char *path)
{
    struct nameidata nd;
    struct resize_hint rh = {0};
    int err = path_check(path);
    if (err)
        return err;
    do {
        epoch_enter();
        err = namei_parent(cwd, path, &nd);
        if (!err)
            err = do_rmdir(&nd, &rh);
        epoch_exit();
        if (err == -EAGAIN)
            pause(); // the directory was being resized or written: look again
    } while (err == -EAGAIN);
    hint_run(&rh);
    return err;
}

// ---- readdir -----------------------------------------------------------------------

#define POS_ENTRIES 2                      // positions 0 and 1 are "." and ".."
#define POS_END (POS_ENTRIES + DENT_KEY_END)
#define READDIR_BATCH 256                  // entries per epoch section

int fs_readdir(struct inode *dir, uint64_t *pos, fs_filldir_t fill, void *arg)
{
    if (!inode_isdir(dir))
        return -ENOTDIR;
    int stopped = 0;
    epoch_enter();
    if (*pos == 0) {
        if ((stopped = fill(arg, ".", 1, dir->ino, DT_DIR)))
            goto out;
        *pos = 1;
    }
    if (*pos == 1) {
        if ((stopped = fill(arg, "..", 2, dir_parent(dir)->ino, DT_DIR)))
            goto out;
        *pos = POS_ENTRIES;
    }
    for (int n = 0; *pos < POS_END; n++) {
        if (n % READDIR_BATCH == READDIR_BATCH - 1) {
            epoch_exit(); // positions are stable, so a long listing lets grace periods pass
            epoch_enter();
        }
        struct dent *e = dirhash_next(&dir->dir, *pos - POS_ENTRIES);
        if (!e) {
            *pos = POS_END;
            break;
        }
        if ((stopped = fill(arg, e->name, e->namelen, e->ino, e->type)))
            break;
        *pos = dent_key(e) + 1 + POS_ENTRIES;
    }
out:
    epoch_exit();
    inode_touch(dir, T_ATIME | T_DIR);
    return stopped ? 1 : 0;
}
