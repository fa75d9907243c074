// The fuzzer's system calls: every call of kernel/syscall/syscall.c's table
// (and our extensions), each with a signature of argument generators (args.c)
// or a function of its own where a random argument could hurt the fuzzer
// rather than the kernel: memory it lives in (mmap's MAP_FIXED, brk), its
// thread pointer (arch_prctl), the console or the supervisor (reboot, exec of
// anything but a harmless program), or a child that would run on our stack.
// One entry is no system call: `touch`, a load or store in the arena.
#include "fuzz.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

// The signatures' letters: f fd, d directory fd, p path, b pointer, l length,
// o offset, F flag bits, O open flags, A AT_ flags, m mode, D device number,
// t timespec pointer, T milliseconds, i small number, w a selector (command,
// whence, advice, resource, clock), a an address in the arena and L a length
// there, P a pid of this worker's family, s a signal, S a sigset size, x anything.


// ---- memory ----------------------------------------------------------------------

// Mappings made outside the arena (no MAP_FIXED): kept a while, then unmapped,
// so that they do not pile up.
#define NFAR 8
static long far_addr[NFAR], far_len[NFAR];
static unsigned far_next;

void remember_far(long addr, long len)
{
    unsigned i = __atomic_fetch_add(&far_next, 1, __ATOMIC_RELAXED) % NFAR;
    long old = __atomic_exchange_n(&far_addr[i], addr, __ATOMIC_RELAXED);
    long old_len = __atomic_exchange_n(&far_len[i], len, __ATOMIC_RELAXED);
    if (old)
        raw6(SYS_munmap, old, old_len, 0, 0, 0, 0);
}

