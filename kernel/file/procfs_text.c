// /proc's file contents, in the formats of Linux 6.1 (proc(5)), built at open
// into a kernel buffer that the open file description keeps.
//
// Commute: every text is read from state its owners already keep; building one
// writes only the buffer. Machine-wide figures are sums over CPUs made at read
// time (page counts, CPU ticks and load averages per CPU, the pid table's
// per-CPU buckets), so the operations they count (allocating, ticking, forking)
// never write a shared line for /proc's sake. A process's figures are its own
// fields (proc_info takes its lock).
#include "file/dev.h"
#include "file/file.h"
#include "file/fs_context.h"
#include "file/procfs.h"
#include "file/stat.h"
#include "lib/panic.h"
#include "mm/mm.h"
#include "mm/uvm.h"
#include "proc/proc.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "uapi/errno.h"
#include "x86/smp.h"
#include "x86/x86.h"

#define USER_HZ 100 // clock ticks in /proc (sysconf(_SC_CLK_TCK))
_Static_assert(TIMER_HZ == USER_HZ, "tick counts are reported as they are");

static bool pb_grow(struct pbuf *b, size_t need)
{
    if (b->nomem)
        return false;
    if (b->len + need <= b->cap)
        return true;
    size_t cap = MAX(b->cap * 2, b->len + need + 256);
    char *n = kmalloc(cap);
    if (!n) {
        b->nomem = true;
        return false;
    }
    if (b->len)
        memcpy(n, b->buf, b->len);
    kfree(b->buf);
    b->buf = n;
    b->cap = cap;
    return true;
}

void pb_bytes(struct pbuf *b, const void *p, size_t n)
{
    if (pb_grow(b, n)) {
        memcpy(b->buf + b->len, p, n);
        b->len += n;
    }
}

void pb_printf(struct pbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char line[256]; // every line /proc prints fits
    int n = kvsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pb_bytes(b, line, MIN((size_t)n, sizeof line - 1));
}

// ---- machine-wide files ------------------------------------------------------------

static bool cpu_present(int c) { return READ_ONCE(percpu_offset[c]) != 0; }

