// __clone: the clone system call with a function for the child to run on its
// new stack (threads, and posix_spawn's fallback).
#define NR_clone 56
#define NR_exit 60

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

    .section .note.GNU-stack, "", @progbits
