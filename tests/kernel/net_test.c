// The network stack (kernel/net/): lwIP's operating-system layer on our
// primitives, and TCP and UDP between kernel threads over the loopback
// interface with lwIP's netconn API, and through the virtio-net device to
// QEMU's user network when the machine has one.
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "net/net.h"
#include "proc/sched.h"

#include "lwip/api.h"
#include "lwip/inet_chksum.h"
#include "lwip/ip_addr.h"
#include "lwip/prot/ip.h"
#include "lwip/sys.h"

// No wait in these tests should come near this unless the stack is broken;
// then the test fails instead of hanging.
#define NET_TEST_TIMEOUT_MS 20000

// 127.0.0.1 (lwIP 2.1 has no constant for it).
static const ip_addr_t loopback = IPADDR4_INIT_BYTES(127, 0, 0, 1);

// ---- sys_arch ---------------------------------------------------------------

KTEST(net_sys_sem_counts_and_times_out)
{
    sys_sem_t s;
    KREQUIRE(sys_sem_new(&s, 2) == ERR_OK);
    KCHECK(sys_sem_valid(&s));
    KCHECK(sys_arch_sem_wait(&s, 1) != SYS_ARCH_TIMEOUT);
    KCHECK(sys_arch_sem_wait(&s, 1) != SYS_ARCH_TIMEOUT);
    KCHECK_EQ(sys_arch_sem_wait(&s, 5), SYS_ARCH_TIMEOUT); // count 0, nobody signals
    sys_sem_signal(&s);
    KCHECK(sys_arch_sem_wait(&s, 0) != SYS_ARCH_TIMEOUT);
    sys_sem_free(&s);
    KCHECK(!sys_sem_valid(&s));
}

struct sem_pair {
    sys_sem_t ping, pong;
    int rounds;
};

static void sem_ponger(void *arg)
{
    struct sem_pair *p = arg;
    for (int i = 0; i < p->rounds; i++) {
        sys_arch_sem_wait(&p->ping, 0);
        sys_sem_signal(&p->pong);
    }
}

// Two threads hand a token back and forth: each wait must see the other's
// signal (no lost wake-up), or a wait times out.
KTEST(net_sys_sem_ping_pong)
{
    struct sem_pair p = {.rounds = 2000};
    KREQUIRE(sys_sem_new(&p.ping, 0) == ERR_OK);
    KREQUIRE(sys_sem_new(&p.pong, 0) == ERR_OK);
    struct thread *t = kthread_create("sem ponger", sem_ponger, &p, NULL);
    KREQUIRE(t);
    int timeouts = 0;
    for (int i = 0; i < p.rounds; i++) {
        sys_sem_signal(&p.ping);
        timeouts += sys_arch_sem_wait(&p.pong, NET_TEST_TIMEOUT_MS) == SYS_ARCH_TIMEOUT;
    }
    thread_join(t);
    KCHECK_EQ(timeouts, 0);
    sys_sem_free(&p.ping);
    sys_sem_free(&p.pong);
}

KTEST(net_sys_mbox_fifo_full_and_empty)
{
    sys_mbox_t b;
    KREQUIRE(sys_mbox_new(&b, 4) == ERR_OK);
    void *m = NULL;
    KCHECK_EQ(sys_arch_mbox_tryfetch(&b, &m), SYS_MBOX_EMPTY);
    KCHECK_EQ(sys_arch_mbox_fetch(&b, &m, 5), SYS_ARCH_TIMEOUT);
    for (uintptr_t i = 1; i <= 4; i++)
        KCHECK_EQ(sys_mbox_trypost(&b, (void *)i), ERR_OK);
    KCHECK_EQ(sys_mbox_trypost(&b, (void *)5), ERR_MEM); // full
    for (uintptr_t i = 1; i <= 4; i++) {
        KCHECK(sys_arch_mbox_fetch(&b, &m, 1) != SYS_ARCH_TIMEOUT);
        KCHECK_EQ((uintptr_t)m, i);
    }
    KCHECK_EQ(sys_arch_mbox_tryfetch(&b, &m), SYS_MBOX_EMPTY);
    sys_mbox_free(&b);
    KCHECK(!sys_mbox_valid(&b));
}

struct mbox_flow {
    sys_mbox_t b;
    int n;
    int bad; // messages out of order
};

static void mbox_consumer(void *arg)
{
    struct mbox_flow *f = arg;
    for (int i = 1; i <= f->n; i++) {
        void *m;
        if (sys_arch_mbox_fetch(&f->b, &m, NET_TEST_TIMEOUT_MS) == SYS_ARCH_TIMEOUT ||
            (uintptr_t)m != (uintptr_t)i)
            f->bad++;
    }
}

