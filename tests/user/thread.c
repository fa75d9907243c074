// Threads: pthreads over clone, set_tid_address and futex (musl), thread ids,
// join through CLONE_CHILD_CLEARTID, mutexes and condition variables under
// contention, exit of one thread vs exit_group, the futex call itself, and
// each thread's own GS base (arch_prctl) across switches, migration, fork,
// clone and execve, and children of one thread waited for by another.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// musl's headers have no <linux/futex.h> or <asm/prctl.h>.
#define ARCH_SET_GS 0x1001
#define ARCH_GET_GS 0x1004
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129

static int n, failed;

static void check(int ok, const char *name)
{
    n++;
    failed += !ok;
    printf("%s %d - %s\n", ok ? "ok" : "not ok", n, name);
    fflush(stdout);
}

static long futex(int *addr, int op, int val, const struct timespec *ts)
{
    return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

enum { NT = 8, ITER = 2000 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static int tids[NT];

static void *adder(void *arg)
{
    int i = (int)(intptr_t)arg;
    tids[i] = (int)syscall(SYS_gettid);
    for (int k = 0; k < ITER; k++) {
        pthread_mutex_lock(&mu);
        counter++;
        if (k % 256 == 0)
            sched_yield(); // hold the lock across a switch: others must wait
        pthread_mutex_unlock(&mu);
    }
    return (void *)(intptr_t)(i + 100);
}

static void test_create_join(void)
{
    pthread_t t[NT];
    int created = 0;
    for (int i = 0; i < NT; i++)
        created += pthread_create(&t[i], NULL, adder, (void *)(intptr_t)i) == 0;
    check(created == NT, "pthread_create x8");
    int rets_ok = 1;
    for (int i = 0; i < NT; i++) {
        void *r;
        rets_ok &= pthread_join(t[i], &r) == 0 && r == (void *)(intptr_t)(i + 100);
    }
    check(rets_ok, "pthread_join returns each thread's value");
    check(counter == (long)NT * ITER, "a mutex keeps 8 threads' increments exact");
    int distinct = 1;
    for (int i = 0; i < NT; i++) {
        distinct &= tids[i] > 0 && tids[i] != getpid();
        for (int j = 0; j < i; j++)
            distinct &= tids[i] != tids[j];
    }
    check(distinct, "threads have distinct tids, none equal to the pid");
}

static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn, rounds_done;

// Two threads take turns through a condition variable.
static void *pingpong(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (int r = 0; r < 200; r++) {
        pthread_mutex_lock(&mu);
        while (turn != me)
            pthread_cond_wait(&cv, &mu);
        turn = 1 - me;
        rounds_done++;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

static void test_condvar(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, pingpong, (void *)0);
    pthread_create(&b, NULL, pingpong, (void *)1);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    check(rounds_done == 400, "condition variable ping-pong, 400 turns");
}

static void *getpid_thread(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)getpid();
}

static void test_same_process(void)
{
    pthread_t t;
    void *r;
    pthread_create(&t, NULL, getpid_thread, NULL);
    pthread_join(t, &r);
    check((intptr_t)r == getpid(), "a thread's getpid is the process's");
}

static void *exit_three(void *arg)
{
    (void)arg;
    usleep(20000);
    _exit(3); // exit_group: the whole process, the blocked main thread too
}

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static void test_exit_group_from_thread(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        pthread_t a, b;
        pthread_create(&b, NULL, sleeper, NULL);
        pthread_create(&a, NULL, exit_three, NULL);
        for (;;)
            pause();
    }
    int st;
    check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 3,
          "exit from a thread ends every thread with its status");
}

static void *thread_exit_only(void *arg)
{
    (void)arg;
    pthread_exit(NULL); // SYS_exit: this thread alone
}

static void test_thread_exit_leaves_process(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        pthread_t t;
        pthread_create(&t, NULL, thread_exit_only, NULL);
        pthread_join(t, NULL); // CLONE_CHILD_CLEARTID wakes us
        _exit(4);
    }
    int st;
    check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 4,
          "exit of one thread leaves the process running");
}

static char argcheck_path[300];

static void *exec_from_thread(void *arg)
{
    (void)arg;
    char *a[] = {"argcheck", "1", "2", "3", "4", NULL};
    execv(argcheck_path, a);
    return NULL;
}

static void test_exec_from_thread(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        pthread_t t, s;
        pthread_create(&s, NULL, sleeper, NULL);
        pthread_create(&t, NULL, exec_from_thread, NULL);
        for (;;)
            pause();
    }
    int st;
    check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 5,
          "execve from a thread replaces the whole process");
}

