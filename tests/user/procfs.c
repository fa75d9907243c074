// /proc as Linux tools read it: /proc/self and /proc/PID/{stat, status,
// statm, maps, cmdline, exe, fd/, task/}, another process's fds and memory,
// ".." inside /proc, /proc/meminfo, uptime, loadavg, cpuinfo, mounts, and
// sysinfo(2), each checked against what the process knows of itself (getpid,
// getppid, its own fds, argv), and /proc/sys/vm/drop_caches. Only what Linux
// and ours both give is checked.
#include "suite.h"
#include <dirent.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "../../kernel/uapi/ext.h"

#include "../../user/slurp.h" // slurp

// "Key:\tvalue" of a status file: the value as a number, or -1.
static long status_field(const char *buf, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\n%s:", key);
    const char *p = strncmp(buf, pat + 1, strlen(pat + 1)) == 0 ? buf - 1 : strstr(buf, pat);
    return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

struct stat_fields {
    int pid, ppid, pgrp, session, threads;
    char comm[64], state;
    unsigned long long starttime;
    int nfields; // after comm
};

static int parse_stat(const char *buf, struct stat_fields *s)
{
    const char *l = strchr(buf, '('), *r = strrchr(buf, ')');
    if (!l || !r || sscanf(buf, "%d", &s->pid) != 1)
        return -1;
    snprintf(s->comm, sizeof s->comm, "%.*s", (int)(r - l - 1), l + 1);
    s->nfields = 0;
    for (const char *p = r + 1; *p; p++)
        if (*p == ' ' && p[1] && p[1] != '\n')
            s->nfields++;
    long dummy;
    return sscanf(r + 2, "%c %d %d %d %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %d %ld %llu",
                  &s->state, &s->ppid, &s->pgrp, &s->session, &dummy, &dummy, &dummy, &dummy,
                  &dummy, &dummy, &dummy, &dummy, &dummy, &dummy, &dummy, &dummy, &dummy,
                  &s->threads, &dummy, &s->starttime) == 20 ? 0 : -1;
}

static void test_self_stat(void)
{
    char buf[1024];
    struct stat_fields s;
    check(slurp("/proc/self/stat", buf, sizeof buf) > 0 && parse_stat(buf, &s) == 0,
          "/proc/self/stat reads and parses");
    check(s.pid == getpid() && s.ppid == getppid(), "stat: pid and ppid are getpid(), getppid()");
    check(s.pgrp == getpgrp() && s.session == getsid(0), "stat: pgrp and session");
    check(s.state == 'R' && s.threads == 1, "stat: state R (we are reading), 1 thread");
    check(strcmp(s.comm, "test-procfs") == 0, "stat: comm is the program's name");
    check(s.nfields == 50, "stat: proc(5)'s 52 fields (Linux 6.1)");
    // Reading again from the start gives the same process.
    int fd = open("/proc/self/stat", O_RDONLY);
    char a[16] = {0}, b[16] = {0};
    long n1 = read(fd, a, 8);
    off_t off = lseek(fd, 0, SEEK_SET);
    long n2 = read(fd, b, 8);
    long n3 = pread(fd, b + 8, 4, 0);
    close(fd);
    check(n1 == 8 && off == 0 && n2 == 8 && n3 == 4 && memcmp(a, b, 8) == 0 &&
              memcmp(a, b + 8, 4) == 0,
          "stat: lseek and pread reread the same text");
}

static void test_self_status(void)
{
    char buf[4096];
    check(slurp("/proc/self/status", buf, sizeof buf) > 0, "/proc/self/status reads");
    check(strncmp(buf, "Name:\ttest-procfs\n", 18) == 0, "status: Name first");
    check(status_field(buf, "Pid") == getpid() && status_field(buf, "Tgid") == getpid(),
          "status: Pid and Tgid");
    check(status_field(buf, "PPid") == getppid(), "status: PPid");
    check(status_field(buf, "Threads") == 1, "status: Threads");
    check(strstr(buf, "\nState:\tR (running)\n") != NULL, "status: State");
    check(strstr(buf, "\nUid:\t") != NULL && strstr(buf, "\nGid:\t") != NULL, "status: Uid, Gid");
}

static void test_self_cmdline(int argc, char **argv)
{
    char buf[512], want[512];
    size_t len = 0;
    for (int i = 0; i < argc && len + strlen(argv[i]) + 1 <= 256; i++) {
        memcpy(want + len, argv[i], strlen(argv[i]) + 1);
        len += strlen(argv[i]) + 1;
    }
    long n = slurp("/proc/self/cmdline", buf, sizeof buf);
    check(n >= (long)len && memcmp(buf, want, len) == 0, "cmdline: argv, NUL-separated");
}

static void test_self_link(void)
{
    char buf[64], want[64];
    long n = readlink("/proc/self", buf, sizeof buf - 1);
    snprintf(want, sizeof want, "%d", (int)getpid());
    check(n == (long)strlen(want) && memcmp(buf, want, n) == 0, "/proc/self links to our pid");
    struct stat st;
    check(lstat("/proc/self", &st) == 0 && S_ISLNK(st.st_mode), "lstat /proc/self: a link");
    check(stat("/proc/self", &st) == 0 && S_ISDIR(st.st_mode), "stat /proc/self: a directory");
    CHECK_ERR(open("/proc/self/no-such-file", O_RDONLY), ENOENT, "a missing name: ENOENT");
    CHECK_ERR(open("/proc/999999999/stat", O_RDONLY), ENOENT, "a missing process: ENOENT");
    CHECK_ERR(open("/proc/self/stat", O_RDONLY | O_DIRECTORY), ENOTDIR, "a file with O_DIRECTORY: ENOTDIR");
}

// The fds /proc/self/fd lists (with the listing's own fd open) are exactly
// those fcntl finds open. Our libc may open some with O_ANYFD, in the calling
// CPU's partition far above the low fds: the scan reaches the highest listed.
#define FDS_SEEN 65536
static char listed[FDS_SEEN];

static void test_self_fd_dir(void)
{
    int pfd[2];
    if (pipe(pfd) != 0)
        return;
    int dfd = open(suite_dir, O_RDONLY | O_DIRECTORY);
    DIR *d = opendir("/proc/self/fd");
    check(d != NULL, "opendir /proc/self/fd");
    if (!d)
        return;
    memset(listed, 0, sizeof listed);
    int nlisted = 0, bad = 0, top = 1024;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        int fd = atoi(e->d_name);
        if (fd >= 0 && fd < FDS_SEEN) {
            listed[fd] = 1;
            top = fd + 1 > top ? fd + 1 : top;
        } else {
            bad++;
        }
        nlisted++;
    }
    int nopen = 0, mismatch = 0;
    for (int fd = 0; fd < top; fd++) {
        int open_ = fcntl(fd, F_GETFD) >= 0;
        nopen += open_;
        if (open_ != listed[fd] && mismatch++ == 0)
            printf("# fd %d: %s\n", fd, open_ ? "open, not listed" : "listed, not open");
    }
    closedir(d);
    check(!bad && !mismatch && nlisted == nopen && listed[pfd[0]] && listed[dfd],
          "fd/: lists exactly the open fds");
    if (bad || nlisted != nopen)
        printf("# %d listed (%d out of range), %d open below %d\n", nlisted, bad, nopen, top);

    char buf[256], path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", pfd[0]);
    long n = readlink(path, buf, sizeof buf - 1);
    check(n > 6 && strncmp(buf, "pipe:[", 6) == 0, "fd/N of a pipe reads pipe:[ino]");
    snprintf(path, sizeof path, "/proc/self/fd/%d", dfd);
    n = readlink(path, buf, sizeof buf - 1);
    check(n == (long)strlen(suite_dir) && memcmp(buf, suite_dir, n) == 0,
          "fd/N of a directory reads its path");
    struct stat a, b;
    check(stat(path, &a) == 0 && fstat(dfd, &b) == 0 && a.st_ino == b.st_ino,
          "stat fd/N follows to the open file");
    close(pfd[0]);
    snprintf(path, sizeof path, "/proc/self/fd/%d", pfd[0]);
    CHECK_ERR(readlink(path, buf, sizeof buf), ENOENT, "fd/N of a closed fd: ENOENT");
    close(pfd[1]);
    close(dfd);
}

