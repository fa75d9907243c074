// posix_spawn: the kernel's system call (uapi/ext.h) with its file actions and
// attributes, errors returned as values, and the parent's memory left alone.
// On the Linux host the call is ENOSYS and the same cases run through the C
// library's posix_spawn. The helpers (argcheck, spawnee, shebang, notelf) are in
// /tests/bin in our guest and next to this binary on the host.
#include "suite.h"
#include <signal.h>
#include <sys/wait.h>
#include <spawn.h> // our libc's: the records and flags are kernel/uapi/ext.h's

static char dir[256] = "/tests/bin"; // the guest; on the host, argv[0]'s directory
static char *env[] = {"EXECTEST=yes", NULL};

static const char *prog(const char *name)
{
    static char buf[2][320];
    static int i;
    i ^= 1;
    snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
    return buf[i];
}

// File actions in the system call's form.
struct actions {
    struct spawn_file_actions h;
    struct spawn_file_action a[8];
};

static void add(struct actions *fa, struct spawn_file_action a)
{
    fa->a[fa->h.n++] = a;
    fa->h.actions = (unsigned long)fa->a;
}

// The same request through the C library, where the call does not exist.
static int libc_spawn(pid_t *pid, const char *path, const struct actions *fa,
                      const struct spawn_attr *at, char **argv, char **envp)
{
    posix_spawn_file_actions_t lfa;
    posix_spawnattr_t lat;
    posix_spawn_file_actions_init(&lfa);
    posix_spawnattr_init(&lat);
    for (unsigned i = 0; fa && i < fa->h.n; i++) {
        const struct spawn_file_action *a = &fa->a[i];
        const char *p = (const char *)a->path;
        if (a->op == SPAWN_FA_OPEN)
            posix_spawn_file_actions_addopen(&lfa, a->fd, p, a->oflag, a->mode);
        else if (a->op == SPAWN_FA_CLOSE)
            posix_spawn_file_actions_addclose(&lfa, a->fd);
        else if (a->op == SPAWN_FA_DUP2)
            posix_spawn_file_actions_adddup2(&lfa, a->fd, a->newfd);
        else if (a->op == SPAWN_FA_CHDIR)
            posix_spawn_file_actions_addchdir_np(&lfa, p);
        else if (a->op == SPAWN_FA_FCHDIR)
            posix_spawn_file_actions_addfchdir_np(&lfa, a->fd);
    }
    if (at) {
        sigset_t m, d;
        sigemptyset(&m);
        sigemptyset(&d);
        for (int s = 1; s < 64; s++) {
            if (at->sigmask >> (s - 1) & 1)
                sigaddset(&m, s);
            if (at->sigdefault >> (s - 1) & 1)
                sigaddset(&d, s);
        }
        posix_spawnattr_setflags(&lat, (short)at->flags);
        posix_spawnattr_setsigmask(&lat, &m);
        posix_spawnattr_setsigdefault(&lat, &d);
        posix_spawnattr_setpgroup(&lat, at->pgroup);
    }
    int r = posix_spawn(pid, path, &lfa, &lat, argv, envp);
    posix_spawn_file_actions_destroy(&lfa);
    posix_spawnattr_destroy(&lat);
    return r;
}

static int ours; // the kernel has the call

// posix_spawn: 0 or the errno.
static int spawn(pid_t *pid, const char *path, const struct actions *fa,
                 const struct spawn_attr *at, char **argv, char **envp)
{
    long r = syscall(__NR_posix_spawn, pid, path, fa ? &fa->h : NULL, at, argv, envp);
    if (r == 0)
        return 0;
    if (errno != ENOSYS)
        return errno;
    return libc_spawn(pid, path, fa, at, argv, envp);
}

// Spawn and wait: the exit status, or 1000 + the spawn error.
static int run(const char *path, const struct actions *fa, const struct spawn_attr *at,
               char **argv)
{
    pid_t pid;
    int err = spawn(&pid, path, fa, at, argv, env);
    if (err)
        return 1000 + err;
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 500 + WTERMSIG(st);
}

// spawnee WHAT [ARG [ARG]]: 0 if what it checks holds.
static int spawnee(const struct actions *fa, const struct spawn_attr *at, const char *what,
                   const char *a1, const char *a2)
{
    char *argv[] = {"spawnee", (char *)what, (char *)a1, (char *)a2, NULL};
    return run(prog("spawnee"), fa, at, argv);
}

