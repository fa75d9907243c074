// The scanf family: whitespace, literals, %d %i %u %o %x %X %c %s %[...] %n
// %p and %e %f %g (via strtold) with widths, '*' suppression and length
// modifiers. Input comes from a string or a FILE through one reader.
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "stdio_impl.h"

struct reader {
    const char *str;  // string source, or NULL
    FILE *f;
    size_t count;     // characters consumed
    int peeked;       // a character read ahead from f, or -2
};

static int peek(struct reader *r)
{
    if (r->str)
        return *r->str ? (unsigned char)*r->str : EOF;
    if (r->peeked == -2)
        r->peeked = __fgetc_unlocked(r->f);
    return r->peeked;
}

static void advance(struct reader *r)
{
    if (r->str)
        r->str++;
    else
        r->peeked = -2;
    r->count++;
}

static void store_int(void *p, int len, uintmax_t v)
{
    switch (len) {
    case 1: *(char *)p = (char)v; break;
    case 2: *(short *)p = (short)v; break;
    case 3: case 4: case 5: case 6: case 7: *(long *)p = (long)v; break;
    default: *(int *)p = (int)v; break;
    }
}

// Collect characters that may form a number into buf (up to width).
static size_t collect_number(struct reader *r, char *buf, size_t max, int fp, int base)
{
    size_t n = 0;
    int c;
    while (n < max && (c = peek(r)) != EOF) {
        int ok;
        if (c == '+' || c == '-')
            ok = n == 0 || (fp && (buf[n - 1] | 32) == (base == 16 ? 'p' : 'e'));
        else if (fp)
            ok = isxdigit(c) || c == '.' || (c | 32) == 'x' || (c | 32) == 'p' ||
                 (c | 32) == 'i' || (c | 32) == 'n' || (c | 32) == 'f' || (c | 32) == 't' ||
                 (c | 32) == 'y' || (c | 32) == 'a';
        else if ((c | 32) == 'x')
            ok = (base == 0 || base == 16) && n > 0 && buf[n - 1] == '0' &&
                 (n == 1 || buf[0] == '+' || buf[0] == '-');
        else
            ok = isdigit(c) ? (base != 8 || c < '8') : (base == 16 && isxdigit(c));
        if (!ok)
            break;
        if ((c | 32) == 'x' && base == 0)
            base = 16;
        buf[n++] = (char)c;
        advance(r);
    }
    buf[n] = 0;
    return n;
}

