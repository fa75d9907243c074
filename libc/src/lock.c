// Futex wrappers and libc's internal lock (three-state futex mutex: 0 free,
// 1 held, 2 held and someone may be sleeping, so unlock must wake).
#include <time.h>
#include "libc.h"

int __futex_wait(volatile int *addr, int val, const struct timespec *timeout)
{
    return (int)__sys(__NR_futex, addr, FUTEX_WAIT | FUTEX_PRIVATE, val, timeout);
}

void __futex_wake(volatile int *addr, int n)
{
    __sys(__NR_futex, addr, FUTEX_WAKE | FUTEX_PRIVATE, n);
}

void __lock(struct lock *l)
{
    int c = __sync_val_compare_and_swap(&l->v, 0, 1);
    if (likely(c == 0))
        return;
    // Contended: mark the lock as having waiters, then sleep until it is free.
    if (c != 2)
        c = __atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE);
    while (c != 0) {
        __futex_wait(&l->v, 2, NULL);
        c = __atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE);
    }
}

void __unlock(struct lock *l)
{
    if (__atomic_exchange_n(&l->v, 0, __ATOMIC_RELEASE) == 2)
        __futex_wake(&l->v, 1);
}
