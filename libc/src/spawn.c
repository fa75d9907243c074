// posix_spawn and posix_spawnp.
//
// The kernel has a posix_spawn system call (__NR_posix_spawn, kernel/uapi/ext.h)
// that builds the child straight from the executable without copying or
// touching the caller's address space:
//
//   posix_spawn(pid_t *pid, const char *path, const struct spawn_file_actions *fa,
//               const struct spawn_attr *attr, char *const argv[], char *const envp[])
//
// The file actions and attributes are kept in exactly the call's form: a
// posix_spawn_file_actions_t *is* a struct spawn_file_actions (count, capacity,
// pointer to an array of struct spawn_file_action), and a posix_spawnattr_t *is*
// a struct spawn_attr (ext.h defines both), so posix_spawn passes the caller's
// objects through unchanged. fa and attr may be NULL.
//
// Where the call is missing (-ENOSYS, as on Linux) we fall back to
// clone(CLONE_VM | CLONE_VFORK) + execve: the child runs on a small stack of
// its own in our address space, performs the file actions and attributes, and
// execs; the parent sleeps until then. An error in the child is reported back
// through memory the two share, so posix_spawn returns it and reaps the child.
// If the kernel refuses that clone too (ENOSYS or EINVAL), fork + execve does
// the same, reporting errors through a close-on-exec pipe.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "libc.h"

// ---- file actions ------------------------------------------------------------

int posix_spawn_file_actions_init(posix_spawn_file_actions_t *fa)
{
    memset(fa, 0, sizeof *fa);
    return 0;
}

int posix_spawn_file_actions_destroy(posix_spawn_file_actions_t *fa)
{
    struct spawn_file_action *a = (struct spawn_file_action *)(uintptr_t)fa->actions;
    for (unsigned i = 0; i < fa->n; i++)
        free((void *)(uintptr_t)a[i].path);
    free(a);
    memset(fa, 0, sizeof *fa);
    return 0;
}

static int add_action(posix_spawn_file_actions_t *fa, struct spawn_file_action act,
                      const char *path)
{
    if (act.fd < 0 || act.newfd < 0)
        return EBADF;
    if (fa->n == fa->cap) {
        unsigned cap = fa->cap ? fa->cap * 2 : 4;
        void *p = realloc((void *)(uintptr_t)fa->actions, cap * sizeof(struct spawn_file_action));
        if (!p)
            return ENOMEM;
        fa->actions = (uintptr_t)p;
        fa->cap = cap;
    }
    if (path) {
        char *copy = strdup(path);
        if (!copy)
            return ENOMEM;
        act.path = (uintptr_t)copy;
    }
    ((struct spawn_file_action *)(uintptr_t)fa->actions)[fa->n++] = act;
    return 0;
}

int posix_spawn_file_actions_addopen(posix_spawn_file_actions_t *restrict fa, int fd,
                                     const char *restrict path, int oflag, mode_t mode)
{
    return add_action(fa, (struct spawn_file_action){.op = SPAWN_FA_OPEN, .fd = fd,
                                                     .oflag = oflag, .mode = mode}, path);
}

int posix_spawn_file_actions_addclose(posix_spawn_file_actions_t *fa, int fd)
{
    return add_action(fa, (struct spawn_file_action){.op = SPAWN_FA_CLOSE, .fd = fd}, NULL);
}

int posix_spawn_file_actions_adddup2(posix_spawn_file_actions_t *fa, int fd, int newfd)
{
    return add_action(fa, (struct spawn_file_action){.op = SPAWN_FA_DUP2, .fd = fd,
                                                     .newfd = newfd}, NULL);
}

int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *restrict fa,
                                         const char *restrict path)
{
    return add_action(fa, (struct spawn_file_action){.op = SPAWN_FA_CHDIR}, path);
}

int posix_spawn_file_actions_addfchdir_np(posix_spawn_file_actions_t *fa, int fd)
{
    return add_action(fa, (struct spawn_file_action){.op = SPAWN_FA_FCHDIR, .fd = fd}, NULL);
}

// ---- attributes ---------------------------------------------------------------

