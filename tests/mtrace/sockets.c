// Guest program for mtrace on our kernel: sockets. Two processes each
// sending on a socket of their own commute. AF_UNIX sockets are ours
// (kernel/net/unix.c): a send into one's own stream or datagram pair, or a
// receive from it, shares no cache line with the other process's. AF_INET
// sockets go through lwIP, whose protocol code runs under one core lock
// (docs/net.md "Where it serialises"): two sends on two TCP connections, or
// two UDP sendtos from two sockets, share that lock's line -- the control
// pairs here, and the measure of what a scalable stack would remove.
// Harness: pairs.h; host side: tools/mtrace/validate --kernel ours --program
// /tests/mtrace/sockets.
#include "pairs.h"

#include <netinet/in.h>
#include <sys/socket.h>

// Per side, on lines of its own: the kernel writes some of it.
static struct side_state {
    int sv[2];                            // a pair, or client and accepted
    int listener;
    char buf[8];
} __attribute__((aligned(64))) side[2];

static void own_data(int s)
{
    memset(&side[s], 0, sizeof side[s]);
}

static void make_pair(int s, int type)
{
    if (socketpair(AF_UNIX, type, 0, side[s].sv) != 0)
        die("socketpair");
    // A first send and receive outside the window: whatever a socket sets
    // up at its first use is not what a send costs.
    if (send(side[s].sv[0], "x", 1, 0) != 1 || recv(side[s].sv[1], side[s].buf, 1, 0) != 1)
        die("unix warm-up");
}
static void make_stream_pair(int s) { make_pair(s, SOCK_STREAM); }
static void make_dgram_pair(int s) { make_pair(s, SOCK_DGRAM); }

static void close_all(int s)
{
    close(side[s].sv[0]);
    close(side[s].sv[1]);
    if (side[s].listener > 0)
        close(side[s].listener);
}

static void call_send(int s)
{
    if (send(side[s].sv[0], "x", 1, 0) != 1)
        die("send");
}

static void make_stream_pair_with_data(int s)
{
    make_stream_pair(s);
    if (send(side[s].sv[0], "x", 1, 0) != 1)
        die("send");
}
static void call_recv(int s)
{
    if (recv(side[s].sv[1], side[s].buf, 1, 0) != 1)
        die("recv");
}

static struct sockaddr_in loopback(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

// A TCP connection over 127.0.0.1 of the side's own: sv[0] the client,
// sv[1] the accepted end.
static void make_tcp(int s)
{
    struct sockaddr_in a = loopback();
    socklen_t len = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr *)&a, &len) != 0)
        die("tcp listener");
    side[s].listener = l;
    if ((side[s].sv[0] = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
        connect(side[s].sv[0], (struct sockaddr *)&a, sizeof a) != 0 ||
        (side[s].sv[1] = accept(l, NULL, NULL)) < 0)
        die("tcp connect");
    if (send(side[s].sv[0], "x", 1, 0) != 1 || recv(side[s].sv[1], side[s].buf, 1, 0) != 1)
        die("tcp warm-up");
}

// Two UDP sockets of the side's own, sv[0] connected to sv[1].
static void make_udp(int s)
{
    struct sockaddr_in a = loopback();
    socklen_t len = sizeof a;
    if ((side[s].sv[1] = socket(AF_INET, SOCK_DGRAM, 0)) < 0 ||
        bind(side[s].sv[1], (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(side[s].sv[1], (struct sockaddr *)&a, &len) != 0 ||
        (side[s].sv[0] = socket(AF_INET, SOCK_DGRAM, 0)) < 0 ||
        connect(side[s].sv[0], (struct sockaddr *)&a, sizeof a) != 0)
        die("udp sockets");
    if (send(side[s].sv[0], "x", 1, 0) != 1 || recv(side[s].sv[1], side[s].buf, 1, 0) != 1)
        die("udp warm-up");
}

static const struct pair pairs[] = {
    { "send-own-unix-stream-2proc", "send", "send", 0, "private",
      NULL, make_stream_pair, call_send, close_all },
    { "send-own-unix-dgram-2proc", "send", "send", 0, "private",
      NULL, make_dgram_pair, call_send, close_all },
    { "recv-own-unix-stream-2proc", "recv", "recv", 0, "private",
      NULL, make_stream_pair_with_data, call_recv, close_all },
    { "send-own-tcp-2proc", "send", "send", 0, "shared",
      NULL, make_tcp, call_send, close_all },
    { "send-own-udp-2proc", "send", "send", 0, "shared",
      NULL, make_udp, call_send, close_all },
};

int main(void)
{
    pairs_map();
    pairs_run(pairs, sizeof pairs / sizeof pairs[0]);
    return 0;
}
