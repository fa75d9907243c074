// Runs the machine out of memory, then touches memory that needs more
// (tests/kernel/oom_test.c). First 64 MiB of shared anonymous memory, which
// mmap fills in at once but which no CPU has page tables for yet; then every
// page left, as shared anonymous mappings (whose mmap fails with ENOMEM once
// there is no page for them: so we know memory is gone), 1 MiB at a time,
// then a page at a time; then system calls that store into the 64 MiB, in 8
// of its 2 MiB blocks, each needing a page table of its own: it prints
// "clock_gettime: -12" if they succeeded or failed with -ENOMEM and at least
// one failed (a page given back a moment later may serve one), else the last
// result; then a store to
// every page of the 64 MiB. That needs page-table pages there are none of:
// the kernel must end the process (an out-of-memory kill) rather than retry
// the fault forever. Exit status: 2 if the 64 MiB could not be had, 3 if
// every store went through (nothing ran out), never 0.
// `memhog stack`: after running memory out, grows the stack instead, 4 MiB
// of it: the kill again, never SIGSEGV (the stack has room to grow).
#include "raw.h"
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define REGION (64UL << 20)

static void *map_shared(size_t len)
{
    return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
}

// Take every page left: chunks of `len` until mmap fails a few times in a row
// (pages that come back a moment later, a grace period after something was
// freed, are taken too).
static void exhaust(size_t len)
{
    for (int fails = 0; fails < 4;) {
        if (map_shared(len) == MAP_FAILED) {
            fails++;
            nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);
        } else {
            fails = 0;
        }
    }
}

// 16 KiB of new stack per level.
static int deep(int n)
{
    volatile char pad[16384];
    pad[0] = (char)n;
    return n ? deep(n - 1) + pad[0] : 0;
}

int main(int argc, char **argv)
{
    volatile char *region = map_shared(REGION);
    if ((void *)region == MAP_FAILED)
        return 2;
    exhaust(1UL << 20);
    exhaust(4096);
    if (argc > 1 && argv[1][0] == 's') {
        deep(256);
        return 3;
    }
    // The kernel's copies into the untouched region need page tables too.
    long r = 0, nomem = 0;
    for (int i = 0; i < 8; i++) {
        r = raw2(SYS_clock_gettime, CLOCK_MONOTONIC, region + REGION / 2 + (i << 21));
        nomem += r == -12;
        if (r != 0 && r != -12)
            break;
    }
    char line[40];
    if (nomem && (r == 0 || r == -12))
        r = -12;
    write(1, line, snprintf(line, sizeof line, "clock_gettime: %ld\n", r));
    for (size_t off = 0; off < REGION; off += 4096)
        region[off] = 1;
    return 3;
}
