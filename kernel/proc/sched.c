// The scheduler: one run queue per CPU, time slicing from the timer, stealing by
// idle CPUs, timed sleeps, and the context-switch protocol.
//
// Commute: creating, waking, yielding and switching threads on different CPUs.
// Each CPU's run queue, sleep list, counters and current/idle pointers are
// per-CPU data (DEFINE_PERCPU) on that CPU's own pages; a thread starts and is
// woken on the CPU it last ran on, so a CPU normally touches only its own queue.
// Another CPU's queue is read only (1) by a waker whose sleeper last ran there,
// and (2) by an idle CPU looking for work to steal -- never by a busy one --,
// which reads only the count of threads it could take, on a line of its own,
// and locks the queue only if there is one. There is no global lock.
//
// State protocol (struct thread.state): only a thread itself leaves T_RUNNING
// (to T_RUNNABLE when preempted or yielding, T_SLEEPING before it blocks,
// T_ZOMBIE when it exits). A waker moves T_SLEEPING -> T_RUNNABLE with
// compare-and-swap and queues the thread; exactly one party wins, so a thread is
// queued at most once. A thread may be queued while it is still finishing its
// switch away on its old CPU; `on_cpu` stays set until the next thread on that
// CPU has taken over the stack, and a CPU about to run a thread waits for it to
// clear before it marks the thread T_RUNNING (switch_to): until then the thread
// must still see itself T_RUNNABLE, the sign that it has to give up its CPU.
// Idle CPUs halt; every CPU's boot context is its idle thread.
#include "mm/mm.h"
#include "mm/tlb.h"
#include "mm/uvm.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "proc/tickless.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "sync/seqlock.h"
#include "syscall/syscall.h"
#include "uapi/errno.h"
#include "x86/smp.h"
#include "x86/trap.h"
#include "x86/x86.h"

// [l] the queue's lock, [r] also read without it, [p] only its CPU writes
// (docs/conventions.md).
struct runq {
    struct spinlock lock;
    struct list threads;  // [l] struct thread.rq_link, FIFO
    int n;                // [l,r]
    uint64_t switches;    // [p,r]
    uint64_t steals;      // [p,r]
    // Of the queued threads, those another CPU may run: what an idle CPU looking
    // for work reads, on a line of its own that queuing and switching threads
    // pinned here never write (a store to a line others read since moves it).
    int mobile __cacheline_aligned; // [l,r]
} __cacheline_aligned;

struct sleepq {
    struct spinlock lock;
    struct list threads;  // [l] struct thread.timer_link, by wake_ns
};

// What each CPU's tick finds: CPU time by mode (/proc/stat, top) and the load
// average (/proc/loadavg). Only the CPU itself writes its copy; readers sum
// every CPU's at read time, so ticks on different CPUs share no line.
enum { TICK_USER, TICK_SYSTEM, TICK_IDLE };
struct cpuload {
    uint64_t ticks[3];    // [p,r] by TICK_*
    uint64_t avg[3];      // [p,r] 1, 5, 15 minutes; SCHED_LOAD_SHIFT fraction bits
    uint32_t since_avg;   // [p] ticks since avg was last updated
    // Tickless idle: while the tick is stopped, the idle time since stopped_at
    // is counted by readers; the sequence covers stopping and waking.
    uint32_t seq;         // [p,r]
    uint64_t stopped_at;  // [p,r] nsec_now() when the tick stopped; 0 while it runs
} __cacheline_aligned;

static DEFINE_PERCPU(struct runq, runq);
static DEFINE_PERCPU(struct cpuload, cpuload);
static DEFINE_PERCPU(struct sleepq, sleepq);
static DEFINE_PERCPU(struct thread *, cur_thread);
static DEFINE_PERCPU(struct thread *, prev_thread); // for sched_finish_switch
static DEFINE_PERCPU(struct thread, idle_thread);
static DEFINE_PERCPU(bool, sched_ready);
DEFINE_PERCPU(bool, cpu_idle); // read by wakers on other CPUs: send an IPI?

static void resched_ipi(struct trapframe *tf);

