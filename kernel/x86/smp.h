// Multiprocessor support: CPU discovery, start-up, interrupts between CPUs.
#pragma once
#include "kernel.h"
#include "sync/cpumask.h"

struct bootinfo;
struct trapframe;

// acpi.c: find the MADT and record CPUs, IOAPICs and interrupt overrides.
void acpi_init(const struct bootinfo *bi);
extern uint32_t cpu_apicid[NCPU_MAX]; // APIC ID of each dense CPU index (32 bits: x2APIC)
int cpu_index_of_apicid(uint32_t apicid); // dense index, or -1 if not in the MADT

#define ACPI_MAX_IOAPIC 16
#define ACPI_MAX_OVERRIDE 32
struct acpi_ioapic {
    uint32_t id;
    uint32_t gsi_base;  // first global system interrupt it handles
    uint64_t pa;        // register window
};
struct acpi_override {  // ISA IRQ `irq` arrives on `gsi` with these MPS INTI flags
    uint8_t irq;
    uint16_t flags;     // bits 0-1 polarity, 2-3 trigger (0 = bus default)
    uint32_t gsi;
};
extern uint64_t acpi_lapic_pa;
extern struct acpi_ioapic acpi_ioapics[ACPI_MAX_IOAPIC];
extern int acpi_nioapic;
extern struct acpi_override acpi_overrides[ACPI_MAX_OVERRIDE];
extern int acpi_noverride;
extern uint16_t acpi_pm_timer_port; // ACPI PM timer I/O port (3.579545 MHz), 0 if none
extern bool acpi_pm_timer_32bit;    // counter is 32 bits wide (else 24)

// lapic.c: this CPU's local APIC and its timer.
void lapic_init(void);                  // on each CPU
uint32_t lapic_id(void);
void lapic_eoi(void);
void lapic_send_ipi(uint32_t apicid, uint32_t vector);
void lapic_send_init(uint32_t apicid);
void lapic_send_sipi(uint32_t apicid, uint32_t page); // start at physical page*4096
void lapic_send_nmi(uint32_t apicid);
void lapic_send_nmi_all_but_self(void);
// INIT to all other CPUs, first thing at kernel entry (before kvm_init): parks the
// firmware's APs, which otherwise steal host time under TCG. Optional.
void lapic_park_aps_early(void);
extern uint64_t lapic_aps_parked_tsc; // when, 0 if not done
void lapic_timer_init(void);            // calibrate once on the boot CPU, start on each
uint64_t timer_ticks(int c);            // ticks seen by CPU c
void lapic_timer_stop(void);            // tickless idle: no more ticks on this CPU,
void lapic_timer_oneshot(uint64_t ns);  // or one interrupt after ns,
void lapic_timer_restart(void);         // and the periodic tick again
uint64_t tsc_hz(void);                  // calibrated TSC frequency
uint64_t nsec_now(void);                // nanoseconds since kernel entry (TSC based)
uint64_t realtime_nsec(void);           // CLOCK_REALTIME in nanoseconds (rtc.c)
void udelay(uint64_t usec);             // busy wait (TSC); needs lapic_timer_init first
#define TIMER_HZ 100
#define TICK_NS (1000000000ULL / TIMER_HZ) // nanoseconds per tick
// Called on every timer interrupt of every CPU, after the tick is counted and the
// interrupt acknowledged, so it may switch away (the scheduler installs itself here).
extern void (*timer_tick_hook)(struct trapframe *tf);

// ioapic.c: route a legacy IRQ to a vector on a CPU.
void ioapic_init(void);
void ioapic_route(int irq, int vector, int cpu);

// smp.c: start every CPU listed in the MADT; prints "smp: N CPUs online".
void smp_boot(const struct bootinfo *bi);

// Interrupt vectors.
#define T_IRQ0 32          // legacy IRQ n arrives on T_IRQ0 + n
#define T_TIMER 0x40
#define T_NET 0x41         // the virtio-net device (MSI-X)
#define T_XCALL 0xf0
#define T_SPURIOUS 0xff
