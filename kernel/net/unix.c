// AF_UNIX sockets: SOCK_STREAM, SOCK_DGRAM and SOCK_SEQPACKET, in pairs (socketpair) or
// through names in ScaleFS (bind makes an S_IFSOCK node; connect and sendto
// find the socket bound to it).
//
// Commute: two processes each using their own pair (or their own connection)
// share nothing: a socket's state, its receive queue and its lock are its own,
// a send locks only the receiving socket (never two sockets at once), and
// nothing on the data path is global. Sends and receives on one connection do
// not commute (a receive may return what was sent) and meet on the receiver's
// lock and queue. The one global structure is the table from bound names
// (ScaleFS inode numbers) to sockets, used by bind, connect, sendto with an
// address and the close of a bound socket, never by a send or receive on a
// connected socket; it is a hash of buckets, each under its own lock.
//
// Each socket holds a queue of messages sent to it, at most UNIX_QUEUE bytes
// of them: a stream send cuts its data into messages and waits for room, a
// receive copies across messages; a datagram is one message, received whole
// or truncated. A stream connection is two sockets that reference each other
// (the connector and one the listener's accept queue hands out); a datagram
// socket's connect only names the default destination.
//
// Blocking waits are on the waiting socket's own wait queue: a receiver on its
// own, a sender out of room on the receiver's (woken when the receiver takes
// data). Signals end them with ERESTARTSYS, as pipes do.
//
// SCM_RIGHTS: the files sent ride on the message (an owned or held reference
// each, as a descriptor's); the receive that reads the message's first byte
// installs them as new fds, and a stream receive stops after such a message.
// A peek leaves them on the message. Sockets in flight that only other
// sockets in flight can reach (a socket sent over itself, then closed) are
// collected by unix_gc.c.
//
// SO_PEERCRED: the process at the other end when the pair was made or the
// connection accepted into the listener's queue (a connection's client sees
// the listener's, taken at listen), as Linux.
//
// Abstract names (sun_path starting with NUL: the name is every byte of the
// address after it) live in the same table as bound nodes, hashed by their
// bytes, and go with their socket; a bind with no name at all (autobind)
// takes the first free one of NUL and five hex digits, as Linux.
//
// SOCK_SEQPACKET: a connection as SOCK_STREAM's (conn), messages as
// SOCK_DGRAM's (each send one message, each receive one, cut to the buffer).
//
// SCM_CREDENTIALS: every message carries its sender's process (or what the
// sender gave, as Linux lets root give any existing pid and any ids); a
// socket with SO_PASSCRED receives them with every message, and a stream
// receive then stops where the sender changes. Other control messages: EINVAL.
#include "file/fdtable.h"
#include "file/file.h"
#include "file/fs_context.h"
#include "file/poll.h"
#include "fs.h"
#include "mm/mm.h"
#include "net/socket.h"
#include "net/unix.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/sleeplock.h"
#include "sync/spinlock.h"
#include "uapi/errno.h"
#include "x86/smp.h"
#include "x86/x86.h"

// Dropping a file sent with SCM_RIGHTS may free a socket whose queue holds
// more such files, and so on: done recursively, a chain of sockets in flight
// would run off the kernel stack. So rights to drop go on one list, and the
// first thread to find nobody draining it drains it, iteratively; the others
// leave theirs to it. The list and its lock are touched only when files in
// flight are dropped (a socket closed with them queued, a send or receive
// that cannot pass them on), never on the data path.
static struct spinlock reap_lock = SPINLOCK_INIT("unix rights reap");
static struct rights *reap_head; // [reap_lock] linked through `next`
static bool reaping;             // [reap_lock] someone is draining the list

static void rights_free(struct rights *r)
{
    if (!r)
        return;
    spin_lock(&reap_lock);
    r->next = reap_head;
    reap_head = r;
    if (reaping) {
        spin_unlock(&reap_lock);
        return;
    }
    reaping = true;
    while ((r = reap_head)) {
        reap_head = r->next;
        spin_unlock(&reap_lock);
        for (int i = 0; i < r->n; i++) {
            unix_inflight(r->r[i].f, -1);
            fd_ref_drop(r->r[i].f, r->r[i].how);
        }
        kfree(r);
        spin_lock(&reap_lock);
    }
    reaping = false;
    spin_unlock(&reap_lock);
}

static void msg_free(struct umsg *m)
{
    rights_free(m->rights);
    kfree(m);
}

static void get(struct unix_sock *u) { fetch_add(&u->refs, 1); }

void unix_free_msgs(struct list *q)
{
    while (!list_empty(q)) {
        struct umsg *m = list_entry(q->next, struct umsg, link);
        list_remove(&m->link);
        msg_free(m);
    }
}

// Move u's queue to q (under u's lock).
static void take_queue(struct unix_sock *u, struct list *q)
{
    list_init(q);
    while (!list_empty(&u->rq)) {
        struct list *it = u->rq.next;
        list_remove(it);
        list_push_back(q, it);
    }
    u->rq_bytes = 0;
}

static void drain(struct unix_sock *u)
{
    unix_free_msgs(&u->rq);
    u->rq_bytes = 0;
}

static void put(struct unix_sock *u)
{
    if (sub_fetch(&u->refs, 1) == 0) {
        drain(u);
        kfree(u);
    }
}

static void put_peer(void *u) { put(u); }

static void wake(struct unix_sock *u)
{
    waitq_wake_all(&u->wq);
    pollhead_wake(&u->poll);
}

