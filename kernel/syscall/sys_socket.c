// The socket system calls: socket, socketpair, bind, listen, connect, accept,
// accept4, sendto, recvfrom, sendmsg, recvmsg, shutdown, getsockname,
// getpeername, setsockopt, getsockopt. Each checks and copies its arguments
// (Linux's order and errnos: EBADF, then ENOTSOCK, then EINVAL/EFAULT for
// lengths and addresses) and calls the socket's family (kernel/net/socket.h).
// They touch only the calling thread's fd table and the socket named.
#include "file/fdtable.h"
#include "file/file.h"
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "net/socket.h"
#include "proc/proc.h"
#include "syscall/syscall.h"
#include "uapi/errno.h"
#include "uapi/ext.h"

#define SOCK_MAX_TYPE 10   // Linux's SOCK_MAX - 1: larger types are EINVAL
#define OPT_MAX 256        // the longest option value we take in
#define MSG_IOV_MAX 1024   // UIO_MAXIOV
#define CTL_MAX 20480      // control bytes sendmsg takes (Linux's optmem_max)

// The fd's socket into a struct fd_ref r and struct sock *sk, or return
// EBADF / ENOTSOCK.
#define GET_SOCK(r, sk, fd)                                                              \
    struct fd_ref r = fd_get(fdt_current(), (fd));                                       \
    if (!r.f)                                                                            \
        return -EBADF;                                                                   \
    struct sock *sk = sock_of(r.f);                                                      \
    if (!sk) {                                                                           \
        fd_put(r);                                                                       \
        return -ENOTSOCK;                                                                \
    }

static int new_sock(int domain, int type, int protocol, struct sock **out)
{
    switch (domain) {
    case AF_INET: return inet_create(type, protocol, out);
    case AF_UNIX: return unix_create(type, protocol, out);
    default: return -EAFNOSUPPORT;
    }
}

// SOCK_NONBLOCK, SOCK_CLOEXEC and O_ANYFD in type; anything else is EINVAL.
static int check_type(int type)
{
    if ((type & ~SOCK_TYPE_MASK) & ~(SOCK_NONBLOCK | SOCK_CLOEXEC | O_ANYFD))
        return -EINVAL;
    if ((type & SOCK_TYPE_MASK) > SOCK_MAX_TYPE)
        return -EINVAL;
    return 0;
}

// A file for sk in a new fd, per flags (SOCK_NONBLOCK, SOCK_CLOEXEC, O_ANYFD).
static long install(struct sock *sk, int flags)
{
    struct file *f = sock_file(sk, flags & SOCK_NONBLOCK);
    if (!f)
        return -ENOMEM;
    int fd = fd_install(fdt_current(), f, (flags & SOCK_CLOEXEC) ? FDI_CLOEXEC : 0,
                        flags & O_ANYFD, 0, proc_nofile(proc_current()));
    if (fd < 0)
        file_put(f);
    return fd;
}

long sys_socket(int domain, int type, int protocol)
{
    if (domain < 0 || domain >= AF_MAX)
        return -EAFNOSUPPORT;
    int err = check_type(type);
    if (err)
        return err;
    struct sock *sk;
    if ((err = new_sock(domain, type & SOCK_TYPE_MASK, protocol, &sk)))
        return err;
    return install(sk, type);
}

long sys_socketpair(int domain, int type, int protocol, uint64_t usv)
{
    if (domain < 0 || domain >= AF_MAX)
        return -EAFNOSUPPORT;
    int err = check_type(type);
    if (err)
        return err;
    if (domain == AF_INET) {
        struct sock *sk;
        if ((err = inet_create(type & SOCK_TYPE_MASK, protocol, &sk)))
            return err;
        sk->ops->release(sk);
        return -EOPNOTSUPP; // a valid inet socket, but no pairs
    }
    if (domain != AF_UNIX)
        return -EAFNOSUPPORT;
    struct sock *a, *b;
    if ((err = unix_pair(type & SOCK_TYPE_MASK, protocol, &a, &b)))
        return err;
    int fds[2];
    fds[0] = (int)install(a, type);
    if (fds[0] < 0) {
        b->ops->release(b);
        return fds[0];
    }
    fds[1] = (int)install(b, type);
    if (fds[1] < 0) {
        fd_close(fdt_current(), fds[0]);
        return fds[1];
    }
    if (copy_to_user(usv, fds, sizeof fds)) {
        fd_close(fdt_current(), fds[0]);
        fd_close(fdt_current(), fds[1]);
        return -EFAULT;
    }
    return 0;
}

