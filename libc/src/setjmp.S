// setjmp/longjmp and sigsetjmp. jmp_buf: rbx, rbp, r12-r15, rsp, rip, then
// (sigjmp_buf) whether the mask was saved and the mask.

    .text
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
