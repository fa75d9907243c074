// PCI configuration space through the legacy ports 0xcf8/0xcfc: enough for
// finding a device by its ids, its BARs and its capabilities. The first 256
// bytes of each function are reachable this way, which holds every standard
// capability QEMU's devices use. The firmware (OVMF) has already assigned
// the BARs.
#include "x86/pci.h"
#include "sync/spinlock.h"
#include "x86/x86.h"

#define PCI_ADDR_PORT 0xcf8
#define PCI_DATA_PORT 0xcfc
#define PCI_STATUS 0x06
#define PCI_STATUS_CAPS 0x10
#define PCI_HEADER_TYPE 0x0e
#define PCI_CAP_PTR 0x34
#define PCI_BAR0 0x10

// The address and data ports are one pair for the whole machine.
static struct spinlock pci_lock = SPINLOCK_INIT("pci config");

uint32_t pci_read32(const struct pci_dev *d, int off)
{
    spin_lock(&pci_lock);
    outl(PCI_ADDR_PORT, 1u << 31 | d->bus << 16 | d->dev << 11 | d->fn << 8 | (off & 0xfc));
    uint32_t v = inl(PCI_DATA_PORT);
    spin_unlock(&pci_lock);
    return v;
}

void pci_write32(const struct pci_dev *d, int off, uint32_t v)
{
    spin_lock(&pci_lock);
    outl(PCI_ADDR_PORT, 1u << 31 | d->bus << 16 | d->dev << 11 | d->fn << 8 | (off & 0xfc));
    outl(PCI_DATA_PORT, v);
    spin_unlock(&pci_lock);
}

uint16_t pci_read16(const struct pci_dev *d, int off)
{
    return (uint16_t)(pci_read32(d, off) >> (off & 2) * 8);
}

uint8_t pci_read8(const struct pci_dev *d, int off)
{
    return (uint8_t)(pci_read32(d, off) >> (off & 3) * 8);
}

// Read-modify-write of the aligned word: config space has no narrower write
// through these ports that every chipset honours.
void pci_write16(const struct pci_dev *d, int off, uint16_t v)
{
    int shift = (off & 2) * 8;
    uint32_t w = pci_read32(d, off);
    w = (w & ~(0xffffu << shift)) | (uint32_t)v << shift;
    pci_write32(d, off, w);
}

bool pci_find(uint16_t vendor, uint16_t device, struct pci_dev *out)
{
    for (int bus = 0; bus < 256; bus++) {
        for (int dev = 0; dev < 32; dev++) {
            for (int fn = 0; fn < 8; fn++) {
                struct pci_dev d = {(uint8_t)bus, (uint8_t)dev, (uint8_t)fn};
                uint32_t id = pci_read32(&d, 0);
                if ((id & 0xffff) == 0xffff) {
                    if (fn == 0)
                        break; // no device here
                    continue;
                }
                if ((id & 0xffff) == vendor && id >> 16 == device) {
                    *out = d;
                    return true;
                }
                if (fn == 0 && !(pci_read8(&d, PCI_HEADER_TYPE) & 0x80))
                    break; // single-function device
            }
        }
    }
    return false;
}

uint64_t pci_bar(const struct pci_dev *d, int n)
{
    uint32_t lo = pci_read32(d, PCI_BAR0 + 4 * n);
    if (lo & 1)
        return 0; // I/O space
    uint64_t addr = lo & ~0xfu;
    if (((lo >> 1) & 3) == 2)
        addr |= (uint64_t)pci_read32(d, PCI_BAR0 + 4 * (n + 1)) << 32;
    return addr;
}

int pci_find_cap(const struct pci_dev *d, uint8_t id, int from)
{
    if (!(pci_read16(d, PCI_STATUS) & PCI_STATUS_CAPS))
        return 0;
    int off = from ? pci_read8(d, from + 1) : pci_read8(d, PCI_CAP_PTR);
    // At most 48 capabilities fit in 192 bytes: a bound against a looping list.
    for (int i = 0; off >= 0x40 && i < 48; i++) {
        off &= 0xfc;
        if (pci_read8(d, off) == id)
            return off;
        off = pci_read8(d, off + 1);
    }
    return 0;
}
