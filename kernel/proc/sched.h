// Threads, the per-CPU scheduler, wait queues and kernel stacks
// (thread.c, sched.c, waitq.c, kstack.c, swtch.S).
#pragma once
#include "kernel.h"
#include "lib/list.h"
#include "mm/mmu.h"
#include "sync/cpumask.h"
#include "sync/spinlock.h"

struct trapframe;
struct proc;
struct vmspace;

// A wait queue: threads sleeping until some condition holds. See wait_event.
struct waitq {
    struct spinlock lock;
    struct list waiters; // [l,r] struct thread.wq_link (r: "anyone waiting?")
};

enum thread_state {
    T_RUNNING,  // on a CPU (only the thread itself moves it out of this state)
    T_RUNNABLE, // on exactly one run queue, or about to be put on one by its waker,
                // or taken by a CPU that waits for it to leave its old one
    T_SLEEPING, // waiting for thread_wake
    T_ZOMBIE,   // exited; its CPU frees the stack once it has switched away
};

// Who may write each field (docs/conventions.md); readers need the same unless
// r says they may read without it:
//   [i] immutable once started         [a] atomic (sync/atomic.h), no lock
//   [t] the thread itself (or its creator before it starts)
//   [x] the switch protocol (sched.c): the thread while it runs, else the CPU
//       switching it out or in, or the waker that queued it
//   [q] its run queue's lock           [w] its wait queue's lock (wq)
//   [z] its sleep list's lock (sleep_cpu's)   [P] its process's lock
//   [r] also read without the lock, racily (READ_ONCE)
// What an interrupted call needs to go on (proc.h, ERESTART_RESTARTBLOCK): the
// function restart_syscall runs and its arguments, e.g. poll's absolute deadline.
struct restart_block {
    long (*fn)(struct restart_block *r);
    uint64_t arg[3];
};

struct thread {
    uint64_t rsp;          // [x] saved kernel stack pointer while switched out (swtch)
    int state;             // [a] enum thread_state; wake-ups move it with compare-and-swap
    int on_cpu;            // [a] 1 from switch-in until the next thread has taken over the CPU
    int cpu;               // [x,r] CPU it runs on, or last ran on, or whose queue holds it
    bool migrate;          // [x] its affinity no longer allows this CPU: move at the next switch
    bool is_idle;          // [i]
    cpumask_t affinity;    // [t,r]
    struct list rq_link;   // [q] on a run queue
    struct list wq_link;   // [w] on a wait queue
    struct waitq *wq;      // [w] the wait queue wq_link is on, or NULL
    struct list timer_link; // [z] on a CPU's sleep list
    uint64_t wake_ns;      // [z]
    void *kstack;          // [i] lowest mapped byte of the kernel stack
    uintptr_t kstack_top;  // [i]
    struct proc *proc;     // [i] NULL for kernel threads
    struct vmspace *vm;    // [t] user address space, NULL for kernel threads
    uint64_t fsbase;       // [t] user FS base (arch_prctl)
    uint64_t gsbase;       // [t] user GS base (arch_prctl): in MSR_KERNEL_GS_BASE while it runs
    int tid;               // [t]
    int refs;              // [a] the thread's own reference + one per joiner
    volatile bool dead;    // [a] off its CPU for good, stack freed: thread_join may return
    struct waitq exit_wq;
    void (*fn)(void *);    // [i]
    void *arg;             // [i]
    char name[16];         // [t]
    int sleep_cpu;         // [z] whose sleep list timer_link is on
    uint64_t utime, stime; // [t,r] ticks that found it running in user / kernel mode
    // User threads only (proc.c, signal.c, futex.c).
    struct list group_link; // [P] on proc->threads
    uint64_t clear_child_tid; // [t] CLONE_CHILD_CLEARTID / set_tid_address
    struct usig *sig;      // [t] signal state (signal.c); senders reach it under [P]
    struct childlist *children; // [P] those it created (proc.c); the thread reads its own
    struct fdtable *fdt;   // [t] its fd table and its reference to it (fdtable.h): shared
                           // with the threads and processes cloned with CLONE_FILES
    void *fpu;             // [i] user threads: FP/vector registers while switched out (fpu.c)
    // Written by the thread at every system call: a line of its own, away from
    // what signal senders and other threads read (sig, group_link, proc).
    long syscall_nr __cacheline_aligned; // [t] of the system call in progress (restarts)
    bool force_iret;       // [t] the next return to user mode restores every register
    struct restart_block restart; // [t] how restart_syscall continues (proc.h)
    bool ucopy_nomem;      // [t] a copy helper's fault found no memory (usercopy.c)
    // A kernel buffer the copy helpers take as this thread's memory while set
    // (usercopy_kio_begin): sendfile's bounce buffer.
    uint64_t kio_base;     // [t]
    size_t kio_len;        // [t] 0: none
    bool short_of_pages;   // [t] an allocation found no page (mm/page.c): see page_wait_if_short
    uint8_t oom_waits;     // [t] faults in a row waited out for want of pages (proc.c)
};

// thread.c
struct thread *thread_current(void);
// A new kernel thread running fn(arg), started at once. It runs on the creating
// CPU unless affinity (NULL = any CPU) excludes it. Joinable: call thread_join
// exactly once. NULL if out of memory.
struct thread *kthread_create(const char *name, void (*fn)(void *), void *arg,
                              const cpumask_t *affinity);
