// Signals: sending, delivery on the way back to user mode (Linux's rt_sigframe on
// the user stack), rt_sigreturn, default actions, and the signal system calls.
//
// Commute: signals sent to different processes, action changes in different
// processes, and mask changes and queries by any threads (rt_sigprocmask,
// sigsetjmp's query). A process's actions, its pending set and its threads'
// pending sets are under that process's own lock; nothing is shared between
// processes. A thread's blocked mask is written only by the thread itself, so
// changing or reading one's own mask takes no lock and writes nothing shared (no
// write at all when the mask does not change). Senders read masks under the
// lock; a sender and an unblocking thread cannot miss each other, because the
// thread looks at its pending signals on its way back to user mode anyway, and
// a thread that blocks a signal pending for the whole process hands it to
// another thread (fences on both sides, see set_blocked). A thread's own check
// for pending signals on every return to user mode reads only its own words and
// its process's pending word, without the lock. A thread's synchronous fault
// (SIGSEGV and friends, signal_force) and the delivery of its own pending
// signal to a handler take only the thread's own lock (usig.lock, which senders
// take inside the process lock) and read the action lock-free (act_seq), so
// faults in different threads of one process commute too. A signal its target
// ignores and its main thread does not block (the SIGCHLD of exiting children,
// by default) is discarded without the lock (discard_at_once), so children
// exiting on different CPUs write nothing of their parent's; so is one a thread
// sends itself while it ignores it and does not block it (SIGPIPE), so that
// writes to pipes without readers in two threads share nothing either.
//
// Init (proc.init) is protected as on Linux: a signal it has no handler for
// (SIG_DFL) is dropped when sent, SIGKILL and SIGSTOP included, unless the
// kernel itself sends one of those two (init_drops). So no process can kill or
// stop init, whether it names init (kill, tkill, tgkill) or its group (kill(0)
// or kill(-pgid) from init's group); the terminal's SIGINT and SIGTSTP pass it
// by too. Faults are not sends: init dies of an unhandled SIGSEGV like any
// process (signal_force), and the machine powers off (main.c).
//
// Standard and real-time signals alike are pending at most once (no queue of
// real-time signals). A stop signal's default action stops every thread of the
// process until SIGCONT (group stop); the parent's wait sees both.
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "mm/uvm.h"
#include "proc/proc.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "syscall/syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "uapi/unistd.h"
#include "x86/smp.h"
#include "x86/trap.h"
#include "x86/x86.h"

#define BIT(sig) (1UL << ((sig) - 1))
#define UNBLOCKABLE (BIT(SIGKILL) | BIT(SIGSTOP))
#define STOP_SIGNALS (BIT(SIGSTOP) | BIT(SIGTSTP) | BIT(SIGTTIN) | BIT(SIGTTOU))

struct usig *usig_alloc(void)
{
    struct usig *s = kzalloc(sizeof(struct usig));
    if (s)
        spin_init(&s->lock, "usig");
    return s;
}
static void usig_free_cb(struct epoch_cb *cb) { kfree(container_of(cb, struct usig, free_cb)); }

// Senders may still be reading blocked through proc.main_sig (discard_at_once).
void usig_free(struct usig *s)
{
    if (s)
        epoch_defer(&s->free_cb, usig_free_cb);
}

enum { ACT_TERM, ACT_CORE, ACT_IGN, ACT_STOP };

static int default_action(int sig)
{
    switch (sig) {
    case SIGCHLD: case SIGURG: case SIGWINCH: case SIGCONT:
        return ACT_IGN;
    case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
        return ACT_STOP;
    case SIGQUIT: case SIGILL: case SIGTRAP: case SIGABRT: case SIGBUS: case SIGFPE:
    case SIGSEGV: case SIGXCPU: case SIGXFSZ: case SIGSYS:
        return ACT_CORE;
    default:
        return ACT_TERM;
    }
}

// Would delivering sig do nothing? Locked.
static bool ignored(struct proc *p, int sig)
{
    if (sig == SIGKILL)
        return false;
    uint64_t h = p->sigactions[sig - 1].handler;
    if (h == SIG_IGN)
        return true;
    return h == SIG_DFL && default_action(sig) == ACT_IGN;
}

// Would sig sent to the current thread be ignored or stay blocked? (Job control:
// a background reader that cannot be stopped by SIGTTIN gets EIO instead.)
bool signal_ignored_or_blocked(int sig)
{
    struct thread *t = thread_current();
    spin_lock(&t->proc->lock);
    bool r = ignored(t->proc, sig) || (t->sig->blocked & BIT(sig));
    spin_unlock(&t->proc->lock);
    return r;
}

// Make sig pending for thread t with info (keeping an earlier instance's unless
// overwrite). Under t's own lock only.
static void thread_pend(struct thread *t, int sig, const struct ksiginfo *info, bool overwrite)
{
    struct usig *s = t->sig;
    spin_lock(&s->lock);
    if (overwrite || !(s->pending & BIT(sig)))
        s->info[sig - 1] = *info;
    WRITE_ONCE(s->pending, s->pending | BIT(sig));
    spin_unlock(&s->lock);
}

static void thread_unpend(struct thread *t, uint64_t set)
{
    struct usig *s = t->sig;
    spin_lock(&s->lock);
    WRITE_ONCE(s->pending, s->pending & ~set);
    spin_unlock(&s->lock);
}

// Take the signals in `set` off every pending set of p. Locked.
static void drop_pending(struct proc *p, uint64_t set)
{
    p->sigpending &= ~set;
    list_for_each(it, &p->threads)
        thread_unpend(list_entry(it, struct thread, group_link), set);
}

