// Scheduling: yield, affinity, CPU sets, clone().
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include "libc.h"

int sched_yield(void) { return sys(__NR_sched_yield); }

int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
    return sys(__NR_sched_setaffinity, pid, size, set);
}

int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
    long r = sys(__NR_sched_getaffinity, pid, size, set);
    if (r < 0)
        return -1;
    if ((size_t)r < size)  // the kernel fills only its own mask size
        memset((char *)set + r, 0, size - (size_t)r);
    return 0;
}

int sched_getcpu(void)
{
    unsigned cpu;
    if (sys(__NR_getcpu, &cpu, NULL, NULL) < 0)
        return -1;
    return (int)cpu;
}

int sched_get_priority_max(int policy) { return sys(__NR_sched_get_priority_max, policy); }
int sched_get_priority_min(int policy) { return sys(__NR_sched_get_priority_min, policy); }

int __sched_cpucount(size_t size, const cpu_set_t *set)
{
    int n = 0;
    for (size_t i = 0; i < size / sizeof(unsigned long); i++)
        n += __builtin_popcountl(set->__bits[i]);
    return n;
}

int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int *ptid = va_arg(ap, int *);
    void *tls = va_arg(ap, void *);
    int *ctid = va_arg(ap, int *);
    va_end(ap);
    return (int)__syscall_ret(__clone(fn, stack, flags, arg, ptid, tls, ctid));
}
