// The printf family. One formatter writes through a sink (a FILE, a string
// buffer, or a file descriptor). Floating-point conversions are exact: the
// binary value is expanded to all of its decimal digits with big-integer
// arithmetic and rounded once, half to even, like glibc in the default
// rounding mode.
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "stdio_impl.h"

struct sink {
    void (*put)(struct sink *, const char *, size_t);
    size_t count;  // characters produced, stored or not
    char *buf;     // string sinks: buffer and capacity (incl. NUL)
    size_t cap;
    FILE *f;
    int fd;
    int err;
    size_t used;   // fd sink: bytes buffered in buf
};

static void out(struct sink *s, const char *p, size_t n)
{
    if (n) {
        s->put(s, p, n);
        s->count += n;
    }
}

static void pad(struct sink *s, char c, long n)
{
    char chunk[32];
    memset(chunk, c, sizeof chunk);
    for (; n > 0; n -= (long)sizeof chunk)
        out(s, chunk, n < (long)sizeof chunk ? (size_t)n : sizeof chunk);
}

enum { F_MINUS = 1, F_PLUS = 2, F_SPACE = 4, F_HASH = 8, F_ZERO = 16 };

struct spec {
    int flags;
    long width;
    long prec;  // -1: none
    char conv;
};

// Prefix (sign, 0x), zero padding, body, with width padding around them.
static void emit_padded(struct sink *s, const struct spec *sp, const char *prefix,
                        long zeros, const char *body, size_t blen)
{
    size_t plen = strlen(prefix);
    long total = (long)plen + zeros + (long)blen;
    if (!(sp->flags & F_MINUS))
        pad(s, ' ', sp->width - total);
    out(s, prefix, plen);
    pad(s, '0', zeros);
    out(s, body, blen);
    if (sp->flags & F_MINUS)
        pad(s, ' ', sp->width - total);
}

static void fmt_int(struct sink *s, const struct spec *sp, uintmax_t v, int neg)
{
    char buf[72];
    char *end = buf + sizeof buf, *p = end;
    unsigned base = sp->conv == 'o' ? 8 : (sp->conv == 'x' || sp->conv == 'X' || sp->conv == 'p') ? 16 : 10;
    const char *digits = sp->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    for (uintmax_t x = v; x; x /= base)
        *--p = digits[x % base];
    long len = end - p;
    long prec = sp->prec;
    if (prec < 0)
        prec = 1;
    long zeros = prec > len ? prec - len : 0;
    if (sp->conv == 'o' && (sp->flags & F_HASH) && zeros == 0 && (len == 0 || *p != '0'))
        zeros = 1;
    char prefix[3] = "";
    if (neg)
        strcpy(prefix, "-");
    else if (sp->flags & F_PLUS && base == 10)
        strcpy(prefix, "+");
    else if (sp->flags & F_SPACE && base == 10)
        strcpy(prefix, " ");
    else if (base == 16 && v && ((sp->flags & F_HASH) || sp->conv == 'p'))
        strcpy(prefix, sp->conv == 'X' ? "0X" : "0x");
    if ((sp->flags & F_ZERO) && !(sp->flags & F_MINUS) && sp->prec < 0) {
        long fill = sp->width - (long)strlen(prefix) - len - zeros;
        if (fill > 0)
            zeros += fill;
    }
    emit_padded(s, sp, prefix, zeros, p, (size_t)len);
}

// ---- exact decimal expansion of binary floating point ------------------------

// Big natural numbers in base 10^9, least significant limb first. Enough for
// the long double extremes: 2^16384 (4933 digits) and 2^64 * 5^16446 (11514).
#define LIMBS 1300
struct big {
    uint32_t d[LIMBS];
    int n;
};

static void big_mul(struct big *b, uint32_t m)
{
    uint64_t carry = 0;
    for (int i = 0; i < b->n; i++) {
        uint64_t x = (uint64_t)b->d[i] * m + carry;
        b->d[i] = (uint32_t)(x % 1000000000);
        carry = x / 1000000000;
    }
    while (carry) {
        b->d[b->n++] = (uint32_t)(carry % 1000000000);
        carry /= 1000000000;
    }
}

