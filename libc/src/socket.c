// Socket system-call wrappers, and dotted-quad addresses.
#include <arpa/inet.h>
#include <errno.h>
#include <sys/socket.h>
#include "libc.h"

int socket(int domain, int type, int protocol) { return sys(__NR_socket, domain, type, protocol); }
int socketpair(int domain, int type, int protocol, int sv[2])
{
    return sys(__NR_socketpair, domain, type, protocol, sv);
}
int bind(int fd, const struct sockaddr *addr, socklen_t len) { return sys(__NR_bind, fd, addr, len); }
int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    return sys(__NR_connect, fd, addr, len);
}
int listen(int fd, int backlog) { return sys(__NR_listen, fd, backlog); }
int accept(int fd, struct sockaddr *addr, socklen_t *len) { return sys(__NR_accept, fd, addr, len); }
int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    return sys(__NR_accept4, fd, addr, len, flags);
}
int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
    return sys(__NR_getsockname, fd, addr, len);
}
int getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
    return sys(__NR_getpeername, fd, addr, len);
}
ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *addr,
               socklen_t len)
{
    return sys(__NR_sendto, fd, buf, n, flags, addr, len);
}
ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr, socklen_t *len)
{
    return sys(__NR_recvfrom, fd, buf, n, flags, addr, len);
}
ssize_t send(int fd, const void *buf, size_t n, int flags) { return sendto(fd, buf, n, flags, 0, 0); }
ssize_t recv(int fd, void *buf, size_t n, int flags) { return recvfrom(fd, buf, n, flags, 0, 0); }
ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) { return sys(__NR_sendmsg, fd, msg, flags); }
ssize_t recvmsg(int fd, struct msghdr *msg, int flags) { return sys(__NR_recvmsg, fd, msg, flags); }
int shutdown(int fd, int how) { return sys(__NR_shutdown, fd, how); }
int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    return sys(__NR_setsockopt, fd, level, name, val, len);
}
int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
    return sys(__NR_getsockopt, fd, level, name, val, len);
}

// a.b.c.d, each part 0..255 in decimal: 1, or 0 if s is not one.
int inet_aton(const char *s, struct in_addr *a)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        if (*s < '0' || *s > '9')
            return 0;
        unsigned part = 0;
        while (*s >= '0' && *s <= '9') {
            part = part * 10 + (unsigned)(*s++ - '0');
            if (part > 255)
                return 0;
        }
        if (*s != (i < 3 ? '.' : '\0'))
            return 0;
        s += i < 3;
        v = v << 8 | part;
    }
    a->s_addr = htonl(v);
    return 1;
}

in_addr_t inet_addr(const char *s)
{
    struct in_addr a;
    return inet_aton(s, &a) ? a.s_addr : INADDR_NONE;
}
