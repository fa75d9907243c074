// ETXTBSY, as Linux: a file some process executes cannot be opened for writing
// or truncated, and a file open for writing cannot be executed (execve and
// posix_spawn). Reading is always allowed. The program is a copy of the spawnee
// helper (/tests/bin in our guest, next to this binary on the host) made in the
// scratch directory, so nothing else runs it meanwhile.
#include "suite.h"
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

static char dir[256] = "/tests/bin";
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

int main(int argc, char **argv)
{
    (void)argc;
    const char *slash = strrchr(argv[0], '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - argv[0]), argv[0]);
    char abs[4096], from[4352];
    if (dir[0] != '/' && realpath(dir, abs))
        snprintf(dir, sizeof dir, "%.255s", abs);
    snprintf(from, sizeof from, "%s/spawnee", dir);
    if (enter_scratch("txtbsy") < 0)
        return 1;
    check(copy_file(from, "./prog") == 0, "copy the spawnee helper");
    test_running();
    test_fork_inherits();
    test_open_for_writing();
    unlink("./prog");
    rmdir(suite_dir);
    return suite_end();
}