// An address from user memory (Linux's move_addr_to_kernel).
static int addr_in(struct sockaddr_storage *a, uint64_t uaddr, int len)
{
    if (len < 0 || len > SOCK_ADDR_MAX)
        return -EINVAL;
    memset(a, 0, sizeof *a);
    if (len > 0 && copy_from_user(a, uaddr, (size_t)len))
        return -EFAULT;
    return 0;
}

// An address to user memory: up to *ulen bytes of it, and its full length
// into *ulen (Linux's move_addr_to_user). ulen 0: nothing.
static int addr_out(const void *a, int len, uint64_t uaddr, uint64_t ulen)
{
    if (!ulen)
        return 0;
    int room;
    if (copy_from_user(&room, ulen, sizeof room))
        return -EFAULT;
    if (room < 0)
        return -EINVAL;
    if (len > 0 && room > 0 && copy_to_user(uaddr, a, (size_t)MIN(room, len)))
        return -EFAULT;
    return copy_to_user(ulen, &len, sizeof len) ? -EFAULT : 0;
}

long sys_bind(int fd, uint64_t uaddr, int len)
{
    GET_SOCK(r, sk, fd);
    struct sockaddr_storage a;
    long err = addr_in(&a, uaddr, len);
    if (!err)
        err = sk->ops->bind ? sk->ops->bind(sk, &a, len) : -EOPNOTSUPP;
    fd_put(r);
    return err;
}

long sys_connect(int fd, uint64_t uaddr, int len)
{
    GET_SOCK(r, sk, fd);
    struct sockaddr_storage a;
    long err = addr_in(&a, uaddr, len);
    if (!err)
        err = sk->ops->connect ? sk->ops->connect(sk, &a, len, sock_nonblock(sk)) : -EOPNOTSUPP;
    fd_put(r);
    return err;
}

long sys_listen(int fd, int backlog)
{
    GET_SOCK(r, sk, fd);
    long err = sk->ops->listen ? sk->ops->listen(sk, backlog) : -EOPNOTSUPP;
    fd_put(r);
    return err;
}

long sys_accept4(int fd, uint64_t uaddr, uint64_t ulen, int flags)
{
    if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC | O_ANYFD))
        return -EINVAL;
    GET_SOCK(r, sk, fd);
    struct sock *nsk = NULL;
    long ret = sk->ops->accept ? sk->ops->accept(sk, &nsk, sock_nonblock(sk)) : -EOPNOTSUPP;
    if (!ret)
        sock_inherit(nsk, sk);
    fd_put(r);
    if (ret)
        return ret;
    struct sockaddr_storage a;
    int alen = 0;
    if (uaddr && nsk->ops->getname(nsk, &a, &alen, true))
        alen = 0;
    long fdn = install(nsk, flags);
    if (fdn < 0)
        return fdn;
    if (uaddr && (ret = addr_out(&a, alen, uaddr, ulen))) {
        fd_close(fdt_current(), (int)fdn); // Linux: the connection is lost
        return ret;
    }
    return fdn;
}

long sys_accept(int fd, uint64_t uaddr, uint64_t ulen) { return sys_accept4(fd, uaddr, ulen, 0); }

