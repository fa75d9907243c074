// Clocks, sleeping, and calendar time in UTC (no time zones: localtime is gmtime).
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "libc.h"

int clock_gettime(clockid_t clk, struct timespec *ts) { return sys(__NR_clock_gettime, clk, ts); }
int clock_getres(clockid_t clk, struct timespec *ts) { return sys(__NR_clock_getres, clk, ts); }
int clock_settime(clockid_t clk, const struct timespec *ts) { return sys(__NR_clock_settime, clk, ts); }
int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req, struct timespec *rem)
{
    long r = __sys(__NR_clock_nanosleep, clk, flags, req, rem);
    return r < 0 ? (int)-r : 0;
}
int nanosleep(const struct timespec *req, struct timespec *rem) { return sys(__NR_nanosleep, req, rem); }
int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    (void)tz;
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
        return -1;
    if (tv) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return 0;
}
int getitimer(int which, struct itimerval *v) { return sys(__NR_getitimer, which, v); }
int setitimer(int which, const struct itimerval *restrict v, struct itimerval *restrict old)
{
    return sys(__NR_setitimer, which, v, old);
}

time_t time(time_t *t)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (t)
        *t = ts.tv_sec;
    return ts.tv_sec;
}

int timespec_get(struct timespec *ts, int base)
{
    if (base != TIME_UTC || clock_gettime(CLOCK_REALTIME, ts) < 0)
        return 0;
    return base;
}

