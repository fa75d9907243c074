// The fuzzer's random sequence and argument generators. Each generator mixes a
// few valid values with the ones kernels get wrong: the caller's own fds and
// closed ones, NULL, kernel-half, non-canonical, unmapped, misaligned and
// page-straddling pointers, lengths of 0, 1, a page and huge, random flag bits,
// paths that exist, do not, are too long or hold `..`.
//
// Nothing here may ever name the supervisor, init or anything outside the
// fuzz directory: pids come from this worker's own family (gen_pid), paths all
// lie under cfg.dir, and addresses that calls unmap or remap lie in the
// worker's arena (gen_arg 'a'). Every choice comes from the thread's own
// sequence, so a thread's calls repeat for the same seed as long as the kernel
// answers as before (the fds a call returns feed later choices).
#include "fuzz.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define K1 0xffff800000000000L // the start of the kernel half
#define K2 0xffffffff80000000L // where kernels are linked
#define NONCANON 0x0000800000000000L

// splitmix64: a full-period 64-bit sequence, good enough for choosing.
uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// A seed derived from two numbers (the run's seed and a worker index, ...).
uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t s = a ^ (b * 0xd1342543de82ef95ULL);
    rnd(&s);
    return rnd(&s);
}

// ---- fds: the worker's own, shared by its threads ---------------------------------

#define NFDS 32
static volatile int fds[NFDS];
static volatile unsigned fd_next;

// A new fd the worker owns. The table is small: the fd it displaces is closed,
// so that a long run does not end in EMFILE.
void fd_remember(int fd)
{
    unsigned i = __atomic_fetch_add(&fd_next, 1, __ATOMIC_RELAXED) % NFDS;
    int old = __atomic_exchange_n(&fds[i], fd, __ATOMIC_RELAXED);
    if (old > 2 && old != fd)
        raw6(SYS_close, old, 0, 0, 0, 0, 0);
}

int fd_pick(struct fz *z)
{
    uint64_t r = below(&z->rng, 100);
    if (r < 70)
        return fds[below(&z->rng, NFDS)]; // (0 until filled: stdin, /dev/null)
    if (r < 80)
        return (int)below(&z->rng, 40); // open or closed, whatever it is now
    static const int bad[] = {-1, -100, 1 << 20, INT_MAX, INT_MIN, 1023, 1024};
    return bad[below(&z->rng, sizeof bad / sizeof bad[0])];
}

// ---- pointers -------------------------------------------------------------------

// The last bytes of the stable area, before its guard page: strings there run
// into the guard with no NUL.
static long straddle(struct fz *z)
{
    long end = mem.stable + mem.stable_len;
    memset((void *)(end - 16), 'a', 16);
    return end - 1 - (long)below(&z->rng, 16);
}

long gen_pointer(struct fz *z)
{
    uint64_t r = below(&z->rng, 100);
    if (r < 35)
        return mem.stable + (long)below(&z->rng, (uint64_t)mem.stable_len - PG) / 8 * 8;
    if (r < 55)
        return mem.arena + (long)below(&z->rng, (uint64_t)mem.arena_len);
    if (r < 62)
        return mem.shm + (long)below(&z->rng, (uint64_t)mem.shm_len);
    if (r < 68)
        return straddle(z);
    if (r < 72)
        return mem.stable + 1 + (long)below(&z->rng, 7); // misaligned
    static const long bad[] = {0, 1, PG, K1, K2, NONCANON, NONCANON - 1, -1L, -PG, 0x7ffffffff000L};
    if (r < 95)
        return bad[below(&z->rng, sizeof bad / sizeof bad[0])];
    return (long)rnd(&z->rng);
}

// Rewrites 256 bytes somewhere in the stable area with words a kernel reads as
// structures: small numbers, lengths, pointers, fds. Arrays of iovecs,
// pollfds, timespecs, sigsets and argv then hold plausible mixes.
void scramble_window(struct fz *z)
{
    long *w = (long *)(mem.stable + (long)below(&z->rng, (uint64_t)(mem.stable_len - 256)) / 8 * 8);
    for (int i = 0; i < 32; i++) {
        switch (below(&z->rng, 6)) {
        case 0: w[i] = 0; break;
        case 1: w[i] = (long)below(&z->rng, 32); break;
        case 2: w[i] = gen_arg(z, 'l'); break;
        case 3: w[i] = gen_pointer(z); break;
        case 4: w[i] = (long)fd_pick(z) | (long)below(&z->rng, 0x40) << 32; break; // pollfd
        default: w[i] = (long)rnd(&z->rng); break;
        }
    }
}

