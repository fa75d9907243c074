// Time: clocks, sleeping, calendar time (UTC only; no time zones).
#pragma once
#include <sys/types.h>

#define CLOCKS_PER_SEC 1000000L
#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
#define CLOCK_PROCESS_CPUTIME_ID 2
#define CLOCK_THREAD_CPUTIME_ID 3
#define CLOCK_MONOTONIC_RAW 4
#define CLOCK_REALTIME_COARSE 5
#define CLOCK_MONOTONIC_COARSE 6
#define CLOCK_BOOTTIME 7
#define TIMER_ABSTIME 1
#define TIME_UTC 1

struct timespec {
    time_t tv_sec;
    long tv_nsec;
};
struct tm {
    int tm_sec, tm_min, tm_hour, tm_mday, tm_mon, tm_year, tm_wday, tm_yday, tm_isdst;
    long tm_gmtoff;
    const char *tm_zone;
};

time_t time(time_t *t);
clock_t clock(void);
double difftime(time_t a, time_t b);
int clock_gettime(clockid_t clk, struct timespec *ts);
int clock_getres(clockid_t clk, struct timespec *ts);
int clock_settime(clockid_t clk, const struct timespec *ts);
int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req, struct timespec *rem);
int nanosleep(const struct timespec *req, struct timespec *rem);
int timespec_get(struct timespec *ts, int base);
struct tm *gmtime(const time_t *t);
struct tm *gmtime_r(const time_t *restrict t, struct tm *restrict tm);
struct tm *localtime(const time_t *t);
struct tm *localtime_r(const time_t *restrict t, struct tm *restrict tm);
time_t mktime(struct tm *tm);
time_t timegm(struct tm *tm);
size_t strftime(char *restrict s, size_t max, const char *restrict fmt, const struct tm *restrict tm);
char *asctime(const struct tm *tm);
char *asctime_r(const struct tm *restrict tm, char *restrict buf);
char *ctime(const time_t *t);
char *ctime_r(const time_t *t, char *buf);
void tzset(void);
