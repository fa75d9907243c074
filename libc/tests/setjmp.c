// setjmp/longjmp and sigsetjmp/siglongjmp (with the signal mask).
#include <setjmp.h>
#include <signal.h>
#include "tap.h"

static jmp_buf env;
static int depth;

static void (*volatile divep)(int);

static void dive(int n)
{
    depth = n;
    if (n == 0)
        longjmp(env, 7);
    divep(n - 1);
}

int main(void)
{
    volatile int count = 0;
    int r = setjmp(env);
    count++;
    divep = dive;
    if (r == 0)
        dive(50);
    check(r == 7 && count == 2 && depth == 0, "longjmp out of deep recursion returns its value");
    r = setjmp(env);
    if (r == 0)
        longjmp(env, 0);
    check(r == 1, "longjmp(env, 0) makes setjmp return 1");

    volatile long callee_saved = 12345;
    if (setjmp(env) == 0) {
        callee_saved = 54321;
        longjmp(env, 1);
    }
    check(callee_saved == 54321, "volatile locals keep their last value");

    sigjmp_buf senv;
    sigset_t set, cur;
    sigemptyset(&set);
    sigprocmask(SIG_SETMASK, &set, NULL);
    if (sigsetjmp(senv, 1) == 0) {
        sigaddset(&set, SIGUSR1);
        sigprocmask(SIG_BLOCK, &set, NULL);
        siglongjmp(senv, 1);
    }
    sigprocmask(SIG_SETMASK, NULL, &cur);
    check(!sigismember(&cur, SIGUSR1), "siglongjmp restores the saved mask");
    if (sigsetjmp(senv, 0) == 0) {
        sigprocmask(SIG_BLOCK, &set, NULL);
        siglongjmp(senv, 1);
    }
    sigprocmask(SIG_SETMASK, NULL, &cur);
    check(sigismember(&cur, SIGUSR1), "sigsetjmp(env, 0) leaves the mask alone");
    return tap_done();
}
