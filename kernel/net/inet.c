// AF_INET sockets: TCP (SOCK_STREAM) and UDP (SOCK_DGRAM) over lwIP's netconn
// API (socket.h's family operations).
//
// Commute: operations on two different sockets touch different inet_socks,
// but every one of them ends in lwIP, whose protocol state is under one core
// lock (docs/net.md), and lwIP's event callback finds the socket through one
// map under one spinlock: two sockets' calls take turns there and share those
// lines. Per socket, `lock` (a sleeping lock) orders the calls that use the
// socket's own state (the rest of a received segment or datagram, a connection
// taken ahead of accept, the state flags); it is never held while waiting.
//
// Blocking. Every netconn is non-blocking: lwIP's own waits cannot be
// interrupted. A call that must wait reads the socket's event count (`gen`),
// tries the operation, and if it would block sleeps until lwIP's callback
// (inet_event) has bumped the count or a signal is pending; a signal ends the
// wait with ERESTARTSYS (restart under SA_RESTART, else EINTR), as Linux's
// socket calls without a timeout. poll registers on the socket's pollhead, which
// the same callback wakes, and looks at the socket's state, taking a received
// segment, datagram or connection out of lwIP ahead of the read if need be.
//
// Linux's constants are translated here: options (SOL_SOCKET, IPPROTO_TCP),
// flags (MSG_*), addresses (sockaddr_in, network byte order, to lwIP's
// ip_addr_t and host-order ports) and lwIP's err_t to Linux's errno in the
// context of each call (a reset is ECONNREFUSED for connect, ECONNRESET or
// EPIPE for send).
#include "file/file.h"
#include "file/poll.h"
#include "mm/mm.h"
#include "net/net.h"
#include "net/socket.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/sleeplock.h"
#include "uapi/errno.h"
#include "x86/smp.h"

#include "lwip/api.h"
#include "lwip/netif.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"
#include "lwip/tcpip.h"
#include "lwip/udp.h"

#define SEND_CHUNK 16384 // bytes of user data copied into the kernel at a time
#define UDP_MAX 65507    // the largest UDP payload over IPv4

// Who may write each field (docs/conventions.md): [i] immutable once made,
// [a] atomic, [l] lock, [m] map_lock.
// Options as set (apply_options puts them on the PCB): booleans as 0 or 1;
// IP_TTL and IP_TOS; TCP_KEEPIDLE and TCP_KEEPINTVL in seconds, TCP_KEEPCNT
// in probes; SO_SNDBUF and SO_RCVBUF as reported (not enforced).
struct inet_opts {
    int nodelay, keepalive, reuseaddr;
    int ttl, tos;
    int keep_idle, keep_intvl, keep_cnt;
    int sndbuf, rcvbuf;
};

struct inet_sock {
    struct sock sk;
    struct netconn *conn;      // [l] (replaced only by a reconnect after failure)
    struct sleeplock lock;
    struct waitq wq;           // callers waiting for an event
    struct pollhead poll;
    unsigned gen;              // [a] lwIP events so far
    struct list link;          // [m] in the map
    // Received data taken out of lwIP and not yet read.
    struct pbuf *rx;           // [l] TCP: the rest of a segment, from rx_off
    uint16_t rx_off;           // [l]
    struct netbuf *dg;         // [l] UDP: a datagram poll, FIONREAD or MSG_PEEK took
    struct netconn *pending;   // [l] a listener's connection taken by poll
    int rx_err;                // [l] an error to report to the next receive
    bool rd_eof;               // [l] the peer's FIN (or an error) was seen
    bool rd_shut, wr_shut;     // [l] shutdown(SHUT_RD / SHUT_WR)
    bool bound, listening;     // [l]
    bool connecting;           // [l] a connect is in progress
    bool connected;            // [l] TCP: established once; UDP: has a peer
    bool reset;                // [l] TCP: the connection is gone (send: EPIPE)
    bool peer_fin;             // [l] TCP: a send saw the peer's FIN (a reset then means EPIPE)
    struct inet_opts opt;      // [l] options as set; an accepted socket copies its listener's
};

static struct inet_sock *isk(struct sock *sk) { return (struct inet_sock *)sk; }

// ---- netconn -> socket -------------------------------------------------------

// lwIP's callback gets the netconn; the map gives its socket. Buckets by the
// netconn's address; one lock (lwIP's events are serialised by its core lock
// already, apart from the receive-side events of the calls themselves).
#define MAP_BUCKETS 64
static struct spinlock map_lock = SPINLOCK_INIT("inet map");
static struct list map[MAP_BUCKETS]; // [m]
static bool map_ready;               // [m]

static struct list *bucket(struct netconn *c) { return &map[((uintptr_t)c >> 6) % MAP_BUCKETS]; }

static void map_add(struct inet_sock *s)
{
    spin_lock(&map_lock);
    if (!map_ready) {
        for (int i = 0; i < MAP_BUCKETS; i++)
            list_init(&map[i]);
        map_ready = true;
    }
    list_push_back(bucket(s->conn), &s->link);
    spin_unlock(&map_lock);
}

static void map_remove(struct inet_sock *s)
{
    spin_lock(&map_lock);
    list_remove(&s->link);
    spin_unlock(&map_lock);
}

// Something happened to conn (data, room, a connection, an error): wake its
// socket's waiters and pollers. Under the map lock, so that the socket cannot
// go meanwhile (release takes it out of the map first).
static void inet_event(struct netconn *conn, enum netconn_evt evt, u16_t len)
{
    (void)len;
    // "Less to read" and "less room to write" wake nobody: lwIP says the
    // latter from inside our own failed write, which would then find its event
    // already there and spin instead of sleeping (a 64 KiB write over
    // 127.0.0.1 took 40-60 ms, spinning until the tick preempted it).
    if (evt == NETCONN_EVT_RCVMINUS || evt == NETCONN_EVT_SENDMINUS)
        return;
    spin_lock(&map_lock);
    if (map_ready) {
        list_for_each(it, bucket(conn)) {
            struct inet_sock *s = list_entry(it, struct inet_sock, link);
            if (s->conn == conn) {
                fetch_add(&s->gen, 1);
                waitq_wake_all(&s->wq);
                pollhead_wake(&s->poll);
                break;
            }
        }
    }
    spin_unlock(&map_lock);
}

