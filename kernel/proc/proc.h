// Processes (proc.c), the pid table (pid.c), program loading (elf.c) and the
// user programs built into the kernel image.
#pragma once
#include "file/fdtable.h"
#include "kernel.h"
#include "lib/list.h"
#include "proc/sched.h"
#include "sync/cpumask.h"
#include "sync/epoch.h"
#include "sync/spinlock.h"
#include "uapi/abi.h"

struct vmspace;
struct trapframe;
struct fdtable;
struct fs_context;

// Console output of a process captured into a buffer instead (tests).
struct capture {
    struct spinlock lock;
    char *buf;
    size_t cap, len;
};

enum { P_ALIVE, P_ZOMBIE };

// rt_sigaction's struct as the kernel sees it (Linux's struct kernel_sigaction).
struct k_sigaction {
    uint64_t handler, flags, restorer, mask;
};

// Information kept with a pending signal: what siginfo_t will say.
struct ksiginfo {
    int signo, code, errno_;
    int pid, uid, status; // kill/tgkill: sender; SIGCHLD: child and its status
    uint64_t addr;        // faults: the address
};

#define RLIM_NLIMITS 16
struct rlimit64 {
    uint64_t cur, max;
};

#define PROC_CMDLINE_MAX 256

// A process is a thread group: an address space, signal actions and a pid shared
// by its threads (struct thread.group_link on `threads`).
//
// Who may write each field (docs/conventions.md); readers need the same unless
// r says they may read without it:
//   [i] immutable once published      [a] atomic (sync/atomic.h), no lock
//   [l] this process's lock           [k] the lock of the child list it is on (kin)
//   [g] its group partition's lock    [h] its pid table bucket's lock (pid.c)
//   [u] only its single thread: exec, the last thread's exit, close_range's
//       unshare, when no other thread can look
//   [o] the process itself (its own exec or exit)
//   [s] under [l] inside the act_seq write section: lock-free readers retry
//   [e] read lock-free inside an epoch section: freed a grace period after
//   [r] also read without the lock, racily (READ_ONCE)
// Several letters: writers hold all the locks named, readers any one of them.
struct proc {
    // Read on every system call and return to user space; written rarely. Its
    // own line, so that taking the lock (a child's exit discarding an ignored
    // SIGCHLD, a wait) writes nothing these paths read.
    int pid;                 // [i]
    int state;               // [l,k,r] P_ALIVE / P_ZOMBIE ([k] while it has a parent)
    bool group_exiting;      // [l,r] exit_group or a fatal signal: every thread leaves
    bool stopped;            // [l,r] group stop (SIGSTOP and friends) until SIGCONT
    struct vmspace *vm;      // [u] shared by the threads; a reference of its own
    struct capture *capture; // [i]
    struct fs_context *fsc;  // [u] cwd and umask (fs_context.h)
    int pgid, sid;           // [g,r] process group and session (pgrp.c)
    struct usig *main_sig;   // [l,e] the first thread's (see usig)

    struct spinlock lock __cacheline_aligned; // child lists, state, threads, signal state, group exit
    int wstatus;             // [l,k] wait4 status once a zombie
    struct proc *parent;     // [k,e] NULL: the kernel (kernel_waited) or orphaned (reaped at exit)
    struct childlist *kin;   // [k,e] the parent's list we are on
    bool kernel_waited;      // [i] a kernel thread will reap it with proc_wait_kernel
    struct list sibling;     // [k] on kin->list
    struct childlist *lists; // [l] every child list of ours (childlist.next)
    struct childlist *spare; // [l] those of threads that left, for new threads (next_spare)
    struct waitq exit_wq;    // the kernel waiting for this process; de_thread in exec
    struct list threads;     // [l] live threads, struct thread.group_link
    int nthreads;            // [l,r]
    struct thread *execing;  // [l] the thread whose execve waits for the others to leave
    int group_status;        // [l] the wait status then
    int exit_signal;         // [i] sent to the parent at exit (clone's CSIGNAL; SIGCHLD)
    struct waitq stop_wq;    // the stopped threads wait here
    int wait_report;         // [k] W_STOPCODE / W_CONTINUED for the parent's wait; 0 once
                             // reported
    struct vfork_wait *vfork; // [o] our vfork parent's wait, released at our exec or exit

    // Waiting for any child (or a vfork child's exec): written by those waits only,
    // read by every child's exit.
    struct waitq child_wq __cacheline_aligned;
    int any_waiters;         // [a] threads in a wait for any child or a group of them

