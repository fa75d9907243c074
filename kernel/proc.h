// Processes (proc.c), the pid table (pid.c), program loading (elf.c) and the
// user programs built into the kernel image.
#pragma once
#include "cpumask.h"
#include "epoch.h"
#include "kernel.h"
#include "list.h"
#include "sched.h"
#include "spinlock.h"

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

struct k_sigaction_store { // rt_sigaction's struct, stored only (signals come later)
    uint64_t handler, flags, restorer, mask;
};

struct proc {
    int pid;
    int state;               // P_ALIVE / P_ZOMBIE, under lock
    int wstatus;             // wait4 status once a zombie
    struct spinlock lock;    // children list, state, parent links of the children
    struct proc *parent;     // NULL: the kernel (kernel_waited) or orphaned (reaped at exit)
    bool kernel_waited;      // a kernel thread will reap it with proc_wait_kernel
    struct list children;    // struct proc.sibling
    struct list sibling;
    struct waitq child_wq;   // this process waiting for its children
    struct waitq exit_wq;    // the kernel waiting for this process
    struct thread *thread;   // the only thread (clone comes later)
    struct vmspace *vm;
    struct capture *capture;
    struct fdtable *fdt;     // file descriptors (fdtable.h)
    struct fs_context *fsc;  // cwd and umask (fs_context.h)
    uint64_t clear_child_tid;
    uint64_t sigmask;
    struct k_sigaction_store sigactions[64];
    struct proc *hash_next;  // pid table chain (pid.c)
    struct epoch_cb free_cb;
    char name[16];
};

// The process of the running thread, or NULL in a kernel thread.
struct proc *proc_current(void);

// Create a process running the ELF image with the given argument and environment
// vectors (NULL-terminated), on the CPUs in affinity (NULL: any). The kernel
// reaps it with proc_wait_kernel. 0 or -errno.
int proc_spawn(const char *name, const void *image, size_t len, const char *const argv[],
               const char *const envp[], const cpumask_t *affinity, struct capture *cap,
               struct proc **out);
int proc_wait_kernel(struct proc *p); // wait for exit, free it, return the wait status
void proc_exit(int wstatus) __noreturn; // the current process, with a wait4 status
long proc_wait4(int pid, uint64_t ustatus, int options);
// A user-mode exception: resolve it (demand paging) or kill the process.
void user_exception(struct trapframe *tf);

// pid.c
int pid_alloc(void);
void pid_insert(struct proc *p);
void pid_remove(struct proc *p);
struct proc *pid_lookup(int pid); // inside epoch_enter/exit

// elf.c: load an ELF64 executable into vs and build the initial stack.
struct exec_info {
    uintptr_t entry, sp, brk;
};
int elf_exec(struct vmspace *vs, const void *image, size_t len, const char *const argv[],
             const char *const envp[], const char *execfn, struct exec_info *out);

// Programs built into the image (user/user.mk).
struct user_program {
    const char *name;
    const void *start;
    size_t len;
};
extern const struct user_program user_programs[]; // ends with a NULL name
const struct user_program *user_program_find(const char *name);
