// Boot CPU start-up: bring the machine up in dependency order, then run the tests
// the command line asks for, or idle.
#include "bootinfo.h"
#include "file/dev.h"
#include "file/procfs.h"
#include "fs.h"
#include "ktest/ktest.h"
#include "lib/panic.h"
#include "mm/mm.h"
#include "mm/uvm.h"
#include "proc/hangcheck.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "sync/epoch.h"
#include "proc/ktimer.h"
#include "proc/tickless.h"
#include "sync/percpu.h"
#include "sync/refcache.h"
#include "sync/xcall.h"
#include "syscall/syscall.h"
#include "x86/console.h"
#include "x86/rtc.h"
#include "x86/smp.h"
#include "x86/trap.h"
#include "x86/x86.h"

uint64_t boot_tsc; // TSC at kernel entry, for boot-time figures

// epochticks=N (default 1): the epoch's work -- quiescent points for epoch
// reclamation, deferred TLB flushes and page-tree trims, the refcache flush --
// at every N-th tick of each CPU instead of every tick. For cost runs under the
// tracing plugin (make bench-cost), where one system call spans tens of ticks
// instead of a small fraction of one: what that work moves then falls on fewer
// operations. Timers, preemption and the hang check keep every tick.
static uint32_t epoch_ticks = 1;
static DEFINE_PERCPU(uint32_t, ticks_to_epoch);

static void epoch_ticks_init(void)
{
    if (cmdline_uint("epochticks", &epoch_ticks))
        epoch_ticks = MAX(epoch_ticks, 1U);
}

// Periodic per-CPU work, from each CPU's timer interrupt: quiescent points for
// epoch reclamation and the per-epoch refcache flush.
static void kernel_tick(struct trapframe *tf)
{
    hangcheck_tick(tf); // first: it must see what the tick interrupted
    if (this_cpu_read(ticks_to_epoch) == 0) {
        this_cpu_write(ticks_to_epoch, epoch_ticks - 1);
        epoch_tick();
        refcache_tick();
    } else {
        this_cpu_dec(ticks_to_epoch);
    }
    ktimer_tick();
    tickless_tick();
    sched_tick(tf); // last: it may switch to another thread
}

// Tests run in a kernel thread on the boot CPU, so they may sleep; kmain's own
// context becomes the boot CPU's idle loop.
static void run_tests(void *arg)
{
    (void)arg;
    char sel[256];
    size_t len;
    const char *v = cmdline_get("test", &len);
    len = MIN(len, sizeof sel - 1);
    memcpy(sel, v, len);
    sel[len] = 0;
    int failed = ktest_run(sel);
    qemu_exit(failed ? 1 : 0);
}

// On every CPU once all are up: the CPU's scheduler state (its idle loop becomes
// its idle thread) and the syscall MSRs and CR4 protections.
static void cpu_user_init(void *arg)
{
    (void)arg;
    sched_init_cpu();
    syscall_init_cpu();
}

// The first process: /sbin/init from the file system, with an environment made
// of the command line's key=value words (RUN="cmd args" arrives as RUN, as on
// Linux). When init ends the machine powers off with its exit status; a
// `RUN=...` boot ends through reboot(2) before that (user/init.c).
#define INIT_PATH "/sbin/init"
#define INIT_ENV_MAX 64

static void run_sbin_init(void *arg)
{
    (void)arg;
    static char envbuf[2048];
    static char *envp[INIT_ENV_MAX];
    int n = cmdline_env(kernel_cmdline, envbuf, sizeof envbuf, envp, INIT_ENV_MAX - 3);
    if (n < 0) {
        kprintf("init: kernel command line too long for init's environment\n");
        n = 0;
    }
    envp[n++] = "HOME=/";
    envp[n++] = "TERM=vt100";
    envp[n] = NULL;
    const char *argv[] = {INIT_PATH, NULL};
    struct proc *p;
    int err = proc_spawn_file(INIT_PATH, argv, (const char *const *)envp, PROC_INIT, &p);
    if (err) {
        kprintf("init: cannot start %s: error %d\n", INIT_PATH, err);
        qemu_exit(127);
    }
    int st = proc_wait_kernel(p);
    int code = (st & 0x7f) ? 128 + (st & 0x7f) : (st >> 8) & 0xff;
    kprintf("init: %s exited (wait status 0x%x); powering off\n", INIT_PATH, st);
    qemu_exit(code > 127 ? 127 : code);
}

