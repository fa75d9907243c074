// Write access against execution (ETXTBSY, as Linux): exec maps a file's pages
// copy-on-write instead of copying them, so nobody may write the file in place
// while an address space executes it, and nobody may execute a file open for
// writing. Two counts per file, in a 128-byte object the inode points to from
// its line 0 (allocated by the file's first open for writing or exec, and
// installed with a compare-and-swap; not with the inode, which would cost every
// file a whole line or two):
//   writers    descriptions open for writing (and truncates by path in
//              progress), a refcache count: +1 and -1 go to the CPU's own cache;
//              and mapped pages of the file whose mmap went through such a
//              description, one each (as Linux, whose mapping keeps the
//              description open: kernel/mm/uvm_internal.h's VP_WRITER), added and dropped
//              n at a time (fs_get_write_again, fs_put_write_n), so mapping
//              or unmapping N pages costs one refcache update, not N;
//   executors  address spaces executing the file, a refcache count as well;
// and two flags beside the writers: `executed`, set once by the file's first
// exec, and `mode`, whether an exec must count the writers (WC_WRITING) or knows
// there are none (WC_QUIET).
//
// Dekker, twice. A writer raises writers, fences, then reads `executed`, and
// only if it is set the executors exactly; an exec raises executors, sets
// `executed`, fences, then reads the writers exactly. Of two that race, at least
// one sees the other and backs off (both may: then both get ETXTBSY, as if each
// had come second). An exact read visits every active CPU's cache, though, and
// each visit is a line its owner writes whenever it updates an object that
// shares the slot: with C CPUs each updating k objects per operation, about
// C * k / 1024 transfers per exec. So an exec that found no writer leaves
// `mode` at WC_QUIET, and later execs skip the read. To get there it moves
// `mode` from WC_WRITING to WC_CHECKING with a compare-and-swap, fences, reads
// the writers exactly, and moves WC_CHECKING on to WC_QUIET only if it found
// none. A writer, after its fence, stores WC_WRITING unless it reads it there,
// then fences before it reads `executed`:
//  - a writer that read WC_WRITING was counted before any later switch's
//    compare-and-swap, so that switch's exact read sees it: no WC_QUIET while
//    it writes;
//  - a writer that read WC_QUIET or WC_CHECKING overwrites it; an exec that read
//    WC_QUIET before that store had counted itself before, so the writer's exact
//    read of the executors sees it, and the writer backs off.
// An exec that reads WC_CHECKING (another exec is switching) reads exactly, as
// before. Only holders of a count add without looking: a fork, whose parent
// already counts as an executor (fs_deny_write_again); an mmap, whose
// description open for writing counts as a writer, and a fork copying mapped
// pages that count (fs_get_write_again); a writer's count keeps `mode` off
// WC_QUIET, so these need no store either.
//
// Commute: opens for reading, reads, writes through an open description and
// stats never touch the object. Opens for writing of one file (and their
// closes) write only their CPU's refcache cache and read `executed` and `mode`
// (the first writer after an exec writes `mode` once): they are conflict-free
// with each other, and so are mmaps and munmaps of the file through such
// descriptions (which do not read the flags at all).
// Execs of one program, and forks and exits of processes that run it (an
// address space counts as an executor while it lives), write only their CPU's
// cache and read the flags, so two of them share nothing (Linux's one
// i_writecount word makes parallel execs of one binary share a line), and
// once an exec has found the file quiet, execs read no other CPU's cache. The
// price: an open for writing of a file that has ever been executed reads every
// CPU's cache of the executors (refcache_read_exact), and the first exec after
// a writer reads every CPU's cache of the writers and writes `mode` twice.
// Installing the object writes the inode's line 0 once in the file's life
// (that first open shares the line with lookups of the file on other cores);
// after that, opens for writing only read line 0, as every open does, and stay
// off line 1, which truncates and appends write.
#include "inode.h"
#include "mm/mm.h"
#include "sync/atomic.h"

enum { WC_WRITING, WC_CHECKING, WC_QUIET };