struct decimal {
    char *d;     // digits, most significant first, no leading zeros
    int n;       // number of digits
    int e10;     // value = d[0].d[1]d[2]... * 10^e10
};

#define MAXDIGITS (LIMBS * 9 + 16)

// Expand m * 2^e (m > 0) exactly into digits.
static void expand(uint64_t m, int e, struct decimal *out, char *digits)
{
    while (!(m & 1)) {
        m >>= 1;
        e++;
    }
    struct big b;  // 5 KiB of stack, used only while formatting a float
    b.n = 0;
    for (uint64_t x = m; x; x /= 1000000000)
        b.d[b.n++] = (uint32_t)(x % 1000000000);
    int shift = e;
    for (; e > 0; e -= e < 28 ? e : 28)
        big_mul(&b, 1U << (e < 28 ? e : 28));
    for (; e < 0; e += -e < 13 ? -e : 13) {
        uint32_t p = 1;
        for (int i = 0; i < (-e < 13 ? -e : 13); i++)
            p *= 5;
        big_mul(&b, p);
    }
    // Digits: the top limb without leading zeros, then 9 per limb.
    int n = 0;
    char tmp[10];
    int t = 0;
    for (uint32_t x = b.d[b.n - 1]; x; x /= 10)
        tmp[t++] = (char)('0' + x % 10);
    while (t)
        digits[n++] = tmp[--t];
    for (int i = b.n - 2; i >= 0; i--) {
        uint32_t x = b.d[i];
        for (int k = 8; k >= 0; k--) {
            digits[n + k] = (char)('0' + x % 10);
            x /= 10;
        }
        n += 9;
    }
    out->d = digits;
    out->n = n;
    out->e10 = n - 1 + (shift < 0 ? shift : 0);
}

// Keep the digits above position k (k digits from the most significant),
// rounding half to even. k may be 0 or negative (everything is dropped).
static void round_at(struct decimal *x, int k)
{
    if (k >= x->n)
        return;
    int up;
    if (k < 0) {
        up = 0;
    } else {
        char c = x->d[k];
        if (c != '5') {
            up = c > '5';
        } else {
            int rest = 0;
            for (int i = k + 1; i < x->n; i++)
                rest |= x->d[i] != '0';
            up = rest || (k > 0 && ((x->d[k - 1] - '0') & 1));
        }
    }
    x->n = k > 0 ? k : 0;
    if (!up) {
        if (x->n == 0) {  // rounded to zero
            x->d[0] = '0';
            x->n = 1;
            x->e10 = INT_MIN / 2;  // marks "zero": callers treat digits as all zero
        }
        return;
    }
    int i = x->n - 1;
    while (i >= 0 && x->d[i] == '9')
        x->d[i--] = '0';
    if (i >= 0) {
        x->d[i]++;
    } else {
        // All nines (or nothing kept): becomes 1 followed by zeros, one decade up.
        memmove(x->d + 1, x->d, (size_t)x->n);
        x->d[0] = '1';
        x->n++;
        x->e10++;
        if (k <= 0)
            x->n = 1;
    }
}

static char digit_at(const struct decimal *x, long j)
{
    return j >= 0 && j < x->n ? x->d[j] : '0';
}