// `init=NAME` runs the built-in user program NAME instead of /sbin/init (small
// test and benchmark programs) and reports how it ended; with `exit` on the
// command line QEMU then exits with the program's exit status (make mtrace runs
// the pairwise suite this way).
static int init_status(const char *name)
{
    const struct user_program *prog = user_program_find(name);
    if (!prog) {
        kprintf("init: no built-in program \"%s\"\n", name);
        return 127;
    }
    const char *argv[] = {name, NULL}, *envp[] = {"HOME=/", "TERM=vt100", NULL};
    struct proc *p;
    int err = proc_spawn_init(name, prog->start, prog->len, argv, envp, NULL, &p);
    if (err) {
        kprintf("init: %s: error %d\n", name, err);
        return 127;
    }
    int st = proc_wait_kernel(p);
    kprintf("init: %s exited, wait status 0x%x\n", name, st);
    return (st & 0x7f) ? 127 : (st >> 8) & 0x7f;  // killed, or its exit code
}

static void run_init(void *arg)
{
    int status = init_status(arg);
    if (cmdline_has("exit"))
        qemu_exit(status);
}

static char init_name[64];

static void start_user_space(void)
{
    cpumask_t boot;
    cpumask_clear(&boot);
    cpumask_set(&boot, 0);
    if (cmdline_has("test")) {
        if (!kthread_create("ktest", run_tests, NULL, &boot))
            panic("no memory for the test thread");
        return;
    }
    size_t len;
    const char *v = cmdline_get("init", &len);
    if (!v) {
        if (!kthread_create("init", run_sbin_init, NULL, NULL))
            panic("no memory for the init thread");
        return;
    }
    len = MIN(len, sizeof init_name - 1);
    memcpy(init_name, v, len);
    init_name[len] = 0;
    if (!kthread_create("init", run_init, init_name, NULL))
        panic("no memory for the init thread");
}

void kmain(uint64_t bootinfo_pa)
{
    boot_tsc = rdtsc();
    lapic_park_aps_early(); // OVMF leaves its APs spinning; under TCG they slow us down
    const struct bootinfo *bi = P2V(bootinfo_pa);

    percpu_init_boot();
    uart_init();
    if (bi->magic != BOOTINFO_MAGIC)
        panic("bad boot info magic %lx", bi->magic);
    cmdline_init(bi);
    kprintf("\nkernel: booting, command line \"%s\"\n", kernel_cmdline);

    gdt_init_cpu();
    trap_init();
    trap_init_cpu();
    symbols_init(bi);

    page_init(bi);
    kmalloc_init();
    kvm_init(bi);
    uvm_init();
    kprintf("mem: %lu MiB free of %lu MiB\n", page_count_free() * PGSIZE >> 20,
            page_count_total() * PGSIZE >> 20);

    // SMP: interrupt controllers, timer, then the other CPUs.
    acpi_init(bi);
    lapic_init();
    ioapic_init();
    sched_init();
    pgrp_init();
    fpu_init();
    hangcheck_init();
    epoch_ticks_init();
    timer_tick_hook = kernel_tick;
    lapic_timer_init();
    rtc_init(); // the wall clock, before any file gets a time
    smp_boot(bi);
    xcall_all(cpu_user_init, NULL); // run queues, syscall MSRs, SMEP/SMAP/UMIP
    tickless_start();
    console_input_init();
    tty_init();
    sti();
    fs_boot(bi);
    dev_init();
    procfs_init();

    start_user_space();
    // From here on this is the boot CPU's idle thread.
    tickless_idle();
}
