// One side of the two-instance test (net_twin_test.c): the first step towards
// one lwIP instance per core (docs/net.md). This file is compiled twice: once
// as itself, beside the kernel's stack, and once with a second copy of lwIP
// whose every global symbol, this file's included, is renamed lw2_NAME
// (kernel/net/net.mk). The second copy has its own pools, PCB lists,
// interfaces, timers, core lock and tcpip thread; the two share only what
// both link to outside lwIP (sys_arch's primitives, kmalloc).
//
// The two instances talk over a point-to-point link: each adds an interface
// 10.99.0.HOST/24 whose output copies the IP packet into the other instance
// (its twin_input), as a NIC steering flows to per-core stacks would.
#include "net_twin.h"
#include "kernel.h"
#include "mm/mm.h"

#include "lwip/api.h"
#include "lwip/ip4.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/tcpip.h"

#define LINK_MTU 1500
#define TIMEOUT_MS 20000

static struct netif link;
static twin_deliver_fn deliver;  // the other instance's twin_input
static bool own_started;

static void ready(void *arg) { sys_sem_signal(arg); }

int twin_start_own_stack(void)
{
    if (own_started)
        return 0;
    sys_sem_t sem;
    if (sys_sem_new(&sem, 0) != ERR_OK)
        return -1;
    tcpip_init(ready, &sem);
    sys_arch_sem_wait(&sem, 0);
    sys_sem_free(&sem);
    own_started = true;
    return 0;
}

// The interface's output (in this instance's tcpip thread): the packet, flat,
// to the other instance.
static err_t link_output(struct netif *nif, struct pbuf *p, const ip4_addr_t *dst)
{
    (void)nif;
    (void)dst;
    uint8_t buf[LINK_MTU];
    if (p->tot_len > sizeof buf)
        return ERR_BUF;
    pbuf_copy_partial(p, buf, p->tot_len, 0);
    deliver(buf, p->tot_len);
    return ERR_OK;
}

static err_t link_init(struct netif *nif)
{
    nif->name[0] = 't';
    nif->name[1] = 'w';
    nif->mtu = LINK_MTU;
    nif->output = link_output;
    nif->flags = NETIF_FLAG_LINK_UP;
    return ERR_OK;
}

void twin_input(const void *pkt, size_t len)
{
    struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_POOL);
    if (!p)
        return;                  // dropped, as a full NIC ring would; TCP resends
    pbuf_take(p, pkt, (u16_t)len);
    if (link.input(p, &link) != ERR_OK)
        pbuf_free(p);
}

int twin_link_up(int host, twin_deliver_fn to_other)
{
    ip4_addr_t addr, mask, gw;
    IP4_ADDR(&addr, 10, 99, 0, host);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    ip4_addr_set_zero(&gw);
    deliver = to_other;
    LOCK_TCPIP_CORE();
    struct netif *n = netif_add(&link, &addr, &mask, &gw, NULL, link_init, tcpip_input);
    if (n)
        netif_set_up(&link);
    UNLOCK_TCPIP_CORE();
    return n ? 0 : -1;
}

void twin_link_down(void)
{
    LOCK_TCPIP_CORE();
    netif_remove(&link);
    UNLOCK_TCPIP_CORE();
}

const void *twin_core_lock(void) { return &lock_tcpip_core; }

static uint8_t pattern(size_t i) { return (uint8_t)(i * 31 + (i >> 11)); }

long twin_echo_once(uint16_t port)
{
    struct netconn *l = netconn_new(NETCONN_TCP), *c = NULL;
    uint8_t *buf = kmalloc(TWIN_MAX_BYTES);
    long got = -1;
    if (!l || !buf || netconn_bind(l, IP4_ADDR_ANY, port) != ERR_OK || netconn_listen(l) != ERR_OK)
        goto out;
    netconn_set_recvtimeout(l, TIMEOUT_MS);
    if (netconn_accept(l, &c) != ERR_OK)
        goto out;
    netconn_set_recvtimeout(c, TIMEOUT_MS);
    struct netbuf *nb;
    err_t e;
    got = 0;
    while ((e = netconn_recv(c, &nb)) == ERR_OK) {
        u16_t len = netbuf_len(nb);
        if (got + len <= TWIN_MAX_BYTES)
            netbuf_copy(nb, buf + got, len);
        got += len;
        netbuf_delete(nb);
    }
    if (e != ERR_CLSD || got > TWIN_MAX_BYTES ||
        netconn_write(c, buf, (size_t)got, NETCONN_COPY) != ERR_OK)
        got = -1;
    netconn_close(c);
out:
    if (c)
        netconn_delete(c);
    if (l)
        netconn_delete(l);
    kfree(buf);
    return got;
}

long twin_client(int host, uint16_t port, size_t bytes, long *mismatches)
{
    struct netconn *nc = netconn_new(NETCONN_TCP);
    uint8_t *buf = kmalloc(bytes);
    long echoed = -1;
    *mismatches = 0;
    ip_addr_t to;
    IP_ADDR4(&to, 10, 99, 0, host);
    if (!nc || !buf)
        goto out;
    netconn_set_recvtimeout(nc, TIMEOUT_MS);
    if (netconn_connect(nc, &to, port) != ERR_OK)
        goto out;
    for (size_t i = 0; i < bytes; i++)
        buf[i] = pattern(i);
    if (netconn_write(nc, buf, bytes, NETCONN_COPY) != ERR_OK)
        goto out;
    netconn_shutdown(nc, 0, 1);
    struct netbuf *nb;
    echoed = 0;
    while (netconn_recv(nc, &nb) == ERR_OK) {
        do {
            void *data;
            u16_t len;
            netbuf_data(nb, &data, &len);
            for (u16_t i = 0; i < len; i++, echoed++)
                *mismatches += ((uint8_t *)data)[i] != pattern((size_t)echoed);
        } while (netbuf_next(nb) >= 0);
        netbuf_delete(nb);
    }
out:
    kfree(buf);
    if (nc)
        netconn_delete(nc);
    return echoed;
}