// Changes to p's actions, under p's lock, bracket themselves for lock-free readers.
static void act_write_begin(struct proc *p)
{
    WRITE_ONCE(p->act_seq, p->act_seq + 1);
    fence();
}

static void act_write_end(struct proc *p)
{
    fence_release();
    WRITE_ONCE(p->act_seq, p->act_seq + 1);
}

// n actions from signal first+1 on, without the lock; the sequence they were
// read at (even).
static uint32_t read_actions(struct proc *p, int first, int n, struct k_sigaction *out)
{
    for (;;) {
        uint32_t seq = READ_ONCE(p->act_seq);
        if (seq & 1) {
            pause();
            continue;
        }
        fence_acquire();
        memcpy(out, &p->sigactions[first], n * sizeof *out);
        fence_acquire();
        if (READ_ONCE(p->act_seq) == seq)
            return seq;
    }
}

// sig's action without the lock; the sequence it was read at (even).
static uint32_t read_action(struct proc *p, int sig, struct k_sigaction *act)
{
    return read_actions(p, sig - 1, 1, act);
}

struct k_sigaction signal_action(struct proc *p, int sig)
{
    struct k_sigaction a;
    read_action(p, sig, &a);
    return a;
}

// All of p's actions without the lock (posix_spawn's child starts from them).
void signal_copy_actions(struct proc *p, struct k_sigaction out[NSIG])
{
    read_actions(p, 0, NSIG, out);
}

// What sending sig does at once, whatever its action: SIGCONT resumes a stopped
// process and cancels pending stops; a stop cancels a pending SIGCONT. Locked;
// true if p was stopped (the caller reports it once unlocked).
static bool send_side_effects(struct proc *p, int sig)
{
    if (BIT(sig) & STOP_SIGNALS) {
        drop_pending(p, BIT(SIGCONT));
        return false;
    }
    if (sig != SIGCONT)
        return false;
    drop_pending(p, STOP_SIGNALS);
    bool was = p->stopped;
    p->stopped = false;
    waitq_wake_all(&p->stop_wq);
    return was;
}

static struct ksiginfo default_info(int sig)
{
    return (struct ksiginfo){.signo = sig, .code = SI_KERNEL};
}

// Get t to look at its signals soon: wake it if it sleeps, and interrupt its CPU
// if it runs user code elsewhere (the reschedule IPI enters the kernel, whose
// return to user mode delivers).
void signal_kick(struct thread *t)
{
    if (thread_wake(t))
        return;
    int c = READ_ONCE(t->cpu);
    if (READ_ONCE(t->state) == T_RUNNING && c != cpu_id())
        lapic_send_ipi(cpu_apicid[c], T_RESCHED);
}

static void send_thread_locked(struct thread *t, int sig, const struct ksiginfo *info)
{
    struct ksiginfo d = default_info(sig);
    thread_pend(t, sig, info ? info : &d, false);
    fence(); // pending before we read the mask
    if (!(READ_ONCE(t->sig->blocked) & BIT(sig)))
        signal_kick(t);
}

// One thread of p that does not block sig takes it; SIGKILL concerns them all.
// Locked, preemption off.
static void kick_one(struct proc *p, int sig)
{
    list_for_each(it, &p->threads) {
        struct thread *t = list_entry(it, struct thread, group_link);
        if (sig == SIGKILL || !(READ_ONCE(t->sig->blocked) & BIT(sig))) {
            signal_kick(t);
            if (sig != SIGKILL)
                break;
        }
    }
}

// Is the signal from user space (kill, tkill, tgkill: Linux's
// SI_FROMUSER), not from the kernel (SI_KERNEL, CLD_*, the default info)?
static bool from_user(const struct ksiginfo *info) { return info && info->code <= 0; }

// Does init drop sig (see the top)? Locked: reads the action.
static bool init_drops(struct proc *p, int sig, const struct ksiginfo *info)
{
    if (!p->init || p->sigactions[sig - 1].handler != SIG_DFL)
        return false;
    return from_user(info) || !(BIT(sig) & UNBLOCKABLE);
}

// Would sig be discarded at once, as ignored and not blocked by p's main thread
// (mine NULL) or by the calling thread (mine: its usig)? Decided without p's
// lock, so that the SIGCHLD of children exiting on different CPUs (ignored by
// default) writes nothing of the parent's, nor the SIGPIPEs of writes to pipes
// without readers in two threads of a process that ignores it: the action is
// read lock-free and must not have changed by the time we have read the mask
// (the main thread's usig stays allocated for a grace period after it leaves).
// Signals with side effects on sending always take the lock.
static bool discard_at_once(struct proc *p, int sig, struct usig *mine)
{
    if (sig == SIGKILL || sig == SIGCONT || (BIT(sig) & STOP_SIGNALS))
        return false;
    struct k_sigaction a;
    uint32_t seq = read_action(p, sig, &a);
    if (a.handler != SIG_IGN && !(a.handler == SIG_DFL && default_action(sig) == ACT_IGN))
        return false;
    epoch_enter();
    struct usig *s = mine ? mine : READ_ONCE(p->main_sig);
    bool discard = s && !(READ_ONCE(s->blocked) & BIT(sig));
    epoch_exit();
    fence_acquire();
    return discard && READ_ONCE(p->act_seq) == seq;
}

bool signal_discarded(struct proc *p, int sig) { return discard_at_once(p, sig, NULL); }

