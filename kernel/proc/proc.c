// Processes and their threads: creation from an ELF image, clone/fork/vfork,
// thread and group exit, wait4/waitid and reaping, and what happens when user
// code takes an exception.
//
// Commute: creating, exiting and reaping unrelated processes, and creating or
// exiting threads of different processes. Each process has its own lock, guarding
// its thread list and its signal state; exit touches only the exiting process,
// its children and its parent; a new thread or child starts on its creator's CPU.
// Children are kept on per-thread lists (struct childlist, each with its own lock
// and wait queue): two threads of one process that each fork or posix_spawn a
// child and wait for it by pid share no line, and neither does the children's
// exit. Only waits for any child (or a group) look at every list, under the
// process lock; a child's exit wakes them only while there are such waiters.
// pids come from per-CPU ranges and the pid table is lock-free for readers
// (pid.c). A reaped process is freed after an epoch grace period, so a child
// reading its parent pointer (or anybody holding a pid_lookup result) inside an
// epoch section never sees freed memory.
#include "file/dev.h"
#include "file/fdtable.h"
#include "file/file.h"
#include "file/fs_context.h"
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "mm/uvm.h"
#include "proc/itimer.h"
#include "proc/proc.h"
#include "sync/atomic.h"
#include "sync/epoch.h"
#include "sync/percpu.h"
#include "sync/refcache.h"
#include "syscall/syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "x86/gdt.h"
#include "x86/smp.h"
#include "x86/trap.h"
#include "x86/x86.h"

struct proc *proc_current(void) { return thread_current()->proc; }
struct fdtable *fdt_current(void) { return thread_current()->fdt; }

// The queued signals' details live apart (2 KiB, a kmalloc size class) so that
// struct proc fits in one page: kmalloc's larger sizes take contiguous pages
// from the shared buddy pools, a lock and lines every CPU writes, on every fork
// and posix_spawn; one page comes from the calling CPU's page cache.
_Static_assert(sizeof(struct proc) <= PGSIZE, "struct proc fits in one page");

static void proc_free(struct proc *p)
{
    kfree(p->siginfo);
    kfree(p);
}

void proc_set_cmdline(struct proc *p, const char *const argv[])
{
    size_t len = 0;
    const char *const only_name[] = {p->name, NULL};
    for (const char *const *a = argv ? argv : only_name; *a && len < PROC_CMDLINE_MAX; a++) {
        size_t n = MIN(strlen(*a) + 1, PROC_CMDLINE_MAX - len);
        memcpy(p->cmdline + len, *a, n);
        len += n;
    }
    WRITE_ONCE(p->cmdline_len, (uint16_t)len);
}

void proc_info(struct proc *p, struct proc_info *out)
{
    assert(epoch_in_reader());
    struct proc *parent = READ_ONCE(p->parent);
    out->ppid = parent ? parent->pid : 0;
    spin_lock(&p->lock);
    bool running = false;
    out->utime = p->gone_utime;
    out->stime = p->gone_stime;
    list_for_each(it, &p->threads) {
        struct thread *t = list_entry(it, struct thread, group_link);
        int st = READ_ONCE(t->state);
        running |= st == T_RUNNING || st == T_RUNNABLE;
        out->utime += READ_ONCE(t->utime);
        out->stime += READ_ONCE(t->stime);
    }
    out->nthreads = p->nthreads;
    out->state = p->state == P_ZOMBIE ? 'Z' : p->stopped ? 'T' : running ? 'R' : 'S';
    spin_unlock(&p->lock);
}

static char thread_letter(struct proc *p, struct thread *t) // p locked
{
    int st = READ_ONCE(t->state);
    return p->state == P_ZOMBIE ? 'Z' : p->stopped ? 'T'
           : st == T_RUNNING || st == T_RUNNABLE ? 'R' : 'S';
}

bool proc_thread_info(struct proc *p, int tid, struct proc_thread_info *out)
{
    assert(epoch_in_reader());
    bool found = false;
    spin_lock(&p->lock);
    list_for_each(it, &p->threads) {
        struct thread *t = list_entry(it, struct thread, group_link);
        if (READ_ONCE(t->tid) != tid)
            continue;
        out->state = thread_letter(p, t);
        out->utime = READ_ONCE(t->utime);
        out->stime = READ_ONCE(t->stime);
        memcpy(out->name, t->name, sizeof out->name);
        out->name[sizeof out->name - 1] = 0;
        out->ntrace = thread_kernel_trace(t, out->trace, PROC_TRACE_MAX);
        found = true;
        break;
    }
    spin_unlock(&p->lock);
    return found;
}

struct fdtable *proc_fdtable(struct proc *p)
{
    assert(epoch_in_reader());
    struct fdtable *t = NULL;
    spin_lock(&p->lock);
    if (!list_empty(&p->threads))
        t = READ_ONCE(list_entry(p->threads.next, struct thread, group_link)->fdt);
    spin_unlock(&p->lock);
    return t;
}

int proc_tids(struct proc *p, int *tids, int max)
{
    assert(epoch_in_reader());
    int n = 0;
    spin_lock(&p->lock);
    list_for_each(it, &p->threads) {
        if (n < max)
            tids[n] = READ_ONCE(list_entry(it, struct thread, group_link)->tid);
        n++;
    }
    spin_unlock(&p->lock);
    return n;
}

static struct proc *proc_alloc(const char *name)
{
    struct proc *p = kzalloc(sizeof *p);
    if (!p)
        return NULL;
    if (!(p->siginfo = kzalloc(64 * sizeof p->siginfo[0]))) {
        kfree(p);
        return NULL;
    }
    spin_init(&p->lock, "proc");
    list_init(&p->sibling);
    list_init(&p->threads);
    list_init(&p->pgrp_link);
    waitq_init(&p->child_wq, "wait4");
    waitq_init(&p->exit_wq, "proc exit");
    waitq_init(&p->stop_wq, "stopped");
    exec_name(name, p->name, sizeof p->name); // a path's last part, as exec names it
    proc_set_cmdline(p, NULL);
    p->start_nsec = nsec_now();
    p->state = P_ALIVE;
    p->exit_signal = SIGCHLD;
    for (int i = 0; i < RLIM_NLIMITS; i++)
        p->rlim[i] = (struct rlimit64){RLIM_INFINITY, RLIM_INFINITY};
    p->rlim[RLIMIT_STACK].cur = USER_STACK_SIZE;
    p->rlim[RLIMIT_NOFILE] = (struct rlimit64){1024, 4096};
    return p;
}