static void cpu_brand(char out[49])
{
    uint32_t r[12];
    for (int i = 0; i < 3; i++)
        cpuid(0x80000002 + i, 0, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
    memcpy(out, r, 48);
    out[48] = 0;
    char *s = out;
    while (*s == ' ')
        s++;
    memmove(out, s, strlen(s) + 1);
}

// A few CPUID feature bits under their Linux names (leaf 1 edx, ecx; 7 ebx).
static const struct {
    uint8_t reg, bit;
    const char *name;
} cpu_flags[] = {
    {0, 0, "fpu"},     {0, 4, "tsc"},       {0, 5, "msr"},       {0, 6, "pae"},
    {0, 9, "apic"},    {0, 15, "cmov"},     {0, 19, "clflush"},  {0, 23, "mmx"},
    {0, 24, "fxsr"},   {0, 25, "sse"},      {0, 26, "sse2"},     {1, 0, "pni"},
    {1, 9, "ssse3"},   {1, 13, "cx16"},     {1, 19, "sse4_1"},   {1, 20, "sse4_2"},
    {1, 21, "x2apic"}, {1, 23, "popcnt"},   {1, 25, "aes"},      {1, 26, "xsave"},
    {1, 28, "avx"},    {1, 30, "rdrand"},   {2, 0, "fsgsbase"},  {2, 3, "bmi1"},
    {2, 5, "avx2"},    {2, 7, "smep"},      {2, 8, "bmi2"},      {2, 9, "erms"},
    {2, 18, "rdseed"}, {2, 20, "smap"},
};

static void cpu_flag_line(struct pbuf *b)
{
    uint32_t a, bx, c, d, r[3];
    cpuid(1, 0, &a, &bx, &c, &d);
    r[0] = d, r[1] = c;
    cpuid(7, 0, &a, &r[2], &c, &d);
    pb_printf(b, "flags\t\t:");
    for (size_t i = 0; i < ARRAY_SIZE(cpu_flags); i++)
        if (r[cpu_flags[i].reg] >> cpu_flags[i].bit & 1)
            pb_printf(b, " %s", cpu_flags[i].name);
    pb_printf(b, "\n");
}

static void text_cpuinfo(struct pbuf *b)
{
    uint32_t a, bx, c, d, vendor[4] = {0};
    cpuid(0, 0, &a, &vendor[0], &vendor[2], &vendor[1]);
    cpuid(1, 0, &a, &bx, &c, &d);
    uint32_t family = (a >> 8 & 0xf) + ((a >> 8 & 0xf) == 0xf ? (a >> 20 & 0xff) : 0);
    uint32_t model = (a >> 4 & 0xf) | ((a >> 8 & 0xf) >= 6 ? (a >> 16 & 0xf) << 4 : 0);
    char brand[49];
    cpu_brand(brand);
    uint64_t khz = tsc_hz() / 1000;
    for (int cpu = 0; cpu < NCPU_MAX; cpu++) {
        if (!cpu_present(cpu))
            continue;
        pb_printf(b, "processor\t: %d\nvendor_id\t: %s\ncpu family\t: %u\nmodel\t\t: %u\n",
                  cpu, (char *)vendor, family, model);
        pb_printf(b, "model name\t: %s\nstepping\t: %u\ncpu MHz\t\t: %lu.%03lu\n", brand,
                  a & 0xf, khz / 1000, khz % 1000);
        pb_printf(b, "physical id\t: 0\nsiblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\n",
                  ncpu, cpu, ncpu);
        pb_printf(b, "apicid\t\t: %u\nfpu\t\t: yes\nwp\t\t: yes\n", cpu_apicid[cpu]);
        cpu_flag_line(b);
        pb_printf(b, "bogomips\t: %lu.%02lu\nclflush size\t: 64\ncache_alignment\t: 64\n\n",
                  khz / 500, khz / 5 % 100);
    }
}

static void meminfo_line(struct pbuf *b, const char *name, uint64_t kb)
{
    pb_printf(b, "%s:%*lu kB\n", name, (int)(23 - strlen(name)), kb);
}

// Free pages are counted exactly (every CPU's page cache visited), at read time.
static void text_meminfo(struct pbuf *b)
{
    uint64_t total = page_count_total() * (PGSIZE / 1024);
    uint64_t free = page_count_free() * (PGSIZE / 1024);
    meminfo_line(b, "MemTotal", total);
    meminfo_line(b, "MemFree", free);
    meminfo_line(b, "MemAvailable", free);
    meminfo_line(b, "Buffers", 0);
    meminfo_line(b, "Cached", 0); // ScaleFS's file pages count as used: RAM is their home
    meminfo_line(b, "SwapCached", 0);
    meminfo_line(b, "Shmem", 0);
    meminfo_line(b, "SReclaimable", 0);
    meminfo_line(b, "SwapTotal", 0);
    meminfo_line(b, "SwapFree", 0);
}

static uint64_t idle_ticks(void)
{
    uint64_t n = 0, t[3];
    for (int c = 0; c < NCPU_MAX; c++)
        if (cpu_present(c)) {
            sched_cpu_ticks(c, t);
            n += t[2];
        }
    return n;
}

static void text_uptime(struct pbuf *b)
{
    uint64_t cs = nsec_now() / 10000000, idle = idle_ticks() * 100 / TIMER_HZ;
    pb_printf(b, "%lu.%02lu %lu.%02lu\n", cs / 100, cs % 100, idle / 100, idle % 100);
}

struct threadcount {
    int threads;
    int newest_pid;
    uint64_t newest;
};

static void count_threads(struct proc *p, void *arg)
{
    struct threadcount *tc = arg;
    tc->threads += READ_ONCE(p->nthreads);
    if (p->start_nsec >= tc->newest) {
        tc->newest = p->start_nsec;
        tc->newest_pid = p->pid;
    }
}

// "1 5 15-minute averages, running/all threads, the newest process's pid"
// (Linux's last field is the last pid handed out; ours come from per-CPU
// ranges, so the newest process stands in for it).
static void text_loadavg(struct pbuf *b)
{
    uint64_t avg[3];
    int running;
    sched_loadavg(avg, &running);
    struct threadcount tc = {0};
    epoch_enter();
    pid_for_each(count_threads, &tc);
    epoch_exit();
    for (int i = 0; i < 3; i++) {
        uint64_t h = (avg[i] * 100 + (1 << (SCHED_LOAD_SHIFT - 1))) >> SCHED_LOAD_SHIFT;
        pb_printf(b, "%lu.%02lu ", h / 100, h % 100);
    }
    // A thread that has left its process (off the thread counts) may still be
    // running its last instructions on its CPU: never more running than exist.
    pb_printf(b, "%d/%d %d\n", MIN(running, tc.threads), tc.threads, tc.newest_pid);
}

static void text_mounts(struct pbuf *b)
{
    pb_printf(b, "scalefs / scalefs rw 0 0\nproc /proc proc rw,nosuid,nodev,noexec 0 0\n");
}

static void stat_cpu_line(struct pbuf *b, const char *name, const uint64_t t[3])
{
    pb_printf(b, "%s %lu 0 %lu %lu 0 0 0 0 0 0\n", name, t[0], t[1], t[2]);
}

// /proc/stat: CPU time by mode (user nice system idle iowait irq softirq steal
// guest guest_nice), context switches, boot time, threads running.
static void text_stat(struct pbuf *b)
{
    uint64_t sum[3] = {0}, t[3], ctxt = 0;
    for (int c = 0; c < NCPU_MAX; c++)
        if (cpu_present(c)) {
            sched_cpu_ticks(c, t);
            for (int i = 0; i < 3; i++)
                sum[i] += t[i];
            ctxt += sched_switches(c);
        }
    stat_cpu_line(b, "cpu ", sum);
    for (int c = 0; c < NCPU_MAX; c++)
        if (cpu_present(c)) {
            char name[8];
            ksnprintf(name, sizeof name, "cpu%d", c);
            sched_cpu_ticks(c, t);
            stat_cpu_line(b, name, t);
        }
    uint64_t avg[3];
    int running;
    sched_loadavg(avg, &running);
    uint64_t btime = (realtime_nsec() - nsec_now()) / 1000000000;
    pb_printf(b, "intr 0\nctxt %lu\nbtime %lu\nprocs_running %d\nprocs_blocked 0\n", ctxt,
              btime, running);
}

// ---- a process's files ------------------------------------------------------------------

// p's address space, held (vmspace_put it), or NULL: a zombie has none. In an
// epoch read section: exec and exit let go of a space only after p->vm names
// another (or NULL), and the struct outlives the section (vmspace_tryhold), so
// the space read here is p's, or one about to be freed that refuses the hold.
static struct vmspace *proc_vm(struct proc *p)
{
    struct vmspace *vs = READ_ONCE(p->vm);
    return vs && vmspace_tryhold(vs) ? vs : NULL;
}

struct vmspace *procfs_vm(int pid)
{
    epoch_enter();
    struct proc *p = pid > 0 ? pid_lookup(pid) : NULL;
    struct vmspace *vs = p ? proc_vm(p) : NULL;
    epoch_exit();
    return vs;
}

// A process's memory in pages, measured at read time: the mapped regions
// walked in its radix tree, the resident count summed over the CPUs that
// used the space (uvm_resident), as Linux's statm and status report them.
struct vmsize {
    bool has;                    // false: no address space (a zombie)
    uint64_t size, rss, data, stack, text;
    uintptr_t stack_lo;          // the stack's region holds this page
};

static void count_region(const struct uvm_region *r, void *arg)
{
    struct vmsize *m = arg;
    uint64_t pages = (r->end - r->start) / PGSIZE;
    m->size += pages;
    if (m->stack_lo && r->start <= m->stack_lo && m->stack_lo < r->end && !r->ino)
        m->stack += pages;
    else if ((r->prot & VM_WRITE) && !r->shared)
        m->data += pages;
    if (r->image && (r->prot & VM_EXEC))
        m->text += pages;
}

static void measure(struct vmspace *vs, struct vmsize *m)
{
    *m = (struct vmsize){.has = true, .stack_lo = READ_ONCE(vs->stack) & ~1UL};
    uvm_regions(vs, count_region, m);
    m->rss = uvm_resident(vs);
}

// What the files of one process show, copied inside an epoch section.
struct psnap {
    int pid, pgid, sid, tid;
    struct proc_info info;
    char name[16];
    uint64_t start_ticks, rlim_nofile;
    uint64_t sigpending, sigignore, sigcatch;
    int exit_signal;
    char cmdline[PROC_CMDLINE_MAX];
    uint16_t cmdline_len;
    struct vmspace *vs; // held, or NULL
    struct vmsize mem;
    uintptr_t trace[PROC_TRACE_MAX]; // a thread's (task/TID/stack)
    int ntrace;
};

// One thread's view (task/TID): its own id, state, times and name.
static bool snapshot_thread(struct proc *p, int tid, struct psnap *s)
{
    struct proc_thread_info ti;
    if (!proc_thread_info(p, tid, &ti))
        return false;
    s->tid = tid;
    s->info.state = ti.state;
    s->info.utime = ti.utime;
    s->info.stime = ti.stime;
    memcpy(s->name, ti.name, sizeof s->name);
    memcpy(s->trace, ti.trace, sizeof s->trace);
    s->ntrace = ti.ntrace;
    return true;
}

// Where the thread waits in the kernel, innermost first, in Linux's format
// (which shows no address either): nothing while it runs.
static void text_pid_stack(struct pbuf *b, const struct psnap *s)
{
    for (int i = 0; i < s->ntrace; i++) {
        uintptr_t off;
        const char *name = symbol_lookup(s->trace[i], &off);
        if (name)
            pb_printf(b, "[<0>] %s+0x%lx\n", name, off);
        else
            pb_printf(b, "[<0>] 0x%lx\n", s->trace[i]);
    }
}

static int snapshot(int pid, int tid, struct psnap *s)
{
    epoch_enter();
    struct proc *p = pid_lookup(pid);
    if (!p) {
        epoch_exit();
        return -ESRCH;
    }
    s->pid = s->tid = pid;
    s->pgid = READ_ONCE(p->pgid);
    s->sid = READ_ONCE(p->sid);
    proc_info(p, &s->info);
    memcpy(s->name, p->name, sizeof s->name);
    s->name[sizeof s->name - 1] = 0;
    if (tid && !snapshot_thread(p, tid, s)) {
        epoch_exit();
        return -ESRCH;
    }
    s->start_ticks = p->start_nsec / (1000000000 / USER_HZ);
    s->rlim_nofile = READ_ONCE(p->rlim[RLIMIT_NOFILE].cur);
    s->sigpending = READ_ONCE(p->sigpending);
    struct k_sigaction act[NSIG];
    signal_copy_actions(p, act);
    s->sigignore = s->sigcatch = 0;
    for (int i = 0; i < NSIG; i++) { // signal i + 1 is bit i, as in Linux
        if (act[i].handler == (uint64_t)SIG_IGN)
            s->sigignore |= 1ULL << i;
        else if (act[i].handler != (uint64_t)SIG_DFL)
            s->sigcatch |= 1ULL << i;
    }
    s->exit_signal = p->exit_signal;
    s->cmdline_len = MIN(READ_ONCE(p->cmdline_len), PROC_CMDLINE_MAX);
    memcpy(s->cmdline, p->cmdline, s->cmdline_len);
    s->vs = proc_vm(p);
    epoch_exit();
    s->mem = (struct vmsize){0};
    if (s->vs)
        measure(s->vs, &s->mem);
    return 0;
}

// proc(5)'s 52 fields (pid, comm and 50 more); those we do not keep are 0 (Linux too shows 0 for
// several of them to other users).
static void text_pid_stat(struct pbuf *b, const struct psnap *s)
{
    pb_printf(b, "%d (%s) %c %d %d %d 0 -1 4194304 0 0 0 0 %lu %lu 0 0 20 0 %d 0 %lu %lu %lu ",
              s->tid, s->name, s->info.state, s->info.ppid, s->pgid, s->sid, s->info.utime,
              s->info.stime, s->info.nthreads, s->start_ticks, s->mem.size * PGSIZE, s->mem.rss);
    pb_printf(b, "18446744073709551615 0 0 0 0 0 %lu 0 %lu %lu 0 0 0 %d 0 0 0 0 0 0 0 0 0 0 0 0 "
                 "0 0\n",
              s->sigpending, s->sigignore, s->sigcatch, s->exit_signal);
}

static const char *state_name(char st)
{
    switch (st) {
    case 'R': return "R (running)";
    case 'T': return "T (stopped)";
    case 'Z': return "Z (zombie)";
    default: return "S (sleeping)";
    }
}

static void vm_line(struct pbuf *b, const char *name, uint64_t pages)
{
    pb_printf(b, "%s:\t%8lu kB\n", name, pages * (PGSIZE / 1024));
}

static void text_pid_status(struct pbuf *b, const struct psnap *s)
{
    pb_printf(b, "Name:\t%s\nState:\t%s\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\n", s->name,
              state_name(s->info.state), s->pid, s->tid, s->info.ppid);
    pb_printf(b, "TracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t%lu\n",
              MIN(s->rlim_nofile, (uint64_t)FD_MAX));
    pb_printf(b, "NSpgid:\t%d\nNSsid:\t%d\n", s->pgid, s->sid);
    if (s->mem.has) { // Linux too leaves them out for a zombie
        vm_line(b, "VmSize", s->mem.size);
        vm_line(b, "VmRSS", s->mem.rss);
        vm_line(b, "VmData", s->mem.data);
        vm_line(b, "VmStk", s->mem.stack);
        vm_line(b, "VmExe", s->mem.text);
    }
    pb_printf(b, "Threads:\t%d\nSigPnd:\t%016lx\nShdPnd:\t%016lx\n", s->info.nthreads, 0UL,
              s->sigpending);
    pb_printf(b, "SigIgn:\t%016lx\nSigCgt:\t%016lx\n", s->sigignore, s->sigcatch);
}

// statm: size resident shared text lib data dt, in pages (shared: not
// kept, 0; lib and dt are 0 on Linux too).
static void text_pid_statm(struct pbuf *b, const struct psnap *s)
{
    pb_printf(b, "%lu %lu 0 %lu 0 %lu 0\n", s->mem.size, s->mem.rss, s->mem.text,
              s->mem.data + s->mem.stack);
}

struct maps_ctx {
    struct pbuf *b;
    struct vmspace *vs;
};

// Linux's line: start-end perms offset dev inode, then from column 73 the
// path: the executable's for its own pages, [heap] and [stack]. Other files'
// paths are not known (ScaleFS keeps no name with a file): their inode shows.
static void maps_line(const struct uvm_region *r, void *arg)
{
    struct maps_ctx *c = arg;
    struct vmspace *vs = c->vs;
    const char *name = NULL;
    uintptr_t stack = READ_ONCE(vs->stack) & ~1UL;
    if (r->image)
        name = vs->exe;
    else if (!r->ino && stack && r->start <= stack && stack < r->end)
        name = "[stack]";
    else if (!r->ino && r->start < vs->brk && r->end > vs->brk_start)
        name = "[heap]";
    char line[128];
    ksnprintf(line, sizeof line, "%08lx-%08lx %c%c%c%c %08lx %02x:%02x %lu", r->start,
                      r->end, r->prot & VM_READ ? 'r' : '-', r->prot & VM_WRITE ? 'w' : '-',
                      r->prot & VM_EXEC ? 'x' : '-', r->shared ? 's' : 'p', r->offset,
                      r->ino ? DEV_MAJOR(FS_DEV) : 0, r->ino ? DEV_MINOR(FS_DEV) : 0, r->ino);
    if (name) {
        pb_printf(c->b, "%-72s ", line);
        pb_bytes(c->b, name, strlen(name));
        pb_bytes(c->b, "\n", 1);
    } else {
        pb_printf(c->b, "%s\n", line);
    }
}

static int text_pid(enum procfs_text which, int pid, int tid, struct pbuf *b)
{
    struct psnap *s = kmalloc(sizeof *s);
    if (!s)
        return -ENOMEM;
    if (which == PT_PID_STACK && !tid)
        tid = pid; // /proc/PID/stack: the first thread's
    s->ntrace = 0;
    int err = snapshot(pid, tid, s);
    if (!err) {
        switch (which) {
        case PT_PID_STAT: text_pid_stat(b, s); break;
        case PT_PID_STATUS: text_pid_status(b, s); break;
        case PT_PID_STATM: text_pid_statm(b, s); break;
        case PT_PID_MAPS:
            if (s->vs)
                uvm_regions(s->vs, maps_line, &(struct maps_ctx){b, s->vs});
            break;
        case PT_PID_CMDLINE: pb_bytes(b, s->cmdline, s->cmdline_len); break;
        case PT_PID_STACK: text_pid_stack(b, s); break;
        default: pb_printf(b, "%s\n", s->name); break;
        }
        if (s->vs)
            vmspace_put(s->vs);
    }
    kfree(s);
    return err;
}

int procfs_text(enum procfs_text which, int pid, int tid, struct pbuf *b)
{
    switch (which) {
    case PT_CPUINFO: text_cpuinfo(b); break;
    case PT_MEMINFO: text_meminfo(b); break;
    case PT_UPTIME: text_uptime(b); break;
    case PT_LOADAVG: text_loadavg(b); break;
    case PT_MOUNTS: text_mounts(b); break;
    case PT_STAT: text_stat(b); break;
    case PT_PAGESITES: pagesites_text(b); break;
    default: {
        int err = text_pid(which, pid, tid, b);
        if (err)
            return err;
    }
    }
    return b->nomem ? -ENOMEM : 0;
}

int procfs_fd_info(int pid, int fd, uint32_t mask, struct fdinfo *out)
{
    int err = -ENOENT;
    *out = (struct fdinfo){0};
    epoch_enter();
    struct proc *p = pid > 0 ? pid_lookup(pid) : NULL;
    struct fdtable *t = p ? proc_fdtable(p) : NULL;
    struct file *f = t ? fd_peek(t, fd) : NULL;
    if (f && f->ip) { // f holds ip until a grace period after f goes
        fs_iget(out->ip = f->ip);
        err = 0;
    } else if (f) {
        out->tty = f->ops == &tty_ops;
        err = file_stat(f, mask, &out->st);
    }
    epoch_exit();
    return err;
}

void procfs_fd_target(const struct fdinfo *fi, struct pbuf *b)
{
    if (!fi->ip) {
        if (fi->tty)
            pb_printf(b, "/dev/console");
        else
            pb_printf(b, "%s:[%lu]", S_ISFIFO(fi->st.mode) ? "pipe" : "anon_inode", fi->st.ino);
        return;
    }
    struct inode *ip = fi->ip;
    uint32_t mode = fs_mode(ip);
    if (S_ISCHR(mode) && dev_name(fs_rdev(ip))) {
        pb_printf(b, "%s", dev_name(fs_rdev(ip)));
    } else if (S_ISDIR(mode)) {
        char *buf = page_alloc();
        long err;
        char *p = buf ? path_of_dir(ip, buf, &err) : NULL;
        if (p)
            pb_bytes(b, p, strlen(p));
        else
            pb_printf(b, "scalefs:[%lu]", fs_ino(ip));
        if (buf)
            page_free(buf);
    } else {
        pb_printf(b, "scalefs:[%lu]", fs_ino(ip));
    }
}