// ---- numbers --------------------------------------------------------------------

static long gen_len(struct fz *z)
{
    static const long lens[] = {0, 1, 2, 8, 16, 64, PG - 1, PG, PG + 1, 2 * PG, 3 * PG,
                                -1L, LONG_MAX, 1L << 31, 1L << 32, -PG};
    if (chance(&z->rng, 70))
        return lens[below(&z->rng, 10)]; // the sensible ones
    if (chance(&z->rng, 50))
        return lens[below(&z->rng, sizeof lens / sizeof lens[0])];
    return (long)below(&z->rng, 3 * PG);
}

static long gen_offset(struct fz *z)
{
    static const long offs[] = {0, 0, 1, 24, PG, 2 * PG, -1L, 1L << 40, LONG_MAX, -PG};
    if (chance(&z->rng, 20))
        return (long)below(&z->rng, 16 * PG);
    return offs[below(&z->rng, sizeof offs / sizeof offs[0])];
}

// Random bits, weighted towards none, one, and a few low ones.
static long gen_flags(struct fz *z)
{
    switch (below(&z->rng, 8)) {
    case 0: case 1: return 0;
    case 2: case 3: return 1L << below(&z->rng, 32);
    case 4: case 5: return (long)(rnd(&z->rng) & rnd(&z->rng) & 0xffffff);
    case 6: return -1L;
    default: return (long)(rnd(&z->rng) & 0xffffffff);
    }
}

static long gen_open_flags(struct fz *z)
{
    static const long common[] = {
        O_RDONLY, O_WRONLY, O_RDWR, O_RDWR | O_CREAT, O_WRONLY | O_CREAT | O_TRUNC,
        O_RDWR | O_CREAT | O_EXCL, O_RDONLY | O_DIRECTORY, O_WRONLY | O_APPEND | O_CREAT,
        O_RDONLY | O_NONBLOCK, O_RDWR | O_NONBLOCK, O_RDONLY | O_CLOEXEC, O_RDWR | O_ANYFD | O_CREAT,
        O_PATH, O_RDONLY | O_NOFOLLOW, O_WRONLY | O_CREAT | O_DIRECTORY,
    };
    long f = common[below(&z->rng, sizeof common / sizeof common[0])];
    if (chance(&z->rng, 15))
        f |= gen_flags(z);
    return f;
}

static long gen_at_flags(struct fz *z)
{
    static const long common[] = {0, 0, AT_SYMLINK_NOFOLLOW, AT_REMOVEDIR, AT_EMPTY_PATH,
                                  AT_SYMLINK_FOLLOW, AT_EACCESS, 0x6000};
    if (chance(&z->rng, 80))
        return common[below(&z->rng, sizeof common / sizeof common[0])];
    return gen_flags(z);
}

static long gen_mode(struct fz *z)
{
    static const long modes[] = {0644, 0755, 0, 07777, 0600, 0444,
                                 S_IFIFO | 0644, S_IFREG | 0644, S_IFCHR | 0666,
                                 S_IFDIR | 0755, S_IFSOCK | 0644, S_IFBLK | 0644};
    if (chance(&z->rng, 85))
        return modes[below(&z->rng, sizeof modes / sizeof modes[0])];
    return (long)(rnd(&z->rng) & 0xffff);
}

// A device number for mknod: /dev/null's and /dev/zero's, or nothing real. Never
// a terminal (major 4 and 5): the fuzzer must not write to the console.
static long gen_dev(struct fz *z)
{
    switch (below(&z->rng, 4)) {
    case 0: return (long)makedev(1, 3);
    case 1: return (long)makedev(1, 5);
    case 2: return 0;
    default: {
        long d = (long)rnd(&z->rng);
        return major(d) == 4 || major(d) == 5 ? (long)makedev(1, 3) : d;
    }
    }
}

