// Time: clocks and sleeping, calendar conversion (UTC), strftime.
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "tap.h"

int main(void)
{
    struct timespec a, b;
    check(clock_gettime(CLOCK_MONOTONIC, &a) == 0, "clock_gettime(CLOCK_MONOTONIC)");
    struct timespec nap = {0, 20 * 1000000};
    check(nanosleep(&nap, NULL) == 0, "nanosleep");
    clock_gettime(CLOCK_MONOTONIC, &b);
    long ns = (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
    check(ns >= 20 * 1000000, "the monotonic clock advanced at least the sleep (%ld ns)", ns);
    struct timeval tv;
    time_t now = time(NULL);
    check(gettimeofday(&tv, NULL) == 0 && tv.tv_sec >= now && tv.tv_sec - now < 5,
          "gettimeofday agrees with time()");
    check(now > 1600000000, "the real-time clock is plausible (%ld)", (long)now);

    struct tm tm;
    time_t t = 0;
    gmtime_r(&t, &tm);
    check(tm.tm_year == 70 && tm.tm_mon == 0 && tm.tm_mday == 1 && tm.tm_wday == 4 && tm.tm_hour == 0,
          "gmtime(0) is Thursday 1970-01-01");
    t = 951782400;  // 2000-02-29 00:00:00
    gmtime_r(&t, &tm);
    check(tm.tm_year == 100 && tm.tm_mon == 1 && tm.tm_mday == 29 && tm.tm_yday == 59 && tm.tm_wday == 2,
          "gmtime of a leap day");
    t = 4102444799;  // 2099-12-31 23:59:59
    gmtime_r(&t, &tm);
    check(tm.tm_year == 199 && tm.tm_mon == 11 && tm.tm_mday == 31 && tm.tm_hour == 23 &&
          tm.tm_min == 59 && tm.tm_sec == 59 && tm.tm_yday == 364, "gmtime at the end of 2099");
    t = -86400;
    gmtime_r(&t, &tm);
    check(tm.tm_year == 69 && tm.tm_mon == 11 && tm.tm_mday == 31, "gmtime before the epoch");
    int ok = 1;
    for (time_t x = -5000000000L; x < 5000000000L; x += 86400 * 37 + 3607) {
        struct tm c;
        gmtime_r(&x, &c);
        ok &= timegm(&c) == x;
    }
    check(ok, "timegm inverts gmtime over three centuries");
    struct tm n = {.tm_year = 120, .tm_mon = 13, .tm_mday = 1};  // month 13 of 2020
    check(timegm(&n) == 1612137600 && n.tm_year == 121 && n.tm_mon == 1, "timegm normalises");

    char buf[64];
    t = 1700000000;
    gmtime_r(&t, &tm);
    size_t len = strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %a %b %j %%", &tm);
    check(len > 0 && strcmp(buf, "2023-11-14 22:13:20 Tue Nov 318 %") == 0, "strftime (%s)", buf);
    check(strftime(buf, 5, "%Y-%m-%d", &tm) == 0, "strftime reports overflow");
    check(strcmp(asctime(&tm), "Tue Nov 14 22:13:20 2023\n") == 0, "asctime");
    return tap_done();
}
