// PCI devices: configuration space through the legacy I/O ports, device
// lookup by vendor and device id, BARs and capabilities (pci.c).
#pragma once
#include "kernel.h"

struct pci_dev {
    uint8_t bus, dev, fn;
};

#define PCI_COMMAND 0x04
#define PCI_COMMAND_MEMORY 0x0002
#define PCI_COMMAND_MASTER 0x0004
#define PCI_COMMAND_INTX_OFF 0x0400
#define PCI_CAP_MSIX 0x11
#define PCI_CAP_VENDOR 0x09

uint32_t pci_read32(const struct pci_dev *d, int off);
uint16_t pci_read16(const struct pci_dev *d, int off);
uint8_t pci_read8(const struct pci_dev *d, int off);
void pci_write32(const struct pci_dev *d, int off, uint32_t v);
void pci_write16(const struct pci_dev *d, int off, uint16_t v);
// The first function with these ids, scanning every bus in order: true if found.
bool pci_find(uint16_t vendor, uint16_t device, struct pci_dev *out);
// Physical address of memory BAR n (64-bit BARs span n and n + 1); 0 if it is an
// I/O BAR or unassigned.
uint64_t pci_bar(const struct pci_dev *d, int n);
// Offset in configuration space of the next capability with this id after the
// one at offset `from` in the capability list (0: from the start); 0 if none.
int pci_find_cap(const struct pci_dev *d, uint8_t id, int from);
