// Signals: Linux x86-64 numbers, flags and structure layouts.
#pragma once
#include <sys/types.h>
#include <time.h>

#define SIGHUP 1
#define SIGINT 2
#define SIGQUIT 3
#define SIGILL 4
#define SIGTRAP 5
#define SIGABRT 6
#define SIGIOT 6
#define SIGBUS 7
#define SIGFPE 8
#define SIGKILL 9
#define SIGUSR1 10
#define SIGSEGV 11
#define SIGUSR2 12
#define SIGPIPE 13
#define SIGALRM 14
#define SIGTERM 15
#define SIGSTKFLT 16
#define SIGCHLD 17
#define SIGCONT 18
#define SIGSTOP 19
#define SIGTSTP 20
#define SIGTTIN 21
#define SIGTTOU 22
#define SIGURG 23
#define SIGXCPU 24
#define SIGXFSZ 25
#define SIGVTALRM 26
#define SIGPROF 27
#define SIGWINCH 28
#define SIGIO 29
#define SIGPOLL SIGIO
#define SIGPWR 30
#define SIGSYS 31
#define SIGRTMIN 34
#define SIGRTMAX 64
#define NSIG 65
#define _NSIG 65

#define SA_NOCLDSTOP 1
#define SA_NOCLDWAIT 2
#define SA_SIGINFO 4
#define SA_RESTORER 0x04000000
#define SA_ONSTACK 0x08000000
#define SA_RESTART 0x10000000
#define SA_NODEFER 0x40000000
#define SA_RESETHAND 0x80000000
#define SA_NOMASK SA_NODEFER
#define SA_ONESHOT SA_RESETHAND

#define SIG_BLOCK 0
#define SIG_UNBLOCK 1
#define SIG_SETMASK 2

#define SI_USER 0
#define SI_KERNEL 0x80
#define SI_QUEUE (-1)
#define SI_TKILL (-6)
// si_code values for the signals the CPU raises and for SIGCHLD (Linux's).
#define ILL_ILLOPN 2
#define FPE_INTDIV 1
#define FPE_FLTINV 7
#define SEGV_MAPERR 1
#define SEGV_ACCERR 2
#define BUS_ADRALN 1
#define BUS_ADRERR 2
#define TRAP_BRKPT 1
#define CLD_EXITED 1
#define CLD_KILLED 2
#define CLD_DUMPED 3
#define CLD_TRAPPED 4
#define CLD_STOPPED 5
#define CLD_CONTINUED 6
#define SS_ONSTACK 1
#define SS_DISABLE 2
#define MINSIGSTKSZ 2048
#define SIGSTKSZ 8192

typedef void (*sighandler_t)(int);
#define SIG_ERR ((sighandler_t)-1)
#define SIG_DFL ((sighandler_t)0)
#define SIG_IGN ((sighandler_t)1)

typedef int sig_atomic_t;
typedef struct { unsigned long __bits[128 / sizeof(long)]; } sigset_t;

union sigval {
    int sival_int;
    void *sival_ptr;
};

typedef struct {
    int si_signo;
    int si_errno;
    int si_code;
    int __pad0;
    union {
        char __pad[112];
        struct {
            pid_t pid;
            uid_t uid;
            union {
                int status;
                union sigval value;
            } u;
        } proc;
        void *addr;
    } __f;
} siginfo_t;
#define si_pid __f.proc.pid
#define si_uid __f.proc.uid
#define si_status __f.proc.u.status
#define si_value __f.proc.u.value
#define si_addr __f.addr

struct sigaction {
    union {
        void (*sa_handler)(int);
        void (*sa_sigaction)(int, siginfo_t *, void *);
    } __sa;
    sigset_t sa_mask;
    int sa_flags;
    void (*sa_restorer)(void);
};
#define sa_handler __sa.sa_handler
#define sa_sigaction __sa.sa_sigaction

typedef struct {
    void *ss_sp;
    int ss_flags;
    size_t ss_size;
} stack_t;

int sigaction(int sig, const struct sigaction *restrict act, struct sigaction *restrict old);
sighandler_t signal(int sig, sighandler_t handler);
int sigprocmask(int how, const sigset_t *restrict set, sigset_t *restrict old);
int pthread_sigmask(int how, const sigset_t *restrict set, sigset_t *restrict old);
int sigemptyset(sigset_t *s);
int sigfillset(sigset_t *s);
int sigaddset(sigset_t *s, int sig);
int sigdelset(sigset_t *s, int sig);
int sigismember(const sigset_t *s, int sig);
int sigpending(sigset_t *s);
int sigsuspend(const sigset_t *mask);
struct timespec;
int sigtimedwait(const sigset_t *restrict set, siginfo_t *restrict info,
                 const struct timespec *restrict timeout);
int sigwaitinfo(const sigset_t *restrict set, siginfo_t *restrict info);
int sigwait(const sigset_t *restrict set, int *restrict sig);
int sigaltstack(const stack_t *restrict ss, stack_t *restrict old);
int raise(int sig);
int kill(pid_t pid, int sig);
int killpg(pid_t pgrp, int sig);
int pthread_kill(pthread_t t, int sig);
int tgkill(pid_t tgid, pid_t tid, int sig);
