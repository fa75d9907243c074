// Job control on a controlling terminal: SIGTTIN for a background read (EIO
// if SIGTTIN is ignored), SIGTTOU for background terminal settings and, with
// TOSTOP, background writes; EIO instead of those stops in an orphaned group;
// SIGHUP to the foreground group when the session
// leader exits. On Linux the terminal is a fresh pseudo-terminal; on our
// kernel, which has none, the console (the harness runs one suite at a time,
// and the suites' own output goes elsewhere).
#include "suite.h"
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>

#define TIOCGPTN 0x80045430
#define TIOCSPTLCK 0x40045431

static char term_path[64];
static int master = -1;

// The terminal the children will open as their controlling terminal.
static int find_terminal(void)
{
    struct utsname u;
    if (uname(&u) == 0 && strstr(u.release, "scalable")) {
        strcpy(term_path, "/dev/console");
        return 0;
    }
    int unlock = 0, n;
    master = open("/dev/ptmx", O_RDWR | O_NOCTTY);
    if (master < 0 || ioctl(master, TIOCSPTLCK, &unlock) != 0 || ioctl(master, TIOCGPTN, &n) != 0)
        return -1;
    snprintf(term_path, sizeof term_path, "/dev/pts/%d", n);
    return 0;
}

// In a new session: open the terminal, which becomes ours, with our group in
// the foreground. The fd, or -1.
static int new_session_with_terminal(void)
{
    if (setsid() < 0)
        return -1;
    int fd = open(term_path, O_RDWR);
    if (fd < 0 || tcgetpgrp(fd) != getpid())
        return -1;
    return fd;
}

// A child in a background group of our session that does op on fd; how it ended.
enum op { READ, READ_IGNORING, SET_ATTR, WRITE };

static int background(int fd, enum op op)
{
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        char c = 'x';
        struct termios tio;
        tcgetattr(fd, &tio);
        // Job control comes before O_NONBLOCK's EAGAIN: a kernel without it
        // fails the read case at once instead of waiting for input.
        fcntl(fd, F_SETFL, O_NONBLOCK);
        switch (op) {
        case READ:
            read(fd, &c, 1);
            break;
        case READ_IGNORING:
            signal(SIGTTIN, SIG_IGN);
            _exit(read(fd, &c, 1) == -1 && errno == EIO ? 3 : 4);
        case SET_ATTR:
            tcsetattr(fd, TCSANOW, &tio);
            break;
        case WRITE:
            write(fd, &c, 1);
            break;
        }
        _exit(5);
    }
    setpgid(pid, pid); // either of us may do it first
    int st = 0;
    waitpid(pid, &st, WUNTRACED);
    if (WIFSTOPPED(st)) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    return st;
}

// A background group of the session that is orphaned (its member's parent in
// the session has exited) gets EIO where a stop would come: nobody could
// continue it. The member reports through a pipe (it is not our child then).
static int orphaned_background(int fd)
{
    int rep[2];
    pipe(rep);
    pid_t mid = fork();
    if (mid == 0) {
        setpgid(0, 0);
        pid_t parent = getpid();
        if (fork() == 0) {
            while (getppid() == parent) // until its parent is gone
                usleep(10000);
            char c = 'x', r = 0;
            struct termios tio;
            tcgetattr(fd, &tio);
            fcntl(fd, F_SETFL, O_NONBLOCK);
            if (read(fd, &c, 1) == -1 && errno == EIO)
                r |= 1;
            if (tcsetattr(fd, TCSANOW, &tio) == -1 && errno == EIO)
                r |= 2;
            r += '0';
            write(rep[1], &r, 1);
            _exit(0);
        }
        _exit(0);
    }
    close(rep[1]);
    waitpid(mid, NULL, 0);
    struct pollfd pf = {rep[0], POLLIN, 0};
    char r = 0;
    if (poll(&pf, 1, 30000) != 1 || read(rep[0], &r, 1) != 1)
        r = 0; // stopped (or hung): SIGKILL to the group we made
    if (!r)
        kill(-mid, SIGKILL);
    close(rep[0]);
    return r ? r - '0' : 0;
}

// Runs in the session leader; one bit per failed check in the exit status.
static int session_checks(void)
{
    int fd = new_session_with_terminal();
    if (fd < 0)
        return 0x80;
    int fails = 0, st = background(fd, READ);
    if (!(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTIN))
        fails |= 1;
    st = background(fd, READ_IGNORING);
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 3))
        fails |= 2;
    st = background(fd, SET_ATTR);
    if (!(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTOU))
        fails |= 4;
    struct termios tio, old;
    tcgetattr(fd, &old);
    tio = old;
    tio.c_lflag |= TOSTOP;
    tcsetattr(fd, TCSANOW, &tio);
    st = background(fd, WRITE);
    if (!(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTOU))
        fails |= 8;
    tcsetattr(fd, TCSANOW, &old);
    int eio = orphaned_background(fd);
    if (!(eio & 1))
        fails |= 16;
    if (!(eio & 2))
        fails |= 32;
    return fails;
}

static void test_background(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(session_checks());
    int st = 0;
    waitpid(pid, &st, 0);
    int fails = WIFEXITED(st) ? WEXITSTATUS(st) : 0xff;
    check(!(fails & 0x80), "a session leader opens a terminal: ours, our group in front");
    check(!(fails & 1), "background read: the group is stopped by SIGTTIN");
    check(!(fails & 2), "background read ignoring SIGTTIN: EIO");
    check(!(fails & 4), "background tcsetattr: stopped by SIGTTOU");
    check(!(fails & 8), "background write with TOSTOP: stopped by SIGTTOU");
    check(!(fails & 16), "background read in an orphaned group: EIO, no stop");
    check(!(fails & 32), "background tcsetattr in an orphaned group: EIO, no stop");
}

static int report[2];

static void hup(int sig)
{
    (void)sig;
    write(report[1], "H", 1);
    _exit(0);
}

// The session leader exits: the foreground process left behind gets SIGHUP.
static void test_hangup(void)
{
    int gate[2], ready[2];
    pipe(report);
    pipe(gate);
    pipe(ready);
    pid_t leader = fork();
    if (leader == 0) {
        if (new_session_with_terminal() < 0)
            _exit(1);
        if (fork() == 0) { // in the foreground group, as its parent
            signal(SIGHUP, hup);
            write(ready[1], "R", 1);
            char c;
            read(gate[0], &c, 1); // the SIGHUP comes first, or never
            write(report[1], "N", 1);
            _exit(0);
        }
        char c;
        read(ready[0], &c, 1);
        _exit(0);
    }
    close(report[1]);
    close(ready[1]);
    int st = 0;
    waitpid(leader, &st, 0); // the SIGHUP was sent as it exited
    write(gate[1], "g", 1);
    char c = 0;
    read(report[0], &c, 1);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0 && c == 'H',
          "the session leader exits: its foreground group gets SIGHUP");
    close(report[0]);
    close(gate[0]);
    close(gate[1]);
    close(ready[0]);
}

int main(void)
{
    if (find_terminal() != 0) {
        printf("# no terminal to test with (%s): skipped\n", strerror(errno));
        check(1, "job control # skip");
        return suite_end();
    }
    fflush(stdout);
    test_background();
    test_hangup();
    return suite_end();
}
