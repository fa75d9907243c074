// Futexes against the address space's own machinery.
//
// A wait reads its word again under the bucket lock (a spinlock: interrupts
// off). A fork that makes the word's page copy-on-write clears the page's
// entries and, still holding its descriptor, shoots down the CPUs that had
// them. If that read faulted, the fault waited for the descriptor under the
// bucket lock, and a waker spinning on the lock with interrupts off never ran
// the shootdown: three CPUs waited for each other for good (the fuzzer's
// 8-vCPU hang of 90f85a3, a fork in a TLB shootdown that nobody answered).
#include "ktest/ktest.h"
#include "proc/proc.h"
#include "sync/atomic.h"
#include "syscall/syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "vmtest.h"

#define BASE 0x400000UL
#define RUN_NSEC 2000000000ULL

static struct vmspace *VS;
static int stop, started;
static uint64_t waits, bad_waits, wakes, bad_wakes;

// Waits that never sleep (the word is never 0xdeadbeef): each reads the word
// twice, the second time under the bucket lock.
static void waiter(void *arg)
{
    (void)arg;
    vmt_enter(VS);
    fetch_add_relaxed(&started, 1);
    while (!load_acquire(&stop)) {
        long r = sys_futex(BASE, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0xdeadbeef, 0, 0, 0);
        waits++;
        bad_waits += r != -EAGAIN;
    }
    vmt_leave(VS);
}

// Wakes of the same word (the same bucket), after a read that gives this CPU
// an entry for the page, so that the fork's shootdown includes it.
static void waker(void *arg)
{
    (void)arg;
    vmt_enter(VS);
    fetch_add_relaxed(&started, 1);
    while (!load_acquire(&stop)) {
        uint64_t v;
        if (!vmt_peek(BASE + 64, &v))
            bad_wakes++;
        long r = sys_futex(BASE, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, 0, 0, 0);
        wakes++;
        bad_wakes += r != 0;
    }
    vmt_leave(VS);
}

KTEST(futex_wait_against_fork_and_wake)
{
    if (ncpu_online < 3) {
        kprintf("# needs three CPUs: the fork, a waiter and a waker\n");
        return;
    }
    cpumask_t was = thread_current()->affinity, me;
    cpumask_clear(&me);
    cpumask_set(&me, 0);
    KREQUIRE(thread_set_affinity(thread_current(), &me) == 0);
    KREQUIRE((VS = vmspace_new()) != NULL);
    KCHECK_EQ(uvm_map(VS, BASE, PGSIZE, VM_READ | VM_WRITE, UVM_FIXED), (long)BASE);
    KCHECK_EQ(uvm_write(VS, BASE, "\1\0\0\0", 4), 0);
    stop = started = 0;
    waits = bad_waits = wakes = bad_wakes = 0;
    struct thread *w = vmt_on_cpu(1, "futex-wait", waiter, NULL);
    struct thread *k = vmt_on_cpu(2, "futex-wake", waker, NULL);
    KREQUIRE(w && k);
    while (load_acquire(&started) < 2)
        sched_yield();
    vmt_enter(VS);
    uint64_t forks = 0, end = nsec_now() + RUN_NSEC;
    while (nsec_now() < end) {
        // A write makes the page private and writable again, so that the next
        // fork clears every CPU's entry of it.
        KCHECK(vmt_touch(BASE + 8, forks));
        struct vmspace *c = vmspace_fork(VS);
        KCHECK(c != NULL);
        if (c)
            vmspace_put(c);
        forks++;
    }
    store_release(&stop, 1);
    thread_join(w);
    thread_join(k);
    vmt_leave(VS);
    vmspace_put(VS);
    kprintf("# %llu forks, %llu waits, %llu wakes\n", (unsigned long long)forks,
            (unsigned long long)waits, (unsigned long long)wakes);
    KCHECK(forks > 0 && waits > 0 && wakes > 0);
    KCHECK_EQ(bad_waits, 0);
    KCHECK_EQ(bad_wakes, 0);
    KCHECK_EQ(thread_set_affinity(thread_current(), &was), 0);
}
