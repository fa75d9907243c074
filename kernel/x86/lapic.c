// The local APIC of each CPU: enabling it, end of interrupt, inter-processor
// interrupts, and the per-CPU periodic timer; also TSC calibration and the
// nanosecond clock.
//
// Registers are reached through an uncached MMIO window (xAPIC) or, when the
// firmware left the APIC in x2APIC mode or an APIC ID does not fit in 8 bits, as
// MSRs (x2APIC); only lapic_read/lapic_write/icr_write know the difference, and
// APIC IDs are 32 bits everywhere. (QEMU's TCG has no x2APIC, so that path is
// untested there.)
//
// Scalability: each CPU's timer interrupt touches only its own APIC and its own
// per-CPU tick counter, so ticks on different CPUs share no cache line. The
// calibration results are written once on the boot CPU and only read after.
#include "mm/mm.h"
#include "sync/percpu.h"
#include "x86/smp.h"
#include "x86/trap.h"
#include "x86/x86.h"

// Register offsets in the xAPIC window; the x2APIC MSR is 0x800 + offset/16.
#define LAPIC_ID 0x020
#define LAPIC_VER 0x030
#define LAPIC_TPR 0x080
#define LAPIC_EOI 0x0b0
#define LAPIC_SVR 0x0f0
#define LAPIC_ESR 0x280
#define LAPIC_ICR_LO 0x300
#define LAPIC_ICR_HI 0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_LVT_THERMAL 0x330
#define LAPIC_LVT_PERF 0x340
#define LAPIC_LVT_LINT0 0x350
#define LAPIC_LVT_LINT1 0x360
#define LAPIC_LVT_ERROR 0x370
#define LAPIC_TIMER_INIT 0x380
#define LAPIC_TIMER_CUR 0x390
#define LAPIC_TIMER_DIV 0x3e0

#define SVR_ENABLE 0x100
#define LVT_MASKED (1u << 16)
#define LVT_PERIODIC (1u << 17)
#define LVT_DM_NMI (4u << 8)
#define TIMER_DIV16 0x3

#define ICR_DM_FIXED (0u << 8)
#define ICR_DM_NMI (4u << 8)
#define ICR_DM_INIT (5u << 8)
#define ICR_DM_STARTUP (6u << 8)
#define ICR_DELIVS (1u << 12)        // xAPIC: previous IPI not yet accepted
#define ICR_ASSERT (1u << 14)
#define ICR_ALL_BUT_SELF (3u << 18)

#define APIC_BASE_EXTD (1UL << 10)   // x2APIC mode
#define APIC_BASE_EN (1UL << 11)
#define CPUID1_ECX_X2APIC (1u << 21)
#define MSR_X2APIC_BASE 0x800
#define MSR_X2APIC_ICR 0x830

static volatile uint32_t *lapic_mmio; // xAPIC window, shared by all CPUs
static bool x2apic;
static bool lapic_ready;              // the boot CPU's lapic_init has run

// Calibration results, written once by the boot CPU.
static uint32_t timer_count;          // APIC timer counts (divided by 16) per tick
static uint64_t tsc_freq;             // TSC cycles per second
static uint64_t ns_mult;              // ns = tsc_delta * ns_mult >> 32

extern uint64_t boot_tsc;             // main.c: TSC at kernel entry

static DEFINE_PERCPU(uint64_t, ticks);
void (*timer_tick_hook)(struct trapframe *tf);

static uint32_t lapic_read(uint32_t reg)
{
    if (x2apic)
        return rdmsr(MSR_X2APIC_BASE + reg / 16);
    return lapic_mmio[reg / 4];
}

static void lapic_write(uint32_t reg, uint32_t v)
{
    if (x2apic)
        wrmsr(MSR_X2APIC_BASE + reg / 16, v);
    else
        lapic_mmio[reg / 4] = v;
}

// Works on a CPU whose APIC is not set up yet (an AP looking up its own index):
// in x2APIC mode the MSRs are not readable before the mode is switched on, but
// CPUID leaf 0xB reports the same 32-bit ID.
uint32_t lapic_id(void)
{
    if (x2apic) {
        uint32_t a, b, c, d;
        cpuid(0xb, 0, &a, &b, &c, &d);
        return d;
    }
    return lapic_mmio[LAPIC_ID / 4] >> 24;
}

