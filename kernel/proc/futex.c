// Futexes: FUTEX_WAIT and FUTEX_WAKE, and their _BITSET forms, on 32-bit words
// of an address space (private futexes: the key is the address space and the
// user address).
//
// Commute: waits and wakes on different futex words. Waiters hang on one of
// many hashed buckets, each with its own lock on its own cache line; there is
// no global lock, and words in different buckets share nothing.
//
// No lost wake-ups: a waiter reads the word and links itself under its bucket's
// lock, and a waker (who changed the word first) takes the same lock to find it.
// A wake that finds the bucket's waiter count at zero returns without the lock:
// it writes nothing, so wakes nobody waits for (a thread's exit, an unlock
// without contention) share no line even when their words' buckets collide.
// The count goes up before the waiter reads the word, and the waker reads it
// after changing the word, each behind a full barrier: either the waiter reads
// the new word, or the waker sees the count and takes the lock.
#include "mm/usercopy.h"
#include "mm/uvm.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "syscall/syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "x86/smp.h"

#define NBUCKET 1024

struct waiter {
    struct list link;
    struct vmspace *vs;
    uint64_t uaddr;
    struct thread *t;
    uint32_t bits; // FUTEX_WAIT_BITSET: the wakes it answers (FUTEX_WAIT: all)
    bool woken;
};

struct bucket {
    struct spinlock lock;
    struct list waiters;
    int nwaiters; // [a] threads in futex_wait on it (linked or about to be)
} __cacheline_aligned;

static struct bucket buckets[NBUCKET] = {[0 ... NBUCKET - 1] = {.lock = SPINLOCK_INIT("futex")}};

static struct bucket *bucket_of(struct vmspace *vs, uint64_t uaddr)
{
    uint64_t h = (uaddr >> 2) * 0x9e3779b97f4a7c15ULL ^ (uintptr_t)vs * 0xff51afd7ed558ccdULL;
    return &buckets[(h >> 32) % NBUCKET];
}

static void lock_bucket(struct bucket *b)
{
    spin_lock(&b->lock);
    if (!b->waiters.next)
        list_init(&b->waiters); // first use (the lists are not linked yet)
}

// Lock b and read the word under the lock. A copy under a spinlock does not
// fill pages in (usercopy_fault), so read first unlocked, which does; if the
// page's entry went meanwhile (an unmap, a fork making it copy-on-write), let
// go and read again. Unlocked on error.
static int lock_and_read(struct bucket *b, uint64_t uaddr, uint32_t *cur)
{
    for (;;) {
        if (copy_from_user(cur, uaddr, sizeof *cur) < 0)
            return -EFAULT;
        lock_bucket(b);
        if (copy_from_user(cur, uaddr, sizeof *cur) == 0)
            return 0;
        spin_unlock(&b->lock);
    }
}

static int futex_wake_bits(struct vmspace *vs, uint64_t uaddr, int n, uint32_t bits)
{
    struct bucket *b = bucket_of(vs, uaddr);
    int woken = 0;
    fence(); // the caller's change of the word before the look at the count
    if (!load_relaxed(&b->nwaiters))
        return 0;
    lock_bucket(b);
    list_for_each_safe(it, tmp, &b->waiters) {
        if (woken >= n)
            break;
        struct waiter *w = list_entry(it, struct waiter, link);
        if (w->vs != vs || w->uaddr != uaddr || !(w->bits & bits))
            continue;
        list_remove(&w->link);
        // The waiter's frame stays until it sees woken (it rechecks under this lock).
        store_release(&w->woken, true);
        thread_wake(w->t);
        woken++;
    }
    spin_unlock(&b->lock);
    return woken;
}

int futex_wake(struct vmspace *vs, uint64_t uaddr, int n) { return futex_wake_bits(vs, uaddr, n, ~0u); }

