// Our extensions to the Linux x86-64 ABI: the one header that defines them.
// The kernel owns it; libc includes it. Every value sits in a range Linux does
// not use, chosen so that a binary using an extension on Linux fails cleanly
// (EINVAL or ENOSYS) or, for O_ANYFD, simply gets the lowest free fd.
#pragma once

// ---- open flags -----------------------------------------------------------
// Linux's open flags end at __O_TMPFILE (020000000); open(2) on Linux ignores
// unknown bits, so O_ANYFD there means "lowest free fd".
//
// O_ANYFD: the caller accepts any free descriptor number, not the lowest. The
// kernel allocates it from the calling CPU's own partition of the table, so
// O_ANYFD allocations on different cores share no cache line. Accepted by open,
// openat, pipe2, dup3, socket and accept4 (Linux rejects it in all but open/openat
// with EINVAL). dup3(oldfd, -1, O_ANYFD) duplicates onto any free fd; with
// newfd >= 0, dup3 uses exactly newfd as usual.
//
// RLIMIT_NOFILE: without O_ANYFD, as Linux, EMFILE when the lowest free fd is
// at or above the soft limit. O_ANYFD fds lie in per-CPU partitions above the
// low fds (64 fds per CPU, from fd 64 up, in rounds of 64 * ncpu fds) and may
// be numbered above the limit: a CPU uses only the rounds that begin below the
// limit, so every O_ANYFD fd is below limit + 64 * ncpu, and the limit bounds
// their number too. When those are full the call takes the lowest free fd
// below the limit instead, and fails with EMFILE only if there is none. With a
// limit of 64 or less there is no partition to use: O_ANYFD then gives the
// lowest free fd, so a process that lowered its limit to confine itself gets
// EMFILE rather than an fd beyond the limit.
#define O_ANYFD 040000000

// ---- system calls ---------------------------------------------------------
// Linux's x86-64 numbers are below 512 (512-547 are x32 entry points). Ours
// start at 2048; a Linux kernel returns -ENOSYS for them.
#define __NR_EXT_BASE 2048

// posix_spawn(pid_t *pid, const char *path, const struct spawn_file_actions *fa,
//             const struct spawn_attr *attr, char *const argv[], char *const envp[])
// Builds a child process straight from the executable at path (an ELF file or a
// #! script, resolved from the child's cwd after the file actions); never copies
// or write-touches the caller's address space (it only reads the arguments, and
// writes *pid). fa and attr may be NULL (no actions; default attributes). In order:
//   1. the child gets a copy of the caller's fd table, cwd, umask, signal mask and
//      ignored signals (caught ones become SIG_DFL, as at execve);
//   2. attr: SETSID (a new session and group, as setsid), then SETPGROUP (setpgid
//      of the child to attr->pgroup, 0 meaning its own pid; EPERM after SETSID,
//      as a session leader cannot move), RESETIDS, SETSIGMASK
//      (the mask becomes attr->sigmask), SETSIGDEF (the signals in
//      attr->sigdefault become SIG_DFL), SETAFFINITY_NP (its CPUs);
//   3. the file actions fa->actions[0 .. fa->n-1], each on the child's fd table
//      and cwd, as the calls open+dup2, close, dup2 (fd == newfd clears
//      FD_CLOEXEC), chdir, fchdir would;
//   4. the child's close-on-exec fds are closed and the program is loaded.
// Returns 0 and stores the child's pid in *pid (if pid is not NULL), or -errno
// and no child exists: ENOENT, EACCES, ENOEXEC, E2BIG, ELOOP from loading; the
// errno of the first failed file action (EBADF, ENOENT, ...); EINVAL for an
// unknown op, flag or a bad affinity; EPERM/ESRCH from SETSID/SETPGROUP; EFAULT
// for a bad pointer; ENOMEM.
#define __NR_posix_spawn (__NR_EXT_BASE + 0)

enum {
    SPAWN_FA_OPEN = 1,   // open(path, oflag, mode), moved to fd (what was there is closed)
    SPAWN_FA_CLOSE = 2,  // close(fd)
    SPAWN_FA_DUP2 = 3,   // dup2(fd, newfd); fd == newfd clears FD_CLOEXEC of fd
    SPAWN_FA_CHDIR = 4,  // chdir(path) of the child (extension, as glibc's _np)
    SPAWN_FA_FCHDIR = 5, // fchdir(fd) of the child (extension)
};

struct spawn_file_action {
    int op;              // SPAWN_FA_*
    int fd;              // OPEN: target fd; CLOSE, FCHDIR: the fd; DUP2: source
    int newfd;           // DUP2: target
    int oflag;           // OPEN
    unsigned mode;       // OPEN
    unsigned pad;        // 0
    unsigned long path;  // OPEN, CHDIR: const char *
};

