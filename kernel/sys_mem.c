// Memory system calls: brk, mmap (anonymous private only), munmap, mprotect.
// Thin argument checks around uvm.c.
#include "proc.h"
#include "sched.h"
#include "syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "uvm.h"

static struct vmspace *cur_vm(void) { return thread_current()->vm; }

long sys_brk(uint64_t addr) { return uvm_brk(cur_vm(), addr); }

#define MAP_KNOWN (MAP_SHARED | MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS | MAP_NORESERVE | \
                   MAP_FIXED_NOREPLACE)

long sys_mmap(uint64_t addr, size_t len, int prot, int flags, int fd, long off)
{
    int type = flags & (MAP_SHARED | MAP_PRIVATE);
    if (len == 0 || (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC)) ||
        (type != MAP_PRIVATE && type != MAP_SHARED) || (flags & ~MAP_KNOWN))
        return -EINVAL;
    if (!(flags & MAP_ANONYMOUS))
        return -ENODEV; // no files yet
    if (type == MAP_SHARED)
        return -EINVAL; // shared anonymous memory needs fork
    (void)fd;
    if (off % PGSIZE)
        return -EINVAL;
    if (len > USER_TOP)
        return -ENOMEM;
    bool fixed = flags & MAP_FIXED;
    if (flags & MAP_FIXED_NOREPLACE) {
        if (addr % PGSIZE)
            return -EINVAL;
        // Linux fails if anything is mapped there already.
        for (uintptr_t a = addr; a < addr + PGROUNDUP(len); a += PGSIZE)
            if (uvm_mapped(cur_vm(), a, NULL))
                return -EEXIST;
        fixed = true;
    }
    if (fixed && addr % PGSIZE)
        return -EINVAL;
    if (!fixed)
        addr = PGROUNDDOWN(addr);
    return uvm_map(cur_vm(), addr, len, prot, fixed);
}

long sys_munmap(uint64_t addr, size_t len) { return uvm_unmap(cur_vm(), addr, len); }

long sys_mprotect(uint64_t addr, size_t len, int prot) { return uvm_protect(cur_vm(), addr, len, prot); }