// Sleep on u's queue until cond, a signal, or the deadline (0: none; see
// sock_deadline): 0, -ERESTARTSYS or -EAGAIN.
#define WAIT_ON(u, cond, deadline)                                                       \
    ({                                                                                   \
        struct thread *t_ = thread_current();                                           \
        bool ok_ = wait_event_until(&(u)->wq, (cond) || signal_pending(t_), deadline);  \
        (cond) ? 0 : ok_ ? -ERESTARTSYS : -EAGAIN;                                       \
    })

// ---- the name table -------------------------------------------------------------

#define NAME_BUCKETS 64
static struct name_bucket {
    struct spinlock lock;
    struct list socks;
} names[NAME_BUCKETS] __cacheline_aligned;
static int names_ready; // [a] 0, 1 (being set up), 2

static struct name_bucket *bucket_of(uint64_t ino)
{
    if (load_acquire(&names_ready) != 2) {
        int zero = 0;
        if (cas(&names_ready, &zero, 1)) {
            for (int i = 0; i < NAME_BUCKETS; i++) {
                spin_init(&names[i].lock, "unix names");
                list_init(&names[i].socks);
            }
            store_release(&names_ready, 2);
        }
        while (load_acquire(&names_ready) != 2)
            pause();
    }
    return &names[ino % NAME_BUCKETS];
}

// The table's key of an abstract name (FNV-1a).
static uint64_t abstract_key(const struct uname *n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 0; i < n->len; i++)
        h = (h ^ (uint8_t)n->path[i]) * 0x100000001b3ULL;
    return h;
}

// Abstract names are per socket type, as on Linux.
static bool same_abstract(const struct unix_sock *u, const struct uname *n, int type)
{
    return u->abound && u->sk.type == type && u->name.len == n->len &&
           memcmp(u->name.path, n->path, (size_t)n->len) == 0;
}

// The socket of this type bound to abstract name n, referenced, or NULL.
static struct unix_sock *abstract_find(const struct uname *n, int type)
{
    struct name_bucket *b = bucket_of(abstract_key(n));
    struct unix_sock *found = NULL;
    spin_lock(&b->lock);
    list_for_each(it, &b->socks) {
        struct unix_sock *u = list_entry(it, struct unix_sock, blink);
        if (same_abstract(u, n, type)) {
            found = u;
            get(u);
            break;
        }
    }
    spin_unlock(&b->lock);
    return found;
}

// Bind u (locked, unbound) to abstract name n: 0 or -EADDRINUSE.
static int abstract_bind(struct unix_sock *u, const struct uname *n)
{
    struct name_bucket *b = bucket_of(abstract_key(n));
    int err = 0;
    spin_lock(&b->lock);
    list_for_each(it, &b->socks)
        if (same_abstract(list_entry(it, struct unix_sock, blink), n, u->sk.type))
            err = -EADDRINUSE;
    if (!err) {
        u->name = *n;
        u->abound = true;
        list_push_back(&b->socks, &u->blink);
    }
    spin_unlock(&b->lock);
    return err;
}

// Autobind: the first free name of NUL and five hex digits after the last
// one taken (Linux's form). -ENOSPC if all 2^20 are taken.
static int autobind(struct unix_sock *u)
{
    static uint32_t next; // [a]
    for (int tries = 0; tries < (1 << 20); tries++) {
        struct uname n = {.len = 5, .abstract = true};
        ksnprintf(n.path, sizeof n.path, "%05x", fetch_add_relaxed(&next, 1) & 0xfffff);
        if (abstract_bind(u, &n) == 0)
            return 0;
    }
    return -ENOSPC;
}

// Linux autobinds a socket with SO_PASSCRED that sends or connects unbound, so
// that the receiver learns a name with the credentials.
static void autobind_for_creds(struct unix_sock *u)
{
    if (!READ_ONCE(u->passcred))
        return;
    sleeplock_acquire(&u->lock);
    if (!u->ip && !u->abound)
        autobind(u); // (no name left: the send goes on unnamed)
    sleeplock_release(&u->lock);
}

// The socket bound to node ip, referenced, or NULL.
static struct unix_sock *name_find(struct inode *ip)
{
    uint64_t ino = fs_ino(ip);
    struct name_bucket *b = bucket_of(ino);
    struct unix_sock *found = NULL;
    spin_lock(&b->lock);
    list_for_each(it, &b->socks) {
        struct unix_sock *u = list_entry(it, struct unix_sock, blink);
        if (u->ip == ip) {
            found = u;
            get(u);
            break;
        }
    }
    spin_unlock(&b->lock);
    return found;
}

// ---- creation --------------------------------------------------------------------

static const struct sock_ops unix_ops;

static struct unix_sock *alloc_sock(int type)
{
    struct unix_sock *u = kzalloc(sizeof *u);
    if (!u)
        return NULL;
    u->sk.ops = &unix_ops;
    u->sk.family = AF_UNIX;
    u->sk.type = type;
    u->refs = 1;
    sleeplock_init(&u->lock, "unix sock");
    waitq_init(&u->wq, "unix sock");
    pollhead_init(&u->poll, "unix poll");
    list_init(&u->rq);
    list_init(&u->acceptq);
    return u;
}

// Linux's unix_create: SOCK_RAW counts as SOCK_DGRAM.
static int check_type(int type, int protocol)
{
    if (protocol != 0 && protocol != AF_UNIX)
        return -EPROTONOSUPPORT;
    if (type == SOCK_RAW)
        type = SOCK_DGRAM;
    if (type != SOCK_STREAM && type != SOCK_DGRAM && type != SOCK_SEQPACKET)
        return -ESOCKTNOSUPPORT;
    return type;
}

int unix_create(int type, int protocol, struct sock **out)
{
    if ((type = check_type(type, protocol)) < 0)
        return type;
    struct unix_sock *u = alloc_sock(type);
    if (!u)
        return -ENOMEM;
    *out = &u->sk;
    return 0;
}

