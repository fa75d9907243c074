// Time system calls: clock_gettime, gettimeofday, time, nanosleep,
// clock_nanosleep, and the interval timers' alarm, getitimer and setitimer
// (proc/itimer.c). Every clock is the TSC (nsec_now); the realtime clock adds
// the wall time the RTC gave at boot (x86/rtc.c). Sleeps block on this CPU's
// sleep list (sched.c).
#include "mm/usercopy.h"
#include "proc/itimer.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "syscall/syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "x86/smp.h"

#define NSEC 1000000000ULL
// The monotonic clocks are all one (nothing is suspended, nothing slews it).
static long clock_now(int clock, uint64_t *ns)
{
    switch (clock) {
    case CLOCK_MONOTONIC: case CLOCK_MONOTONIC_RAW: case CLOCK_MONOTONIC_COARSE: case CLOCK_BOOTTIME:
        *ns = nsec_now();
        return 0;
    case CLOCK_REALTIME: case CLOCK_REALTIME_COARSE:
        *ns = realtime_nsec();
        return 0;
    default:
        return -EINVAL; // (no CPU-time clocks yet)
    }
}

long sys_clock_gettime(int clock, uint64_t uts)
{
    uint64_t ns;
    long err = clock_now(clock, &ns);
    if (err)
        return err;
    struct timespec ts = {ns / NSEC, ns % NSEC};
    return copy_to_user(uts, &ts, sizeof ts);
}

long sys_gettimeofday(uint64_t utv, uint64_t utz)
{
    if (utz) {
        uint32_t tz[2] = {0, 0};
        if (copy_to_user(utz, tz, sizeof tz) < 0)
            return -EFAULT;
    }
    if (!utv)
        return 0;
    uint64_t ns;
    clock_now(CLOCK_REALTIME, &ns);
    struct timeval tv = {ns / NSEC, ns % NSEC / 1000};
    return copy_to_user(utv, &tv, sizeof tv);
}

// time(2): the seconds of CLOCK_REALTIME, also stored at utloc if not NULL.
long sys_time(uint64_t utloc)
{
    int64_t sec = (int64_t)(realtime_nsec() / NSEC);
    if (utloc && copy_to_user(utloc, &sec, sizeof sec) < 0)
        return -EFAULT;
    return sec;
}

static long read_timespec(uint64_t u, uint64_t *ns)
{
    struct timespec ts;
    if (copy_from_user(&ts, u, sizeof ts) < 0)
        return -EFAULT;
    if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= (int64_t)NSEC)
        return -EINVAL;
    *ns = (uint64_t)ts.tv_sec * NSEC + ts.tv_nsec;
    return 0;
}

// Sleep until the deadline or a signal: 0, or -EINTR with *left_ns what remained.
static long sleep_until_ns(uint64_t deadline, uint64_t *left_ns)
{
    struct thread *t = thread_current();
    uint64_t now;
    while ((now = nsec_now()) < deadline) {
        if (signal_pending(t)) {
            *left_ns = deadline - now;
            return -EINTR;
        }
        sched_sleep_until(deadline);
    }
    return 0;
}

// A relative sleep interrupted by a signal: the time left goes to *urem, and
// unless a handler runs (it then fails with EINTR) the sleep goes on through
// restart_syscall until the same deadline (Linux).
static long sleep_restart(struct restart_block *rb);

static long sleep_rel(uint64_t deadline, uint64_t urem)
{
    uint64_t left = 0;
    if (sleep_until_ns(deadline, &left) == 0)
        return 0;
    struct timespec ts = {(int64_t)(left / NSEC), (int64_t)(left % NSEC)};
    if (urem && copy_to_user(urem, &ts, sizeof ts) < 0)
        return -EFAULT;
    return restart_block_set(sleep_restart, deadline, urem, 0);
}

static long sleep_restart(struct restart_block *rb) { return sleep_rel(rb->arg[0], rb->arg[1]); }

long sys_nanosleep(uint64_t ureq, uint64_t urem)
{
    uint64_t ns;
    long err = read_timespec(ureq, &ns);
    if (err)
        return err;
    return sleep_rel(nsec_now() + ns, urem);
}

long sys_clock_nanosleep(int clock, int flags, uint64_t ureq, uint64_t urem)
{
    uint64_t ns, now, left = 0;
    if (clock == CLOCK_THREAD_CPUTIME_ID)
        return -EOPNOTSUPP;
    long err = clock_now(clock, &now);
    if (err)
        return err;
    // Linux: the raw and coarse clocks (and thread CPU time) cannot be slept on;
    // flags other than TIMER_ABSTIME are ignored.
    if (clock == CLOCK_MONOTONIC_RAW || clock == CLOCK_MONOTONIC_COARSE ||
        clock == CLOCK_REALTIME_COARSE)
        return -EOPNOTSUPP;
    err = read_timespec(ureq, &ns);
    if (err)
        return err;
    uint64_t deadline = nsec_now() + ((flags & TIMER_ABSTIME) ? (ns > now ? ns - now : 0) : ns);
    if (!(flags & TIMER_ABSTIME))
        return sleep_rel(deadline, urem);
    // An absolute sleep restarts as it was called (the same end time).
    return sleep_until_ns(deadline, &left) < 0 ? -ERESTARTNOHAND : 0;
}

// ---- interval timers ------------------------------------------------------------

long sys_getitimer(int which, uint64_t uval)
{
    struct kitimerval v;
    long err = itimer_get(thread_current()->proc, which, &v);
    return err ? err : copy_to_user(uval, &v, sizeof v);
}

// A NULL new value disarms, as Linux still allows.
long sys_setitimer(int which, uint64_t unew, uint64_t uold)
{
    struct kitimerval v = {0}, old;
    if (unew) {
        long err = copy_from_user(&v, unew, sizeof v);
        if (err)
            return err;
    }
    long err = itimer_set(thread_current()->proc, which, &v, &old);
    if (err || !uold)
        return err;
    return copy_to_user(uold, &old, sizeof old);
}

// Seconds left of the previous alarm, rounded to the nearest (and at least 1
// if any time was left), as Linux.
long sys_alarm(unsigned secs)
{
    struct kitimerval v = {.value = {secs, 0}}, old;
    long err = itimer_set(thread_current()->proc, ITIMER_REAL, &v, &old);
    if (err)
        return 0; // alarm cannot fail: out of memory, no alarm
    uint64_t left = (uint64_t)old.value.tv_sec + (old.value.tv_usec >= 500000);
    return left ? (long)left : (old.value.tv_usec ? 1 : 0);
}
