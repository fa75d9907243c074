// ETXTBSY, as Linux: a file some process executes cannot be opened for writing
// or truncated, and a file open for writing cannot be executed (execve and
// posix_spawn); nor can a file mapped through a description open for writing
// (MAP_SHARED or MAP_PRIVATE: Linux's mapping keeps the description open), until
// the last page of such a mapping is unmapped, in whichever process (a fork
// copies the mapping), by munmap, MAP_FIXED, exit or exec. Reading is always
// allowed. The program is a copy of the spawnee
// helper (/tests/bin in our guest, next to this binary on the host) made in the
// scratch directory, so nothing else runs it meanwhile.
#include "suite.h"
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

static char dir[256] = "/tests/bin";
static char spawnee[4352]; // the original helper
static char *env[] = {NULL};

static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    char buf[4096];
    ssize_t n = 0;
    while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, n) != n)
            n = -1;
    close(in);
    close(out);
    return in >= 0 && out >= 0 && n == 0 ? 0 : -1;
}

// fork + execve("./prog", argv): the child's pid once its exec has happened, or
// -errno if the exec failed (a close-on-exec pipe tells which).
static pid_t start(char **argv, int out)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -errno;
    pid_t pid = fork();
    if (pid == 0) {
        if (out >= 0)
            dup2(out, 1);
        execve("./prog", argv, env);
        int e = errno;
        if (write(p[1], &e, sizeof e) != sizeof e)
            _exit(126);
        _exit(127);
    }
    close(p[1]);
    int e = 0;
    ssize_t n = read(p[0], &e, sizeof e);
    close(p[0]);
    if (n == sizeof e) {
        waitpid(pid, NULL, 0);
        return -e;
    }
    return pid;
}

