// Write access against execution (ETXTBSY, as Linux): exec maps a file's pages
// copy-on-write instead of copying them, so nobody may write the file in place
// while an address space executes it, and nobody may execute a file open for
// writing. One signed word per inode, as Linux's i_writecount: > 0 is the number
// of writers (descriptions open for writing, a truncate by path in progress),
// < 0 minus the number of address spaces executing the file. Each side raises
// its count with a compare-and-swap that fails if the word has the other
// sign, so a check and its increment are one atomic step and the two sides
// cannot both succeed.
//
// Commute: opens for reading, reads, writes through an open description and
// stats never touch the word. Opens for writing (and their closes) and execs
// (and exits) of one file do write it, so they share its line with each other
// although two opens for writing, or two execs, commute; and the word sits on
// the inode's line 1 (the only one with room), so they also take that line
// from reads and page faults of the same file on other cores. Operations on
// different files share nothing here. (A conflict-free version would keep the
// writers in a refcache-style per-CPU count and make exec read it exactly.)
#include "inode.h"

// Move ip->writecount one step in direction dir (+1 writer, -1 executor),
// unless it holds the other side's count.
static int writecount_raise(struct inode *ip, int dir)
{
    if (!S_ISREG(ip->mode))
        return 0;
    int32_t v = __atomic_load_n(&ip->writecount, __ATOMIC_RELAXED);
    do {
        if (dir > 0 ? v < 0 : v > 0)
            return -ETXTBSY;
    } while (!__atomic_compare_exchange_n(&ip->writecount, &v, v + dir, false, __ATOMIC_ACQ_REL,
                                          __ATOMIC_RELAXED));
    return 0;
}

static void writecount_drop(struct inode *ip, int dir)
{
    if (S_ISREG(ip->mode))
        __atomic_sub_fetch(&ip->writecount, dir, __ATOMIC_RELEASE);
}

int fs_get_write(struct inode *ip) { return writecount_raise(ip, 1); }
void fs_put_write(struct inode *ip) { writecount_drop(ip, 1); }
int fs_deny_write(struct inode *ip) { return writecount_raise(ip, -1); }
void fs_allow_write(struct inode *ip) { writecount_drop(ip, -1); }
