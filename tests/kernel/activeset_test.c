// Tests for active sets (sync/activeset.h): joining, lingering, leaving, one
// shard apart from another, and a reader that must still see the deltas of a
// CPU that left and came back; the kernel's two sets apart; and that a stat
// by path joins nothing.
#include "fstest.h"
#include "inode.h"
#include "ktest/ktest.h"
#include "sync/activeset.h"
#include "sync/refcache.h"
#include "sync/xcall.h"
#include "x86/smp.h"
#include "x86/x86.h"

static bool in_shard(const struct active_sets *s, unsigned k, int c)
{
    cpumask_t m;
    active_snapshot_shard(s, k, &m);
    return cpumask_test(&m, c);
}

// Two shards.
#define H1 3
#define H2 200 // in another word of the marks

KTEST(activeset_join_linger_leave)
{
    static struct active_sets s;
    struct active_marks m = {0};
    push_off(); // the marks are this CPU's
    int me = cpu_id();
    KCHECK(!in_shard(&s, H1, me));
    active_join(&s, &m, H1);
    KCHECK(in_shard(&s, H1, me));
    KCHECK(!in_shard(&s, H2, me));
    // The decay right after a join only forgets the join.
    active_decay(&s, &m);
    for (int i = 0; i < ACTIVE_LINGER - 1; i++)
        active_decay(&s, &m);
    KCHECK(in_shard(&s, H1, me));
    // State left in the shard's slots keeps it in, however long it idles.
    for (int i = 0; i < 2 * ACTIVE_LINGER; i++) {
        active_keep(&m, H1);
        active_decay(&s, &m);
    }
    KCHECK(in_shard(&s, H1, me));
    for (int i = 0; i < ACTIVE_LINGER; i++)
        active_decay(&s, &m);
    KCHECK(!in_shard(&s, H1, me));
    active_join(&s, &m, H1);
    KCHECK(in_shard(&s, H1, me));
    // A join within the linger period starts it again.
    for (int i = 0; i < ACTIVE_LINGER - 1; i++)
        active_decay(&s, &m);
    active_join(&s, &m, H1);
    for (int i = 0; i < ACTIVE_LINGER - 1; i++)
        active_decay(&s, &m);
    KCHECK(in_shard(&s, H1, me));
    active_leave(&s, &m);
    KCHECK(!in_shard(&s, H1, me));
    pop_off();
}

// Each shard lingers on its own: a CPU that keeps using objects of one shard
// leaves the shards it stopped using, and state held in one shard keeps it in
// that one only.
KTEST(activeset_shards_linger_apart)
{
    static struct active_sets s;
    struct active_marks m = {0};
    push_off();
    int me = cpu_id();
    active_join(&s, &m, H1);
    active_join(&s, &m, H2);
    KCHECK(in_shard(&s, H1, me) && in_shard(&s, H2, me));
    for (int i = 0; i <= ACTIVE_LINGER; i++) {
        active_join(&s, &m, H1);
        active_decay(&s, &m);
    }
    KCHECK(in_shard(&s, H1, me));
    KCHECK(!in_shard(&s, H2, me));
    active_join(&s, &m, H2);
    for (int i = 0; i <= ACTIVE_LINGER; i++) {
        active_keep(&m, H2);
        active_decay(&s, &m);
    }
    KCHECK(!in_shard(&s, H1, me));
    KCHECK(in_shard(&s, H2, me));
    active_leave(&s, &m);
    KCHECK(!in_shard(&s, H2, me));
    pop_off();
}

// A CPU that has joined ACTIVE_SHARDS_MAX shards is counted in every shard at
// its next join, without joining that shard, and leaves after the linger.
KTEST(activeset_many_shards_join_every)
{
    static struct active_sets s;
    struct active_marks m = {0};
    push_off();
    int me = cpu_id();
    for (unsigned k = 0; k < ACTIVE_SHARDS_MAX; k++)
        active_join(&s, &m, k);
    KCHECK(!in_shard(&s, ACTIVE_SHARDS - 1, me));
    active_join(&s, &m, ACTIVE_SHARDS_MAX);
    KCHECK(m.every);
    KCHECK(in_shard(&s, ACTIVE_SHARDS - 1, me));
    cpumask_t own;
    active_snapshot(&s.shard[ACTIVE_SHARDS_MAX], &own);
    KCHECK(!cpumask_test(&own, me)); // through `every` only
    // Kept state keeps it in; then it leaves `every` and each shard.
    for (int i = 0; i <= ACTIVE_LINGER; i++) {
        active_keep(&m, 5);
        active_decay(&s, &m);
    }
    KCHECK(in_shard(&s, ACTIVE_SHARDS - 1, me));
    for (int i = 0; i < ACTIVE_LINGER; i++)
        active_decay(&s, &m);
    KCHECK(!m.every);
    KCHECK_EQ(m.nin, 0);
    for (unsigned k = 0; k < ACTIVE_SHARDS; k++)
        KCHECK(!in_shard(&s, k, me));
    // The next stretch starts with shards again.
    active_join(&s, &m, 9);
    KCHECK(!m.every);
    KCHECK(in_shard(&s, 9, me) && !in_shard(&s, 10, me));
    active_leave(&s, &m);
    pop_off();
}

