// Page-table layout and the kernel's virtual memory map.
#pragma once
#include <stdint.h>
#include "bootinfo.h"

#define PGSIZE 4096UL
#define PGSHIFT 12
#define HUGEPGSIZE (2UL << 20)
#define PGROUNDUP(a) (((uintptr_t)(a) + PGSIZE - 1) & ~(PGSIZE - 1))
#define PGROUNDDOWN(a) ((uintptr_t)(a) & ~(PGSIZE - 1))

#define PTE_P (1UL << 0)
#define PTE_W (1UL << 1)
#define PTE_U (1UL << 2)
#define PTE_PWT (1UL << 3)
#define PTE_PCD (1UL << 4)
#define PTE_A (1UL << 5)
#define PTE_D (1UL << 6)
#define PTE_PS (1UL << 7)
#define PTE_G (1UL << 8)
#define PTE_NX (1UL << 63)
#define PTE_ADDR(pte) ((pte) & 0x000ffffffffff000UL)

#define PX(level, va) (((uintptr_t)(va) >> (12 + 9 * (level))) & 511)

// Kernel virtual layout (upper half):
//   DIRECTMAP_BASE  all physical memory, 2 MiB pages, write-back, NX
//   MMIO_BASE       device registers, uncached, NX
//   KERNEL_VBASE    the kernel image: text RX, rodata R, data/bss RW
#define MMIO_BASE 0xffffc00000000000ULL

#define P2V(pa) ((void *)((uintptr_t)(pa) + DIRECTMAP_BASE))
#define V2P(va) ((uintptr_t)(va) - DIRECTMAP_BASE)

typedef uint64_t pte_t;
