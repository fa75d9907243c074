// The string and memory functions the kernel (and gcc's code generation) need.
#include "kernel.h"

// Eight bytes per iteration, then the tail: under QEMU's TCG each iteration of
// a rep string instruction costs about the same whatever its width, so rep
// stosb on a page is eight times the work of rep stosq (as Linux's clear_page).
void *memset(void *d, int c, size_t n)
{
    void *r = d;
    uint64_t v = 0x0101010101010101UL * (uint8_t)c;
    size_t q = n / 8;
    n %= 8;
    asm volatile("rep stosq" : "+D"(d), "+c"(q) : "a"(v) : "memory");
    asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(v) : "memory");
    return r;
}

void *memcpy(void *d, const void *s, size_t n)
{
    void *r = d;
    size_t q = n / 8;
    n %= 8;
    asm volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(q) : : "memory");
    asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    return r;
}

void *memmove(void *d, const void *s, size_t n)
{
    if ((uintptr_t)d - (uintptr_t)s >= n)  // no forward overlap
        return memcpy(d, s, n);
    char *dp = (char *)d + n;
    const char *sp = (const char *)s + n;
    while (n--)
        *--dp = *--sp;
    return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y)
            return *x - *y;
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

size_t strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

int strcmp(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (; n; n--, a++, b++) {
        if (*a != *b)
            return (unsigned char)*a - (unsigned char)*b;
        if (!*a)
            break;
    }
    return 0;
}

char *strchr(const char *s, int c)
{
    for (; *s; s++)
        if (*s == (char)c)
            return (char *)s;
    return c == 0 ? (char *)s : NULL;
}

size_t strlcpy(char *d, const char *s, size_t n)
{
    size_t len = strlen(s);
    if (n) {
        size_t k = len < n - 1 ? len : n - 1;
        memcpy(d, s, k);
        d[k] = 0;
    }
    return len;
}
