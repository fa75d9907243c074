// Builtins: commands that change the shell itself, so they run inside it.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sh.h"

static int b_cd(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : var_get("HOME");
    if (!dir) {
        sh_error("cd: HOME not set");
        return 1;
    }
    if (chdir(dir) < 0) {
        sh_error("cd: %s: %s", dir, strerror(errno));
        return 1;
    }
    char buf[4096];
    if (getcwd(buf, sizeof buf))
        var_set("PWD", buf, false);
    return 0;
}

static int b_exit(int argc, char **argv)
{
    int status = last_status;
    if (argc > 1) {
        char *end;
        status = (int)strtol(argv[1], &end, 10);
        if (!*argv[1] || *end) {
            sh_error("exit: %s: numeric argument required", argv[1]);
            status = 2;
        }
    }
    fflush(stdout);
    exit(status & 0xff);
}

// export NAME=value... or export NAME...; alone, lists the exported variables.
static int b_export(int argc, char **argv)
{
    int status = 0;
    if (argc == 1) {
        char **env = var_environ(NULL);
        for (; *env; env++)
            printf("export %s\n", *env);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        size_t n = assignment_len(argv[i]);
        if (n) {
            argv[i][n] = 0;
            var_set(argv[i], argv[i] + n + 1, true);
        } else if (is_name(argv[i], strlen(argv[i]))) {
            var_export(argv[i]);
        } else {
            sh_error("export: %s: bad variable name", argv[i]);
            status = 1;
        }
    }
    return status;
}

static int b_unset(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        var_unset(argv[i]);
    return 0;
}

static int b_shift(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    if (n < 0 || n > pos_count) {
        sh_error("shift: can't shift that many");
        return 1;
    }
    pos_args[n] = pos_args[0];
    pos_args += n;
    pos_count -= n;
    return 0;
}

// wait: for every child; wait PID: for that one, giving its status.
static int b_wait(int argc, char **argv)
{
    int status = 0;
    if (argc == 1) {
        while (wait(NULL) > 0 || errno == EINTR)
            ;
        return 0;
    }
    for (int i = 1; i < argc; i++)
        status = wait_pid(atoi(argv[i]));
    return status;
}

// break [n], continue [n]: leave (or go on with) the n-th enclosing loop.
static int loop_jump(int argc, char **argv, int *what)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    if (n < 1) {
        sh_error("%s: bad count", argv[0]);
        return 1;
    }
    if (loop_depth == 0)
        return 0;   // outside a loop: nothing to do, as in other shells
    *what = n < loop_depth ? n : loop_depth;
    return 0;
}

static int b_break(int argc, char **argv) { return loop_jump(argc, argv, &loop_break); }
static int b_continue(int argc, char **argv) { return loop_jump(argc, argv, &loop_continue); }

// read [-r] [NAME...]: one line of standard input into the variables (REPLY
// if none), split at blanks, the last one taking the rest. Without -r a
// backslash keeps the next character (and joins lines). 1 at end of input.
static int b_read(int argc, char **argv)
{
    int i = 1;
    bool raw = i < argc && strcmp(argv[i], "-r") == 0;
    i += raw;
    static char *reply[] = {"read", "REPLY", NULL};
    if (i >= argc) {
        argv = reply;
        i = 1;
        argc = 2;
    }
    // The line, and beside it which characters were escaped (never separators).
    struct str line = {0}, kept = {0};
    str_adds(&line, "");
    bool eof = false, escaped = false;
    for (;;) {
        char c;
        ssize_t n = read(0, &c, 1);   // a byte at a time: leave the rest unread
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            eof = true;
            break;
        }
        if (!escaped && c == '\\' && !raw) {
            escaped = true;
            continue;
        }
        if (!escaped && c == '\n')
            break;
        if (!(escaped && c == '\n')) {
            str_addc(&line, c);
            str_addc(&kept, escaped ? 'k' : '-');
        }
        escaped = false;
    }
    size_t p = 0, len = line.len;
#define BLANK(k) ((line.s[k] == ' ' || line.s[k] == '\t') && kept.s[k] != 'k')
    for (; i < argc; i++) {
        while (p < len && BLANK(p))
            p++;
        size_t end = p;
        if (i == argc - 1) {
            end = len;
            while (end > p && BLANK(end - 1))
                end--;
        } else {
            while (end < len && !BLANK(end))
                end++;
        }
        var_set(argv[i], arena_strndup(line.s + p, end - p), false);
        p = end;
    }
#undef BLANK
    return eof ? 1 : 0;
}

static int b_colon(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static const struct {
    const char *name;
    builtin_fn *fn;
} builtins[] = {
    {"cd", b_cd}, {"exit", b_exit}, {"export", b_export}, {"unset", b_unset},
    {"shift", b_shift}, {"wait", b_wait}, {":", b_colon}, {"break", b_break},
    {"continue", b_continue}, {"read", b_read},
};

const char *builtin_name(size_t i)
{
    return i < sizeof builtins / sizeof builtins[0] ? builtins[i].name : NULL;
}

builtin_fn *builtin_find(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (strcmp(builtins[i].name, name) == 0)
            return builtins[i].fn;
    return NULL;
}
