// Init's protection (proc.init, kernel/proc/signal.c): user space cannot kill
// or stop init with a signal it has no handler for, however it names it (kill
// of its pid or group, kill(0) from its group, tkill, tgkill), while a signal
// it handles still arrives and the kernel's own SIGKILL still ends it. The
// program (tests/kernel/progs/initprot.c) is started as init, as main.c starts
// /sbin/init: a user-level suite cannot be init, here or on the Linux host.
#include "ktest/ktest.h"
#include "proc/proc.h"
#include "uapi/abi.h"

static int spawn_init(const char *const argv[], struct proc **p)
{
    const struct user_program *prog = user_program_find("initprot");
    if (!prog)
        return -1;
    return proc_spawn_init("initprot", prog->start, prog->len, argv, NULL, NULL, p);
}

KTEST(init_survives_user_signals)
{
    const char *argv[] = {"initprot", NULL};
    struct proc *p;
    KREQUIRE(spawn_init(argv, &p) == 0);
    int st = proc_wait_kernel(p);
    if (st != 0)
        kprintf("# initprot: wait status 0x%x\n", st);
    KCHECK_EQ(st, 0); // exited by itself, every check passed
}

KTEST(init_killed_by_kernel_sigkill)
{
    const char *argv[] = {"initprot", "wait", NULL};
    struct proc *p;
    KREQUIRE(spawn_init(argv, &p) == 0);
    KCHECK(p->init);
    KCHECK_EQ(signal_send_proc(p, SIGKILL, NULL), 0); // the kernel's (SI_KERNEL)
    KCHECK_EQ(proc_wait_kernel(p), W_EXITCODE(0, SIGKILL));
}
