// poll, ppoll, select and pselect6 over pipes, regular files and a terminal:
// readiness, hang-up and error bits, waking when a writer writes or closes,
// timeouts, the signal mask of ppoll/pselect6, waits that a stop and continue
// do not end (nanosleep and pause too), and errno on bad input. Runs in
// our guest and on the Linux host (the terminal: the console in our guest, a
// pseudo-terminal on Linux).
#include "suite.h"
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#define NR_ppoll 271
#define TIOCSPTLCK 0x40045431
#define TIOCGPTN 0x80045430

static short revents(int fd, short events, int timeout)
{
    struct pollfd p = {fd, events, 0x7777};
    int n = poll(&p, 1, timeout);
    return n == 1 ? p.revents : n == 0 ? 0 : -1;
}

// A child that waits a moment (so that we are likely asleep in poll by then),
// then writes a byte to fd, or closes it; the pid.
static pid_t later(int fd, bool close_it, int other)
{
    pid_t pid = fork();
    if (pid == 0) {
        close(other);
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if (!close_it)
            write(fd, "x", 1);
        _exit(0);
    }
    return pid;
}

static void test_pipes(void)
{
    int p[2];
    pipe(p);
    check(revents(p[0], POLLIN, 0) == 0, "poll: an empty pipe is not readable");
    check(revents(p[1], POLLOUT, 0) == (POLLOUT), "poll: its write end is writable");
    check(revents(p[0], POLLIN | POLLOUT, 0) == 0, "poll: the read end is never writable");
    write(p[1], "a", 1);
    check(revents(p[0], POLLIN | POLLRDNORM, 0) == (POLLIN | POLLRDNORM), "poll: with data, readable");
    char c;
    read(p[0], &c, 1);

    pid_t pid = later(p[1], false, p[0]);
    check(revents(p[0], POLLIN, 10000) == POLLIN, "poll sleeps until a writer writes");
    waitpid(pid, NULL, 0);
    read(p[0], &c, 1);

    pid = later(p[1], true, p[0]);
    close(p[1]); // the child's copy is the last writer
    check(revents(p[0], POLLIN, 10000) == POLLHUP, "poll sleeps until the last writer closes: POLLHUP");
    waitpid(pid, NULL, 0);
    close(p[0]);

    pipe(p);
    close(p[0]);
    check(revents(p[1], POLLOUT, 0) == (POLLOUT | POLLERR), "poll: no reader left: POLLERR");
    check(revents(p[1], 0, 0) == POLLERR, "POLLERR counts even when not asked for");
    close(p[1]);

    pipe(p);
    check(revents(p[0], POLLIN, 30) == 0, "poll: a timeout with nothing ready returns 0");
    close(p[0]);
    close(p[1]);
}

static void test_poll_errors(void)
{
    int fd = open("f", O_RDWR | O_CREAT, 0644);
    check(revents(fd, POLLIN | POLLOUT, 0) == (POLLIN | POLLOUT), "poll: a regular file is always ready");
    struct pollfd ps[3] = {{fd, POLLIN, 0}, {-1, POLLIN, 0x55}, {999, POLLIN, 0}};
    int n = poll(ps, 3, 0);
    check(n == 2 && ps[0].revents == POLLIN && ps[1].revents == 0 && ps[2].revents == POLLNVAL,
          "poll: a negative fd is skipped, a closed one is POLLNVAL");
    CHECK_ERR(poll(NULL, 1, 0), EFAULT, "poll(NULL, 1) is EFAULT");
    CHECK_ERR(poll(ps, 1 << 30, 0), EINVAL, "poll: more fds than RLIMIT_NOFILE is EINVAL");
    check(poll(NULL, 0, 0) == 0, "poll of nothing with timeout 0 returns 0");
    struct timespec bad = {0, 1000000000};
    CHECK_ERR(syscall(NR_ppoll, ps, 1, &bad, NULL, 8), EINVAL, "ppoll: tv_nsec 1e9 is EINVAL");
    sigset_t m;
    sigemptyset(&m);
    struct timespec zero = {0, 0};
    CHECK_ERR(syscall(NR_ppoll, ps, 1, &zero, &m, 4), EINVAL, "ppoll: a sigset of 4 bytes is EINVAL");
    check(syscall(NR_ppoll, ps, 1, &zero, &m, 8) == 1, "ppoll with a mask and timeout 0");
    close(fd);
}

