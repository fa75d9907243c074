// Integer conversions: strto[u]l[l], strto[iu]max, ato*, and small arithmetic.
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>

static int digit_value(int c)
{
    if (isdigit(c))
        return c - '0';
    if (isalpha(c))
        return (c | 32) - 'a' + 10;
    return 99;
}

// Parses an optionally signed integer; returns its magnitude clamped to
// `limit` (ERANGE beyond) and stores the sign. *end as the C standard says.
static unsigned long long parse(const char *s, char **end, int base, int *neg,
                                unsigned long long limit)
{
    const char *p = s;
    *neg = 0;
    if (base < 0 || base == 1 || base > 36) {
        errno = EINVAL;
        if (end)
            *end = (char *)s;
        return 0;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '+' || *p == '-')
        *neg = *p++ == '-';
    if ((base == 0 || base == 16) && p[0] == '0' && (p[1] | 32) == 'x' &&
        digit_value((unsigned char)p[2]) < 16) {
        p += 2;
        base = 16;
    } else if (base == 0) {
        base = *p == '0' ? 8 : 10;
    }
    unsigned long long v = 0;
    int overflow = 0;
    const char *start = p;
    for (int d; (d = digit_value((unsigned char)*p)) < base; p++) {
        if (__builtin_mul_overflow(v, (unsigned)base, &v) || __builtin_add_overflow(v, d, &v))
            overflow = 1;
    }
    if (p == start) {
        if (end)
            *end = (char *)s;
        return 0;
    }
    if (end)
        *end = (char *)p;
    if (overflow || v > limit) {
        errno = ERANGE;
        return limit + 1 > limit ? limit + 1 : limit;
    }
    return v;
}

long long strtoll(const char *restrict s, char **restrict end, int base)
{
    int neg;
    unsigned long long v = parse(s, end, base, &neg, (unsigned long long)LLONG_MAX + 1);
    if (!neg && v > LLONG_MAX) {
        errno = ERANGE;
        return LLONG_MAX;
    }
    if (v > (unsigned long long)LLONG_MAX + 1) {
        errno = ERANGE;
        return neg ? LLONG_MIN : LLONG_MAX;
    }
    return neg ? (long long)(0 - v) : (long long)v;
}

unsigned long long strtoull(const char *restrict s, char **restrict end, int base)
{
    int neg;
    unsigned long long v = parse(s, end, base, &neg, ULLONG_MAX);
    if (errno == ERANGE && v == ULLONG_MAX)
        return v;
    return neg ? 0 - v : v;
}

long strtol(const char *restrict s, char **restrict end, int base) { return strtoll(s, end, base); }
unsigned long strtoul(const char *restrict s, char **restrict end, int base)
{
    return strtoull(s, end, base);
}
intmax_t strtoimax(const char *restrict s, char **restrict end, int base) { return strtoll(s, end, base); }
uintmax_t strtoumax(const char *restrict s, char **restrict end, int base)
{
    return strtoull(s, end, base);
}
int atoi(const char *s) { return (int)strtol(s, NULL, 10); }
long atol(const char *s) { return strtol(s, NULL, 10); }
long long atoll(const char *s) { return strtoll(s, NULL, 10); }

int abs(int x) { return x < 0 ? -x : x; }
long labs(long x) { return x < 0 ? -x : x; }
long long llabs(long long x) { return x < 0 ? -x : x; }
intmax_t imaxabs(intmax_t x) { return x < 0 ? -x : x; }
div_t div(int a, int b) { return (div_t){a / b, a % b}; }
ldiv_t ldiv(long a, long b) { return (ldiv_t){a / b, a % b}; }
lldiv_t lldiv(long long a, long long b) { return (lldiv_t){a / b, a % b}; }
imaxdiv_t imaxdiv(intmax_t a, intmax_t b) { return (imaxdiv_t){a / b, a % b}; }
