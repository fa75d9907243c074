// The first user program: musl's stdio over write/writev, then exit 0.
#include <stdio.h>

int main(void)
{
    printf("hello, world\n");
    return 0;
}
