// qsort and bsearch: random, sorted, reversed and constant inputs of several
// sizes and element widths.
#include <stdlib.h>
#include <string.h>
#include "tap.h"

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

struct rec {
    int key;
    char pad[20];
};
static int cmp_rec(const void *a, const void *b)
{
    return cmp_int(&((const struct rec *)a)->key, &((const struct rec *)b)->key);
}

static unsigned long rng = 12345;
static int next(void)
{
    rng = rng * 6364136223846793005UL + 1442695040888963407UL;
    return (int)(rng >> 33);
}

static int sorted(const int *a, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (a[i - 1] > a[i])
            return 0;
    return 1;
}

int main(void)
{
    static int a[100000];
    size_t sizes[] = {0, 1, 2, 3, 10, 13, 100, 1000, 100000};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        long sum = 0, sum2 = 0;
        for (size_t i = 0; i < n; i++)
            sum += a[i] = next() % 1000;
        qsort(a, n, sizeof *a, cmp_int);
        for (size_t i = 0; i < n; i++)
            sum2 += a[i];
        check(sorted(a, n) && sum == sum2, "random %zu ints sorted, same multiset", n);
    }
    for (size_t i = 0; i < 100000; i++)
        a[i] = (int)(100000 - i);
    qsort(a, 100000, sizeof *a, cmp_int);
    check(sorted(a, 100000) && a[0] == 1, "reversed input");
    qsort(a, 100000, sizeof *a, cmp_int);
    check(sorted(a, 100000), "already sorted input");
    for (size_t i = 0; i < 100000; i++)
        a[i] = 7;
    qsort(a, 100000, sizeof *a, cmp_int);
    check(a[0] == 7 && a[99999] == 7, "constant input");
    // Organ pipe: a quicksort killer for naive pivots.
    for (size_t i = 0; i < 100000; i++)
        a[i] = (int)(i < 50000 ? i : 100000 - i);
    qsort(a, 100000, sizeof *a, cmp_int);
    check(sorted(a, 100000), "organ-pipe input");

    static struct rec r[5000];
    for (int i = 0; i < 5000; i++) {
        r[i].key = next() % 100000;
        memset(r[i].pad, r[i].key & 0xff, sizeof r[i].pad);
    }
    qsort(r, 5000, sizeof *r, cmp_rec);
    int ok = 1;
    for (int i = 0; i < 5000; i++)
        ok &= (i == 0 || r[i - 1].key <= r[i].key) && r[i].pad[19] == (char)(r[i].key & 0xff);
    check(ok, "24-byte records move whole");

    for (int i = 0; i < 1000; i++)
        a[i] = 2 * i;
    int key = 500, miss = 501;
    int *hit = bsearch(&key, a, 1000, sizeof *a, cmp_int);
    check(hit && *hit == 500 && bsearch(&miss, a, 1000, sizeof *a, cmp_int) == NULL, "bsearch");
    key = 0;
    int k2 = 1998;
    check(bsearch(&key, a, 1000, sizeof *a, cmp_int) == a &&
          bsearch(&k2, a, 1000, sizeof *a, cmp_int) == a + 999, "bsearch at both ends");
    return tap_done();
}
