// Initial contents: unpack the boot loader's cpio "newc" archive (the format
// `cpio -o -H newc` writes) into ScaleFS at boot.
//
// Each member is a 110-byte header of ASCII hex fields ("070701", then inode,
// mode, uid, gid, nlink, mtime, file size, dev major/minor, rdev major/minor,
// name size, check), the NUL-terminated name padded to 4 bytes, and the data
// padded to 4 bytes. "TRAILER!!!" ends the archive. Directories, regular files
// (hard links included: newc stores the data once, with the last link) and
// symlinks (data = target) are created; other types are skipped with a message.
// Runs once on one CPU before anything else uses the file system.
#include "bootinfo.h"
#include "inode.h"
#include "mm/mm.h"

#define HDR_LEN 110
#define A4(x) (((x) + 3) & ~(size_t)3)

struct cpio_hdr {
    uint32_t ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor;
    uint32_t rdevmajor, rdevminor, namesize, check;
};

static bool hex8(const char *s, uint32_t *v)
{
    uint32_t x = 0;
    for (int i = 0; i < 8; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return false;
        x = x << 4 | (uint32_t)d;
    }
    *v = x;
    return true;
}

static bool parse_hdr(const char *p, struct cpio_hdr *h)
{
    if (memcmp(p, "070701", 6) != 0 && memcmp(p, "070702", 6) != 0)
        return false;
    uint32_t *f = &h->ino;
    for (int i = 0; i < 13; i++)
        if (!hex8(p + 6 + 8 * i, &f[i]))
            return false;
    return true;
}

// Files with more than one link, by archive inode, to link the later names.
struct hardlink {
    uint32_t ino, devmajor, devminor;
    char *path;
};
struct unpack {
    struct inode *dir;
    struct hardlink *hl;
    size_t nhl, cap;
    int nfiles, ndirs, nlinks;
};

static struct hardlink *hl_find(struct unpack *u, const struct cpio_hdr *h)
{
    for (size_t i = 0; i < u->nhl; i++)
        if (u->hl[i].ino == h->ino && u->hl[i].devmajor == h->devmajor &&
            u->hl[i].devminor == h->devminor)
            return &u->hl[i];
    return NULL;
}