// Our own changes (shutdown) that waiters must see.
static void kick(struct inet_sock *s)
{
    fetch_add(&s->gen, 1);
    waitq_wake_all(&s->wq);
    pollhead_wake(&s->poll);
}

// Sleep until an event after `gen`, a signal, or the deadline (0: none; see
// sock_deadline): 0, -ERESTARTSYS or -EAGAIN.
static int wait_event_after(struct inet_sock *s, unsigned gen, uint64_t deadline)
{
    struct thread *t = thread_current();
    if (!wait_event_until(&s->wq, load_acquire(&s->gen) != gen || signal_pending(t), deadline))
        return -EAGAIN;
    return load_acquire(&s->gen) == gen ? -ERESTARTSYS : 0;
}

// ---- creation ---------------------------------------------------------------

static const struct sock_ops inet_ops;

static bool is_tcp(struct inet_sock *s) { return s->sk.type == SOCK_STREAM; }

static struct netconn *new_conn(int type)
{
    struct netconn *c = netconn_new_with_callback(type == SOCK_STREAM ? NETCONN_TCP : NETCONN_UDP,
                                                  inet_event);
    if (c)
        netconn_set_nonblocking(c, 1);
    return c;
}

static struct inet_sock *alloc_sock(int type, int protocol, struct netconn *c)
{
    struct inet_sock *s = kzalloc(sizeof *s);
    if (!s)
        return NULL;
    s->sk.ops = &inet_ops;
    s->sk.family = AF_INET;
    s->sk.type = type;
    s->sk.protocol = protocol;
    s->conn = c;
    sleeplock_init(&s->lock, "inet sock");
    waitq_init(&s->wq, "inet sock");
    pollhead_init(&s->poll, "inet poll");
    s->opt = (struct inet_opts){
        .ttl = IP_DEFAULT_TTL,
        .keep_idle = TCP_KEEPIDLE_DEFAULT / 1000,
        .keep_intvl = TCP_KEEPINTVL_DEFAULT / 1000,
        .keep_cnt = TCP_KEEPCNT_DEFAULT,
        .sndbuf = TCP_SND_BUF,
        .rcvbuf = TCP_WND,
    };
    return s;
}

// Linux's inet_create: the protocol must fit the type (0: the type's own).
int inet_create(int type, int protocol, struct sock **out)
{
    if (type == SOCK_STREAM) {
        if (protocol != 0 && protocol != IPPROTO_TCP)
            return -EPROTONOSUPPORT;
        protocol = IPPROTO_TCP;
    } else if (type == SOCK_DGRAM) {
        if (protocol != 0 && protocol != IPPROTO_UDP)
            return -EPROTONOSUPPORT;
        protocol = IPPROTO_UDP;
    } else {
        return -ESOCKTNOSUPPORT; // raw sockets are not supported
    }
    if (net_start())
        return -ENOMEM;
    struct netconn *c = new_conn(type);
    if (!c)
        return -ENOBUFS; // lwIP's pools are full
    struct inet_sock *s = alloc_sock(type, protocol, c);
    if (!s) {
        netconn_delete(c);
        return -ENOMEM;
    }
    map_add(s);
    *out = &s->sk;
    return 0;
}

// ---- addresses ---------------------------------------------------------------

// A sockaddr_in from the caller: its address and (host-order) port.
static int addr_from(const void *addr, int len, ip_addr_t *ip, u16_t *port)
{
    const struct sockaddr_in *a = addr;
    if (len < (int)sizeof *a)
        return -EINVAL;
    if (a->sin_family != AF_INET)
        return -EAFNOSUPPORT;
    ip_addr_set_ip4_u32_val(*ip, a->sin_addr.s_addr);
    *port = lwip_ntohs(a->sin_port);
    return 0;
}

static int addr_to(void *addr, int *len, const ip_addr_t *ip, u16_t port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = lwip_htons(port)};
    a.sin_addr.s_addr = ip4_addr_get_u32(ip_2_ip4(ip));
    memcpy(addr, &a, sizeof a);
    *len = sizeof a;
    return 0;
}

// Is ip one of ours (any interface's address, 127/8, or INADDR_ANY)?
static bool addr_local(const ip_addr_t *ip)
{
    uint32_t a = lwip_ntohl(ip4_addr_get_u32(ip_2_ip4(ip)));
    if (a == INADDR_ANY || (a >> 24) == 127)
        return true;
    bool found = false;
    LOCK_TCPIP_CORE();
    struct netif *n;
    NETIF_FOREACH(n)
    {
        if (ip4_addr_get_u32(netif_ip4_addr(n)) == ip4_addr_get_u32(ip_2_ip4(ip)))
            found = true;
    }
    UNLOCK_TCPIP_CORE();
    return found;
}

// lwIP's errors in general (ERR_MEM: lwIP's pools or the heap are exhausted).
static int lwip_errno(err_t e)
{
    switch (e) {
    case ERR_OK: return 0;
    case ERR_MEM: return -ENOMEM;
    case ERR_BUF: return -ENOBUFS;
    case ERR_TIMEOUT: return -ETIMEDOUT;
    case ERR_RTE: return -ENETUNREACH;
    case ERR_INPROGRESS: return -EINPROGRESS;
    case ERR_WOULDBLOCK: return -EAGAIN;
    case ERR_USE: return -EADDRINUSE;
    case ERR_ALREADY: return -EALREADY;
    case ERR_ISCONN: return -EISCONN;
    case ERR_CONN: return -ENOTCONN;
    case ERR_ABRT: return -ECONNABORTED;
    case ERR_RST: return -ECONNRESET;
    case ERR_CLSD: return -ENOTCONN;
    default: return -EINVAL;
    }
}

