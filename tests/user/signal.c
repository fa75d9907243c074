// Signals: handlers with and without SA_SIGINFO, masks and pending signals,
// SA_RESETHAND, SA_NODEFER, sigaltstack, default actions, faults delivered as
// SIGSEGV/SIGILL/SIGFPE with si_code and si_addr, SIGCHLD, EINTR and SA_RESTART
// for blocking calls, sigsuspend, signals aimed at one thread, and per-thread
// masks.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static int n, failed;
static volatile uintptr_t bad_addr = 16; // not constant: the compiler must not judge it

static void check(int ok, const char *name)
{
    n++;
    failed += !ok;
    printf("%s %d - %s\n", ok ? "ok" : "not ok", n, name);
    fflush(stdout);
}

static void on(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void dfl(int sig) { signal(sig, SIG_DFL); }

static volatile sig_atomic_t hits, last_sig, last_code, last_pid, depth, max_depth, sends;
static void *volatile last_addr;

static void record(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    hits++;
    last_sig = sig;
    last_code = si->si_code;
    last_pid = si->si_pid;
    last_addr = si->si_addr;
}

static void test_handler_runs(void)
{
    hits = 0;
    on(SIGUSR1, record, 0);
    kill(getpid(), SIGUSR1);
    check(hits == 1 && last_sig == SIGUSR1, "a handler runs for kill to self");
    check(last_code == SI_USER && last_pid == getpid(), "siginfo: SI_USER and the sender's pid");
    dfl(SIGUSR1);
}

static volatile long saved_regs_ok;

// The handler clobbers registers; the interrupted computation must not notice.
static void clobber(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    volatile double x = 3.5;
    for (int i = 0; i < 10; i++)
        x = x * 1.5 + 1.0;
    hits++;
}

static void test_context_restored(void)
{
    hits = 0;
    on(SIGUSR2, clobber, 0);
    double acc = 1.0;
    long sum = 0;
    for (int i = 0; i < 100; i++) {
        if (i == 50)
            kill(getpid(), SIGUSR2);
        acc = acc * 1.01;
        sum += i;
    }
    check(hits == 1 && sum == 4950 && acc > 2.70 && acc < 2.71,
          "registers and FP state survive a handler");
    dfl(SIGUSR2);
}

static void test_mask_and_pending(void)
{
    hits = 0;
    on(SIGUSR1, record, 0);
    sigset_t set, old, pend;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, &old);
    kill(getpid(), SIGUSR1);
    kill(getpid(), SIGUSR1); // standard signals do not queue
    sigpending(&pend);
    check(hits == 0 && sigismember(&pend, SIGUSR1), "a blocked signal stays pending");
    sigprocmask(SIG_SETMASK, &old, NULL);
    check(hits == 1, "unblocking delivers it once");
    dfl(SIGUSR1);
}

static void test_ignore(void)
{
    signal(SIGUSR1, SIG_IGN);
    kill(getpid(), SIGUSR1);
    check(1, "SIG_IGN: the signal does nothing");
    dfl(SIGUSR1);
}

static void test_resethand(void)
{
    hits = 0;
    on(SIGUSR1, record, SA_RESETHAND);
    kill(getpid(), SIGUSR1);
    struct sigaction now;
    sigaction(SIGUSR1, NULL, &now);
    check(hits == 1 && now.sa_handler == SIG_DFL, "SA_RESETHAND: back to SIG_DFL after one");
}

static void nested(int sig, siginfo_t *si, void *uc)
{
    (void)si, (void)uc;
    depth++;
    if (depth > max_depth)
        max_depth = depth;
    if (sends < 2) {
        sends++;
        kill(getpid(), sig);
    }
    depth--;
}

static void test_nodefer(void)
{
    depth = max_depth = sends = 0;
    on(SIGUSR1, nested, SA_NODEFER);
    kill(getpid(), SIGUSR1);
    check(max_depth == 3, "SA_NODEFER: the handler interrupts itself");
    depth = max_depth = sends = 0;
    on(SIGUSR1, nested, 0);
    kill(getpid(), SIGUSR1);
    check(max_depth == 1, "without it the signal waits for the handler to return");
    dfl(SIGUSR1);
}

