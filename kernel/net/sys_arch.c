// lwIP's operating-system layer (lwip/sys.h) on the kernel's primitives:
// semaphores and mailboxes on wait queues, mutexes as sleeping locks, lwIP's
// threads as kernel threads, sys_now from the kernel's nanosecond clock.
//
// Scalability: semaphores, mutexes and mailboxes belong to one netconn or to
// the tcpip thread; operations on different ones share nothing. The one shared
// line is lwIP's lightweight protection (sys_arch_protect), a single spinlock
// that lwIP takes for short sections on its global state (pbuf reference
// counts, the loopback queue): lwIP assumes one such lock, like its core lock.
//
// Every function here is lwIP's interface (lwip/sys.h); some are called only
// from lwIP's sources (tools/dead-functions keeps them).
#include "kernel.h"
#include "lib/random.h"
#include "mm/mm.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "sync/sleeplock.h"
#include "sync/spinlock.h"
#include "x86/smp.h"

#include "lwip/err.h"
#include "lwip/sys.h"

#define NSEC_PER_MS 1000000ull

// Sleep on q until try(arg) succeeds or timeout_ms passes (0: no limit).
// Returns the milliseconds waited, or SYS_ARCH_TIMEOUT. The condition is
// tried once more after every wake-up, even a late one, so a thread woken
// by its deadline still takes what a waker made available meanwhile.
static u32_t wait_for(struct waitq *q, bool (*try)(void *), void *arg, u32_t timeout_ms)
{
    uint64_t start = nsec_now();
    uint64_t deadline = timeout_ms ? start + timeout_ms * NSEC_PER_MS : 0;
    u32_t ret;
    for (;;) {
        waitq_prepare(q);
        if (try(arg)) {
            ret = (u32_t)((nsec_now() - start) / NSEC_PER_MS);
            if (ret == SYS_ARCH_TIMEOUT)
                ret--;
            break;
        }
        if (deadline && nsec_now() >= deadline) {
            ret = SYS_ARCH_TIMEOUT;
            break;
        }
        if (deadline)
            schedule_until(deadline);
        else
            schedule();
    }
    waitq_finish(q);
    return ret;
}

// ---- semaphores -------------------------------------------------------------

struct sys_sem {
    int count;       // [a]
    struct waitq wq; // threads waiting for count > 0
};

err_t sys_sem_new(sys_sem_t *sem, u8_t count)
{
    struct sys_sem *s = kmalloc(sizeof *s);
    if (!s)
        return ERR_MEM;
    s->count = count;
    waitq_init(&s->wq, "lwip sem");
    *sem = s;
    return ERR_OK;
}

void sys_sem_free(sys_sem_t *sem)
{
    kfree(*sem);
    *sem = NULL;
}

static bool sem_try_down(void *arg)
{
    struct sys_sem *s = arg;
    int c = load_relaxed(&s->count);
    while (c > 0)
        if (cas(&s->count, &c, c - 1))
            return true;
    return false;
}

void sys_sem_signal(sys_sem_t *sem)
{
    struct sys_sem *s = *sem;
    fetch_add(&s->count, 1);
    waitq_wake_one(&s->wq);
}

u32_t sys_arch_sem_wait(sys_sem_t *sem, u32_t timeout)
{
    struct sys_sem *s = *sem;
    return wait_for(&s->wq, sem_try_down, s, timeout);
}

// ---- mutexes ------------------------------------------------------------------

struct sys_mutex {
    struct sleeplock lock;
};

err_t sys_mutex_new(sys_mutex_t *mutex)
{
    struct sys_mutex *m = kmalloc(sizeof *m);
    if (!m)
        return ERR_MEM;
    sleeplock_init(&m->lock, "lwip mutex");
    *mutex = m;
    return ERR_OK;
}

void sys_mutex_free(sys_mutex_t *mutex)
{
    kfree(*mutex);
    *mutex = NULL;
}

void sys_mutex_lock(sys_mutex_t *mutex) { sleeplock_acquire(&(*mutex)->lock); }
void sys_mutex_unlock(sys_mutex_t *mutex) { sleeplock_release(&(*mutex)->lock); }

// ---- mailboxes ----------------------------------------------------------------

#define MBOX_DEFAULT_SIZE 64

// A bounded ring of message pointers. Posting may happen in an interrupt handler
// (sys_mbox_trypost_fromisr), so the ring is under a spinlock.
struct sys_mbox {
    struct spinlock lock;
    unsigned head, tail;     // [l] free-running: tail - head messages queued
    unsigned size;           // [i]
    struct waitq not_empty;  // fetchers
    struct waitq not_full;   // posters
    void **ring;             // [l] size entries
};

