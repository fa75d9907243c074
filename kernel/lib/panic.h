// Panics, backtraces and kernel symbols.
#pragma once
#include "kernel.h"

struct bootinfo;
struct trapframe;

extern volatile bool panicking;

void symbols_init(const struct bootinfo *bi);  // find .symtab in the loaded ELF
const char *symbol_lookup(uintptr_t addr, uintptr_t *offset); // NULL if unknown
void print_symbol(uintptr_t addr);              // "name+0xoff" or the bare address
int backtrace_collect(uintptr_t rbp, int skip, uintptr_t *pcs, int max); // return addresses
void backtrace_from(uintptr_t rbp);             // walk frame pointers from rbp
void backtrace(void);                           // from the caller

void panic_trap(struct trapframe *tf, const char *what) __noreturn;
void panic_stop_this_cpu(void) __noreturn;

void qemu_exit(int status) __noreturn;          // isa-debug-exit; QEMU returns (status<<1)|1
