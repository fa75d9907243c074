// The user-level test suites (tests/user/*.c, embedded as "test-NAME") run under
// the in-kernel harness: each suite is spawned with its console output captured,
// and its `ok`/`not ok` lines are relayed as results of this run, named
// "user/NAME: case". A suite that crashes, exits non-zero or whose closing line
// disagrees with its results adds a failed result. The same programs run on the
// Linux host (user/user.mk), so both kernels are held to one set of expectations.
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "proc/proc.h"

#define CAPTURE_PAGES 64 // 256 KiB of output per suite

static const char *const suite_envp[] = {"HOME=/", "PATH=/bin", "TERM=vt100", NULL};

// Parse "ok N - name" / "not ok N - name"; returns the name or NULL.
static const char *result_line(const char *line, bool *ok)
{
    *ok = strncmp(line, "ok ", 3) == 0;
    if (!*ok && strncmp(line, "not ok ", 7) != 0)
        return NULL;
    const char *s = line + (*ok ? 3 : 7);
    while (*s >= '0' && *s <= '9')
        s++;
    if (strncmp(s, " - ", 3) != 0)
        return NULL;
    return s + 3;
}

// "P passed, F failed" -> true with the two counts.
static bool closing_line(const char *line, int *passed, int *failed)
{
    const char *s = line;
    int v[2];
    for (int i = 0; i < 2; i++) {
        if (*s < '0' || *s > '9')
            return false;
        v[i] = 0;
        while (*s >= '0' && *s <= '9')
            v[i] = v[i] * 10 + (*s++ - '0');
        const char *word = i == 0 ? " passed, " : " failed";
        if (strncmp(s, word, strlen(word)) != 0)
            return false;
        s += strlen(word);
    }
    *passed = v[0];
    *failed = v[1];
    return *s == 0;
}

struct tally {
    int *n, *failed;
};

static void report(struct tally *t, bool ok, const char *suite, const char *name)
{
    ++*t->n;
    *t->failed += !ok;
    kprintf("%s %d - user/%s: %s\n", ok ? "ok" : "not ok", *t->n, suite, name);
}

// Relay one suite's captured output; returns whether it ran cleanly to its end.
static bool relay(struct tally *t, const char *suite, char *out)
{
    int seen = 0, bad = 0, cp = -1, cf = -1;
    for (char *line = out; *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        bool ok;
        const char *name = result_line(line, &ok);
        if (name) {
            seen++;
            bad += !ok;
            report(t, ok, suite, name);
        } else if (!closing_line(line, &cp, &cf)) {
            kprintf("# %s\n", line);
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    return seen > 0 && cp == seen - bad && cf == bad;
}

static void run_suite(struct tally *t, const struct user_program *prog, const char *suite)
{
    char *buf = page_alloc_contig(CAPTURE_PAGES);
    if (!buf) {
        report(t, false, suite, "no memory for the output buffer");
        return;
    }
    struct capture cap = {.buf = buf, .cap = CAPTURE_PAGES * PGSIZE - 1};
    spin_init(&cap.lock, "suite output");
    const char *argv[] = {prog->name, NULL};
    struct proc *p;
    int err = proc_spawn(prog->name, prog->start, prog->len, argv, suite_envp, NULL, &cap, &p);
    int status = err ? -1 : proc_wait_kernel(p);
    buf[cap.len] = 0;
    bool complete = !err && relay(t, suite, buf);
    char what[96];
    ksnprintf(what, sizeof what, "ran to completion (spawn %d, wait status 0x%x%s)", err,
              status, cap.len == cap.cap ? ", output truncated" : "");
    report(t, complete && status == 0, suite, what);
    page_free_contig(buf, CAPTURE_PAGES);
}

void ktest_run_user_suites(bool (*selected)(const char *name), int *n, int *failed)
{
    struct tally t = {n, failed};
    for (const struct user_program *prog = user_programs; prog->name; prog++) {
        if (strncmp(prog->name, "test-", 5) != 0)
            continue;
        const char *suite = prog->name + 5;
        char full[64];
        ksnprintf(full, sizeof full, "user/%s", suite);
        if (selected(full))
            run_suite(&t, prog, suite);
    }
}
