// POSIX threads on clone() and futexes.
#pragma once
#include <sched.h>
#include <sys/types.h>
#include <time.h>

typedef struct {
    size_t __stacksize;
    size_t __guardsize;
    void *__stackaddr;
    int __detach;
    int __has_affinity;
    cpu_set_t *__affinity;
    long __reserved[2];
} pthread_attr_t;

// __lock: 0 free, 1 locked, 2 locked with waiters (a futex word).
typedef struct {
    int __lock;
    int __type;
    int __owner;
    int __count;
    long __reserved[3];
} pthread_mutex_t;
typedef struct { int __type; } pthread_mutexattr_t;

// __seq: a futex word bumped by every signal/broadcast.
typedef struct {
    unsigned __seq;
    int __clock;
    long __reserved[5];
} pthread_cond_t;
typedef struct { int __clock; } pthread_condattr_t;

typedef struct {
    int __lock;
    int __readers;
    int __writer;
    int __waiters;
    long __reserved[5];
} pthread_rwlock_t;
typedef struct { int __dummy; } pthread_rwlockattr_t;

typedef struct {
    pthread_mutex_t __m;
    pthread_cond_t __c;
    unsigned __count;
    unsigned __waiting;
    unsigned __phase;
} pthread_barrier_t;
typedef struct { int __dummy; } pthread_barrierattr_t;

typedef int pthread_once_t;
typedef unsigned pthread_key_t;
typedef int pthread_spinlock_t;

#define PTHREAD_MUTEX_NORMAL 0
#define PTHREAD_MUTEX_RECURSIVE 1
#define PTHREAD_MUTEX_ERRORCHECK 2
#define PTHREAD_MUTEX_DEFAULT PTHREAD_MUTEX_NORMAL
#define PTHREAD_CREATE_JOINABLE 0
#define PTHREAD_CREATE_DETACHED 1
#define PTHREAD_PROCESS_PRIVATE 0
#define PTHREAD_PROCESS_SHARED 1
#define PTHREAD_CANCEL_ENABLE 0
#define PTHREAD_CANCEL_DISABLE 1
#define PTHREAD_BARRIER_SERIAL_THREAD (-1)
#define PTHREAD_MUTEX_INITIALIZER {0, 0, 0, 0, {0}}
#define PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP {0, PTHREAD_MUTEX_RECURSIVE, 0, 0, {0}}
#define PTHREAD_COND_INITIALIZER {0, 0, {0}}
#define PTHREAD_RWLOCK_INITIALIZER {0, 0, 0, 0, {0}}
#define PTHREAD_ONCE_INIT 0

int pthread_create(pthread_t *restrict t, const pthread_attr_t *restrict attr,
                   void *(*fn)(void *), void *restrict arg);
int pthread_join(pthread_t t, void **ret);
int pthread_detach(pthread_t t);
_Noreturn void pthread_exit(void *ret);
pthread_t pthread_self(void);
int pthread_equal(pthread_t a, pthread_t b);
int pthread_setaffinity_np(pthread_t t, size_t size, const cpu_set_t *set);
int pthread_getaffinity_np(pthread_t t, size_t size, cpu_set_t *set);
int pthread_setname_np(pthread_t t, const char *name);
pid_t pthread_gettid_np(pthread_t t);

int pthread_attr_init(pthread_attr_t *a);
int pthread_attr_destroy(pthread_attr_t *a);
int pthread_attr_setstacksize(pthread_attr_t *a, size_t size);
int pthread_attr_getstacksize(const pthread_attr_t *restrict a, size_t *restrict size);
int pthread_attr_setguardsize(pthread_attr_t *a, size_t size);
int pthread_attr_setdetachstate(pthread_attr_t *a, int state);
int pthread_attr_getdetachstate(const pthread_attr_t *a, int *state);
int pthread_attr_setaffinity_np(pthread_attr_t *a, size_t size, const cpu_set_t *set);

int pthread_mutex_init(pthread_mutex_t *restrict m, const pthread_mutexattr_t *restrict a);
int pthread_mutex_destroy(pthread_mutex_t *m);
int pthread_mutex_lock(pthread_mutex_t *m);
int pthread_mutex_trylock(pthread_mutex_t *m);
int pthread_mutex_unlock(pthread_mutex_t *m);
int pthread_mutexattr_init(pthread_mutexattr_t *a);
int pthread_mutexattr_destroy(pthread_mutexattr_t *a);
int pthread_mutexattr_settype(pthread_mutexattr_t *a, int type);
int pthread_mutexattr_gettype(const pthread_mutexattr_t *restrict a, int *restrict type);

int pthread_cond_init(pthread_cond_t *restrict c, const pthread_condattr_t *restrict a);
int pthread_cond_destroy(pthread_cond_t *c);
int pthread_cond_wait(pthread_cond_t *restrict c, pthread_mutex_t *restrict m);
int pthread_cond_timedwait(pthread_cond_t *restrict c, pthread_mutex_t *restrict m,
                           const struct timespec *restrict abstime);
int pthread_cond_signal(pthread_cond_t *c);
int pthread_cond_broadcast(pthread_cond_t *c);
int pthread_condattr_init(pthread_condattr_t *a);
int pthread_condattr_destroy(pthread_condattr_t *a);
int pthread_condattr_setclock(pthread_condattr_t *a, clockid_t clk);

int pthread_rwlock_init(pthread_rwlock_t *restrict l, const pthread_rwlockattr_t *restrict a);
int pthread_rwlock_destroy(pthread_rwlock_t *l);
int pthread_rwlock_rdlock(pthread_rwlock_t *l);
int pthread_rwlock_wrlock(pthread_rwlock_t *l);
int pthread_rwlock_tryrdlock(pthread_rwlock_t *l);
int pthread_rwlock_trywrlock(pthread_rwlock_t *l);
int pthread_rwlock_unlock(pthread_rwlock_t *l);

int pthread_barrier_init(pthread_barrier_t *restrict b, const pthread_barrierattr_t *restrict a,
                         unsigned count);
int pthread_barrier_destroy(pthread_barrier_t *b);
int pthread_barrier_wait(pthread_barrier_t *b);

int pthread_spin_init(pthread_spinlock_t *s, int pshared);
int pthread_spin_destroy(pthread_spinlock_t *s);
int pthread_spin_lock(pthread_spinlock_t *s);
int pthread_spin_trylock(pthread_spinlock_t *s);
int pthread_spin_unlock(pthread_spinlock_t *s);

int pthread_once(pthread_once_t *once, void (*fn)(void));
int pthread_key_create(pthread_key_t *key, void (*dtor)(void *));
int pthread_key_delete(pthread_key_t key);
void *pthread_getspecific(pthread_key_t key);
int pthread_setspecific(pthread_key_t key, const void *value);
int pthread_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));