// A timespec pointer: mostly zero or a few milliseconds, sometimes invalid,
// rarely NULL (for ever, where a call takes that meaning).
static long gen_timespec(struct fz *z)
{
    long *ts = &z->ts[2 * below(&z->rng, 2)];
    uint64_t r = below(&z->rng, 100);
    ts[0] = 0;
    ts[1] = r < 50 ? 0 : (long)below(&z->rng, 10 * 1000 * 1000);
    if (r >= 80 && r < 88)
        ts[1] = 1000000000L; // invalid
    if (r >= 88 && r < 92)
        ts[0] = -1;
    if (r >= 92 && r < 96)
        return gen_pointer(z);
    if (r >= 96)
        return 0;
    return (long)ts;
}

// poll's timeout in milliseconds
static long gen_msecs(struct fz *z)
{
    uint64_t r = below(&z->rng, 100);
    return r < 60 ? 0 : r < 95 ? (long)below(&z->rng, 20) : r < 97 ? -1 : (long)rnd(&z->rng);
}

static long gen_small(struct fz *z)
{
    static const long v[] = {0, 1, 2, 3, 4, 5, 8, 16, 17, 64, 1024, -1, INT_MAX, INT_MIN};
    return v[below(&z->rng, sizeof v / sizeof v[0])];
}

// A constant a call takes one of (whence, fcntl and ioctl commands, advice,
// resources, clocks): mostly small, where the valid ones are.
static long gen_selector(struct fz *z)
{
    static const long v[] = {0x5401, 0x5402, 0x5413, 0x5414, 0x541b, 0x5421, 0x540f,
                             0x5410, 0x5450, 0x5451, 1030, 1024, 1025, 1026, 200};
    uint64_t r = below(&z->rng, 100);
    if (r < 60)
        return (long)below(&z->rng, 16);
    if (r < 85)
        return v[below(&z->rng, sizeof v / sizeof v[0])];
    return gen_small(z);
}

// ---- paths: all under cfg.dir -------------------------------------------------------

// What the supervisor makes at the start (fuzz.c) and the calls keep changing.
static const char *const names[] = {
    "f0", "f1", "f2", "f3", "d0", "d1", "d2", "d0/f0", "d0/f1", "d0/d3", "d0/d3/f0",
    "d1/f2", "l0", "l1", "l2", "l3", "p0", "n0", "s0", "x0", "d0/../f1", "d1/./f2",
    "d0/", "f0/", "f0/x", "nope", "nope/f0", "d2/nope", "d0/d3/../../f3", "l1/f0",
};

static char *path_buf(struct fz *z)
{
    char *p = z->path[z->npath];
    z->npath ^= 1;
    return p;
}

// A path of n bytes like "a/a/a/..." (every component short).
static char *long_path(struct fz *z, size_t n)
{
    char *p = path_buf(z);
    for (size_t i = 0; i < n; i++)
        p[i] = i % 2 ? '/' : 'a';
    p[n] = 0;
    return p;
}

static long gen_path(struct fz *z)
{
    uint64_t r = below(&z->rng, 100);
    const char *name = names[below(&z->rng, sizeof names / sizeof names[0])];
    char *p;
    if (r < 65) { // absolute: the working directory does not matter
        p = path_buf(z);
        strcpy(p, cfg.dir);
        strcat(p, "/");
        strcat(p, name);
        return (long)p;
    }
    if (r < 80) { // relative to the working directory or a directory fd: inside
                  // cfg.dir as long as the names never start with ..
        p = path_buf(z);
        strcpy(p, name);
        return (long)p;
    }
    if (r < 83)
        return (long)"";
    if (r < 86)
        return (long)long_path(z, PATH_MAX + 1);
    if (r < 88)
        return (long)long_path(z, PATH_MAX - 1);
    if (r < 91) { // a component longer than NAME_MAX
        p = path_buf(z);
        strcpy(p, cfg.dir);
        size_t n = strlen(p);
        p[n++] = '/';
        memset(p + n, 'n', NAME_MAX + 1);
        p[n + NAME_MAX + 1] = 0;
        return (long)p;
    }
    return gen_pointer(z); // NULL, kernel, unmapped, straddling, garbage
}

// A directory fd for the *at calls.
static long gen_dirfd(struct fz *z)
{
    return chance(&z->rng, 45) ? AT_FDCWD : fd_pick(z);
}

// ---- confined addresses: only the arena and the shared region -----------------------

