// System-call numbers: the Linux x86-64 ABI (the subset this kernel implements or
// names). Shared by the kernel and libc.
#pragma once

#define __NR_read 0
#define __NR_write 1
#define __NR_open 2
#define __NR_close 3
#define __NR_fstat 5
#define __NR_mmap 9
#define __NR_mprotect 10
#define __NR_munmap 11
#define __NR_brk 12
#define __NR_rt_sigaction 13
#define __NR_rt_sigprocmask 14
#define __NR_ioctl 16
#define __NR_writev 20
#define __NR_sched_yield 24
#define __NR_madvise 28
#define __NR_nanosleep 35
#define __NR_getpid 39
#define __NR_clone 56
#define __NR_fork 57
#define __NR_execve 59
#define __NR_exit 60
#define __NR_wait4 61
#define __NR_kill 62
#define __NR_uname 63
#define __NR_gettimeofday 96
#define __NR_getuid 102
#define __NR_getgid 104
#define __NR_geteuid 107
#define __NR_getegid 108
#define __NR_getppid 110
#define __NR_arch_prctl 158
#define __NR_reboot 169
#define __NR_gettid 186
#define __NR_sched_setaffinity 203
#define __NR_sched_getaffinity 204
#define __NR_set_tid_address 218
#define __NR_clock_gettime 228
#define __NR_clock_nanosleep 230
#define __NR_exit_group 231
#define __NR_getcpu 309
#define __NR_getrandom 318
#define NR_SYSCALLS 335
