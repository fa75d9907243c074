// The hang detector: a CPU that has stopped reaching points where it could be
// preempted gets its stack printed, and the run fails with it, so that a hang in
// any test says where it is instead of running into the host's timeout.
//
// Two ways a CPU can hang, two checks, both from the timer interrupt:
//  - It spins with interrupts on but never preemptible (inside an epoch section,
//    with preemption disabled or a lock held): its ticks still arrive, and its
//    own tick notices that none of the last `limit` seconds of ticks found it
//    preemptible. It reports itself, from the tick's trapframe.
//  - It spins with interrupts off: it takes no ticks at all. Each CPU watches one
//    neighbour, the next CPU in a ring, once a second; when the neighbour's tick
//    count has not moved for `limit` seconds it sends it an NMI, and the NMI
//    handler reports from where it landed.
//
// Scalability: a CPU's tick writes only its own per-CPU state, and reads one
// other CPU's tick count once a second: no shared line, and the work per tick
// does not grow with the number of CPUs (a ring, not a sweep; CPUs whose tick
// stopped are skipped, one flag each, once a second). Everything runs
// in interrupt handlers, which mtrace leaves out of the per-operation figures.
//
// CPU 0 never stops its tick (it advances the epochs), so once every other
// CPU's tick has stopped, no ring neighbour watches it. The last CPU, whose
// ring successor CPU 0 is, stops its tick for at most `limit` seconds: when
// it wakes, and CPU 0's tick count has not moved for `limit` seconds, it
// sends CPU 0 the NMI. On an idle machine that costs one wake-up a minute.
#include "proc/hangcheck.h"
#include "proc/tickless.h"
#include "lib/panic.h"
#include "sync/cpumask.h"
#include "sync/percpu.h"
#include "sync/spinlock.h"
#include "x86/smp.h"
#include "x86/trap.h"
#include "x86/x86.h"

// Generous: under TCG on a loaded 2-core host, legitimate long stretches
// without preemption take tens of seconds (a 4 GiB file mapping sets a million
// page descriptors inside one epoch section: 20 s at 8 vCPUs, seen in make test).
#define HANGCHECK_DEFAULT_S 60

struct hangcheck {
    uint32_t quiet;      // own ticks in a row that found this CPU not preemptible
    uint32_t since;      // own ticks since the last look at the neighbour
    int watching;        // the neighbour looked at last
    uint64_t seen;       // its tick count at the last look
    uint32_t still;      // seconds the neighbour's tick count has not moved
    bool reported;       // this CPU's current hang was reported (once per hang)
    bool nmi_requested;  // written by the watching CPU before it sends the NMI
    bool dump_requested; // written by a hung CPU waiting for a lock this one holds
    uint64_t cpu0_seen;  // the last CPU, tick stopped: CPU 0's tick count ...
    uint64_t cpu0_since; // ... and since when it has not moved (nsec_now)
    bool cpu0_asked;     // ... and whether CPU 0 got its NMI for it
};
static DEFINE_PERCPU(struct hangcheck, hc);

static uint32_t limit_s = HANGCHECK_DEFAULT_S; // 0: off
static hangcheck_report_fn report_hook;         // NULL: a hang panics

void hangcheck_init(void)
{
    cmdline_uint("hangcheck", &limit_s);
}

void hangcheck_configure(uint32_t seconds, hangcheck_report_fn fn)
{
    WRITE_ONCE(report_hook, fn);
    WRITE_ONCE(limit_s, seconds);
}

uint32_t hangcheck_limit(void) { return READ_ONCE(limit_s); }

// Give a CPU asked for its stack (by NMI) time to print it.
static void linger(uint64_t ns)
{
    uint64_t until = nsec_now() + ns;
    while (nsec_now() < until)
        pause();
}

// The lock this CPU waits for, and its holder's stack: an NMI asks the holder
// to print it (and what it waits for in turn), and we give it a moment.
static void report_lock(struct spinlock *l)
{
    if (!l)
        return;
    int owner = READ_ONCE(l->owner);
    kprintf("hang: waiting for lock \"%s\" (%p), held by cpu %d\n", l->name, l, owner);
    if (owner < 0 || owner >= ncpu || owner == cpu_id())
        return;
    hangcheck_dump_cpu(owner);
    linger(500000000);
}

void hangcheck_dump_cpu(int c)
{
    WRITE_ONCE(per_cpu_ptr(&hc, c)->dump_requested, true);
    lapic_send_nmi(cpu_apicid[c]);
}

// Before the panic, the other CPUs' stacks (the first DUMP_OTHERS): a hang's
// cause is often elsewhere -- a lock's holder, a CPU that does not answer an
// xcall, neither of which the hanging CPU's report names (the fuzzer's hang of
// ab80761: six CPUs waited for two that spun on locks whose holders no stack
// showed).
#define DUMP_OTHERS 16
static void dump_others(void)
{
    int asked = 0;
    for (int c = 0; c < ncpu && asked < DUMP_OTHERS; c++) {
        if (c != cpu_id() && cpumask_test(&cpu_online_mask, c)) {
            hangcheck_dump_cpu(c);
            asked++;
            linger(100000000); // one stack at a time
        }
    }
}

