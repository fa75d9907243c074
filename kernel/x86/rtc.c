// The wall clock: the CMOS real-time clock (MC146818, ports 0x70/0x71) read once
// at boot, then carried forward by the TSC. CLOCK_REALTIME, gettimeofday, time
// and the file system's time stamps all read realtime_nsec, so they agree.
// Under QEMU the RTC starts at the host's time in UTC (-rtc base=utc, its
// default), so the guest's clock agrees with the host's to within a second.
//
// Commute: every reader of the clock only reads rtc_epoch_nsec, written once
// before the other CPUs start and never again; the TSC is per CPU.
//
// The RTC's registers as the chip keeps them: register B says whether values
// are BCD or binary and whether hours are 12- or 24-hour (in 12-hour mode bit 7
// of the hour is PM); a read is only consistent while no update is in progress
// (register A, bit 7), so the registers are read until two reads agree.
#include "kernel.h"
#include "lib/panic.h"
#include "x86/rtc.h"
#include "x86/smp.h"
#include "x86/x86.h"

#define CMOS_INDEX 0x70
#define CMOS_DATA 0x71
#define REG_A 0x0a
#define REG_B 0x0b
#define REG_CENTURY 0x32 // the ACPI FADT's usual century register (QEMU has it)
#define A_UPDATE_IN_PROGRESS 0x80
#define B_24HOUR 0x02
#define B_BINARY 0x04
#define HOUR_PM 0x80
#define NSEC 1000000000ULL
#define MAX_TRIES 1000000 // an update lasts about 2 ms; more is a missing RTC

static uint64_t rtc_epoch_nsec; // the wall time when nsec_now() was 0

uint64_t realtime_nsec(void) { return rtc_epoch_nsec + nsec_now(); }

static uint8_t cmos_read(uint8_t reg)
{
    outb(CMOS_INDEX, reg); // bit 7 clear: NMIs stay enabled
    return inb(CMOS_DATA);
}

static bool regs_equal(const struct rtc_regs *a, const struct rtc_regs *b)
{
    return a->sec == b->sec && a->min == b->min && a->hour == b->hour && a->day == b->day &&
           a->mon == b->mon && a->year == b->year && a->century == b->century &&
           a->regb == b->regb;
}

// One read of every time register, after waiting out an update in progress.
static bool read_once(struct rtc_regs *r)
{
    for (int i = 0; cmos_read(REG_A) & A_UPDATE_IN_PROGRESS; i++)
        if (i == MAX_TRIES)
            return false;
    *r = (struct rtc_regs){.sec = cmos_read(0x00), .min = cmos_read(0x02),
                           .hour = cmos_read(0x04), .day = cmos_read(0x07),
                           .mon = cmos_read(0x08), .year = cmos_read(0x09),
                           .century = cmos_read(REG_CENTURY), .regb = cmos_read(REG_B)};
    return true;
}

bool rtc_read(struct rtc_regs *r)
{
    struct rtc_regs again;
    // An update may begin between the wait and the reads: read until two agree.
    for (int i = 0; i < 10; i++)
        if (read_once(r) && read_once(&again) && regs_equal(r, &again))
            return true;
    return false;
}

static int field(uint8_t v, bool bcd) { return bcd ? (v >> 4) * 10 + (v & 0x0f) : v; }

// Days since 1970-01-01 of a date in the proleptic Gregorian calendar.
static int64_t days_since_epoch(int year, int mon, int day)
{
    static const int before_month[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    int64_t y = year - 1; // leap days of the years before `year`, less 1970's 477
    int64_t days = 365 * (int64_t)(year - 1970) + (y / 4 - y / 100 + y / 400) - 477;
    bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    return days + before_month[mon - 1] + (leap && mon > 2) + day - 1;
}

int64_t rtc_to_unix(const struct rtc_regs *r)
{
    bool bcd = !(r->regb & B_BINARY);
    int sec = field(r->sec, bcd), min = field(r->min, bcd), day = field(r->day, bcd);
    int mon = field(r->mon, bcd), year = field(r->year, bcd), century = field(r->century, bcd);
    int hour = field(r->hour & ~HOUR_PM, bcd);
    if (!(r->regb & B_24HOUR)) { // 12 AM is 0 h, 12 PM is 12 h
        hour %= 12;
        if (r->hour & HOUR_PM)
            hour += 12;
    }
    // A chip without the century register: years 70..99 are 19xx, the rest 20xx.
    if (century < 19 || century > 21)
        century = year >= 70 ? 19 : 20;
    if (sec > 59 || min > 59 || hour > 23 || mon < 1 || mon > 12 || day < 1 || day > 31 ||
        year > 99)
        return -1;
    int64_t days = days_since_epoch(century * 100 + year, mon, day);
    return days * 86400 + hour * 3600 + min * 60 + sec;
}

void rtc_init(void)
{
    struct rtc_regs r;
    int64_t t = rtc_read(&r) ? rtc_to_unix(&r) : -1;
    if (t < 0) {
        kprintf("rtc: no valid time; the wall clock starts at 1970-01-01\n");
        t = 0;
    }
    rtc_epoch_nsec = (uint64_t)t * NSEC - nsec_now();
    kprintf("rtc: wall clock %ld s since 1970-01-01 UTC\n", t);
}
