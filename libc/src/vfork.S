// vfork: the child runs on the parent's stack until it execs or exits, so this
// cannot be a C function -- the child's return would pop the frame the parent
// returns through afterwards. Keep the return address in a register across the
// call instead, and push it back on the way out (in each process).
    .text
    .globl vfork
    .type vfork, @function
vfork:
    pop %rdx                // return address; %rdx survives syscall
    mov $58, %eax           // __NR_vfork
    syscall
    push %rdx
    mov %rax, %rdi
    jmp __syscall_ret       // -errno -> -1 and errno (a tail call: returns to our caller)
    .size vfork, .-vfork
    .section .note.GNU-stack, "", @progbits