static void test_exec(void)
{
    char *a3[] = {"argcheck", "a", "b", NULL};
    char *aenv[] = {"argcheck", "env", NULL};
    char *ash[] = {"shebang", "a", "b", NULL};
    check(run(prog("argcheck"), NULL, NULL, a3) == 3, "spawn runs the program with its argv");
    check(run(prog("argcheck"), NULL, NULL, aenv) == 43, "spawn passes envp");
    check(run(prog("argcheck-pie"), NULL, NULL, a3) == 3, "spawn of a static-pie");
    check(run(prog("shebang"), NULL, NULL, ash) == 42, "spawn of a #! script");
    check(run(prog("no-such-program"), NULL, NULL, a3) == 1000 + ENOENT,
          "spawn of a missing file returns ENOENT");
    check(run("/", NULL, NULL, a3) == 1000 + EACCES, "spawn of a directory returns EACCES");
    check(run(prog("notelf"), NULL, NULL, a3) == 1000 + ENOEXEC,
          "spawn of a non-ELF non-script returns ENOEXEC");
    pid_t pid;
    check(spawn(&pid, (const char *)1, NULL, NULL, a3, env) == EFAULT,
          "spawn with a bad path pointer returns EFAULT");
    if (ours) {
        long r = syscall(__NR_posix_spawn, &pid, prog("argcheck"), (void *)1, NULL, a3, env);
        check(r == -1 && errno == EFAULT, "spawn with bad file actions returns EFAULT");
    }
}

static void test_file_actions(void)
{
    int fd = open("data", O_CREAT | O_RDWR | O_TRUNC, 0644);
    check(fd >= 0 && write(fd, "hello", 5) == 5, "write a data file");
    close(fd);
    // open at 5, dup2 5 -> 6, close 5: applied in this order.
    struct actions fa = {0};
    add(&fa, (struct spawn_file_action){.op = SPAWN_FA_OPEN, .fd = 5, .oflag = O_RDONLY,
                                         .path = (unsigned long)"data"});
    add(&fa, (struct spawn_file_action){.op = SPAWN_FA_DUP2, .fd = 5, .newfd = 6});
    add(&fa, (struct spawn_file_action){.op = SPAWN_FA_CLOSE, .fd = 5});
    check(spawnee(&fa, NULL, "reads", "6", "hello") == 0, "open then dup2: the file at the new fd");
    check(spawnee(&fa, NULL, "closed", "5", NULL) == 0, "then close: the first fd is closed");
    check(fcntl(5, F_GETFD) == -1 && fcntl(6, F_GETFD) == -1, "the parent's fds are unchanged");

    // A close-on-exec fd is closed in the child, unless dup2(fd, fd) clears the flag.
    int cfd = open("data", O_RDONLY | O_CLOEXEC);
    char num[16];
    snprintf(num, sizeof num, "%d", cfd);
    check(spawnee(NULL, NULL, "closed", num, NULL) == 0, "close-on-exec fds are closed");
    struct actions keep = {0};
    add(&keep, (struct spawn_file_action){.op = SPAWN_FA_DUP2, .fd = cfd, .newfd = cfd});
    check(spawnee(&keep, NULL, "reads", num, "hello") == 0, "dup2(fd, fd) keeps a close-on-exec fd");
    check(fcntl(cfd, F_GETFD) == FD_CLOEXEC, "... and the parent's flag stays");
    close(cfd);

    // A failing action: its errno, and no child left behind.
    struct actions bad = {0};
    add(&bad, (struct spawn_file_action){.op = SPAWN_FA_OPEN, .fd = 3, .oflag = O_RDONLY,
                                          .path = (unsigned long)"no-such-file"});
    check(spawnee(&bad, NULL, "closed", "3", NULL) == 1000 + ENOENT,
          "a failed open action returns ENOENT");
    errno = 0;
    check(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "... and no child exists");
    struct actions badfd = {0};
    add(&badfd, (struct spawn_file_action){.op = SPAWN_FA_DUP2, .fd = 77, .newfd = 4});
    check(spawnee(&badfd, NULL, "closed", "4", NULL) == 1000 + EBADF,
          "dup2 of a closed fd returns EBADF");

    // Actions on the parent's fds: the child's table is the parent's as the
    // actions leave it (ours copies the rest after the program loads).
    int pfd = open("data", O_RDONLY), other = open("/dev/null", O_RDONLY);
    snprintf(num, sizeof num, "%d", pfd);
    struct actions cl = {0};
    add(&cl, (struct spawn_file_action){.op = SPAWN_FA_CLOSE, .fd = pfd});
    check(spawnee(&cl, NULL, "closed", num, NULL) == 0, "close action of a parent's fd");
    check(fcntl(pfd, F_GETFD) == 0, "... which the parent keeps");
    add(&cl, (struct spawn_file_action){.op = SPAWN_FA_CLOSE, .fd = pfd});
    check(spawnee(&cl, NULL, "closed", num, NULL) == 1000 + EBADF, "closing it twice: EBADF");
    struct actions cl2 = {0};
    add(&cl2, (struct spawn_file_action){.op = SPAWN_FA_CLOSE, .fd = 90});
    check(spawnee(&cl2, NULL, "closed", "90", NULL) == 1000 + EBADF,
          "close action of an fd the parent lacks: EBADF");
    struct actions dp = {0};
    add(&dp, (struct spawn_file_action){.op = SPAWN_FA_DUP2, .fd = pfd, .newfd = 9});
    check(spawnee(&dp, NULL, "reads", "9", "hello") == 0, "dup2 action from a parent's fd");
    check(spawnee(&dp, NULL, "reads", num, "hello") == 0, "... which the child has too");
    struct actions over = {0};
    add(&over, (struct spawn_file_action){.op = SPAWN_FA_OPEN, .fd = other, .oflag = O_RDONLY,
                                           .path = (unsigned long)"data"});
    snprintf(num, sizeof num, "%d", other);
    check(spawnee(&over, NULL, "reads", num, "hello") == 0, "an open action over a parent's fd");
    struct actions closed_src = {0};
    add(&closed_src, (struct spawn_file_action){.op = SPAWN_FA_CLOSE, .fd = other});
    add(&closed_src, (struct spawn_file_action){.op = SPAWN_FA_DUP2, .fd = other, .newfd = 9});
    check(spawnee(&closed_src, NULL, "closed", "9", NULL) == 1000 + EBADF,
          "dup2 from an fd an earlier action closed: EBADF");
    close(pfd);
    close(other);
}