// Sleep on b while *uaddr == val, until woken, the deadline (0: none) or a signal.
static long wait_on(struct bucket *b, struct vmspace *vs, uint64_t uaddr, uint32_t val,
                    uint64_t deadline, uint32_t bits)
{
    struct thread *t = thread_current();
    struct waiter w = {.vs = vs, .uaddr = uaddr, .t = t, .bits = bits};
    uint32_t cur;
    if (lock_and_read(b, uaddr, &cur) < 0)
        return -EFAULT;
    if (cur != val) {
        spin_unlock(&b->lock);
        return -EAGAIN;
    }
    list_push_back(&b->waiters, &w.link);
    long ret = 0;
    for (;;) {
        store_seqcst(&t->state, T_SLEEPING);
        spin_unlock(&b->lock);
        if (load_acquire(&w.woken))
            ret = 0;
        else if (signal_pending(t))
            ret = deadline ? -EINTR : -ERESTARTSYS;
        else if (deadline && nsec_now() >= deadline)
            ret = -ETIMEDOUT;
        else {
            if (deadline)
                schedule_until(deadline);
            else
                schedule();
            lock_bucket(b);
            continue;
        }
        break;
    }
    // Running again (a waker's compare-and-swap may still be on its way: let the
    // run queue settle it, as waitq_finish does).
    int want = T_SLEEPING;
    if (!cas_fail_relaxed(&t->state, &want, T_RUNNING) && want == T_RUNNABLE)
        schedule();
    lock_bucket(b);
    if (!w.woken)
        list_remove(&w.link);
    else
        ret = 0; // woken after all: the wake-up counts
    spin_unlock(&b->lock);
    return ret;
}

static long futex_wait(struct vmspace *vs, uint64_t uaddr, uint32_t val, uint64_t deadline,
                       uint32_t bits)
{
    struct bucket *b = bucket_of(vs, uaddr);
    fetch_add(&b->nwaiters, 1); // (a full barrier) before the word is read
    long ret = wait_on(b, vs, uaddr, val, deadline, bits);
    fetch_sub_relaxed(&b->nwaiters, 1);
    return ret;
}

long sys_futex(uint64_t uaddr, int op, uint32_t val, uint64_t utimeout, uint64_t uaddr2,
               uint32_t val3)
{
    (void)uaddr2;
    struct vmspace *vs = thread_current()->vm;
    int cmd = op & ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
    bool bitset = cmd == FUTEX_WAIT_BITSET || cmd == FUTEX_WAKE_BITSET;
    if (cmd != FUTEX_WAIT && cmd != FUTEX_WAKE && !bitset)
        return -ENOSYS;
    if ((op & FUTEX_CLOCK_REALTIME) && cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET)
        return -ENOSYS; // only waits have a clock (Linux)
    if (uaddr % 4 || (bitset && val3 == 0))
        return -EINVAL;
    // Every futex is private to its address space here. A shared one has its key
    // made from the page (Linux): it must be mapped, even to wake nobody.
    uint32_t word;
    if (!(op & FUTEX_PRIVATE_FLAG) && copy_from_user(&word, uaddr, sizeof word) < 0)
        return -EFAULT;
    if (cmd == FUTEX_WAKE || cmd == FUTEX_WAKE_BITSET)
        return futex_wake_bits(vs, uaddr, (int)val < 0 ? 0 : (int)val, bitset ? val3 : ~0u);
    uint64_t deadline = 0;
    if (utimeout) {
        struct timespec ts;
        if (copy_from_user(&ts, utimeout, sizeof ts) < 0)
            return -EFAULT;
        if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
            return -EINVAL;
        uint64_t t = (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        // FUTEX_WAIT's timeout is relative; FUTEX_WAIT_BITSET's is absolute, on
        // CLOCK_MONOTONIC (nsec_now) or, with FUTEX_CLOCK_REALTIME, the wall clock.
        if (cmd == FUTEX_WAIT)
            deadline = nsec_now() + t;
        else if (op & FUTEX_CLOCK_REALTIME)
            deadline = nsec_now() + (t > realtime_nsec() ? t - realtime_nsec() : 0);
        else
            deadline = t;
        deadline += !deadline; // 0 means none
    }
    return futex_wait(vs, uaddr, val, deadline, bitset ? val3 : ~0u);
}