void lapic_eoi(void)
{
    if (lapic_ready)
        lapic_write(LAPIC_EOI, 0);
}

// One write of the interrupt command register. Interrupts stay off across it:
// an interrupt handler sending its own IPI between the two xAPIC halves would
// change the destination under us.
static void icr_write(uint32_t dest, uint32_t lo)
{
    push_off();
    if (x2apic) {
        wrmsr(MSR_X2APIC_ICR, (uint64_t)dest << 32 | lo);
    } else {
        while (lapic_mmio[LAPIC_ICR_LO / 4] & ICR_DELIVS)
            pause();
        lapic_mmio[LAPIC_ICR_HI / 4] = dest << 24;
        lapic_mmio[LAPIC_ICR_LO / 4] = lo;
    }
    pop_off();
}

void lapic_send_ipi(uint32_t apicid, uint32_t vector)
{
    icr_write(apicid, ICR_DM_FIXED | ICR_ASSERT | vector);
}

void lapic_send_init(uint32_t apicid) { icr_write(apicid, ICR_DM_INIT | ICR_ASSERT); }

void lapic_send_sipi(uint32_t apicid, uint32_t page)
{
    icr_write(apicid, ICR_DM_STARTUP | ICR_ASSERT | (page & 0xff));
}

// The hang detector: interrupt one CPU whatever it is doing.
void lapic_send_nmi(uint32_t apicid) { icr_write(apicid, ICR_DM_NMI | ICR_ASSERT); }

// For panic: stop everyone else, whatever they are doing, with one command.
void lapic_send_nmi_all_but_self(void)
{
    if (lapic_ready)
        icr_write(0, ICR_DM_NMI | ICR_ASSERT | ICR_ALL_BUT_SELF);
}

// At kernel entry, before anything else: put every other CPU into its INIT state
// (waiting for a STARTUP IPI, halted). OVMF leaves its APs in a loop that, under
// TCG, competes with the boot CPU for the host's two cores: kernel entry to
// "smp: N CPUs online" took 9-13 s at 64 vCPUs and 80 s at 255 without this,
// 0.5-1 s and 4-5 s with it. The kernel's page tables do not exist yet; the
// loader's direct map covers the low 4 GiB, where the APIC is.
uint64_t lapic_aps_parked_tsc;

void lapic_park_aps_early(void)
{
    uint64_t base = rdmsr(MSR_APIC_BASE);
    uint32_t icr = ICR_DM_INIT | ICR_ASSERT | ICR_ALL_BUT_SELF;
    if (!(base & APIC_BASE_EN))
        return;
    if (base & APIC_BASE_EXTD) {
        wrmsr(MSR_X2APIC_ICR, icr);
    } else {
        volatile uint32_t *regs = P2V(base & 0xffffffffff000UL);
        while (regs[LAPIC_ICR_LO / 4] & ICR_DELIVS)
            pause();
        regs[LAPIC_ICR_LO / 4] = icr;
    }
    lapic_aps_parked_tsc = rdtsc();
}

// Decide the mode once, on the boot CPU: keep x2APIC if the firmware chose it
// (leaving it needs a full APIC disable), and use it if some APIC ID needs it.
static void choose_mode(void)
{
    uint32_t a, b, c, d;
    cpuid(1, 0, &a, &b, &c, &d);
    bool can = c & CPUID1_ECX_X2APIC;
    bool need = false;
    for (int i = 0; i < ncpu; i++)
        need |= cpu_apicid[i] > 0xfe;
    x2apic = (rdmsr(MSR_APIC_BASE) & APIC_BASE_EXTD) || (need && can);
    if (need && !can)
        kprintf("lapic: APIC IDs above 254 but no x2APIC; those CPUs cannot start\n");
    if (!x2apic)
        lapic_mmio = mmio_map(acpi_lapic_pa, PGSIZE);
}