static void test_chdir(void)
{
    mkdir("sub", 0755);
    struct actions fa = {0};
    add(&fa, (struct spawn_file_action){.op = SPAWN_FA_CHDIR, .path = (unsigned long)"sub"});
    check(spawnee(&fa, NULL, "cwd", "sub", NULL) == 0, "chdir action: the child's cwd");
    char here[256];
    check(getcwd(here, sizeof here) && !strstr(here, "/sub"), "the parent's cwd is unchanged");
    // The program path is resolved after the actions, from the new cwd.
    const char *base = strrchr(dir, '/') + 1;
    struct actions to = {0};
    add(&to, (struct spawn_file_action){.op = SPAWN_FA_CHDIR, .path = (unsigned long)dir});
    char *argv[] = {"spawnee", "cwd", (char *)base, NULL};
    check(run("./spawnee", &to, NULL, argv) == 0, "a relative program path follows the chdir action");
    int dfd = open("sub", O_RDONLY | O_DIRECTORY);
    struct actions f = {0};
    add(&f, (struct spawn_file_action){.op = SPAWN_FA_FCHDIR, .fd = dfd});
    check(spawnee(&f, NULL, "cwd", "sub", NULL) == 0, "fchdir action");
    close(dfd);
}

static void on_usr2(int s) { (void)s; }

static void test_signals(void)
{
    char usr1[8], usr2[8];
    snprintf(usr1, sizeof usr1, "%d", SIGUSR1);
    snprintf(usr2, sizeof usr2, "%d", SIGUSR2);
    sigset_t m, old;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR2);
    sigprocmask(SIG_BLOCK, &m, &old);
    check(spawnee(NULL, NULL, "blocked", usr2, NULL) == 0, "the child inherits the signal mask");
    struct spawn_attr at = {.flags = POSIX_SPAWN_SETSIGMASK, .sigmask = 1UL << (SIGUSR1 - 1)};
    check(spawnee(NULL, &at, "blocked", usr1, NULL) == 0 &&
              spawnee(NULL, &at, "unblocked", usr2, NULL) == 0,
          "SETSIGMASK gives the child that mask");
    sigprocmask(SIG_SETMASK, &old, NULL);

    signal(SIGUSR1, SIG_IGN);
    signal(SIGUSR2, on_usr2);
    check(spawnee(NULL, NULL, "ign", usr1, NULL) == 0, "an ignored signal stays ignored");
    check(spawnee(NULL, NULL, "dfl", usr2, NULL) == 0, "a caught signal becomes SIG_DFL");
    struct spawn_attr d = {.flags = POSIX_SPAWN_SETSIGDEF, .sigdefault = 1UL << (SIGUSR1 - 1)};
    check(spawnee(NULL, &d, "dfl", usr1, NULL) == 0, "SETSIGDEF resets an ignored signal");
    signal(SIGUSR1, SIG_DFL);
    signal(SIGUSR2, SIG_DFL);
}