static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_ino == y.st_ino && x.st_dev == y.st_dev;
}

// ".." inside /proc goes where the names say, as in any directory tree; out of
// /proc it reaches the rest of the file system.
static void test_dotdot(void)
{
    check(same_file("/proc/self/..", "/proc") && same_file("/proc/1/..", "/proc"),
          "/proc/self/.. and /proc/1/.. are /proc");
    check(same_file("/proc/self/fd/..", "/proc/self") && same_file("/proc/self/fd/../fd", "/proc/self/fd"),
          "/proc/self/fd/.. is /proc/self");
    check(same_file("/proc/..", "/") && same_file("/proc/self/../..", "/") &&
              same_file("/proc/self/../../tmp", "/tmp"),
          "/proc/.. and /proc/self/../.. are /");
    char buf[256];
    check(slurp("/proc/self/../self/./status", buf, sizeof buf) > 0 &&
              strncmp(buf, "Name:\ttest-procfs\n", 18) == 0,
          "open /proc/self/../self/./status");
    int d = open("/proc/self/fd", O_RDONLY | O_DIRECTORY);
    int f = openat(d, "../stat", O_RDONLY);
    struct stat st, root;
    check(f >= 0 && fstatat(d, "../../..", &st, 0) == 0 && stat("/", &root) == 0 &&
              st.st_ino == root.st_ino,
          "openat and fstatat with .. from a /proc directory");
    close(f);
    close(d);
    char cwd[64];
    check(chdir("/proc/self/..") == 0 && getcwd(cwd, sizeof cwd) && strcmp(cwd, "/proc") == 0 &&
              chdir("..") == 0 && getcwd(cwd, sizeof cwd) && strcmp(cwd, "/") == 0,
          "chdir /proc/self/.., then .. to /");
    chdir(suite_dir);
    int pfd[2];
    if (pipe(pfd) == 0) {
        char p1[64], p2[64];
        struct stat x;
        snprintf(p1, sizeof p1, "/proc/self/fd/%d/..", pfd[0]);
        snprintf(p2, sizeof p2, "/proc/self/fd/%d/../..", pfd[0]);
        check(stat(p1, &x) == -1 && errno == ENOTDIR && stat(p2, &x) == -1 && errno == ENOTDIR,
              "fd/N/.. of a pipe: ENOTDIR (.. goes below the link, not back over it)");
        close(pfd[0]);
        close(pfd[1]);
    }
    // EACCES on ours (0555 directories), ENOENT on Linux for root.
    check(mkdir("/proc/self/../x", 0755) == -1 && (errno == EACCES || errno == ENOENT),
          "mkdir /proc/self/../x fails");
    check(mkdir("/proc/self/../../tmp/procfs-dotdot", 0755) == 0 &&
              rmdir("/tmp/procfs-dotdot") == 0,
          "mkdir through /proc/self/../.. makes it in /tmp");
}

