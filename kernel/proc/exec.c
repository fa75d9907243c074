// execve: find the executable in ScaleFS, follow `#!` interpreter lines, load
// the ELF image into a fresh address space, and only then (the point of no
// return) make the caller the process's only thread and switch to the new
// program. The loader (exec_load and the argument copies) is shared with
// posix_spawn (spawn.c), which gives the new address space to a new process.
//
// Commute: execs of different processes. The file is read through ScaleFS's
// lock-free lookups and per-inode data; the new address space is private until
// it is installed; only the caller's own process is locked.
#include "file/fdtable.h"
#include "file/fs_context.h"
#include "fs.h"
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "mm/uvm.h"
#include "proc/proc.h"
#include "sync/percpu.h"
#include "syscall/syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "x86/gdt.h"
#include "x86/trap.h"
#include "x86/x86.h"

#define ARG_BYTES (64 * 1024) // the loader's limit for strings and vectors (elf.c)
#define ARGV_MAX 1024
#define INTERP_DEPTH 4        // nested #! interpreters (Linux: ELOOP past 4)
#define SHEBANG_MAX 256       // the #! line, as Linux's BINPRM_BUF_SIZE

// The one place a path becomes an inode: relative to cwd (the caller's for
// execve, the child's for posix_spawn), as open does.
static int exec_lookup(struct inode *cwd, const char *path, struct inode **ipp)
{
    if (!path[0])
        return -ENOENT;
    return fs_lookup(path[0] == '/' ? fs_root() : cwd, path, 0, ipp);
}

int exec_args_init(struct exec_args *a)
{
    a->pool = kmalloc(ARG_BYTES);
    a->argv = kmalloc((ARGV_MAX + 1) * sizeof(char *));
    a->envp = kmalloc((ARGV_MAX + 1) * sizeof(char *));
    a->used = 0;
    a->argc = a->envc = 0;
    if (!a->pool || !a->argv || !a->envp)
        return -ENOMEM;
    a->argv[0] = a->envp[0] = NULL;
    return 0;
}

void exec_args_free(struct exec_args *a)
{
    kfree(a->pool);
    kfree(a->argv);
    kfree(a->envp);
}

static const char *args_keep(struct exec_args *a, const char *s, size_t n)
{
    if (n + 1 > ARG_BYTES - a->used)
        return NULL;
    char *d = a->pool + a->used;
    memcpy(d, s, n);
    d[n] = 0;
    a->used += n + 1;
    return d;
}

// Copy a user vector of strings (NULL: empty). -E2BIG past the limits.
static int copy_vector(struct exec_args *a, uint64_t uvec, const char **vec, int *count)
{
    for (int i = 0; uvec; i++) {
        uint64_t up;
        if (copy_from_user(&up, uvec + i * sizeof up, sizeof up) < 0)
            return -EFAULT;
        if (!up)
            break;
        if (i >= ARGV_MAX)
            return -E2BIG;
        long n = strncpy_from_user(a->pool + a->used, up, ARG_BYTES - a->used);
        if (n == -ENAMETOOLONG)
            return -E2BIG;
        if (n < 0)
            return n;
        vec[i] = a->pool + a->used;
        a->used += n + 1;
        vec[i + 1] = NULL;
        *count = i + 1;
    }
    return 0;
}

int exec_args_copy(struct exec_args *a, uint64_t uargv, uint64_t uenvp)
{
    int err = copy_vector(a, uargv, a->argv, &a->argc);
    return err ? err : copy_vector(a, uenvp, a->envp, &a->envc);
}

// An executable file: referenced inode, size, and its first page in memory
// (enough for a #! line and the ELF headers; the loader reads the rest). It is
// denied writing (ETXTBSY) from image_open on: the loader maps its pages
// copy-on-write, so a write in place would change the program under it. The
// address space that runs it keeps the reference and the deny (vs->image).
struct image {
    struct inode *ip;
    size_t len;
    char *head;
    size_t headlen;
};

