// The collector of AF_UNIX sockets in flight: files sent with SCM_RIGHTS that
// nothing but other files in flight can reach.
//
// A socket's file sent over a socket rides in the receiving socket's queue
// until someone receives it. If that queue's own file is in flight too, in a
// queue that only files in flight can reach (a socket sent over itself and
// then closed; two sockets sent over each other), nobody can ever receive
// them: their references keep each other, and the files and everything their
// queues hold would stay allocated for good. Linux collects such cycles
// (net/unix/garbage.c); so do we, the same way in outline:
//  - each AF_UNIX socket counts the references to its file that sit in
//    messages' rights (`inflight`), and is on a list while it has any;
//  - a collection takes as candidates the sockets in flight whose file has no
//    other reference (its exact count equals `inflight`: no descriptor, no
//    reference on its way in or out of a message);
//  - it counts, for each candidate, the references that sit in candidates'
//    queues (a listener's queue includes its connections not yet accepted);
//    a candidate with references elsewhere (a queue someone can read, a
//    message being sent or received right now) is reachable, and so is
//    everything in the queue of a reachable one, transitively;
//  - the candidates left are garbage: their queues are emptied, which drops
//    the references that held them, and they go.
//
// Locks: one spinlock for the counts, the list and the collection. Sends and
// receives of files take it for each AF_UNIX socket they pass, holding the
// socket's own sleeping lock at most; a collection therefore never waits for
// a socket's lock while it holds this one: it tries it, and a busy socket
// ends the collection (nothing is freed; the next one tries again). While a
// collection runs, no reference can go into or out of a message (each
// passes this lock), so what it counts holds still.
//
// When: as an AF_UNIX socket goes (the usual end of a cycle is the close of
// its last member) and, since files may become garbage with no socket
// going, whenever the number of sockets in flight has doubled since the last
// collection (at least COLLECT_MIN). Nothing here is on the path of a send or
// receive without files. A request never goes unanswered: one made while a
// collection runs makes that collection look again once it is done (the
// closes its own frees cause, too), and a collection that found a socket busy
// is tried again RETRY_NSEC later by a thread of its own (the socket's holder
// may be the very caller, and after the last close nothing else may come to
// ask).
#include "net/unix.h"
#include "file/file.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/spinlock.h"
#include "x86/smp.h"

#define COLLECT_MIN 64 // sockets in flight before a send of files collects
#define ROUNDS_MAX 8   // collections in a row for one caller; the rest goes to the thread
#define RETRY_NSEC 10000000ULL

static struct spinlock gc_lock = SPINLOCK_INIT("unix gc");
static struct list inflight_socks = LIST_INIT(inflight_socks); // [g] by glink
static int n_inflight;     // [g] sockets on the list
static int collect_at = COLLECT_MIN; // [g] collect when n_inflight reaches this
static bool collecting;    // [g] a collection (or its freeing) is under way
static bool again;         // [g] asked for while one was under way

static struct waitq retry_wq = {.lock = SPINLOCK_INIT("unix gc retry"),
                                .waiters = LIST_INIT(retry_wq.waiters)};
static int retry_wanted;   // [a]
static int retry_started;  // [a] the retry thread exists (or is being made)

// The AF_UNIX socket behind f, or NULL.
static struct unix_sock *unix_of(struct file *f)
{
    struct sock *sk = sock_of(f);
    return sk && sk->family == AF_UNIX ? usk(sk) : NULL;
}

void unix_inflight(struct file *f, int delta)
{
    struct unix_sock *u = unix_of(f);
    if (!u)
        return;
    spin_lock(&gc_lock);
    if (u->inflight == 0) {
        list_push_back(&inflight_socks, &u->glink);
        n_inflight++;
    }
    u->inflight += delta;
    if (u->inflight == 0) {
        list_remove(&u->glink);
        n_inflight--;
    }
    bool collect = delta > 0 && n_inflight >= collect_at && !collecting;
    spin_unlock(&gc_lock);
    if (collect)
        unix_gc();
}

// Call fn on each candidate whose file sits in the rights of queue q's messages.
static void each_in_queue(struct list *q, void (*fn)(struct unix_sock *))
{
    list_for_each(it, q) {
        struct rights *r = list_entry(it, struct umsg, link)->rights;
        for (int i = 0; r && i < r->n; i++) {
            struct unix_sock *v = unix_of(r->r[i].f);
            if (v && v->gc_candidate)
                fn(v);
        }
    }
}

