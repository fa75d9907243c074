// Write access against execution (ETXTBSY, as Linux): exec maps a file's pages
// copy-on-write instead of copying them, so nobody may write the file in place
// while an address space executes it, and nobody may execute a file open for
// writing. Two counts per file, in a 64-byte object the inode points to from
// its line 0 (allocated by the file's first open for writing or exec, and
// installed with a compare-and-swap; not with the inode, which would cost every
// file 64 bytes, a quarter of its inode):
//   writers  descriptions open for writing (and truncates by path in progress),
//            a refcache count: +1 and -1 go to the CPU's own cache;
//   deny     address spaces executing the file, one shared word.
// A writer raises writers, fences, then reads deny; an exec raises deny, fences,
// then reads writers exactly. Of two that race, at least one sees the other and
// backs off (both may: then both get ETXTBSY, as if each had come second).
// Every exec reads the writers: a deny already raised may belong to an exec
// that is still looking and will back off. Only a fork, whose parent already
// holds a deny, adds one without looking (fs_deny_write_again).
//
// Commute: opens for reading, reads, writes through an open description and
// stats never touch the object. Opens for writing of one file (and their
// closes) write only their CPU's refcache cache and read `deny`, which only
// execs write: they are conflict-free with each other. Execs of one program,
// and forks and exits of processes that run it, write `deny` (an address
// space holds it), so they share that line although they commute: the price
// of one word, as Linux's i_writecount; an exec also reads every CPU's
// refcache cache (refcache_read_exact). Installing the object writes the inode's line 0
// once in the file's life (that first open shares the line with lookups of the
// file on other cores); after that, opens for writing only read line 0, as
// every open does, and stay off line 1, which truncates and appends write.
#include "inode.h"
#include "mm.h"

struct writecount {
    struct refcache_obj writers; // +1 base held by the inode until it is freed
    int32_t deny;
};

static void writers_released(struct refcache_obj *o)
{
    // As inode.c's release_one: refcache may call early; it calls again.
    if (refcache_read_exact(o) == 0)
        kfree(container_of(o, struct writecount, writers));
}

// ip's object, installed if missing; NULL if out of memory.
static struct writecount *wc_get(struct inode *ip)
{
    struct writecount *wc = __atomic_load_n(&ip->wc, __ATOMIC_ACQUIRE);
    if (wc)
        return wc;
    struct writecount *n = kzalloc(sizeof *n);
    if (!n)
        return NULL;
    refcache_init(&n->writers, 1, writers_released);
    if (__atomic_compare_exchange_n(&ip->wc, &wc, n, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return n;
    kfree(n); // another CPU installed one first (never published: no refcache state)
    return wc;
}

void writecount_free(struct inode *ip)
{
    if (ip->wc)
        refcache_dec(&ip->wc->writers); // the base: freed once refcache sees zero
}

int fs_get_write(struct inode *ip)
{
    if (!S_ISREG(ip->mode))
        return 0;
    struct writecount *wc = wc_get(ip);
    if (!wc)
        return -ENOMEM;
    refcache_inc(&wc->writers);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (READ_ONCE(wc->deny) > 0) {
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

int fs_deny_write(struct inode *ip)
{
    if (!S_ISREG(ip->mode))
        return 0;
    struct writecount *wc = wc_get(ip);
    if (!wc)
        return -ENOMEM;
    __atomic_add_fetch(&wc->deny, 1, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (refcache_read_exact(&wc->writers) != 1) {
        __atomic_sub_fetch(&wc->deny, 1, __ATOMIC_SEQ_CST);
        return -ETXTBSY;
    }
    return 0;
}

void fs_deny_write_again(struct inode *ip)
{
    if (S_ISREG(ip->mode)) // the caller's deny keeps writers out: nothing to check
        __atomic_add_fetch(&ip->wc->deny, 1, __ATOMIC_RELAXED);
}

void fs_allow_write(struct inode *ip)
{
    if (S_ISREG(ip->mode))
        __atomic_sub_fetch(&ip->wc->deny, 1, __ATOMIC_RELEASE);
}
