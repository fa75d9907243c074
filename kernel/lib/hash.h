// A 64-bit mix for the per-CPU caches' slot hashes (refcache, itime): every bit
// of the input affects every bit of the output (splitmix64's finalizer), so
// objects allocated at regular strides spread over the slots.
#pragma once
#include "kernel.h"

static inline uint64_t mix64(uint64_t h)
{
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}
