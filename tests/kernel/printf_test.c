// Tests for the kernel's printf formatting.
#include "ktest/ktest.h"

static bool fmt_is(const char *want, const char *fmt, ...)
{
    char buf[64];
    va_list ap;
    va_start(ap, fmt);
    int n = kvsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (strcmp(buf, want) != 0 || n != (int)strlen(want)) {
        kprintf("# got \"%s\" (%d), want \"%s\"\n", buf, n, want);
        return false;
    }
    return true;
}

KTEST(printf_formats)
{
    KCHECK(fmt_is("42 -7 ff FF 17", "%d %i %x %X %o", 42, -7, 255, 255, 15));
    KCHECK(fmt_is("[   5][5   ][00005]", "[%4d][%-4d][%05d]", 5, 5, 5));
    KCHECK(fmt_is("-9223372036854775808", "%ld", (long)(-9223372036854775807L - 1)));
    KCHECK(fmt_is("18446744073709551615", "%lu", ~0UL));
    KCHECK(fmt_is("0x00000000deadbeef", "%p", (void *)0xdeadbeef));
    KCHECK(fmt_is("ab|  xyz|(null)", "%.2s|%5s|%s", "abc", "xyz", (char *)NULL));
    KCHECK(fmt_is("c%", "%c%%", 'c'));
    // The alternate form: gcc's format check accepts it, so a panic message may
    // use it; unparsed, it shifted every later argument (a %s read a number).
    KCHECK(fmt_is("0x6b6b 0 0X1F 017 0x0000ab -5 x", "%#x %#x %#X %#o %#08lx %d %s", 0x6b6b, 0,
                  31, 15, 0xabUL, -5, "x"));
}

KTEST(printf_truncates_safely)
{
    char buf[4];
    int n = ksnprintf(buf, sizeof buf, "%s", "hello");
    KCHECK_EQ(n, 5);
    KCHECK(strcmp(buf, "hel") == 0);
}
