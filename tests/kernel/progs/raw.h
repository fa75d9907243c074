// Raw system calls for test programs (tests/kernel/progs, the user-level suites,
// the fuzzer): the kernel's return value as is (-errno on failure), without
// libc's errno translation.
#pragma once

static inline long raw6(long n, long a, long b, long c, long d, long e, long f)
{
    register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
#define raw0(n) raw6(n, 0, 0, 0, 0, 0, 0)
#define raw1(n, a) raw6(n, (long)(a), 0, 0, 0, 0, 0)
#define raw2(n, a, b) raw6(n, (long)(a), (long)(b), 0, 0, 0, 0)
#define raw3(n, a, b, c) raw6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define raw4(n, a, b, c, d) raw6(n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

// fork, vfork and clone whose child leaves at once (exit, this thread only),
// before it touches a stack it may share with us (CLONE_VM with no stack of
// its own): the parent gets the call's value, the child never returns.
static inline long raw_spawn(long n, long a, long b, long c, long d, long e)
{
    register long r10 __asm__("r10") = d, r8 __asm__("r8") = e;
    long ret;
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "mov $60, %%eax\n\t"
                     "xor %%edi, %%edi\n\t"
                     "syscall\n"
                     "1:"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return ret;
}
