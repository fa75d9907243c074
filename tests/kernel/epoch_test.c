// Tests for epoch-based reclamation: grace periods wait for readers, every
// deferred callback runs exactly once, readers never see freed objects, and an
// epoch held up as long as the hang detector's limit is reported.
#include "ktest/ktest.h"
#include "proc/hangcheck.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/cpumask.h"
#include "sync/epoch.h"
#include "sync/percpu.h"
#include "sync/xcall.h"
#include "x86/smp.h"
#include "x86/x86.h"

struct counted_cb {
    struct epoch_cb cb;
    volatile int *runs;
};

static void count_run(struct epoch_cb *cb)
{
    struct counted_cb *c = container_of(cb, struct counted_cb, cb);
    fetch_add(c->runs, 1);
}

// Wait (interrupts on) until *p == want or ms pass; true if reached.
static bool wait_for(volatile int *p, int want, uint64_t ms)
{
    uint64_t end = nsec_now() + ms * 1000000;
    while (READ_ONCE(*p) != want && nsec_now() < end)
        hlt();
    return READ_ONCE(*p) == want;
}

KTEST(epoch_callback_runs_after_grace_period)
{
    volatile int runs = 0;
    struct counted_cb c = {.runs = &runs};
    uint64_t e0 = epoch_current();
    epoch_defer(&c.cb, count_run);
    KCHECK_EQ(runs, 0); // not before a grace period
    epoch_barrier();
    KCHECK_EQ(runs, 1);
    KCHECK(epoch_current() >= e0 + 2);
}

KTEST(epoch_synchronize_advances_two_epochs)
{
    uint64_t e0 = epoch_current();
    epoch_synchronize();
    KCHECK(epoch_current() >= e0 + 2);
}

// A reader on another CPU holds the grace period open.
static volatile int reader_state; // 0 idle, 1 inside, 2 told to leave

// xcall handlers run with interrupts off; turn them on so the reader's CPU keeps
// taking timer ticks, and it is the read section alone that holds the epoch.
static void long_reader(void *arg)
{
    (void)arg;
    sti();
    epoch_enter();
    WRITE_ONCE(reader_state, 1);
    while (READ_ONCE(reader_state) != 2)
        pause();
    epoch_exit();
    cli();
    WRITE_ONCE(reader_state, 0);
}

KTEST(epoch_reader_blocks_reclamation)
{
    if (ncpu_online < 2) {
        kprintf("# needs 2 CPUs; nothing to check\n");
        return;
    }
    cpumask_t one;
    cpumask_clear(&one);
    cpumask_set(&one, 1);
    reader_state = 0;
    xcall(&one, long_reader, NULL, false);
    while (READ_ONCE(reader_state) != 1)
        pause();

    volatile int runs = 0;
    struct counted_cb c = {.runs = &runs};
    epoch_defer(&c.cb, count_run);
    uint64_t e0 = epoch_current();
    KCHECK(!wait_for(&runs, 1, 200)); // 20 ticks: would be plenty without the reader
    KCHECK(epoch_current() <= e0 + 1);

    WRITE_ONCE(reader_state, 2);
    while (READ_ONCE(reader_state) != 0)
        pause();
    KCHECK(wait_for(&runs, 1, 5000));
}

// Readers on every CPU follow a shared pointer while CPU 0 replaces the object
// and defers poisoning the old one: a reader must never find a poisoned object.
#define LIVE 0x1111111111111111UL
#define DEAD 0xdeaddeaddeaddeadUL
#define NOBJ 64

struct obj {
    struct epoch_cb cb;
    volatile uint64_t magic;
};
static struct obj objs[NOBJ];
static struct obj *volatile current_obj;
static volatile int stop_readers, bad_reads, freed;
static volatile uint64_t reads;

static void poison(struct epoch_cb *cb)
{
    container_of(cb, struct obj, cb)->magic = DEAD;
    fetch_add(&freed, 1);
}

static void reader_loop(void *arg)
{
    (void)arg;
    uint64_t n = 0;
    sti(); // ticks must reach this CPU between read sections (see long_reader)
    while (!READ_ONCE(stop_readers)) {
        epoch_enter();
        struct obj *o = READ_ONCE(current_obj);
        for (int i = 0; i < 8; i++)
            if (o->magic != LIVE)
                fetch_add(&bad_reads, 1);
        epoch_exit();
        n++;
    }
    cli();
    fetch_add(&reads, n);
}

static void nop(void *arg) { (void)arg; }

KTEST(epoch_readers_never_see_freed_objects)
{
    stop_readers = bad_reads = freed = 0;
    reads = 0;
    for (int i = 0; i < NOBJ; i++)
        objs[i].magic = DEAD;
    objs[0].magic = LIVE;
    current_obj = &objs[0];

    cpumask_t others = cpu_online_mask;
    cpumask_unset(&others, cpu_id());
    xcall(&others, reader_loop, NULL, false);

    // Reuse an object only after its poisoning callback ran (freed counts them).
    int replaced = 0;
    for (int i = 1; i < NOBJ; i++) {
        struct obj *old = current_obj, *next = &objs[i];
        next->magic = LIVE;
        WRITE_ONCE(current_obj, next);
        epoch_defer(&old->cb, poison);
        replaced++;
        udelay(2000);
    }
    epoch_barrier();
    WRITE_ONCE(stop_readers, 1);
    // The readers finish their loops; a waiting xcall to all of them drains behind.
    xcall(&others, nop, NULL, true);
    KCHECK_EQ(bad_reads, 0);
    KCHECK_EQ(freed, replaced);
    kprintf("# %lu reads on %d CPUs\n", (unsigned long)reads, ncpu_online - 1);
}

// A reader that stays in its section holds the epoch back; after the hang
// detector's limit (1 s here) the boot CPU reports the stall. The reader is
// also a CPU that is never preemptible for that long: the hang detector's
// report of it goes to a hook that ignores it, not to a panic.
static void ignore_hang(int cpu, struct trapframe *tf, bool nmi) { (void)cpu, (void)tf, (void)nmi; }

static void stalling_reader(void *arg)
{
    uint64_t before = *(uint64_t *)arg, end = nsec_now() + 10000000000ULL;
    epoch_enter();
    while (epoch_stalls() == before && nsec_now() < end)
        pause();
    epoch_exit();
}

KTEST(epoch_stall_is_reported)
{
    if (ncpu_online < 2) {
        kprintf("# needs 2 CPUs; nothing to check\n");
        return;
    }
    uint32_t old = hangcheck_limit();
    hangcheck_configure(1, ignore_hang);
    static uint64_t before;
    before = epoch_stalls();
    cpumask_t one;
    cpumask_clear(&one);
    cpumask_set(&one, 1);
    struct thread *t = kthread_create("stalling reader", stalling_reader, &before, &one);
    KREQUIRE(t);
    thread_join(t);
    hangcheck_configure(old, NULL);
    KCHECK(epoch_stalls() > before);
}
