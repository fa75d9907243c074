// The signal-return trampoline: sigaction installs it as every handler's
// SA_RESTORER, so returning from a handler enters rt_sigreturn.
#define NR_rt_sigreturn 15

    .text
    .globl __restore_rt
    .hidden __restore_rt
    .type __restore_rt, @function
__restore_rt:
    mov $NR_rt_sigreturn, %eax
    syscall
    hlt
    .size __restore_rt, . - __restore_rt

    .section .note.GNU-stack, "", @progbits