static int listed_in_proc(int pid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d)))
        found |= atoi(e->d_name) == pid;
    closedir(d);
    return found;
}

// A child: listed, its stat names us as parent, a zombie until reaped, then gone.
static void test_child(void)
{
    int go[2];
    if (pipe(go) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(go[1]);
        _exit(read(go[0], &c, 1) == 1 ? 0 : 1);
    }
    close(go[0]);
    char path[64], buf[1024];
    struct stat_fields s = {0};
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    check(listed_in_proc(pid) == 1 && listed_in_proc(getpid()) == 1, "/proc lists us and our child");
    check(slurp(path, buf, sizeof buf) > 0 && parse_stat(buf, &s) == 0 && s.pid == pid &&
              s.ppid == getpid(),
          "/proc/PID/stat of a child names us as its parent");
    write(go[1], "x", 1);
    close(go[1]);
    // Wait for it to exit without reaping it (WNOWAIT): then it is a zombie.
    siginfo_t si;
    int w = waitid(P_PID, pid, &si, WEXITED | WNOWAIT);
    check(w == 0 && slurp(path, buf, sizeof buf) > 0 && parse_stat(buf, &s) == 0 && s.state == 'Z',
          "an exited child not yet reaped is Z");
    waitpid(pid, NULL, 0);
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d", (int)pid);
    CHECK_ERR(stat(path, &st), ENOENT, "a reaped child is gone from /proc");
    check(listed_in_proc(pid) == 0, "... and from its listing");
}

