// Synchronisation objects on futexes: mutexes (normal, recursive, error
// checking), condition variables, reader-writer locks, barriers, spinlocks.
// Each object is its own futex word(s): threads using different objects share
// nothing.
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <time.h>
#include "libc.h"

// ---- mutex: __lock is 0 free, 1 held, 2 held with possible sleepers --------

int pthread_mutexattr_init(pthread_mutexattr_t *a)
{
    a->__type = PTHREAD_MUTEX_DEFAULT;
    return 0;
}
int pthread_mutexattr_destroy(pthread_mutexattr_t *a)
{
    (void)a;
    return 0;
}
int pthread_mutexattr_settype(pthread_mutexattr_t *a, int type)
{
    if (type < PTHREAD_MUTEX_NORMAL || type > PTHREAD_MUTEX_ERRORCHECK)
        return EINVAL;
    a->__type = type;
    return 0;
}
int pthread_mutexattr_gettype(const pthread_mutexattr_t *restrict a, int *restrict type)
{
    *type = a->__type;
    return 0;
}

int pthread_mutex_init(pthread_mutex_t *restrict m, const pthread_mutexattr_t *restrict a)
{
    *m = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    m->__type = a ? a->__type : PTHREAD_MUTEX_DEFAULT;
    return 0;
}
int pthread_mutex_destroy(pthread_mutex_t *m)
{
    return m->__lock ? EBUSY : 0;
}

// Ownership checks for recursive and error-checking mutexes; returns -1 to
// go on and take the lock.
static int owner_check(pthread_mutex_t *m, int trying)
{
    if (m->__type == PTHREAD_MUTEX_NORMAL || m->__owner != __self()->tid)
        return -1;
    if (m->__type == PTHREAD_MUTEX_RECURSIVE) {
        if (m->__count == INT_MAX)
            return EAGAIN;
        m->__count++;
        return 0;
    }
    return trying ? EBUSY : EDEADLK;
}

static void mutex_acquired(pthread_mutex_t *m)
{
    if (m->__type != PTHREAD_MUTEX_NORMAL) {
        m->__owner = __self()->tid;
        m->__count = 1;
    }
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
    int r = owner_check(m, 1);
    if (r >= 0)
        return r;
    if (!__sync_bool_compare_and_swap(&m->__lock, 0, 1))
        return EBUSY;
    mutex_acquired(m);
    return 0;
}

// Take the lock, recording that others may wait (used after a condition wait).
static void lock_contended(pthread_mutex_t *m)
{
    while (__atomic_exchange_n(&m->__lock, 2, __ATOMIC_ACQUIRE) != 0)
        __futex_wait(&m->__lock, 2, NULL);
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    int r = owner_check(m, 0);
    if (r >= 0)
        return r;
    int c = __sync_val_compare_and_swap(&m->__lock, 0, 1);
    if (c != 0) {
        // Spin a little before sleeping: critical sections are often short.
        for (int i = 0; i < 100 && c != 0; i++) {
            __builtin_ia32_pause();
            c = __sync_val_compare_and_swap(&m->__lock, 0, 1);
        }
        if (c != 0)
            lock_contended(m);
    }
    mutex_acquired(m);
    return 0;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
    if (m->__type != PTHREAD_MUTEX_NORMAL) {
        if (m->__owner != __self()->tid)
            return EPERM;
        if (--m->__count > 0)
            return 0;
        m->__owner = 0;
    }
    if (__atomic_exchange_n(&m->__lock, 0, __ATOMIC_RELEASE) == 2)
        __futex_wake(&m->__lock, 1);
    return 0;
}

// ---- condition variables: __seq changes with every signal and broadcast ------

int pthread_condattr_init(pthread_condattr_t *a)
{
    a->__clock = CLOCK_REALTIME;
    return 0;
}
int pthread_condattr_destroy(pthread_condattr_t *a)
{
    (void)a;
    return 0;
}
int pthread_condattr_setclock(pthread_condattr_t *a, clockid_t clk)
{
    if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC)
        return EINVAL;
    a->__clock = clk;
    return 0;
}
int pthread_cond_init(pthread_cond_t *restrict c, const pthread_condattr_t *restrict a)
{
    *c = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
    c->__clock = a ? a->__clock : CLOCK_REALTIME;
    return 0;
}
int pthread_cond_destroy(pthread_cond_t *c)
{
    (void)c;
    return 0;
}

int pthread_cond_timedwait(pthread_cond_t *restrict c, pthread_mutex_t *restrict m,
                           const struct timespec *restrict abstime)
{
    if (abstime && (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000))
        return EINVAL;
    unsigned seq = __atomic_load_n(&c->__seq, __ATOMIC_ACQUIRE);
    // Unlock as the mutex's owner would, keeping the recursion depth.
    int type = m->__type, count = m->__count;
    if (type != PTHREAD_MUTEX_NORMAL) {
        if (m->__owner != __self()->tid)
            return EPERM;
        m->__count = 1;
    }
    pthread_mutex_unlock(m);
    int r = 0;
    struct timespec rel, *timeout = NULL;
    if (abstime) {
        struct timespec now;
        clock_gettime(c->__clock, &now);
        rel.tv_sec = abstime->tv_sec - now.tv_sec;
        rel.tv_nsec = abstime->tv_nsec - now.tv_nsec;
        if (rel.tv_nsec < 0) {
            rel.tv_sec--;
            rel.tv_nsec += 1000000000;
        }
        timeout = &rel;
        if (rel.tv_sec < 0)
            r = ETIMEDOUT;
    }
    // A signal between reading seq and sleeping changes seq, and FUTEX_WAIT
    // then returns at once: no wakeup is lost.
    if (r == 0 && __futex_wait((volatile int *)&c->__seq, (int)seq, timeout) == -ETIMEDOUT)
        r = ETIMEDOUT;
    lock_contended(m);
    if (type != PTHREAD_MUTEX_NORMAL) {
        m->__owner = __self()->tid;
        m->__count = count;
    }
    return r;
}