static void test_select(void)
{
    int p[2];
    pipe(p);
    fd_set r, w;
    FD_ZERO(&r);
    FD_ZERO(&w);
    FD_SET(p[0], &r);
    FD_SET(p[1], &w);
    struct timeval tv = {0, 0};
    int n = select(p[1] + 1, &r, &w, NULL, &tv);
    check(n == 1 && !FD_ISSET(p[0], &r) && FD_ISSET(p[1], &w), "select: the write end only");
    write(p[1], "a", 1);
    FD_SET(p[0], &r);
    FD_SET(p[1], &w);
    n = select(p[1] + 1, &r, &w, NULL, &tv);
    check(n == 2 && FD_ISSET(p[0], &r) && FD_ISSET(p[1], &w), "select: both ends, counted once each");
    char c;
    read(p[0], &c, 1);

    pid_t pid = later(p[1], false, p[0]);
    FD_ZERO(&r);
    FD_SET(p[0], &r);
    tv = (struct timeval){10, 0};
    n = select(p[0] + 1, &r, NULL, NULL, &tv);
    check(n == 1 && FD_ISSET(p[0], &r), "select sleeps until a writer writes");
    check(tv.tv_sec < 10 || (tv.tv_sec == 10 && tv.tv_usec == 0), "select writes back the time left");
    waitpid(pid, NULL, 0);
    read(p[0], &c, 1);

    FD_ZERO(&r);
    FD_SET(p[0], &r);
    tv = (struct timeval){0, 20000};
    n = select(p[0] + 1, &r, NULL, NULL, &tv);
    check(n == 0 && !FD_ISSET(p[0], &r) && tv.tv_sec == 0 && tv.tv_usec == 0,
          "select: a timeout clears the sets and the time left");

    // (A closed fd below the others: Linux ignores fds past its table's size.)
    int closed = dup(p[0]);
    close(closed);
    FD_ZERO(&r);
    FD_SET(closed, &r);
    tv = (struct timeval){0, 0};
    CHECK_ERR(select(closed + 1, &r, NULL, NULL, &tv), EBADF, "select of a closed fd is EBADF");
    CHECK_ERR(select(-1, NULL, NULL, NULL, &tv), EINVAL, "select with nfds -1 is EINVAL");
    tv = (struct timeval){-1, 0};
    CHECK_ERR(select(0, NULL, NULL, NULL, &tv), EINVAL, "select with a negative timeout is EINVAL");
    CHECK_ERR(select(p[0] + 1, (fd_set *)8, NULL, NULL, NULL), EFAULT, "select of a bad set is EFAULT");
    close(p[0]);
    close(p[1]);
}

static volatile int hits;
static void on_usr1(int sig) { (void)sig, hits++; }

// The mask given to ppoll/pselect6 holds while they wait, and the old one
// comes back after the handler.
static void test_masks(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t block, none, now;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigemptyset(&none);
    sigprocmask(SIG_BLOCK, &block, NULL);
    int p[2];
    pipe(p);
    struct pollfd pf = {p[0], POLLIN, 0};

    hits = 0;
    kill(getpid(), SIGUSR1); // pending, blocked
    errno = 0;
    long r = syscall(NR_ppoll, &pf, 1, NULL, &none, 8);
    sigprocmask(SIG_BLOCK, NULL, &now);
    check(r == -1 && errno == EINTR && hits == 1, "ppoll: its mask lets a pending signal in: EINTR");
    check(sigismember(&now, SIGUSR1), "... and the old mask is back after the handler");

    hits = 0;
    kill(getpid(), SIGUSR1);
    fd_set rs;
    FD_ZERO(&rs);
    FD_SET(p[0], &rs);
    errno = 0;
    r = pselect(p[0] + 1, &rs, NULL, NULL, NULL, &none);
    sigprocmask(SIG_BLOCK, NULL, &now);
    check(r == -1 && errno == EINTR && hits == 1 && sigismember(&now, SIGUSR1),
          "pselect: the same, and the old mask is back");

    struct timespec zero = {0, 0};
    check(syscall(NR_ppoll, &pf, 1, &zero, &none, 8) == 0 && hits == 1,
          "ppoll that times out leaves the mask as it was");
    sigprocmask(SIG_BLOCK, NULL, &now);
    check(sigismember(&now, SIGUSR1), "... blocked");
    sigprocmask(SIG_UNBLOCK, &block, NULL);
    signal(SIGUSR1, SIG_DFL);
    close(p[0]);
    close(p[1]);
}

// ---- a stop and continue is not an interruption --------------------------------------
// A call waiting when the process is stopped and continued goes on as if nothing
// happened (Linux restarts it: poll and nanosleep until their first deadline,
// select and ppoll with the time they wrote back, pause and sigsuspend with their
// mask). Each child waits in one call and exits 0 if it ended as it should; the
// parent stops and continues it while it waits (or, if it is slow to start,
// before: then the check passes without testing much, never fails wrongly).

enum { W_POLL, W_POLL_TIMEOUT, W_SELECT_TIMEOUT, W_PPOLL, W_NANOSLEEP, W_PAUSE };