// The first time the scheduler runs on a CPU, the context running there (kmain on
// the boot CPU, the idle loop in ap_main elsewhere) becomes that CPU's idle thread.
static void cpu_sched_init(void)
{
    struct runq *rq = this_cpu_ptr(&runq);
    struct sleepq *sq = this_cpu_ptr(&sleepq);
    struct thread *idle = this_cpu_ptr(&idle_thread);
    spin_init(&rq->lock, "runq");
    list_init(&rq->threads);
    spin_init(&sq->lock, "sleepq");
    list_init(&sq->threads);
    idle->state = T_RUNNING;
    idle->on_cpu = 1;
    idle->cpu = cpu_id();
    idle->is_idle = true;
    idle->refs = 1;
    cpumask_set(&idle->affinity, cpu_id());
    list_init(&idle->rq_link);
    list_init(&idle->wq_link);
    list_init(&idle->timer_link);
    waitq_init(&idle->exit_wq, "idle");
    ksnprintf(idle->name, sizeof idle->name, "idle%d", cpu_id());
    this_cpu_write(cur_thread, idle);
    this_cpu_write(cpu_idle, true);
    this_cpu_write(sched_ready, true);
}

void sched_init(void)
{
    irq_register(T_RESCHED, resched_ipi);
    push_off();
    cpu_sched_init();
    pop_off();
}

void sched_init_cpu(void) { thread_current(); }

struct thread *thread_current(void)
{
    if (!this_cpu_read(sched_ready)) {
        push_off();
        if (!this_cpu_read(sched_ready))
            cpu_sched_init();
        pop_off();
    }
    return this_cpu_read(cur_thread);
}

uint64_t sched_switches(int c) { return READ_ONCE(per_cpu_ptr(&runq, c)->switches); }
uint64_t sched_steals(int c) { return READ_ONCE(per_cpu_ptr(&runq, c)->steals); }
int sched_queued(int c) { return READ_ONCE(per_cpu_ptr(&runq, c)->n); }
int sched_mobile(int c) { return READ_ONCE(per_cpu_ptr(&runq, c)->mobile); }

// ---- run queues ---------------------------------------------------------------

// Where a runnable thread should wait: its last CPU if allowed (its cache is warm
// there, and the queue is likely that CPU's own), else the first allowed one.
static int target_cpu(struct thread *t)
{
    if (cpumask_test(&t->affinity, t->cpu) && cpumask_test(&cpu_online_mask, t->cpu))
        return t->cpu;
    for_each_cpu(c, &t->affinity)
        if (cpumask_test(&cpu_online_mask, c))
            return c;
    return t->cpu; // no allowed CPU is online: wait where it is
}

// May t run on a CPU other than c? A thread pinned to its CPU (a benchmark's
// workers and their children) may not: no other CPU need look at it.
static bool runs_elsewhere(const struct thread *t, int c)
{
    for (int i = 0; i < CPUMASK_WORDS; i++) {
        uint64_t w = t->affinity.w[i];
        if (c / 64 == i)
            w &= ~(1ULL << (c % 64));
        if (w)
            return true;
    }
    return false;
}

static void enqueue_on(struct thread *t, int c)
{
    struct runq *rq = per_cpu_ptr(&runq, c);
    // A thread is on at most one queue, and never once it has exited: catch a
    // double enqueue here, where the culprit is on the stack.
    if (!list_empty(&t->rq_link) || t->state == T_ZOMBIE)
        panic("enqueue_on: %s already queued or gone (state %d)", t->name, t->state);
    t->cpu = c;
    spin_lock(&rq->lock);
    list_push_back(&rq->threads, &t->rq_link);
    int waiting = ++rq->n;
    bool mobile = runs_elsewhere(t, c);
    if (mobile) // (no store otherwise: stealers read this line)
        rq->mobile++;
    spin_unlock(&rq->lock);
    // An idle CPU is halted; tell it (this one too: its idle loop may be about to
    // halt again, and the IPI fires as soon as it enables interrupts). A busy CPU
    // notices at its next tick. The fence orders our push before the cpu_idle
    // read; a CPU going idle orders its cpu_idle store before its last look at
    // its queue (go_idle), so one of the two sees the other.
    fence();
    if (READ_ONCE(*per_cpu_ptr(&cpu_idle, c)))
        lapic_send_ipi(cpu_apicid[c], T_RESCHED);
    else if (waiting >= 2 && mobile)
        // Work piles up behind a busy CPU's thread: a CPU whose tick stopped
        // would not steal it. One thread alone waits for the next switch (a
        // child behind a parent that is about to wait for it, usually), and a
        // thread pinned here could go nowhere else: then the enqueue reads no
        // line that stopping and waking CPUs write.
        tickless_kick(&t->affinity);
}

