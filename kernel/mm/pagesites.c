// /proc/pagesites: the pages in use, summed by who allocated them (the boot
// word `pagesites`; page.c records the sites). Our extension, in the spirit of
// Linux's page_owner: a leak test that finds more pages in use after a run than
// before can say whose they are. One line per site, most pages first:
//
//   PAGES FUNCTION+0xOFF<-CALLER+0xOFF<-...
//
// Built at open from a walk of every page's metadata, without locks (a
// snapshot of a moving count); nothing is written for it when it is not read.
#include "file/procfs.h"
#include "lib/panic.h"
#include "mm/mm.h"

#define NSLOT 4096 // distinct sites kept; pages from more go to one "other" line

struct site_count {
    uintptr_t site[PAGE_SITE_FRAMES];
    uint64_t pages;
};

struct site_table {
    struct site_count *slot; // open addressing; pages == 0 is empty
    uint64_t other, total;
};

static uint64_t site_hash(const uintptr_t *site)
{
    uint64_t h = 0;
    for (int f = 0; f < PAGE_SITE_FRAMES; f++)
        h = (h ^ site[f]) * 0x9e3779b97f4a7c15UL;
    return h >> 32;
}

static void count_page(const uintptr_t *site, void *arg)
{
    struct site_table *t = arg;
    t->total++;
    for (uint64_t i = site_hash(site) % NSLOT, n = 0; n < NSLOT; i = (i + 1) % NSLOT, n++) {
        struct site_count *s = &t->slot[i];
        if (s->pages == 0)
            memcpy(s->site, site, sizeof s->site);
        if (memcmp(s->site, site, sizeof s->site) == 0) {
            s->pages++;
            return;
        }
    }
    t->other++;
}

// Shell sort, most pages first: no recursion, no allocation.
static void sort_by_pages(struct site_count *a, size_t n)
{
    for (size_t gap = n / 2; gap > 0; gap /= 2)
        for (size_t i = gap; i < n; i++)
            for (size_t j = i; j >= gap && a[j - gap].pages < a[j].pages; j -= gap) {
                struct site_count x = a[j];
                a[j] = a[j - gap];
                a[j - gap] = x;
            }
}

static void print_site(struct pbuf *b, const struct site_count *s)
{
    pb_printf(b, "%8lu ", s->pages);
    for (int f = 0; f < PAGE_SITE_FRAMES && s->site[f]; f++) {
        uintptr_t off;
        const char *name = symbol_lookup(s->site[f] - 1, &off);
        if (name)
            pb_printf(b, "%s%s+0x%lx", f ? "<-" : "", name, off);
        else
            pb_printf(b, "%s0x%lx", f ? "<-" : "", s->site[f]);
    }
    pb_printf(b, "\n");
}

void pagesites_text(struct pbuf *b)
{
    if (!page_sites_on()) {
        pb_printf(b, "# allocation sites are not kept: boot with the word pagesites\n");
        return;
    }
    struct site_table t = {.slot = kzalloc(NSLOT * sizeof(struct site_count))};
    if (!t.slot) {
        b->nomem = true;
        return;
    }
    page_sites_each(count_page, &t);
    size_t n = 0;
    for (size_t i = 0; i < NSLOT; i++)
        if (t.slot[i].pages)
            t.slot[n++] = t.slot[i];
    sort_by_pages(t.slot, n);
    pb_printf(b, "# %lu pages in use, by allocation site (%zu sites)\n", t.total, n);
    for (size_t i = 0; i < n; i++)
        print_site(b, &t.slot[i]);
    if (t.other)
        pb_printf(b, "%8lu (other sites)\n", t.other);
    kfree(t.slot);
}
