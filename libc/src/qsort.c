// qsort: introsort (quicksort with median-of-three, insertion sort for short
// ranges, heapsort when recursion gets too deep), so O(n log n) worst case.
#include <stdlib.h>
#include <string.h>

struct sorter {
    size_t size;
    int (*cmp)(const void *, const void *, void *);
    void *arg;
};

static inline void swap(char *a, char *b, size_t size)
{
    while (size >= 8) {
        unsigned long t;
        memcpy(&t, a, 8);
        memcpy(a, b, 8);
        memcpy(b, &t, 8);
        a += 8, b += 8, size -= 8;
    }
    while (size--) {
        char t = *a;
        *a++ = *b;
        *b++ = t;
    }
}

#define AT(i) (base + (i) * s->size)
#define LESS(x, y) (s->cmp((x), (y), s->arg) < 0)

static void insertion(char *base, size_t n, struct sorter *s)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && LESS(AT(j), AT(j - 1)); j--)
            swap(AT(j), AT(j - 1), s->size);
}

static void sift_down(char *base, size_t root, size_t n, struct sorter *s)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && LESS(AT(child), AT(child + 1)))
            child++;
        if (!LESS(AT(root), AT(child)))
            return;
        swap(AT(root), AT(child), s->size);
        root = child;
    }
}

static void heapsort_range(char *base, size_t n, struct sorter *s)
{
    for (size_t i = n / 2; i > 0; i--)
        sift_down(base, i - 1, n, s);
    for (size_t end = n - 1; end > 0; end--) {
        swap(AT(0), AT(end), s->size);
        sift_down(base, 0, end, s);
    }
}

static void introsort(char *base, size_t n, int depth, struct sorter *s)
{
    while (n > 12) {
        if (depth-- == 0) {
            heapsort_range(base, n, s);
            return;
        }
        // Median of first, middle, last moves to position 0 as the pivot.
        char *a = AT(0), *m = AT(n / 2), *z = AT(n - 1);
        if (LESS(m, a))
            swap(m, a, s->size);
        if (LESS(z, m)) {
            swap(z, m, s->size);
            if (LESS(m, a))
                swap(m, a, s->size);
        }
        swap(a, m, s->size);
        // Hoare partition around the pivot at 0.
        size_t i = 0, j = n;
        for (;;) {
            do
                i++;
            while (i < n && LESS(AT(i), AT(0)));
            do
                j--;
            while (LESS(AT(0), AT(j)));
            if (i >= j)
                break;
            swap(AT(i), AT(j), s->size);
        }
        swap(AT(0), AT(j), s->size);
        // Recurse into the smaller side; loop on the larger.
        if (j < n - j - 1) {
            introsort(base, j, depth, s);
            base = AT(j + 1);
            n = n - j - 1;
        } else {
            introsort(AT(j + 1), n - j - 1, depth, s);
            n = j;
        }
    }
    insertion(base, n, s);
}

void qsort_r(void *base, size_t n, size_t size,
             int (*cmp)(const void *, const void *, void *), void *arg)
{
    if (n < 2 || size == 0)
        return;
    struct sorter s = {size, cmp, arg};
    int depth = 2 * (64 - __builtin_clzl(n));
    introsort(base, n, depth, &s);
}

static int call_plain(const void *a, const void *b, void *fn)
{
    return ((int (*)(const void *, const void *))fn)(a, b);
}

void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    qsort_r(base, n, size, call_plain, (void *)cmp);
}

void *bsearch(const void *key, const void *base, size_t n, size_t size,
              int (*cmp)(const void *, const void *))
{
    const char *lo = base;
    while (n) {
        const char *mid = lo + (n / 2) * size;
        int c = cmp(key, mid);
        if (c == 0)
            return (void *)mid;
        if (c > 0) {
            lo = mid + size;
            n -= n / 2 + 1;
        } else {
            n /= 2;
        }
    }
    return NULL;
}