// fds 0, 1 and 2 of p's first thread t: one description of the console (or of
// the test's capture buffer), as a login shell would have them.
static int std_files(struct proc *p, struct thread *t, struct capture *cap)
{
    struct file *f = tty_open_console(cap);
    if (!(t->fdt = fdtable_new()) || !(p->fsc = fsctx_new()) || !f) {
        if (f)
            file_put(f);
        return -ENOMEM;
    }
    int err = 0;
    for (int fd = 0; fd < 3 && !err; fd++) {
        file_get(f); // each fd holds a reference
        if ((err = fd_install_at(t->fdt, fd, f, false)) < 0)
            file_put(f);
        else
            err = 0;
    }
    file_put(f);
    return err;
}

// Undo std_files or a clone's copies: p's cwd and its first thread t's fds.
static void release_files(struct proc *p, struct thread *t)
{
    if (t->fdt)
        fdtable_release(t->fdt);
    if (p->fsc)
        fsctx_release(p->fsc);
    t->fdt = NULL;
    p->fsc = NULL;
}

static struct childlist *childlist_new(void)
{
    struct childlist *cl = kzalloc(sizeof *cl);
    if (cl) {
        spin_init(&cl->lock, "children");
        list_init(&cl->list);
        waitq_init(&cl->wq, "wait4 pid");
    }
    return cl;
}

// The child lists go with the process: a child's exit may be chasing one inside
// an epoch section.
static void free_proc_cb(struct epoch_cb *cb)
{
    struct proc *p = container_of(cb, struct proc, free_cb);
    for (struct childlist *cl = p->lists, *next; cl; cl = next) {
        next = cl->next;
        kfree(cl);
    }
    proc_free(p);
}

// Unpublish a zombie and free it once no lock-free reader can hold it.
static void proc_reap(struct proc *p)
{
    pgrp_leave(p);
    pid_remove(p);
    epoch_defer(&p->free_cb, free_proc_cb);
}

// The first thing a user thread runs, on its kernel stack: leave for user mode
// through the trapframe its creator built.
static void user_thread_entry(void *arg)
{
    (void)arg;
    struct trapframe *tf = thread_trapframe(thread_current());
    user_return(tf);
    user_enter(tf);
}

static void uthread_discard(struct thread *t)
{
    usig_free(t->sig);
    kfree(t->children);
    if (t->fpu)
        fpu_free(t);
    kstack_free(t->kstack);
    kfree(t);
}

// A user thread of p, not started and not yet on p's thread list.
static struct thread *uthread_new(struct proc *p)
{
    struct thread *t = thread_alloc(p->name, user_thread_entry, NULL, false);
    if (!t)
        return NULL;
    t->sig = usig_alloc();
    t->children = childlist_new();
    if (!t->sig || !t->children || fpu_alloc(t) < 0) {
        uthread_discard(t);
        return NULL;
    }
    t->proc = p;
    t->vm = p->vm;
    return t;
}

// After a change to p's thread list (locked): main_sig follows the first thread.
static void main_changed(struct proc *p)
{
    struct usig *s = list_empty(&p->threads)
                         ? NULL
                         : list_entry(p->threads.next, struct thread, group_link)->sig;
    if (p->main_sig != s)
        WRITE_ONCE(p->main_sig, s);
}

// Locked (or p not yet published). t takes a child list a thread that left
// gave back, if there is one: then t's own fresh one is returned, for the caller
// to free once unlocked (else NULL).
static struct childlist *add_thread(struct proc *p, struct thread *t)
{
    list_push_back(&p->threads, &t->group_link);
    p->nthreads++;
    main_changed(p);
    struct childlist *cl = p->spare;
    if (!cl) {
        t->children->next = p->lists;
        p->lists = t->children;
        return NULL;
    }
    p->spare = cl->next_spare;
    struct childlist *fresh = t->children;
    t->children = cl;
    return fresh;
}

// np becomes a child of the current thread's process, on the thread's list.
static void link_child(struct proc *np)
{
    struct thread *cur = thread_current();
    struct childlist *cl = cur->children;
    spin_lock(&cl->lock);
    np->parent = cur->proc;
    np->kin = cl;
    list_push_back(&cl->list, &np->sibling);
    spin_unlock(&cl->lock);
}

// A new program's first registers: user mode at its entry, on its stack.
static void user_frame(struct thread *t, const struct exec_info *ei)
{
    struct trapframe *tf = thread_trapframe(t);
    memset(tf, 0, sizeof *tf);
    tf->rip = ei->entry;
    tf->rsp = ei->sp;
    tf->cs = GDT_UCODE | 3;
    tf->ss = GDT_UDATA | 3;
    tf->rflags = RFLAGS_IF | 2;
}

int proc_start(const char *name, struct vmspace *vs, const struct exec_info *ei,
               const cpumask_t *affinity, struct capture *cap, unsigned flags,
               struct proc **out)
{
    struct proc *p = proc_alloc(name);
    struct thread *t = NULL;
    if (p) {
        p->vm = vs;
        t = uthread_new(p);
    }
    int err = t ? std_files(p, t, cap) : -ENOMEM;
    if (err) {
        if (t) {
            release_files(p, t);
            uthread_discard(t);
        }
        vmspace_put(vs);
        if (p)
            proc_free(p);
        return err;
    }
    user_frame(t, ei);
    p->vm->brk_start = p->vm->brk = ei->brk;
    proc_set_cmdline(p, ei->argv);

    p->capture = cap;
    p->kernel_waited = true;
    p->init = flags & PROC_INIT; // before anyone can signal it
    p->pid = pid_alloc();
    t->tid = p->pid;
    if ((err = pgrp_create(p))) { // its own session, as the first process is
        release_files(p, t);
        vmspace_put(p->vm);
        uthread_discard(t);
        proc_free(p);
        return err;
    }
    kfree(add_thread(p, t));
    pid_insert(p);
    *out = p;
    thread_start(t, affinity);
    return 0;
}

