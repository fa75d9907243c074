// Interval timers: alarm, setitimer and getitimer with ITIMER_REAL. SIGALRM
// comes once, or every interval, never before its time; alarm reports what
// was left of the previous one; bad arguments are EINVAL and EFAULT; a timer
// with no handler ends the process; fork does not pass a timer on, execve
// keeps it; a blocking read is interrupted (EINTR). Runs in our guest and on
// the Linux host.
#include "suite.h"
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#define MS 1000 // microseconds

static volatile int alarms;
static void on_alarm(int sig) { (void)sig; alarms++; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long usec(struct timeval tv) { return tv.tv_sec * 1000000L + tv.tv_usec; }

static int set_real(long value_us, long interval_us, struct itimerval *old)
{
    struct itimerval v = {{interval_us / 1000000, interval_us % 1000000},
                          {value_us / 1000000, value_us % 1000000}};
    return setitimer(ITIMER_REAL, &v, old);
}

// Waits (for at most limit seconds) until `alarms` reaches n.
static void wait_alarms(int n, double limit)
{
    double end = now_s() + limit;
    while (alarms < n && now_s() < end) {
        struct timespec ms10 = {0, 10000000};
        nanosleep(&ms10, NULL);
    }
}

static void test_one_shot(void)
{
    struct itimerval g, old;
    check(getitimer(ITIMER_REAL, &g) == 0 && usec(g.it_value) == 0 && usec(g.it_interval) == 0,
          "alarm: no timer at first");
    alarms = 0;
    double t0 = now_s();
    check(set_real(200 * MS, 0, &old) == 0 && usec(old.it_value) == 0, "alarm: setitimer 200 ms");
    check(getitimer(ITIMER_REAL, &g) == 0 && usec(g.it_value) > 0 && usec(g.it_value) <= 200 * MS &&
              usec(g.it_interval) == 0,
          "alarm: getitimer shows the time left");
    wait_alarms(1, 10);
    double took = now_s() - t0;
    check(alarms == 1 && took >= 0.19, "alarm: SIGALRM once, not before its time");
    if (took < 0.19)
        printf("# after %.3f s\n", took);
    struct timespec ms300 = {0, 300000000};
    nanosleep(&ms300, NULL);
    check(alarms == 1, "alarm: a one-shot timer fires once");
    check(getitimer(ITIMER_REAL, &g) == 0 && usec(g.it_value) == 0, "alarm: an expired timer reads 0");
}

static void test_interval(void)
{
    struct itimerval old;
    alarms = 0;
    double t0 = now_s();
    set_real(50 * MS, 50 * MS, NULL);
    wait_alarms(5, 20);
    double took = now_s() - t0;
    check(set_real(0, 0, &old) == 0 && usec(old.it_interval) == 50 * MS,
          "alarm: disarming reports the interval");
    check(alarms >= 5 && took >= 0.24, "alarm: an interval timer fires again and again");
    int seen = alarms;
    struct timespec ms200 = {0, 200000000};
    nanosleep(&ms200, NULL);
    check(alarms == seen, "alarm: a disarmed timer stays quiet");
}

static void test_alarm_call(void)
{
    check(alarm(10) == 0, "alarm: alarm(10) with none set returns 0");
    check(alarm(5) == 10, "alarm: alarm(5) returns what was left, rounded (10)");
    check(alarm(0) == 5, "alarm: alarm(0) cancels and returns 5");
    struct itimerval g;
    check(getitimer(ITIMER_REAL, &g) == 0 && usec(g.it_value) == 0, "alarm: alarm(0) left no timer");
}

static void test_errors(void)
{
    struct itimerval v = {{0, 0}, {1, 0}}, g;
    CHECK_ERR(setitimer(7, &v, NULL), EINVAL, "alarm: setitimer of timer 7: EINVAL");
    CHECK_ERR(getitimer(7, &g), EINVAL, "alarm: getitimer of timer 7: EINVAL");
    v.it_value.tv_usec = 1000000;
    CHECK_ERR(setitimer(ITIMER_REAL, &v, NULL), EINVAL, "alarm: 1,000,000 microseconds: EINVAL");
    v.it_value = (struct timeval){-1, 0};
    CHECK_ERR(setitimer(ITIMER_REAL, &v, NULL), EINVAL, "alarm: a negative time: EINVAL");
    v.it_value = (struct timeval){1, 0};
    v.it_interval.tv_usec = -1;
    CHECK_ERR(setitimer(ITIMER_REAL, &v, NULL), EINVAL, "alarm: a negative interval: EINVAL");
    CHECK_ERR(syscall(SYS_setitimer, ITIMER_REAL, KERNEL_PTR, NULL), EFAULT,
              "alarm: setitimer from a kernel address: EFAULT");
    CHECK_ERR(syscall(SYS_getitimer, ITIMER_REAL, KERNEL_PTR), EFAULT,
              "alarm: getitimer to a kernel address: EFAULT");
    CHECK_ERR(syscall(SYS_getitimer, ITIMER_REAL, unmapped_page()), EFAULT,
              "alarm: getitimer to an unmapped page: EFAULT");
    check(getitimer(ITIMER_REAL, &g) == 0 && usec(g.it_value) == 0, "alarm: failed calls set nothing");
}

// A child whose timer has no handler dies of SIGALRM; fork leaves the child
// none; execve keeps it (/bin/sleep sleeps through it, SIGALRM at its default).
static void test_processes(void)
{
    int st;
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGALRM, SIG_DFL);
        set_real(50 * MS, 0, NULL);
        sleep(3); // (without a timer: exits, and the check fails)
        _exit(0);
    }
    check(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM,
          "alarm: with no handler SIGALRM ends the process");

    set_real(10000 * MS, 0, NULL);
    pid = fork();
    if (pid == 0) {
        struct itimerval g;
        _exit(getitimer(ITIMER_REAL, &g) == 0 && usec(g.it_value) == 0 ? 0 : 1);
    }
    check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "alarm: fork does not pass the timer on");
    set_real(0, 0, NULL);

    pid = fork();
    if (pid == 0) {
        signal(SIGALRM, SIG_DFL);
        set_real(100 * MS, 0, NULL);
        execl("/bin/sleep", "sleep", "3", (char *)NULL);
        _exit(3);
    }
    check(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM,
          "alarm: execve keeps the timer");
}

static void test_eintr(void)
{
    int p[2];
    if (pipe(p) != 0) {
        check(0, "alarm: pipe");
        return;
    }
    pid_t writer = fork(); // writes after 1 s: a read that gets a byte was not interrupted
    if (writer == 0) {
        sleep(1);
        _exit(write(p[1], "x", 1) == 1 ? 0 : 1);
    }
    alarms = 0;
    set_real(50 * MS, 0, NULL);
    char c;
    errno = 0;
    long r = read(p[0], &c, 1);
    check(r == -1 && errno == EINTR && alarms == 1, "alarm: a blocking read ends with EINTR");
    waitpid(writer, NULL, 0);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    struct sigaction sa = {.sa_handler = on_alarm}; // no SA_RESTART: EINTR
    sigaction(SIGALRM, &sa, NULL);
    test_one_shot();
    test_interval();
    test_alarm_call();
    test_errors();
    test_processes();
    test_eintr();
    return suite_end();
}