static char altstack[16384];
static volatile uintptr_t handler_sp;

static void where(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    int local;
    handler_sp = (uintptr_t)&local;
}

static void test_altstack(void)
{
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    check(sigaltstack(&ss, NULL) == 0, "sigaltstack accepts a stack");
    on(SIGUSR1, where, SA_ONSTACK);
    kill(getpid(), SIGUSR1);
    check(handler_sp > (uintptr_t)altstack && handler_sp < (uintptr_t)altstack + sizeof altstack,
          "SA_ONSTACK runs the handler on it");
    stack_t small = {.ss_sp = altstack, .ss_size = 100, .ss_flags = 0};
    errno = 0;
    check(sigaltstack(&small, NULL) == -1 && errno == ENOMEM, "a tiny alternate stack is ENOMEM");
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    dfl(SIGUSR1);
}

// A handler that signals itself again with SA_NODEFER nests on the alternate
// stack until it is full: the next frame is not written below it, and the
// process dies of SIGSEGV (Linux's rule). The stack sits in the middle of a
// shared mapping, so the parent sees whether anything was written below it.
#define ALT_SIZE 16384
static void again(int sig, siginfo_t *si, void *uc)
{
    (void)si, (void)uc;
    kill(getpid(), sig);
}

static void test_altstack_overflow(void)
{
    unsigned char *area = mmap(NULL, 3 * ALT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                               -1, 0);
    if (area == MAP_FAILED) {
        check(0, "an overflowing alternate stack: mmap");
        return;
    }
    memset(area, 0xa5, 3 * ALT_SIZE);
    pid_t pid = fork();
    if (pid == 0) {
        stack_t ss = {.ss_sp = area + ALT_SIZE, .ss_size = ALT_SIZE, .ss_flags = 0};
        sigaltstack(&ss, NULL);
        on(SIGUSR1, again, SA_ONSTACK | SA_NODEFER);
        kill(getpid(), SIGUSR1);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    check(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
          "handlers that overflow the alternate stack end in SIGSEGV");
    int untouched = 1;
    for (size_t i = 0; i < ALT_SIZE; i++)
        untouched &= area[i] == 0xa5;
    check(untouched, "... and nothing is written below the alternate stack");
    munmap(area, 3 * ALT_SIZE);
}

static sigjmp_buf jb;

static void escape(int sig, siginfo_t *si, void *uc)
{
    record(sig, si, uc);
    siglongjmp(jb, 1);
}

static void divide_by_zero(void)
{
    __asm__ volatile("xor %%ecx, %%ecx; mov $1, %%eax; cltd; idivl %%ecx" ::: "eax", "ecx", "edx");
}

static void test_faults(void)
{
    on(SIGSEGV, escape, 0);
    hits = 0;
    if (sigsetjmp(jb, 1) == 0)
        *(volatile int *)bad_addr = 1;
    check(hits == 1 && last_sig == SIGSEGV && last_code == SEGV_MAPERR && last_addr == (void *)16,
          "SIGSEGV: SEGV_MAPERR with si_addr");
    static const int ro = 5;
    hits = 0;
    if (sigsetjmp(jb, 1) == 0)
        *(volatile int *)&ro = 6;
    check(hits == 1 && last_code == SEGV_ACCERR && last_addr == (void *)&ro,
          "SIGSEGV: SEGV_ACCERR for a read-only page");
    on(SIGILL, escape, 0);
    hits = 0;
    if (sigsetjmp(jb, 1) == 0)
        __asm__ volatile("ud2");
    check(hits == 1 && last_sig == SIGILL && last_code == ILL_ILLOPN, "ud2: SIGILL with ILL_ILLOPN");
    on(SIGFPE, escape, 0);
    hits = 0;
    if (sigsetjmp(jb, 1) == 0)
        divide_by_zero();
    check(hits == 1 && last_sig == SIGFPE && last_code == FPE_INTDIV, "divide by zero: SIGFPE with FPE_INTDIV");
    dfl(SIGSEGV);
    dfl(SIGILL);
    dfl(SIGFPE);
}

// Two threads of one process fault over and over, each escaping its own
// SIGSEGV handler with siglongjmp: every fault reaches the thread that made it
// (the handler checks), each exactly once; then a changed action applies.
#define FAULTS 300
static __thread sigjmp_buf *thread_jb;
static __thread int thread_faults;
static volatile int wrong_thread;
static void thread_escape(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (!thread_jb || sig != SIGSEGV || si->si_addr != (void *)bad_addr)
        wrong_thread = 1;
    thread_faults++;
    siglongjmp(*thread_jb, 1);
}

static void *fault_loop(void *arg)
{
    sigjmp_buf jb;
    thread_jb = &jb;
    for (volatile int i = 0; i < FAULTS; i++)
        if (sigsetjmp(jb, 1) == 0)
            *(volatile int *)bad_addr = i;
    *(int *)arg = thread_faults;
    thread_jb = NULL;
    return NULL;
}

static void test_faults_in_threads(void)
{
    on(SIGSEGV, thread_escape, SA_NODEFER);
    int got[2] = {0, 0};
    pthread_t t;
    pthread_create(&t, NULL, fault_loop, &got[1]);
    fault_loop(&got[0]);
    pthread_join(t, NULL);
    check(got[0] == FAULTS && got[1] == FAULTS && !wrong_thread,
          "faults in two threads: each handled once, in its own thread");
    on(SIGSEGV, escape, 0);
    hits = 0;
    if (sigsetjmp(jb, 1) == 0)
        *(volatile int *)bad_addr = 1;
    check(hits == 1 && thread_faults == FAULTS, "a changed action takes effect at the next fault");
    dfl(SIGSEGV);
}

// Fork a child running fn; its raw wait status.
static int in_child(void (*fn)(void))
{
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int st;
    return waitpid(pid, &st, 0) == pid ? st : -1;
}

static void segv_blocked(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGSEGV);
    sigprocmask(SIG_BLOCK, &set, NULL);
    *(volatile int *)bad_addr = 1;
}