int signal_send_proc(struct proc *p, int sig, const struct ksiginfo *info)
{
    if (sig < 1 || sig > NSIG)
        return -EINVAL;
    if (discard_at_once(p, sig, NULL))
        return 0;
    push_off(); // signal_kick compares with this CPU
    spin_lock(&p->lock);
    bool continued = false;
    if (p->state == P_ZOMBIE || p->group_exiting || list_empty(&p->threads))
        goto out;
    continued = send_side_effects(p, sig);
    struct thread *main = list_entry(p->threads.next, struct thread, group_link);
    if (init_drops(p, sig, info))
        goto out;
    if (ignored(p, sig) && !(READ_ONCE(main->sig->blocked) & BIT(sig)))
        goto out; // discarded at once, as Linux does
    if (!(p->sigpending & BIT(sig))) {
        p->sigpending |= BIT(sig);
        p->siginfo[sig - 1] = info ? *info : default_info(sig);
    }
    // Pending before we read the masks, which threads change without the lock:
    // pairs with set_blocked's fence.
    fence();
    kick_one(p, sig);
out:
    spin_unlock(&p->lock);
    pop_off();
    if (continued)
        proc_report_stop(p, W_CONTINUED);
    return 0;
}

// t must stay alive meanwhile (the current thread, or found under the lock).
int signal_send_thread(struct thread *t, int sig, const struct ksiginfo *info)
{
    if (sig < 1 || sig > NSIG)
        return -EINVAL;
    struct proc *p = t->proc;
    if (!p)
        return -ESRCH; // a kernel thread (in-kernel tests use pipes too)
    if (sig == SIGKILL || sig == SIGCONT)
        return signal_send_proc(p, sig, info); // these always act on the whole group
    if (t == thread_current() && t->sig && discard_at_once(p, sig, t->sig))
        return 0;
    push_off();
    spin_lock(&p->lock);
    if (t->sig && !init_drops(p, sig, info) &&
        !(ignored(p, sig) && !(READ_ONCE(t->sig->blocked) & BIT(sig))))
        send_thread_locked(t, sig, info);
    spin_unlock(&p->lock);
    pop_off();
    return 0;
}

void signal_force(int sig, int code, uint64_t addr)
{
    struct thread *t = thread_current();
    struct proc *p = t->proc;
    struct ksiginfo info = {.signo = sig, .code = code, .addr = addr};
    // Blocked or ignored, a fault would only repeat: the default action applies.
    if ((READ_ONCE(t->sig->blocked) & BIT(sig)) ||
        READ_ONCE(p->sigactions[sig - 1].handler) == SIG_IGN) {
        spin_lock(&p->lock);
        WRITE_ONCE(t->sig->blocked, t->sig->blocked & ~BIT(sig));
        act_write_begin(p);
        p->sigactions[sig - 1].handler = SIG_DFL;
        act_write_end(p);
        spin_unlock(&p->lock);
    }
    thread_pend(t, sig, &info, true);
}

static uint64_t deliverable(struct thread *t)
{
    struct usig *s = t->sig;
    uint64_t pend = READ_ONCE(s->pending) | READ_ONCE(t->proc->sigpending);
    return (pend & ~READ_ONCE(s->blocked)) | (pend & BIT(SIGKILL));
}

bool signal_pending(struct thread *t)
{
    return t->sig && (deliverable(t) || proc_group_exiting(t->proc) || READ_ONCE(t->proc->stopped));
}

bool signal_fatal_pending(struct thread *t)
{
    struct proc *p = t->proc;
    return proc_group_exiting(p) ||
           ((READ_ONCE(t->sig->pending) | READ_ONCE(p->sigpending)) & BIT(SIGKILL));
}

// Sleep while the process is stopped (and not being killed).
static void stop_wait(struct thread *t)
{
    struct proc *p = t->proc;
    wait_event(&p->stop_wq, !READ_ONCE(p->stopped) || signal_fatal_pending(t));
}

// A stop signal's default action: stop the whole process, tell the parent, wait.
static void group_stop(struct thread *t, int sig)
{
    struct proc *p = t->proc;
    push_off();
    spin_lock(&p->lock);
    bool now = !p->stopped && !p->group_exiting;
    if (now) {
        p->stopped = true;
        list_for_each(it, &p->threads) {
            struct thread *o = list_entry(it, struct thread, group_link);
            if (o != t)
                signal_kick(o);
        }
    }
    spin_unlock(&p->lock);
    pop_off();
    if (now)
        proc_report_stop(p, W_STOPCODE(sig));
    stop_wait(t);
}

// Take a pending signal of set (the thread's own first, lowest number first).
// Locked. 0 if none.
static int take_from(struct thread *t, uint64_t set, struct ksiginfo *info)
{
    struct proc *p = t->proc;
    struct usig *s = t->sig;
    spin_lock(&s->lock);
    uint64_t mine = s->pending & set, shared = p->sigpending & set;
    if (mine) {
        int sig = __builtin_ctzl(mine) + 1;
        WRITE_ONCE(s->pending, s->pending & ~BIT(sig));
        *info = s->info[sig - 1];
        spin_unlock(&s->lock);
        return sig;
    }
    spin_unlock(&s->lock);
    if (shared) {
        int sig = __builtin_ctzl(shared) + 1;
        p->sigpending &= ~BIT(sig);
        *info = p->siginfo[sig - 1];
        return sig;
    }
    return 0;
}

// Take the next signal to deliver: the thread's own first, lowest number first.
// Locked. 0 if none.
static int dequeue(struct thread *t, struct ksiginfo *info)
{
    return take_from(t, ~t->sig->blocked | UNBLOCKABLE, info);
}

// ---- the signal frame (Linux x86-64 layout) ----------------------------------------

struct sigcontext_k {
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
    uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
    uint16_t cs, gs, fs, ss;
    uint64_t err, trapno, oldmask, cr2;
    uint64_t fpstate; // user address of the fxsave image, or 0
    uint64_t reserved[8];
};

struct ucontext_k {
    uint64_t flags, link;
    struct stack_t_ stack;
    struct sigcontext_k mc;
    uint64_t sigmask;
};

