// Process entry point. The kernel starts us with %rsp pointing at argc, then
// argv[], NULL, envp[], NULL, auxv pairs; __libc_start does the rest.
    .text
    .globl _start
    .type _start, @function
_start:
    xor %ebp, %ebp              // outermost frame, for debuggers and unwinders
    mov %rsp, %rdi              // the initial stack: argc, argv, envp, auxv
    // _DYNAMIC's run-time address for a static PIE's self-relocation, 0 in an
    // ET_EXEC. Taken here, PC-relative: C code would read it from the GOT,
    // which is not relocated yet.
    lea _DYNAMIC(%rip), %rsi
    and $-16, %rsp              // the ABI's call-site alignment
    call __libc_start
    hlt
    .size _start, . - _start
    .weak _DYNAMIC
    .hidden _DYNAMIC
    .section .note.GNU-stack, "", @progbits
