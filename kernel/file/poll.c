// poll, ppoll, select and pselect6: wait until one of a set of files is ready.
//
// A caller (a poller, on its stack) scans its files, asking each for its
// readiness through file_ops.poll; on the first scan each file registers the
// poller on its object's pollhead. If nothing is ready the poller sleeps on its
// own wait queue; an object whose readiness may have changed wakes every poller
// on its pollhead, which scans again. A wake-up between a scan and the sleep is
// not lost: it sets the poller's `woken`, which the sleeper tests after linking
// itself (waitq_prepare), and the scan clears it only before looking.
//
// Commute: polls of different objects share nothing but their callers' own
// memory; an object's pollhead (its own lock and list, one cache line) is
// written only by pollers registering on that object and leaving it, and read
// by its wakers, who pay one load when nobody polls.
#include "file/fdtable.h"
#include "file/file.h"
#include "file/poll.h"
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "syscall/syscall.h"
#include "uapi/errno.h"
#include "x86/smp.h"

// Files without a poll operation (regular files, directories, /dev/zero) are
// always ready, as in Linux.
#define DEFAULT_POLLMASK (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM)

// Who may write each field (docs/conventions.md): [i] immutable once made,
// [a] atomic, no lock; [h] the pollhead's lock; [t] the polling thread.
struct poll_entry {
    struct list link;           // [h] on head->entries
    struct pollhead *head;      // [i]
    struct poller *pl;          // [i]
    void (*drop)(void *);       // [i] drops the reference that keeps head alive (or NULL)
    void *obj;                  // [i]
};

#define HEADS_PER_FILE 2 // a unix socket: its own and its peer's

struct poller {
    struct waitq wq;
    bool woken;                 // [a] set by wakers, cleared by the poller before a scan
    struct poll_entry *entries; // [t] one per file at most
    int n, cap;                 // [t]
};

void pollhead_init(struct pollhead *h, const char *name)
{
    spin_init(&h->lock, name);
    list_init(&h->entries);
}

void poll_register_held(struct poller *pl, struct pollhead *h, void (*drop)(void *), void *obj)
{
    if (!pl || pl->n == pl->cap) {
        if (drop)
            drop(obj);
        return;
    }
    struct poll_entry *e = &pl->entries[pl->n++];
    e->head = h;
    e->pl = pl;
    e->drop = drop;
    e->obj = obj;
    spin_lock(&h->lock);
    list_push_back(&h->entries, &e->link);
    spin_unlock(&h->lock);
}

void poll_register(struct poller *pl, struct pollhead *h) { poll_register_held(pl, h, NULL, NULL); }

void pollhead_wake(struct pollhead *h)
{
    // Pairs with the fence in waitq_prepare: a poller that registered before its
    // last scan is seen here, or its scan sees the change.
    fence();
    if (READ_ONCE(h->entries.next) == &h->entries)
        return;
    spin_lock(&h->lock);
    list_for_each(it, &h->entries) {
        struct poller *pl = list_entry(it, struct poll_entry, link)->pl;
        store_seqcst(&pl->woken, true);
        waitq_wake_all(&pl->wq);
    }
    spin_unlock(&h->lock);
}

static void poller_end(struct poller *pl)
{
    for (int i = 0; i < pl->n; i++) {
        struct pollhead *h = pl->entries[i].head;
        spin_lock(&h->lock);
        list_remove(&pl->entries[i].link);
        spin_unlock(&h->lock);
        if (pl->entries[i].drop)
            pl->entries[i].drop(pl->entries[i].obj);
    }
    kfree(pl->entries);
}

// What f reports now, of events (POLLERR, POLLHUP and POLLNVAL always count).
static unsigned file_poll(struct file *f, struct poller *pl, unsigned events)
{
    unsigned m = f->ops->poll ? f->ops->poll(f, pl) : DEFAULT_POLLMASK;
    return m & (events | POLLERR | POLLHUP | POLLNVAL);
}

// One request: an fd, the events it wants and what it got.
struct req {
    int fd;
    unsigned events, revents;
    struct file *f; // referenced while we wait; NULL for a bad or negative fd
};

