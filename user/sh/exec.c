// Running commands. Every program starts with posix_spawn: redirections and
// pipe ends become the spawn's file actions (applied in order in the child, so
// `>f 2>&1` and `2>&1 >f` differ as they should). Builtins run in the shell
// with the same redirections applied to its own descriptors and then undone.
//
// Job control (an interactive shell on its controlling terminal, job_control):
// each pipeline runs in a process group of its own (posix_spawn's SETPGROUP),
// which gets the terminal (tcsetpgrp) while it runs in the foreground, so ^C
// and ^Z reach it and not the shell; the shell takes the terminal back after.
// A stopped job is reported and left stopped (there are no fg/bg builtins).
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sh.h"

#define DEFAULT_PATH "/bin:/sbin:/usr/bin"
#define SAVE_FD_MIN 10   // the shell's own descriptors live at 10 and up
#define MAX_MOVES 32

// One step of a command's descriptor setup: make `to` a copy of `from`
// (from < 0: close `to`).
struct move { int to, from; };

struct setup {
    struct move moves[MAX_MOVES];
    int nmoves;
    int opened[MAX_MOVES];   // files the shell opened for this command
    int nopened;
};

static void add_move(struct setup *s, int to, int from)
{
    if (s->nmoves < MAX_MOVES)
        s->moves[s->nmoves++] = (struct move){to, from};
}

static void close_opened(struct setup *s)
{
    for (int i = 0; i < s->nopened; i++)
        close(s->opened[i]);
    s->nopened = 0;
}

// An fd at SAVE_FD_MIN or above, close-on-exec, so it cannot collide with the
// small numbers redirections name and never leaks into programs.
static int move_high(int fd)
{
    if (fd < 0)
        return fd;
    int h = fcntl(fd, F_DUPFD_CLOEXEC, SAVE_FD_MIN);
    close(fd);
    return h;
}

static bool planned_target(const struct setup *s, int fd)
{
    for (int i = 0; i < s->nmoves; i++)
        if (s->moves[i].to == fd && s->moves[i].from >= 0)
            return true;
    return false;
}

// Open the redirections' files and turn everything into moves. Returns false
// (after saying why) if a file cannot be opened.
static bool plan_redirs(struct redir *r, struct setup *s)
{
    for (; r; r = r->next) {
        if (s->nmoves >= MAX_MOVES) {
            sh_error("too many redirections");
            return false;
        }
        if (r->fd >= SAVE_FD_MIN) {
            sh_error("%d: bad file descriptor", r->fd);
            return false;
        }
        char *target = expand_one(r->word);
        if (r->kind == R_DUP) {
            char *end;
            long from = strtol(target, &end, 10);
            if (strcmp(target, "-") == 0) {
                add_move(s, r->fd, -1);
            } else if (*target && !*end && from >= 0 && from < SAVE_FD_MIN) {
                // Open already, or made by an earlier redirection of this command
                // (3>f >&3): the moves are applied in order.
                if (!planned_target(s, (int)from) && fcntl((int)from, F_GETFD) < 0) {
                    sh_error("%ld: %s", from, strerror(errno));
                    return false;
                }
                add_move(s, r->fd, (int)from);
            } else {
                sh_error("%s: bad file descriptor", target);
                return false;
            }
            continue;
        }
        int flags = r->kind == R_IN ? O_RDONLY
                  : r->kind == R_OUT ? O_WRONLY | O_CREAT | O_TRUNC
                  : O_WRONLY | O_CREAT | O_APPEND;
        int fd = move_high(open(target, flags | O_CLOEXEC, 0666));
        if (fd < 0) {
            sh_error("%s: %s", target, strerror(errno));
            return false;
        }
        s->opened[s->nopened++] = fd;
        add_move(s, r->fd, fd);
    }
    return true;
}

// ---- running in the shell itself (builtins, compound commands, messages):
// apply the moves to the shell's own descriptors, then undo them
struct saved { int fd, copy; };

