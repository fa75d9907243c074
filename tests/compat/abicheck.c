// A program built with other C libraries -- musl-gcc -static and glibc's
// gcc -static -- to check that such binaries run unmodified on our kernel and
// print exactly what they print on Linux (tests/cases/compat.t runs both builds
// on the host and in the guest against one expected output). Its output depends
// only on the system-call ABI: files, directories, pipes, fork/wait, signals,
// mmap, time and identity calls.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got;
static void on_usr1(int sig) { got = sig; }

int main(void)
{
    struct utsname u;
    printf("uname: %d %s\n", uname(&u), u.sysname);
    printf("pid positive: %d\n", getpid() > 0);

    // Files: create, write, read back, stat, a missing name.
    int fd = open("f", O_RDWR | O_CREAT | O_EXCL, 0640);
    printf("write: %zd\n", write(fd, "hello\n", 6));
    char buf[16] = {0};
    ssize_t got_n = pread(fd, buf, sizeof buf - 1, 0);
    printf("pread: %zd %s", got_n, buf);
    struct stat st;
    // (Each call before the printf: argument order is unspecified in C.)
    int r = fstat(fd, &st);
    printf("fstat: %d size %lld mode %o nlink %d\n", r, (long long)st.st_size,
           st.st_mode & 07777, (int)st.st_nlink);
    close(fd);
    errno = 0;
    r = open("nothere", O_RDONLY);
    printf("open missing: %d errno %d\n", r, errno);
    printf("link: %d\n", link("f", "g"));
    r = stat("g", &st);
    printf("stat nlink: %d %d\n", r, (int)st.st_nlink);

    // Directories: list, sorted by the program (order is the file system's).
    mkdir("d", 0755);
    close(open("d/b", O_CREAT | O_WRONLY, 0644));
    close(open("d/a", O_CREAT | O_WRONLY, 0644));
    DIR *dir = opendir("d");
    int entries = 0, a = 0, b = 0;
    for (struct dirent *e; dir && (e = readdir(dir));) {
        entries++;
        a |= strcmp(e->d_name, "a") == 0;
        b |= strcmp(e->d_name, "b") == 0;
    }
    closedir(dir);
    printf("readdir: %d entries, a %d b %d\n", entries, a, b);

    // A pipe between two processes, and the child's exit status.
    int p[2];
    pipe(p);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        write(p[1], "from child", 10);
        _exit(7);
    }
    close(p[1]);
    memset(buf, 0, sizeof buf);
    ssize_t n = read(p[0], buf, sizeof buf - 1);
    int status;
    waitpid(pid, &status, 0);
    printf("pipe: %zd %s; child exit %d\n", n, buf, WEXITSTATUS(status));

    // A signal to ourselves, with a handler.
    signal(SIGUSR1, on_usr1);
    kill(getpid(), SIGUSR1);
    printf("signal: %d\n", (int)got);

    // Anonymous memory.
    char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    m[4096] = 'x';
    char c = m[4096];
    printf("mmap: %d %c %d\n", m != MAP_FAILED, c, munmap(m, 8192));

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("clock: %d\n", t1.tv_sec > t0.tv_sec || (t1.tv_sec == t0.tv_sec && t1.tv_nsec >= t0.tv_nsec));
    return 0;
}
