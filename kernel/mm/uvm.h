// User address spaces (uvm.c and its pieces, uvm_*.c): RadixVM-style. A radix
// tree of per-page mapping descriptors is the truth; each CPU fills its own page
// table for an address space on fault, so the CPUs that may cache a page's
// translation are known exactly. Everything here commutes for disjoint address
// ranges (see the design at the top of uvm_internal.h).
#pragma once
#include "kernel.h"
#include "mm/mmu.h"
#include "sync/cpumask.h"
#include "sync/epoch.h"
#include "sync/spinlock.h"

#define USER_MIN 0x10000UL             // nothing is mapped below (NULL dereferences fault)
#define USER_END 0x0000800000000000UL  // first non-canonical address: the end of user space
#define USER_TOP 0x00007ffffffff000UL  // highest user mapping ends here (as on Linux)
#define USER_STACK_SIZE (8UL << 20)    // the stack's reserve, below USER_TOP (ustack.c)
#define USER_STACK_INIT (128UL << 10)  // what exec maps of it (as Linux's stack_expand)
#define USER_MMAP_TOP (USER_TOP - USER_STACK_SIZE - (1UL << 30)) // mmap grows down from here
#define PIE_BASE 0x0000555555554000UL  // where static-pie executables are loaded

// Linux PROT_* bits.
#define VM_READ 1
#define VM_WRITE 2
#define VM_EXEC 4

// uvm_map flags.
#define UVM_FIXED 1       // exactly at addr, replacing what is there
#define UVM_NOREPLACE 2   // exactly at addr, -EEXIST if anything is there
#define UVM_SHARED 4      // MAP_SHARED: fork shares the pages instead of copying them
#define UVM_POPULATE 8    // fill every page in now (MAP_POPULATE)
#define UVM_NOWRITE 16    // a shared file mapping whose fd cannot write: never writable
// Through a description open for writing (whose write access the caller holds
// for the call): each page holds write access to the file until it is unmapped
// (ETXTBSY, as Linux, where the mapping keeps the description open).
#define UVM_WRITER 32

struct vmcore;
struct vmnode;

struct vmspace {
    struct vmnode *root;           // radix tree of struct vpage (uvm_tree.c)
    // The CPUs that have a part (core[c] != NULL, or about to be): walks over
    // the parts follow it, so their cost is the CPUs that used the space, not
    // the CPUs online. Each CPU sets its own bit once, before its part appears.
    cpumask_t cores;
    struct vmcore *core[NCPU_MAX]; // per-CPU part: page table, placement hint, counts
    struct spinlock brk_lock;      // brk only
    uintptr_t brk_start, brk;
    uintptr_t stack;               // the stack's lowest page, 0 if none (ustack.c)
    int refs;                      // processes using it (vfork and CLONE_VM share it)
    // The executable (exec.c): a reference and deny-write (fs_deny_write) held
    // as long as this address space exists; fork copies them. NULL if none.
    struct inode *image;
    // The executable's absolute path as exec found it (kmalloc'ed; fork
    // copies it; NULL if unknown): what /proc/PID/exe reads.
    char *exe;
    int64_t truncated __cacheline_aligned; // resident pages truncate took (negative)
    // The struct itself is freed a grace period after the last reference went
    // (everything it held goes at once): vmspace_tryhold may look at refs.
    struct epoch_cb free_cb;
};

// What a fault that cannot be resolved should deliver (Linux siginfo fields).
struct fault_info {
    int signo;      // SIGSEGV or SIGBUS
    int code;       // SEGV_MAPERR, SEGV_ACCERR, BUS_ADRERR
    uintptr_t addr; // the faulting address
};
#define SEGV_MAPERR 1
#define SEGV_ACCERR 2
#define BUS_ADRERR 2

void uvm_init(void);  // once, before any address space: every upper-half PML4 entry
struct vmspace *vmspace_new(void);     // NULL if out of memory
// Copy-on-write copy (fork): private pages are shared read-only until either side
// writes; MAP_SHARED pages are shared. NULL if out of memory.
struct vmspace *vmspace_fork(struct vmspace *parent);
void vmspace_hold(struct vmspace *vs);
// A reference to vs unless its last one is gone (false then). vs may be one
// read from a process in an epoch read section: it stays readable until the
// section ends (/proc reads other processes' spaces this way).
bool vmspace_tryhold(struct vmspace *vs);
// Drop a reference; the last frees the space, which must not be loaded on any
// CPU then. The only way to let go of one, even one nobody else was given: a
// truncate may hold any space that has recorded a file mapping.
void vmspace_put(struct vmspace *vs);
void uvm_switch(struct vmspace *prev, struct vmspace *next); // NULL = kernel only