static int spawn_image(const char *name, const void *image, size_t len, const char *const argv[],
                       const char *const envp[], const cpumask_t *affinity, struct capture *cap,
                       unsigned flags, struct proc **out)
{
    struct vmspace *vs = vmspace_new();
    if (!vs)
        return -ENOMEM;
    struct exec_info ei;
    int err = elf_exec(vs, image, len, argv, envp, name, &ei);
    if (err) {
        vmspace_put(vs);
        return err;
    }
    return proc_start(name, vs, &ei, affinity, cap, flags, out);
}

int proc_spawn(const char *name, const void *image, size_t len, const char *const argv[],
               const char *const envp[], const cpumask_t *affinity, struct capture *cap,
               struct proc **out)
{
    return spawn_image(name, image, len, argv, envp, affinity, cap, 0, out);
}

int proc_spawn_init(const char *name, const void *image, size_t len, const char *const argv[],
                    const char *const envp[], struct capture *cap, struct proc **out)
{
    return spawn_image(name, image, len, argv, envp, NULL, cap, PROC_INIT, out);
}

// ---- clone, fork, vfork ---------------------------------------------------------

// What a vfork parent waits on: its child's exec or exit. Shared by the two and
// freed by the last to let go, so that a parent killed while it waits (Linux's
// wait is killable) leaves nothing the child would still touch.
struct vfork_wait {
    int refs;       // [a] the parent and the child
    bool done;      // [a] the child exec'd or exited
    struct waitq wq;
};

static struct vfork_wait *vfork_wait_new(void)
{
    struct vfork_wait *vw = kzalloc(sizeof *vw);
    if (vw) {
        vw->refs = 2;
        waitq_init(&vw->wq, "vfork");
    }
    return vw;
}

static void vfork_wait_put(struct vfork_wait *vw)
{
    if (sub_fetch(&vw->refs, 1) == 0)
        kfree(vw);
}

// The parent, until the child lets it go or a SIGKILL (or a group exit) ends it.
static void vfork_wait_for_child(struct vfork_wait *vw, struct thread *cur)
{
    wait_event(&vw->wq, load_acquire(&vw->done) || signal_fatal_pending(cur));
    vfork_wait_put(vw);
}

#define CLONE_SUPPORTED                                                                  \
    (CSIGNAL | CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_VFORK |        \
     CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID |                 \
     CLONE_CHILD_CLEARTID | CLONE_DETACHED | CLONE_CHILD_SETTID)

// The child's registers: the parent's at the system call, returning 0.
static void child_frame(struct thread *t, uint64_t newsp)
{
    struct trapframe *tf = thread_trapframe(t);
    *tf = *thread_trapframe(thread_current());
    tf->rax = 0;
    if (newsp)
        tf->rsp = newsp;
    fpu_save(t); // the caller's registers are still live on this CPU
    t->affinity = thread_current()->affinity;
}

// CLONE_THREAD: a new thread in the caller's process.
static long clone_thread(uint64_t flags, uint64_t newsp, uint64_t ptid, uint64_t ctid,
                         uint64_t tls)
{
    struct thread *cur = thread_current();
    struct proc *p = cur->proc;
    struct thread *t = uthread_new(p);
    if (!t)
        return -ENOMEM;
    child_frame(t, newsp);
    t->fsbase = (flags & CLONE_SETTLS) ? tls : cur->fsbase;
    t->gsbase = cur->gsbase;
    t->sig->blocked = cur->sig->blocked; // the alternate stack is not inherited
    t->tid = pid_alloc();
    int tid = t->tid;
    if (((flags & CLONE_PARENT_SETTID) && copy_to_user(ptid, &tid, sizeof tid) < 0) ||
        ((flags & CLONE_CHILD_SETTID) && copy_to_user(ctid, &tid, sizeof tid) < 0)) {
        uthread_discard(t);
        return -EFAULT;
    }
    if (flags & CLONE_CHILD_CLEARTID)
        t->clear_child_tid = ctid;
    // The new thread's own reference (fdtable.h) to the caller's table, or a copy
    // of it (Linux allows CLONE_THREAD without CLONE_FILES).
    if (flags & CLONE_FILES)
        fdtable_hold(t->fdt = cur->fdt);
    else if (!(t->fdt = fdtable_copy(cur->fdt))) {
        uthread_discard(t);
        return -ENOMEM;
    }
    spin_lock(&p->lock);
    // An exec in another thread waits for every other thread to leave: a new
    // one would have no SIGKILL and keep it waiting.
    bool dying = p->group_exiting || p->execing;
    struct childlist *unused = dying ? NULL : add_thread(p, t);
    spin_unlock(&p->lock);
    kfree(unused);
    if (dying) {
        fdtable_release(t->fdt);
        uthread_discard(t);
        return -EINTR; // we are being killed ourselves; the value is never seen
    }
    thread_start(t, &t->affinity);
    return tid;
}

