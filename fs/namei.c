// Path resolution: from a starting directory (or the root, for absolute paths)
// through ".", "..", repeated slashes and symlinks, to the directory holding the
// last component and that component.
//
// Commute: every resolution with every other one, and with any update of names
// it does not pass through. Resolution runs inside one epoch section and writes
// nothing: it reads directory entries (dirhash_lookup), each directory's line 0
// (table pointer, parent) and symlink targets. No reference counts are taken on
// the way; a caller that keeps an inode after epoch_exit takes one reference at
// the end (refcache: per-CPU, so no shared line either).
//
// Symlinks: a symlink met in the middle pushes the rest of the current string
// and continues with the target; at most FS_SYMLOOP_MAX are followed in one
// resolution (-ELOOP), as in Linux. A trailing slash means "must be a
// directory" and forces a final symlink to be followed.
#include "inode.h"

static bool is_dot(const char *s, size_t n) { return n == 1 && s[0] == '.'; }
static bool is_dotdot(const char *s, size_t n) { return n == 2 && s[0] == '.' && s[1] == '.'; }

int path_check(const char *path)
{
    size_t n = strnlen(path, FS_PATH_MAX);
    if (n == 0)
        return -ENOENT;
    if (n == FS_PATH_MAX)
        return -ENAMETOOLONG;
    return 0;
}

struct inode *dir_parent(struct inode *dir) { return READ_ONCE(dir->parent); }

// Begin walking the string [p, end) relative to nd->dir.
static void start_string(struct nameidata *nd, const char *p, const char *end)
{
    if (p < end && *p == '/')
        nd->dir = fs_root_inode;
    nd->cur.p = p;
    nd->cur.end = end;
}

static void skip_slashes(struct nd_frame *f)
{
    while (f->p < f->end && *f->p == '/')
        f->p++;
}

// Walk components until the last one, leaving it in nd->name/len/last/slash.
static int walk(struct nameidata *nd)
{
    for (;;) {
        skip_slashes(&nd->cur);
        if (nd->cur.p == nd->cur.end) {
            if (nd->nsaved > 0) {
                nd->cur = nd->saved[--nd->nsaved];
                continue;
            }
            // Nothing after the slashes: the path (or a final symlink) was "/".
            nd->last = LAST_ROOT;
            nd->name = ".";
            nd->len = 0;
            nd->slash = true;
            return 0;
        }
        const char *name = nd->cur.p, *q = name;
        while (q < nd->cur.end && *q != '/')
            q++;
        size_t len = q - name;
        nd->cur.p = q;
        skip_slashes(&nd->cur);
        // Pushed strings are never empty, so this is the last component iff the
        // current string has nothing after it and nothing was pushed.
        if (nd->cur.p == nd->cur.end && nd->nsaved == 0) {
            nd->name = name;
            nd->len = len;
            nd->slash = q != nd->cur.end || nd->pending_slash;
            nd->last = is_dot(name, len) ? LAST_DOT : is_dotdot(name, len) ? LAST_DOTDOT : LAST_NORM;
            return 0;
        }
        if (is_dot(name, len))
            continue;
        if (is_dotdot(name, len)) {
            nd->dir = dir_parent(nd->dir);
            continue;
        }
        if (len > FS_NAME_MAX)
            return -ENAMETOOLONG;
        struct dirhash *dh = &nd->dir->dir;
        struct dent *e = dirhash_lookup(dh, name, len, dirhash_hash(dh, name, len));
        if (!e)
            return -ENOENT;
        if (e->type == DT_LNK) {
            if (++nd->nlinks > FS_SYMLOOP_MAX)
                return -ELOOP;
            if (nd->cur.p < nd->cur.end)
                nd->saved[nd->nsaved++] = nd->cur; // at most FS_SYMLOOP_MAX of them
            struct inode *l = dent_ip(e);
            if (l->link.len == 0)
                return -ENOENT;
            start_string(nd, l->link.target, l->link.target + l->link.len);
            continue;
        }
        if (e->type != DT_DIR)
            return -ENOTDIR;
        nd->dir = dent_ip(e);
    }
}

int namei_parent(struct inode *cwd, const char *path, struct nameidata *nd)
{
    assert(epoch_in_reader());
    nd->dir = cwd ? cwd : fs_root_inode;
    if (path[0] != '/' && !inode_isdir(nd->dir))
        return -ENOTDIR; // an absolute path ignores cwd, as Linux ignores dirfd
    nd->nsaved = 0;
    nd->nlinks = 0;
    nd->pending_slash = false;
    start_string(nd, path, path + strlen(path));
    return walk(nd);
}

int namei_follow(struct nameidata *nd, struct inode *link)
{
    if (++nd->nlinks > FS_SYMLOOP_MAX)
        return -ELOOP;
    if (link->link.len == 0)
        return -ENOENT;
    // The link was the last component: the target's last component inherits a
    // trailing slash ("link/" must name a directory).
    nd->pending_slash |= nd->slash;
    start_string(nd, link->link.target, link->link.target + link->link.len);
    return walk(nd);
}

int namei_last(struct nameidata *nd, bool nofollow, struct inode **ipp)
{
    for (;;) {
        struct inode *ip;
        if (nd->last == LAST_DOTDOT) {
            ip = dir_parent(nd->dir);
        } else if (nd->last != LAST_NORM) {
            ip = nd->dir;
        } else {
            if (nd->len > FS_NAME_MAX)
                return -ENAMETOOLONG;
            struct dirhash *dh = &nd->dir->dir;
            struct dent *e = dirhash_lookup(dh, nd->name, nd->len, dirhash_hash(dh, nd->name, nd->len));
            if (!e)
                return -ENOENT;
            if (e->type == DT_LNK && (!nofollow || nd->slash)) {
                int err = namei_follow(nd, dent_ip(e));
                if (err)
                    return err;
                continue;
            }
            if (nd->slash && e->type != DT_DIR)
                return -ENOTDIR;
            ip = dent_ip(e);
        }
        *ipp = ip;
        return 0;
    }
}