void sched_enqueue(struct thread *t)
{
    push_off(); // cpu_id() must not change under us
    enqueue_on(t, target_cpu(t));
    pop_off();
}

bool thread_wake(struct thread *t)
{
    int want = T_SLEEPING;
    if (!cas_fail_relaxed(&t->state, &want, T_RUNNABLE))
        return false;
    sched_enqueue(t);
    return true;
}

// Next thread from this CPU's queue that may run here. A thread whose affinity
// changed while it waited is sent on to an allowed CPU.
static struct thread *dequeue_local(void)
{
    struct runq *rq = this_cpu_ptr(&runq);
    int me = cpu_id();
    struct thread *strays = NULL, *t = NULL;
    spin_lock(&rq->lock);
    while (!list_empty(&rq->threads)) {
        t = list_entry(rq->threads.next, struct thread, rq_link);
        list_remove(&t->rq_link);
        rq->n--;
        if (runs_elsewhere(t, me))
            rq->mobile--;
        if (cpumask_test(&t->affinity, me))
            break;
        t->rq_link.next = (struct list *)strays; // reuse the link as a stack
        strays = t;
        t = NULL;
    }
    spin_unlock(&rq->lock);
    while (strays) {
        struct thread *s = strays;
        strays = (struct thread *)s->rq_link.next;
        list_init(&s->rq_link);
        enqueue_on(s, target_cpu(s));
    }
    return t;
}

// An idle CPU takes one thread that may run here from the first other queue that
// has work. Busy CPUs never look at other queues. A thread still on its CPU (woken
// before it switched away) is left alone: that CPU resumes it in a moment, while
// we would only wait for it with interrupts off. A queue with no thread that
// could run elsewhere is passed over by reading only its `mobile` line: the
// rest of the queue is written at every switch of its CPU.
static bool steal(void)
{
    int me = cpu_id();
    for (int i = 1; i < ncpu; i++) {
        int c = (me + i) % ncpu;
        struct runq *rq = per_cpu_ptr(&runq, c);
        if (!cpumask_test(&cpu_online_mask, c) || READ_ONCE(rq->mobile) == 0)
            continue;
        if (!spin_trylock(&rq->lock))
            continue;
        struct thread *got = NULL;
        list_for_each(it, &rq->threads) {
            struct thread *t = list_entry(it, struct thread, rq_link);
            if (cpumask_test(&t->affinity, me) && !load_relaxed(&t->on_cpu)) {
                got = t;
                break;
            }
        }
        if (got) {
            list_remove(&got->rq_link);
            rq->n--;
            rq->mobile--; // it may run here, which is not c
        }
        spin_unlock(&rq->lock);
        if (got) {
            this_cpu_inc(runq.steals);
            enqueue_on(got, me);
            return true;
        }
    }
    return false;
}

// ---- switching ----------------------------------------------------------------

static void switch_to(struct thread *prev, struct thread *next)
{
    // next may still be leaving its previous CPU (see on_cpu above). Only once it
    // has left may we claim it: T_RUNNING is what tells a thread that was woken
    // before it switched away (waitq_finish, futex_wait: T_RUNNABLE) that it must
    // still give up its CPU. Marked running early, it would run on there while
    // we wait here, and both CPUs would end up running it on one stack.
    while (load_acquire(&next->on_cpu))
        pause();
    // next's stack may be in a slot given back and mapped again (kstack.c):
    // drop any entry this CPU kept of the slot's old pages before using it.
    tlb_kernel_flush_now();
    next->state = T_RUNNING;
    next->on_cpu = 1;
    next->cpu = cpu_id();
    this_cpu_write(cur_thread, next);
    this_cpu_write(cpu_idle, next->is_idle);
    this_cpu_write(prev_thread, prev);
    this_cpu_inc(runq.switches);
    if (next->kstack)
        syscall_set_kstack(next->kstack_top);
    if (next->vm != prev->vm)
        uvm_switch(prev->vm, next->vm);
    if (prev->fpu)
        fpu_save(prev);
    // The kernel runs with swapgs done: the user GS base waits in
    // MSR_KERNEL_GS_BASE until the return to user mode swaps it back in.
    if (next->proc) {
        wrmsr(MSR_FS_BASE, next->fsbase);
        wrmsr(MSR_KERNEL_GS_BASE, next->gsbase);
    }
    if (next->fpu)
        fpu_restore(next);
    swtch(&prev->rsp, next->rsp);
    sched_finish_switch();
}

