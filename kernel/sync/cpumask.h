// Sets of CPUs as bitmaps sized by NCPU_MAX, so more CPUs need only a bigger constant.
#pragma once
#include "kernel.h"

#define CPUMASK_WORDS ((NCPU_MAX + 63) / 64)
typedef struct { uint64_t w[CPUMASK_WORDS]; } cpumask_t;

static inline void cpumask_clear(cpumask_t *m) { memset(m, 0, sizeof *m); }
static inline void cpumask_set(cpumask_t *m, int c) { m->w[c / 64] |= 1UL << (c % 64); }
static inline void cpumask_unset(cpumask_t *m, int c) { m->w[c / 64] &= ~(1UL << (c % 64)); }
static inline bool cpumask_test(const cpumask_t *m, int c) { return m->w[c / 64] >> (c % 64) & 1; }
static inline void cpumask_set_atomic(cpumask_t *m, int c)
{
    __atomic_fetch_or(&m->w[c / 64], 1UL << (c % 64), __ATOMIC_RELAXED);
}
static inline void cpumask_clear_atomic(cpumask_t *m, int c)
{
    __atomic_fetch_and(&m->w[c / 64], ~(1UL << (c % 64)), __ATOMIC_RELAXED);
}
static inline int cpumask_weight(const cpumask_t *m)
{
    int n = 0;
    for (int i = 0; i < CPUMASK_WORDS; i++)
        for (uint64_t w = m->w[i]; w; w &= w - 1)
            n++;
    return n;
}
// Next set bit at or after c, or NCPU_MAX if none: a word at a time, so that
// walking a mask of a few CPUs costs a few steps, not NCPU_MAX.
static inline int cpumask_next(const cpumask_t *m, int c)
{
    while (c < NCPU_MAX) {
        uint64_t rest = m->w[c / 64] >> (c % 64);
        if (rest)
            return MIN(c + __builtin_ctzll(rest), NCPU_MAX);
        c = (c / 64 + 1) * 64;
    }
    return NCPU_MAX;
}
#define for_each_cpu(c, m) for (int c = cpumask_next((m), 0); c < NCPU_MAX; c = cpumask_next((m), c + 1))

extern cpumask_t cpu_online_mask;
