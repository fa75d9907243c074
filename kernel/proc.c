// Processes: creation from an ELF image, exit, wait4 and reaping, and what happens
// when user code takes an exception.
//
// Commute: creating, exiting and reaping unrelated processes. Each process has its
// own lock, guarding its list of children and their parent links; exit touches
// only the exiting process, its children and its parent. pids come from per-CPU
// ranges and the pid table is lock-free for readers (pid.c). A reaped process is
// freed after an epoch grace period, so a child reading its parent pointer (or
// anybody holding a pid_lookup result) inside an epoch section never sees freed
// memory.
#include "dev.h"
#include "fdtable.h"
#include "file.h"
#include "fs_context.h"
#include "gdt.h"
#include "mm.h"
#include "percpu.h"
#include "proc.h"
#include "syscall.h"
#include "trap.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "usercopy.h"
#include "uvm.h"
#include "x86.h"

struct proc *proc_current(void) { return thread_current()->proc; }

static struct proc *proc_alloc(const char *name)
{
    struct proc *p = kzalloc(sizeof *p);
    if (!p)
        return NULL;
    spin_init(&p->lock, "proc");
    list_init(&p->children);
    list_init(&p->sibling);
    waitq_init(&p->child_wq, "wait4");
    waitq_init(&p->exit_wq, "proc exit");
    strlcpy(p->name, name, sizeof p->name);
    p->state = P_ALIVE;
    return p;
}

// fds 0, 1 and 2: one description of the console (or of the test's capture
// buffer), as a login shell would have them.
static int std_files(struct proc *p, struct capture *cap)
{
    struct file *f = tty_open_console(cap);
    if (!(p->fdt = fdtable_new()) || !(p->fsc = fsctx_new()) || !f) {
        if (f)
            file_put(f);
        return -ENOMEM;
    }
    int err = 0;
    for (int fd = 0; fd < 3 && !err; fd++) {
        file_get(f); // each fd holds a reference
        if ((err = fd_install_at(p->fdt, fd, f, false)) < 0)
            file_put(f);
        else
            err = 0;
    }
    file_put(f);
    return err;
}

// Files and cwd go at exit (pipes see their end close now), not at reaping.
static void release_files(struct proc *p)
{
    if (p->fdt)
        fdtable_release(p->fdt);
    if (p->fsc)
        fsctx_release(p->fsc);
    p->fdt = NULL;
    p->fsc = NULL;
}

static void free_proc_cb(struct epoch_cb *cb) { kfree(container_of(cb, struct proc, free_cb)); }

// Unpublish a zombie and free it once no lock-free reader can hold it.
static void proc_reap(struct proc *p)
{
    pid_remove(p);
    epoch_defer(&p->free_cb, free_proc_cb);
}

// The first thing a user thread runs, on its kernel stack: leave for user mode
// through the trapframe proc_spawn built.
static void user_thread_entry(void *arg)
{
    (void)arg;
    struct trapframe *tf = thread_trapframe(thread_current());
    user_return(tf);
    user_enter(tf);
}

int proc_spawn(const char *name, const void *image, size_t len, const char *const argv[],
               const char *const envp[], const cpumask_t *affinity, struct capture *cap,
               struct proc **out)
{
    struct proc *p = proc_alloc(name);
    if (!p)
        return -ENOMEM;
    struct vmspace *vs = vmspace_new();
    struct thread *t = thread_alloc(name, user_thread_entry, NULL, false);
    if (!vs || !t) {
        if (vs)
            vmspace_free(vs);
        if (t) {
            kstack_free(t->kstack);
            kfree(t);
        }
        kfree(p);
        return -ENOMEM;
    }
    struct exec_info ei;
    int err = std_files(p, cap);
    if (!err)
        err = elf_exec(vs, image, len, argv, envp, name, &ei);
    if (err) {
        release_files(p);
        vmspace_free(vs);
        kstack_free(t->kstack);
        kfree(t);
        kfree(p);
        return err;
    }
    struct trapframe *tf = thread_trapframe(t);
    memset(tf, 0, sizeof *tf);
    tf->rip = ei.entry;
    tf->rsp = ei.sp;
    tf->cs = GDT_UCODE | 3;
    tf->ss = GDT_UDATA | 3;
    tf->rflags = RFLAGS_IF | 2;
    vs->brk_start = vs->brk = ei.brk;