// ---- bind, listen, connect, accept ------------------------------------------

// Is a TCP socket listening on port at an address that overlaps ip? Linux
// refuses a bind to such a port even when both sockets have SO_REUSEADDR,
// where lwIP's tcp_bind lets it through and only the listen fails.
static bool listener_on(const ip_addr_t *ip, u16_t port)
{
    bool found = false;
    LOCK_TCPIP_CORE();
    for (struct tcp_pcb_listen *l = tcp_listen_pcbs.listen_pcbs; l && !found; l = l->next)
        found = l->local_port == port && (ip_addr_isany(&l->local_ip) || ip_addr_isany(ip) ||
                                          ip_addr_cmp(&l->local_ip, ip));
    UNLOCK_TCPIP_CORE();
    return found;
}

static int inet_bind(struct sock *sk, const void *addr, int len)
{
    struct inet_sock *s = isk(sk);
    ip_addr_t ip;
    u16_t port;
    int err = addr_from(addr, len, &ip, &port);
    if (err)
        return err;
    if (!addr_local(&ip))
        return -EADDRNOTAVAIL;
    sleeplock_acquire(&s->lock);
    if (s->bound || s->connected || s->listening)
        err = -EINVAL;
    else if (is_tcp(s) && port && s->opt.reuseaddr && listener_on(&ip, port))
        err = -EADDRINUSE;
    else if ((err = lwip_errno(netconn_bind(s->conn, &ip, port))) == 0)
        s->bound = true;
    sleeplock_release(&s->lock);
    return err;
}

static int inet_listen(struct sock *sk, int backlog)
{
    struct inet_sock *s = isk(sk);
    if (!is_tcp(s))
        return -EOPNOTSUPP;
    backlog = backlog < 1 ? 1 : backlog > 255 ? 255 : backlog;
    int err = 0;
    sleeplock_acquire(&s->lock);
    if (s->connected || s->connecting)
        err = -EINVAL;
    else if (!s->bound && (err = lwip_errno(netconn_bind(s->conn, IP4_ADDR_ANY, 0))) == 0)
        s->bound = true; // Linux binds an unbound listener to an ephemeral port
    if (!err && (err = lwip_errno(netconn_listen_with_backlog(s->conn, (u8_t)backlog))) == 0)
        s->listening = true;
    sleeplock_release(&s->lock);
    return err;
}

// A TCP connect's state, under s->lock: 0 established, -EINPROGRESS still
// going, or its error (the connect is then over).
static int connect_state(struct inet_sock *s)
{
    LOCK_TCPIP_CORE();
    enum netconn_state st = s->conn->state;
    struct tcp_pcb *pcb = s->conn->pcb.tcp;
    bool up = pcb && pcb->state != SYN_SENT && pcb->state != CLOSED;
    UNLOCK_TCPIP_CORE();
    if (st == NETCONN_CONNECT)
        return -EINPROGRESS;
    s->connecting = false;
    if (up) {
        s->connected = true;
        s->bound = true;
        return 0;
    }
    err_t e = netconn_err(s->conn);
    return e == ERR_RST ? -ECONNREFUSED : e == ERR_ABRT ? -ETIMEDOUT : e ? lwip_errno(e) : -ECONNREFUSED;
}

// A non-blocking connect that has ended: record its outcome (under s->lock).
static void settle(struct inet_sock *s)
{
    if (!s->connecting)
        return;
    int err = connect_state(s);
    if (err && err != -EINPROGRESS) {
        s->rx_err = err; // SO_ERROR, or the next call, reports it
        s->rd_eof = s->reset = true;
    }
}

// The options as set go onto the netconn's PCB: after each change, on a PCB
// made anew (renew, after a failed connect) and on an accepted connection's
// (which has its listener's, as Linux's accepted sockets do). Under s->lock.
static void apply_options(struct inet_sock *s)
{
    LOCK_TCPIP_CORE();
    struct ip_pcb *ip = s->conn->pcb.ip;
    if (ip) {
        ip->so_options = (u8_t)((ip->so_options & ~(SOF_REUSEADDR | SOF_KEEPALIVE)) |
                                (s->opt.reuseaddr ? SOF_REUSEADDR : 0) |
                                (s->opt.keepalive ? SOF_KEEPALIVE : 0));
        ip->ttl = (u8_t)s->opt.ttl;
        ip->tos = (u8_t)s->opt.tos;
    }
    // A listener's PCB is the smaller tcp_pcb_listen: no Nagle or keepalive
    // fields (its connections get them at accept).
    struct tcp_pcb *pcb = s->conn->pcb.tcp;
    if (is_tcp(s) && pcb && !s->listening) {
        if (s->opt.nodelay)
            tcp_nagle_disable(pcb);
        else
            tcp_nagle_enable(pcb);
        pcb->keep_idle = (u32_t)s->opt.keep_idle * 1000;
        pcb->keep_intvl = (u32_t)s->opt.keep_intvl * 1000;
        pcb->keep_cnt = (u32_t)s->opt.keep_cnt;
    }
    UNLOCK_TCPIP_CORE();
}

// A fresh netconn for a socket whose connection attempt failed (lwIP has
// freed its PCB), so that it can connect again, as on Linux.
static int renew(struct inet_sock *s)
{
    struct netconn *c = new_conn(s->sk.type);
    if (!c)
        return -ENOBUFS;
    map_remove(s);
    netconn_delete(s->conn);
    s->conn = c;
    s->bound = false;
    s->rx_err = 0; // the failed attempt is over
    s->rd_eof = s->reset = s->peer_fin = false;
    map_add(s);
    apply_options(s);
    return 0;
}

