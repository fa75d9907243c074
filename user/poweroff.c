// poweroff: flush the file systems and turn the machine off (exit status 0).
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "reboot.h"

int main(void)
{
    sync();
    long r = reboot_syscall(LINUX_REBOOT_CMD_POWER_OFF, 0);
    fprintf(stderr, "poweroff: %s\n", strerror((int)-r));
    return 1;
}
