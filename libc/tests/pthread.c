// Threads: create/join/detach, per-thread TLS and errno, mutexes (contended
// counter, recursive, error checking), condition variables, once, keys with
// destructors, rwlocks, barriers, affinity.
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tap.h"

#define NT 4

static void *ret_arg(void *arg) { return arg; }

static void *where_am_i(void *arg)
{
    (void)arg;
    cpu_set_t s;
    CPU_ZERO(&s);
    pthread_getaffinity_np(pthread_self(), sizeof s, &s);
    return (void *)(long)(CPU_COUNT(&s) == 1 ? sched_getcpu() : -1);
}

static _Thread_local int tls_var = 5;
static _Thread_local char tls_big[1000];

static void *tls_worker(void *arg)
{
    long id = (long)arg;
    int ok = tls_var == 5 && tls_big[999] == 0;
    tls_var = (int)id;
    tls_big[999] = (char)id;
    errno = (int)id + 100;
    sched_yield();
    ok &= tls_var == id && tls_big[999] == id && errno == id + 100;
    return (void *)(long)ok;
}

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *count_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100000; i++) {
        pthread_mutex_lock(&m);
        counter++;
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stage, consumed;

static void *consumer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    while (stage < 1)
        pthread_cond_wait(&cv, &m);
    consumed++;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&m);
    return NULL;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_runs;
static void once_fn(void)
{
    usleep(10000);  // make the others wait for us
    once_runs++;
}
static void *once_worker(void *arg)
{
    (void)arg;
    pthread_once(&once, once_fn);
    return (void *)(long)once_runs;
}

static pthread_key_t key;
static int dtor_calls;
static pthread_mutex_t dtor_lock = PTHREAD_MUTEX_INITIALIZER;
static void dtor(void *v)
{
    pthread_mutex_lock(&dtor_lock);
    dtor_calls += *(int *)v == 77;
    pthread_mutex_unlock(&dtor_lock);
    free(v);
}
static void *key_worker(void *arg)
{
    (void)arg;
    int ok = pthread_getspecific(key) == NULL;
    int *v = malloc(sizeof *v);
    *v = 77;
    pthread_setspecific(key, v);
    ok &= pthread_getspecific(key) == v;
    return (void *)(long)ok;
}

