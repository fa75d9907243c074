// Running out of memory: a fault that needs memory there is none of ends the
// faulting process (an out-of-memory kill, kernel/proc/proc.c) instead of
// retrying forever; one inside a copy helper makes the copy fail with -ENOMEM;
// an mmap that fails for want of memory leaves nothing allocated; and every
// page comes back once the processes are gone. The processes are
// tests/kernel/progs/memhog.c; the rest holds pages in the test itself. Free
// pages are counted exactly (fst_free_pages), with everything deferred done.
// Fork, spawn and exec are tried with every amount of free memory from none up:
// a failure must leave nothing behind. make test runs these at 1, 2 and 8 CPUs.
#include "fstest.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "proc/hangcheck.h"
#include "proc/proc.h"
#include "sync/percpu.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "vmtest.h"
#include "x86/smp.h"

#define MiB (1UL << 20)
#define GiB (1UL << 30)

// ---- pages held by the test ----------------------------------------------------------

// Take free pages until only `keep` are left (all of them if keep is 0),
// linked through their first word. Returns the list.
static void *hold_all_but(size_t keep)
{
    size_t n = fst_free_pages();
    void *list = NULL;
    for (size_t i = 0; keep == 0 || i + keep < n; i++) {
        void *pg = page_alloc();
        if (!pg)
            break;
        *(void **)pg = list;
        list = pg;
    }
    return list;
}

static void release(void *list)
{
    while (list) {
        void *next = *(void **)list;
        page_free(list);
        list = next;
    }
}

// ---- processes that exhaust memory ------------------------------------------------------

// What each memhog printed (for the first test: its copy's result).
static struct capture caps[4];
static char outbuf[4][64];

static int spawn_memhog_as(int i, int cpu, const char *mode, struct proc **p)
{
    const struct user_program *prog = user_program_find("memhog");
    if (!prog)
        return -ENOENT;
    const char *argv[] = {"memhog", mode, NULL};
    cpumask_t m;
    cpumask_clear(&m);
    cpumask_set(&m, cpu);
    caps[i] = (struct capture){.buf = outbuf[i], .cap = sizeof outbuf[i] - 1};
    spin_init(&caps[i].lock, "capture");
    return proc_spawn("memhog", prog->start, prog->len, argv, NULL, &m, &caps[i], p);
}

static int spawn_memhog(int i, int cpu, struct proc **p) { return spawn_memhog_as(i, cpu, NULL, p); }

#define OOM_KILLED W_EXITCODE(0, SIGKILL)
#define NO_REGION W_EXITCODE(2, 0)   // memhog's first mmap failed (ENOMEM)
#define TOUCHED_ALL W_EXITCODE(3, 0) // memhog found memory for every store

// The recipe of the livelock: 64 MiB of shared memory, every other page
// taken, then a store to each page of the 64 MiB, which needs page-table
// pages. The process must be killed, and all its memory must come back.
// Before the stores, a system call copying into the region fails with ENOMEM.
KTEST(oom_fault_after_exhaustion_kills_the_process)
{
    struct proc *p;
    // A first run makes what the kernel keeps once made (kernel stacks, the
    // allocators' per-CPU structures); the second must give back every page.
    for (int round = 0; round < 2; round++) {
        size_t before = fst_free_pages();
        KREQUIRE(spawn_memhog(0, 0, &p) == 0);
        int st = proc_wait_kernel(p);
        outbuf[0][caps[0].len] = 0;
        KCHECK_EQ(st, OOM_KILLED);
        KCHECK(strcmp(outbuf[0], "clock_gettime: -12\n") == 0);
        if (round == 1)
            KCHECK_EQ(fst_free_pages(), before);
    }
}

// A stack that cannot grow for want of memory: the same kill, not SIGSEGV
// (which is for a stack out of room), and every page back.
KTEST(oom_stack_growth_kills_the_process)
{
    struct proc *p;
    for (int round = 0; round < 2; round++) {
        size_t before = fst_free_pages();
        KREQUIRE(spawn_memhog_as(0, 0, "stack", &p) == 0);
        int st = proc_wait_kernel(p);
        KCHECK_EQ(st, OOM_KILLED);
        if (round == 1)
            KCHECK_EQ(fst_free_pages(), before);
    }
}