// Linux's rule: a datagram to a broadcast address (255.255.255.255, or the
// broadcast address of the interface it would leave by) needs SO_BROADCAST.
// dst: the destination, NULL for the connected one.
static bool broadcast_refused(struct inet_sock *s, const ip_addr_t *dst)
{
    if (READ_ONCE(s->sk.broadcast))
        return false;
    bool refused = false;
    LOCK_TCPIP_CORE();
    if (!dst && s->conn->pcb.udp)
        dst = &s->conn->pcb.udp->remote_ip;
    if (dst) {
        u32_t a = ip4_addr_get_u32(ip_2_ip4(dst));
        struct netif *n = a == IPADDR_BROADCAST || a == IPADDR_ANY ? NULL : ip4_route(ip_2_ip4(dst));
        refused = a == IPADDR_BROADCAST || (n && ip4_addr_isbroadcast_u32(a, n));
    }
    UNLOCK_TCPIP_CORE();
    return refused;
}

static int dgram_connect(struct inet_sock *s, const void *addr, int len)
{
    const struct sockaddr_in *a = addr;
    int err = 0;
    sleeplock_acquire(&s->lock);
    if (len >= (int)sizeof(sa_family_t) && a->sin_family == AF_UNSPEC) {
        netconn_disconnect(s->conn); // dissolves the association
        s->connected = false;
    } else {
        ip_addr_t ip;
        u16_t port;
        if (!(err = addr_from(addr, len, &ip, &port)) &&
            !(err = broadcast_refused(s, &ip) ? -EACCES : 0) &&
            !(err = lwip_errno(netconn_connect(s->conn, &ip, port))))
            s->connected = s->bound = true;
    }
    sleeplock_release(&s->lock);
    return err;
}

static int inet_connect(struct sock *sk, const void *addr, int len, bool nonblock)
{
    struct inet_sock *s = isk(sk);
    if (!is_tcp(s))
        return dgram_connect(s, addr, len);
    ip_addr_t ip;
    u16_t port;
    int err = addr_from(addr, len, &ip, &port);
    if (err)
        return err;
    sleeplock_acquire(&s->lock);
    settle(s);
    if (s->connecting)
        err = nonblock ? -EALREADY : -EINPROGRESS; // Linux: a blocking one waits for it
    else if (s->connected || s->listening)
        err = -EISCONN;
    else if (s->conn->pcb.tcp == NULL)
        err = renew(s);
    if (!err && !s->connecting) {
        err_t e = netconn_connect(s->conn, &ip, port);
        if (e == ERR_INPROGRESS || e == ERR_OK) {
            s->connecting = true;
            err = -EINPROGRESS;
        } else {
            err = e == ERR_RST ? -ECONNREFUSED : lwip_errno(e);
        }
    }
    if (err != -EINPROGRESS || nonblock) {
        sleeplock_release(&s->lock);
        return err;
    }
    uint64_t deadline = sock_deadline(&s->sk, true);
    for (;;) {
        unsigned gen = load_acquire(&s->gen);
        if ((err = connect_state(s)) != -EINPROGRESS)
            break;
        sleeplock_release(&s->lock);
        // The connect goes on either way: a restarted call waits for it, a
        // call after SO_SNDTIMEO ran out finds it in progress (EALREADY).
        if ((err = wait_event_after(s, gen, deadline)))
            return err == -EAGAIN ? -EINPROGRESS : err;
        sleeplock_acquire(&s->lock);
    }
    sleeplock_release(&s->lock);
    return err;
}

// Take a connection out of a listener's queue into s->pending, without
// waiting (under s->lock). An error of the listener itself is returned.
static int accept_fill(struct inet_sock *s)
{
    if (s->pending)
        return 0;
    struct netconn *c;
    err_t e = netconn_accept(s->conn, &c);
    if (e == ERR_OK)
        s->pending = c;
    return e == ERR_OK || e == ERR_WOULDBLOCK ? 0 : lwip_errno(e);
}

static int inet_accept(struct sock *sk, struct sock **out, bool nonblock)
{
    struct inet_sock *s = isk(sk);
    if (!is_tcp(s))
        return -EOPNOTSUPP;
    sleeplock_acquire(&s->lock);
    int err = 0;
    uint64_t deadline = sock_deadline(&s->sk, false);
    for (;;) {
        unsigned gen = load_acquire(&s->gen);
        if (!s->listening) {
            err = -EINVAL;
            break;
        }
        if ((err = accept_fill(s)) || s->pending)
            break;
        if (nonblock) {
            err = -EAGAIN;
            break;
        }
        sleeplock_release(&s->lock);
        if ((err = wait_event_after(s, gen, deadline)))
            return err;
        sleeplock_acquire(&s->lock);
    }
    struct netconn *c = s->pending;
    s->pending = NULL;
    struct inet_opts opt = s->opt; // the new connection's, as Linux's accept gives
    sleeplock_release(&s->lock);
    if (err)
        return err;
    netconn_set_nonblocking(c, 1);
    struct inet_sock *n = alloc_sock(SOCK_STREAM, IPPROTO_TCP, c);
    if (!n) {
        netconn_delete(c);
        return -ENOMEM;
    }
    n->bound = n->connected = true;
    n->opt = opt;
    apply_options(n);
    map_add(n); // events before this found no socket: calls look at the state
    *out = &n->sk;
    return 0;
}

// ---- receiving ---------------------------------------------------------------

// Take the next segment out of lwIP into s->rx, without waiting (under
// s->lock); end of stream and errors are recorded.
static void stream_fill(struct inet_sock *s)
{
    if (s->rx || s->rd_eof || !s->connected)
        return;
    struct pbuf *p = NULL;
    err_t e = netconn_recv_tcp_pbuf_flags(s->conn, &p, NETCONN_DONTBLOCK);
    if (e == ERR_OK && p) {
        s->rx = p;
        s->rx_off = 0;
    } else if (e == ERR_CLSD || e == ERR_CONN || (e == ERR_OK && !p)) {
        s->rd_eof = true; // the peer's FIN
    } else if (e != ERR_WOULDBLOCK) {
        s->rd_eof = true;
        s->reset = true;
        s->rx_err = e == ERR_RST || e == ERR_ABRT ? -ECONNRESET : lwip_errno(e);
    }
}