static void stop(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

// Opening for writing fails while ./prog runs; nothing else about it does.
static void check_busy(const char *what)
{
    char name[160];
    snprintf(name, sizeof name, "open O_WRONLY of %s gives ETXTBSY", what);
    CHECK_ERR(open("./prog", O_WRONLY), ETXTBSY, name);
    snprintf(name, sizeof name, "open O_RDWR of %s gives ETXTBSY", what);
    CHECK_ERR(open("./prog", O_RDWR), ETXTBSY, name);
    snprintf(name, sizeof name, "open O_RDONLY|O_TRUNC of %s gives ETXTBSY", what);
    CHECK_ERR(open("./prog", O_RDONLY | O_TRUNC), ETXTBSY, name);
    snprintf(name, sizeof name, "truncate of %s gives ETXTBSY", what);
    CHECK_ERR(truncate("./prog", 0), ETXTBSY, name);
    int fd = open("./prog", O_RDONLY);
    char c[4] = {0};
    snprintf(name, sizeof name, "%s opens for reading and reads its ELF header", what);
    check(fd >= 0 && read(fd, c, 4) == 4 && !memcmp(c, "\177ELF", 4), name);
    close(fd);
    struct stat st;
    snprintf(name, sizeof name, "%s keeps its size", what);
    check(stat("./prog", &st) == 0 && st.st_size > 4096, name);
}

static int writable_now(void)
{
    int fd = open("./prog", O_WRONLY);
    close(fd);
    return fd >= 0;
}

static void test_running(void)
{
    char *argv[] = {"spawnee", "pause", NULL};
    pid_t pid = start(argv, -1);
    check(pid > 0, "the copy runs");
    if (pid <= 0)
        return;
    check_busy("a running program");
    stop(pid);
    check(writable_now(), "after the program exits it opens for writing");
}

// A child forked by the program keeps the image busy after the program exits.
static void test_fork_inherits(void)
{
    int p[2];
    if (pipe(p) != 0)
        return;
    char *argv[] = {"spawnee", "forkpause", NULL};
    pid_t pid = start(argv, p[1]);
    close(p[1]);
    pid_t child = 0;
    int st = -1;
    check(pid > 0 && read(p[0], &child, sizeof child) == sizeof child && child > 0 &&
              waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "the program forks a child and exits");
    close(p[0]);
    if (child <= 0)
        return;
    check_busy("a program whose forked child runs");
    kill(child, SIGKILL); // reparented: its new parent reaps it
    int ok = 0;
    for (int i = 0; i < 2000 && !(ok = writable_now()); i++)
        usleep(1000);
    check(ok, "after the forked child dies the program opens for writing");
}

// posix_spawn: 0 or the errno (our system call, else the C library's).
static int spawn(pid_t *pid, char **argv)
{
    long r = syscall(__NR_posix_spawn, pid, "./prog", NULL, NULL, argv, env);
    if (r == 0)
        return 0;
    if (errno != ENOSYS)
        return errno;
    return posix_spawn(pid, "./prog", NULL, NULL, argv, env);
}

static void test_open_for_writing(void)
{
    char *argv[] = {"spawnee", "leader", NULL};
    int fd = open("./prog", O_WRONLY);
    check(fd >= 0, "the program opens for writing");
    pid_t pid = start(argv, -1);
    check(pid == -ETXTBSY, "execve of a file open for writing gives ETXTBSY");
    if (pid > 0)
        stop(pid);
    pid = 0;
    int err = spawn(&pid, argv);
    check(err == ETXTBSY, "posix_spawn of a file open for writing gives ETXTBSY");
    if (!err)
        waitpid(pid, NULL, 0);
    int fd2 = open("./prog", O_RDWR);
    check(fd2 >= 0, "a second writer opens it too");
    close(fd);
    pid = start(argv, -1);
    check(pid == -ETXTBSY, "execve with one writer left still gives ETXTBSY");
    if (pid > 0)
        stop(pid);
    close(fd2);

    // Readers do not count.
    fd = open("./prog", O_RDONLY);
    pid = start(argv, -1);
    check(pid > 0, "execve of a file open for reading runs it");
    if (pid > 0)
        waitpid(pid, NULL, 0);
    pid = 0;
    err = spawn(&pid, argv);
    check(err == 0, "posix_spawn of a file open for reading runs it");
    if (!err)
        waitpid(pid, NULL, 0);
    close(fd);

    // A description inherited by a child keeps writing access until the last close.
    fd = open("./prog", O_WRONLY);
    pid_t holder = fork();
    if (holder == 0) {
        pause();
        _exit(0);
    }
    close(fd);
    pid = start(argv, -1);
    check(pid == -ETXTBSY, "a writer's descriptor inherited by a child keeps ETXTBSY");
    if (pid > 0)
        stop(pid);
    stop(holder);
    pid = start(argv, -1);
    check(pid > 0, "after the last close the program runs again");
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

// execve of ./prog gives ETXTBSY (busy) or runs it.
static void check_exec(int busy, const char *what)
{
    char *argv[] = {"spawnee", "leader", NULL};
    pid_t pid = start(argv, -1);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    char name[200];
    snprintf(name, sizeof name, "execve %s %s", what, busy ? "gives ETXTBSY" : "runs it");
    check(busy ? pid == -ETXTBSY : pid > 0, name);
    if (busy && pid != -ETXTBSY)
        printf("# got %d\n", pid);
}

// ./prog mapped through a description opened with acc, which is then closed.
static char *map_prog(int acc, int prot, int type, size_t len)
{
    int fd = open("./prog", acc);
    char *p = fd < 0 ? MAP_FAILED : mmap(NULL, len, prot, type, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

static void test_mapped(void)
{
    size_t pg = sysconf(_SC_PAGESIZE);
    char *argv[] = {"spawnee", "leader", NULL};
    char *p = map_prog(O_RDWR, PROT_READ | PROT_WRITE, MAP_SHARED, 3 * pg);
    check(p != NULL, "map the program shared and writable, close the descriptor");
    if (!p)
        return;
    check_exec(1, "of a file with a writable shared mapping");
    pid_t pid = 0;
    int err = spawn(&pid, argv);
    check(err == ETXTBSY, "posix_spawn of a file with a writable shared mapping gives ETXTBSY");
    if (!err)
        waitpid(pid, NULL, 0);
    check(munmap(p, pg) == 0, "unmap the first page");
    check_exec(1, "of a file whose writable mapping was unmapped in part");
    pid_t holder = fork();
    if (holder == 0) {
        pause();
        _exit(0);
    }
    check(holder > 0 && munmap(p + pg, 2 * pg) == 0, "fork, then the parent unmaps the rest");
    check_exec(1, "while a forked child keeps its copy of the mapping");
    if (holder > 0)
        stop(holder);
    check_exec(0, "once the child with the copy exits");

    // Unmapped by MAP_FIXED, exit, or the exec of another program.
    p = map_prog(O_RDWR, PROT_READ | PROT_WRITE, MAP_SHARED, 2 * pg);
    check(p && mmap(p, 2 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p,
          "map it writable, then map anonymous memory over it (MAP_FIXED)");
    check_exec(0, "after MAP_FIXED replaced the writable mapping");
    if (p)
        munmap(p, 2 * pg);
    pid_t c = fork();
    if (c == 0)
        _exit(map_prog(O_RDWR, PROT_READ | PROT_WRITE, MAP_SHARED, pg) ? 0 : 1);
    int st = -1;
    check(c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "a child maps it writable and exits");
    check_exec(0, "after the process with the writable mapping exited");
    // The new program says when it runs: only then is its exec over (Linux
    // drops the old image's files on the way back to user mode).
    int q[2];
    if (pipe(q) != 0)
        return;
    c = fork();
    if (c == 0) {
        char *argv2[] = {"spawnee", "ready", NULL};
        if (map_prog(O_RDWR, PROT_READ | PROT_WRITE, MAP_SHARED, pg) && dup2(q[1], 1) == 1)
            execve(spawnee, argv2, env);
        _exit(127);
    }
    close(q[1]);
    char b[2];
    check(c > 0 && read(q[0], b, 1) == 1 && b[0] == 'r',
          "a child maps it writable, then executes another program");
    close(q[0]);
    check_exec(0, "after the process with the writable mapping executed another program");
    if (c > 0)
        stop(c);

    // Which mappings count: any through a description open for writing.
    p = map_prog(O_RDWR, PROT_READ, MAP_SHARED, pg);
    check_exec(1, "of a file with a read-only shared mapping of a writable descriptor");
    if (p)
        munmap(p, pg);
    check_exec(0, "after that mapping is unmapped");
    p = map_prog(O_RDWR, PROT_READ | PROT_WRITE, MAP_PRIVATE, pg);
    check_exec(1, "of a file with a private mapping of a writable descriptor (as Linux)");
    if (p)
        munmap(p, pg);
    p = map_prog(O_RDONLY, PROT_READ, MAP_SHARED, pg);
    char *p2 = map_prog(O_RDONLY, PROT_READ | PROT_WRITE, MAP_PRIVATE, pg);
    check(p && p2, "map it shared and private through a read-only descriptor");
    check_exec(0, "of a file mapped only through a read-only descriptor");
    if (p)
        munmap(p, pg);
    if (p2)
        munmap(p2, pg);

    // MADV_UNMAP_ASYNC (ours; EINVAL on Linux): the write access goes with the
    // pages, a grace period later at most if another CPU may reach them.
    p = map_prog(O_RDWR, PROT_READ | PROT_WRITE, MAP_SHARED, 2 * pg);
    if (p && madvise(p, 2 * pg, 200 /* MADV_UNMAP_ASYNC */) == 0) {
        int busy = 1;
        for (int i = 0; i < 200 && busy; i++) {
            pid = start(argv, -1);
            busy = pid == -ETXTBSY;
            if (pid > 0)
                waitpid(pid, NULL, 0);
            else if (busy)
                usleep(5000);
        }
        check(!busy, "execve runs the file once MADV_UNMAP_ASYNC unmapped its writable mapping");
    } else if (p) {
        munmap(p, 2 * pg);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *slash = strrchr(argv[0], '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - argv[0]), argv[0]);
    char abs[4096];
    if (dir[0] != '/' && realpath(dir, abs))
        snprintf(dir, sizeof dir, "%.255s", abs);
    snprintf(spawnee, sizeof spawnee, "%s/spawnee", dir);
    if (enter_scratch("txtbsy") < 0)
        return 1;
    check(copy_file(spawnee, "./prog") == 0, "copy the spawnee helper");
    test_running();
    test_fork_inherits();
    test_open_for_writing();
    test_mapped();
    unlink("./prog");
    rmdir(suite_dir);
    return suite_end();
}
