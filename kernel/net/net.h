// The network stack: lwIP 2.1.3 (fetched by tools/fetch-lwip, configured in
// port/lwipopts.h) on the kernel's threads (sys_arch.c).
#pragma once
#include <stdbool.h>

// Starts lwIP on first use: its tcpip thread, which owns the protocol state and
// runs its timers, and the loopback interface (127.0.0.1). Later calls return
// at once. 0, or -ENOMEM. Until then nothing of lwIP runs, so that boots
// without networking see no timer wake-ups from it.
int net_start(void);

// virtio_net.c: finds a virtio-net device (modern interface) and adds it as
// lwIP's default interface, 10.0.2.15/24 via 10.0.2.2 (QEMU's user network).
// 1 if it did, 0 if there is no such device, -1 if it would not start.
int virtio_net_start(void);
// Whether virtio_net_start found and started a device.
bool virtio_net_present(void);
