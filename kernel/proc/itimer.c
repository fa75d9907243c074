// Interval timers: alarm, setitimer and getitimer with ITIMER_REAL, which
// sends the process SIGALRM when a span of wall-clock time has passed, and
// again every interval after that if one is set.
//
// Commute: timer calls of different processes. Each process has its own
// struct itimer, made at its first use (a process that never sets one carries
// a NULL pointer), and the kernel timer behind it goes on the list of the CPU
// whose thread set it (proc/ktimer.c). As on Linux, fork does not pass a
// timer on and execve keeps it.
//
// Not done: ITIMER_VIRTUAL and ITIMER_PROF (timers of CPU time) are EINVAL.
#include "mm/mm.h"
#include "proc/itimer.h"
#include "proc/ktimer.h"
#include "proc/proc.h"
#include "sync/atomic.h"
#include "sync/spinlock.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "x86/smp.h"

#define USEC 1000ULL
#define SEC 1000000000ULL

struct itimer {
    struct spinlock lock;
    struct ktimer kt;
    struct proc *p;        // [i]
    uint64_t deadline;     // [l] nsec_now() when it expires; 0: disarmed
    uint64_t interval;     // [l] ns; 0: once
};

// LAB alarms BEGIN
// From the tick of the CPU it was armed on. A firing that lost the race with
// a setitimer that moved the deadline finds it in the future (or 0): stale.
static void itimer_fire(struct ktimer *kt)
{
    struct itimer *it = container_of(kt, struct itimer, kt);
    uint64_t now = nsec_now();
    spin_lock(&it->lock);
    if (!it->deadline || it->deadline > now) {
        spin_unlock(&it->lock);
        return;
    }
    if (it->interval) {
        // The next expiry on the interval's grid, unless it fell behind.
        it->deadline += it->interval;
        if (it->deadline <= now)
            it->deadline = now + it->interval;
        ktimer_arm(&it->kt, it->deadline);
    } else {
        it->deadline = 0;
    }
    spin_unlock(&it->lock);
    struct ksiginfo info = {.signo = SIGALRM, .code = SI_KERNEL};
    signal_send_proc(it->p, SIGALRM, &info);
}
// LAB alarms SKELETON
// static void itimer_fire(struct ktimer *kt)
// {
//     // TODO (labs/alarms): SIGALRM to the process, and an interval timer's
//     // next expiry; a firing that finds the deadline moved is stale.
//     (void)kt;
// }
// LAB alarms END

// The process's timer, made at first use; NULL if out of memory.
static struct itimer *itimer_of(struct proc *p)
{
    struct itimer *it = load_acquire(&p->itimer);
    if (it)
        return it;
    struct itimer *fresh = kzalloc(sizeof *fresh);
    if (!fresh)
        return NULL;
    fresh->lock = (struct spinlock)SPINLOCK_INIT("itimer");
    fresh->p = p;
    ktimer_init(&fresh->kt, itimer_fire);
    if (cas(&p->itimer, &it, fresh)) // another thread's may have come first
        return fresh;
    kfree(fresh);
    return it;
}

// A valid time in ns; beyond a century it stays at a century (no overflow).
#define FOREVER (100ULL * 365 * 24 * 3600 * SEC)
static uint64_t tv_ns(const struct timeval *tv)
{
    if ((uint64_t)tv->tv_sec >= FOREVER / SEC)
        return FOREVER;
    return (uint64_t)tv->tv_sec * SEC + (uint64_t)tv->tv_usec * USEC;
}

// Linux rounds a time left up to the next microsecond, so that a timer that
// has not expired never reads as 0.
static struct timeval ns_tv(uint64_t ns)
{
    ns = (ns + USEC - 1) / USEC * USEC;
    return (struct timeval){(int64_t)(ns / SEC), (int64_t)(ns % SEC / USEC)};
}

static struct kitimerval get_locked(struct itimer *it, uint64_t now)
{
    struct kitimerval v = {0};
    if (it->deadline) {
        v.value = ns_tv(it->deadline > now ? it->deadline - now : 1);
        v.interval = ns_tv(it->interval);
    }
    return v;
}

int itimer_get(struct proc *p, int which, struct kitimerval *out)
{
    if (which != ITIMER_REAL)
        return -EINVAL;
    struct itimer *it = load_acquire(&p->itimer);
    *out = (struct kitimerval){0};
    if (it) {
        spin_lock(&it->lock);
        *out = get_locked(it, nsec_now());
        spin_unlock(&it->lock);
    }
    return 0;
}

// LAB alarms BEGIN
int itimer_set(struct proc *p, int which, const struct kitimerval *v, struct kitimerval *old)
{
    if (which != ITIMER_REAL)
        return -EINVAL;
    if (v->value.tv_sec < 0 || v->value.tv_usec < 0 || v->value.tv_usec >= 1000000 ||
        v->interval.tv_sec < 0 || v->interval.tv_usec < 0 || v->interval.tv_usec >= 1000000)
        return -EINVAL;
    struct itimer *it = load_acquire(&p->itimer);
    bool arm = v->value.tv_sec || v->value.tv_usec;
    if (!it && !arm) { // disarming a timer never set: nothing to make
        *old = (struct kitimerval){0};
        return 0;
    }
    if (!it && !(it = itimer_of(p)))
        return -ENOMEM;
    uint64_t now = nsec_now();
    spin_lock(&it->lock);
    *old = get_locked(it, now);
    if (arm) {
        it->deadline = now + tv_ns(&v->value);
        it->interval = tv_ns(&v->interval);
        ktimer_arm(&it->kt, it->deadline);
    } else {
        it->deadline = 0;
        it->interval = 0;
        ktimer_cancel(&it->kt); // a firing already running finds it stale
    }
    spin_unlock(&it->lock);
    return 0;
}
// LAB alarms SKELETON
// int itimer_set(struct proc *p, int which, const struct kitimerval *v, struct kitimerval *old)
// {
//     // TODO (labs/alarms): check which and both times (EINVAL); get p's
//     // timer (itimer_of) and, under its lock, report the old value
//     // (get_locked), then arm the timer (ktimer_arm) or disarm it.
//     (void)itimer_of, (void)tv_ns;
//     (void)p, (void)which, (void)v, (void)old;
//     return -ENOSYS;
// }
// LAB alarms END

void itimer_exit(struct proc *p)
{
    struct itimer *it = p->itimer;
    if (!it)
        return;
    p->itimer = NULL;
    ktimer_cancel_sync(&it->kt);
    kfree(it);
}