static volatile int exec_go;

static void *exec_on_go(void *arg)
{
    (void)arg;
    while (!exec_go)
        ;
    char *a[] = {"argcheck", "1", "2", "3", "4", NULL};
    execv(argcheck_path, a);
    return NULL;
}

// Four threads call execve at once, 20 times over: one exec wins and the
// others die, every time. (Two execs that each waited for the other thread
// to leave hung for ever.) A process that has not ended after 30 s fails.
static void test_exec_from_threads_at_once(void)
{
    int ok = 0, rounds = 20;
    for (int r = 0; r < rounds; r++) {
        pid_t pid = fork();
        if (pid == 0) {
            pthread_t t[4];
            for (int i = 0; i < 4; i++)
                pthread_create(&t[i], NULL, exec_on_go, NULL);
            exec_go = 1;
            for (;;)
                pause();
        }
        int st = 0;
        pid_t w = 0;
        for (int ms = 0; ms < 30000 && (w = waitpid(pid, &st, WNOHANG)) == 0; ms += 10)
            usleep(10000);
        if (w != pid) {
            printf("# round %d: the process did not end\n", r);
            kill(pid, SIGKILL);
            break;
        }
        ok += WIFEXITED(st) && WEXITSTATUS(st) == 5;
    }
    check(ok == rounds, "execve in four threads at once: one wins, the process ends (20 rounds)");
}

static void *forker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(i);
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != i)
            return (void *)1;
    }
    return NULL;
}

static void test_threads_fork_concurrently(void)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, forker, NULL);
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += r != NULL;
    }
    check(bad == 0, "4 threads fork and wait 20 children each");
}

// Each thread keeps its own vector registers across switches: two threads on one
// CPU load different patterns into xmm7 (and ymm7 where AVX exists), yield
// inside the same asm statement, and read them back.
static void *vector_keeper(void *arg)
{
    unsigned char fill = (unsigned char)(uintptr_t)arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    sched_setaffinity(0, sizeof set, &set);
    int avx = __builtin_cpu_supports("avx");
    unsigned char in[32], out[32];
    memset(in, fill, sizeof in);
    for (int i = 0; i < 200; i++) {
        memset(out, 0, sizeof out);
        if (avx)
            __asm__ volatile("vmovdqu (%0), %%ymm7\n\tmov $24, %%eax\n\tsyscall\n\t"
                             "vmovdqu %%ymm7, (%1)"
                             : : "r"(in), "r"(out) : "rax", "rcx", "r11", "memory", "xmm7");
        else
            __asm__ volatile("movdqu (%0), %%xmm7\n\tmov $24, %%eax\n\tsyscall\n\t"
                             "movdqu %%xmm7, (%1)"
                             : : "r"(in), "r"(out) : "rax", "rcx", "r11", "memory", "xmm7");
        if (memcmp(in, out, avx ? 32 : 16) != 0)
            return (void *)1;
    }
    return NULL;
}

static void test_vector_registers_private(void)
{
    pthread_t a, b;
    void *ra = (void *)1, *rb = (void *)1;
    pthread_create(&a, NULL, vector_keeper, (void *)0x5a);
    pthread_create(&b, NULL, vector_keeper, (void *)0xc3);
    pthread_join(a, &ra);
    pthread_join(b, &rb);
    check(ra == NULL && rb == NULL, "vector registers are private to each thread");
}

static int word;

static void *waker(void *arg)
{
    (void)arg;
    usleep(20000);
    __atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
    futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL);
    return NULL;
}

static void test_futex(void)
{
    int v = 5;
    errno = 0;
    check(futex(&v, FUTEX_WAIT_PRIVATE, 4, NULL) == -1 && errno == EAGAIN,
          "FUTEX_WAIT on a changed value is EAGAIN");
    struct timespec ts = {0, 20000000};
    errno = 0;
    check(futex(&v, FUTEX_WAIT_PRIVATE, 5, &ts) == -1 && errno == ETIMEDOUT,
          "FUTEX_WAIT times out with ETIMEDOUT");
    check(futex(&v, FUTEX_WAKE_PRIVATE, 1, NULL) == 0, "FUTEX_WAKE without waiters wakes 0");
    errno = 0;
    check(futex((int *)((char *)&v + 1), FUTEX_WAIT_PRIVATE, 5, NULL) == -1 && errno == EINVAL,
          "FUTEX_WAIT on an unaligned word is EINVAL");
    errno = 0;
    check(futex((int *)8, FUTEX_WAIT_PRIVATE, 5, NULL) == -1 && errno == EFAULT,
          "FUTEX_WAIT on a bad address is EFAULT");
    pthread_t t;
    word = 0;
    pthread_create(&t, NULL, waker, NULL);
    int woke = 1;
    while (__atomic_load_n(&word, __ATOMIC_SEQ_CST) == 0) {
        long r = futex(&word, FUTEX_WAIT_PRIVATE, 0, NULL);
        woke &= r == 0 || errno == EAGAIN;
    }
    pthread_join(t, NULL);
    check(woke && word == 1, "FUTEX_WAIT is woken by FUTEX_WAKE");
}

