// reboot(2): power off, restart or halt the machine, and our extension that
// powers off with an exit status (REBOOT_CMD_EXIT_STATUS in uapi/ext.h), which is
// how `RUN=...` boots and test runs report their result to the host.
//
// Under QEMU, power-off is the isa-debug-exit device (panic.c's qemu_exit), so
// the host's tools/runqemu sees the status; restart is the chipset's reset
// register (port 0xcf9).
#include "lib/panic.h"
#include "sync/percpu.h"
#include "syscall/syscall.h"
#include "uapi/errno.h"
#include "uapi/ext.h"
#include "x86/smp.h"
#include "x86/x86.h"

#define REBOOT_MAGIC1 0xfee1deadU
// Linux accepts any of these as the second magic number (dates, in hex).
static const unsigned magic2[] = {672274793U, 85072278U, 369367448U, 537993216U};

#define CMD_RESTART 0x01234567U
#define CMD_HALT 0xcdef0123U
#define CMD_CAD_ON 0x89abcdefU
#define CMD_CAD_OFF 0x00000000U
#define CMD_POWER_OFF 0x4321fedcU

#define RESET_CONTROL_PORT 0xcf9
#define RESET_FULL 0x06 // system reset + CPU reset

static bool magic_ok(unsigned m1, unsigned m2)
{
    if (m1 != REBOOT_MAGIC1)
        return false;
    for (size_t i = 0; i < ARRAY_SIZE(magic2); i++)
        if (m2 == magic2[i])
            return true;
    return false;
}

static __noreturn void halt_machine(void)
{
    kprintf("reboot: system halted\n");
    panicking = true; // makes the NMI handler stop the CPU it arrives on
    if (ncpu_online > 1)
        lapic_send_nmi_all_but_self(); // they stop in the NMI handler
    panic_stop_this_cpu();
}

long sys_reboot(unsigned m1, unsigned m2, unsigned cmd, uint64_t arg)
{
    if (!magic_ok(m1, m2))
        return -EINVAL;
    switch (cmd) {
    case CMD_CAD_ON:
    case CMD_CAD_OFF:
        return 0; // there is no Ctrl-Alt-Del on a serial console
    case CMD_POWER_OFF:
        kprintf("reboot: power off\n");
        qemu_exit(0);
    case REBOOT_CMD_EXIT_STATUS: {
        // A shell's statuses are 0..255; the port carries 0..127, so a larger
        // one goes as 127 and whole in this line, which tools/runqemu reads.
        int status = arg > 255 ? 255 : (int)arg;
        kprintf("reboot: power off, exit status %d\n", status);
        qemu_exit(MIN(status, 127));
    }
    case CMD_RESTART:
        kprintf("reboot: restarting\n");
        outb(RESET_CONTROL_PORT, RESET_FULL);
        halt_machine(); // no reset register: stop instead
    case CMD_HALT:
        halt_machine();
    default:
        return -EINVAL;
    }
}