// Two sets that share a budget (files' and directories'): the shards a CPU is
// in in one count toward ACTIVE_SHARDS_MAX in the other.
KTEST(activeset_shared_budget_joins_every)
{
    static struct active_sets files, dirs;
    struct active_marks mf = {0}, md = {0};
    push_off();
    int me = cpu_id();
    for (unsigned k = 0; k < ACTIVE_SHARDS_MAX - 2; k++)
        active_join_budget(&files, &mf, k, &md);
    active_join_budget(&dirs, &md, 100, &mf);
    active_join_budget(&dirs, &md, 101, &mf);
    KCHECK(!mf.every && !md.every);
    KCHECK(in_shard(&dirs, 101, me));
    active_join_budget(&files, &mf, 50, &md); // the ninth shard of the two
    KCHECK(mf.every);
    KCHECK(!md.every);
    cpumask_t own;
    active_snapshot(&files.shard[50], &own);
    KCHECK(!cpumask_test(&own, me)); // through `every` only
    active_join_budget(&dirs, &md, 102, &mf);
    KCHECK(md.every);
    active_leave(&files, &mf);
    active_leave(&dirs, &md);
    pop_off();
}

static struct refcache_obj counted;
static void release_none(struct refcache_obj *o) { (void)o; }
static void inc_here(void *arg) { (void)arg; refcache_inc(&counted); }
static void dec_here(void *arg) { (void)arg; refcache_dec(&counted); }

// What ACTIVE_LINGER idle epochs do on this CPU, at once: empty the caches (the
// flush hook empties the file times too) and decay until the CPU leaves.
static void leave_here(void *arg)
{
    (void)arg;
    refcache_flush_cpu();
    for (int i = 0; i <= ACTIVE_LINGER; i++)
        kernel_active_decay();
}

static void run_on(int c, xcall_fn fn)
{
    cpumask_t m;
    cpumask_clear(&m);
    cpumask_set(&m, c);
    xcall(&m, fn, NULL, true);
}

// An exact read of a reference count visits only the CPUs in its object's
// shard of the kernel's active set for references. A CPU that left it must have left nothing behind, and its next
// update must be seen at once: it rejoins before it writes its cache. An
// update joins its object's shard only.
KTEST(activeset_refcache_reader_sees_rejoined_cpu)
{
    if (ncpu < 2)
        return;
    int other = cpu_id() == 0 ? 1 : 0;
    unsigned h = active_shard(&counted), elsewhere = (h + 1) % ACTIVE_SHARDS;
    refcache_init(&counted, 1, release_none);
    run_on(other, leave_here);
    run_on(other, inc_here);
    KCHECK(in_shard(&kernel_active[ACTIVE_REFS], h, other));
    KCHECK(!in_shard(&kernel_active[ACTIVE_REFS], elsewhere, other));
    KCHECK(!in_shard(&kernel_active[ACTIVE_FILES], h, other));
    KCHECK_EQ(refcache_read_exact(&counted), 2);
    run_on(other, leave_here);
    KCHECK(!in_shard(&kernel_active[ACTIVE_REFS], h, other));
    KCHECK_EQ(refcache_read_exact(&counted), 2);
    run_on(other, dec_here);
    KCHECK(in_shard(&kernel_active[ACTIVE_REFS], h, other));
    KCHECK_EQ(refcache_read_exact(&counted), 1);
    run_on(other, inc_here);
    KCHECK_EQ(refcache_read_exact(&counted), 2);
    run_on(other, dec_here); // keep the count above zero: never released
}

static struct refcache_rm linked;
static void rm_inc_here(void *arg) { (void)arg; refcache_rm_add(&linked, 1, ACTIVE_FILES); }
static void rm_dec_here(void *arg) { (void)arg; refcache_rm_add(&linked, -1, ACTIVE_FILES); }