// A producer faster than its consumer blocks in sys_mbox_post while the box is
// full and goes on as the consumer makes room: every message arrives, in order.
KTEST(net_sys_mbox_post_blocks_until_room)
{
    struct mbox_flow f = {.n = 5000};
    KREQUIRE(sys_mbox_new(&f.b, 3) == ERR_OK);
    struct thread *t = kthread_create("mbox consumer", mbox_consumer, &f, NULL);
    KREQUIRE(t);
    for (uintptr_t i = 1; i <= (uintptr_t)f.n; i++)
        sys_mbox_post(&f.b, (void *)i);
    thread_join(t);
    KCHECK_EQ(f.bad, 0);
    sys_mbox_free(&f.b);
}

// ---- TCP and UDP over 127.0.0.1 ------------------------------------------------

#define TCP_BYTES (256 * 1024)
#define TCP_PORT 7001

static uint8_t pattern_byte(size_t i) { return (uint8_t)(i * 131 + (i >> 9)); }

struct tcp_client {
    uint16_t port;
    err_t connect_err;
    size_t sent, echoed; // bytes written; bytes read back
    int mismatches;      // echoed bytes that differ from what was sent
};

// Connects, writes TCP_BYTES of a pattern in uneven pieces, closes its sending
// side, and reads back the server's echo until the server closes.
static void tcp_client(void *arg)
{
    struct tcp_client *c = arg;
    struct netconn *nc = netconn_new(NETCONN_TCP);
    uint8_t *buf = kmalloc(TCP_BYTES);
    if (!nc || !buf) {
        c->connect_err = ERR_MEM;
        goto out;
    }
    netconn_set_recvtimeout(nc, NET_TEST_TIMEOUT_MS);
    c->connect_err = netconn_connect(nc, &loopback, c->port);
    if (c->connect_err != ERR_OK)
        goto out;
    for (size_t i = 0; i < TCP_BYTES; i++)
        buf[i] = pattern_byte(i);
    for (size_t piece = 1000; c->sent < TCP_BYTES; piece = piece * 3 % 17000 + 1) {
        size_t n = MIN(piece, TCP_BYTES - c->sent);
        if (netconn_write(nc, buf + c->sent, n, NETCONN_COPY) != ERR_OK)
            break;
        c->sent += n;
    }
    netconn_shutdown(nc, 0, 1);
    struct netbuf *nb;
    while (netconn_recv(nc, &nb) == ERR_OK) {
        do {
            void *data;
            u16_t len;
            netbuf_data(nb, &data, &len);
            for (u16_t i = 0; i < len; i++, c->echoed++)
                c->mismatches += ((uint8_t *)data)[i] != pattern_byte(c->echoed);
        } while (netbuf_next(nb) >= 0);
        netbuf_delete(nb);
    }
out:
    kfree(buf);
    if (nc)
        netconn_delete(nc);
}

// The server side: accepts one connection, reads until the client closes its
// sending side, then sends everything back and closes. (Echoing while the
// client still writes could deadlock: the client reads only once it is done.)
KTEST(net_tcp_loopback_echo)
{
    KREQUIRE(net_start() == 0);
    uint8_t *buf = kmalloc(TCP_BYTES);
    struct netconn *l = netconn_new(NETCONN_TCP);
    KREQUIRE(buf && l);
    KREQUIRE(netconn_bind(l, &loopback, TCP_PORT) == ERR_OK);
    KREQUIRE(netconn_listen(l) == ERR_OK);
    netconn_set_recvtimeout(l, NET_TEST_TIMEOUT_MS);

    struct tcp_client c = {.port = TCP_PORT};
    struct thread *t = kthread_create("tcp client", tcp_client, &c, NULL);
    KREQUIRE(t);
    struct netconn *conn = NULL;
    err_t aerr = netconn_accept(l, &conn), rerr = ERR_OK;
    size_t received = 0;
    if (aerr == ERR_OK) {
        netconn_set_recvtimeout(conn, NET_TEST_TIMEOUT_MS);
        // The peer's address is the client's: 127.0.0.1 and an ephemeral port.
        ip_addr_t peer;
        u16_t peer_port = 0;
        KCHECK(netconn_peer(conn, &peer, &peer_port) == ERR_OK);
        KCHECK(ip_addr_cmp(&peer, &loopback));
        KCHECK(peer_port != 0 && peer_port != TCP_PORT);
        struct netbuf *nb;
        while ((rerr = netconn_recv(conn, &nb)) == ERR_OK) {
            u16_t len = netbuf_len(nb);
            if (received + len <= TCP_BYTES)
                netbuf_copy(nb, buf + received, len);
            received += len;
            netbuf_delete(nb);
        }
        if (received == TCP_BYTES)
            KCHECK(netconn_write(conn, buf, received, NETCONN_COPY) == ERR_OK);
        netconn_close(conn);
    }
    thread_join(t);
    KCHECK_EQ(aerr, ERR_OK);
    KCHECK_EQ(rerr, ERR_CLSD); // the client's shutdown, not a timeout
    KCHECK_EQ(c.connect_err, ERR_OK);
    KCHECK_EQ(c.sent, TCP_BYTES);
    KCHECK_EQ(received, TCP_BYTES);
    KCHECK_EQ(c.echoed, TCP_BYTES);
    KCHECK_EQ(c.mismatches, 0);
    if (conn)
        netconn_delete(conn);
    netconn_delete(l);
    kfree(buf);
}

