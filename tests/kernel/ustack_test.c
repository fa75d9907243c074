// The stack grows on demand (ustack.c): exec maps its top, a fault below maps
// down to the faulting page, within the reserve only; holes, other mappings and
// fork behave as Linux's grows-down stack.
#include "ktest.h"
#include "uvm.h"
#include "vmtest.h"

#define RESERVE_LO (USER_TOP - USER_STACK_SIZE)
#define INIT_LO (USER_TOP - USER_STACK_INIT)

KTEST(ustack_grows_down_within_its_reserve)
{
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    KCHECK_EQ(ustack_map(vs), 0);
    KCHECK(uvm_mapped(vs, USER_TOP - PGSIZE, NULL));
    KCHECK(uvm_mapped(vs, INIT_LO, NULL));
    KCHECK(!uvm_mapped(vs, INIT_LO - PGSIZE, NULL));
    uintptr_t deep = USER_TOP - (4UL << 20);
    vmt_enter(vs);
    KCHECK(vmt_touch(deep + 8, 7));
    vmt_leave(vs);
    // Everything from there up is stack now, nothing below it.
    KCHECK(uvm_mapped(vs, deep, NULL));
    KCHECK(uvm_mapped(vs, deep + PGSIZE, NULL));
    KCHECK(uvm_mapped(vs, INIT_LO - PGSIZE, NULL));
    KCHECK(!uvm_mapped(vs, deep - PGSIZE, NULL));
    KCHECK_EQ(uvm_resident(vs), 1); // mapped, not filled
    uint64_t v = 0;
    KCHECK_EQ(uvm_read(vs, deep + 8, &v, sizeof v), 0);
    KCHECK_EQ(v, 7);
    // A fork's child grows its own stack; the parent's stays as it was.
    struct vmspace *c = vmspace_fork(vs);
    KREQUIRE(c);
    vmt_enter(c);
    KCHECK(vmt_touch(RESERVE_LO, 1)); // the reserve's last page
    KCHECK(!vmt_touch(RESERVE_LO - PGSIZE, 1)); // below it: no stack
    KCHECK(vmt_peek(deep + 8, &v) && v == 7);
    vmt_leave(c);
    KCHECK(uvm_mapped(c, RESERVE_LO, NULL));
    KCHECK(!uvm_mapped(c, RESERVE_LO - PGSIZE, NULL));
    KCHECK(!uvm_mapped(vs, deep - PGSIZE, NULL));
    vmspace_free(c);
    vmspace_free(vs);
}

KTEST(ustack_stops_at_holes_and_mappings)
{
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    KCHECK_EQ(ustack_map(vs), 0);
    // A page the program unmapped inside the stack stays a hole.
    KCHECK_EQ(uvm_unmap(vs, USER_TOP - 2 * PGSIZE, PGSIZE), 0);
    uintptr_t block = USER_TOP - (1UL << 20);
    KCHECK_EQ(uvm_map(vs, block, PGSIZE, VM_READ, UVM_FIXED), (long)block);
    vmt_enter(vs);
    KCHECK(!vmt_touch(USER_TOP - 2 * PGSIZE, 1));
    KCHECK(vmt_touch(block + PGSIZE, 1)); // down to just above the mapping: grows
    KCHECK(!vmt_touch(block - PGSIZE, 1)); // past it: the mapping stops the stack
    vmt_leave(vs);
    KCHECK(!uvm_mapped(vs, USER_TOP - 2 * PGSIZE, NULL));
    KCHECK(!uvm_mapped(vs, block - PGSIZE, NULL));
    int prot = 0;
    KCHECK(uvm_mapped(vs, block, &prot) && prot == VM_READ); // left as it was
    // An address space without a stack (no exec) never grows one.
    struct vmspace *bare = vmspace_new();
    KREQUIRE(bare);
    vmt_enter(bare);
    KCHECK(!vmt_touch(USER_TOP - PGSIZE, 1));
    vmt_leave(bare);
    vmspace_free(bare);
    vmspace_free(vs);
}