// The fds of another process (a child that holds a pipe's read end): listed
// and readable as links, as our own are.
static void test_other_fds(void)
{
    int go[2];
    if (pipe(go) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(go[1]);
        _exit(read(go[0], &c, 1) == 1 ? 0 : 1);
    }
    char path[64], dir[64], mine[128], theirs[128];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    snprintf(path, sizeof path, "/proc/self/fd/%d", go[0]);
    long n1 = readlink(path, mine, sizeof mine - 1);
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, go[0]);
    long n2 = readlink(path, theirs, sizeof theirs - 1);
    check(n1 > 0 && n1 == n2 && memcmp(mine, theirs, n1) == 0,
          "another process's fd/N reads as ours for the same pipe");
    struct stat a, b;
    check(stat(path, &a) == 0 && fstat(go[0], &b) == 0 && a.st_ino == b.st_ino && S_ISFIFO(a.st_mode),
          "stat of another process's fd/N follows to its pipe");
    DIR *d = opendir(dir);
    int found = 0, n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        n++;
        found |= atoi(e->d_name) == go[0];
    }
    if (d)
        closedir(d);
    check(d && found && n >= 1, "another process's fd/ lists its fds");
    // Its memory: VmRSS and VmSize in status, vsize and rss in stat, statm.
    char buf[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    long size = -1, rss = -1;
    if (slurp(path, buf, sizeof buf) > 0) {
        const char *p = strstr(buf, "\nVmSize:"), *q = strstr(buf, "\nVmRSS:");
        size = p ? strtol(p + 8, NULL, 10) : -1;
        rss = q ? strtol(q + 7, NULL, 10) : -1;
    }
    check(size > 0 && rss > 0 && rss <= size, "another process's VmSize and VmRSS");
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    unsigned long m[7] = {0};
    check(slurp(path, buf, sizeof buf) > 0 &&
              sscanf(buf, "%lu %lu %lu %lu %lu %lu %lu", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5],
                     &m[6]) == 7 && m[0] > 0 && m[1] > 0 && m[1] <= m[0],
          "another process's statm: size >= resident > 0");
    write(go[1], "x", 1);
    close(go[0]);
    close(go[1]);
    siginfo_t si;
    waitid(P_PID, pid, &si, WEXITED | WNOWAIT);
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    CHECK_ERR(readlink(path, buf, sizeof buf), ENOENT, "a zombie's exe: ENOENT");
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    check(slurp(path, buf, sizeof buf) > 0 && !strstr(buf, "\nVmSize:"), "a zombie's status has no VmSize");
    waitpid(pid, NULL, 0);
}

// The permissions of the line of /proc/self/maps that covers [lo, hi): 0, or
// -1 if none does.
static int maps_perms(unsigned long lo, unsigned long hi, char perms[8])
{
    static char buf[65536];
    if (slurp("/proc/self/maps", buf, sizeof buf) <= 0)
        return -1;
    for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        unsigned long a, b;
        if (sscanf(l, "%lx-%lx %7s", &a, &b, perms) == 3 && a <= lo && hi <= b)
            return 0;
    }
    return -1;
}

struct vm_now {
    unsigned long size, resident, vsize, rss;
};

static int vm_now(struct vm_now *v)
{
    char buf[1024];
    if (slurp("/proc/self/statm", buf, sizeof buf) <= 0 ||
        sscanf(buf, "%lu %lu", &v->size, &v->resident) != 2)
        return -1;
    if (slurp("/proc/self/stat", buf, sizeof buf) <= 0)
        return -1;
    const char *r = strrchr(buf, ')');
    // Fields 23 and 24 (vsize in bytes, rss in pages); r + 2 is field 3.
    return r && sscanf(r + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
                             "%*d %*d %*u %lu %lu", &v->vsize, &v->rss) == 2 ? 0 : -1;
}

