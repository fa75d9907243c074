// libc's private interfaces: raw system calls, the thread control block, the
// internal lock, and hooks between the library's parts.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "../../kernel/uapi/unistd.h"
#include "../../kernel/uapi/ext.h"

#define hidden __attribute__((visibility("hidden")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

// ---- raw system calls: return the kernel's value (-errno on failure) --------
static inline long __syscall0(long n)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n) : "rcx", "r11", "memory");
    return r;
}
static inline long __syscall1(long n, long a)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a) : "rcx", "r11", "memory");
    return r;
}
static inline long __syscall2(long n, long a, long b)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b) : "rcx", "r11", "memory");
    return r;
}
static inline long __syscall3(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return r;
}
static inline long __syscall4(long n, long a, long b, long c, long d)
{
    long r;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return r;
}
static inline long __syscall5(long n, long a, long b, long c, long d, long e)
{
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return r;
}
static inline long __syscall6(long n, long a, long b, long c, long d, long e, long f)
{
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall" : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return r;
}

#define __SC_NARGS(...) __SC_NARGS_(__VA_ARGS__, 6, 5, 4, 3, 2, 1, 0)
#define __SC_NARGS_(a, b, c, d, e, f, g, n, ...) n
#define __SC_CAT(a, b) __SC_CAT_(a, b)
#define __SC_CAT_(a, b) a##b
#define __SC_L(x) ((long)(x))
#define __sc0(n) __syscall0(n)
#define __sc1(n, a) __syscall1(n, __SC_L(a))
#define __sc2(n, a, b) __syscall2(n, __SC_L(a), __SC_L(b))
#define __sc3(n, a, b, c) __syscall3(n, __SC_L(a), __SC_L(b), __SC_L(c))
#define __sc4(n, a, b, c, d) __syscall4(n, __SC_L(a), __SC_L(b), __SC_L(c), __SC_L(d))
#define __sc5(n, a, b, c, d, e) \
    __syscall5(n, __SC_L(a), __SC_L(b), __SC_L(c), __SC_L(d), __SC_L(e))
#define __sc6(n, a, b, c, d, e, f) \
    __syscall6(n, __SC_L(a), __SC_L(b), __SC_L(c), __SC_L(d), __SC_L(e), __SC_L(f))
// __sys(nr, args...): raw result. sys(nr, args...): -1 and errno on failure.
#define __sys(...) __SC_CAT(__sc, __SC_NARGS(__VA_ARGS__))(__VA_ARGS__)
#define sys(...) __syscall_ret(__sys(__VA_ARGS__))
hidden long __syscall_ret(long r);

// ---- futex ------------------------------------------------------------------
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_PRIVATE 128
struct timespec;
hidden int __futex_wait(volatile int *addr, int val, const struct timespec *timeout);
hidden void __futex_wake(volatile int *addr, int n);

// ---- internal lock: a futex word, 0 free, 1 held, 2 held with waiters ------
struct lock {
    volatile int v;
};
hidden void __lock(struct lock *l);
hidden void __unlock(struct lock *l);

// ---- per-thread state: the thread control block FS points at ---------------
// Layout at the start is fixed by the x86-64 TLS ABI: %fs:0 holds the TCB's own
// address, and gcc's stack protector reads the canary at %fs:0x28.
#define MALLOC_NCLASS 43
struct tcache_bin {
    void *head;
    unsigned count;
    unsigned limit;
};
struct tsd_slot;
struct pthread {
    struct pthread *self;          // 0x00: %fs:0
    void *dtv;                     // 0x08: unused (static TLS only)
    void *unused[3];               // 0x10
    uintptr_t canary;              // 0x28: stack-protector canary
    volatile int tid;              // cleared by the kernel at exit (CLONE_CHILD_CLEARTID)
    volatile int state;            // THREAD_JOINABLE / DETACHED / EXITED
    void *(*start)(void *);
    void *arg;
    void *result;
    void *map;                     // the mapping holding stack, TLS and this block
    size_t map_size;
    int errno_val;
    int tsd_used;
    void **tsd;                    // thread-specific data (pthread keys), lazily allocated
    int has_affinity;              // pthread_attr_setaffinity_np: applied by the new thread
    unsigned long affinity[16];    //   before it runs its start routine
    struct tcache_bin tcache[MALLOC_NCLASS];
    char *bump, *bump_end;         // malloc: this thread's own chunk to carve blocks from
};
enum { THREAD_JOINABLE, THREAD_DETACHED, THREAD_EXITED };

static inline struct pthread *__self(void)
{
    struct pthread *p;
    __asm__("mov %%fs:0, %0" : "=r"(p));
    return p;
}

// Static TLS image of the executable (from its PT_TLS segment), found at start-up.
struct tls_image {
    const void *init;   // .tdata image
    size_t filesz;      // bytes of .tdata
    size_t memsz;       // .tdata + .tbss
    size_t align;
    size_t offset;      // memsz rounded up to align: the block ends at the TCB
};
hidden extern struct tls_image __tls;
// Lay out a TLS block and TCB inside [mem, mem+size); returns the TCB.
hidden struct pthread *__tls_setup(void *mem, size_t size);
hidden size_t __tls_size(void);  // bytes __tls_setup needs (incl. alignment slack)

// ---- hooks between parts -----------------------------------------------------
hidden extern size_t __page_size;
hidden void __malloc_thread_init(struct pthread *t);
hidden void __malloc_thread_exit(struct pthread *t);
hidden void __malloc_atfork(int phase);  // 0 before fork, 1 parent after, 2 child after
hidden void __stdio_exit(void);
hidden void __stdio_atfork(int phase);
hidden void __tsd_run_destructors(struct pthread *t);
hidden void __fork_handlers(int phase);
hidden void __environ_init(char **envp);
hidden int __clone(int (*fn)(void *), void *stack, int flags, void *arg,
                   int *ptid, void *tls, int *ctid);
hidden void __restore_rt(void);
hidden void __block_all_signals(void *old);
hidden void __restore_signals(const void *old);
hidden char *__path_search(const char *file, char *buf, size_t size, const char **next);
hidden extern char **__auxv_ptr;