static void usr1_default(void) { kill(getpid(), SIGUSR1); }
static void chld_default(void) { kill(getpid(), SIGCHLD); }

static void break_context(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si;
    ((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP] = (greg_t)0x8000000000000000ULL;
}

static void bad_sigreturn(void)
{
    on(SIGUSR1, break_context, 0);
    kill(getpid(), SIGUSR1);
}

static void test_default_actions(void)
{
    int st0 = in_child(bad_sigreturn);
    check(WIFSIGNALED(st0) && WTERMSIG(st0) == SIGSEGV,
          "sigreturn to a non-canonical address is SIGSEGV");
    int st = in_child(usr1_default);
    check(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1, "default action of SIGUSR1 terminates");
    st = in_child(chld_default);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "default action of SIGCHLD is to ignore");
    st = in_child(segv_blocked);
    check(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "a fault with SIGSEGV blocked still kills");
}

static void test_sigchld(void)
{
    hits = 0;
    on(SIGCHLD, record, 0);
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    int st;
    waitpid(pid, &st, 0);
    check(hits == 1 && last_sig == SIGCHLD && last_code == CLD_EXITED && last_pid == pid,
          "SIGCHLD with CLD_EXITED and the child's pid");
    dfl(SIGCHLD);
}

// A child that signals its parent after a pause.
static pid_t poke_later(int sig, int delay_ms)
{
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        usleep(delay_ms * 1000);
        kill(parent, sig);
        _exit(0);
    }
    return pid;
}

