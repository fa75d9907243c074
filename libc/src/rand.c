// Pseudo-random numbers: rand/srand, rand_r, random/srandom.
#include <stdint.h>
#include <stdlib.h>

// rand: a 64-bit LCG per process (C requires no thread safety; we keep it
// race-free with atomics). rand_r uses the caller's 32-bit state.
static uint64_t rand_state = 1;

void srand(unsigned seed) { __atomic_store_n(&rand_state, seed - 1ULL, __ATOMIC_RELAXED); }

int rand(void)
{
    uint64_t s = __atomic_load_n(&rand_state, __ATOMIC_RELAXED), n;
    do
        n = s * 6364136223846793005ULL + 1442695040888963407ULL;
    while (!__atomic_compare_exchange_n(&rand_state, &s, n, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return (int)(n >> 33);
}

int rand_r(unsigned *seed)
{
    unsigned x = *seed * 1103515245u + 12345u;
    *seed = x;
    // Temper: the low bits of an LCG are weak.
    x ^= x >> 11;
    x ^= (x << 7) & 0x9d2c5680u;
    x ^= (x << 15) & 0xefc60000u;
    return (int)(x >> 1);
}

long random(void) { return rand(); }
void srandom(unsigned seed) { srand(seed); }