// Our own memory: a mapping of 256 pages adds 256 pages to the size, and to
// the resident set once touched; stat and statm agree.
static void test_self_memory(void)
{
    struct vm_now a, b, c;
    long pg = sysconf(_SC_PAGESIZE);
    // (stat is read after statm: the stack may have grown a page meanwhile.)
    check(vm_now(&a) == 0 && a.size > 0 && a.resident > 0 && a.resident <= a.size &&
              a.vsize / pg >= a.size && a.vsize / pg <= a.size + 16,
          "statm size and resident; stat vsize is statm's size in bytes");
    char *m = mmap(NULL, 256 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    check(m != MAP_FAILED && vm_now(&b) == 0 && b.size >= a.size + 256 && b.resident < a.resident + 256,
          "mmap of 256 pages: size grows by 256, resident does not");
    for (int i = 0; i < 256; i++)
        m[i * pg] = 1;
    // (Linux counts resident pages per thread and adds them up every 64
    // faults or so: allow for that lag.)
    check(vm_now(&c) == 0 && c.resident >= a.resident + 192 && c.rss >= a.rss + 192,
          "touching them makes them resident (statm and stat)");
    char perms[8];
    check(maps_perms((unsigned long)m, (unsigned long)m + 256 * pg, perms) == 0 &&
              strcmp(perms, "rw-p") == 0,
          "maps shows the mapping, rw-p");
    munmap(m, 256 * pg);
    check(maps_perms((unsigned long)m, (unsigned long)m + pg, perms) < 0,
          "... and not once unmapped");
}

// maps: each line start-end perms offset dev inode [path]; our code is
// executable, our stack is [stack].
static int check_maps(const char *path, unsigned long code_at, unsigned long stack_at,
                      const char *exe)
{
    static char buf[65536];
    int lines = 0, bad = 0, code = 0, stack = 0, exe_code = 0;
    if (slurp(path, buf, sizeof buf) <= 0)
        return -1;
    for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
        unsigned long lo, hi, off, ino;
        unsigned maj, min;
        char perms[8];
        int used = 0;
        lines++;
        if (sscanf(l, "%lx-%lx %7s %lx %x:%x %lu %n", &lo, &hi, perms, &off, &maj, &min, &ino,
                   &used) < 7 || lo >= hi || strlen(perms) != 4 || !strchr("-r", perms[0]) ||
            !strchr("-w", perms[1]) || !strchr("-x", perms[2]) || !strchr("ps", perms[3])) {
            bad++;
            continue;
        }
        const char *name = used ? l + used : "";
        code |= lo <= code_at && code_at < hi && perms[2] == 'x';
        stack |= lo <= stack_at && stack_at < hi && strcmp(name, "[stack]") == 0 &&
                 perms[0] == 'r' && perms[1] == 'w';
        exe_code |= exe && strcmp(name, exe) == 0 && perms[2] == 'x' && ino != 0;
    }
    return (lines > 2 && !bad) | code << 1 | stack << 2 | exe_code << 3;
}

static void test_maps(void)
{
    int local = 0;
    int r = check_maps("/proc/self/maps", (unsigned long)(void *)test_maps,
                       (unsigned long)&local, NULL);
    check(r >= 0 && (r & 1), "maps: every line is start-end perms offset dev inode [path]");
    check(r >= 0 && (r & 2), "maps: our code is executable");
    check(r >= 0 && (r & 4), "maps: our stack is [stack], rw");
}

