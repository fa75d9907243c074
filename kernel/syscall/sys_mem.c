// Memory system calls: brk, mmap (anonymous or file-backed, private or shared),
// munmap, mprotect, madvise. Argument checks around kernel/mm/uvm_map.c, with Linux's errnos.
#include "file/fdtable.h"
#include "file/file.h"
#include "fs.h"
#include "mm/mm.h"
#include "mm/uvm.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "syscall/syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "uapi/ext.h"

static struct vmspace *cur_vm(void) { return thread_current()->vm; }

long sys_brk(uint64_t addr) { return uvm_brk(cur_vm(), addr); }

// The inode behind fd for a file mapping, referenced (the caller puts it), with
// Linux's errnos: EBADF for a bad fd (or an O_PATH one), EOVERFLOW if offset
// and length pass the largest file size, EACCES if the file is not open for
// reading, or for MAP_SHARED with PROT_WRITE if it is not open for writing;
// ENODEV if it is not a regular file.
static int mmap_fd_inode(int fd, int prot, int type, long off, size_t len, struct inode **ipp,
                         bool *writable)
{
    struct fd_ref r = fd_get(fdt_current(), fd);
    if (!r.f)
        return -EBADF;
    struct file *f = r.f;
    // Linux's order: the size, the access checks, then whether the file can be mapped.
    int acc = f->flags & O_ACCMODE, err = 0;
    if (f->flags & O_PATH)
        err = -EBADF;
    else if (off < 0 || (uint64_t)off > INT64_MAX - len)
        err = -EOVERFLOW;
    else if (type == MAP_SHARED && (prot & PROT_WRITE) && acc != O_RDWR)
        err = -EACCES; // (Linux refuses append-only inodes, not O_APPEND descriptors)
    else if (acc == O_WRONLY)
        err = -EACCES;
    else if (f->ops != &inode_file_ops)
        err = -ENODEV;
    if (!err) {
        fs_iget(f->ip);
        *ipp = f->ip;
        *writable = acc == O_RDWR;
        // The mapping's pages will hold write access to the file (ETXTBSY; on
        // Linux the mapping keeps the description open), covered meanwhile by
        // this count, taken while the description holds one: a close racing
        // with the mmap cannot let an exec in between.
        if (*writable)
            fs_get_write_again(f->ip, 1);
    }
    fd_put(r);
    return err;
}

#define MAP_SHARED_VALIDATE 0x03
#define MAP_GROWSDOWN 0x0100
#define MAP_DENYWRITE 0x0800
#define MAP_EXECUTABLE 0x1000
#define MAP_LOCKED 0x2000
#define MAP_POPULATE 0x8000
#define MAP_NONBLOCK 0x10000
#define MAP_STACK 0x20000
#define MAP_HUGETLB 0x40000
#define MAP_SYNC 0x80000
#define MAP_KNOWN (MAP_SHARED | MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS | MAP_NORESERVE | \
                   MAP_FIXED_NOREPLACE | MAP_POPULATE)
// Flags Linux knows that we cannot honour: EINVAL rather than a mapping that
// is not what was asked for (no stack-like growth, huge pages, or DAX).
#define MAP_REFUSED (MAP_GROWSDOWN | MAP_HUGETLB | MAP_SYNC | 0x40 /* MAP_32BIT */)
// Linux ignores unknown flags, and these (hints, or obsolete) have no effect.
#define MAP_HINTS (MAP_DENYWRITE | MAP_EXECUTABLE | MAP_LOCKED | MAP_NONBLOCK | MAP_STACK)