// Several processes on different CPUs run memory out at once. Each ends:
// killed, or having touched everything (after a victim gave its memory
// back), or with its first mmap refused (the others had taken the memory).
// The first of them to end after running memory out cannot have found more
// (none is given back before somebody ends), so at least one is killed.
KTEST(oom_several_processes_at_once)
{
    enum { N = 4 };
    struct proc *p[N];
    fst_warm_threads(2 * N); // kernel stacks for them all, kept once made
    size_t before = fst_free_pages();
    for (int i = 0; i < N; i++)
        KREQUIRE(spawn_memhog(i, i % ncpu_online, &p[i]) == 0);
    int killed = 0;
    for (int i = 0; i < N; i++) {
        int st = proc_wait_kernel(p[i]);
        if (st != OOM_KILLED && st != TOUCHED_ALL && st != NO_REGION)
            kprintf("# memhog %d: wait status 0x%x\n", i, st);
        KCHECK(st == OOM_KILLED || st == TOUCHED_ALL || st == NO_REGION);
        killed += st == OOM_KILLED;
    }
    KCHECK(killed >= 1);
    KCHECK_EQ(fst_free_pages(), before);
}

// Where init's memhog and the machine stand, for a wait that ran out.
static void memhog_state(struct proc *p, const char *why)
{
    kprintf("# %s: process state %d, %lu bytes printed, %lu pages free, epoch %lu, "
            "%lu callbacks pending\n", why, READ_ONCE(p->state), (unsigned long)caps[0].len,
            page_count_free(), epoch_current(), epoch_pending());
    spin_lock(&p->lock);
    list_for_each(it, &p->threads) {
        struct thread *t = list_entry(it, struct thread, group_link);
        kprintf("#   thread %s: state %d, cpu %d, on a CPU %d, on a wait queue %d\n", t->name,
                READ_ONCE(t->state), READ_ONCE(t->cpu), READ_ONCE(t->on_cpu), t->wq != NULL);
    }
    spin_unlock(&p->lock);
    for (int c = 0; c < ncpu_online; c++)
        if (c != cpu_id())
            hangcheck_dump_cpu(c);
}

// Init is never the victim: run as init, memhog's fault waits for memory
// (which only its own end would give back) instead of killing it. It may run
// memory out before its stores, and even before it prints (a page of its own
// stack, when it took the last page): either way its faults wait from then on.
// Some epochs later it must still be alive, having faulted again meanwhile (it
// waits, it does not give up); the kernel's own SIGKILL then ends it and every
// page comes back.
KTEST(oom_never_kills_init)
{
    const struct user_program *prog = user_program_find("memhog");
    KREQUIRE(prog);
    const char *argv[] = {"memhog", NULL};
    size_t before = fst_free_pages();
    caps[0] = (struct capture){.buf = outbuf[0], .cap = sizeof outbuf[0] - 1};
    spin_init(&caps[0].lock, "capture");
    struct proc *p;
    KREQUIRE(proc_spawn_init("memhog", prog->start, prog->len, argv, NULL, &caps[0], &p) == 0);
    // Until it printed, or memory has stayed gone for a second. Bounded: a
    // memhog that never gets there is a failure that says where it stood.
    uint64_t end = nsec_now() + 60 * 1000000000ULL, gone_since = 0;
    for (;;) {
        uint64_t now = nsec_now();
        if (READ_ONCE(caps[0].len) > 0 || READ_ONCE(p->state) == P_ZOMBIE || now >= end)
            break;
        if (page_count_free() > 0)
            gone_since = 0;
        else if (!gone_since)
            gone_since = now;
        else if (now - gone_since >= 1000000000ULL)
            break;
        sched_sleep_until(now + 1000000);
    }
    if (nsec_now() >= end)
        memhog_state(p, "memory never ran out");
    KCHECK(nsec_now() < end);
    int64_t faults = counter_read(&kst_page_faults);
    uint64_t e = epoch_current();
    end = nsec_now() + 60 * 1000000000ULL;
    while (epoch_current() < e + 10 && nsec_now() < end)
        sched_sleep_until(nsec_now() + 1000000);
    if (epoch_current() < e + 10)
        memhog_state(p, "epochs stopped");
    KCHECK(epoch_current() >= e + 10);
    KCHECK(READ_ONCE(p->state) != P_ZOMBIE);
    KCHECK(counter_read(&kst_page_faults) > faults);
    signal_send_proc(p, SIGKILL, NULL);
    KCHECK_EQ(proc_wait_kernel(p), OOM_KILLED);
    KCHECK_EQ(fst_free_pages(), before);
}

