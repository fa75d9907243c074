// realpath: canonical absolute path names.
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Resolves ".", ".." and symbolic links component by component.
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
