// Small pieces: error strings, pseudo-random numbers, temporary files,
// getauxval, realpath.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "libc.h"

static const char *const errors[] = {
    [0] = "Success", [EPERM] = "Operation not permitted", [ENOENT] = "No such file or directory",
    [ESRCH] = "No such process", [EINTR] = "Interrupted system call", [EIO] = "Input/output error",
    [ENXIO] = "No such device or address", [E2BIG] = "Argument list too long",
    [ENOEXEC] = "Exec format error", [EBADF] = "Bad file descriptor",
    [ECHILD] = "No child processes", [EAGAIN] = "Resource temporarily unavailable",
    [ENOMEM] = "Cannot allocate memory", [EACCES] = "Permission denied",
    [EFAULT] = "Bad address", [ENOTBLK] = "Block device required",
    [EBUSY] = "Device or resource busy", [EEXIST] = "File exists",
    [EXDEV] = "Invalid cross-device link", [ENODEV] = "No such device",
    [ENOTDIR] = "Not a directory", [EISDIR] = "Is a directory", [EINVAL] = "Invalid argument",
    [ENFILE] = "Too many open files in system", [EMFILE] = "Too many open files",
    [ENOTTY] = "Inappropriate ioctl for device", [ETXTBSY] = "Text file busy",
    [EFBIG] = "File too large", [ENOSPC] = "No space left on device",
    [ESPIPE] = "Illegal seek", [EROFS] = "Read-only file system", [EMLINK] = "Too many links",
    [EPIPE] = "Broken pipe", [EDOM] = "Numerical argument out of domain",
    [ERANGE] = "Numerical result out of range", [EDEADLK] = "Resource deadlock avoided",
    [ENAMETOOLONG] = "File name too long", [ENOLCK] = "No locks available",
    [ENOSYS] = "Function not implemented", [ENOTEMPTY] = "Directory not empty",
    [ELOOP] = "Too many levels of symbolic links", [ENOMSG] = "No message of desired type",
    [EOVERFLOW] = "Value too large for defined data type", [EILSEQ] = "Invalid or incomplete multibyte or wide character",
    [ENOTSOCK] = "Socket operation on non-socket", [EOPNOTSUPP] = "Operation not supported",
    [EADDRINUSE] = "Address already in use", [ECONNREFUSED] = "Connection refused",
    [ETIMEDOUT] = "Connection timed out", [ECONNRESET] = "Connection reset by peer",
    [ECANCELED] = "Operation canceled",
};

int strerror_r(int err, char *buf, size_t len)
{
    const char *s = err >= 0 && err < (int)(sizeof errors / sizeof *errors) ? errors[err] : NULL;
    if (!s) {
        snprintf(buf, len, "Unknown error %d", err);
        return EINVAL;
    }
    if (strlcpy(buf, s, len) >= len)
        return ERANGE;
    return 0;
}

char *strerror(int err)
{
    if (err >= 0 && err < (int)(sizeof errors / sizeof *errors) && errors[err])
        return (char *)errors[err];
    static _Thread_local char buf[32];
    snprintf(buf, sizeof buf, "Unknown error %d", err);
    return buf;
}

// rand: a 64-bit LCG per process (C requires no thread safety; we keep it
// race-free with atomics). rand_r uses the caller's 32-bit state.
static uint64_t rand_state = 1;

void srand(unsigned seed) { __atomic_store_n(&rand_state, seed - 1ULL, __ATOMIC_RELAXED); }