struct siginfo_k {
    int32_t signo, errno_, code, pad;
    union {
        struct {
            int32_t pid, uid;
        } kill;
        struct {
            int32_t pid, uid, status, pad;
            int64_t utime, stime;
        } chld;
        uint64_t addr;
        uint8_t bytes[112];
    };
};

struct rt_sigframe {
    uint64_t pretcode; // the handler returns here: sa_restorer
    struct ucontext_k uc;
    struct siginfo_k info;
};

_Static_assert(sizeof(struct sigcontext_k) == 256, "sigcontext layout");
_Static_assert(sizeof(struct siginfo_k) == 128, "siginfo layout");
_Static_assert(sizeof(struct ucontext_k) == 304, "ucontext layout");

#define FPSTATE_SIZE 512
#define RFLAGS_USER 0x254dd5UL // CF PF AF ZF SF TF DF OF NT RF AC: user may restore these

static const uint8_t fpu_init_image[FPSTATE_SIZE] __attribute__((aligned(16))) = {
    [0] = 0x7f, [1] = 0x03,                 // FCW 0x37f
    [24] = 0x80, [25] = 0x1f,               // MXCSR 0x1f80
};

static bool on_altstack(struct usig *s, uint64_t sp)
{
    return s->ss_size && sp > s->ss_sp && sp - s->ss_sp <= s->ss_size;
}

static void fill_siginfo(struct siginfo_k *si, const struct ksiginfo *k)
{
    memset(si, 0, sizeof *si);
    si->signo = k->signo;
    si->errno_ = k->errno_;
    si->code = k->code;
    switch (k->signo) {
    case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE: case SIGTRAP:
        if (k->code > 0 && k->code < SI_KERNEL) {
            si->addr = k->addr;
            break;
        }
        __attribute__((fallthrough)); // sent with kill
    default:
        si->kill.pid = k->pid;
        si->kill.uid = k->uid;
        if (k->signo == SIGCHLD && k->code > 0)
            si->chld.status = k->status;
    }
}

// Build the frame for sig's handler and point tf at the handler. old_blocked is
// the mask sigreturn restores. -EFAULT if the user stack cannot take it.
static int setup_frame(struct trapframe *tf, int sig, const struct k_sigaction *act,
                       const struct ksiginfo *info, uint64_t old_blocked)
{
    struct thread *t = thread_current();
    struct usig *s = t->sig;
    if (!(act->flags & SA_RESTORER) || act->restorer >= USER_END || act->handler >= USER_END)
        return -EFAULT;
    uint64_t sp = tf->rsp;
    bool was_on = on_altstack(s, sp), on_alt = was_on;
    if ((act->flags & SA_ONSTACK) && s->ss_size && !(s->ss_flags & SS_DISABLE) && !was_on) {
        sp = s->ss_sp + s->ss_size;
        on_alt = true;
    } else {
        sp -= 128; // the interrupted code's red zone
    }
    uint64_t fp = (sp - FPSTATE_SIZE) & ~63UL;
    uint64_t frame_at = ((fp - sizeof(struct rt_sigframe)) & ~15UL) - 8;
    // A frame that would overflow the alternate stack is not written below it,
    // over whatever lies there (Linux): the thread dies of SIGSEGV instead. A
    // handler that faults at once with SA_NODEFER otherwise nests for ever.
    if (on_alt && !on_altstack(s, frame_at))
        return -EFAULT;

    uint8_t fx[FPSTATE_SIZE] __attribute__((aligned(16)));
    asm volatile("fxsave64 %0" : "=m"(fx));
    struct rt_sigframe f;
    memset(&f, 0, sizeof f);
    f.pretcode = act->restorer;
    f.uc.stack = (struct stack_t_){s->ss_sp, s->ss_size ? (was_on ? SS_ONSTACK : 0) : SS_DISABLE,
                                   0, s->ss_size};
    struct sigcontext_k *mc = &f.uc.mc;
    *mc = (struct sigcontext_k){
        .r8 = tf->r8, .r9 = tf->r9, .r10 = tf->r10, .r11 = tf->r11, .r12 = tf->r12,
        .r13 = tf->r13, .r14 = tf->r14, .r15 = tf->r15, .rdi = tf->rdi, .rsi = tf->rsi,
        .rbp = tf->rbp, .rbx = tf->rbx, .rdx = tf->rdx, .rax = tf->rax, .rcx = tf->rcx,
        .rsp = tf->rsp, .rip = tf->rip, .eflags = tf->rflags, .cs = tf->cs, .ss = tf->ss,
        .err = tf->vector < 32 ? tf->err : 0, .trapno = tf->vector < 32 ? tf->vector : 0,
        .oldmask = old_blocked, .cr2 = info->addr, .fpstate = fp,
    };
    f.uc.sigmask = old_blocked;
    fill_siginfo(&f.info, info);
    if (copy_to_user(fp, fx, sizeof fx) < 0 || copy_to_user(frame_at, &f, sizeof f) < 0)
        return -EFAULT;

    tf->rdi = sig;
    tf->rsi = frame_at + offsetof(struct rt_sigframe, info);
    tf->rdx = frame_at + offsetof(struct rt_sigframe, uc);
    tf->rax = 0;
    tf->rsp = frame_at;
    tf->rip = act->handler;
    tf->rflags &= ~((1UL << 10) | (1UL << 8)); // DF and TF clear in the handler
    asm volatile("fxrstor64 %0" : : "m"(fpu_init_image));
    return 0;
}

