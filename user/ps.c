// ps: list every process from /proc, one line each: pid, parent, state, CPU
// time (user + system), and the command line (the name in brackets when it
// has none). Works on Linux's /proc as on ours.
//   ps        PID PPID S TIME COMMAND, by pid
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slurp.h"

struct pinfo {
    int pid, ppid;
    char state;
    unsigned long ticks; // utime + stime
    char cmd[256];
};

// /proc/PID/stat: "pid (comm) state ppid ...", comm may hold spaces and
// parentheses, so it ends at the last ')'. Fields 14 and 15 are utime, stime.
static int read_stat(int pid, struct pinfo *p)
{
    char path[64], buf[1024], comm[64];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    if (slurp(path, buf, sizeof buf) <= 0)
        return -1;
    char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
    if (!open_paren || !close_paren || close_paren < open_paren)
        return -1;
    size_t n = (size_t)(close_paren - open_paren - 1);
    n = n < sizeof comm - 1 ? n : sizeof comm - 1;
    memcpy(comm, open_paren + 1, n);
    comm[n] = 0;
    unsigned long ut = 0, st = 0;
    if (sscanf(close_paren + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &p->state,
               &p->ppid, &ut, &st) != 4)
        return -1;
    p->pid = pid;
    p->ticks = ut + st;
    snprintf(p->cmd, sizeof p->cmd, "[%s]", comm);
    return 0;
}

// The command line, arguments separated by spaces; left as [comm] if empty.
static void read_cmdline(struct pinfo *p)
{
    char path[64], buf[sizeof p->cmd];
    snprintf(path, sizeof path, "/proc/%d/cmdline", p->pid);
    long n = slurp(path, buf, sizeof buf);
    if (n <= 0)
        return;
    while (n > 0 && buf[n - 1] == 0)
        n--;
    for (long i = 0; i < n; i++)
        if (buf[i] == 0)
            buf[i] = ' ';
    buf[n] = 0;
    memcpy(p->cmd, buf, (size_t)n + 1);
}

static int by_pid(const void *a, const void *b)
{
    int x = ((const struct pinfo *)a)->pid, y = ((const struct pinfo *)b)->pid;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "usage: ps\n");
        return 2;
    }
    DIR *d = opendir("/proc");
    if (!d) {
        perror("ps: /proc");
        return 1;
    }
    struct pinfo *ps = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            struct pinfo *np = realloc(ps, cap * sizeof *ps);
            if (!np) {
                fprintf(stderr, "ps: out of memory\n");
                return 1;
            }
            ps = np;
        }
        if (read_stat((int)pid, &ps[n]) == 0) // else it exited meanwhile
            read_cmdline(&ps[n++]);
    }
    closedir(d);
    qsort(ps, n, sizeof *ps, by_pid);
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0)
        hz = 100;
    printf("%8s %8s S     TIME COMMAND\n", "PID", "PPID");
    for (size_t i = 0; i < n; i++) {
        unsigned long s = ps[i].ticks / (unsigned long)hz;
        printf("%8d %8d %c %2lu:%02lu:%02lu %s\n", ps[i].pid, ps[i].ppid, ps[i].state, s / 3600,
               s / 60 % 60, s % 60, ps[i].cmd);
    }
    free(ps);
    return 0;
}