// exe: a link to the executable, absolute; following it reaches the file.
// Seen in a shell started from /bin/sh (our suites themselves may be started
// from an image in the kernel, which has no path).
static void test_exe(void)
{
    int in[2];
    if (pipe(in) != 0)
        return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    char *argv[] = {"sh", "-c", "read x", NULL};
    pid_t pid;
    int err = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    if (err) {
        close(in[1]);
        check(0, "posix_spawn /bin/sh");
        return;
    }
    char link[64], exe[512], maps[64];
    snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
    long n = readlink(link, exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    struct stat a, b, c, l;
    check(n > 1 && exe[0] == '/' && stat(exe, &a) == 0 && stat(link, &b) == 0 &&
              stat("/bin/sh", &c) == 0 && a.st_ino == b.st_ino && b.st_ino == c.st_ino &&
              S_ISREG(b.st_mode),
          "exe links to the executable, by absolute path");
    check(lstat(link, &l) == 0 && S_ISLNK(l.st_mode), "lstat exe: a link");
    int fd = open(link, O_RDONLY);
    char elf[4] = {0};
    check(fd >= 0 && read(fd, elf, 4) == 4 && memcmp(elf, "\177ELF", 4) == 0,
          "open exe reads the ELF file");
    close(fd);
    snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
    // The shell may still be loading (its libraries, on Linux): look again
    // until it has settled, a few seconds at most.
    int r = -1;
    for (int i = 0; i < 300 && (r < 0 || !(r & 1) || !(r & 8)); i++) {
        if (i)
            usleep(10000);
        r = check_maps(maps, 0, 0, exe);
    }
    check(r >= 0 && (r & 1) && (r & 8), "maps: the executable's code under its path, with its inode");
    close(in[1]);
    waitpid(pid, NULL, 0);
}

static pthread_mutex_t task_lock = PTHREAD_MUTEX_INITIALIZER;
static int task_tid;

static void *task_thread(void *arg)
{
    (void)arg;
    task_tid = gettid();
    pthread_mutex_lock(&task_lock); // until the main thread has looked
    pthread_mutex_unlock(&task_lock);
    return NULL;
}

// task/: one directory per thread, each with stat and status of its own.
static void test_tasks(void)
{
    pthread_t th;
    pthread_mutex_lock(&task_lock);
    if (pthread_create(&th, NULL, task_thread, NULL) != 0) {
        pthread_mutex_unlock(&task_lock);
        check(0, "pthread_create");
        return;
    }
    while (!__atomic_load_n(&task_tid, __ATOMIC_ACQUIRE))
        sched_yield();
    DIR *d = opendir("/proc/self/task");
    int n = 0, main_seen = 0, thread_seen = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        n++;
        main_seen |= atoi(e->d_name) == getpid();
        thread_seen |= atoi(e->d_name) == task_tid;
    }
    if (d)
        closedir(d);
    check(n == 2 && main_seen && thread_seen, "task/ lists our two threads by tid");
    char path[96], buf[4096];
    struct stat_fields s;
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", task_tid);
    check(slurp(path, buf, sizeof buf) > 0 && parse_stat(buf, &s) == 0 && s.pid == task_tid &&
              s.ppid == getppid() && s.threads == 2,
          "task/TID/stat: the thread's id, the process's parent, 2 threads");
    snprintf(path, sizeof path, "/proc/self/task/%d/status", task_tid);
    check(slurp(path, buf, sizeof buf) > 0 && status_field(buf, "Pid") == task_tid &&
              status_field(buf, "Tgid") == getpid() && status_field(buf, "Threads") == 2,
          "task/TID/status: Pid is the tid, Tgid our pid");
    check(slurp("/proc/self/status", buf, sizeof buf) > 0 && status_field(buf, "Threads") == 2,
          "status: Threads 2");
    snprintf(path, sizeof path, "/proc/self/task/%d/..", task_tid);
    check(same_file(path, "/proc/self/task"), "task/TID/.. is task/");
    pthread_mutex_unlock(&task_lock);
    pthread_join(th, NULL);
    snprintf(path, sizeof path, "/proc/self/task/%d", task_tid);
    struct stat st;
    CHECK_ERR(stat(path, &st), ENOENT, "a thread that left is gone from task/");
}

static void test_meminfo(void)
{
    char buf[8192];
    check(slurp("/proc/meminfo", buf, sizeof buf) > 0, "/proc/meminfo reads");
    long total = status_field(buf, "MemTotal"), free_ = status_field(buf, "MemFree");
    long avail = status_field(buf, "MemAvailable");
    check(strncmp(buf, "MemTotal:", 9) == 0 && total > 0 && free_ > 0 && free_ <= total &&
              avail > 0 && avail <= total,
          "meminfo: MemTotal, MemFree, MemAvailable");
    check(status_field(buf, "Buffers") >= 0 && status_field(buf, "Cached") >= 0 &&
              status_field(buf, "SwapTotal") >= 0,
          "meminfo: Buffers, Cached, SwapTotal");
    // sysinfo counts the same RAM.
    struct {
        long uptime;
        unsigned long loads[3], totalram, freeram, sharedram, bufferram, totalswap, freeswap;
        unsigned short procs, pad;
        unsigned long totalhigh, freehigh;
        unsigned mem_unit;
        char reserved[4];
    } si;
    check(syscall(SYS_sysinfo, &si) == 0 && si.mem_unit > 0 &&
              si.totalram * si.mem_unit / 1024 == (unsigned long)total && si.procs > 0,
          "sysinfo: totalram is MemTotal");
}

static void test_uptime_loadavg(void)
{
    char buf[256];
    unsigned long up, upc, idle, idlec;
    check(slurp("/proc/uptime", buf, sizeof buf) > 0 &&
              sscanf(buf, "%lu.%2lu %lu.%2lu", &up, &upc, &idle, &idlec) == 4 && up * 100 + upc > 0,
          "uptime: two figures in seconds, with hundredths");
    char self[1024];
    struct stat_fields s;
    check(slurp("/proc/self/stat", self, sizeof self) > 0 && parse_stat(self, &s) == 0 &&
              s.starttime <= (up + 1) * 100,
          "stat: starttime (ticks after boot) before now");
    double l1, l5, l15;
    int running, total, last;
    check(slurp("/proc/loadavg", buf, sizeof buf) > 0 &&
              sscanf(buf, "%lf %lf %lf %d/%d %d", &l1, &l5, &l15, &running, &total, &last) == 6 &&
              running >= 1 && total >= running && l1 >= 0,
          "loadavg: averages, running/total, a pid");
}

