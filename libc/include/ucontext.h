// The user context a SA_SIGINFO handler gets as its third argument: Linux
// x86-64's struct ucontext (the registers as the signal interrupted them; a
// handler may change them and rt_sigreturn resumes with the change).
#pragma once
#include <signal.h>

typedef long long greg_t;
#define NGREG 23
typedef greg_t gregset_t[NGREG];
enum {
    REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
    REG_RDI, REG_RSI, REG_RBP, REG_RBX, REG_RDX, REG_RAX, REG_RCX, REG_RSP,
    REG_RIP, REG_EFL, REG_CSGSFS, REG_ERR, REG_TRAPNO, REG_OLDMASK, REG_CR2,
};

struct _libc_fpstate; // the fxsave image the kernel saved (its layout: Intel's)
typedef struct {
    gregset_t gregs;
    struct _libc_fpstate *fpregs;
    unsigned long long __reserved1[8];
} mcontext_t;

typedef struct ucontext_t {
    unsigned long uc_flags;
    struct ucontext_t *uc_link;
    stack_t uc_stack;
    mcontext_t uc_mcontext;
    sigset_t uc_sigmask;
} ucontext_t;

_Static_assert(sizeof(mcontext_t) == 256, "Linux's struct sigcontext is 256 bytes");
