// A tiny test harness for libc's unit tests: `ok N - name` / `not ok N - name`
// lines and the closing `N passed, N failed`; exit status 0 iff all passed.
#pragma once
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3))) static int check(int cond, const char *fmt, ...)
{
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    tap_n++;
    if (!cond)
        tap_failed++;
    printf("%s %d - %s\n", cond ? "ok" : "not ok", tap_n, name);
    fflush(stdout);
    return cond;
}

// Compare a string result with the expected one; show both on failure.
__attribute__((unused)) static int check_str(const char *got, const char *want, const char *name)
{
    int ok = got && strcmp(got, want) == 0;
    if (!ok)
        printf("# %s: got \"%s\", want \"%s\"\n", name, got ? got : "(null)", want);
    return check(ok, "%s", name);
}

static int tap_done(void)
{
    printf("%d passed, %d failed\n", tap_n - tap_failed, tap_failed);
    fflush(stdout);
    return tap_failed ? 1 : 0;
}
