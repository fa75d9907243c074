// Exits 0 if this program started with a user GS base of 0, as execve must
// leave it (tests/user/thread.c sets one, then execs this).
#include "raw.h"

#define SYS_arch_prctl 158
#define ARCH_GET_GS 0x1004

int main(void)
{
    unsigned long base = 1;
    return raw2(SYS_arch_prctl, ARCH_GET_GS, &base) == 0 && base == 0 ? 0 : 1;
}