static void test_eintr(void)
{
    hits = 0;
    on(SIGUSR1, record, 0);
    pid_t pid = poke_later(SIGUSR1, 30);
    struct timespec req = {5, 0}, rem = {0, 0};
    errno = 0;
    int r = nanosleep(&req, &rem);
    check(r == -1 && errno == EINTR && hits == 1 && rem.tv_sec > 0 && rem.tv_sec <= 5,
          "nanosleep: EINTR with the time left");
    waitpid(pid, NULL, 0);
    dfl(SIGUSR1);
}

static volatile pid_t victim;

// Record the signal, then end the child the parent waits for: whatever the
// timing, the wait can only finish after the handler ran.
static void record_and_end_victim(int sig, siginfo_t *si, void *uc)
{
    record(sig, si, uc);
    if (victim)
        kill(victim, SIGTERM);
}

static pid_t start_victim(void)
{
    pid_t pid = fork();
    if (pid == 0)
        for (;;)
            pause();
    victim = pid;
    return pid;
}

static void test_restart(void)
{
    // A child pokes us while we wait for another; the handler ends the one we
    // wait for. With SA_RESTART wait4 goes on waiting and returns its pid.
    hits = 0;
    on(SIGUSR1, record_and_end_victim, SA_RESTART);
    pid_t sleeper = start_victim();
    pid_t poker = poke_later(SIGUSR1, 20);
    int st;
    pid_t got = waitpid(sleeper, &st, 0);
    check(got == sleeper && hits == 1 && WIFSIGNALED(st), "SA_RESTART: wait4 is restarted");
    waitpid(poker, NULL, 0);
    // Without SA_RESTART the same wait fails with EINTR.
    hits = 0;
    on(SIGUSR1, record_and_end_victim, 0);
    sleeper = start_victim();
    poker = poke_later(SIGUSR1, 20);
    errno = 0;
    got = waitpid(sleeper, &st, 0);
    check(got == -1 && errno == EINTR && hits == 1, "without SA_RESTART wait4 fails with EINTR");
    waitpid(sleeper, NULL, 0);
    waitpid(poker, NULL, 0);
    victim = 0;
    dfl(SIGUSR1);
}

static void test_sigsuspend(void)
{
    hits = 0;
    on(SIGUSR1, record, 0);
    sigset_t block, old, wait_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigprocmask(SIG_BLOCK, &block, &old);
    pid_t pid = poke_later(SIGUSR1, 20);
    sigemptyset(&wait_mask);
    errno = 0;
    int r = sigsuspend(&wait_mask);
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    check(r == -1 && errno == EINTR && hits == 1 && sigismember(&now, SIGUSR1),
          "sigsuspend: handler runs, the old mask comes back");
    sigprocmask(SIG_SETMASK, &old, NULL);
    waitpid(pid, NULL, 0);
    dfl(SIGUSR1);
}

static volatile int thread_tid, main_got;
static volatile int thread_got;

static void mark(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    if ((int)syscall(SYS_gettid) == getpid())
        main_got++;
    else
        thread_got++;
}

static void *target(void *arg)
{
    (void)arg;
    thread_tid = (int)syscall(SYS_gettid);
    while (!thread_got)
        sched_yield();
    return NULL;
}

static void test_thread_directed(void)
{
    on(SIGUSR2, mark, 0);
    pthread_t t;
    thread_tid = 0;
    pthread_create(&t, NULL, target, NULL);
    while (!thread_tid)
        sched_yield();
    int r = (int)syscall(SYS_tgkill, getpid(), thread_tid, SIGUSR2);
    pthread_join(t, NULL);
    check(r == 0 && thread_got == 1 && main_got == 0, "tgkill reaches exactly that thread");
    errno = 0;
    check(syscall(SYS_tgkill, getpid(), 0x3fffffff, SIGUSR2) == -1 && errno == ESRCH,
          "tgkill of a missing thread is ESRCH");
    dfl(SIGUSR2);
}

// Masks are per thread: a process-directed signal that both threads block
// waits for whichever unblocks it, and that thread takes it before its
// sigprocmask returns.
static volatile int taker_tid;
static void note_taker(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    taker_tid = (int)syscall(SYS_gettid);
}