int posix_spawnattr_init(posix_spawnattr_t *a)
{
    memset(a, 0, sizeof *a);
    return 0;
}
int posix_spawnattr_destroy(posix_spawnattr_t *a)
{
    (void)a;
    return 0;
}
int posix_spawnattr_setflags(posix_spawnattr_t *a, short flags)
{
    if ((unsigned short)flags & ~0x1ffu)
        return EINVAL;
    a->flags = (unsigned short)flags;
    return 0;
}
int posix_spawnattr_getflags(const posix_spawnattr_t *restrict a, short *restrict flags)
{
    *flags = (short)a->flags;
    return 0;
}
int posix_spawnattr_setpgroup(posix_spawnattr_t *a, pid_t pgroup)
{
    a->pgroup = pgroup;
    return 0;
}
int posix_spawnattr_getpgroup(const posix_spawnattr_t *restrict a, pid_t *restrict pgroup)
{
    *pgroup = a->pgroup;
    return 0;
}
int posix_spawnattr_setsigmask(posix_spawnattr_t *restrict a, const sigset_t *restrict mask)
{
    a->sigmask = mask->__bits[0];
    return 0;
}
int posix_spawnattr_getsigmask(const posix_spawnattr_t *restrict a, sigset_t *restrict mask)
{
    sigemptyset(mask);
    mask->__bits[0] = a->sigmask;
    return 0;
}
int posix_spawnattr_setsigdefault(posix_spawnattr_t *restrict a, const sigset_t *restrict set)
{
    a->sigdefault = set->__bits[0];
    return 0;
}
int posix_spawnattr_setaffinity_np(posix_spawnattr_t *a, size_t size, const cpu_set_t *set)
{
    memset(a->affinity, 0, sizeof a->affinity);
    memcpy(a->affinity, set, size < sizeof a->affinity ? size : sizeof a->affinity);
    return 0;
}
int posix_spawnattr_getsigdefault(const posix_spawnattr_t *restrict a, sigset_t *restrict set)
{
    sigemptyset(set);
    set->__bits[0] = a->sigdefault;
    return 0;
}

// ---- the fallback: clone(CLONE_VM | CLONE_VFORK) + execve ----------------------

struct child_args {
    const char *path;
    const struct spawn_file_action *fa;
    unsigned nfa;
    const struct spawn_attr *attr;
    char *const *argv;
    char *const *envp;
    unsigned long parent_mask;
    volatile int err;  // vfork mode: written by the child if it fails before execve
    int errfd;         // fork mode: the child writes its errno here (close-on-exec pipe)
};

static int apply_file_action(const struct spawn_file_action *a)
{
    long r = 0;
    switch (a->op) {
    case SPAWN_FA_OPEN: {
        long fd = __sys(__NR_open, a->path, a->oflag, a->mode);
        if (fd < 0)
            return (int)fd;
        if (fd != a->fd) {
            r = __sys(__NR_dup2, fd, a->fd);
            __sys(__NR_close, fd);
        }
        break;
    }
    case SPAWN_FA_CLOSE:
        r = __sys(__NR_close, a->fd);
        break;
    case SPAWN_FA_DUP2:
        if (a->fd == a->newfd)  // POSIX: just clear close-on-exec
            r = __sys(__NR_fcntl, a->fd, F_SETFD, 0);
        else
            r = __sys(__NR_dup2, a->fd, a->newfd);
        break;
    case SPAWN_FA_CHDIR:
        r = __sys(__NR_chdir, a->path);
        break;
    case SPAWN_FA_FCHDIR:
        r = __sys(__NR_fchdir, a->fd);
        break;
    default:
        r = -EINVAL;
    }
    return r < 0 ? (int)r : 0;
}

// Runs in the child, sharing the parent's memory, until execve.
static int spawn_child(void *p)
{
    struct child_args *c = p;
    const struct spawn_attr *at = c->attr;
    unsigned flags = at ? at->flags : 0;
    long r = 0;
    // Signal handlers are the parent's code and data: a handled signal
    // arriving now must not run them. Reset caught signals to the default
    // (and the SETSIGDEF set); ignored ones stay ignored across exec.
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        struct {
            void *handler;
            unsigned long flags;
            void *restorer;
            unsigned long mask;
        } old, dfl = {0};
        if (__sys(__NR_rt_sigaction, sig, NULL, &old, 8) < 0)
            continue;
        int force = (flags & POSIX_SPAWN_SETSIGDEF) && (at->sigdefault >> (sig - 1) & 1);
        if (force || (old.handler != (void *)SIG_IGN && old.handler != (void *)SIG_DFL))
            __sys(__NR_rt_sigaction, sig, &dfl, NULL, 8);
    }
    if ((flags & POSIX_SPAWN_SETSID) && (r = __sys(__NR_setsid)) < 0)
        goto fail;
    if ((flags & POSIX_SPAWN_SETPGROUP) && (r = __sys(__NR_setpgid, 0, at->pgroup)) < 0)
        goto fail;
    if ((flags & POSIX_SPAWN_SETAFFINITY_NP) &&
        (r = __sys(__NR_sched_setaffinity, 0, sizeof at->affinity, at->affinity)) < 0)
        goto fail;
    if (flags & POSIX_SPAWN_RESETIDS) {
        if ((r = __sys(__NR_setgid, __sys(__NR_getgid))) < 0 ||
            (r = __sys(__NR_setuid, __sys(__NR_getuid))) < 0)
            goto fail;
    }
    for (unsigned i = 0; i < c->nfa; i++) {
        // Fork mode: keep the error pipe out of the way of the actions.
        while (c->errfd >= 0 && (c->fa[i].fd == c->errfd || c->fa[i].newfd == c->errfd))
            c->errfd = (int)__sys(__NR_fcntl, c->errfd, F_DUPFD_CLOEXEC, c->errfd + 1);
        if ((r = apply_file_action(&c->fa[i])) < 0)
            goto fail;
    }
    unsigned long mask = (flags & POSIX_SPAWN_SETSIGMASK) ? at->sigmask : c->parent_mask;
    __sys(__NR_rt_sigprocmask, SIG_SETMASK, &mask, NULL, 8);
    r = __sys(__NR_execve, c->path, c->argv, c->envp);
