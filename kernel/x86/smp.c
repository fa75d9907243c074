// Starting the other CPUs (application processors, APs).
//
// The boot CPU prepares everything an AP needs before waking any: the trampoline
// page (trampoline.S) with its temporary page table, a per-CPU area and a boot
// stack for each AP. It then wakes all APs at once -- INIT to each, one 10 ms
// wait, STARTUP to each, a second STARTUP 200 us later to those not yet seen --
// so start-up time does not grow by 10 ms per CPU. (If lapic_park_aps_early ran
// at kernel entry, the APs are in INIT already and the first step is skipped.)
// Each AP finds its dense CPU index from its APIC ID, sets itself up, marks
// itself online and halts in an interrupt-driven idle loop (xcalls arrive as
// IPIs). The boot CPU sleeps in hlt until all are online or a time limit passes,
// then reports any that are missing.
//
// Scalability: an AP writes only its own per-CPU area, except for one atomic
// increment of the online count and one bit in cpu_online_mask at the end.
#include "bootinfo.h"
#include "mm/mm.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "sync/xcall.h"
#include "x86/smp.h"
#include "proc/tickless.h"
#include "x86/trap.h"
#include "x86/x86.h"

cpumask_t cpu_online_mask = {.w = {1}}; // the boot CPU, index 0

#define AP_TIMEOUT_MS (5000 + 50 * NCPU_MAX) // generous: TCG runs 255 vCPUs on 2 cores

// Shared with trampoline.S's ap_entry64.
uint64_t ap_boot_cr3;                // the boot CPU's page table
uint32_t ap_ticket;                  // next boot stack to hand out
uint32_t ap_nstacks;
uintptr_t ap_stack_top[NCPU_MAX];

// Boot CPU state the APs copy.
static uint64_t ap_boot_cr0, ap_boot_cr4, ap_boot_pat, ap_boot_xcr0;

// Start-up handshake: an AP claims its slot (WAITING -> RUNNING) before going
// further; after the time limit the boot CPU abandons the slots still WAITING, and
// an AP that shows up later halts instead of joining half-counted.
enum { AP_WAITING, AP_RUNNING, AP_ABANDONED };
static uint8_t ap_state[NCPU_MAX];

extern char trampoline_start[], trampoline_end[];
extern char tr_gdt[], tr_gdtr[], tr_far32[], tr_far64[], tr_efer[], tr_pm32[], tr_lm64[];
extern char ap_entry64[];

#define CR4_OSXSAVE (1UL << 18)

static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t)hi << 32 | lo;
}

static void xsetbv0(uint64_t v)
{
    asm volatile("xsetbv" : : "a"((uint32_t)v), "d"((uint32_t)(v >> 32)), "c"(0));
}

static void patch32(uint8_t *t, const char *field, uint32_t v)
{
    memcpy(t + (field - trampoline_start), &v, 4);
}

// The page that trampoline entry 0 points to. It may be anywhere in memory, but
// its physical address bit 15 must be clear (see make_trampoline); rejected pages
// are freed again.
static pte_t *alloc_trampoline_table(void)
{
    void *rejects[16];
    int n = 0;
    pte_t *x = NULL;
    while (n < (int)ARRAY_SIZE(rejects)) {
        x = page_alloc_zeroed();
        if (!x)
            panic("smp: out of memory");
        if (!(V2P(x) & 0x8000))
            break;
        rejects[n++] = x;
        x = NULL;
    }
    while (n > 0)
        page_free(rejects[--n]);
    if (!x)
        panic("smp: no page for the trampoline page table");
    return x;
}

