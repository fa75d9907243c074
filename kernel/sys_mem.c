// Memory system calls: brk, mmap (anonymous or file-backed, private or shared),
// munmap, mprotect, madvise. Argument checks around uvm.c, with Linux's errnos.
#include "fdtable.h"
#include "file.h"
#include "fs.h"
#include "proc.h"
#include "sched.h"
#include "syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "uapi/ext.h"
#include "uvm.h"

static struct vmspace *cur_vm(void) { return thread_current()->vm; }

long sys_brk(uint64_t addr) { return uvm_brk(cur_vm(), addr); }

// The inode behind fd for a file mapping, referenced (the caller puts it), with
// Linux's errnos: EBADF for a bad fd (or an O_PATH one), EACCES if the file is
// not open for reading, or for MAP_SHARED with PROT_WRITE if it is not open for
// writing; ENODEV if it is not a regular file.
static int mmap_fd_inode(int fd, int prot, int type, struct inode **ipp, bool *writable)
{
    struct fd_ref r = fd_get(proc_current()->fdt, fd);
    if (!r.f)
        return -EBADF;
    struct file *f = r.f;
    // Linux's order: the access checks, then whether the file can be mapped.
    int acc = f->flags & O_ACCMODE, err = 0;
    if (f->flags & O_PATH)
        err = -EBADF;
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
    }
    fd_put(r);
    return err;
}

#define MAP_POPULATE 0x8000
#define MAP_KNOWN (MAP_SHARED | MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS | MAP_NORESERVE | \
                   MAP_FIXED_NOREPLACE | MAP_POPULATE)

long sys_mmap(uint64_t addr, size_t len, int prot, int flags, int fd, long off)
{
    int type = flags & (MAP_SHARED | MAP_PRIVATE);
    if (len == 0 || (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC)) ||
        (type != MAP_PRIVATE && type != MAP_SHARED) || (flags & ~MAP_KNOWN))
        return -EINVAL;
    if (off % PGSIZE)
        return -EINVAL;
    if (len > USER_TOP)
        return -ENOMEM;
    struct inode *ip = NULL;
    bool writable = true;
    if (!(flags & MAP_ANONYMOUS)) {
        if (off < 0)
            return -EINVAL;
        int err = mmap_fd_inode(fd, prot, type, &ip, &writable);
        if (err)
            return err;
    }
    int uflags = 0;
    if (type == MAP_SHARED && !writable)
        uflags |= UVM_NOWRITE; // mprotect(PROT_WRITE) on it is EACCES
    if (flags & MAP_FIXED_NOREPLACE)
        uflags |= UVM_NOREPLACE; // Linux: -EEXIST if anything is mapped there
    else if (flags & MAP_FIXED)
        uflags |= UVM_FIXED;
    if (type == MAP_SHARED)
        uflags |= UVM_SHARED;
    if (flags & MAP_POPULATE)
        uflags |= UVM_POPULATE;
    // MAP_NORESERVE: nothing is ever reserved; pages are allocated on first touch.
    long ret = uvm_map_file(cur_vm(), addr, len, prot, uflags, ip, ip ? off / PGSIZE : 0);
    if (ip)
        fs_iput(ip); // each mapped page holds its own reference
    return ret;
}

long sys_munmap(uint64_t addr, size_t len) { return uvm_unmap(cur_vm(), addr, len); }

long sys_mprotect(uint64_t addr, size_t len, int prot) { return uvm_protect(cur_vm(), addr, len, prot); }

#define MADV_NORMAL 0
#define MADV_RANDOM 1
#define MADV_SEQUENTIAL 2
#define MADV_WILLNEED 3
#define MADV_DONTNEED 4

long sys_madvise(uint64_t addr, size_t len, int advice)
{
    if (addr % PGSIZE)
        return -EINVAL;
    switch (advice) {
    case MADV_NORMAL: case MADV_RANDOM: case MADV_SEQUENTIAL: case MADV_WILLNEED:
        return 0; // hints we have no use for
    case MADV_DONTNEED:
        return len ? uvm_dontneed(cur_vm(), addr, len) : 0;
    case MADV_UNMAP_ASYNC:
        return len ? uvm_unmap_async(cur_vm(), addr, len) : -EINVAL;
    default:
        return -EINVAL;
    }
}
