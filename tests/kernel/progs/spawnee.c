// Run by the posix_spawn suite (tests/user/spawn.c): checks one thing about the
// state it was started in and exits 0 if it holds, 1 if not.
//   spawnee closed N        fd N is not open
//   spawnee reads N TEXT    fd N is open and reads TEXT from its start
//   spawnee cwd NAME        the cwd's last component is NAME
//   spawnee blocked SIG     SIG is blocked (unblocked SIG: not blocked)
//   spawnee dfl SIG         SIG's action is SIG_DFL (ign SIG: SIG_IGN)
//   spawnee leader          it leads its process group (getpgrp() == getpid())
//   spawnee wait            reads fd 0 until end of file (tests/user/pgrp.c)
//   spawnee pause           waits for a signal to end it (tests/kernel/tty_test.c)
//   spawnee ready           writes one byte to fd 1, then waits for a signal to
//                           end it: it runs, so its exec is over (tests/user/txtbsy.c)
//   spawnee forkpause       forks a child that pauses until killed, writes its
//                           pid to fd 1 and exits (tests/user/txtbsy.c)
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int check(int argc, char **argv)
{
    const char *what = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(what, "closed"))
        return fcntl(n, F_GETFD) == -1;
    if (!strcmp(what, "reads") && argc > 3) {
        char buf[64] = {0};
        ssize_t r = pread(n, buf, sizeof buf - 1, 0);
        return r >= 0 && strcmp(buf, argv[3]) == 0;
    }
    if (!strcmp(what, "cwd") && argc > 2) {
        char buf[256];
        if (!getcwd(buf, sizeof buf))
            return 0;
        const char *s = strrchr(buf, '/');
        return s && strcmp(s + 1, argv[2]) == 0;
    }
    if (!strcmp(what, "blocked") || !strcmp(what, "unblocked")) {
        sigset_t m;
        sigprocmask(SIG_BLOCK, NULL, &m);
        return sigismember(&m, n) == (what[0] == 'b');
    }
    if (!strcmp(what, "dfl") || !strcmp(what, "ign")) {
        struct sigaction sa;
        sigaction(n, NULL, &sa);
        return sa.sa_handler == (what[0] == 'd' ? SIG_DFL : SIG_IGN);
    }
    if (!strcmp(what, "wait")) {
        char c;
        while (read(0, &c, 1) > 0)
            ;
        return 1;
    }
    if (!strcmp(what, "forkpause")) {
        pid_t pid = fork();
        if (pid == 0)
            for (;;)
                pause();
        return pid > 0 && write(1, &pid, sizeof pid) == sizeof pid;
    }
    if (!strcmp(what, "ready"))
        what = write(1, "r", 1) == 1 ? "pause" : "failed";
    if (!strcmp(what, "pause")) {
        for (;;)
            pause();
    }
    if (!strcmp(what, "leader"))
        return getpgrp() == getpid();
    return 0;
}

int main(int argc, char **argv)
{
    return argc >= 2 && check(argc, argv) ? 0 : 1;
}