static void fmt_float(struct sink *s, const struct spec *sp, long double v)
{
    char conv = sp->conv;
    int upper = conv == 'F' || conv == 'E' || conv == 'G' || conv == 'A';
    char lc = (char)(conv | 32);
    const char *sign = __builtin_signbit(v) ? "-" : (sp->flags & F_PLUS) ? "+"
                     : (sp->flags & F_SPACE) ? " " : "";
    if (__builtin_signbit(v))
        v = -v;
    if (__builtin_isinf(v) || __builtin_isnan(v)) {
        struct spec nsp = *sp;
        const char *t = __builtin_isnan(v) ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
        emit_padded(s, &nsp, sign, 0, t, 3);
        return;
    }
    if (lc == 'a') {
        // Hex float of the double value: 0x1.hhhp+e, shortest exact by default.
        double d = (double)v;
        uint64_t bits;
        memcpy(&bits, &d, 8);
        int be = (int)(bits >> 52);
        uint64_t frac = bits & ((1ULL << 52) - 1);
        int lead = be != 0, ex = d == 0 ? 0 : be ? be - 1023 : -1022;
        long prec = sp->prec;
        if (prec >= 0 && prec < 13) {
            int drop = (int)(13 - prec) * 4;
            uint64_t half = 1ULL << (drop - 1), rem = frac & ((1ULL << drop) - 1);
            frac >>= drop;
            uint64_t odd = prec ? frac & 1 : (uint64_t)lead & 1;
            if (rem > half || (rem == half && odd))
                frac++;
            if (frac >> (prec * 4)) {  // carried into the leading digit
                lead++;
                frac &= (1ULL << (prec * 4)) - 1;
            }
            frac <<= drop;
        }
        char body[64];
        const char *hx = upper ? "0123456789ABCDEF" : "0123456789abcdef";
        int n = 0, nd = 13;
        if (prec < 0)
            while (nd > 0 && !((frac >> ((13 - nd) * 4)) & 15))
                nd--;
        else
            nd = (int)(prec < 13 ? prec : 13);
        body[n++] = (char)('0' + lead);
        if (nd || (sp->flags & F_HASH) || prec > 13)
            body[n++] = '.';
        for (int i = 0; i < nd; i++)
            body[n++] = hx[(frac >> ((12 - i) * 4)) & 15];
        long extra = prec > 13 ? prec - 13 : 0;
        int en = snprintf(body + n, sizeof body - (size_t)n, "%c%+d", upper ? 'P' : 'p', ex);
        char prefix[4];
        snprintf(prefix, sizeof prefix, "%s%s", sign, upper ? "0X" : "0x");
        struct spec nsp = *sp;
        long zeros = 0;
        if ((sp->flags & F_ZERO) && !(sp->flags & F_MINUS)) {
            long fill = sp->width - (long)strlen(prefix) - n - extra - en;
            zeros = fill > 0 ? fill : 0;
        }
        // zero padding goes between "0x" and the digits; extra precision zeros
        // go after the digits, before the exponent.
        if (!(nsp.flags & F_MINUS))
            pad(s, ' ', sp->width - (long)strlen(prefix) - zeros - n - extra - en);
        out(s, prefix, strlen(prefix));
        pad(s, '0', zeros);
        out(s, body, (size_t)n);
        pad(s, '0', extra);
        out(s, body + n, (size_t)en);
        if (nsp.flags & F_MINUS)
            pad(s, ' ', sp->width - (long)strlen(prefix) - n - extra - en);
        return;
    }

    long prec = sp->prec < 0 ? 6 : sp->prec;
    char digits[MAXDIGITS];
    struct decimal x;
    int zero = v == 0;
    if (zero) {
        digits[0] = '0';
        x = (struct decimal){digits, 1, 0};
    } else {
        union {
            long double f;
            struct {
                uint64_t m;
                uint16_t se;
            } b;
        } u = {.f = v};
        int be = u.b.se & 0x7fff;
        expand(u.b.m, (be ? be : 1) - 16383 - 63, &x, digits);
    }

    int hash = sp->flags & F_HASH;
    int style;  // 'f' or 'e'
    if (lc == 'g') {
        long P = prec ? prec : 1;
        if (!zero)
            round_at(&x, (int)(P < MAXDIGITS ? P : MAXDIGITS));
        int X = (x.e10 == INT_MIN / 2) ? 0 : x.e10;
        if (P > X && X >= -4) {
            style = 'f';
            prec = P - 1 - X;
        } else {
            style = 'e';
            prec = P - 1;
        }
        if (!hash) {  // drop trailing zeros of the fraction
            long base = style == 'f' ? x.e10 : 0;
            while (prec > 0 && digit_at(&x, base + prec) == '0')
                prec--;
        }
    } else {
        style = lc;
        if (!zero) {
            long k = style == 'e' ? prec + 1 : (long)x.e10 + 1 + prec;
            if (k < MAXDIGITS)
                round_at(&x, (int)(k < -2 ? -2 : k));
        }
    }
    int is_zero = zero || x.e10 == INT_MIN / 2;
    if (is_zero) {
        x.d[0] = '0';
        x.n = 1;
        x.e10 = 0;
    }

    int dot = prec > 0 || hash;
    char expbuf[16];
    int elen = 0;
    long intlen;
    if (style == 'e') {
        int e = x.e10;
        expbuf[elen++] = upper ? 'E' : 'e';
        expbuf[elen++] = e < 0 ? '-' : '+';
        unsigned ae = (unsigned)(e < 0 ? -e : e);
        char t[12];
        int tn = 0;
        do
            t[tn++] = (char)('0' + ae % 10);
        while (ae /= 10);
        if (tn < 2)
            t[tn++] = '0';
        while (tn)
            expbuf[elen++] = t[--tn];
        intlen = 1;
    } else {
        intlen = x.e10 >= 0 ? x.e10 + 1 : 1;
    }
    long len = intlen + dot + prec + elen;
    long zeros = 0, slen = (long)strlen(sign);
    if ((sp->flags & F_ZERO) && !(sp->flags & F_MINUS) && sp->width > len + slen)
        zeros = sp->width - len - slen;
    if (!(sp->flags & F_MINUS))
        pad(s, ' ', sp->width - len - slen - zeros);
    out(s, sign, (size_t)slen);
    pad(s, '0', zeros);
    // Emit digits in chunks.
    char chunk[64];
    int cn = 0;
#define PUTC(c) do { chunk[cn++] = (c); if (cn == sizeof chunk) { out(s, chunk, cn); cn = 0; } } while (0)
    if (style == 'e') {
        PUTC(digit_at(&x, 0));
        if (dot)
            PUTC('.');
        for (long i = 1; i <= prec; i++)
            PUTC(digit_at(&x, i));
    } else {
        if (x.e10 < 0)
            PUTC('0');
        for (long j = 0; j <= x.e10; j++)
            PUTC(digit_at(&x, j));
        if (dot)
            PUTC('.');
        for (long i = 1; i <= prec; i++)
            PUTC(digit_at(&x, x.e10 + i));
    }
#undef PUTC
    out(s, chunk, (size_t)cn);
    out(s, expbuf, (size_t)elen);
    if (sp->flags & F_MINUS)
        pad(s, ' ', sp->width - len - slen);
}

