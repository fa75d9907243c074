// Threads: creation, exit and join. Kernel threads run a C function; user threads
// (proc.c) use the same machinery and enter user mode from their entry function.
//
// Scalability: creating, exiting and joining threads on different CPUs share no
// cache line: the thread structure and stack come from per-CPU allocator caches
// (kmalloc, kstack.c), kernel thread ids from per-CPU ranges, and a new thread is
// queued on its creator's CPU.
#include "lib/panic.h"
#include "mm/mm.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "x86/trap.h"
#include "x86/x86.h"

// Kernel threads get negative ids, -(CPU << 22 | that CPU's counter); user
// threads then get their pid (proc.c).
#define KTID_CPU_SHIFT 22
static DEFINE_PERCPU(uint32_t, ktid_counter);

static int ktid_alloc(void)
{
    preempt_disable();
    uint32_t n = this_cpu_read(ktid_counter) % ((1u << KTID_CPU_SHIFT) - 1) + 1; // wraps
    this_cpu_write(ktid_counter, n);
    int id = -(int)((uint32_t)cpu_id() << KTID_CPU_SHIFT | n);
    preempt_enable();
    return id;
}

// The frame swtch pops on a thread's first run (see swtch.S), placed so that %rsp
// is 16-byte aligned when thread_trampoline starts. The trapframe for a user
// thread sits above it, at the top of the stack, where the CPU and syscall entry
// build theirs.
struct first_frame {
    uint64_t r15, r14, r13, r12, rbx, rbp, rip, pad;
};

struct trapframe *thread_trapframe(struct thread *t)
{
    return (struct trapframe *)(t->kstack_top - sizeof(struct trapframe));
}

struct thread *thread_alloc(const char *name, void (*entry)(void *), void *arg, bool joinable)
{
    struct thread *t = kzalloc(sizeof *t);
    if (!t)
        return NULL;
    t->kstack = kstack_alloc();
    if (!t->kstack) {
        kfree(t);
        return NULL;
    }
    t->kstack_top = (uintptr_t)t->kstack + KSTACK_SIZE;
    strlcpy(t->name, name, sizeof t->name);
    t->state = T_RUNNABLE;
    t->refs = 1 + joinable;
    t->tid = ktid_alloc();
    list_init(&t->rq_link);
    list_init(&t->wq_link);
    list_init(&t->timer_link);
    waitq_init(&t->exit_wq, "thread exit");
    t->fn = entry;
    t->arg = arg;

    uintptr_t top = (uintptr_t)thread_trapframe(t);
    struct first_frame *f = (struct first_frame *)(top - sizeof *f - 8);
    memset(f, 0, sizeof *f);
    f->r12 = (uint64_t)entry;
    f->rbx = (uint64_t)arg;
    f->rip = (uint64_t)thread_trampoline;
    t->rsp = (uint64_t)f;
    return t;
}

void thread_start(struct thread *t, const cpumask_t *affinity)
{
    if (affinity)
        t->affinity = *affinity;
    else
        t->affinity = cpu_online_mask;
    push_off();
    t->cpu = cpu_id(); // target_cpu keeps it here if the affinity allows
    pop_off();
    sched_enqueue(t);
}

struct thread *kthread_create(const char *name, void (*fn)(void *), void *arg,
                              const cpumask_t *affinity)
{
    struct thread *t = thread_alloc(name, fn, arg, true);
    if (t)
        thread_start(t, affinity);
    return t;
}

int thread_kernel_trace(struct thread *t, uintptr_t *pcs, int max)
{
    if (load_acquire(&t->on_cpu) || !t->kstack)
        return 0;
    // swtch pushed rbp, rbx, r12-r15 below its return address: the frames go
    // on from the saved rbp. The thread may start running meanwhile and
    // rewrite them, so every address is checked against its stack.
    uintptr_t lo = (uintptr_t)t->kstack, hi = t->kstack_top, rsp = READ_ONCE(t->rsp);
    if (rsp < lo || rsp + 7 * sizeof(uintptr_t) > hi)
        return 0;
    uintptr_t *saved = (uintptr_t *)rsp, rbp = READ_ONCE(saved[5]);
    int n = 0;
    pcs[n++] = READ_ONCE(saved[6]);
    while (n < max && rbp >= lo && rbp + 2 * sizeof(uintptr_t) <= hi && !(rbp & 7)) {
        uintptr_t *frame = (uintptr_t *)rbp, ret = READ_ONCE(frame[1]), off;
        if (!symbol_lookup(ret, &off))
            break; // not kernel code: the bottom of the kernel's part
        pcs[n++] = ret;
        if (READ_ONCE(frame[0]) <= rbp)
            break; // frames go up the stack
        rbp = READ_ONCE(frame[0]);
    }
    return n;
}

void thread_put(struct thread *t)
{
    if (sub_fetch(&t->refs, 1) == 0) {
        if (t->fpu)
            fpu_free(t);
        kfree(t);
    }
}

// From sched_finish_switch on the CPU t exited on, once t's stack is unused.
void thread_release_stack(struct thread *t)
{
    kstack_free(t->kstack);
    t->kstack = NULL;
    store_release(&t->dead, true);
    waitq_wake_all(&t->exit_wq);
    thread_put(t);
}

void thread_exit(void)
{
    struct thread *t = thread_current();
    assert(!t->is_idle);
    cli();
    t->state = T_ZOMBIE;
    schedule();
    panic("thread_exit: zombie %s ran again", t->name);
}

void thread_join(struct thread *t)
{
    // The exiting side holds its own reference until it is done waking us, so
    // whichever of the two drops the last one frees t.
    wait_event(&t->exit_wq, load_acquire(&t->dead));
    thread_put(t);
}