// Link a and b as each other's peer (both fresh or unconnected).
static void link_pair(struct unix_sock *a, struct unix_sock *b)
{
    get(b);
    a->peer = b;
    get(a);
    b->peer = a;
    a->connected = b->connected = true;
}

int unix_pair(int type, int protocol, struct sock **a, struct sock **b)
{
    if ((type = check_type(type, protocol)) < 0)
        return type;
    struct unix_sock *x = alloc_sock(type), *y = alloc_sock(type);
    if (!x || !y) {
        kfree(x);
        kfree(y);
        return -ENOMEM;
    }
    link_pair(x, y);
    x->peer_pid = y->peer_pid = proc_current()->pid;
    *a = &x->sk;
    *b = &y->sk;
    return 0;
}

// ---- addresses -------------------------------------------------------------------

// A sockaddr_un's path or abstract name into n: EINVAL for no name, the
// wrong family or a length beyond the structure.
static int name_from(const void *addr, int len, struct uname *n)
{
    const struct sockaddr_un *a = addr;
    if (len <= (int)sizeof(sa_family_t) || len > (int)sizeof *a || a->sun_family != AF_UNIX)
        return -EINVAL;
    int max = len - (int)sizeof(sa_family_t);
    n->abstract = a->sun_path[0] == 0;
    if (n->abstract) { // every byte after the NUL is the name
        n->len = max - 1;
        memcpy(n->path, a->sun_path + 1, (size_t)n->len);
        return 0;
    }
    int k = 0;
    while (k < max && a->sun_path[k])
        k++;
    memcpy(n->path, a->sun_path, (size_t)k);
    n->path[k] = 0;
    n->len = k;
    return 0;
}

static bool named(const struct uname *n) { return n->len || n->abstract; }

static void name_to(void *addr, int *len, const struct uname *n)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (n->abstract) {
        memcpy(a.sun_path + 1, n->path, (size_t)n->len);
        *len = (int)sizeof(sa_family_t) + 1 + n->len;
    } else {
        memcpy(a.sun_path, n->path, (size_t)n->len);
        *len = (int)sizeof(sa_family_t) + (n->len ? n->len + 1 : 0);
    }
    memcpy(addr, &a, (size_t)*len);
}

// The socket bound to the path n names, referenced: ENOENT etc. from the
// lookup, ECONNREFUSED if the node is not a socket or none is bound to it.
// An abstract name: the socket of this type bound to it, or ECONNREFUSED.
static int lookup(const struct uname *n, int type, struct unix_sock **out)
{
    if (n->abstract) {
        *out = abstract_find(n, type);
        return *out ? 0 : -ECONNREFUSED;
    }
    struct inode *ip;
    int err = path_lookup_at(AT_FDCWD, n->path, 0, &ip);
    if (err)
        return err;
    struct unix_sock *u = (fs_mode(ip) & S_IFMT) == S_IFSOCK ? name_find(ip) : NULL;
    fs_iput(ip);
    if (!u)
        return -ECONNREFUSED;
    *out = u;
    return 0;
}

// ---- bind, listen, connect, accept ------------------------------------------------

static int unix_bind(struct sock *sk, const void *addr, int len)
{
    struct unix_sock *u = usk(sk);
    struct uname n;
    const struct sockaddr_un *a = addr;
    bool auto_name = len == (int)sizeof(sa_family_t) && a->sun_family == AF_UNIX;
    int err = auto_name ? 0 : name_from(addr, len, &n);
    if (err)
        return err;
    sleeplock_acquire(&u->lock);
    if (u->ip || u->abound) {
        sleeplock_release(&u->lock);
        return -EINVAL; // bound already
    }
    if (auto_name || n.abstract) {
        err = auto_name ? autobind(u) : abstract_bind(u, &n);
        sleeplock_release(&u->lock);
        return err;
    }
    struct inode *dir, *ip = NULL;
    if (!(err = dirfd_inode(AT_FDCWD, n.path, &dir))) {
        err = fs_mknod(dir, n.path, S_IFSOCK | (0777 & ~fsctx_umask()), 0);
        fs_iput(dir);
    }
    if (err == -EEXIST)
        err = -EADDRINUSE;
    if (!err)
        err = path_lookup_at(AT_FDCWD, n.path, 0, &ip);
    if (!err) {
        u->ip = ip;
        u->name = n;
        struct name_bucket *b = bucket_of(fs_ino(ip));
        spin_lock(&b->lock);
        list_push_back(&b->socks, &u->blink);
        spin_unlock(&b->lock);
    }
    sleeplock_release(&u->lock);
    return err;
}

static int unix_listen(struct sock *sk, int backlog)
{
    struct unix_sock *u = usk(sk);
    if (!conn(u))
        return -EOPNOTSUPP;
    int err = 0;
    sleeplock_acquire(&u->lock);
    if ((!u->ip && !u->abound) || u->connected)
        err = -EINVAL; // Linux: unbound or connected
    else {
        u->listening = true;
        u->peer_pid = proc_current()->pid; // its connections' peers see the listener's
        u->backlog = backlog < 1 ? 1 : backlog > SOMAXCONN ? SOMAXCONN : backlog;
    }
    sleeplock_release(&u->lock);
    return err;
}

