// getenv, setenv, unsetenv, putenv, and environ as exec sees it.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"

int main(void)
{
    check(setenv("LIBC_TEST_A", "one", 1) == 0 && strcmp(getenv("LIBC_TEST_A"), "one") == 0,
          "setenv then getenv");
    check(setenv("LIBC_TEST_A", "two", 0) == 0 && strcmp(getenv("LIBC_TEST_A"), "one") == 0,
          "setenv without overwrite keeps the value");
    check(setenv("LIBC_TEST_A", "two", 1) == 0 && strcmp(getenv("LIBC_TEST_A"), "two") == 0,
          "setenv with overwrite replaces it");
    check(getenv("LIBC_TEST_A=") == NULL || 1, "getenv of a name with '=' does not crash");
    check(getenv("LIBC_TEST_") == NULL, "getenv matches whole names only");
    for (int i = 0; i < 200; i++) {
        char name[32];
        snprintf(name, sizeof name, "LIBC_TEST_MANY_%d", i);
        setenv(name, name + 10, 1);
    }
    int ok = 1;
    for (int i = 0; i < 200; i++) {
        char name[32];
        snprintf(name, sizeof name, "LIBC_TEST_MANY_%d", i);
        const char *v = getenv(name);
        ok &= v && strcmp(v, name + 10) == 0;
    }
    check(ok, "200 variables set and found");
    check(unsetenv("LIBC_TEST_A") == 0 && getenv("LIBC_TEST_A") == NULL, "unsetenv");
    errno = 0;
    check(setenv("A=B", "x", 1) == -1 && errno == EINVAL, "setenv rejects '=' in the name");
    errno = 0;
    check(setenv("", "x", 1) == -1 && errno == EINVAL, "setenv rejects an empty name");
    static char pe[] = "LIBC_TEST_P=put";
    check(putenv(pe) == 0 && strcmp(getenv("LIBC_TEST_P"), "put") == 0, "putenv");
    pe[12] = 'X';
    check(strcmp(getenv("LIBC_TEST_P"), "Xut") == 0, "putenv keeps the caller's string");
    int found = 0;
    for (char **e = environ; *e; e++)
        found += strcmp(*e, "LIBC_TEST_MANY_7=MANY_7") == 0;
    check(found == 1, "environ lists a set variable once");
    check(getenv("PATH") != NULL, "the inherited environment is visible (PATH)");
    return tap_done();
}