int rand(void)
{
    uint64_t s = __atomic_load_n(&rand_state, __ATOMIC_RELAXED), n;
    do
        n = s * 6364136223846793005ULL + 1442695040888963407ULL;
    while (!__atomic_compare_exchange_n(&rand_state, &s, n, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return (int)(n >> 33);
}

int rand_r(unsigned *seed)
{
    unsigned x = *seed * 1103515245u + 12345u;
    *seed = x;
    // Temper: the low bits of an LCG are weak.
    x ^= x >> 11;
    x ^= (x << 7) & 0x9d2c5680u;
    x ^= (x << 15) & 0xefc60000u;
    return (int)(x >> 1);
}

long random(void) { return rand(); }
void srandom(unsigned seed) { srand(seed); }

static int fill_random(char *x, size_t n)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char r[16];
    if (n > sizeof r || __sys(__NR_getrandom, r, n, 0) != (long)n) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t v = (uint64_t)ts.tv_nsec ^ ((uint64_t)__self()->tid << 32) ^ (uint64_t)(uintptr_t)x;
        for (size_t i = 0; i < sizeof r; i++, v = v * 6364136223846793005ULL + 1)
            r[i] = (unsigned char)(v >> 56);
    }
    for (size_t i = 0; i < n; i++)
        x[i] = alphabet[r[i] % 62];
    return 0;
}

int mkstemp(char *tmpl)
{
    size_t len = strlen(tmpl);
    if (len < 6 || memcmp(tmpl + len - 6, "XXXXXX", 6)) {
        errno = EINVAL;
        return -1;
    }
    for (int tries = 0; tries < 100; tries++) {
        fill_random(tmpl + len - 6, 6);
        int fd = open(tmpl, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    memcpy(tmpl + len - 6, "XXXXXX", 6);
    errno = EEXIST;
    return -1;
}

char *mkdtemp(char *tmpl)
{
    size_t len = strlen(tmpl);
    if (len < 6 || memcmp(tmpl + len - 6, "XXXXXX", 6)) {
        errno = EINVAL;
        return NULL;
    }
    for (int tries = 0; tries < 100; tries++) {
        fill_random(tmpl + len - 6, 6);
        if (mkdir(tmpl, 0700) == 0)
            return tmpl;
        if (errno != EEXIST)
            return NULL;
    }
    memcpy(tmpl + len - 6, "XXXXXX", 6);
    return NULL;
}

unsigned long getauxval(unsigned long type)
{
    for (unsigned long *a = (unsigned long *)__auxv_ptr; a && a[0] != AT_NULL; a += 2)
        if (a[0] == type)
            return a[1];
    errno = ENOENT;
    return 0;
}

// realpath: resolves ".", ".." and symbolic links component by component.
char *realpath(const char *restrict path, char *restrict resolved)
{
    char out[PATH_MAX], rest[PATH_MAX];
    if (!path) {
        errno = EINVAL;
        return NULL;
    }
    if (strlcpy(rest, path, sizeof rest) >= sizeof rest) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    size_t n = 0;
    if (rest[0] != '/') {
        if (!getcwd(out, sizeof out))
            return NULL;
        n = strlen(out);
        if (n == 1)
            n = 0;
    }
    int links = 0;
    char *p = rest;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        char *end = strchrnul(p, '/');
        size_t len = (size_t)(end - p);
        if (len == 1 && p[0] == '.') {
            p = end;
            continue;
        }
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            while (n > 0 && out[--n] != '/')
                ;
            p = end;
            continue;
        }
        if (n + 1 + len >= sizeof out) {
            errno = ENAMETOOLONG;
            return NULL;
        }
        out[n] = '/';
        memcpy(out + n + 1, p, len);
        out[n + 1 + len] = 0;
        char link[PATH_MAX];
        ssize_t ll = readlink(out, link, sizeof link - 1);
        if (ll >= 0) {
            if (++links > 40) {
                errno = ELOOP;
                return NULL;
            }
            link[ll] = 0;
            size_t tail = strlen(end);
            if ((size_t)ll + tail + 1 >= sizeof rest) {
                errno = ENAMETOOLONG;
                return NULL;
            }
            memmove(rest + ll, end, tail + 1);
            memcpy(rest, link, (size_t)ll);
            p = rest;
            if (link[0] == '/')
                n = 0;
            continue;
        }
        if (errno != EINVAL)
            return NULL;  // ENOENT and friends; EINVAL means "not a link"
        n += 1 + len;
        p = end;
    }
    if (n == 0)
        out[n++] = '/';
    out[n] = 0;
    if (!resolved)
        return strdup(out);
    memcpy(resolved, out, n + 1);
    return resolved;
}
