// Assembly helpers: clone with a child function, the signal-return
// trampoline, and setjmp/longjmp.
#define NR_clone 56
#define NR_exit 60
#define NR_rt_sigreturn 15

    .text
// int __clone(int (*fn)(void *), void *stack, int flags, void *arg,
//             int *ptid, void *tls, int *ctid)
// The child starts on `stack` and calls fn(arg), then exits the thread with
// its result. The parent gets the child's tid or -errno.
    .globl __clone
    .hidden __clone
    .type __clone, @function
__clone:
    and $-16, %rsi
    sub $16, %rsi
    mov %rcx, 8(%rsi)           // arg for the child, on its new stack
    mov %rdi, (%rsi)            // fn
    mov %edx, %edi              // flags
    mov %r8, %rdx               // ptid
    mov 8(%rsp), %r10           // ctid (7th argument, on our stack)
    mov %r9, %r8                // tls
    mov $NR_clone, %eax
    syscall
    test %eax, %eax
    jnz 1f
    // child: rsp is the new stack, holding fn and arg
    xor %ebp, %ebp
    pop %rax
    pop %rdi
    call *%rax
    mov %eax, %edi
    mov $NR_exit, %eax
    syscall
    hlt
1:  ret
    .size __clone, . - __clone

    .globl __restore_rt
    .hidden __restore_rt
    .type __restore_rt, @function
__restore_rt:
    mov $NR_rt_sigreturn, %eax
    syscall
    hlt
    .size __restore_rt, . - __restore_rt

// jmp_buf: rbx, rbp, r12, r13, r14, r15, rsp, rip
    .globl setjmp, _setjmp
    .type setjmp, @function
    .type _setjmp, @function
setjmp:
_setjmp:
    mov %rbx, 0(%rdi)
    mov %rbp, 8(%rdi)
    mov %r12, 16(%rdi)
    mov %r13, 24(%rdi)
    mov %r14, 32(%rdi)
    mov %r15, 40(%rdi)
    lea 8(%rsp), %rdx           // the caller's rsp after we return
    mov %rdx, 48(%rdi)
    mov (%rsp), %rdx            // return address
    mov %rdx, 56(%rdi)
    xor %eax, %eax
    ret
    .size setjmp, . - setjmp

    .globl longjmp, _longjmp
    .type longjmp, @function
    .type _longjmp, @function
longjmp:
_longjmp:
    mov %esi, %eax
    test %eax, %eax
    jnz 1f
    inc %eax                    // longjmp(env, 0) returns 1
1:  mov 0(%rdi), %rbx
    mov 8(%rdi), %rbp
    mov 16(%rdi), %r12
    mov 24(%rdi), %r13
    mov 32(%rdi), %r14
    mov 40(%rdi), %r15
    mov 48(%rdi), %rsp
    jmp *56(%rdi)
    .size longjmp, . - longjmp

// sigsetjmp(env, savemask): save the mask (via a C helper that may not touch
// the saved registers' frame), then setjmp. Tail-calls keep the frame right.
    .globl sigsetjmp
    .type sigsetjmp, @function
sigsetjmp:
    test %esi, %esi
    jz 1f
    push %rdi
    call __sigsetjmp_save
    pop %rdi
    jmp setjmp
1:  movl $0, 64(%rdi)           // __mask_saved = 0
    jmp setjmp
    .size sigsetjmp, . - sigsetjmp

    .section .note.GNU-stack, "", @progbits