static int apply_in_shell(struct setup *s, struct saved *saved)
{
    int n = 0;
    for (int i = 0; i < s->nmoves; i++) {
        struct move m = s->moves[i];
        bool done = false;
        for (int j = 0; j < n; j++)
            done |= saved[j].fd == m.to;
        if (!done)
            saved[n++] = (struct saved){m.to, fcntl(m.to, F_DUPFD_CLOEXEC, SAVE_FD_MIN)};
        if (m.from < 0)
            close(m.to);
        else if (m.from != m.to)
            dup2(m.from, m.to);
    }
    return n;
}

static void undo_in_shell(struct saved *saved, int n)
{
    while (n-- > 0) {
        if (saved[n].copy >= 0) {
            dup2(saved[n].copy, saved[n].fd);
            close(saved[n].copy);
        } else {
            close(saved[n].fd);
        }
    }
}

static int run_builtin(builtin_fn *fn, struct strv *argv, struct setup *s)
{
    struct saved saved[MAX_MOVES];
    fflush(stdout);
    int n = apply_in_shell(s, saved);
    int status = fn((int)argv->n, argv->v);
    fflush(stdout);
    fflush(stderr);
    undo_in_shell(saved, n);
    return status;
}

// ---- programs ----------------------------------------------------------------
// The executable for name: itself if it has a '/', else the first match in $PATH.
char *find_program(const char *name)
{
    if (strchr(name, '/'))
        return (char *)name;
    const char *path = var_get("PATH");
    if (!path)
        path = DEFAULT_PATH;
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        char *cand = arena_alloc(n + strlen(name) + 3);
        if (n == 0)
            strcpy(cand, ".");
        else
            memcpy(cand, path, n);
        strcat(cand, "/");
        strcat(cand, name);
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
            return cand;
        path += n + (colon != NULL);
    }
    return NULL;
}

bool job_control;
int job_tty = -1;           // the terminal's fd
static pid_t job_pgid = -1; // the group of the pipeline being started: -1 none, 0 new