static int image_open(struct inode *cwd, const char *path, struct image *im)
{
    int err = exec_lookup(cwd, path, &im->ip);
    if (err)
        return err;
    struct fs_stat st;
    err = fs_stat(im->ip, STATX_MODE | STATX_SIZE, &st);
    if (!err && (!S_ISREG(st.mode) || !(st.mode & 0111)))
        err = -EACCES;
    if (!err)
        err = fs_deny_write(im->ip); // ETXTBSY: open for writing
    if (!err && !(im->head = page_alloc())) {
        fs_allow_write(im->ip);
        err = -ENOMEM;
    }
    if (!err) {
        int64_t n = fs_read(im->ip, im->head, MIN(st.size, (uint64_t)PGSIZE), 0);
        if (n < 0) {
            page_free(im->head);
            fs_allow_write(im->ip);
            err = n;
        } else {
            im->headlen = n;
            im->len = st.size;
        }
    }
    if (err)
        fs_iput(im->ip);
    return err;
}

static void image_close(struct image *im)
{
    page_free(im->head);
    fs_allow_write(im->ip);
    fs_iput(im->ip);
}

// The executable's absolute path, for /proc/PID/exe: path itself, or the
// cwd's path and path (leading "./" dropped). Symbolic links on the way stay
// as they are (Linux names the final file). kmalloc'ed; NULL if out of memory.
static char *exe_path(struct inode *cwd, const char *path)
{
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    char *buf = NULL, *out;
    const char *dir = "";
    if (path[0] != '/') {
        long err;
        if (!(buf = page_alloc()))
            return NULL;
        if (!(dir = path_of_dir(cwd, buf, &err)))
            dir = "?"; // the cwd was removed
    }
    size_t n = strlen(dir) + 1 + strlen(path) + 1;
    if ((out = kmalloc(n)))
        ksnprintf(out, n, "%s%s%s", dir, dir[0] && strcmp(dir, "/") ? "/" : "", path);
    if (buf)
        page_free(buf);
    return out;
}

// Load the ELF executable im, found at path from cwd, into a new address
// space (*vsp) and close im.
static int image_load(struct image *im, struct inode *cwd, const char *path,
                      const char *const argv[], const char *const envp[], const char *execfn,
                      struct vmspace **vsp, struct exec_info *ei)
{
    struct vmspace *vs = vmspace_new();
    if (vs && !(vs->exe = exe_path(cwd, path))) {
        vmspace_put(vs);
        vs = NULL;
    }
    int err = vs ? elf_exec_file(vs, im->ip, im->len, im->head, im->headlen, argv, envp,
                                 execfn, ei)
                 : -ENOMEM;
    if (err) {
        image_close(im);
        if (vs)
            vmspace_put(vs);
        return err;
    }
    page_free(im->head);
    vs->image = im->ip; // its reference and deny-write go with vs (vmspace_put)
    *vsp = vs;
    return 0;
}

// "#!interp [arg]\n": put interp, arg and the script's path in front of
// argv[1..]; *path becomes the interpreter. 0, or -ENOEXEC if not a script.
static int shebang(struct exec_args *a, const char *image, size_t len, const char **path)
{
    if (len < 2 || image[0] != '#' || image[1] != '!')
        return -ENOEXEC;
    size_t end = 2;
    while (end < len && end < SHEBANG_MAX && image[end] != '\n')
        end++;
    const char *s = image + 2, *e = image + end;
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
    if (s == e)
        return -ENOEXEC;
    const char *iend = s;
    while (iend < e && *iend != ' ' && *iend != '\t')
        iend++;
    const char *arg = iend;
    while (arg < e && (*arg == ' ' || *arg == '\t'))
        arg++;
    // New vector: interp [arg] path argv[1..].
    if (a->argc + 2 > ARGV_MAX)
        return -E2BIG;
    const char *interp = args_keep(a, s, iend - s);
    const char *iarg = arg < e ? args_keep(a, arg, e - arg) : NULL;
    const char *script = args_keep(a, *path, strlen(*path));
    if (!interp || (arg < e && !iarg) || !script)
        return -E2BIG;
    int rest = a->argc > 0 ? a->argc - 1 : 0;
    int head = 2 + (iarg != NULL);
    memmove(&a->argv[head], &a->argv[a->argc - rest], (rest + 1) * sizeof(char *));
    a->argv[0] = interp;
    if (iarg)
        a->argv[1] = iarg;
    a->argv[head - 1] = script;
    a->argc = head + rest;
    a->argv[a->argc] = NULL;
    *path = interp;
    return 0;
}

void exec_name(const char *path, char *name, size_t size)
{
    const char *base = path;
    for (const char *c = path; *c; c++)
        if (*c == '/')
            base = c + 1;
    strlcpy(name, base, size);
}

