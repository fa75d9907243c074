// Shared helpers of the user-level suites: result lines, a scratch directory,
// raw system calls (the kernel's own return value, no libc in between) and
// addresses that must make the kernel return EFAULT.
#pragma once
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int suite_n, suite_failed;

static void check(int ok, const char *name)
{
    suite_n++;
    suite_failed += !ok;
    printf("%s %d - %s\n", ok ? "ok" : "not ok", suite_n, name);
}

// check that a call failed with errno e (libc style: -1 and errno)
#define CHECK_ERR(call, e, name)                                                         \
    do {                                                                                 \
        errno = 0;                                                                       \
        long __r = (long)(call);                                                         \
        int __e = errno;                                                                 \
        check(__r == -1 && __e == (e), name);                                            \
        if (!(__r == -1 && __e == (e)))                                                  \
            printf("# got %ld errno %d (%s), want errno %d\n", __r, __e, strerror(__e), (e)); \
    } while (0)

static int suite_end(void)
{
    printf("%d passed, %d failed\n", suite_n - suite_failed, suite_failed);
    fflush(stdout);
    return suite_failed != 0;
}

#define KERNEL_PTR ((void *)0xffffffff80000000UL)

// An address in user space with nothing mapped: a page mapped, then unmapped.
__attribute__((unused)) static void *unmapped_page(void)
{
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return (void *)0x1000; // below every mapping on both kernels
    munmap(p, 4096);
    return p;
}

// A fresh directory to work in, entered with chdir: /tmp/NAME.PID. /tmp is made
// if missing (our guest starts with an empty root).
static char suite_dir[64];

__attribute__((unused)) static int enter_scratch(const char *name)
{
    mkdir("/tmp", 01777);
    snprintf(suite_dir, sizeof suite_dir, "/tmp/%s.%d", name, (int)getpid());
    if (mkdir(suite_dir, 0755) != 0 || chdir(suite_dir) != 0) {
        printf("# cannot make %s: %s\n", suite_dir, strerror(errno));
        return -1;
    }
    return 0;
}