static void test_cpuinfo_mounts(void)
{
    static char buf[1 << 20];
    long n = slurp("/proc/cpuinfo", buf, sizeof buf);
    int cpus = 0;
    for (char *p = buf; (p = strstr(p, "processor\t: ")); p++)
        cpus++;
    check(n > 0 && strncmp(buf, "processor\t: 0\n", 14) == 0 && cpus >= 1 &&
              strstr(buf, "\nmodel name\t: ") && strstr(buf, "\nflags\t\t: "),
          "cpuinfo: a processor block per CPU");
    check(slurp("/proc/mounts", buf, sizeof buf) > 0 && strstr(buf, " / ") &&
              strstr(buf, " /proc proc "),
          "mounts: / and /proc");
    check(slurp("/proc/stat", buf, sizeof buf) > 0 && strncmp(buf, "cpu ", 4) == 0 &&
              strstr(buf, "\ncpu0 ") && strstr(buf, "\nctxt "),
          "stat: cpu lines and ctxt");
}

// Our kernel's net page count (kstats), or -1 on Linux.
static long net_pages(void)
{
    static struct kstats_cpu st[256];
    long n = syscall(__NR_kstats, st, 256), net = 0;
    for (long c = 0; c < n && c < 256; c++)
        net += (long)(st[c].pages_alloc - st[c].pages_freed);
    return n > 0 ? net : -1;
}

static void *exit_at_once(void *arg) { return arg; }

// /proc/sys/vm/drop_caches as Linux's: write-only (0200, so not even root
// reads it), 1 to 4, else EINVAL. On ours a drop gives the kernel's cached
// stacks and objects back: after 32 threads at once, their stacks come back.
// (Linux, where a drop would throw away the host's page cache, is not asked.)
static void test_drop_caches(void)
{
    const char *path = "/proc/sys/vm/drop_caches";
    struct stat st;
    check(stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0200,
          "drop_caches: a write-only file (mode 0200)");
    CHECK_ERR(open(path, O_RDONLY), EACCES, "drop_caches: open for reading is EACCES");
    int fd = open(path, O_WRONLY);
    check(fd >= 0, "drop_caches: opens for writing");
    // (Each at offset 0: Linux ignores a write further on. Linux 6.1 takes 1
    // to 4; later ones take 5 too, so 5 is not asked.)
    CHECK_ERR(write(fd, "0", 1), EINVAL, "drop_caches: 0 is EINVAL");
    CHECK_ERR(write(fd, "x\n", 2), EINVAL, "drop_caches: not a number is EINVAL");
    if (net_pages() < 0) {
        check(1, "drop_caches: the kernel's cached stacks come back # SKIP no kstats (not ours)");
        close(fd);
        return;
    }
    pthread_t th[32];
    int made = 0;
    for (int i = 0; i < 32; i++)
        made += pthread_create(&th[made], NULL, exit_at_once, NULL) == 0;
    for (int i = 0; i < made; i++)
        pthread_join(th[i], NULL);
    struct timespec ms100 = {0, 100000000};
    nanosleep(&ms100, NULL);
    long before = net_pages(), after = before;
    check(write(fd, "3\n", 2) == 2, "drop_caches: 3 is taken");
    for (int i = 0; i < 20 && before - after < 64; i++) { // stacks: a grace period later
        nanosleep(&ms100, NULL);
        after = net_pages();
    }
    check(made == 32 && before - after >= 64,
          "drop_caches: the stacks of 32 threads come back (64 pages or more)");
    if (before - after < 64)
        printf("# net pages %ld before the drop, %ld after\n", before, after);
    close(fd);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (enter_scratch("procfs") != 0)
        return 1;
    test_self_stat();
    test_self_status();
    test_self_cmdline(argc, argv);
    test_self_link();
    test_self_fd_dir();
    test_dotdot();
    test_child();
    test_other_fds();
    test_self_memory();
    test_maps();
    test_exe();
    test_tasks();
    test_meminfo();
    test_uptime_loadavg();
    test_cpuinfo_mounts();
    test_drop_caches();
    rmdir(suite_dir);
    return suite_end();
}
