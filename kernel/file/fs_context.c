// Current directory and umask of processes, and resolving paths from them.
//
// Commute: path lookups relative to the cwd, from any threads of a process,
// with each other: a lookup reads the cwd pointer inside an epoch section and
// takes a reference on the inode (a refcache count: per-CPU, no shared write).
// chdir replaces the pointer and drops the old directory's reference only a
// grace period later, so a lookup that saw the old pointer can still take its
// reference. The holder count is on its own line, written only by fork, clone
// and exit.
#include "file/fs_context.h"
#include "file/fdtable.h"
#include "file/file.h"
#include "fs.h"
#include "mm/mm.h"
#include "proc/proc.h"
#include "sync/atomic.h"
#include "uapi/errno.h"

struct fs_context *fsctx_new(void)
{
    struct fs_context *c = kzalloc(sizeof *c);
    if (!c)
        return NULL;
    c->cwd = fs_root();
    fs_iget(c->cwd);
    c->umask = 022;
    c->users = 1;
    return c;
}

struct fs_context *fsctx_copy(struct fs_context *src)
{
    struct fs_context *c = kzalloc(sizeof *c);
    if (!c)
        return NULL;
    epoch_enter();
    c->cwd = READ_ONCE(src->cwd);
    fs_iget(c->cwd);
    epoch_exit();
    c->umask = READ_ONCE(src->umask);
    c->users = 1;
    return c;
}

void fsctx_hold(struct fs_context *c) { add_fetch(&c->users, 1); }

void fsctx_release(struct fs_context *c)
{
    if (sub_fetch(&c->users, 1) != 0)
        return;
    fs_iput(c->cwd);
    kfree(c);
}

static struct fs_context *current_ctx(void)
{
    struct proc *p = proc_current();
    return p ? p->fsc : NULL;
}

struct inode *fsctx_cwd(void)
{
    struct fs_context *c = current_ctx();
    epoch_enter();
    struct inode *ip = c ? READ_ONCE(c->cwd) : fs_root();
    fs_iget(ip);
    epoch_exit();
    return ip;
}

struct cwd_put {
    struct epoch_cb cb;
    struct inode *ip;
};

static void cwd_put_cb(struct epoch_cb *cb)
{
    struct cwd_put *d = container_of(cb, struct cwd_put, cb);
    fs_iput(d->ip);
    kfree(d);
}

void fsctx_set_cwd(struct inode *dir)
{
    struct fs_context *c = current_ctx();
    struct cwd_put *d = c ? kmalloc(sizeof *d) : NULL;
    if (!d) { // no context, or no memory for the deferred drop: wait instead
        if (!c) {
            fs_iput(dir);
            return;
        }
        struct inode *old = xchg(&c->cwd, dir);
        epoch_synchronize();
        fs_iput(old);
        return;
    }
    d->ip = xchg(&c->cwd, dir);
    epoch_defer(&d->cb, cwd_put_cb); // lookups may have just read the old pointer
}

bool fsctx_cwd_is(struct inode *ip)
{
    struct fs_context *c = current_ctx();
    return ip && (c ? READ_ONCE(c->cwd) : fs_root()) == ip;
}

uint32_t fsctx_umask(void)
{
    struct fs_context *c = current_ctx();
    return c ? READ_ONCE(c->umask) : 022;
}

uint32_t fsctx_set_umask(uint32_t mask)
{
    struct fs_context *c = current_ctx();
    return c ? __atomic_exchange_n(&c->umask, mask & 0777, __ATOMIC_RELAXED) : 022;
}

int dirfd_inode(int dirfd, const char *kpath, struct inode **dir)
{
    if (kpath[0] == 0)
        return -ENOENT; // before dirfd is looked at (Linux)
    if (kpath[0] == '/') {
        *dir = fs_root();
        fs_iget(*dir);
        return 0;
    }
    if (dirfd == AT_FDCWD) {
        *dir = fsctx_cwd();
        return 0;
    }
    struct fdtable *t = fdt_current();
    if (!t)
        return -EBADF;
    struct fd_ref r = fd_get(t, dirfd);
    if (!r.f)
        return -EBADF;
    int err = 0;
    if (!r.f->ip || !S_ISDIR(fs_mode(r.f->ip)))
        err = -ENOTDIR;
    else
        fs_iget(*dir = r.f->ip);
    fd_put(r);
    return err;
}

// Without references where it can: a path from the root or the cwd is resolved
// and stat'ed inside one epoch section, which holds both (the root never goes;
// chdir drops the old cwd a grace period later), and fs_stat_path takes none
// on what it finds. So stats by path from many CPUs write nothing, and put no
// CPU in the active-set shards of the root, the cwd or the file. From dirfd,
// the directory (or, with an empty path, the file) is referenced as usual.
int path_stat_at(int dirfd, const char *kpath, int flags, uint32_t mask, struct fs_stat *st)
{
    int fsflags = (flags & AT_SYMLINK_NOFOLLOW) ? FS_NOFOLLOW : 0;
    if (kpath[0] == 0 && !(flags & AT_EMPTY_PATH))
        return -ENOENT;
    struct inode *dir;
    int err;
    if (dirfd != AT_FDCWD && kpath[0] != '/') {
        if (kpath[0] == 0) {
            if (!(err = path_lookup_at(dirfd, kpath, flags, &dir))) {
                err = fs_stat(dir, mask, st);
                fs_iput(dir);
            }
        } else if (!(err = dirfd_inode(dirfd, kpath, &dir))) {
            err = fs_stat_path(dir, kpath, fsflags, mask, st);
            fs_iput(dir);
        }
        return err;
    }
    struct fs_context *c = current_ctx();
    epoch_enter();
    dir = kpath[0] == '/' || !c ? fs_root() : READ_ONCE(c->cwd);
    err = kpath[0] ? fs_stat_path(dir, kpath, fsflags, mask, st) : fs_stat(dir, mask, st);
    epoch_exit();
    return err;
}

int path_lookup_at(int dirfd, const char *kpath, int flags, struct inode **out)
{
    if (kpath[0] == 0 && (flags & AT_EMPTY_PATH)) {
        if (dirfd == AT_FDCWD) {
            *out = fsctx_cwd();
            return 0;
        }
        struct fdtable *t = fdt_current();
        struct fd_ref r = t ? fd_get(t, dirfd) : (struct fd_ref){0};
        if (!r.f)
            return -EBADF;
        int err = r.f->ip ? 0 : -ENOENT; // pipes have no inode to name here
        if (!err)
            fs_iget(*out = r.f->ip);
        fd_put(r);
        return err;
    }
    struct inode *dir;
    int err = dirfd_inode(dirfd, kpath, &dir);
    if (err)
        return err;
    err = fs_lookup(dir, kpath, (flags & AT_SYMLINK_NOFOLLOW) ? FS_NOFOLLOW : 0, out);
    fs_iput(dir);
    return err;
}
