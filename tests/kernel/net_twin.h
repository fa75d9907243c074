// The two-instance test's interface to each instance (net_twin_side.c): the
// same functions twice, twin_* in the kernel's lwIP instance and lw2_twin_* in
// the second one (kernel/net/net.mk renames every global of that copy).
#pragma once
#include <stddef.h>
#include <stdint.h>

#define TWIN_MAX_BYTES (512 * 1024) // what twin_echo_once takes

typedef void (*twin_deliver_fn)(const void *pkt, size_t len);

#define TWIN_API(p)                                                                      \
    /* tcpip_init for an instance nobody started (not the kernel's): 0 or -1. */       \
    int p##twin_start_own_stack(void);                                                   \
    /* The link interface 10.99.0.HOST/24, its packets to the other instance. */       \
    int p##twin_link_up(int host, twin_deliver_fn to_other);                             \
    void p##twin_link_down(void);                                                        \
    /* A packet from the other instance, copied into this one. */                      \
    void p##twin_input(const void *pkt, size_t len);                                     \
    /* This instance's core lock: where it serialises. */                              \
    const void *p##twin_core_lock(void);                                                 \
    /* Accept one TCP connection on port, read to its end, echo it all back:     */    \
    /* the bytes, or -1. */                                                            \
    long p##twin_echo_once(uint16_t port);                                               \
    /* Connect to 10.99.0.HOST:port, send bytes of a pattern, shut down the       */   \
    /* sending side, read the echo: bytes read (-1: failed), *mismatches.         */   \
    long p##twin_client(int host, uint16_t port, size_t bytes, long *mismatches);

TWIN_API()
TWIN_API(lw2_)
