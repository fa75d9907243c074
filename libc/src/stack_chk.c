// The stack protector's failure hook, for programs built with
// -fstack-protector (the canary itself is at %fs:0x28, set at start-up and
// copied into each thread's control block).
#include <stdlib.h>
#include <unistd.h>

_Noreturn void __stack_chk_fail(void);
_Noreturn void __stack_chk_fail(void)
{
    static const char msg[] = "*** stack smashing detected ***: terminated\n";
    write(2, msg, sizeof msg - 1);
    abort();
}
