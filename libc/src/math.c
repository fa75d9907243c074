// Mathematics. Rounding and remainders are exact (integer and x87 fprem
// arithmetic); sqrt is the SSE2 instruction (correctly rounded). The
// transcendental functions evaluate in x87 extended precision (64-bit
// mantissa: fyl2x, f2xm1, fscale, fsin, fcos, fptan, fpatan) and round once
// to double, which keeps them within about one ulp. errno is not set; domain
// errors give NaN, overflows give infinity, as IEEE arithmetic does.
#include <math.h>
#include <stdint.h>

static inline uint64_t bits(double x)
{
    uint64_t u;
    __builtin_memcpy(&u, &x, 8);
    return u;
}

double fabs(double x) { return __builtin_fabs(x); }
float fabsf(float x) { return __builtin_fabsf(x); }
double copysign(double x, double y) { return __builtin_copysign(x, y); }

double sqrt(double x)
{
    __asm__("sqrtsd %1, %0" : "=x"(x) : "x"(x));
    return x;
}

float sqrtf(float x)
{
    __asm__("sqrtss %1, %0" : "=x"(x) : "x"(x));
    return x;
}

// Values with |x| >= 2^52 (and NaN, infinities) are already integers.
static int is_integral_range(double x) { return !(__builtin_fabs(x) < 4503599627370496.0); }

double trunc(double x)
{
    if (is_integral_range(x))
        return x;
    return __builtin_copysign((double)(long)x, x);
}

double floor(double x)
{
    double t = trunc(x);
    return t > x ? t - 1 : t;
}

double ceil(double x)
{
    double t = trunc(x);
    return t < x ? t + 1 : t;
}

double round(double x)
{
    if (is_integral_range(x))
        return x;
    double t = trunc(x);
    if (__builtin_fabs(x - t) >= 0.5)  // exact: x - t is representable
        t += __builtin_copysign(1.0, x);
    return __builtin_copysign(t, x);
}

double rint(double x)
{
    // Adding and subtracting 2^52 rounds to an integer in the current mode.
    if (is_integral_range(x))
        return x;
    double big = __builtin_copysign(4503599627370496.0, x);
    return __builtin_copysign((x + big) - big, x);
}
double nearbyint(double x) { return rint(x); }
long lround(double x) { return (long)round(x); }
long lrint(double x) { return (long)rint(x); }

double fmin(double x, double y)
{
    if (x != x)
        return y;
    if (y != y)
        return x;
    return x < y || (x == y && __builtin_signbit(x)) ? x : y;
}

double fmax(double x, double y)
{
    if (x != x)
        return y;
    if (y != y)
        return x;
    return x > y || (x == y && !__builtin_signbit(x)) ? x : y;
}

double fmod(double x, double y)
{
    long double a = x, b = y;
    unsigned short sw;
    do  // fprem reduces by at most 2^63 per step; C2 says "not done yet"
        __asm__("fprem; fnstsw %1" : "+t"(a), "=a"(sw) : "u"(b));
    while (sw & 0x400);
    return (double)a;
}

double scalbn(double x, int e)
{
    long double r = x;
    long double n = e;
    __asm__("fscale" : "+t"(r) : "u"(n));
    return (double)r;
}
double ldexp(double x, int e) { return scalbn(x, e); }

double frexp(double x, int *e)
{
    uint64_t u = bits(x);
    int ex = (int)(u >> 52 & 0x7ff);
    if (x == 0 || ex == 0x7ff) {
        *e = 0;
        return x;
    }
    if (ex == 0) {  // subnormal: normalise first
        x *= 18014398509481984.0;  // 2^54
        u = bits(x);
        ex = (int)(u >> 52 & 0x7ff) - 54;
    }
    *e = ex - 1022;
    u = (u & ~(0x7ffULL << 52)) | (1022ULL << 52);
    __builtin_memcpy(&x, &u, 8);
    return x;
}

double modf(double x, double *ip)
{
    double t = trunc(x);
    *ip = t;
    if (__builtin_isinf(x))
        return __builtin_copysign(0.0, x);
    return __builtin_copysign(x - t, x);
}

double hypot(double x, double y)
{
    long double a = x, b = y;  // extended range: no intermediate overflow
    if (__builtin_isinf(x) || __builtin_isinf(y))
        return __builtin_inf();
    long double s = a * a + b * b;
    __asm__("fsqrt" : "+t"(s));
    return (double)s;
}

// ---- x87 building blocks (long double in, long double out) -------------------

static long double log2l_(long double x)  // log2(x) for x > 0
{
    long double r;
    __asm__("fyl2x" : "=t"(r) : "0"(x), "u"(1.0L) : "st(1)");
    return r;
}

// 2^t for any finite t: 2^frac via f2xm1 (|frac| <= 0.5), scaled by 2^int.
static long double exp2l_(long double t)
{
    if (t != t)
        return t;
    if (t > 20000)
        return __builtin_infl();
    if (t < -20000)
        return 0;
    long double n;
    __asm__("frndint" : "=t"(n) : "0"(t));
    long double f = t - n, r;
    __asm__("f2xm1" : "=t"(r) : "0"(f));
    r += 1;
    __asm__("fscale" : "+t"(r) : "u"(n));
    return r;
}

// 2^t - 1, without cancellation for small t.
static long double exp2m1l_(long double t)
{
    if (__builtin_fabsl(t) <= 1) {
        long double r;
        __asm__("f2xm1" : "=t"(r) : "0"(t));
        return r;
    }
    return exp2l_(t) - 1;
}

#define LOG2E 1.442695040888963407359924681001892137L