// Copy the start-up code to T and build the temporary page table (see
// trampoline.S): T is the PML4; T[0] -> X; X[0] -> X (so X serves as PDPT, page
// directory and page table at once); X[T/4096] -> T maps T to itself, since
// T < 1 MiB makes its index 0 at the upper three levels and T/4096 at the last.
//
// T[0]'s low two bytes are also the AP's first instruction: 0x73 is "jae rel8"
// and also P, RW, PCD, A and an ignored bit; the second byte is the jump distance
// and holds address bits 12-15 of X (high nibble) and bits 8-11 of the entry,
// which we set to 0xe (bit 8 must be zero on AMD). Bit 15 of X clear keeps the
// distance positive: 14..126, landing at offset 16..128, inside the nop sled.
// Returns X.
static pte_t *make_trampoline(uint64_t tpa)
{
    size_t len = trampoline_end - trampoline_start;
    int kidx = PX(3, (uintptr_t)ap_entry64);
    if (tpa < PGSIZE || tpa >= 0x100000 || tpa % PGSIZE)
        panic("smp: trampoline page %lx is not a page below 1 MiB", tpa);
    if (len > (size_t)kidx * 8)
        panic("smp: trampoline code overlaps its PML4 entry %d", kidx);

    uint8_t *t = P2V(tpa);
    memset(t, 0, PGSIZE);
    memcpy(t, trampoline_start, len);
    patch32(t, tr_gdtr + 2, tpa + (tr_gdt - trampoline_start));
    patch32(t, tr_far32, tpa + (tr_pm32 - trampoline_start));
    patch32(t, tr_far64, tpa + (tr_lm64 - trampoline_start));
    patch32(t, tr_efer, rdmsr(MSR_EFER) & (EFER_SCE | EFER_LME | EFER_NXE));

    pte_t *x = alloc_trampoline_table();
    x[0] = V2P(x) | PTE_P | PTE_W;
    x[tpa / PGSIZE] = tpa | PTE_P | PTE_W;
    pte_t *pml4 = (pte_t *)t;
    pml4[0] = V2P(x) | 0xe00 | 0x73;
    const pte_t *kpml4 = P2V(PTE_ADDR(read_cr3()));
    pml4[kidx] = kpml4[kidx];
    return x;
}

// Per-CPU areas and boot stacks for every AP, and the state they copy.
static void prepare_aps(void)
{
    for (int c = 1; c < ncpu; c++) {
        if (!percpu_alloc_area(c))
            panic("smp: no memory for CPU %d's per-CPU area", c);
        // A kernel stack with an unmapped guard page below it (kstack.c): an
        // overflow of the idle/boot stack faults instead of corrupting memory.
        char *stack = kstack_alloc();
        if (!stack)
            panic("smp: no memory for CPU %d's stack", c);
        ap_stack_top[c - 1] = (uintptr_t)stack + KSTACK_SIZE;
    }
    ap_nstacks = ncpu - 1;
    ap_boot_cr3 = read_cr3();
    ap_boot_cr0 = read_cr0();
    ap_boot_cr4 = read_cr4();
    ap_boot_pat = rdmsr(MSR_PAT);
    if (ap_boot_cr4 & CR4_OSXSAVE)
        ap_boot_xcr0 = xgetbv0();
}

// The APs must have been in INIT for 10 ms before the first STARTUP. Parked at
// kernel entry (lapic_park_aps_early), they usually have; otherwise INIT them now.
static void init_aps(void)
{
    uint64_t parked = lapic_aps_parked_tsc, ten_ms = tsc_hz() / 100;
    if (!parked) {
        for (int c = 1; c < ncpu; c++)
            lapic_send_init(cpu_apicid[c]);
        udelay(10000);
        return;
    }
    while (rdtsc() - parked < ten_ms)
        pause();
}

static void wake_aps(uint64_t tpa)
{
    init_aps();
    for (int c = 1; c < ncpu; c++)
        lapic_send_sipi(cpu_apicid[c], tpa / PGSIZE);
    udelay(200);
    // A second STARTUP, as the MP protocol asks, unless every AP has taken its
    // boot stack already; an AP that is running ignores it.
    if (READ_ONCE(ap_ticket) == ap_nstacks)
        return;
    for (int c = 1; c < ncpu; c++)
        if (READ_ONCE(ap_state[c]) == AP_WAITING)
            lapic_send_sipi(cpu_apicid[c], tpa / PGSIZE);
}

