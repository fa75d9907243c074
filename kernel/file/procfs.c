// /proc's names: resolving a path to a node, opening, stat, readlink and
// directory listings. The contents are procfs_text.c's.
//
// Commute: /proc keeps no state of its own, so reading it writes nothing any
// other call reads. Its files are built at open, into a buffer private to the
// open file description; listing /proc walks the pid table's per-CPU buckets at
// read time (pid_for_each), and the process calls that /proc reports on (fork,
// exit, exec) write only the per-process and per-CPU state they wrote before:
// no global list of processes exists for /proc's sake.
//
// Positions: a directory's entries have stable positions (fs_readdir's
// contract): "." 0, ".." 1, the fixed names from 2, then in /proc each process
// at PID_POS + pid, and in fd/ each fd at 2 + fd, so a listing resumed after
// processes or fds came and went neither repeats nor skips one that stayed.
#include "file/procfs.h"
#include "file/fdtable.h"
#include "file/file.h"
#include "fs.h"
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "mm/uvm.h"
#include "proc/proc.h"
#include "sync/atomic.h"
#include "uapi/errno.h"
#include "x86/smp.h"

enum pkind {
    PK_ROOT, PK_SELF, PK_TEXT, // /proc, /proc/self, /proc/NAME
    PK_PID, PK_PID_TEXT, PK_FD_DIR, PK_FD, // /proc/PID, its files, fd/, fd/N
    PK_EXE, PK_TASK_DIR, PK_TASK, PK_TASK_TEXT, // exe, task/, task/TID, task/TID/NAME
    PK_SYS, PK_SYS_VM, PK_DROP_CACHES, // sys/, sys/vm/, sys/vm/drop_caches
};

struct pnode {
    enum pkind kind;
    enum procfs_text text; // PK_TEXT, PK_PID_TEXT, PK_TASK_TEXT
    int pid;               // PK_PID and below
    int fd;                // PK_FD
    int tid;               // PK_TASK, PK_TASK_TEXT
};

static const struct {
    const char *name;
    enum procfs_text text;
} root_files[] = {
    {"cpuinfo", PT_CPUINFO}, {"meminfo", PT_MEMINFO}, {"uptime", PT_UPTIME},
    {"loadavg", PT_LOADAVG}, {"mounts", PT_MOUNTS},   {"stat", PT_STAT},
    {"pagesites", PT_PAGESITES}, // ours (mm/pagesites.c)
};

static const struct {
    const char *name;
    enum procfs_text text;
} pid_files[] = {
    {"stat", PT_PID_STAT}, {"status", PT_PID_STATUS}, {"cmdline", PT_PID_CMDLINE},
    {"stack", PT_PID_STACK}, {"comm", PT_PID_COMM}, {"statm", PT_PID_STATM},
    {"maps", PT_PID_MAPS},
};

// /proc/PID's directories and links, after pid_files in its listing.
static const struct {
    const char *name;
    enum pkind kind;
} pid_dirs[] = {{"fd", PK_FD_DIR}, {"task", PK_TASK_DIR}, {"exe", PK_EXE}};

// A thread's files, task/TID/NAME (the first four of pid_files).
#define TASK_FILES 4

#define PID_POS (1ULL << 32) // first position of a process in /proc's listing

static int current_pid(void)
{
    struct proc *p = proc_current();
    return p ? p->pid : 0;
}

static bool pid_exists(int pid)
{
    epoch_enter();
    bool found = pid > 0 && pid_lookup(pid) != NULL;
    epoch_exit();
    return found;
}

// The lowest fd >= from open in pid's table, or -1 (none, or pid is gone).
static int fd_first_open(int pid, int from)
{
    epoch_enter();
    struct proc *p = pid_lookup(pid);
    struct fdtable *t = p ? proc_fdtable(p) : NULL;
    int fd = t ? fd_next_open(t, from) : -1;
    epoch_exit();
    return fd;
}

static bool thread_exists(int pid, int tid)
{
    struct proc_thread_info ti;
    epoch_enter();
    struct proc *p = pid_lookup(pid);
    bool found = p && proc_thread_info(p, tid, &ti);
    epoch_exit();
    return found;
}

// A decimal number without sign or leading zero, as in /proc's names; -1 if not.
static long parse_num(const char *s, size_t n)
{
    if (n == 0 || n > 10 || (s[0] == '0' && n > 1))
        return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v <= INT32_MAX ? v : -1;
}

