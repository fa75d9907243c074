// The CMOS real-time clock and the wall clock it sets at boot (rtc.c).
#pragma once
#include "kernel.h"

// The RTC's time registers as read, before decoding (BCD or binary, 12- or
// 24-hour, as register B says).
struct rtc_regs {
    uint8_t sec, min, hour, day, mon, year, century, regb;
};

void rtc_init(void);                         // read the RTC: the wall clock's start
bool rtc_read(struct rtc_regs *r);           // a consistent read; false if no RTC answers
int64_t rtc_to_unix(const struct rtc_regs *r); // seconds since 1970 (UTC), or -1 if invalid
