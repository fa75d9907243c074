// Pipes: a 64 KiB ring between a read end and a write end.
//
// The ring's pages come one at a time, each taken by the first write that
// reaches it, and stay until the pipe goes (as Linux, which also gives them
// back as they are read): a pipe that carries short messages holds one page,
// a new pipe none, and making one takes no run of contiguous pages from the
// shared pools (only kmalloc's per-CPU magazines).
//
// Commute: operations on different pipes share nothing. On one pipe, reads and
// writes do not commute (a read may return the written bytes), but a reader and
// a writer still work in parallel: readers serialise among themselves on the
// read lock and own the read index, writers on the write lock and own the write
// index, and each side copies only its own part of the ring ([r, w) is the
// reader's, the rest the writer's). The two sides share the indices' lines and,
// only when someone sleeps, a wait queue. The locks are sleeping locks, held
// while user memory is copied (a fault may sleep), never while waiting. An
// fstat reads only set-once fields, on a line that closing an end leaves alone.
//
// Readers wait for data or for the last writer to go (EOF); writers wait for
// room or for the last reader to go (EPIPE). A write of at most PIPE_BUF bytes
// waits for room for all of it and keeps the write lock until it is all in, so
// it is never interleaved with other writes (POSIX); it takes the pages it
// needs before it copies anything, so without memory it fails whole (ENOMEM).
// Both sides publish their index page by page, so the other side starts before
// a big copy is over. A read that finds the ring empty and returns at once (end
// of file, or EAGAIN) and a write without readers (EPIPE) decide from a look
// without the locks, so two of them on one pipe write nothing.
#include "file/pipe.h"
#include "file/file.h"
#include "file/poll.h"
#include "fs.h"
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "uapi/errno.h"

#define PIPE_SIZE (PIPE_PAGES * PGSIZE)

// Who may write each field (docs/conventions.md): [i] immutable once made,
// [a] atomic (sync/atomic.h), no lock; [R] rlock, [W] wlock, [r] also read
// without it (acquire loads: the other side, and the lock-free EOF/EAGAIN look).
struct pipe {
    // The read side: written by readers.
    struct sleeplock rlock;  // one reader at a time
    uint64_t r;              // [R,r] bytes read so far (free-running)
    struct waitq rwq;        // readers waiting for data
    // The write side: written by writers.
    struct sleeplock wlock __cacheline_aligned;
    uint64_t w;              // [W,r] bytes written so far (free-running)
    struct waitq wwq;        // writers waiting for room
    // The ring's pages, NULL until a write first reaches them. [R] owns the
    // bytes of [r, w) of the ring, [W] the rest.
    char *page[PIPE_PAGES] __cacheline_aligned; // [W,r]
    // Written when ends are closed: off st_ino's line, so that closing one end
    // shares nothing with an fstat of the other.
    int readers __cacheline_aligned, writers; // [a] open read and write descriptions
    int ends;                // [a] readers + writers; the last to go frees the pipe
    // poll/select on either end; written only when pollers come and go. And
    // st_ino for fstat, which no transfer and no close writes.
    struct pollhead poll __cacheline_aligned;
    uint64_t ino;            // [i]
};
_Static_assert(sizeof(struct pipe) <= 512, "a pipe fits kmalloc's 512-byte class");

static struct pipe *pipe_of(struct file *f) { return f->priv; }

// Wake q's sleepers, if any, after changing what they wait for. Without
// sleepers nothing is written: a reader and a writer that keep up with each
// other share only the ring and its indices. The fence pairs with the one in
// waitq_prepare (a sleeper links itself, then tests its condition): either the
// sleeper sees the change or we see the sleeper.
static void wake(struct waitq *q)
{
    fence();
    if (READ_ONCE(q->waiters.next) != &q->waiters)
        waitq_wake_all(q);
}
static size_t used(struct pipe *p) { return load_acquire(&p->w) - load_acquire(&p->r); }

// Move n bytes between user memory and the ring at index *idx, a page-sized
// piece at a time, publishing the index after each piece (release: the data
// before the index) and waking the other side if it sleeps, so that it can
// start on the first page while we copy the next. Bytes moved, or -EFAULT if
// none were.
static long ring_move(struct pipe *p, uint64_t *idx, uint64_t ubuf, size_t n, bool to_ring)
{
    size_t done = 0;
    while (done < n) {
        size_t off = *idx % PIPE_SIZE, k = MIN(n - done, PGSIZE - off % PGSIZE);
        char *at = load_acquire(&p->page[off / PGSIZE]) + off % PGSIZE;
        long err = to_ring ? copy_from_user(at, ubuf + done, k) : copy_to_user(ubuf + done, at, k);
        if (err)
            return done ? (long)done : err;
        store_release(idx, *idx + k);
        wake(to_ring ? &p->rwq : &p->wwq);
        pollhead_wake(&p->poll);
        done += k;
    }
    return (long)done;
}

