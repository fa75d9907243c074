// Directory streams: a buffer of getdents64 records per DIR. Like fopen,
// opendir asks for any free descriptor (O_ANYFD; see stdio.c).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libc.h"

struct _DIR {
    int fd;
    size_t pos, len;
    struct lock lock;
    struct dirent ent;
    char buf[8192];
};

// The kernel's record: inode, offset, record length, type, name.
struct linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

DIR *fdopendir(int fd)
{
    DIR *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->fd = fd;
    return d;
}

DIR *opendir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_ANYFD);
    if (fd < 0)
        return NULL;
    DIR *d = fdopendir(fd);
    if (!d)
        close(fd);
    return d;
}

struct dirent *readdir(DIR *d)
{
    __lock(&d->lock);
    if (d->pos >= d->len) {
        long n = __sys(__NR_getdents64, d->fd, d->buf, sizeof d->buf);
        if (n <= 0) {
            if (n < 0)
                errno = (int)-n;
            __unlock(&d->lock);
            return NULL;
        }
        d->len = (size_t)n;
        d->pos = 0;
    }
    struct linux_dirent64 *k = (struct linux_dirent64 *)(d->buf + d->pos);
    d->pos += k->d_reclen;
    d->ent.d_ino = k->d_ino;
    d->ent.d_off = k->d_off;
    d->ent.d_reclen = sizeof d->ent;
    d->ent.d_type = k->d_type;
    strlcpy(d->ent.d_name, k->d_name, sizeof d->ent.d_name);
    __unlock(&d->lock);
    return &d->ent;
}

int closedir(DIR *d)
{
    int r = close(d->fd);
    free(d);
    return r;
}

void rewinddir(DIR *d)
{
    __lock(&d->lock);
    lseek(d->fd, 0, SEEK_SET);
    d->pos = d->len = 0;
    __unlock(&d->lock);
}

int dirfd(DIR *d) { return d->fd; }