// An interrupted system call that asked to be restarted (proc.h): run it again
// (the syscall instruction is 2 bytes), or fail with EINTR if a handler ran and
// the call's code and the handler's SA_RESTART do not say otherwise.
static void restart_syscall(struct thread *t, struct trapframe *tf, bool handler, bool sa_restart)
{
    long code = -(long)tf->rax;
    if (tf->vector != T_SYSCALL || t->syscall_nr == __NR_rt_sigreturn ||
        (code != ERESTARTSYS && code != ERESTARTNOHAND && code != ERESTART_RESTARTBLOCK))
        return;
    if (handler && !(code == ERESTARTSYS && sa_restart)) {
        tf->rax = -EINTR;
        return;
    }
    tf->rax = code == ERESTART_RESTARTBLOCK ? __NR_restart_syscall : t->syscall_nr;
    tf->rip -= 2;
}

// The call saw a signal pending, but another thread of the process took it
// before this one came back: nothing ran, so the call goes on.
void signal_restart_leftover(struct trapframe *tf)
{
    restart_syscall(thread_current(), tf, false, false);
}

long restart_block_set(long (*fn)(struct restart_block *), uint64_t a0, uint64_t a1,
                       uint64_t a2)
{
    thread_current()->restart = (struct restart_block){fn, {a0, a1, a2}};
    return -ERESTART_RESTARTBLOCK;
}

// A call continued after a stop and continue, or an ignored signal. Called by
// user space instead, it has nothing to continue (Linux: EINTR).
long sys_restart_syscall(void)
{
    struct restart_block *r = &thread_current()->restart;
    long (*fn)(struct restart_block *) = r->fn;
    r->fn = NULL;
    return fn ? fn(r) : -EINTR;
}

static void set_blocked(struct thread *t, uint64_t mask);

// Run sig's handler act on the way back to user mode: block what it asks
// (old is the mask sigreturn restores), and build its frame.
static void run_handler(struct thread *t, struct trapframe *tf, int sig,
                        const struct k_sigaction *act, const struct ksiginfo *info, uint64_t old)
{
    restart_syscall(t, tf, true, act->flags & SA_RESTART);
    if (setup_frame(tf, sig, act, info, old) < 0)
        proc_exit_group(W_EXITCODE(0, SIGSEGV) | WCOREFLAG);
    t->force_iret = true; // the handler's arguments are in rdi/rsi/rdx: keep rcx/r11 out
}

// The common case without the process lock: the lowest of the thread's own
// deliverable signals, whose action is a handler without SA_RESETHAND. False
// if that is not the case (the caller takes the locked path); true if a
// handler was set up or the state moved under us (the caller looks again).
static bool deliver_own(struct thread *t, struct trapframe *tf)
{
    struct usig *s = t->sig;
    struct proc *p = t->proc;
    uint64_t own = READ_ONCE(s->pending) & ~s->blocked;
    if (!own || s->restore_blocked)
        return false;
    int sig = __builtin_ctzl(own) + 1;
    struct k_sigaction act;
    uint32_t seq = read_action(p, sig, &act);
    if (act.handler == SIG_IGN || act.handler == SIG_DFL || (act.flags & SA_RESETHAND))
        return false;
    struct ksiginfo info;
    spin_lock(&s->lock);
    bool took = s->pending & BIT(sig);
    if (took) {
        WRITE_ONCE(s->pending, s->pending & ~BIT(sig));
        info = s->info[sig - 1];
    }
    spin_unlock(&s->lock);
    if (!took)
        return true;
    fence();
    if (READ_ONCE(p->act_seq) != seq) { // sigaction meanwhile: put it back, look again
        thread_pend(t, sig, &info, false);
        return true;
    }
    uint64_t old = s->blocked;
    set_blocked(t, old | act.mask | ((act.flags & SA_NODEFER) ? 0 : BIT(sig)));
    run_handler(t, tf, sig, &act, &info, old);
    return true;
}

void signal_deliver(struct trapframe *tf)
{
    struct thread *t = thread_current();
    struct proc *p = t->proc;
    if (!t->sig)
        return;
    for (;;) {
        if (proc_group_exiting(p) || (READ_ONCE(t->sig->pending) & BIT(SIGKILL)))
            thread_exit_user(0); // the group's status wins
        if (READ_ONCE(p->stopped) && !(READ_ONCE(p->sigpending) & BIT(SIGKILL))) {
            stop_wait(t);
            continue;
        }
        if (!deliverable(t) && !t->sig->restore_blocked)
            break;
        if (deliver_own(t, tf))
            continue;
        spin_lock(&p->lock);
        struct ksiginfo info;
        int sig = dequeue(t, &info);
        if (!sig) {
            if (t->sig->restore_blocked) { // rt_sigsuspend woken by an ignored signal
                WRITE_ONCE(t->sig->blocked, t->sig->saved_blocked);
                t->sig->restore_blocked = false;
            }
            spin_unlock(&p->lock);
            break;
        }
        struct k_sigaction act = p->sigactions[sig - 1];
        if (act.handler == SIG_IGN || (act.handler == SIG_DFL && sig != SIGKILL &&
                                       ignored(p, sig))) {
            spin_unlock(&p->lock);
            continue;
        }
        if (act.handler == SIG_DFL) {
            spin_unlock(&p->lock);
            if (default_action(sig) == ACT_STOP) {
                // The terminal's stops in an orphaned group are discarded:
                // nobody would continue it (POSIX; SIGSTOP still stops).
                if (sig == SIGSTOP || !pgrp_orphaned(READ_ONCE(p->pgid), NULL, NULL))
                    group_stop(t, sig);
                continue;
            }
            int core = default_action(sig) == ACT_CORE ? WCOREFLAG : 0;
            proc_exit_group(W_EXITCODE(0, sig) | core);
        }
        if (act.flags & SA_RESETHAND) {
            act_write_begin(p);
            p->sigactions[sig - 1].handler = SIG_DFL;
            act_write_end(p);
        }
        struct usig *s = t->sig;
        uint64_t old = s->restore_blocked ? s->saved_blocked : s->blocked;
        s->restore_blocked = false;
        WRITE_ONCE(s->blocked, (s->blocked | act.mask | ((act.flags & SA_NODEFER) ? 0 : BIT(sig))) &
                                   ~UNBLOCKABLE);
        spin_unlock(&p->lock);
        run_handler(t, tf, sig, &act, &info, old);
    }
    restart_syscall(t, tf, false, false);
}