// Runs on the incoming thread: the outgoing one is now off this CPU's stack.
void sched_finish_switch(void)
{
    struct thread *prev = this_cpu_read(prev_thread);
    bool zombie = prev->state == T_ZOMBIE;
    bool migrate = prev->migrate && prev->state == T_RUNNABLE;
    if (migrate)
        prev->migrate = false;
    store_release(&prev->on_cpu, 0);
    if (migrate)
        sched_enqueue(prev); // to a CPU its new affinity allows
    if (zombie)
        thread_release_stack(prev);
}

// Nothing queued here: the idle thread runs next, unless work arrived meanwhile.
// An enqueuer that read cpu_idle before we set it sent no IPI, so look once more
// after setting it; without that look the work would wait for the next tick.
static struct thread *go_idle(void)
{
    this_cpu_write(cpu_idle, true);
    fence();
    struct thread *next = READ_ONCE(this_cpu_ptr(&runq)->n) ? dequeue_local() : NULL;
    return next ? next : this_cpu_ptr(&idle_thread);
}

// Switch to the next thread. A preempted thread stays runnable even if it had
// marked itself T_SLEEPING (between waitq_prepare and its own schedule()): it has
// not checked its condition yet, and a wake-up may already have gone by.
static void do_schedule(bool preempted)
{
    bool was_on = read_rflags() & RFLAGS_IF;
    cli();
    assert_no_locks_held("context switch");
    if (this_cpu_read(cpu.irq_depth) != 0)
        panic("schedule with interrupts pushed off (depth %d)", this_cpu_read(cpu.irq_depth));
    struct thread *prev = thread_current();
    int sleeping = T_SLEEPING;
    if (preempted && !prev->is_idle)
        cas_fail_relaxed(&prev->state, &sleeping, T_RUNNING);
    if (!prev->is_idle && prev->state == T_RUNNING) {
        prev->state = T_RUNNABLE;
        if (cpumask_test(&prev->affinity, cpu_id()))
            enqueue_on(prev, cpu_id());
        else
            prev->migrate = true; // queued elsewhere once it is off this CPU
    }
    struct thread *next = dequeue_local();
    if (!next)
        next = go_idle();
    if (next != prev)
        switch_to(prev, next);
    else
        prev->state = T_RUNNING;
    if (was_on)
        sti();
}

void schedule(void) { do_schedule(false); }
void sched_yield(void) { do_schedule(false); }

int thread_set_affinity(struct thread *t, const cpumask_t *m)
{
    cpumask_t allowed = *m;
    bool any = false;
    for (int i = 0; i < CPUMASK_WORDS; i++) {
        allowed.w[i] &= cpu_online_mask.w[i];
        any |= allowed.w[i] != 0;
    }
    if (!any)
        return -EINVAL;
    assert(t == thread_current());
    push_off();
    t->affinity = allowed;
    bool move = !cpumask_test(&allowed, cpu_id());
    pop_off();
    if (move)
        schedule(); // never returns on a CPU outside the new mask
    return 0;
}

// ---- timer --------------------------------------------------------------------

// A sleeper may be woken before its deadline (a wake-up from a wait queue, a
// signal, a preemption while it was marked sleeping): it then takes itself off
// the sleep list, so a thread is on at most one sleep list at a time.
bool schedule_until(uint64_t deadline)
{
    struct thread *t = thread_current();
    bool was_on = read_rflags() & RFLAGS_IF;
    cli();
    struct sleepq *sq = this_cpu_ptr(&sleepq);
    spin_lock(&sq->lock);
    t->wake_ns = deadline;
    t->sleep_cpu = cpu_id();
    struct list *pos = &sq->threads;
    list_for_each(it, &sq->threads) {
        if (list_entry(it, struct thread, timer_link)->wake_ns > deadline) {
            pos = it;
            break;
        }
    }
    list_insert_before(pos, &t->timer_link);
    spin_unlock(&sq->lock);
    schedule();
    sq = per_cpu_ptr(&sleepq, t->sleep_cpu);
    spin_lock(&sq->lock);
    if (!list_empty(&t->timer_link))
        list_remove(&t->timer_link);
    spin_unlock(&sq->lock);
    if (was_on)
        sti();
    return nsec_now() < deadline;
}

