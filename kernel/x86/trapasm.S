// Interrupt and exception entry: one stub per vector pushes a uniform frame
// (struct trapframe in trap.h) and calls trap().
// Vectors 8, 10-14, 17, 21, 29, 30 get an error code pushed by the CPU; the
// others push a 0 so every frame has the same shape.
#include "x86/trapregs.inc"

    .text
    .altmacro
.macro vector n
    .balign 16
vector\n:
    .if !(\n == 8 || (\n >= 10 && \n <= 14) || \n == 17 || \n == 21 || \n == 29 || \n == 30)
    pushq $0
    .endif
    pushq $\n
    jmp alltraps
.endm

    .balign 16
    .globl trap_vectors_start
trap_vectors_start:
.set i, 0
.rept 256
    vector %i
    .set i, i+1
.endr

alltraps:
    // Coming from user mode, GS still holds the user's base: switch to the kernel's.
    testb $3, 24(%rsp)      // CS of the interrupted context (after vector, err, rip)
    jz 1f
    swapgs
1:  PUSH_REGS
    mov %rsp, %rdi
    // Make the frame look like a call from the interrupted code, so backtraces
    // walk straight through the trap into the code that was running.
    pushq 17*8(%rsp)        // interrupted %rip
    pushq %rbp
    mov %rsp, %rbp
    cld
    call trap
    add $16, %rsp
    .globl trapret
trapret:
    POP_REGS
    testb $3, 24(%rsp)
    jz 1f
    swapgs
1:  add $16, %rsp           // vector and error code
    iretq

// ksetjmp/klongjmp: save and restore the callee-saved registers (struct kjmp).
    .globl ksetjmp
ksetjmp:
    mov %rbx, 0(%rdi)
    mov %rbp, 8(%rdi)
    mov %r12, 16(%rdi)
    mov %r13, 24(%rdi)
    mov %r14, 32(%rdi)
    mov %r15, 40(%rdi)
    lea 8(%rsp), %rax       // the caller's %rsp after we return
    mov %rax, 48(%rdi)
    mov (%rsp), %rax        // our return address
    mov %rax, 56(%rdi)
    xor %eax, %eax
    ret

    .globl klongjmp
klongjmp:
    mov 0(%rdi), %rbx
    mov 8(%rdi), %rbp
    mov 16(%rdi), %r12
    mov 24(%rdi), %r13
    mov 32(%rdi), %r14
    mov 40(%rdi), %r15
    mov 48(%rdi), %rsp
    mov %esi, %eax
    test %eax, %eax
    jnz 1f
    inc %eax                // ksetjmp must appear to return non-zero
1:  jmp *56(%rdi)
