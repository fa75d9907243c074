// Sockets as files (socket.h): the file kind every socket is, whatever its
// family. read, write and writev are recvmsg and sendmsg without an address or
// flags; fstat reports S_IFSOCK; ioctl answers FIONREAD and FIONBIO; poll asks
// the family. Nothing here is shared between sockets: each file's operations
// touch only that socket's state (and its family's), so calls on two sockets
// commute and share no cache line at this layer.
#include "net/socket.h"
#include "file/file.h"
#include "fs.h"
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "proc/proc.h"
#include "sync/atomic.h"
#include "uapi/errno.h"
#include "x86/smp.h"

void skiov_init(struct sk_iov *it, const struct iovec *iov, int cnt)
{
    it->iov = iov;
    it->cnt = cnt;
    it->seg = 0;
    it->off = 0;
    it->left = 0;
    for (int i = 0; i < cnt; i++)
        it->left += iov[i].iov_len;
}

// Move up to n bytes between kernel memory and the vector, segment by segment.
static long skiov_move(struct sk_iov *it, void *kbuf, size_t n, bool to_user)
{
    size_t done = 0;
    n = MIN(n, it->left);
    while (done < n) {
        while (it->off == it->iov[it->seg].iov_len) {
            it->seg++;
            it->off = 0;
        }
        size_t k = MIN(n - done, it->iov[it->seg].iov_len - it->off);
        uint64_t u = it->iov[it->seg].iov_base + it->off;
        size_t m = to_user ? copy_to_user_some(u, (char *)kbuf + done, k)
                           : copy_from_user_some((char *)kbuf + done, u, k);
        done += m;
        it->off += m;
        it->left -= m;
        if (m < k)
            return done ? (long)done : -EFAULT;
    }
    return (long)done;
}

long skiov_from(struct sk_iov *it, void *dst, size_t n) { return skiov_move(it, dst, n, false); }
long skiov_to(struct sk_iov *it, const void *src, size_t n) { return skiov_move(it, (void *)src, n, true); }

int sock_put_cmsg(struct sk_msg *m, int level, int type, const void *data, size_t n, size_t *fit)
{
    size_t room = m->ctlroom > m->ctlused ? m->ctlroom - m->ctlused : 0;
    struct kcmsghdr h = {.level = level, .type = type};
    *fit = 0;
    if (room < sizeof h) {
        m->flags |= MSG_CTRUNC;
        return 0;
    }
    size_t k = MIN(n, room - sizeof h) & ~(size_t)3;
    if (k < n)
        m->flags |= MSG_CTRUNC;
    h.len = sizeof h + k;
    uint64_t at = m->uctl + m->ctlused;
    if (copy_to_user(at, &h, sizeof h) || (k && copy_to_user(at + sizeof h, data, k)))
        return -EFAULT;
    m->ctlused += MIN(CMSG_ALIGN8(h.len), room);
    *fit = k;
    return 0;
}

long sock_epipe(int flags)
{
    if (!(flags & MSG_NOSIGNAL))
        signal_send_thread(thread_current(), SIGPIPE, NULL);
    return -EPIPE;
}

int sock_opt_int(void *val, int *len, int v)
{
    *len = MIN(*len, (int)sizeof v);
    memcpy(val, &v, (size_t)*len);
    return 0;
}

int sock_opt_get(const void *val, int len, int *v)
{
    if (len < (int)sizeof *v)
        return -EINVAL;
    memcpy(v, val, sizeof *v);
    return 0;
}

// ---- options every family has ----------------------------------------------------

// x86-64's struct timeval (SO_RCVTIMEO, SO_SNDTIMEO) and struct linger.
struct ktimeval { int64_t sec, usec; };
struct klinger { int32_t onoff, secs; };

#define NSEC_PER_SEC 1000000000ull
// Longer timeouts than this mean "for ever", as Linux's above its jiffies' range.
#define TIMEO_MAX_S (UINT64_MAX / NSEC_PER_SEC / 4)

static int set_timeout(uint64_t *timeo, const void *val, int len)
{
    struct ktimeval tv;
    if (len < (int)sizeof tv)
        return -EINVAL;
    memcpy(&tv, val, sizeof tv);
    if (tv.usec < 0 || tv.usec >= 1000000)
        return -EDOM;
    uint64_t ns;
    if (tv.sec < 0)
        ns = 1;                  // Linux: a negative time means "do not wait"
    else if ((uint64_t)tv.sec > TIMEO_MAX_S)
        ns = 0;
    else
        ns = (uint64_t)tv.sec * NSEC_PER_SEC + (uint64_t)tv.usec * 1000;
    WRITE_ONCE(*timeo, ns);
    return 0;
}

static int opt_bytes(void *val, int *len, const void *v, int size)
{
    *len = MIN(*len, size);
    memcpy(val, v, (size_t)*len);
    return 0;
}

int sock_setsockopt(struct sock *sk, int level, int name, const void *val, int len)
{
    if (level != SOL_SOCKET)
        return -ENOPROTOOPT;
    int v, err;
    switch (name) {
    case SO_RCVTIMEO:
        return set_timeout(&sk->rcvtimeo, val, len);
    case SO_SNDTIMEO:
        return set_timeout(&sk->sndtimeo, val, len);
    case SO_LINGER: {
        struct klinger l;
        if (len < (int)sizeof l)
            return -EINVAL;
        memcpy(&l, val, sizeof l);
        if (l.onoff)             // off keeps the time, as Linux
            WRITE_ONCE(sk->linger_s, l.secs < 0 ? 0 : l.secs);
        WRITE_ONCE(sk->linger, l.onoff != 0);
        return 0;
    }
    case SO_BROADCAST:
        if ((err = sock_opt_get(val, len, &v)))
            return err;
        WRITE_ONCE(sk->broadcast, v != 0);
        return 0;
    }
    return -ENOPROTOOPT;
}