    uint32_t act_seq __cacheline_aligned; // [l,r] odd while sigactions change
    struct k_sigaction sigactions[64]; // [s]
    uint64_t sigpending;     // [l,r] sent to the process: any thread not blocking may take it
    int chld_inflight;       // [a] children that made a report visible and have yet to send
                             // its SIGCHLD: a wait returns only after (proc.c)
    struct ksiginfo *siginfo; // [l] 64 of them, allocated apart: see proc_alloc
    struct rlimit64 rlim[RLIM_NLIMITS]; // [l,r]
    struct proc *hash_next;  // [h,e] pid table chain (pid.c)
    bool did_exec;           // [u,r] setpgid on a child that exec'd: EACCES
    bool init;               // [i] the system's init: user signals it has no handler for,
                             // and the out-of-memory kill, pass it by (signal.c, proc.c)
    struct epoch_cb free_cb; // the reaper's
    struct itimer *itimer;   // [a] ITIMER_REAL (itimer.c): NULL until first set
    char name[16];           // [u,r]
    uint64_t start_nsec;     // [i] nsec_now() when made (/proc/PID/stat's starttime)
    uint64_t gone_utime, gone_stime; // [l] ticks of threads that have left (thread.utime)
    // argv of the running program as NUL-terminated strings, cut at
    // PROC_CMDLINE_MAX bytes (/proc/PID/cmdline). Another process may read it
    // while exec rewrites it, and see a mix (as racy as Linux's read of argv).
    uint16_t cmdline_len;    // [u,r]
    char cmdline[PROC_CMDLINE_MAX]; // [u,r]

    // Written when a neighbour on the group's member list joins or leaves: a
    // line of its own, away from what open/rlimit/getpgid read.
    struct pgrp *pgrp __cacheline_aligned; // [g,e] NULL once reaped
    struct list pgrp_link;   // [g] on a member list of the group
    int pgrp_part;           // [g,r] which one (pgrp.c)
};

// The children one thread created with fork or posix_spawn (proc.c). Each thread
// adds to its own list, so two threads creating, reaping and waiting for their
// own children share no line. A list lives as long as its process: a thread that
// leaves hands it, children and all, to the next thread the process creates.
// Letters as for struct proc; [l] is this list's lock, [P] the process's lock.
struct childlist {
    struct spinlock lock;    // list, and the children's parent, kin and wait_report
    struct list list;        // [l] struct proc.sibling
    struct waitq wq;         // waiting for a particular child on this list
    struct childlist *next;  // [P] proc.lists
    struct childlist *next_spare; // [P] proc.spare
};

// Per-thread signal state (signal.c), on three kinds of line so that a sender
// (another process's SIGCHLD, kill) and the thread's own fault signals share only
// what they must: blocked, written only by the thread itself when its mask
// changes and read by senders; the thread's own bookkeeping, written on its
// deliveries and read by nobody else; and what senders write (pending and info[]
// under lock, inside the process lock when both are held). Freed a grace
// period after its thread left (senders read proc.main_sig's blocked lock-free).
// Letters as for struct proc; [l] is this usig's lock, [t] the thread itself
// (or its creator before it starts).
struct usig {
    uint64_t blocked;        // [t,r]

    uint64_t saved_blocked __cacheline_aligned; // [t] rt_sigsuspend's, restored after the handler
    bool restore_blocked;    // [t]
    uint64_t ss_sp, ss_size; // [t] sigaltstack
    int ss_flags;            // [t]

    struct spinlock lock __cacheline_aligned;
    uint64_t pending;        // [l,r]
    struct ksiginfo info[64]; // [l]
    struct epoch_cb free_cb; // usig_free's
};

struct exec_info {
    uintptr_t entry, sp, brk; // a loaded program's start (elf.c)
    const char *const *argv;  // its arguments (the loader's caller's), for proc_set_cmdline
};

// p's cmdline from argv (NULL: p's name). The process itself at exec, or its
// creator before anyone else can see it.
void proc_set_cmdline(struct proc *p, const char *const argv[]);
// Threads of p in state R, the pid of its parent (0: none), and the ticks its
// threads, live and gone, spent in user and kernel mode (/proc). Inside an
// epoch read section (p from pid_lookup or pid_for_each).
struct proc_info {
    char state;              // Linux's letter: R, S, T, Z
    int ppid, nthreads;
    uint64_t utime, stime;
};
void proc_info(struct proc *p, struct proc_info *out);
// One thread of p (/proc/PID/task/TID): its state letter, CPU ticks and name.
// Inside an epoch read section, as proc_info. False if p has no thread tid.
#define PROC_TRACE_MAX 16
struct proc_thread_info {
    char state;
    uint64_t utime, stime;
    char name[16];
    uintptr_t trace[PROC_TRACE_MAX]; // where it waits in the kernel (thread_kernel_trace)
    int ntrace;
};
bool proc_thread_info(struct proc *p, int tid, struct proc_thread_info *out);
// The tids of p's threads into tids[0 .. max); how many it has (may be more
// than max). Inside an epoch read section.
int proc_tids(struct proc *p, int *tids, int max);
// The fd table of p's first thread (its threads share one; NULL for a
// zombie), readable with fd_peek until the caller's epoch read section ends:
// a thread takes its table out of its struct before letting go of it.
struct fdtable *proc_fdtable(struct proc *p);