// The boot CPU's APIC is in whatever state the firmware left: set every register
// we rely on.
static void setup_boot_apic(void)
{
    lapic_write(LAPIC_SVR, SVR_ENABLE | T_SPURIOUS);
    lapic_write(LAPIC_TPR, 0); // accept every priority
    // Local interrupt pins: the 8259 PIC behind LINT0 is not used; LINT1 carries
    // platform NMIs.
    lapic_write(LAPIC_LVT_LINT0, LVT_MASKED);
    lapic_write(LAPIC_LVT_LINT1, LVT_DM_NMI);
    lapic_write(LAPIC_LVT_TIMER, LVT_MASKED);
    lapic_write(LAPIC_LVT_ERROR, LVT_MASKED);
    uint32_t maxlvt = (lapic_read(LAPIC_VER) >> 16) & 0xff;
    if (maxlvt >= 4)
        lapic_write(LAPIC_LVT_PERF, LVT_MASKED);
    if (maxlvt >= 5)
        lapic_write(LAPIC_LVT_THERMAL, LVT_MASKED);
    lapic_write(LAPIC_ESR, 0); // the error status updates on write: twice clears it
    lapic_write(LAPIC_ESR, 0);
    lapic_write(LAPIC_EOI, 0); // drop anything the firmware left in service
}

void lapic_init(void)
{
    bool boot = !lapic_ready;
    if (boot)
        choose_mode();
    uint64_t base = rdmsr(MSR_APIC_BASE) | APIC_BASE_EN;
    wrmsr(MSR_APIC_BASE, x2apic ? base | APIC_BASE_EXTD : base);
    if (boot) {
        setup_boot_apic();
    } else {
        // An AP's APIC was just reset by INIT: every LVT masked, TPR 0, nothing in
        // service. Only software-enabling it is left. (Each register access is an
        // exit to QEMU under its global lock, which 255 starting vCPUs contend for.)
        lapic_write(LAPIC_SVR, SVR_ENABLE | T_SPURIOUS);
    }
    this_cpu_write(cpu.apicid, cpu_apicid[cpu_id()]);
    lapic_ready = true;
}

// ---- calibration ------------------------------------------------------------

#define CALIB_MS 15

// A reference clock of known rate: the ACPI PM timer (counts up, 24 or 32 bits)
// or, without one, PIT channel 2 (counts down, 16 bits, wraps every 55 ms).
struct refclock {
    const char *name;
    uint32_t hz, mask;
    bool down;
    uint32_t (*read)(void);
};

static uint32_t pm_read(void) { return inl(acpi_pm_timer_port); }

static uint32_t pit_read(void)
{
    outb(0x43, 0x80); // latch channel 2's count
    uint32_t lo = inb(0x42);
    return lo | inb(0x42) << 8;
}

static uint32_t ref_elapsed(const struct refclock *r, uint32_t from, uint32_t to)
{
    return (r->down ? from - to : to - from) & r->mask;
}

// Read the TSC and the APIC timer next to a reference reading. Under TCG the vCPU
// thread can be descheduled between any two instructions, so retry until the
// reference clock shows the reads took at most ~10 us.
static uint32_t ref_sample(const struct refclock *r, uint64_t *tsc, uint32_t *apic)
{
    for (int tries = 0;; tries++) {
        uint32_t t0 = r->read();
        *tsc = rdtsc();
        *apic = lapic_read(LAPIC_TIMER_CUR);
        uint32_t t1 = r->read();
        if (ref_elapsed(r, t0, t1) <= r->hz / 100000 || tries >= 20)
            return t0;
    }
}

// A measurement: the TSC and APIC-timer counts that elapsed over `ns` of real time.
struct calib {
    uint64_t ns;
    uint64_t tsc;
    uint32_t apic;
};

static void measure(const struct refclock *r, struct calib *c)
{
    uint64_t tsc0, tsc1;
    uint32_t apic0, apic1;
    uint32_t want = (uint64_t)r->hz * CALIB_MS / 1000;
    uint32_t t0 = ref_sample(r, &tsc0, &apic0), t1;
    do {
        t1 = ref_sample(r, &tsc1, &apic1);
    } while (ref_elapsed(r, t0, t1) < want);
    c->ns = (uint64_t)ref_elapsed(r, t0, t1) * 1000000000 / r->hz;
    c->tsc = tsc1 - tsc0;
    c->apic = apic0 - apic1;
}

