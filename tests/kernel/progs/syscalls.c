// Checks every implemented system call from user space: normal results, -EFAULT
// for bad pointers (NULL, unmapped, kernel, non-canonical), -EINVAL for bad flags,
// -ENOSYS for unknown numbers, and the initial stack the loader built. Run with
// argv = {"syscalls", "one", "two"} and FOO=bar in the environment. Exits 0 if
// everything held, 1 otherwise (the failures are printed).
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include "raw.h"

static int failures;
#define CHECK(c)                                                                         \
    do {                                                                                 \
        if (!(c)) {                                                                      \
            printf("syscalls: FAILED line %d: %s\n", __LINE__, #c);                      \
            failures++;                                                                  \
        }                                                                                \
    } while (0)
#define CHECK_EQ(a, b)                                                                   \
    do {                                                                                 \
        long _a = (long)(a), _b = (long)(b);                                             \
        if (_a != _b) {                                                                  \
            printf("syscalls: FAILED line %d: %s == %s (%ld != %ld)\n", __LINE__, #a, #b, \
                   _a, _b);                                                              \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

#define KERNEL_PTR 0xffffffff80000000L
#define NONCANON 0x8000000000000000L
#define UNMAPPED 0x10000000L

static const long bad_ptrs[] = {0, UNMAPPED, KERNEL_PTR, NONCANON, 0x7ffffffffffeL};

static void check_stack(int argc, char **argv, char **envp)
{
    CHECK_EQ(argc, 3);
    CHECK(argc >= 3 && strcmp(argv[1], "one") == 0 && strcmp(argv[2], "two") == 0);
    CHECK(argv[argc] == NULL);
    int foo = 0;
    for (char **e = envp; *e; e++)
        foo |= strcmp(*e, "FOO=bar") == 0;
    CHECK(foo);
    CHECK_EQ(getauxval(AT_PAGESZ), 4096);
    CHECK(getauxval(AT_RANDOM) != 0);
    CHECK(getauxval(AT_PHDR) != 0);
    CHECK_EQ(getauxval(AT_PHENT), 56);
    CHECK(getauxval(AT_ENTRY) != 0);
    CHECK_EQ(getauxval(AT_SECURE), 0);
    const char *fn = (const char *)getauxval(AT_EXECFN);
    CHECK(fn && strncmp(fn, "syscalls", 8) == 0);
}

static void check_write(void)
{
    for (unsigned i = 0; i < sizeof bad_ptrs / sizeof bad_ptrs[0]; i++)
        CHECK_EQ(raw3(SYS_write, 1, bad_ptrs[i], 5), -EFAULT);
    CHECK_EQ(raw3(SYS_write, 1, "", 0), 0);
    CHECK_EQ(raw3(SYS_write, 7, "x", 1), -EBADF);
    CHECK_EQ(raw3(SYS_write, 1, "w\n", 2), 2);
    struct iovec iov[2] = {{"ab", 2}, {"c\n", 2}};
    CHECK_EQ(raw3(SYS_writev, 1, iov, 2), 4);
    CHECK_EQ(raw3(SYS_writev, 1, NULL, 1), -EFAULT);
    CHECK_EQ(raw3(SYS_writev, 1, KERNEL_PTR, 1), -EFAULT);
    CHECK_EQ(raw3(SYS_writev, 1, iov, -1), -EINVAL);
    struct iovec bad = {(void *)KERNEL_PTR, 4};
    CHECK_EQ(raw3(SYS_writev, 1, &bad, 1), -EFAULT);
}

static void check_unknown(void)
{
    CHECK_EQ(raw0(9999), -ENOSYS);
    CHECK_EQ(raw0(-1L), -ENOSYS);
    CHECK_EQ(raw0(333), -ENOSYS);
    CHECK_EQ(raw0(0x40000000L + 1), -ENOSYS); // x32 numbers
}

static long ns_of(struct timespec *t) { return t->tv_sec * 1000000000L + t->tv_nsec; }

static void check_time(void)
{
    struct timespec a, b;
    for (unsigned i = 0; i < sizeof bad_ptrs / sizeof bad_ptrs[0]; i++) {
        CHECK_EQ(raw2(SYS_clock_gettime, CLOCK_MONOTONIC, bad_ptrs[i]), -EFAULT);
        CHECK_EQ(raw2(SYS_gettimeofday, bad_ptrs[i] ? bad_ptrs[i] : 1, 0), -EFAULT);
        CHECK_EQ(raw2(SYS_nanosleep, bad_ptrs[i], 0), -EFAULT);
    }
    CHECK_EQ(raw2(SYS_clock_gettime, 99, &a), -EINVAL);
    CHECK_EQ(raw2(SYS_clock_gettime, CLOCK_REALTIME, &a), 0);
    CHECK(a.tv_sec > 1600000000);
    struct timespec bad = {0, 2000000000};
    CHECK_EQ(raw2(SYS_nanosleep, &bad, 0), -EINVAL);
    CHECK_EQ(raw4(SYS_clock_nanosleep, CLOCK_MONOTONIC, 8, &bad, 0), -EINVAL);
    CHECK_EQ(raw2(SYS_clock_gettime, CLOCK_MONOTONIC, &a), 0);
    struct timespec d = {0, 30000000};
    CHECK_EQ(raw2(SYS_nanosleep, &d, 0), 0);
    CHECK_EQ(raw2(SYS_clock_gettime, CLOCK_MONOTONIC, &b), 0);
    CHECK(ns_of(&b) - ns_of(&a) >= 30000000);
    CHECK_EQ(raw4(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &d, 0), 0);
    struct timespec abs = b;
    abs.tv_nsec += 20000000;
    if (abs.tv_nsec >= 1000000000) {
        abs.tv_sec++;
        abs.tv_nsec -= 1000000000;
    }
    CHECK_EQ(raw4(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, 0), 0);
    CHECK_EQ(raw2(SYS_clock_gettime, CLOCK_MONOTONIC, &a), 0);
    CHECK(ns_of(&a) >= ns_of(&abs));
}

static void check_memory(void)
{
    CHECK_EQ(raw6(SYS_mmap, 0, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), -EINVAL);
    CHECK_EQ(raw6(SYS_mmap, 0, 4096, PROT_READ, MAP_ANONYMOUS, -1, 0), -EINVAL);
    CHECK_EQ(raw6(SYS_mmap, 0, 4096, 0x100, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), -EINVAL);
    CHECK_EQ(raw6(SYS_mmap, 0x1001, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), -EINVAL);
    char *p = (char *)raw6(SYS_mmap, 0, 3 * 4096, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK((long)p > 0);
    if ((long)p <= 0)
        return;
    CHECK(p[0] == 0 && p[8191] == 0);
    memset(p, 'x', 3 * 4096);
    // A read-only page: the kernel's copy-out must get -EFAULT, not crash.
    CHECK_EQ(raw3(SYS_mprotect, p + 4096, 4096, PROT_READ), 0);
    CHECK_EQ(raw2(SYS_clock_gettime, CLOCK_MONOTONIC, p + 4096), -EFAULT);
    CHECK_EQ(raw2(SYS_clock_gettime, CLOCK_MONOTONIC, p), 0);
    CHECK_EQ(raw3(SYS_write, 1, p + 4096, 0), 0);
    CHECK(p[4096] == 'x');
    CHECK_EQ(raw3(SYS_mprotect, p + 1, 4096, PROT_READ), -EINVAL);
    CHECK_EQ(raw3(SYS_mprotect, p, 4096, 0x100), -EINVAL);
    CHECK_EQ(raw2(SYS_munmap, p + 4096, 4096), 0);
    CHECK_EQ(raw2(SYS_clock_gettime, CLOCK_MONOTONIC, p + 4096), -EFAULT);
    CHECK_EQ(raw2(SYS_munmap, p + 1, 4096), -EINVAL);
    CHECK(p[8192] == 'x' && p[100] == 'x'); // p[0..15] holds the timespec
    // MAP_FIXED into the hole.
    char *q = (char *)raw6(SYS_mmap, (long)(p + 4096), 4096, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK(q == p + 4096);
    CHECK(q[0] == 0);
    CHECK_EQ(raw2(SYS_munmap, p, 3 * 4096), 0);
    // A file mapping of a descriptor that is not open.
    CHECK_EQ(raw6(SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE, 3, 0), -EBADF);

    long cur = raw1(SYS_brk, 0);
    CHECK(cur > 0);
    long nb = raw1(SYS_brk, cur + 10000);
    CHECK_EQ(nb, cur + 10000);
    ((char *)cur)[9999] = 7;
    CHECK_EQ(raw1(SYS_brk, cur), cur);
    CHECK_EQ(raw1(SYS_brk, KERNEL_PTR), cur);
    void *m = malloc(100000);
    CHECK(m != NULL);
    memset(m, 1, 100000);
    free(m);
}

static void check_ids(void)
{
    long pid = raw0(SYS_getpid);
    CHECK(pid > 0);
    CHECK_EQ(raw0(SYS_gettid), pid);
    CHECK_EQ(raw0(SYS_getppid), 0);
    CHECK_EQ(raw0(SYS_getuid), 0);
    CHECK_EQ(raw0(SYS_geteuid), 0);
    CHECK_EQ(raw0(SYS_getgid), 0);
    CHECK_EQ(raw0(SYS_getegid), 0);
    int tid;
    CHECK_EQ(raw1(SYS_set_tid_address, &tid), pid);
    CHECK_EQ(raw4(SYS_wait4, -1, 0, 0, 0), -ECHILD);
    CHECK_EQ(raw4(SYS_wait4, -1, 0, 0x1000, 0), -EINVAL);
    unsigned long fs = 0;
    CHECK_EQ(raw2(SYS_arch_prctl, 0x1003, &fs), 0);
    CHECK(fs != 0);
    CHECK_EQ(raw2(SYS_arch_prctl, 0x1003, KERNEL_PTR), -EFAULT);
    CHECK_EQ(raw2(SYS_arch_prctl, 0x1003, 0), -EFAULT);
    CHECK_EQ(raw2(SYS_arch_prctl, 0x1002, NONCANON), -EPERM);
    CHECK_EQ(raw2(SYS_arch_prctl, 0x9999, 0), -EINVAL);
    unsigned long fs2 = 0;
    CHECK_EQ(raw2(SYS_arch_prctl, 0x1002, fs), 0);
    raw2(SYS_arch_prctl, 0x1003, &fs2);
    CHECK_EQ(fs2, fs);
}

static void check_sched(void)
{
    cpu_set_t set;
    CHECK_EQ(raw3(SYS_sched_getaffinity, 0, sizeof set, NULL), -EFAULT);
    CHECK_EQ(raw3(SYS_sched_getaffinity, 0, sizeof set, KERNEL_PTR), -EFAULT);
    CHECK_EQ(raw3(SYS_sched_getaffinity, 0, 1, &set), -EINVAL);
    CHECK_EQ(raw3(SYS_sched_getaffinity, 12345678, sizeof set, &set), -ESRCH);
    CPU_ZERO(&set);
    long n = raw3(SYS_sched_getaffinity, 0, sizeof set, &set);
    CHECK(n > 0);
    int ncpu = CPU_COUNT(&set);
    CHECK(ncpu >= 1);
    CHECK_EQ(raw0(SYS_sched_yield), 0);
    unsigned c = 99, node = 99;
    CHECK_EQ(raw3(SYS_getcpu, &c, &node, 0), 0);
    CHECK((int)c < ncpu && node == 0);
    CHECK_EQ(raw3(SYS_getcpu, KERNEL_PTR, 0, 0), -EFAULT);
    CHECK_EQ(raw3(SYS_sched_setaffinity, 0, sizeof set, NULL), -EFAULT);
    cpu_set_t none;
    CPU_ZERO(&none);
    CHECK_EQ(raw3(SYS_sched_setaffinity, 0, sizeof none, &none), -EINVAL);
    // Pin to the last CPU and check we are there, a few times across sleeps.
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(ncpu - 1, &one);
    CHECK_EQ(raw3(SYS_sched_setaffinity, 0, sizeof one, &one), 0);
    for (int i = 0; i < 5; i++) {
        raw3(SYS_getcpu, &c, 0, 0);
        CHECK_EQ(c, ncpu - 1);
        struct timespec d = {0, 1000000};
        raw2(SYS_nanosleep, &d, 0);
    }
    CHECK_EQ(raw3(SYS_sched_setaffinity, 0, sizeof set, &set), 0);
}

static void check_misc(void)
{
    struct utsname u;
    CHECK_EQ(raw1(SYS_uname, NULL), -EFAULT);
    CHECK_EQ(raw1(SYS_uname, KERNEL_PTR), -EFAULT);
    CHECK_EQ(raw1(SYS_uname, &u), 0);
    CHECK(strcmp(u.sysname, "Linux") == 0 && strcmp(u.machine, "x86_64") == 0);
    char buf[64] = {0}, zero[64] = {0};
    CHECK_EQ(raw3(SYS_getrandom, NULL, 16, 0), -EFAULT);
    CHECK_EQ(raw3(SYS_getrandom, KERNEL_PTR, 16, 0), -EFAULT);
    CHECK_EQ(raw3(SYS_getrandom, buf, 16, 0x100), -EINVAL);
    CHECK_EQ(raw3(SYS_getrandom, buf, 64, 0), 64);
    CHECK(memcmp(buf, zero, 64) != 0);
    unsigned long mask = 0, old = 1;
    CHECK_EQ(raw4(SYS_rt_sigprocmask, 0, &mask, &old, 4), -EINVAL);
    CHECK_EQ(raw4(SYS_rt_sigprocmask, 0, KERNEL_PTR, 0, 8), -EFAULT);
    CHECK_EQ(raw4(SYS_rt_sigprocmask, 7, &mask, 0, 8), -EINVAL);
    mask = 1UL << 9;
    CHECK_EQ(raw4(SYS_rt_sigprocmask, 2, &mask, 0, 8), 0);
    CHECK_EQ(raw4(SYS_rt_sigprocmask, 0, 0, &old, 8), 0);
    CHECK_EQ(old, 1UL << 9);
    unsigned long act[4] = {0x1234, 0, 0, 0}, oact[4];
    CHECK_EQ(raw4(SYS_rt_sigaction, 0, act, 0, 8), -EINVAL);
    CHECK_EQ(raw4(SYS_rt_sigaction, 65, act, 0, 8), -EINVAL);
    CHECK_EQ(raw4(SYS_rt_sigaction, 10, NONCANON, 0, 8), -EFAULT);
    CHECK_EQ(raw4(SYS_rt_sigaction, 10, act, 0, 8), 0);
    CHECK_EQ(raw4(SYS_rt_sigaction, 10, 0, oact, 8), 0);
    CHECK_EQ(oact[0], 0x1234);
    unsigned short ws[4];
    CHECK_EQ(raw3(SYS_ioctl, 1, 0x5413, ws), 0);
    CHECK(ws[0] > 0 && ws[1] > 0);
    CHECK_EQ(raw3(SYS_ioctl, 1, 0x5413, NULL), -EFAULT);
    CHECK_EQ(raw3(SYS_ioctl, 1, 0x5401, KERNEL_PTR), -EFAULT);
    CHECK_EQ(raw3(SYS_ioctl, 9, 0x5413, ws), -EBADF);
    CHECK_EQ(raw3(SYS_ioctl, 1, 0x1234, ws), -ENOTTY);
}

int main(int argc, char **argv, char **envp)
{
    check_stack(argc, argv, envp);
    check_write();
    check_unknown();
    check_time();
    check_memory();
    check_ids();
    check_sched();
    check_misc();
    printf("syscalls: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}