static int spawn(pid_t *pid, const char *path, struct setup *s, char **argv, char **envp)
{
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    if (job_control) { // what the shell ignores for itself, the job must not
        sigset_t dfl;
        sigemptyset(&dfl);
        sigaddset(&dfl, SIGTSTP);
        sigaddset(&dfl, SIGTTIN);
        sigaddset(&dfl, SIGTTOU);
        sigaddset(&dfl, SIGQUIT);
        posix_spawnattr_setsigdefault(&attr, &dfl);
    }
    short flags = job_control ? POSIX_SPAWN_SETSIGDEF : 0;
    if (job_pgid >= 0)
        flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setflags(&attr, flags);
    posix_spawnattr_setpgroup(&attr, job_pgid >= 0 ? job_pgid : 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    for (int i = 0; i < s->nmoves; i++) {
        struct move m = s->moves[i];
        if (m.from < 0)
            posix_spawn_file_actions_addclose(&fa, m.to);
        else if (m.from != m.to)
            posix_spawn_file_actions_adddup2(&fa, m.from, m.to);
    }
    int err = posix_spawn(pid, path, &fa, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (!err && job_pgid == 0)
        job_pgid = *pid; // the first of the pipeline leads its group
    return err;
}

// Whether path is an ELF file that asks for a program interpreter (PT_INTERP):
// a dynamically linked program, which the kernel refuses with ENOEXEC as it has
// no dynamic loader; it must not be taken for a shell script.
static bool is_dynamic_elf(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    Elf64_Ehdr eh;
    bool dynamic = false;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
        memcmp(eh.e_ident, "\177ELF", 4) == 0 && eh.e_phentsize == sizeof(Elf64_Phdr)) {
        for (int i = 0; i < eh.e_phnum && !dynamic; i++) {
            Elf64_Phdr ph;
            off_t at = (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph);
            if (pread(fd, &ph, sizeof ph, at) != (ssize_t)sizeof ph)
                break;
            dynamic = ph.p_type == PT_INTERP;
        }
    }
    close(fd);
    return dynamic;
}

// Start argv as a program. Returns its pid, or 0 after reporting why not (with
// the status a shell gives: 127 not found, 126 not executable).
static pid_t start_program(struct strv *argv, struct strv *assigns, struct setup *s, int *status)
{
    const char *name = argv->v[0];
    char *path = find_program(name);
    struct saved saved[MAX_MOVES];
    if (!path) {
        // Said where the command's stderr would have gone, as a forking shell does.
        int n = apply_in_shell(s, saved);
        sh_error("%s: not found", name);
        undo_in_shell(saved, n);
        *status = 127;
        return 0;
    }
    char **envp = var_environ(assigns);
    pid_t pid;
    int err = spawn(&pid, path, s, argv->v, envp);
    if (err == ENOEXEC && is_dynamic_elf(path)) {
        int n = apply_in_shell(s, saved);
        sh_error("%s: not a static executable", name);
        undo_in_shell(saved, n);
        *status = 126;
        return 0;
    }
    if (err == ENOEXEC) {
        // Not a binary: a script for this shell (as POSIX shells do).
        struct strv sargv = {0};
        strv_add(&sargv, (char *)sh_path);
        strv_add(&sargv, path);
        for (size_t i = 1; i < argv->n; i++)
            strv_add(&sargv, argv->v[i]);
        err = spawn(&pid, sh_path, s, sargv.v, envp);
    }
    if (err) {
        int n = apply_in_shell(s, saved);
        sh_error("%s: %s", name, strerror(err));
        undo_in_shell(saved, n);
        *status = err == ENOENT ? 127 : 126;
        return 0;
    }
    return pid;
}

// ---- compound commands ----------------------------------------------------------
int loop_depth, loop_break, loop_continue;

// After a loop's condition or body: true if the loop must stop (break, or a
// continue meant for an outer loop).
static bool loop_leave(void)
{
    if (loop_break > 0) {
        loop_break--;
        return true;
    }
    if (loop_continue > 1) {
        loop_continue--;
        return true;
    }
    loop_continue = 0;
    return false;
}

static int run_loop(struct cmd *c)
{
    int status = 0;
    struct strv words = {0};
    if (c->kind == C_FOR) {
        for (size_t i = 0; i < c->words.n; i++)
            expand_word(c->words.v[i], &words);
        for (int i = 1; !c->has_in && i <= pos_count; i++)
            strv_add(&words, pos_args[i]);
    }
    loop_depth++;
    for (size_t i = 0;; i++) {
        // What an iteration allocates goes when it ends.
        struct arena_mark mark = arena_mark();
        if (c->kind == C_FOR) {
            if (i >= words.n)
                break;
            var_set(c->var, words.v[i], false);
        } else {
            run_list(c->cond);
            if (loop_leave() || (last_status == 0) != (c->kind == C_WHILE)) {
                arena_release(mark);
                break;
            }
        }
        status = run_list(c->body);
        arena_release(mark);
        if (loop_leave())
            break;
    }
    loop_depth--;
    return status;
}

static int run_compound(struct cmd *c)
{
    if (c->kind != C_IF)
        return run_loop(c);
    run_list(c->cond);
    if (loop_break || loop_continue)
        return last_status;
    if (last_status == 0)
        return c->body ? run_list(c->body) : 0;
    return c->orelse ? run_list(c->orelse) : 0;
}

// In a pipeline or in the background it needs a process of its own: a second
// shell. Otherwise it runs here, with its redirections applied to the shell.
static pid_t run_compound_cmd(struct cmd *c, int in, int out, bool background, int *status)
{
    struct setup s = {0};
    if (in >= 0)
        add_move(&s, 0, in);
    if (out >= 0)
        add_move(&s, 1, out);
    if (in >= 0 || out >= 0 || background) {
        pid_t pid = run_sub_shell(c->text, &s, false);
        *status = pid ? 0 : 127;
        return pid;
    }
    *status = 1;
    if (plan_redirs(c->redirs, &s)) {
        struct saved saved[MAX_MOVES];
        fflush(stdout);
        int n = apply_in_shell(&s, saved);
        *status = run_compound(c);
        fflush(stdout);
        fflush(stderr);
        undo_in_shell(saved, n);
    }
    close_opened(&s);
    return 0;
}

// ---- simple commands --------------------------------------------------------------
// One command with stdin/stdout possibly from/to a pipe (-1: not). Returns
// the pid it started, or 0 with *status set (builtin, error, compound
// command run here, or assignments only).
static pid_t run_cmd(struct cmd *c, int in, int out, bool background, int *status)
{
    if (c->kind != C_SIMPLE)
        return run_compound_cmd(c, in, out, background, status);
    struct strv argv = {0}, assigns = {0};
    size_t i = 0;
    subst_status = 0;
    arith_failed = false;
    for (; i < c->words.n && assignment_len(c->words.v[i]); i++) {
        char *w = c->words.v[i];
        size_t n = assignment_len(w);
        char *a = arena_strndup(w, n + 1);
        char *v = expand_one(w + n + 1);
        char *full = arena_alloc(n + strlen(v) + 2);
        strcpy(full, a);
        strcat(full, v);
        strv_add(&assigns, full);
    }
    for (; i < c->words.n; i++)
        expand_word(c->words.v[i], &argv);
    int subst = subst_status;
    if (arith_failed) {
        arith_failed = false;
        *status = 2;
        return 0;
    }

    struct setup s = {0};
    if (in >= 0)
        add_move(&s, 0, in);
    if (out >= 0)
        add_move(&s, 1, out);
    *status = 1;
    if (!plan_redirs(c->redirs, &s)) {
        close_opened(&s);
        return 0;
    }
    pid_t pid = 0;
    if (argv.n == 0) {
        // NAME=value alone sets shell variables; the status is that of the
        // last $(...) in it, if any.
        for (size_t j = 0; j < assigns.n; j++) {
            size_t n = assignment_len(assigns.v[j]);
            assigns.v[j][n] = 0;
            var_set(assigns.v[j], assigns.v[j] + n + 1, false);
        }
        *status = subst;
    } else if (builtin_find(argv.v[0])) {
        *status = run_builtin(builtin_find(argv.v[0]), &argv, &s);
    } else {
        pid = start_program(&argv, &assigns, &s, status);
    }
    close_opened(&s);
    return pid;
}

static int decode_status(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 1;
}

int wait_pid(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, job_control ? WUNTRACED : 0) < 0)
        if (errno != EINTR)
            return 127;
    if (WIFSTOPPED(st)) {
        fprintf(stderr, "[%d] Stopped\n", (int)pid);
        return 128 + WSTOPSIG(st);
    }
    return decode_status(st);
}