void sched_sleep_until(uint64_t deadline)
{
    struct thread *t = thread_current();
    store_seqcst(&t->state, T_SLEEPING);
    schedule_until(deadline);
}

// Also not between waitq_prepare and schedule (a sleep of ours would undo the
// prepared one), nor in a CPU's idle context.
bool sched_may_sleep(void)
{
    if (!(read_rflags() & RFLAGS_IF) || this_cpu_read(cpu.preempt_depth) > 0 ||
        this_cpu_read(cpu.locks_held) > 0)
        return false;
    struct thread *t = thread_current();
    return !t->is_idle && !t->wq && load_relaxed(&t->state) == T_RUNNING;
}



static void wake_expired(void)
{
    struct sleepq *sq = this_cpu_ptr(&sleepq);
    if (list_empty(&sq->threads))
        return;
    uint64_t now = nsec_now();
    spin_lock(&sq->lock);
    while (!list_empty(&sq->threads)) {
        struct thread *t = list_entry(sq->threads.next, struct thread, timer_link);
        if (t->wake_ns > now)
            break;
        list_remove(&t->timer_link); // leaves it self-linked: "not on a list"
        thread_wake(t);
    }
    spin_unlock(&sq->lock);
}

// Should this CPU switch now? Idle: if there is work (stealing some if needed).
// Busy: if someone else is waiting here, or the thread may no longer run here.
static bool want_switch(struct thread *cur)
{
    if (cur->is_idle)
        return READ_ONCE(this_cpu_ptr(&runq)->n) > 0 || steal();
    return READ_ONCE(this_cpu_ptr(&runq)->n) > 0 || !cpumask_test(&cur->affinity, cpu_id());
}

// Interrupts are off.
static void maybe_preempt(void)
{
    // The interrupted code asked not to be preempted (or is inside an epoch read
    // section): it keeps the CPU until its outermost preempt_enable.
    if (this_cpu_read(cpu.preempt_depth) > 0 || this_cpu_read(cpu.locks_held) > 0) {
        this_cpu_write(cpu.resched_pending, true);
        return;
    }
    this_cpu_write(cpu.resched_pending, false);
    if (want_switch(thread_current()))
        do_schedule(true);
}

// From preempt_enable (and user_return) when a tick or IPI was deferred. With
// interrupts off the caller is still in a critical section: leave the request
// pending for the next tick or the return to user mode.
void sched_preempt_pending(void)
{
    if (!(read_rflags() & RFLAGS_IF) || this_cpu_read(cpu.preempt_depth) > 0)
        return;
    cli();
    maybe_preempt();
    sti();
}

// Linux's load average: every 5 s, avg = avg * e + n * (1 - e) with
// e = exp(-5 s / 1, 5, 15 min) in SCHED_LOAD_SHIFT-bit fixed point, n the
// threads running or queued. Each CPU averages its own n; the sum is the
// machine's (the average is linear in n).
#define LOAD_INTERVAL (5 * TIMER_HZ)
static const uint64_t load_exp[3] = {1884, 2014, 2037};

static void account_tick(struct trapframe *tf, struct thread *t)
{
    struct cpuload *l = this_cpu_ptr(&cpuload);
    bool user = tf && (tf->cs & 3) == 3;
    int mode = t->is_idle ? TICK_IDLE : user ? TICK_USER : TICK_SYSTEM;
    WRITE_ONCE(l->ticks[mode], l->ticks[mode] + 1);
    if (!t->is_idle) {
        if (user)
            WRITE_ONCE(t->utime, t->utime + 1);
        else
            WRITE_ONCE(t->stime, t->stime + 1);
    }
    if (++l->since_avg < LOAD_INTERVAL)
        return;
    l->since_avg = 0;
    uint64_t n = (uint64_t)(READ_ONCE(this_cpu_ptr(&runq)->n) + !t->is_idle) << SCHED_LOAD_SHIFT;
    for (int i = 0; i < 3; i++) {
        uint64_t e = load_exp[i], one = 1u << SCHED_LOAD_SHIFT;
        WRITE_ONCE(l->avg[i], (l->avg[i] * e + n * (one - e)) >> SCHED_LOAD_SHIFT);
    }
}