void thread_join(struct thread *t);  // wait for t to exit, then free it
void thread_exit(void) __noreturn;
// Allocate a thread whose first run starts at entry(arg), not yet started
// (user threads: proc.c). refs = 1 + joinable.
struct thread *thread_alloc(const char *name, void (*entry)(void *), void *arg, bool joinable);
void thread_start(struct thread *t, const cpumask_t *affinity);
void thread_put(struct thread *t);
// The return addresses on the kernel stack of t, a thread switched out (0
// if it runs), innermost first, at most max. t's stack must stay allocated
// meanwhile (its process locked, with t among its threads).
int thread_kernel_trace(struct thread *t, uintptr_t *pcs, int max);
void thread_release_stack(struct thread *t); // called by sched once t is off its CPU
// Bottom of a new thread's stack area reserved for its user trapframe.
struct trapframe *thread_trapframe(struct thread *t);

// sched.c
void sched_init(void);            // boot CPU, before any thread is created
void sched_init_cpu(void);        // every CPU, in its idle context, before threads exist
void schedule(void);              // give up the CPU; see the state protocol above
void sched_yield(void);
void sched_tick(struct trapframe *tf); // timer hook: timers, stealing, preemption
bool sched_may_stop_tick(uint64_t *wake); // tickless idle: nothing queued; next timed wake-up
void sched_tick_stopped(uint64_t now);    // tickless idle: this CPU's tick stops now,
void sched_tick_restarted(void);          // and runs again: account the idle time between
bool thread_wake(struct thread *t);    // T_SLEEPING -> T_RUNNABLE and queue it
void sched_enqueue(struct thread *t);  // queue a T_RUNNABLE thread
int thread_set_affinity(struct thread *t, const cpumask_t *m); // t must be current
void sched_sleep_until(uint64_t deadline_ns); // nsec_now() clock; may return early
bool sched_may_sleep(void);       // interrupts and preemption on, no spinlock held, no sleep prepared
// Give up the CPU like schedule() (the caller has marked itself T_SLEEPING, e.g.
// with waitq_prepare), but be woken at the deadline too. false: deadline passed.
bool schedule_until(uint64_t deadline_ns);

// fpu.c: user threads' FP/vector registers (fxsave, or xsave for what XCR0 enables).
void fpu_init(void);                   // once, at boot
int fpu_alloc(struct thread *t);       // the initial state; -1 if out of memory
void fpu_free(struct thread *t);
void fpu_save(struct thread *t);       // this CPU's registers into t's area
void fpu_restore(struct thread *t);
void fpu_reset_current(struct thread *t); // exec: initial state, loaded now
void sched_finish_switch(void);   // first thing a thread does after swtch
uint64_t sched_switches(int c);   // context switches on CPU c (tests)
uint64_t sched_steals(int c);     // threads CPU c stole while idle (tests)
int sched_queued(int c);           // threads waiting on CPU c's queue (tests)
int sched_mobile(int c);           // of them, threads another CPU may run (tests)
// Ticks (TIMER_HZ) CPU c spent in user mode, in the kernel, idle: out[0..2].
void sched_cpu_ticks(int c, uint64_t out[3]);
// Load averages over 1, 5 and 15 minutes, fixed point with SCHED_LOAD_SHIFT
// fraction bits, summed over CPUs; and the threads running or runnable now.
#define SCHED_LOAD_SHIFT 11
void sched_loadavg(uint64_t avg[3], int *running);
#define T_RESCHED 0xf1            // IPI: "your run queue got work"

// waitq.c
void waitq_init(struct waitq *q, const char *name);
void waitq_prepare(struct waitq *q); // link the current thread and mark it sleeping
void waitq_finish(struct waitq *q);  // unlink it and mark it running again
int waitq_wake_all(struct waitq *q); // returns the number woken
int waitq_wake_one(struct waitq *q);
// Sleep until cond is true. cond is re-evaluated after each wake-up; whoever makes
// it true must call waitq_wake_* afterwards.
#define wait_event(q, cond)                                                              \
    do {                                                                                 \
        for (;;) {                                                                       \
            waitq_prepare(q);                                                            \
            if (cond)                                                                    \
                break;                                                                   \
            schedule();                                                                  \
        }                                                                                \
        waitq_finish(q);                                                                 \
    } while (0)
// wait_event, but give up at deadline (nsec_now() clock; 0: never). Its value:
// whether cond held.
#define wait_event_until(q, cond, deadline)                                              \
    ({                                                                                   \
        uint64_t dl_ = (deadline);                                                       \
        bool ok_;                                                                        \
        for (;;) {                                                                       \
            waitq_prepare(q);                                                            \
            if ((ok_ = (cond)) || (dl_ && nsec_now() >= dl_))                            \
                break;                                                                   \
            if (dl_)                                                                     \
                schedule_until(dl_);                                                     \
            else                                                                         \
                schedule();                                                              \
        }                                                                                \
        waitq_finish(q);                                                                 \
        ok_;                                                                             \
    })

// kstack.c: kernel stacks in their own virtual region, each with an unmapped guard
// page below it.
#define KSTACK_PAGES 4
#define KSTACK_SIZE (KSTACK_PAGES * PGSIZE)
#define KSTACK_CACHE 8  // freed stacks kept per CPU
#define KSTACK_KEEP 16  // and on the shared overflow list; more are given back
void *kstack_alloc(void);     // lowest byte of the stack; NULL if out of memory
void kstack_free(void *stack);
void kstack_drop_cached(void); // give back every cached stack (drop_caches)
// Tests: freed stacks kept (caches and overflow list), and stacks given back
// whose pages wait for their grace period (racy reads).
int kstack_kept(void);
int kstack_going(void);
bool kstack_is_guard(uintptr_t va); // va is in a guard page (stack overflow)

// swtch.S
void swtch(uint64_t *save_rsp, uint64_t new_rsp);
void thread_trampoline(void);
void user_enter(struct trapframe *tf) __noreturn; // iretq to tf (interrupts off)