static void fmt_str(struct sink *s, const struct spec *sp, const char *str)
{
    if (!str)
        str = "(null)";
    size_t n = sp->prec >= 0 ? strnlen(str, (size_t)sp->prec) : strlen(str);
    struct spec nsp = *sp;
    nsp.flags &= ~F_ZERO;
    emit_padded(s, &nsp, "", 0, str, n);
}

// ---- the format string ---------------------------------------------------------

// One conversion specification, as written.
struct conv {
    struct spec sp;
    int len;        // 0 int, 1 char, 2 short, 3 long, 4 long long, 5 size_t, 6 intmax,
                    // 7 ptrdiff, 8 long double
    int arg;        // POSIX "%n$": argument n; 0: the next one
    int width_arg;  // '*': -1 none, 0 the next argument, n: "*n$"
    int prec_arg;
};

static int parse_num(const char **pp)
{
    int n = 0;
    for (; **pp >= '0' && **pp <= '9'; (*pp)++)
        n = n > 100000000 ? n : n * 10 + (**pp - '0');
    return n;
}

// "*" or "*n$" at *pp: the argument that gives a width or precision.
static int parse_star(const char **pp)
{
    const char *q = ++*pp;
    int n = parse_num(&q);
    if (n && *q == '$') {
        *pp = q + 1;
        return n;
    }
    return 0;
}