// Queue a new server end for u on listener l: 0, -EAGAIN (queue full,
// nonblock, or SO_SNDTIMEO ran out), -ECONNREFUSED (not listening), -ERESTARTSYS.
static int stream_connect(struct unix_sock *u, struct unix_sock *l, bool nonblock)
{
    struct unix_sock *n = alloc_sock(l->sk.type); // (SOCK_STREAM or SOCK_SEQPACKET)
    if (!n)
        return -ENOMEM;
    int err;
    uint64_t deadline = sock_deadline(&u->sk, true);
    sleeplock_acquire(&l->lock);
    for (;;) {
        if (!l->listening || l->closed) {
            err = -ECONNREFUSED;
            break;
        }
        if (l->nacc < l->backlog) {
            err = 0;
            break;
        }
        if (nonblock) {
            err = -EAGAIN;
            break;
        }
        sleeplock_release(&l->lock);
        err = WAIT_ON(l, READ_ONCE(l->nacc) < READ_ONCE(l->backlog) || !READ_ONCE(l->listening),
                      deadline);
        sleeplock_acquire(&l->lock);
        if (err)
            break;
    }
    if (err) {
        sleeplock_release(&l->lock);
        put(n);
        return err;
    }
    n->name = l->name;
    sleeplock_acquire(&u->lock);
    if (u->connected) {
        sleeplock_release(&u->lock);
        sleeplock_release(&l->lock);
        put(n);
        return -EISCONN;
    }
    link_pair(u, n); // u's lock is held, n is unknown to others
    u->peer_pid = l->peer_pid;
    n->peer_pid = proc_current()->pid;
    sleeplock_release(&u->lock);
    list_push_back(&l->acceptq, &n->alink); // the queue's reference is n's first
    l->nacc++;
    sleeplock_release(&l->lock);
    wake(l);
    return 0;
}

static int unix_connect(struct sock *sk, const void *addr, int len, bool nonblock)
{
    struct unix_sock *u = usk(sk);
    struct uname n;
    int err = name_from(addr, len, &n);
    if (err) {
        // A datagram socket's connect to AF_UNSPEC forgets its destination.
        const struct sockaddr *a = addr;
        if (!conn(u) && len >= (int)sizeof(sa_family_t) && a->sa_family == AF_UNSPEC) {
            sleeplock_acquire(&u->lock);
            struct unix_sock *old = u->peer;
            u->peer = NULL;
            sleeplock_release(&u->lock);
            if (old)
                put(old);
            return 0;
        }
        return err;
    }
    sleeplock_acquire(&u->lock);
    err = conn(u) && u->connected ? -EISCONN : u->listening ? -EINVAL : 0;
    sleeplock_release(&u->lock);
    if (err)
        return err;
    autobind_for_creds(u);
    struct unix_sock *target;
    if ((err = lookup(&n, u->sk.type, &target)))
        return err;
    if (target->sk.type != u->sk.type) {
        put(target);
        return -EPROTOTYPE;
    }
    if (conn(u)) {
        err = stream_connect(u, target, nonblock);
        put(target);
        return err;
    }
    sleeplock_acquire(&u->lock);
    struct unix_sock *old = u->peer;
    u->peer = target; // the lookup's reference
    sleeplock_release(&u->lock);
    if (old)
        put(old);
    return 0;
}

static int unix_accept(struct sock *sk, struct sock **out, bool nonblock)
{
    struct unix_sock *l = usk(sk);
    if (!conn(l))
        return -EOPNOTSUPP;
    int err = 0;
    uint64_t deadline = sock_deadline(&l->sk, false);
    sleeplock_acquire(&l->lock);
    while (!err && list_empty(&l->acceptq)) {
        if (!l->listening)
            err = -EINVAL;
        else if (nonblock)
            err = -EAGAIN;
        else {
            sleeplock_release(&l->lock);
            err = WAIT_ON(l, !list_empty(&l->acceptq) || !READ_ONCE(l->listening), deadline);
            sleeplock_acquire(&l->lock);
        }
    }
    struct unix_sock *n = NULL;
    if (!err) {
        n = list_entry(l->acceptq.next, struct unix_sock, alink);
        list_remove(&n->alink);
        l->nacc--;
    }
    sleeplock_release(&l->lock);
    if (err)
        return err;
    wake(l); // a connector waiting for room
    *out = &n->sk;
    return 0;
}

// ---- sending and receiving ---------------------------------------------------------

static struct umsg *msg_new(size_t len, const struct uname *from, const struct kucred *cred)
{
    struct umsg *m = kmalloc(sizeof *m + len);
    if (m) {
        m->len = len;
        m->off = 0;
        m->from = *from;
        m->rights = NULL;
        m->cred = *cred;
    }
    return m;
}

// SCM_CREDENTIALS as Linux takes them from a root process: any uid and gid,
// any pid that names a process (else ESRCH); the data exactly a struct ucred.
static int cred_from(const struct kcmsghdr *h, const char *data, struct kucred *cred)
{
    if (h->len != sizeof *h + sizeof *cred)
        return -EINVAL;
    struct kucred c;
    memcpy(&c, data, sizeof c);
    epoch_enter();
    bool exists = c.pid > 0 && pid_lookup(c.pid) != NULL;
    epoch_exit();
    if (!exists)
        return -ESRCH;
    *cred = c;
    return 0;
}

// The sender's own credentials, what a message carries unless it gives others.
static struct kucred own_cred(void) { return (struct kucred){proc_current()->pid, 0, 0}; }

// A receive on a socket with SO_PASSCRED reports the message's credentials
// (before any files, as Linux).
static int cred_deliver(struct unix_sock *u, const struct umsg *msg, struct sk_msg *m)
{
    size_t fit;
    return READ_ONCE(u->passcred)
               ? sock_put_cmsg(m, SOL_SOCKET, SCM_CREDENTIALS, &msg->cred, sizeof msg->cred, &fit)
               : 0;
}

static bool same_cred(const struct kucred *a, const struct kucred *b)
{
    return a->pid == b->pid && a->uid == b->uid && a->gid == b->gid;
}

