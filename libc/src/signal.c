// Signals: sigaction with our rt_sigreturn trampoline, masks, raise/kill, and
// the signal-mask half of sigsetjmp/siglongjmp.
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "libc.h"

// The kernel's struct sigaction (x86-64): handler, flags, restorer, 64-bit mask.
struct ksigaction {
    void *handler;
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
};

int sigaction(int sig, const struct sigaction *restrict act, struct sigaction *restrict old)
{
    struct ksigaction k, ko;
    if (act) {
        k.handler = (void *)act->sa_handler;
        k.flags = (unsigned)act->sa_flags | SA_RESTORER;
        k.restorer = __restore_rt;
        k.mask = act->sa_mask.__bits[0];
    }
    if (sys(__NR_rt_sigaction, sig, act ? &k : NULL, old ? &ko : NULL, 8) < 0)
        return -1;
    if (old) {
        memset(old, 0, sizeof *old);
        old->sa_handler = (sighandler_t)ko.handler;
        old->sa_flags = (int)ko.flags;
        old->sa_restorer = ko.restorer;
        old->sa_mask.__bits[0] = ko.mask;
    }
    return 0;
}

sighandler_t signal(int sig, sighandler_t handler)
{
    struct sigaction sa = {.sa_handler = handler, .sa_flags = SA_RESTART}, old;
    if (sigaction(sig, &sa, &old) < 0)
        return SIG_ERR;
    return old.sa_handler;
}

int sigemptyset(sigset_t *s)
{
    memset(s, 0, sizeof *s);
    return 0;
}

int sigfillset(sigset_t *s)
{
    memset(s, 0, sizeof *s);
    s->__bits[0] = ~0UL;
    return 0;
}

static int bad_signal(int sig)
{
    if (sig <= 0 || sig >= NSIG) {
        errno = EINVAL;
        return 1;
    }
    return 0;
}

int sigaddset(sigset_t *s, int sig)
{
    if (bad_signal(sig))
        return -1;
    s->__bits[0] |= 1UL << (sig - 1);
    return 0;
}

int sigdelset(sigset_t *s, int sig)
{
    if (bad_signal(sig))
        return -1;
    s->__bits[0] &= ~(1UL << (sig - 1));
    return 0;
}

int sigismember(const sigset_t *s, int sig)
{
    if (bad_signal(sig))
        return -1;
    return (int)((s->__bits[0] >> (sig - 1)) & 1);
}

int sigprocmask(int how, const sigset_t *restrict set, sigset_t *restrict old)
{
    if (old)
        memset(old, 0, sizeof *old);
    return sys(__NR_rt_sigprocmask, how, set, old, 8);
}

int pthread_sigmask(int how, const sigset_t *restrict set, sigset_t *restrict old)
{
    if (old)
        memset(old, 0, sizeof *old);
    long r = __sys(__NR_rt_sigprocmask, how, set, old, 8);
    return r < 0 ? (int)-r : 0;
}

void __block_all_signals(void *old)
{
    unsigned long all = ~0UL;
    __sys(__NR_rt_sigprocmask, SIG_BLOCK, &all, old, 8);
}

void __restore_signals(const void *old)
{
    __sys(__NR_rt_sigprocmask, SIG_SETMASK, old, NULL, 8);
}

int sigpending(sigset_t *s)
{
    memset(s, 0, sizeof *s);
    return sys(__NR_rt_sigpending, s, 8);
}

int sigsuspend(const sigset_t *mask) { return sys(__NR_rt_sigsuspend, mask, 8); }

int sigtimedwait(const sigset_t *restrict set, siginfo_t *restrict info,
                 const struct timespec *restrict timeout)
{
    return sys(__NR_rt_sigtimedwait, set, info, timeout, 8);
}

int sigwaitinfo(const sigset_t *restrict set, siginfo_t *restrict info)
{
    return sigtimedwait(set, info, NULL);
}

int sigwait(const sigset_t *restrict set, int *restrict sig)
{
    long r;
    do
        r = __sys(__NR_rt_sigtimedwait, set, NULL, NULL, 8);
    while (r == -EINTR);
    if (r < 0)
        return (int)-r;
    *sig = (int)r;
    return 0;
}

int sigaltstack(const stack_t *restrict ss, stack_t *restrict old)
{
    return sys(__NR_sigaltstack, ss, old);
}

int kill(pid_t pid, int sig) { return sys(__NR_kill, pid, sig); }
int killpg(pid_t pgrp, int sig) { return kill(-pgrp, sig); }
int tgkill(pid_t tgid, pid_t tid, int sig) { return sys(__NR_tgkill, tgid, tid, sig); }

int raise(int sig)
{
    // Block everything so the thread cannot fork or exit between the two calls.
    unsigned long old;
    __block_all_signals(&old);
    int r = tgkill(getpid(), __self()->tid, sig);
    __restore_signals(&old);
    return r;
}

unsigned alarm(unsigned secs) { return (unsigned)__sys(__NR_alarm, secs); }
int pause(void) { return sys(__NR_pause); }

hidden void __sigsetjmp_save(sigjmp_buf env);
void __sigsetjmp_save(sigjmp_buf env)
{
    env->__mask_saved = 1;
    sigprocmask(SIG_SETMASK, NULL, &env->__mask);
}

_Noreturn void siglongjmp(sigjmp_buf env, int val)
{
    if (env->__mask_saved)
        sigprocmask(SIG_SETMASK, &env->__mask, NULL);
    longjmp(env, val);
}

char *strsignal(int sig)
{
    static const char *const names[] = {
        [SIGHUP] = "Hangup", [SIGINT] = "Interrupt", [SIGQUIT] = "Quit",
        [SIGILL] = "Illegal instruction", [SIGTRAP] = "Trace/breakpoint trap",
        [SIGABRT] = "Aborted", [SIGBUS] = "Bus error", [SIGFPE] = "Floating point exception",
        [SIGKILL] = "Killed", [SIGUSR1] = "User defined signal 1",
        [SIGSEGV] = "Segmentation fault", [SIGUSR2] = "User defined signal 2",
        [SIGPIPE] = "Broken pipe", [SIGALRM] = "Alarm clock", [SIGTERM] = "Terminated",
        [SIGCHLD] = "Child exited", [SIGCONT] = "Continued", [SIGSTOP] = "Stopped (signal)",
        [SIGTSTP] = "Stopped", [SIGWINCH] = "Window changed", [SIGSYS] = "Bad system call",
    };
    if (sig > 0 && sig < (int)(sizeof names / sizeof *names) && names[sig])
        return (char *)names[sig];
    return (char *)"Unknown signal";
}
