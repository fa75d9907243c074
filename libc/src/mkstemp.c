// Unique temporary names: mkstemp, mkdtemp.
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "libc.h"

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