double exp2(double x) { return (double)exp2l_(x); }
double exp(double x) { return (double)exp2l_((long double)x * LOG2E); }

double expm1(double x) { return (double)exp2m1l_((long double)x * LOG2E); }

static double log_base(double x, long double scale)
{
    if (x != x || x < 0)
        return __builtin_nan("");
    if (x == 0)
        return -__builtin_inf();
    if (__builtin_isinf(x))
        return x;
    return (double)(log2l_(x) * scale);
}

double log2(double x) { return log_base(x, 1.0L); }
double log(double x) { return log_base(x, 0.693147180559945309417232121458176568L); }
double log10(double x) { return log_base(x, 0.301029995663981195213738894724493027L); }

double log1p(double x)
{
    if (__builtin_fabs(x) < 0.29) {  // fyl2xp1: log2(1 + x) without forming 1 + x
        long double r;
        __asm__("fyl2xp1" : "=t"(r) : "0"((long double)x), "u"(0.693147180559945309417232121458176568L)
                : "st(1)");
        return (double)r;
    }
    if (x != x || x < -1)
        return __builtin_nan("");
    if (x == -1)
        return -__builtin_inf();
    if (__builtin_isinf(x))
        return x;
    return (double)(log2l_(1 + (long double)x) * 0.693147180559945309417232121458176568L);
}

static int is_odd_integer(double y)
{
    return __builtin_fabs(y) < 9007199254740992.0 && trunc(y) == y && fmod(y, 2.0) != 0;
}

double pow(double x, double y)
{
    if (y == 0 || x == 1)
        return 1;
    if (x != x || y != y)
        return x + y;
    if (x == 0) {
        if (y < 0)
            return is_odd_integer(y) ? __builtin_copysign(__builtin_inf(), x) : __builtin_inf();
        return is_odd_integer(y) ? x : 0.0;
    }
    if (__builtin_isinf(y)) {
        double ax = __builtin_fabs(x);
        if (ax == 1)
            return 1;
        return (ax > 1) == (y > 0) ? __builtin_inf() : 0.0;
    }
    if (__builtin_isinf(x)) {
        double r = y > 0 ? __builtin_inf() : 0.0;
        return x < 0 && is_odd_integer(y) ? -r : r;
    }
    int negate = 0;
    if (x < 0) {
        if (trunc(y) != y)
            return __builtin_nan("");  // negative base, fractional exponent
        negate = is_odd_integer(y);
        x = -x;
    }
    long double r = exp2l_((long double)y * log2l_(x));
    return (double)(negate ? -r : r);
}

double cbrt(double x)
{
    if (x == 0 || x != x || __builtin_isinf(x))
        return x;
    long double a = __builtin_fabs(x);
    long double r = exp2l_(log2l_(a) / 3);
    r = r - (r * r * r - a) / (3 * r * r);  // one Newton step in extended precision
    return __builtin_copysign((double)r, x);
}

// fsin/fcos/fptan accept |x| < 2^63; reduce larger arguments first.
static long double reduce(double x)
{
    long double a = x;
    if (__builtin_fabs(x) >= 9.2e18) {
        long double twopi = 6.283185307179586476925286766559005768L;
        unsigned short sw;
        do
            __asm__("fprem1; fnstsw %1" : "+t"(a), "=a"(sw) : "u"(twopi));
        while (sw & 0x400);
    }
    return a;
}

double sin(double x)
{
    if (__builtin_isinf(x))
        return __builtin_nan("");
    long double a = reduce(x);
    __asm__("fsin" : "+t"(a));
    return (double)a;
}

double cos(double x)
{
    if (__builtin_isinf(x))
        return __builtin_nan("");
    long double a = reduce(x);
    __asm__("fcos" : "+t"(a));
    return (double)a;
}

double tan(double x)
{
    if (__builtin_isinf(x))
        return __builtin_nan("");
    long double a = reduce(x), one;
    __asm__("fptan" : "=t"(one), "=u"(a) : "0"(a));
    return (double)a;
}

double atan2(double y, double x)
{
    long double r;
    __asm__("fpatan" : "=t"(r) : "0"((long double)x), "u"((long double)y) : "st(1)");
    return (double)r;
}

double atan(double x) { return atan2(x, 1.0); }

double asin(double x)
{
    if (!(__builtin_fabs(x) <= 1))
        return __builtin_nan("");
    long double a = x, c = (1 - a) * (1 + a);
    __asm__("fsqrt" : "+t"(c));
    long double r;
    __asm__("fpatan" : "=t"(r) : "0"(c), "u"(a) : "st(1)");
    return (double)r;
}

double acos(double x)
{
    if (!(__builtin_fabs(x) <= 1))
        return __builtin_nan("");
    long double a = x, s = (1 - a) * (1 + a);
    __asm__("fsqrt" : "+t"(s));
    long double r;
    __asm__("fpatan" : "=t"(r) : "0"(a), "u"(s) : "st(1)");
    return (double)r;
}

// The hyperbolic functions through e^x - 1, so small arguments do not cancel.
double sinh(double x)
{
    // On |x|, so that m + 1 = e^|x| never cancels.
    long double m = exp2m1l_((long double)__builtin_fabs(x) * LOG2E);
    return __builtin_copysign((double)((m + m / (m + 1)) / 2), x);
}

double cosh(double x)
{
    long double e = exp2l_((long double)x * LOG2E);
    return (double)((e + 1 / e) / 2);
}

double tanh(double x)
{
    if (__builtin_fabs(x) > 23)
        return __builtin_copysign(1.0, x);
    long double m = exp2m1l_(2 * (long double)__builtin_fabs(x) * LOG2E);
    return __builtin_copysign((double)(m / (m + 2)), x);
}
