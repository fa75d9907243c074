// System information and randomness: uname, sysinfo, getrandom.
#include "lib/random.h"
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "syscall/syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "x86/smp.h"

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

// LAB sysinfo BEGIN
static void count_thread_group(struct proc *p, void *arg)
{
    *(int *)arg += READ_ONCE(p->nthreads);
}

// sysinfo (free, uptime): the same sums at read time as /proc's (procfs_text.c):
// per-CPU load averages and page caches, the pid table's per-CPU buckets.
long sys_sysinfo(uint64_t ubuf)
{
    struct sysinfo si = {.mem_unit = PGSIZE};
    si.uptime = (int64_t)(nsec_now() / 1000000000);
    uint64_t avg[3];
    int running, threads = 0;
    sched_loadavg(avg, &running);
    for (int i = 0; i < 3; i++)
        si.loads[i] = avg[i] << (SI_LOAD_SHIFT - SCHED_LOAD_SHIFT);
    si.totalram = page_count_total();
    si.freeram = page_count_free();
    epoch_enter();
    pid_for_each(count_thread_group, &threads);
    epoch_exit();
    si.procs = (uint16_t)MIN(threads, 65535);
    return copy_to_user(ubuf, &si, sizeof si);
}
// LAB sysinfo END

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