// Job control: start a pipeline's group (foreground: give it the terminal once
// its leader exists), and take the terminal back.
static pid_t job_begin(void)
{
    pid_t saved = job_pgid;
    job_pgid = job_control ? 0 : -1;
    return saved;
}

static void job_foreground(void)
{
    if (job_control && job_pgid > 0)
        tcsetpgrp(job_tty, job_pgid);
}

static void job_end(pid_t saved)
{
    if (job_control)
        tcsetpgrp(job_tty, getpgrp());
    job_pgid = saved;
}

static int run_pipeline(struct pipeline *pl, bool background)
{
    pid_t pids[pl->ncmds];
    int npids = 0, status = 0, in = -1;
    pid_t last = 0;
    pid_t saved = job_begin();
    for (struct cmd *c = pl->cmds; c; c = c->next) {
        int p[2] = {-1, -1};
        if (c->next && pipe(p) < 0) {
            sh_error("pipe: %s", strerror(errno));
            status = 1;
            break;
        }
        p[0] = move_high(p[0]);
        p[1] = move_high(p[1]);
        last = run_cmd(c, in, p[1], background, &status);
        if (last)
            pids[npids++] = last;
        if (npids == 1 && !background)
            job_foreground();
        if (in >= 0)
            close(in);
        if (p[1] >= 0)
            close(p[1]);
        in = p[0];
    }
    if (in >= 0)
        close(in);
    if (background) {
        job_pgid = saved;
        if (last)
            last_bg_pid = last;
        if (interactive && last)
            fprintf(stderr, "[%d]\n", (int)last);
        return 0;
    }
    for (int i = 0; i < npids; i++) {
        int st = wait_pid(pids[i]);
        if (pids[i] == last)
            status = st;
    }
    job_end(saved);
    return pl->negate ? !status : status;
}

