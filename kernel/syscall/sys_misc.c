// System information and randomness: uname, getrandom.
#include "lib/random.h"
#include "mm/usercopy.h"
#include "syscall/syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"

long sys_uname(uint64_t ubuf)
{
    static const struct utsname u = {
        .sysname = "Linux", // what programs test for; the ABI is Linux's
        .nodename = "scalable",
        .release = "6.1.0-scalable",
        .version = "#1 SMP",
        .machine = "x86_64",
        .domainname = "(none)",
    };
    return copy_to_user(ubuf, &u, sizeof u);
}

long sys_getrandom(uint64_t ubuf, size_t len, unsigned flags)
{
    if (flags & ~(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE))
        return -EINVAL;
    if ((flags & GRND_RANDOM) && (flags & GRND_INSECURE))
        return -EINVAL; // contradictory (Linux)
    if (!user_range_valid(ubuf, len))
        return -EFAULT;
    len = MIN(len, 33554431UL); // Linux's per-call cap
    char k[256];
    size_t done = 0;
    while (done < len) {
        size_t m = MIN(len - done, sizeof k);
        random_bytes(k, m);
        size_t c = copy_to_user_some(ubuf + done, k, m);
        done += c;
        if (c < m)
            return done ? (long)done : -EFAULT; // a short read (Linux)
    }
    return done;
}
