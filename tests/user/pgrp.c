// Process groups and sessions: getpgrp/getpgid/getsid, setpgid and setsid with
// Linux's errors, kill(0) and kill(-pgid) (also of a group whose members were
// made on different CPUs), wait4 with 0 and -pgid, waitid with P_PGID, and
// orphaned groups (SIGHUP and SIGCONT to stopped ones, stop signals discarded).
// The suite runs in a forked child (our kernel starts suites as session leaders,
// which may not change group).
#include "suite.h"
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <sys/wait.h>

static char dir[256] = "/tests/bin";

// A child that waits for a byte on *gate (or its end); returns its pid.
static pid_t gated_child(int gate[2])
{
    pid_t pid = fork();
    if (pid == 0) {
        close(gate[1]);
        char c;
        while (read(gate[0], &c, 1) < 0 && errno == EINTR)
            ;
        _exit(7);
    }
    return pid;
}

static int status_of(pid_t pid)
{
    int st;
    return waitpid(pid, &st, 0) == pid ? st : -1;
}

static void test_ids(void)
{
    check(getpgrp() == getpgid(0) && getpgid(0) == getpgid(getpid()), "getpgrp == getpgid(0)");
    check(getsid(0) > 0 && getsid(0) == getsid(getpid()), "getsid(0) is our session");
    CHECK_ERR(getpgid(999999), ESRCH, "getpgid of a missing process is ESRCH");
    CHECK_ERR(getsid(999999), ESRCH, "getsid of a missing process is ESRCH");
    CHECK_ERR(setpgid(-1, 0), EINVAL, "setpgid with a negative pid is EINVAL");
    CHECK_ERR(setpgid(0, -1), EINVAL, "setpgid with a negative group is EINVAL");
}

static void test_setpgid_setsid(void)
{
    pid_t old = getpgrp();
    check(setpgid(0, 0) == 0 && getpgrp() == getpid(), "setpgid(0, 0): a group of our own");
    CHECK_ERR(setsid(), EPERM, "setsid of a group leader is EPERM");
    check(setpgid(0, old) == 0 && getpgrp() == old, "setpgid back into the old group");
    CHECK_ERR(setpgid(0, 999999), EPERM, "setpgid into a missing group is EPERM");
    CHECK_ERR(setpgid(1, 0), ESRCH, "setpgid of a process that is not our child is ESRCH");

    pid_t c = fork();
    if (c == 0) {
        pid_t s = setsid();
        int ok = s == getpid() && getsid(0) == getpid() && getpgrp() == getpid();
        int perm = setpgid(0, 0) == -1 && errno == EPERM; // a session leader
        _exit(ok && perm ? 0 : 1);
    }
    int st = status_of(c);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "setsid: a new session and group led by the caller; then setpgid is EPERM");

    int gate[2];
    if (pipe(gate) < 0)
        return;
    pid_t g = gated_child(gate);
    check(setpgid(g, g) == 0 && getpgid(g) == g, "setpgid of a child into a new group");
    check(setpgid(g, getpgrp()) == 0 && getpgid(g) == getpgrp(), "and back into ours");
    close(gate[1]);
    close(gate[0]);
    status_of(g);

    // After the child's execve, setpgid on it is EACCES.
    int ready[2], hold[2];
    if (pipe2(ready, O_CLOEXEC) < 0 || pipe(hold) < 0)
        return;
    pid_t e = fork();
    if (e == 0) {
        dup2(hold[0], 0);
        close(hold[1]);
        char path[300];
        snprintf(path, sizeof path, "%s/spawnee", dir);
        char *argv[] = {"spawnee", "wait", NULL};
        execv(path, argv);
        _exit(127);
    }
    close(ready[1]);
    close(hold[0]);
    char c1;
    while (read(ready[0], &c1, 1) < 0 && errno == EINTR) // end of file: it exec'd
        ;
    close(ready[0]);
    CHECK_ERR(setpgid(e, e), EACCES, "setpgid of a child after its execve is EACCES");
    close(hold[1]);
    status_of(e);
}