struct writecount {
    struct refcache_obj writers;   // +1 base held by the inode until it is freed
    bool executed;                 // set once, by the first exec
    uint8_t mode;                  // WC_*: may an exec skip counting the writers?
    int releases;                  // refcache objects not yet released (2 -> 0: free)
    struct refcache_obj executors __cacheline_aligned; // +1 base, as writers
};

// Both counts released (as inode.c's release_one: no reference left).
static void released(struct writecount *wc)
{
    if (sub_fetch(&wc->releases, 1) == 0)
        kfree(wc);
}

static void writers_released(struct refcache_obj *o)
{
    released(container_of(o, struct writecount, writers));
}

static void executors_released(struct refcache_obj *o)
{
    released(container_of(o, struct writecount, executors));
}

// ip's object, installed if missing; NULL if out of memory.
static struct writecount *wc_get(struct inode *ip)
{
    struct writecount *wc = load_acquire(&ip->wc);
    if (wc)
        return wc;
    struct writecount *n = kzalloc(sizeof *n);
    if (!n)
        return NULL;
    refcache_init(&n->writers, 1, writers_released);
    refcache_init(&n->executors, 1, executors_released);
    n->releases = 2;
    if (cas(&ip->wc, &wc, n))
        return n;
    kfree(n); // another CPU installed one first (never published: no refcache state)
    return wc;
}

void writecount_free(struct inode *ip)
{
    if (ip->wc) { // the bases: freed once refcache sees both at zero
        refcache_dec(&ip->wc->writers);
        refcache_dec(&ip->wc->executors);
    }
}

int fs_get_write(struct inode *ip)
{
    if (!S_ISREG(ip->mode))
        return 0;
    struct writecount *wc = wc_get(ip);
    if (!wc)
        return -ENOMEM;
    refcache_inc(&wc->writers);
    fence();
    if (load_relaxed(&wc->mode) != WC_WRITING) { // an exec may have found no writer
        store_relaxed(&wc->mode, WC_WRITING);
        fence();
    }
    if (load_acquire(&wc->executed) && refcache_read_exact(&wc->executors) != 1) {
        refcache_dec(&wc->writers);
        return -ETXTBSY;
    }
    return 0;
}

void fs_put_write(struct inode *ip)
{
    if (S_ISREG(ip->mode))
        refcache_dec(&ip->wc->writers);
}

void fs_get_write_again(struct inode *ip, int64_t n)
{
    if (S_ISREG(ip->mode) && n) // the caller's count keeps executors out: nothing to check
        refcache_add(&ip->wc->writers, n);
}

void fs_put_write_n(struct inode *ip, int64_t n)
{
    if (S_ISREG(ip->mode) && n)
        refcache_add(&ip->wc->writers, -n);
}

int fs_deny_write(struct inode *ip)
{
    if (!S_ISREG(ip->mode))
        return 0;
    struct writecount *wc = wc_get(ip);
    if (!wc)
        return -ENOMEM;
    refcache_inc(&wc->executors);
    if (!READ_ONCE(wc->executed)) // after the increment: a writer that sees it set sees that
        store_release(&wc->executed, true);
    fence();
    uint8_t m = load_relaxed(&wc->mode);
    if (m == WC_QUIET)
        return 0; // no writer since an exec found none: a new one will see us
    // WC_WRITING: switch, unless another exec is; WC_CHECKING: just look.
    bool switching = m == WC_WRITING && cas(&wc->mode, &m, WC_CHECKING);
    if (switching)
        fence(); // WC_CHECKING stored before the count is read
    bool quiet = refcache_read_exact(&wc->writers) == 1;
    uint8_t checking = WC_CHECKING; // a writer may have stored WC_WRITING: keep it
    if (switching)
        cas(&wc->mode, &checking, quiet ? WC_QUIET : WC_WRITING);
    if (!quiet) {
        refcache_dec(&wc->executors);
        return -ETXTBSY;
    }
    return 0;
}

void fs_deny_write_again(struct inode *ip)
{
    if (S_ISREG(ip->mode)) // the caller's count keeps writers out: nothing to check
        refcache_inc(&ip->wc->executors);
}

void fs_allow_write(struct inode *ip)
{
    if (S_ISREG(ip->mode))
        refcache_dec(&ip->wc->executors);
}
