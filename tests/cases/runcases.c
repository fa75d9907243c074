// runcases BINDIR FILE...: runs shell test cases against the shell and
// utilities in BINDIR (on the Linux host, and later in the guest with /bin).
//
// A case file holds cases like this one:
//     ## pipeline into wc
//     echo hello | wc -c
//     -- out
//     6
//     -- status 0
// The script (the lines after "## name") runs as `BINDIR/sh -c SCRIPT` in a new
// empty directory, with PATH=BINDIR, HOME set to that directory, and standard
// input from /dev/null. Its standard output and error together must equal the
// lines after "-- out", and its exit status the number after "-- status"
// (0 if that line is missing). Blank lines at the end of either part are
// ignored, so cases can be separated by one. Prints `ok N - name` / `not ok N - name` and a
// closing `N passed, N failed`; exits 1 if any case failed.
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct buf { char *s; size_t len, cap; };

static void add(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        if (!b->s) {
            fprintf(stderr, "runcases: out of memory\n");
            exit(2);
        }
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

static const char *bindir;
static int passed, failed;

static int run_wait(char **argv, char **envp, int out_fd, int in_fd, pid_t *pidp)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (in_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
    if (out_fd >= 0) {
        posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
        posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
    }
    int err = posix_spawn(pidp, argv[0], &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    return err;
}

// Run one case in a fresh directory; returns its output and sets *status.
static char *run_case(const char *script, int *status)
{
    char dir[] = "/tmp/runcases.XXXXXX";
    struct buf out = {0};
    add(&out, "", 0);
    if (!mkdtemp(dir)) {
        add(&out, "runcases: mkdtemp failed\n", 25);
        *status = -1;
        return out.s;
    }
    char sh[4096], path[4200], home[4200];
    snprintf(sh, sizeof sh, "%s/sh", bindir);
    snprintf(path, sizeof path, "PATH=%s", bindir);
    snprintf(home, sizeof home, "HOME=%s", dir);
    char *envp[] = {path, home, NULL};
    char *argv[] = {sh, "-c", (char *)script, NULL};

    int p[2];
    char cwd[4096];
    if (pipe(p) < 0 || !getcwd(cwd, sizeof cwd) || chdir(dir) < 0) {
        fprintf(stderr, "runcases: %s\n", strerror(errno));
        exit(2);
    }
    fcntl(p[0], F_SETFD, FD_CLOEXEC);
    fcntl(p[1], F_SETFD, FD_CLOEXEC);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_t pid;
    int err = run_wait(argv, envp, p[1], null, &pid);
    if (chdir(cwd) < 0)
        exit(2);
    close(p[1]);
    if (null >= 0)
        close(null);
    if (err) {
        fprintf(stderr, "runcases: %s: %s\n", sh, strerror(err));
        exit(2);
    }
    char chunk[4096];
    ssize_t n;
    while ((n = read(p[0], chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            add(&out, chunk, n);
    close(p[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);

    // Clean up with our own rm (itself under test: a failure shows up later).
    char rm[4096];
    snprintf(rm, sizeof rm, "%s/rm", bindir);
    char *rmargv[] = {rm, "-rf", dir, NULL};
    if (run_wait(rmargv, envp, -1, -1, &pid) == 0)
        waitpid(pid, &st, 0);
    return out.s;
}

// Print text as "# " comment lines.
static void comment(const char *label, const char *text)
{
    printf("#   %s:\n", label);
    while (*text) {
        const char *nl = strchr(text, '\n');
        int n = nl ? (int)(nl - text) : (int)strlen(text);
        printf("#     |%.*s\n", n, text);
        text += n + (nl != NULL);
    }
}

// Blank lines at the end of a script or output only separate cases.
static void trim_blank_lines(struct buf *b)
{
    while (b->len >= 2 && b->s[b->len - 1] == '\n' && b->s[b->len - 2] == '\n')
        b->s[--b->len] = 0;
    if (b->len == 1 && b->s[0] == '\n')
        b->s[--b->len] = 0;
}

static void finish_case(const char *name, struct buf *script, struct buf *expect, int want)
{
    if (!name)
        return;
    trim_blank_lines(script);
    trim_blank_lines(expect);
    int status;
    char *got = run_case(script->s ? script->s : "", &status);
    const char *exp = expect->s ? expect->s : "";
    int ok = status == want && strcmp(got, exp) == 0;
    ok ? passed++ : failed++;
    printf("%s %d - %s\n", ok ? "ok" : "not ok", passed + failed, name);
    if (!ok) {
        printf("#   status %d, expected %d\n", status, want);
        comment("output", got);
        comment("expected", exp);
    }
    fflush(stdout);
    free(got);
}

static void run_file(const char *file)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        printf("not ok %d - %s: %s\n", passed + ++failed, file, strerror(errno));
        return;
    }
    char line[4096], *name = NULL;
    struct buf script = {0}, expect = {0};
    int want = 0, in_out = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "## ", 3) == 0) {
            finish_case(name, &script, &expect, want);
            free(name);
            name = strdup(line + 3);
            name[strcspn(name, "\n")] = 0;
            script.len = expect.len = 0;
            if (script.s)
                script.s[0] = 0;
            if (expect.s)
                expect.s[0] = 0;
            want = in_out = 0;
        } else if (strcmp(line, "-- out\n") == 0) {
            in_out = 1;
        } else if (strncmp(line, "-- status ", 10) == 0) {
            want = atoi(line + 10);
            in_out = 0;
        } else if (name) {
            add(in_out ? &expect : &script, line, strlen(line));
        }
    }
    finish_case(name, &script, &expect, want);
    free(name);
    free(script.s);
    free(expect.s);
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: runcases BINDIR FILE...\n");
        return 2;
    }
    bindir = argv[1];
    for (int i = 2; i < argc; i++)
        run_file(argv[i]);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
