// fd tables shared between processes (clone with CLONE_FILES) and between
// threads: a close in one is a close in the other; close_range with
// CLOSE_RANGE_UNSHARE first gives the calling process or thread a private copy,
// alone or with CLOSE_RANGE_CLOEXEC; execve in a process that shares its table
// closes its close-on-exec fds in a copy. Runs in our guest and on the Linux host.
#include "suite.h"
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

#ifndef CLONE_FILES
#define CLONE_FILES 0x400
#endif
#define CLOSE_RANGE_UNSHARE 2
#define CLOSE_RANGE_CLOEXEC 4

// A child process sharing our fd table (a fork otherwise); 0 in the child.
static long clone_files(void) { return syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0); }

static int status_of(pid_t pid)
{
    int st = -1;
    waitpid(pid, &st, 0);
    return st;
}

static bool is_open(int fd) { return fcntl(fd, F_GETFD) >= 0; }

// A thread that unshares its table, then closes and opens in its copy.
struct unshare_arg {
    int fd, opened;
    bool ok;
};

static void *unshare_thread(void *arg)
{
    struct unshare_arg *u = arg;
    u->ok = syscall(SYS_close_range, u->fd, u->fd, CLOSE_RANGE_UNSHARE) == 0 && !is_open(u->fd);
    u->opened = open("g", O_RDONLY | O_CREAT, 0644);
    return NULL;
}

static void *close_thread(void *arg)
{
    close((int)(long)arg);
    return NULL;
}

static void test_threads(void)
{
    int fd = open("f", O_RDONLY);
    struct unshare_arg u = {fd, -1, false};
    pthread_t th;
    pthread_create(&th, NULL, unshare_thread, &u);
    pthread_join(th, NULL);
    check(u.ok && is_open(fd), "CLOSE_RANGE_UNSHARE in a thread: it closes in its own copy");
    struct stat mine, its;
    bool same = u.opened >= 0 && fstat(u.opened, &mine) == 0 && stat("g", &its) == 0 &&
                mine.st_ino == its.st_ino;
    check(u.opened >= 0 && !same, "... and what it opens there is not in ours");

    // Without the flag, the threads' table is one.
    int g = dup(fd);
    pthread_create(&th, NULL, close_thread, (void *)(long)g);
    pthread_join(th, NULL);
    check(!is_open(g), "a thread's close without the flag closes ours");
    close(fd);
}

// execve in a child that shares our table: its close-on-exec fds are closed in
// a copy, ours stay open.
static void test_exec(void)
{
    int fd = open("f", O_RDONLY);
    long pid = clone_files();
    if (pid == 0) {
        fcntl(fd, F_SETFD, FD_CLOEXEC); // in the shared table: ours is marked too
        execl("/bin/true", "true", (char *)NULL); // in both our guest and Linux
        _exit(2);
    }
    int st = status_of((pid_t)pid);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0 && is_open(fd),
          "execve in a CLONE_FILES child: its close-on-exec leaves our fd open");
    close(fd);
}

int main(void)
{
    if (enter_scratch("fdshare") != 0)
        return 1;
    int a = open("f", O_RDWR | O_CREAT, 0644), b = dup(a), c = dup(a);
    fflush(stdout);

    long pid = clone_files();
    if (pid == 0)
        _exit(close(a) == 0 ? 0 : 1);
    int st = status_of((pid_t)pid);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0 && !is_open(a),
          "CLONE_FILES: the child's close closes our fd");

    int fresh = dup(b); // the lowest free fd now, then free again
    close(fresh);
    pid = clone_files();
    if (pid == 0) {
        int ok = syscall(SYS_close_range, b, b, CLOSE_RANGE_UNSHARE) == 0 && !is_open(b) && is_open(c);
        int mine = open("f", O_RDONLY); // in the child's table only
        _exit(ok && mine == fresh ? 0 : 1);
    }
    st = status_of((pid_t)pid);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "CLOSE_RANGE_UNSHARE: the child closes in a copy of the table");
    check(is_open(b) && !is_open(fresh), "... ours keeps the fd, and sees nothing the child opened");

    pid = clone_files();
    if (pid == 0) {
        long r = syscall(SYS_close_range, c, c, CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC);
        _exit(r == 0 && fcntl(c, F_GETFD) == FD_CLOEXEC ? 0 : 1);
    }
    st = status_of((pid_t)pid);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0 && fcntl(c, F_GETFD) == 0,
          "CLOSE_RANGE_UNSHARE|CLOEXEC: close-on-exec in the child's copy only");

    // Unsharing a table nobody shares changes nothing else.
    check(syscall(SYS_close_range, c, c, CLOSE_RANGE_UNSHARE) == 0 && !is_open(c) && is_open(b),
          "CLOSE_RANGE_UNSHARE without sharing: just the close");
    close(b);
    test_threads();
    test_exec();
    return suite_end();
}
