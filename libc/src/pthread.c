// Threads: creation on clone(), exit, join/detach, keys, once, attributes,
// affinity. A thread's stack, static TLS block and control block live in one
// anonymous mapping; whoever is last (the joiner, or a detached thread itself)
// unmaps it.
//
// Commutativity: creating, exiting and joining different threads touch only
// those threads' own mappings and control blocks; the shared state is the key
// table (written only by pthread_key_create/delete) and the live-thread count.
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "libc.h"

#define DEFAULT_STACK (256 * 1024)
#define KEY_ITERATIONS 4

static volatile int live_threads = 1;

static int start_thread(void *arg)
{
    struct pthread *t = arg;
    if (t->has_affinity)  // pinned before any of the caller's code runs
        __sys(__NR_sched_setaffinity, 0, sizeof t->affinity, t->affinity);
    pthread_exit(t->start(t->arg));
}

int pthread_create(pthread_t *restrict out, const pthread_attr_t *restrict attr,
                   void *(*fn)(void *), void *restrict arg)
{
    size_t stack = attr && attr->__stacksize ? attr->__stacksize : DEFAULT_STACK;
    size_t guard = attr ? attr->__guardsize : __page_size;
    size_t page = __page_size;
    stack = (stack + page - 1) & ~(page - 1);
    guard = (guard + page - 1) & ~(page - 1);
    size_t tls = (__tls_size() + page - 1) & ~(page - 1);
    size_t total = guard + stack + tls;
    char *map = mmap(NULL, total, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return EAGAIN;
    if (guard)
        mprotect(map, guard, PROT_NONE);  // best effort: overflow faults
    struct pthread *t = __tls_setup(map + guard + stack, tls);
    t->map = map;
    t->map_size = total;
    t->start = fn;
    t->arg = arg;
    t->canary = __self()->canary;
    t->state = attr && attr->__detach ? THREAD_DETACHED : THREAD_JOINABLE;
    if (attr && attr->__has_affinity) {
        _Static_assert(sizeof t->affinity == sizeof(cpu_set_t), "affinity size");
        memcpy(t->affinity, attr->__affinity, sizeof t->affinity);
        t->has_affinity = 1;
    }
    __malloc_thread_init(t);
    __atomic_add_fetch(&live_threads, 1, __ATOMIC_RELAXED);

    int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
    int tid = __clone(start_thread, map + guard + stack, flags, t, (int *)&t->tid, t,
                      (int *)&t->tid);
    if (tid < 0) {
        __atomic_sub_fetch(&live_threads, 1, __ATOMIC_RELAXED);
        __malloc_thread_exit(t); // its chunk
        munmap(map, total);
        return -tid == ENOMEM ? EAGAIN : -tid;
    }
    *out = (pthread_t)t;
    return 0;
}

// Unmap our own stack and exit without touching memory in between.
static _Noreturn void unmap_self_and_exit(void *map, size_t len)
{
    __asm__ volatile("syscall\n\t"
                     "xor %%edi, %%edi\n\t"
                     "mov $60, %%eax\n\t"
                     "syscall\n\t"
                     "hlt"
                     : : "a"(__NR_munmap), "D"(map), "S"(len) : "rcx", "r11", "memory");
    __builtin_unreachable();
}

_Noreturn void pthread_exit(void *ret)
{
    struct pthread *t = __self();
    t->result = ret;
    __tsd_run_destructors(t);
    __malloc_thread_exit(t);
    if (__atomic_sub_fetch(&live_threads, 1, __ATOMIC_ACQ_REL) == 0)
        exit(0);  // the last thread: the process ends normally
    // No signal handler may run from here on: our stack may vanish.
    unsigned long old;
    __block_all_signals(&old);
    int s = THREAD_JOINABLE;
    if (__atomic_compare_exchange_n(&t->state, &s, THREAD_EXITED, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        // A joiner frees us once the kernel clears t->tid at exit.
        for (;;)
            __sys(__NR_exit, 0);
    }
    // Detached: nobody will join, so free the mapping ourselves. The kernel
    // must not write the exit tid into it after it is gone.
    __sys(__NR_set_tid_address, 0);
    if (t->map_size && t->map != NULL && t->start)
        unmap_self_and_exit(t->map, t->map_size);
    for (;;)
        __sys(__NR_exit, 0);  // the main thread: its stack is the process's
}

int pthread_join(pthread_t th, void **ret)
{
    struct pthread *t = (struct pthread *)th;
    if (t == __self())
        return EDEADLK;
    if (t->state == THREAD_DETACHED)
        return EINVAL;
    // The kernel clears tid and wakes this (shared) futex when the thread is gone.
    int tid;
    while ((tid = t->tid) != 0)
        __sys(__NR_futex, &t->tid, FUTEX_WAIT, tid, NULL);
    if (ret)
        *ret = t->result;
    munmap(t->map, t->map_size);
    return 0;
}

int pthread_detach(pthread_t th)
{
    struct pthread *t = (struct pthread *)th;
    int s = THREAD_JOINABLE;
    if (__atomic_compare_exchange_n(&t->state, &s, THREAD_DETACHED, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return 0;
    if (s == THREAD_EXITED)
        return pthread_join(th, NULL);  // already exiting: reclaim it now
    return EINVAL;
}

pthread_t pthread_self(void) { return (pthread_t)__self(); }
int pthread_equal(pthread_t a, pthread_t b) { return a == b; }
pid_t pthread_gettid_np(pthread_t t) { return ((struct pthread *)t)->tid; }

int pthread_setaffinity_np(pthread_t t, size_t size, const cpu_set_t *set)
{
    long r = __sys(__NR_sched_setaffinity, ((struct pthread *)t)->tid, size, set);
    return r < 0 ? (int)-r : 0;
}

int pthread_getaffinity_np(pthread_t t, size_t size, cpu_set_t *set)
{
    long r = __sys(__NR_sched_getaffinity, ((struct pthread *)t)->tid, size, set);
    if (r < 0)
        return (int)-r;
    if ((size_t)r < size)
        memset((char *)set + r, 0, size - (size_t)r);
    return 0;
}

int pthread_setname_np(pthread_t t, const char *name)
{
    (void)t;
    return strlen(name) < 16 ? 0 : ERANGE;  // names are not kept
}

int pthread_kill(pthread_t t, int sig)
{
    long r = __sys(__NR_tgkill, getpid(), ((struct pthread *)t)->tid, sig);
    return r < 0 ? (int)-r : 0;
}

// ---- attributes --------------------------------------------------------------

int pthread_attr_init(pthread_attr_t *a)
{
    memset(a, 0, sizeof *a);
    a->__guardsize = __page_size;
    return 0;
}
int pthread_attr_destroy(pthread_attr_t *a)
{
    free(a->__affinity);
    return 0;
}
int pthread_attr_setstacksize(pthread_attr_t *a, size_t size)
{
    if (size < PTHREAD_STACK_MIN)
        return EINVAL;
    a->__stacksize = size;
    return 0;
}
int pthread_attr_getstacksize(const pthread_attr_t *restrict a, size_t *restrict size)
{
    *size = a->__stacksize ? a->__stacksize : DEFAULT_STACK;
    return 0;
}
int pthread_attr_setguardsize(pthread_attr_t *a, size_t size)
{
    a->__guardsize = size;
    return 0;
}
int pthread_attr_setdetachstate(pthread_attr_t *a, int state)
{
    if (state != PTHREAD_CREATE_JOINABLE && state != PTHREAD_CREATE_DETACHED)
        return EINVAL;
    a->__detach = state;
    return 0;
}
int pthread_attr_getdetachstate(const pthread_attr_t *a, int *state)
{
    *state = a->__detach;
    return 0;
}
int pthread_attr_setaffinity_np(pthread_attr_t *a, size_t size, const cpu_set_t *set)
{
    if (!a->__affinity && !(a->__affinity = calloc(1, sizeof(cpu_set_t))))
        return ENOMEM;
    memset(a->__affinity, 0, sizeof(cpu_set_t));
    memcpy(a->__affinity, set, size < sizeof(cpu_set_t) ? size : sizeof(cpu_set_t));
    a->__has_affinity = 1;
    return 0;
}

// ---- once --------------------------------------------------------------------

int pthread_once(pthread_once_t *once, void (*fn)(void))
{
    // 0: not run, 1: running, 2: done, 3: running with waiters.
    for (;;) {
        int s = __atomic_load_n(once, __ATOMIC_ACQUIRE);
        if (s == 2)
            return 0;
        if (s == 0) {
            if (!__atomic_compare_exchange_n(once, &s, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                continue;
            fn();
            if (__atomic_exchange_n(once, 2, __ATOMIC_RELEASE) == 3)
                __futex_wake(once, INT_MAX);
            return 0;
        }
        if (s == 1 && !__atomic_compare_exchange_n(once, &s, 3, 0, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED))
            continue;
        __futex_wait(once, 3, NULL);
    }
}

// ---- thread-specific data ----------------------------------------------------
// Each key has a sequence number bumped on create; a thread's value counts
// only if it was stored under the key's current sequence, so a deleted and
// recreated key starts out NULL in every thread.

struct key {
    unsigned seq;  // odd: in use
    void (*dtor)(void *);
};
struct tsd_slot {
    unsigned seq;
    void *value;
};
static struct key keys[PTHREAD_KEYS_MAX];
static struct lock key_lock;

int pthread_key_create(pthread_key_t *key, void (*dtor)(void *))
{
    __lock(&key_lock);
    for (unsigned k = 0; k < PTHREAD_KEYS_MAX; k++) {
        if (keys[k].seq & 1)
            continue;
        keys[k].dtor = dtor;
        __atomic_store_n(&keys[k].seq, keys[k].seq + 1, __ATOMIC_RELEASE);
        __unlock(&key_lock);
        *key = k;
        return 0;
    }
    __unlock(&key_lock);
    return EAGAIN;
}

int pthread_key_delete(pthread_key_t key)
{
    if (key >= PTHREAD_KEYS_MAX || !(keys[key].seq & 1))
        return EINVAL;
    __lock(&key_lock);
    __atomic_store_n(&keys[key].seq, keys[key].seq + 1, __ATOMIC_RELEASE);
    __unlock(&key_lock);
    return 0;
}

void *pthread_getspecific(pthread_key_t key)
{
    struct tsd_slot *tsd = (struct tsd_slot *)__self()->tsd;
    if (!tsd || key >= PTHREAD_KEYS_MAX)
        return NULL;
    unsigned seq = __atomic_load_n(&keys[key].seq, __ATOMIC_ACQUIRE);
    return tsd[key].seq == seq ? tsd[key].value : NULL;
}

int pthread_setspecific(pthread_key_t key, const void *value)
{
    if (key >= PTHREAD_KEYS_MAX || !(keys[key].seq & 1))
        return EINVAL;
    struct pthread *self = __self();
    if (!self->tsd && !(self->tsd = calloc(PTHREAD_KEYS_MAX, sizeof(struct tsd_slot))))
        return ENOMEM;
    struct tsd_slot *tsd = (struct tsd_slot *)self->tsd;
    tsd[key].seq = keys[key].seq;
    tsd[key].value = (void *)value;
    return 0;
}

void __tsd_run_destructors(struct pthread *t)
{
    struct tsd_slot *tsd = (struct tsd_slot *)t->tsd;
    if (!tsd)
        return;
    for (int round = 0; round < KEY_ITERATIONS; round++) {
        int again = 0;
        for (unsigned k = 0; k < PTHREAD_KEYS_MAX; k++) {
            unsigned seq = __atomic_load_n(&keys[k].seq, __ATOMIC_ACQUIRE);
            void (*dtor)(void *) = keys[k].dtor;
            if (!(seq & 1) || tsd[k].seq != seq || !tsd[k].value || !dtor)
                continue;
            void *v = tsd[k].value;
            tsd[k].value = NULL;
            dtor(v);
            again = 1;
        }
        if (!again)
            break;
    }
    free(tsd);
    t->tsd = NULL;
}
