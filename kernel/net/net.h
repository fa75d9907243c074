// The network stack: lwIP 2.1.3 (fetched by tools/fetch-lwip, configured in
// port/lwipopts.h) on the kernel's threads (sys_arch.c).
#pragma once

// Starts lwIP on first use: its tcpip thread, which owns the protocol state and
// runs its timers, and the loopback interface (127.0.0.1). Later calls return
// at once. 0, or -ENOMEM. Until then nothing of lwIP runs, so that boots
// without networking see no timer wake-ups from it.
int net_start(void);
