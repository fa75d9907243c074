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

// wait4
#define WNOHANG 1
#define W_EXITCODE(code, sig) ((code) << 8 | (sig))

// signals (numbers only; delivery comes later)
#define SIGILL 4
#define SIGTRAP 5
#define SIGBUS 7
#define SIGFPE 8
#define SIGKILL 9
#define SIGSEGV 11
#define NSIG 64
#define SIG_BLOCK 0
#define SIG_UNBLOCK 1
#define SIG_SETMASK 2

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