static long pipe_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    (void)pos;
    struct pipe *p = pipe_of(f);
    if (n == 0)
        return 0;
    // An empty ring: end of file without writers, EAGAIN when not waiting,
    // decided from a look without the lock, so that two such reads write
    // nothing. r first: r only grows and never passes w, so w equal to the r
    // loaded before it means the ring was empty when w was loaded.
    bool eof = load_acquire(&p->writers) == 0;
    uint64_t r = load_acquire(&p->r);
    if (load_acquire(&p->w) == r && (eof || (f->flags & O_NONBLOCK)))
        return eof ? 0 : -EAGAIN;
    uint64_t w;
    for (;;) {
        sleeplock_acquire(&p->rlock);
        // Writers count before the index: a writer's last bytes are published
        // before it goes, so EOF is never reported with data still in the ring.
        eof = load_acquire(&p->writers) == 0;
        if ((w = load_acquire(&p->w)) != p->r)
            break;
        sleeplock_release(&p->rlock);
        if (eof)
            return 0;
        if (f->flags & O_NONBLOCK)
            return -EAGAIN;
        // A signal ends the wait: the call restarts (SA_RESTART) or fails EINTR.
        struct thread *t = thread_current();
        wait_event(&p->rwq, used(p) > 0 || READ_ONCE(p->writers) == 0 || signal_pending(t));
        if (used(p) == 0 && READ_ONCE(p->writers) != 0 && signal_pending(t))
            return -ERESTARTSYS;
    }
    long ret = ring_move(p, &p->r, ubuf, MIN(n, w - p->r), false);
    sleeplock_release(&p->rlock);
    return ret;
}

// Give the ring pages for n bytes from index w, as far as memory allows; the
// bytes from w that have their pages. Write lock held.
static size_t ring_pages(struct pipe *p, uint64_t w, size_t n)
{
    size_t have = 0;
    while (have < n) {
        char **slot = &p->page[(w + have) % PIPE_SIZE / PGSIZE];
        if (!*slot) {
            char *pg = page_alloc();
            if (!pg)
                break;
            store_release(slot, pg); // before any index that covers it
        }
        have += MIN(n - have, PGSIZE - (w + have) % PGSIZE);
    }
    return have;
}

// Write the segments in order, as one write: a total of at most PIPE_BUF bytes
// waits for room for all of it.
static long pipe_writev(struct file *f, const struct iovec *iov, int cnt, size_t n)
{
    struct pipe *p = pipe_of(f);
    if (n == 0)
        return 0;
    size_t done = 0, need = n <= PIPE_BUF ? n : 1; // small writes go in whole
    int seg = 0;
    size_t segoff = 0; // bytes of iov[seg] already written
    long ret;
    if (load_acquire(&p->readers) == 0) { // as below, without the lock
        signal_send_thread(thread_current(), SIGPIPE, NULL);
        return -EPIPE;
    }
    sleeplock_acquire(&p->wlock);
    for (;;) {
        if (load_acquire(&p->readers) == 0) {
            // No reader: SIGPIPE for the writer (Linux sends it even after a
            // partial write), and EPIPE if the signal does not end it.
            signal_send_thread(thread_current(), SIGPIPE, NULL);
            ret = done ? (long)done : -EPIPE;
            break;
        }
        size_t room = PIPE_SIZE - (p->w - load_acquire(&p->r));
        if (room >= need) {
            room = ring_pages(p, p->w, MIN(room, n - done));
            if (room < need) {
                ret = done ? (long)done : -ENOMEM;
                break;
            }
            // Fill the room from the segments, in order.
            long k = 0;
            while (room > 0 && done < n) {
                while (seg < cnt && segoff == iov[seg].iov_len) {
                    seg++;
                    segoff = 0;
                }
                size_t m = MIN(room, iov[seg].iov_len - segoff);
                if ((k = ring_move(p, &p->w, iov[seg].iov_base + segoff, m, true)) < 0)
                    break;
                done += k;
                segoff += k;
                room -= k;
                if ((size_t)k < m) {
                    k = -EFAULT; // a fault part-way: report what went in
                    break;
                }
            }
            if (k < 0 || done == n) {
                ret = done ? (long)done : k;
                break;
            }
            continue;
        }
        if (f->flags & O_NONBLOCK) {
            ret = done ? (long)done : -EAGAIN;
            break;
        }
        sleeplock_release(&p->wlock);
        struct thread *t = thread_current();
        wait_event(&p->wwq, PIPE_SIZE - used(p) >= need || READ_ONCE(p->readers) == 0 ||
                                signal_pending(t));
        sleeplock_acquire(&p->wlock);
        if (PIPE_SIZE - used(p) < need && READ_ONCE(p->readers) != 0 && signal_pending(t)) {
            ret = done ? (long)done : -ERESTARTSYS;
            break;
        }
    }
    sleeplock_release(&p->wlock);
    return ret;
}

