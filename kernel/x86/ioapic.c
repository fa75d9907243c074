// IOAPICs: deliver device interrupts (global system interrupts, GSIs) to a chosen
// vector on a chosen CPU. Everything starts masked; a driver asks for its legacy
// ISA IRQ with ioapic_route(), which applies the MADT's interrupt source
// overrides (e.g. the PIT's IRQ 0 arriving on GSI 2, or a level-triggered SCI).
// The legacy 8259 PICs are remapped away from the exception vectors and masked.
//
// Routing is rare (driver start-up), so one spinlock per IOAPIC guards its
// select/window register pair; interrupt delivery itself never touches this code.
#include "mm/mm.h"
#include "sync/spinlock.h"
#include "x86/smp.h"
#include "x86/x86.h"

#define IOREGSEL 0x00
#define IOWIN 0x10
#define IOAPIC_VER 0x01
#define IOAPIC_REDTBL(n) (0x10 + 2 * (n))

#define RTE_MASKED (1u << 16)
#define RTE_LEVEL (1u << 15)
#define RTE_ACTIVE_LOW (1u << 13)

// MPS INTI flags in MADT interrupt source overrides.
#define INTI_POLARITY(f) ((f) & 3)   // 0 bus default, 1 high, 3 low
#define INTI_TRIGGER(f) (((f) >> 2) & 3) // 0 bus default, 1 edge, 3 level

struct ioapic {
    volatile uint32_t *regs;
    uint32_t gsi_base;
    uint32_t nredir;
    struct spinlock lock;
};
static struct ioapic ioapics[ACPI_MAX_IOAPIC];
static int nioapic;

static uint32_t ioapic_read(struct ioapic *io, uint32_t reg)
{
    io->regs[IOREGSEL / 4] = reg;
    return io->regs[IOWIN / 4];
}

static void ioapic_write(struct ioapic *io, uint32_t reg, uint32_t v)
{
    io->regs[IOREGSEL / 4] = reg;
    io->regs[IOWIN / 4] = v;
}

// Remap the 8259s to T_IRQ0.. (so a stray PIC interrupt cannot look like an
// exception) and mask every line; the IOAPICs take over.
static void pic_disable(void)
{
    outb(0x20, 0x11); outb(0xa0, 0x11);         // ICW1: init, expect ICW4
    outb(0x21, T_IRQ0); outb(0xa1, T_IRQ0 + 8); // ICW2: vector bases
    outb(0x21, 0x04); outb(0xa1, 0x02);         // ICW3: slave on IRQ2
    outb(0x21, 0x01); outb(0xa1, 0x01);         // ICW4: 8086 mode
    outb(0x21, 0xff); outb(0xa1, 0xff);         // mask all
}

void ioapic_init(void)
{
    pic_disable();
    for (int i = 0; i < acpi_nioapic; i++) {
        struct ioapic *io = &ioapics[nioapic++];
        io->regs = mmio_map(acpi_ioapics[i].pa, PGSIZE);
        io->gsi_base = acpi_ioapics[i].gsi_base;
        io->nredir = ((ioapic_read(io, IOAPIC_VER) >> 16) & 0xff) + 1;
        spin_init(&io->lock, "ioapic");
        for (uint32_t n = 0; n < io->nredir; n++) {
            ioapic_write(io, IOAPIC_REDTBL(n), RTE_MASKED);
            ioapic_write(io, IOAPIC_REDTBL(n) + 1, 0);
        }
    }
    kprintf("ioapic: %d IOAPIC(s), all %s masked\n", nioapic, nioapic ? "inputs" : "(none)");
}

static struct ioapic *ioapic_for(uint32_t gsi)
{
    for (int i = 0; i < nioapic; i++)
        if (gsi >= ioapics[i].gsi_base && gsi < ioapics[i].gsi_base + ioapics[i].nredir)
            return &ioapics[i];
    return NULL;
}

// The GSI and redirection flags for ISA IRQ `irq`: ISA defaults (edge, active
// high, GSI = IRQ) unless the MADT overrides them.
static uint32_t isa_gsi(int irq, uint32_t *flags)
{
    uint32_t gsi = irq;
    uint16_t inti = 0;
    for (int i = 0; i < acpi_noverride; i++) {
        if (acpi_overrides[i].irq == irq) {
            gsi = acpi_overrides[i].gsi;
            inti = acpi_overrides[i].flags;
        }
    }
    *flags = 0;
    if (INTI_POLARITY(inti) == 3)
        *flags |= RTE_ACTIVE_LOW;
    if (INTI_TRIGGER(inti) == 3)
        *flags |= RTE_LEVEL;
    return gsi;
}

void ioapic_route(int irq, int vector, int cpu)
{
    uint32_t flags;
    uint32_t gsi = isa_gsi(irq, &flags);
    struct ioapic *io = ioapic_for(gsi);
    if (!io)
        panic("ioapic: no IOAPIC handles IRQ %d (GSI %u)", irq, gsi);
    // Physical destination mode carries an 8-bit APIC ID; bigger IDs need
    // interrupt remapping, which we do not have.
    uint32_t dest = cpu_apicid[cpu];
    if (dest > 0xff)
        panic("ioapic: CPU %d (APIC ID %u) is not reachable from an IOAPIC", cpu, dest);
    uint32_t n = gsi - io->gsi_base;
    spin_lock(&io->lock);
    ioapic_write(io, IOAPIC_REDTBL(n), RTE_MASKED);  // never half-programmed and live
    ioapic_write(io, IOAPIC_REDTBL(n) + 1, dest << 24);
    ioapic_write(io, IOAPIC_REDTBL(n), flags | vector); // fixed, physical, unmasked
    spin_unlock(&io->lock);
}
