// File-descriptor tables, one per thread or shared (CLONE_FILES) (fdtable.c): fd number -> open file
// description (struct file) plus the close-on-exec flag.
//
// Interface for process management (fork, clone, execve, exit):
//   fdtable_new()            an empty table, one reference (NULL: out of memory)
//   fdtable_copy(t)          fork: a new table, one reference, whose fds refer to
//                            the same open file descriptions as t's do now
//                            (offsets and status flags shared, POSIX), each
//                            holding its file (file.h); NULL if out of memory
//   fdtable_fill(t, src, skip, arg)  posix_spawn: the same into t (private to
//                            the caller, its own fds at the skipped numbers),
//                            for the fds of src that skip(fd, arg) does not
//                            name; src's skipped slots are not read. 0 or -ENOMEM
//   fdtable_hold(t)          one more holder. EVERY thread that can use the table
//                            must hold its own reference (clone with CLONE_FILES
//                            or CLONE_THREAD: hold; thread exit: release), even
//                            when the threads share one struct proc: fd_get does
//                            not borrow the file when the table has a single
//                            holder, which is safe only if no other thread can
//                            close an fd meanwhile.
//   fdtable_release(t)       drop one; the last closes every fd and frees it
//   fdtable_unshare(&t)      a thread's reference *t becomes one to a private copy
//                            if others hold the table (execve, close_range's
//                            CLOSE_RANGE_UNSHARE); 0 or -ENOMEM (*t unchanged)
//   fdtable_close_on_exec(t) execve: close the fds marked FD_CLOEXEC
// Everything else is for the system calls (sys_file.c, sys_path.c) and tests.
#pragma once
#include "kernel.h"

struct file;
struct fdtable;

#define FD_MAX (1 << 20)  // fds are 0 .. FD_MAX-1 (Linux's default nr_open)

struct fdtable *fdtable_new(void);
struct fdtable *fdtable_copy(struct fdtable *t);
int fdtable_fill(struct fdtable *t, struct fdtable *src, bool (*skip)(int fd, void *arg), void *arg);
void fdtable_hold(struct fdtable *t);
void fdtable_release(struct fdtable *t);
int fdtable_unshare(struct fdtable **t);
void fdtable_close_on_exec(struct fdtable *t);

// How a file goes into a slot (the `how` of fd_install and fd_install_at):
#define FDI_CLOEXEC 1u   // FD_CLOEXEC
#define FDI_HELD 2u      // the caller's reference is held (file_hold), not owned
// Install f (the caller's reference, owned, or held with FDI_HELD, goes
// to the table) at a free fd: the lowest one >= minfd and below limit
// (RLIMIT_NOFILE's soft limit, proc_nofile), or with anyfd any fd from the
// calling CPU's own partition, which may lie above limit (by less than
// 64 * ncpu; fdtable.c says how the limit bounds them).
// Returns the fd, -EMFILE if no fd is free within the limit, -EINVAL for a
// minfd outside 0 .. FD_MAX-1 (-ENOMEM if a table chunk cannot be allocated).
int fd_install(struct fdtable *t, struct file *f, unsigned how, bool anyfd, int minfd, int limit);
// Install f at exactly fd (dup2/dup3), closing what was there. The caller's
// reference goes to the table. -EBADF if fd is out of range (-ENOMEM if a
// table chunk cannot be allocated).
int fd_install_at(struct fdtable *t, int fd, struct file *f, unsigned how);
// The file at fd (f == NULL if fd is not open), usable until fd_put. Lock-free,
// and safe against a concurrent close in another thread: the close takes effect
// for later lookups while this one keeps its file alive. When the table has a
// single holder nobody else can close the fd meanwhile, so nothing is written;
// otherwise the file is borrowed (file_borrow: a per-CPU count). To keep the
// file beyond fd_put, borrow it again (file_borrow) before fd_put.
struct fd_ref {
    struct file *f;
    bool borrowed;
};
struct fd_ref fd_get(struct fdtable *t, int fd);
// The file at fd without any reference taken, for a reader inside an epoch
// read section (/proc reading another process's table): files, and tables
// (fdtable_release), are freed a grace period after their last reference,
// so f and t stay readable until the section ends. NULL if fd is not open.
struct file *fd_peek(struct fdtable *t, int fd);
void fd_put(struct fd_ref r);
// A new reference to fd's file, for another slot (dup, dup2, a file action):
// owned if `owned` and an owned one is left, else held (*how = FDI_HELD); NULL
// if fd is not open. Install it with `how`, or drop it with fd_ref_drop.
struct file *fd_dup_ref(struct fdtable *t, int fd, bool owned, unsigned *how);
void fd_ref_drop(struct file *f, unsigned how);
int fd_close(struct fdtable *t, int fd); // 0 or -EBADF
int fd_get_cloexec(struct fdtable *t, int fd); // 0/1, or -EBADF
int fd_set_cloexec(struct fdtable *t, int fd, bool on);
// The lowest open fd >= from, or -1 (/proc/PID/fd); a snapshot racing with
// opens and closes.
int fd_next_open(struct fdtable *t, int from);
// close_range: close (or with cloexec, mark) every open fd in [lo, hi].
void fd_close_range(struct fdtable *t, unsigned lo, unsigned hi, bool cloexec);

// Tests and benchmarks: the address of fd's slot (NULL if its chunk is missing).
void *fdtable_debug_slot(struct fdtable *t, int fd);
const void *fdtable_debug_dir(struct fdtable *t); // the directory now (tests)
// The partition (chunk index) O_ANYFD allocations on CPU c start in.
int fdtable_partition_of_cpu(int c);
int fd_chunk_of(int fd);
