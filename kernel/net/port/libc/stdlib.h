// The part of <stdlib.h> lwIP's sources include: atoi, which netif_find uses to
// read the number in an interface name such as "lo0" (only lwIP's own files see
// this directory; lwIP's heap is the kernel's, port/arch/cc.h).
#pragma once

static inline int atoi(const char *s)
{
    int n = 0;
    while (*s >= '0' && *s <= '9')
        n = n * 10 + (*s++ - '0');
    return n;
}
