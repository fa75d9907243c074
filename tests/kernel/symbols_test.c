// Tests for the kernel's symbol table (lib/symbols.c), which backtraces use.
#include "ktest/ktest.h"
#include "lib/panic.h"

void kmain(uint64_t);
KTEST(symbols_resolve_kernel_functions)
{
    uintptr_t off = 99;
    const char *name = symbol_lookup((uintptr_t)kmain + 3, &off);
    KREQUIRE(name != NULL);
    KCHECK(strcmp(name, "kmain") == 0);
    KCHECK_EQ(off, 3);
    KCHECK(symbol_lookup(0x1234, &off) == NULL);
}
