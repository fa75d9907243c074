// Physical pages, kernel heap and the kernel's page tables.
#pragma once
#include "kernel.h"
#include "mm/mmu.h"

struct bootinfo;

// page.c: physical page allocator. Pages are returned as direct-map addresses.
// Each CPU keeps a cache of free pages in front of the shared pools, so the common
// alloc/free on one CPU touches only that CPU's cache lines. Exhaustion returns NULL.
void page_init(const struct bootinfo *bi);
void *page_alloc(void);                 // one page, contents undefined
void *page_alloc_zeroed(void);
void page_free(void *va);
// The same, at the cold end of this CPU's cache (its spill), so that the CPU's
// next allocations take pages it used itself first: for a page other CPUs used
// last (a copy-on-write page whose last sharer's reference goes at this CPU's
// tick).
void page_free_cold(void *va);
// Physically contiguous run of at most 1024 pages, aligned to its size rounded
// up to a power of two.
void *page_alloc_contig(size_t npages);
void page_free_contig(void *va, size_t npages);
size_t page_count_free(void);           // exact: shared pools + every CPU cache
size_t page_count_total(void);
void page_drain_cpu_cache(void);        // return this CPU's cached pages to the pools
void page_drain_all_caches(void);       // every CPU's (tests, statistics)
// Out of pages: wait for an epoch's frees, if the caller may sleep and frees
// are pending, and say whether to try again; *until (0 at first) bounds the
// tries to a few epochs. For callers whose allocation ran where it could
// not wait (a lock held, an epoch section): page_wait_if_short() does the same
// only if an allocation of this thread found no page since
// page_shortage_clear() (an ENOMEM for want of pages, not of address space).
bool page_wait_for_frees(uint64_t *until);
void page_shortage_clear(void);
bool page_wait_if_short(uint64_t *until);
uint64_t page_stat_pool_locks(void);    // times any shared pool was locked (tests)
// One word per page for the owner of an allocated page (kmalloc's slab bookkeeping).
uintptr_t page_owner_get(const void *va);
// Allocation sites under the boot word `pagesites` (page.c, pagesites.c).
#define PAGE_SITE_FRAMES 5
bool page_sites_on(void);
void page_sites_each(void (*fn)(const uintptr_t *site, void *arg), void *arg);
struct pbuf;
void pagesites_text(struct pbuf *b);
void page_owner_set(void *va, uintptr_t owner);
// User pages (uvm_pageref.c) keep their count of extra references in the owner word
// (0 when unshared, as page_free expects it). Returns the old value.
intptr_t page_owner_add(void *va, intptr_t delta);
bool page_free_stamped(const void *va); // does the page carry page_free's stamp? (tests)

// kmalloc.c: small objects from per-CPU slab caches; large ones straight from pages.
void kmalloc_init(void);                 // reads the boot word `kpoison`
extern bool kmalloc_poison;             // [i] the boot word `kpoison`
// `kpoison`: also turns on checks of lifetimes (a load, for hot paths).
static inline bool kmalloc_poisoning(void) { return kmalloc_poison; }
#define KPOISON_BYTE 0x6b                // what a freed object holds under kpoison
void *kmalloc(size_t size);
void *kzalloc(size_t size);
void kfree(void *p);
void kmalloc_drain_cpu_cache(void);     // return this CPU's cached objects to their slabs
void kmalloc_drain_all(void);           // every CPU's (tests, statistics)
void drop_caches(void); // dropcaches.c: every cache of free objects and stacks back to the pages
uint64_t kmalloc_stat_class_locks(void); // times any shared class list was locked (tests)

// vm.c: the kernel's own address space.
extern pte_t *kernel_pml4;
void kvm_init(const struct bootinfo *bi); // build and load the final kernel page tables
void kvm_load(void);                      // load them on an AP
void *mmio_map(uintptr_t pa, size_t len); // uncached mapping of device registers
