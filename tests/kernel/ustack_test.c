// The stack grows on demand (ustack.c): exec maps its top, a fault below maps
// down to the faulting page, within the reserve only; holes, other mappings and
// fork behave as Linux's grows-down stack.
#include "ktest/ktest.h"
#include "mm/uvm.h"
#include "sync/atomic.h"
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
    vmspace_put(c);
    vmspace_put(vs);
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
    vmspace_put(bare);
    vmspace_put(vs);
}

// Every CPU grows one stack at once, each to its own depth, many times over: no
// fault may fail, and the stack ends up reaching the deepest of them.
static struct vmspace *race_vs;
static int race_started, race_failed;
#define RACE_ROUNDS 16

static uintptr_t race_addr(int cpu, int round)
{
    return USER_TOP - USER_STACK_INIT - (uintptr_t)(round * 8 + cpu % 8 + 1) * 8 * PGSIZE;
}

static void racer(void *arg)
{
    int me = (int)(uintptr_t)arg;
    vmt_enter(race_vs);
    add_fetch(&race_started, 1);
    while (load_acquire(&race_started) < ncpu_online)
        pause();
    for (int r = 0; r < RACE_ROUNDS; r++)
        if (!vmt_touch(race_addr(me, r), me))
            fetch_add_relaxed(&race_failed, 1);
    vmt_leave(race_vs);
}

KTEST(ustack_grows_from_all_cpus_at_once)
{
    int n = ncpu_online;
    KREQUIRE((race_vs = vmspace_new()) != NULL);
    KCHECK_EQ(ustack_map(race_vs), 0);
    race_started = race_failed = 0;
    struct thread *t[NCPU_MAX];
    for (int c = 0; c < n; c++)
        KREQUIRE((t[c] = vmt_on_cpu(c, "ustack-race", racer, (void *)(uintptr_t)c)) != NULL);
    for (int c = 0; c < n; c++)
        thread_join(t[c]);
    KCHECK_EQ(race_failed, 0);
    uintptr_t deepest = race_addr(MIN(n, 8) - 1, RACE_ROUNDS - 1);
    size_t holes = 0;
    for (uintptr_t va = PGROUNDDOWN(deepest); va < USER_TOP; va += PGSIZE)
        holes += !uvm_mapped(race_vs, va, NULL);
    KCHECK_EQ(holes, 0);
    KCHECK(!uvm_mapped(race_vs, PGROUNDDOWN(deepest) - PGSIZE, NULL));
    KCHECK_EQ(race_vs->stack, PGROUNDDOWN(deepest));
    vmspace_put(race_vs);
}
