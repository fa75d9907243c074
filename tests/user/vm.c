// Memory-mapping semantics a program can check without signals or fork: mmap
// placement and zero fill, MAP_FIXED replacement, MAP_FIXED_NOREPLACE, munmap of
// holes, mprotect errors, MADV_DONTNEED, MAP_POPULATE, the stack growing on
// demand, and MADV_UNMAP_ASYNC (our extension; EINVAL on Linux). Runs in our
// guest and on the Linux host alike.
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "../../kernel/uapi/ext.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static int n, failed;

static void check(int ok, const char *name)
{
    n++;
    failed += !ok;
    printf("%s %d - %s\n", ok ? "ok" : "not ok", n, name);
}

static int all_zero(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i])
            return 0;
    return 1;
}

// The stack grows on demand (Linux's and ours, kernel/mm/ustack.c): far below the
// frames in use is still stack.
static __attribute__((noinline)) int deep_stack(size_t depth)
{
    volatile char big[depth];
    big[0] = 1;
    big[depth / 2] = 2;
    big[depth - 1] = 3;
    return big[0] + big[depth / 2] + big[depth - 1];
}

int main(void)
{
    const size_t pg = 4096;
    char *a = mmap(NULL, 8 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    check(a != MAP_FAILED && (uintptr_t)a % pg == 0, "anonymous mmap returns an aligned address");
    check(all_zero(a, 8 * pg), "fresh memory reads as zeros");
    memset(a, 'x', 8 * pg);
    char *b = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    check(b != MAP_FAILED && (b + pg <= a || b >= a + 8 * pg), "a second mapping does not overlap");
    // MAP_FIXED replaces, MAP_FIXED_NOREPLACE refuses.
    char *f = mmap(a + 2 * pg, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    check(f == a + 2 * pg && all_zero(f, pg) && a[pg] == 'x' && a[3 * pg] == 'x',
          "MAP_FIXED replaces exactly its pages with zeros");
    errno = 0;
    char *r = mmap(a + 7 * pg, 2 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    check(r == MAP_FAILED && errno == EEXIST, "MAP_FIXED_NOREPLACE over a mapping is EEXIST");
    errno = 0;
    check(mmap(a + 1, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED &&
              errno == EINVAL, "MAP_FIXED at an unaligned address is EINVAL");
    errno = 0;
    check(mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED && errno == EINVAL,
          "mmap of length 0 is EINVAL");
    // munmap a hole, then NOREPLACE can fill it.
    check(munmap(a + 4 * pg, pg) == 0, "munmap of one page in the middle");
    r = mmap(a + 4 * pg, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    check(r == a + 4 * pg && all_zero(r, pg), "MAP_FIXED_NOREPLACE fills a hole");
    errno = 0;
    check(munmap(a + 1, pg) == -1 && errno == EINVAL, "munmap at an unaligned address is EINVAL");
    check(munmap(a + 20 * pg, pg) == 0, "munmap of nothing succeeds");
    // mprotect.
    check(mprotect(a, pg, PROT_READ) == 0 && a[0] == 'x', "mprotect to read-only keeps contents");
    check(mprotect(a, pg, PROT_READ | PROT_WRITE) == 0 && (a[0] = 'y') == 'y', "and back to writable");
    char *h = mmap(NULL, 3 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    errno = 0;
    check(h != MAP_FAILED && munmap(h + pg, pg) == 0 && mprotect(h, 3 * pg, PROT_READ | PROT_WRITE) == -1 &&
              errno == ENOMEM, "mprotect over a hole is ENOMEM");
    errno = 0; // (musl's mprotect rounds the address down: ask the kernel directly)
    check(syscall(SYS_mprotect, a + 1, pg, PROT_READ) == -1 && errno == EINVAL,
          "mprotect unaligned is EINVAL");
    // MADV_DONTNEED zero-fills private anonymous memory again.
    check(madvise(a + 5 * pg, 2 * pg, MADV_DONTNEED) == 0 && all_zero(a + 5 * pg, 2 * pg) &&
              a[7 * pg] == 'x', "MADV_DONTNEED drops exactly its pages");
    char *p = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    check(p != MAP_FAILED && all_zero(p, 4 * pg), "MAP_POPULATE memory reads as zeros");
    // MADV_UNMAP_ASYNC: ours unmaps; Linux says EINVAL.
    errno = 0;
    int ours = syscall(__NR_kstats, 0, 0) > 0;
    int ret = madvise(p, 4 * pg, MADV_UNMAP_ASYNC);
    if (ours) {
        r = mmap(p, 4 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        check(ret == 0 && r == p, "MADV_UNMAP_ASYNC unmaps at once (here)");
    } else {
        check(ret == -1 && errno == EINVAL, "MADV_UNMAP_ASYNC is EINVAL on Linux");
    }
    if (ours) { // kstats: per-CPU counters; this process faulted and allocated pages
        static struct kstats_cpu st[256];
        long ncpu = syscall(__NR_kstats, st, 256);
        unsigned long faults = 0, allocs = 0;
        for (long c = 0; c < ncpu && c < 256; c++) {
            faults += st[c].page_faults;
            allocs += st[c].pages_alloc;
        }
        check(ncpu > 0 && faults > 0 && allocs > 0, "kstats counts page faults and allocations");
    }
    check(deep_stack(4 << 20) == 6, "4 MiB of stack below main's frame are usable");
    check(munmap(a, 8 * pg) == 0 && munmap(b, pg) == 0, "munmap of everything");
    printf("%d passed, %d failed\n", n - failed, failed);
    return failed != 0;
}
