// ACPI table discovery: RSDP -> XSDT (or RSDT) -> MADT and FADT.
//
// From the MADT we learn every CPU's local APIC ID (xAPIC entries, type 0, and
// x2APIC entries, type 9, so machines with more than 255 CPUs need no change
// here), the IOAPICs, the ISA interrupt overrides and the local APIC address.
// From the FADT we take the PM timer port, used to calibrate the APIC timer and
// the TSC. Everything runs once on the boot CPU; the tables are read through the
// direct map and every table's checksum is verified before it is trusted.
#include "bootinfo.h"
#include "mm/mmu.h"
#include "sync/percpu.h"
#include "x86/smp.h"
#include "x86/x86.h"

uint32_t cpu_apicid[NCPU_MAX];
uint64_t acpi_lapic_pa = 0xfee00000; // architectural default
struct acpi_ioapic acpi_ioapics[ACPI_MAX_IOAPIC];
int acpi_nioapic;
struct acpi_override acpi_overrides[ACPI_MAX_OVERRIDE];
int acpi_noverride;
uint16_t acpi_pm_timer_port;
bool acpi_pm_timer_32bit;

struct rsdp {
    char sig[8];        // "RSD PTR "
    uint8_t checksum;   // over the first 20 bytes
    char oem[6];
    uint8_t revision;   // 0: ACPI 1.0 (RSDT only), 2: ACPI 2.0+
    uint32_t rsdt;
    uint32_t length;    // 2.0+: whole structure
    uint64_t xsdt;
    uint8_t xchecksum;  // 2.0+: over `length` bytes
    uint8_t reserved[3];
} __attribute__((packed));

struct sdt {            // common header of every system description table
    char sig[4];
    uint32_t length;
    uint8_t revision;
    uint8_t checksum;
    char oem[6];
    char oem_table[8];
    uint32_t oem_rev;
    uint32_t creator;
    uint32_t creator_rev;
} __attribute__((packed));

struct madt {
    struct sdt h;
    uint32_t lapic_pa;
    uint32_t flags;
    uint8_t entries[];
} __attribute__((packed));

enum { MADT_LAPIC = 0, MADT_IOAPIC = 1, MADT_OVERRIDE = 2, MADT_LAPIC_ADDR = 5, MADT_X2APIC = 9 };

struct madt_lapic {
    uint8_t type, len, acpi_id, apic_id;
    uint32_t flags;
} __attribute__((packed));
struct madt_ioapic {
    uint8_t type, len, id, reserved;
    uint32_t pa, gsi_base;
} __attribute__((packed));
struct madt_override {
    uint8_t type, len, bus, irq;
    uint32_t gsi;
    uint16_t flags;
} __attribute__((packed));
struct madt_lapic_addr {
    uint8_t type, len;
    uint16_t reserved;
    uint64_t pa;
} __attribute__((packed));
struct madt_x2apic {
    uint8_t type, len;
    uint16_t reserved;
    uint32_t apic_id, flags, acpi_uid;
} __attribute__((packed));

#define LAPIC_ENABLED 1
#define LAPIC_ONLINE_CAPABLE 2

// FADT fields we need (offsets from the ACPI spec; the table is longer).
#define FADT_PM_TMR_BLK 76   // uint32 I/O port
#define FADT_PM_TMR_LEN 91   // uint8, 4 if present
#define FADT_FLAGS 112       // uint32; bit 8: TMR_VAL_EXT (32-bit counter)
#define FADT_X_PM_TMR_BLK 208 // generic address structure (12 bytes)
#define GAS_SPACE_IO 1

static bool checksum_ok(const void *p, size_t len)
{
    uint8_t sum = 0;
    for (size_t i = 0; i < len; i++)
        sum += ((const uint8_t *)p)[i];
    return sum == 0;
}

// A table by physical address, or NULL if its checksum is wrong.
static const struct sdt *map_table(uint64_t pa)
{
    const struct sdt *t = P2V(pa);
    if (!checksum_ok(t, t->length)) {
        kprintf("acpi: table %.4s at %lx has a bad checksum, ignored\n", t->sig, pa);
        return NULL;
    }
    return t;
}

// Find a table by signature in the XSDT (8-byte entries) or RSDT (4-byte ones).
static const struct sdt *find_table(const struct sdt *root, size_t entsz, const char *sig)
{
    size_t n = (root->length - sizeof *root) / entsz;
    const uint8_t *ents = (const uint8_t *)(root + 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t pa = 0;
        memcpy(&pa, ents + i * entsz, entsz); // entries may be unaligned
        const struct sdt *t = P2V(pa);
        if (pa && memcmp(t->sig, sig, 4) == 0)
            return map_table(pa);
    }
    return NULL;
}

// The boot CPU's APIC ID from CPUID, before the local APIC is mapped. Leaf 0xB
// gives the full 32-bit x2APIC ID; leaf 1 only the low 8 bits.
static uint32_t boot_apicid(void)
{
    uint32_t a, b, c, d;
    cpuid(0, 0, &a, &b, &c, &d);
    if (a >= 0xb) {
        cpuid(0xb, 0, &a, &b, &c, &d);
        if (b != 0) // the leaf is implemented
            return d;
    }
    cpuid(1, 0, &a, &b, &c, &d);
    return b >> 24;
}

