// Processes: fork, vfork, execve (ELF, static-pie, #! scripts, errors), exit
// statuses, wait4, waitid, umask and resource limits. The helper programs
// (argcheck, shebang, notelf) are in /bin in our guest and next to this binary on
// the Linux host.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int n, failed;
static char dir[256] = "/tests/bin"; // the guest; on the host, argv[0]'s directory

static void check(int ok, const char *name)
{
    n++;
    failed += !ok;
    printf("%s %d - %s\n", ok ? "ok" : "not ok", n, name);
    fflush(stdout);
}

static const char *prog(const char *name)
{
    static char buf[2][320];
    static int i;
    i ^= 1;
    snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
    return buf[i];
}

// Wait for pid; its raw wait status, or -1.
static int reap(pid_t pid)
{
    int st;
    return waitpid(pid, &st, 0) == pid ? st : -1;
}

static void test_fork_exit_status(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(7);
    int st = reap(pid);
    check(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 7, "fork: child's exit status reaches wait4");
}

static void test_fork_copies_memory(void)
{
    static volatile int shared_var = 1;
    int *heap = malloc(sizeof *heap);
    *heap = 10;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        int ok = shared_var == 1 && *heap == 10 && getppid() == parent && getpid() != parent;
        shared_var = 2;
        *heap = 20;
        _exit(ok ? 0 : 1);
    }
    int st = reap(pid);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork: child sees a copy and its parent's pid");
    check(shared_var == 1 && *heap == 10, "fork: child's writes stay in the child");
    free(heap);
}

static void test_wait_errors(void)
{
    int st;
    errno = 0;
    check(waitpid(-1, &st, 0) == -1 && errno == ECHILD, "wait4 without children is ECHILD");
    pid_t pid = fork();
    if (pid == 0) {
        usleep(50000);
        _exit(0);
    }
    check(waitpid(pid, &st, WNOHANG) == 0, "wait4 WNOHANG on a running child returns 0");
    check(reap(pid) != -1, "wait4 then reaps it");
    errno = 0;
    check(waitpid(pid, &st, 0) == -1 && errno == ECHILD, "a reaped child is gone");
}

static void test_killed_status(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        kill(getpid(), SIGTERM);
        for (;;)
            pause();
    }
    int st = reap(pid);
    check(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "a child killed by SIGTERM: WTERMSIG");
}

static void test_wait_any_and_ignored(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(2);
    int st;
    check(waitpid(0, &st, 0) == pid && WEXITSTATUS(st) == 2, "waitpid(0) waits for our group's child");
    signal(SIGCHLD, SIG_IGN);
    pid = fork();
    if (pid == 0)
        _exit(0);
    errno = 0;
    check(waitpid(pid, &st, 0) == -1 && errno == ECHILD, "SIGCHLD ignored: no zombie, wait is ECHILD");
    signal(SIGCHLD, SIG_DFL);
}

static void test_waitid(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(5);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r = waitid(P_PID, pid, &si, WEXITED | WNOWAIT);
    check(r == 0 && si.si_pid == pid && si.si_signo == SIGCHLD && si.si_code == CLD_EXITED &&
              si.si_status == 5,
          "waitid WNOWAIT reports the exit");
    memset(&si, 0, sizeof si);
    r = waitid(P_ALL, 0, &si, WEXITED);
    check(r == 0 && si.si_pid == pid && si.si_status == 5, "waitid then reaps the same child");
    errno = 0;
    check(waitid(P_ALL, 0, &si, WEXITED) == -1 && errno == ECHILD, "waitid: nothing left is ECHILD");
    errno = 0;
    check(waitid(P_ALL, 0, &si, 0) == -1 && errno == EINVAL, "waitid without WEXITED etc. is EINVAL");
}

