// malloc, free, calloc, realloc, aligned allocation; a randomized stress with
// content checks, single-threaded and across threads (blocks freed by other
// threads than the one that allocated them).
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"

static void basics(void)
{
    char *p = malloc(0);
    check(p != NULL, "malloc(0) returns a unique pointer");
    free(p);
    free(NULL);
    int aligned = 1;
    for (size_t n = 1; n < 70000; n = n * 3 / 2 + 1) {
        void *q = malloc(n);
        aligned &= q && ((uintptr_t)q & 15) == 0 && malloc_usable_size(q) >= n;
        memset(q, 0xab, n);
        free(q);
    }
    check(aligned, "malloc results are 16-byte aligned and usable up to their size");
    int *z = calloc(1000, sizeof *z);
    int zero = z != NULL;
    for (int i = 0; z && i < 1000; i++)
        zero &= z[i] == 0;
    check(zero, "calloc zeroes");
    // Reuse: a freed block comes back dirty, calloc must still zero it.
    char *d = malloc(4000);
    memset(d, 0xff, 4000);
    free(d);
    char *c = calloc(1, 4000);
    int clean = 1;
    for (int i = 0; i < 4000; i++)
        clean &= c[i] == 0;
    check(clean, "calloc zeroes a recycled block");
    free(c);
    free(z);
    volatile size_t huge = SIZE_MAX / 2;
    errno = 0;
    check(calloc(huge, 4) == NULL && errno == ENOMEM, "calloc overflow: ENOMEM");
    errno = 0;
    check(malloc(huge * 2) == NULL && errno == ENOMEM, "huge malloc: ENOMEM");

    char *r = malloc(10);
    strcpy(r, "123456789");
    r = realloc(r, 100000);
    check(r && strcmp(r, "123456789") == 0, "realloc grows, keeping contents");
    r = realloc(r, 5);
    check(r && memcmp(r, "12345", 5) == 0, "realloc shrinks, keeping the prefix");
    free(r);
    check(realloc(NULL, 7) != NULL, "realloc(NULL) allocates");

    int al = 1;
    for (size_t a = 16; a <= 65536; a *= 2) {
        void *q = aligned_alloc(a, 100);
        al &= q && ((uintptr_t)q & (a - 1)) == 0;
        memset(q, 1, 100);
        free(q);
    }
    check(al, "aligned_alloc honours alignments 16..65536");
    void *pm = NULL;
    check(posix_memalign(&pm, 256, 1000) == 0 && ((uintptr_t)pm & 255) == 0, "posix_memalign");
    free(pm);
    check(posix_memalign(&pm, 3, 10) == EINVAL, "posix_memalign rejects a bad alignment");
}

// Random allocations and frees with a pattern written into each block and
// checked before it is freed.
struct slot {
    unsigned char *p;
    size_t n;
    unsigned char tag;
};

static int stress(unsigned long seed, int rounds, struct slot *slots, int nslots)
{
    int bad = 0;
    for (int i = 0; i < rounds; i++) {
        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
        struct slot *s = &slots[(seed >> 20) % (unsigned)nslots];
        if (s->p) {
            for (size_t k = 0; k < s->n; k += 61)
                bad += s->p[k] != s->tag;
            free(s->p);
            s->p = NULL;
            continue;
        }
        size_t r = (seed >> 40) % 1000;
        s->n = r < 900 ? r % 256 + 1 : r < 990 ? r * 40 : r * 200;
        s->p = malloc(s->n);
        s->tag = (unsigned char)(seed >> 8);
        if (!s->p)
            return -1;
        memset(s->p, s->tag, s->n);
    }
    return bad;
}

// Fresh blocks of two threads never share a page (each carves from a chunk of
// its own). 3000 bytes: a batch of them does not end on a page boundary.
#define FRESH 10
#define FRESH_SIZE 3000
static char *fresh[2][FRESH];

static void *take_fresh(void *arg)
{
    char **out = arg;
    for (int i = 0; i < FRESH; i++)
        out[i] = malloc(FRESH_SIZE);
    return NULL;
}

static int pages_overlap(char *a, char *b)
{
    uintptr_t pg = 4096, a0 = ((uintptr_t)a - 16) / pg, a1 = ((uintptr_t)a + FRESH_SIZE - 1) / pg;
    uintptr_t b0 = ((uintptr_t)b - 16) / pg, b1 = ((uintptr_t)b + FRESH_SIZE - 1) / pg;
    return a0 <= b1 && b0 <= a1;
}

static void fresh_blocks_per_thread(void)
{
    take_fresh(fresh[0]);
    pthread_t t;
    pthread_create(&t, NULL, take_fresh, fresh[1]);
    pthread_join(t, NULL);
    int ok = 1, shared = 0;
    for (int i = 0; i < FRESH; i++) {
        ok &= fresh[0][i] && fresh[1][i];
        for (int j = 0; ok && j < FRESH; j++)
            shared += pages_overlap(fresh[0][i], fresh[1][j]);
    }
    check(ok && shared == 0, "two threads' fresh blocks share no page (%d pairs do)", shared);
    for (int i = 0; i < FRESH; i++) {
        free(fresh[0][i]);
        free(fresh[1][i]);
    }
}

#define NSLOTS 512
static struct slot shared[4][NSLOTS];

static void *worker(void *arg)
{
    long id = (long)arg;
    long bad = stress(1000 + (unsigned long)id, 100000, shared[id], NSLOTS);
    return (void *)bad;
}

// Frees blocks another thread allocated.
static void *freer(void *arg)
{
    struct slot *slots = arg;
    for (int i = 0; i < NSLOTS; i++) {
        free(slots[i].p);
        slots[i].p = NULL;
    }
    return NULL;
}

int main(void)
{
    fresh_blocks_per_thread(); // first: nothing of that size was freed yet
    basics();
    static struct slot slots[1024];
    int bad = stress(42, 200000, slots, 1024);
    check(bad == 0, "single-thread stress: 200000 operations, contents intact (%d bad)", bad);
    for (int i = 0; i < 1024; i++) {
        free(slots[i].p);
        slots[i].p = NULL;
    }

    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    long total = 0;
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (long)r;
    }
    check(total == 0, "4 threads x 100000 operations, contents intact (%ld bad)", total);
    // Cross-thread frees: thread i frees what thread (i+1)%4 allocated.
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, freer, shared[(i + 1) % 4]);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    bad = stress(7, 50000, slots, 1024);
    check(bad == 0, "allocation after cross-thread frees (%d bad)", bad);
    return tap_done();
}