long sys_mmap(uint64_t addr, size_t len, int prot, int flags, int fd, long off)
{
    int type = flags & MAP_SHARED_VALIDATE;
    if (type == MAP_SHARED_VALIDATE) {
        // MAP_SHARED that refuses unknown flags (EOPNOTSUPP); files only.
        if (flags & MAP_ANONYMOUS)
            return -EINVAL;
        if (flags & ~(MAP_KNOWN | MAP_HINTS | MAP_SHARED_VALIDATE))
            return -EOPNOTSUPP;
        type = MAP_SHARED;
    }
    if (len == 0 || (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC)) ||
        (type != MAP_PRIVATE && type != MAP_SHARED) || (flags & MAP_REFUSED))
        return -EINVAL;
    if (off % PGSIZE)
        return -EINVAL;
    if (len > USER_TOP)
        return -ENOMEM;
    // A fixed range must lie in user space (Linux: ENOMEM, before the alignment).
    if ((flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) && addr > USER_TOP - PGROUNDUP(len))
        return -ENOMEM;
    struct inode *ip = NULL;
    bool writable = true;
    if (!(flags & MAP_ANONYMOUS)) {
        int err = mmap_fd_inode(fd, prot, type, off, len, &ip, &writable);
        if (err)
            return err;
    }
    int uflags = 0;
    if (type == MAP_SHARED && !writable)
        uflags |= UVM_NOWRITE; // mprotect(PROT_WRITE) on it is EACCES
    if (ip && writable)
        uflags |= UVM_WRITER; // private or shared, as Linux
    if (flags & MAP_FIXED_NOREPLACE)
        uflags |= UVM_NOREPLACE; // Linux: -EEXIST if anything is mapped there
    else if (flags & MAP_FIXED)
        uflags |= UVM_FIXED;
    if (type == MAP_SHARED)
        uflags |= UVM_SHARED;
    if (flags & MAP_POPULATE)
        uflags |= UVM_POPULATE;
    // MAP_NORESERVE: nothing is ever reserved; pages are allocated on first touch.
    // A map that failed leaves nothing behind: one short of pages runs again
    // once the frees pending have landed (mm/page.c, "running out").
    long ret;
    uint64_t until = 0;
    do {
        page_shortage_clear();
        ret = uvm_map_file(cur_vm(), addr, len, prot, uflags, ip, ip ? off / PGSIZE : 0);
    } while (ret == -ENOMEM && page_wait_if_short(&until));
    if (ip && writable)
        fs_put_write(ip); // each mapped page holds its own
    if (ip)
        fs_iput(ip); // each mapped page holds its own reference
    return ret;
}

// munmap: EINVAL for a misaligned start, or a range (before rounding) that
// passes the end of user space; unmapping nothing is fine.
long sys_munmap(uint64_t addr, size_t len)
{
    if (addr % PGSIZE || addr > USER_TOP || len > USER_TOP - addr)
        return -EINVAL;
    return uvm_unmap(cur_vm(), addr, len);
}

// mprotect, with Linux's order: EINVAL for a misaligned start, nothing to do for
// length 0, ENOMEM for a range that wraps, EINVAL for unknown bits, ENOMEM for
// a range that is not all mapped (user space ends where mappings do).
long sys_mprotect(uint64_t addr, size_t len, int prot)
{
    if (addr % PGSIZE)
        return -EINVAL;
    if (len == 0)
        return 0;
    size_t n = PGROUNDUP(len);
    if (n == 0 || addr + n <= addr)
        return -ENOMEM;
    if (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC))
        return -EINVAL;
    if (addr + n > USER_TOP)
        return -ENOMEM;
    return uvm_protect(cur_vm(), addr, n, prot);
}

#define MADV_NORMAL 0
#define MADV_RANDOM 1
#define MADV_SEQUENTIAL 2
#define MADV_WILLNEED 3
#define MADV_DONTNEED 4

// Linux: ENOMEM if part of [addr, addr+len) is not mapped (after advising the
// mapped part).
static bool all_mapped(uint64_t addr, size_t len)
{
    for (uint64_t va = addr; va < addr + len; va += PGSIZE)
        if (!uvm_mapped(cur_vm(), va, NULL))
            return false;
    return true;
}

long sys_madvise(uint64_t addr, size_t len, int advice)
{
    if (addr % PGSIZE)
        return -EINVAL;
    bool known = advice == MADV_UNMAP_ASYNC || (advice >= MADV_NORMAL && advice <= MADV_DONTNEED);
    size_t n = PGROUNDUP(len);
    if (!known || (len && !n) || addr + n < addr)
        return -EINVAL; // an unknown advice, or a range that wraps
    if (advice == MADV_UNMAP_ASYNC) // length 0 is EINVAL (docs/madv_unmap_async.md)
        return len ? uvm_unmap_async(cur_vm(), addr, len) : -EINVAL;
    if (n == 0)
        return 0;
    if (addr + n > USER_END)
        return -ENOMEM;
    int holes = all_mapped(addr, n) ? 0 : -ENOMEM;
    switch (advice) {
    case MADV_NORMAL: case MADV_RANDOM: case MADV_SEQUENTIAL: case MADV_WILLNEED:
        return holes; // hints we have no use for
    case MADV_DONTNEED: {
        int err = uvm_dontneed(cur_vm(), addr, n);
        return err ? err : holes;
    }
    default:
        return -EINVAL;
    }
}