static void test_groups(void)
{
    check(spawnee(NULL, NULL, "leader", NULL, NULL) == 1, "the child is in the parent's group");
    struct spawn_attr at = {.flags = POSIX_SPAWN_SETPGROUP, .pgroup = 0};
    check(spawnee(NULL, &at, "leader", NULL, NULL) == 0, "SETPGROUP 0: the child leads a new group");
    pid_t pid;
    char *argv[] = {"argcheck", NULL};
    int err = spawn(&pid, prog("argcheck"), NULL, &at, argv, env);
    check(err == 0 && getpgid(pid) == pid, "getpgid of the child is its pid");
    if (!err)
        waitpid(pid, NULL, 0);
    struct spawn_attr bad = {.flags = POSIX_SPAWN_SETPGROUP, .pgroup = 999999};
    check(spawnee(NULL, &bad, "leader", NULL, NULL) == 1000 + EPERM,
          "SETPGROUP to a missing group returns EPERM");
    struct spawn_attr sid = {.flags = POSIX_SPAWN_SETSID};
    check(spawnee(NULL, &sid, "leader", NULL, NULL) == 0, "SETSID: the child leads a new session");
}

// The parent's pages are neither copied nor write-protected: writing them after a
// spawn takes no page faults, where after a fork each page takes a COW fault.
static long faults(void)
{
    static struct kstats_cpu st[256];
    long n = syscall(__NR_kstats, st, 256), sum = 0;
    for (long i = 0; i < n && i < 256; i++)
        sum += st[i].page_faults;
    return sum;
}

static long write_faults(char *buf, int pages)
{
    long before = faults();
    for (int i = 0; i < pages; i++)
        buf[i * 4096] = (char)i;
    return faults() - before;
}

static void test_parent_untouched(void)
{
    if (!ours) {
        check(1, "parent memory untouched # SKIP no kstats on this kernel");
        return;
    }
    enum { PAGES = 64 };
    // Stay on one CPU: page tables are per CPU, so a migration alone would make
    // the writes fault (filling the new CPU's table) with no copy involved.
    cpu_set_t here, old;
    sched_getaffinity(0, sizeof old, &old);
    CPU_ZERO(&here);
    CPU_SET(sched_getcpu(), &here);
    sched_setaffinity(0, sizeof here, &here);
    char *buf = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    write_faults(buf, PAGES); // populate
    char *argv[] = {"argcheck", NULL};
    run(prog("argcheck"), NULL, NULL, argv);
    long after_spawn = write_faults(buf, PAGES);
    check(after_spawn < PAGES / 2, "after posix_spawn the parent writes its pages without faults");
    pid_t pid = fork();
    if (pid == 0) {
        execve(prog("argcheck"), argv, env);
        _exit(127);
    }
    waitpid(pid, NULL, 0);
    long after_fork = write_faults(buf, PAGES);
    check(after_fork >= PAGES, "(control: after fork each page takes a fault)");
    printf("# page faults writing %d pages: after spawn %ld, after fork %ld\n", PAGES,
           after_spawn, after_fork);
    munmap(buf, PAGES * 4096);
    sched_setaffinity(0, sizeof old, &old);
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *slash = strrchr(argv[0], '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - argv[0]), argv[0]);
    char abs[4096];
    if (dir[0] != '/' && realpath(dir, abs)) // absolute: the suite changes directory
        snprintf(dir, sizeof dir, "%.255s", abs);
    ours = syscall(__NR_posix_spawn, NULL, NULL, NULL, NULL, NULL, NULL) != -1 || errno != ENOSYS;
    if (enter_scratch("spawn") < 0)
        return 1;
    test_exec();
    test_file_actions();
    test_chdir();
    test_signals();
    test_groups();
    test_parent_untouched();
    return suite_end();
}
