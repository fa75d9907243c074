// User address spaces (uvm.c): a page table per process sharing the kernel's upper
// half, a sorted list of anonymous memory regions, pages filled with zeros on first
// touch. The interface is narrow on purpose so that a scalable design (RadixVM)
// can replace the implementation later.
#pragma once
#include "cpumask.h"
#include "kernel.h"
#include "list.h"
#include "mmu.h"
#include "spinlock.h"

#define USER_MIN 0x10000UL             // nothing is mapped below (NULL dereferences fault)
#define USER_END 0x0000800000000000UL  // first non-canonical address: the end of user space
#define USER_TOP 0x00007ffffffff000UL  // highest user mapping ends here (as on Linux)
#define USER_STACK_SIZE (8UL << 20)
#define USER_MMAP_TOP (USER_TOP - USER_STACK_SIZE - (1UL << 30)) // mmap grows down from here
#define PIE_BASE 0x0000555555554000UL  // where static-pie executables are loaded

// Linux PROT_* bits.
#define VM_READ 1
#define VM_WRITE 2
#define VM_EXEC 4

struct vmregion {
    uintptr_t start, end; // page aligned, end exclusive
    int prot;
    struct list link;
};

struct vmspace {
    pte_t *pml4;
    struct spinlock lock;   // regions, page tables, brk
    struct list regions;    // sorted by start, non-overlapping
    uintptr_t brk_start, brk;
    cpumask_t cpus;         // CPUs that may hold its translations (shootdown targets)
    size_t pages;           // resident user pages (tests)
    int refs;               // processes using it (vfork and CLONE_VM share it)
};

void uvm_init(void);  // once, before any address space: every upper-half PML4 entry
struct vmspace *vmspace_new(void);     // NULL if out of memory
void vmspace_free(struct vmspace *vs); // must not be loaded on any CPU
void vmspace_hold(struct vmspace *vs);
void vmspace_put(struct vmspace *vs);  // frees at the last reference (vmspace_free)
// fork: a new address space with the same regions and a private copy of every
// resident page. Copied eagerly for now; the per-page step (copy_page) is where
// copy-on-write will share pages instead. NULL if out of memory.
struct vmspace *vmspace_copy(struct vmspace *src);
void uvm_switch(struct vmspace *prev, struct vmspace *next); // NULL = kernel only

// Map anonymous memory. With fixed, exactly at addr (replacing what was there);
// otherwise at addr if it is free, else wherever fits. Returns the address or
// -errno.
long uvm_map(struct vmspace *vs, uintptr_t addr, size_t len, int prot, bool fixed);
int uvm_unmap(struct vmspace *vs, uintptr_t addr, size_t len);
int uvm_protect(struct vmspace *vs, uintptr_t addr, size_t len, int prot);
long uvm_brk(struct vmspace *vs, uintptr_t newbrk);
// Resolve a fault at va (error code bits as the CPU reports them). 0 if the
// access is now possible, -EFAULT if it is not allowed.
int uvm_fault(struct vmspace *vs, uintptr_t va, uint64_t err);
// Write into vs through the direct map, regardless of protection (loaders).
int uvm_write(struct vmspace *vs, uintptr_t va, const void *src, size_t n);
int uvm_read(struct vmspace *vs, uintptr_t va, void *dst, size_t n); // tests
// Is [va, va+len) inside one region? (tests, mmap checks)
bool uvm_mapped(struct vmspace *vs, uintptr_t va, int *prot);

// vm.c: late kernel mappings in the shared upper half (kernel stacks).
int kvm_map(uintptr_t va, uintptr_t pa, size_t len, uint64_t perm); // 4 KiB pages; -ENOMEM
uintptr_t kvm_unmap_page(uintptr_t va); // returns the physical address it mapped
