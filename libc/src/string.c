// String and memory functions. memcpy/memset use the string instructions,
// which current x86-64 cores (and QEMU's TCG) run fast for any size.
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
    void *ret = d;
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    return ret;
}

void *memmove(void *d, const void *s, size_t n)
{
    if ((uintptr_t)d - (uintptr_t)s >= n)  // no overlap, or d below s
        return memcpy(d, s, n);
    // Copy backwards: d overlaps the tail of s.
    void *ret = d;
    const char *sp = (const char *)s + n - 1;
    char *dp = (char *)d + n - 1;
    __asm__ volatile("std; rep movsb; cld" : "+D"(dp), "+S"(sp), "+c"(n) : : "memory");
    return ret;
}

void *memset(void *d, int c, size_t n)
{
    void *ret = d;
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
    return ret;
}

void bzero(void *d, size_t n) { memset(d, 0, n); }

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *p = a, *q = b;
    for (; n; n--, p++, q++)
        if (*p != *q)
            return *p - *q;
    return 0;
}

void *memchr(const void *s, int c, size_t n)
{
    const unsigned char *p = s;
    for (; n; n--, p++)
        if (*p == (unsigned char)c)
            return (void *)p;
    return NULL;
}

void *memrchr(const void *s, int c, size_t n)
{
    const unsigned char *p = s;
    while (n--)
        if (p[n] == (unsigned char)c)
            return (void *)(p + n);
    return NULL;
}

void *memmem(const void *h, size_t hn, const void *n, size_t nn)
{
    if (nn == 0)
        return (void *)h;
    const char *p = h;
    for (; hn >= nn; p++, hn--)
        if (*p == *(const char *)n && memcmp(p, n, nn) == 0)
            return (void *)p;
    return NULL;
}

void *mempcpy(void *restrict d, const void *restrict s, size_t n)
{
    return (char *)memcpy(d, s, n) + n;
}

void *memccpy(void *restrict d, const void *restrict s, int c, size_t n)
{
    unsigned char *dp = d;
    const unsigned char *sp = s;
    for (; n; n--) {
        if ((*dp++ = *sp++) == (unsigned char)c)
            return dp;
    }
    return NULL;
}

size_t strlen(const char *s)
{
    const char *p = s;
    while (*p)
        p++;
    return (size_t)(p - s);
}

size_t strnlen(const char *s, size_t max)
{
    const char *p = memchr(s, 0, max);
    return p ? (size_t)(p - s) : max;
}

char *stpcpy(char *restrict d, const char *restrict s)
{
    while ((*d = *s++))
        d++;
    return d;
}

char *strcpy(char *restrict d, const char *restrict s)
{
    stpcpy(d, s);
    return d;
}

char *stpncpy(char *restrict d, const char *restrict s, size_t n)
{
    size_t k = strnlen(s, n);
    memcpy(d, s, k);
    memset(d + k, 0, n - k);
    return d + k;
}

char *strncpy(char *restrict d, const char *restrict s, size_t n)
{
    stpncpy(d, s, n);
    return d;
}

size_t strlcpy(char *restrict d, const char *restrict s, size_t n)
{
    size_t len = strlen(s);
    if (n) {
        size_t k = len < n - 1 ? len : n - 1;
        memcpy(d, s, k);
        d[k] = 0;
    }
    return len;
}

size_t strlcat(char *restrict d, const char *restrict s, size_t n)
{
    size_t dl = strnlen(d, n);
    if (dl == n)
        return n + strlen(s);
    return dl + strlcpy(d + dl, s, n - dl);
}

char *strcat(char *restrict d, const char *restrict s)
{
    strcpy(d + strlen(d), s);
    return d;
}

char *strncat(char *restrict d, const char *restrict s, size_t n)
{
    char *p = d + strlen(d);
    size_t k = strnlen(s, n);
    memcpy(p, s, k);
    p[k] = 0;
    return d;
}

int strcmp(const char *a, const char *b)
{
    for (; *a && *a == *b; a++, b++)
        ;
    return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (; n; n--, a++, b++) {
        if (*a != *b)
            return (unsigned char)*a - (unsigned char)*b;
        if (!*a)
            return 0;
    }
    return 0;
}

int strcoll(const char *a, const char *b) { return strcmp(a, b); }

size_t strxfrm(char *restrict d, const char *restrict s, size_t n)
{
    size_t len = strlen(s);
    if (len < n)
        memcpy(d, s, len + 1);
    return len;
}

int strcasecmp(const char *a, const char *b)
{
    for (; *a && tolower((unsigned char)*a) == tolower((unsigned char)*b); a++, b++)
        ;
    return tolower((unsigned char)*a) - tolower((unsigned char)*b);
}

int strncasecmp(const char *a, const char *b, size_t n)
{
    for (; n; n--, a++, b++) {
        int x = tolower((unsigned char)*a), y = tolower((unsigned char)*b);
        if (x != y)
            return x - y;
        if (!x)
            return 0;
    }
    return 0;
}

char *strchrnul(const char *s, int c)
{
    for (; *s && *s != (char)c; s++)
        ;
    return (char *)s;
}

char *strchr(const char *s, int c)
{
    char *p = strchrnul(s, c);
    return *p == (char)c ? p : NULL;
}

char *strrchr(const char *s, int c)
{
    return memrchr(s, c, strlen(s) + 1);
}

char *strstr(const char *h, const char *n)
{
    return memmem(h, strlen(h), n, strlen(n));
}

char *strcasestr(const char *h, const char *n)
{
    size_t nn = strlen(n);
    for (; *h; h++)
        if (strncasecmp(h, n, nn) == 0)
            return (char *)h;
    return nn ? NULL : (char *)h;
}

size_t strspn(const char *s, const char *accept)
{
    const char *p = s;
    while (*p && strchr(accept, *p))
        p++;
    return (size_t)(p - s);
}

size_t strcspn(const char *s, const char *reject)
{
    const char *p = s;
    while (*p && !strchr(reject, *p))
        p++;
    return (size_t)(p - s);
}

char *strpbrk(const char *s, const char *accept)
{
    s += strcspn(s, accept);
    return *s ? (char *)s : NULL;
}

char *strtok_r(char *restrict s, const char *restrict delim, char **restrict save)
{
    if (!s)
        s = *save;
    s += strspn(s, delim);
    if (!*s) {
        *save = s;
        return NULL;
    }
    char *end = s + strcspn(s, delim);
    if (*end)
        *end++ = 0;
    *save = end;
    return s;
}

char *strtok(char *restrict s, const char *restrict delim)
{
    static char *save;
    return strtok_r(s, delim, &save);
}

char *strsep(char **sp, const char *delim)
{
    char *s = *sp;
    if (!s)
        return NULL;
    char *end = s + strcspn(s, delim);
    if (*end)
        *end++ = 0;
    else
        end = NULL;
    *sp = end;
    return s;
}

char *strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

char *strndup(const char *s, size_t n)
{
    n = strnlen(s, n);
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

int ffs(int x) { return __builtin_ffs(x); }
