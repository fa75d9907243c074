// The generic socket layer (socket.c): a socket is a file whose ops are
// socket.c's, and whose private state starts with a struct sock; each address
// family supplies a struct sock_ops and a constructor. The system calls
// (kernel/syscall/sys_socket.c) copy addresses and vectors in and out of user
// memory; families see kernel copies of addresses, and user data only through
// a struct sk_iov.
#pragma once
#include "kernel.h"
#include "uapi/abi.h"
#include "uapi/socket.h"

struct file;
struct poller;
struct sock;

#define SOCK_ADDR_MAX ((int)sizeof(struct sockaddr_storage)) // 128, as Linux

// A user data vector being consumed (send) or filled (receive): segments
// already checked to lie in user space, their sum at most SSIZE_MAX.
struct sk_iov {
    const struct iovec *iov;
    int cnt;
    int seg;       // current segment
    size_t off;    // bytes of iov[seg] done
    size_t left;   // bytes left in all
};
void skiov_init(struct sk_iov *it, const struct iovec *iov, int cnt);
// Copy n bytes (at most it->left) out of / into the vector and advance: bytes
// moved, which is less than n only at a fault (then -EFAULT if none moved).
long skiov_from(struct sk_iov *it, void *dst, size_t n);
long skiov_to(struct sk_iov *it, const void *src, size_t n);

// A message for sendmsg/recvmsg. addr is a kernel buffer of SOCK_ADDR_MAX
// bytes: send: the destination (addrlen 0: none); receive: the family fills in
// the source and sets addrlen (0: none), the caller truncates it.
struct sk_msg {
    struct sk_iov data;
    struct sockaddr_storage addr;
    int addrlen;
    int flags;      // MSG_* in; recv: MSG_TRUNC etc. out (msg_flags)
    bool nonblock;  // O_NONBLOCK on the file or MSG_DONTWAIT
    // sendmsg: the control messages (a kernel copy; ctllen 0: none).
    const void *ctl;
    size_t ctllen;
    // recvmsg: the caller's control buffer, and what the family put there
    // (sock_put_cmsg); MSG_CMSG_CLOEXEC asks for close-on-exec fds.
    uint64_t uctl;
    size_t ctlroom, ctlused;
};

// Control messages, Linux x86-64's layout: a 16-byte header, data padded to 8.
struct kcmsghdr {
    uint64_t len; // header + data
    int32_t level, type;
};
#define CMSG_ALIGN8(n) (((n) + 7) & ~(size_t)7)
// Append one control message (n bytes of data) to m's control buffer: 0, or
// MSG_CTRUNC set in m->flags and as much data as fits (whole ints: rights),
// with *fit the data bytes written; -EFAULT.
int sock_put_cmsg(struct sk_msg *m, int level, int type, const void *data, size_t n, size_t *fit);

// Every operation returns 0 (or bytes) or -errno. NULL entries give Linux's
// answer for a family without the operation (EOPNOTSUPP).
struct sock_ops {
    int (*bind)(struct sock *sk, const void *addr, int len);
    int (*connect)(struct sock *sk, const void *addr, int len, bool nonblock);
    int (*listen)(struct sock *sk, int backlog);
    // A new connected socket (its own sock, to be wrapped in a file).
    int (*accept)(struct sock *sk, struct sock **out, bool nonblock);
    long (*sendmsg)(struct sock *sk, struct sk_msg *m);
    long (*recvmsg)(struct sock *sk, struct sk_msg *m);
    int (*shutdown)(struct sock *sk, int how);
    // The local (peer false) or remote address into addr; its length in *len.
    int (*getname)(struct sock *sk, void *addr, int *len, bool peer);
    // Options: val is a kernel copy (len bytes); getsockopt's val has room for
    // *len bytes and *len becomes the length written.
    int (*setsockopt)(struct sock *sk, int level, int name, const void *val, int len);
    int (*getsockopt)(struct sock *sk, int level, int name, void *val, int *len);
    unsigned (*poll)(struct sock *sk, struct poller *pl);
    int (*nread)(struct sock *sk); // FIONREAD: bytes readable now
    void (*release)(struct sock *sk); // the last file reference went
};

// Each family's state begins with this.
struct sock {
    const struct sock_ops *ops; // [i]
    int family, type, protocol; // [i]
    struct file *file;          // [i] its file (no reference: the file owns the sock)
    // Options every family has (sock_setsockopt), [a]: setsockopt writes them,
    // the calls that wait and close read them. accept copies them.
    uint64_t rcvtimeo, sndtimeo; // SO_RCVTIMEO, SO_SNDTIMEO in ns; 0: wait for ever
    int linger_s;               // SO_LINGER's time, seconds
    bool linger, broadcast;     // SO_LINGER on; SO_BROADCAST
};

// The families: a new socket of the given type (SOCK_STREAM, SOCK_DGRAM) and
// protocol, or -errno (EPROTONOSUPPORT, ESOCKTNOSUPPORT, ENOMEM...).
int inet_create(int type, int protocol, struct sock **out);
int unix_create(int type, int protocol, struct sock **out);
int unix_pair(int type, int protocol, struct sock **a, struct sock **b);

// A file for sk (flags: O_NONBLOCK); sk is released with it. NULL if out of
// memory (then sk is released).
struct file *sock_file(struct sock *sk, int flags);
// The sock behind f, or NULL if f is not a socket.
struct sock *sock_of(struct file *f);
// Whether f's calls must not block: O_NONBLOCK on f (fcntl may change it).
bool sock_nonblock(struct sock *sk);
// A send on a stream whose peer is gone: SIGPIPE unless MSG_NOSIGNAL, and EPIPE.
long sock_epipe(int flags);
// The SOL_SOCKET options every family has: SO_RCVTIMEO, SO_SNDTIMEO,
// SO_LINGER, SO_BROADCAST. -ENOPROTOOPT for the others (the family's).
int sock_setsockopt(struct sock *sk, int level, int name, const void *val, int len);
int sock_getsockopt(struct sock *sk, int level, int name, void *val, int *len);
void sock_inherit(struct sock *child, const struct sock *listener); // accept
// When a wait that starts now must give up (nsec_now() clock; 0: never): the
// receive timeout (accept, recv) or the send timeout (send, connect). On it,
// the call returns what it did, or -EAGAIN (connect: -EINPROGRESS).
uint64_t sock_deadline(struct sock *sk, bool send);
// getsockopt of an int option: min(*len, 4) bytes of v.
int sock_opt_int(void *val, int *len, int v);
// An int option value for setsockopt: EINVAL if shorter than an int.
int sock_opt_get(const void *val, int len, int *v);
