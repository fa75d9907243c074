// kill beyond one live process: kill(-1, sig) reaches every process but init
// and the caller, a zombie can be signalled (to no effect) until it is
// reaped, and SIGKILL ends a vfork parent whose child is stopped. Runs in our
// guest and on the Linux host.
//
// kill(-1) with a real signal must not reach the host's processes: on Linux it
// runs in a new PID namespace, where only the namespace's processes are
// reachable. Our kernel has no namespaces; there the suite's own processes are
// all there is (the harness runs one suite at a time), and the suite's main
// process ignores the signal. Anywhere else the case is skipped.
#include "suite.h"
#include <signal.h>
#include <stdbool.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#define NR_unshare 272
#define CLONE_NEWPID 0x20000000

static bool on_ours(void)
{
    struct utsname u;
    return uname(&u) == 0 && strstr(u.release, "scalable");
}

static pid_t sleeper(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        for (;;)
            pause();
    }
    return pid;
}

// In the namespace's init (Linux) or a child of the suite (ours): two sleepers,
// kill(-1, SIGUSR1), and both must die of it. The exit status has one bit per
// failed check.
static int kill_all_child(bool isolated)
{
    signal(SIGUSR1, SIG_DFL);
    pid_t a = sleeper(), b = sleeper();
    int fails = 0;
    if (syscall(SYS_kill, -1, 0) != 0)
        fails |= 1;
    if (syscall(SYS_kill, -1, SIGUSR1) != 0) {
        fails |= 2;
        kill(a, SIGKILL); // so that the waits below end
        kill(b, SIGKILL);
    }
    int sa = 0, sb = 0;
    waitpid(a, &sa, 0);
    waitpid(b, &sb, 0);
    if (!(WIFSIGNALED(sa) && WTERMSIG(sa) == SIGUSR1 && WIFSIGNALED(sb) && WTERMSIG(sb) == SIGUSR1))
        fails |= 4;
    // Alone (but for init, which is us): nobody to signal.
    if (isolated && !(syscall(SYS_kill, -1, 0) == -1 && errno == ESRCH))
        fails |= 8;
    return fails;
}

static void test_kill_all(void)
{
    bool ours = on_ours();
    bool isolated = !ours && syscall(NR_unshare, CLONE_NEWPID) == 0;
    if (!ours && !isolated) {
        printf("# no PID namespace (%s): kill(-1) cases skipped\n", strerror(errno));
        check(1, "kill(-1, sig) # skip");
        return;
    }
    signal(SIGUSR1, SIG_IGN); // ours: we are among the targets
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(kill_all_child(isolated));
    int st = 0;
    waitpid(pid, &st, 0);
    signal(SIGUSR1, SIG_DFL);
    int fails = WIFEXITED(st) ? WEXITSTATUS(st) : 0xff;
    check(!(fails & 1), "kill(-1, 0) finds the other processes");
    check(!(fails & 2), "kill(-1, SIGUSR1) succeeds");
    check(!(fails & 4), "... and kills every other process, not the caller");
    if (isolated)
        check(!(fails & 8), "kill(-1, 0) with nobody but init is ESRCH");
}

static void test_zombie(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    siginfo_t si;
    waitid(P_PID, pid, &si, WEXITED | WNOWAIT); // a zombie now
    check(kill(pid, 0) == 0, "kill(zombie, 0) succeeds");
    check(kill(pid, SIGTERM) == 0, "kill(zombie, SIGTERM) succeeds");
    int st = 0;
    check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "... and changes nothing: it exited with 0");
    CHECK_ERR(kill(pid, 0), ESRCH, "kill of a reaped child is ESRCH");
}

// A vfork parent waits for its child's exec or exit, but SIGKILL ends the wait
// (Linux: the wait is killable), even while the child is stopped.
static void test_kill_vfork_parent(void)
{
    pid_t p = fork();
    if (p == 0) {
        setpgid(0, 0); // the child joins this group, for the clean-up below
        if (vfork() == 0) {
            kill(getpid(), SIGSTOP);
            _exit(0);
        }
        _exit(0);
    }
    setpgid(p, p);
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL); // into vfork's wait (else the check passes untested)
    kill(p, SIGKILL);
    int st = 0, r = 0;
    for (int i = 0; i < 100 && (r = waitpid(p, &st, WNOHANG)) == 0; i++)
        nanosleep(&ts, NULL);
    check(r == p && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
          "SIGKILL ends a vfork parent whose child is stopped");
    kill(-p, SIGKILL); // the stopped child, and the parent if it was not killed
    if (r == 0)
        waitpid(p, NULL, 0);
}

int main(void)
{
    test_zombie();
    test_kill_vfork_parent();
    test_kill_all();
    return suite_end();
}
