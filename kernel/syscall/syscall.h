// System calls: the entry path (syscallasm.S), the dispatcher (syscall.c) and the
// helpers handlers share.
#pragma once
#include "kernel.h"

struct trapframe;

void syscall_init_cpu(void);            // MSRs and CR4 features, on every CPU
void syscall_set_kstack(uintptr_t top); // kernel stack for entries from user mode
// Return-to-user work (kills, preemption, debug checks). Interrupts are off on
// return.
void user_return(struct trapframe *tf);

#define T_SYSCALL 256 // trapframe.vector of a frame built by syscall_entry

// Handlers take the six argument registers and return a value or -errno.
typedef long (*syscall_fn)(long, long, long, long, long, long);

// The handlers (sys_*.c). User pointers are uint64_t: never dereferenced, only
// passed to the usercopy.h helpers.
long sys_exit(int code);
long sys_exit_group(int code);
long sys_wait4(int pid, uint64_t status, int options, uint64_t rusage);
long sys_getpid(void);
long sys_getppid(void);
long sys_gettid(void);
long sys_set_tid_address(uint64_t tidptr);
long sys_arch_prctl(int code, uint64_t addr);
long sys_brk(uint64_t addr);
long sys_mmap(uint64_t addr, size_t len, int prot, int flags, int fd, long off);
long sys_munmap(uint64_t addr, size_t len);
long sys_mprotect(uint64_t addr, size_t len, int prot);
long sys_madvise(uint64_t addr, size_t len, int advice);
long sys_kstats(uint64_t ubuf, uint64_t n);
long sys_uname(uint64_t buf);
// LAB sysinfo BEGIN
long sys_sysinfo(uint64_t buf);
// LAB sysinfo END
long sys_clock_gettime(int clock, uint64_t ts);
long sys_gettimeofday(uint64_t tv, uint64_t tz);
long sys_time(uint64_t tloc);
long sys_nanosleep(uint64_t req, uint64_t rem);
long sys_alarm(unsigned secs);
long sys_getitimer(int which, uint64_t uval);
long sys_setitimer(int which, uint64_t unew, uint64_t uold);
long sys_poll(uint64_t ufds, unsigned nfds, int timeout_ms);
long sys_ppoll(uint64_t ufds, unsigned nfds, uint64_t uts, uint64_t umask, size_t size);
long sys_select(int nfds, uint64_t rd, uint64_t wr, uint64_t ex, uint64_t utv);
long sys_pselect6(int nfds, uint64_t rd, uint64_t wr, uint64_t ex, uint64_t uts, uint64_t usig);
long sys_clock_nanosleep(int clock, int flags, uint64_t req, uint64_t rem);
long sys_sched_yield(void);
long sys_getcpu(uint64_t cpu, uint64_t node, uint64_t cache);
long sys_sched_setaffinity(int pid, size_t len, uint64_t mask);
long sys_sched_getaffinity(int pid, size_t len, uint64_t mask);
long sys_getuid(void);
long sys_geteuid(void);
long sys_getgid(void);
long sys_getegid(void);
long sys_getgroups(int size, uint64_t ulist);
long sys_getrandom(uint64_t buf, size_t len, unsigned flags);
long sys_rt_sigtimedwait(uint64_t set, uint64_t info, uint64_t ts, size_t size);
long sys_reboot(unsigned magic1, unsigned magic2, unsigned cmd, uint64_t arg);
long sys_rt_sigprocmask(int how, uint64_t set, uint64_t oldset, size_t size);
long sys_rt_sigaction(int sig, uint64_t act, uint64_t oldact, size_t size);
// Processes, threads and signals (sys_proc.c, exec.c, signal.c, futex.c).
long sys_clone(uint64_t flags, uint64_t newsp, uint64_t ptid, uint64_t ctid, uint64_t tls);
long sys_fork(void);
long sys_vfork(void);
long sys_execve(uint64_t path, uint64_t argv, uint64_t envp);
long sys_posix_spawn(uint64_t upid, uint64_t upath, uint64_t ufa, uint64_t uattr, uint64_t uargv,
                     uint64_t uenvp);
long sys_setsid(void);
long sys_setpgid(int pid, int pgid);
long sys_getpgid(int pid);
long sys_getpgrp(void);
long sys_getsid(int pid);
long sys_waitid(int idtype, int id, uint64_t info, int options, uint64_t rusage);
long sys_prlimit64(int pid, int resource, uint64_t newlim, uint64_t oldlim);
long sys_getrlimit(int resource, uint64_t lim);
long sys_setrlimit(int resource, uint64_t lim);
long sys_futex(uint64_t uaddr, int op, uint32_t val, uint64_t timeout, uint64_t uaddr2,
               uint32_t val3);
long sys_rt_sigreturn(void);
long sys_restart_syscall(void);
long sys_rt_sigpending(uint64_t set, size_t size);
long sys_rt_sigsuspend(uint64_t mask, size_t size);
long sys_pause(void);
long sys_sigaltstack(uint64_t ss, uint64_t oss);
long sys_kill(int pid, int sig);
long sys_tkill(int tid, int sig);
long sys_tgkill(int tgid, int tid, int sig);