// ---- copies and mmap -----------------------------------------------------------------

// A copy into memory that is there but whose page tables are not: with no
// page for them, the copy fails with -ENOMEM (and does not retry forever);
// with memory back, it succeeds.
KTEST(oom_usercopy_returns_enomem)
{
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    long a = uvm_map(vs, 0, 4 * MiB, VM_READ | VM_WRITE, UVM_SHARED); // filled in now
    KREQUIRE(a > 0);
    vmt_enter(vs);
    void *held = hold_all_but(0);
    uint64_t v = 42;
    KCHECK_EQ(copy_to_user((uintptr_t)a + 2 * MiB, &v, sizeof v), -ENOMEM);
    KCHECK_EQ(copy_from_user(&v, (uintptr_t)a + 2 * MiB, sizeof v), -ENOMEM);
    release(held);
    KCHECK_EQ(copy_to_user((uintptr_t)a + 2 * MiB, &v, sizeof v), 0);
    KCHECK_EQ(copy_to_user(0, &v, sizeof v), -EFAULT); // the flag does not linger
    vmt_leave(vs);
    vmspace_put(vs);
}

// Shared anonymous mmaps larger than free memory fail with ENOMEM, again and
// again, each leaving nothing allocated: neither the pages it filled in nor
// the tree nodes it added for its range. Once with room for the nodes but not
// the pages (the failure comes while filling in), once without room for the
// nodes (it comes while locking the range); placed by the kernel, and at a
// new fixed address each time. The space is loaded, as a process's is while
// it calls mmap: a leaf the range covers only in part is given back at the
// CPU's next tick (trim_after_unmap), which the test waits for.
static void failed_maps(size_t keep)
{
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    vmt_enter(vs);
    // This CPU's part of the space, made by the first call, stays.
    KREQUIRE(uvm_map(vs, 0, PGSIZE, VM_READ, 0) > 0);
    void *held = hold_all_but(keep);
    size_t before = fst_free_pages();
    for (int i = 0; i < 8; i++) {
        KCHECK_EQ(uvm_map(vs, 0, GiB, VM_READ | VM_WRITE, UVM_SHARED), -ENOMEM);
        KCHECK_EQ(uvm_map(vs, (64 + i) * GiB, GiB, VM_READ | VM_WRITE, UVM_SHARED | UVM_FIXED),
                  -ENOMEM);
    }
    for (uint64_t e = epoch_current(); epoch_current() < e + 2;)
        pause(); // ticks on this CPU, with the space loaded
    // The leak this catches is thousands of pages (16 MiB of descriptors and
    // nodes per GiB asked for); other CPUs may take a page meanwhile (seen at
    // 8 CPUs with the network stack running: 6,143 of 6,144), so a few pages
    // of slack.
    KCHECK(fst_pages_back(before, fst_free_pages(), 8));
    release(held);
    vmt_leave(vs);
    vmspace_put(vs);
}

KTEST(oom_failed_shared_mmap_leaves_nothing) { failed_maps(6144); } // 24 MiB left
KTEST(oom_failed_mmap_lock_leaves_nothing) { failed_maps(1024); }   // 4 MiB left

// ---- fork and spawn at every shortage ---------------------------------------------------

// Free memory from none upward, doubling, until the call succeeds: what each
// shortage leaves behind must be nothing.
#define FOR_EACH_SHORTAGE(keep) for (size_t keep = 0; keep <= 4096; keep = keep ? 2 * keep : 1)