// Parses the specification after a '%'; returns where it ends (after the
// conversion character, or at the terminating NUL).
static const char *parse_conv(const char *p, struct conv *c)
{
    *c = (struct conv){{0, 0, -1, 0}, 0, 0, -1, -1};
    const char *q = p;
    int n = parse_num(&q);
    if (n && *q == '$') {
        c->arg = n;
        p = q + 1;
    }
    for (;; p++) {
        if (*p == '-') c->sp.flags |= F_MINUS;
        else if (*p == '+') c->sp.flags |= F_PLUS;
        else if (*p == ' ') c->sp.flags |= F_SPACE;
        else if (*p == '#') c->sp.flags |= F_HASH;
        else if (*p == '0') c->sp.flags |= F_ZERO;
        else if (*p == '\'') ;
        else break;
    }
    if (*p == '*')
        c->width_arg = parse_star(&p);
    else
        c->sp.width = parse_num(&p);
    if (*p == '.') {
        p++;
        c->sp.prec = 0;
        if (*p == '*')
            c->prec_arg = parse_star(&p);
        else
            c->sp.prec = parse_num(&p);
    }
    for (;; p++) {
        if (*p == 'h') c->len = c->len == 2 ? 1 : 2;
        else if (*p == 'l') c->len = c->len == 3 ? 4 : 3;
        else if (*p == 'q') c->len = 4;
        else if (*p == 'j') c->len = 6;
        else if (*p == 'z') c->len = 5;
        else if (*p == 't') c->len = 7;
        else if (*p == 'L') c->len = 8;
        else break;
    }
    c->sp.conv = *p;
    return *p ? p + 1 : p;
}

// ---- arguments -----------------------------------------------------------------
// Sequential arguments come straight from the va_list. With POSIX positional
// arguments ("%2$s"), a first pass learns each argument's type, and all of them
// are fetched in order into an array first.

enum { A_NONE, A_INT, A_LONG, A_DOUBLE, A_LDOUBLE };
#define NL_ARGMAX 64

union value {
    long l;
    double d;
    long double ld;
};

struct args {
    va_list ap;
    union value *pos;  // positional mode: pos[1..NL_ARGMAX]
};

static int arg_class(const struct conv *c)
{
    switch (c->sp.conv) {
    case 'd': case 'i': case 'u': case 'o': case 'x': case 'X':
        return c->len >= 3 ? A_LONG : A_INT;
    case 'c':
        return A_INT;
    case 'p': case 's': case 'n':
        return A_LONG;
    case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
        return c->len == 8 ? A_LDOUBLE : A_DOUBLE;
    }
    return A_NONE;
}

static union value fetch(struct args *a, int n, int cls)
{
    if (a->pos)
        return a->pos[n > 0 && n <= NL_ARGMAX ? n : 0];
    union value v = {0};
    switch (cls) {
    case A_INT: v.l = va_arg(a->ap, int); break;
    case A_LONG: v.l = va_arg(a->ap, long); break;
    case A_DOUBLE: v.d = va_arg(a->ap, double); break;
    case A_LDOUBLE: v.ld = va_arg(a->ap, long double); break;
    }
    return v;
}

// Positional mode: learn every argument's class, then read them in order.
static void fetch_positional(struct args *a, const char *fmt, union value *pos)
{
    unsigned char cls[NL_ARGMAX + 1] = {0};
    int max = 0;
    for (const char *p = strchr(fmt, '%'); p; p = strchr(p, '%')) {
        struct conv c;
        p = parse_conv(p + 1, &c);
        int uses[3][2] = {{c.arg, arg_class(&c)}, {c.width_arg, A_INT}, {c.prec_arg, A_INT}};
        for (int i = 0; i < 3; i++) {
            int n = uses[i][0];
            if (n > 0 && n <= NL_ARGMAX && uses[i][1] != A_NONE) {
                cls[n] = (unsigned char)uses[i][1];
                if (n > max)
                    max = n;
            }
        }
    }
    memset(pos, 0, (NL_ARGMAX + 1) * sizeof *pos);
    a->pos = NULL;
    for (int n = 1; n <= max; n++)
        pos[n] = fetch(a, n, cls[n] ? cls[n] : A_INT);
    a->pos = pos;
}