int pthread_cond_wait(pthread_cond_t *restrict c, pthread_mutex_t *restrict m)
{
    return pthread_cond_timedwait(c, m, NULL);
}

int pthread_cond_signal(pthread_cond_t *c)
{
    __atomic_add_fetch(&c->__seq, 1, __ATOMIC_RELEASE);
    __futex_wake((volatile int *)&c->__seq, 1);
    return 0;
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
    __atomic_add_fetch(&c->__seq, 1, __ATOMIC_RELEASE);
    __futex_wake((volatile int *)&c->__seq, INT_MAX);
    return 0;
}

// ---- reader-writer locks: __lock counts readers, or is -1 for a writer -------

int pthread_rwlock_init(pthread_rwlock_t *restrict l, const pthread_rwlockattr_t *restrict a)
{
    (void)a;
    *l = (pthread_rwlock_t)PTHREAD_RWLOCK_INITIALIZER;
    return 0;
}
int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
    return l->__lock ? EBUSY : 0;
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
    int s = __atomic_load_n(&l->__lock, __ATOMIC_RELAXED);
    while (s >= 0)
        if (__atomic_compare_exchange_n(&l->__lock, &s, s + 1, 1, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return 0;
    return EBUSY;
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
    int s = 0;
    return __atomic_compare_exchange_n(&l->__lock, &s, -1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)
               ? 0 : EBUSY;
}

static void rw_wait(pthread_rwlock_t *l)
{
    int s = __atomic_load_n(&l->__lock, __ATOMIC_RELAXED);
    if (s == 0)
        return;
    __atomic_add_fetch(&l->__waiters, 1, __ATOMIC_ACQ_REL);
    __futex_wait(&l->__lock, s, NULL);
    __atomic_sub_fetch(&l->__waiters, 1, __ATOMIC_ACQ_REL);
}

int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    while (pthread_rwlock_tryrdlock(l))
        rw_wait(l);
    return 0;
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    while (pthread_rwlock_trywrlock(l))
        rw_wait(l);
    return 0;
}

int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
    int s = __atomic_load_n(&l->__lock, __ATOMIC_RELAXED), n;
    do
        n = s == -1 ? 0 : s - 1;
    while (!__atomic_compare_exchange_n(&l->__lock, &s, n, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    if (n == 0 && __atomic_load_n(&l->__waiters, __ATOMIC_ACQUIRE))
        __futex_wake(&l->__lock, INT_MAX);
    return 0;
}

// ---- barriers ----------------------------------------------------------------

int pthread_barrier_init(pthread_barrier_t *restrict b, const pthread_barrierattr_t *restrict a,
                         unsigned count)
{
    (void)a;
    if (count == 0)
        return EINVAL;
    pthread_mutex_init(&b->__m, NULL);
    pthread_cond_init(&b->__c, NULL);
    b->__count = count;
    b->__waiting = 0;
    b->__phase = 0;
    return 0;
}
int pthread_barrier_destroy(pthread_barrier_t *b)
{
    (void)b;
    return 0;
}

int pthread_barrier_wait(pthread_barrier_t *b)
{
    pthread_mutex_lock(&b->__m);
    unsigned phase = b->__phase;
    if (++b->__waiting == b->__count) {
        b->__waiting = 0;
        b->__phase++;
        pthread_cond_broadcast(&b->__c);
        pthread_mutex_unlock(&b->__m);
        return PTHREAD_BARRIER_SERIAL_THREAD;
    }
    while (b->__phase == phase)
        pthread_cond_wait(&b->__c, &b->__m);
    pthread_mutex_unlock(&b->__m);
    return 0;
}

// ---- spinlocks ---------------------------------------------------------------

int pthread_spin_init(pthread_spinlock_t *s, int pshared)
{
    (void)pshared;
    *s = 0;
    return 0;
}
int pthread_spin_destroy(pthread_spinlock_t *s)
{
    (void)s;
    return 0;
}
int pthread_spin_trylock(pthread_spinlock_t *s)
{
    return __atomic_exchange_n(s, 1, __ATOMIC_ACQUIRE) ? EBUSY : 0;
}
int pthread_spin_lock(pthread_spinlock_t *s)
{
    while (__atomic_exchange_n(s, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(s, __ATOMIC_RELAXED))
            __builtin_ia32_pause();
    return 0;
}
int pthread_spin_unlock(pthread_spinlock_t *s)
{
    __atomic_store_n(s, 0, __ATOMIC_RELEASE);
    return 0;
}