// The files a sendmsg's SCM_RIGHTS messages name, referenced: *out (NULL if
// none), and the credentials an SCM_CREDENTIALS message gives, into *cred
// (left alone if none). EINVAL for another kind of control message or a
// malformed one, or more than RIGHTS_MAX fds; EBADF for an fd that is not
// open; ESRCH for credentials naming no process.
static int control_from(const struct sk_msg *m, struct rights **out, struct kucred *cred)
{
    *out = NULL;
    const char *p = m->ctl;
    size_t left = m->ctllen;
    struct rights *r = NULL;
    int err = 0;
    while (!err && left >= sizeof(struct kcmsghdr)) {
        struct kcmsghdr h;
        memcpy(&h, p, sizeof h);
        if (h.len < sizeof h || h.len > left || h.level != SOL_SOCKET ||
            (h.type != SCM_RIGHTS && h.type != SCM_CREDENTIALS)) {
            err = -EINVAL;
            break;
        }
        if (h.type == SCM_CREDENTIALS) {
            if ((err = cred_from(&h, p + sizeof h, cred)))
                break;
            size_t step = CMSG_ALIGN8(h.len);
            if (step >= left)
                break;
            p += step;
            left -= step;
            continue;
        }
        int n = (int)((h.len - sizeof h) / sizeof(int)), have = r ? r->n : 0;
        if (have + n > RIGHTS_MAX) {
            err = -EINVAL;
            break;
        }
        struct rights *nr = kmalloc(sizeof *nr + (size_t)(have + n) * sizeof nr->r[0]);
        if (!nr) {
            err = -ENOMEM;
            break;
        }
        nr->n = have;
        if (r)
            memcpy(nr->r, r->r, (size_t)have * sizeof r->r[0]);
        kfree(r);
        r = nr;
        for (int i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, p + sizeof h + (size_t)i * sizeof fd, sizeof fd);
            struct file *f = fd_dup_ref(fdt_current(), fd, true, &r->r[r->n].how);
            if (!f) {
                err = -EBADF;
                break;
            }
            r->r[r->n++].f = f;
            unix_inflight(f, 1);
        }
        size_t step = CMSG_ALIGN8(h.len);
        if (step >= left)
            break;
        p += step;
        left -= step;
    }
    if (err) {
        rights_free(r);
        return err;
    }
    *out = r;
    return 0;
}

// Install a received message's files as new fds (as many as the control
// buffer can report) and report them in an SCM_RIGHTS control message; the
// rest (MSG_CTRUNC) go to *late, for the caller to drop once it holds no
// socket lock (dropping one may close a socket, which locks its peer). The
// message's rights are used up.
static int rights_deliver(struct umsg *msg, struct sk_msg *m, bool cloexec, struct rights **late)
{
    struct rights *r = msg->rights;
    msg->rights = NULL;
    size_t room = m->ctlroom > m->ctlused ? m->ctlroom - m->ctlused : 0;
    int cap = room > sizeof(struct kcmsghdr) ? (int)((room - sizeof(struct kcmsghdr)) / sizeof(int)) : 0;
    int *fds = cap ? kmalloc((size_t)MIN(cap, r->n) * sizeof *fds) : NULL;
    int n = 0;
    while (fds && n < MIN(cap, r->n)) {
        // Out of flight before the descriptor exists: once it does, another
        // thread may close it and free the file.
        unix_inflight(r->r[n].f, -1);
        int fd = fd_install(fdt_current(), r->r[n].f, r->r[n].how | (cloexec ? FDI_CLOEXEC : 0),
                            false, 0, proc_nofile(proc_current()));
        if (fd < 0) {
            unix_inflight(r->r[n].f, 1);
            break;
        }
        fds[n++] = fd;
    }
    // The files not installed, to the front for the caller.
    memmove(r->r, r->r + n, (size_t)(r->n - n) * sizeof r->r[0]);
    r->n -= n;
    if (r->n) {
        m->flags |= MSG_CTRUNC;
        *late = r;
    } else {
        kfree(r);
    }
    int err = 0;
    if (n) {
        size_t fit;
        err = sock_put_cmsg(m, SOL_SOCKET, SCM_RIGHTS, fds, (size_t)n * sizeof *fds, &fit);
    }
    kfree(fds);
    return err;
}

// The socket u sends to, referenced: its peer, or the addressed one.
static int destination(struct unix_sock *u, struct sk_msg *m, struct unix_sock **out)
{
    if (m->addrlen && !conn(u)) {
        struct uname n;
        int err = name_from(&m->addr, m->addrlen, &n);
        if (err)
            return err;
        struct unix_sock *d;
        if ((err = lookup(&n, u->sk.type, &d)))
            return err;
        if (d->sk.type != u->sk.type) {
            put(d);
            return -EPROTOTYPE;
        }
        *out = d;
        return 0;
    }
    sleeplock_acquire(&u->lock);
    struct unix_sock *p = u->peer;
    int err = 0;
    if (conn(u) && (u->shut_wr || u->nowrite || (u->connected && !p)))
        err = -EPIPE;
    else if (!p)
        err = conn(u) ? -ENOTCONN : -EDESTADDRREQ;
    else
        get(p);
    sleeplock_release(&u->lock);
    *out = p;
    return err;
}