void signal_exec_reset(struct proc *p)
{
    struct thread *t = thread_current();
    spin_lock(&p->lock);
    act_write_begin(p);
    for (int i = 0; i < NSIG; i++) {
        if (p->sigactions[i].handler != SIG_IGN)
            p->sigactions[i] = (struct k_sigaction){0};
        p->sigactions[i].flags = 0;
        p->sigactions[i].mask = 0;
        p->sigactions[i].restorer = 0;
    }
    act_write_end(p);
    t->sig->ss_sp = t->sig->ss_size = 0;
    t->sig->ss_flags = SS_DISABLE;
    spin_unlock(&p->lock);
}

// ---- system calls ---------------------------------------------------------------------

// Set the calling thread t's own mask. Only t writes it, so no lock: nothing
// shared is written, and nothing at all if the mask stays as it is. Unblocking
// needs nothing more: t delivers what is pending on its way back to user mode.
// Blocking a signal that is pending for the whole process may leave it with
// no thread to wake: kick another one (a sender either sees our new mask, or
// we see its pending bit: both sides store, fence, then load).
static void set_blocked(struct thread *t, uint64_t mask)
{
    struct usig *s = t->sig;
    uint64_t old = s->blocked;
    mask &= ~UNBLOCKABLE;
    if (mask == old)
        return;
    WRITE_ONCE(s->blocked, mask);
    uint64_t newly = mask & ~old;
    if (!newly)
        return;
    fence();
    struct proc *p = t->proc;
    if (!(READ_ONCE(p->sigpending) & newly))
        return;
    push_off(); // kick_one compares with this CPU
    spin_lock(&p->lock);
    for (uint64_t m = p->sigpending & newly; m; m &= m - 1)
        kick_one(p, __builtin_ctzl(m) + 1);
    spin_unlock(&p->lock);
    pop_off();
}

long sys_rt_sigreturn(void)
{
    struct thread *t = thread_current();
    struct trapframe *tf = thread_trapframe(t);
    uint64_t frame_at = tf->rsp - 8; // the handler's ret popped pretcode
    struct ucontext_k uc;
    if (copy_from_user(&uc, frame_at + offsetof(struct rt_sigframe, uc), sizeof uc) < 0 ||
        uc.mc.rip >= USER_END)
        proc_exit_group(W_EXITCODE(0, SIGSEGV) | WCOREFLAG);
    uint8_t fx[FPSTATE_SIZE] __attribute__((aligned(16)));
    if (uc.mc.fpstate) {
        if (copy_from_user(fx, uc.mc.fpstate, sizeof fx) < 0)
            proc_exit_group(W_EXITCODE(0, SIGSEGV) | WCOREFLAG);
        // MXCSR bits this CPU does not have would fault in fxrstor: keep only
        // those its MXCSR_MASK allows (0 there means the default 0xffbf).
        uint8_t cur[FPSTATE_SIZE] __attribute__((aligned(16)));
        asm volatile("fxsave64 %0" : "=m"(cur));
        uint32_t mask = *(uint32_t *)&cur[28] ? *(uint32_t *)&cur[28] : 0xffbf;
        *(uint32_t *)&fx[24] &= mask;
        *(uint32_t *)&fx[28] = *(uint32_t *)&cur[28];
        asm volatile("fxrstor64 %0" : : "m"(fx));
    } else {
        asm volatile("fxrstor64 %0" : : "m"(fpu_init_image));
    }
    const struct sigcontext_k *mc = &uc.mc;
    tf->r8 = mc->r8, tf->r9 = mc->r9, tf->r10 = mc->r10, tf->r11 = mc->r11;
    tf->r12 = mc->r12, tf->r13 = mc->r13, tf->r14 = mc->r14, tf->r15 = mc->r15;
    tf->rdi = mc->rdi, tf->rsi = mc->rsi, tf->rbp = mc->rbp, tf->rbx = mc->rbx;
    tf->rdx = mc->rdx, tf->rcx = mc->rcx, tf->rsp = mc->rsp, tf->rip = mc->rip;
    tf->rflags = (tf->rflags & ~RFLAGS_USER) | (mc->eflags & RFLAGS_USER) | RFLAGS_IF;
    set_blocked(t, uc.sigmask);
    t->force_iret = true; // every register as it was, rcx and r11 included
    return mc->rax;
}

long sys_rt_sigaction(int sig, uint64_t uact, uint64_t uold, size_t size)
{
    struct proc *p = proc_current();
    if (size != sizeof(uint64_t) || sig < 1 || sig > NSIG)
        return -EINVAL;
    if (uact && (sig == SIGKILL || sig == SIGSTOP))
        return -EINVAL;
    struct k_sigaction act, old;
    if (uact && copy_from_user(&act, uact, sizeof act) < 0)
        return -EFAULT;
    spin_lock(&p->lock);
    old = p->sigactions[sig - 1];
    if (uact) {
        act.mask &= ~UNBLOCKABLE;
        act_write_begin(p);
        p->sigactions[sig - 1] = act;
        act_write_end(p);
        if (ignored(p, sig)) // pending instances are discarded
            drop_pending(p, BIT(sig));
    }
    spin_unlock(&p->lock);
    if (uold && copy_to_user(uold, &old, sizeof old) < 0)
        return -EFAULT;
    return 0;
}