// Nobody listens on the port: the loopback interface carries the RST back and
// the connect fails instead of waiting.
KTEST(net_tcp_connect_refused)
{
    KREQUIRE(net_start() == 0);
    struct netconn *nc = netconn_new(NETCONN_TCP);
    KREQUIRE(nc);
    err_t e = netconn_connect(nc, &loopback, TCP_PORT + 1);
    KCHECK_EQ(e, ERR_RST);
    netconn_delete(nc);
}

#define UDP_PORT_A 7101
#define UDP_PORT_B 7102
#define UDP_DATAGRAMS 50

struct udp_peer {
    struct netconn *nc; // bound to UDP_PORT_B
    int bad;            // datagrams with the wrong size, contents or source
    int answered;
};

// Receives each datagram and answers it with its bytes reversed, to the sender.
static void udp_reverser(void *arg)
{
    struct udp_peer *p = arg;
    for (int i = 0; i < UDP_DATAGRAMS; i++) {
        struct netbuf *nb;
        if (netconn_recv(p->nc, &nb) != ERR_OK) {
            p->bad++;
            return;
        }
        uint8_t d[64];
        u16_t len = netbuf_copy(nb, d, sizeof d);
        if (len != (u16_t)(i + 1) || netbuf_fromport(nb) != UDP_PORT_A ||
            !ip_addr_cmp(netbuf_fromaddr(nb), &loopback) || d[0] != (uint8_t)i)
            p->bad++;
        for (u16_t j = 0; j < len / 2; j++) {
            uint8_t x = d[j];
            d[j] = d[len - 1 - j];
            d[len - 1 - j] = x;
        }
        netbuf_delete(nb);
        struct netbuf *out = netbuf_new();
        if (out && netbuf_ref(out, d, len) == ERR_OK &&
            netconn_sendto(p->nc, out, &loopback, UDP_PORT_A) == ERR_OK)
            p->answered++;
        if (out)
            netbuf_delete(out);
    }
}

// Datagrams of 1..50 bytes from port A to port B and back: each arrives whole,
// once, from the right port, and the answers come back in order.
KTEST(net_udp_loopback_exchange)
{
    KREQUIRE(net_start() == 0);
    struct netconn *a = netconn_new(NETCONN_UDP);
    struct udp_peer p = {.nc = netconn_new(NETCONN_UDP)};
    KREQUIRE(a && p.nc);
    KREQUIRE(netconn_bind(a, &loopback, UDP_PORT_A) == ERR_OK);
    KREQUIRE(netconn_bind(p.nc, &loopback, UDP_PORT_B) == ERR_OK);
    struct netconn *dup = netconn_new(NETCONN_UDP);
    KREQUIRE(dup);
    KCHECK_EQ(netconn_bind(dup, &loopback, UDP_PORT_B), ERR_USE); // taken
    netconn_delete(dup);
    netconn_set_recvtimeout(a, NET_TEST_TIMEOUT_MS);
    netconn_set_recvtimeout(p.nc, NET_TEST_TIMEOUT_MS);
    struct thread *t = kthread_create("udp reverser", udp_reverser, &p, NULL);
    KREQUIRE(t);

    int replies = 0, bad = 0;
    for (int i = 0; i < UDP_DATAGRAMS; i++) {
        uint8_t d[64];
        for (int j = 0; j <= i; j++)
            d[j] = (uint8_t)(i + j);
        struct netbuf *out = netbuf_new();
        KREQUIRE(out);
        KCHECK(netbuf_ref(out, d, (u16_t)(i + 1)) == ERR_OK);
        KCHECK(netconn_sendto(a, out, &loopback, UDP_PORT_B) == ERR_OK);
        netbuf_delete(out);
        struct netbuf *in;
        if (netconn_recv(a, &in) != ERR_OK)
            break;
        uint8_t r[64];
        u16_t len = netbuf_copy(in, r, sizeof r);
        bool ok = len == (u16_t)(i + 1) && netbuf_fromport(in) == UDP_PORT_B;
        for (int j = 0; ok && j <= i; j++)
            ok = r[j] == (uint8_t)(i + (i - j));
        bad += !ok;
        replies++;
        netbuf_delete(in);
    }
    thread_join(t);
    KCHECK_EQ(replies, UDP_DATAGRAMS);
    KCHECK_EQ(bad, 0);
    KCHECK_EQ(p.bad, 0);
    KCHECK_EQ(p.answered, UDP_DATAGRAMS);
    netconn_delete(a);
    netconn_delete(p.nc);
}

