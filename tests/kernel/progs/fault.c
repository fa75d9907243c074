// Dies on purpose: argv[1] says how ("null" store to address 0 -- the default,
// "kernel" read of a kernel address, "ud2" invalid opcode). The kernel must kill
// it and survive; a test checks the wait status.
#include <string.h>

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "null";
    if (strcmp(how, "kernel") == 0)
        return *(volatile int *)0xffffffff80000000UL;
    if (strcmp(how, "ud2") == 0)
        __asm__ volatile("ud2");
    *(volatile int *)0 = 1;
    return 0; // not reached
}
