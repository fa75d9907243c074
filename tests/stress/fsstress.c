// A file-system stress with exact answers (tests/README.md, "File-system stress").
//
//   fsstress [-s SEED] [-t SECONDS] [-w WORKERS] [-d DIR] [-m SECS]
//
// WORKERS processes create, write, append, truncate, map and write, read, link,
// rename and unlink files for SECONDS, in three directories at once: a private
// one per worker (DIR/pW), and two shared by all (DIR/s and DIR/s/sub). Every
// worker owns a set of names (wW_K, spread over the three directories; a
// rename or link from one name to another crosses directories) and keeps a
// model of what they hold: which file each name is, each file's bytes and link
// count. Every call's result is checked against the model as it goes; a
// listing of each directory must show the worker's own names exactly, among
// everyone else's. Besides, all workers race on a few common names (DIR/s/cN):
// each replaces one by renaming a complete record over it, removes it, or
// reads it, and a reader must always find a complete record (rename is atomic).
//
// At the end the workers stop together and, with nothing else running, check
// everything: each name exists exactly when the model says, reads back the
// model's bytes, has its link count and shares its inode with the model's
// other names of the file; the shared directories hold nothing but the
// workers' names and complete common records. Then everything is removed. A
// short warm-up round goes first; on our kernel, the net page count (kstats)
// after the run must come back to where it was after the warm-up.
//
// Prints ok/not ok lines and `N passed, N failed`; runs on Linux too (the page
// count is skipped there). A failure names the seed, worker and operation.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "netpages.h"

#define MAX_WORKERS 256
#define NAMES 24        // names each worker owns
#define FILES 32        // files a worker's model can hold at once
#define MAXLEN 16384    // bytes a file may grow to
#define COMMON 8        // common names all workers race on
#define RECORD_MAX 3000 // a common record's bytes at most
#define LEAK_PER_WORKER 16 // pages the count may drift by (kernel caches), per worker

static uint64_t seed = 1;
static int seconds = 10, workers = 4; // with no arguments: make test's run
static char dir[200];
static int n_results, n_failed;

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    n_results++;
    n_failed += !ok;
    printf("%s %d - fsstress: %s\n", ok ? "ok" : "not ok", n_results, msg);
    fflush(stdout);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t x = a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    return x ^ (x >> 29);
}

static uint64_t rng;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static unsigned below(unsigned n) { return rnd() % n; }

// ---- one worker's model ---------------------------------------------------------

struct mfile {
    bool used;
    int nlink;
    ino_t ino;
    size_t len;
    unsigned char *data; // MAXLEN bytes
};

static int me;                  // this worker's number
static struct mfile files[FILES];
static int name_file[NAMES];    // file index, or -1: no such name
static uint64_t n_ops;
static int done_fd = -1;        // the supervisor's pipe, until this worker has reported
#define FAILED UINT64_MAX       // what a worker that failed reports instead of its count
static const char *op_name = "";

// Name K of this worker lives in directory K % 3: private, shared, shared/sub.
static void name_path(int k, char *buf, size_t n)
{
    static const char *sub[] = {"p%d", "s", "s/sub"};
    char d[32];
    snprintf(d, sizeof d, sub[k % 3], me);
    snprintf(buf, n, "%s/%s/w%d_%d", dir, d, me, k);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    // The kernel's net page count says whether memory was short at the time.
    printf("# fsstress: seed %llu worker %d op %llu (%s): %s (net pages %ld)\n",
           (unsigned long long)seed, me, (unsigned long long)n_ops, op_name, msg, net_pages());
    fflush(stdout);
    uint64_t failed = FAILED;
    if (done_fd >= 0 && write(done_fd, &failed, sizeof failed) != sizeof failed)
        printf("# fsstress: worker %d cannot tell the supervisor\n", me);
    _exit(1);
}

// A call's result must be what the model says: `want` is 0 or an errno.
static void expect(long got, int want, const char *call, int k)
{
    int err = got < 0 ? errno : 0;
    if (err != want)
        fail("%s of name %d: %s, expected %s", call, k, err ? strerror(err) : "success",
             want ? strerror(want) : "success");
}