static void report(struct trapframe *tf, bool nmi)
{
    uint32_t s = READ_ONCE(limit_s);
    // Read before printing: a contended console lock would overwrite it.
    struct spinlock *l = this_cpu_read(cpu.spinning_on);
    kprintf("\nhang: cpu %d %s for %u s\n", cpu_id(),
            nmi ? "took no timer interrupt (interrupts off)" : "was never preemptible", s);
    report_lock(l);
    hangcheck_report_fn fn = READ_ONCE(report_hook);
    if (fn) {
        kprintf("hang: at ");
        print_symbol(tf->rip);
        kprintf("\n");
        backtrace_from(tf->rbp);
        fn(cpu_id(), tf, nmi);
        return;
    }
    dump_others();
    panic_trap(tf, "hang");
}

// Could this tick have preempted what it interrupted? User mode and preemptible
// kernel code (the idle loop included) count as progress.
static bool preemptible(const struct trapframe *tf)
{
    return (tf->cs & 3) ||
           (this_cpu_read(cpu.preempt_depth) == 0 && this_cpu_read(cpu.locks_held) == 0);
}

// The next CPU in the ring whose tick runs: one whose tick stopped (tickless
// idle, proc/tickless.c) is halted with nothing to do, and the one after it
// would otherwise go unwatched. -1 if there is none.
static int neighbour(void)
{
    for (int i = 1; i < ncpu; i++) {
        int n = (cpu_id() + i) % ncpu;
        if (cpumask_test(&cpu_online_mask, n) && !tickless_stopped(n))
            return n;
    }
    return -1;
}

static void watch_neighbour(struct hangcheck *h, uint32_t s)
{
    int n = neighbour();
    if (n < 0)
        return;
    uint64_t t = timer_ticks(n);
    if (n != h->watching || t != h->seen) {
        h->watching = n;
        h->seen = t;
        h->still = 0;
        return;
    }
    if (++h->still != s)
        return; // not yet, or already asked
    struct hangcheck *nh = per_cpu_ptr(&hc, n);
    WRITE_ONCE(nh->nmi_requested, true);
    lapic_send_nmi(cpu_apicid[n]);
}

void hangcheck_tick(struct trapframe *tf)
{
    uint32_t s = READ_ONCE(limit_s);
    struct hangcheck *h = this_cpu_ptr(&hc);
    if (s == 0)
        return;
    if (preemptible(tf)) {
        h->quiet = 0;
        h->reported = false;
    } else if (++h->quiet >= s * TIMER_HZ && !h->reported) {
        h->reported = true;
        report(tf, false);
    }
    if (++h->since >= TIMER_HZ) {
        h->since = 0;
        watch_neighbour(h, s);
    }
}

// The CPU that watches CPU 0 while its own tick is stopped.
static bool watches_cpu0(void) { return cpu_id() != 0 && cpu_id() == READ_ONCE(ncpu) - 1; }

static void look_at_cpu0(struct hangcheck *h, uint64_t now, uint32_t s)
{
    uint64_t t = timer_ticks(0);
    if (t != h->cpu0_seen || h->cpu0_since == 0) {
        h->cpu0_seen = t;
        h->cpu0_since = now;
        h->cpu0_asked = false;
        return;
    }
    if (h->cpu0_asked || now - h->cpu0_since < (uint64_t)s * 1000000000ULL)
        return;
    h->cpu0_asked = true;
    WRITE_ONCE(per_cpu_ptr(&hc, 0)->nmi_requested, true);
    lapic_send_nmi(cpu_apicid[0]);
}

uint64_t hangcheck_tick_stopping(uint64_t now)
{
    uint32_t s = READ_ONCE(limit_s);
    if (s == 0 || !watches_cpu0())
        return UINT64_MAX;
    look_at_cpu0(this_cpu_ptr(&hc), now, s);
    return now + (uint64_t)s * 1000000000ULL;
}

void hangcheck_tick_restarted(uint64_t now)
{
    uint32_t s = READ_ONCE(limit_s);
    if (s != 0 && watches_cpu0())
        look_at_cpu0(this_cpu_ptr(&hc), now, s);
}

bool hangcheck_nmi(struct trapframe *tf)
{
    struct hangcheck *h = this_cpu_ptr(&hc);
    if (READ_ONCE(h->dump_requested)) {
        WRITE_ONCE(h->dump_requested, false);
        // Read before printing: the console lock, if contended, overwrites it
        // (dumps of the fuzzer's hang at ab80761 lost which lock CPUs spun on).
        struct spinlock *l = this_cpu_read(cpu.spinning_on);
        kprintf("hang: cpu %d, asked for its stack, at ", cpu_id());
        print_symbol(tf->rip);
        kprintf("\n");
        backtrace_from(tf->rbp);
        if (l)
            kprintf("hang: cpu %d waits for lock \"%s\" (%p), held by cpu %d\n", cpu_id(),
                    l->name, l, READ_ONCE(l->owner));
        if (!READ_ONCE(h->nmi_requested))
            return true;
    }
    if (!READ_ONCE(h->nmi_requested))
        return false;
    WRITE_ONCE(h->nmi_requested, false);
    report(tf, true);
    return true;
}
