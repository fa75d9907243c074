// Starting the network stack once, on first use (net.h): lwIP, then the
// network device if there is one.
#include "net/net.h"
#include "kernel.h"
#include "sync/atomic.h"
#include "sync/sleeplock.h"
#include "uapi/errno.h"

#include "lwip/sys.h"
#include "lwip/tcpip.h"

static struct sleeplock start_lock = {
    .locked = 0,
    .wq = {.lock = SPINLOCK_INIT("net start"), .waiters = LIST_INIT(start_lock.wq.waiters)},
};
static bool started; // [start_lock, r]: set once lwIP is up

static void tcpip_ready(void *arg)
{
    sys_sem_signal(arg);
}

int net_start(void)
{
    if (load_acquire(&started))
        return 0;
    int err = 0;
    sleeplock_acquire(&start_lock);
    if (!started) {
        sys_sem_t ready;
        if (sys_sem_new(&ready, 0) == ERR_OK) {
            // tcpip_init runs lwip_init (which adds the loopback interface),
            // then starts the tcpip thread, which calls tcpip_ready first.
            tcpip_init(tcpip_ready, &ready);
            sys_arch_sem_wait(&ready, 0);
            sys_sem_free(&ready);
            virtio_net_start(); // no device (or a broken one): loopback only
            store_release(&started, true);
        } else {
            err = -ENOMEM;
        }
    }
    sleeplock_release(&start_lock);
    return err;
}