static void *affinity_thread(void *arg)
{
    (void)arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        return (void *)1;
    for (int i = 0; i < 20; i++) {
        if (sched_getcpu() != 0)
            return (void *)2;
        sched_yield();
    }
    return NULL;
}

static void test_thread_affinity(void)
{
    pthread_t t;
    void *r = (void *)-1;
    pthread_create(&t, NULL, affinity_thread, NULL);
    pthread_join(t, &r);
    check(r == NULL, "a thread pinned to CPU 0 runs only there");
}

// ---- the user GS base (arch_prctl ARCH_SET_GS / ARCH_GET_GS) ----

static long set_gs(const void *base) { return syscall(SYS_arch_prctl, ARCH_SET_GS, base); }

static uintptr_t get_gs(void)
{
    uintptr_t v = 1; // no GS base is odd here: every one we set is a word's address
    if (syscall(SYS_arch_prctl, ARCH_GET_GS, &v) != 0)
        return 1;
    return v;
}

static uint64_t gs_word0(void)
{
    uint64_t v;
    __asm__ volatile("mov %%gs:0, %0" : "=r"(v));
    return v;
}

// The GS base and %gs:0 both still name word, holding val.
static int gs_is(const uint64_t *word, uint64_t val)
{
    return get_gs() == (uintptr_t)word && gs_word0() == val;
}

static uint64_t main_gs_word = 0x6a5b4c3d2e1f0011ULL;

static void test_gs_base_set_get(void)
{
    check(set_gs(&main_gs_word) == 0, "ARCH_SET_GS to a word");
    check(gs_is(&main_gs_word, main_gs_word), "ARCH_GET_GS returns it and %gs:0 reads the word");
    sched_yield();
    usleep(2000);
    check(gs_is(&main_gs_word, main_gs_word), "the GS base survives sched_yield and a sleep");
}

// Pinned to each allowed CPU in turn (at most 8): the base moves along.
static void test_gs_base_migrates(void)
{
    cpu_set_t orig, one;
    if (sched_getaffinity(0, sizeof orig, &orig) != 0) {
        check(0, "sched_getaffinity");
        return;
    }
    int ok = 1, cpus = 0;
    for (int c = 0; c < CPU_SETSIZE && cpus < 8; c++) {
        if (!CPU_ISSET(c, &orig))
            continue;
        cpus++;
        CPU_ZERO(&one);
        CPU_SET(c, &one);
        ok &= sched_setaffinity(0, sizeof one, &one) == 0;
        ok &= sched_getcpu() == c && gs_is(&main_gs_word, main_gs_word);
        sched_yield();
        ok &= gs_is(&main_gs_word, main_gs_word);
    }
    sched_setaffinity(0, sizeof orig, &orig);
    check(ok && cpus > 0, "the GS base stays across migration to every CPU");
}

// Two threads on one CPU, each with its own base, switch back and forth.
static void *gs_keeper(void *arg)
{
    uint64_t word = (uint64_t)(uintptr_t)arg;
    int ok = get_gs() == (uintptr_t)&main_gs_word; // clone copies the creator's base
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    sched_setaffinity(0, sizeof set, &set);
    ok &= set_gs(&word) == 0;
    for (int i = 0; i < 200; i++) {
        ok &= gs_is(&word, (uint64_t)(uintptr_t)arg);
        sched_yield();
    }
    return ok ? NULL : (void *)1;
}

static void test_gs_base_per_thread(void)
{
    pthread_t a, b;
    void *ra = (void *)1, *rb = (void *)1;
    pthread_create(&a, NULL, gs_keeper, (void *)0x1111);
    pthread_create(&b, NULL, gs_keeper, (void *)0x2222);
    pthread_join(a, &ra);
    pthread_join(b, &rb);
    check(ra == NULL && rb == NULL, "a new thread starts with its creator's GS base, then keeps its own");
    check(gs_is(&main_gs_word, main_gs_word), "other threads' ARCH_SET_GS leave ours alone");
}