// sys_file.c: calls on file descriptors.
long sys_read(int fd, uint64_t buf, size_t n);
long sys_write(int fd, uint64_t buf, size_t n);
long sys_pread64(int fd, uint64_t buf, size_t n, int64_t off);
long sys_pwrite64(int fd, uint64_t buf, size_t n, int64_t off);
long sys_sendfile(int out_fd, int in_fd, uint64_t uoff, size_t count);
long sys_readv(int fd, uint64_t iov, int iovcnt);
long sys_writev(int fd, uint64_t iov, int iovcnt);
long sys_lseek(int fd, int64_t off, int whence);
long sys_close(int fd);
long sys_dup(int fd);
long sys_dup2(int oldfd, int newfd);
long sys_dup3(int oldfd, int newfd, int flags);
long sys_fcntl(int fd, int cmd, unsigned long arg);
long sys_close_range(unsigned lo, unsigned hi, unsigned flags);
long sys_fstat(int fd, uint64_t ubuf);
long sys_ftruncate(int fd, int64_t len);
long sys_fsync(int fd);
long sys_fdatasync(int fd);
long sys_getdents64(int fd, uint64_t udirp, size_t count);
long sys_ioctl(int fd, unsigned long req, uint64_t arg);
long sys_fchdir(int fd);
long sys_fchmod(int fd, uint32_t mode);
long sys_pipe(uint64_t ufds);
long sys_pipe2(uint64_t ufds, int flags);

// sys_socket.c: sockets.
long sys_socket(int domain, int type, int protocol);
long sys_socketpair(int domain, int type, int protocol, uint64_t usv);
long sys_bind(int fd, uint64_t uaddr, int len);
long sys_connect(int fd, uint64_t uaddr, int len);
long sys_listen(int fd, int backlog);
long sys_accept(int fd, uint64_t uaddr, uint64_t ulen);
long sys_accept4(int fd, uint64_t uaddr, uint64_t ulen, int flags);
long sys_getsockname(int fd, uint64_t uaddr, uint64_t ulen);
long sys_getpeername(int fd, uint64_t uaddr, uint64_t ulen);
long sys_sendto(int fd, uint64_t ubuf, size_t len, int flags, uint64_t uaddr, int alen);
long sys_recvfrom(int fd, uint64_t ubuf, size_t len, int flags, uint64_t uaddr, uint64_t ualen);
long sys_sendmsg(int fd, uint64_t umsg, int flags);
long sys_recvmsg(int fd, uint64_t umsg, int flags);
long sys_shutdown(int fd, int how);
long sys_setsockopt(int fd, int level, int optname, uint64_t uval, int len);
long sys_getsockopt(int fd, int level, int optname, uint64_t uval, uint64_t ulen);

// sys_path.c: calls on path names.
long sys_open(uint64_t upath, int flags, uint32_t mode);
long sys_openat(int dirfd, uint64_t upath, int flags, uint32_t mode);
long sys_creat(uint64_t upath, uint32_t mode);
long sys_memfd_create(uint64_t uname, unsigned flags);
long sys_stat(uint64_t upath, uint64_t ubuf);
long sys_lstat(uint64_t upath, uint64_t ubuf);
long sys_newfstatat(int dirfd, uint64_t upath, uint64_t ubuf, int flags);
long sys_statx(int dirfd, uint64_t upath, int flags, uint32_t mask, uint64_t ubuf);
long sys_mkdir(uint64_t upath, uint32_t mode);
long sys_mkdirat(int dirfd, uint64_t upath, uint32_t mode);
long sys_mknod(uint64_t upath, uint32_t mode, uint32_t dev);
long sys_mknodat(int dirfd, uint64_t upath, uint32_t mode, uint32_t dev);
long sys_unlink(uint64_t upath);
long sys_rmdir(uint64_t upath);
long sys_unlinkat(int dirfd, uint64_t upath, int flags);
long sys_rename(uint64_t uold, uint64_t unew);
long sys_renameat(int olddirfd, uint64_t uold, int newdirfd, uint64_t unew);
long sys_renameat2(int olddirfd, uint64_t uold, int newdirfd, uint64_t unew, unsigned flags);
long sys_link(uint64_t uold, uint64_t unew);
long sys_linkat(int olddirfd, uint64_t uold, int newdirfd, uint64_t unew, int flags);
long sys_symlink(uint64_t utarget, uint64_t ulink);
long sys_symlinkat(uint64_t utarget, int newdirfd, uint64_t ulink);
long sys_readlink(uint64_t upath, uint64_t ubuf, int bufsiz);
long sys_readlinkat(int dirfd, uint64_t upath, uint64_t ubuf, int bufsiz);
long sys_truncate(uint64_t upath, int64_t len);
long sys_chdir(uint64_t upath);
long sys_getcwd(uint64_t ubuf, size_t size);
long sys_access(uint64_t upath, int mode);
long sys_faccessat(int dirfd, uint64_t upath, int mode);
long sys_faccessat2(int dirfd, uint64_t upath, int mode, int flags);
long sys_utimensat(int dirfd, uint64_t upath, uint64_t utimes, int flags);
long sys_chmod(uint64_t upath, uint32_t mode);
long sys_fchmodat(int dirfd, uint64_t upath, uint32_t mode);
long sys_umask(uint32_t mask);
