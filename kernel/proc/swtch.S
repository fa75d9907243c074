// Context switch between kernel threads, the first instructions of a new thread,
// and the first entry of a thread into user mode.

// void swtch(uint64_t *save_rsp, uint64_t new_rsp)
// Saves the callee-saved registers on the current stack, stores the stack pointer
// in *save_rsp, moves to new_rsp and restores the registers saved there. Everything
// else (interrupt state, per-CPU current thread, CR3) is the caller's business.
    .text
    .globl swtch
swtch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    mov %rsp, (%rdi)
    mov %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret

// A new thread's first swtch returns here (thread.c builds the frame): %r12 is
// the entry function and %rbx its argument; %rsp is 16-byte aligned. schedule()
// switched with interrupts off; a thread starts with them on.
    .globl thread_trampoline
thread_trampoline:
    call sched_finish_switch
    sti
    mov %rbx, %rdi
    call *%r12
    call thread_exit        // does not return
1:  hlt
    jmp 1b

// void user_enter(struct trapframe *tf): leave for user mode through the common
// interrupt return path (restores every register, swapgs, iretq).
    .globl user_enter
user_enter:
    mov %rdi, %rsp
    jmp trapret