static void test_vfork(void)
{
    volatile int touched = 0;
    pid_t pid = vfork();
    if (pid == 0) {
        touched = 1; // the parent's memory: it waits until we exit
        _exit(3);
    }
    int st = reap(pid);
    check(touched == 1 && WIFEXITED(st) && WEXITSTATUS(st) == 3, "vfork shares memory until _exit");

    char *argv[] = {"argcheck", "1", "2", NULL};
    pid = vfork();
    if (pid == 0) {
        execv(prog("argcheck"), argv);
        _exit(99);
    }
    st = reap(pid);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 3, "vfork then execve runs the program");
}

// Run path with argv/envp in a child; its exit status, or 100 + errno if execve
// failed.
static int run(const char *path, char *const argv[], char *const envp[])
{
    pid_t pid = fork();
    if (pid == 0) {
        execve(path, argv, envp);
        _exit(100 + errno);
    }
    int st = reap(pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_execve(void)
{
    char *env[] = {"EXECTEST=yes", NULL};
    char *a3[] = {"argcheck", "x", "y", NULL};
    check(run(prog("argcheck"), a3, env) == 3, "execve passes argv");
    char *aenv[] = {"argcheck", "env", NULL};
    check(run(prog("argcheck"), aenv, env) == 43, "execve passes envp");
    check(run(prog("argcheck-pie"), a3, env) == 3, "execve of a static-pie");
    char *ash[] = {"shebang", "a", "b", NULL};
    check(run(prog("shebang"), ash, env) == 42, "execve of a #! script: interpreter, its argument, the script, the rest");
    check(run(prog("no-such-program"), a3, env) == 100 + ENOENT, "execve of a missing file is ENOENT");
    check(run("/", a3, env) == 100 + EACCES, "execve of a directory is EACCES");
    check(run(prog("notelf"), a3, env) == 100 + ENOEXEC, "execve of a non-ELF non-script is ENOEXEC");
    check(run((const char *)1, a3, env) == 100 + EFAULT, "execve of a bad path pointer is EFAULT");
    static char big[200 * 1024];
    memset(big, 'x', sizeof big - 1);
    char *abig[] = {"argcheck", big, NULL};
    check(run(prog("argcheck"), abig, env) == 100 + E2BIG, "execve with a 200 KiB argument is E2BIG");
}

static void test_exec_failure_keeps_process(void)
{
    char *a[] = {"x", NULL};
    errno = 0;
    int r = execv(prog("no-such-program"), a);
    check(r == -1 && errno == ENOENT && getpid() > 0, "a failed execve returns to the caller");
}

static void test_umask_rlimit(void)
{
    mode_t old = umask(027);
    mode_t back = umask(old);
    check(back == 027, "umask returns the previous mask");
    struct rlimit rl;
    check(getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 0 && rl.rlim_cur <= rl.rlim_max,
          "getrlimit NOFILE");
    struct rlimit lower = {rl.rlim_cur / 2, rl.rlim_max};
    struct rlimit now;
    check(setrlimit(RLIMIT_NOFILE, &lower) == 0 && getrlimit(RLIMIT_NOFILE, &now) == 0 &&
              now.rlim_cur == lower.rlim_cur,
          "setrlimit NOFILE sticks");
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit c;
        getrlimit(RLIMIT_NOFILE, &c);
        _exit(c.rlim_cur == lower.rlim_cur ? 0 : 1);
    }
    int st = reap(pid);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork inherits resource limits");
    setrlimit(RLIMIT_NOFILE, &rl);
    struct rlimit stack;
    check(getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur >= 65536, "getrlimit STACK");
    struct rlimit bad = {10, 5};
    errno = 0;
    check(setrlimit(RLIMIT_STACK, &bad) == -1 && errno == EINVAL, "soft above hard is EINVAL");
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *slash = strrchr(argv[0], '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - argv[0]), argv[0]);
    test_fork_exit_status();
    test_fork_copies_memory();
    test_wait_errors();
    test_killed_status();
    test_wait_any_and_ignored();
    test_waitid();
    test_vfork();
    test_execve();
    test_exec_failure_keeps_process();
    test_umask_rlimit();
    while (wait(NULL) > 0)
        ;
    printf("%d passed, %d failed\n", n - failed, failed);
    return failed != 0;
}
