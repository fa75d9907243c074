// User-visible constants and structures of the Linux x86-64 ABI that this kernel
// implements: memory mapping, time, processes, terminals, auxiliary vector.
// Values and layouts are Linux's. Shared by the kernel and libc.
#pragma once
#include <stdint.h>

// mmap / mprotect
#define PROT_NONE 0
#define PROT_READ 1
#define PROT_WRITE 2
#define PROT_EXEC 4
#define MAP_SHARED 0x01
#define MAP_PRIVATE 0x02
#define MAP_FIXED 0x10
#define MAP_ANONYMOUS 0x20
#define MAP_NORESERVE 0x4000
#define MAP_FIXED_NOREPLACE 0x100000

// arch_prctl
#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004

// clocks
#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
#define TIMER_ABSTIME 1
struct timespec {
    int64_t tv_sec;
    int64_t tv_nsec;
};
struct timeval {
    int64_t tv_sec;
    int64_t tv_usec;
};

// wait4, waitid
#define WNOHANG 1
#define WUNTRACED 2
#define WSTOPPED 2
#define WEXITED 4
#define WCONTINUED 8
#define WNOWAIT 0x01000000
#define P_ALL 0
#define P_PID 1
#define P_PGID 2
#define W_EXITCODE(code, sig) ((code) << 8 | (sig))
#define WCOREFLAG 0x80
#define W_STOPCODE(sig) ((sig) << 8 | 0x7f)
#define W_CONTINUED 0xffff

// clone
#define CSIGNAL 0xff
#define CLONE_VM 0x100
#define CLONE_FS 0x200
#define CLONE_FILES 0x400
#define CLONE_SIGHAND 0x800
#define CLONE_VFORK 0x4000
#define CLONE_PARENT 0x8000
#define CLONE_THREAD 0x10000
#define CLONE_SYSVSEM 0x40000
#define CLONE_SETTLS 0x80000
#define CLONE_PARENT_SETTID 0x100000
#define CLONE_CHILD_CLEARTID 0x200000
#define CLONE_DETACHED 0x400000
#define CLONE_CHILD_SETTID 0x1000000

// futex
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256

// prlimit64
#define RLIMIT_STACK 3
#define RLIMIT_NOFILE 7
#define RLIM_INFINITY (~0ULL)

// signals
#define SIGHUP 1
#define SIGINT 2
#define SIGQUIT 3
#define SIGILL 4
#define SIGTRAP 5
#define SIGABRT 6
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
#define SIGPWR 30
#define SIGSYS 31
#define NSIG 64
#define SIG_BLOCK 0
#define SIG_UNBLOCK 1
#define SIG_SETMASK 2
#define SIG_DFL 0
#define SIG_IGN 1
#define SA_NOCLDSTOP 1
#define SA_NOCLDWAIT 2
#define SA_SIGINFO 4
#define SA_ONSTACK 0x08000000
#define SA_RESTORER 0x04000000
#define SA_RESTART 0x10000000
#define SA_NODEFER 0x40000000
#define SA_RESETHAND 0x80000000
#define SS_ONSTACK 1
#define SS_DISABLE 2
#define MINSIGSTKSZ 2048
// si_code values
#define SI_USER 0
#define SI_KERNEL 0x80
#define SI_TKILL (-6)
#define ILL_ILLOPN 2
#define FPE_INTDIV 1
#define FPE_FLTINV 7
#define SEGV_MAPERR 1
#define SEGV_ACCERR 2
#define BUS_ADRALN 1
#define TRAP_BRKPT 1
#define CLD_EXITED 1
#define CLD_KILLED 2
#define CLD_DUMPED 3
#define CLD_STOPPED 5
#define CLD_CONTINUED 6
struct stack_t_ {
    uint64_t ss_sp;
    int32_t ss_flags;
    int32_t pad;
    uint64_t ss_size;
};

// uname
struct utsname {
    char sysname[65], nodename[65], release[65], version[65], machine[65], domainname[65];
};

// terminal ioctls
#define TCGETS 0x5401
#define TIOCGWINSZ 0x5413
struct winsize {
    uint16_t ws_row, ws_col, ws_xpixel, ws_ypixel;
};
struct termios {
    uint32_t c_iflag, c_oflag, c_cflag, c_lflag;
    uint8_t c_line;
    uint8_t c_cc[19];
};

// writev
struct iovec {
    uint64_t iov_base;
    uint64_t iov_len;
};

// getrandom
#define GRND_NONBLOCK 1
#define GRND_RANDOM 2
#define GRND_INSECURE 4

// auxiliary vector
#define AT_NULL 0
#define AT_PHDR 3
#define AT_PHENT 4
#define AT_PHNUM 5
#define AT_PAGESZ 6
#define AT_BASE 7
#define AT_FLAGS 8
#define AT_ENTRY 9
#define AT_UID 11
#define AT_EUID 12
#define AT_GID 13
#define AT_EGID 14
#define AT_PLATFORM 15
#define AT_HWCAP 16
#define AT_CLKTCK 17
#define AT_SECURE 23
#define AT_RANDOM 25
#define AT_EXECFN 31