// A copy-on-write copy of a space with written private pages and a shared
// region fails (NULL) or succeeds at each shortage; either way, once the copy
// is gone every page is back, and the parent still reads what it wrote (a
// failed copy must not leave its pages marked shared with nobody).
KTEST(oom_fork_at_every_shortage_leaves_nothing)
{
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    long priv = uvm_map(vs, 0, 64 * PGSIZE, VM_READ | VM_WRITE, 0);
    KREQUIRE(priv > 0 && uvm_map(vs, 0, 16 * PGSIZE, VM_READ | VM_WRITE, UVM_SHARED) > 0);
    for (uint64_t i = 0; i < 64; i++)
        KREQUIRE(uvm_write(vs, priv + i * PGSIZE, &i, sizeof i) == 0);
    struct vmspace *c = vmspace_fork(vs); // what a first copy makes and keeps
    KREQUIRE(c);
    vmspace_put(c);
    size_t before = fst_free_pages();
    bool made = false;
    int refused = 0;
    FOR_EACH_SHORTAGE(keep) {
        void *held = hold_all_but(keep);
        c = vmspace_fork(vs);
        release(held);
        refused += c == NULL;
        if (c) {
            uint64_t v = 0;
            KCHECK(uvm_read(c, priv + 5 * PGSIZE, &v, sizeof v) == 0 && v == 5);
            vmspace_put(c);
        }
        size_t after = fst_free_pages();
        if (after != before)
            kprintf("# fork with %zu pages free: %zu pages free before, %zu after\n", keep,
                    before, after);
        KCHECK_EQ(after, before);
        if ((made = c != NULL))
            break;
    }
    KCHECK(refused > 0);
    KCHECK(made);
    for (uint64_t i = 0; i < 64; i++) {
        uint64_t v = ~0ULL;
        KCHECK(uvm_read(vs, priv + i * PGSIZE, &v, sizeof v) == 0 && v == i);
    }
    vmspace_put(vs);
}

// posix_spawn's kernel path (an embedded image) and exec's (a file in ScaleFS)
// at each shortage: -ENOMEM, or a process that runs (and may be killed for
// want of memory); either way every page comes back once it is gone.
static int spawn_hello(bool from_file, int *status)
{
    const struct user_program *prog = user_program_find("hello");
    const char *argv[] = {"hello", NULL};
    struct proc *p;
    caps[0] = (struct capture){.buf = outbuf[0], .cap = sizeof outbuf[0] - 1};
    spin_init(&caps[0].lock, "capture");
    int err = from_file ? proc_spawn_file("/bin/true", argv, NULL, 0, &p)
                        : proc_spawn("hello", prog->start, prog->len, argv, NULL, NULL, &caps[0], &p);
    *status = err ? -1 : proc_wait_kernel(p);
    return err;
}

static void spawn_at_every_shortage(bool from_file)
{
    int st, refused = 0;
    KREQUIRE(user_program_find("hello"));
    KREQUIRE(spawn_hello(from_file, &st) == 0 && st == 0); // makes what is kept once made
    size_t before = fst_free_pages();
    bool ran = false;
    FOR_EACH_SHORTAGE(keep) {
        void *held = hold_all_but(keep);
        int err = spawn_hello(from_file, &st);
        release(held);
        KCHECK(err == 0 || err == -ENOMEM);
        KCHECK(err || st == 0 || st == OOM_KILLED);
        refused += err == -ENOMEM;
        size_t after = fst_free_pages();
        if (after != before)
            kprintf("# spawn with %zu pages free: %zu pages free before, %zu after\n", keep,
                    before, after);
        KCHECK_EQ(after, before);
        if ((ran = err == 0 && st == 0))
            break;
    }
    KCHECK(refused > 0); // with no page free, at least, the spawn itself fails
    KCHECK(ran);
}

KTEST(oom_spawn_at_every_shortage_leaves_nothing) { spawn_at_every_shortage(false); }
KTEST(oom_exec_at_every_shortage_leaves_nothing) { spawn_at_every_shortage(true); }
