// A process's file-system context (fs_context.c): its current directory and
// umask, shared by threads created with CLONE_FS, copied by fork. And path
// resolution relative to the current process (the *at system calls, execve).
//
// Interface for process management:
//   fsctx_new()       root as cwd, umask 022; one reference; NULL if out of memory
//   fsctx_copy(c)     fork: same cwd (another reference on it) and umask
//   fsctx_hold(c)     one more holder (CLONE_FS)
//   fsctx_release(c)  drop one; the last drops the cwd
//   path_lookup_at(dirfd, kpath, flags, &ip)  resolve a kernel-space path
//   path_stat_at(dirfd, kpath, flags, mask, &st)  stat it, without references
//   path_openat(t, dirfd, kpath, flags, mode) open into fd table t
#pragma once
#include "kernel.h"
#include "sync/epoch.h"

struct inode;

struct fs_context {
    struct inode *cwd;       // referenced; replaced by chdir, old one dropped a grace period later
    uint32_t umask;
    int users __cacheline_aligned;
};

struct fs_context *fsctx_new(void);
struct fs_context *fsctx_copy(struct fs_context *c);
void fsctx_hold(struct fs_context *c);
void fsctx_release(struct fs_context *c);

// The current process's cwd with a reference (fs_iput it); the root for kernel
// threads and processes without a context.
struct inode *fsctx_cwd(void);
// Make dir (the caller's reference, handed over) the current process's cwd.
void fsctx_set_cwd(struct inode *dir);
// Is ip the current process's cwd? (A pointer compared; no reference taken.)
bool fsctx_cwd_is(struct inode *ip);
uint32_t fsctx_umask(void);
uint32_t fsctx_set_umask(uint32_t mask); // returns the old one

// The directory a path is resolved from, for the *at calls: with a reference
// (fs_iput it). dirfd AT_FDCWD means the cwd; an absolute path ignores dirfd
// entirely (as Linux). -EBADF for a bad dirfd, -ENOTDIR if it is not a directory.
int dirfd_inode(int dirfd, const char *kpath, struct inode **dir);

// Resolve kpath (kernel memory) from dirfd the way the *at calls do. flags:
// AT_SYMLINK_NOFOLLOW (do not follow a final symlink), AT_EMPTY_PATH (an empty
// path names dirfd itself, which may then be any file). *out is referenced.
int path_lookup_at(int dirfd, const char *kpath, int flags, struct inode **out);

// stat of what path_lookup_at would find, with fs_stat's mask (fs.h), taking no
// reference on it, nor on the root or the cwd it starts from.
struct fs_stat;
int path_stat_at(int dirfd, const char *kpath, int flags, uint32_t mask, struct fs_stat *st);

// The absolute path of directory dir, built from the end of buf (size
// FS_PATH_MAX); its start, or NULL with *err (ENOENT: dir was removed;
// ENAMETOOLONG). sys_path.c (getcwd), procfs.
char *path_of_dir(struct inode *dir, char *buf, long *err);

// openat with a kernel-space path, installing the new fd in table t (which need
// not be the current process's: posix_spawn's file actions build the child's).
// The path is resolved from dirfd of the current process; kpath is a page of
// FS_PATH_MAX bytes, which a /proc path leaving /proc by ".." rewrites. The fd,
// or -errno.
struct fdtable;
long path_openat(struct fdtable *t, int dirfd, char *kpath, int flags, uint32_t mode);
// The open file description openat would create, for kpath resolved from dir
// (borrowed; ignored for an absolute path), creating with mode & ~umask. 0 and
// *out referenced, or -errno. (posix_spawn's open action: the child's cwd.)
struct file;
int path_open_file(struct inode *dir, const char *kpath, int flags, uint32_t mode,
                   uint32_t umask, struct file **out);
