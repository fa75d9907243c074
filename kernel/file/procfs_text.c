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
    pb_printf(b, "%d/%d %d\n", running, tc.threads, tc.newest_pid);
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

// What the files of one process show, copied inside an epoch section.
struct psnap {
    int pid, pgid, sid;
    struct proc_info info;
    char name[16];
    uint64_t start_ticks, rss_pages, rlim_nofile;
    uint64_t sigpending, sigignore, sigcatch;
    int exit_signal;
    bool self;
    char cmdline[PROC_CMDLINE_MAX];
    uint16_t cmdline_len;
};

static int snapshot(int pid, struct psnap *s)
{
    epoch_enter();
    struct proc *p = pid_lookup(pid);
    if (!p) {
        epoch_exit();
        return -ESRCH;
    }
    s->pid = pid;
    s->pgid = READ_ONCE(p->pgid);
    s->sid = READ_ONCE(p->sid);
    proc_info(p, &s->info);
    memcpy(s->name, p->name, sizeof s->name);
    s->name[sizeof s->name - 1] = 0;
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
    // Another process's address space may go away under us (exec frees the
    // old one at once): only the caller's own is measured.
    s->self = p == proc_current();
    s->rss_pages = s->self && p->vm ? uvm_resident(p->vm) : 0;
    s->cmdline_len = MIN(READ_ONCE(p->cmdline_len), PROC_CMDLINE_MAX);
    memcpy(s->cmdline, p->cmdline, s->cmdline_len);
    epoch_exit();
    return 0;
}

// proc(5)'s 52 fields (pid, comm and 50 more); those we do not keep are 0 (Linux too shows 0 for
// several of them to other users).
static void text_pid_stat(struct pbuf *b, const struct psnap *s)
{
    pb_printf(b, "%d (%s) %c %d %d %d 0 -1 4194304 0 0 0 0 %lu %lu 0 0 20 0 %d 0 %lu 0 %lu ",
              s->pid, s->name, s->info.state, s->info.ppid, s->pgid, s->sid, s->info.utime,
              s->info.stime, s->info.nthreads, s->start_ticks, s->rss_pages);
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

static void text_pid_status(struct pbuf *b, const struct psnap *s)
{
    pb_printf(b, "Name:\t%s\nState:\t%s\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\n", s->name,
              state_name(s->info.state), s->pid, s->pid, s->info.ppid);
    pb_printf(b, "TracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t%lu\n",
              MIN(s->rlim_nofile, (uint64_t)FD_MAX));
    pb_printf(b, "NSpgid:\t%d\nNSsid:\t%d\n", s->pgid, s->sid);
    if (s->self)
        pb_printf(b, "VmRSS:\t%8lu kB\n", s->rss_pages * (PGSIZE / 1024));
    pb_printf(b, "Threads:\t%d\nSigPnd:\t%016lx\nShdPnd:\t%016lx\n", s->info.nthreads, 0UL,
              s->sigpending);
    pb_printf(b, "SigIgn:\t%016lx\nSigCgt:\t%016lx\n", s->sigignore, s->sigcatch);
}

static int text_pid(enum procfs_text which, int pid, struct pbuf *b)
{
    struct psnap *s = kmalloc(sizeof *s);
    if (!s)
        return -ENOMEM;
    int err = snapshot(pid, s);
    if (!err) {
        switch (which) {
        case PT_PID_STAT: text_pid_stat(b, s); break;
        case PT_PID_STATUS: text_pid_status(b, s); break;
        case PT_PID_CMDLINE: pb_bytes(b, s->cmdline, s->cmdline_len); break;
        default: pb_printf(b, "%s\n", s->name); break;
        }
    }
    kfree(s);
    return err;
}

int procfs_text(enum procfs_text which, int pid, struct pbuf *b)
{
    switch (which) {
    case PT_CPUINFO: text_cpuinfo(b); break;
    case PT_MEMINFO: text_meminfo(b); break;
    case PT_UPTIME: text_uptime(b); break;
    case PT_LOADAVG: text_loadavg(b); break;
    case PT_MOUNTS: text_mounts(b); break;
    case PT_STAT: text_stat(b); break;
    default: {
        int err = text_pid(which, pid, b);
        if (err)
            return err;
    }
    }
    return b->nomem ? -ENOMEM : 0;
}

void procfs_fd_target(struct file *f, struct pbuf *b)
{
    struct fs_stat st;
    if (!f->ip) {
        if (f->ops == &tty_ops) {
            pb_printf(b, "/dev/console");
            return;
        }
        file_stat(f, STATX_TYPE | STATX_INO, &st);
        pb_printf(b, "%s:[%lu]", S_ISFIFO(st.mode) ? "pipe" : "anon_inode", st.ino);
        return;
    }
    uint32_t mode = fs_mode(f->ip);
    if (S_ISCHR(mode) && dev_name(fs_rdev(f->ip))) {
        pb_printf(b, "%s", dev_name(fs_rdev(f->ip)));
    } else if (S_ISDIR(mode)) {
        char *buf = page_alloc();
        long err;
        char *p = buf ? path_of_dir(f->ip, buf, &err) : NULL;
        if (p)
            pb_bytes(b, p, strlen(p));
        else
            pb_printf(b, "scalefs:[%lu]", fs_ino(f->ip));
        if (buf)
            page_free(buf);
    } else {
        pb_printf(b, "scalefs:[%lu]", fs_ino(f->ip));
    }
}
