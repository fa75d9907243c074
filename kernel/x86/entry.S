// Kernel entry from the UEFI loader (boot/loader.c).
// The loader has mapped us at KERNEL_VBASE, disabled interrupts and passed the
// physical address of struct bootinfo in %rdi. Its stack is in memory the kernel
// will reuse, so the first thing is to move to our own.

    .section .text.entry, "ax"
    .globl _start
    .type _start, @function
_start:
    cli
    cld
    lea boot_stack_top(%rip), %rsp
    xor %ebp, %ebp          // end of the frame-pointer chain for backtraces
    push %rbp
    call kmain              // %rdi: bootinfo (physical)
1:  hlt
    jmp 1b
    .size _start, . - _start

    .section .bss
    .balign 4096
    .globl boot_stack
boot_stack:
    .space 32768
boot_stack_top:
