// String and memory functions, and ctype.
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tap.h"

static void memory(void)
{
    char a[64], b[64];
    for (int i = 0; i < 64; i++)
        a[i] = (char)i;
    check(memcpy(b, a, 64) == b && memcmp(a, b, 64) == 0, "memcpy copies and returns dest");
    memset(b, 0x5a, 10);
    check(b[0] == 0x5a && b[9] == 0x5a && b[10] == 10, "memset fills exactly n bytes");
    memmove(a + 1, a, 20);  // overlapping, forwards
    check(a[1] == 0 && a[20] == 19 && a[21] == 21, "memmove with dest above src");
    memmove(a, a + 1, 20);  // overlapping, backwards
    check(a[0] == 0 && a[19] == 19 && a[20] == 19, "memmove with dest below src");
    check(memcmp("abc", "abd", 3) < 0 && memcmp("abd", "abc", 3) > 0 && memcmp("x", "y", 0) == 0,
          "memcmp order");
    check(memcmp("\x80", "\x01", 1) > 0, "memcmp compares unsigned bytes");
    const char *s = "hello world";
    check(memchr(s, 'o', 11) == s + 4 && memchr(s, 'z', 11) == NULL, "memchr");
    check(memrchr(s, 'o', 11) == s + 7, "memrchr");
    check(memmem(s, 11, "wor", 3) == s + 6 && memmem(s, 11, "wox", 3) == NULL, "memmem");
    // Unaligned and larger copies.
    static char big1[10000], big2[10000];
    for (int i = 0; i < 10000; i++)
        big1[i] = (char)(i * 7);
    memcpy(big2 + 3, big1 + 1, 9000);
    check(memcmp(big2 + 3, big1 + 1, 9000) == 0, "memcpy of 9000 unaligned bytes");
}

static void strings(void)
{
    char buf[64];
    check(strlen("") == 0 && strlen("abc") == 3, "strlen");
    check(strnlen("abcdef", 3) == 3 && strnlen("ab", 10) == 2, "strnlen");
    check(strcmp(strcpy(buf, "abc"), "abc") == 0, "strcpy");
    check(stpcpy(buf, "xy") == buf + 2, "stpcpy returns the end");
    strcat(buf, "zw");
    check_str(buf, "xyzw", "strcat");
    strncat(buf, "12345", 2);
    check_str(buf, "xyzw12", "strncat");
    memset(buf, 'Q', sizeof buf);
    strncpy(buf, "ab", 5);
    check(buf[0] == 'a' && buf[2] == 0 && buf[4] == 0 && buf[5] == 'Q', "strncpy pads with NULs");
    check(strlcpy(buf, "abcdef", 4) == 6 && strcmp(buf, "abc") == 0, "strlcpy truncates");
    check(strcmp("a", "b") < 0 && strcmp("b", "a") > 0 && strcmp("abc", "abc") == 0 &&
          strcmp("ab", "abc") < 0, "strcmp");
    check(strncmp("abcx", "abcy", 3) == 0 && strncmp("abcx", "abcy", 4) < 0, "strncmp");
    check(strcasecmp("HeLLo", "hello") == 0 && strncasecmp("ABx", "aby", 2) == 0, "strcasecmp");
    const char *s = "a/b/c";
    check(strchr(s, '/') == s + 1 && strrchr(s, '/') == s + 3 && strchr(s, 0) == s + 5 &&
          strchr(s, 'z') == NULL, "strchr/strrchr");
    check(strstr("haystack", "st") == (char *)"haystack" + 3 || strcmp(strstr("haystack", "st"), "stack") == 0,
          "strstr");
    check(strstr("abc", "") != NULL && strstr("abc", "abcd") == NULL, "strstr edge cases");
    check(strspn("aabbc", "ab") == 4 && strcspn("hello", "lo") == 2, "strspn/strcspn");
    check(strpbrk("hello", "lo") && *strpbrk("hello", "lo") == 'l', "strpbrk");
    char t[] = "  one, two,,three ";
    char *save, *tok[4] = {0};
    int n = 0;
    for (char *p = strtok_r(t, " ,", &save); p && n < 4; p = strtok_r(NULL, " ,", &save))
        tok[n++] = p;
    check(n == 3 && strcmp(tok[0], "one") == 0 && strcmp(tok[1], "two") == 0 &&
          strcmp(tok[2], "three") == 0, "strtok_r splits on any delimiter (%d tokens)", n);
    char *d = strdup("dup me");
    check(d && strcmp(d, "dup me") == 0, "strdup");
    free(d);
    d = strndup("abcdef", 3);
    check(d && strcmp(d, "abc") == 0, "strndup");
    free(d);
    char sp[] = "a:b", *spp = sp;
    char *f1 = strsep(&spp, ":"), *f2 = strsep(&spp, ":");
    check(strcmp(f1, "a") == 0 && strcmp(f2, "b") == 0 && spp == NULL, "strsep");
    check(strcmp(strerror(2), "No such file or directory") == 0, "strerror(ENOENT)");
    check(strncmp(strerror(9999), "Unknown error", 13) == 0, "strerror of an unknown number");
}

static void ctype(void)
{
    int ok = 1;
    for (int c = 0; c < 128; c++) {
        ok &= !!isdigit(c) == (c >= '0' && c <= '9');
        ok &= !!isalpha(c) == ((c | 32) >= 'a' && (c | 32) <= 'z');
        ok &= !!isspace(c) == (c == ' ' || (c >= 9 && c <= 13));
        ok &= !!isupper(c) == (c >= 'A' && c <= 'Z');
        ok &= !!isxdigit(c) == (isdigit(c) || ((c | 32) >= 'a' && (c | 32) <= 'f'));
        ok &= !!isprint(c) == (c >= 32 && c < 127);
        ok &= !!ispunct(c) == (isprint(c) && c != ' ' && !isalnum(c));
    }
    check(ok, "ctype classes over ASCII");
    check(toupper('a') == 'A' && toupper('A') == 'A' && tolower('Z') == 'z' && tolower('1') == '1',
          "toupper/tolower");
    check(!isalpha(200) && !isdigit(-1), "ctype outside ASCII");
}

int main(void)
{
    memory();
    strings();
    ctype();
    return tap_done();
}
