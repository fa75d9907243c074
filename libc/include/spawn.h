// posix_spawn. The attribute and file-action records have the layout of the
// kernel's posix_spawn system call (see libc/src/spawn.c).
#pragma once
#include <sched.h>
#include <signal.h>
#include <sys/types.h>

#define POSIX_SPAWN_RESETIDS 0x01
#define POSIX_SPAWN_SETPGROUP 0x02
#define POSIX_SPAWN_SETSIGDEF 0x04
#define POSIX_SPAWN_SETSIGMASK 0x08
#define POSIX_SPAWN_SETSCHEDPARAM 0x10
#define POSIX_SPAWN_SETSCHEDULER 0x20
#define POSIX_SPAWN_USEVFORK 0x40
#define POSIX_SPAWN_SETSID 0x80

typedef struct {
    unsigned __flags;
    pid_t __pgroup;
    unsigned long __sigmask;
    unsigned long __sigdefault;
    int __policy;
    int __priority;
} posix_spawnattr_t;

typedef struct {
    unsigned __n;
    unsigned __cap;
    void *__actions;
    long __reserved[4];
} posix_spawn_file_actions_t;

int posix_spawn(pid_t *restrict pid, const char *restrict path,
                const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *restrict attr,
                char *const argv[restrict], char *const envp[restrict]);
int posix_spawnp(pid_t *restrict pid, const char *restrict file,
                 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *restrict attr,
                 char *const argv[restrict], char *const envp[restrict]);

int posix_spawn_file_actions_init(posix_spawn_file_actions_t *fa);
int posix_spawn_file_actions_destroy(posix_spawn_file_actions_t *fa);
int posix_spawn_file_actions_addopen(posix_spawn_file_actions_t *restrict fa, int fd,
                                     const char *restrict path, int oflag, mode_t mode);
int posix_spawn_file_actions_addclose(posix_spawn_file_actions_t *fa, int fd);
int posix_spawn_file_actions_adddup2(posix_spawn_file_actions_t *fa, int fd, int newfd);
int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *restrict fa,
                                         const char *restrict path);
int posix_spawn_file_actions_addfchdir_np(posix_spawn_file_actions_t *fa, int fd);

int posix_spawnattr_init(posix_spawnattr_t *a);
int posix_spawnattr_destroy(posix_spawnattr_t *a);
int posix_spawnattr_setflags(posix_spawnattr_t *a, short flags);
int posix_spawnattr_getflags(const posix_spawnattr_t *restrict a, short *restrict flags);
int posix_spawnattr_setpgroup(posix_spawnattr_t *a, pid_t pgroup);
int posix_spawnattr_getpgroup(const posix_spawnattr_t *restrict a, pid_t *restrict pgroup);
int posix_spawnattr_setsigmask(posix_spawnattr_t *restrict a, const sigset_t *restrict mask);
int posix_spawnattr_getsigmask(const posix_spawnattr_t *restrict a, sigset_t *restrict mask);
int posix_spawnattr_setsigdefault(posix_spawnattr_t *restrict a, const sigset_t *restrict set);
int posix_spawnattr_getsigdefault(const posix_spawnattr_t *restrict a, sigset_t *restrict set);