// Copy up to n bytes of s->rx from rx_off into the vector; consume them unless
// peek. Bytes copied, or -EFAULT.
static long rx_copy(struct inet_sock *s, struct sk_iov *it, bool peek)
{
    long done = 0;
    uint16_t off = s->rx_off;
    for (struct pbuf *q = s->rx; q && it->left > 0; q = q->next) {
        if (off >= q->len) {
            off -= q->len;
            continue;
        }
        long want = q->len - off;
        long k = skiov_to(it, (char *)q->payload + off, (size_t)want);
        if (k < 0)
            return done ? done : k;
        done += k;
        off = 0;
        if (k < want)
            break; // the vector is full
    }
    if (!peek) {
        s->rx_off += (uint16_t)done;
        if (s->rx_off == s->rx->tot_len) {
            pbuf_free(s->rx);
            s->rx = NULL;
        }
    }
    return done;
}

static long stream_recv(struct inet_sock *s, struct sk_msg *m)
{
    bool peek = m->flags & MSG_PEEK, waitall = (m->flags & MSG_WAITALL) && !peek;
    long done = 0, err = 0;
    uint64_t deadline = sock_deadline(&s->sk, false);
    sleeplock_acquire(&s->lock);
    settle(s);
    if (s->rx_err && !s->connected) { // a failed non-blocking connect
        long err = s->rx_err;
        s->rx_err = 0;
        sleeplock_release(&s->lock);
        return err;
    }
    if (s->connecting && m->nonblock) {
        sleeplock_release(&s->lock);
        return -EAGAIN;
    }
    if (!s->connected && !s->reset) {
        sleeplock_release(&s->lock);
        return -ENOTCONN;
    }
    while (m->data.left > 0) {
        unsigned gen = load_acquire(&s->gen);
        stream_fill(s);
        if (s->rx && !s->rd_shut) {
            long k = rx_copy(s, &m->data, peek);
            if (k < 0) {
                err = k;
                break;
            }
            done += k;
            if (peek)
                break;
            continue;
        }
        if (s->rx_err && !done) {
            err = s->rx_err;
            s->rx_err = 0;
            break;
        }
        if (s->rd_eof || s->rd_shut || (done && !waitall))
            break;
        if (m->nonblock) {
            err = done ? 0 : -EAGAIN;
            break;
        }
        sleeplock_release(&s->lock);
        if ((err = wait_event_after(s, gen, deadline)))
            return done ? done : err;
        sleeplock_acquire(&s->lock);
    }
    sleeplock_release(&s->lock);
    m->addrlen = 0;
    return err ? err : done;
}

// Take the next datagram out of lwIP into s->dg, without waiting.
static void dgram_fill(struct inet_sock *s)
{
    if (s->dg)
        return;
    struct netbuf *b;
    if (netconn_recv(s->conn, &b) == ERR_OK)
        s->dg = b;
}

static long dgram_recv(struct inet_sock *s, struct sk_msg *m)
{
    long err = 0;
    uint64_t deadline = sock_deadline(&s->sk, false);
    sleeplock_acquire(&s->lock);
    for (;;) {
        unsigned gen = load_acquire(&s->gen);
        dgram_fill(s);
        if (s->dg || s->rd_shut)
            break;
        if (m->nonblock) {
            err = -EAGAIN;
            break;
        }
        sleeplock_release(&s->lock);
        if ((err = wait_event_after(s, gen, deadline)))
            return err;
        sleeplock_acquire(&s->lock);
    }
    if (err || !s->dg) {
        sleeplock_release(&s->lock);
        return err;
    }
    struct netbuf *b = s->dg;
    size_t len = netbuf_len(b), want = MIN(len, m->data.left);
    long k = 0;
    for (struct pbuf *q = b->p; q && (size_t)k < want; q = q->next) {
        long c = skiov_to(&m->data, q->payload, MIN(q->len, want - (size_t)k));
        if (c < 0) {
            k = c;
            break;
        }
        k += c;
    }
    addr_to(&m->addr, &m->addrlen, netbuf_fromaddr(b), netbuf_fromport(b));
    bool peek = m->flags & MSG_PEEK;
    bool trunc_len = m->flags & MSG_TRUNC; // Linux: return the real length
    m->flags = len > want ? MSG_TRUNC : 0;
    if (!peek && k >= 0) {
        netbuf_delete(b);
        s->dg = NULL;
    }
    sleeplock_release(&s->lock);
    return k < 0 ? k : trunc_len ? (long)len : k;
}

static long inet_recvmsg(struct sock *sk, struct sk_msg *m)
{
    struct inet_sock *s = isk(sk);
    if (m->flags & MSG_OOB)
        return -EINVAL; // no urgent data kept inline or out of band
    long r = is_tcp(s) ? stream_recv(s, m) : dgram_recv(s, m);
    if (is_tcp(s))
        m->flags = 0;
    return r;
}

// ---- sending -------------------------------------------------------------------

// Why a TCP send failed, in Linux's terms: EPIPE (and SIGPIPE) once the
// connection is gone or shut, ECONNRESET for the reset of a connection whose
// peer had not closed.
static long tcp_send_err(struct inet_sock *s, err_t e, int flags)
{
    if (e == ERR_MEM || e == ERR_BUF)
        return -ENOBUFS;
    if (e == ERR_RST && !s->peer_fin && !s->reset) {
        s->reset = true;
        return -ECONNRESET;
    }
    s->reset = true;
    return sock_epipe(flags);
}