static char gsbase_path[300]; // tests/kernel/progs/gsbase.c: exits 0 if its GS base is 0

static void test_gs_base_fork_exec(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(gs_is(&main_gs_word, main_gs_word) ? 0 : 1);
    int st = -1;
    waitpid(pid, &st, 0);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork's child inherits the GS base");
    pid = fork();
    if (pid == 0) {
        execl(gsbase_path, "gsbase", (char *)NULL);
        _exit(3);
    }
    waitpid(pid, &st, 0);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "execve resets the GS base to 0");
}

static void test_gs_base_bad_input(void)
{
    errno = 0;
    check(syscall(SYS_arch_prctl, ARCH_SET_GS, 0x800000000000UL) == -1 && errno == EPERM,
          "ARCH_SET_GS to a non-canonical address is EPERM");
    errno = 0;
    check(syscall(SYS_arch_prctl, ARCH_GET_GS, NULL) == -1 && errno == EFAULT,
          "ARCH_GET_GS to NULL is EFAULT");
    check(gs_is(&main_gs_word, main_gs_word), "a refused ARCH_SET_GS keeps the old base");
    check(set_gs(NULL) == 0 && get_gs() == 0, "ARCH_SET_GS to 0");
}

// A child belongs to the process, whichever thread forked it: another thread
// (here main) waits for it by pid and for any child, also after the forking
// thread has exited, and a thread that waits for its own child by pid sees it.
static void *fork_child(void *arg)
{
    int code = (int)(intptr_t)arg;
    pid_t pid = fork();
    if (pid == 0)
        _exit(code);
    return (void *)(intptr_t)pid;
}

static void *fork_and_wait(void *arg)
{
    int code = (int)(intptr_t)arg, st = 0;
    pid_t pid = fork();
    if (pid == 0)
        _exit(code);
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return (void *)0;
    return (void *)(intptr_t)(WIFEXITED(st) && WEXITSTATUS(st) == code);
}

static void test_children_of_threads(void)
{
    pthread_t a, b, c, d;
    void *ra = 0, *rb = 0, *rc = 0, *rd = 0;
    pthread_create(&a, NULL, fork_child, (void *)11);
    pthread_create(&b, NULL, fork_child, (void *)12);
    pthread_join(a, &ra);
    pthread_join(b, &rb);
    pid_t pa = (pid_t)(intptr_t)ra, pb = (pid_t)(intptr_t)rb;
    int st = 0;
    check(pa > 0 && waitpid(pa, &st, 0) == pa && WIFEXITED(st) && WEXITSTATUS(st) == 11,
          "waitpid(pid) for the child of a thread that has exited");
    st = 0;
    pid_t w = waitpid(-1, &st, 0);
    check(pb > 0 && w == pb && WIFEXITED(st) && WEXITSTATUS(st) == 12,
          "waitpid(-1) finds the child of another (exited) thread");
    check(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "then no children are left");
    pthread_create(&c, NULL, fork_and_wait, (void *)21);
    pthread_create(&d, NULL, fork_and_wait, (void *)22);
    pthread_join(c, &rc);
    pthread_join(d, &rd);
    check(rc == (void *)1 && rd == (void *)1, "two threads each fork and wait for their own child");
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *slash = strrchr(argv[0], '/');
    // The helper programs: beside this binary on the host, in /tests/bin in our guest.
    const char *bin = slash ? argv[0] : "/tests/bin";
    int dir = slash ? (int)(slash - argv[0]) : (int)strlen(bin);
    snprintf(argcheck_path, sizeof argcheck_path, "%.*s/argcheck", dir, bin);
    snprintf(gsbase_path, sizeof gsbase_path, "%.*s/gsbase", dir, bin);
    test_create_join();
    test_condvar();
    test_same_process();
    test_exit_group_from_thread();
    test_thread_exit_leaves_process();
    test_exec_from_thread();
    test_exec_from_threads_at_once();
    test_threads_fork_concurrently();
    test_children_of_threads();
    test_vector_registers_private();
    test_futex();
    test_thread_affinity();
    test_gs_base_set_get();
    test_gs_base_migrates();
    test_gs_base_per_thread();
    test_gs_base_fork_exec();
    test_gs_base_bad_input();
    printf("%d passed, %d failed\n", n - failed, failed);
    return failed != 0;
}
