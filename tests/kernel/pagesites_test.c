// Tests for allocation sites (kernel/mm/page.c, kernel/mm/pagesites.c): while
// `pagesites` is on, every page in use names who allocated it, and
// /proc/pagesites sums the pages by site; freeing a page takes it off.
#include "file/procfs.h"
#include "ktest/ktest.h"
#include "mm/mm.h"

bool page_sites_set(bool on); // page.c, for tests

enum { SINGLES = 3, RUN = 4 };

// The allocations the report must put on this function (not inlined: it is
// the site).
static __attribute__((noinline)) void pagesites_test_alloc(void **single, void **run)
{
    for (int i = 0; i < SINGLES; i++)
        single[i] = page_alloc();
    *run = page_alloc_contig(RUN);
}

// Pages the report puts on sites whose first frame is in `fn` (a line per
// call in it), or -1 if no line names it.
static long pages_of(const char *fn)
{
    struct pbuf b = {0};
    pagesites_text(&b);
    long pages = -1;
    size_t n = strlen(fn);
    for (size_t i = 0; !b.nomem && i < b.len; i++) {
        // A line: spaces, the count, a space, the first frame "fn+0x...".
        size_t j = i;
        while (j < b.len && b.buf[j] == ' ')
            j++;
        long v = 0;
        bool digits = false;
        for (; j < b.len && b.buf[j] >= '0' && b.buf[j] <= '9'; j++, digits = true)
            v = v * 10 + (b.buf[j] - '0');
        if (digits && j + 1 + n < b.len && b.buf[j] == ' ' &&
            memcmp(b.buf + j + 1, fn, n) == 0 && b.buf[j + 1 + n] == '+')
            pages = (pages < 0 ? 0 : pages) + v;
        while (i < b.len && b.buf[i] != '\n')
            i++;
    }
    kfree(b.buf);
    return pages;
}

KTEST(pagesites_name_the_allocating_function)
{
    bool was = page_sites_set(true);
    void *single[SINGLES], *run;
    pagesites_test_alloc(single, &run);
    bool got = run != NULL;
    for (int i = 0; i < SINGLES; i++)
        got &= single[i] != NULL;
    long in_use = got ? pages_of("pagesites_test_alloc") : -1;
    for (int i = 0; i < SINGLES; i++)
        if (single[i])
            page_free(single[i]);
    if (run)
        page_free_contig(run, RUN);
    long after = pages_of("pagesites_test_alloc");
    page_sites_set(was);
    KREQUIRE(got);
    KCHECK_EQ(in_use, SINGLES + RUN);
    KCHECK_EQ(after, -1);
}