int sock_getsockopt(struct sock *sk, int level, int name, void *val, int *len)
{
    if (level != SOL_SOCKET)
        return -ENOPROTOOPT;
    switch (name) {
    case SO_RCVTIMEO:
    case SO_SNDTIMEO: {
        uint64_t ns = READ_ONCE(*(name == SO_RCVTIMEO ? &sk->rcvtimeo : &sk->sndtimeo));
        struct ktimeval tv = {(int64_t)(ns / NSEC_PER_SEC), (int64_t)(ns % NSEC_PER_SEC / 1000)};
        return opt_bytes(val, len, &tv, sizeof tv);
    }
    case SO_LINGER: {
        struct klinger l = {READ_ONCE(sk->linger), READ_ONCE(sk->linger_s)};
        return opt_bytes(val, len, &l, sizeof l);
    }
    case SO_BROADCAST:
        return sock_opt_int(val, len, READ_ONCE(sk->broadcast));
    }
    return -ENOPROTOOPT;
}

void sock_inherit(struct sock *child, const struct sock *listener)
{
    child->rcvtimeo = READ_ONCE(listener->rcvtimeo);
    child->sndtimeo = READ_ONCE(listener->sndtimeo);
    child->linger_s = READ_ONCE(listener->linger_s);
    child->linger = READ_ONCE(listener->linger);
    child->broadcast = READ_ONCE(listener->broadcast);
}

uint64_t sock_deadline(struct sock *sk, bool send)
{
    uint64_t t = READ_ONCE(*(send ? &sk->sndtimeo : &sk->rcvtimeo));
    return t ? nsec_now() + t : 0;
}

static struct sock *sk_of(struct file *f) { return f->priv; }

bool sock_nonblock(struct sock *sk) { return READ_ONCE(sk->file->flags) & O_NONBLOCK; }

static long sock_xfer(struct file *f, const struct iovec *iov, int cnt, bool send)
{
    struct sock *sk = sk_of(f);
    struct sk_msg m = {.nonblock = sock_nonblock(sk)};
    skiov_init(&m.data, iov, cnt);
    if (send)
        return sk->ops->sendmsg ? sk->ops->sendmsg(sk, &m) : -EOPNOTSUPP;
    return sk->ops->recvmsg ? sk->ops->recvmsg(sk, &m) : -EOPNOTSUPP;
}

static long sock_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    (void)pos;
    struct iovec v = {.iov_base = ubuf, .iov_len = n};
    return sock_xfer(f, &v, 1, false);
}

static long sock_write(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    (void)pos;
    struct iovec v = {.iov_base = ubuf, .iov_len = n};
    return sock_xfer(f, &v, 1, true);
}

// writev is one sendmsg: one datagram, or one stream write.
static long sock_writev(struct file *f, const struct iovec *iov, int cnt, size_t total)
{
    (void)total;
    return sock_xfer(f, iov, cnt, true);
}

static long sock_ioctl(struct file *f, unsigned long req, uint64_t arg)
{
    struct sock *sk = sk_of(f);
    if (req == FIONREAD) {
        int n = sk->ops->nread ? sk->ops->nread(sk) : 0;
        return copy_to_user(arg, &n, sizeof n);
    }
    if (req == FIONBIO) {
        int on;
        if (copy_from_user(&on, arg, sizeof on))
            return -EFAULT;
        uint32_t old = READ_ONCE(f->flags), new;
        do
            new = on ? old | O_NONBLOCK : old & ~O_NONBLOCK;
        while (!cas(&f->flags, &old, new));
        return 0;
    }
    return -ENOTTY;
}

static int sock_stat(struct file *f, uint32_t mask, struct fs_stat *st)
{
    memset(st, 0, sizeof *st);
    st->mask = mask & STATX_BASIC_STATS;
    st->mode = S_IFSOCK | 0777;
    st->ino = (uintptr_t)f->priv >> 6; // unique while it lives
    st->nlink = 1;
    return 0;
}

static unsigned sock_poll(struct file *f, struct poller *pl)
{
    struct sock *sk = sk_of(f);
    return sk->ops->poll(sk, pl);
}

static void sock_release(struct file *f)
{
    struct sock *sk = sk_of(f);
    sk->ops->release(sk);
}

static const struct file_ops sock_file_ops = {
    .read = sock_read,
    .write = sock_write,
    .writev = sock_writev,
    .ioctl = sock_ioctl,
    .stat = sock_stat,
    .release = sock_release,
    .poll = sock_poll,
};

struct file *sock_file(struct sock *sk, int flags)
{
    struct file *f = file_alloc(&sock_file_ops, O_RDWR | (flags & O_NONBLOCK), NULL, sk);
    if (!f) {
        sk->ops->release(sk);
        return NULL;
    }
    sk->file = f;
    return f;
}

struct sock *sock_of(struct file *f) { return f->ops == &sock_file_ops ? f->priv : NULL; }
