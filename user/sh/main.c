// sh: reads commands from a string (-c), a script file, or standard input
// (interactive, with a prompt, when that is a terminal), and runs them.
//   sh -c 'commands' [name [args...]]     sh [-i] [script [args...]]
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sh.h"

const char *sh_path = "/bin/sh";
bool interactive;

void sh_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    fputs("sh: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

// ---- memory -----------------------------------------------------------------
void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        sh_error("out of memory");
        exit(2);
    }
    return p;
}

char *xstrdup(const char *s)
{
    return strcpy(xmalloc(strlen(s) + 1), s);
}

// The arena: blocks of memory chained together, all freed after each command line.
struct block { struct block *next; size_t used, size; char data[]; };
static struct block *blocks;

void *arena_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!blocks || blocks->size - blocks->used < n) {
        size_t size = n > 65536 ? n : 65536;
        struct block *b = xmalloc(sizeof *b + size);
        b->next = blocks;
        b->used = 0;
        b->size = size;
        blocks = b;
    }
    void *p = blocks->data + blocks->used;
    blocks->used += n;
    return memset(p, 0, n);
}

char *arena_strndup(const char *s, size_t n)
{
    char *p = arena_alloc(n + 1);
    memcpy(p, s, n);
    return p;
}

struct arena_mark arena_mark(void)
{
    return (struct arena_mark){blocks, blocks ? blocks->used : 0};
}

void arena_release(struct arena_mark m)
{
    while (blocks && blocks != m.block) {
        struct block *b = blocks;
        blocks = b->next;
        free(b);
    }
    if (blocks)
        blocks->used = m.used;
}

void arena_reset(void)
{
    while (blocks) {
        struct block *b = blocks;
        blocks = b->next;
        free(b);
    }
}

void str_addc(struct str *b, char c)
{
    if (b->len + 2 > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 32;
        char *s = arena_alloc(cap);
        if (b->s)
            memcpy(s, b->s, b->len);
        b->s = s;
        b->cap = cap;
    }
    b->s[b->len++] = c;
    b->s[b->len] = 0;
}

void str_adds(struct str *b, const char *s)
{
    while (*s)
        str_addc(b, *s++);
    if (!b->s)
        b->s = arena_strndup("", 0);
}

