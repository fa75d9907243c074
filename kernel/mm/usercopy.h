// Copying between the kernel and user space (usercopy.c, usercopy.S). These are
// the only ways the kernel touches user memory: with SMAP on, any other access
// faults. Kernel and non-canonical addresses are rejected up front; a fault on an
// unmapped or forbidden user page returns -EFAULT, and one on a mapped page
// that needs memory there is none of returns -ENOMEM (the system call then
// fails with ENOMEM, as every other allocation failure does; Linux says EFAULT
// there, but its OOM killer has usually made memory or killed the caller by
// then).
#pragma once
#include "kernel.h"

struct trapframe;

long copy_from_user(void *dst, uint64_t usrc, size_t n);   // 0, -EFAULT or -ENOMEM
long copy_to_user(uint64_t udst, const void *src, size_t n);
long clear_user(uint64_t udst, size_t n);
// As much as can be copied: the bytes before the first fault (n if none). For
// read and write, which report a short transfer rather than EFAULT (Linux).
size_t copy_from_user_some(void *dst, uint64_t usrc, size_t n);
size_t copy_to_user_some(uint64_t udst, const void *src, size_t n);
// Copy a NUL-terminated string of at most n-1 bytes plus NUL: its length,
// -ENAMETOOLONG if it does not fit, -EFAULT or -ENOMEM.
long strncpy_from_user(char *dst, uint64_t usrc, size_t n);
bool user_range_valid(uint64_t uaddr, size_t n);
// Until usercopy_kio_end, the copy helpers of this thread also take
// [buf, buf+n), a kernel buffer, as user memory: a file operation given it reads
// or writes the buffer through the ordinary path, with every other check. For
// sendfile, which moves data from one file's read to another's write.
void usercopy_kio_begin(void *buf, size_t n);
void usercopy_kio_end(void);

// trap.c: a kernel-mode #PF or #GP. True if it came from a copy helper and was
// handled (demand paging or the fixup).
bool usercopy_fault(struct trapframe *tf);
