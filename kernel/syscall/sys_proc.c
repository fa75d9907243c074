// Process and thread system calls: clone/fork/vfork, exit, wait4/waitid, ids,
// arch_prctl, affinity, getcpu and resource limits. (execve: exec.c;
// signals: signal.c; futex: futex.c.)
#include "file/fdtable.h"
#include "mm/usercopy.h"
#include "mm/uvm.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "sync/percpu.h"
#include "syscall/syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "x86/smp.h"
#include "x86/x86.h"

long sys_exit(int code) { thread_exit_user(code); }
long sys_exit_group(int code) { proc_exit_group(W_EXITCODE(code & 0xff, 0)); }

long sys_clone(uint64_t flags, uint64_t newsp, uint64_t ptid, uint64_t ctid, uint64_t tls)
{
    return proc_clone(flags, newsp, ptid, ctid, tls);
}

long sys_fork(void) { return proc_clone(SIGCHLD, 0, 0, 0, 0); }
long sys_vfork(void) { return proc_clone(CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0, 0); }

long sys_wait4(int pid, uint64_t status, int options, uint64_t rusage)
{
    // Nothing ever stops or continues, so WUNTRACED and WCONTINUED change nothing.
    if (options & ~(WNOHANG | WUNTRACED | WCONTINUED))
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

long sys_waitid(int idtype, int id, uint64_t info, int options, uint64_t rusage)
{
    if (rusage && clear_user(rusage, 144) < 0)
        return -EFAULT;
    return proc_waitid(idtype, id, info, options);
}

long sys_set_tid_address(uint64_t tidptr)
{
    thread_current()->clear_child_tid = tidptr;
    return thread_current()->tid;
}

// Only the calling process (pid 0 or its own): the limits are its own words.
long sys_prlimit64(int pid, int resource, uint64_t unew, uint64_t uold)
{
    struct proc *p = proc_current();
    if (pid != 0 && pid != p->pid) {
        epoch_enter();
        bool exists = pid > 0 && pid_lookup(pid) != NULL;
        epoch_exit();
        return exists ? -EPERM : -ESRCH;
    }
    if (resource < 0 || resource >= RLIM_NLIMITS)
        return -EINVAL;
    struct rlimit64 nl;
    if (unew && copy_from_user(&nl, unew, sizeof nl) < 0)
        return -EFAULT;
    if (unew && nl.cur > nl.max)
        return -EINVAL;
    if (unew && resource == RLIMIT_NOFILE && nl.max > FD_MAX)
        return -EPERM; // beyond nr_open (Linux)
    spin_lock(&p->lock);
    struct rlimit64 old = p->rlim[resource];
    if (unew) // everyone is root here: raising the hard limit is allowed
        p->rlim[resource] = nl;
    spin_unlock(&p->lock);
    if (uold && copy_to_user(uold, &old, sizeof old) < 0)
        return -EFAULT;
    return 0;
}

// NULL is a bad address here, not "no limit to read or set" as for prlimit64.
long sys_getrlimit(int resource, uint64_t lim)
{
    if (resource < 0 || resource >= RLIM_NLIMITS)
        return -EINVAL;
    return lim ? sys_prlimit64(0, resource, 0, lim) : -EFAULT;
}
long sys_setrlimit(int resource, uint64_t lim) { return lim ? sys_prlimit64(0, resource, lim, 0) : -EFAULT; }

// The user FS and GS bases of the calling thread. Like Linux, a base at or
// above the last page of user space is refused (a non-canonical one would fault
// on wrmsr). The GS base goes to MSR_KERNEL_GS_BASE: the kernel runs with its
// per-CPU GS (percpu.h), and the return to user mode swaps the user's back in.
long sys_arch_prctl(int code, uint64_t addr)
{
    struct thread *t = thread_current();
    switch (code) {
    case ARCH_SET_FS:
    case ARCH_SET_GS:
        if (addr >= USER_END - PGSIZE)
            return -EPERM;
        push_off(); // the field and the MSR change together, on this CPU
        if (code == ARCH_SET_FS) {
            t->fsbase = addr;
            wrmsr(MSR_FS_BASE, addr);
        } else {
            t->gsbase = addr;
            wrmsr(MSR_KERNEL_GS_BASE, addr);
        }
        pop_off();
        return 0;
    case ARCH_GET_FS:
        return copy_to_user(addr, &t->fsbase, sizeof t->fsbase);
    case ARCH_GET_GS:
        return copy_to_user(addr, &t->gsbase, sizeof t->gsbase);
    default:
        return -EINVAL;
    }
}

long sys_getuid(void) { return 0; }
long sys_geteuid(void) { return 0; }
long sys_getgid(void) { return 0; }
long sys_getegid(void) { return 0; }
// Every process is root with no supplementary groups: getgroups lists none.
long sys_getgroups(int size, uint64_t ulist)
{
    (void)ulist;
    return size < 0 ? -EINVAL : 0;
}

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