static long stream_send(struct inet_sock *s, struct sk_msg *m)
{
    sleeplock_acquire(&s->lock);
    settle(s);
    if (s->rx_err && !s->connected) { // a failed non-blocking connect
        long err = s->rx_err;
        s->rx_err = 0;
        sleeplock_release(&s->lock);
        return err;
    }
    if (s->connecting) {
        sleeplock_release(&s->lock);
        return m->nonblock ? -EAGAIN : -ENOTCONN;
    }
    if (s->wr_shut || s->reset) {
        sleeplock_release(&s->lock);
        return sock_epipe(m->flags);
    }
    if (!s->connected) {
        sleeplock_release(&s->lock);
        return -ENOTCONN;
    }
    if (m->data.left == 0) {
        sleeplock_release(&s->lock);
        return 0;
    }
    char *buf = kmalloc(SEND_CHUNK);
    if (!buf) {
        sleeplock_release(&s->lock);
        return -ENOMEM;
    }
    long done = 0, err = 0;
    uint64_t deadline = sock_deadline(&s->sk, true);
    while (!err && m->data.left > 0) {
        long chunk = skiov_from(&m->data, buf, SEND_CHUNK);
        if (chunk < 0) {
            err = chunk;
            break;
        }
        long off = 0;
        while (off < chunk) {
            unsigned gen = load_acquire(&s->gen);
            LOCK_TCPIP_CORE();
            struct tcp_pcb *pcb = s->conn->pcb.tcp;
            if (pcb && (pcb->state == CLOSE_WAIT || pcb->state == LAST_ACK))
                s->peer_fin = true;
            UNLOCK_TCPIP_CORE();
            size_t w = 0;
            u8_t more = m->data.left > 0 || off + SEND_CHUNK < chunk ? NETCONN_MORE : 0;
            err_t e = netconn_write_partly(s->conn, buf + off, (size_t)(chunk - off),
                                           NETCONN_COPY | NETCONN_DONTBLOCK | more, &w);
            off += (long)w;
            done += (long)w;
            if (e == ERR_OK && w > 0)
                continue;
            if (e != ERR_OK && e != ERR_WOULDBLOCK) {
                err = tcp_send_err(s, e, m->flags);
                break;
            }
            if (m->nonblock) {
                err = -EAGAIN;
                break;
            }
            sleeplock_release(&s->lock);
            err = wait_event_after(s, gen, deadline);
            sleeplock_acquire(&s->lock);
            if (err)
                break;
            if (s->wr_shut) {
                err = sock_epipe(m->flags);
                break;
            }
        }
    }
    sleeplock_release(&s->lock);
    kfree(buf);
    return done ? done : err;
}

static long dgram_send(struct inet_sock *s, struct sk_msg *m)
{
    ip_addr_t ip;
    u16_t port = 0;
    if (m->addrlen) {
        int err = addr_from(&m->addr, m->addrlen, &ip, &port);
        if (err)
            return err;
    }
    if (m->data.left > UDP_MAX)
        return -EMSGSIZE;
    sleeplock_acquire(&s->lock);
    long err = 0;
    if (s->wr_shut)
        err = sock_epipe(m->flags);
    else if (!m->addrlen && !s->connected)
        err = -EDESTADDRREQ;
    else if (broadcast_refused(s, m->addrlen ? &ip : NULL))
        err = -EACCES;
    if (err) {
        sleeplock_release(&s->lock);
        return err;
    }
    size_t len = m->data.left;
    struct netbuf *b = netbuf_new();
    if (!b || !netbuf_alloc(b, (u16_t)len)) {
        if (b)
            netbuf_delete(b);
        sleeplock_release(&s->lock);
        return -ENOBUFS;
    }
    long k = len ? skiov_from(&m->data, b->p->payload, len) : 0; // PBUF_RAM: one piece
    if (k >= 0 && (size_t)k < len)
        k = -EFAULT;
    if (k >= 0) {
        err_t e = m->addrlen ? netconn_sendto(s->conn, b, &ip, port) : netconn_send(s->conn, b);
        if (e == ERR_OK)
            s->bound = true;
        k = e == ERR_OK ? (long)len : e == ERR_MEM || e == ERR_BUF ? -ENOBUFS : lwip_errno(e);
    }
    netbuf_delete(b);
    sleeplock_release(&s->lock);
    return k;
}

static long inet_sendmsg(struct sock *sk, struct sk_msg *m)
{
    struct inet_sock *s = isk(sk);
    if (m->flags & MSG_OOB)
        return -EOPNOTSUPP;
    if (is_tcp(s)) {
        // Linux: a connected stream ignores the address (EISCONN only for
        // sendto before connect on some families; TCP ignores it).
        return stream_send(s, m);
    }
    return dgram_send(s, m);
}

// ---- shutdown, names, options, poll, release ---------------------------------

static int inet_shutdown(struct sock *sk, int how)
{
    struct inet_sock *s = isk(sk);
    int err = 0;
    sleeplock_acquire(&s->lock);
    bool rd = how != SHUT_WR, wr = how != SHUT_RD;
    if (!s->connected && !(is_tcp(s) && s->listening)) {
        err = -ENOTCONN;
    } else if (is_tcp(s) && s->listening) {
        s->rd_shut = true; // accept now fails (Linux: EINVAL)
        s->listening = !rd;
    } else {
        if (is_tcp(s) && !s->reset && wr && !s->wr_shut)
            netconn_shutdown(s->conn, 0, 1); // the FIN; reads stop in rd_shut
        s->rd_shut |= rd;
        s->wr_shut |= wr;
    }
    sleeplock_release(&s->lock);
    kick(s);
    return err;
}

static int inet_getname(struct sock *sk, void *addr, int *len, bool peer)
{
    struct inet_sock *s = isk(sk);
    ip_addr_t ip = *IP4_ADDR_ANY;
    u16_t port = 0;
    sleeplock_acquire(&s->lock);
    settle(s);
    err_t e = ERR_OK;
    if (peer && !s->connected)
        e = ERR_CONN;
    else if (s->conn->pcb.ip)
        e = netconn_getaddr(s->conn, &ip, &port, !peer);
    sleeplock_release(&s->lock);
    if (e != ERR_OK)
        return -ENOTCONN;
    return addr_to(addr, len, &ip, port);
}