void strv_add(struct strv *a, char *s)
{
    if (a->n + 2 > a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 8;
        char **v = arena_alloc(cap * sizeof *v);
        if (a->v)
            memcpy(v, a->v, a->n * sizeof *v);
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

char **strv_array(struct strv *a)
{
    if (!a->v) {
        a->v = arena_alloc(sizeof *a->v);
        a->cap = 1;
    }
    return a->v;
}

static void prompt(const char *ps);

// ---- input --------------------------------------------------------------------
// Lines from a descriptor. Standard input is read a byte at a time so that the
// programs the shell starts find the rest of it unread.
struct input {
    int fd;
    bool bytewise;
    bool edit;          // an interactive terminal: lines come from lineedit.c
    char buf[4096];
    size_t pos, len;
};

static int input_getc(struct input *in)
{
    if (in->pos == in->len) {
        ssize_t n = read(in->fd, in->buf, in->bytewise ? 1 : sizeof in->buf);
        if (n < 0 && errno == EINTR)
            return -2;
        if (n <= 0)
            return -1;
        in->pos = 0;
        in->len = (size_t)n;
    }
    return (unsigned char)in->buf[in->pos++];
}

static void line_addc(char **line, size_t *len, size_t *cap, char c)
{
    if (*len + 2 > *cap) {
        *cap = *cap ? 2 * *cap : 256;
        char *p = realloc(*line, *cap);
        if (!p) {
            sh_error("out of memory");
            exit(2);
        }
        *line = p;
    }
    (*line)[(*len)++] = c;
    (*line)[*len] = 0;
}

// Append one line (with its newline) to *line, after showing the prompt ps.
// Returns false at end of input with nothing read, an interruption (Ctrl-C)
// as *interrupted.
static bool read_line(struct input *in, const char *ps, char **line, size_t *len, size_t *cap,
                      bool *interrupted)
{
    if (in->edit) {
        char *edited;
        int r = lineedit_read(ps, &edited);
        if (r < 0)
            *interrupted = true;
        for (; r > 0 && *edited; edited++)
            line_addc(line, len, cap, *edited);
        return r != 0;
    }
    prompt(ps);
    size_t start = *len;
    for (;;) {
        int c = input_getc(in);
        if (c == -2) {
            *interrupted = true;
            return true;
        }
        if (c < 0)
            return *len > start;
        line_addc(line, len, cap, (char)c);
        if (c == '\n')
            return true;
    }
}

static void prompt(const char *ps)
{
    if (interactive) {
        fputs(ps, stderr);
        fflush(stderr);
    }
}

// Interactive shells catch Ctrl-C (a handler, not SIG_IGN, so that the
// programs they start get the default action back at exec).
static void on_sigint(int sig)
{
    (void)sig;
}

// Read and run complete commands until end of input; the status of the last.
static int run_input(struct input *in)
{
    char *line = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (interactive)
            while (waitpid(-1, NULL, WNOHANG) > 0)   // finished background jobs
                ;
        const char *ps = len ? "> " : var_get("PS1") ? var_get("PS1") : "$ ";
        bool interrupted = false;
        if (!read_line(in, ps, &line, &len, &cap, &interrupted)) {
            if (len)
                sh_error("syntax error: unexpected end of file");
            break;
        }
        if (interrupted) {
            if (!in->edit) // the editor ended its line itself
                fputc('\n', stderr);
            len = 0;
            continue;
        }
        struct andor *list;
        enum parse_result r = parse(line, &list);
        if (r == PARSE_INCOMPLETE) {
            arena_reset();
            continue;
        }
        len = 0;
        if (r == PARSE_ERROR) {
            last_status = 2;
            arena_reset();
            if (!interactive)
                break;
            continue;
        }
        run_list(list);
        arena_reset();
    }
    free(line);
    return last_status;
}

int run_string(const char *src)
{
    struct andor *list;
    enum parse_result r = parse(src, &list);
    if (r == PARSE_INCOMPLETE)
        sh_error("syntax error: unexpected end of input");
    if (r != PARSE_OK)
        return last_status = 2;
    run_list(list);
    arena_reset();
    return last_status;
}

// Where this shell's executable is, for running scripts, $(...) and
// background lists: argv[0] made absolute, or found through $PATH.
static void find_self(const char *argv0)
{
    if (!strchr(argv0, '/')) {
        const char *p = find_program(argv0);
        if (p && p[0] == '/')
            sh_path = xstrdup(p);
        arena_reset();
        return;
    }
    if (argv0[0] == '/') {
        sh_path = argv0;
        return;
    }
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return;
    char *p = xmalloc(strlen(cwd) + strlen(argv0) + 2);
    sprintf(p, "%s/%s", cwd, argv0);
    sh_path = p;
}

int main(int argc, char **argv, char **envp)
{
    var_init(envp);
    find_self(argv[0]);
    int i = 1;
    bool force_interactive = false;
    if (i < argc && strcmp(argv[i], "-i") == 0) {
        force_interactive = true;
        i++;
    }
    if (i < argc && strcmp(argv[i], "-c") == 0) {
        if (i + 1 >= argc) {
            sh_error("-c: option requires an argument");
            return 2;
        }
        // sh -c 'cmds' name args...: name is $0.
        const char *src = argv[i + 1];
        pos_args = argv + i + 2;
        pos_count = argc - i - 3;
        if (pos_count < 0) {
            static char *self[] = {"sh", NULL};
            pos_args = self;
            pos_count = 0;
        }
        return run_string(src) & 0xff;
    }
    struct input *in = xmalloc(sizeof *in);
    in->pos = in->len = 0;
    in->edit = false;
    if (i < argc) {
        // sh script args...: $0 is the script.
        // Kept at a high descriptor, so that redirections like 3>f leave it alone.
        int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
        in->fd = fd < 0 ? fd : fcntl(fd, F_DUPFD_CLOEXEC, 10);
        if (fd >= 0)
            close(fd);
        if (in->fd < 0) {
            sh_error("%s: %s", argv[i], strerror(errno));
            return 127;
        }
        in->bytewise = false;
        pos_args = argv + i;
        pos_count = argc - i - 1;
    } else {
        in->fd = 0;
        in->bytewise = true;
        pos_args = argv;
        pos_count = 0;
        interactive = force_interactive || (isatty(0) && isatty(2));
    }
    if (interactive) {
        struct sigaction sa = {0};
        sa.sa_handler = on_sigint;   // no SA_RESTART: a read returns EINTR
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        // On our controlling terminal, in the foreground: job control. The
        // shell itself is never stopped from the keyboard.
        if (isatty(0) && tcgetpgrp(0) == getpgrp()) {
            job_control = true;
            job_tty = 0;
            signal(SIGTSTP, SIG_IGN);
            signal(SIGTTOU, SIG_IGN);
            signal(SIGTTIN, SIG_IGN);
            signal(SIGQUIT, SIG_IGN);
        }
        in->edit = in->fd == 0 && lineedit_start(0);
    }
    int status = run_input(in);
    free(in);
    return status & 0xff;
}
