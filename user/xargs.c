// xargs [-0rt] [-n max] [-I repl] [command [arg...]]: run command (echo if
// none) with its args followed by words read from standard input, as many at a
// time as fit, as often as it takes.
//
// Words are separated by blanks and newlines; '...' and "..." quote (on one
// line) and \ escapes the next character. With -0 a word ends at a NUL and
// nothing else is special (find -print0 | xargs -0). -n max: at most max words
// a run. -I repl: one run per input line (leading blanks dropped), every repl
// inside an arg replaced by the line. -r: no run at all for empty input
// (otherwise the command runs once). -t: print each command on standard
// error before running it. A run's standard input is /dev/null.
//
// Exit status (POSIX's): 0; 123 if a run exited 1-125; 124 if one exited 255
// (xargs stops); 125 if one was killed by a signal (stops); 126 if the command
// cannot be run, 127 if it is not found; 1 for a bad word or option.
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { MAX_WORDS = 1024 };       // our kernel takes 1024 args, 64 KiB with the environment
static const size_t MAX_BYTES = 32 * 1024;  // of one run's arg strings and pointers

static int opt_0, opt_r, opt_t, max_words = MAX_WORDS;
static const char *repl;
static int status;               // xargs's own exit status so far

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "xargs: out of memory\n");
        exit(1);
    }
    return p;
}

// ---- reading words ----------------------------------------------------------------

struct word { char *s; size_t len, cap; };

static void put(struct word *w, int c)
{
    if (w->len + 2 > w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        char *s = realloc(w->s, w->cap);
        if (!s) {
            fprintf(stderr, "xargs: out of memory\n");
            exit(1);
        }
        w->s = s;
    }
    w->s[w->len++] = (char)c;
    w->s[w->len] = 0;
}

static int blank(int c) { return c == ' ' || c == '\t' || c == '\n'; }

// The next word of standard input, in a new string; NULL at its end, or on a
// quote that is not closed on its line (status 1).
static char *read_word(void)
{
    struct word w = {0};
    int c;
    if (opt_0) {
        while ((c = getchar()) != EOF && c != 0)
            put(&w, c);
        if (c == EOF && !w.len)
            return NULL;
        put(&w, 0);
        w.len--;
        return w.s;
    }
    while ((c = getchar()) != EOF && blank(c))
        ;
    if (c == EOF)
        return NULL;
    // LAB find BEGIN
    for (; c != EOF && !blank(c); c = getchar()) {
        if (c == '\\') {
            if ((c = getchar()) == EOF)
                break;
            put(&w, c);
        } else if (c == '\'' || c == '"') {
            int quote = c;
            while ((c = getchar()) != quote) {
                if (c == EOF || c == '\n') {
                    fprintf(stderr, "xargs: unmatched %s quote\n",
                            quote == '"' ? "double" : "single");
                    status = 1;
                    free(w.s);
                    return NULL;
                }
                put(&w, c);
            }
            put(&w, 0);          // "" is a word, though empty
            w.len--;
        } else {
            put(&w, c);
        }
    }
    // LAB find SKELETON
    // // TODO (labs/find): quotes and backslashes; this takes blanks only.
    // for (; c != EOF && !blank(c); c = getchar())
    //     put(&w, c);
    // LAB find END
    return w.s;
}

// The next line without its leading blanks (-I); NULL at the end of input.
static char *read_line(void)
{
    struct word w = {0};
    int c;
    while ((c = getchar()) == ' ' || c == '\t')
        ;
    for (; c != EOF && c != '\n'; c = getchar())
        put(&w, c);
    if (c == EOF && !w.s)
        return NULL;
    if (!w.s)
        put(&w, 0);
    return w.s;
}

// ---- running the command ----------------------------------------------------------

static void trace(char **argv)
{
    for (int i = 0; argv[i]; i++)
        fprintf(stderr, "%s%s", i ? " " : "", argv[i]);
    fputc('\n', stderr);
}

