// The syscall instruction's entry point and the sysret return path.
//
// syscall leaves the user %rip in %rcx and %rflags in %r11, masks %rflags with
// MSR_SFMASK (interrupts, direction, trap and alignment-check flags off) and jumps
// here still on the user stack with the user GS base. We switch GS, park the user
// %rsp in a per-CPU scratch word, move to this thread's kernel stack and build a
// struct trapframe exactly where an interrupt from user mode would have, so the
// rest of the kernel sees one frame format.
// Selectors from gdt.h (which is C only): GDT_UDATA | 3 and GDT_UCODE | 3.
#define USER_SS 0x23
#define USER_CS 0x2b
#include "x86/trapregs.inc"

#define T_SYSCALL 256

    .text
    .globl syscall_entry
syscall_entry:
    swapgs
    mov %rsp, %gs:syscall_user_rsp
    mov %gs:syscall_rsp0, %rsp
    pushq $USER_SS          // ss
    pushq %gs:syscall_user_rsp      // rsp
    pushq %r11                      // rflags
    pushq $USER_CS          // cs
    pushq %rcx                      // rip
    pushq $0                        // err
    pushq $T_SYSCALL                // vector
    PUSH_REGS
    mov %rsp, %rdi
    pushq 17*8(%rsp)                // a call frame from the user %rip, as in alltraps
    pushq %rbp
    mov %rsp, %rbp
    cld
    call syscall_handler            // returns with interrupts off; %eax: 1 = use iretq
    add $16, %rsp
    test %eax, %eax
    jnz trapret
    POP_REGS
    mov 16(%rsp), %rcx              // rip
    mov 32(%rsp), %r11              // rflags
    mov 40(%rsp), %rsp              // user rsp
    swapgs
    sysretq