// The process of the running thread, or NULL in a kernel thread.
struct proc *proc_current(void);
// The calling thread's fd table (struct thread.fdt); NULL in a kernel thread.
struct fdtable *fdt_current(void);

// RLIMIT_NOFILE's soft limit, at most FD_MAX: new fds are below it (fd_install).
// Only reads p.
static inline int proc_nofile(struct proc *p)
{
    return (int)MIN(READ_ONCE(p->rlim[RLIMIT_NOFILE].cur), (uint64_t)FD_MAX);
}

// Create a process running the ELF image with the given argument and environment
// vectors (NULL-terminated), on the CPUs in affinity (NULL: any). The kernel
// reaps it with proc_wait_kernel. 0 or -errno.
int proc_spawn(const char *name, const void *image, size_t len, const char *const argv[],
               const char *const envp[], const cpumask_t *affinity, struct capture *cap,
               struct proc **out);
// proc_spawn of the system's init (proc.init): main.c, and the tests of init's
// protection.
int proc_spawn_init(const char *name, const void *image, size_t len, const char *const argv[],
                    const char *const envp[], struct capture *cap, struct proc **out);
struct exec_info;
#define PROC_INIT 1 // proc_start: the process is the system's init
// The same with the program already loaded into vs (ei); vs is the new
// process's, or freed on failure. flags: PROC_INIT or 0.
int proc_start(const char *name, struct vmspace *vs, const struct exec_info *ei,
               const cpumask_t *affinity, struct capture *cap, unsigned flags,
               struct proc **out);
int proc_wait_kernel(struct proc *p); // wait for exit, free it, return the wait status
// exec.c: the program loader of execve and posix_spawn. Argument and environment
// strings in kernel memory:
struct exec_args {
    char *pool;        // 64 KiB of strings
    size_t used;
    const char **argv; // NULL-terminated vectors
    const char **envp;
    int argc, envc;
};
struct inode;
int exec_args_init(struct exec_args *a); // 0 or -ENOMEM (exec_args_free it anyway)
void exec_args_free(struct exec_args *a);
// Copy the user's argv and envp (NULL: empty): 0, -EFAULT or -E2BIG.
int exec_args_copy(struct exec_args *a, uint64_t uargv, uint64_t uenvp);
// Load path (relative to cwd; following #! lines, which rewrite a's argv) into a
// new address space: on success *vsp and *ei describe it and nothing else has
// changed. -ENOENT, -EACCES, -ENOEXEC, -ELOOP, -E2BIG, -ENOMEM.
int exec_load(struct exec_args *a, struct inode *cwd, const char *path, struct vmspace **vsp,
              struct exec_info *ei);
void exec_name(const char *path, char *name, size_t size); // the process name: path's last part
// proc_spawn of the ELF executable at path in ScaleFS (flags as proc_start's).
int proc_spawn_file(const char *path, const char *const argv[], const char *const envp[],
                    unsigned flags, struct proc **out);
long proc_wait4(int pid, uint64_t ustatus, int options);
long proc_waitid(int idtype, int id, uint64_t uinfo, int options);
// clone/fork/vfork: flags as Linux's clone(2). The child's pid/tid or -errno.
long proc_clone(uint64_t flags, uint64_t newsp, uint64_t ptid, uint64_t ctid, uint64_t tls);
void thread_exit_user(int code) __noreturn;   // exit(2): this thread only
void proc_exit_group(int wstatus) __noreturn; // exit_group(2) and fatal signals
bool proc_group_exiting(struct proc *p);
bool proc_kill_other_threads(void); // exec: the caller stays alone (false: it is killed)
// p stopped or continued (W_STOPCODE(sig) / W_CONTINUED): tell its parent's wait,
// and send it SIGCHLD unless it asked SA_NOCLDSTOP. No locks held.
void proc_report_stop(struct proc *p, int report);
// A user-mode exception: resolve it (demand paging) or raise a signal.
void user_exception(struct trapframe *tf);