// ---- options -------------------------------------------------------------------

// An int option's value; IPPROTO_IP's options also take a single byte (Linux).
static int opt_value(const void *val, int len, bool byte_ok, int *v)
{
    if (byte_ok && len >= 1 && len < (int)sizeof(int)) {
        *v = *(const unsigned char *)val;
        return 0;
    }
    return sock_opt_get(val, len, v);
}

// The option's field and its valid range, or NULL if the socket has no such
// option (ENOPROTOOPT).
static int *option_field(struct inet_sock *s, int level, int name, int *lo, int *hi)
{
    *lo = INT32_MIN;
    *hi = INT32_MAX;
    if (level == SOL_SOCKET) {
        switch (name) {
        case SO_REUSEADDR: return &s->opt.reuseaddr;
        case SO_KEEPALIVE: return &s->opt.keepalive;
        case SO_SNDBUF: return &s->opt.sndbuf;
        case SO_RCVBUF: return &s->opt.rcvbuf;
        }
    } else if (level == IPPROTO_IP) {
        switch (name) {
        case IP_TTL: *lo = -1, *hi = 255; return &s->opt.ttl; // -1: the default
        case IP_TOS: return &s->opt.tos;
        }
    } else if (level == IPPROTO_TCP && is_tcp(s)) {
        switch (name) {
        case TCP_NODELAY: return &s->opt.nodelay;
        case TCP_KEEPIDLE: *lo = 1, *hi = 32767; return &s->opt.keep_idle;
        case TCP_KEEPINTVL: *lo = 1, *hi = 32767; return &s->opt.keep_intvl;
        case TCP_KEEPCNT: *lo = 1, *hi = 127; return &s->opt.keep_cnt;
        }
    }
    return NULL;
}

static int inet_setsockopt(struct sock *sk, int level, int name, const void *val, int len)
{
    struct inet_sock *s = isk(sk);
    int v, lo, hi, err;
    int *field = option_field(s, level, name, &lo, &hi);
    if (!field)
        return -ENOPROTOOPT;
    if ((err = opt_value(val, len, level == IPPROTO_IP, &v)))
        return err;
    if (v < lo || v > hi || (level == IPPROTO_IP && name == IP_TTL && v == 0))
        return -EINVAL;
    if (level == SOL_SOCKET && (name == SO_SNDBUF || name == SO_RCVBUF))
        // Linux doubles the value (room for its bookkeeping) within limits;
        // lwIP's buffers stay their configured size.
        v = v < 1024 ? 2048 : v > (1 << 24) ? (1 << 25) : 2 * v;
    else if (level == IPPROTO_IP && name == IP_TTL && v == -1)
        v = IP_DEFAULT_TTL;
    else if (level == IPPROTO_IP && name == IP_TOS)
        v &= is_tcp(s) ? 0xfc : 0xff; // TCP keeps the ECN bits its own
    else if ((level == SOL_SOCKET && name != SO_SNDBUF && name != SO_RCVBUF) ||
             (level == IPPROTO_TCP && name == TCP_NODELAY))
        v = v != 0;
    sleeplock_acquire(&s->lock);
    *field = v;
    apply_options(s);
    sleeplock_release(&s->lock);
    return 0;
}

// SO_ERROR: a failed connect's error, or a pending one; reading clears it.
static int so_error(struct inet_sock *s)
{
    settle(s);
    int v = s->rx_err;
    s->rx_err = 0;
    if (!v && s->conn->pcb.ip)
        v = lwip_errno(netconn_err(s->conn));
    return v;
}

static int inet_getsockopt(struct sock *sk, int level, int name, void *val, int *len)
{
    struct inet_sock *s = isk(sk);
    int v, lo, hi;
    sleeplock_acquire(&s->lock);
    int *field = option_field(s, level, name, &lo, &hi);
    if (field) {
        v = *field;
    } else if (level == SOL_SOCKET) {
        switch (name) {
        case SO_TYPE: v = s->sk.type; break;
        case SO_DOMAIN: v = AF_INET; break;
        case SO_PROTOCOL: v = s->sk.protocol; break;
        case SO_ACCEPTCONN: v = s->listening; break;
        case SO_ERROR: v = -so_error(s); break;
        default: sleeplock_release(&s->lock); return -ENOPROTOOPT;
        }
    } else {
        sleeplock_release(&s->lock);
        return -ENOPROTOOPT;
    }
    sleeplock_release(&s->lock);
    // IPPROTO_IP's small values fit one byte when the caller gives less than
    // an int's room (Linux).
    if (level == IPPROTO_IP && *len > 0 && *len < (int)sizeof(int)) {
        *len = 1;
        *(unsigned char *)val = (unsigned char)v;
        return 0;
    }
    return sock_opt_int(val, len, v);
}

static unsigned stream_poll(struct inet_sock *s)
{
    unsigned m = 0;
    if (s->listening) {
        if (accept_fill(s) || s->pending)
            m |= POLLIN | POLLRDNORM;
        return m;
    }
    settle(s);
    if (s->connecting)
        return 0;
    if (s->rx_err && !s->connected)
        return POLLERR | POLLHUP | POLLIN | POLLOUT;
    if (!s->connected)
        return POLLOUT | POLLHUP; // Linux: a fresh TCP socket
    stream_fill(s);
    if (s->rx || s->rd_eof || s->rd_shut)
        m |= POLLIN | POLLRDNORM;
    if (s->rd_eof || s->rd_shut)
        m |= POLLRDHUP;
    if (s->rx_err)
        m |= POLLERR;
    if (s->reset || s->wr_shut) {
        m |= POLLOUT | POLLWRNORM;
        if (s->reset && (s->rd_eof || s->rd_shut))
            m |= POLLHUP;
        return m;
    }
    LOCK_TCPIP_CORE();
    struct tcp_pcb *pcb = s->conn->pcb.tcp;
    bool room = pcb && tcp_sndbuf(pcb) > TCP_SNDLOWAT && tcp_sndqueuelen(pcb) < TCP_SNDQUEUELOWAT;
    if (!pcb)
        m |= POLLOUT | POLLWRNORM; // gone: a send reports why
    UNLOCK_TCPIP_CORE();
    if (room)
        m |= POLLOUT | POLLWRNORM;
    return m;
}