static volatile int child_hits;
static void child_usr1(int sig) { (void)sig, child_hits++; }

static int wait_in(int how, int rfd)
{
    struct pollfd pf = {rfd, POLLIN, 0};
    struct timeval tv = {0, 400 * 1000};
    struct timespec ts = {0, 400 * 1000 * 1000};
    fd_set rs;
    sigset_t none;
    sigemptyset(&none);
    switch (how) {
    case W_POLL:
        return poll(&pf, 1, -1) == 1 ? 0 : 1;
    case W_POLL_TIMEOUT:
        return poll(&pf, 1, 400) == 0 ? 0 : 1;
    case W_SELECT_TIMEOUT:
        FD_ZERO(&rs);
        FD_SET(rfd, &rs);
        return select(rfd + 1, &rs, NULL, NULL, &tv) == 0 ? 0 : 1;
    case W_PPOLL:
        return syscall(NR_ppoll, &pf, 1, NULL, &none, 8) == 1 ? 0 : 1;
    case W_NANOSLEEP:
        return nanosleep(&ts, NULL) == 0 ? 0 : 1;
    case W_PAUSE: // only SIGUSR1, sent after the continue, may end it
        signal(SIGUSR1, child_usr1);
        return pause() == -1 && errno == EINTR && child_hits == 1 ? 0 : 1;
    }
    return 2;
}

static void stop_continue_case(int how, const char *name)
{
    int p[2];
    pipe(p);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[1]);
        _exit(wait_in(how, p[0]));
    }
    close(p[0]);
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL); // let it get into the call
    int st, ok = 1;
    kill(pid, SIGSTOP);
    ok &= waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st);
    kill(pid, SIGCONT);
    ok &= waitpid(pid, &st, WCONTINUED) == pid && WIFCONTINUED(st);
    if (how == W_POLL || how == W_PPOLL)
        write(p[1], "x", 1);
    if (how == W_PAUSE) {
        nanosleep(&ts, NULL); // had pause returned at the continue, the child is gone
        kill(pid, SIGUSR1);
    }
    ok &= waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    check(ok, name);
    close(p[1]);
}

static void test_stop_continue(void)
{
    stop_continue_case(W_POLL, "poll: a stop and continue does not end it, the write does");
    stop_continue_case(W_POLL_TIMEOUT, "poll: stopped and continued, it still times out with 0");
    stop_continue_case(W_SELECT_TIMEOUT, "select: stopped and continued, it still times out with 0");
    stop_continue_case(W_PPOLL, "ppoll: a stop and continue does not end it, the write does");
    stop_continue_case(W_NANOSLEEP, "nanosleep: stopped and continued, it sleeps on and returns 0");
    stop_continue_case(W_PAUSE, "pause: stopped and continued, it waits for a handled signal");

    // A handler ends poll with EINTR even under SA_RESTART (Linux never restarts it).
    int p[2];
    pipe(p);
    pid_t pid = fork();
    if (pid == 0) {
        struct sigaction sa = {0};
        sa.sa_handler = child_usr1;
        sa.sa_flags = SA_RESTART;
        sigaction(SIGUSR1, &sa, NULL);
        close(p[1]);
        struct pollfd pf = {p[0], POLLIN, 0};
        int r = poll(&pf, 1, 5000);
        _exit(r == -1 && errno == EINTR && child_hits == 1 ? 0 : 1);
    }
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    kill(pid, SIGUSR1);
    int st;
    check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "poll: a handler ends it with EINTR, SA_RESTART or not");
    close(p[0]);
    close(p[1]);
}

static void test_terminal(void)
{
    struct utsname u;
    int fd;
    if (uname(&u) == 0 && strstr(u.release, "scalable")) {
        fd = open("/dev/console", O_RDWR | O_NOCTTY);
    } else {
        int unlock = 0, n;
        int m = open("/dev/ptmx", O_RDWR | O_NOCTTY);
        char path[64];
        if (m < 0 || ioctl(m, TIOCSPTLCK, &unlock) != 0 || ioctl(m, TIOCGPTN, &n) != 0) {
            check(1, "terminal # skip: no pseudo-terminals");
            return;
        }
        snprintf(path, sizeof path, "/dev/pts/%d", n);
        fd = open(path, O_RDWR | O_NOCTTY);
    }
    check(fd >= 0 && revents(fd, POLLOUT, 0) == POLLOUT, "poll: a terminal is writable");
    check(revents(fd, POLLIN, 0) == 0, "poll: a terminal without input is not readable");
    close(fd);
}

int main(void)
{
    if (enter_scratch("poll") != 0)
        return 1;
    fflush(stdout);
    test_pipes();
    test_poll_errors();
    test_select();
    test_masks();
    test_stop_continue();
    test_terminal();
    return suite_end();
}