static bool name_is(const char *s, size_t n, const char *name)
{
    return strlen(name) == n && memcmp(s, name, n) == 0;
}

// One more component (s, n) below node. last: nothing follows; follow: a
// final /proc/self is followed.
static int step(struct pnode *nd, const char *s, size_t n, bool last, bool follow)
{
    switch (nd->kind) {
    case PK_ROOT:
        if (name_is(s, n, "self")) {
            nd->kind = last && !follow ? PK_SELF : PK_PID;
            nd->pid = current_pid();
            return nd->pid ? 0 : -ENOENT; // kernel threads have no self
        }
        for (size_t i = 0; i < ARRAY_SIZE(root_files); i++)
            if (name_is(s, n, root_files[i].name)) {
                *nd = (struct pnode){.kind = PK_TEXT, .text = root_files[i].text};
                return 0;
            }
        if (name_is(s, n, "sys")) {
            nd->kind = PK_SYS;
            return 0;
        }
        long pid = parse_num(s, n);
        if (pid <= 0 || !pid_exists((int)pid))
            return -ENOENT;
        *nd = (struct pnode){.kind = PK_PID, .pid = (int)pid};
        return 0;
    case PK_PID:
        for (size_t i = 0; i < ARRAY_SIZE(pid_dirs); i++)
            if (name_is(s, n, pid_dirs[i].name)) {
                nd->kind = pid_dirs[i].kind;
                return 0;
            }
        for (size_t i = 0; i < ARRAY_SIZE(pid_files); i++)
            if (name_is(s, n, pid_files[i].name)) {
                nd->kind = PK_PID_TEXT;
                nd->text = pid_files[i].text;
                return 0;
            }
        return -ENOENT;
    case PK_TASK_DIR: {
        long tid = parse_num(s, n);
        if (tid <= 0 || !thread_exists(nd->pid, (int)tid))
            return -ENOENT;
        nd->kind = PK_TASK;
        nd->tid = (int)tid;
        return 0;
    }
    case PK_TASK:
        for (size_t i = 0; i < TASK_FILES; i++)
            if (name_is(s, n, pid_files[i].name)) {
                nd->kind = PK_TASK_TEXT;
                nd->text = pid_files[i].text;
                return 0;
            }
        return -ENOENT;
    case PK_FD_DIR: {
        long fd = parse_num(s, n);
        if (fd < 0 || fd_first_open(nd->pid, (int)fd) != fd)
            return -ENOENT;
        nd->kind = PK_FD;
        nd->fd = (int)fd;
        return 0;
    }
    case PK_SYS:
        if (!name_is(s, n, "vm"))
            return -ENOENT;
        nd->kind = PK_SYS_VM;
        return 0;
    case PK_SYS_VM:
        if (!name_is(s, n, "drop_caches"))
            return -ENOENT;
        nd->kind = PK_DROP_CACHES;
        return 0;
    default:
        return -ENOTDIR;
    }
}

// Resolve an absolute /proc path (procfs_path said yes).
static int resolve(const char *path, bool follow, struct pnode *nd)
{
    *nd = (struct pnode){.kind = PK_ROOT};
    const char *s = path;
    while (*s == '/')
        s++;
    s += 4; // "proc"
    for (;;) {
        while (*s == '/')
            s++;
        if (!*s)
            return 0;
        size_t n = 0;
        while (s[n] && s[n] != '/')
            n++;
        const char *rest = s + n;
        while (*rest == '/')
            rest++;
        if (!(n == 1 && s[0] == '.')) {
            int err = step(nd, s, n, *rest == 0, follow);
            if (err)
                return err;
        }
        s += n;
    }
}

// Is the component ending before out[n] (out[0..n) a path being built) a link
// other than self, which ".." cannot undo by dropping it? Those are fd/N:
// /proc/PID/fd/N; and a ".." kept after one stays too.
static bool ends_in_fd_link(const char *out, size_t n)
{
    int depth = 0;
    for (size_t i = 0; i < n; i++)
        depth += out[i] == '/';
    const char *last = out + n;
    while (last > out && last[-1] != '/')
        last--;
    const char *prev = last - 1;
    while (prev > out && prev[-1] != '/')
        prev--;
    if (n - (size_t)(last - out) == 2 && last[0] == '.' && last[1] == '.')
        return true; // a ".." kept before: the walk stops there anyway
    return depth == 4 && last - prev == 3 && memcmp(prev, "fd/", 3) == 0;
}