static int new_file(void)
{
    for (int i = 0; i < FILES; i++)
        if (!files[i].used) {
            files[i].used = true;
            files[i].nlink = 0;
            files[i].len = 0;
            return i;
        }
    return -1;
}

static void drop_link(int f)
{
    if (--files[f].nlink == 0)
        files[f].used = false;
}

static void fill(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(rnd() >> 24);
}

static int used_name(void)
{
    int k = below(NAMES);
    for (int i = 0; i < NAMES; i++, k = (k + 1) % NAMES)
        if (name_file[k] >= 0)
            return k;
    return -1;
}

static void write_all(int fd, const unsigned char *p, size_t n, int k)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            fail("write to name %d: %s", k, w < 0 ? strerror(errno) : "wrote 0");
        p += w;
        n -= w;
    }
}

// The whole file behind name k must be the model's, through a new descriptor.
static void verify_name(int k)
{
    char path[256];
    static unsigned char buf[MAXLEN + 1];
    name_path(k, path, sizeof path);
    int f = name_file[k];
    struct stat st;
    if (f < 0) {
        if (lstat(path, &st) == 0 || errno != ENOENT)
            fail("name %d exists, the model has none", k);
        return;
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        fail("open of name %d: %s", k, strerror(errno));
    size_t got = 0;
    ssize_t r;
    while ((r = read(fd, buf + got, sizeof buf - got)) > 0)
        got += r;
    if (r < 0)
        fail("read of name %d: %s", k, strerror(errno));
    if (fstat(fd, &st) < 0)
        fail("fstat of name %d: %s", k, strerror(errno));
    close(fd);
    if (got != files[f].len || memcmp(buf, files[f].data, got) != 0)
        fail("name %d: %zu bytes differ from the model's %zu", k, got, files[f].len);
    if ((size_t)st.st_size != files[f].len || (int)st.st_nlink != files[f].nlink)
        fail("name %d: size %lld links %d, the model's %zu and %d", k, (long long)st.st_size,
             (int)st.st_nlink, files[f].len, files[f].nlink);
    if (st.st_ino != files[f].ino)
        fail("name %d: inode %llu, not the file's %llu", k, (unsigned long long)st.st_ino,
             (unsigned long long)files[f].ino);
}

// ---- the operations on own names --------------------------------------------------

static void op_create(void)
{
    char path[256];
    int k = below(NAMES);
    name_path(k, path, sizeof path);
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (name_file[k] >= 0) {
        expect(fd, EEXIST, "create", k);
        return;
    }
    int f = new_file();
    if (f < 0) { // the model is full: this name stays absent
        expect(fd, 0, "create", k);
        close(fd);
        expect(unlink(path), 0, "unlink", k);
        return;
    }
    expect(fd, 0, "create", k);
    struct stat st;
    fstat(fd, &st);
    files[f].ino = st.st_ino;
    files[f].nlink = 1;
    files[f].len = below(4) ? below(MAXLEN / 2) : 0;
    fill(files[f].data, files[f].len);
    write_all(fd, files[f].data, files[f].len, k);
    expect(close(fd), 0, "close", k);
    name_file[k] = f;
}

// pwrite at any offset up to a little past the end (a hole reads as zeros), or
// append with O_APPEND.
static void op_write(void)
{
    char path[256];
    unsigned char buf[4096];
    int k = used_name();
    if (k < 0)
        return;
    struct mfile *m = &files[name_file[k]];
    name_path(k, path, sizeof path);
    bool append = below(3) == 0;
    int fd = open(path, append ? O_WRONLY | O_APPEND : O_WRONLY);
    expect(fd, 0, "open", k);
    size_t off = append ? m->len : below(m->len + 1024), n = below(sizeof buf);
    if (off > MAXLEN)
        off = MAXLEN;
    if (off + n > MAXLEN)
        n = MAXLEN - off;
    fill(buf, n);
    ssize_t w = append ? write(fd, buf, n) : pwrite(fd, buf, n, off);
    if (w != (ssize_t)n)
        fail("write of %zu bytes at %zu to name %d: %zd (%s)", n, off, k, w, strerror(errno));
    expect(close(fd), 0, "close", k);
    if (n == 0) // writing nothing does not extend the file
        return;
    if (off > m->len)
        memset(m->data + m->len, 0, off - m->len);
    memcpy(m->data + off, buf, n);
    if (off + n > m->len)
        m->len = off + n;
}

// truncate, shorter or longer (the new bytes read as zeros).
static void op_truncate(void)
{
    char path[256];
    int k = used_name();
    if (k < 0)
        return;
    struct mfile *m = &files[name_file[k]];
    name_path(k, path, sizeof path);
    size_t len = below(m->len + 2048);
    if (len > MAXLEN)
        len = MAXLEN;
    expect(truncate(path, len), 0, "truncate", k);
    if (len > m->len)
        memset(m->data + m->len, 0, len - m->len);
    m->len = len;
}

// Change bytes through a shared mapping; read() must see them afterwards.
static void op_mmap(void)
{
    char path[256];
    int k = used_name();
    if (k < 0 || files[name_file[k]].len == 0)
        return;
    struct mfile *m = &files[name_file[k]];
    name_path(k, path, sizeof path);
    int fd = open(path, O_RDWR);
    expect(fd, 0, "open", k);
    unsigned char *p = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        fail("mmap of name %d: %s", k, strerror(errno));
    if (memcmp(p, m->data, m->len) != 0)
        fail("mapping of name %d differs from the model", k);
    for (int i = below(8); i >= 0; i--) {
        size_t at = below(m->len);
        m->data[at] = p[at] = (unsigned char)rnd();
    }
    expect(munmap(p, m->len), 0, "munmap", k);
    expect(close(fd), 0, "close", k);
}

static void op_link(void)
{
    char a[256], b[256];
    int k = used_name(), j = below(NAMES);
    if (k < 0)
        return;
    name_path(k, a, sizeof a);
    name_path(j, b, sizeof b);
    long r = link(a, b);
    if (name_file[j] >= 0) {
        expect(r, EEXIST, "link", j);
        return;
    }
    expect(r, 0, "link", j);
    name_file[j] = name_file[k];
    files[name_file[k]].nlink++;
}

static void op_unlink(void)
{
    char path[256];
    int k = below(NAMES);
    name_path(k, path, sizeof path);
    long r = unlink(path);
    if (name_file[k] < 0) {
        expect(r, ENOENT, "unlink", k);
        return;
    }
    expect(r, 0, "unlink", k);
    drop_link(name_file[k]);
    name_file[k] = -1;
}

// rename within and across directories; onto an existing name replaces it,
// onto another name of the same file does nothing (POSIX).
static void op_rename(void)
{
    char a[256], b[256];
    int k = below(NAMES), j = below(NAMES);
    name_path(k, a, sizeof a);
    name_path(j, b, sizeof b);
    long r = rename(a, b);
    if (name_file[k] < 0) {
        expect(r, ENOENT, "rename", k);
        return;
    }
    expect(r, 0, "rename", k);
    if (name_file[j] == name_file[k])
        return;
    if (name_file[j] >= 0)
        drop_link(name_file[j]);
    name_file[j] = name_file[k];
    name_file[k] = -1;
}

// A file whose last name goes while it is open stays readable through the fd.
static void op_unlink_open(void)
{
    char path[256];
    static unsigned char buf[MAXLEN];
    int k = used_name();
    if (k < 0)
        return;
    int f = name_file[k];
    name_path(k, path, sizeof path);
    int fd = open(path, O_RDONLY);
    expect(fd, 0, "open", k);
    expect(unlink(path), 0, "unlink", k);
    drop_link(f);
    name_file[k] = -1;
    ssize_t r = pread(fd, buf, sizeof buf, 0);
    if (r != (ssize_t)files[f].len || memcmp(buf, files[f].data, r) != 0)
        fail("open file of unlinked name %d: read %zd, the model has %zu", k, r, files[f].len);
    close(fd);
}

// A listing shows exactly this worker's names of a directory, among others'.
static void op_list(int d)
{
    char path[256], prefix[32];
    static const char *sub[] = {"p%d", "s", "s/sub"};
    char rel[32];
    snprintf(rel, sizeof rel, sub[d], me);
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    snprintf(prefix, sizeof prefix, "w%d_", me);
    bool seen[NAMES] = {0};
    DIR *dp = opendir(path);
    if (!dp)
        fail("opendir %s: %s", rel, strerror(errno));
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        int k = atoi(e->d_name + strlen(prefix));
        if (k < 0 || k >= NAMES || k % 3 != d || seen[k] || name_file[k] < 0)
            fail("directory %s lists %s (twice, or the model has no such name)", rel, e->d_name);
        seen[k] = true;
    }
    closedir(dp);
    for (int k = d; k < NAMES; k += 3)
        if (name_file[k] >= 0 && !seen[k])
            fail("directory %s does not list name %d", rel, k);
}