static void test_kill_group(void)
{
    int gate[2];
    if (pipe(gate) < 0)
        return;
    pid_t a = gated_child(gate), b = gated_child(gate);
    check(setpgid(a, a) == 0 && setpgid(b, a) == 0, "two children in one new group");
    check(kill(-a, 0) == 0, "kill(-pgid, 0) finds the group");
    check(kill(-a, SIGTERM) == 0, "kill(-pgid, SIGTERM)");
    int sa = status_of(a), sb = status_of(b);
    check(WIFSIGNALED(sa) && WTERMSIG(sa) == SIGTERM && WIFSIGNALED(sb) && WTERMSIG(sb) == SIGTERM,
          "every member got the signal");
    CHECK_ERR(kill(-a, 0), ESRCH, "kill of a group with no members left is ESRCH");
    CHECK_ERR(kill(-999999, SIGTERM), ESRCH, "kill of a missing group is ESRCH");
    close(gate[0]);
    close(gate[1]);

    // kill(0, sig): our own group, ourselves included.
    pid_t c = fork();
    if (c == 0) {
        setpgid(0, 0);
        int g2[2];
        if (pipe(g2) < 0)
            _exit(2);
        pid_t h = fork(); // SIGUSR1's default action kills it
        if (h == 0) {
            close(g2[1]);
            char x;
            while (read(g2[0], &x, 1) < 0 && errno == EINTR)
                ;
            _exit(7);
        }
        signal(SIGUSR1, SIG_IGN);
        int r = kill(0, SIGUSR1);
        close(g2[1]);
        int st;
        waitpid(h, &st, 0);
        _exit(r == 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1 ? 0 : 1);
    }
    int st = status_of(c);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "kill(0, sig) signals our group");
}

// Members made on every CPU (our kernel keeps a group's members per CPU): all of
// them are in the group, all get kill(-pgid)'s signal, and the group goes with
// the last of them.
static void test_group_across_cpus(void)
{
    enum { N = 9 };
    int gate[2];
    cpu_set_t old;
    if (pipe(gate) < 0 || sched_getaffinity(0, sizeof old, &old) < 0)
        return;
    int ncpu = CPU_COUNT(&old), cpus[64], k = 0;
    for (int c = 0; c < 64 && k < ncpu; c++)
        if (CPU_ISSET(c, &old))
            cpus[k++] = c;
    pid_t kid[N];
    int ok = 1;
    for (int i = 0; i < N; i++) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[i % k], &one);
        sched_setaffinity(0, sizeof one, &one);
        kid[i] = gated_child(gate);
        ok &= kid[i] > 0 && setpgid(kid[i], kid[0]) == 0 && getpgid(kid[i]) == kid[0];
    }
    sched_setaffinity(0, sizeof old, &old);
    check(ok, "nine children made on every CPU join one new group");
    check(kill(-kid[0], SIGTERM) == 0, "kill(-pgid, SIGTERM) of that group");
    int all = 1;
    for (int i = 0; i < N; i++) {
        int st = status_of(kid[i]);
        all &= WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM;
    }
    check(all, "every member, whatever its CPU, got the signal");
    CHECK_ERR(kill(-kid[0], 0), ESRCH, "the group is gone with its last member");
    close(gate[0]);
    close(gate[1]);
}

static void test_wait_group(void)
{
    int gate[2];
    if (pipe(gate) < 0)
        return;
    pid_t x = gated_child(gate), y = gated_child(gate);
    setpgid(x, x);
    close(gate[0]);
    close(gate[1]);
    int st;
    check(waitpid(-x, &st, 0) == x, "waitpid(-pgid) waits for that group's child");
    check(waitpid(0, &st, 0) == y, "waitpid(0) waits for a child in our group");
    CHECK_ERR(waitpid(-x, &st, 0), ECHILD, "waitpid(-pgid) with no such child is ECHILD");

    if (pipe(gate) < 0)
        return;
    pid_t z = gated_child(gate);
    setpgid(z, z);
    close(gate[0]);
    close(gate[1]);
    siginfo_t si = {0};
    check(waitid(P_PGID, z, &si, WEXITED) == 0 && si.si_pid == z, "waitid(P_PGID)");
}