// Rewrite the absolute path buf without "." and "..": each ".." drops the
// component before it, as Linux's walk does in /proc, whose directories all
// lie where their names say (self names a directory of /proc itself). A ".."
// after an fd/N link stays: N names a file anywhere, and the walk refuses to
// go below it (ENOTDIR). A path that ended in a directory keeps its final "/".
static void collapse(char *buf)
{
    size_t len = strlen(buf);
    bool dir = len > 0 && (buf[len - 1] == '/' ||
                           (len >= 2 && strcmp(buf + len - 2, "/.") == 0) ||
                           (len >= 3 && strcmp(buf + len - 3, "/..") == 0));
    size_t n = 0; // out is buf[0..n): never ahead of the input
    for (const char *s = buf; *s;) {
        while (*s == '/')
            s++;
        size_t k = 0;
        while (s[k] && s[k] != '/')
            k++;
        if (k == 0 || (k == 1 && s[0] == '.')) {
            s += k;
            continue;
        }
        if (k == 2 && s[0] == '.' && s[1] == '.' && !ends_in_fd_link(buf, n)) {
            while (n > 0 && buf[n - 1] != '/')
                n--;
            n = n > 0 ? n - 1 : 0;
            s += k;
            continue;
        }
        buf[n++] = '/';
        memmove(buf + n, s, k);
        n += k;
        s += k;
    }
    if (n == 0 || dir)
        buf[n++] = '/';
    buf[n] = 0;
}

int procfs_path(const char *base, const char *path, char *buf)
{
    if (path[0] != '/') {
        if (strlen(base) + 1 + strlen(path) + 1 > FS_PATH_MAX)
            return -ENAMETOOLONG;
        ksnprintf(buf, FS_PATH_MAX, "%s/%s", base, path);
    } else {
        strlcpy(buf, path, FS_PATH_MAX);
    }
    collapse(buf);
    return strncmp(buf, "/proc", 5) == 0 && (!buf[5] || buf[5] == '/');
}

// ---- open files -------------------------------------------------------------------

struct ptext {
    size_t len;
    char buf[];
};

static long text_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    struct ptext *t = f->priv;
    if (*pos >= t->len)
        return 0;
    size_t k = MIN(n, t->len - *pos);
    if (copy_to_user(ubuf, t->buf + *pos, k) < 0)
        return -EFAULT;
    *pos += k;
    return (long)k;
}

static void priv_release(struct file *f) { kfree(f->priv); }

static int text_stat(struct file *f, uint32_t mask, struct fs_stat *st);
static int dir_stat(struct file *f, uint32_t mask, struct fs_stat *st);

static const struct file_ops text_ops = {
    .read = text_read, .release = priv_release, .stat = text_stat, .seekable = true,
};

static long pdir_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    (void)f, (void)ubuf, (void)n, (void)pos;
    return -EISDIR;
}

// A directory's priv is its absolute path (relative opens, listings).
static const struct file_ops pdir_ops = {
    .read = pdir_read, .release = priv_release, .stat = dir_stat, .seekable = true,
};

// /proc/sys/vm/drop_caches takes a number, as Linux's: 1 (page cache), 2
// (slab objects) or 3 (both) drop what the kernel keeps for reuse (we have one
// kind: mm/dropcaches.c), 4 (Linux: stop logging drops) does nothing; anything
// else is EINVAL. Each write is one number, at any offset.
static long drop_write(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    (void)f, (void)pos;
    char buf[24];
    if (n == 0)
        return 0;
    if (n >= sizeof buf)
        return -EINVAL;
    if (copy_from_user(buf, ubuf, n) < 0)
        return -EFAULT;
    size_t len = n;
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
        len--;
    long v = parse_num(buf, len);
    if (v < 1 || v > 4)
        return -EINVAL;
    if (v != 4)
        drop_caches();
    return (long)n;
}

static int drop_stat(struct file *f, uint32_t mask, struct fs_stat *st);

static const struct file_ops drop_ops = {
    .write = drop_write, .stat = drop_stat, .seekable = true,
};

bool procfs_is_dir(struct file *f) { return f->ops == &pdir_ops; }
const char *procfs_dir_path(struct file *f) { return f->priv; }