// avg after n intervals with nothing running (a stopped tick's).
static uint64_t decayed(uint64_t avg, int i, uint64_t n)
{
    for (uint64_t k = 0; k < n && avg; k++) // 0 within a few thousand
        avg = avg * load_exp[i] >> SCHED_LOAD_SHIFT;
    return avg;
}

void sched_cpu_ticks(int c, uint64_t out[3])
{
    struct cpuload *l = per_cpu_ptr(&cpuload, c);
    uint32_t seq;
    uint64_t stopped_at;
    do {
        seq = seqcount_read_begin(&l->seq);
        for (int i = 0; i < 3; i++)
            out[i] = READ_ONCE(l->ticks[i]);
        stopped_at = READ_ONCE(l->stopped_at);
    } while (seqcount_read_retry(&l->seq, seq));
    if (stopped_at) // idle since, uncounted until it wakes
        out[TICK_IDLE] += (nsec_now() - stopped_at) / TICK_NS;
}

void sched_loadavg(uint64_t avg[3], int *running)
{
    avg[0] = avg[1] = avg[2] = 0;
    *running = 0;
    for (int c = 0; c < NCPU_MAX; c++) {
        if (!READ_ONCE(percpu_offset[c]))
            continue;
        struct cpuload *l = per_cpu_ptr(&cpuload, c);
        uint64_t stopped_at = READ_ONCE(l->stopped_at), n = 0; // decays it has yet to make
        if (stopped_at)
            n = (nsec_now() - stopped_at) / TICK_NS / LOAD_INTERVAL;
        for (int i = 0; i < 3; i++)
            avg[i] += decayed(READ_ONCE(l->avg[i]), i, n);
        bool idle = READ_ONCE(*per_cpu_ptr(&cpu_idle, c));
        *running += READ_ONCE(per_cpu_ptr(&runq, c)->n) + !idle;
    }
}

// Tickless idle (proc/tickless.c), interrupts off. May this CPU stop its
// tick: nothing queued here; *wake is the earliest timed sleeper's deadline
// (UINT64_MAX if none). Only threads on this CPU join its sleep list.
bool sched_may_stop_tick(uint64_t *wake)
{
    if (READ_ONCE(this_cpu_ptr(&runq)->n))
        return false;
    struct sleepq *sq = this_cpu_ptr(&sleepq);
    *wake = UINT64_MAX;
    spin_lock(&sq->lock);
    if (!list_empty(&sq->threads))
        *wake = list_entry(sq->threads.next, struct thread, timer_link)->wake_ns;
    spin_unlock(&sq->lock);
    return true;
}

void sched_tick_stopped(uint64_t now)
{
    struct cpuload *l = this_cpu_ptr(&cpuload);
    seqcount_write_begin(&l->seq);
    WRITE_ONCE(l->stopped_at, now);
    seqcount_write_end(&l->seq);
}

// The ticks a stopped tick did not take: idle time, and the load average's
// decay toward 0 over the intervals that passed.
void sched_tick_restarted(void)
{
    struct cpuload *l = this_cpu_ptr(&cpuload);
    uint64_t ticks = (nsec_now() - l->stopped_at) / TICK_NS;
    seqcount_write_begin(&l->seq);
    WRITE_ONCE(l->ticks[TICK_IDLE], l->ticks[TICK_IDLE] + ticks);
    WRITE_ONCE(l->stopped_at, 0);
    seqcount_write_end(&l->seq);
    uint64_t intervals = (l->since_avg + ticks) / LOAD_INTERVAL;
    l->since_avg = (l->since_avg + ticks) % LOAD_INTERVAL;
    for (int i = 0; i < 3; i++)
        WRITE_ONCE(l->avg[i], decayed(l->avg[i], i, intervals));
}

void sched_tick(struct trapframe *tf)
{
    account_tick(tf, thread_current()); // adopts the idle context on first use
    wake_expired();
    maybe_preempt();
}

static void resched_ipi(struct trapframe *tf)
{
    (void)tf;
    lapic_eoi();
    thread_current();
    maybe_preempt();
}