// A new process: fork, vfork, or clone without CLONE_THREAD.
static long clone_process(uint64_t flags, uint64_t newsp, uint64_t ptid, uint64_t ctid,
                          uint64_t tls)
{
    struct thread *cur = thread_current();
    struct proc *p = cur->proc;
    struct proc *np = proc_alloc(p->name);
    if (!np)
        return -ENOMEM;
    long err = -ENOMEM;
    if (flags & CLONE_VM) {
        vmspace_hold(p->vm);
        np->vm = p->vm;
    } else {
        np->vm = vmspace_fork(p->vm); // copy-on-write
    }
    np->cmdline_len = p->cmdline_len; // [u]: no exec of ours runs meanwhile
    memcpy(np->cmdline, p->cmdline, np->cmdline_len);
    struct thread *t = np->vm ? uthread_new(np) : NULL;
    if (!t)
        goto undo_vm;
    if (flags & CLONE_FILES)
        fdtable_hold(t->fdt = cur->fdt);
    else
        t->fdt = fdtable_copy(cur->fdt);
    if (flags & CLONE_FS) {
        fsctx_hold(p->fsc);
        np->fsc = p->fsc;
    } else {
        np->fsc = fsctx_copy(p->fsc);
    }
    if (!t->fdt || !np->fsc)
        goto undo_files;
    child_frame(t, newsp);
    t->fsbase = (flags & CLONE_SETTLS) ? tls : cur->fsbase;
    t->gsbase = cur->gsbase;
    spin_lock(&p->lock);
    memcpy(np->sigactions, p->sigactions, sizeof np->sigactions);
    t->sig->blocked = cur->sig->blocked;
    if (!(flags & CLONE_VM)) { // a shared stack cannot be an alternate stack for both
        t->sig->ss_sp = cur->sig->ss_sp;
        t->sig->ss_size = cur->sig->ss_size;
        t->sig->ss_flags = cur->sig->ss_flags;
    }
    spin_unlock(&p->lock);
    np->capture = p->capture;
    memcpy(np->rlim, p->rlim, sizeof np->rlim);
    np->exit_signal = flags & CSIGNAL;
    np->pid = t->tid = pid_alloc();
    int pid = np->pid;
    if (((flags & CLONE_PARENT_SETTID) && copy_to_user(ptid, &pid, sizeof pid) < 0) ||
        ((flags & CLONE_CHILD_SETTID) && uvm_write(np->vm, ctid, &pid, sizeof pid) < 0)) {
        err = -EFAULT;
        goto undo_files;
    }
    if (flags & CLONE_CHILD_CLEARTID)
        t->clear_child_tid = ctid;
    kfree(add_thread(np, t));
    struct vfork_wait *vw = NULL;
    if (flags & CLONE_VFORK) {
        if (!(vw = vfork_wait_new())) {
            err = -ENOMEM;
            goto undo_files;
        }
        np->vfork = vw;
    }
    pgrp_join_parent(np, p);
    link_child(np);
    pid_insert(np);
    thread_start(t, &t->affinity);
    // np may be gone from here on (exited and reaped by another of our threads).
    if (vw)
        vfork_wait_for_child(vw, cur);
    return pid;

    // Undone in the reverse order of setting up; nobody else has seen np yet.
undo_files:
    release_files(np, t); // the fd table or fs context may be missing
    uthread_discard(t);
undo_vm:
    if (np->vm)
        vmspace_put(np->vm);
    proc_free(np);
    return err;
}

// ---- posix_spawn (spawn.c prepared the pieces) ----------------------------------

// The child's signal state: the caller's actions with caught ones (and those in
// sigdefault) reset as execve would, and the mask asked for.
static void spawn_signals(struct proc *np, struct thread *t, const struct spawn_child *c)
{
    struct thread *cur = thread_current();
    signal_copy_actions(cur->proc, np->sigactions); // no lock: sibling threads' spawns commute
    uint64_t mask = c->setmask ? c->sigmask : cur->sig->blocked; // only we write ours
    for (int i = 0; i < NSIG; i++) {
        struct k_sigaction *a = &np->sigactions[i];
        if (a->handler != SIG_IGN || (c->sigdefault >> i & 1))
            *a = (struct k_sigaction){0};
        else
            *a = (struct k_sigaction){.handler = SIG_IGN};
    }
    t->sig->blocked = mask & ~(1UL << (SIGKILL - 1) | 1UL << (SIGSTOP - 1));
    t->sig->ss_flags = SS_DISABLE;
}

// Session and group per the attributes; np is in the caller's group already.
static int spawn_group(struct proc *np, const struct spawn_child *c)
{
    int err;
    if (c->setsid && (err = pgrp_setsid(np)) < 0)
        return err;
    if (c->setpgroup) {
        if (np->sid == np->pid)
            return -EPERM; // a session leader cannot change its group
        if ((err = pgrp_move(np, c->pgroup ? c->pgroup : np->pid, np->sid)))
            return err;
    }
    return 0;
}

long proc_spawn_child(const struct spawn_child *c)
{
    struct thread *cur = thread_current();
    struct proc *p = cur->proc;
    struct proc *np = proc_alloc(c->name);
    if (!np)
        return -ENOMEM;
    np->vm = c->vm;
    struct thread *t = uthread_new(np);
    if (!t) {
        proc_free(np);
        return -ENOMEM;
    }
    user_frame(t, &c->ei);
    t->affinity = c->affinity ? *c->affinity : cur->affinity;
    spawn_signals(np, t, c);
    np->capture = p->capture;
    memcpy(np->rlim, p->rlim, sizeof np->rlim);
    np->did_exec = true;
    np->pid = t->tid = c->pid;
    pgrp_join_parent(np, p);
    int err = spawn_group(np, c);
    if (err) {
        pgrp_leave(np);
        uthread_discard(t);
        proc_free(np);
        return err;
    }
    np->vm->brk_start = np->vm->brk = c->ei.brk;
    proc_set_cmdline(np, c->ei.argv);
    t->fdt = c->fdt;
    np->fsc = c->fsc;
    kfree(add_thread(np, t));
    link_child(np);
    int pid = np->pid;
    pid_insert(np);
    thread_start(t, &t->affinity);
    return pid;
}

long proc_clone(uint64_t flags, uint64_t newsp, uint64_t ptid, uint64_t ctid, uint64_t tls)
{
    if (flags & ~(uint64_t)CLONE_SUPPORTED)
        return -EINVAL; // namespaces, pidfds, CLONE_PARENT, ptrace: not here
    if ((flags & CLONE_THREAD) && !(flags & CLONE_SIGHAND))
        return -EINVAL;
    if ((flags & CLONE_SIGHAND) && !(flags & CLONE_VM))
        return -EINVAL;
    // Signal actions are per process here: sharing them between processes
    // (CLONE_SIGHAND without CLONE_THREAD) is not supported.
    if ((flags & CLONE_SIGHAND) && !(flags & CLONE_THREAD))
        return -EINVAL;
    if ((flags & CLONE_SETTLS) && tls >= USER_END)
        return -EPERM;
    if (newsp >= USER_END)
        return -EINVAL;
    if (flags & CLONE_THREAD)
        return clone_thread(flags, newsp, ptid, ctid, tls);
    return clone_process(flags, newsp, ptid, ctid, tls);
}