static int open_text(const struct pnode *nd, int flags, struct file **out)
{
    struct pbuf b = {0};
    int err = procfs_text(nd->text, nd->pid, nd->kind == PK_TASK_TEXT ? nd->tid : 0, &b);
    struct ptext *t = err ? NULL : kmalloc(sizeof *t + b.len);
    if (!err && !t)
        err = -ENOMEM;
    if (t) {
        t->len = b.len;
        memcpy(t->buf, b.buf, b.len);
    }
    kfree(b.buf);
    if (err)
        return err;
    uint32_t keep = (flags & ~(O_CLOEXEC | O_NOFOLLOW)) | O_LARGEFILE;
    if (!(*out = file_alloc(&text_ops, keep, NULL, t))) {
        kfree(t);
        return -ENOMEM;
    }
    return 0;
}

static int open_dir(const char *path, int flags, struct file **out)
{
    size_t n = strlen(path) + 1;
    char *p = kmalloc(n);
    if (!p)
        return -ENOMEM;
    memcpy(p, path, n);
    while (n > 2 && p[n - 2] == '/') // "/proc/1/" lists as "/proc/1"
        p[--n - 1] = 0;
    flags &= ~(O_CLOEXEC | O_NOFOLLOW | O_DIRECTORY);
    if (!(*out = file_alloc(&pdir_ops, flags | O_LARGEFILE, NULL, p))) {
        kfree(p);
        return -ENOMEM;
    }
    return 0;
}

// Opening /proc/PID/fd/N opens what fd N is open on again, as Linux does:
// ScaleFS files with the new flags; pipes and the console have no inode to
// reopen here (ENXIO). /proc/PID/exe opens the executable.
static int open_inode(struct inode *ip, int flags, struct file **out)
{
    int err = file_open_inode(ip, flags, out);
    if (err)
        fs_iput(ip);
    return err;
}

static int open_fd_target(const struct pnode *nd, int flags, struct file **out)
{
    struct fdinfo fi;
    int err = procfs_fd_info(nd->pid, nd->fd, STATX_TYPE, &fi);
    if (err)
        return err;
    return fi.ip ? open_inode(fi.ip, flags, out) : -ENXIO;
}

// The executable of pid (referenced), or NULL: a zombie has none.
static struct inode *exe_inode(int pid)
{
    struct vmspace *vs = procfs_vm(pid);
    struct inode *ip = vs ? vs->image : NULL;
    if (ip)
        fs_iget(ip);
    if (vs)
        vmspace_put(vs);
    return ip;
}

static int open_exe(const struct pnode *nd, int flags, struct file **out)
{
    struct inode *ip = exe_inode(nd->pid);
    return ip ? open_inode(ip, flags, out) : -ENOENT;
}

int procfs_path_is_root(const char *path)
{
    struct pnode nd;
    int err = resolve(path, true, &nd);
    return err ? err : nd.kind == PK_ROOT;
}

static bool is_dir(enum pkind k)
{
    return k == PK_ROOT || k == PK_PID || k == PK_FD_DIR || k == PK_TASK_DIR || k == PK_TASK ||
           k == PK_SYS || k == PK_SYS_VM;
}

// Write-only, as Linux's (mode 0200: even root may not read it).
static int open_drop_caches(int flags, struct file **out)
{
    if ((flags & O_ACCMODE) != O_WRONLY)
        return -EACCES;
    *out = file_alloc(&drop_ops, (flags & ~(O_CLOEXEC | O_NOFOLLOW | O_CREAT | O_TRUNC)) | O_LARGEFILE,
                      NULL, NULL);
    return *out ? 0 : -ENOMEM;
}

int procfs_path_open(const char *path, int flags, struct file **out)
{
    struct pnode nd;
    int err = resolve(path, !(flags & O_NOFOLLOW), &nd);
    if (err)
        return (flags & O_CREAT) && err == -ENOENT ? -EACCES : err;
    if ((flags & O_CREAT) && (flags & O_EXCL))
        return -EEXIST;
    if (nd.kind == PK_SELF)
        return -ELOOP; // O_NOFOLLOW met the link
    if (nd.kind == PK_FD)
        return (flags & O_NOFOLLOW) ? -ELOOP : open_fd_target(&nd, flags, out);
    if (nd.kind == PK_EXE)
        return (flags & O_NOFOLLOW) ? -ELOOP : open_exe(&nd, flags, out);
    int acc = flags & O_ACCMODE;
    if (is_dir(nd.kind)) {
        if (acc != O_RDONLY || (flags & (O_CREAT | O_TRUNC)))
            return -EISDIR;
        return open_dir(path, flags, out);
    }
    if (flags & O_DIRECTORY)
        return -ENOTDIR;
    if (nd.kind == PK_DROP_CACHES)
        return open_drop_caches(flags, out);
    if (acc != O_RDONLY || (flags & O_TRUNC))
        return -EACCES; // read-only files (Linux: 0444)
    return open_text(&nd, flags, out);
}

