// POSIX system interface: file descriptors, processes, getopt, sysconf.
#pragma once
#include <stddef.h>
#include <sys/types.h>

#define STDIN_FILENO 0
#define STDOUT_FILENO 1
#define STDERR_FILENO 2
#define F_OK 0
#define X_OK 1
#define W_OK 2
#define R_OK 4
#ifndef SEEK_SET
#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2
#endif

#define _SC_ARG_MAX 0
#define _SC_CHILD_MAX 1
#define _SC_CLK_TCK 2
#define _SC_NGROUPS_MAX 3
#define _SC_OPEN_MAX 4
#define _SC_PAGESIZE 30
#define _SC_PAGE_SIZE 30
#define _SC_NPROCESSORS_CONF 83
#define _SC_NPROCESSORS_ONLN 84
#define _SC_PHYS_PAGES 85
#define _SC_GETPW_R_SIZE_MAX 70
#define _SC_HOST_NAME_MAX 180
#define _POSIX_VERSION 200809L
#define _POSIX_THREADS 200809L
#define _POSIX_TIMERS 200809L
#define _POSIX_MONOTONIC_CLOCK 200809L
#define _POSIX_SPAWN 200809L

extern char **environ;
extern char *optarg;
extern int optind, opterr, optopt;
int getopt(int argc, char *const argv[], const char *opts);

ssize_t read(int fd, void *buf, size_t n);
ssize_t write(int fd, const void *buf, size_t n);
ssize_t pread(int fd, void *buf, size_t n, off_t off);
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off);
int close(int fd);
off_t lseek(int fd, off_t off, int whence);
int dup(int fd);
int dup2(int fd, int newfd);
int dup3(int fd, int newfd, int flags);
int pipe(int fds[2]);
int pipe2(int fds[2], int flags);
int fsync(int fd);
void sync(void);
int fdatasync(int fd);
int ftruncate(int fd, off_t len);
int truncate(const char *path, off_t len);
int isatty(int fd);
int access(const char *path, int mode);
int faccessat(int dirfd, const char *path, int mode, int flags);
int chdir(const char *path);
int fchdir(int fd);
char *getcwd(char *buf, size_t size);
int unlink(const char *path);
int unlinkat(int dirfd, const char *path, int flags);
int rmdir(const char *path);
int link(const char *from, const char *to);
int linkat(int fromdir, const char *from, int todir, const char *to, int flags);
int symlink(const char *target, const char *path);
int symlinkat(const char *target, int dirfd, const char *path);
ssize_t readlink(const char *restrict path, char *restrict buf, size_t n);
ssize_t readlinkat(int dirfd, const char *restrict path, char *restrict buf, size_t n);
int chown(const char *path, uid_t uid, gid_t gid);
int fchown(int fd, uid_t uid, gid_t gid);
int lchown(const char *path, uid_t uid, gid_t gid);

pid_t fork(void);
pid_t vfork(void);
int execve(const char *path, char *const argv[], char *const envp[]);
int execv(const char *path, char *const argv[]);
int execvp(const char *file, char *const argv[]);
int execvpe(const char *file, char *const argv[], char *const envp[]);
int execl(const char *path, const char *arg, ...);
int execlp(const char *file, const char *arg, ...);
int execle(const char *path, const char *arg, ...);
_Noreturn void _exit(int status);
pid_t getpid(void);
pid_t getppid(void);
pid_t gettid(void);
pid_t getpgrp(void);
pid_t getpgid(pid_t pid);
int setpgid(pid_t pid, pid_t pgid);
pid_t setsid(void);
pid_t getsid(pid_t pid);
pid_t tcgetpgrp(int fd);
int tcsetpgrp(int fd, pid_t pgrp);
uid_t getuid(void);
uid_t geteuid(void);
gid_t getgid(void);
gid_t getegid(void);
int setuid(uid_t uid);
int setgid(gid_t gid);

unsigned sleep(unsigned secs);
int usleep(useconds_t usecs);
unsigned alarm(unsigned secs);
int pause(void);
long sysconf(int name);
int getpagesize(void);
int gethostname(char *name, size_t len);
void *sbrk(intptr_t inc);
int brk(void *addr);
long syscall(long nr, ...);
