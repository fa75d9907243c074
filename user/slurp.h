// slurp: read a small file (a /proc file) whole, for ps and the procfs suite
// (tests/user/procfs.c). Plain POSIX, so it builds with any C library.
#pragma once
#include <fcntl.h>
#include <stddef.h>
#include <unistd.h>

// path read whole into buf (n bytes, NUL-terminated, the rest cut); its
// length, or -1 if it cannot be opened.
static inline long slurp(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    size_t len = 0;
    long r;
    while (len < n - 1 && (r = read(fd, buf + len, n - 1 - len)) > 0)
        len += (size_t)r;
    close(fd);
    buf[len] = 0;
    return (long)len;
}