static int scan(struct reader *r, const char *fmt, va_list ap0)
{
    va_list ap;
    va_copy(ap, ap0);
    int assigned = 0;
    for (const char *p = fmt; *p; p++) {
        if (isspace((unsigned char)*p)) {
            while (peek(r) != EOF && isspace(peek(r)))
                advance(r);
            continue;
        }
        if (*p != '%' || p[1] == '%') {
            if (*p == '%')
                p++;
            if (peek(r) != (unsigned char)*p)
                goto done;
            advance(r);
            continue;
        }
        p++;
        int suppress = *p == '*';
        if (suppress)
            p++;
        size_t width = 0;
        for (; isdigit((unsigned char)*p); p++)
            width = width * 10 + (size_t)(*p - '0');
        int len = 0;
        for (;; p++) {
            if (*p == 'h') len = len == 2 ? 1 : 2;
            else if (*p == 'l') len = len == 3 ? 4 : 3;
            else if (*p == 'j') len = 6;
            else if (*p == 'z') len = 5;
            else if (*p == 't') len = 7;
            else if (*p == 'L' || *p == 'q') len = 8;
            else break;
        }
        char conv = *p;
        if (!conv)
            break;
        if (conv != 'c' && conv != '[' && conv != 'n')
            while (peek(r) != EOF && isspace(peek(r)))
                advance(r);
        if (conv == 'n') {
            if (!suppress)
                store_int(va_arg(ap, void *), len, r->count);
            continue;
        }
        if (peek(r) == EOF)
            goto input_failure;
        switch (conv) {
        case 'd': case 'i': case 'u': case 'o': case 'x': case 'X': case 'p': {
            int base = conv == 'd' || conv == 'u' ? 10 : conv == 'i' ? 0 : conv == 'o' ? 8 : 16;
            char buf[80];
            size_t max = width && width < sizeof buf - 1 ? width : sizeof buf - 1;
            if (!collect_number(r, buf, max, 0, base))
                goto done;
            char *end;
            uintmax_t v = conv == 'd' || conv == 'i' ? (uintmax_t)strtoll(buf, &end, base)
                                                     : strtoull(buf, &end, base);
            if (*end || end == buf)
                goto done;
            if (!suppress) {
                if (conv == 'p')
                    *va_arg(ap, void **) = (void *)(uintptr_t)v;
                else
                    store_int(va_arg(ap, void *), len, v);
                assigned++;
            }
            break;
        }
        case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'a': case 'A': {
            char buf[512];
            size_t max = width && width < sizeof buf - 1 ? width : sizeof buf - 1;
            if (!collect_number(r, buf, max, 1, 10))
                goto done;
            char *end;
            long double v = strtold(buf, &end);
            if (*end || end == buf)
                goto done;
            if (!suppress) {
                if (len == 8)
                    *va_arg(ap, long double *) = v;
                else if (len == 3)
                    *va_arg(ap, double *) = (double)v;
                else
                    *va_arg(ap, float *) = (float)v;
                assigned++;
            }
            break;
        }
        case 'c': {
            if (!width)
                width = 1;
            char *d = suppress ? NULL : va_arg(ap, char *);
            size_t n = 0;
            for (; n < width && peek(r) != EOF; n++, advance(r))
                if (d)
                    d[n] = (char)peek(r);
            if (n < width)
                goto input_failure;
            if (d)
                assigned++;
            break;
        }
        case 's':
        case '[': {
            unsigned char set[256];
            if (conv == 's') {
                for (int i = 0; i < 256; i++)
                    set[i] = !isspace(i);
            } else {
                p++;
                int neg = *p == '^';
                if (neg)
                    p++;
                memset(set, neg, sizeof set);
                const char *start = p;
                for (; *p && (*p != ']' || p == start); p++) {
                    if (p[1] == '-' && p[2] && p[2] != ']') {
                        for (int c = (unsigned char)*p; c <= (unsigned char)p[2]; c++)
                            set[c] = !neg;
                        p += 2;
                    } else {
                        set[(unsigned char)*p] = !neg;
                    }
                }
                if (!*p)
                    goto done;
            }
            set[0] = 0;
            char *d = suppress ? NULL : va_arg(ap, char *);
            size_t n = 0;
            while ((!width || n < width) && peek(r) != EOF && set[peek(r)]) {
                if (d)
                    d[n] = (char)peek(r);
                n++;
                advance(r);
            }
            if (n == 0)
                goto done;
            if (d) {
                d[n] = 0;
                assigned++;
            }
            break;
        }
        default:
            goto done;
        }
    }
done:
    va_end(ap);
    return assigned;
input_failure:
    va_end(ap);
    return assigned ? assigned : EOF;
}

int vsscanf(const char *restrict s, const char *restrict fmt, va_list ap)
{
    struct reader r = {.str = s, .peeked = -2};
    return scan(&r, fmt, ap);
}

int vfscanf(FILE *restrict f, const char *restrict fmt, va_list ap)
{
    struct reader r = {.f = f, .peeked = -2};
    __lock(&f->lock);
    int n = scan(&r, fmt, ap);
    // Give back the character read ahead.
    if (r.peeked >= 0 && f->buf && f->rpos && f->rpos > f->base)
        *--f->rpos = (unsigned char)r.peeked;
    __unlock(&f->lock);
    return n;
}

int vscanf(const char *restrict fmt, va_list ap) { return vfscanf(stdin, fmt, ap); }

int sscanf(const char *restrict s, const char *restrict fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vsscanf(s, fmt, ap);
    va_end(ap);
    return r;
}

int fscanf(FILE *restrict f, const char *restrict fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vfscanf(f, fmt, ap);
    va_end(ap);
    return r;
}

int scanf(const char *restrict fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vfscanf(stdin, fmt, ap);
    va_end(ap);
    return r;
}
