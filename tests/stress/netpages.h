// The kernel's net page count for the stress programs (the fuzzer and
// fsstress): pages allocated minus pages freed over every CPU, from our
// kstats extension (kernel/uapi/ext.h). Header-only: each program includes it
// once.
#pragma once
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "../../kernel/uapi/ext.h"

#define NETPAGES_SETTLE_S 15 // at most this long for freed pages to come back

// The count now; -1 where there is no kstats (Linux).
static long net_pages(void)
{
    static struct kstats_cpu st[256];
    long n = syscall(__NR_kstats, st, 256);
    if (n <= 0)
        return -1;
    long net = 0;
    for (long c = 0; c < n && c < 256; c++)
        net += (long)(st[c].pages_alloc - st[c].pages_freed);
    return net;
}

static double netpages_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

// Freed pages come back a little later (epochs, deferred frees): the count
// once it has stopped falling for two seconds (-1 on Linux).
static long settled_pages(void)
{
    long best = net_pages();
    double start = netpages_now(), last_drop = start;
    while (best >= 0 && netpages_now() - start < NETPAGES_SETTLE_S &&
           netpages_now() - last_drop < 2) {
        struct timespec ms200 = {0, 200000000};
        nanosleep(&ms200, NULL);
        long n = net_pages();
        if (n < best) {
            best = n;
            last_drop = netpages_now();
        }
    }
    return best;
}