// ---- attributes ----------------------------------------------------------------------

// Inode numbers of their own, out of ScaleFS's range (the top bit set): the
// pid (a thread's nodes: the tid), the file or fd, the kind.
static uint64_t node_ino(const struct pnode *nd)
{
    uint64_t sub = nd->kind == PK_FD ? 64 + (uint64_t)nd->fd : (uint64_t)nd->text;
    uint64_t id = nd->kind == PK_TASK || nd->kind == PK_TASK_TEXT ? nd->tid : nd->pid;
    return 1ULL << 63 | id << 25 | sub << 4 | nd->kind;
}

static void node_stat(const struct pnode *nd, uint32_t mask, struct fs_stat *st)
{
    memset(st, 0, sizeof *st);
    st->mask = mask;
    st->ino = node_ino(nd);
    st->nlink = is_dir(nd->kind) ? 2 : 1;
    st->mode = is_dir(nd->kind) ? S_IFDIR | 0555
               : nd->kind == PK_SELF || nd->kind == PK_EXE ? S_IFLNK | 0777
               : nd->kind == PK_FD   ? S_IFLNK | 0700
               : nd->kind == PK_DROP_CACHES ? S_IFREG | 0200
                                     : S_IFREG | 0444;
    uint64_t now = realtime_nsec();
    st->atime = st->mtime = st->ctime = (struct fs_timespec){now / 1000000000, now % 1000000000};
}

int procfs_path_stat(const char *path, bool nofollow, uint32_t mask, struct fs_stat *st)
{
    struct pnode nd;
    int err = resolve(path, !nofollow, &nd);
    if (err)
        return err;
    if (nd.kind == PK_FD && !nofollow) { // what the fd is open on
        struct fdinfo fi;
        if ((err = procfs_fd_info(nd.pid, nd.fd, mask, &fi)))
            return err;
        *st = fi.st;
        if (fi.ip) {
            err = fs_stat(fi.ip, mask, st);
            fs_iput(fi.ip);
        }
        return err;
    }
    if (nd.kind == PK_EXE && !nofollow) {
        struct inode *ip = exe_inode(nd.pid);
        if (!ip)
            return -ENOENT;
        err = fs_stat(ip, mask, st);
        fs_iput(ip);
        return err;
    }
    node_stat(&nd, mask, st);
    return 0;
}

static int text_stat(struct file *f, uint32_t mask, struct fs_stat *st)
{
    (void)f;
    struct pnode nd = {.kind = PK_TEXT};
    node_stat(&nd, mask, st);
    return 0;
}

static int drop_stat(struct file *f, uint32_t mask, struct fs_stat *st)
{
    (void)f;
    struct pnode nd = {.kind = PK_DROP_CACHES};
    node_stat(&nd, mask, st);
    return 0;
}

static int dir_stat(struct file *f, uint32_t mask, struct fs_stat *st)
{
    struct pnode nd;
    int err = resolve(f->priv, true, &nd);
    if (err)
        return err; // the process is gone
    node_stat(&nd, mask, st);
    return 0;
}

long procfs_path_readlink(const char *path, char *buf, size_t n)
{
    struct pnode nd;
    int err = resolve(path, false, &nd);
    if (err)
        return err;
    struct pbuf b = {0};
    if (nd.kind == PK_SELF) {
        pb_printf(&b, "%d", nd.pid);
    } else if (nd.kind == PK_FD) {
        struct fdinfo fi;
        if ((err = procfs_fd_info(nd.pid, nd.fd, STATX_TYPE | STATX_INO, &fi)))
            return err;
        procfs_fd_target(&fi, &b);
        if (fi.ip)
            fs_iput(fi.ip);
    } else if (nd.kind == PK_EXE) {
        struct vmspace *vs = procfs_vm(nd.pid);
        if (!vs || !vs->exe) {
            if (vs)
                vmspace_put(vs);
            return -ENOENT; // Linux too, for a zombie
        }
        pb_bytes(&b, vs->exe, strlen(vs->exe));
        vmspace_put(vs);
    } else {
        return -EINVAL; // not a symbolic link
    }
    long len = b.nomem ? -ENOMEM : (long)MIN(n, b.len);
    if (len > 0)
        memcpy(buf, b.buf, len);
    kfree(b.buf);
    return len;
}