// The vfork parent may go on: our exec replaced the shared address space, or we
// exited. The parent may have left already (killed), so the wait it shares with
// us is counted, not part of either process.
void vfork_release(struct proc *child)
{
    struct vfork_wait *vw = child->vfork;
    if (!vw)
        return;
    child->vfork = NULL;
    store_release(&vw->done, true);
    waitq_wake_all(&vw->wq);
    vfork_wait_put(vw);
}

// ---- exit -----------------------------------------------------------------------

// The parent of p, with the child list p is on locked (*clp); NULL if it has
// none. Runs inside an epoch section: the parent and its lists cannot be freed
// while we chase them. parent and kin only ever change to NULL (orphaned).
static struct proc *lock_parent(struct proc *p, struct childlist **clp)
{
    for (;;) {
        struct proc *par = READ_ONCE(p->parent);
        struct childlist *cl = READ_ONCE(p->kin);
        if (!par || !cl)
            return NULL;
        spin_lock(&cl->lock);
        if (READ_ONCE(p->parent) == par && READ_ONCE(p->kin) == cl) {
            *clp = cl;
            return par;
        }
        spin_unlock(&cl->lock); // orphaned meanwhile
    }
}

// A child on cl has something new to report (or left): wake who waits for it by
// pid, and the waits for any child if there are some. cl is locked: a waiter for
// any child counted itself before it locked cl to look (wait_child), so either it
// saw the change or we see it counted.
static void wake_waiters(struct proc *par, struct childlist *cl)
{
    waitq_wake_all(&cl->wq);
    if (load_seqcst(&par->any_waiters))
        waitq_wake_all(&par->child_wq);
}

// Orphans have no one to wait for them: zombies among them are reaped now, the
// others reap themselves when they exit.
static void abandon_children(struct proc *p)
{
    spin_lock(&p->lock);
    for (struct childlist *cl = p->lists; cl; cl = cl->next) {
        spin_lock(&cl->lock);
        while (!list_empty(&cl->list)) {
            struct proc *c = list_entry(cl->list.next, struct proc, sibling);
            list_remove(&c->sibling);
            WRITE_ONCE(c->parent, NULL);
            WRITE_ONCE(c->kin, NULL);
            if (c->state == P_ZOMBIE)
                proc_reap(c);
        }
        spin_unlock(&cl->lock);
    }
    spin_unlock(&p->lock);
}

// ---- groups our exit orphans -------------------------------------------------------
// Leaving, p may orphan its own group (its parent in another group of the session
// was what kept the group attached) and its children's groups (p was that parent
// for them). Such a group with a stopped member gets SIGHUP, then SIGCONT: no
// shell could ever continue it (POSIX). Done before the children are abandoned;
// p counts as gone. The common exit (parent and children in p's own group, or
// no children) walks no group.

#define ORPHANS_BATCH 8

struct orphans {
    int pgid[ORPHANS_BATCH];
    int n;
    bool more; // the batch was full: look again after sending
};

// Group pgid, in p's session, may be left orphaned by p.
static void consider(struct orphans *o, struct proc *p, int pgid)
{
    for (int i = 0; i < o->n; i++)
        if (o->pgid[i] == pgid)
            return;
    bool stopped;
    if (!pgrp_orphaned(pgid, p, &stopped) || !stopped)
        return;
    if (o->n < ORPHANS_BATCH)
        o->pgid[o->n++] = pgid;
    else
        o->more = true;
}

static void find_orphans(struct proc *p, struct orphans *o)
{
    int pgid = READ_ONCE(p->pgid), sid = READ_ONCE(p->sid);
    epoch_enter();
    struct proc *par = READ_ONCE(p->parent);
    if (par && READ_ONCE(par->pgid) != pgid && READ_ONCE(par->sid) == sid)
        consider(o, p, pgid);
    epoch_exit();
    // Proc and child-list locks come before the group's (pgrp.c).
    spin_lock(&p->lock);
    for (struct childlist *cl = p->lists; cl; cl = cl->next) {
        spin_lock(&cl->lock);
        list_for_each(it, &cl->list) {
            struct proc *c = list_entry(it, struct proc, sibling);
            int cg = READ_ONCE(c->pgid);
            if (READ_ONCE(c->state) != P_ZOMBIE && cg != pgid && READ_ONCE(c->sid) == sid)
                consider(o, p, cg);
        }
        spin_unlock(&cl->lock);
    }
    spin_unlock(&p->lock);
}

static void hangup_orphans(struct proc *p)
{
    struct orphans o;
    do {
        o.n = 0;
        o.more = false;
        find_orphans(p, &o);
        // SIGCONT resumes them as it is sent: a second look finds them no longer
        // stopped.
        for (int i = 0; i < o.n; i++) {
            struct ksiginfo hup = {.signo = SIGHUP, .code = SI_KERNEL};
            struct ksiginfo cont = {.signo = SIGCONT, .code = SI_KERNEL};
            signal_send_group(o.pgid[i], SIGHUP, &hup);
            signal_send_group(o.pgid[i], SIGCONT, &cont);
        }
    } while (o.more);
}

// Leave the address space on this CPU (before it may be freed).
static void drop_vm(struct thread *t)
{
    push_off();
    struct vmspace *vs = t->vm;
    t->vm = NULL;
    uvm_switch(vs, NULL);
    pop_off();
}

static int chld_code(int wstatus)
{
    if ((wstatus & 0x7f) == 0)
        return CLD_EXITED;
    return (wstatus & 0x80) ? CLD_DUMPED : CLD_KILLED;
}

