// Signals: sigaction with handlers (returning through our rt_sigreturn
// trampoline), SA_SIGINFO, raise/kill, masks and pending signals, SA_RESETHAND,
// siglongjmp out of a handler, alarm.
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"

static volatile sig_atomic_t got, got_info_pid, got_code;
static volatile long canary;

static void handler(int sig)
{
    got = sig;
}

static void info_handler(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    got = sig;
    got_info_pid = si->si_pid;
    got_code = si->si_code;
}

static sigjmp_buf jb;
static int *volatile bad_ptr = (int *)8;
static void jump_handler(int sig)
{
    siglongjmp(jb, sig);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    check(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction installs a handler");
    canary = 0x1234567890L;
    long local = 42;
    check(raise(SIGUSR1) == 0 && got == SIGUSR1, "raise runs the handler");
    check(canary == 0x1234567890L && local == 42, "state intact after returning from the handler");
    got = 0;
    kill(getpid(), SIGUSR1);
    check(got == SIGUSR1, "kill(getpid()) runs the handler");

    struct sigaction old;
    sigaction(SIGUSR1, NULL, &old);
    check(old.sa_handler == handler, "sigaction reports the installed handler");

    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = info_handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR2, &sa, NULL);
    got = 0;
    kill(getpid(), SIGUSR2);
    check(got == SIGUSR2 && got_info_pid == getpid() && got_code == SI_USER,
          "SA_SIGINFO handler gets si_pid and si_code");

    sigset_t set, pend;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    got = 0;
    raise(SIGUSR1);
    sigpending(&pend);
    check(got == 0 && sigismember(&pend, SIGUSR1), "a blocked signal stays pending");
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    check(got == SIGUSR1, "unblocking delivers it");

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    sigaction(SIGUSR1, NULL, &old);
    check(old.sa_handler == SIG_DFL, "SA_RESETHAND restores the default");

    check(signal(SIGUSR2, SIG_IGN) != SIG_ERR, "signal(SIG_IGN)");
    got = 0;
    raise(SIGUSR2);
    check(got == 0, "an ignored signal does nothing");

    signal(SIGSEGV, jump_handler);
    int r = sigsetjmp(jb, 1);
    if (r == 0)
        *bad_ptr = 1;
    check(r == SIGSEGV, "siglongjmp out of a SIGSEGV handler");
    sigprocmask(SIG_SETMASK, NULL, &set);
    check(!sigismember(&set, SIGSEGV), "the mask is restored after jumping out");

    // Block SIGALRM until sigsuspend, so it cannot arrive before we wait.
    signal(SIGALRM, handler);
    sigset_t alrm, waitmask;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    sigprocmask(SIG_BLOCK, &alrm, &waitmask);
    sigdelset(&waitmask, SIGALRM);
    got = 0;
    alarm(1);
    int sr = sigsuspend(&waitmask);
    check(got == SIGALRM && sr == -1 && errno == EINTR, "alarm and sigsuspend");
    sigprocmask(SIG_UNBLOCK, &alrm, NULL);

    errno = 0;
    check(sigaction(SIGKILL, &sa, NULL) == -1 && errno == EINVAL, "SIGKILL cannot be caught");
    check(sigaddset(&set, 0) == -1 && errno == EINVAL, "sigaddset rejects signal 0");
    return tap_done();
}
