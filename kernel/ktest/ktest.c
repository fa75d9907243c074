// The in-kernel test runner. Tests live in the `ktests` section (see ktest.h) and
// run one after another on the boot CPU, each with an exception recovery point
// armed, so a test that faults is reported and the run goes on. The user-level
// suites (ktest_user.c) run after them and report into the same numbering.
// Output is TAP-like: `ok N - name`, `not ok N - name`, then `N passed, N failed`.
#include "ktest/ktest.h"
#include "lib/panic.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "x86/smp.h"
#include "x86/trap.h"
#include "x86/x86.h"

extern const struct ktest __start_ktests[], __stop_ktests[];

// Set by any CPU that sees a check fail while the current test runs.
static volatile int current_failures;

void ktest_failed(const char *file, int line, const char *fmt, ...)
{
    char buf[200];
    va_list ap;
    va_start(ap, fmt);
    kvsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    kprintf("# cpu %d: check failed at %s:%d: %s\n", cpu_id(), file, line, buf);
    fetch_add(&current_failures, 1);
}

// Does `name` match the selection: "all", or a comma list of names or prefixes?
// Benchmarks (bench_*) run only when the selection names them.
static bool selected(const char *sel, const char *name)
{
    if (strcmp(sel, "all") == 0)
        return strncmp(name, "bench_", 6) != 0;
    while (*sel) {
        const char *end = strchr(sel, ',');
        size_t len = end ? (size_t)(end - sel) : strlen(sel);
        if (len && strncmp(name, sel, len) == 0)
            return true;
        if (!end)
            break;
        sel = end + 1;
    }
    return false;
}

// Every test starts with interrupts on and no locks or guards held, and must leave
// things that way: a leak would break the tests after it in confusing ways.
static void check_clean_state(const struct ktest *t)
{
    if (!(read_rflags() & RFLAGS_IF)) {
        ktest_failed(t->name, 0, "test returned with interrupts off");
        sti();
    }
    if (this_cpu_read(cpu.locks_held) || this_cpu_read(cpu.irq_depth) ||
        this_cpu_read(cpu.preempt_depth)) {
        ktest_failed(t->name, 0, "test returned holding %d lock(s), irq depth %d, preempt depth %d",
                     this_cpu_read(cpu.locks_held), this_cpu_read(cpu.irq_depth),
                     this_cpu_read(cpu.preempt_depth));
        this_cpu_write(cpu.locks_held, 0);
        this_cpu_write(cpu.irq_depth, 0);
        this_cpu_write(cpu.preempt_depth, 0);
    }
}

static bool run_one(const struct ktest *t)
{
    struct kjmp j;
    current_failures = 0;
    uint64_t t0 = nsec_now();
    bool faulted = false;
    if (ksetjmp(&j) == 0) {
        trap_set_recovery(&j);
        trap_catch_panics(t->expect == EXPECT_PANIC);
        t->fn();
        trap_set_recovery(NULL);
    } else {
        // The exception handler ran with interrupts off, and the test may have
        // been inside a lock or guard: start the next test clean.
        faulted = true;
        sti();
        this_cpu_write(cpu.locks_held, 0);
        this_cpu_write(cpu.irq_depth, 0);
        this_cpu_write(cpu.preempt_depth, 0);
    }
    check_clean_state(t);
    uint64_t ms = (nsec_now() - t0) / 1000000;
    kprintf("# %s: %lu ms%s\n", t->name, ms, faulted ? ", faulted" : "");
    if (t->expect == EXPECT_NOTHING)
        return !faulted && current_failures == 0;
    bool panicked = faulted && trap_last_vector() == T_PANIC_CAUGHT;
    return faulted && panicked == (t->expect == EXPECT_PANIC) && current_failures == 0;
}

// The linker's order depends on the compiler's; run in name order instead, so
// the output of two runs can be compared line by line.
static const struct ktest *sorted[512];

static int sort_tests(void)
{
    int n = 0;
    for (const struct ktest *t = __start_ktests; t < __stop_ktests && n < (int)ARRAY_SIZE(sorted); t++) {
        int i = n++;
        for (; i > 0 && strcmp(sorted[i - 1]->name, t->name) > 0; i--)
            sorted[i] = sorted[i - 1];
        sorted[i] = t;
    }
    if (__stop_ktests - __start_ktests > n)
        kprintf("# ktest: only the first %d tests are run; raise ARRAY_SIZE(sorted)\n", n);
    return n;
}

static const char *run_selection;
static bool run_selected(const char *name) { return selected(run_selection, name); }

int ktest_run(const char *selection)
{
    int n = 0, failed = 0, total = sort_tests();
    for (int i = 0; i < total; i++) {
        const struct ktest *t = sorted[i];
        if (!selected(selection, t->name))
            continue;
        n++;
        bool ok = run_one(t);
        failed += !ok;
        kprintf("%s %d - %s\n", ok ? "ok" : "not ok", n, t->name);
    }
    run_selection = selection;
    ktest_run_user_suites(run_selected, &n, &failed);
    if (n == 0)
        kprintf("# no test matches \"%s\"\n", selection);
    kprintf("%d passed, %d failed\n", n - failed, failed);
    return n == 0 ? 1 : failed;
}
