// Small helpers shared by the in-kernel tests.
#pragma once
#include <stdint.h>
#include "mm/mm.h"
#include "proc/sched.h"
#include "x86/smp.h"
#include "x86/trap.h"
#include "x86/x86.h"

// xorshift64: a cheap, repeatable pseudo-random sequence; *s must start non-zero.
static inline uint64_t rnd(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

// Run fn with a recovery point armed; return the exception vector, or -1 if none.
// The handler returns here with interrupts off; turn them back on.
static inline long run_catching(void (*fn)(void))
{
    struct kjmp j;
    if (ksetjmp(&j) == 0) {
        trap_set_recovery(&j);
        fn();
        trap_set_recovery(NULL);
        return -1;
    }
    sti();
    return (long)trap_last_vector();
}

// Every cache of free objects and stacks back to the page allocator
// (drop_caches), the stacks' pages too (they come a grace period later), and
// every CPU's page cache into the pools: a known state for counting free
// pages. An allocation that runs short drops the caches itself, so a test
// that exhausts memory counts from here.
static inline void drop_caches_settled(void)
{
    drop_caches();
    for (uint64_t end = nsec_now() + 2000000000ULL; kstack_going() && nsec_now() < end;)
        sched_sleep_until(nsec_now() + 5000000);
    page_drain_all_caches();
}
