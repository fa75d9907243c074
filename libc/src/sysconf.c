// sysconf: system limits and the number of usable CPUs.
#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>
#include "libc.h"

long sysconf(int name)
{
    switch (name) {
    case _SC_PAGESIZE:
        return (long)__page_size;
    case _SC_CLK_TCK:
        return 100;
    case _SC_ARG_MAX:
        return 131072;
    case _SC_OPEN_MAX: {
        struct rlimit r;
        return getrlimit(RLIMIT_NOFILE, &r) == 0 ? (long)r.rlim_cur : 1024;
    }
    case _SC_NPROCESSORS_CONF:
    case _SC_NPROCESSORS_ONLN: {
        unsigned long set[16] = {0};
        long n = __sys(__NR_sched_getaffinity, 0, sizeof set, set);
        if (n <= 0)
            return 1;
        long count = 0;
        for (long i = 0; i < n / 8; i++)
            count += __builtin_popcountl(set[i]);
        return count;
    }
    case _SC_HOST_NAME_MAX:
        return 64;
    case _SC_NGROUPS_MAX:
        return 65536;
    case _SC_CHILD_MAX:
    case _SC_GETPW_R_SIZE_MAX:
        return -1;
    }
    errno = EINVAL;
    return -1;
}
int getpagesize(void) { return (int)__page_size; }