long sys_rt_sigprocmask(int how, uint64_t uset, uint64_t uold, size_t size)
{
    struct thread *t = thread_current();
    if (size != sizeof(uint64_t))
        return -EINVAL;
    uint64_t set = 0;
    if (uset && copy_from_user(&set, uset, sizeof set) < 0)
        return -EFAULT;
    if (uset && how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
        return -EINVAL;
    uint64_t old = t->sig->blocked;
    if (uset && how == SIG_BLOCK)
        set_blocked(t, old | set);
    else if (uset && how == SIG_UNBLOCK)
        set_blocked(t, old & ~set);
    else if (uset)
        set_blocked(t, set);
    if (uold && copy_to_user(uold, &old, sizeof old) < 0)
        return -EFAULT;
    return 0;
}

long sys_rt_sigpending(uint64_t uset, size_t size)
{
    struct thread *t = thread_current();
    if (size > sizeof(uint64_t))
        return -EINVAL; // a shorter set gets the first bytes (Linux)
    spin_lock(&t->proc->lock);
    uint64_t set = (t->sig->pending | t->proc->sigpending) & t->sig->blocked;
    spin_unlock(&t->proc->lock);
    return copy_to_user(uset, &set, size);
}

// Sleep with a temporary mask until a signal is delivered. A signal that runs
// no handler (ignored, or a stop and continue) does not end the wait: the call
// restarts with the same mask (Linux).
static long suspend_with(uint64_t mask)
{
    struct thread *t = thread_current();
    struct proc *p = t->proc;
    spin_lock(&p->lock);
    t->sig->saved_blocked = t->sig->blocked;
    t->sig->restore_blocked = true;
    WRITE_ONCE(t->sig->blocked, mask & ~UNBLOCKABLE);
    spin_unlock(&p->lock);
    struct waitq q; // no one wakes it: senders wake the thread itself
    waitq_init(&q, "sigsuspend");
    wait_event(&q, signal_pending(t));
    return -ERESTARTNOHAND;
}

// ppoll and pselect6 wait with a temporary mask. Interrupted, the old mask comes
// back after the handler runs (as for rt_sigsuspend); otherwise now.
void signal_mask_begin(uint64_t mask)
{
    struct thread *t = thread_current();
    spin_lock(&t->proc->lock);
    t->sig->saved_blocked = t->sig->blocked;
    t->sig->restore_blocked = true;
    t->sig->blocked = mask & ~UNBLOCKABLE;
    spin_unlock(&t->proc->lock);
}

void signal_mask_end(bool interrupted)
{
    struct thread *t = thread_current();
    if (interrupted)
        return;
    spin_lock(&t->proc->lock);
    if (t->sig->restore_blocked) {
        t->sig->blocked = t->sig->saved_blocked;
        t->sig->restore_blocked = false;
    }
    spin_unlock(&t->proc->lock);
}

long sys_rt_sigsuspend(uint64_t umask, size_t size)
{
    if (size != sizeof(uint64_t))
        return -EINVAL;
    uint64_t mask;
    if (copy_from_user(&mask, umask, sizeof mask) < 0)
        return -EFAULT;
    return suspend_with(mask);
}

long sys_pause(void) { return suspend_with(thread_current()->sig->blocked); }

// rt_sigtimedwait: wait for a signal of set (normally blocked by the caller) and
// take it without running a handler. While waiting, set is unblocked so that
// senders wake us; the mask is restored before we return to user mode, so no
// handler runs for it. Another signal ends the wait with EINTR; the timeout
// with EAGAIN.
static int sigwait_set(struct thread *t, uint64_t set, uint64_t deadline, struct ksiginfo *info)
{
    struct proc *p = t->proc;
    spin_lock(&p->lock);
    uint64_t saved = t->sig->blocked;
    WRITE_ONCE(t->sig->blocked, saved & ~set);
    int ret;
    for (;;) {
        store_seqcst(&t->state, T_SLEEPING);
        if ((ret = take_from(t, set, info)) != 0)
            break;
        spin_unlock(&p->lock);
        if (signal_pending(t)) {
            spin_lock(&p->lock);
            if ((ret = take_from(t, set, info)) == 0) // one of ours came meanwhile?
                ret = -EINTR;
            break;
        }
        if (deadline && nsec_now() >= deadline)
            ret = -EAGAIN;
        else {
            if (deadline)
                schedule_until(deadline);
            else
                schedule();
            spin_lock(&p->lock);
            continue;
        }
        spin_lock(&p->lock);
        break;
    }
    WRITE_ONCE(t->sig->blocked, saved);
    spin_unlock(&p->lock);
    // Running again (a waker's compare-and-swap may still be on its way: let the
    // run queue settle it, as waitq_finish does).
    int want = T_SLEEPING;
    if (!cas_fail_relaxed(&t->state, &want, T_RUNNING) && want == T_RUNNABLE)
        schedule();
    return ret;
}

long sys_rt_sigtimedwait(uint64_t uset, uint64_t uinfo, uint64_t uts, size_t size)
{
    if (size != sizeof(uint64_t))
        return -EINVAL;
    uint64_t set;
    if (copy_from_user(&set, uset, sizeof set) < 0)
        return -EFAULT;
    set &= ~UNBLOCKABLE;
    uint64_t deadline = 0;
    if (uts) {
        struct timespec ts;
        if (copy_from_user(&ts, uts, sizeof ts) < 0)
            return -EFAULT;
        if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
            return -EINVAL;
        deadline = nsec_now() + (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        if (deadline == 0)
            deadline = 1;
    }
    struct ksiginfo k;
    int sig = sigwait_set(thread_current(), set, deadline, &k);
    if (sig < 0)
        return sig;
    if (uinfo) {
        struct siginfo_k si = {0};
        fill_siginfo(&si, &k);
        if (copy_to_user(uinfo, &si, sizeof si) < 0)
            return -EFAULT;
    }
    return sig;
}

long sys_sigaltstack(uint64_t uss, uint64_t uoss)
{
    struct thread *t = thread_current();
    struct usig *s = t->sig;
    uint64_t sp = thread_trapframe(t)->rsp;
    bool on = on_altstack(s, sp);
    struct stack_t_ old = {s->ss_sp, s->ss_size ? (on ? SS_ONSTACK : 0) : SS_DISABLE, 0,
                           s->ss_size};
    if (uss) {
        struct stack_t_ ss;
        if (copy_from_user(&ss, uss, sizeof ss) < 0)
            return -EFAULT;
        if (on)
            return -EPERM;
        if (ss.ss_flags != 0 && ss.ss_flags != SS_DISABLE)
            return -EINVAL;
        if (ss.ss_flags == SS_DISABLE) {
            s->ss_sp = s->ss_size = 0;
        } else {
            if (ss.ss_size < MINSIGSTKSZ)
                return -ENOMEM;
            s->ss_sp = ss.ss_sp;
            s->ss_size = ss.ss_size;
        }
        s->ss_flags = ss.ss_flags;
    }
    if (uoss && copy_to_user(uoss, &old, sizeof old) < 0)
        return -EFAULT;
    return 0;
}

static struct ksiginfo sender_info(int sig, int code)
{
    return (struct ksiginfo){.signo = sig, .code = code, .pid = proc_current()->pid};
}

int signal_send_group(int pgid, int sig, const struct ksiginfo *info)
{
    int *pids;
    int n = pgrp_pids(pgid, &pids);
    if (n < 0)
        return n;
    int sent = 0;
    epoch_enter(); // each p stays allocated while we use it
    for (int i = 0; i < n; i++) {
        struct proc *p = pid_lookup(pids[i]);
        if (!p)
            continue;
        // A zombie is still there to be signalled (Linux), to no effect.
        if (!sig || p->state == P_ZOMBIE || signal_send_proc(p, sig, info) == 0)
            sent++;
    }
    epoch_exit();
    kfree(pids);
    return sent ? 0 : -ESRCH;
}

struct kill_all {
    struct proc *self;
    int sig;
    const struct ksiginfo *info;
    int count;
};

static void kill_one(struct proc *p, void *arg)
{
    struct kill_all *k = arg;
    if (p->init || p == k->self)
        return; // never init, never the caller
    k->count++;
    if (k->sig && p->state != P_ZOMBIE)
        signal_send_proc(p, k->sig, k->info);
}

// kill(-1, sig): every process but init and the caller (everyone may signal
// everyone here: no EPERM). ESRCH if there is none.
static long kill_all(int sig, const struct ksiginfo *info)
{
    struct kill_all k = {.self = proc_current(), .sig = sig, .info = info};
    epoch_enter();
    pid_for_each(kill_one, &k);
    epoch_exit();
    return k.count ? 0 : -ESRCH;
}

long sys_kill(int pid, int sig)
{
    if (sig < 0 || sig > NSIG)
        return -EINVAL;
    struct proc *self = proc_current();
    struct ksiginfo info = sender_info(sig, SI_USER);
    if (pid == 0)
        return signal_send_group(READ_ONCE(self->pgid), sig, &info);
    if (pid == -1)
        return kill_all(sig, &info);
    if (pid == INT32_MIN)
        return -ESRCH; // (there is no group -INT_MIN)
    if (pid < 0)
        return signal_send_group(-pid, sig, &info);
    epoch_enter(); // p stays allocated while we use it
    struct proc *p = pid_lookup(pid);
    // A zombie can still be signalled (Linux), to no effect, until it is reaped.
    long r = !p ? -ESRCH : sig && p->state != P_ZOMBIE ? signal_send_proc(p, sig, &info) : 0;
    epoch_exit();
    return r;
}

// Send sig to thread tid of p (any process if p's lock finds it). -ESRCH if none.
static long send_to_tid(struct proc *p, int tid, int sig)
{
    struct ksiginfo info = sender_info(sig, SI_TKILL);
    long r = -ESRCH;
    push_off();
    spin_lock(&p->lock);
    list_for_each(it, &p->threads) {
        struct thread *t = list_entry(it, struct thread, group_link);
        if (t->tid != tid)
            continue;
        r = 0;
        if ((sig == SIGKILL || sig == SIGCONT) && !p->group_exiting) {
            spin_unlock(&p->lock);
            pop_off();
            return signal_send_proc(p, sig, &info);
        }
        if (sig && !init_drops(p, sig, &info) &&
            !(ignored(p, sig) && !(READ_ONCE(t->sig->blocked) & BIT(sig))))
            send_thread_locked(t, sig, &info);
        break;
    }
    spin_unlock(&p->lock);
    pop_off();
    return r;
}

long sys_tgkill(int tgid, int tid, int sig)
{
    if (tgid <= 0 || tid <= 0 || sig < 0 || sig > NSIG)
        return -EINVAL;
    epoch_enter();
    struct proc *p = pid_lookup(tgid);
    long r = p ? send_to_tid(p, tid, sig) : -ESRCH;
    epoch_exit();
    return r;
}

// tkill: a thread of our own process, or the main thread of any process (only
// main threads are in the pid table).
long sys_tkill(int tid, int sig)
{
    if (tid <= 0 || sig < 0 || sig > NSIG)
        return -EINVAL;
    long r = send_to_tid(proc_current(), tid, sig);
    if (r != -ESRCH)
        return r;
    return sys_tgkill(tid, tid, sig);
}