// The last thread has left: free what the process holds, become a zombie and tell
// the parent.
static __noreturn void proc_finish(struct thread *t, int wstatus)
{
    struct proc *p = t->proc;
    itimer_exit(p);
    struct vmspace *vs = p->vm; // thread_leave has already left it
    p->vm = NULL;
    vmspace_put(vs);
    // The fd tables went with the threads (thread_leave); the cwd goes now.
    fsctx_release(p->fsc);
    p->fsc = NULL;
    vfork_release(p);
    hangup_orphans(p);
    abandon_children(p);
    if (p->pid == READ_ONCE(p->sid))
        tty_session_exit(p->sid); // a controlling process: hang its terminal up
    struct ksiginfo info = {.signo = p->exit_signal, .code = chld_code(wstatus), .pid = p->pid,
                            .status = (wstatus & 0x7f) ? (wstatus & 0x7f) : (wstatus >> 8) & 0xff};
    int exit_signal = p->exit_signal;
    // Publish the status. After the unlock the process may be freed at any time
    // by whoever reaps it: touch nothing of it afterwards.
    epoch_enter();
    struct childlist *cl = NULL;
    struct proc *par = lock_parent(p, &cl);
    // A parent that ignores SIGCHLD (or asked SA_NOCLDWAIT) never waits: no zombie.
    struct k_sigaction chld = par ? signal_action(par, SIGCHLD) : (struct k_sigaction){0};
    if (par && exit_signal == SIGCHLD &&
        (chld.handler == SIG_IGN || (chld.flags & SA_NOCLDWAIT))) {
        list_remove(&p->sibling);
        WRITE_ONCE(p->parent, NULL);
        WRITE_ONCE(p->kin, NULL);
        wake_waiters(par, cl); // a waiter may now have no children left
        spin_unlock(&cl->lock);
        par = NULL;
    }
    // The report must not be reaped before its SIGCHLD is pending (Linux's order:
    // a handler that runs when wait returns has seen it): count ourselves in
    // before the zombie can be seen. The signal is generated now: if the parent
    // ignores it now, it is discarded now, not sent later to a handler installed
    // meanwhile. A signal that is sent takes the parent's lock anyway.
    bool announce = par && exit_signal && !signal_discarded(par, exit_signal);
    if (announce)
        fetch_add_relaxed(&par->chld_inflight, 1); // cl's unlock publishes it
    spin_lock(&p->lock);
    p->wstatus = wstatus;
    p->state = P_ZOMBIE;
    bool self_reap = !par && !p->kernel_waited;
    if (self_reap)
        proc_reap(p);
    else if (!par)
        waitq_wake_all(&p->exit_wq);
    spin_unlock(&p->lock);
    if (par) {
        wake_waiters(par, cl);
        spin_unlock(&cl->lock);
        if (announce) {
            signal_send_proc(par, exit_signal, &info); // par stays valid: epoch
            fetch_sub_release(&par->chld_inflight, 1);
        }
    }
    epoch_exit();
    usig_free(t->sig);
    t->sig = NULL;
    thread_exit();
}

// The current thread leaves its process; the last one out ends the process.
static __noreturn void thread_leave(int wstatus)
{
    struct thread *t = thread_current();
    struct proc *p = t->proc;
    if (t->clear_child_tid) {
        // Tell a joiner (pthread_join waits on this word with FUTEX_WAIT).
        uint32_t zero = 0;
        if (copy_to_user(t->clear_child_tid, &zero, sizeof zero) == 0)
            futex_wake(t->vm, t->clear_child_tid, 1);
    }
    // Off the address space before anyone can see us gone: exec frees it as soon
    // as it finds itself the only thread.
    drop_vm(t);
    // Each thread holds a reference on its fd table (fdtable.h); the last one
    // closes every fd, so pipes see their end close now, not at reaping. Out
    // of t first: /proc finds a table through its threads (proc_fdtable).
    struct fdtable *fdt = t->fdt;
    WRITE_ONCE(t->fdt, NULL);
    fdtable_release(fdt);
    spin_lock(&p->lock);
    list_remove(&t->group_link);
    p->gone_utime += READ_ONCE(t->utime);
    p->gone_stime += READ_ONCE(t->stime);
    main_changed(p);
    bool last = --p->nthreads == 0;
    if (!last) { // our children stay on our list; the next new thread takes it
        t->children->next_spare = p->spare;
        p->spare = t->children;
        t->children = NULL;
    }
    if (p->group_exiting)
        wstatus = p->group_status;
    // Our pending signals die with us; a process-wide one stays for the others.
    // Exec waits for the other threads to leave. Wake it before the unlock: once
    // the lock is dropped the last thread may finish and p be reaped and freed.
    if (!last)
        waitq_wake_all(&p->exit_wq);
    spin_unlock(&p->lock);
    if (last)
        proc_finish(t, wstatus);
    usig_free(t->sig);
    t->sig = NULL;
    thread_exit();
}

void thread_exit_user(int code) { thread_leave(W_EXITCODE(code & 0xff, 0)); }

bool proc_group_exiting(struct proc *p) { return READ_ONCE(p->group_exiting); }

// Start a group exit: every other thread gets SIGKILL and leaves at its next
// return to user mode (or from its interruptible sleep). The first status wins.
// Locked by the caller.
static void kill_others(struct proc *p, struct thread *self, int wstatus)
{
    if (!p->group_exiting) {
        p->group_exiting = true;
        p->group_status = wstatus;
    }
    list_for_each(it, &p->threads) {
        struct thread *o = list_entry(it, struct thread, group_link);
        if (o == self)
            continue;
        o->sig->pending |= 1UL << (SIGKILL - 1);
        signal_kick(o);
    }
}

void proc_exit_group(int wstatus)
{
    struct thread *t = thread_current();
    struct proc *p = t->proc;
    push_off(); // signal_kick compares with this CPU
    spin_lock(&p->lock);
    kill_others(p, t, wstatus);
    spin_unlock(&p->lock);
    pop_off();
    thread_leave(wstatus);
}

