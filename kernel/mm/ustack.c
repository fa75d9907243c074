// The main thread's stack, grown on demand as Linux grows its stack. The top
// USER_STACK_SIZE bytes of user space are the stack's reserve; exec maps only
// the top USER_STACK_INIT of them, and a fault on a page below the stack but
// inside the reserve maps everything from that page up to the stack. So exec
// and fork do not create and copy a mapping descriptor for every page of 8 MiB
// the program will almost never touch.
//
// Commute: growth is once per page range per address space and never on a hot
// path. The stack's lowest address is one word of the address space, written
// only when the stack grows (under its lock bit) and read by faults that found
// nothing mapped; faults on mapped pages never look at it.
#include "mm/uvm.h"
#include "sync/atomic.h"
#include "sync/xcall.h"
#include "uapi/errno.h"
#include "x86/smp.h"
#include "x86/x86.h"

#define GROWING 1UL // low bit of vs->stack: a fault is growing it (the rest is page aligned)

int ustack_map(struct vmspace *vs)
{
    uintptr_t lo = USER_TOP - USER_STACK_INIT;
    long r = uvm_map(vs, lo, USER_STACK_INIT, VM_READ | VM_WRITE, UVM_FIXED);
    if (r < 0)
        return (int)r;
    vs->stack = lo;
    return 0;
}

// The lock is a bit rather than a spinlock: a fault may come from a usercopy
// with interrupts off, and while we wait another CPU may wait for us to answer
// its TLB shootdown, so keep answering cross-CPU calls (as vp_lock does).
static uintptr_t grow_lock(struct vmspace *vs)
{
    for (;;) {
        uintptr_t s = __atomic_fetch_or(&vs->stack, GROWING, __ATOMIC_ACQUIRE);
        if (!(s & GROWING))
            return s;
        xcall_poll();
        pause();
    }
}

int ustack_grow(struct vmspace *vs, uintptr_t va)
{
    va = PGROUNDDOWN(va);
    uintptr_t lo = load_relaxed(&vs->stack) & ~GROWING;
    if (!lo || va >= lo || va < USER_TOP - USER_STACK_SIZE)
        return 0; // no stack, a hole in it (munmap), or below its reserve
    lo = grow_lock(vs);
    // Another fault may have grown it meanwhile. Something mapped in between
    // (MAP_FIXED) stops the stack, as on Linux; no memory for the mapping is
    // the fault's -ENOMEM (an out-of-memory kill, not SIGSEGV).
    int grown = va >= lo;
    if (!grown) {
        long r = uvm_map(vs, va, lo - va, VM_READ | VM_WRITE, UVM_NOREPLACE);
        if (r >= 0) {
            lo = va;
            grown = 1;
        } else if (r == -ENOMEM) {
            grown = -ENOMEM;
        }
    }
    store_release(&vs->stack, lo); // and unlock
    return grown;
}
