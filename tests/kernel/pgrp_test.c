// Process groups (kernel/proc/pgrp.c) under races the fuzzer found: two calls
// that both find a group empty must not both take it out of the table.
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "proc/proc.h"
#include "proc/sched.h"
#include "sync/atomic.h"
#include "sync/cpumask.h"
#include "sync/percpu.h"
#include "uapi/errno.h"
#include "x86/smp.h"
#include "x86/x86.h"

#define ROUNDS 3000
#define PID_BASE 3000000 // far above the pids this boot hands out

static struct proc *leaver;
static volatile int round_go, round_done;

// On CPU 1: each round, the group's only member is reaped as setpgid runs.
static void leave_each_round(void *arg)
{
    (void)arg;
    for (int r = 1; r <= ROUNDS; r++) {
        while (load_acquire(&round_go) != r)
            pause();
        pgrp_leave(leaver);
        store_release(&round_done, r);
    }
}

// setpgid(p, pgid) of a process p already reaped, into a group whose last
// member is reaped at the same moment: the setpgid finds the group, fails to
// lock p (ESRCH) and offers the group for freeing, as the reaping does. The
// second of the two used to walk the hash chain for a group the first had
// taken out, and fault (fuzzer seed 12 at 8 vCPUs, after 7.7 M calls).
KTEST(pgrp_setpgid_of_reaped_vs_last_member_reaped)
{
    if (ncpu_online < 2) {
        kprintf("# needs 2 CPUs; nothing to check\n");
        return;
    }
    struct proc *mover = kzalloc(sizeof *mover); // reaped: no group
    leaver = kzalloc(sizeof *leaver);
    KREQUIRE(mover && leaver);
    round_go = round_done = 0;
    cpumask_t one;
    cpumask_clear(&one);
    cpumask_set(&one, 1);
    struct thread *t = kthread_create("pgrp-leave", leave_each_round, NULL, &one);
    KREQUIRE(t);
    int esrch = 0, eperm = 0, other = 0;
    for (int r = 1; r <= ROUNDS; r++) {
        memset(leaver, 0, sizeof *leaver);
        leaver->pid = PID_BASE + r;
        KREQUIRE(pgrp_create(leaver) == 0);
        store_release(&round_go, r);
        int err = pgrp_move(mover, leaver->pid, leaver->sid);
        esrch += err == -ESRCH;
        eperm += err == -EPERM; // the group was gone before the look
        other += err != -ESRCH && err != -EPERM;
        while (load_acquire(&round_done) != r)
            pause();
    }
    thread_join(t);
    kprintf("# %d rounds: setpgid found the group %d times, found it gone %d\n", ROUNDS, esrch,
            eperm);
    KCHECK_EQ(other, 0);
    KCHECK(esrch > 0);
    kfree(mover);
    kfree(leaver);
}
