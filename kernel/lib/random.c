// Random bytes from the CPU's generator (rdrand), or TSC jitter mixed with a
// 64-bit finaliser when it has none. Each call works on the caller's stack only,
// so calls on different CPUs commute and share nothing.
#include "lib/random.h"
#include "x86/x86.h"

static bool has_rdrand(void)
{
    uint32_t a, b, c, d;
    cpuid(1, 0, &a, &b, &c, &d);
    return c & (1u << 30);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t random64(void)
{
    static bool checked, rdrand;
    if (!checked) {
        rdrand = has_rdrand();
        checked = true;
    }
    uint64_t v;
    for (int i = 0; rdrand && i < 10; i++) {
        unsigned char ok;
        asm volatile("rdrand %0; setc %1" : "=r"(v), "=qm"(ok));
        if (ok)
            return v;
    }
    v = 0;
    for (int i = 0; i < 4; i++)
        v = mix(v ^ rdtsc());
    return v;
}

void random_bytes(void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        uint64_t v = random64();
        size_t m = MIN(n, sizeof v);
        memcpy(p, &v, m);
        p += m;
        n -= m;
    }
}
