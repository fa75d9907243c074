// Numeric conversions: strtol family (bases, signs, overflow, end pointers)
// and strtod (decimal, exponents, hex, inf/nan, round trips).
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"

static void integers(void)
{
    char *end;
    check(strtol("  -123xyz", &end, 10) == -123 && strcmp(end, "xyz") == 0, "strtol with sign and tail");
    check(strtol("0x1fG", &end, 16) == 31 && *end == 'G', "strtol base 16 with 0x");
    check(strtol("0x1f", &end, 0) == 31, "strtol base 0 hex");
    check(strtol("017", &end, 0) == 15, "strtol base 0 octal");
    check(strtol("z", &end, 36) == 35, "strtol base 36");
    check(strtol("0x", &end, 16) == 0 && *end == 'x', "strtol \"0x\" parses the 0 only");
    check(strtol("abc", &end, 10) == 0 && strcmp(end, "abc") == 0, "strtol with no digits leaves end at start");
    errno = 0;
    check(strtol("9223372036854775807", NULL, 10) == LONG_MAX && errno == 0, "strtol LONG_MAX");
    errno = 0;
    check(strtol("9223372036854775808", NULL, 10) == LONG_MAX && errno == ERANGE, "strtol overflow: ERANGE");
    errno = 0;
    check(strtol("-9223372036854775808", NULL, 10) == LONG_MIN && errno == 0, "strtol LONG_MIN");
    errno = 0;
    check(strtol("-9223372036854775809", NULL, 10) == LONG_MIN && errno == ERANGE, "strtol underflow: ERANGE");
    errno = 0;
    check(strtoul("18446744073709551615", NULL, 10) == ULONG_MAX && errno == 0, "strtoul ULONG_MAX");
    errno = 0;
    check(strtoul("18446744073709551616", NULL, 10) == ULONG_MAX && errno == ERANGE, "strtoul overflow");
    check(strtoul("-1", NULL, 10) == ULONG_MAX, "strtoul(\"-1\") wraps");
    check(strtoll("-42", NULL, 0) == -42 && strtoull("777", NULL, 8) == 511, "strtoll/strtoull");
    check(atoi(" 12abc") == 12 && atol("-5") == -5 && atoll("1000000000000") == 1000000000000LL, "atoi/atol/atoll");
    errno = 0;
    strtol("1", NULL, 1);
    check(errno == EINVAL, "strtol base 1: EINVAL");
}

static void floats(void)
{
    char *end;
    check(strtod("3.25", &end) == 3.25 && *end == 0, "strtod 3.25");
    check(strtod("  -1.5e3x", &end) == -1500.0 && *end == 'x', "strtod exponent and tail");
    check(strtod("1e", &end) == 1.0 && *end == 'e', "strtod dangling exponent");
    check(strtod(".5", NULL) == 0.5 && strtod("5.", NULL) == 5.0, "strtod leading/trailing dot");
    check(strtod("0x1.8p1", &end) == 3.0 && *end == 0, "strtod hex float");
    check(strtod("0.1", NULL) == 0.1 && strtod("0.3", NULL) == 0.3, "strtod 0.1 and 0.3 exactly rounded");
    check(strtod("1.7976931348623157e308", NULL) == 1.7976931348623157e308, "strtod DBL_MAX");
    check(strtod("2.2250738585072014e-308", NULL) == 2.2250738585072014e-308, "strtod DBL_MIN");
    check(strtod("4.9406564584124654e-324", NULL) == 4.9406564584124654e-324, "strtod smallest subnormal");
    errno = 0;
    double h = strtod("1e400", NULL);
    check(h == __builtin_inf() && errno == ERANGE, "strtod overflow: inf and ERANGE");
    errno = 0;
    check(strtod("1e-400", NULL) == 0 && errno == ERANGE, "strtod underflow: 0 and ERANGE");
    check(__builtin_isinf(strtod("-Infinity", &end)) && *end == 0, "strtod infinity");
    check(__builtin_isnan(strtod("nan", NULL)), "strtod nan");
    check(strtod("xyz", &end) == 0 && strcmp(end, "xyz") == 0, "strtod with no number");
    check(strtof("0.1", NULL) == 0.1f, "strtof");
    check(strtod("123456789012345678901234567890", NULL) == 123456789012345678901234567890.0,
          "strtod of 30 digits");
    // Round trips of printf("%.17g") through strtod.
    unsigned long x = 88172645463325252UL;
    int bad = 0;
    for (int i = 0; i < 2000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double d;
        unsigned long bits = (x & 0x7fefffffffffffffUL);
        memcpy(&d, &bits, 8);
        char buf[64];
        snprintf(buf, sizeof buf, "%.17g", d);
        if (strtod(buf, NULL) != d) {
            if (bad++ < 3)
                printf("# round trip failed: %s\n", buf);
        }
    }
    check(bad == 0, "2000 random doubles round-trip through %%.17g and strtod (%d bad)", bad);
}

int main(void)
{
    integers();
    floats();
    return tap_done();
}