// ---- the common names -----------------------------------------------------------

struct record {
    uint32_t magic, worker, len, sum;
};
#define RECORD_MAGIC 0x46535352u

static uint32_t checksum(const unsigned char *p, size_t n)
{
    uint32_t s = 2166136261u;
    for (size_t i = 0; i < n; i++)
        s = (s ^ p[i]) * 16777619u;
    return s;
}

static const char *record_problem(const unsigned char *buf, size_t n)
{
    struct record h;
    if (n < sizeof h)
        return "shorter than a header";
    memcpy(&h, buf, sizeof h);
    if (h.magic != RECORD_MAGIC || h.len != n - sizeof h)
        return "a torn or foreign record";
    if (checksum(buf + sizeof h, h.len) != h.sum)
        return "a record whose bytes do not sum";
    return NULL;
}

static void common_path(int c, char *buf, size_t n) { snprintf(buf, n, "%s/s/c%d", dir, c); }

// Write a whole record under a name of our own, then rename it over a common
// name; or remove a common name; or read one, which must be whole.
static void op_common(void)
{
    char path[256], tmp[256];
    static unsigned char buf[sizeof(struct record) + RECORD_MAX + 1];
    int c = below(COMMON), how = below(4);
    common_path(c, path, sizeof path);
    if (how == 0) {
        long r = unlink(path);
        if (r < 0 && errno != ENOENT)
            fail("unlink of common name %d: %s", c, strerror(errno));
        return;
    }
    if (how == 1) {
        snprintf(tmp, sizeof tmp, "%s/s/t%d", dir, me);
        struct record h = {RECORD_MAGIC, me, below(RECORD_MAX), 0};
        fill(buf + sizeof h, h.len);
        h.sum = checksum(buf + sizeof h, h.len);
        memcpy(buf, &h, sizeof h);
        int fd = open(tmp, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        expect(fd, 0, "create of the common record", c);
        write_all(fd, buf, sizeof h + h.len, c);
        close(fd);
        expect(rename(tmp, path), 0, "rename over common name", c);
        return;
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        if (errno != ENOENT)
            fail("open of common name %d: %s", c, strerror(errno));
        return;
    }
    size_t got = 0;
    ssize_t r;
    while ((r = read(fd, buf + got, sizeof buf - got)) > 0)
        got += r;
    close(fd);
    const char *why = r < 0 ? strerror(errno) : record_problem(buf, got);
    if (why)
        fail("common name %d: %s", c, why);
}

// ---- a worker -------------------------------------------------------------------

static void run_ops(double until)
{
    static void (*const ops[])(void) = {op_create, op_create, op_write, op_write, op_truncate,
                                        op_mmap, op_link, op_unlink, op_rename, op_rename,
                                        op_unlink_open, op_common, op_common};
    static const char *names[] = {"create", "create", "write", "write", "truncate", "mmap", "link",
                                  "unlink", "rename", "rename", "unlink-open", "common", "common"};
    const int nops = sizeof ops / sizeof ops[0];
    while (now() < until) {
        for (int i = 0; i < 64; i++) {
            int o = below(nops + 2);
            n_ops++;
            if (o >= nops) { // a check now and then
                op_name = o == nops ? "read back" : "list";
                if (o == nops)
                    verify_name(below(NAMES));
                else
                    op_list(below(3));
                continue;
            }
            op_name = names[o];
            ops[o]();
        }
    }
}

// Runs until `until`, writes its operation count (or FAILED) to `done` and waits for `go`
// to close: then nobody else writes and it checks everything it owns.
static void worker(int w, double until, int done, int go)
{
    me = w;
    done_fd = done;
    rng = mix(seed, w) | 1;
    for (int i = 0; i < FILES; i++)
        if (!(files[i].data = malloc(MAXLEN)))
            fail("out of memory for the model");
    for (int k = 0; k < NAMES; k++)
        name_file[k] = -1;
    char path[256];
    snprintf(path, sizeof path, "%s/p%d", dir, me);
    if (mkdir(path, 0755) < 0)
        fail("mkdir %s: %s", path, strerror(errno));
    run_ops(until);
    done_fd = -1;
    if (write(done, &n_ops, sizeof n_ops) != sizeof n_ops)
        fail("report to the supervisor");
    char c;
    if (read(go, &c, 1) != 0)
        fail("the supervisor's go");
    op_name = "final check";
    for (int k = 0; k < NAMES; k++)
        verify_name(k);
    for (int d = 0; d < 3; d++)
        op_list(d);
    _exit(0);
}

// ---- the supervisor -------------------------------------------------------------

// Only workers' names (wW_K, tW) and whole common records in a shared directory.
static bool shared_clean(const char *rel, bool top)
{
    char path[256];
    static unsigned char buf[sizeof(struct record) + RECORD_MAX + 1];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    DIR *dp = opendir(path);
    if (!dp)
        return false;
    bool ok = true;
    struct dirent *e;
    while ((e = readdir(dp))) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..") || (top && !strcmp(n, "sub")) || n[0] == 'w')
            continue;
        if (top && n[0] == 'c' && atoi(n + 1) < COMMON) {
            char p[600];
            snprintf(p, sizeof p, "%s/%s", path, n);
            int fd = open(p, O_RDONLY);
            ssize_t got = fd < 0 ? -1 : read(fd, buf, sizeof buf);
            close(fd);
            const char *why = got < 0 ? "unreadable" : record_problem(buf, got);
            if (why) {
                printf("# fsstress: %s/%s: %s\n", rel, n, why);
                ok = false;
            }
            continue;
        }
        // a worker's temporary record name (tW) is gone once its rename is done
        printf("# fsstress: %s holds %s, which no worker made or left\n", rel, n);
        ok = false;
    }
    closedir(dp);
    return ok;
}

