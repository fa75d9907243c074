// posix_spawn (uapi/ext.h): a child process built straight from an executable.
// The caller's arguments are copied in; the file actions build the child's fd
// table and fs context; the program is loaded into a fresh address space by
// execve's loader (exec.c); then the child's table receives the caller's other
// fds, and proc.c makes the pieces a process. Until that last step nothing is
// visible: a failure frees the pieces and returns its errno, and no child ever
// existed.
//
// Commute: spawns by different processes or threads share nothing but what
// fork would: the calling thread's own children list (proc.c) and this CPU's
// partition of the process group's members (pgrp.c), so spawns by threads on
// different CPUs, of one process too, add their children on different lines
// (the executable's deny-write count is still shared, fs/writecount.c). The
// caller's address space is never written or copied, not even its page tables:
// it is read through the usercopy helpers, and only *pid is written. The file
// actions touch only the child's new fd table; opens and lookups go through
// ScaleFS's lock-free paths; the new address space is private.
//
// The caller's fd table is read last, and only where the child will have what
// the caller has: a file action reads the caller's slot only for an fd it
// takes from there (dup2's source, fchdir, close's EBADF check), and the copy
// skips every fd an action set or closed. So a spawn whose program cannot be
// loaded reads no slot but those, and a spawn reads nothing of an fd its
// actions replace: another thread's open or close of that fd commutes with it
// (the child cannot tell) and shares no line with it.
#include "file/dev.h"
#include "file/fdtable.h"
#include "file/file.h"
#include "file/fs_context.h"
#include "fs.h"
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "mm/uvm.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "syscall/syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "uapi/ext.h"

#define SPAWN_ACTIONS_MAX 1024 // file actions per call (Linux's argv-like bound)

// The child's pieces, before it is a process.
struct child {
    struct fdtable *fdt;    // the fds the file actions set; the rest come last
    struct fdtable *parent; // the caller's
    int *set;               // fds the actions set or closed (nset of them)
    unsigned nset;
    struct fs_context *fsc; // private to the child: we set its cwd directly
    char *path;             // scratch for action paths (FS_PATH_MAX)
    int leader;             // SETSID: the child's pid, as it will lead a session
};

// Did an action set or close fd? Then the child's table has the answer;
// otherwise the caller's will, when it is copied.
static bool was_set(int fd, void *arg)
{
    struct child *c = arg;
    for (unsigned i = 0; i < c->nset; i++)
        if (c->set[i] == fd)
            return true;
    return false;
}

static void mark_set(struct child *c, int fd)
{
    if (!was_set(fd, c))
        c->set[c->nset++] = fd; // room for one per action (file_actions)
}

// The table that holds fd's file for the child now.
static struct fdtable *table_of(struct child *c, int fd)
{
    return was_set(fd, c) ? c->fdt : c->parent;
}

static int copy_path(char *dst, uint64_t upath)
{
    long n = strncpy_from_user(dst, upath, FS_PATH_MAX);
    return n < 0 ? (int)n : 0;
}

// dir (a directory; the caller's reference) becomes the child's cwd.
static void set_cwd(struct child *c, struct inode *dir)
{
    struct inode *old = c->fsc->cwd; // nobody else can see this context yet
    c->fsc->cwd = dir;
    fs_iput(old);
}

static int act_open(struct child *c, const struct spawn_file_action *a)
{
    int err = copy_path(c->path, a->path);
    if (err)
        return err;
    struct file *f;
    if ((err = path_open_file(c->fsc->cwd, c->path, a->oflag, a->mode, c->fsc->umask, &f)))
        return err;
    if (c->leader) // the console becomes the new session's terminal, as open would make it
        tty_opened(f, a->oflag, c->leader, c->leader, c->leader);
    // POSIX: as if open() then dup2() onto fd: what was at fd is closed.
    long r = fd_install_at(c->fdt, a->fd, f, (a->oflag & O_CLOEXEC) ? FDI_CLOEXEC : 0);
    if (r < 0)
        file_put(f);
    else
        mark_set(c, a->fd);
    return r < 0 ? (int)r : 0;
}

