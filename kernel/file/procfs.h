// /proc (procfs.c, procfs_text.c): a synthetic file system of read-only files
// made at open, in Linux's formats, for ps, top, free and uptime.
//
// The system calls on paths (sys_path.c) hand an absolute path whose first
// component is "proc" to procfs_path_*, and a path relative to a descriptor of
// a /proc directory as well, once procfs_path has taken out "." and ".." (a
// path that leaves /proc that way goes back to ScaleFS); everything else goes
// to ScaleFS, where /proc is an empty directory (the mount point, so that `ls /`
// shows it). getdents64 on a /proc directory asks procfs_readdir.
//
// The system calls on paths also take relative paths from a cwd that is
// /proc itself to procfs (procfs_mountpoint).
//
// Names: /proc/{self, cpuinfo, meminfo, uptime, loadavg, mounts, stat}, and
// for every process /proc/PID/{stat, status, cmdline, comm, fd/}; fd/N is a
// symbolic link naming what the caller's fd N is open on.
#pragma once
#include "fs.h"
#include "kernel.h"
#include "file/stat.h"

struct file;

// path (absolute, or relative to the /proc directory whose absolute path is
// base) in buf (FS_PATH_MAX bytes) as an absolute path without "." and ".."
// (procfs.c: collapse). 1 if that names something under /proc, which the
// procfs_path_* calls then take; 0 if ".." led out of /proc, and ScaleFS
// resolves buf; -ENAMETOOLONG.
int procfs_path(const char *base, const char *path, char *buf);
// The directory path of an open /proc directory (procfs_is_dir), for base.
const char *procfs_dir_path(struct file *f);
// ScaleFS's /proc, the mount point (borrowed; never freed). It may be the cwd
// (top changes to /proc): relative paths from it are /proc's. Other /proc
// directories cannot be the cwd.
struct inode *procfs_mountpoint(void);
int procfs_path_open(const char *path, int flags, struct file **out);
int procfs_path_stat(const char *path, bool nofollow, uint32_t mask, struct fs_stat *st);
long procfs_path_readlink(const char *path, char *buf, size_t n); // bytes, or -errno
bool procfs_is_dir(struct file *f);
int procfs_path_is_root(const char *path); // 1: /proc itself, 0: below it, or -errno
// getdents64 on a /proc directory (fs_readdir's contract).
int procfs_readdir(struct file *f, uint64_t *pos, fs_filldir_t fill, void *arg);
void procfs_init(void); // at boot, after fs_boot: the /proc mount point

// procfs_text.c: the contents, built into a growing kernel buffer.
struct pbuf {
    char *buf;
    size_t len, cap;
    bool nomem;
};
void pb_printf(struct pbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pb_bytes(struct pbuf *b, const void *p, size_t n);
enum procfs_text {
    PT_CPUINFO, PT_MEMINFO, PT_UPTIME, PT_LOADAVG, PT_MOUNTS, PT_STAT, // /proc/NAME
    PT_PAGESITES,
    PT_PID_STAT, PT_PID_STATUS, PT_PID_CMDLINE, PT_PID_COMM,          // /proc/PID/NAME
    PT_PID_STACK, PT_PID_STATM, PT_PID_MAPS,
};
// The text of a file (pid for the PT_PID_* ones; tid: a thread's, task/TID,
// or 0): 0, -ESRCH (the process has been reaped, the thread is gone) or -ENOMEM.
int procfs_text(enum procfs_text which, int pid, int tid, struct pbuf *b);
// pid's address space, held (vmspace_put it), or NULL (none: a zombie, or
// no such process).
struct vmspace;
struct vmspace *procfs_vm(int pid);
// What fd of pid is open on, read from its table inside one epoch section
// (fd_peek: no reference to the file or the table is taken): the file's
// inode (referenced: fs_iput it), or for a file without one (a pipe, the
// console) whether it is the console and its attributes (mask). 0, or
// -ENOENT if fd is not open or the process is gone.
struct fdinfo {
    struct inode *ip;
    bool tty;
    struct fs_stat st;
};
int procfs_fd_info(int pid, int fd, uint32_t mask, struct fdinfo *out);
// What /proc/PID/fd/N reads as: "/dev/console", "pipe:[ino]", a directory's
// path, "scalefs:[ino]" for files (ScaleFS keeps no name with a file).
void procfs_fd_target(const struct fdinfo *fi, struct pbuf *b);