// Scan until something is ready, the deadline (0: none; UINT64_MAX: do not
// wait) or a signal: the number of ready requests, or -EINTR.
static long poll_wait(struct req *r, int n, uint64_t deadline)
{
    struct poller pl = {.cap = HEADS_PER_FILE * n};
    waitq_init(&pl.wq, "poll");
    if (n && !(pl.entries = kmalloc((size_t)pl.cap * sizeof *pl.entries)))
        return -ENOMEM;
    struct thread *t = thread_current();
    long ready;
    for (bool first = true;; first = false) {
        store_seqcst(&pl.woken, false);
        ready = 0;
        for (int i = 0; i < n; i++) {
            if (r[i].fd < 0)
                r[i].revents = 0;
            else if (!r[i].f)
                r[i].revents = POLLNVAL;
            else
                r[i].revents = file_poll(r[i].f, first ? &pl : NULL, r[i].events);
            ready += r[i].revents != 0;
        }
        if (ready || deadline == UINT64_MAX)
            break;
        if (signal_pending(t)) {
            ready = -EINTR;
            break;
        }
        waitq_prepare(&pl.wq);
        bool expired = deadline && nsec_now() >= deadline;
        if (!load_seqcst(&pl.woken) && !expired && !signal_pending(t)) {
            if (deadline)
                schedule_until(deadline);
            else
                schedule();
        }
        waitq_finish(&pl.wq);
        if (expired)
            break; // nothing ready (ready is 0)
    }
    poller_end(&pl);
    return ready;
}

// Look the fds up, each borrowing its file while we wait.
static void get_files(struct req *r, int n)
{
    struct fdtable *t = fdt_current();
    for (int i = 0; i < n; i++) {
        r[i].f = NULL;
        if (r[i].fd < 0)
            continue;
        struct fd_ref ref = fd_get(t, r[i].fd);
        if ((r[i].f = ref.f))
            file_borrow(ref.f);
        fd_put(ref);
    }
}

static void put_files(struct req *r, int n)
{
    for (int i = 0; i < n; i++)
        if (r[i].f)
            file_unborrow(r[i].f);
}

// A relative timeout as a deadline: 0 for none, UINT64_MAX for "do not wait".
static uint64_t deadline_after(uint64_t ns, bool given)
{
    if (!given)
        return 0;
    if (ns == 0)
        return UINT64_MAX;
    uint64_t d = nsec_now() + ns;
    return d < ns || d == UINT64_MAX ? UINT64_MAX - 1 : d;
}

// The time left until deadline, for the timeouts ppoll and select write back.
static uint64_t time_left(uint64_t deadline)
{
    uint64_t now = nsec_now();
    return deadline == UINT64_MAX || now >= deadline ? 0 : deadline - now;
}

