// /init of the Linux guest that tools/linuxguest boots: sets up a console and
// the usual mounts, runs the program named in /linuxguest/argv with its
// arguments, and hands the program's exit status to the host through QEMU's
// isa-debug-exit port (QEMU then exits with 2*status+1), with a last serial line
// "linuxguest: exit N" as a second channel. Powers off if the port is missing.
// The program "--cat" is built in: it copies the named files to the console
// (tools/linuxguest --kallsyms uses it for /proc/kallsyms). After the program,
// each file named in /linuxguest/outputs goes to the console in base64 between
//   linuxguest-output BEGIN N   and   linuxguest-output END N STATUS
// lines (N counts from 0; STATUS 0, or the errno that stopped it), which the
// host side turns back into files (tools/linuxguest --output).
// With the NIC's modules in /lib/net-modules (tools/linuxguest --net), it loads
// them in name order and sets eth0 to 10.0.2.15/24 (QEMU's user network, the
// address our kernel takes) and lo to 127.0.0.1, both up, before the program.
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
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

#define NET_MODULES "/lib/net-modules"

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

// Give interface name the address addr/24 and bring it up: 0, or -1.
static int if_up(int sock, const char *name, const char *addr)
{
    struct ifreq r;
    memset(&r, 0, sizeof r);
    strncpy(r.ifr_name, name, IFNAMSIZ - 1);
    struct sockaddr_in *a = (struct sockaddr_in *)&r.ifr_addr;
    a->sin_family = AF_INET;
    inet_pton(AF_INET, addr, &a->sin_addr);
    if (ioctl(sock, SIOCSIFADDR, &r) < 0)
        return -1;
    inet_pton(AF_INET, strcmp(name, "lo") ? "255.255.255.0" : "255.0.0.0", &a->sin_addr);
    if (ioctl(sock, SIOCSIFNETMASK, &r) < 0 || ioctl(sock, SIOCGIFFLAGS, &r) < 0)
        return -1;
    r.ifr_flags |= IFF_UP | IFF_RUNNING;
    return ioctl(sock, SIOCSIFFLAGS, &r);
}

static void network(void)
{
    struct dirent **names;
    int n = scandir(NET_MODULES, &names, NULL, by_name);
    if (n < 0)
        return;
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, NET_MODULES "/%s", names[i]->d_name);
        int fd = names[i]->d_name[0] == '.' ? -1 : open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && syscall(SYS_finit_module, fd, "", 0) != 0)
            fprintf(stderr, "linuxguest: loading %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(names[i]);
    }
    free(names);
    int sock = socket(AF_INET, SOCK_DGRAM, 0);
    if (sock < 0 || if_up(sock, "lo", "127.0.0.1") < 0 || if_up(sock, "eth0", "10.0.2.15") < 0)
        fprintf(stderr, "linuxguest: setting up the network: %s\n", strerror(errno));
    if (sock >= 0)
        close(sock);
}

// A list of strings, each ended by a NUL byte (/linuxguest/argv: the program
// and its arguments; /linuxguest/outputs: files to send back).
static int read_list(const char *path, char **list, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    int count = 0;
    for (ssize_t i = 0; i < n && count < MAX_ARGS; i += strlen(buf + i) + 1)
        list[count++] = buf + i;
    list[count] = NULL;
    return count;
}

static void send_output(int index, const char *path)
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned char in[57];                // 57 bytes -> one 76-character line
    char line[80];
    int err = 0;
    printf("linuxguest-output BEGIN %d\n", index);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        err = errno;
    for (ssize_t n; !err && (n = read(fd, in, sizeof in)) != 0;) {
        if (n < 0) {
            err = errno;
            break;
        }
        // A short read is fine: every line is decoded on its own.
        size_t k = 0;
        for (ssize_t i = 0; i < n; i += 3) {
            unsigned v = in[i] << 16 | (i + 1 < n ? in[i + 1] << 8 : 0) |
                         (i + 2 < n ? in[i + 2] : 0);
            line[k++] = b64[v >> 18 & 63];
            line[k++] = b64[v >> 12 & 63];
            line[k++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
            line[k++] = i + 2 < n ? b64[v & 63] : '=';
        }
        line[k] = 0;
        puts(line);
    }
    if (fd >= 0)
        close(fd);
    printf("linuxguest-output END %d %d\n", index, err);
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
    for (pid_t w; (w = waitpid(-1, &status, 0)) != pid;) {
        if (w < 0 && errno != EINTR)
            return 127;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(void)
{
    console();
    mounts();
    network();
    static char argbuf[65536], outbuf[65536];
    char *argv[MAX_ARGS + 1], *outputs[MAX_ARGS + 1];
    int status = 127;
    if (read_list("/linuxguest/argv", argv, argbuf, sizeof argbuf) == 0)
        fprintf(stderr, "linuxguest: no program in /linuxguest/argv\n");
    else
        status = run(argv);
    fflush(stdout);
    int n = read_list("/linuxguest/outputs", outputs, outbuf, sizeof outbuf);
    for (int i = 0; i < n; i++)
        send_output(i, outputs[i]);
    printf("linuxguest: exit %d\n", status);
    fflush(stdout);
    // The serial driver sends in the background: let it finish before QEMU
    // goes away, or the end of the output is lost.
    tcdrain(STDOUT_FILENO);
    sync();
    // The port carries 0..127 (QEMU's exit status is 2*byte+1, 8 bits).
    if (ioperm(DEBUG_EXIT_PORT, 1, 1) == 0)
        outb(status > 127 ? 127 : status, DEBUG_EXIT_PORT);
    reboot(RB_POWER_OFF);
    return 0;
}
