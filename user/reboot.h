// The reboot system call, raw (Linux x86-64 number 169), so that init and
// poweroff need nothing from libc beyond the C language. The magic numbers and
// LINUX_REBOOT_CMD_POWER_OFF are Linux's; REBOOT_CMD_EXIT_STATUS is ours
// (kernel/uapi/ext.h): power off and make the machine's exit status `status`.
#pragma once

#include "../kernel/uapi/ext.h"   // REBOOT_CMD_EXIT_STATUS

#define SYS_reboot_nr 169
#define LINUX_REBOOT_MAGIC1 0xfee1deadL
#define LINUX_REBOOT_MAGIC2 672274793L
#define LINUX_REBOOT_CMD_POWER_OFF 0x4321fedcL

// Returns only on failure: -errno.
static inline long reboot_syscall(long cmd, long arg)
{
    long ret;
    register long r10 __asm__("r10") = arg;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"((long)SYS_reboot_nr), "D"(LINUX_REBOOT_MAGIC1),
                       "S"(LINUX_REBOOT_MAGIC2), "d"(cmd), "r"(r10)
                     : "rcx", "r11", "memory");
    return ret;
}