static long dgram_send(struct unix_sock *u, struct unix_sock *d, struct sk_msg *m,
                       struct rights *rights, const struct kucred *cred)
{
    size_t len = m->data.left;
    if (len > UNIX_QUEUE) {
        rights_free(rights);
        return -EMSGSIZE;
    }
    sleeplock_acquire(&u->lock);
    struct uname from = u->name;
    sleeplock_release(&u->lock);
    struct umsg *msg = msg_new(len, &from, cred);
    if (!msg) {
        rights_free(rights);
        return -ENOMEM;
    }
    msg->rights = rights;
    long k = skiov_from(&m->data, msg->data, len);
    if (k >= 0 && (size_t)k < len)
        k = -EFAULT;
    if (k < 0) {
        msg_free(msg);
        return k;
    }
    uint64_t deadline = sock_deadline(&u->sk, true);
    sleeplock_acquire(&d->lock);
    for (;;) {
        if (d->closed || d->shut_rd) {
            k = -ECONNREFUSED;
            break;
        }
        if (d->rq_bytes + len <= UNIX_QUEUE) {
            list_push_back(&d->rq, &msg->link);
            d->rq_bytes += len;
            msg = NULL;
            break;
        }
        if (m->nonblock) {
            k = -EAGAIN;
            break;
        }
        sleeplock_release(&d->lock);
        k = WAIT_ON(d, READ_ONCE(d->rq_bytes) + len <= UNIX_QUEUE || READ_ONCE(d->closed),
                    deadline);
        sleeplock_acquire(&d->lock);
        if (k)
            break;
    }
    sleeplock_release(&d->lock);
    if (msg)
        msg_free(msg);
    if (k == 0)
        wake(d);
    return k ? k : (long)len;
}

// The rights (if any) ride on the first message; the caller frees them if
// they are still *rights afterwards.
static long stream_send(struct unix_sock *u, struct unix_sock *d, struct sk_msg *m,
                        struct rights **rights, const struct kucred *cred)
{
    static const struct uname none;
    long done = 0, err = 0;
    uint64_t deadline = sock_deadline(&u->sk, true);
    while (m->data.left > 0) {
        sleeplock_acquire(&d->lock);
        while (!err && !d->closed && !d->shut_rd && d->rq_bytes >= UNIX_QUEUE) {
            if (m->nonblock)
                err = -EAGAIN;
            else {
                sleeplock_release(&d->lock);
                err = WAIT_ON(d, READ_ONCE(d->rq_bytes) < UNIX_QUEUE || READ_ONCE(d->closed) ||
                                     READ_ONCE(d->shut_rd), deadline);
                sleeplock_acquire(&d->lock);
            }
        }
        if (!err && (d->closed || d->shut_rd))
            err = -EPIPE;
        if (err) {
            sleeplock_release(&d->lock);
            break;
        }
        size_t len = MIN(MIN(m->data.left, UNIX_CHUNK), UNIX_QUEUE - d->rq_bytes);
        struct umsg *msg = msg_new(len, &none, cred);
        long k = msg ? skiov_from(&m->data, msg->data, len) : -ENOMEM;
        if (k > 0) {
            msg->len = (size_t)k;
            msg->rights = *rights;
            *rights = NULL;
            list_push_back(&d->rq, &msg->link);
            d->rq_bytes += (size_t)k;
            done += k;
        } else {
            kfree(msg);
            err = k;
        }
        sleeplock_release(&d->lock);
        wake(d);
        if (k < (long)len)
            break; // a fault
    }
    return done ? done : err;
}

static long unix_sendmsg(struct sock *sk, struct sk_msg *m)
{
    struct unix_sock *u = usk(sk);
    if (m->flags & MSG_OOB)
        return -EOPNOTSUPP;
    if (stream(u) && m->addrlen) {
        sleeplock_acquire(&u->lock);
        bool connected = u->connected;
        sleeplock_release(&u->lock);
        return connected ? -EISCONN : -EOPNOTSUPP;
    }
    if (conn(u))
        m->addrlen = 0; // SOCK_SEQPACKET: Linux ignores the address
    struct rights *rights;
    struct kucred cred = own_cred();
    long r = control_from(m, &rights, &cred);
    if (r)
        return r;
    if (!conn(u))
        autobind_for_creds(u);
    struct unix_sock *d;
    if ((r = destination(u, m, &d))) {
        rights_free(rights);
        return r == -EPIPE ? sock_epipe(m->flags) : r;
    }
    if (stream(u)) {
        r = stream_send(u, d, m, &rights, &cred);
        rights_free(rights); // not sent
    } else {
        r = dgram_send(u, d, m, rights, &cred); // the message owns them, sent or not
    }
    put(d);
    if (r == -EPIPE)
        return sock_epipe(m->flags);
    return r;
}

// Copy queued stream data out: up to m's room, across messages; consume it
// unless peeking. Stops after a message with files (delivered with its first
// byte), and before one when data was copied already. Under u->lock. Bytes,
// or -EFAULT.
static long stream_take(struct unix_sock *u, struct sk_msg *m, int in, struct rights **late)
{
    bool peek = in & MSG_PEEK, creds = READ_ONCE(u->passcred);
    long done = 0;
    struct list *it = u->rq.next;
    struct kucred first = {0, 0, 0};
    while (it != &u->rq && m->data.left > 0) {
        struct umsg *msg = list_entry(it, struct umsg, link);
        bool files = msg->rights != NULL;
        if (files && done)
            break;
        if (creds && done && !same_cred(&msg->cred, &first))
            break; // with SO_PASSCRED, one receive gives one sender's bytes (Linux)
        if (creds && !done) {
            first = msg->cred;
            int err = cred_deliver(u, msg, m);
            if (err)
                return err;
        }
        long k = skiov_to(&m->data, msg->data + msg->off, msg->len - msg->off);
        if (k < 0)
            return done ? done : k;
        done += k;
        if (files && !peek) {
            int err = rights_deliver(msg, m, in & MSG_CMSG_CLOEXEC, late);
            if (err)
                return err;
        }
        it = it->next;
        if (!peek) {
            msg->off += (size_t)k;
            u->rq_bytes -= (size_t)k;
            if (msg->off < msg->len)
                break;
            list_remove(&msg->link);
            msg_free(msg);
        }
        if (files)
            break;
    }
    return done;
}

