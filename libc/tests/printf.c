// printf family: conversions, flags, widths, precision and length modifiers
// against glibc's output for the same calls; exact float rounding; snprintf
// truncation and return values; %n; asprintf.
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"

#define T(fmt, v, want)                                \
    do {                                               \
        char buf[512];                                 \
        snprintf(buf, sizeof buf, fmt, v);             \
        check_str(buf, want, "printf(\"" fmt "\", " #v ")"); \
    } while (0)
#define T2(fmt, a, v, want)                            \
    do {                                               \
        char buf[512];                                 \
        snprintf(buf, sizeof buf, fmt, a, v);          \
        check_str(buf, want, "printf(\"" fmt "\", " #a ", " #v ")"); \
    } while (0)

static void table(void)
{
    T("%d", 0, "0");
    T("%d", -1, "-1");
    T("%d", 2147483647, "2147483647");
    T("%d", (-2147483647-1), "-2147483648");
    T("%5d", 42, "   42");
    T("%-5d|", 42, "42   |");
    T("%05d", -42, "-0042");
    T("%+d", 42, "+42");
    T("% d", 42, " 42");
    T("%.3d", 7, "007");
    T("%8.3d", -7, "    -007");
    T("%-8.3d|", 7, "007     |");
    T("%.0d", 0, "");
    T("%i", 123, "123");
    T("%u", 4294967295u, "4294967295");
    T("%x", 255u, "ff");
    T("%X", 255u, "FF");
    T("%#x", 255u, "0xff");
    T("%#X", 0u, "0");
    T("%#o", 8u, "010");
    T("%#o", 0u, "0");
    T("%o", 511u, "777");
    T("%#.3o", 8u, "010");
    T("%lld", -9223372036854775807LL - 1, "-9223372036854775808");
    T("%llu", 18446744073709551615ULL, "18446744073709551615");
    T("%lx", 0xdeadbeefcafeUL, "deadbeefcafe");
    T("%zu", (size_t)123456789, "123456789");
    T("%zd", (ptrdiff_t)-5, "-5");
    T("%jd", (intmax_t)-77, "-77");
    T("%hhd", 300, "44");
    T("%hd", 70000, "4464");
    T("%hhu", 255 + 2, "1");
    T("%hu", 65537, "1");
    T("%c", 'A', "A");
    T("%3c|", 'z', "  z|");
    T("%-3c|", 'z', "z  |");
    T("%s", "hello", "hello");
    T("%10s|", "hi", "        hi|");
    T("%-10s|", "hi", "hi        |");
    T("%.2s", "hello", "he");
    T("%-5.1s|", "xyz", "x    |");
    T("%%%d", 5, "%5");
    T("%08.3f", 3.14159, "0003.142");
    T("%f", 0.0, "0.000000");
    T("%f", -0.0, "-0.000000");
    T("%f", 1.0, "1.000000");
    T("%f", 0.1, "0.100000");
    T("%.0f", 0.5, "0");
    T("%.0f", 1.5, "2");
    T("%.0f", 2.5, "2");
    T("%.0f", 3.5, "4");
    T("%.1f", 0.25, "0.2");
    T("%.1f", 0.35, "0.3");
    T("%.2f", 1.005, "1.00");
    T("%.3f", 2.0005, "2.001");
    T("%.10f", 1.0/3, "0.3333333333");
    T("%f", 1e20, "100000000000000000000.000000");
    T("%f", 123456789.125, "123456789.125000");
    T("%.20f", 0.1, "0.10000000000000000555");
    T("%.0f", 1e300, "1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160");
    T("%f", 1.5e-7, "0.000000");
    T("%e", 0.0, "0.000000e+00");
    T("%e", 1.0, "1.000000e+00");
    T("%e", 123456.0, "1.234560e+05");
    T("%.2e", 9.995, "9.99e+00");
    T("%.2e", 9.996, "1.00e+01");
    T("%E", 1e-300, "1.000000E-300");
    T("%e", 5e-324, "4.940656e-324");
    T("%.0e", 15.0, "2e+01");
    T("%#.0e", 15.0, "2.e+01");
    T("%#.0f", 3.0, "3.");
    T("%+.3e", -1.5, "-1.500e+00");
    T("%12.4e|", 3.14159, "  3.1416e+00|");
    T("%-12.2e|", 3.14159, "3.14e+00    |");
    T("%g", 0.0, "0");
    T("%g", 1.0, "1");
    T("%g", 100000.0, "100000");
    T("%g", 1000000.0, "1e+06");
    T("%g", 0.0001, "0.0001");
    T("%g", 0.00001, "1e-05");
    T("%g", 1.5, "1.5");
    T("%g", 123456789.0, "1.23457e+08");
    T("%.3g", 3.14159, "3.14");
    T("%.10g", 1.0/3, "0.3333333333");
    T("%#g", 1.0, "1.00000");
    T("%#.3g", 1.0, "1.00");
    T("%G", 1e-10, "1E-10");
    T("%g", 1e100, "1e+100");
    T("%.0g", 123.0, "1e+02");
    T("%.1g", 0.95, "0.9");
    T("%g", 0.95, "0.95");
    T("%g", 9.9999999, "10");
    T("%.17g", 0.1, "0.10000000000000001");
    T("%.17g", 1.7976931348623157e308, "1.7976931348623157e+308");
    T("%g", 2.2250738585072014e-308, "2.22507e-308");
    T("%10.3g|", 1234.5, "  1.23e+03|");
    T("%-10g|", 1.25, "1.25      |");
    T("%f", 1.0/0.0, "inf");
    T("%f", -1.0/0.0, "-inf");
    T("%F", 1.0/0.0, "INF");
    T("%5.1f|", 0.0/0.0, " -nan|");
    T("%e", 1.0/0.0, "inf");
    T("%g", -1.0/0.0, "-inf");
    T("%010f", -1.0/0.0, "      -inf");
    T("%a", 1.0, "0x1p+0");
    T("%a", 0.5, "0x1p-1");
    T("%a", -3.75, "-0x1.ep+1");
    T("%a", 0.0, "0x0p+0");
    T("%.2a", 1.0/3, "0x1.55p-2");
    T("%A", 255.0, "0X1.FEP+7");
    T("%a", 5e-324, "0x0.0000000000001p-1022");
    T("%.0a", 1.5, "0x2p+0");
    T("%Lf", 1.5L, "1.500000");
    T("%Le", 1e4000L, "1.000000e+4000");
    T("%.3Lf", 2.0L/3, "0.667");
    T("%Lg", 1e-4000L, "1e-4000");
    T("%p", (void *)0x1234, "0x1234");
    T("%p", (void *)0, "(nil)");
    T("%20p|", (void *)0xabc, "               0xabc|");
    T("%-20p|", (void *)0xabc, "0xabc               |");
    T("%f", 9007199254740993.0, "9007199254740992.000000");
    T("%.15f", 0.3, "0.300000000000000");
    T("%.3f", 0.0005, "0.001");
    T("%.3f", 0.0015, "0.002");
    T("%.3f", 0.0025, "0.003");
    T("%.1f", 0.05, "0.1");
    T("%.1f", 0.95, "0.9");
    T("%.0f", 0.4, "0");
    T("%f", 1e-320, "0.000000");
    T("%.340f", 1e-320, "0.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000099998886718268300541");
    T2("%*d", 6, 42, "    42");
    T2("%-*d|", 6, 42, "42    |");
    T2("%*d|", -6, 42, "42    |");
    T2("%.*f", 2, 3.14159, "3.14");
    T2("%.*s", 3, "abcdef", "abc");
    T2("%.*d", -1, 5, "5");
}

static void lengths(void)
{
    char buf[16];
    int n = snprintf(buf, sizeof buf, "%s", "0123456789abcdefghij");
    check(n == 20, "snprintf returns the untruncated length (%d)", n);
    check_str(buf, "0123456789abcde", "snprintf truncates and terminates");
    n = snprintf(NULL, 0, "%d-%s", 12345, "xy");
    check(n == 8, "snprintf(NULL, 0) measures (%d)", n);
    buf[0] = 'Q';
    snprintf(buf, 1, "abc");
    check(buf[0] == 0, "snprintf with size 1 writes only the terminator");
    int a = -1, b = -1;
    snprintf(buf, sizeof buf, "ab%ncde%n", &a, &b);
    check(a == 2 && b == 5, "%%n stores the counts so far (%d, %d)", a, b);
    char *s = NULL;
    n = asprintf(&s, "%d %s %.2f", 7, "seven", 7.0);
    check(n == 12 && s && strcmp(s, "7 seven 7.00") == 0, "asprintf allocates and formats");
    free(s);
    char big[3000];
    n = snprintf(big, sizeof big, "%2000d|", 1);
    check(n == 2001 && big[1999] == '1' && big[2000] == '|', "wide padding (%d)", n);
    n = snprintf(big, sizeof big, "%.1500f", 1.0);
    check(n == 1502 && big[1501] == '0', "long precision (%d)", n);
    n = snprintf(big, sizeof big, "%f", 1.7976931348623157e308);
    check(n == 316 && strncmp(big, "179769313486231570814527423731704356798", 39) == 0,
          "DBL_MAX in full (%d chars)", n);
}

static void odd_formats(void)
{
    char buf[32];
    const char *volatile fmt = "abc%";  // volatile: keep gcc's format check out of it
    int n = snprintf(buf, sizeof buf, fmt);
    check(n == 4 && memcmp(buf, "abc%", 5) == 0, "a trailing %% prints as itself (%d)", n);
    fmt = "[%y]";
    n = snprintf(buf, sizeof buf, fmt);
    check(n == 4 && strcmp(buf, "[%y]") == 0, "an unknown conversion prints as written");
}

static void positional(void)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%2$s %1$s", "world", "hello");
    check_str(buf, "hello world", "positional arguments in another order");
    snprintf(buf, sizeof buf, "%1$d-%1$d %2$lld", 7, 1LL << 40);
    check_str(buf, "7-7 1099511627776", "an argument used twice, then a long long");
    snprintf(buf, sizeof buf, "[%2$*1$d]", 6, 42);
    check_str(buf, "[    42]", "width from a positional argument");
    snprintf(buf, sizeof buf, "%3$.*2$f|%1$c", 'x', 3, 3.14159);
    check_str(buf, "3.142|x", "precision from a positional argument, mixed types");
    snprintf(buf, sizeof buf, "%1$Lf %2$s", 2.5L, "ld");
    check_str(buf, "2.500000 ld", "long double positional argument");
}

static void sprintf_family(void)
{
    char buf[64];
    int n = sprintf(buf, "[%5s|%-5s]", "ab", "cd");
    check(n == 13 && strcmp(buf, "[   ab|cd   ]") == 0, "sprintf");
    n = printf("# printf to stdout %d\n", 1);
    check(n == 21, "printf returns bytes written (%d)", n);
    n = fprintf(stdout, "# fprintf %s\n", "x");
    check(n == 12, "fprintf returns bytes written (%d)", n);
    fflush(stdout);
    n = dprintf(1, "# dprintf %05.1f\n", 2.25);
    check(n == 16, "dprintf returns bytes written (%d)", n);
}

int main(void)
{
    table();
    lengths();
    odd_formats();
    positional();
    sprintf_family();
    return tap_done();
}