// Sleep until every AP is online or the deadline passes. The timer (and the last
// AP's wake-up IPI) ends each hlt; sleeping rather than spinning leaves the host's
// cores to the APs under TCG.
static void wait_online(uint64_t deadline_ns)
{
    while (READ_ONCE(ncpu_online) < ncpu && nsec_now() < deadline_ns)
        asm volatile("sti; hlt; cli" ::: "memory");
}

// Give up on APs that never claimed their slot; wait a little for those that did.
static void abandon_missing(void)
{
    for (int c = 1; c < ncpu; c++) {
        uint8_t want = AP_WAITING;
        if (__atomic_compare_exchange_n(&ap_state[c], &want, AP_ABANDONED, false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            kprintf("smp: CPU %d (APIC ID %u) did not start\n", c, cpu_apicid[c]);
    }
    wait_online(nsec_now() + 1000000000ULL);
    for (int c = 1; c < ncpu; c++)
        if (ap_state[c] == AP_RUNNING && !cpumask_test(&cpu_online_mask, c))
            kprintf("smp: CPU %d (APIC ID %u) started but did not come online\n", c, cpu_apicid[c]);
}

static void start_aps(uint64_t tpa, uint64_t t0)
{
    pte_t *x = make_trampoline(tpa);
    prepare_aps();
    wake_aps(tpa);
    wait_online(t0 + AP_TIMEOUT_MS * 1000000ULL);
    if (ncpu_online < ncpu)
        abandon_missing(); // and keep X: a late AP might still be walking it
    else
        page_free(x);
}

void smp_boot(const struct bootinfo *bi)
{
    xcall_init();
    this_cpu_write(cpu.online, true);
    uint64_t t0 = nsec_now();
    if (ncpu > 1 && !bi->trampoline)
        kprintf("smp: the loader reserved no trampoline page; other CPUs stay off\n");
    else if (ncpu > 1)
        start_aps(bi->trampoline, t0);
    uint64_t t1 = nsec_now();
    kprintf("smp: %d CPUs online (%lu.%03lu ms since kernel entry, start-up %lu.%03lu ms)\n",
            ncpu_online, t1 / 1000000, t1 / 1000 % 1000, (t1 - t0) / 1000000,
            (t1 - t0) / 1000 % 1000);
}

// ---- on each AP ---------------------------------------------------------------

static __noreturn void ap_halt(void)
{
    for (;;)
        asm volatile("cli; hlt");
}

// Called from ap_entry64 on a boot stack, with the kernel's page table loaded and
// no per-CPU area yet. The boot stack stays this CPU's idle stack.
void ap_main(void) __noreturn;
void ap_main(void)
{
    // The control registers the boot CPU has (caches on, write protection, the
    // same CR4 features), then the kernel's own settings on top.
    write_cr0(ap_boot_cr0);
    write_cr4(ap_boot_cr4);
    wrmsr(MSR_PAT, ap_boot_pat);
    if (ap_boot_cr4 & CR4_OSXSAVE)
        xsetbv0(ap_boot_xcr0);
    kvm_load();

    int c = cpu_index_of_apicid(lapic_id());
    if (c <= 0)
        ap_halt(); // not a CPU we started: stay out of the way
    uint8_t want = AP_WAITING;
    if (!__atomic_compare_exchange_n(&ap_state[c], &want, AP_RUNNING, false, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST))
        ap_halt(); // too late: the boot CPU has given up on us

    percpu_load(percpu_offset[c]);
    gdt_init_cpu();
    trap_init_cpu();
    lapic_init();
    lapic_timer_init();

    this_cpu_write(cpu.online, true);
    cpumask_set_atomic(&cpu_online_mask, c);
    if (fetch_add(&ncpu_online, 1) + 1 == ncpu)
        lapic_send_ipi(cpu_apicid[0], T_XCALL); // wake the boot CPU now, not at its next tick

    // Idle: everything from here on arrives as an interrupt.
    tickless_idle();
}
