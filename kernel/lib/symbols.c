// Kernel symbols for backtraces, read from the kernel's own ELF file, which the
// loader leaves in memory (bootinfo.kernel_elf). No second link pass needed.
#include "bootinfo.h"
#include "elf64.h"
#include "lib/panic.h"
#include "mm/mmu.h"

static const struct elf64_sym *syms;
static size_t nsyms;
static const char *strtab;

void symbols_init(const struct bootinfo *bi)
{
    if (!bi->kernel_elf)
        return;
    const char *file = P2V(bi->kernel_elf);
    const struct elf64_ehdr *eh = (const void *)file;
    if (memcmp(eh->ident, ELFMAG, 4) != 0 || eh->shoff == 0)
        return;
    const struct elf64_shdr *sh = (const void *)(file + eh->shoff);
    for (int i = 0; i < eh->shnum; i++) {
        if (sh[i].type != SHT_SYMTAB || sh[i].link >= eh->shnum)
            continue;
        syms = (const void *)(file + sh[i].offset);
        nsyms = sh[i].size / sizeof *syms;
        strtab = file + sh[sh[i].link].offset;
        return;
    }
}

// Linear scan: backtraces are rare and the table is small.
const char *symbol_lookup(uintptr_t addr, uintptr_t *offset)
{
    const struct elf64_sym *best = NULL;
    for (size_t i = 0; i < nsyms; i++) {
        const struct elf64_sym *s = &syms[i];
        if ((s->info & 0xf) != STT_FUNC || s->value > addr)
            continue;
        if (!best || s->value > best->value)
            best = s;
    }
    if (!best || addr >= best->value + MAX(best->size, 1UL))
        return NULL;
    *offset = addr - best->value;
    return strtab + best->name;
}

void print_symbol(uintptr_t addr)
{
    uintptr_t off;
    const char *name = symbol_lookup(addr, &off);
    if (name)
        kprintf("%016lx %s+0x%lx", addr, name, off);
    else
        kprintf("%016lx ?", addr);
}