// Switch the current process to vs with the new program's registers.
static void install(struct vmspace *vs, const struct exec_info *ei, const char *path)
{
    struct thread *t = thread_current();
    struct proc *p = t->proc;
    struct vmspace *old = p->vm;
    push_off();
    t->vm = vs;
    p->vm = vs;
    uvm_switch(old, vs);
    pop_off();
    vmspace_put(old); // a vfork parent may still hold it
    vs->brk_start = vs->brk = ei->brk;
    vfork_release(p);
    signal_exec_reset(p);
    WRITE_ONCE(p->did_exec, true);
    fdtable_close_on_exec(t->fdt);
    t->clear_child_tid = 0;
    t->tid = p->pid; // the thread that execs becomes the main thread
    push_off();
    t->fsbase = 0;
    wrmsr(MSR_FS_BASE, 0);
    t->gsbase = 0;
    wrmsr(MSR_KERNEL_GS_BASE, 0);
    pop_off();
    fpu_reset_current(t);
    exec_name(path, p->name, sizeof p->name);
    strlcpy(t->name, p->name, sizeof t->name);
    proc_set_cmdline(p, ei->argv);
    struct trapframe *tf = thread_trapframe(t);
    memset(tf, 0, sizeof *tf);
    tf->vector = T_SYSCALL;
    tf->rip = ei->entry;
    tf->rsp = ei->sp;
    tf->cs = GDT_UCODE | 3;
    tf->ss = GDT_UDATA | 3;
    tf->rflags = RFLAGS_IF | 2;
    t->force_iret = true; // every register starts at zero
}

int exec_load(struct exec_args *a, struct inode *cwd, const char *path, struct vmspace **vsp,
              struct exec_info *ei)
{
    const char *execfn = path;
    for (int depth = 0;; depth++) {
        struct image im;
        int err = image_open(cwd, path, &im);
        if (err)
            return err;
        err = shebang(a, im.head, im.headlen, &path);
        if (err != -ENOEXEC) {
            image_close(&im);
            if (err)
                return err;
            if (depth == INTERP_DEPTH)
                return -ELOOP;
            continue;
        }
        return image_load(&im, cwd, path, a->argv, a->envp, execfn, vsp, ei);
    }
}

int proc_spawn_file(const char *path, const char *const argv[], const char *const envp[],
                    unsigned flags, struct proc **out)
{
    struct image im;
    int err = image_open(fs_root(), path, &im);
    if (err)
        return err;
    struct vmspace *vs;
    struct exec_info ei;
    err = image_load(&im, fs_root(), path, argv, envp, path, &vs, &ei);
    return err ? err : proc_start(path, vs, &ei, NULL, NULL, flags, out);
}

// Past the point of no return only if the new program loaded.
static long do_exec(struct exec_args *a, const char *path)
{
    struct vmspace *vs = NULL;
    struct exec_info ei;
    struct inode *cwd = fsctx_cwd();
    int err = exec_load(a, cwd, path, &vs, &ei);
    fs_iput(cwd);
    // A table shared with others (CLONE_FILES) is copied first, so that the
    // close-on-exec closes nothing of theirs (Linux). Done while we can still
    // fail; threads of ours that share it are about to leave anyway.
    if (!err && fdtable_unshare(&thread_current()->fdt) < 0)
        err = -ENOMEM;
    if (err) {
        if (vs)
            vmspace_put(vs);
        return err;
    }
    if (!proc_kill_other_threads()) {
        vmspace_put(vs);
        return -EINTR; // a group exit overtook us: we leave on the way out
    }
    install(vs, &ei, path);
    return 0;
}

long sys_execve(uint64_t upath, uint64_t uargv, uint64_t uenvp)
{
    char *path = kmalloc(FS_PATH_MAX);
    struct exec_args a;
    long err = exec_args_init(&a);
    if (!err && !path)
        err = -ENOMEM;
    if (!err) {
        long n = strncpy_from_user(path, upath, FS_PATH_MAX);
        err = n < 0 ? n : n == 0 ? -ENOENT : 0;
    }
    if (!err)
        err = exec_args_copy(&a, uargv, uenvp);
    if (!err)
        err = do_exec(&a, path);
    exec_args_free(&a);
    kfree(path);
    return err;
}
