// Processes: posix_spawn/posix_spawnp of host programs (on Linux through the
// clone(CLONE_VM|CLONE_VFORK) fallback), file actions, attributes, errors;
// fork/exec/waitpid; system.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tap.h"

// libc's fork-based fallback, which Linux never needs (it has CLONE_VFORK).
int __posix_spawn_fork(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);

static int wait_status(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    return st;
}

int main(void)
{
    pid_t pid;
    char *true_argv[] = {"true", NULL};
    int r = posix_spawn(&pid, "/bin/true", NULL, NULL, true_argv, environ);
    int st = r == 0 ? wait_status(pid) : -1;
    check(r == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "posix_spawn /bin/true (%d)", r);
    char *false_argv[] = {"false", NULL};
    r = posix_spawn(&pid, "/bin/false", NULL, NULL, false_argv, environ);
    st = r == 0 ? wait_status(pid) : -1;
    check(r == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1, "posix_spawn /bin/false exits 1");
    r = posix_spawnp(&pid, "true", NULL, NULL, true_argv, environ);
    st = r == 0 ? wait_status(pid) : -1;
    check(r == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "posix_spawnp searches PATH");
    r = posix_spawn(&pid, "/nonexistent/prog", NULL, NULL, true_argv, environ);
    check(r == ENOENT, "posix_spawn of a missing file returns ENOENT (%d)", r);
    r = posix_spawnp(&pid, "no-such-program-anywhere", NULL, NULL, true_argv, environ);
    check(r == ENOENT, "posix_spawnp of an unknown name returns ENOENT (%d)", r);

    // File actions: the child's stdout goes to a file.
    char path[64];
    snprintf(path, sizeof path, "/tmp/libc-spawn-%d", getpid());
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char *sh_argv[] = {"sh", "-c", "echo spawned $LIBC_SPAWN_VAR", NULL};
    char *envp[] = {"LIBC_SPAWN_VAR=42", "PATH=/bin:/usr/bin", NULL};
    r = posix_spawn(&pid, "/bin/sh", &fa, NULL, sh_argv, envp);
    st = r == 0 ? wait_status(pid) : -1;
    posix_spawn_file_actions_destroy(&fa);
    char buf[64] = "";
    int fd = open(path, O_RDONLY);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    check(r == 0 && st == 0 && n == 11 && strcmp(buf, "spawned 42\n") == 0,
          "addopen redirects stdout; envp reaches the child");

    // dup2 and close actions with a pipe.
    int p[2];
    pipe(p);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    char *echo_argv[] = {"sh", "-c", "echo piped", NULL};
    r = posix_spawn(&pid, "/bin/sh", &fa, NULL, echo_argv, environ);
    close(p[1]);
    memset(buf, 0, sizeof buf);
    n = read(p[0], buf, sizeof buf - 1);
    close(p[0]);
    wait_status(pid);
    posix_spawn_file_actions_destroy(&fa);
    check(r == 0 && strcmp(buf, "piped\n") == 0, "adddup2 connects a pipe");

    // A failing file action is reported, and no child is left behind.
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 3, "/nonexistent/x", O_RDONLY, 0);
    r = posix_spawn(&pid, "/bin/true", &fa, NULL, true_argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    check(r == ENOENT && waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD,
          "a failed file action returns its errno and reaps the child (%d)", r);

    // Attributes: the signal mask and default actions.
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    posix_spawnattr_setsigmask(&at, &mask);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
    // (grep itself, not through sh: dash clears its signal mask.)
    char *mask_argv[] = {"grep", "-q", "^SigBlk:.*200$", "/proc/self/status", NULL};
    r = posix_spawnp(&pid, "grep", NULL, &at, mask_argv, environ);
    st = r == 0 ? wait_status(pid) : -1;
    check(r == 0 && st == 0, "POSIX_SPAWN_SETSIGMASK sets the child's mask (status %d)", st);
    posix_spawnattr_destroy(&at);

    // The fork fallback: success, a failing exec, a failing file action,
    // and file actions that land on the error pipe's descriptor.
    r = __posix_spawn_fork(&pid, "/bin/false", NULL, NULL, false_argv, environ);
    st = r == 0 ? wait_status(pid) : -1;
    check(r == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1, "fork fallback: spawn /bin/false");
    r = __posix_spawn_fork(&pid, "/nonexistent/prog", NULL, NULL, true_argv, environ);
    check(r == ENOENT && waitpid(-1, NULL, WNOHANG) == -1, "fork fallback: ENOENT, child reaped");
    // A dup2 onto the descriptor the error pipe would have, then a failing
    // action: the error must still reach us (libc moves the pipe aside).
    int probe[2];
    pipe(probe);  // the next pipe2 in libc gets the two numbers after these
    int guess = probe[1] + 2;
    close(probe[0]);
    close(probe[1]);
    pipe(p);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], guess);
    posix_spawn_file_actions_addopen(&fa, 5, "/nonexistent/x", O_RDONLY, 0);
    r = __posix_spawn_fork(&pid, "/bin/true", &fa, NULL, true_argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[0]);
    close(p[1]);
    check(r == ENOENT, "fork fallback: an action on the error pipe's number does not hide errors (%d)", r);
    pipe(p);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    r = __posix_spawn_fork(&pid, "/bin/sh", &fa, NULL, echo_argv, environ);
    close(p[1]);
    memset(buf, 0, sizeof buf);
    n = read(p[0], buf, sizeof buf - 1);
    close(p[0]);
    wait_status(pid);
    posix_spawn_file_actions_destroy(&fa);
    check(r == 0 && strcmp(buf, "piped\n") == 0, "fork fallback: file actions");

    // fork + exec + waitpid.
    pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
        _exit(99);
    }
    st = wait_status(pid);
    check(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 7, "fork, execl, waitpid (%d)", st);
    pid = fork();
    if (pid == 0) {
        kill(getpid(), SIGTERM);
        _exit(0);
    }
    st = wait_status(pid);
    check(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "a killed child: WIFSIGNALED");
    st = system("exit 3");
    check(WIFEXITED(st) && WEXITSTATUS(st) == 3, "system");
    unlink(path);
    return tap_done();
}