// For exec: make the caller the process's only thread. false if a group exit
// or another thread's exec overtook us (the caller then leaves: that exec
// sent it SIGKILL first, under the same lock). Two threads that exec at once
// would otherwise each wait for the other to leave, for ever.
bool proc_kill_other_threads(void)
{
    struct thread *t = thread_current();
    struct proc *p = t->proc;
    push_off();
    spin_lock(&p->lock);
    if (p->group_exiting || p->execing) {
        spin_unlock(&p->lock);
        pop_off();
        return false;
    }
    bool alone = p->nthreads == 1;
    if (!alone) {
        kill_others(p, t, 0);
        p->group_exiting = false; // not us: only the others are told to leave
        p->execing = t;
    }
    spin_unlock(&p->lock);
    pop_off();
    if (alone)
        return true;
    wait_event(&p->exit_wq, READ_ONCE(p->nthreads) == 1);
    spin_lock(&p->lock);
    p->execing = NULL;
    spin_unlock(&p->lock);
    return true;
}

// ---- wait -----------------------------------------------------------------------

int proc_wait_kernel(struct proc *p)
{
    wait_event(&p->exit_wq, READ_ONCE(p->state) == P_ZOMBIE);
    // The exiting thread drops p->lock after the wake-up; wait for that.
    spin_lock(&p->lock);
    int st = p->wstatus;
    spin_unlock(&p->lock);
    proc_reap(p);
    return st;
}

// A child on list l matching pid (0: any) or group pgid (0: any) with something
// to report: its exit (WEXITED; unlinked, to be reaped, unless WNOWAIT), or its
// stop (WUNTRACED) or continuation (WCONTINUED). *any is set if a match exists at
// all. l's child list is locked by the caller.
static struct proc *find_report(struct list *l, int pid, int pgid, int options, int *st,
                                bool *any, bool *reap)
{
    list_for_each(it, l) {
        struct proc *c = list_entry(it, struct proc, sibling);
        if ((pid > 0 && c->pid != pid) || (pgid > 0 && READ_ONCE(c->pgid) != pgid))
            continue;
        *any = true;
        if (c->state == P_ZOMBIE && (options & WEXITED)) {
            // The child's exit path released its lock before waking us; it no
            // longer touches c.
            *st = c->wstatus;
            if (!(options & WNOWAIT)) {
                list_remove(&c->sibling);
                *reap = true;
            }
            return c;
        }
        int r = c->state == P_ZOMBIE ? 0 : c->wait_report;
        if ((r == W_CONTINUED && (options & WCONTINUED)) ||
            (r && r != W_CONTINUED && (options & WUNTRACED))) {
            *st = r;
            if (!(options & WNOWAIT))
                c->wait_report = 0;
            return c;
        }
    }
    return NULL;
}

// Look for a report on child list cl (if not NULL) or on every list of p.
static struct proc *look(struct proc *p, struct childlist *cl, int pid, int pgid, int options,
                         int *st, bool *any, bool *reap)
{
    struct proc *c = NULL;
    *any = *reap = false;
    if (cl) {
        spin_lock(&cl->lock);
        c = find_report(&cl->list, pid, pgid, options, st, any, reap);
        spin_unlock(&cl->lock);
        return c;
    }
    spin_lock(&p->lock);
    for (cl = p->lists; cl && !c; cl = cl->next) {
        spin_lock(&cl->lock);
        c = find_report(&cl->list, pid, pgid, options, st, any, reap);
        spin_unlock(&cl->lock);
    }
    spin_unlock(&p->lock);
    return c;
}

// The list child pid is on if it is a child of p (it stays there until reaped).
static struct childlist *list_of(struct proc *p, int pid)
{
    epoch_enter();
    struct proc *c = pid_lookup(pid);
    struct childlist *cl = c && READ_ONCE(c->parent) == p ? READ_ONCE(c->kin) : NULL;
    epoch_exit();
    return cl;
}

// Wait for a child matching pid (> 0), or in group pgid (> 0), or any (both
// 0), to have something to report. Returns its pid with its wait status in *st,
// 0 (WNOHANG, none yet), -ECHILD, or -ERESTARTSYS (a signal). A wait for one pid
// looks at and sleeps on that child's list only; the others count themselves
// in any_waiters (before they look, see wake_waiters) and sleep on child_wq.
static long wait_child(int pid, int pgid, int options, int *st)
{
    struct thread *t = thread_current();
    struct proc *p = t->proc;
    struct childlist *cl = NULL;
    if (pid > 0 && !(cl = list_of(p, pid)))
        return -ECHILD;
    struct waitq *q = cl ? &cl->wq : &p->child_wq;
    if (!cl)
        fetch_add(&p->any_waiters, 1);
    struct proc *c = NULL;
    bool any = false, reap = false;
    long ret = 0;
    for (;;) {
        waitq_prepare(q);
        c = look(p, cl, pid, pgid, options, st, &any, &reap);
        if (c)
            ret = c->pid;
        if (c || !any || (options & WNOHANG))
            break;
        if (signal_pending(t)) {
            ret = -ERESTARTSYS;
            break;
        }
        schedule();
    }
    waitq_finish(q);
    if (!cl)
        fetch_sub_relaxed(&p->any_waiters, 1);
    // A report seen: its SIGCHLD is pending by the time we return (see exit).
    while (c && load_acquire(&p->chld_inflight))
        sched_yield();
    if (reap)
        proc_reap(c);
    if (!c && ret == 0 && !any)
        return -ECHILD;
    return ret;
}

void proc_report_stop(struct proc *p, int report)
{
    epoch_enter(); // the parent stays allocated while we use it
    struct childlist *cl = NULL;
    struct proc *par = lock_parent(p, &cl);
    if (par) {
        bool quiet = signal_action(par, SIGCHLD).flags & SA_NOCLDSTOP;
        bool announce = !quiet && !signal_discarded(par, SIGCHLD); // as at exit
        if (announce)
            fetch_add_relaxed(&par->chld_inflight, 1);
        p->wait_report = report;
        wake_waiters(par, cl);
        spin_unlock(&cl->lock);
        struct ksiginfo info = {.signo = SIGCHLD, .pid = p->pid};
        info.code = report == W_CONTINUED ? CLD_CONTINUED : CLD_STOPPED;
        info.status = report == W_CONTINUED ? SIGCONT : report >> 8;
        if (announce) {
            signal_send_proc(par, SIGCHLD, &info);
            fetch_sub_release(&par->chld_inflight, 1);
        }
    }
    epoch_exit();
}

