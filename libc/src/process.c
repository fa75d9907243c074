// Processes: fork (with atfork handlers), the exec family and PATH search,
// wait, system.
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "libc.h"

#define ATFORK_MAX 32
static struct {
    void (*prepare)(void), (*parent)(void), (*child)(void);
} atfork[ATFORK_MAX];
static int natfork;
static struct lock atfork_lock;

int pthread_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    __lock(&atfork_lock);
    int ok = natfork < ATFORK_MAX;
    if (ok) {
        atfork[natfork].prepare = prepare;
        atfork[natfork].parent = parent;
        atfork[natfork].child = child;
        natfork++;
    }
    __unlock(&atfork_lock);
    return ok ? 0 : ENOMEM;
}

pid_t fork(void)
{
    for (int i = natfork - 1; i >= 0; i--)
        if (atfork[i].prepare)
            atfork[i].prepare();
    __stdio_atfork(0);
    __malloc_atfork(0);
    long r = __sys(__NR_fork);
    int child = r == 0;
    __malloc_atfork(child ? 2 : 1);
    __stdio_atfork(child ? 2 : 1);
    if (child)
        __self()->tid = (int)__sys(__NR_gettid);
    for (int i = 0; i < natfork; i++) {
        void (*fn)(void) = child ? atfork[i].child : atfork[i].parent;
        if (fn)
            fn();
    }
    return (pid_t)__syscall_ret(r);
}


int execve(const char *path, char *const argv[], char *const envp[])
{
    return sys(__NR_execve, path, argv, envp);
}

int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }

// The next candidate for `file` along PATH, written into buf; *next advances.
// Returns NULL when the path list is exhausted.
char *__path_search(const char *file, char *buf, size_t size, const char **next)
{
    const char *p = *next;
    if (!p)
        return NULL;
    const char *end = strchrnul(p, ':');
    size_t dlen = (size_t)(end - p), flen = strlen(file);
    *next = *end ? end + 1 : NULL;
    if (dlen + flen + 2 > size) {
        buf[0] = 0;
        return buf;
    }
    memcpy(buf, p, dlen);
    if (dlen)
        buf[dlen++] = '/';  // an empty element means the current directory
    memcpy(buf + dlen, file, flen + 1);
    return buf;
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    if (!*file) {
        errno = ENOENT;
        return -1;
    }
    if (strchr(file, '/'))
        return execve(file, argv, envp);
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/bin:/usr/bin";
    char buf[PATH_MAX];
    int seen_eacces = 0;
    for (const char *next = path; __path_search(file, buf, sizeof buf, &next);) {
        if (!buf[0])
            continue;
        execve(buf, argv, envp);
        if (errno == EACCES)
            seen_eacces = 1;
        else if (errno != ENOENT && errno != ENOTDIR)
            return -1;
    }
    errno = seen_eacces ? EACCES : ENOENT;
    return -1;
}

int execvp(const char *file, char *const argv[]) { return execvpe(file, argv, environ); }

// execl and friends: collect the variadic arguments into an argv array.
#define COLLECT_ARGS(arg, argv, extra)                     \
    va_list ap;                                            \
    int n = 1;                                             \
    va_start(ap, arg);                                     \
    while (va_arg(ap, char *))                             \
        n++;                                               \
    va_end(ap);                                            \
    char *argv[n + 1];                                     \
    argv[0] = (char *)arg;                                 \
    va_start(ap, arg);                                     \
    for (int i = 1; i <= n; i++)                           \
        argv[i] = va_arg(ap, char *);                      \
    extra;                                                 \
    va_end(ap)

int execl(const char *path, const char *arg, ...)
{
    COLLECT_ARGS(arg, argv, (void)0);
    return execve(path, argv, environ);
}

int execlp(const char *file, const char *arg, ...)
{
    COLLECT_ARGS(arg, argv, (void)0);
    return execvp(file, argv);
}

int execle(const char *path, const char *arg, ...)
{
    char **envp;
    COLLECT_ARGS(arg, argv, envp = va_arg(ap, char **));
    return execve(path, argv, envp);
}

pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
    return sys(__NR_wait4, pid, status, options, ru);
}
pid_t waitpid(pid_t pid, int *status, int options) { return wait4(pid, status, options, NULL); }

int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
    return syscall(__NR_waitid, idtype, id, info, options, NULL);
}
pid_t wait(int *status) { return wait4(-1, status, 0, NULL); }

int system(const char *cmd)
{
    if (!cmd)
        return 1;
    char *argv[] = {"sh", "-c", (char *)cmd, NULL};
    pid_t pid;
    int err = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
    if (err) {
        errno = err;
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return status;
}