// ---- orphaned groups ---------------------------------------------------------------

static int orphan_report[2];
static void orphan_sig(int sig)
{
    char c = sig == SIGHUP ? 'H' : 'C';
    write(orphan_report[1], &c, 1);
}

// A byte from fd within 30 s (a loaded host), or 0.
static char read_within(int fd)
{
    struct pollfd pf = {fd, POLLIN, 0};
    char c = 0;
    if (poll(&pf, 1, 30000) == 1 && read(fd, &c, 1) != 1)
        c = 0;
    return c;
}

// A group whose last link to its session goes away (the member's parent in the
// session but another group exits) while a member is stopped gets SIGHUP, then
// SIGCONT. All in a session of its own, so that whatever adopts orphans (init,
// or a subreaper on Linux) is outside it.
static void test_orphaned_stopped_group(void)
{
    pipe(orphan_report);
    pid_t leader = fork();
    if (leader == 0) {
        setsid();
        pid_t mid = fork();
        if (mid == 0) {
            setpgid(0, 0); // attached through the leader: same session, other group
            pid_t stopper = fork();
            if (stopper == 0) {
                signal(SIGHUP, orphan_sig);
                signal(SIGCONT, orphan_sig);
                pid_t me = getpid();
                write(orphan_report[1], &me, sizeof me);
                raise(SIGSTOP);
                _exit(0);
            }
            int st;
            waitpid(stopper, &st, WUNTRACED);
            _exit(WIFSTOPPED(st) ? 0 : 1); // leaves the group orphaned, one member stopped
        }
        int st;
        waitpid(mid, &st, 0);
        _exit(WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1);
    }
    close(orphan_report[1]);
    pid_t stopper = 0;
    read(orphan_report[0], &stopper, sizeof stopper);
    int st;
    bool set_up = waitpid(leader, &st, 0) == leader && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    char a = read_within(orphan_report[0]), b = a ? read_within(orphan_report[0]) : 0;
    check(set_up && ((a == 'H' && b == 'C') || (a == 'C' && b == 'H')),
          "a group orphaned with a stopped member gets SIGHUP and SIGCONT");
    if (!a && stopper > 0)
        kill(stopper, SIGKILL); // still stopped: nobody else will
    close(orphan_report[0]);
}

// The terminal's stop signals (SIGTSTP, SIGTTIN, SIGTTOU) are discarded in an
// orphaned group; in a group attached to its session they stop it.
static void test_orphaned_stops_discarded(void)
{
    for (int orphan = 1; orphan >= 0; orphan--) {
        pid_t pid = fork();
        if (pid == 0) {
            if (orphan)
                setsid(); // its group's only member's parent is in another session
            else
                setpgid(0, 0); // its parent, in this session, is in another group
            raise(SIGTSTP);
            raise(SIGTTIN);
            raise(SIGTTOU);
            _exit(0);
        }
        int st;
        waitpid(pid, &st, WUNTRACED);
        bool stopped = WIFSTOPPED(st);
        if (stopped) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
        }
        if (orphan)
            check(!stopped && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "SIGTSTP, SIGTTIN and SIGTTOU are discarded in an orphaned group");
        else
            check(stopped && WSTOPSIG(st) == SIGTSTP, "... and stop a group that is not orphaned");
    }
}


int main(int argc, char **argv)
{
    (void)argc;
    const char *slash = strrchr(argv[0], '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - argv[0]), argv[0]);
    setvbuf(stdout, NULL, _IONBF, 0); // children must not repeat buffered lines
    pid_t pid = fork();
    if (pid == 0) {
        test_ids();
        test_setpgid_setsid();
        test_kill_group();
        test_group_across_cpus();
        test_wait_group();
        test_orphaned_stopped_group();
        test_orphaned_stops_discarded();
        exit(suite_end());
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
        printf("not ok - the suite's child died\n1 passed, 1 failed\n");
        return 1;
    }
    return WEXITSTATUS(st);
}