static long name(int fd, uint64_t uaddr, uint64_t ulen, bool peer)
{
    GET_SOCK(r, sk, fd);
    struct sockaddr_storage a;
    int alen = 0;
    int room;
    long err = copy_from_user(&room, ulen, sizeof room) ? -EFAULT : 0;
    if (!err && room < 0)
        err = -EINVAL;
    if (!err)
        err = sk->ops->getname(sk, &a, &alen, peer);
    if (!err)
        err = addr_out(&a, alen, uaddr, ulen);
    fd_put(r);
    return err;
}

long sys_getsockname(int fd, uint64_t uaddr, uint64_t ulen) { return name(fd, uaddr, ulen, false); }
long sys_getpeername(int fd, uint64_t uaddr, uint64_t ulen) { return name(fd, uaddr, ulen, true); }

// One send or receive through sk with the message m (data already set up).
static long xfer(struct sock *sk, struct sk_msg *m, bool send)
{
    m->nonblock = sock_nonblock(sk) || (m->flags & MSG_DONTWAIT);
    if (send)
        return sk->ops->sendmsg ? sk->ops->sendmsg(sk, m) : -EOPNOTSUPP;
    return sk->ops->recvmsg ? sk->ops->recvmsg(sk, m) : -EOPNOTSUPP;
}

// The checks readv/writev make of a vector (Linux's order: a length beyond
// SSIZE_MAX is EINVAL, then a segment outside user space EFAULT).
static int check_iov(const struct iovec *v, int cnt)
{
    for (int i = 0; i < cnt; i++)
        if ((int64_t)v[i].iov_len < 0)
            return -EINVAL;
    uint64_t total = 0;
    for (int i = 0; i < cnt; i++) {
        if (!user_range_valid(v[i].iov_base, v[i].iov_len))
            return -EFAULT;
        total += v[i].iov_len;
        if ((int64_t)total < 0)
            return -EINVAL;
    }
    return 0;
}

long sys_sendto(int fd, uint64_t ubuf, size_t len, int flags, uint64_t uaddr, int alen)
{
    GET_SOCK(r, sk, fd);
    struct iovec v = {.iov_base = ubuf, .iov_len = MIN(len, (size_t)INT32_MAX)};
    struct sk_msg m = {.flags = flags};
    long ret = check_iov(&v, 1);
    if (!ret && uaddr && (ret = addr_in(&m.addr, uaddr, alen)) == 0)
        m.addrlen = alen;
    if (!ret) {
        skiov_init(&m.data, &v, 1);
        ret = xfer(sk, &m, true);
    }
    fd_put(r);
    return ret;
}

long sys_recvfrom(int fd, uint64_t ubuf, size_t len, int flags, uint64_t uaddr, uint64_t ualen)
{
    GET_SOCK(r, sk, fd);
    struct iovec v = {.iov_base = ubuf, .iov_len = MIN(len, (size_t)INT32_MAX)};
    struct sk_msg m = {.flags = flags};
    long ret = check_iov(&v, 1);
    if (!ret) {
        skiov_init(&m.data, &v, 1);
        ret = xfer(sk, &m, false);
    }
    if (ret >= 0 && uaddr) {
        long err = addr_out(&m.addr, m.addrlen, uaddr, ualen);
        if (err)
            ret = err;
    }
    fd_put(r);
    return ret;
}

// struct msghdr as Linux x86-64 lays it out.
struct umsghdr {
    uint64_t name;
    int32_t namelen;
    int32_t pad0;
    uint64_t iov;
    uint64_t iovlen;
    uint64_t control;
    uint64_t controllen;
    int32_t flags;
    int32_t pad1;
};