// ---- listings ---------------------------------------------------------------------------

struct pidset {
    int *pids;
    int n, cap;
};

static void collect_pid(struct proc *p, void *arg)
{
    struct pidset *s = arg;
    if (s->n < s->cap)
        s->pids[s->n] = p->pid;
    s->n++;
}

static void count_pid(struct proc *p, void *arg)
{
    (void)p;
    (*(int *)arg)++;
}

static void sort_ints(int *a, int n) // Shell sort: no recursion, no allocation
{
    for (int gap = n / 2; gap > 0; gap /= 2)
        for (int i = gap; i < n; i++)
            for (int j = i; j >= gap && a[j - gap] > a[j]; j -= gap) {
                int x = a[j];
                a[j] = a[j - gap];
                a[j - gap] = x;
            }
}

// Every process's pid, sorted (kmalloc'ed into s->pids): 0 or -ENOMEM. A
// process made between the count and the walk is left out, as one made just
// after the walk would be.
static int pid_snapshot(struct pidset *s)
{
    int n = 0;
    epoch_enter();
    pid_for_each(count_pid, &n);
    epoch_exit();
    *s = (struct pidset){.cap = n + 16};
    if (!(s->pids = kmalloc(s->cap * sizeof(int))))
        return -ENOMEM;
    epoch_enter();
    pid_for_each(collect_pid, s);
    epoch_exit();
    s->n = MIN(s->n, s->cap);
    sort_ints(s->pids, s->n);
    return 0;
}

static int list_root(uint64_t *pos, fs_filldir_t fill, void *arg)
{
    size_t nroot = ARRAY_SIZE(root_files);
    for (; *pos < 4 + nroot; ++*pos) { // self, the files, sys
        const char *name = *pos == 2 ? "self" : *pos == 3 + nroot ? "sys" : root_files[*pos - 3].name;
        unsigned type = *pos == 2 ? DT_LNK : *pos == 3 + nroot ? DT_DIR : DT_REG;
        if (fill(arg, name, strlen(name), 1ULL << 63 | *pos, type))
            return 1;
    }
    if (*pos < PID_POS)
        *pos = PID_POS;
    struct pidset s;
    if (pid_snapshot(&s))
        return -ENOMEM;
    int r = 0;
    for (int i = 0; i < s.n && !r; i++) {
        if ((uint64_t)s.pids[i] < *pos - PID_POS)
            continue;
        char name[12];
        int len = ksnprintf(name, sizeof name, "%d", s.pids[i]);
        struct pnode nd = {.kind = PK_PID, .pid = s.pids[i]};
        if ((r = fill(arg, name, len, node_ino(&nd), DT_DIR)))
            break;
        *pos = PID_POS + s.pids[i] + 1;
    }
    kfree(s.pids);
    return r;
}

static int list_pid(uint64_t *pos, fs_filldir_t fill, void *arg, int pid)
{
    size_t nfiles = ARRAY_SIZE(pid_files);
    for (; *pos < 2 + nfiles + ARRAY_SIZE(pid_dirs); ++*pos) {
        size_t i = *pos - 2;
        struct pnode nd = {.kind = PK_PID_TEXT, .pid = pid};
        const char *name;
        unsigned type = DT_REG;
        if (i < nfiles) {
            name = pid_files[i].name;
            nd.text = pid_files[i].text;
        } else {
            name = pid_dirs[i - nfiles].name;
            nd.kind = pid_dirs[i - nfiles].kind;
            type = nd.kind == PK_EXE ? DT_LNK : DT_DIR;
        }
        if (fill(arg, name, strlen(name), node_ino(&nd), type))
            return 1;
    }
    return 0;
}

