// Two lwIP instances in one kernel exchange TCP data: the kernel's own and a
// second copy with its globals renamed (net_twin_side.c says how; docs/net.md
// says why: one instance per core is the way to a stack that scales).
#include "ktest/ktest.h"
#include "net/net.h"
#include "net_twin.h"
#include "proc/sched.h"
#include "x86/smp.h"

#define TWIN_PORT 7301
#define TWIN_BYTES (300 * 1000)

static long served;

static void server(void *arg)
{
    (void)arg;
    served = lw2_twin_echo_once(TWIN_PORT);
}

KTEST(net_twin_instances_exchange_tcp)
{
    KREQUIRE(net_start() == 0);
    KREQUIRE(lw2_twin_start_own_stack() == 0);
    KCHECK(twin_core_lock() != lw2_twin_core_lock()); // two stacks, two core locks
    KREQUIRE(twin_link_up(1, lw2_twin_input) == 0);
    KREQUIRE(lw2_twin_link_up(2, twin_input) == 0);
    served = 0;
    struct thread *t = kthread_create("twin server", server, NULL, NULL);
    KREQUIRE(t);
    // The server may not listen yet: a refused connect is tried again.
    long mismatches = 0, echoed = -1;
    for (int tries = 0; tries < 50 && echoed < 0; tries++) {
        echoed = twin_client(2, TWIN_PORT, TWIN_BYTES, &mismatches);
        if (echoed < 0)
            sched_sleep_until(nsec_now() + 20 * 1000000ull);
    }
    thread_join(t);
    twin_link_down();
    lw2_twin_link_down();
    KCHECK_EQ(served, TWIN_BYTES);
    KCHECK_EQ(echoed, TWIN_BYTES);
    KCHECK_EQ(mismatches, 0);
}