static long pipe_write(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    (void)pos;
    struct iovec v = {.iov_base = ubuf, .iov_len = n};
    return pipe_writev(f, &v, 1, n);
}

static long pipe_ioctl(struct file *f, unsigned long req, uint64_t arg)
{
    if (req != FIONREAD)
        return -ENOTTY;
    int n = (int)used(pipe_of(f));
    return copy_to_user(arg, &n, sizeof n);
}

static int pipe_stat(struct file *f, uint32_t mask, struct fs_stat *st)
{
    memset(st, 0, sizeof *st);
    st->mask = mask & STATX_BASIC_STATS;
    st->mode = S_IFIFO | 0600;
    st->ino = pipe_of(f)->ino;
    st->nlink = 1;
    return 0;
}

// Linux's pipe_poll: the read end is readable with data, hung up without
// writers; the write end writable with room, in error without readers.
static unsigned pipe_poll(struct file *f, struct poller *pl)
{
    struct pipe *p = pipe_of(f);
    poll_register(pl, &p->poll);
    fence(); // registered before looking: see pollhead_wake
    unsigned m = 0;
    if (file_readable(f)) {
        if (used(p) > 0)
            m |= POLLIN | POLLRDNORM;
        if (READ_ONCE(p->writers) == 0)
            m |= POLLHUP;
    }
    if (file_writable(f)) {
        if (used(p) < PIPE_SIZE)
            m |= POLLOUT | POLLWRNORM;
        if (READ_ONCE(p->readers) == 0)
            m |= POLLERR;
    }
    return m;
}

static void pipe_release(struct file *f)
{
    struct pipe *p = pipe_of(f);
    if (file_readable(f)) {
        fetch_sub(&p->readers, 1);
        waitq_wake_all(&p->wwq); // writers now get EPIPE
    } else {
        fetch_sub(&p->writers, 1);
        waitq_wake_all(&p->rwq); // readers now see EOF
    }
    pollhead_wake(&p->poll); // POLLHUP, POLLERR
    if (sub_fetch(&p->ends, 1) == 0) {
        for (int i = 0; i < PIPE_PAGES; i++)
            if (p->page[i])
                page_free(p->page[i]);
        kfree(p);
    }
}

static const struct file_ops pipe_ops = {
    .read = pipe_read,
    .write = pipe_write,
    .writev = pipe_writev,
    .ioctl = pipe_ioctl,
    .stat = pipe_stat,
    .release = pipe_release,
    .poll = pipe_poll,
};

static const struct file_ops unborn_ops;

static uint64_t pipe_ino(struct pipe *p) { return (uintptr_t)p >> 6; } // unique while it lives

int pipe_create(int flags, struct file **rd, struct file **wr)
{
    struct pipe *p = kzalloc(sizeof *p);
    struct file *r = NULL, *w = NULL;
    if (!p || !(r = file_alloc(&pipe_ops, O_RDONLY | (flags & O_NONBLOCK), NULL, p)) ||
        !(w = file_alloc(&pipe_ops, O_WRONLY | (flags & O_NONBLOCK), NULL, p))) {
        kfree(p);
        if (r) {
            r->ops = &unborn_ops; // nothing to release yet
            file_put(r);
        }
        return -ENOMEM;
    }
    sleeplock_init(&p->rlock, "pipe read");
    sleeplock_init(&p->wlock, "pipe write");
    waitq_init(&p->rwq, "pipe read");
    waitq_init(&p->wwq, "pipe write");
    pollhead_init(&p->poll, "pipe poll");
    p->readers = p->writers = 1;
    p->ends = 2;
    p->ino = pipe_ino(p);
    *rd = r;
    *wr = w;
    return 0;
}
