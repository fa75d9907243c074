// init: the first process (pid 1, /sbin/init).
//
// What the kernel provides: descriptors 0, 1 and 2 open on the console (else
// init opens /dev/console for itself), /dev/console for the console shell (see
// start_shell), argv = {"/sbin/init", NULL}, and an environment built from the
// kernel command line by cmdline_env (kernel/lib/cmdline.c): every `key=value` word
// becomes an environment variable, as on Linux. A value with spaces is written
// in double quotes, `RUN="ls -l /"`, and arrives without them (RUN=ls -l /).
//
// What init does:
//   RUN set   runs `/bin/sh -c "$RUN"`, waits for it, and powers the machine
//             off with its exit status: reboot(2) with REBOOT_CMD_EXIT_STATUS
//             and the status as the 4th argument (kernel/uapi/ext.h). A status
//             from a signal is 128+N, as the shell shows it. If the kernel
//             refuses that command, a plain LINUX_REBOOT_CMD_POWER_OFF follows.
//   otherwise runs /etc/rc (with /bin/sh) if it exists, then an interactive
//             shell on the console (/bin/sh -i: prompts even if isatty cannot
//             tell), started again whenever it exits.
// Meanwhile init waits for every child, so orphans reparented to it are reaped.
// POSIX_SPAWN_SETSID is POSIX.1-2024; glibc still declares it only for _GNU_SOURCE.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reboot.h"

extern char **environ;

// Descriptors 0-2 for init's own messages: as the kernel gave them, or else
// the console.
static void console(void)
{
    if (fcntl(0, F_GETFD) >= 0)
        return;
    int fd = open("/dev/console", O_RDWR);
    if (fd < 0)
        return;   // nowhere to say so
    for (int i = 0; i < 3; i++)
        if (fd != i)
            dup2(fd, i);
    if (fd > 2)
        close(fd);
}

// Start /bin/sh with argv; 0 on failure (reported). The console shell
// (on_console) leads a new session and opens /dev/console afresh, which makes
// the console its controlling terminal: Ctrl-C there then signals the
// foreground job's process group (the shell does job control) and not init.
static pid_t start_shell(char **argv, bool on_console)
{
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&fa);
    if (on_console) {
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
        if (access("/dev/console", R_OK | W_OK) == 0) {
            posix_spawn_file_actions_addopen(&fa, 0, "/dev/console", O_RDWR, 0);
            posix_spawn_file_actions_adddup2(&fa, 0, 1);
            posix_spawn_file_actions_adddup2(&fa, 0, 2);
        }
    }
    pid_t pid;
    int err = posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, environ);
    if (err == EINVAL || err == ENOSYS)   // a C library or kernel without SETSID
        err = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (err) {
        fprintf(stderr, "init: /bin/sh: %s\n", strerror(err));
        return 0;
    }
    return pid;
}

// Wait until pid exits, reaping any other child on the way; its status in
// the shell's terms (exit code, or 128+signal).
static int wait_for(pid_t pid)
{
    for (;;) {
        int st;
        pid_t p = wait(&st);
        if (p < 0 && errno != EINTR)
            return 127;   // no such child: cannot happen, but do not spin
        if (p == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
}

static void power_off(int status)
{
    sync();
    reboot_syscall(REBOOT_CMD_EXIT_STATUS, status);
    reboot_syscall(LINUX_REBOOT_CMD_POWER_OFF, 0);
    fprintf(stderr, "init: cannot power off\n");
    for (;;)
        pause();
}

int main(void)
{
    console();
    setenv("PATH", "/bin:/sbin", 0);
    setenv("HOME", "/", 0);

    char *run = getenv("RUN");
    if (run) {
        char *cmd = strdup(run);
        unsetenv("RUN");   // the command's own environment does not need it
        char *argv[] = {"sh", "-c", cmd, NULL};
        pid_t pid = cmd ? start_shell(argv, false) : 0;
        power_off(pid ? wait_for(pid) : 127);
    }

    struct stat st;
    if (stat("/etc/rc", &st) == 0) {
        char *argv[] = {"sh", "/etc/rc", NULL};
        pid_t pid = start_shell(argv, false);
        if (pid)
            wait_for(pid);
    }
    for (;;) {
        char *argv[] = {"sh", "-i", NULL};
        pid_t pid = start_shell(argv, true);
        if (pid)
            wait_for(pid);
        else
            sleep(1);   // do not spin if /bin/sh cannot start
    }
}
