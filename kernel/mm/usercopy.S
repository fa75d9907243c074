// The only instructions that touch user memory. Each access that may fault has an
// entry in the `extable` section: (faulting instruction, fixup). trap.c looks a
// kernel-mode fault up there and resumes at the fixup, which returns -EFAULT
// (__copy_user's: the bytes left).
// stac/clac open and close the SMAP window around each access.

#define EFAULT 14

    .text
// size_t __copy_user(void *dst, const void *src, size_t n): the bytes not copied,
// 0 if all were. rep movsb stops at a fault with %rcx counting what is left, and
// everything before it copied.
    .globl __copy_user
__copy_user:
    mov %rdx, %rcx
    stac
1:  rep movsb
    clac
    xor %eax, %eax
    ret

copy_fault:
    clac
    mov %rcx, %rax
    ret

// long __strncpy_user(char *dst, const char *src, size_t n): the string's length,
// n if there is no NUL in the first n bytes, or -EFAULT
    .globl __strncpy_user
__strncpy_user:
    xor %eax, %eax
    stac
3:  cmp %rdx, %rax
    je 4f
2:  movb (%rsi,%rax), %cl
    movb %cl, (%rdi,%rax)
    test %cl, %cl
    jz 4f
    inc %rax
    jmp 3b
4:  clac
    ret

// long __clear_user(void *dst, size_t n): 0 or -EFAULT
    .globl __clear_user
__clear_user:
    mov %rsi, %rcx
    xor %eax, %eax
    stac
5:  rep stosb
    clac
    ret

usercopy_fault:
    clac
    mov $-EFAULT, %rax
    ret

    .section extable, "a"
    .balign 8
    .quad 1b, copy_fault
    .quad 2b, usercopy_fault
    .quad 5b, usercopy_fault
