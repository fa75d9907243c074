// In-kernel tests: a registry of named test functions, run by ktest.c when the
// kernel command line says `test=all` or `test=name1,name2,...`.
//
//   KTEST(page_alloc_conserves) { ...; KCHECK(a == b); ... }
//
// KCHECK records a failure (with file and line) and goes on; KREQUIRE also returns
// from the test. KTEST_FAULT declares a test that must end in a CPU exception: it
// passes only if the exception is caught by the harness; KTEST_PANIC likewise for
// a call to panic().
#pragma once
#include "kernel.h"

enum { EXPECT_NOTHING, EXPECT_FAULT, EXPECT_PANIC };

struct ktest {
    const char *name;
    void (*fn)(void);
    int expect;
};

#define __KTEST(tname, what)                                                             \
    static void ktest_fn_##tname(void);                                                  \
    static const struct ktest ktest_##tname                                              \
        __attribute__((section("ktests"), used, aligned(8))) = {                         \
            .name = #tname, .fn = ktest_fn_##tname, .expect = (what)};                   \
    static void ktest_fn_##tname(void)

#define KTEST(tname) __KTEST(tname, EXPECT_NOTHING)
#define KTEST_FAULT(tname) __KTEST(tname, EXPECT_FAULT)
// Must end in panic() on the test's CPU; the panic is caught (trap_catch_panics).
#define KTEST_PANIC(tname) __KTEST(tname, EXPECT_PANIC)

void ktest_failed(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define KCHECK(c)                                                                        \
    do {                                                                                 \
        if (!(c))                                                                        \
            ktest_failed(__FILE__, __LINE__, "%s", #c);                                  \
    } while (0)
#define KREQUIRE(c)                                                                      \
    do {                                                                                 \
        if (!(c)) {                                                                      \
            ktest_failed(__FILE__, __LINE__, "%s", #c);                                  \
            return;                                                                      \
        }                                                                                \
    } while (0)
// Compare two integers and print both values on failure.
#define KCHECK_EQ(a, b)                                                                  \
    do {                                                                                 \
        long long __a = (long long)(a), __b = (long long)(b);                            \
        if (__a != __b)                                                                  \
            ktest_failed(__FILE__, __LINE__, "%s == %s (%lld != %lld)", #a, #b, __a,     \
                         __b);                                                           \
    } while (0)

// Benchmarks are tests named bench_*: "all" leaves them out, `make bench` runs
// them. They report figures with KBENCH and check only that the work succeeded.
#define KBENCH(name, value, unit) kprintf("bench: %s %lu %s\n", (name), (unsigned long)(value), (unit))

// Run the tests the command line selects; returns the number that failed.
int ktest_run(const char *selection);
// ktest_user.c: run the selected user-level suites ("user/NAME"), counting their
// results into *n and *failed.
void ktest_run_user_suites(bool (*selected)(const char *name), int *n, int *failed);