// ---- the virtio-net device and QEMU's user network ----------------------------

#define ICMP_ECHO_REQUEST 8
#define ICMP_ECHO_REPLY 0
#define PING_ID 0x4b4e
#define PING_MAX 1472 // the largest ICMP message in one 1500-byte IP packet
#define PING_COUNT 300 // more than twice the driver's 128-entry rings

struct ping {
    struct netconn *nc;
    ip_addr_t dst;
    uint8_t req[PING_MAX];
    uint8_t reply[60 + PING_MAX]; // room for an IP header with options
};

// Sends an echo request of len bytes with sequence number seq; true if an echo
// reply with the same id, sequence number and payload comes back from dst.
static bool ping_once(struct ping *pg, uint16_t seq, u16_t len)
{
    uint8_t *req = pg->req;
    memset(req, 0, 8);
    req[0] = ICMP_ECHO_REQUEST;
    req[4] = PING_ID >> 8, req[5] = PING_ID & 0xff;
    req[6] = (uint8_t)(seq >> 8), req[7] = (uint8_t)seq;
    for (int i = 8; i < len; i++)
        req[i] = (uint8_t)(seq + i);
    u16_t sum = inet_chksum(req, len);
    memcpy(req + 2, &sum, 2); // already in network order
    struct netbuf *out = netbuf_new();
    if (!out)
        return false;
    bool sent = netbuf_ref(out, req, len) == ERR_OK &&
                netconn_sendto(pg->nc, out, &pg->dst, 0) == ERR_OK;
    netbuf_delete(out);
    struct netbuf *in;
    // Anything else arriving (an old reply) is skipped; a timeout ends the try.
    while (sent && netconn_recv(pg->nc, &in) == ERR_OK) {
        u16_t n = netbuf_copy(in, pg->reply, sizeof pg->reply);
        bool from_dst = ip_addr_cmp(netbuf_fromaddr(in), &pg->dst);
        netbuf_delete(in);
        // A raw netconn delivers the IP header too.
        int ihl = (pg->reply[0] & 0xf) * 4;
        if (!from_dst || n != ihl + len)
            continue;
        const uint8_t *r = pg->reply + ihl;
        if (r[0] == ICMP_ECHO_REPLY && memcmp(r + 4, req + 4, len - 4u) == 0)
            return true;
    }
    return false;
}

// With QEMU's user network behind the NIC (tools/runqemu --net), the gateway
// 10.0.2.2 answers pings: frames go out through the transmit queue, ARP
// resolves the gateway, and the replies come in through the interrupt path.
// Enough of them, of sizes up to a full frame, that both rings wrap around.
KTEST(net_virtio_ping_gateway)
{
    KREQUIRE(net_start() == 0);
    if (!virtio_net_present()) {
        kprintf("# no virtio-net device (boot with tools/runqemu --net): nothing to ping\n");
        return;
    }
    struct ping *pg = kzalloc(sizeof *pg);
    KREQUIRE(pg);
    pg->nc = netconn_new_with_proto_and_callback(NETCONN_RAW, IP_PROTO_ICMP, NULL);
    KREQUIRE(pg->nc);
    netconn_set_recvtimeout(pg->nc, 3000);
    pg->dst = (ip_addr_t)IPADDR4_INIT_BYTES(10, 0, 2, 2);
    // The first request may wait for ARP (lwIP queues one packet meanwhile):
    // a lost first reply is allowed, none after it.
    if (!ping_once(pg, 0, 64))
        kprintf("# the first echo request got no reply\n");
    int replies = 0;
    for (uint16_t seq = 1; seq <= PING_COUNT; seq++)
        replies += ping_once(pg, seq, (u16_t)(8 + seq * 97 % (PING_MAX - 7)));
    KCHECK_EQ(replies, PING_COUNT);
    netconn_delete(pg->nc);
    kfree(pg);
}