// A second shell running src (with this one's variables and positional
// parameters), with the descriptor setup s (or none). Returns its pid, or
// with wait, its status.
int run_sub_shell(const char *src, struct setup *s, bool wait)
{
    struct strv argv = {0};
    strv_add(&argv, (char *)sh_path);
    strv_add(&argv, "-c");
    strv_add(&argv, var_script(src));
    for (int i = 0; i <= pos_count; i++)
        strv_add(&argv, pos_args[i]);
    struct setup none = {0};
    pid_t pid;
    int err = spawn(&pid, sh_path, s ? s : &none, argv.v, var_environ(NULL));
    if (err) {
        sh_error("%s: %s", sh_path, strerror(err));
        return wait ? 127 : 0;
    }
    return wait ? wait_pid(pid) : pid;
}

int subst_status;

// $(src): run it in a second shell and read what it prints. $? becomes its status.
char *command_output(const char *src)
{
    struct str out = {0};
    str_adds(&out, "");
    int p[2];
    if (pipe(p) < 0) {
        sh_error("pipe: %s", strerror(errno));
        return out.s;
    }
    p[0] = move_high(p[0]);
    p[1] = move_high(p[1]);
    struct setup s = {0};
    add_move(&s, 1, p[1]);
    pid_t saved = job_pgid;
    job_pgid = -1; // $(...) belongs to the command being expanded: the shell's group
    pid_t pid = run_sub_shell(src, &s, false);
    job_pgid = saved;
    close(p[1]);
    char buf[4096];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            str_addc(&out, buf[i]);
    }
    close(p[0]);
    last_status = subst_status = pid ? wait_pid(pid) : 127;
    while (out.len > 0 && out.s[out.len - 1] == '\n')
        out.s[--out.len] = 0;
    return out.s;
}

// An and-or list run with '&': one pipeline starts directly; anything more
// goes to a second shell, since this one cannot fork.
static void run_background(struct andor *ao)
{
    if (!ao->first->next) {
        run_pipeline(ao->first, true);
        return;
    }
    pid_t saved = job_begin();
    pid_t pid = run_sub_shell(ao->text, NULL, false);
    job_pgid = saved;
    if (!pid)
        return;
    last_bg_pid = pid;
    if (interactive)
        fprintf(stderr, "[%d]\n", (int)pid);
}

int run_list(struct andor *list)
{
    for (struct andor *ao = list; ao && !loop_break && !loop_continue; ao = ao->next) {
        if (ao->background) {
            run_background(ao);
            last_status = 0;
            continue;
        }
        bool run = true;
        for (struct pipeline *pl = ao->first; pl && !loop_break && !loop_continue; pl = pl->next) {
            if (run)
                last_status = run_pipeline(pl, false);
            // a && b || c: each operator looks at the status so far.
            run = pl->op == OP_AND ? last_status == 0 : last_status != 0;
        }
    }
    return last_status;
}