err_t sys_mbox_new(sys_mbox_t *mbox, int size)
{
    if (size <= 0)
        size = MBOX_DEFAULT_SIZE;
    struct sys_mbox *b = kmalloc(sizeof *b);
    void **ring = kmalloc((size_t)size * sizeof *ring);
    if (!b || !ring) {
        kfree(b);
        kfree(ring);
        return ERR_MEM;
    }
    spin_init(&b->lock, "lwip mbox");
    b->head = b->tail = 0;
    b->size = (unsigned)size;
    waitq_init(&b->not_empty, "lwip mbox fetch");
    waitq_init(&b->not_full, "lwip mbox post");
    b->ring = ring;
    *mbox = b;
    return ERR_OK;
}

// lwIP frees a mailbox only once it is empty and nobody waits on it.
void sys_mbox_free(sys_mbox_t *mbox)
{
    kfree((*mbox)->ring);
    kfree(*mbox);
    *mbox = NULL;
}

static bool mbox_put(struct sys_mbox *b, void *msg)
{
    spin_lock(&b->lock);
    bool ok = b->tail - b->head < b->size;
    if (ok)
        b->ring[b->tail++ % b->size] = msg;
    spin_unlock(&b->lock);
    if (ok)
        waitq_wake_one(&b->not_empty);
    return ok;
}

struct mbox_get {
    struct sys_mbox *b;
    void **msg; // may be NULL: lwIP then drops the message
};

static bool mbox_get(void *arg)
{
    struct mbox_get *g = arg;
    struct sys_mbox *b = g->b;
    spin_lock(&b->lock);
    bool ok = b->tail != b->head;
    if (ok) {
        void *m = b->ring[b->head++ % b->size];
        if (g->msg)
            *g->msg = m;
    }
    spin_unlock(&b->lock);
    if (ok)
        waitq_wake_one(&b->not_full);
    return ok;
}

struct mbox_post {
    struct sys_mbox *b;
    void *msg;
};

static bool mbox_try_post(void *arg)
{
    struct mbox_post *p = arg;
    return mbox_put(p->b, p->msg);
}

void sys_mbox_post(sys_mbox_t *mbox, void *msg)
{
    struct mbox_post p = {*mbox, msg};
    wait_for(&(*mbox)->not_full, mbox_try_post, &p, 0);
}

err_t sys_mbox_trypost(sys_mbox_t *mbox, void *msg)
{
    return mbox_put(*mbox, msg) ? ERR_OK : ERR_MEM;
}

err_t sys_mbox_trypost_fromisr(sys_mbox_t *mbox, void *msg)
{
    return sys_mbox_trypost(mbox, msg);
}

u32_t sys_arch_mbox_fetch(sys_mbox_t *mbox, void **msg, u32_t timeout)
{
    struct mbox_get g = {*mbox, msg};
    return wait_for(&(*mbox)->not_empty, mbox_get, &g, timeout);
}

u32_t sys_arch_mbox_tryfetch(sys_mbox_t *mbox, void **msg)
{
    struct mbox_get g = {*mbox, msg};
    return mbox_get(&g) ? 0 : SYS_MBOX_EMPTY;
}

// ---- threads, time, protection ------------------------------------------------

// A detached kernel thread on any CPU; lwIP's stack size and priority do not
// apply (kernel stacks have one size, the scheduler no priorities).
sys_thread_t sys_thread_new(const char *name, lwip_thread_fn fn, void *arg, int stacksize,
                            int prio)
{
    (void)stacksize;
    (void)prio;
    struct thread *t = thread_alloc(name, fn, arg, false);
    if (!t)
        panic("lwIP: no memory for thread %s", name);
    thread_start(t, NULL);
    return t;
}

void sys_init(void) {}

u32_t sys_now(void) { return (u32_t)(nsec_now() / NSEC_PER_MS); }

uint32_t lwip_port_rand(void)
{
    uint32_t r;
    random_bytes(&r, sizeof r);
    return r;
}

// lwIP may nest protected sections (a pbuf freed while the loopback queue is
// locked): the holder's CPU just goes on, which is safe because the lock keeps
// interrupts off, so nothing else runs on that CPU meanwhile.
static struct spinlock protect_lock = SPINLOCK_INIT("lwip protect");

sys_prot_t sys_arch_protect(void)
{
    push_off();
    bool nested = spin_holding(&protect_lock);
    if (!nested)
        spin_lock(&protect_lock);
    pop_off();
    return nested;
}

void sys_arch_unprotect(sys_prot_t nested)
{
    if (!nested)
        spin_unlock(&protect_lock);
}
