// Tests for user address spaces: mapping, demand-zero pages, protection changes
// that split regions, unmapping that frees pages, brk, and address choice.
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "mm/uvm.h"
#include "uapi/abi.h"
#include "uapi/errno.h"

KTEST(uvm_map_write_read_unmap)
{
    size_t free0 = page_count_free();
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    long a = uvm_map(vs, 0, 8 * PGSIZE, VM_READ | VM_WRITE, false);
    KREQUIRE(a > 0);
    KCHECK(a % PGSIZE == 0 && (uintptr_t)a < USER_MMAP_TOP);
    long b = uvm_map(vs, 0, PGSIZE, VM_READ, false);
    KCHECK(b > 0 && (b + (long)PGSIZE <= a || b >= a + 8 * (long)PGSIZE));
    char buf[100], back[100];
    memset(buf, 7, sizeof buf);
    KCHECK_EQ(uvm_write(vs, a + 5 * PGSIZE - 50, buf, sizeof buf), 0);
    KCHECK_EQ(uvm_read(vs, a + 5 * PGSIZE - 50, back, sizeof back), 0);
    KCHECK(memcmp(buf, back, sizeof buf) == 0);
    KCHECK_EQ(uvm_read(vs, a, back, 8), 0);
    KCHECK_EQ(back[0], 0); // zero-filled
    KCHECK_EQ(uvm_resident(vs), 3);
    // Protect the middle: three regions with the right permissions.
    KCHECK_EQ(uvm_protect(vs, a + 2 * PGSIZE, 2 * PGSIZE, VM_READ), 0);
    int prot = -1;
    KCHECK(uvm_mapped(vs, a + 2 * PGSIZE, &prot) && prot == VM_READ);
    KCHECK(uvm_mapped(vs, a + PGSIZE, &prot) && prot == (VM_READ | VM_WRITE));
    KCHECK(uvm_mapped(vs, a + 4 * PGSIZE, &prot) && prot == (VM_READ | VM_WRITE));
    KCHECK_EQ(uvm_fault(vs, a + 2 * PGSIZE, 2 /* write */, NULL), SIGSEGV);
    KCHECK_EQ(uvm_fault(vs, a + 2 * PGSIZE, 0 /* read */, NULL), 0);
    KCHECK_EQ(uvm_fault(vs, a + PGSIZE, 16 /* exec */, NULL), SIGSEGV);
    KCHECK_EQ(uvm_protect(vs, 0x10000000, PGSIZE, VM_READ), -ENOMEM);
    // Unmap a hole; its pages are freed.
    KCHECK_EQ(uvm_unmap(vs, a + 4 * PGSIZE, PGSIZE), 0);
    KCHECK(!uvm_mapped(vs, a + 4 * PGSIZE, NULL));
    KCHECK_EQ(uvm_resident(vs), 3);
    KCHECK_EQ(uvm_read(vs, a + 4 * PGSIZE, back, 1), -EFAULT);
    KCHECK_EQ(uvm_map(vs, a + 1, PGSIZE, VM_READ, true), -EINVAL);
    KCHECK_EQ(uvm_map(vs, 0xffff800000000000UL, PGSIZE, VM_READ, true), -EINVAL);
    vmspace_put(vs);
    page_drain_all_caches();
    KCHECK(page_count_free() + 8 >= free0);
}

// A mapping whose per-page descriptors could not fit in a quarter of memory
// fails at once, without allocating (uvm_map.c, describable); a big one that
// fits is made.
KTEST(uvm_map_beyond_descriptors_fails_at_once)
{
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    size_t free0 = page_count_free();
    KCHECK_EQ(uvm_map(vs, 0, 1UL << 40, VM_READ | VM_WRITE, false), -ENOMEM);
    size_t most = page_count_total() / 4 * 64 * PGSIZE; // 64 descriptors to a page
    KCHECK_EQ(uvm_map(vs, 0, most + 64 * PGSIZE, VM_READ, false), -ENOMEM);
    KCHECK(page_count_free() + 16 >= free0); // (other CPUs' caches move a little)
    long a = uvm_map(vs, 0, 1UL << 28, VM_READ | VM_WRITE, false); // 256 MiB
    KCHECK(a > 0);
    if (a > 0)
        KCHECK_EQ(uvm_unmap(vs, a, 1UL << 28), 0);
    vmspace_put(vs);
}

KTEST(uvm_brk_grows_and_shrinks)
{
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    vs->brk_start = vs->brk = 0x600000;
    KCHECK_EQ(uvm_brk(vs, 0), 0x600000);
    KCHECK_EQ(uvm_brk(vs, 0x600000 + 3 * PGSIZE + 5), 0x600000 + 3 * PGSIZE + 5);
    KCHECK(uvm_mapped(vs, 0x600000 + 3 * PGSIZE, NULL));
    KCHECK_EQ(uvm_write(vs, 0x600000 + 3 * PGSIZE, "x", 1), 0);
    KCHECK_EQ(uvm_brk(vs, 0x600000 + PGSIZE), 0x600000 + PGSIZE);
    KCHECK(!uvm_mapped(vs, 0x600000 + 2 * PGSIZE, NULL));
    KCHECK_EQ(uvm_brk(vs, 0x100), 0x600000 + PGSIZE); // below the start: unchanged
    vmspace_put(vs);
}

// fork's copy: same regions and brk, only resident pages copied, and writes on
// either side stay private; the references of a shared space count.
KTEST(uvm_copy_is_private)
{
    size_t free0 = page_count_free();
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    long a = uvm_map(vs, 0, 4 * PGSIZE, VM_READ | VM_WRITE, false);
    KREQUIRE(a > 0);
    KCHECK_EQ(uvm_protect(vs, a + 3 * PGSIZE, PGSIZE, VM_READ), 0);
    vs->brk_start = vs->brk = 0x1000000;
    char x = 'p', y = 'c', r = 0;
    KCHECK_EQ(uvm_write(vs, a + PGSIZE, &x, 1), 0);
    struct vmspace *c = vmspace_fork(vs);
    KREQUIRE(c);
    KCHECK_EQ(uvm_resident(c), 1); // untouched pages stay untouched
    KCHECK_EQ(c->brk, vs->brk);
    int prot = -1;
    KCHECK(uvm_mapped(c, a + 3 * PGSIZE, &prot) && prot == VM_READ);
    KCHECK_EQ(uvm_read(c, a + PGSIZE, &r, 1), 0);
    KCHECK_EQ(r, 'p');
    KCHECK_EQ(uvm_write(c, a + PGSIZE, &y, 1), 0);
    KCHECK_EQ(uvm_read(vs, a + PGSIZE, &r, 1), 0);
    KCHECK_EQ(r, 'p');
    vmspace_hold(c);
    vmspace_put(c);
    KCHECK_EQ(uvm_read(c, a + PGSIZE, &r, 1), 0); // still alive: one reference left
    KCHECK_EQ(r, 'c');
    vmspace_put(c);
    vmspace_put(vs);
    page_drain_all_caches();
    kmalloc_drain_all();
    KCHECK(page_count_free() + 8 >= free0);
}