static long run_mmap(struct fz *z, long a[6])
{
    bool fixed = chance(&z->rng, 40);
    if (fixed) {
        a[0] = gen_arg(z, 'a');
        a[1] = gen_arg(z, 'L');
    } else {
        static const long hints[] = {0, 0, 0, PG, 0x10000000, 0x7ffffffff000L, -PG};
        a[0] = hints[below(&z->rng, sizeof hints / sizeof hints[0])];
        // Huge lengths that must fail. 1 TiB fails at once on ours (its
        // descriptors would not fit: uvm_map.c, describable) and by the
        // overcommit rule on Linux.
        static const long lens[] = {PG, 2 * PG, 16 * PG, 256 * PG, 1, 0, -1L, LONG_MAX,
                                    1L << 47, PG + 1, 1L << 40};
        a[1] = lens[below(&z->rng, sizeof lens / sizeof lens[0])];
    }
    a[2] = chance(&z->rng, 80) ? (long)below(&z->rng, 8) : gen_arg(z, 'F');
    static const long types[] = {MAP_PRIVATE, MAP_SHARED, 3 /* SHARED_VALIDATE */, 0};
    long flags = types[below(&z->rng, 4)];
    if (chance(&z->rng, 50))
        flags |= MAP_ANONYMOUS;
    // Populating a huge mapping is memory exhaustion, which only -m asks for.
    if (chance(&z->rng, 10) && (cfg.exhaust || (unsigned long)a[1] <= 16 * PG))
        flags |= MAP_POPULATE;
    if (chance(&z->rng, 10))
        flags |= MAP_NORESERVE;
    if (chance(&z->rng, 5))
        flags |= gen_arg(z, 'F');
    if (!cfg.exhaust && (unsigned long)a[1] > 16 * PG)
        flags &= ~(long)MAP_POPULATE;
    flags &= ~(long)(MAP_FIXED | MAP_FIXED_NOREPLACE);
    if (fixed)
        flags |= chance(&z->rng, 70) ? MAP_FIXED : MAP_FIXED_NOREPLACE;
    else if (chance(&z->rng, 5))
        flags |= MAP_FIXED_NOREPLACE; // anywhere but our arena: it may not replace
    a[3] = flags;
    a[4] = chance(&z->rng, 50) ? -1 : fd_pick(z);
    a[5] = chance(&z->rng, 80) ? 0 : gen_arg(z, 'o');
    if (a[0] && !fixed && (flags & MAP_FIXED_NOREPLACE) && a[0] != -PG)
        a[0] = 0x10000000; // far from everything we own
    long r = raw6(SYS_mmap, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (r > 0 && !fixed)
        remember_far(r, a[1]);
    return r;
}

// The break moves up and down, never below where it started (malloc does not
// use it, but nothing of ours may be under it).
static long run_brk(struct fz *z, long a[6])
{
    long cur = raw6(SYS_brk, 0, 0, 0, 0, 0, 0);
    static const long odd[] = {0, -1L, 0xffff800000000000L, 0x0000800000000000L, 1};
    switch (below(&z->rng, 4)) {
    case 0: a[0] = cur + (long)below(&z->rng, 16) * PG + (long)below(&z->rng, 2); break;
    case 1: a[0] = cur - (long)below(&z->rng, 4) * PG; break;
    case 2: a[0] = mem.brk0 + (long)below(&z->rng, 8) * PG; break;
    default: a[0] = odd[below(&z->rng, sizeof odd / sizeof odd[0])]; break;
    }
    if (a[0] > 0 && a[0] < mem.brk0)
        a[0] = mem.brk0;
    if (!cfg.exhaust && a[0] > mem.brk0 + 1024 * PG && a[0] < 0x0000800000000000L)
        a[0] = mem.brk0 + 1024 * PG; // (each page of the heap costs a descriptor)
    return raw6(SYS_brk, a[0], 0, 0, 0, 0, 0);
}

// Only GS moves freely; FS (the thread pointer every errno goes through) only
// to where it is, or to addresses the call must refuse.
static long run_arch_prctl(struct fz *z, long a[6])
{
    static const long codes[] = {0x1001 /* SET_GS */, 0x1002 /* SET_FS */, 0x1003 /* GET_FS */,
                                 0x1004 /* GET_GS */, 0x3001, 0x1011, 0};
    a[0] = codes[below(&z->rng, sizeof codes / sizeof codes[0])];
    a[1] = gen_arg(z, 'b');
    if (a[0] == 0x1002) {
        static const long bad[] = {0xffff800000000000L, 0x0000800000000000L, -1L};
        a[1] = chance(&z->rng, 50) ? mem.fs_base : bad[below(&z->rng, 3)];
        // Each thread has its own FS: only the main thread's is mem.fs_base.
        if (a[1] == mem.fs_base && z->thread != 0)
            a[1] = bad[0];
    }
    return raw6(SYS_arch_prctl, a[0], a[1], 0, 0, 0, 0);
}

// ---- ends of threads and processes ---------------------------------------------------

static long run_exit(struct fz *z, long a[6])
{
    a[0] = gen_arg(z, 'i');
    z->slot->state = SLOT_EXITED;
    return raw6(SYS_exit, a[0], 0, 0, 0, 0, 0);
}

static long run_exit_group(struct fz *z, long a[6])
{
    a[0] = gen_arg(z, 'i');
    return raw6(SYS_exit_group, a[0], 0, 0, 0, 0, 0);
}

// With no signal frame on the stack the kernel restores whatever lies there:
// registers, segment selectors and flags it must sanitise.
static long run_rt_sigreturn(struct fz *z, long a[6])
{
    (void)z, (void)a;
    return raw6(SYS_rt_sigreturn, 0, 0, 0, 0, 0, 0);
}

// reboot only with a wrong first magic number: it must do nothing.
static long run_reboot(struct fz *z, long a[6])
{
    a[0] = (long)(rnd(&z->rng) & 0xffffffff);
    if (a[0] == 0xfee1dead)
        a[0] = 0;
    a[1] = 672274793L;
    a[2] = gen_arg(z, 'x');
    a[3] = gen_arg(z, 'b');
    return raw6(SYS_reboot, a[0], a[1], a[2], a[3], 0, 0);
}

// ---- new processes -----------------------------------------------------------------------

#define CLONE_PARENT 0x8000L
#define CLONE_VFORK 0x4000L

static long reaped_spawn(long nr, long a[6])
{
    long r = raw_spawn(nr, a[0], a[1], a[2], a[3], a[4]);
    if (r > 0)
        remember_child((int)r);
    return r;
}

// A child of this worker with its own few random calls (worker.c).
void fuzz_child(struct fz *z);

static long run_fork(struct fz *z, long a[6])
{
    if (chance(&z->rng, 60))
        return reaped_spawn(SYS_fork, a);
    long r = raw6(SYS_fork, 0, 0, 0, 0, 0, 0);
    if (r == 0)
        fuzz_child(z); // does not return
    if (r > 0)
        remember_child((int)r);
    return r;
}

static long run_vfork(struct fz *z, long a[6])
{
    (void)z;
    return reaped_spawn(SYS_vfork, a);
}

// Random clone flags, but never CLONE_PARENT: the child's exit signal would go
// to the supervisor. The exit signal in the low byte is random too.
static long run_clone(struct fz *z, long a[6])
{
    static const long common[] = {17, 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000 | 0x80000 | 0x100000 | 0x200000 | 0x1000000,
                                  0x100 | 17, 0x4000 | 0x100 | 17, 0x10000, 0x800, 0x20000 | 17,
                                  0x1000000 | 0x200000 | 17, 0x80000 | 17, 0x100000 | 17};
    a[0] = chance(&z->rng, 70) ? common[below(&z->rng, sizeof common / sizeof common[0])]
                               : gen_arg(z, 'F');
    a[0] &= ~CLONE_PARENT;
    if (!call_allowed(SYS_vfork)) // -x vfork leaves out every vfork
        a[0] &= ~CLONE_VFORK;
    a[1] = chance(&z->rng, 80) ? 0 : gen_arg(z, 'b'); // stack
    a[2] = gen_arg(z, 'b');                            // parent_tid
    a[3] = gen_arg(z, 'b');                            // child_tid
    a[4] = gen_arg(z, 'x');                            // tls
    if (chance(&z->rng, 50))
        a[4] = gen_arg(z, 'b');
    return reaped_spawn(SYS_clone, a);
}

// Programs that may run: /bin/true, a #! script that runs it, a file of
// garbage, or no program at all.
static long harmless_program(struct fz *z)
{
    char *p = z->path[0];
    switch (below(&z->rng, 6)) {
    case 0: case 1: return (long)"/bin/true";
    case 2: snprintf(p, PATH_MAX, "%s/s0", cfg.dir); return (long)p;
    case 3: snprintf(p, PATH_MAX, "%s/x0", cfg.dir); return (long)p;
    case 4: snprintf(p, PATH_MAX, "%s/d0", cfg.dir); return (long)p;
    default: return gen_pointer(z);
    }
}

static long gen_argv(struct fz *z, long prog)
{
    z->argv[0] = prog;
    z->argv[1] = chance(&z->rng, 80) ? 0 : gen_pointer(z);
    z->argv[2] = 0;
    return chance(&z->rng, 80) ? (long)z->argv : chance(&z->rng, 50) ? 0 : gen_pointer(z);
}

static long run_execve(struct fz *z, long a[6])
{
    a[0] = harmless_program(z);
    a[1] = gen_argv(z, a[0]);
    a[2] = chance(&z->rng, 50) ? 0 : gen_argv(z, a[0]);
    return raw6(SYS_execve, a[0], a[1], a[2], 0, 0, 0);
}

// posix_spawn (uapi/ext.h) of a harmless program with random file actions and
// attributes.
static long run_posix_spawn(struct fz *z, long a[6])
{
    static __thread struct spawn_file_action act[3];
    static __thread struct spawn_file_actions fa;
    static __thread struct spawn_attr attr;
    static __thread int pid;
    fa.n = (unsigned)below(&z->rng, 4);
    fa.actions = (unsigned long)act;
    for (unsigned i = 0; i < 3; i++) {
        act[i] = (struct spawn_file_action){
            .op = (int)below(&z->rng, 7), .fd = fd_pick(z), .newfd = fd_pick(z),
            .oflag = (int)gen_arg(z, 'O'), .mode = 0644, .path = (unsigned long)gen_arg(z, 'p')};
    }
    attr.flags = (unsigned)(chance(&z->rng, 80) ? below(&z->rng, 0x200) : rnd(&z->rng));
    attr.pgroup = (int)gen_pid(z);
    attr.sigmask = rnd(&z->rng);
    attr.sigdefault = rnd(&z->rng);
    attr.affinity[0] = chance(&z->rng, 80) ? 1 + below(&z->rng, 15) : rnd(&z->rng);
    a[0] = chance(&z->rng, 90) ? (long)&pid : gen_pointer(z);
    a[1] = harmless_program(z);
    a[2] = chance(&z->rng, 60) ? (long)&fa : chance(&z->rng, 50) ? 0 : gen_pointer(z);
    a[3] = chance(&z->rng, 60) ? (long)&attr : chance(&z->rng, 50) ? 0 : gen_pointer(z);
    a[4] = gen_argv(z, a[1]);
    a[5] = chance(&z->rng, 50) ? 0 : gen_argv(z, a[1]);
    pid = 0;
    long r = raw6(__NR_posix_spawn, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (r == 0 && a[0] == (long)&pid && pid > 0)
        remember_child(pid);
    return r;
}

// ---- signals ---------------------------------------------------------------------------

static volatile long caught;
static void handler(int sig) { (void)sig; caught++; }

// Handlers: default, ignore, ours, or garbage (the next fault of that signal
// then kills the worker, or spins it until the supervisor does).
static long run_rt_sigaction(struct fz *z, long a[6])
{
    static const long flag_bits[] = {0x04000000 /* RESTORER */, 4 /* SIGINFO */, 0x08000000 /* ONSTACK */,
                                     0x10000000 /* RESTART */, 0x40000000 /* NODEFER */,
                                     (long)0x80000000 /* RESETHAND */, 1 /* NOCLDSTOP */, 2 /* NOCLDWAIT */};
    long *act = z->sigact;
    switch (below(&z->rng, 10)) {
    case 0: case 1: act[0] = (long)SIG_DFL; break;
    case 2: case 3: act[0] = (long)SIG_IGN; break;
    case 4: act[0] = gen_pointer(z); break;
    default: act[0] = (long)handler; break;
    }
    act[1] = 0x04000000;
    for (int i = 0; i < 3; i++)
        act[1] |= flag_bits[below(&z->rng, sizeof flag_bits / sizeof flag_bits[0])];
    if (chance(&z->rng, 5))
        act[1] = gen_arg(z, 'F');
    act[2] = chance(&z->rng, 90) ? mem.restorer : gen_pointer(z);
    act[3] = chance(&z->rng, 50) ? 0 : (long)rnd(&z->rng);
    a[0] = gen_signal(z);
    a[1] = chance(&z->rng, 70) ? (long)act : chance(&z->rng, 30) ? 0 : gen_pointer(z);
    a[2] = gen_arg(z, 'b');
    a[3] = gen_arg(z, 'S');
    return raw6(SYS_rt_sigaction, a[0], a[1], a[2], a[3], 0, 0);
}

// wait4 and waitid may also wait for any child (-1): only ours exist.
static long run_wait4(struct fz *z, long a[6])
{
    a[0] = chance(&z->rng, 40) ? -1 : gen_pid(z);
    a[1] = gen_arg(z, 'b');
    a[2] = chance(&z->rng, 60) ? 1 /* WNOHANG */ : gen_arg(z, 'F');
    a[3] = gen_arg(z, 'b');
    return raw6(SYS_wait4, a[0], a[1], a[2], a[3], 0, 0);
}

static long make_pipe(struct fz *z, long nr, long a[6])
{
    static __thread int pfd[2];
    a[0] = chance(&z->rng, 70) ? (long)pfd : gen_pointer(z);
    a[1] = nr == SYS_pipe2 ? gen_arg(z, 'O') : 0;
    long r = raw6(nr, a[0], a[1], 0, 0, 0, 0);
    if (r == 0 && a[0] == (long)pfd) {
        fd_remember(pfd[0]);
        fd_remember(pfd[1]);
    }
    return r;
}

static long run_pipe(struct fz *z, long a[6]) { return make_pipe(z, SYS_pipe, a); }
static long run_pipe2(struct fz *z, long a[6]) { return make_pipe(z, SYS_pipe2, a); }

// ---- sockets -----------------------------------------------------------------------

// socket/socketpair: mostly the families and types that exist, with their
// flags (often SOCK_NONBLOCK, so that later calls on the socket return).
static long sock_type(struct fz *z)
{
    static const long types[] = {1 /* STREAM */, 2 /* DGRAM */, 3, 5, 0, 11};
    long t = chance(&z->rng, 90) ? types[below(&z->rng, 4)] : types[below(&z->rng, 6)];
    if (chance(&z->rng, 50))
        t |= 04000; // SOCK_NONBLOCK
    if (chance(&z->rng, 20))
        t |= 02000000; // SOCK_CLOEXEC
    if (chance(&z->rng, 10))
        t |= gen_arg(z, 'F');
    return t;
}

static long sock_domain(struct fz *z)
{
    static const long doms[] = {1 /* UNIX */, 2 /* INET */, 10 /* INET6 */, 16, -1, 1000};
    return chance(&z->rng, 90) ? doms[below(&z->rng, 2)] : doms[below(&z->rng, 6)];
}

static long run_socket(struct fz *z, long a[6])
{
    a[0] = sock_domain(z);
    a[1] = sock_type(z);
    a[2] = chance(&z->rng, 80) ? 0 : gen_arg(z, 'i');
    return raw6(SYS_socket, a[0], a[1], a[2], 0, 0, 0);
}

static long run_socketpair(struct fz *z, long a[6])
{
    static __thread int sv[2];
    a[0] = sock_domain(z);
    a[1] = sock_type(z);
    a[2] = chance(&z->rng, 80) ? 0 : gen_arg(z, 'i');
    a[3] = chance(&z->rng, 80) ? (long)sv : gen_pointer(z);
    long r = raw6(SYS_socketpair, a[0], a[1], a[2], a[3], 0, 0);
    if (r == 0 && a[3] == (long)sv) {
        fd_remember(sv[0]);
        fd_remember(sv[1]);
    }
    return r;
}

// An address for bind/connect/sendto: 127.0.0.1 at one of a few ports, one
// of a few AF_UNIX paths or abstract names, no name (autobind), or anything;
// a[ai] gets it and a[ai+1] its length.
static void sock_addr(struct fz *z, long a[6], int ai)
{
    static __thread unsigned char buf[112];
    int k = (int)below(&z->rng, 4);
    memset(buf, 0, sizeof buf);
    if (k == 0) {
        buf[0] = 2; // AF_INET
        buf[2] = 0x9c; // port 0x9c40 + n, network order
        buf[3] = (unsigned char)(0x40 + below(&z->rng, 4));
        buf[4] = 127;
        buf[7] = 1;
        a[ai] = (long)buf;
        a[ai + 1] = chance(&z->rng, 90) ? 16 : gen_arg(z, 'i');
    } else if (k == 1) {
        buf[0] = 1; // AF_UNIX: a path, an abstract name (NUL first), or none (autobind)
        int kind = (int)below(&z->rng, 3), n = (int)below(&z->rng, 3);
        if (kind == 0)
            snprintf((char *)buf + 2, 100, "/tmp/fz.s%d", n);
        else if (kind == 1)
            snprintf((char *)buf + 3, 99, "fz.a%d", n);
        a[ai] = (long)buf;
        a[ai + 1] = !chance(&z->rng, 90) ? gen_arg(z, 'i') : kind == 2 ? 2 : 2 + 12;
    } else {
        a[ai] = gen_pointer(z);
        a[ai + 1] = gen_arg(z, 'i');
    }
}

static long run_bind(struct fz *z, long a[6])
{
    a[0] = fd_pick(z);
    sock_addr(z, a, 1);
    return raw6(SYS_bind, a[0], a[1], a[2], 0, 0, 0);
}

static long run_connect(struct fz *z, long a[6])
{
    a[0] = fd_pick(z);
    sock_addr(z, a, 1);
    return raw6(SYS_connect, a[0], a[1], a[2], 0, 0, 0);
}

static long run_sendto(struct fz *z, long a[6])
{
    a[0] = fd_pick(z);
    a[1] = gen_arg(z, 'b');
    a[2] = gen_arg(z, 'l');
    a[3] = chance(&z->rng, 50) ? 0x40 /* MSG_DONTWAIT */ : gen_arg(z, 'F');
    sock_addr(z, a, 4);
    if (chance(&z->rng, 30))
        a[4] = a[5] = 0;
    return raw6(SYS_sendto, a[0], a[1], a[2], a[3], a[4], a[5]);
}

// A message with control data a kernel can act on: none, SCM_RIGHTS with a
// few of this worker's fds (sockets among them, which may end in cycles),
// SCM_CREDENTIALS (this worker's process or another pid, any ids), both, or
// a random buffer; or anything at all as the msghdr.
static long run_sendmsg(struct fz *z, long a[6])
{
    static __thread struct {
        long name, namelen, iov, iovlen, control, controllen, flags;
    } mh;
    static __thread long iov[2];
    static __thread unsigned char ctl[80];
    a[0] = fd_pick(z);
    a[2] = chance(&z->rng, 50) ? 0x40 /* MSG_DONTWAIT */ : gen_arg(z, 'F');
    if (chance(&z->rng, 10)) {
        a[1] = gen_arg(z, 'b');
        return raw6(SYS_sendmsg, a[0], a[1], a[2], 0, 0, 0);
    }
    memset(ctl, 0, sizeof ctl);
    size_t len = 0;
    int kind = (int)below(&z->rng, 5); // 0 none, 1 rights, 2 creds, 3 both, 4 random
    if (kind == 1 || kind == 3) {
        int n = 1 + (int)below(&z->rng, 3);
        long h[2] = {16 + 4 * n, 1L | 1L << 32}; // len; SOL_SOCKET, SCM_RIGHTS
        memcpy(ctl, h, sizeof h);
        for (int i = 0; i < n; i++) {
            int fd = fd_pick(z);
            memcpy(ctl + 16 + 4 * i, &fd, 4);
        }
        len = (16 + 4 * (size_t)n + 7) & ~7UL;
    }
    if (kind == 2 || kind == 3) {
        long h[2] = {16 + 12, 1L | 2L << 32}; // SOL_SOCKET, SCM_CREDENTIALS
        int cred[3] = {chance(&z->rng, 70) ? (int)raw6(SYS_getpid, 0, 0, 0, 0, 0, 0) : (int)gen_pid(z),
                       (int)gen_arg(z, 'i'), (int)gen_arg(z, 'i')};
        memcpy(ctl + len, h, sizeof h);
        memcpy(ctl + len + 16, cred, sizeof cred);
        len += 32;
    }
    if (kind == 4) {
        for (size_t i = 0; i < sizeof ctl; i++)
            ctl[i] = (unsigned char)rnd(&z->rng);
        len = below(&z->rng, sizeof ctl + 1);
    }
    iov[0] = gen_arg(z, 'b');
    iov[1] = chance(&z->rng, 80) ? (long)below(&z->rng, 64) : gen_arg(z, 'l');
    sock_addr(z, a, 3);
    mh.name = chance(&z->rng, 70) ? 0 : a[3];
    mh.namelen = mh.name ? a[4] : 0;
    mh.iov = (long)iov;
    mh.iovlen = 1;
    mh.control = len ? (long)ctl : 0;
    mh.controllen = (long)len;
    mh.flags = 0;
    a[1] = (long)&mh;
    return raw6(SYS_sendmsg, a[0], a[1], a[2], 0, 0, 0);
}

// Not a system call: a load or store in the arena or the shared region, racing
// with the other threads' munmap, mprotect, madvise and MAP_FIXED there. It may
// fault for good (SIGSEGV, or SIGBUS past the end of a mapped file).
static long run_touch(struct fz *z, long a[6])
{
    a[0] = gen_arg(z, 'a');
    if (a[0] < 0 || a[0] >= 0x0000800000000000L)
        a[0] = mem.arena;
    a[1] = chance(&z->rng, 50);
    volatile char *p = (volatile char *)a[0];
    if (a[1])
        *p = (char)rnd(&z->rng);
    return *p;
}

// ---- the table ---------------------------------------------------------------------------

#define C(n, sig, fl) {#n, SYS_##n, sig, fl, NULL}
#define X(n, fn, fl) {#n, SYS_##n, "", fl, fn}

const struct call calls[] = {
    C(read, "fbl", BLOCKS),
    C(write, "fbl", BLOCKS),
    C(pread64, "fblo", BLOCKS),
    C(pwrite64, "fblo", BLOCKS),
    C(sendfile, "ffbl", BLOCKS),
    C(readv, "fbi", BLOCKS),
    C(writev, "fbi", BLOCKS),
    C(lseek, "fow", 0),
    C(close, "f", 0),
    C(dup, "f", RETFD),
    C(dup2, "ff", RETFD),
    C(dup3, "ffO", RETFD),
    C(fcntl, "fwx", BLOCKS | RETFD),
    C(close_range, "iiF", 0),
    C(fstat, "fb", 0),
    C(ftruncate, "fo", 0),
    C(fsync, "f", 0),
    C(fdatasync, "f", 0),
    C(getdents64, "fbl", 0),
    C(ioctl, "fwb", BLOCKS),
    C(fchdir, "f", 0),
    C(fchmod, "fm", 0),
    X(pipe, run_pipe, 0),
    X(pipe2, run_pipe2, 0),
    C(poll, "biT", BLOCKS),
    C(ppoll, "bitbS", BLOCKS),
    C(select, "ibbbt", BLOCKS),
    C(pselect6, "ibbbtb", BLOCKS),
    C(open, "pOm", BLOCKS | RETFD),
    C(openat, "dpOm", BLOCKS | RETFD),
    C(memfd_create, "pF", RETFD),
    C(creat, "pm", BLOCKS | RETFD),
    C(stat, "pb", 0),
    C(lstat, "pb", 0),
    C(newfstatat, "dpbA", 0),
    C(statx, "dpAxb", 0),
    C(mkdir, "pm", 0),
    C(mkdirat, "dpm", 0),
    C(mknod, "pmD", 0),
    C(mknodat, "dpmD", 0),
    C(unlink, "p", 0),
    C(rmdir, "p", 0),
    C(unlinkat, "dpA", 0),
    C(rename, "pp", 0),
    C(renameat, "dpdp", 0),
    C(renameat2, "dpdpi", 0),
    C(link, "pp", 0),
    C(linkat, "dpdpA", 0),
    C(symlink, "pp", 0),
    C(symlinkat, "pdp", 0),
    C(readlink, "pbl", 0),
    C(readlinkat, "dpbl", 0),
    C(truncate, "po", 0),
    C(chdir, "p", 0),
    C(getcwd, "bl", 0),
    C(access, "pi", 0),
    C(faccessat, "dpiA", 0),
    C(faccessat2, "dpiA", 0),
    C(utimensat, "dpbA", 0),
    C(chmod, "pm", 0),
    C(fchmodat, "dpmA", 0),
    C(umask, "m", 0),
    X(exit, run_exit, RARE),
    X(exit_group, run_exit_group, RARE),
    X(wait4, run_wait4, BLOCKS),
    C(getpid, "", 0),
    C(getppid, "", 0),
    C(gettid, "", 0),
    C(set_tid_address, "b", 0),
    X(arch_prctl, run_arch_prctl, 0),
    X(brk, run_brk, 0),
    X(mmap, run_mmap, 0),
    C(munmap, "aL", 0),
    C(mprotect, "aLi", 0),
    C(madvise, "aLw", 0),
    C(uname, "b", 0),
    C(clock_gettime, "wb", 0),
    C(gettimeofday, "bb", 0),
    C(nanosleep, "tb", BLOCKS),
    C(alarm, "i", RARE),          // SIGALRM, at its default, ends the worker: a restart
    C(getitimer, "wb", 0),
    C(setitimer, "wbb", RARE),
    C(clock_nanosleep, "wFtb", BLOCKS),
    C(sched_yield, "", 0),
    C(getcpu, "bbb", 0),
    C(sched_setaffinity, "Plb", 0),
    C(sched_getaffinity, "Plb", 0),
    C(getuid, "", 0),
    C(geteuid, "", 0),
    C(getgid, "", 0),
    C(getegid, "", 0),
    C(getgroups, "ib", 0),
    C(getrandom, "blF", 0),
    X(reboot, run_reboot, 0),
    C(rt_sigtimedwait, "bbtS", BLOCKS),
    C(rt_sigprocmask, "ibbS", 0),
    X(rt_sigaction, run_rt_sigaction, 0),
    X(clone, run_clone, NOCHILD | BLOCKS), // CLONE_VFORK waits for the child
    X(fork, run_fork, NOCHILD),
    X(vfork, run_vfork, NOCHILD | BLOCKS),
    X(execve, run_execve, NOCHILD | RARE),
    C(waitid, "wPbFb", BLOCKS),
    C(prlimit64, "Pwbb", 0),
    C(getrlimit, "wb", 0),
    C(setrlimit, "wb", 0),
    C(futex, "bwxtbx", BLOCKS),
    // It does not come back here: the thread goes on at whatever the stack held,
    // which may be a loop (seed 12 at 8 vCPUs: 20 s in one), so a stall is no hang.
    X(rt_sigreturn, run_rt_sigreturn, BLOCKS | RARE),
    C(rt_sigpending, "bS", 0),
    C(rt_sigsuspend, "bS", BLOCKS | RARE),
    C(pause, "", BLOCKS | RARE),
    C(sigaltstack, "bb", 0),
    C(kill, "Ps", 0),
    C(tkill, "Ps", 0),
    C(tgkill, "PPs", 0),
    C(setsid, "", NOCHILD),
    C(setpgid, "PP", NOCHILD),
    C(getpgid, "P", 0),
    C(getpgrp, "", 0),
    C(getsid, "P", 0),
    X(socket, run_socket, RETFD),
    X(socketpair, run_socketpair, 0),
    X(bind, run_bind, 0),
    X(connect, run_connect, BLOCKS),
    C(listen, "fi", 0),
    C(accept, "fbb", BLOCKS | RETFD),
    C(accept4, "fbbF", BLOCKS | RETFD),
    X(sendto, run_sendto, BLOCKS),
    C(recvfrom, "fblFbb", BLOCKS),
    X(sendmsg, run_sendmsg, BLOCKS),
    C(recvmsg, "fbF", BLOCKS),
    C(shutdown, "fi", 0),
    C(getsockname, "fbb", 0),
    C(getpeername, "fbb", 0),
    C(setsockopt, "fiibi", 0),
    C(getsockopt, "fiibb", 0),
    {"posix_spawn", __NR_posix_spawn, "", NOCHILD, run_posix_spawn},
    {"kstats", __NR_kstats, "bl", 0, NULL},
    {"touch", -1, "", BLOCKS, run_touch}, // faults for ever under a SIGSEGV handler that returns
};
const int ncalls = sizeof calls / sizeof calls[0];

static void log_call(struct fz *z, int i, const long a[6], long ret, bool after)
{
    char line[320];
    int n = snprintf(line, sizeof line, "# w%d.g%d.t%d%s #%llu %s(%lx, %lx, %lx, %lx, %lx, %lx)",
                     z->worker, shared->w[z->worker].gen, z->thread, z->child ? " child" : "",
                     (unsigned long long)z->slot->calls, calls[i].name, a[0], a[1], a[2], a[3], a[4], a[5]);
    for (int k = 0; calls[i].args[k] && n < 160; k++) // the paths, where ours
        if (a[k] == (long)z->path[0] || a[k] == (long)z->path[1])
            n += snprintf(line + n, sizeof line - (size_t)n, " \"%.40s\"", (char *)a[k]);
    if (after)
        n += snprintf(line + n, sizeof line - (size_t)n, " = %ld", ret);
    else
        n += snprintf(line + n, sizeof line - (size_t)n, " ...");
    line[n++] = '\n';
    raw6(SYS_write, LOG_FD, (long)line, n, 0, 0, 0);
}

bool call_allowed(long nr)
{
    for (int i = 0; i < ncalls; i++)
        if (calls[i].nr == nr)
            return cfg.call_mask[i / 64] >> (i % 64) & 1;
    return false;
}

// One call of the table with fresh arguments; its result.
long do_call(struct fz *z, int i)
{
    const struct call *c = &calls[i];
    long a[6] = {0};
    z->npath = 0;
    if (chance(&z->rng, 25))
        scramble_window(z);
    for (int k = 0; c->args[k]; k++)
        a[k] = gen_arg(z, c->args[k]);
    if (cfg.verbose && !c->run)
        log_call(z, i, a, 0, false);
    long r = c->run ? c->run(z, a) : raw6(c->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (cfg.verbose)
        log_call(z, i, a, r, true);
    if ((c->flags & RETFD) && r >= 0 && r < INT_MAX && (c->nr != SYS_fcntl || a[1] == 0 || a[1] == 1030))
        fd_remember((int)r);
    return r;
}