clock_t clock(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
        return -1;
    return ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

double difftime(time_t a, time_t b) { return (double)(a - b); }

unsigned sleep(unsigned secs)
{
    struct timespec ts = {secs, 0};
    if (nanosleep(&ts, &ts) < 0)
        return (unsigned)ts.tv_sec + (ts.tv_nsec > 0);
    return 0;
}

int usleep(useconds_t usecs)
{
    struct timespec ts = {usecs / 1000000, (long)(usecs % 1000000) * 1000};
    return nanosleep(&ts, NULL);
}

// Days since 1970-01-01 of a proleptic Gregorian date (month 1-12).
static long days_from_civil(long y, int m, int d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}


struct tm *gmtime_r(const time_t *restrict t, struct tm *restrict tm)
{
    long secs = *t, days = secs / 86400, rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    tm->tm_hour = (int)(rem / 3600);
    tm->tm_min = (int)(rem / 60 % 60);
    tm->tm_sec = (int)(rem % 60);
    tm->tm_wday = (int)(((days + 4) % 7 + 7) % 7);  // 1970-01-01 was a Thursday
    // Civil from days (the inverse of days_from_civil).
    long z = days + 719468;
    long era = (z >= 0 ? z : z - 146096) / 146097;
    long doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long y = yoe + era * 400;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    int d = (int)(doy - (153 * mp + 2) / 5 + 1);
    int m = (int)(mp < 10 ? mp + 3 : mp - 9);
    y += m <= 2;
    tm->tm_year = (int)(y - 1900);
    tm->tm_mon = m - 1;
    tm->tm_mday = d;
    tm->tm_yday = (int)(days - days_from_civil(y, 1, 1));
    tm->tm_isdst = 0;
    tm->tm_gmtoff = 0;
    tm->tm_zone = "UTC";
    return tm;
}

struct tm *gmtime(const time_t *t)
{
    static _Thread_local struct tm tm;
    return gmtime_r(t, &tm);
}
struct tm *localtime_r(const time_t *restrict t, struct tm *restrict tm) { return gmtime_r(t, tm); }
struct tm *localtime(const time_t *t) { return gmtime(t); }
void tzset(void) {}

time_t timegm(struct tm *tm)
{
    // Normalise the month first so days_from_civil sees 1-12.
    long y = tm->tm_year + 1900L, mon = tm->tm_mon;
    y += mon / 12;
    mon %= 12;
    if (mon < 0) {
        mon += 12;
        y--;
    }
    long days = days_from_civil(y, (int)mon + 1, 1) + tm->tm_mday - 1;
    time_t t = days * 86400 + tm->tm_hour * 3600L + tm->tm_min * 60L + tm->tm_sec;
    gmtime_r(&t, tm);
    return t;
}
time_t mktime(struct tm *tm) { return timegm(tm); }

static const char *const wdays[] = {"Sunday", "Monday", "Tuesday", "Wednesday",
                                    "Thursday", "Friday", "Saturday"};
static const char *const months[] = {"January", "February", "March", "April", "May", "June",
                                     "July", "August", "September", "October", "November",
                                     "December"};

size_t strftime(char *restrict s, size_t max, const char *restrict fmt, const struct tm *restrict tm)
{
    size_t n = 0;
    char tmp[64];
    for (const char *p = fmt; *p; p++) {
        const char *add = tmp;
        if (*p != '%') {
            tmp[0] = *p;
            tmp[1] = 0;
        } else {
            switch (*++p) {
            case 'a': snprintf(tmp, sizeof tmp, "%.3s", wdays[tm->tm_wday % 7]); break;
            case 'A': add = wdays[tm->tm_wday % 7]; break;
            case 'b': case 'h': snprintf(tmp, sizeof tmp, "%.3s", months[tm->tm_mon % 12]); break;
            case 'B': add = months[tm->tm_mon % 12]; break;
            case 'c':
                snprintf(tmp, sizeof tmp, "%.3s %.3s %2d %02d:%02d:%02d %d", wdays[tm->tm_wday % 7],
                         months[tm->tm_mon % 12], tm->tm_mday, tm->tm_hour, tm->tm_min,
                         tm->tm_sec, tm->tm_year + 1900);
                break;
            case 'd': snprintf(tmp, sizeof tmp, "%02d", tm->tm_mday); break;
            case 'e': snprintf(tmp, sizeof tmp, "%2d", tm->tm_mday); break;
            case 'D': snprintf(tmp, sizeof tmp, "%02d/%02d/%02d", tm->tm_mon + 1, tm->tm_mday, tm->tm_year % 100); break;
            case 'F': snprintf(tmp, sizeof tmp, "%d-%02d-%02d", tm->tm_year + 1900, tm->tm_mon + 1, tm->tm_mday); break;
            case 'H': snprintf(tmp, sizeof tmp, "%02d", tm->tm_hour); break;
            case 'I': snprintf(tmp, sizeof tmp, "%02d", (tm->tm_hour + 11) % 12 + 1); break;
            case 'j': snprintf(tmp, sizeof tmp, "%03d", tm->tm_yday + 1); break;
            case 'm': snprintf(tmp, sizeof tmp, "%02d", tm->tm_mon + 1); break;
            case 'M': snprintf(tmp, sizeof tmp, "%02d", tm->tm_min); break;
            case 'n': add = "\n"; break;
            case 'p': add = tm->tm_hour < 12 ? "AM" : "PM"; break;
            case 'S': snprintf(tmp, sizeof tmp, "%02d", tm->tm_sec); break;
            case 's': {
                struct tm c = *tm;
                snprintf(tmp, sizeof tmp, "%ld", (long)timegm(&c));
                break;
            }
            case 't': add = "\t"; break;
            case 'T': snprintf(tmp, sizeof tmp, "%02d:%02d:%02d", tm->tm_hour, tm->tm_min, tm->tm_sec); break;
            case 'R': snprintf(tmp, sizeof tmp, "%02d:%02d", tm->tm_hour, tm->tm_min); break;
            case 'u': snprintf(tmp, sizeof tmp, "%d", tm->tm_wday ? tm->tm_wday : 7); break;
            case 'w': snprintf(tmp, sizeof tmp, "%d", tm->tm_wday); break;
            case 'y': snprintf(tmp, sizeof tmp, "%02d", tm->tm_year % 100); break;
            case 'Y': snprintf(tmp, sizeof tmp, "%d", tm->tm_year + 1900); break;
            case 'z': add = "+0000"; break;
            case 'Z': add = "UTC"; break;
            case '%': add = "%"; break;
            case 0: p--; add = ""; break;
            default: snprintf(tmp, sizeof tmp, "%%%c", *p); break;
            }
        }
        size_t len = strlen(add);
        if (n + len >= max)
            return 0;
        memcpy(s + n, add, len);
        n += len;
    }
    if (n >= max)
        return 0;
    s[n] = 0;
    return n;
}

char *asctime_r(const struct tm *restrict tm, char *restrict buf)
{
    // The caller's buffer holds 26 bytes: enough for years up to 9999.
    char tmp[80];
    snprintf(tmp, sizeof tmp, "%.3s %.3s %2d %02d:%02d:%02d %d\n", wdays[tm->tm_wday % 7],
             months[tm->tm_mon % 12], tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec,
             tm->tm_year + 1900);
    strlcpy(buf, tmp, 26);
    return buf;
}
char *asctime(const struct tm *tm)
{
    static _Thread_local char buf[32];
    return asctime_r(tm, buf);
}
char *ctime_r(const time_t *t, char *buf)
{
    struct tm tm;
    return asctime_r(gmtime_r(t, &tm), buf);
}
char *ctime(const time_t *t)
{
    struct tm tm;
    return asctime(gmtime_r(t, &tm));
}