fail:
    c->err = (int)-r;
    if (c->errfd >= 0) {
        int e = (int)-r;
        __sys(__NR_write, c->errfd, &e, sizeof e);
    }
    __sys(__NR_exit, 127);
    return 127;
}

#define CHILD_STACK (64 * 1024)

// Sets *refused when the kernel would not create the child this way.
static int spawn_fallback(pid_t *pid, struct child_args *c, int *refused)
{
    char *stack = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack == MAP_FAILED)
        return EAGAIN;
    // All signals stay blocked until the child has reset its handlers.
    __block_all_signals(&c->parent_mask);
    c->err = 0;
    int tid = __clone(spawn_child, stack + CHILD_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD,
                      c, NULL, NULL, NULL);
    __restore_signals(&c->parent_mask);
    munmap(stack, CHILD_STACK);
    *refused = tid == -ENOSYS || tid == -EINVAL;
    if (tid < 0)
        return -tid;
    if (c->err) {
        int status;
        __sys(__NR_wait4, tid, &status, 0, NULL);
        return c->err;
    }
    if (pid)
        *pid = tid;
    return 0;
}

// The second fallback, for a kernel with fork but without CLONE_VM|CLONE_VFORK:
// the child is a copy, so it reports a failure through a close-on-exec pipe
// (end of file there means execve succeeded).
static int spawn_via_fork(pid_t *pid, struct child_args *c)
{
    int p[2];
    long r = __sys(__NR_pipe2, p, O_CLOEXEC);
    if (r < 0)
        return (int)-r;
    __block_all_signals(&c->parent_mask);
    long child = __sys(__NR_fork);
    if (child == 0) {
        __sys(__NR_close, p[0]);
        c->errfd = p[1];
        spawn_child(c);
    }
    __restore_signals(&c->parent_mask);
    __sys(__NR_close, p[1]);
    if (child < 0) {
        __sys(__NR_close, p[0]);
        return (int)-child;
    }
    int err = 0;
    long n;
    do
        n = __sys(__NR_read, p[0], &err, sizeof err);
    while (n == -EINTR);
    __sys(__NR_close, p[0]);
    if (n == sizeof err) {
        int status;
        __sys(__NR_wait4, child, &status, 0, NULL);
        return err;
    }
    if (pid)
        *pid = (pid_t)child;
    return 0;
}

static volatile int no_spawn_syscall;  // set once the kernel said ENOSYS
static volatile int no_vfork_clone;    // set once clone(CLONE_VM|CLONE_VFORK) was refused

static int spawn_path(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                      const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    const struct spawn_file_action *acts = fa ? (const struct spawn_file_action *)(uintptr_t)fa->actions : NULL;
    unsigned nfa = fa ? fa->n : 0;
    const struct spawn_attr *at = (const struct spawn_attr *)attr;
    if (!no_spawn_syscall) {
        pid_t child;
        long r = __sys(__NR_posix_spawn, &child, path, fa, at, argv, envp);
        if (r == 0) {
            if (pid)
                *pid = child;
            return 0;
        }
        if (r != -ENOSYS)
            return (int)-r;
        no_spawn_syscall = 1;
    }
    struct child_args c = {path, acts, nfa, at, argv, envp, 0, 0, -1};
    if (!no_vfork_clone) {
        int refused = 0, err = spawn_fallback(pid, &c, &refused);
        if (!refused)
            return err;
        no_vfork_clone = 1;
    }
    return spawn_via_fork(pid, &c);
}

// posix_spawn through the fork fallback alone, for libc's tests (which cannot
// otherwise reach it on Linux).
hidden int __posix_spawn_fork(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                              const posix_spawnattr_t *attr, char *const argv[],
                              char *const envp[]);
int __posix_spawn_fork(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    struct child_args c = {path, fa ? (const struct spawn_file_action *)(uintptr_t)fa->actions : NULL, fa ? fa->n : 0,
                           (const struct spawn_attr *)attr, argv, envp, 0, 0, -1};
    return spawn_via_fork(pid, &c);
}

int posix_spawn(pid_t *restrict pid, const char *restrict path,
                const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *restrict attr,
                char *const argv[restrict], char *const envp[restrict])
{
    return spawn_path(pid, path, fa, attr, argv, envp);
}

int posix_spawnp(pid_t *restrict pid, const char *restrict file,
                 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *restrict attr,
                 char *const argv[restrict], char *const envp[restrict])
{
    if (strchr(file, '/'))
        return spawn_path(pid, file, fa, attr, argv, envp);
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/bin:/usr/bin";
    char buf[PATH_MAX];
    int err = ENOENT;
    for (const char *next = path; __path_search(file, buf, sizeof buf, &next);) {
        if (!buf[0])
            continue;
        int r = spawn_path(pid, buf, fa, attr, argv, envp);
        if (r == 0)
            return 0;
        if (r == EACCES)
            err = EACCES;
        else if (r != ENOENT && r != ENOTDIR)
            return r;
    }
    return err;
}
