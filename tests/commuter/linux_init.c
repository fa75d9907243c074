// /init of the initramfs that runs the conformance suite in Debian's Linux 6.1
// under QEMU (tools/commuter/linux-qemu): mounts what the runner needs, runs
// /commuter with the arguments the kernel passed after "--" on its command
// line, prints its exit status and powers the machine off.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    (void)argc;
    mkdir("/dev", 0755);
    mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
    int fd = open("/dev/console", O_RDWR);
    if (fd >= 0) {
        dup2(fd, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        if (fd > 2)
            close(fd);
    }
    mkdir("/proc", 0755);
    mount("proc", "/proc", "proc", 0, NULL);
    mkdir("/tmp", 01777);
    mount("tmpfs", "/tmp", "tmpfs", 0, NULL);

    argv[0] = "/commuter";
    pid_t pid = fork();
    if (pid == 0) {
        execv("/commuter", argv);
        perror("linux_init: exec /commuter");
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) != pid)
        ;
    printf("# commuter exit status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128);
    fflush(stdout);
    sync();
    reboot(RB_POWER_OFF);
    return 0;
}