struct spawn_file_actions {
    unsigned n;          // number of actions
    unsigned cap;        // the C library's allocation size; ignored by the kernel
    unsigned long actions; // const struct spawn_file_action[n]
};

// attr->flags: POSIX's values (and glibc's, for SETSID).
#define POSIX_SPAWN_RESETIDS 0x01
#define POSIX_SPAWN_SETPGROUP 0x02
#define POSIX_SPAWN_SETSIGDEF 0x04
#define POSIX_SPAWN_SETSIGMASK 0x08
#define POSIX_SPAWN_SETSCHEDPARAM 0x10 // accepted, no effect (one scheduling class)
#define POSIX_SPAWN_SETSCHEDULER 0x20  // accepted, no effect
#define POSIX_SPAWN_USEVFORK 0x40      // accepted, no effect (glibc's)
#define POSIX_SPAWN_SETSID 0x80
#define POSIX_SPAWN_SETAFFINITY_NP 0x100 // extension: the child runs on attr->affinity

#define SPAWN_AFFINITY_WORDS 4 // CPUs 0..255

struct spawn_attr {
    unsigned flags;            // POSIX_SPAWN_*
    int pgroup;                // SETPGROUP: the group to join; 0: a new one (its pid)
    unsigned long sigmask;     // SETSIGMASK: signals 1..64, bit n-1
    unsigned long sigdefault;  // SETSIGDEF: same encoding
    int policy;                // SETSCHEDULER (no effect)
    int priority;              // SETSCHEDPARAM (no effect)
    unsigned long affinity[SPAWN_AFFINITY_WORDS]; // SETAFFINITY_NP: CPU n is bit n%64 of word n/64
};

// kstats(struct kstats_cpu *buf, unsigned long n)
// Kernel statistics, one record per online CPU: fills the records of CPUs
// 0..min(n, ncpu)-1 and returns the number of online CPUs (call with n = 0 to
// size the buffer), or -EFAULT. Every field counts events on that CPU since boot;
// counts are read without stopping the CPUs, so they are exact only when the
// events of interest have finished.
#define __NR_kstats (__NR_EXT_BASE + 1)
struct kstats_cpu {
    unsigned long ipi_sent;          // cross-CPU call interrupts this CPU sent
    unsigned long ipi_received;      // ... and received (xcall interrupts taken)
    unsigned long tlb_shootdowns;    // munmap/mprotect/COW shootdowns it started (with IPIs)
    unsigned long tlb_flushes;       // shootdown requests it ran for other CPUs
    unsigned long tlb_async_flushes; // deferred flushes (MADV_UNMAP_ASYNC, stacks given back)
    unsigned long page_faults;       // user page faults it handled (including usercopy)
    unsigned long pages_alloc;       // physical pages it allocated (any use, runs included)
    unsigned long pages_freed;       // physical pages it freed
};

// ---- reboot commands ------------------------------------------------------
// reboot(LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2, cmd, arg) (syscall 169).
// Linux's LINUX_REBOOT_CMD_POWER_OFF (0x4321fedc) powers off with exit status 0.
// REBOOT_CMD_EXIT_STATUS powers off too, and makes `arg` (an integer, not a
// pointer) the machine's exit status: under QEMU the kernel writes it to the
// isa-debug-exit port, and tools/runqemu exits with it. That port carries
// 0..127 only, so the kernel writes a larger status (up to 255; more is 255)
// as 127 and prints it whole on the console, where tools/runqemu finds it.
// init uses it to end a `RUN=...` boot with the command's status
// (user/init.c). The value spells "EXIT"; Linux has no such command and
// returns EINVAL.
#define REBOOT_CMD_EXIT_STATUS 0x45584954

// ---- madvise advice -------------------------------------------------------
// Linux's advice values stop at MADV_COLLAPSE (25) and 100-102 (hwpoison, soft
// offline, guard pages); an unknown value gives EINVAL there.
//
// MADV_UNMAP_ASYNC: madvise(addr, len, MADV_UNMAP_ASYNC) removes the mapping of
// [addr, addr+len) like munmap (same errors: EINVAL for an unaligned addr or a
// range outside user space; unmapped pages in the range are ignored) but returns
// without waiting for other CPUs' TLB shootdowns: it sends no IPI. When it
// returns, the range is unmapped for every later mmap, fault, mprotect or
// munmap, and the calling thread's own accesses fault. Other threads of the
// process that ran on other CPUs may, until those CPUs flush (each at its next
// timer tick or context switch, batched), still read and write the old pages
// through stale translations ("doomed writes"); such writes are lost (or, for
// MAP_SHARED pages, land in the shared pages). The old pages go back to the
// allocator only after every CPU that could hold a translation has flushed, so
// a doomed write never reaches memory reused for anything else. Plain munmap
// stays synchronous. On Linux the value gives EINVAL. See
// docs/madv_unmap_async.md.
#define MADV_UNMAP_ASYNC 200