// fd/ lists the fds open now from *pos - 2 on, a batch at a time: found
// inside an epoch section, filled in outside it (fill may fault).
static int list_fds(uint64_t *pos, fs_filldir_t fill, void *arg, int pid)
{
    for (;;) {
        int fds[32], n = 0;
        epoch_enter();
        struct proc *p = pid_lookup(pid);
        struct fdtable *t = p ? proc_fdtable(p) : NULL;
        for (int fd = (int)(*pos - 2); t && n < 32 && (fd = fd_next_open(t, fd)) >= 0; fd++)
            fds[n++] = fd;
        epoch_exit();
        if (n == 0)
            return 0;
        for (int i = 0; i < n; i++) {
            char name[12];
            int len = ksnprintf(name, sizeof name, "%d", fds[i]);
            struct pnode nd = {.kind = PK_FD, .pid = pid, .fd = fds[i]};
            if (fill(arg, name, len, node_ino(&nd), DT_LNK))
                return 1;
            *pos = 2 + (uint64_t)fds[i] + 1;
        }
    }
}

// task/ lists the threads by tid (position 2 + tid), sorted.
static int list_tasks(uint64_t *pos, fs_filldir_t fill, void *arg, int pid)
{
    int n;
    int *tids = NULL;
    for (int cap = 8;; cap = n + 8) { // a thread made meanwhile: count again
        kfree(tids);
        if (!(tids = kmalloc(cap * sizeof *tids)))
            return -ENOMEM;
        epoch_enter();
        struct proc *p = pid_lookup(pid);
        n = p ? proc_tids(p, tids, cap) : 0;
        epoch_exit();
        if (n <= cap)
            break;
    }
    sort_ints(tids, n);
    int r = 0;
    for (int i = 0; i < n && !r; i++) {
        if ((uint64_t)tids[i] + 2 < *pos)
            continue;
        char name[12];
        int len = ksnprintf(name, sizeof name, "%d", tids[i]);
        struct pnode nd = {.kind = PK_TASK, .pid = pid, .tid = tids[i]};
        if ((r = fill(arg, name, len, node_ino(&nd), DT_DIR)))
            break;
        *pos = 2 + (uint64_t)tids[i] + 1;
    }
    kfree(tids);
    return r;
}

static int list_task(uint64_t *pos, fs_filldir_t fill, void *arg, int pid, int tid)
{
    for (; *pos < 2 + TASK_FILES; ++*pos) {
        const char *name = pid_files[*pos - 2].name;
        struct pnode nd = {.kind = PK_TASK_TEXT, .pid = pid, .tid = tid,
                           .text = pid_files[*pos - 2].text};
        if (fill(arg, name, strlen(name), node_ino(&nd), DT_REG))
            return 1;
    }
    return 0;
}

int procfs_readdir(struct file *f, uint64_t *pos, fs_filldir_t fill, void *arg)
{
    struct pnode nd;
    int err = resolve(f->priv, true, &nd);
    if (err)
        return err == -ENOENT ? 0 : err; // the process is gone: an empty listing
    for (; *pos < 2; ++*pos)
        if (fill(arg, "..", *pos + 1, *pos ? 1ULL << 63 : node_ino(&nd), DT_DIR))
            return 1;
    switch (nd.kind) {
    case PK_ROOT: return list_root(pos, fill, arg);
    case PK_PID: return list_pid(pos, fill, arg, nd.pid);
    case PK_FD_DIR: return list_fds(pos, fill, arg, nd.pid);
    case PK_TASK_DIR: return list_tasks(pos, fill, arg, nd.pid);
    case PK_TASK: return list_task(pos, fill, arg, nd.pid, nd.tid);
    case PK_SYS:
    case PK_SYS_VM: {
        bool vm = nd.kind == PK_SYS_VM;
        struct pnode child = {.kind = vm ? PK_DROP_CACHES : PK_SYS_VM};
        const char *name = vm ? "drop_caches" : "vm";
        if (*pos == 2 && fill(arg, name, strlen(name), node_ino(&child), vm ? DT_REG : DT_DIR))
            return 1;
        *pos = 3;
        return 0;
    }
    default: return -ENOTDIR;
    }
}

static struct inode *mountpoint; // [i] set at boot

struct inode *procfs_mountpoint(void) { return mountpoint; }

void procfs_init(void)
{
    int err = fs_mkdir(NULL, "/proc", 0555);
    if (err && err != -EEXIST)
        kprintf("procfs: mkdir /proc: error %d\n", err);
    if (fs_lookup(NULL, "/proc", 0, &mountpoint)) // a reference kept for good
        mountpoint = NULL;
}
