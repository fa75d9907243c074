// errno (a field of the thread control block, so per thread via FS) and the
// conversion of raw system-call results to the C convention.
#include <errno.h>
#include <stdarg.h>
#include "libc.h"

int *__errno_location(void)
{
    return &__self()->errno_val;
}

long __syscall_ret(long r)
{
    if ((unsigned long)r > -4096UL) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

long syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
    long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    return __syscall_ret(__syscall6(nr, a, b, c, d, e, f));
}
