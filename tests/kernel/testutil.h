// Small helpers shared by the in-kernel tests.
#pragma once
#include <stdint.h>

// xorshift64: a cheap, repeatable pseudo-random sequence; *s must start non-zero.
static inline uint64_t rnd(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}