    p->vm = vs;
    p->thread = t;
    p->capture = cap;
    p->kernel_waited = true;
    p->pid = pid_alloc();
    t->proc = p;
    t->vm = vs;
    t->tid = p->pid;
    pid_insert(p);
    *out = p;
    thread_start(t, affinity);
    return 0;
}

// The parent of the current process, locked; NULL if it has none. Runs inside an
// epoch section: the parent cannot be freed while we chase it.
static struct proc *lock_parent(struct proc *p)
{
    for (;;) {
        struct proc *par = READ_ONCE(p->parent);
        if (!par)
            return NULL;
        spin_lock(&par->lock);
        if (READ_ONCE(p->parent) == par)
            return par;
        spin_unlock(&par->lock); // reparented meanwhile: try again
    }
}

// Orphans have no one to wait for them: zombies among them are reaped now, the
// others reap themselves when they exit.
static void abandon_children(struct proc *p)
{
    spin_lock(&p->lock);
    while (!list_empty(&p->children)) {
        struct proc *c = list_entry(p->children.next, struct proc, sibling);
        list_remove(&c->sibling);
        WRITE_ONCE(c->parent, NULL);
        if (c->state == P_ZOMBIE)
            proc_reap(c);
    }
    spin_unlock(&p->lock);
}

void proc_exit(int wstatus)
{
    struct thread *t = thread_current();
    struct proc *p = t->proc;
    assert(p);
    // Leave the address space before freeing it: no CPU may still use it.
    struct vmspace *vs = t->vm;
    push_off();
    t->vm = NULL;
    uvm_switch(vs, NULL);
    pop_off();
    p->vm = NULL;
    vmspace_free(vs);
    release_files(p);

    abandon_children(p);

    // Publish the status. After the unlock the process may be freed at any time
    // by whoever reaps it: touch nothing of it afterwards.
    epoch_enter();
    struct proc *par = lock_parent(p);
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
        waitq_wake_all(&par->child_wq);
        spin_unlock(&par->lock);
    }
    epoch_exit();
    thread_exit();
}

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

// A zombie child matching pid (-1: any), unlinked; *any says whether a match
// exists at all. Locked by the caller.
static struct proc *take_zombie(struct proc *p, int pid, bool *any)
{
    *any = false;
    list_for_each(it, &p->children) {
        struct proc *c = list_entry(it, struct proc, sibling);
        if (pid != -1 && c->pid != pid)
            continue;
        *any = true;
        if (c->state == P_ZOMBIE) {
            list_remove(&c->sibling);
            return c;
        }
    }
    return NULL;
}

long proc_wait4(int pid, uint64_t ustatus, int options)
{
    struct proc *p = proc_current();
    if (pid < -1 || pid == 0)
        return -EINVAL; // process groups come later
    struct proc *z = NULL;
    bool any = false;
    for (;;) {
        waitq_prepare(&p->child_wq);
        spin_lock(&p->lock);
        z = take_zombie(p, pid, &any);
        spin_unlock(&p->lock);
        if (z || !any || (options & WNOHANG))
            break;
        schedule();
    }
    waitq_finish(&p->child_wq);
    if (!z)
        return any ? 0 : -ECHILD;
    // The child's exit path released its lock before waking us; it no longer
    // touches z.
    int st = z->wstatus, zpid = z->pid;
    proc_reap(z);
    if (ustatus && copy_to_user(ustatus, &st, sizeof st) < 0)
        return -EFAULT;
    return zpid;
}

static int exception_signal(uint64_t vector)
{
    switch (vector) {
    case T_DE: case T_MF: case T_XM: return SIGFPE;
    case T_UD: return SIGILL;
    case T_DB: case T_BP: return SIGTRAP;
    case T_AC: return SIGBUS;
    default: return SIGSEGV;
    }
}

void user_exception(struct trapframe *tf)
{
    struct thread *t = thread_current();
    uintptr_t addr = tf->vector == T_PF ? read_cr2() : 0;
    sti();
    // A fault uvm_fault cannot resolve says which signal (and si_code, si_addr
    // in fi) to deliver; signal delivery will take it from there.
    struct fault_info fi;
    if (tf->vector == T_PF && t->vm && uvm_fault(t->vm, addr, tf->err, &fi) == 0)
        return;
    int sig = tf->vector == T_PF && t->vm ? fi.signo : exception_signal(tf->vector);
    kprintf("%s[%d]: killed by signal %d (vector %lu at %lx, addr %lx)\n", t->name, t->tid,
            sig, tf->vector, tf->rip, addr);
    proc_exit(W_EXITCODE(0, sig));
}