static volatile int unblock_now, unblocker_tid, unblocker_done;
static void *unblocker(void *arg)
{
    (void)arg;
    unblocker_tid = (int)syscall(SYS_gettid);
    while (!unblock_now)
        sched_yield();
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_UNBLOCK, &set, &old);
    unblocker_done = taker_tid == unblocker_tid && sigismember(&old, SIGUSR1);
    return NULL;
}

static void test_per_thread_masks(void)
{
    on(SIGUSR1, note_taker, 0);
    sigset_t set, old, now;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, &old); // the thread inherits it
    taker_tid = unblocker_tid = unblocker_done = unblock_now = 0;
    pthread_t t;
    pthread_create(&t, NULL, unblocker, NULL);
    while (!unblocker_tid)
        sched_yield();
    kill(getpid(), SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL); // no change: still pending, still ours to leave
    sigprocmask(SIG_BLOCK, NULL, &now);
    check(taker_tid == 0 && sigismember(&now, SIGUSR1), "a signal both threads block waits");
    unblock_now = 1;
    pthread_join(t, NULL);
    check(unblocker_done, "the thread that unblocks it takes it before sigprocmask returns");
    sigprocmask(SIG_SETMASK, &old, NULL);
    check(taker_tid == unblocker_tid, "and only once");
    dfl(SIGUSR1);
}

static void exit9(int sig) { (void)sig; _exit(9); }

static void test_stop_continue(void)
{
    signal(SIGUSR1, exit9); // inherited: the child has it from its first instruction
    pid_t pid = fork();
    if (pid == 0)
        for (;;)
            pause();
    signal(SIGUSR1, SIG_DFL);
    int st = 0;
    kill(pid, SIGSTOP);
    check(waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP,
          "SIGSTOP: wait4 WUNTRACED reports the stop");
    kill(pid, SIGCONT);
    check(waitpid(pid, &st, WCONTINUED) == pid && WIFCONTINUED(st), "SIGCONT: WCONTINUED reports it");
    kill(pid, SIGSTOP);
    waitpid(pid, &st, WUNTRACED);
    kill(pid, SIGUSR1);
    usleep(50000);
    check(waitpid(pid, &st, WNOHANG) == 0, "a stopped process does not run its handler");
    kill(pid, SIGCONT);
    check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 9,
          "after SIGCONT the pending signal's handler runs");
    pid = fork();
    if (pid == 0)
        for (;;)
            pause();
    kill(pid, SIGSTOP);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    check(waitid(P_PID, pid, &si, WSTOPPED) == 0 && si.si_code == CLD_STOPPED &&
              si.si_status == SIGSTOP,
          "waitid WSTOPPED: CLD_STOPPED");
    kill(pid, SIGKILL);
    check(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
          "SIGKILL ends a stopped process");
}

static void test_errors(void)
{
    errno = 0;
    check(kill(getpid(), 65) == -1 && errno == EINVAL, "kill with signal 65 is EINVAL");
    check(kill(getpid(), 0) == 0, "kill with signal 0 checks existence");
    struct sigaction sa = {.sa_handler = SIG_IGN};
    errno = 0;
    check(sigaction(SIGKILL, &sa, NULL) == -1 && errno == EINVAL, "SIGKILL cannot be caught");
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    errno = 0;
    check(kill(pid, SIGUSR1) == -1 && errno == ESRCH, "kill of a reaped pid is ESRCH");
}

int main(void)
{
    test_handler_runs();
    test_context_restored();
    test_mask_and_pending();
    test_ignore();
    test_resethand();
    test_nodefer();
    test_altstack();
    test_altstack_overflow();
    test_faults();
    test_faults_in_threads();
    test_default_actions();
    test_sigchld();
    test_eintr();
    test_restart();
    test_sigsuspend();
    test_thread_directed();
    test_per_thread_masks();
    test_stop_continue();
    test_errors();
    printf("%d passed, %d failed\n", n - failed, failed);
    return failed != 0;
}
