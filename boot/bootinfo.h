// The hand-off from the UEFI loader (boot/loader.c) to the kernel (kernel/x86/entry.S).
// Shared by both sides: plain fixed-width types only, no pointers (the loader runs
// identity-mapped, the kernel in the higher half), so every address here is physical.
#pragma once
#include <stdint.h>

#define BOOTINFO_MAGIC 0x6f666e69746f6f62ULL  // "bootinfo"

// Virtual layout the loader sets up before jumping to the kernel:
//  - identity map of physical [0, max) so the loader survives the CR3 switch;
//  - the same physical memory at DIRECTMAP_BASE (the kernel's direct map);
//  - the kernel image at KERNEL_VBASE, backed by the physical pages at kernel_phys.
// The kernel replaces these page tables with its own early in boot.
#define DIRECTMAP_BASE 0xffff800000000000ULL
#define KERNEL_VBASE 0xffffffff80000000ULL

// Memory-map entry types, translated from UEFI's so the kernel needs no EFI headers.
enum {
    BOOTMEM_USABLE = 1,   // free for the kernel once it has left the loader's page tables
    BOOTMEM_LOADER = 2,   // kernel image, ELF file, initrd, boot info, loader page tables
    BOOTMEM_ACPI = 3,     // ACPI tables (reclaimable after parsing)
    BOOTMEM_NVS = 4,      // ACPI NVS: never touch
    BOOTMEM_MMIO = 5,     // device memory
    BOOTMEM_RESERVED = 6, // firmware runtime, unusable, unknown
};

struct bootmem {
    uint64_t base;   // physical, page aligned
    uint64_t npages; // 4 KiB pages
    uint32_t type;   // BOOTMEM_*
    uint32_t pad;
};

struct bootfb {
    uint64_t base;   // physical address of the frame buffer, 0 if none
    uint64_t size;
    uint32_t width, height;
    uint32_t pitch;  // pixels per scan line
    uint32_t format; // EFI_GRAPHICS_PIXEL_FORMAT
};

#define BOOTINFO_CMDLINE_MAX 1024

struct bootinfo {
    uint64_t magic;
    uint64_t kernel_phys;     // physical base of the kernel image (KERNEL_VBASE maps here)
    uint64_t kernel_size;     // bytes, page rounded, including .bss
    uint64_t kernel_elf;      // physical address of the whole kernel ELF file (for symbols)
    uint64_t kernel_elf_size;
    uint64_t initrd;          // physical address of the cpio newc archive, 0 if none
    uint64_t initrd_size;
    uint64_t rsdp;            // physical address of the ACPI 2.0+ RSDP, 0 if none
    uint64_t trampoline;      // physical address of a free 4 KiB page below 1 MiB (AP start-up)
    uint64_t mmap;            // physical address of struct bootmem[mmap_count]
    uint64_t mmap_count;
    struct bootfb fb;
    char cmdline[BOOTINFO_CMDLINE_MAX]; // NUL-terminated
};