static long read_timespec(uint64_t uts, uint64_t *ns)
{
    struct timespec ts;
    if (copy_from_user(&ts, uts, sizeof ts) < 0)
        return -EFAULT;
    if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
        return -EINVAL;
    *ns = ts.tv_sec > (int64_t)(UINT64_MAX / 1000000000 - 1) ? UINT64_MAX - 1
                                                              : (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return 0;
}

// ppoll and pselect6: the signal mask to wait with (a user sigset of size
// bytes, which must be 8), installed for the wait.
static long mask_begin(uint64_t umask, size_t size, bool *masked)
{
    *masked = false;
    if (!umask)
        return 0;
    if (size != sizeof(uint64_t))
        return -EINVAL;
    uint64_t m;
    if (copy_from_user(&m, umask, sizeof m) < 0)
        return -EFAULT;
    signal_mask_begin(m);
    *masked = true;
    return 0;
}

// ---- poll and ppoll -----------------------------------------------------------------

static long do_poll(uint64_t ufds, unsigned nfds, uint64_t deadline)
{
    struct proc *p = proc_current();
    if (nfds > (unsigned)proc_nofile(p))
        return -EINVAL;
    struct pollfd *pfd = nfds ? kmalloc(nfds * sizeof *pfd) : NULL;
    struct req *r = nfds ? kmalloc(nfds * sizeof *r) : NULL;
    long ret = -ENOMEM;
    if (nfds && (!pfd || !r))
        goto out;
    ret = -EFAULT;
    if (copy_from_user(pfd, ufds, nfds * sizeof *pfd) < 0)
        goto out;
    for (unsigned i = 0; i < nfds; i++)
        r[i] = (struct req){.fd = pfd[i].fd, .events = (uint16_t)pfd[i].events};
    get_files(r, nfds);
    ret = poll_wait(r, nfds, deadline);
    put_files(r, nfds);
    if (ret >= 0) {
        for (unsigned i = 0; i < nfds; i++)
            pfd[i].revents = (short)r[i].revents;
        for (unsigned i = 0; i < nfds; i++) // only revents is written (Linux)
            if (copy_to_user(ufds + i * sizeof *pfd + offsetof(struct pollfd, revents),
                             &pfd[i].revents, sizeof pfd[i].revents) < 0) {
                ret = -EFAULT;
                break;
            }
    }
out:
    kfree(pfd);
    kfree(r);
    return ret;
}

// Interrupted by a signal that runs no handler (a stop and continue), poll goes
// on through restart_syscall until the same deadline (Linux).
static long poll_restart(struct restart_block *rb)
{
    long ret = do_poll(rb->arg[0], (unsigned)rb->arg[1], rb->arg[2]);
    return ret == -EINTR ? restart_block_set(poll_restart, rb->arg[0], rb->arg[1], rb->arg[2])
                         : ret;
}

long sys_poll(uint64_t ufds, unsigned nfds, int timeout_ms)
{
    uint64_t deadline = deadline_after((uint64_t)timeout_ms * 1000000, timeout_ms >= 0);
    long ret = do_poll(ufds, nfds, deadline);
    return ret == -EINTR ? restart_block_set(poll_restart, ufds, nfds, deadline) : ret;
}

// ppoll, select and pselect6 write the time left back, so a call restarted after
// a signal that ran no handler waits only for what remained (Linux).
static long interrupted(long ret) { return ret == -EINTR ? -ERESTARTNOHAND : ret; }

long sys_ppoll(uint64_t ufds, unsigned nfds, uint64_t uts, uint64_t umask, size_t size)
{
    uint64_t ns = 0;
    long err = uts ? read_timespec(uts, &ns) : 0;
    if (err)
        return err;
    bool masked;
    if ((err = mask_begin(umask, size, &masked)))
        return err;
    uint64_t deadline = deadline_after(ns, uts != 0);
    long ret = interrupted(do_poll(ufds, nfds, deadline));
    if (masked)
        signal_mask_end(ret == -ERESTARTNOHAND);
    if (uts && ret != -EFAULT) { // the time left (Linux; a fault here is ignored)
        uint64_t left = time_left(deadline);
        struct timespec ts = {(int64_t)(left / 1000000000), (int64_t)(left % 1000000000)};
        copy_to_user(uts, &ts, sizeof ts);
    }
    return ret;
}

// ---- select and pselect6 --------------------------------------------------------------

#define SEL_IN (POLLIN | POLLRDNORM | POLLHUP | POLLERR)
#define SEL_OUT (POLLOUT | POLLWRNORM | POLLERR)
#define SEL_EX POLLPRI

// The three fd sets of nfds bits, in kernel memory: sets[0..2][words].
static long do_select(int nfds, uint64_t uset[3], uint64_t deadline)
{
    if (nfds < 0)
        return -EINVAL;
    // Linux looks at no more fds than its table has room for; ours has room
    // up to RLIMIT_NOFILE.
    struct proc *p = proc_current();
    nfds = MIN(nfds, proc_nofile(p));
    if (!uset[0] && !uset[1] && !uset[2])
        nfds = 0; // a sleep
    size_t words = (size_t)(nfds + 63) / 64, bytes = words * 8;
    uint64_t *in = words ? kzalloc(3 * bytes) : NULL, *out = words ? kzalloc(3 * bytes) : NULL;
    struct req *r = NULL;
    long ret = -ENOMEM;
    if (words && (!in || !out))
        goto done;
    ret = -EFAULT;
    for (int s = 0; s < 3; s++)
        if (uset[s] && copy_from_user(in + s * words, uset[s], bytes) < 0)
            goto done;
    // Only the first nfds bits count: clear the rest of the last word.
    if (nfds % 64)
        for (int s = 0; s < 3; s++)
            in[s * words + words - 1] &= (1UL << (nfds % 64)) - 1;
    int n = 0;
    for (int fd = 0; fd < nfds; fd++)
        n += ((in[fd / 64] | in[words + fd / 64] | in[2 * words + fd / 64]) >> (fd % 64)) & 1;
    ret = -ENOMEM;
    if (n && !(r = kmalloc(n * sizeof *r)))
        goto done;
    n = 0;
    for (int fd = 0; fd < nfds; fd++) {
        unsigned ev = 0;
        for (int s = 0; s < 3; s++)
            if ((in[s * words + fd / 64] >> (fd % 64)) & 1)
                ev |= s == 0 ? SEL_IN : s == 1 ? SEL_OUT : SEL_EX;
        if (ev)
            r[n++] = (struct req){.fd = fd, .events = ev};
    }
    get_files(r, n);
    ret = 0;
    for (int i = 0; i < n; i++)
        if (!r[i].f)
            ret = -EBADF; // select refuses what poll reports as POLLNVAL
    if (!ret)
        ret = poll_wait(r, n, deadline);
    put_files(r, n);
    if (ret < 0)
        goto done;
    ret = 0;
    for (int i = 0; i < n; i++) {
        int fd = r[i].fd;
        unsigned got = r[i].revents;
        uint64_t bit = 1UL << (fd % 64);
        for (int s = 0; s < 3; s++) {
            unsigned want = s == 0 ? SEL_IN : s == 1 ? SEL_OUT : SEL_EX;
            if ((in[s * words + fd / 64] & bit) && (got & want)) {
                out[s * words + fd / 64] |= bit;
                ret++; // each set an fd is ready in counts
            }
        }
    }
    for (int s = 0; s < 3; s++)
        if (uset[s] && copy_to_user(uset[s], out + s * words, bytes) < 0) {
            ret = -EFAULT;
            break;
        }
done:
    kfree(in);
    kfree(out);
    kfree(r);
    return ret;
}

long sys_select(int nfds, uint64_t rd, uint64_t wr, uint64_t ex, uint64_t utv)
{
    uint64_t ns = 0;
    if (utv) {
        struct timeval tv;
        if (copy_from_user(&tv, utv, sizeof tv) < 0)
            return -EFAULT;
        if (tv.tv_sec < 0 || tv.tv_usec < 0)
            return -EINVAL;
        // tv_usec may pass a second (Linux carries it over).
        uint64_t sec = (uint64_t)tv.tv_sec + (uint64_t)tv.tv_usec / 1000000;
        ns = sec < (uint64_t)tv.tv_sec || sec > UINT64_MAX / 1000000000 - 1
                 ? UINT64_MAX - 1
                 : sec * 1000000000 + (uint64_t)tv.tv_usec % 1000000 * 1000;
    }
    uint64_t deadline = deadline_after(ns, utv != 0);
    uint64_t sets[3] = {rd, wr, ex};
    long ret = interrupted(do_select(nfds, sets, deadline));
    if (utv && ret != -EFAULT) { // the time left (Linux)
        uint64_t left = time_left(deadline);
        struct timeval tv = {(int64_t)(left / 1000000000), (int64_t)(left % 1000000000 / 1000)};
        copy_to_user(utv, &tv, sizeof tv);
    }
    return ret;
}

// The sixth argument: {const sigset_t *ss; size_t ss_len;}.
long sys_pselect6(int nfds, uint64_t rd, uint64_t wr, uint64_t ex, uint64_t uts, uint64_t usig)
{
    uint64_t ns = 0;
    long err = uts ? read_timespec(uts, &ns) : 0;
    if (err)
        return err;
    uint64_t sig[2] = {0, 0};
    if (usig && copy_from_user(sig, usig, sizeof sig) < 0)
        return -EFAULT;
    bool masked;
    if ((err = mask_begin(sig[0], sig[1], &masked)))
        return err;
    uint64_t deadline = deadline_after(ns, uts != 0);
    uint64_t sets[3] = {rd, wr, ex};
    long ret = interrupted(do_select(nfds, sets, deadline));
    if (masked)
        signal_mask_end(ret == -ERESTARTNOHAND);
    if (uts && ret != -EFAULT) {
        uint64_t left = time_left(deadline);
        struct timespec ts = {(int64_t)(left / 1000000000), (int64_t)(left % 1000000000)};
        copy_to_user(uts, &ts, sizeof ts);
    }
    return ret;
}
