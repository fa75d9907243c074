// drop_caches: give the kernel's caches of free memory back to the page
// allocator, as Linux's /proc/sys/vm/drop_caches does for its clean caches
// (procfs.c: `echo 3 > /proc/sys/vm/drop_caches`). ScaleFS keeps files in RAM,
// so there is no clean page cache to drop; what is kept for reuse here is
// free objects and stacks: every CPU's kmalloc magazines (and the slabs they
// empty), the kernel stacks kept per CPU and on the shared list, and every
// CPU's free-page cache (counted as free already; drained into the pools, so
// large runs can form again). Leak checks use it to count the pages in use
// without what the caches happened to hold (tests/stress/netpages.h).
//
// It visits every CPU, so it costs time proportional to the CPUs online; it is
// an administrator's and a test's call, never on a system call's common path.
#include "mm/mm.h"
#include "proc/sched.h"

void drop_caches(void)
{
    kmalloc_drain_all();
    kstack_drop_cached(); // the stacks' pages come back a grace period later
    page_drain_all_caches();
}
