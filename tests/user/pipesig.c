// Pipes and signals: a writer with no reader gets SIGPIPE (and EPIPE when the
// signal is ignored); a read blocked on an empty pipe ends with EINTR when a
// handler without SA_RESTART runs, and goes on reading with SA_RESTART.
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include "suite.h"

static void sigpipe_default_kills(void)
{
    int p[2];
    if (pipe(p) != 0) {
        check(0, "pipe");
        return;
    }
    close(p[0]);
    pid_t pid = fork();
    if (pid == 0) {
        write(p[1], "x", 1);
        _exit(0); // not reached: SIGPIPE kills
    }
    close(p[1]);
    int st = 0;
    check(pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE,
          "a write with no reader is killed by SIGPIPE");
}

static void sigpipe_ignored_is_epipe(void)
{
    int p[2];
    pipe(p);
    close(p[0]);
    signal(SIGPIPE, SIG_IGN);
    CHECK_ERR(write(p[1], "x", 1), EPIPE, "with SIGPIPE ignored the write fails with EPIPE");
    signal(SIGPIPE, SIG_DFL);
    close(p[1]);
}

static volatile int handled;
static void on_usr1(int sig) { (void)sig; handled++; }

struct poke {
    pthread_t target;
    int fd; // if >= 0: write a byte here after the signal
};

static void *poker(void *arg)
{
    struct poke *k = arg;
    struct timespec d = {0, 50 * 1000 * 1000};
    nanosleep(&d, NULL); // let the main thread block in read
    pthread_kill(k->target, SIGUSR1);
    if (k->fd >= 0) {
        nanosleep(&d, NULL);
        write(k->fd, "y", 1);
    }
    return NULL;
}

static void blocked_read(bool restart)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigaction(SIGUSR1, &sa, NULL);
    int p[2];
    pipe(p);
    handled = 0;
    struct poke k = {pthread_self(), restart ? p[1] : -1};
    pthread_t th;
    pthread_create(&th, NULL, poker, &k);
    char c = 0;
    errno = 0;
    long r = read(p[0], &c, 1);
    int e = errno;
    pthread_join(th, NULL);
    if (restart)
        check(r == 1 && c == 'y' && handled == 1, "with SA_RESTART a blocked pipe read goes on after the handler");
    else
        check(r == -1 && e == EINTR && handled == 1, "a signal ends a blocked pipe read with EINTR");
    close(p[0]);
    close(p[1]);
    signal(SIGUSR1, SIG_DFL);
}

int main(void)
{
    sigpipe_default_kills();
    sigpipe_ignored_is_epipe();
    blocked_read(false);
    blocked_read(true);
    return suite_end();
}