static long dgram_take(struct unix_sock *u, struct sk_msg *m, int in, struct rights **late)
{
    bool peek = in & MSG_PEEK;
    struct umsg *msg = list_entry(u->rq.next, struct umsg, link);
    long k = skiov_to(&m->data, msg->data, msg->len);
    if (k < 0)
        return k;
    if ((size_t)k < msg->len)
        m->flags |= MSG_TRUNC;
    if (named(&msg->from))
        name_to(&m->addr, &m->addrlen, &msg->from);
    int cerr = cred_deliver(u, msg, m);
    if (cerr)
        return cerr;
    size_t len = msg->len;
    if (!peek) {
        list_remove(&msg->link);
        u->rq_bytes -= msg->len;
        int err = msg->rights ? rights_deliver(msg, m, in & MSG_CMSG_CLOEXEC, late) : 0;
        msg_free(msg);
        if (err)
            return err;
    }
    return (in & MSG_TRUNC) ? (long)len : k;
}

static long unix_recvmsg(struct sock *sk, struct sk_msg *m)
{
    struct unix_sock *u = usk(sk);
    int in = m->flags;
    m->flags = 0; // from here on, what the receive reports
    if (in & MSG_OOB)
        return -EOPNOTSUPP;
    bool peek = in & MSG_PEEK, waitall = stream(u) && (in & MSG_WAITALL) && !peek;
    long done = 0, err = 0;
    uint64_t deadline = sock_deadline(&u->sk, false);
    struct rights *late = NULL; // files received that could not be installed
    sleeplock_acquire(&u->lock);
    if (conn(u) && !u->connected) {
        sleeplock_release(&u->lock);
        return stream(u) ? -EINVAL : -ENOTCONN; // Linux: never connected
    }
    for (;;) {
        if (!list_empty(&u->rq) && !u->shut_rd) {
            long k = stream(u) ? stream_take(u, m, in, &late) : dgram_take(u, m, in, &late);
            if (k < 0) {
                err = done ? 0 : k;
                break;
            }
            done += k;
            if (!stream(u) || !waitall || m->data.left == 0 || (m->flags & MSG_CTRUNC) ||
                m->ctlused)
                break;
            continue;
        }
        if (u->eof || u->shut_rd || (done && !waitall))
            break;
        if (m->nonblock) {
            err = done ? 0 : -EAGAIN;
            break;
        }
        sleeplock_release(&u->lock);
        err = WAIT_ON(u, !list_empty(&u->rq) || READ_ONCE(u->eof) || READ_ONCE(u->shut_rd),
                      deadline);
        sleeplock_acquire(&u->lock);
        if (err) {
            err = done ? 0 : err;
            break;
        }
    }
    sleeplock_release(&u->lock);
    rights_free(late);
    if (done > 0 && !peek)
        wake(u); // senders waiting for room
    return err ? err : done;
}

// ---- shutdown, names, options, poll, release ---------------------------------------

// Tell the peer p what u's shutdown or close means for it.
static void tell_peer(struct unix_sock *p, bool eof, bool nowrite)
{
    sleeplock_acquire(&p->lock);
    p->eof |= eof;
    p->nowrite |= nowrite;
    sleeplock_release(&p->lock);
    wake(p);
}

static int unix_shutdown(struct sock *sk, int how)
{
    struct unix_sock *u = usk(sk);
    bool rd = how != SHUT_WR, wr = how != SHUT_RD;
    sleeplock_acquire(&u->lock);
    struct unix_sock *p = u->peer;
    if (conn(u) && !u->connected) {
        sleeplock_release(&u->lock);
        return -ENOTCONN;
    }
    u->shut_rd |= rd;
    u->shut_wr |= wr;
    if (p)
        get(p);
    sleeplock_release(&u->lock);
    wake(u);
    if (p && conn(u)) {
        tell_peer(p, wr, rd);
        put(p);
    } else if (p) {
        put(p);
    }
    return 0;
}

static int unix_getname(struct sock *sk, void *addr, int *len, bool peer)
{
    struct unix_sock *u = usk(sk);
    struct uname n = {0};
    int err = 0;
    sleeplock_acquire(&u->lock);
    struct unix_sock *p = u->peer;
    if (!peer)
        n = u->name;
    else if (!p)
        err = -ENOTCONN;
    else
        get(p);
    sleeplock_release(&u->lock);
    if (err)
        return err;
    if (peer) {
        sleeplock_acquire(&p->lock);
        n = p->name;
        sleeplock_release(&p->lock);
        put(p);
    }
    name_to(addr, len, &n);
    return 0;
}

static int unix_setsockopt(struct sock *sk, int level, int name, const void *val, int len)
{
    int v;
    if (level != SOL_SOCKET)
        return -EOPNOTSUPP; // Linux: AF_UNIX has no other levels
    switch (name) {
    case SO_REUSEADDR:
    case SO_KEEPALIVE:
    case SO_SNDBUF:
    case SO_RCVBUF:
        return sock_opt_get(val, len, &v); // accepted, no effect (as Linux for AF_UNIX)
    case SO_PASSCRED: {
        int err = sock_opt_get(val, len, &v);
        if (!err)
            WRITE_ONCE(usk(sk)->passcred, v != 0);
        return err;
    }
    default:
        return -ENOPROTOOPT;
    }
}