static int hl_add(struct unpack *u, const struct cpio_hdr *h, const char *path)
{
    if (u->nhl == u->cap) {
        size_t cap = u->cap ? 2 * u->cap : 16;
        struct hardlink *n = kmalloc(cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        if (u->hl)
            memcpy(n, u->hl, u->nhl * sizeof *n);
        kfree(u->hl);
        u->hl = n;
        u->cap = cap;
    }
    size_t len = strlen(path);
    char *copy = kmalloc(len + 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, path, len + 1);
    u->hl[u->nhl++] = (struct hardlink){h->ino, h->devmajor, h->devminor, copy};
    return 0;
}

static void set_times_and_perm(struct inode *ip, const struct cpio_hdr *h)
{
    // Boot-time only: nobody else sees the file system yet.
    ip->mode = (ip->mode & S_IFMT) | (h->mode & 07777);
    fs_set_times(ip, FS_TIME_OMIT, (uint64_t)h->mtime * 1000000000ULL);
}

static int unpack_file(struct unpack *u, const struct cpio_hdr *h, const char *name,
                       const char *data)
{
    struct inode *ip;
    int err;
    struct hardlink *l = h->nlink > 1 ? hl_find(u, h) : NULL;
    if (l) {
        if ((err = fs_link(u->dir, l->path, u->dir, name, 0)))
            return err;
        if ((err = fs_lookup(u->dir, name, FS_NOFOLLOW, &ip)))
            return err;
    } else {
        if ((err = fs_create(u->dir, name, h->mode, FS_EXCL, &ip)))
            return err;
        if (h->nlink > 1 && (err = hl_add(u, h, name))) {
            fs_iput(ip);
            return err;
        }
    }
    int64_t n = h->filesize ? fs_write(ip, data, h->filesize, 0) : 0;
    if (n >= 0 && n != h->filesize)
        n = -ENOMEM;
    set_times_and_perm(ip, h);
    fs_iput(ip);
    u->nfiles++;
    return n < 0 ? (int)n : 0;
}

static int unpack_dir(struct unpack *u, const struct cpio_hdr *h, const char *name)
{
    struct inode *ip;
    int err = fs_mkdir(u->dir, name, h->mode);
    if (err == -EEXIST && fs_unlink(u->dir, name) == 0) // a non-directory was there
        err = fs_mkdir(u->dir, name, h->mode);
    if (err && err != -EEXIST)
        return err;
    if ((err = fs_lookup(u->dir, name, 0, &ip)))
        return err;
    if (!S_ISDIR(ip->mode))
        err = -ENOTDIR;
    else
        set_times_and_perm(ip, h);
    fs_iput(ip);
    u->ndirs++;
    return err;
}

static int unpack_symlink(struct unpack *u, const struct cpio_hdr *h, const char *name,
                          const char *data)
{
    if (h->filesize == 0 || h->filesize >= FS_PATH_MAX)
        return -EINVAL;
    char *target = kmalloc(h->filesize + 1);
    if (!target)
        return -ENOMEM;
    memcpy(target, data, h->filesize);
    target[h->filesize] = 0;
    int err = fs_symlink(u->dir, target, name);
    kfree(target);
    u->nlinks++;
    return err;
}

static int unpack_one(struct unpack *u, const struct cpio_hdr *h, const char *name, const char *data)
{
    while (name[0] == '.' && name[1] == '/') // "./etc/x" from `find .`
        name += 2;
    while (name[0] == '/')
        name++;
    if (name[0] == 0 || strcmp(name, ".") == 0)
        return 0; // the root itself
    if (!S_ISDIR(h->mode)) {
        // The archive replaces what is there (as Linux's initramfs does); an
        // existing directory stays and makes this entry fail (EISDIR).
        int err = fs_unlink(u->dir, name);
        if (err && err != -ENOENT)
            return err;
    }
    switch (h->mode & S_IFMT) {
    case S_IFREG:
        return unpack_file(u, h, name, data);
    case S_IFDIR:
        return unpack_dir(u, h, name);
    case S_IFLNK:
        return unpack_symlink(u, h, name, data);
    default:
        kprintf("fs: initrd: skipping %s (mode %o): not a file, directory or symlink\n", name,
                h->mode);
        return 0;
    }
}

int fs_unpack_cpio(struct inode *dir, const void *archive, size_t len)
{
    const char *base = archive;
    struct unpack u = {.dir = dir};
    int err = 0, first = 0;
    size_t off = 0;
    if (len == 0)
        return 0; // an empty archive: nothing to unpack
    for (;;) {
        struct cpio_hdr h;
        if (off >= len || len - off < HDR_LEN || !parse_hdr(base + off, &h)) {
            err = -EINVAL;
            break;
        }
        const char *name = base + off + HDR_LEN;
        size_t data_off = A4(off + HDR_LEN + h.namesize);
        if (h.namesize == 0 || h.namesize > len - off - HDR_LEN || name[h.namesize - 1] != 0 ||
            data_off > len || h.filesize > len - data_off) {
            err = -EINVAL;
            break;
        }
        if (strcmp(name, "TRAILER!!!") == 0)
            break;
        int e = unpack_one(&u, &h, name, base + data_off);
        if (e) {
            kprintf("fs: initrd: %s: error %d\n", name, e);
            if (!first)
                first = e;
        }
        off = A4(data_off + h.filesize);
    }
    if (err)
        kprintf("fs: initrd: malformed archive at offset %zu\n", off);
    for (size_t i = 0; i < u.nhl; i++)
        kfree(u.hl[i].path);
    kfree(u.hl);
    kprintf("fs: initrd: %d files, %d directories, %d symlinks\n", u.nfiles, u.ndirs, u.nlinks);
    return err ? err : first;
}

void fs_boot(const struct bootinfo *bi)
{
    int err = fs_init();
    if (err) {
        kprintf("fs: cannot create the root directory (%d)\n", err);
        return;
    }
    if (!bi->initrd || !bi->initrd_size) {
        kprintf("fs: no initrd: empty root\n");
        return;
    }
    fs_unpack_cpio(fs_root(), P2V(bi->initrd), bi->initrd_size);
}