static void remove_tree(const char *path)
{
    DIR *dp = opendir(path);
    if (!dp)
        return;
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p);
    }
    closedir(dp);
    rmdir(path);
}

static void usage(void)
{
    fprintf(stderr, "usage: fsstress [-s SEED] [-t SECONDS] [-w WORKERS] [-d DIR] [-m SECS]\n");
    exit(2);
}

static bool make_dirs(void)
{
    char p[256];
    remove_tree(dir);
    if (mkdir(dir, 0755) < 0)
        return false;
    snprintf(p, sizeof p, "%s/s", dir);
    if (mkdir(p, 0755) < 0)
        return false;
    snprintf(p, sizeof p, "%s/s/sub", dir);
    return mkdir(p, 0755) == 0;
}

// With -m SECS, a process beside the workers prints the kernel's net page
// count every SECS seconds of a round: memory that piles up while the files
// stay few shows as a count that keeps growing.
static int monitor_secs;

static pid_t start_monitor(const char *what)
{
    if (monitor_secs <= 0 || net_pages() < 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    double start = now();
    for (;;) {
        sleep(monitor_secs);
        printf("# fsstress: %s, %.0f s: net pages %ld\n", what, now() - start, net_pages());
        fflush(stdout);
    }
}

static void stop_monitor(pid_t pid)
{
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
}

// One round: the workers run for `secs`, then check what they own; then the
// supervisor checks the shared directories and removes everything.
static void one_round(const char *what, int secs)
{
    if (!make_dirs()) {
        check(false, "%s: make %s: %s", what, dir, strerror(errno));
        return;
    }
    int done[2], go[2];
    if (pipe(done) < 0 || pipe(go) < 0) {
        check(false, "%s: pipe: %s", what, strerror(errno));
        return;
    }
    double until = now() + secs;
    int started = 0;
    fflush(stdout);
    pid_t monitor = start_monitor(what);
    for (; started < workers; started++) {
        pid_t pid = fork();
        if (pid < 0)
            break;
        if (pid == 0) {
            close(done[0]);
            close(go[1]);
            worker(started, until, done[1], go[0]);
        }
    }
    close(done[1]);
    close(go[0]);
    // Every worker reports its count, or FAILED, when its time is up.
    uint64_t ops = 0, n;
    int reported = 0, failed = 0;
    while (reported + failed < started) {
        ssize_t r = read(done[0], &n, sizeof n);
        if (r != sizeof n) {
            printf("# fsstress: %s: the workers' pipe read %zd (%s)\n", what, r,
                   r < 0 ? strerror(errno) : "short");
            break;
        }
        if (n == FAILED)
            failed++;
        else
            ops += n, reported++;
    }
    close(done[0]);
    stop_monitor(monitor);
    check(reported == workers, "%s: %d of %d workers made %llu operations in %d s, each checked",
          what, reported, workers, (unsigned long long)ops, secs);
    close(go[1]); // the workers check their names with nothing else running
    int bad = 0, status;
    while (wait(&status) > 0)
        bad += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    check(bad == 0, "%s: every name reads back as written, with its links and inode (%d workers "
          "failed)", what, bad);
    check(shared_clean("s", true) && shared_clean("s/sub", false),
          "%s: the shared directories hold nothing else, every common name a whole record", what);
    remove_tree(dir);
    struct stat st;
    check(stat(dir, &st) < 0 && errno == ENOENT, "%s: everything removed", what);
}

int main(int argc, char **argv)
{
    int opt;
    const char *base = "/tmp";
    while ((opt = getopt(argc, argv, "s:t:w:d:m:")) != -1) {
        switch (opt) {
        case 's': seed = strtoull(optarg, NULL, 0); break;
        case 't': seconds = atoi(optarg); break;
        case 'w': workers = atoi(optarg); break;
        case 'd': base = optarg; break;
        case 'm': monitor_secs = atoi(optarg); break;
        default: usage();
        }
    }
    if (workers < 1 || workers > MAX_WORKERS || seconds < 1)
        usage();
    snprintf(dir, sizeof dir, "%s/fsstress.%llu", base, (unsigned long long)seed);
    printf("# fsstress: seed %llu, %d workers, %d s in %s\n", (unsigned long long)seed, workers,
           seconds, dir);
    // A warm-up round grows the kernel's caches (slabs, per-CPU page caches)
    // to their working size; the page count after it is the reference.
    one_round("warm-up", seconds / 4 > 2 ? seconds / 4 : 2);
    long before = settled_pages();
    struct sites *sites_before = sites_snapshot();
    one_round("run", seconds);
    long after = settled_pages();
    sites_print_change(sites_before, sites_snapshot(), 10);
    if (before < 0)
        printf("ok %d - fsstress: no pages leaked # SKIP no kstats (not our kernel)\n", ++n_results);
    else
        check(after - before <= LEAK_PER_WORKER * workers,
              "no pages leaked (net pages %ld after the warm-up, %ld after the run)", before, after);
    printf("%d passed, %d failed\n", n_results - n_failed, n_failed);
    return n_failed != 0;
}
