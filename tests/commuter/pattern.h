// The contents of one data value of the pairwise suite. The model's data values
// are small numbers (0..255) and its unit is a page (4096 bytes) or a byte
// (tools/commuter/ops.py); the runner and the posix_spawn child expand value v
// to a unit's bytes and read units back into values. Value 0 is all zeros, as
// a hole or a fresh page reads. Any other value's first byte is v itself and
// the rest follows from v and the position, so two values differ in every byte,
// and a unit copied from the wrong offset or half written is not a value at all.
#pragma once
#include <stddef.h>
#include <stdint.h>

#define CT_GARBLED (-1)         // bytes that are no value's pattern

static inline uint8_t ct_pattern_byte(unsigned v, size_t i)
{
    return v == 0 ? 0 : (uint8_t)(v ^ (i * 0x9d + (i >> 8)));
}

static inline void ct_fill(unsigned char *dst, unsigned v, size_t unit)
{
    for (size_t i = 0; i < unit; i++)
        dst[i] = ct_pattern_byte(v, i);
}

// The value whose pattern src holds, or CT_GARBLED.
static inline int ct_value(const unsigned char *src, size_t unit)
{
    unsigned v = src[0];
    for (size_t i = 1; i < unit; i++)
        if (src[i] != ct_pattern_byte(v, i))
            return CT_GARBLED;
    return (int)v;
}