static int unix_getsockopt(struct sock *sk, int level, int name, void *val, int *len)
{
    struct unix_sock *u = usk(sk);
    if (level != SOL_SOCKET)
        return -EOPNOTSUPP;
    int v;
    switch (name) {
    case SO_TYPE: v = u->sk.type; break;
    case SO_DOMAIN: v = AF_UNIX; break;
    case SO_PROTOCOL: v = 0; break;
    case SO_ACCEPTCONN: v = READ_ONCE(u->listening); break;
    case SO_ERROR: v = 0; break;
    case SO_SNDBUF:
    case SO_RCVBUF: v = UNIX_QUEUE; break;
    case SO_PASSCRED: v = READ_ONCE(u->passcred); break;
    case SO_PEERCRED: {
        // Linux's struct ucred. Every process here is root; with no peer,
        // Linux 6.1 says pid 0 and ids -1.
        int pid = READ_ONCE(u->peer_pid);
        int cred[3] = {pid, pid ? 0 : -1, pid ? 0 : -1};
        *len = MIN(*len, (int)sizeof cred);
        memcpy(val, cred, (size_t)*len);
        return 0;
    }
    default: return -ENOPROTOOPT;
    }
    return sock_opt_int(val, len, v);
}

static unsigned unix_poll(struct sock *sk, struct poller *pl)
{
    struct unix_sock *u = usk(sk);
    poll_register(pl, &u->poll);
    fence(); // registered before looking: see pollhead_wake
    unsigned m = 0;
    sleeplock_acquire(&u->lock);
    struct unix_sock *p = u->peer;
    if (p)
        get(p);
    if (u->listening) {
        m = list_empty(&u->acceptq) ? 0 : POLLIN | POLLRDNORM;
        sleeplock_release(&u->lock);
        if (p)
            put(p);
        return m;
    }
    if (!list_empty(&u->rq) || u->eof || u->shut_rd)
        m |= POLLIN | POLLRDNORM;
    if (u->eof || u->shut_rd)
        m |= POLLRDHUP;
    if (conn(u) && ((u->eof && (u->shut_wr || u->nowrite)) || !u->connected))
        m |= POLLHUP;
    bool out_closed = u->shut_wr || u->nowrite;
    sleeplock_release(&u->lock);
    if (!p || out_closed) {
        if (!conn(u) || !u->connected || out_closed)
            m |= POLLOUT | POLLWRNORM; // a send answers at once
    } else {
        // Room comes when the peer reads: wait on its head, holding the peer
        // until we leave it (else the peer could go and be freed while we
        // are linked to its head: Linux's CVE-2013-7446).
        get(p);
        poll_register_held(pl, &p->poll, put_peer, p);
        fence();
        if (READ_ONCE(p->rq_bytes) < UNIX_QUEUE || READ_ONCE(p->closed))
            m |= POLLOUT | POLLWRNORM;
    }
    if (p)
        put(p);
    return m;
}

static int unix_nread(struct sock *sk)
{
    struct unix_sock *u = usk(sk);
    sleeplock_acquire(&u->lock);
    int n = 0;
    if (conn(u)) // SOCK_SEQPACKET too: every message's bytes
        n = (int)u->rq_bytes;
    else if (!list_empty(&u->rq))
        n = (int)list_entry(u->rq.next, struct umsg, link)->len;
    sleeplock_release(&u->lock);
    return n;
}

// A socket goes: its peer sees EOF and EPIPE, connections waiting in its
// accept queue are closed, its name is freed for reuse by a new bind once the
// node is unlinked (the node itself stays, as on Linux).
static void unix_close(struct unix_sock *u)
{
    sleeplock_acquire(&u->lock);
    u->closed = true;
    u->listening = false;
    struct unix_sock *p = u->peer;
    u->peer = NULL;
    struct list pending;
    list_init(&pending);
    while (!list_empty(&u->acceptq)) {
        struct list *it = u->acceptq.next;
        list_remove(it);
        list_push_back(&pending, it);
    }
    u->nacc = 0;
    struct list queued;
    take_queue(u, &queued);
    struct inode *ip = u->ip;
    u->ip = NULL;
    bool abound = u->abound;
    sleeplock_release(&u->lock);
    if (abound) { // the name is free again at once
        struct name_bucket *b = bucket_of(abstract_key(&u->name));
        spin_lock(&b->lock);
        list_remove(&u->blink);
        u->abound = false; // (lookups read it under the bucket's lock)
        spin_unlock(&b->lock);
    }
    unix_free_msgs(&queued);
    wake(u);
    if (ip) {
        struct name_bucket *b = bucket_of(fs_ino(ip));
        spin_lock(&b->lock);
        list_remove(&u->blink);
        spin_unlock(&b->lock);
        fs_iput(ip);
    }
    if (p) {
        // A stream peer (or a datagram pair) loses its link back to u.
        sleeplock_acquire(&p->lock);
        bool back = p->peer == u;
        if (back && conn(p))
            p->peer = NULL;
        else
            back = false;
        p->eof |= conn(p);
        p->nowrite |= conn(p);
        sleeplock_release(&p->lock);
        wake(p);
        if (back)
            put(u);
        put(p);
    }
    while (!list_empty(&pending)) {
        struct unix_sock *n = list_entry(pending.next, struct unix_sock, alink);
        list_remove(&n->alink);
        unix_close(n);
        put(n);
    }
}

static void unix_release(struct sock *sk)
{
    struct unix_sock *u = usk(sk);
    unix_close(u);
    put(u);
    unix_gc(); // the close of a cycle's last member is when it becomes garbage
}

static const struct sock_ops unix_ops = {
    .bind = unix_bind,
    .connect = unix_connect,
    .listen = unix_listen,
    .accept = unix_accept,
    .sendmsg = unix_sendmsg,
    .recvmsg = unix_recvmsg,
    .shutdown = unix_shutdown,
    .getname = unix_getname,
    .setsockopt = unix_setsockopt,
    .getsockopt = unix_getsockopt,
    .poll = unix_poll,
    .nread = unix_nread,
    .release = unix_release,
};