static int act_close(struct child *c, const struct spawn_file_action *a)
{
    if (was_set(a->fd, c))
        return fd_close(c->fdt, a->fd);
    if (fd_get_cloexec(c->parent, a->fd) < 0)
        return -EBADF; // the caller has no such fd
    mark_set(c, a->fd); // not copied
    return 0;
}

static int act_dup2(struct child *c, const struct spawn_file_action *a)
{
    // POSIX: dup2 of an fd onto itself keeps it, without FD_CLOEXEC.
    if (a->fd == a->newfd && was_set(a->fd, c))
        return fd_set_cloexec(c->fdt, a->fd, false);
    unsigned how; // held: an owned reference would write the shared count
    struct file *f = fd_dup_ref(table_of(c, a->fd), a->fd, false, &how);
    if (!f)
        return -EBADF;
    long err = fd_install_at(c->fdt, a->newfd, f, how); // how: without FD_CLOEXEC
    if (err < 0)
        fd_ref_drop(f, how);
    else
        mark_set(c, a->newfd);
    return err < 0 ? (int)err : 0;
}

static int act_chdir(struct child *c, const struct spawn_file_action *a)
{
    int err = copy_path(c->path, a->path);
    if (err)
        return err;
    if (!c->path[0])
        return -ENOENT;
    struct inode *ip;
    if ((err = fs_lookup(c->path[0] == '/' ? fs_root() : c->fsc->cwd, c->path, 0, &ip)))
        return err;
    if (!S_ISDIR(fs_mode(ip))) {
        fs_iput(ip);
        return -ENOTDIR;
    }
    set_cwd(c, ip);
    return 0;
}

static int act_fchdir(struct child *c, const struct spawn_file_action *a)
{
    struct fd_ref r = fd_get(table_of(c, a->fd), a->fd);
    if (!r.f)
        return -EBADF;
    int err = r.f->ip && S_ISDIR(fs_mode(r.f->ip)) ? 0 : -ENOTDIR;
    if (!err) {
        fs_iget(r.f->ip);
        set_cwd(c, r.f->ip);
    }
    fd_put(r);
    return err;
}

static int apply(struct child *c, const struct spawn_file_action *a)
{
    switch (a->op) {
    case SPAWN_FA_OPEN:
        return act_open(c, a);
    case SPAWN_FA_CLOSE:
        return act_close(c, a);
    case SPAWN_FA_DUP2:
        return act_dup2(c, a);
    case SPAWN_FA_CHDIR:
        return act_chdir(c, a);
    case SPAWN_FA_FCHDIR:
        return act_fchdir(c, a);
    }
    return -EINVAL;
}

// The file actions, in order, each copied in as it is applied.
static int file_actions(struct child *c, uint64_t ufa)
{
    struct spawn_file_actions fa;
    if (!ufa)
        return 0;
    if (copy_from_user(&fa, ufa, sizeof fa) < 0)
        return -EFAULT;
    if (fa.n > SPAWN_ACTIONS_MAX)
        return -EINVAL;
    if (fa.n && !(c->set = kmalloc(fa.n * sizeof *c->set)))
        return -ENOMEM;
    for (unsigned i = 0; i < fa.n; i++) {
        struct spawn_file_action a;
        if (copy_from_user(&a, fa.actions + i * sizeof a, sizeof a) < 0)
            return -EFAULT;
        int err = apply(c, &a);
        if (err)
            return err;
    }
    return 0;
}

#define KNOWN_FLAGS                                                                        \
    (POSIX_SPAWN_RESETIDS | POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |                \
     POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSCHEDPARAM | POSIX_SPAWN_SETSCHEDULER |        \
     POSIX_SPAWN_USEVFORK | POSIX_SPAWN_SETSID | POSIX_SPAWN_SETAFFINITY_NP)