static long msg(int fd, uint64_t umsg, int flags, bool send)
{
    GET_SOCK(r, sk, fd);
    struct umsghdr h;
    struct sk_msg m = {.flags = flags};
    struct iovec *v = NULL;
    long ret = copy_from_user(&h, umsg, sizeof h) ? -EFAULT : 0;
    if (!ret && h.iovlen > MSG_IOV_MAX)
        ret = -EMSGSIZE;
    if (!ret && send && h.name && (ret = addr_in(&m.addr, h.name, h.namelen)) == 0)
        m.addrlen = h.namelen;
    if (!ret && h.iovlen && !(v = kmalloc(h.iovlen * sizeof *v)))
        ret = -ENOMEM;
    if (!ret && h.iovlen && copy_from_user(v, h.iov, h.iovlen * sizeof *v))
        ret = -EFAULT;
    if (!ret)
        ret = check_iov(v, (int)h.iovlen);
    void *ctl = NULL;
    if (!ret && send && h.controllen >= sizeof(struct kcmsghdr)) {
        if (h.controllen > CTL_MAX)
            ret = -ENOBUFS; // Linux: beyond optmem_max
        else if (!(ctl = kmalloc(h.controllen)))
            ret = -ENOMEM;
        else if (copy_from_user(ctl, h.control, h.controllen))
            ret = -EFAULT;
        m.ctl = ctl;
        m.ctllen = h.controllen;
    } else if (!ret && !send) {
        m.uctl = h.control;
        m.ctlroom = h.controllen;
    }
    if (!ret) {
        skiov_init(&m.data, v, (int)h.iovlen);
        ret = xfer(sk, &m, send);
    }
    if (ret >= 0 && !send) {
        // The source address (if asked for), the control data's length, the flags.
        // msg_namelen is unsigned to Linux: a huge one means room enough.
        int nl = h.name ? (int)MIN((uint32_t)m.addrlen, (uint32_t)h.namelen) : 0;
        int32_t namelen = m.addrlen;
        uint64_t used = m.ctlused;
        if ((nl > 0 && copy_to_user(h.name, &m.addr, (size_t)nl)) ||
            (h.name && copy_to_user(umsg + offsetof(struct umsghdr, namelen), &namelen, sizeof namelen)) ||
            copy_to_user(umsg + offsetof(struct umsghdr, controllen), &used, sizeof used) ||
            copy_to_user(umsg + offsetof(struct umsghdr, flags), &m.flags, sizeof m.flags))
            ret = -EFAULT;
    }
    kfree(ctl);
    kfree(v);
    fd_put(r);
    return ret;
}

long sys_sendmsg(int fd, uint64_t umsg, int flags) { return msg(fd, umsg, flags, true); }
long sys_recvmsg(int fd, uint64_t umsg, int flags) { return msg(fd, umsg, flags, false); }

long sys_shutdown(int fd, int how)
{
    GET_SOCK(r, sk, fd);
    long err = how < SHUT_RD || how > SHUT_RDWR ? -EINVAL
               : sk->ops->shutdown           ? sk->ops->shutdown(sk, how)
                                             : -EOPNOTSUPP;
    fd_put(r);
    return err;
}

long sys_setsockopt(int fd, int level, int optname, uint64_t uval, int len)
{
    GET_SOCK(r, sk, fd);
    char val[OPT_MAX];
    long err = len < 0 ? -EINVAL : 0;
    int n = MIN(len, OPT_MAX);
    if (!err && n > 0 && copy_from_user(val, uval, (size_t)n))
        err = -EFAULT;
    if (!err)
        err = sock_setsockopt(sk, level, optname, val, n);
    if (err == -ENOPROTOOPT)
        err = sk->ops->setsockopt(sk, level, optname, val, n);
    fd_put(r);
    return err;
}

long sys_getsockopt(int fd, int level, int optname, uint64_t uval, uint64_t ulen)
{
    GET_SOCK(r, sk, fd);
    char val[OPT_MAX];
    int len;
    long err = copy_from_user(&len, ulen, sizeof len) ? -EFAULT : 0;
    if (!err && len < 0)
        err = -EINVAL;
    if (!err) {
        len = MIN(len, OPT_MAX);
        err = sock_getsockopt(sk, level, optname, val, &len);
        if (err == -ENOPROTOOPT)
            err = sk->ops->getsockopt(sk, level, optname, val, &len);
    }
    if (!err && ((len > 0 && copy_to_user(uval, val, (size_t)len)) ||
                 copy_to_user(ulen, &len, sizeof len)))
        err = -EFAULT;
    fd_put(r);
    return err;
}
