// Helpers shared by the ScaleFS tests (declared in fstest.h).
#include "fstest.h"
#include "inode.h"
#include "mm/mm.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/cpumask.h"
#include "sync/epoch.h"
#include "sync/percpu.h"
#include "sync/refcache.h"
#include "testutil.h"
#include "x86/smp.h"
#include "x86/x86.h"

struct run_one {
    void (*fn)(int i, void *arg);
    void *arg;
    int i;
};

static void run_thread(void *p)
{
    struct run_one *r = p;
    r->fn(r->i, r->arg);
}

bool fst_run(int n, void (*fn)(int i, void *arg), void *arg)
{
    struct run_one *r = kzalloc(n * sizeof *r);
    struct thread **t = kzalloc(n * sizeof *t);
    bool ok = r && t;
    for (int i = 0; ok && i < n; i++) {
        cpumask_t m;
        cpumask_clear(&m);
        cpumask_set(&m, i % ncpu_online);
        r[i] = (struct run_one){fn, arg, i};
        if (!(t[i] = kthread_create("fstest", run_thread, &r[i], &m)))
            ok = false;
    }
    for (int i = 0; i < n && t; i++)
        if (t[i])
            thread_join(t[i]);
    kfree(r);
    kfree(t);
    return ok;
}

static volatile int started;

// Stay alive until all n have started, so that n stacks exist at once.
static void wait_for_all(int i, void *arg)
{
    (void)i;
    fetch_add(&started, 1);
    while (READ_ONCE(started) < (int)(long)arg)
        sched_yield();
}

void fst_warm_threads(int n)
{
    for (int round = 0; round < 10; round++) {
        started = 0;
        fst_run(n, wait_for_all, (void *)(long)n);
    }
}

static void wait_refcache_epochs(int n)
{
    uint64_t target = refcache_epoch() + n, end = nsec_now() + 5000000000ULL;
    while (refcache_epoch() < target && nsec_now() < end)
        sched_sleep_until(nsec_now() + 5000000);
}

static void barrier_here(int i, void *arg)
{
    (void)i;
    (void)arg;
    epoch_barrier();
}

void fst_quiesce(void)
{
    // Each round lets one link of the chain happen: epoch callback (entry freed,
    // reference dropped) -> refcache flush and review -> release -> free, which
    // drops the parent directory's reference: a chain as long as the deepest
    // removed tree. Go on until two rounds in a row free nothing.
    int64_t inodes, dents, last = -1;
    for (int round = 0, quiet = 0; round < 200 && quiet < 2; round++) {
        epoch_synchronize();
        fst_run(ncpu_online, barrier_here, NULL);
        refcache_flush_all();
        wait_refcache_epochs(3);
        fs_count_objects(&inodes, &dents);
        quiet = inodes + dents == last ? quiet + 1 : 0;
        last = inodes + dents;
    }
    drop_caches_settled(); // as an allocation that runs short would
}

size_t fst_free_pages(void)
{
    static bool warmed;
    if (!warmed) {
        fst_warm_threads(2 * ncpu_online);
        warmed = true;
    }
    fst_quiesce();
    return page_count_free();
}

bool fst_pages_back(size_t before, size_t after, size_t slack)
{
    if (after + slack >= before)
        return true;
    kprintf("# free pages: %zu before, %zu after\n", before, after);
    return false;
}

int64_t fst_nlink(struct inode *ip)
{
    struct fs_stat st;
    fs_stat(ip, STATX_NLINK, &st);
    return (int64_t)st.nlink;
}

struct inode *fst_scratch(const char *name)
{
    char path[80];
    struct inode *ip;
    fs_init();
    ksnprintf(path, sizeof path, "/%s", name);
    fst_rm_rf(path);
    if (fs_mkdir(NULL, path, 0755) || fs_lookup(NULL, path, 0, &ip))
        return NULL;
    return ip;
}

// Collect up to `max` names of dir into a kmalloc'd array of kmalloc'd strings.
struct names {
    char **v;
    int n, max;
};

static int collect(void *arg, const char *name, size_t len, uint64_t ino, unsigned type)
{
    (void)ino;
    (void)type;
    struct names *ns = arg;
    if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
        return 0;
    if (ns->n == ns->max)
        return 1;
    char *s = kmalloc(len + 1);
    if (!s)
        return 1;
    memcpy(s, name, len);
    s[len] = 0;
    ns->v[ns->n++] = s;
    return 0;
}

int fst_rm_rf(const char *path)
{
    struct inode *dir;
    int err = fs_lookup(NULL, path, FS_NOFOLLOW, &dir);
    if (err)
        return err;
    if (!S_ISDIR(fs_mode(dir))) {
        fs_iput(dir);
        return fs_unlink(NULL, path);
    }
    struct names ns = {.v = kmalloc(256 * sizeof(char *)), .max = 256};
    char *sub = kmalloc(FS_PATH_MAX);
    for (;;) {
        uint64_t pos = 0;
        ns.n = 0;
        if (!ns.v || !sub)
            break;
        fs_readdir(dir, &pos, collect, &ns);
        if (ns.n == 0)
            break;
        for (int i = 0; i < ns.n; i++) {
            ksnprintf(sub, FS_PATH_MAX, "%s/%s", path, ns.v[i]);
            fst_rm_rf(sub);
            kfree(ns.v[i]);
        }
    }
    kfree(ns.v);
    kfree(sub);
    fs_iput(dir);
    return fs_rmdir(NULL, path);
}

static int count_one(void *arg, const char *name, size_t len, uint64_t ino, unsigned type)
{
    (void)name;
    (void)ino;
    (void)type;
    if (len > 2 || name[0] != '.' || (len == 2 && name[1] != '.'))
        ++*(long *)arg;
    return 0;
}

long fst_count_entries(struct inode *dir)
{
    long n = 0;
    uint64_t pos = 0;
    fs_readdir(dir, &pos, count_one, &n);
    return n;
}

bool fst_selected_explicitly(const char *name)
{
    size_t len, n = strlen(name);
    const char *v = cmdline_get("test", &len);
    for (const char *p = v; v && p + n <= v + len; p++)
        if (strncmp(p, name, n) == 0 && (p == v || p[-1] == ',') &&
            (p + n == v + len || p[n] == ',' || p[n] == ' '))
            return true;
    return false;
}
