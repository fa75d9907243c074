// Exceptions and interrupts: the saved register frame and handler registration.
#pragma once
#include "kernel.h"

// Pushed by trapasm.S (general registers) and the CPU (from err onward).
struct trapframe {
    uint64_t rax, rbx, rcx, rdx, rsi, rdi, rbp;
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
    uint64_t vector;
    uint64_t err;  // CPU's error code, or 0
    uint64_t rip, cs, rflags, rsp, ss;
};

// Exception numbers.
enum {
    T_DE = 0, T_DB = 1, T_NMI = 2, T_BP = 3, T_OF = 4, T_BR = 5, T_UD = 6, T_NM = 7,
    T_DF = 8, T_TS = 10, T_NP = 11, T_SS = 12, T_GP = 13, T_PF = 14, T_MF = 16,
    T_AC = 17, T_MC = 18, T_XM = 19,
};

// IST slots in each CPU's TSS.
#define IST_NMI 1
#define IST_DF 2
#define IST_MC 3

typedef void (*irq_handler_t)(struct trapframe *tf);

void trap_init(void);      // build the IDT once
void trap_init_cpu(void);  // load the IDT on this CPU
void gdt_init_cpu(void);   // this CPU's GDT and TSS with IST stacks (gdt.c)
// Install a handler for an interrupt vector (>= 32). Handlers run with
// interrupts off and must call lapic_eoi() for APIC-delivered interrupts.
void irq_register(int vector, irq_handler_t h);

void print_trapframe(const struct trapframe *tf);

// Exception recovery for the test harness: while a recovery point is armed on
// this CPU, a kernel exception jumps back to it instead of panicking.
struct kjmp {
    uint64_t rbx, rbp, r12, r13, r14, r15, rsp, rip;
};
int ksetjmp(struct kjmp *j) __attribute__((returns_twice));
void klongjmp(struct kjmp *j, int v) __attribute__((noreturn));
void trap_set_recovery(struct kjmp *j); // NULL disarms
uint64_t trap_last_vector(void);  // vector that triggered the last recovery
// A test that checks a panic fires arms recovery and then this: the next panic()
// on this CPU prints its message and jumps back like an exception would, with
// trap_last_vector() == T_PANIC_CAUGHT. Disarmed with the recovery point.
#define T_PANIC_CAUGHT 0x100
void trap_catch_panics(bool on);
// Called by panic(): jumps to the recovery point if panics are being caught.
void trap_recover_panic(const char *msg);
