// Floating-point parsing: strtod, strtof, strtold, atof. Decimal input keeps
// 19 significant digits (plus a sticky bit for the rest) and scales them by a
// power of ten in x87 extended precision (64-bit mantissa), then rounds once
// to the target type: 11 spare bits make the result correctly rounded except
// in extremely close halfway cases. Hex floats are exact.
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>

// 2^k as a long double, for k in the normal range of the x87 format.
static long double pow2l(int k)
{
    union {
        long double f;
        struct {
            uint64_t m;
            uint16_t se;
        } b;
    } u = {0};
    u.b.m = 1ULL << 63;
    u.b.se = (uint16_t)(k + 16383);
    return u.f;
}

static long double scale2(long double x, long e)
{
    while (e > 16000) {
        x *= pow2l(16000);
        e -= 16000;
    }
    while (e < -16000) {
        x *= pow2l(-16000);
        e += 16000;
    }
    return x * pow2l((int)e);
}

static long double ten_to(long e)
{
    static const long double p[] = {1e1L, 1e2L, 1e4L, 1e8L, 1e16L, 1e32L, 1e64L,
                                    1e128L, 1e256L, 1e512L, 1e1024L, 1e2048L, 1e4096L};
    long double r = 1;
    for (int i = 0; e && i < 13; i++, e >>= 1)
        if (e & 1)
            r *= p[i];
    return e ? __builtin_infl() : r;
}

static long double parse_hex(const char *p, const char **end)
{
    uint64_t m = 0;
    long e = 0;
    int any = 0, sticky = 0, dot = 0;
    for (;; p++) {
        if (*p == '.' && !dot) {
            dot = 1;
            continue;
        }
        int d = isdigit((unsigned char)*p) ? *p - '0'
              : isxdigit((unsigned char)*p) ? (*p | 32) - 'a' + 10 : -1;
        if (d < 0)
            break;
        any = 1;
        if (m >> 60) {  // keep 60+ bits; the rest only matter as a sticky bit
            sticky |= d != 0;
            if (!dot)
                e += 4;
        } else {
            m = m * 16 + d;
            if (dot)
                e -= 4;
        }
    }
    if (!any)
        return -1;  // caller treats "0x" as "0"
    if ((*p | 32) == 'p') {
        const char *q = p + 1;
        int neg = *q == '-';
        if (*q == '+' || *q == '-')
            q++;
        if (isdigit((unsigned char)*q)) {
            long x = 0;
            for (; isdigit((unsigned char)*q); q++)
                if (x < 100000)
                    x = x * 10 + (*q - '0');
            e += neg ? -x : x;
            p = q;
        }
    }
    *end = p;
    return scale2((long double)(m | (uint64_t)sticky), e);
}

static long double parse(const char *s, char **endp)
{
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    int neg = *p == '-';
    if (*p == '+' || *p == '-')
        p++;
    long double v;
    const char *end = s;
    if (strncasecmp(p, "inf", 3) == 0) {
        end = p + (strncasecmp(p, "infinity", 8) == 0 ? 8 : 3);
        v = __builtin_infl();
    } else if (strncasecmp(p, "nan", 3) == 0) {
        end = p + 3;
        if (*end == '(') {
            const char *q = end + 1;
            while (isalnum((unsigned char)*q) || *q == '_')
                q++;
            if (*q == ')')
                end = q + 1;
        }
        v = __builtin_nanl("");
    } else if (p[0] == '0' && (p[1] | 32) == 'x' &&
               (v = parse_hex(p + 2, &end)) >= 0) {
        // parsed
    } else {
        uint64_t m = 0;
        long e = 0;
        int digits = 0, any = 0, sticky = 0, dot = 0;
        const char *q = p;
        for (;; q++) {
            if (*q == '.' && !dot) {
                dot = 1;
                continue;
            }
            if (!isdigit((unsigned char)*q))
                break;
            any = 1;
            if (m == 0 && *q == '0') {  // leading zeros carry no precision
                if (dot)
                    e--;
                continue;
            }
            if (digits < 19) {
                m = m * 10 + (*q - '0');
                digits++;
                if (dot)
                    e--;
            } else {
                sticky |= *q != '0';
                if (!dot)
                    e++;
            }
        }
        if (!any) {
            if (endp)
                *endp = (char *)s;
            return 0;
        }
        if ((*q | 32) == 'e') {
            const char *r = q + 1;
            int eneg = *r == '-';
            if (*r == '+' || *r == '-')
                r++;
            if (isdigit((unsigned char)*r)) {
                long x = 0;
                for (; isdigit((unsigned char)*r); r++)
                    if (x < 100000)
                        x = x * 10 + (*r - '0');
                e += eneg ? -x : x;
                q = r;
            }
        }
        end = q;
        // The dropped digits nudge the mantissa off an exact halfway point.
        long double mm = (long double)m + (sticky ? 0.25L : 0);
        if (m == 0)
            v = 0;
        else if (e >= 0)
            v = mm * ten_to(e);
        else if (e > -4951 - 19)
            v = mm / ten_to(-e);
        else
            v = 0;
        if (m && e < -4932) {
            // 10^-e overflows; scale in two steps.
            v = (mm / ten_to(4000)) / ten_to(-e - 4000);
        }
    }
    if (endp)
        *endp = (char *)end;
    return neg ? -v : v;
}

static void check_range(long double v, double d, const char *s, char *end)
{
    if ((__builtin_isinf(d) && !__builtin_isinf(v)) ||
        (d == 0 && v != 0) || (d != 0 && __builtin_fabs(d) < DBL_MIN))
        errno = ERANGE;
    (void)s, (void)end;
}

double strtod(const char *restrict s, char **restrict end)
{
    char *e;
    long double v = parse(s, &e);
    double d = (double)v;
    check_range(v, d, s, e);
    if (end)
        *end = e;
    return d;
}

float strtof(const char *restrict s, char **restrict end)
{
    char *e;
    long double v = parse(s, &e);
    float f = (float)v;
    if ((__builtin_isinf(f) && !__builtin_isinf(v)) || (f == 0 && v != 0))
        errno = ERANGE;
    if (end)
        *end = e;
    return f;
}

long double strtold(const char *restrict s, char **restrict end)
{
    return parse(s, end);
}

double atof(const char *s) { return strtod(s, NULL); }
