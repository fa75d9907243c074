// /init of the Linux guest that tools/linuxguest boots: sets up a console and
// the usual mounts, runs the program named in /linuxguest/argv with its
// arguments, and hands the program's exit status to the host through QEMU's
// isa-debug-exit port (QEMU then exits with 2*status+1), with a last serial line
// "linuxguest: exit N" as a second channel. Powers off if the port is missing.
// The program "--cat" is built in: it copies the named files to the console
// (tools/linuxguest --kallsyms uses it for /proc/kallsyms).
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEBUG_EXIT_PORT 0xf4
#define MAX_ARGS 256

static void console(void)
{
    mkdir("/dev", 0755);
    mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
    int fd = open("/dev/console", O_RDWR);
    if (fd < 0)
        return;
    for (int i = 0; i < 3; i++)
        dup2(fd, i);
    if (fd > 2)
        close(fd);
}

static void mounts(void)
{
    mkdir("/proc", 0755);
    mount("proc", "/proc", "proc", 0, NULL);
    mkdir("/sys", 0755);
    mount("sysfs", "/sys", "sysfs", 0, NULL);
    mkdir("/tmp", 01777);
    mount("tmpfs", "/tmp", "tmpfs", 0, NULL);
}

// /linuxguest/argv: the program's arguments, each ended by a NUL byte.
static int read_argv(char **argv)
{
    static char buf[65536];
    int fd = open("/linuxguest/argv", O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    int argc = 0;
    for (ssize_t i = 0; i < n && argc < MAX_ARGS; i += strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    argv[argc] = NULL;
    return argc;
}

static int cat(char **files)
{
    static char buf[65536];
    int status = 0;
    for (; *files; files++) {
        int fd = open(*files, O_RDONLY);
        ssize_t n = 0;
        while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0)
            fwrite(buf, 1, n, stdout);
        if (fd < 0 || n < 0) {
            fprintf(stderr, "linuxguest: %s: %s\n", *files, strerror(errno));
            status = 1;
        }
        close(fd);
    }
    fflush(stdout);
    return status;
}

static int run(char **argv)
{
    if (strcmp(argv[0], "--cat") == 0)
        return cat(argv + 1);
    pid_t pid = fork();
    if (pid < 0)
        return 127;
    if (pid == 0) {
        execv(argv[0], argv);
        fprintf(stderr, "linuxguest: exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    // Orphans are reparented to us: wait for the program itself.
    while (waitpid(-1, &status, 0) != pid) {
        if (errno == ECHILD)
            return 127;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(void)
{
    console();
    mounts();
    char *argv[MAX_ARGS + 1];
    int status = 127;
    if (read_argv(argv) == 0)
        fprintf(stderr, "linuxguest: no program in /linuxguest/argv\n");
    else
        status = run(argv);
    printf("linuxguest: exit %d\n", status);
    fflush(stdout);
    sync();
    // The port carries 0..127 (QEMU's exit status is 2*byte+1, 8 bits).
    if (ioperm(DEBUG_EXIT_PORT, 1, 1) == 0)
        outb(status > 127 ? 127 : status, DEBUG_EXIT_PORT);
    reboot(RB_POWER_OFF);
    return 0;
}
