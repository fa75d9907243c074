// Tests for user processes: musl programs (static and static-pie) run and their
// output and exit status come back; the syscall checker passes; faulting programs
// are killed with the right signal and the kernel survives; bad images fail with
// -ENOEXEC, dynamically linked ones too; many processes run at once on all CPUs.
#include "elf64.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "proc/proc.h"
#include "sync/percpu.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "x86/smp.h"

static char outbuf[8192];

// Run a built-in program to completion; its console output lands in outbuf.
static int run(const char *name, const char *const argv[], const char *const envp[], int *status)
{
    const struct user_program *prog = user_program_find(name);
    if (!prog)
        return -ENOENT;
    static struct capture cap;
    spin_init(&cap.lock, "capture");
    cap.buf = outbuf;
    cap.cap = sizeof outbuf - 1;
    cap.len = 0;
    struct proc *p;
    int err = proc_spawn(name, prog->start, prog->len, argv, envp, NULL, &cap, &p);
    if (err)
        return err;
    *status = proc_wait_kernel(p);
    outbuf[cap.len] = 0;
    return 0;
}

static void hello(const char *name)
{
    const char *argv[] = {name, NULL};
    int st = -1;
    KREQUIRE(run(name, argv, NULL, &st) == 0);
    KCHECK_EQ(st, 0);
    KCHECK(strcmp(outbuf, "hello, world\n") == 0);
}

KTEST(proc_hello_static) { hello("hello"); }
KTEST(proc_hello_static_pie) { hello("hello-pie"); }

static void syscalls(const char *name)
{
    const char *argv[] = {name, "one", "two", NULL};
    const char *envp[] = {"A=1", "FOO=bar", NULL};
    int st = -1;
    KREQUIRE(run(name, argv, envp, &st) == 0);
    if (st != 0)
        kprintf("# output of %s:\n%s", name, outbuf);
    KCHECK_EQ(st, 0);
}

KTEST(proc_syscalls_static) { syscalls("syscalls"); }
KTEST(proc_syscalls_static_pie) { syscalls("syscalls-pie"); }

static void fault(const char *how, int sig)
{
    const char *argv[] = {"fault", how, NULL};
    int st = -1;
    KREQUIRE(run("fault", argv, NULL, &st) == 0);
    KCHECK_EQ(st, W_EXITCODE(0, sig) | WCOREFLAG); // WIFSIGNALED, WTERMSIG == sig, core
}

KTEST(proc_fault_null_is_sigsegv) { fault("null", SIGSEGV); }
KTEST(proc_fault_kernel_address_is_sigsegv) { fault("kernel", SIGSEGV); }
KTEST(proc_fault_ud2_is_sigill) { fault("ud2", SIGILL); }

KTEST(proc_bad_elf_is_enoexec)
{
    static char junk[256];
    memset(junk, 0x41, sizeof junk);
    struct proc *p;
    KCHECK_EQ(proc_spawn("junk", junk, sizeof junk, NULL, NULL, NULL, NULL, &p), -ENOEXEC);
    const struct user_program *prog = user_program_find("hello");
    KREQUIRE(prog);
    KCHECK_EQ(proc_spawn("short", prog->start, 100, NULL, NULL, NULL, NULL, &p), -ENOEXEC);
    // Segments beyond the end of the image.
    KCHECK_EQ(proc_spawn("trunc", prog->start, 2000, NULL, NULL, NULL, NULL, &p), -ENOEXEC);
}

// A dynamically linked program names its loader in a PT_INTERP header; with no
// loader to run, exec refuses it as Linux does a program it cannot load. The
// image is hello's, first run unchanged (so the copy is sound), then with its
// first non-LOAD program header turned into PT_INTERP.
KTEST(proc_dynamic_elf_is_enoexec)
{
    const struct user_program *prog = user_program_find("hello");
    KREQUIRE(prog);
    char *img = kmalloc(prog->len);
    KREQUIRE(img);
    memcpy(img, prog->start, prog->len);
    struct proc *p;
    KCHECK_EQ(proc_spawn("copy", img, prog->len, NULL, NULL, NULL, NULL, &p), 0);
    KCHECK_EQ(proc_wait_kernel(p), 0);
    const struct elf64_ehdr *eh = (const void *)img;
    struct elf64_phdr *ph = (void *)(img + eh->phoff);
    int i = 0;
    while (i < eh->phnum && ph[i].type == PT_LOAD)
        i++;
    KREQUIRE(i < eh->phnum);
    ph[i].type = PT_INTERP;
    KCHECK_EQ(proc_spawn("dynamic", img, prog->len, NULL, NULL, NULL, NULL, &p), -ENOEXEC);
    kfree(img);
}

KTEST(proc_many_at_once_on_all_cpus)
{
    enum { N = 16 };
    const struct user_program *prog = user_program_find("hello");
    KREQUIRE(prog);
    static struct capture caps[N];
    static char bufs[N][64];
    struct proc *p[N];
    const char *argv[] = {"hello", NULL};
    // Two rounds: the first fills the stack and object caches; the second must
    // then run without a net loss of pages.
    size_t free0 = 0;
    for (int round = 0; round < 2; round++) {
    page_drain_all_caches();
    kmalloc_drain_all();
    epoch_synchronize();
    epoch_synchronize();
    if (round == 1)
        free0 = page_count_free();
    for (int i = 0; i < N; i++) {
        spin_init(&caps[i].lock, "capture");
        caps[i] = (struct capture){.buf = bufs[i], .cap = sizeof bufs[i] - 1};
        cpumask_t m;
        cpumask_clear(&m);
        cpumask_set(&m, i % ncpu);
        KREQUIRE(proc_spawn("hello", prog->start, prog->len, argv, NULL, &m, &caps[i], &p[i]) == 0);
        KCHECK(p[i]->pid > 0);
    }
    for (int i = 0; i < N; i++) {
        epoch_enter();
        struct proc *found = pid_lookup(p[i]->pid);
        epoch_exit();
        KCHECK(found == p[i]);
        int pid = p[i]->pid;
        KCHECK_EQ(proc_wait_kernel(p[i]), 0);
        KCHECK_EQ(caps[i].len, 13);
        epoch_enter();
        KCHECK(pid_lookup(pid) == NULL);
        epoch_exit();
    }
    }
    page_drain_all_caches();
    kmalloc_drain_all();
    epoch_synchronize();
    epoch_synchronize();
    page_drain_all_caches();
    kmalloc_drain_all();
    // Address spaces and page tables went back. Slabs may keep a few pages, and
    // kernel stacks freed on other CPUs wait in those CPUs' stack caches (see
    // kstack.c).
    size_t slack = 8 + (size_t)ncpu * KSTACK_CACHE * KSTACK_PAGES;
    if (page_count_free() + slack < free0)
        kprintf("# %lu pages missing\n", free0 - page_count_free());
    KCHECK(page_count_free() + slack >= free0);
}
