// Tests for the wall clock (kernel/x86/rtc.c): register decoding in every mode
// register B allows, the RTC's own reading, and that CLOCK_REALTIME and a new
// file's times are that clock.
#include "fs.h"
#include "fstest.h"
#include "ktest/ktest.h"
#include "x86/rtc.h"
#include "x86/smp.h"

#define NSEC 1000000000ULL
#define Y2024 1704067200 // 2024-01-01T00:00:00Z: no RTC of ours is older
#define Y2100 4102444800 // 2100-01-01T00:00:00Z

// 2024-02-29 13:45:07 UTC, a leap day in the afternoon, is 1709214307.
KTEST(rtc_decode_bcd_24h)
{
    struct rtc_regs r = {.sec = 0x07, .min = 0x45, .hour = 0x13, .day = 0x29, .mon = 0x02,
                         .year = 0x24, .century = 0x20, .regb = 0x02};
    KCHECK_EQ(rtc_to_unix(&r), 1709214307);
}

KTEST(rtc_decode_binary_12h)
{
    struct rtc_regs r = {.sec = 7, .min = 45, .hour = 0x80 | 1, .day = 29, .mon = 2,
                         .year = 24, .century = 20, .regb = 0x04};
    KCHECK_EQ(rtc_to_unix(&r), 1709214307);
    r.hour = 12; // 12 AM: midnight
    KCHECK_EQ(rtc_to_unix(&r), 1709214307 - 13 * 3600);
    r.hour = 0x80 | 12; // 12 PM: noon
    KCHECK_EQ(rtc_to_unix(&r), 1709214307 - 1 * 3600);
}

KTEST(rtc_decode_epochs_and_centuries)
{
    // 1970-01-01 00:00:00, with no century register (it reads as garbage).
    struct rtc_regs r = {.day = 1, .mon = 1, .year = 0x70, .century = 0xff, .regb = 0x02};
    KCHECK_EQ(rtc_to_unix(&r), 0);
    // 2000-03-01: 2000 is a leap year (divisible by 400).
    r = (struct rtc_regs){.day = 1, .mon = 3, .year = 0, .century = 20, .regb = 0x06};
    KCHECK_EQ(rtc_to_unix(&r), 951868800);
    // 2100-03-01: 2100 is not.
    r.century = 21;
    KCHECK_EQ(rtc_to_unix(&r), 4107542400);
    // Out of range: month 13, 60 seconds, hour 24.
    r.mon = 13;
    KCHECK_EQ(rtc_to_unix(&r), -1);
    r.mon = 3, r.sec = 60;
    KCHECK_EQ(rtc_to_unix(&r), -1);
    r.sec = 0, r.hour = 24;
    KCHECK_EQ(rtc_to_unix(&r), -1);
}

// The RTC gives a plausible time, and CLOCK_REALTIME is that time. The RTC
// counts whole seconds (read at boot at an unknown point of one), and the TSC
// that carries the clock on had its rate measured at boot, so after a long run
// of tests the two may be a little apart: 10 s would take a rate 1.6 % wrong
// over ten minutes.
KTEST(rtc_read_is_realtime)
{
    struct rtc_regs r;
    KREQUIRE(rtc_read(&r));
    int64_t rtc = rtc_to_unix(&r);
    int64_t now = (int64_t)(realtime_nsec() / NSEC);
    KCHECK(rtc > Y2024 && rtc < Y2100);
    if (rtc - now > 10 || now - rtc > 10)
        kprintf("# rtc %ld, CLOCK_REALTIME %ld\n", rtc, now);
    KCHECK(rtc - now <= 10 && now - rtc <= 10);
}

KTEST(rtc_new_file_times_are_realtime)
{
    struct inode *dir = fst_scratch("t_rtc");
    KREQUIRE(dir);
    struct inode *f;
    KREQUIRE(fs_create(dir, "f", 0644, FS_EXCL, &f) == 0);
    struct fs_stat st;
    KCHECK_EQ(fs_stat(f, STATX_BASIC_STATS, &st), 0);
    int64_t now = (int64_t)(realtime_nsec() / NSEC);
    KCHECK(st.mtime.sec <= now && st.mtime.sec >= now - 2);
    KCHECK(st.ctime.sec <= now && st.ctime.sec >= now - 2);
    fs_iput(f);
    fs_iput(dir);
    KCHECK_EQ(fst_rm_rf("/t_rtc"), 0);
}