static unsigned inet_poll(struct sock *sk, struct poller *pl)
{
    struct inet_sock *s = isk(sk);
    poll_register(pl, &s->poll);
    fence(); // registered before looking: see pollhead_wake
    sleeplock_acquire(&s->lock);
    unsigned m;
    if (is_tcp(s)) {
        m = stream_poll(s);
    } else {
        dgram_fill(s);
        m = POLLOUT | POLLWRNORM | (s->dg || s->rd_shut ? POLLIN | POLLRDNORM : 0);
    }
    sleeplock_release(&s->lock);
    return m;
}

static int inet_nread(struct sock *sk)
{
    struct inet_sock *s = isk(sk);
    int n = 0;
    sleeplock_acquire(&s->lock);
    if (is_tcp(s)) {
        if (s->listening) {
            n = 0;
        } else {
            SYS_ARCH_DECL_PROTECT(lev);
            SYS_ARCH_PROTECT(lev);
            n = s->conn->recv_avail;
            SYS_ARCH_UNPROTECT(lev);
            if (s->rx)
                n += s->rx->tot_len - s->rx_off;
        }
    } else {
        dgram_fill(s); // Linux: the size of the next datagram
        n = s->dg ? netbuf_len(s->dg) : 0;
    }
    sleeplock_release(&s->lock);
    return n;
}

// A closed socket's connection lives on in lwIP until its FIN is acknowledged;
// data arriving for it then resets the connection, as Linux does for an
// orphaned socket (lwIP would take it in silently, and the peer's sends would
// never see EPIPE).
static err_t orphan_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    (void)arg;
    if (p) {
        pbuf_free(p);
        tcp_abort(pcb);
        return ERR_ABRT;
    }
    return err == ERR_OK ? tcp_close(pcb) : ERR_OK;
}

// Close the TCP connection ourselves (FIN, or RST if data was left unread),
// detaching its PCB from the netconn, which is then deleted without one.
static void tcp_orphan(struct inet_sock *s)
{
    LOCK_TCPIP_CORE();
    struct tcp_pcb *pcb = s->conn->pcb.tcp;
    if (pcb && s->connected && s->conn->state == NETCONN_NONE &&
        (pcb->state == ESTABLISHED || pcb->state == CLOSE_WAIT)) {
        tcp_arg(pcb, NULL);
        tcp_sent(pcb, NULL);
        tcp_poll(pcb, NULL, 0);
        tcp_err(pcb, NULL);
        tcp_recv(pcb, orphan_recv);
        // Data still queued for the reader means the close resets, as does
        // SO_LINGER with a time of 0 (Linux's tcp_close); a longer time has
        // made the close wait (linger_wait).
        bool reset = s->rx || s->conn->recv_avail > 0 ||
                     (READ_ONCE(s->sk.linger) && READ_ONCE(s->sk.linger_s) == 0);
        if (reset) {
            tcp_abort(pcb);
            s->conn->pcb.tcp = NULL;
        } else if (tcp_close(pcb) == ERR_OK) {
            s->conn->pcb.tcp = NULL;
        } else {
            // Out of memory for the FIN: let the netconn close it (it retries).
            tcp_recv(pcb, NULL);
            tcp_arg(pcb, s->conn);
        }
    }
    UNLOCK_TCPIP_CORE();
}

// SO_LINGER with a time: the close waits until the data sent has been
// acknowledged, for at most that time or until a signal, as Linux's does
// (which also waits for its FIN's). The connection goes on either way. A
// thread that is leaving (its fd table gone) or a kernel thread does not
// wait: at exit Linux lingers in the background too.
static void linger_wait(struct inet_sock *s)
{
    int secs = READ_ONCE(s->sk.linger_s);
    if (!READ_ONCE(s->sk.linger) || secs <= 0 || !s->connected || !thread_current()->fdt)
        return;
    uint64_t deadline = nsec_now() + (uint64_t)secs * 1000000000ull;
    for (;;) {
        unsigned gen = load_acquire(&s->gen);
        LOCK_TCPIP_CORE();
        struct tcp_pcb *pcb = s->conn->pcb.tcp;
        bool pending = pcb && (pcb->state == ESTABLISHED || pcb->state == CLOSE_WAIT) &&
                       (pcb->unsent || pcb->unacked);
        UNLOCK_TCPIP_CORE();
        if (!pending || wait_event_after(s, gen, deadline))
            return;
    }
}

static void inet_release(struct sock *sk)
{
    struct inet_sock *s = isk(sk);
    if (is_tcp(s))
        linger_wait(s);
    map_remove(s);
    if (is_tcp(s))
        tcp_orphan(s);
    if (s->rx)
        pbuf_free(s->rx);
    if (s->dg)
        netbuf_delete(s->dg);
    if (s->pending)
        netconn_delete(s->pending);
    netconn_delete(s->conn);
    kfree(s);
}

static const struct sock_ops inet_ops = {
    .bind = inet_bind,
    .connect = inet_connect,
    .listen = inet_listen,
    .accept = inet_accept,
    .sendmsg = inet_sendmsg,
    .recvmsg = inet_recvmsg,
    .shutdown = inet_shutdown,
    .getname = inet_getname,
    .setsockopt = inet_setsockopt,
    .getsockopt = inet_getsockopt,
    .poll = inet_poll,
    .nread = inet_nread,
    .release = inet_release,
};
