// Checked copies between the kernel and user space, and the exception table that
// turns faults inside them into -EFAULT (see usercopy.S).
#include "mm/usercopy.h"
#include "mm/uvm.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "sync/percpu.h"
#include "uapi/errno.h"
#include "x86/trap.h"
#include "x86/x86.h"

size_t __copy_user(void *dst, const void *src, size_t n);
long __strncpy_user(char *dst, const char *src, size_t n);
long __clear_user(void *dst, size_t n);

struct extable_entry {
    uintptr_t insn, fixup;
};
extern const struct extable_entry __start_extable[], __stop_extable[];

// The part of [a, a+n) inside this thread's kernel I/O window, from a: 0 if a
// is outside it.
static size_t kio_part(uint64_t a, size_t n)
{
    struct thread *t = thread_current();
    if (!t->kio_len || a < t->kio_base || a - t->kio_base >= t->kio_len)
        return 0;
    return MIN(n, t->kio_len - (a - t->kio_base));
}

void usercopy_kio_begin(void *buf, size_t n)
{
    struct thread *t = thread_current();
    t->kio_base = (uint64_t)buf;
    t->kio_len = n;
}

void usercopy_kio_end(void) { thread_current()->kio_len = 0; }

bool user_range_valid(uint64_t uaddr, size_t n)
{
    if (uaddr < USER_END)
        return n <= USER_END - uaddr;
    size_t want = n ? n : 1; // an empty range still needs a valid address
    return kio_part(uaddr, want) == want;
}

// Did the copy that just ended stop at a fault that found no memory? Read and
// cleared after every copy, so that a later copy that fails for another
// reason says -EFAULT.
static bool took_nomem(void)
{
    struct thread *t = thread_current();
    bool nomem = t->ucopy_nomem;
    if (nomem)
        t->ucopy_nomem = false;
    return nomem;
}

// The error of a copy that stopped at a fault.
static long copy_error(void) { return took_nomem() ? -ENOMEM : -EFAULT; }

long copy_from_user(void *dst, uint64_t usrc, size_t n)
{
    if (!user_range_valid(usrc, n))
        return -EFAULT;
    return n && __copy_user(dst, (const void *)usrc, n) ? copy_error() : 0;
}

long copy_to_user(uint64_t udst, const void *src, size_t n)
{
    if (!user_range_valid(udst, n))
        return -EFAULT;
    return n && __copy_user((void *)udst, src, n) ? copy_error() : 0;
}

// The part of [uaddr, uaddr+n) inside user space.
static size_t user_part(uint64_t uaddr, size_t n)
{
    return uaddr >= USER_END ? kio_part(uaddr, n) : MIN(n, USER_END - uaddr);
}

// A short count says only where the copy stopped, whatever the reason.
size_t copy_from_user_some(void *dst, uint64_t usrc, size_t n)
{
    size_t m = user_part(usrc, n);
    size_t left = m ? __copy_user(dst, (const void *)usrc, m) : 0;
    took_nomem();
    return m - left;
}

size_t copy_to_user_some(uint64_t udst, const void *src, size_t n)
{
    size_t m = user_part(udst, n);
    size_t left = m ? __copy_user((void *)udst, src, m) : 0;
    took_nomem();
    return m - left;
}

long clear_user(uint64_t udst, size_t n)
{
    if (!user_range_valid(udst, n))
        return -EFAULT;
    return n && __clear_user((void *)udst, n) ? copy_error() : 0;
}

long strncpy_from_user(char *dst, uint64_t usrc, size_t n)
{
    if (n == 0)
        return -ENAMETOOLONG;
    // Never read past the end of user space, however large n is.
    if (usrc >= USER_END)
        return -EFAULT;
    size_t max = MIN(n, USER_END - usrc);
    long len = __strncpy_user(dst, (const char *)usrc, max);
    if (len < 0)
        return copy_error();
    if ((size_t)len == max) {
        dst[max - 1] = 0;
        return max < n ? -EFAULT : -ENAMETOOLONG;
    }
    return len;
}

static uintptr_t extable_fixup(uintptr_t rip)
{
    for (const struct extable_entry *e = __start_extable; e < __stop_extable; e++)
        if (e->insn == rip)
            return e->fixup;
    return 0;
}

bool usercopy_fault(struct trapframe *tf)
{
    uintptr_t fixup = extable_fixup(tf->rip);
    if (!fixup)
        return false;
    // A user page not touched yet: fill it in and retry the instruction. If
    // that needs memory there is none of, the copy fails (copy_error); it
    // never retries, which would spin for as long as memory stays short.
    // Not under a spinlock: filling in may wait for a page's descriptor,
    // whose holder may wait in turn for a TLB shootdown that a CPU spinning
    // on our lock, interrupts off, never runs. Such a copy fails instead
    // (-EFAULT), and its caller lets go of the lock and touches the page
    // before it tries again (futex_wait).
    struct thread *t = thread_current();
    if (tf->vector == T_PF && t->vm && !this_cpu_read(cpu.locks_held)) {
        int r = uvm_fault(t->vm, read_cr2(), tf->err, NULL);
        if (r == 0)
            return true;
        t->ucopy_nomem = r == -ENOMEM;
    }
    tf->rip = fixup;
    return true;
}
