// System-call dispatch by Linux x86-64 number, the per-CPU setup of the syscall
// instruction and CPU protections, and the work done on every return to user mode.
//
// Scalability: dispatch reads only the constant table and this CPU's per-CPU
// words; whether two calls commute is up to their handlers.
#include "mm/uvm.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "sync/percpu.h"
#include "syscall/syscall.h"
#include "uapi/errno.h"
#include "uapi/ext.h"
#include "uapi/unistd.h"
#include "x86/gdt.h"
#include "x86/trap.h"
#include "x86/x86.h"

// Used by syscall_entry (syscallasm.S).
DEFINE_PERCPU(uint64_t, syscall_user_rsp); // the user %rsp while we find our stack
DEFINE_PERCPU(uint64_t, syscall_rsp0);     // top of the current thread's kernel stack

extern char syscall_entry[];

// Handlers have their natural argument types; the six argument registers are
// passed to every one of them, which the x86-64 calling convention makes harmless.
#define SYS(fn) [__NR_##fn] = (syscall_fn)(void (*)(void))sys_##fn
static const syscall_fn syscall_table[NR_SYSCALLS] = {
    SYS(read),
    SYS(write),
    SYS(pread64),
    SYS(pwrite64),
    SYS(sendfile),
    SYS(readv),
    SYS(writev),
    SYS(lseek),
    SYS(close),
    SYS(dup),
    SYS(dup2),
    SYS(dup3),
    SYS(fcntl),
    SYS(close_range),
    SYS(fstat),
    SYS(ftruncate),
    SYS(fsync),
    SYS(fdatasync),
    SYS(getdents64),
    SYS(ioctl),
    SYS(fchdir),
    SYS(fchmod),
    SYS(pipe),
    SYS(pipe2),
    SYS(poll),
    SYS(ppoll),
    SYS(select),
    SYS(pselect6),
    SYS(open),
    SYS(openat),
    SYS(memfd_create),
    SYS(creat),
    SYS(stat),
    SYS(lstat),
    SYS(newfstatat),
    SYS(statx),
    SYS(mkdir),
    SYS(mkdirat),
    SYS(mknod),
    SYS(mknodat),
    SYS(unlink),
    SYS(rmdir),
    SYS(unlinkat),
    SYS(rename),
    SYS(renameat),
    SYS(renameat2),
    SYS(link),
    SYS(linkat),
    SYS(symlink),
    SYS(symlinkat),
    SYS(readlink),
    SYS(readlinkat),
    SYS(truncate),
    SYS(chdir),
    SYS(getcwd),
    SYS(access),
    SYS(faccessat),
    SYS(faccessat2),
    SYS(utimensat),
    SYS(chmod),
    SYS(fchmodat),
    SYS(umask),
    SYS(exit),
    SYS(exit_group),
    SYS(wait4),
    SYS(getpid),
    SYS(getppid),
    SYS(gettid),
    SYS(set_tid_address),
    SYS(arch_prctl),
    SYS(brk),
    SYS(mmap),
    SYS(munmap),
    SYS(mprotect),
    SYS(madvise),
    SYS(uname),
    // LAB sysinfo BEGIN
    SYS(sysinfo),
    // LAB sysinfo END
    SYS(clock_gettime),
    SYS(gettimeofday),
    SYS(time),
    SYS(nanosleep),
    SYS(alarm),
    SYS(getitimer),
    SYS(setitimer),
    SYS(clock_nanosleep),
    SYS(sched_yield),
    SYS(getcpu),
    SYS(sched_setaffinity),
    SYS(sched_getaffinity),
    SYS(getuid),
    SYS(geteuid),
    SYS(getgid),
    SYS(getegid),
    SYS(getgroups),
    SYS(getrandom),
    SYS(reboot),
    SYS(rt_sigtimedwait),
    SYS(rt_sigprocmask),
    SYS(rt_sigaction),
    SYS(clone),
    SYS(fork),
    SYS(vfork),
    SYS(execve),
    SYS(waitid),
    SYS(prlimit64),
    SYS(getrlimit),
    SYS(setrlimit),
    SYS(futex),
    SYS(rt_sigreturn),
    SYS(restart_syscall),
    SYS(rt_sigpending),
    SYS(rt_sigsuspend),
    SYS(pause),
    SYS(sigaltstack),
    SYS(kill),
    SYS(tkill),
    SYS(tgkill),
    SYS(setsid),
    SYS(setpgid),
    SYS(getpgid),
    SYS(getpgrp),
    SYS(getsid),
    SYS(socket),
    SYS(socketpair),
    SYS(bind),
    SYS(listen),
    SYS(connect),
    SYS(accept),
    SYS(accept4),
    SYS(getsockname),
    SYS(getpeername),
    SYS(sendto),
    SYS(recvfrom),
    SYS(sendmsg),
    SYS(recvmsg),
    SYS(shutdown),
    SYS(setsockopt),
    SYS(getsockopt),
};

