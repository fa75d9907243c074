// Kernel printf: formats into a buffer, then writes it to the console in one piece
// so that lines from different CPUs do not interleave.
// Supports %d %i %u %x %X %o %p %s %c %% with flags '-' '0', width, precision
// (including '*'), and the length modifiers hh h l ll z.
#include "kernel.h"
#include "x86/console.h"

struct out {
    char *buf;
    size_t n, len; // capacity, characters produced (may exceed n)
};

static void put(struct out *o, char c)
{
    if (o->len + 1 < o->n)
        o->buf[o->len] = c;
    o->len++;
}

static void pad(struct out *o, char c, int count)
{
    while (count-- > 0)
        put(o, c);
}

static void put_str(struct out *o, const char *s, int width, int prec, bool left)
{
    if (!s)
        s = "(null)";
    int len = prec >= 0 ? (int)strnlen(s, prec) : (int)strlen(s);
    if (!left)
        pad(o, ' ', width - len);
    for (int i = 0; i < len; i++)
        put(o, s[i]);
    if (left)
        pad(o, ' ', width - len);
}

// v in base with width, after a prefix ("-" for a negative number, "0x" for
// %#x); zero padding goes between the prefix and the digits, as in C.
static void put_num(struct out *o, unsigned long long v, const char *pre, int base, bool upper,
                    int width, bool left, bool zero)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = digits[v % base];
        v /= base;
    } while (v);
    int len = n + (int)strlen(pre);
    if (!left && !zero)
        pad(o, ' ', width - len);
    while (*pre)
        put(o, *pre++);
    if (!left && zero)
        pad(o, '0', width - len);
    while (n)
        put(o, tmp[--n]);
    if (left)
        pad(o, ' ', width - len);
}

int kvsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
    struct out o = {buf, n, 0};
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            put(&o, *fmt);
            continue;
        }
        bool left = false, zero = false, alt = false;
        int width = 0, prec = -1, lng = 0;
        for (;; fmt++) {
            if (fmt[1] == '-')
                left = true;
            else if (fmt[1] == '0')
                zero = true;
            else if (fmt[1] == '#')
                alt = true; // C's alternate form: 0x before a nonzero %x, 0 before %o
            else
                break;
        }
        fmt++;
        if (*fmt == '*') {
            width = va_arg(ap, int);
            fmt++;
        }
        while (*fmt >= '0' && *fmt <= '9')
            width = width * 10 + (*fmt++ - '0');
        if (*fmt == '.') {
            fmt++;
            prec = 0;
            if (*fmt == '*') {
                prec = va_arg(ap, int);
                fmt++;
            }
            while (*fmt >= '0' && *fmt <= '9')
                prec = prec * 10 + (*fmt++ - '0');
        }
        for (; *fmt == 'l' || *fmt == 'h' || *fmt == 'z'; fmt++)
            lng += (*fmt == 'l' || *fmt == 'z') ? 1 : 0;
        if (lng > 1)
            lng = 1; // long and long long are both 64-bit here
        switch (*fmt) {
        case 'd':
        case 'i': {
            long long v = lng ? va_arg(ap, long) : va_arg(ap, int);
            put_num(&o, v < 0 ? -(unsigned long long)v : (unsigned long long)v, v < 0 ? "-" : "",
                    10, false, width, left, zero);
            break;
        }
        case 'u':
        case 'x':
        case 'X':
        case 'o': {
            unsigned long long v = lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
            int base = *fmt == 'u' ? 10 : *fmt == 'o' ? 8 : 16;
            const char *pre = !alt || !v || base == 10 ? "" : base == 8 ? "0" : *fmt == 'X' ? "0X" : "0x";
            put_num(&o, v, pre, base, *fmt == 'X', width, left, zero);
            break;
        }
        case 'p':
            put(&o, '0');
            put(&o, 'x');
            put_num(&o, (uintptr_t)va_arg(ap, void *), "", 16, false, 16, false, true);
            break;
        case 's':
            put_str(&o, va_arg(ap, const char *), width, prec, left);
            break;
        case 'c':
            put(&o, (char)va_arg(ap, int));
            break;
        case '%':
            put(&o, '%');
            break;
        default: // unknown conversion: show it rather than guess
            put(&o, '%');
            if (*fmt)
                put(&o, *fmt);
            else
                fmt--;
        }
    }
    if (n)
        buf[o.len < n ? o.len : n - 1] = 0;
    return (int)o.len;
}

int ksnprintf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = kvsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return r;
}

int kvprintf(const char *fmt, va_list ap)
{
    char buf[512];
    int r = kvsnprintf(buf, sizeof buf, fmt, ap);
    console_write(buf, MIN((size_t)r, sizeof buf - 1));
    return r;
}

int kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = kvprintf(fmt, ap);
    va_end(ap);
    return r;
}