static int format(struct sink *s, const char *fmt, va_list ap0)
{
    struct args a = {.pos = NULL};
    va_copy(a.ap, ap0);
    union value pos[NL_ARGMAX + 1];
    const char *first = strchr(fmt, '%');
    if (first) {
        struct conv c;
        parse_conv(first + 1, &c);
        if (c.arg)
            fetch_positional(&a, fmt, pos);
    }
    while (*fmt) {
        const char *pct = strchrnul(fmt, '%');
        out(s, fmt, (size_t)(pct - fmt));
        if (!*pct)
            break;
        struct conv c;
        const char *p = parse_conv(pct + 1, &c);
        fmt = p;
        struct spec sp = c.sp;
        if (c.width_arg >= 0) {
            long w = (int)fetch(&a, c.width_arg, A_INT).l;
            if (w < 0) {
                sp.flags |= F_MINUS;
                w = -w;
            }
            sp.width = w;
        }
        if (c.prec_arg >= 0) {
            int pr = (int)fetch(&a, c.prec_arg, A_INT).l;
            sp.prec = pr < 0 ? -1 : pr;
        }
        int len = c.len;
        union value v = fetch(&a, c.arg, arg_class(&c));
        switch (sp.conv) {
        case 'd':
        case 'i': {
            intmax_t x = len == 1 ? (signed char)v.l : len == 2 ? (short)v.l
                       : len == 0 ? (int)v.l : v.l;
            fmt_int(s, &sp, x < 0 ? 0 - (uintmax_t)x : (uintmax_t)x, x < 0);
            break;
        }
        case 'u': case 'o': case 'x': case 'X': {
            uintmax_t x = len == 1 ? (unsigned char)v.l : len == 2 ? (unsigned short)v.l
                        : len == 0 ? (unsigned)v.l : (unsigned long)v.l;
            sp.flags &= ~(F_PLUS | F_SPACE);
            fmt_int(s, &sp, x, 0);
            break;
        }
        case 'p':
            if (!v.l) {
                fmt_str(s, &(struct spec){sp.flags, sp.width, -1, 's'}, "(nil)");
                break;
            }
            sp.flags &= ~(F_PLUS | F_SPACE);
            fmt_int(s, &sp, (unsigned long)v.l, 0);
            break;
        case 'c': {
            char ch = (char)v.l;
            struct spec nsp = sp;
            nsp.flags &= ~F_ZERO;
            emit_padded(s, &nsp, "", 0, &ch, 1);
            break;
        }
        case 's':
            fmt_str(s, &sp, (const char *)v.l);
            break;
        case 'm':
            fmt_str(s, &sp, strerror(errno));
            break;
        case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
            fmt_float(s, &sp, len == 8 ? v.ld : v.d);
            break;
        case 'n': {
            void *ptr = (void *)v.l;
            switch (len) {
            case 1: *(signed char *)ptr = (signed char)s->count; break;
            case 2: *(short *)ptr = (short)s->count; break;
            case 3: case 4: case 5: case 6: case 7: *(long *)ptr = (long)s->count; break;
            default: *(int *)ptr = (int)s->count; break;
            }
            break;
        }
        case '%':
            out(s, "%", 1);
            break;
        default:
            // Unknown conversion, or a '%' ending the format: print it as written.
            out(s, pct, (size_t)(fmt - pct));
            break;
        }
    }
    va_end(a.ap);
    if (s->count > INT_MAX) {
        errno = EOVERFLOW;
        return -1;
    }
    return s->err ? -1 : (int)s->count;
}

// ---- sinks -------------------------------------------------------------------

static void put_file(struct sink *s, const char *p, size_t n)
{
    if (__fwrite_unlocked(p, n, s->f) != n)
        s->err = 1;
}