static void choose_refclock(struct refclock *r)
{
    size_t len;
    const char *how = cmdline_get("timer_calib", &len); // "pit" forces the PIT (testing)
    bool pit = how && len == 3 && strncmp(how, "pit", 3) == 0;
    if (acpi_pm_timer_port && !pit) {
        *r = (struct refclock){"PM timer", 3579545, acpi_pm_timer_32bit ? 0xffffffff : 0xffffff,
                               false, pm_read};
        return;
    }
    *r = (struct refclock){"PIT", 1193182, 0xffff, true, pit_read};
    outb(0x61, (inb(0x61) & ~0x02) | 0x01); // speaker off, channel 2 gate on
    outb(0x43, 0xb4);                       // channel 2, lo/hi byte, mode 2 (periodic)
    outb(0x42, 0xff);
    outb(0x42, 0xff);
}

static void calibrate(void)
{
    struct refclock r;
    struct calib c;
    choose_refclock(&r);
    // Let the APIC timer count down from the top, masked, while we watch.
    lapic_write(LAPIC_TIMER_DIV, TIMER_DIV16);
    lapic_write(LAPIC_LVT_TIMER, LVT_MASKED | T_TIMER);
    lapic_write(LAPIC_TIMER_INIT, 0xffffffff);
    measure(&r, &c);
    lapic_write(LAPIC_TIMER_INIT, 0);

    uint64_t apic_hz = (uint64_t)c.apic * 1000000000 / c.ns;
    tsc_freq = c.tsc * 1000000000 / c.ns;
    timer_count = apic_hz / TIMER_HZ;
    if (timer_count == 0 || tsc_freq == 0)
        panic("lapic: calibration failed (%u APIC counts, %lu TSC cycles in %lu ns)", c.apic,
              c.tsc, c.ns);
    ns_mult = (1000000000ULL << 32) / tsc_freq;
    kprintf("lapic: timer %lu kHz (/16), TSC %lu.%03lu MHz, calibrated over %lu ms with the %s\n",
            apic_hz / 1000, tsc_freq / 1000000, tsc_freq / 1000 % 1000, c.ns / 1000000, r.name);
}

// ---- the timer --------------------------------------------------------------

static void timer_intr(struct trapframe *tf)
{
    this_cpu_inc(ticks);
    lapic_eoi();
    void (*hook)(struct trapframe *) = READ_ONCE(timer_tick_hook);
    if (hook)
        hook(tf);
}

void lapic_timer_init(void)
{
    if (!timer_count) {
        calibrate();
        irq_register(T_TIMER, timer_intr);
    }
    lapic_write(LAPIC_TIMER_DIV, TIMER_DIV16);
    lapic_write(LAPIC_LVT_TIMER, LVT_PERIODIC | T_TIMER);
    lapic_write(LAPIC_TIMER_INIT, timer_count);
}

// Tickless idle (proc/tickless.c): stop this CPU's timer, or let it fire once
// after ns (at most a minute; the CPU wakes and looks again), and back to the
// periodic tick. A one-shot interrupt arrives at the same vector as a tick.
void lapic_timer_stop(void) { lapic_write(LAPIC_TIMER_INIT, 0); }

void lapic_timer_oneshot(uint64_t ns)
{
    ns = MIN(ns, 60 * 1000000000ULL);
    uint64_t count = ns * timer_count / TICK_NS; // timer_count: per tick
    lapic_write(LAPIC_LVT_TIMER, T_TIMER); // one-shot mode
    lapic_write(LAPIC_TIMER_INIT, (uint32_t)MIN(MAX(count, 1), 0xffffffffULL));
}

void lapic_timer_restart(void)
{
    lapic_write(LAPIC_LVT_TIMER, LVT_PERIODIC | T_TIMER);
    lapic_write(LAPIC_TIMER_INIT, timer_count);
}

uint64_t timer_ticks(int c) { return READ_ONCE(*per_cpu_ptr(&ticks, c)); }

uint64_t tsc_hz(void) { return tsc_freq; }

// TSC based; the TSCs of all CPUs tick together (invariant TSC, and QEMU's TCG
// derives every vCPU's TSC from the same host clock).
uint64_t nsec_now(void)
{
    if (!ns_mult)
        return 0;
    uint64_t d = rdtsc() - boot_tsc;
    return (uint64_t)(((unsigned __int128)d * ns_mult) >> 32);
}

void udelay(uint64_t usec)
{
    if (!tsc_freq)
        panic("udelay before the TSC is calibrated");
    uint64_t end = rdtsc() + usec * tsc_freq / 1000000;
    while ((int64_t)(rdtsc() - end) < 0)
        pause();
}