// Run argv with standard input from /dev/null and wait for it; fold its
// outcome into status. Returns 0 to go on, -1 to stop.
static int run(char **argv)
{
    if (opt_t)
        trace(argv);
    fflush(stdout);
    // LAB find BEGIN
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err) {
        fprintf(stderr, "xargs: %s: %s\n", argv[0], strerror(err));
        status = err == ENOENT ? 127 : 126;
        return -1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "xargs: waitpid: %s\n", strerror(errno));
            status = 1;
            return -1;
        }
    if (WIFSIGNALED(st)) {
        fprintf(stderr, "xargs: %s: terminated by signal %d\n", argv[0], WTERMSIG(st));
        status = 125;
        return -1;
    }
    if (WEXITSTATUS(st) == 255) {
        fprintf(stderr, "xargs: %s: exited with status 255; aborting\n", argv[0]);
        status = 124;
        return -1;
    }
    if (WEXITSTATUS(st) != 0)
        status = 123;
    return 0;
    // LAB find SKELETON
    // // TODO (labs/find): run argv (posix_spawnp; standard input /dev/null),
    // // wait for it and set status as the comment at the top says.
    // fprintf(stderr, "xargs: %s: running commands is not written yet\n", argv[0]);
    // status = 126;
    // return -1;
    // LAB find END
}

// ---- the two ways of building commands -------------------------------------------

// The initial args with repl replaced by line in each, then run.
static int run_replaced(char **cmd, int ncmd, const char *line)
{
    char *argv[ncmd + 1];
    size_t rlen = strlen(repl), llen = strlen(line);
    for (int i = 0; i < ncmd; i++) {
        size_t n = 0;
        for (const char *p = cmd[i]; (p = strstr(p, repl)) != NULL; p += rlen)
            n++;
        char *s = argv[i] = xmalloc(strlen(cmd[i]) + n * llen + 1), *o = s;
        for (const char *p = cmd[i], *q; *p; p = q + rlen) {
            if (!rlen || !(q = strstr(p, repl))) {
                o = stpcpy(o, p);
                break;
            }
            memcpy(o, p, (size_t)(q - p));
            o = stpcpy(o + (q - p), line);
        }
        *o = 0;
    }
    argv[ncmd] = NULL;
    int r = run(argv);
    for (int i = 0; i < ncmd; i++)
        free(argv[i]);
    return r;
}

static int xargs_replace(char **cmd, int ncmd)
{
    char *line;
    while ((line = read_line()) != NULL) {
        int r = run_replaced(cmd, ncmd, line);
        free(line);
        if (r < 0)
            return -1;
    }
    return 0;
}

// Fill argv after the ncmd initial args with words until max_words or
// MAX_BYTES, run, and again until the input ends.
static int xargs_words(char **cmd, int ncmd)
{
    char **argv = xmalloc((size_t)(ncmd + max_words + 1) * sizeof *argv);
    memcpy(argv, cmd, (size_t)ncmd * sizeof *argv);
    size_t base = 0;
    for (int i = 0; i < ncmd; i++)
        base += strlen(cmd[i]) + 1 + sizeof(char *);
    char *next = read_word();
    int runs = 0;
    while (next || (runs == 0 && !opt_r && status == 0)) {
        int n = ncmd;
        size_t bytes = base;
        while (next && n - ncmd < max_words) {
            size_t len = strlen(next) + 1 + sizeof(char *);
            if (n > ncmd && bytes + len > MAX_BYTES)
                break;
            if (base + len > MAX_BYTES) {
                fprintf(stderr, "xargs: argument list too long\n");
                status = 1;
                return -1;
            }
            argv[n++] = next;
            bytes += len;
            next = read_word();
        }
        argv[n] = NULL;
        runs++;
        int r = run(argv);
        for (int i = ncmd; i < n; i++)
            free(argv[i]);
        if (r < 0)
            return -1;
    }
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: xargs [-0rt] [-n max] [-I repl] [command [arg...]]\n");
    return 1;
}

int main(int argc, char **argv)
{
    int c;
    while ((c = getopt(argc, argv, "+0rtn:I:")) != -1) {
        switch (c) {
        case '0': opt_0 = 1; break;
        case 'r': opt_r = 1; break;
        case 't': opt_t = 1; break;
        case 'I': repl = optarg; break;
        case 'n':
            max_words = atoi(optarg);
            if (max_words < 1 || max_words > MAX_WORDS)
                return usage();
            break;
        default:
            return usage();
        }
    }
    static char *echo[] = {"echo", NULL};
    char **cmd = optind < argc ? argv + optind : echo;
    int ncmd = optind < argc ? argc - optind : 1;
    if (repl)
        xargs_replace(cmd, ncmd);
    else
        xargs_words(cmd, ncmd);
    return status;
}