static volatile int detached_ran;
static void *detached_worker(void *arg)
{
    (void)arg;
    __atomic_add_fetch(&detached_ran, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static pthread_barrier_t barrier;
static int arrived;
static void *barrier_worker(void *arg)
{
    (void)arg;
    __atomic_add_fetch(&arrived, 1, __ATOMIC_SEQ_CST);
    int r = pthread_barrier_wait(&barrier);
    int all = __atomic_load_n(&arrived, __ATOMIC_SEQ_CST) == NT;
    return (void *)(long)(all ? (r == PTHREAD_BARRIER_SERIAL_THREAD ? 2 : 1) : 0);
}

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long rw_value;
static void *rw_worker(void *arg)
{
    long id = (long)arg, bad = 0;
    for (int i = 0; i < 20000; i++) {
        if (i % 10 == id) {
            pthread_rwlock_wrlock(&rw);
            rw_value++;
            rw_value++;
            pthread_rwlock_unlock(&rw);
        } else {
            pthread_rwlock_rdlock(&rw);
            bad += rw_value & 1;  // a reader never sees a writer's half-update
            pthread_rwlock_unlock(&rw);
        }
    }
    return (void *)bad;
}

int main(void)
{
    pthread_t t[NT];
    void *r;
    check(pthread_create(&t[0], NULL, ret_arg, (void *)1234) == 0 && pthread_join(t[0], &r) == 0 &&
          r == (void *)1234, "create and join pass the argument and result");
    check(pthread_equal(pthread_self(), pthread_self()) && !pthread_equal(pthread_self(), t[0]),
          "pthread_self/pthread_equal");

    tls_var = 99;
    errno = 0;
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, tls_worker, (void *)i);
    long ok = 1;
    for (int i = 0; i < NT; i++) {
        pthread_join(t[i], &r);
        ok &= (long)r;
    }
    check(ok && tls_var == 99 && errno == 0, "TLS variables and errno are per thread");

    for (int i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, count_worker, NULL);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    check(counter == NT * 100000L, "mutex: %d threads x 100000 increments = %ld", NT, counter);

    for (int i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, consumer, NULL);
    usleep(20000);
    pthread_mutex_lock(&m);
    stage = 1;
    pthread_cond_broadcast(&cv);
    while (consumed < NT)
        pthread_cond_wait(&cv, &m);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    check(consumed == NT, "condition variable: broadcast wakes all waiters");

    pthread_mutex_lock(&m);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 20 * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    int tr = pthread_cond_timedwait(&cv, &m, &ts);
    pthread_mutex_unlock(&m);
    check(tr == ETIMEDOUT, "pthread_cond_timedwait times out (%d)", tr);

    for (int i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, once_worker, NULL);
    ok = 1;
    for (int i = 0; i < NT; i++) {
        pthread_join(t[i], &r);
        ok &= (long)r == 1;
    }
    check(ok && once_runs == 1, "pthread_once runs once; others wait for it to finish");

    check(pthread_key_create(&key, dtor) == 0, "pthread_key_create");
    int mine = 5;
    pthread_setspecific(key, &mine);
    for (int i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, key_worker, NULL);
    ok = 1;
    for (int i = 0; i < NT; i++) {
        pthread_join(t[i], &r);
        ok &= (long)r;
    }
    check(ok && pthread_getspecific(key) == &mine, "keys: values are per thread");
    check(dtor_calls == NT, "keys: destructors ran at thread exit (%d)", dtor_calls);
    pthread_key_delete(key);
    pthread_key_t key2;
    pthread_key_create(&key2, NULL);
    check(pthread_getspecific(key2) == NULL, "a recreated key starts out NULL");

    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_t rm;
    pthread_mutex_init(&rm, &ma);
    check(pthread_mutex_lock(&rm) == 0 && pthread_mutex_lock(&rm) == 0 &&
          pthread_mutex_unlock(&rm) == 0 && pthread_mutex_trylock(&rm) == 0 &&
          pthread_mutex_unlock(&rm) == 0 && pthread_mutex_unlock(&rm) == 0 &&
          pthread_mutex_unlock(&rm) == EPERM, "recursive mutex");
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_t em;
    pthread_mutex_init(&em, &ma);
    check(pthread_mutex_lock(&em) == 0 && pthread_mutex_lock(&em) == EDEADLK &&
          pthread_mutex_unlock(&em) == 0 && pthread_mutex_unlock(&em) == EPERM,
          "error-checking mutex");
    check(pthread_mutex_trylock(&m) == 0 && pthread_mutex_trylock(&m) == EBUSY &&
          pthread_mutex_unlock(&m) == 0, "trylock on a held mutex: EBUSY");

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (int i = 0; i < 50; i++)
        pthread_create(&t[0], &attr, detached_worker, NULL);
    pthread_create(&t[0], NULL, detached_worker, NULL);
    check(pthread_detach(t[0]) == 0, "pthread_detach");
    for (int i = 0; i < 10000 && detached_ran < 51; i++)  // at most 10 s
        usleep(1000);
    check(detached_ran == 51, "detached threads ran (%d)", detached_ran);
    check(pthread_join(pthread_self(), NULL) == EDEADLK, "joining yourself: EDEADLK");

    pthread_barrier_init(&barrier, NULL, NT);
    for (int i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, barrier_worker, NULL);
    int serial = 0;
    ok = 1;
    for (int i = 0; i < NT; i++) {
        pthread_join(t[i], &r);
        ok &= (long)r != 0;
        serial += (long)r == 2;
    }
    check(ok && serial == 1, "barrier: nobody leaves early, one serial thread");

    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, rw_worker, (void *)i);
    long bad = 0;
    for (int i = 0; i < NT; i++) {
        pthread_join(t[i], &r);
        bad += (long)r;
    }
    check(bad == 0 && rw_value == 2 * NT * 2000, "rwlock: readers never see a partial write");

    cpu_set_t set;
    CPU_ZERO(&set);
    check(pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0 && CPU_COUNT(&set) >= 1,
          "pthread_getaffinity_np (%d CPUs)", CPU_COUNT(&set));
    int first = 0;
    while (!CPU_ISSET(first, &set))
        first++;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    check(pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0 && sched_getcpu() == first,
          "pthread_setaffinity_np pins to CPU %d", first);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);

    // A thread created with an affinity attribute starts out pinned.
    int last = CPU_SETSIZE - 1;
    while (!CPU_ISSET(last, &set))
        last--;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    pthread_attr_t pa;
    pthread_attr_init(&pa);
    pthread_attr_setaffinity_np(&pa, sizeof one, &one);
    pthread_create(&t[0], &pa, where_am_i, NULL);
    pthread_attr_destroy(&pa);  // the thread must not depend on the attribute
    pthread_join(t[0], &r);
    check((long)r == last, "pthread_attr_setaffinity_np: the thread starts on CPU %d (%ld)", last,
          (long)r);
    return tap_done();
}
