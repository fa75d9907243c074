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
#define O_ANYFD 040000000

// ---- system calls ---------------------------------------------------------
// Linux's x86-64 numbers are below 512 (512-547 are x32 entry points). Ours
// start at 2048; a Linux kernel returns -ENOSYS for them.
#define __NR_EXT_BASE 2048

// posix_spawn(pid_t *pid, const char *path, const struct spawn_file_action *fa,
//             unsigned nfa, const struct spawn_attr *attr, char *const argv[],
//             char *const envp[])
// Builds the child straight from the executable at path; never copies or
// write-touches the caller's address space. Returns 0 and stores the child's
// pid, or -errno (ENOENT, EACCES, ENOEXEC, or the errno of a failed file action).
#define __NR_posix_spawn (__NR_EXT_BASE + 0)

// ---- madvise advice -------------------------------------------------------
// Linux's advice values stop at MADV_COLLAPSE (25) and 100-102 (hwpoison, soft
// offline, guard pages); an unknown value gives EINVAL there.
//
// MADV_UNMAP_ASYNC: remove the mapping of [addr, addr+len) and return without
// waiting for other cores' TLB shootdowns. Until each core that may cache a
// translation has flushed (its next tick or context switch), writes through a
// stale translation may still reach the old pages ("doomed writes"); the pages
// return to the allocator only after that. See docs/madv_unmap_async.md.
#define MADV_UNMAP_ASYNC 200