static long gen_confined(struct fz *z)
{
    uint64_t r = below(&z->rng, 100);
    long lo = mem.arena, len = mem.arena_len;
    if (r < 20) {
        lo = mem.shm;
        len = mem.shm_len;
    }
    if (r >= 90) { // outside user space: nothing of ours to lose
        static const long out[] = {K1, K2, NONCANON, -PG};
        z->arg_lo = z->arg_hi = out[below(&z->rng, 4)];
        return z->arg_lo;
    }
    long a = lo + (long)below(&z->rng, (uint64_t)(len / PG)) * PG;
    if (chance(&z->rng, 10))
        a += 1 + (long)below(&z->rng, PG - 1);
    z->arg_lo = a;
    z->arg_hi = lo + len;
    return a;
}

// A length for the last confined address: within its range, or (rarely) one
// so large that the call must refuse it (a range that wraps or leaves user space).
static long gen_confined_len(struct fz *z)
{
    long room = z->arg_hi - z->arg_lo;
    uint64_t r = below(&z->rng, 100);
    if (r < 5)
        return 0;
    if (r < 8)
        return -PG;
    if (r < 10)
        return LONG_MAX;
    if (room <= 0)
        return PG;
    long n = 1 + (long)below(&z->rng, (uint64_t)(room + PG - 1) / PG);
    long len = n * PG;
    if (chance(&z->rng, 10))
        len -= 1 + (long)below(&z->rng, PG - 1); // unaligned: rounded up
    return len > room ? room : len;
}

// ---- pids and signals: this worker's family only ----------------------------------------

// Processes and groups no call may aim at: everyone (-1), init, the
// supervisor, its parent and their groups; and nobody (0) as a recorded pid.
bool protected_pid(long pid)
{
    long p = pid < 0 ? -pid : pid;
    return p <= 1 || p == cfg.supervisor_pid || p == cfg.supervisor_pgid || p == cfg.parent_pid;
}

// A pid of this worker's own family, or of nobody.
long gen_pid(struct fz *z)
{
    int self = (int)raw6(SYS_getpid, 0, 0, 0, 0, 0, 0);
    int pid;
    switch (below(&z->rng, 9)) {
    case 0: pid = 0; break;
    case 1: case 2: pid = self; break;
    case 3: pid = (int)raw6(SYS_gettid, 0, 0, 0, 0, 0, 0); break;
    case 4: pid = sibling_pid(z); break;
    case 5: pid = -self; break;
    case 6: pid = -sibling_pid(z); break;
    case 7: pid = 0x3ffffff0; break; // no such process
    default: pid = shared->w[z->worker].slot[below(&z->rng, (uint64_t)cfg.threads)].tid; break; // a thread of ours
    }
    if (pid != 0 && protected_pid(pid))
        pid = self;
    return pid;
}

// Mostly signals that leave the target alive (caught, ignored, stop and
// continue); sometimes fatal ones, and numbers that are no signal.
long gen_signal(struct fz *z)
{
    static const long sigs[] = {0, SIGUSR1, SIGUSR2, SIGCHLD, SIGCONT, SIGWINCH, SIGURG, 34, 40, 64,
                                SIGSTOP, SIGTSTP, SIGTERM, SIGKILL, SIGSEGV, SIGALRM, 65, -1, 1000};
    uint64_t r = below(&z->rng, 100);
    if (r < 80)
        return sigs[below(&z->rng, 10)];
    return sigs[below(&z->rng, sizeof sigs / sizeof sigs[0])];
}

// One argument of the kind a call's signature names (calls.c lists the letters).
long gen_arg(struct fz *z, char kind)
{
    switch (kind) {
    case 'f': return fd_pick(z);
    case 'd': return gen_dirfd(z);
    case 'p': return gen_path(z);
    case 'b': return gen_pointer(z);
    case 'l': return gen_len(z);
    case 'o': return gen_offset(z);
    case 'F': return gen_flags(z);
    case 'O': return gen_open_flags(z);
    case 'A': return gen_at_flags(z);
    case 'm': return gen_mode(z);
    case 'D': return gen_dev(z);
    case 't': return gen_timespec(z);
    case 'T': return gen_msecs(z);
    case 'i': return gen_small(z);
    case 'w': return gen_selector(z);
    case 'a': return gen_confined(z);
    case 'L': return gen_confined_len(z);
    case 'P': return gen_pid(z);
    case 's': return gen_signal(z);
    case 'S': return chance(&z->rng, 90) ? 8 : gen_small(z); // sigset size
    case 'x': return (long)rnd(&z->rng);
    default: return 0;
    }
}
