// Tests for the user-copy helpers and SMAP, run from a kernel thread that borrows
// a fresh user address space: demand paging inside copies, -EFAULT for NULL,
// unmapped, kernel and non-canonical addresses, read-only pages, string limits,
// and a fault when the kernel touches user memory directly.
#include "ktest/ktest.h"
#include "mm/usercopy.h"
#include "mm/uvm.h"
#include "proc/sched.h"
#include "sync/percpu.h"
#include "testutil.h"
#include "uapi/errno.h"
#include "x86/trap.h"
#include "x86/x86.h"

#define BASE 0x400000UL

static struct vmspace *enter_user_vm(void)
{
    struct vmspace *vs = vmspace_new();
    if (!vs)
        return NULL;
    struct thread *t = thread_current();
    push_off();
    t->vm = vs;
    uvm_switch(NULL, vs);
    pop_off();
    return vs;
}

static void leave_user_vm(struct vmspace *vs)
{
    struct thread *t = thread_current();
    push_off();
    t->vm = NULL;
    uvm_switch(vs, NULL);
    pop_off();
    vmspace_put(vs);
}

KTEST(usercopy_faults_become_efault)
{
    struct vmspace *vs = enter_user_vm();
    KREQUIRE(vs);
    KCHECK_EQ(uvm_map(vs, BASE, 2 * PGSIZE, VM_READ | VM_WRITE, true), BASE);
    KCHECK_EQ(uvm_map(vs, BASE + 2 * PGSIZE, PGSIZE, VM_READ, true), BASE + 2 * PGSIZE);
    char buf[64], back[64];
    memset(buf, 'a', sizeof buf);
    // Untouched pages are filled in by the copy itself, across a page boundary.
    KCHECK_EQ(copy_to_user(BASE + PGSIZE - 10, buf, sizeof buf), 0);
    KCHECK_EQ(copy_from_user(back, BASE + PGSIZE - 10, sizeof back), 0);
    KCHECK(memcmp(buf, back, sizeof buf) == 0);
    KCHECK_EQ(uvm_resident(vs), 2);
    // Bad addresses.
    KCHECK_EQ(copy_to_user(0, buf, 8), -EFAULT);
    KCHECK_EQ(copy_from_user(back, 0x10000000, 8), -EFAULT);
    KCHECK_EQ(copy_from_user(back, 0xffffffff80000000UL, 8), -EFAULT);
    KCHECK_EQ(copy_from_user(back, 0x8000000000000000UL, 8), -EFAULT);
    KCHECK_EQ(copy_from_user(back, 0x00007ffffffffff8UL, 16), -EFAULT); // runs past user space
    KCHECK_EQ(copy_from_user(back, BASE, (size_t)-1), -EFAULT);
    // Partly mapped: the tail runs into unmapped memory.
    KCHECK_EQ(copy_from_user(back, BASE + 3 * PGSIZE - 8, 16), -EFAULT);
    // Read-only: reading works, writing does not.
    KCHECK_EQ(copy_from_user(back, BASE + 2 * PGSIZE, 8), 0);
    KCHECK_EQ(copy_to_user(BASE + 2 * PGSIZE, buf, 8), -EFAULT);
    KCHECK_EQ(clear_user(BASE, 100), 0);
    KCHECK_EQ(clear_user(0xffff800000000000UL, 100), -EFAULT);
    // Strings.
    KCHECK_EQ(copy_to_user(BASE, "hello", 6), 0);
    char s[8];
    KCHECK_EQ(strncpy_from_user(s, BASE, sizeof s), 5);
    KCHECK(strcmp(s, "hello") == 0);
    KCHECK_EQ(strncpy_from_user(s, BASE, 5), -ENAMETOOLONG);
    KCHECK_EQ(strncpy_from_user(s, 0, sizeof s), -EFAULT);
    KCHECK_EQ(strncpy_from_user(s, 0xffffffff80000000UL, sizeof s), -EFAULT);
    leave_user_vm(vs);
}

static volatile uint64_t user_word;
static void touch_user_directly(void) { user_word = *(volatile uint64_t *)BASE; }

KTEST(usercopy_smap_blocks_direct_access)
{
    KREQUIRE(read_cr4() & CR4_SMAP);
    KCHECK(read_cr4() & CR4_SMEP);
    struct vmspace *vs = enter_user_vm();
    KREQUIRE(vs);
    KCHECK_EQ(uvm_map(vs, BASE, PGSIZE, VM_READ | VM_WRITE, true), BASE);
    KCHECK_EQ(copy_to_user(BASE, "x", 1), 0); // present now
    KCHECK_EQ(run_catching(touch_user_directly), T_PF);
    leave_user_vm(vs);
}
