// fd tables shared between processes (clone with CLONE_FILES): a close in one
// is a close in the other, and close_range with CLOSE_RANGE_UNSHARE first gives
// the caller a private copy, alone or with CLOSE_RANGE_CLOEXEC. Runs in our
// guest and on the Linux host.
#include "suite.h"
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

#define CLONE_FILES 0x400
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
    return suite_end();
}
