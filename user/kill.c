// kill [-SIGNAL | -s SIGNAL] pid...: send a signal (default TERM); kill -l lists names.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *name; int sig; } sigs[] = {
    {"HUP", SIGHUP}, {"INT", SIGINT}, {"QUIT", SIGQUIT}, {"ILL", SIGILL},
    {"TRAP", SIGTRAP}, {"ABRT", SIGABRT}, {"BUS", SIGBUS}, {"FPE", SIGFPE},
    {"KILL", SIGKILL}, {"USR1", SIGUSR1}, {"SEGV", SIGSEGV}, {"USR2", SIGUSR2},
    {"PIPE", SIGPIPE}, {"ALRM", SIGALRM}, {"TERM", SIGTERM}, {"CHLD", SIGCHLD},
    {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN},
    {"TTOU", SIGTTOU},
};
#define NSIGS (sizeof sigs / sizeof sigs[0])

// A signal by number or name (with or without SIG); -1 if unknown.
static int parse_signal(const char *s)
{
    char *end;
    long n = strtol(s, &end, 10);
    if (*s && !*end)
        return n >= 0 && n < 65 ? (int)n : -1;
    if (strncmp(s, "SIG", 3) == 0)
        s += 3;
    for (size_t i = 0; i < NSIGS; i++)
        if (strcmp(s, sigs[i].name) == 0)
            return sigs[i].sig;
    return -1;
}

int main(int argc, char **argv)
{
    int sig = SIGTERM, i = 1;
    if (i < argc && strcmp(argv[i], "-l") == 0) {
        for (size_t k = 0; k < NSIGS; k++)
            printf("%d %s\n", sigs[k].sig, sigs[k].name);
        return 0;
    }
    if (i < argc && argv[i][0] == '-' && argv[i][1] && strcmp(argv[i], "--") != 0) {
        const char *name = argv[i] + 1;
        if (strcmp(argv[i], "-s") == 0)
            name = ++i < argc ? argv[i] : "";
        sig = parse_signal(name);
        if (sig < 0) {
            fprintf(stderr, "kill: %s: invalid signal\n", name);
            return 2;
        }
        i++;
    } else if (i < argc && strcmp(argv[i], "--") == 0) {
        i++;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: kill [-SIGNAL | -s SIGNAL] pid...\n");
        return 2;
    }
    int status = 0;
    for (; i < argc; i++) {
        char *end;
        long pid = strtol(argv[i], &end, 10);
        if (!*argv[i] || *end) {
            fprintf(stderr, "kill: %s: not a process id\n", argv[i]);
            status = 1;
        } else if (kill((pid_t)pid, sig) < 0) {
            fprintf(stderr, "kill: %s: %s\n", argv[i], strerror(errno));
            status = 1;
        }
    }
    return status;
}
