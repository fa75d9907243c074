// Non-local jumps. jmp_buf holds rbx, rbp, r12-r15, rsp, rip; sigjmp_buf adds
// whether the signal mask was saved, and the mask.
#pragma once
#include <signal.h>

typedef struct __jmp_buf_tag {
    unsigned long __regs[8];
    int __mask_saved;
    sigset_t __mask;
} jmp_buf[1];
typedef jmp_buf sigjmp_buf;

int setjmp(jmp_buf env) __attribute__((returns_twice));
_Noreturn void longjmp(jmp_buf env, int val);
int _setjmp(jmp_buf env) __attribute__((returns_twice));
_Noreturn void _longjmp(jmp_buf env, int val);
int sigsetjmp(sigjmp_buf env, int savemask) __attribute__((returns_twice));
_Noreturn void siglongjmp(sigjmp_buf env, int val);
