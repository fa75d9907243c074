// Process and thread system calls: exit, wait4, ids, arch_prctl, affinity,
// getcpu, and the signal calls that only store their arguments for now.
#include "percpu.h"
#include "proc.h"
#include "sched.h"
#include "smp.h"
#include "syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "usercopy.h"
#include "uvm.h"
#include "x86.h"

long sys_exit(int code) { proc_exit(W_EXITCODE(code & 0xff, 0)); } // one thread per process
long sys_exit_group(int code) { proc_exit(W_EXITCODE(code & 0xff, 0)); }

long sys_wait4(int pid, uint64_t status, int options, uint64_t rusage)
{
    if (options & ~WNOHANG)
        return -EINVAL;
    if (rusage && clear_user(rusage, 144) < 0) // struct rusage: all zero for now
        return -EFAULT;
    return proc_wait4(pid, status, options);
}

long sys_getpid(void) { return proc_current()->pid; }
long sys_gettid(void) { return thread_current()->tid; }

long sys_getppid(void)
{
    struct proc *p = proc_current();
    epoch_enter(); // the parent may be exiting: its memory stays valid until we leave
    struct proc *parent = READ_ONCE(p->parent);
    long ppid = parent ? parent->pid : 0;
    epoch_exit();
    return ppid;
}

long sys_set_tid_address(uint64_t tidptr)
{
    proc_current()->clear_child_tid = tidptr;
    return thread_current()->tid;
}

long sys_arch_prctl(int code, uint64_t addr)
{
    struct thread *t = thread_current();
    switch (code) {
    case ARCH_SET_FS:
        if (addr >= USER_END)
            return -EPERM; // a non-canonical base would fault on wrmsr
        push_off();
        t->fsbase = addr;
        wrmsr(MSR_FS_BASE, addr);
        pop_off();
        return 0;
    case ARCH_GET_FS:
        return copy_to_user(addr, &t->fsbase, sizeof t->fsbase);
    default:
        return -EINVAL;
    }
}

long sys_getuid(void) { return 0; }
long sys_geteuid(void) { return 0; }
long sys_getgid(void) { return 0; }
long sys_getegid(void) { return 0; }

long sys_sched_yield(void)
{
    sched_yield();
    return 0;
}

long sys_getcpu(uint64_t ucpu, uint64_t unode, uint64_t cache)
{
    (void)cache;
    unsigned c = cpu_id(), node = 0;
    if (ucpu && copy_to_user(ucpu, &c, sizeof c) < 0)
        return -EFAULT;
    if (unode && copy_to_user(unode, &node, sizeof node) < 0)
        return -EFAULT;
    return 0;
}

// Only the calling thread for now (pid 0 or its own id): other processes' threads
// would need to be moved off their CPU from the outside.
static long check_self(int pid)
{
    if (pid == 0 || pid == proc_current()->pid)
        return 0;
    epoch_enter();
    bool exists = pid > 0 && pid_lookup(pid) != NULL;
    epoch_exit();
    return exists ? -EPERM : -ESRCH;
}

#define CPUSET_BYTES (sizeof(cpumask_t))

long sys_sched_setaffinity(int pid, size_t len, uint64_t umask)
{
    long err = check_self(pid);
    if (err)
        return err;
    cpumask_t m;
    cpumask_clear(&m);
    if (copy_from_user(&m, umask, MIN(len, CPUSET_BYTES)) < 0)
        return -EFAULT;
    return thread_set_affinity(thread_current(), &m);
}

long sys_sched_getaffinity(int pid, size_t len, uint64_t umask)
{
    long err = check_self(pid);
    if (err)
        return err;
    // Linux wants room for every possible CPU, in whole longs.
    size_t need = ROUNDUP((size_t)ncpu, 64) / 8;
    if (len < need || len % sizeof(long))
        return -EINVAL;
    cpumask_t m = thread_current()->affinity;
    size_t n = MIN(len, CPUSET_BYTES);
    if (copy_to_user(umask, &m, n) < 0)
        return -EFAULT;
    return n;
}

long sys_rt_sigprocmask(int how, uint64_t uset, uint64_t uold, size_t size)
{
    struct proc *p = proc_current();
    if (size != sizeof(uint64_t))
        return -EINVAL;
    uint64_t set = 0;
    if (uset && copy_from_user(&set, uset, sizeof set) < 0)
        return -EFAULT;
    if (uset && how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
        return -EINVAL;
    if (uold && copy_to_user(uold, &p->sigmask, sizeof p->sigmask) < 0)
        return -EFAULT;
    if (!uset)
        return 0;
    set &= ~(1UL << (SIGKILL - 1) | 1UL << (19 - 1)); // SIGKILL, SIGSTOP
    if (how == SIG_BLOCK)
        p->sigmask |= set;
    else if (how == SIG_UNBLOCK)
        p->sigmask &= ~set;
    else
        p->sigmask = set;
    return 0;
}

long sys_rt_sigaction(int sig, uint64_t uact, uint64_t uold, size_t size)
{
    struct proc *p = proc_current();
    if (size != sizeof(uint64_t) || sig < 1 || sig > NSIG)
        return -EINVAL;
    if (uact && (sig == SIGKILL || sig == 19))
        return -EINVAL;
    struct k_sigaction_store act;
    if (uact && copy_from_user(&act, uact, sizeof act) < 0)
        return -EFAULT;
    if (uold && copy_to_user(uold, &p->sigactions[sig - 1], sizeof act) < 0)
        return -EFAULT;
    if (uact)
        p->sigactions[sig - 1] = act;
    return 0;
}