long proc_wait4(int pid, uint64_t ustatus, int options)
{
    if (pid == INT32_MIN)
        return -ESRCH; // Linux: -INT_MIN is no group
    // pid > 0: that child; -1: any; 0: our group; < -1: group -pid.
    int pgid = pid == 0 ? READ_ONCE(proc_current()->pgid) : pid < -1 ? -pid : 0;
    if (pid <= 0)
        pid = 0;
    int st = 0;
    long r = wait_child(pid, pgid, WEXITED | (options & (WNOHANG | WUNTRACED | WCONTINUED)), &st);
    if (r > 0 && ustatus && copy_to_user(ustatus, &st, sizeof st) < 0)
        return -EFAULT;
    return r;
}

// Linux's siginfo_t as waitid fills it: signo, errno, code, then pid, uid, status.
struct chld_siginfo {
    int32_t signo, errno_, code, pad;
    int32_t pid, uid, status;
    int32_t rest[25];
};

long proc_waitid(int idtype, int id, uint64_t uinfo, int options)
{
    if (options & ~(WNOHANG | WEXITED | WSTOPPED | WCONTINUED | WNOWAIT))
        return -EINVAL;
    if (!(options & (WEXITED | WSTOPPED | WCONTINUED)))
        return -EINVAL;
    int pid = 0, pgid = 0;
    if (idtype == P_PID && id > 0)
        pid = id;
    else if (idtype == P_PGID && id >= 0)
        pgid = id ? id : READ_ONCE(proc_current()->pgid);
    else if (idtype != P_ALL)
        return -EINVAL; // pidfds come later
    int st = 0;
    long r = wait_child(pid, pgid, options, &st);
    if (r < 0)
        return r;
    struct chld_siginfo si = {0};
    if (r > 0) {
        si.signo = SIGCHLD;
        si.pid = r;
        if (st == W_CONTINUED) {
            si.code = CLD_CONTINUED;
            si.status = SIGCONT;
        } else if ((st & 0xff) == 0x7f) {
            si.code = CLD_STOPPED;
            si.status = st >> 8;
        } else {
            si.code = chld_code(st);
            si.status = (st & 0x7f) ? (st & 0x7f) : (st >> 8) & 0xff;
        }
    }
    if (uinfo && copy_to_user(uinfo, &si, sizeof si) < 0)
        return -EFAULT;
    return 0;
}

// ---- exceptions -------------------------------------------------------------------

static void exception_signal(const struct trapframe *tf)
{
    switch (tf->vector) {
    case T_DE: signal_force(SIGFPE, FPE_INTDIV, tf->rip); break;
    case T_MF: case T_XM: signal_force(SIGFPE, FPE_FLTINV, tf->rip); break;
    case T_UD: signal_force(SIGILL, ILL_ILLOPN, tf->rip); break;
    case T_DB: signal_force(SIGTRAP, TRAP_BRKPT, tf->rip); break;
    case T_BP: signal_force(SIGTRAP, SI_KERNEL, 0); break; // int3, as Linux reports it
    case T_AC: signal_force(SIGBUS, BUS_ADRALN, tf->rip); break;
    default: signal_force(SIGSEGV, SI_KERNEL, 0); break; // #GP and the like
    }
}

// How long init's fault waits for memory before it tries again; how many
// faults in a row of another process wait for pending frees.
#define OOM_INIT_WAIT_NS 10000000 // 10 ms
#define OOM_FAULT_WAITS 8 // epochs, as mm/page.c waits

// A fault that needs memory there is none of (uvm_fault said -ENOMEM). The
// process dies of SIGKILL, as the victim of Linux's out-of-memory killer does,
// and the victim is the process whose fault could not be served: Linux's rule
// when vm.oom_kill_allocating_task is set. It needs no look at any other
// process, and it picks one that could not go on anyway; its pages come back
// as it exits. Not SIGBUS: a handler would return to the same access, which
// would fault again for as long as memory stays short. Init is never the
// victim: its fault waits a moment, outside any epoch read section (so that
// exits and deferred frees can give pages back), and the access runs again.
static void fault_out_of_memory(struct thread *t, uintptr_t addr)
{
    struct proc *p = t->proc;
    if (p->init) {
        sched_sleep_until(nsec_now() + OOM_INIT_WAIT_NS);
        return;
    }
    // Pages may be on their way back (mm/page.c, "running out"): the fault ran
    // in an epoch section, where the allocator could not wait for them. Wait
    // here and run the access again, a few times in a row at most.
    uint64_t until = 0;
    if (t->oom_waits < OOM_FAULT_WAITS && page_wait_if_short(&until)) {
        t->oom_waits++;
        return;
    }
    kprintf("out of memory: killed process %d (%s), fault at %lx\n", p->pid, p->name, addr);
    kprintf("out of memory: %lu pages free, %lu epoch callbacks pending (epoch %lu), "
            "%lu refcache objects in review (epoch %lu)\n", page_count_free(), epoch_pending(),
            epoch_current(), refcache_reviewing(), refcache_epoch());
    struct ksiginfo info = {.signo = SIGKILL, .code = SI_KERNEL};
    signal_send_proc(p, SIGKILL, &info);
}

void user_exception(struct trapframe *tf)
{
    struct thread *t = thread_current();
    uintptr_t addr = tf->vector == T_PF ? read_cr2() : 0;
    sti();
    if (tf->vector != T_PF) {
        exception_signal(tf);
        return;
    }
    // A fault uvm_fault cannot resolve says which signal, si_code and si_addr
    // to deliver (SIGSEGV with MAPERR/ACCERR, SIGBUS past the end of a file).
    struct fault_info fi = {.signo = SIGSEGV, .code = SEGV_MAPERR, .addr = addr};
    page_shortage_clear();
    int r = t->vm ? uvm_fault(t->vm, addr, tf->err, &fi) : SIGSEGV;
    if (r == -ENOMEM)
        fault_out_of_memory(t, addr);
    else if (r)
        signal_force(fi.signo, fi.code, fi.addr);
    if (r != -ENOMEM && t->oom_waits)
        t->oom_waits = 0;
}