static void put_str(struct sink *s, const char *p, size_t n)
{
    if (s->count + 1 < s->cap) {
        size_t room = s->cap - 1 - s->count;
        memcpy(s->buf + s->count, p, n < room ? n : room);
    }
}

static void put_fd(struct sink *s, const char *p, size_t n)
{
    while (n) {
        size_t k = s->cap - s->used < n ? s->cap - s->used : n;
        memcpy(s->buf + s->used, p, k);
        s->used += k, p += k, n -= k;
        if (s->used == s->cap) {
            if (write(s->fd, s->buf, s->used) < 0)
                s->err = 1;
            s->used = 0;
        }
    }
}

// Unbuffered streams (stderr) get a temporary buffer, so one printf is one
// write rather than a write per piece.
static void put_filebuf(struct sink *s, const char *p, size_t n)
{
    while (n) {
        size_t k = s->cap - s->used < n ? s->cap - s->used : n;
        memcpy(s->buf + s->used, p, k);
        s->used += k, p += k, n -= k;
        if (s->used == s->cap) {
            if (__fwrite_unlocked(s->buf, s->used, s->f) != s->used)
                s->err = 1;
            s->used = 0;
        }
    }
}

int __vfprintf_unlocked(FILE *f, const char *fmt, va_list ap)
{
    if (f->bufmode != _IONBF) {
        struct sink s = {.put = put_file, .f = f};
        return format(&s, fmt, ap);
    }
    char buf[512];
    struct sink s = {.put = put_filebuf, .f = f, .buf = buf, .cap = sizeof buf};
    int r = format(&s, fmt, ap);
    if (s.used && __fwrite_unlocked(buf, s.used, f) != s.used)
        return -1;
    return s.err ? -1 : r;
}

int vfprintf(FILE *restrict f, const char *restrict fmt, va_list ap)
{
    __lock(&f->lock);
    int r = __vfprintf_unlocked(f, fmt, ap);
    __unlock(&f->lock);
    return r;
}

int vprintf(const char *restrict fmt, va_list ap) { return vfprintf(stdout, fmt, ap); }

int vsnprintf(char *restrict str, size_t n, const char *restrict fmt, va_list ap)
{
    struct sink s = {.put = put_str, .buf = str, .cap = n};
    int r = format(&s, fmt, ap);
    if (n)
        str[s.count < n ? s.count : n - 1] = 0;
    return r;
}

int vsprintf(char *restrict str, const char *restrict fmt, va_list ap)
{
    return vsnprintf(str, INT_MAX, fmt, ap);
}

int vdprintf(int fd, const char *restrict fmt, va_list ap)
{
    char buf[256];
    struct sink s = {.put = put_fd, .buf = buf, .cap = sizeof buf, .fd = fd};
    int r = format(&s, fmt, ap);
    if (s.used && write(fd, buf, s.used) < 0)
        return -1;
    return r;
}

int vasprintf(char **outp, const char *restrict fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || !(*outp = malloc((size_t)n + 1)))
        return -1;
    return vsnprintf(*outp, (size_t)n + 1, fmt, ap);
}

#define VARIADIC(call)      \
    va_list ap;             \
    va_start(ap, fmt);      \
    int r = call;           \
    va_end(ap);             \
    return r

int printf(const char *restrict fmt, ...) { VARIADIC(vfprintf(stdout, fmt, ap)); }
int fprintf(FILE *restrict f, const char *restrict fmt, ...) { VARIADIC(vfprintf(f, fmt, ap)); }
int dprintf(int fd, const char *restrict fmt, ...) { VARIADIC(vdprintf(fd, fmt, ap)); }
int sprintf(char *restrict str, const char *restrict fmt, ...) { VARIADIC(vsprintf(str, fmt, ap)); }
int snprintf(char *restrict str, size_t n, const char *restrict fmt, ...)
{
    VARIADIC(vsnprintf(str, n, fmt, ap));
}
int asprintf(char **outp, const char *restrict fmt, ...) { VARIADIC(vasprintf(outp, fmt, ap)); }