// ... of u's queue and, for a listener, its unaccepted connections' queues.
// False if a lock was busy.
static bool each_child(struct unix_sock *u, void (*fn)(struct unix_sock *))
{
    if (!sleeplock_try(&u->lock))
        return false;
    bool ok = true;
    each_in_queue(&u->rq, fn);
    list_for_each(it, &u->acceptq) {
        struct unix_sock *c = list_entry(it, struct unix_sock, alink);
        if (!(ok = sleeplock_try(&c->lock)))
            break;
        each_in_queue(&c->rq, fn);
        sleeplock_release(&c->lock);
    }
    sleeplock_release(&u->lock);
    return ok;
}

static struct unix_sock *work; // [g] reachable candidates whose queues are still to look at

static void count_inside(struct unix_sock *v) { v->gc_refs--; }

static void reach(struct unix_sock *v)
{
    if (v->gc_reached)
        return;
    v->gc_reached = true;
    v->gc_next = work;
    work = v;
}

// Move u's queue (and its unaccepted connections' queues) to out. False if a
// lock was busy (what it guards is left for the next collection).
static bool take_queues(struct unix_sock *u, struct list *out)
{
    if (!sleeplock_try(&u->lock))
        return false;
    bool all = true;
    list_splice_tail(out, &u->rq);
    u->rq_bytes = 0;
    list_for_each(it, &u->acceptq) {
        struct unix_sock *c = list_entry(it, struct unix_sock, alink);
        if (sleeplock_try(&c->lock)) {
            list_splice_tail(out, &c->rq);
            c->rq_bytes = 0;
            sleeplock_release(&c->lock);
        } else {
            all = false;
        }
    }
    sleeplock_release(&u->lock);
    return all;
}

// The collection, under gc_lock: moves the garbage's queues to out. False if
// a socket was busy, and garbage may be left.
static bool collect(struct list *out)
{
    list_for_each(it, &inflight_socks) {
        struct unix_sock *u = list_entry(it, struct unix_sock, glink);
        u->gc_candidate = file_count(u->sk.file) == u->inflight;
        u->gc_refs = u->inflight;
        u->gc_reached = false;
    }
    list_for_each(it, &inflight_socks) {
        struct unix_sock *u = list_entry(it, struct unix_sock, glink);
        if (u->gc_candidate && !each_child(u, count_inside))
            return false;
    }
    work = NULL;
    list_for_each(it, &inflight_socks) {
        struct unix_sock *u = list_entry(it, struct unix_sock, glink);
        if (u->gc_candidate && u->gc_refs > 0)
            reach(u);
    }
    while (work) {
        struct unix_sock *u = work;
        work = u->gc_next;
        if (!each_child(u, reach))
            return false;
    }
    bool all = true;
    list_for_each(it, &inflight_socks) {
        struct unix_sock *u = list_entry(it, struct unix_sock, glink);
        if (u->gc_candidate && !u->gc_reached && !take_queues(u, out))
            all = false;
    }
    return all;
}

static void retry_loop(void *arg)
{
    (void)arg;
    for (;;) {
        wait_event(&retry_wq, load_acquire(&retry_wanted));
        sched_sleep_until(nsec_now() + RETRY_NSEC); // the busy socket's holder goes on
        store_release(&retry_wanted, 0);
        unix_gc();
    }
}

// Have the retry thread (made at the first need) collect a little later.
static void retry_later(void)
{
    store_release(&retry_wanted, 1);
    int none = 0;
    if (cas(&retry_started, &none, 1) && !kthread_create("unix-gc", retry_loop, NULL, NULL))
        store_release(&retry_started, 0); // out of memory: the next request tries again
    waitq_wake_all(&retry_wq);
}

void unix_gc(void)
{
    spin_lock(&gc_lock);
    if (collecting || n_inflight == 0) {
        again |= collecting;
        spin_unlock(&gc_lock);
        return;
    }
    collecting = true;
    bool done = true;
    for (int round = 0; round < ROUNDS_MAX && done && (round == 0 || again); round++) {
        again = false;
        struct list garbage;
        list_init(&garbage);
        done = collect(&garbage);
        spin_unlock(&gc_lock);
        // Freeing the messages drops the garbage's references: its sockets go,
        // and their closes ask for another round (again).
        unix_free_msgs(&garbage);
        spin_lock(&gc_lock);
    }
    bool later = !done || again;
    collecting = false;
    collect_at = MAX(COLLECT_MIN, 2 * n_inflight);
    spin_unlock(&gc_lock);
    if (later)
        retry_later();
}