// The attributes into the process description. (RESETIDS: every process runs
// as root with equal real and effective ids, so there is nothing to reset.)
static int attributes(uint64_t uattr, struct spawn_child *sc, cpumask_t *aff)
{
    struct spawn_attr at;
    if (!uattr)
        return 0;
    if (copy_from_user(&at, uattr, sizeof at) < 0)
        return -EFAULT;
    if (at.flags & ~KNOWN_FLAGS)
        return -EINVAL;
    sc->setmask = at.flags & POSIX_SPAWN_SETSIGMASK;
    sc->sigmask = at.sigmask;
    sc->sigdefault = (at.flags & POSIX_SPAWN_SETSIGDEF) ? at.sigdefault : 0;
    sc->setsid = at.flags & POSIX_SPAWN_SETSID;
    sc->setpgroup = at.flags & POSIX_SPAWN_SETPGROUP;
    if (sc->setpgroup && at.pgroup < 0)
        return -EINVAL;
    sc->pgroup = at.pgroup;
    if (at.flags & POSIX_SPAWN_SETAFFINITY_NP) {
        cpumask_clear(aff);
        bool any = false;
        for (int i = 0; i < CPUMASK_WORDS && i < SPAWN_AFFINITY_WORDS; i++)
            any |= (aff->w[i] = at.affinity[i] & cpu_online_mask.w[i]) != 0;
        if (!any)
            return -EINVAL;
        sc->affinity = aff;
    }
    return 0;
}

static long spawn(uint64_t upath, uint64_t ufa, uint64_t uattr, uint64_t uargv,
                  uint64_t uenvp, char *path, struct exec_args *args)
{
    struct proc *p = proc_current();
    struct spawn_child sc = {0};
    cpumask_t aff;
    long n = strncpy_from_user(path, upath, FS_PATH_MAX);
    if (n < 0)
        return n;
    int err = attributes(uattr, &sc, &aff);
    if (!err)
        err = exec_args_copy(args, uargv, uenvp);
    if (err)
        return err;
    sc.pid = pid_alloc();
    struct child c = {.fdt = fdtable_new(), .parent = fdt_current(), .fsc = fsctx_copy(p->fsc),
                      .path = path + FS_PATH_MAX, .leader = sc.setsid ? sc.pid : 0};
    if (!c.fdt || !c.fsc)
        err = -ENOMEM;
    if (!err)
        err = file_actions(&c, ufa);
    if (!err)
        err = exec_load(args, c.fsc->cwd, path, &sc.vm, &sc.ei);
    // The program loaded: now the caller's other fds.
    if (!err && (err = fdtable_fill(c.fdt, c.parent, was_set, &c)))
        vmspace_put(sc.vm);
    kfree(c.set);
    if (!err)
        fdtable_close_on_exec(c.fdt);
    if (!err) {
        char name[16];
        exec_name(path, name, sizeof name);
        sc.name = name;
        sc.fdt = c.fdt;
        sc.fsc = c.fsc;
        long pid = proc_spawn_child(&sc);
        if (pid >= 0)
            return pid;
        err = pid;
        vmspace_put(sc.vm);
    }
    if (c.fdt)
        fdtable_release(c.fdt);
    if (c.fsc)
        fsctx_release(c.fsc);
    return err;
}

long sys_posix_spawn(uint64_t upid, uint64_t upath, uint64_t ufa, uint64_t uattr,
                     uint64_t uargv, uint64_t uenvp)
{
    // *pid is the one word of the caller we write: check it can be written
    // first, so that EFAULT never leaves a child behind.
    int pid = 0;
    if (upid && copy_to_user(upid, &pid, sizeof pid) < 0)
        return -EFAULT;
    char *path = kmalloc(2 * FS_PATH_MAX); // the program's, then the actions'
    struct exec_args args;
    long err = exec_args_init(&args);
    if (!err && !path)
        err = -ENOMEM;
    if (!err)
        err = spawn(upath, ufa, uattr, uargv, uenvp, path, &args);
    exec_args_free(&args);
    kfree(path);
    if (err < 0)
        return err;
    pid = (int)err;
    // (Only another thread unmapping *pid meanwhile can make this fail; the
    // child exists by now, so success stands.)
    if (upid)
        copy_to_user(upid, &pid, sizeof pid);
    return 0;
}
