// Sequence locks: writers serialise on a spinlock and bump a sequence number
// around their update; readers take no lock, read optimistically and retry if
// the number moved. Readers write nothing, so any number of them on any CPUs
// commute with each other and share the line only with writers.
//
//     do { s = seq_read_begin(&l); x = obj.a; y = obj.b; } while (seq_read_retry(&l, s));
#pragma once
#include "sync/atomic.h"
#include "sync/spinlock.h"
#include "x86/x86.h"

struct seqlock {
    volatile uint32_t seq; // odd while a write is in progress
    struct spinlock lock;
};

// The sequence alone, for data that only one writer ever changes (a CPU's own
// per-CPU slots, changed with interrupts off): no lock, the same protocol.
static inline void seqcount_write_begin(volatile uint32_t *seq)
{
    *seq = *seq + 1;
    fence_release(); // the odd number is seen before the data
}

static inline void seqcount_write_end(volatile uint32_t *seq)
{
    fence_release(); // the data is seen before the even number
    *seq = *seq + 1;
}

static inline uint32_t seqcount_read_begin(const volatile uint32_t *seq)
{
    uint32_t s;
    while ((s = *seq) & 1)
        pause();
    fence_acquire(); // the data reads stay after this
    return s;
}

static inline bool seqcount_read_retry(const volatile uint32_t *seq, uint32_t s)
{
    fence_acquire(); // the data reads stay before this
    return *seq != s;
}

static inline void seq_init(struct seqlock *l, const char *name)
{
    l->seq = 0;
    spin_init(&l->lock, name);
}

static inline uint32_t seq_read_begin(const struct seqlock *l) { return seqcount_read_begin(&l->seq); }

static inline bool seq_read_retry(const struct seqlock *l, uint32_t s)
{
    return seqcount_read_retry(&l->seq, s);
}

static inline void seq_write_begin(struct seqlock *l)
{
    spin_lock(&l->lock);
    seqcount_write_begin(&l->seq);
}

static inline void seq_write_end(struct seqlock *l)
{
    seqcount_write_end(&l->seq);
    spin_unlock(&l->lock);
}