// signal.c. Senders: sig 1..64, info may be NULL (SI_KERNEL). 0 or -errno.
int signal_send_proc(struct proc *p, int sig, const struct ksiginfo *info);
bool signal_discarded(struct proc *p, int sig); // would signal_send_proc drop it unseen?
int signal_send_thread(struct thread *t, int sig, const struct ksiginfo *info);
// kill(-pgid, sig): every live member of the group. 0, or -ESRCH if none.
int signal_send_group(int pgid, int sig, const struct ksiginfo *info);
// A synchronous fault: delivered even if blocked or ignored (then fatal).
void signal_force(int sig, int code, uint64_t addr);
bool signal_pending(struct thread *t); // an unblocked signal waits (interrupts sleeps)
bool signal_fatal_pending(struct thread *t); // SIGKILL or a group exit: it must leave
bool signal_ignored_or_blocked(int sig); // for the current thread
void signal_mask_begin(uint64_t mask);   // ppoll/pselect6: wait with this mask
void signal_mask_end(bool interrupted);  // ... and the old one back (after a handler)
void signal_kick(struct thread *t);    // make t look at its signals soon (locked)
// Return-to-user work: deliver pending signals, restart interrupted calls.
void signal_deliver(struct trapframe *tf);
struct usig *usig_alloc(void);
void usig_free(struct usig *s);
void signal_exec_reset(struct proc *p); // handlers back to SIG_DFL at exec
void signal_copy_actions(struct proc *p, struct k_sigaction out[NSIG]); // lock-free
struct k_sigaction signal_action(struct proc *p, int sig);             // likewise
void vfork_release(struct proc *child); // at the child's exec or exit (proc.c)
// Internal codes of an interrupted call, never seen by user space (Linux's):
// on the way back, a call that ran a signal handler fails with EINTR (ERESTARTSYS
// restarts anyway under SA_RESTART); one that ran none (the signal was ignored,
// or stopped and continued the process) runs again, ERESTART_RESTARTBLOCK's
// through restart_syscall with what the call left in its thread's restart block.
#define ERESTARTSYS 512
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516
// Return -ERESTART_RESTARTBLOCK; restart_syscall will call fn with the block.
long restart_block_set(long (*fn)(struct restart_block *), uint64_t a0, uint64_t a1,
                       uint64_t a2);
void signal_restart_leftover(struct trapframe *tf); // user_return: no signal came after all

// pgrp.c: process groups and sessions (every user process is in one).
struct pgrp;
void pgrp_init(void);
int pgrp_create(struct proc *p);     // a new group and session led by p: 0 or -ENOMEM
void pgrp_join_parent(struct proc *child, struct proc *parent); // fork: parent's group
void pgrp_leave(struct proc *p);     // at reaping
int pgrp_setsid(struct proc *p);     // p's pid, -EPERM (a group leader) or -ENOMEM
int pgrp_move(struct proc *p, int pgid, int sid); // setpgid's move: 0, -EPERM, -ESRCH
// The pids of group pgid's members (kmalloc'ed array, kfree it): their number,
// -ESRCH if no such group, -ENOMEM.
int pgrp_pids(int pgid, int **pids);
// Is group pgid orphaned (POSIX), counting `going` (an exiting process, or NULL)
// as gone? *stopped (may be NULL): one of its members is stopped.
bool pgrp_orphaned(int pgid, const struct proc *going, bool *stopped);
int pgrp_session(int pgid); // the session of group pgid, or -ESRCH

// spawn.c builds the child's pieces, proc.c makes it a process: a child of the
// caller running the program loaded in vm (references to vm, fdt and fsc are
// handed over on success only).
struct spawn_child {
    int pid;               // from pid_alloc
    const char *name;
    struct vmspace *vm;
    struct exec_info ei;
    struct fdtable *fdt;
    struct fs_context *fsc;
    bool setmask;
    uint64_t sigmask;      // if setmask, else the caller's mask
    uint64_t sigdefault;   // these become SIG_DFL (caught ones do anyway)
    bool setsid;
    bool setpgroup;
    int pgroup;            // 0: its own pid
    const cpumask_t *affinity; // NULL: the caller's
};
long proc_spawn_child(const struct spawn_child *c); // the pid, or -errno (nothing made)

// futex.c: wake at most n waiters on the word at uaddr in vs.
int futex_wake(struct vmspace *vs, uint64_t uaddr, int n);

// pid.c
int pid_alloc(void);
void pid_insert(struct proc *p);
void pid_remove(struct proc *p);
struct proc *pid_lookup(int pid); // inside epoch_enter/exit
void pid_for_each(void (*fn)(struct proc *p, void *arg), void *arg); // likewise

// elf.c: load an ELF64 executable into vs and build the initial stack.
int elf_exec(struct vmspace *vs, const void *image, size_t len, const char *const argv[],
             const char *const envp[], const char *execfn, struct exec_info *out);
// The same from a ScaleFS file of len bytes whose first headlen bytes (at least
// the ELF and program headers) are in head; the segments are read from ip.
struct inode;
int elf_exec_file(struct vmspace *vs, struct inode *ip, size_t len, const void *head,
                  size_t headlen, const char *const argv[], const char *const envp[],
                  const char *execfn, struct exec_info *out);

// Programs built into the image (user/user.mk).
struct user_program {
    const char *name;
    const void *start;
    size_t len;
};
extern const struct user_program user_programs[]; // ends with a NULL name
const struct user_program *user_program_find(const char *name);
