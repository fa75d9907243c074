// Scheduling: yield, CPU affinity (cpu_set_t, 1024 CPUs), clone flags.
#pragma once
#include <sys/types.h>

#define SCHED_OTHER 0
#define SCHED_FIFO 1
#define SCHED_RR 2
#define SCHED_BATCH 3
#define SCHED_IDLE 5
struct sched_param {
    int sched_priority;
};

#define CLONE_VM 0x00000100
#define CLONE_FS 0x00000200
#define CLONE_FILES 0x00000400
#define CLONE_SIGHAND 0x00000800
#define CLONE_PIDFD 0x00001000
#define CLONE_PTRACE 0x00002000
#define CLONE_VFORK 0x00004000
#define CLONE_PARENT 0x00008000
#define CLONE_THREAD 0x00010000
#define CLONE_NEWNS 0x00020000
#define CLONE_SYSVSEM 0x00040000
#define CLONE_SETTLS 0x00080000
#define CLONE_PARENT_SETTID 0x00100000
#define CLONE_CHILD_CLEARTID 0x00200000
#define CLONE_DETACHED 0x00400000
#define CLONE_UNTRACED 0x00800000
#define CLONE_CHILD_SETTID 0x01000000

#define CPU_SETSIZE 1024
#define __CPU_BITS (8 * sizeof(unsigned long))
typedef struct { unsigned long __bits[CPU_SETSIZE / __CPU_BITS]; } cpu_set_t;

#define CPU_ALLOC_SIZE(n) ((((n) + __CPU_BITS - 1) / __CPU_BITS) * sizeof(unsigned long))
#define CPU_ZERO_S(size, set) __builtin_memset((set), 0, (size))
#define CPU_SET_S(cpu, size, set) ((size_t)(cpu) < 8 * (size) ? \
    ((set)->__bits[(cpu) / __CPU_BITS] |= 1UL << ((cpu) % __CPU_BITS)) : 0)
#define CPU_CLR_S(cpu, size, set) ((size_t)(cpu) < 8 * (size) ? \
    ((set)->__bits[(cpu) / __CPU_BITS] &= ~(1UL << ((cpu) % __CPU_BITS))) : 0)
#define CPU_ISSET_S(cpu, size, set) ((size_t)(cpu) < 8 * (size) ? \
    (int)(((set)->__bits[(cpu) / __CPU_BITS] >> ((cpu) % __CPU_BITS)) & 1) : 0)
#define CPU_COUNT_S(size, set) __sched_cpucount((size), (set))
#define CPU_EQUAL_S(size, a, b) (!__builtin_memcmp((a), (b), (size)))
#define CPU_ZERO(set) CPU_ZERO_S(sizeof(cpu_set_t), set)
#define CPU_SET(cpu, set) CPU_SET_S(cpu, sizeof(cpu_set_t), set)
#define CPU_CLR(cpu, set) CPU_CLR_S(cpu, sizeof(cpu_set_t), set)
#define CPU_ISSET(cpu, set) CPU_ISSET_S(cpu, sizeof(cpu_set_t), set)
#define CPU_COUNT(set) CPU_COUNT_S(sizeof(cpu_set_t), set)
#define CPU_EQUAL(a, b) CPU_EQUAL_S(sizeof(cpu_set_t), a, b)

int __sched_cpucount(size_t size, const cpu_set_t *set);
int sched_yield(void);
int sched_getcpu(void);
int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set);
int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set);
int sched_get_priority_max(int policy);
int sched_get_priority_min(int policy);
int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...);