// Map anonymous memory. With UVM_FIXED, exactly at addr (replacing what was
// there); otherwise at addr if it is free, else wherever fits (per-CPU hint).
// Returns the address or -errno.
long uvm_map(struct vmspace *vs, uintptr_t addr, size_t len, int prot, int flags);
// Map pages [pgoff, pgoff + len/PGSIZE) of a regular file (ScaleFS inode; each
// page's descriptor holds an inode reference). UVM_SHARED: stores reach the file.
struct inode;
long uvm_map_file(struct vmspace *vs, uintptr_t addr, size_t len, int prot, int flags,
                  struct inode *ip, uint64_t pgoff);
// A truncate shrank ip: take its pages from page `from` on out of every address
// space that maps them (a later access gets SIGBUS, or a fresh page once the
// file grew again). Called after the new size is visible, and after a full
// barrier (mmap's record of the file is ordered against it the same way).
// Writes nothing if no address space has recorded a mapping of ip. False if out
// of memory left some space mapping such pages: the caller must then keep them.
bool uvm_truncate_file(struct inode *ip, uint64_t from);
int uvm_unmap(struct vmspace *vs, uintptr_t addr, size_t len);
// MADV_UNMAP_ASYNC: unmap without waiting for other CPUs' TLBs (uapi/ext.h).
int uvm_unmap_async(struct vmspace *vs, uintptr_t addr, size_t len);
int uvm_protect(struct vmspace *vs, uintptr_t addr, size_t len, int prot);
int uvm_dontneed(struct vmspace *vs, uintptr_t addr, size_t len); // MADV_DONTNEED
long uvm_brk(struct vmspace *vs, uintptr_t newbrk);
// Resolve a fault at va (error code bits as the CPU reports them) on the calling
// CPU. 0 if the access is now possible; -ENOMEM if it needs memory there is
// none of (the caller decides: uvm_fault.c); otherwise the signal to deliver,
// with the details in *fi if fi is not NULL.
int uvm_fault(struct vmspace *vs, uintptr_t va, uint64_t err, struct fault_info *fi);
// The stack (ustack.c). exec: map its top; 0 or -ENOMEM. uvm_fault: a fault on
// nothing at va; 1 if va is below the stack inside its reserve, and the
// stack now reaches down to it; 0 if not; -ENOMEM.
int ustack_map(struct vmspace *vs);
int ustack_grow(struct vmspace *vs, uintptr_t va);
// Write into vs through the direct map, regardless of protection (loaders).
int uvm_write(struct vmspace *vs, uintptr_t va, const void *src, size_t n);
int uvm_read(struct vmspace *vs, uintptr_t va, void *dst, size_t n); // tests
// Is the page at va mapped? (tests, mmap checks)
bool uvm_mapped(struct vmspace *vs, uintptr_t va, int *prot);
size_t uvm_resident(struct vmspace *vs);  // pages present: a sum over the CPUs' counts
// A run of mapped pages alike: protection, MAP_SHARED, backing file with
// consecutive offsets (ino 0: anonymous).
struct uvm_region {
    uintptr_t start, end;
    int prot;        // VM_READ | VM_WRITE | VM_EXEC
    bool shared;
    bool image;      // its file is vs->image, the executable
    uint64_t ino;    // the file's inode number, 0 for anonymous memory
    uint64_t offset; // in the file, bytes
};
// fn(region, arg) for each such run, in address order, from inside an epoch
// read section (fn must not sleep). A snapshot as racy as Linux's: the space
// may change meanwhile.
void uvm_regions(struct vmspace *vs, void (*fn)(const struct uvm_region *r, void *arg), void *arg);
uintptr_t uvm_page_pa(struct vmspace *vs, uintptr_t va); // 0 if none (tests)
// Epoch tick (interrupts off): drop the page references COW breaks deferred, and
// give back tree leaves munmap emptied (idle: the CPU is about to stop
// ticking), leave fmap_cpus a second after the last file mapping here went.
void uvm_tick(bool idle);
bool fmap_may_stop_tick(void); // tickless idle: false until this CPU left fmap_cpus (uvm_file.c)

// vm.c: late kernel mappings in the shared upper half (kernel stacks).
int kvm_map(uintptr_t va, uintptr_t pa, size_t len, uint64_t perm); // 4 KiB pages; -ENOMEM
uintptr_t kvm_unmap_page(uintptr_t va); // returns the physical address it mapped
