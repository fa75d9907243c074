// The kernel's page tables: a direct map of RAM (2 MiB pages, no execute), the
// kernel image with per-section permissions (text read-only, nothing else
// executable), and uncached mappings of device registers. Built once by the boot
// CPU; every CPU loads the same PML4, and user address spaces will share its upper
// half.
#include "bootinfo.h"
#include "mm/mm.h"
#include "sync/spinlock.h"
#include "uapi/errno.h"
#include "x86/x86.h"

pte_t *kernel_pml4;

extern char _kernel_start[], _etext[], _erodata[], _kernel_end[];
static uintptr_t kernel_phys;

// Page-table entry for va at the given level (0 = 4 KiB PTE, 1 = 2 MiB PDE),
// allocating intermediate tables as needed. NULL if out of memory.
static pte_t *walk(pte_t *pml4, uintptr_t va, int level)
{
    pte_t *table = pml4;
    for (int l = 3; l > level; l--) {
        pte_t *e = &table[PX(l, va)];
        if (!(*e & PTE_P)) {
            pte_t *next = page_alloc_zeroed();
            if (!next)
                return NULL;
            *e = V2P(next) | PTE_P | PTE_W;
        }
        table = P2V(PTE_ADDR(*e));
    }
    return &table[PX(level, va)];
}

static void map_huge(uintptr_t va, uintptr_t pa, size_t len, uint64_t perm)
{
    for (size_t off = 0; off < len; off += HUGEPGSIZE) {
        pte_t *e = walk(kernel_pml4, va + off, 1);
        if (!e)
            panic("kvm: out of memory for page tables");
        *e = (pa + off) | perm | PTE_P | PTE_PS;
    }
}

static void map_pages(uintptr_t va, uintptr_t pa, size_t len, uint64_t perm)
{
    for (size_t off = 0; off < len; off += PGSIZE) {
        pte_t *e = walk(kernel_pml4, va + off, 0);
        if (!e)
            panic("kvm: out of memory for page tables");
        *e = (pa + off) | perm | PTE_P;
    }
}

// Direct-map every range the firmware reports as memory (not MMIO), rounded out
// to 2 MiB pages.
static void map_direct(const struct bootinfo *bi)
{
    const struct bootmem *m = P2V(bi->mmap);
    for (uint64_t i = 0; i < bi->mmap_count; i++) {
        if (m[i].type == BOOTMEM_MMIO)
            continue;
        uintptr_t start = m[i].base & ~(HUGEPGSIZE - 1);
        uintptr_t end = ROUNDUP(m[i].base + m[i].npages * PGSIZE, HUGEPGSIZE);
        map_huge(DIRECTMAP_BASE + start, start, end - start, PTE_W | PTE_NX | PTE_G);
    }
}

static void map_kernel(void)
{
    uintptr_t text = (uintptr_t)_kernel_start, rodata = (uintptr_t)_etext;
    uintptr_t data = (uintptr_t)_erodata, end = PGROUNDUP((uintptr_t)_kernel_end);
    uintptr_t pa = kernel_phys;
    map_pages(text, pa, rodata - text, PTE_G);
    map_pages(rodata, pa + (rodata - text), data - rodata, PTE_NX | PTE_G);
    map_pages(data, pa + (data - text), end - data, PTE_W | PTE_NX | PTE_G);
}

void kvm_load(void)
{
    wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_NXE);
    write_cr0(read_cr0() | CR0_WP); // the kernel honours read-only pages too
    write_cr4(read_cr4() | CR4_PGE);
    write_cr3(V2P(kernel_pml4));
}

void kvm_init(const struct bootinfo *bi)
{
    kernel_phys = bi->kernel_phys;
    kernel_pml4 = page_alloc_zeroed();
    if (!kernel_pml4)
        panic("kvm: no memory");
    map_direct(bi);
    map_kernel();
    kvm_load();
}

// Device registers get their own uncached window, never the write-back direct
// map: the two would alias one physical range with different memory types.
static struct spinlock mmio_lock = SPINLOCK_INIT("mmio");
static uintptr_t mmio_next = MMIO_BASE;

void *mmio_map(uintptr_t pa, size_t len)
{
    uintptr_t base = PGROUNDDOWN(pa);
    size_t size = PGROUNDUP(pa + len) - base;
    spin_lock(&mmio_lock);
    uintptr_t va = mmio_next;
    mmio_next += size + PGSIZE; // a guard page between windows
    map_pages(va, base, size, PTE_W | PTE_PCD | PTE_PWT | PTE_NX | PTE_G);
    spin_unlock(&mmio_lock);
    return (void *)(va + (pa - base));
}

// Late kernel mappings (kernel stacks): 4 KiB pages, failing with -ENOMEM instead
// of panicking. The lock serialises page-table allocation in the shared tables.
static struct spinlock kvm_lock = SPINLOCK_INIT("kvm");

int kvm_map(uintptr_t va, uintptr_t pa, size_t len, uint64_t perm)
{
    spin_lock(&kvm_lock);
    for (size_t off = 0; off < len; off += PGSIZE) {
        pte_t *e = walk(kernel_pml4, va + off, 0);
        if (!e) {
            spin_unlock(&kvm_lock);
            return -ENOMEM;
        }
        *e = (pa + off) | perm | PTE_P;
    }
    spin_unlock(&kvm_lock);
    return 0;
}

// Remove one 4 KiB kernel mapping made by kvm_map; returns its physical address.
// The caller shoots down the TLBs if the mapping may have been used.
uintptr_t kvm_unmap_page(uintptr_t va)
{
    spin_lock(&kvm_lock);
    pte_t *e = walk(kernel_pml4, va, 0);
    uintptr_t pa = e ? PTE_ADDR(*e) : 0;
    if (e)
        *e = 0;
    spin_unlock(&kvm_lock);
    return pa;
}