// A link count (refcache_rm) of a file is in the files' set, apart from references:
// its update joins that set's shard only, and its exact read visits that set.
KTEST(activeset_link_counts_apart_from_references)
{
    if (ncpu < 2)
        return;
    int other = cpu_id() == 0 ? 1 : 0;
    unsigned h = active_shard(&linked);
    refcache_init(&linked.o, 1, release_none);
    run_on(other, leave_here);
    run_on(other, rm_inc_here);
    KCHECK(in_shard(&kernel_active[ACTIVE_FILES], h, other));
    KCHECK(!in_shard(&kernel_active[ACTIVE_REFS], h, other));
    KCHECK_EQ(refcache_rm_read_exact(&linked, ACTIVE_FILES), 2);
    run_on(other, rm_dec_here);
    KCHECK_EQ(refcache_rm_read_exact(&linked, ACTIVE_FILES), 1);
}

static struct inode *touched;
static void touch_dir_here(void *arg)
{
    (void)arg;
    inode_touch(touched, T_MTIME | T_CTIME | T_DIR);
}

// A directory's times (and link count) have a set of their own: a CPU that
// made names in a directory is in the directories' set, which stats of files
// on the directory's page do not visit; a stat of the directory still finds
// the time the CPU cached.
KTEST(activeset_directory_times_apart_from_files)
{
    if (ncpu < 2)
        return;
    int other = cpu_id() == 0 ? 1 : 0;
    KREQUIRE((touched = fst_scratch("t_activeset_dirs")) != NULL);
    unsigned h = active_shard(touched);
    run_on(other, leave_here);
    uint64_t before = fs_time_now();
    run_on(other, touch_dir_here);
    KCHECK(in_shard(&kernel_active[ACTIVE_DIRS], h, other));
    KCHECK(!in_shard(&kernel_active[ACTIVE_FILES], h, other));
    uint64_t t[3];
    inode_times(touched, t);
    KCHECK(t[1] >= before); // the mtime the other CPU cached
    fs_iput(touched);
    KCHECK_EQ(fst_rm_rf("/t_activeset_dirs"), 0);
}

// What stat_without_joining found on its CPU: in the file's shard, in the
// directory's, after a stat by path and after a lookup that keeps a reference.
struct stat_probe {
    struct inode *dir, *ip;
    int err;
    bool file_after_stat, dir_after_stat, file_after_lookup, attrs_after_lookup;
};

static void stat_without_joining(int i, void *arg)
{
    struct stat_probe *p = arg;
    if (i != 1)
        return;
    struct fs_stat st;
    struct inode *ip;
    int me = cpu_id();
    push_off(); // no tick in between: the marks stay as this leaves them
    leave_here(NULL);
    p->err = fs_stat_path(p->dir, "f", 0, STATX_BASIC_STATS, &st);
    for (int k = 0; k < ACTIVE_KINDS; k++) {
        p->file_after_stat |= in_shard(&kernel_active[k], active_shard(p->ip), me);
        p->dir_after_stat |= in_shard(&kernel_active[k], active_shard(p->dir), me);
    }
    if (fs_lookup(p->dir, "f", 0, &ip) == 0) {
        p->file_after_lookup = in_shard(&kernel_active[ACTIVE_REFS], active_shard(p->ip), me);
        p->attrs_after_lookup = in_shard(&kernel_active[ACTIVE_FILES], active_shard(p->ip), me);
        fs_iput(ip);
    }
    pop_off();
}

// A stat by path takes no reference on the file it finds, nor on the directory
// it starts from (fs_stat_path, path_stat_at): a CPU that stats a file joins
// neither's shard of the active set, so stats from many CPUs do not make the
// file's exact reads (the link count, the times) visit them all. A lookup that
// keeps a reference joins the file's shard of the references' set.
KTEST(activeset_stat_by_path_joins_no_shard)
{
    if (ncpu_online < 2)
        return;
    struct stat_probe p = {.dir = fst_scratch("t_activeset_stat")};
    KREQUIRE(p.dir);
    KREQUIRE(fs_mknod(p.dir, "f", S_IFREG | 0644, 0) == 0);
    KREQUIRE(fs_lookup(p.dir, "f", 0, &p.ip) == 0);
    KREQUIRE(fst_run(2, stat_without_joining, &p));
    KCHECK_EQ(p.err, 0);
    KCHECK(!p.file_after_stat);
    KCHECK(!p.dir_after_stat);
    KCHECK(p.file_after_lookup);
    KCHECK(!p.attrs_after_lookup); // a reference is not an attribute
    fs_iput(p.ip);
    fs_iput(p.dir);
    KCHECK_EQ(fst_rm_rf("/t_activeset_stat"), 0);
}
