// Started as the system's init by tests/kernel/init_test.c. With no argument:
// a child tries every way user space has to kill or stop init (kill of its
// pid, of its group, of the caller's group, tkill, tgkill; SIGKILL, SIGSTOP,
// SIGTERM, SIGINT), then sends SIGUSR1, which init has a handler for, and ends
// with kill(0, SIGKILL), which kills the child itself. Init must survive it
// all and see the SIGUSR1. Exit status: 0 if so, else one bit per failed
// check. With "wait": wait for a signal forever (the kernel's SIGKILL).
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
    (void)sig;
    usr1 = 1;
}

static void child(pid_t init)
{
    signal(SIGTERM, SIG_IGN); // the group-wide sends below must not end us early
    signal(SIGINT, SIG_IGN);
    kill(init, SIGKILL);
    kill(init, SIGSTOP);
    kill(init, SIGTERM);
    syscall(SYS_tkill, init, SIGKILL);
    syscall(SYS_tgkill, init, init, SIGKILL);
    syscall(SYS_tgkill, init, init, SIGSTOP);
    kill(0, SIGTERM);
    kill(-getpgrp(), SIGINT);
    kill(init, SIGUSR1);
    kill(0, SIGKILL); // init's group, us included
    _exit(1);         // not reached
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "wait") == 0) {
        for (;;)
            pause();
    }
    signal(SIGUSR1, on_usr1);
    pid_t me = getpid(), pid = fork();
    if (pid < 0)
        return 64;
    if (pid == 0)
        child(me);
    int st = 0, bad = 0;
    if (waitpid(pid, &st, 0) != pid)
        bad |= 1;
    else if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
        bad |= 2; // the child's own kill(0, SIGKILL) did not reach the group
    getpid(); // one more return to user mode: anything pending is delivered
    if (!usr1)
        bad |= 4; // a signal init handles must still reach it
    return bad;
}