// Our extensions (uapi/ext.h), numbered from __NR_EXT_BASE.
#define EXT(fn) [__NR_##fn - __NR_EXT_BASE] = (syscall_fn)(void (*)(void))sys_##fn
static const syscall_fn ext_table[] = {
    EXT(posix_spawn),
    EXT(kstats),
};

void syscall_set_kstack(uintptr_t top)
{
    tss_set_rsp0(top);
    this_cpu_write(syscall_rsp0, top);
}

#define RFLAGS_TF (1UL << 8)
#define RFLAGS_DF (1UL << 10)
#define RFLAGS_NT (1UL << 14)
#define RFLAGS_AC (1UL << 18)

void syscall_init_cpu(void)
{
    uint32_t a, b, c, d;
    cpuid(7, 0, &a, &b, &c, &d);
    uint64_t cr4 = read_cr4();
    if (b & (1u << 7))
        cr4 |= CR4_SMEP;  // never execute user pages in kernel mode
    if (b & (1u << 20))
        cr4 |= CR4_SMAP;  // never touch user pages outside stac/clac (usercopy.S)
    else
        panic("cpu %d: no SMAP; usercopy.S needs stac/clac", cpu_id());
    if (c & (1u << 2))
        cr4 |= CR4_UMIP;  // no sgdt/sidt/str in user mode
    write_cr4(cr4);

    wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SCE);
    // syscall: CS = KCODE, SS = KCODE+8. sysret: CS = UCODE32+16, SS = UCODE32+8.
    wrmsr(MSR_STAR, (uint64_t)GDT_KCODE << 32 | (uint64_t)(GDT_UCODE32 | 3) << 48);
    wrmsr(MSR_LSTAR, (uint64_t)syscall_entry);
    wrmsr(MSR_SFMASK, RFLAGS_IF | RFLAGS_TF | RFLAGS_DF | RFLAGS_NT | RFLAGS_AC);
}

// Everything pending before the thread may go back to user mode. Called with
// interrupts on or off; returns with them off.
void user_return(struct trapframe *tf)
{
    assert_no_locks_held("return to user space");
    struct thread *t = thread_current();
    for (;;) {
        if (t->sig && signal_pending(t)) {
            sti();
            signal_deliver(tf); // may not return (default actions)
        }
        cli();
        // Preempted by an affinity change, or a tick came while we were in the
        // kernel with preemption off (resched_pending).
        if (!cpumask_test(&t->affinity, cpu_id())) {
            schedule();
            continue;
        }
        if (this_cpu_read(cpu.resched_pending)) {
            sti();
            sched_preempt_pending();
            continue;
        }
        if (t->sig && signal_pending(t))
            continue; // arrived meanwhile
        break;
    }
    signal_restart_leftover(tf);
}

// sysret cannot return to a non-canonical %rip (it would fault in kernel mode
// with the user's GS), so such returns take iretq.
static bool sysret_safe(const struct trapframe *tf)
{
    return tf->rip < USER_END && tf->cs == (GDT_UCODE | 3) && tf->ss == (GDT_UDATA | 3);
}

int syscall_handler(struct trapframe *tf);
int syscall_handler(struct trapframe *tf)
{
    sti();
    uint64_t nr = tf->rax;
    struct thread *t = thread_current();
    t->syscall_nr = nr;
    long ret = -ENOSYS;
    if (nr < ARRAY_SIZE(syscall_table) && syscall_table[nr])
        ret = syscall_table[nr](tf->rdi, tf->rsi, tf->rdx, tf->r10, tf->r8, tf->r9);
    else if (nr - __NR_EXT_BASE < ARRAY_SIZE(ext_table) && ext_table[nr - __NR_EXT_BASE])
        ret = ext_table[nr - __NR_EXT_BASE](tf->rdi, tf->rsi, tf->rdx, tf->r10, tf->r8, tf->r9);
    tf->rax = ret;
    user_return(tf);
    bool iret = t->force_iret; // signal frames, sigreturn and exec set every register
    t->force_iret = false;
    return iret || !sysret_safe(tf);
}
