// Process exit: atexit handlers in reverse order, destructors, stdio flush.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "libc.h"

#define ATEXIT_MAX 64
static void (*handlers[ATEXIT_MAX])(void);
static int nhandlers;
static void (*quick_handlers[ATEXIT_MAX])(void);
static int nquick;
static struct lock exit_lock;

extern void (*__fini_array_start[])(void) hidden;
extern void (*__fini_array_end[])(void) hidden;

int atexit(void (*fn)(void))
{
    __lock(&exit_lock);
    int ok = nhandlers < ATEXIT_MAX;
    if (ok)
        handlers[nhandlers++] = fn;
    __unlock(&exit_lock);
    return ok ? 0 : -1;
}

int at_quick_exit(void (*fn)(void))
{
    __lock(&exit_lock);
    int ok = nquick < ATEXIT_MAX;
    if (ok)
        quick_handlers[nquick++] = fn;
    __unlock(&exit_lock);
    return ok ? 0 : -1;
}

_Noreturn void exit(int status)
{
    // Handlers may call atexit themselves; take them one at a time.
    for (;;) {
        __lock(&exit_lock);
        void (*fn)(void) = nhandlers ? handlers[--nhandlers] : NULL;
        __unlock(&exit_lock);
        if (!fn)
            break;
        fn();
    }
    for (size_t i = __fini_array_end - __fini_array_start; i > 0; i--)
        __fini_array_start[i - 1]();
    __stdio_exit();
    _Exit(status);
}

_Noreturn void quick_exit(int status)
{
    while (nquick)
        quick_handlers[--nquick]();
    _Exit(status);
}

_Noreturn void _Exit(int status)
{
    for (;;)
        __sys(__NR_exit_group, status);
}

_Noreturn void _exit(int status) { _Exit(status); }

_Noreturn void abort(void)
{
    raise(SIGABRT);
    // Caught or ignored: force the default action.
    struct sigaction sa = {.sa_handler = SIG_DFL};
    sigaction(SIGABRT, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGABRT);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(SIGABRT);
    _Exit(127);
}
