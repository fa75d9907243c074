// posix_spawn. The attribute and file-action records are the kernel's posix_spawn
// system call's (see libc/src/spawn.c).
#pragma once
#include <sched.h>
#include <signal.h>
#include <sys/types.h>
#include "../../kernel/uapi/ext.h"

// The records are the kernel's (kernel/uapi/ext.h), which also defines the
// POSIX_SPAWN_* flags: posix_spawn hands them to the system call unchanged.
typedef struct spawn_attr posix_spawnattr_t;
typedef struct spawn_file_actions posix_spawn_file_actions_t;

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
// Extension: the child runs on the CPUs in set (POSIX_SPAWN_SETAFFINITY_NP).
int posix_spawnattr_setaffinity_np(posix_spawnattr_t *a, size_t size, const cpu_set_t *set);
