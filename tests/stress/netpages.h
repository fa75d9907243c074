// The kernel's net page count for the stress programs (the fuzzer and
// fsstress): pages allocated minus pages freed over every CPU, from our
// kstats extension (kernel/uapi/ext.h). Header-only: each program includes it
// once.
#pragma once
#include <fcntl.h>
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

// The kernel's caches of free objects and kernel stacks go back to the page
// allocator (Linux's /proc/sys/vm/drop_caches, mm/dropcaches.c), so that the
// count is of pages in use, not of what the caches happened to hold. Only on
// our kernel (the caller checks kstats): on a Linux host run as root it would
// drop the host's page cache.
static inline void drop_kernel_caches(void)
{
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
    if (fd >= 0) {
        ssize_t r = write(fd, "3\n", 2); // (failed: the count keeps the caches)
        (void)r;
        close(fd);
    }
}

// Freed pages come back a little later (epochs, deferred frees): the count,
// the caches dropped, once it has stopped falling for two seconds (-1 on Linux).
static long settled_pages(void)
{
    long best = net_pages();
    if (best >= 0) {
        drop_kernel_caches();
        best = net_pages();
    }
    double start = netpages_now(), last_drop = start;
    while (best >= 0 && netpages_now() - start < NETPAGES_SETTLE_S &&
           netpages_now() - last_drop < 2) {
        struct timespec ms200 = {0, 200000000};
        nanosleep(&ms200, NULL);
        drop_kernel_caches();
        long n = net_pages();
        if (n < best) {
            best = n;
            last_drop = netpages_now();
        }
    }
    return best;
}

// Our /proc/pagesites (under the boot word `pagesites`): the pages in use by
// allocation site, "PAGES SITE" lines. A snapshot of it, and the sites that
// changed most between two: where a leak's pages came from.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sites {
    int n;
    long *pages;
    char **site;
};

// NULL where there is no such file or it keeps nothing (Linux, or no pagesites).
static inline struct sites *sites_snapshot(void)
{
    FILE *f = fopen("/proc/pagesites", "r");
    if (!f)
        return NULL;
    struct sites *s = calloc(1, sizeof *s);
    int cap = 0;
    char line[512];
    while (s && fgets(line, sizeof line, f)) {
        char *end, *site;
        long pages = strtol(line, &end, 10);
        if (line[0] == '#' || end == line || *end != ' ')
            continue;
        for (site = end; *site == ' '; site++)
            ;
        site[strcspn(site, "\n")] = 0;
        if (s->n == cap) {
            cap = cap ? 2 * cap : 256;
            long *p = realloc(s->pages, cap * sizeof *p);
            char **q = p ? realloc(s->site, cap * sizeof *q) : NULL;
            if (p)
                s->pages = p;
            if (q)
                s->site = q;
            if (!p || !q)
                break;
        }
        s->pages[s->n] = pages;
        s->site[s->n++] = strdup(site);
    }
    fclose(f);
    if (s && s->n == 0) {
        free(s);
        s = NULL;
    }
    return s;
}

static inline long sites_pages_of(const struct sites *s, const char *site)
{
    for (int i = 0; i < s->n; i++)
        if (s->site[i] && strcmp(s->site[i], site) == 0)
            return s->pages[i];
    return 0;
}

// Print the `top` sites whose page count grew most from `before` to `after`
// ("# pages grew: +N pages (M now) at SITE"), then the `top` that fell most
// ("# pages fell: ..."): a leak shows among the first, and a run that ends
// below its start says with the second what it no longer holds.
static inline void sites_print_change(const struct sites *before, const struct sites *after,
                                      int top)
{
    if (!before || !after)
        return;
    int n = after->n + before->n;
    long *delta = calloc(n ? n : 1, sizeof *delta), *now = calloc(n ? n : 1, sizeof *now);
    const char **site = calloc(n ? n : 1, sizeof *site);
    if (!delta || !now || !site) {
        free(delta), free(now), free(site);
        return;
    }
    for (int i = 0; i < after->n; i++) { // every site now, against before
        site[i] = after->site[i] ? after->site[i] : "?";
        now[i] = after->pages[i];
        delta[i] = now[i] - sites_pages_of(before, site[i]);
    }
    for (int i = 0; i < before->n; i++) { // and the sites gone since
        const char *b = before->site[i] ? before->site[i] : "?";
        site[after->n + i] = b;
        delta[after->n + i] = sites_pages_of(after, b) ? 0 : -before->pages[i];
    }
    for (int sign = 1; sign >= -1; sign -= 2) {
        for (int k = 0; k < top; k++) {
            int best = -1;
            for (int i = 0; i < n; i++)
                if (delta[i] * sign > 0 && (best < 0 || delta[i] * sign > delta[best] * sign))
                    best = i;
            if (best < 0)
                break;
            printf("# pages %s: %+ld pages (%ld now) at %s\n", sign > 0 ? "grew" : "fell",
                   delta[best], now[best], site[best]);
            delta[best] = 0;
        }
    }
    free(delta), free(now), free(site);
}