int cpu_index_of_apicid(uint32_t apicid)
{
    for (int i = 0; i < ncpu; i++)
        if (cpu_apicid[i] == apicid)
            return i;
    return -1;
}

// Record a CPU. The boot CPU is already index 0; duplicates (a CPU listed as both
// xAPIC and x2APIC) are skipped.
static void add_cpu(uint32_t apicid, uint32_t flags)
{
    if (!(flags & (LAPIC_ENABLED | LAPIC_ONLINE_CAPABLE)))
        return;
    if (cpu_index_of_apicid(apicid) >= 0)
        return;
    if (ncpu >= NCPU_MAX) {
        kprintf("acpi: CPU with APIC ID %u ignored: NCPU_MAX is %d\n", apicid, NCPU_MAX);
        return;
    }
    cpu_apicid[ncpu++] = apicid;
}

static void add_ioapic(const struct madt_ioapic *e)
{
    if (acpi_nioapic >= ACPI_MAX_IOAPIC) {
        kprintf("acpi: too many IOAPICs, %u ignored\n", e->id);
        return;
    }
    acpi_ioapics[acpi_nioapic++] = (struct acpi_ioapic){e->id, e->gsi_base, e->pa};
}

static void add_override(const struct madt_override *e)
{
    if (e->bus != 0 || acpi_noverride >= ACPI_MAX_OVERRIDE) // bus 0 is ISA
        return;
    acpi_overrides[acpi_noverride++] = (struct acpi_override){e->irq, e->flags, e->gsi};
}

static void parse_madt(const struct madt *m)
{
    acpi_lapic_pa = m->lapic_pa;
    const uint8_t *p = m->entries, *end = (const uint8_t *)m + m->h.length;
    for (; p + 2 <= end && p[1] >= 2 && p + p[1] <= end; p += p[1]) {
        switch (p[0]) {
        case MADT_LAPIC: {
            const struct madt_lapic *e = (const void *)p;
            if (e->apic_id != 0xff) // 0xff: the entry is a placeholder
                add_cpu(e->apic_id, e->flags);
            break;
        }
        case MADT_X2APIC: {
            const struct madt_x2apic *e = (const void *)p;
            if (e->apic_id != 0xffffffff)
                add_cpu(e->apic_id, e->flags);
            break;
        }
        case MADT_IOAPIC:
            add_ioapic((const void *)p);
            break;
        case MADT_OVERRIDE:
            add_override((const void *)p);
            break;
        case MADT_LAPIC_ADDR:
            acpi_lapic_pa = ((const struct madt_lapic_addr *)p)->pa;
            break;
        }
    }
}

static void parse_fadt(const struct sdt *f)
{
    const uint8_t *b = (const uint8_t *)f;
    uint32_t port = 0, flags = 0;
    if (f->length >= FADT_PM_TMR_BLK + 4)
        memcpy(&port, b + FADT_PM_TMR_BLK, 4);
    if (f->length >= FADT_FLAGS + 4)
        memcpy(&flags, b + FADT_FLAGS, 4);
    if (f->length >= FADT_X_PM_TMR_BLK + 12 && b[FADT_X_PM_TMR_BLK] == GAS_SPACE_IO) {
        uint64_t xport;
        memcpy(&xport, b + FADT_X_PM_TMR_BLK + 4, 8);
        if (xport && xport < 0x10000)
            port = xport;
    }
    if (port && port < 0x10000 && b[FADT_PM_TMR_LEN] == 4) {
        acpi_pm_timer_port = port;
        acpi_pm_timer_32bit = flags & (1u << 8);
    }
}

static const struct sdt *find_root(const struct bootinfo *bi, size_t *entsz)
{
    if (!bi->rsdp)
        return NULL;
    const struct rsdp *r = P2V(bi->rsdp);
    if (memcmp(r->sig, "RSD PTR ", 8) != 0 || !checksum_ok(r, 20)) {
        kprintf("acpi: bad RSDP at %lx\n", bi->rsdp);
        return NULL;
    }
    if (r->revision >= 2 && r->xsdt && checksum_ok(r, r->length)) {
        const struct sdt *x = map_table(r->xsdt);
        if (x && memcmp(x->sig, "XSDT", 4) == 0) {
            *entsz = 8;
            return x;
        }
    }
    const struct sdt *t = r->rsdt ? map_table(r->rsdt) : NULL;
    if (t && memcmp(t->sig, "RSDT", 4) == 0) {
        *entsz = 4;
        return t;
    }
    return NULL;
}

void acpi_init(const struct bootinfo *bi)
{
    // The boot CPU is index 0 whatever order the MADT lists CPUs in.
    ncpu = 1;
    cpu_apicid[0] = boot_apicid();

    size_t entsz = 0;
    const struct sdt *root = find_root(bi, &entsz);
    const struct sdt *madt = root ? find_table(root, entsz, "APIC") : NULL;
    const struct sdt *fadt = root ? find_table(root, entsz, "FACP") : NULL;
    if (madt)
        parse_madt((const struct madt *)madt);
    else
        kprintf("acpi: no MADT; running on the boot CPU only\n");
    if (fadt)
        parse_fadt(fadt);
    kprintf("acpi: %d CPUs, %d IOAPICs, %d overrides, LAPIC at %lx, PM timer %s%x\n", ncpu,
            acpi_nioapic, acpi_noverride, acpi_lapic_pa, acpi_pm_timer_port ? "port " : "none ",
            acpi_pm_timer_port);
}
