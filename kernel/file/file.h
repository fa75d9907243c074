// Open file descriptions (file.c): what a file descriptor refers to. One is made
// by each open/pipe/socket call and shared by every descriptor dup'ed from it, in
// this process and in children forked after (POSIX): they share the offset and
// the status flags. Each kind of file (ScaleFS file or directory, pipe end,
// device) supplies a struct file_ops.
#pragma once
#include "kernel.h"
#include "sync/epoch.h"
#include "sync/refcache.h"
#include "sync/sleeplock.h"
#include "uapi/abi.h"

struct file;
struct inode;
struct fs_stat;
struct poller;

// Every operation may be NULL, meaning "not supported" with the errno given in
// file.c (read/write: EINVAL, or EBADF for the wrong access mode; ioctl: ENOTTY).
// User buffers are user addresses: implementations copy through usercopy.h.
// pos is the offset to use and update, or NULL for files without one (pipes,
// terminals); read/write return bytes moved or -errno.
struct file_ops {
    long (*read)(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos);
    long (*write)(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos);
    long (*ioctl)(struct file *f, unsigned long req, uint64_t arg);
    // stat of a file without an inode (pipes); files with one use fs_stat.
    int (*stat)(struct file *f, uint32_t mask, struct fs_stat *st);
    // writev as one write, for streams that promise atomicity (pipes: up to
    // PIPE_BUF bytes in all); without it, writev writes segment by segment.
    // iov is in kernel memory, its user ranges checked; total is their sum.
    long (*writev)(struct file *f, const struct iovec *iov, int cnt, size_t total);
    void (*release)(struct file *f); // the last reference is gone
    // poll/select: the POLL* bits true now, after poll_register(pl, the object's
    // pollhead) (poll.h); without it a file is always readable and writable.
    unsigned (*poll)(struct file *f, struct poller *pl);
    bool seekable;                    // lseek/pread/pwrite allowed (else ESPIPE)
};

// References (file.c), of three kinds; the file is released when all are gone:
//  - owned (refs): the descriptors open/pipe/memfd made, dup'ed ones while any
//    owned one exists, and in-kernel holders. One shared count; once 0 it
//    stays 0.
//  - held (per CPU): the descriptors a forked or spawned child inherits, and
//    dup'ed ones once no owned reference is left. Taking or dropping one
//    writes only this CPU's refcache slot.
//  - borrowed (per CPU): fd lookups in progress in tables shared by threads,
//    and poll's while it waits. Dropping one reads only `dead`, set once when
//    neither owned nor held references remain.
// Held and borrowed references share one refcache count (`shared`), a held one
// weighing FILE_HOLD: one object per file for refcache to track, and one exact
// read tells both numbers apart.
//
// Who may write each field (docs/conventions.md): [i] immutable once made,
// [a] atomic (sync/atomic.h), no lock; [l] poslock, [r] also read without it.
struct file {
    // Read by every operation through the description.
    uint32_t flags;            // [a] O_ACCMODE and status flags (O_APPEND, O_NONBLOCK, ...)
    bool unowned;              // [a] set once: refs is 0 (read by held drops, not refs)
    bool dead;                 // [a] set once: no owned or held reference is left
    bool lent;                 // [a] set once, before the first held or borrowed reference
    const struct file_ops *ops; // [i]
    struct inode *ip;          // [i] ScaleFS inode (files, directories, device nodes), referenced
    void *priv;                // [i] the kind's own state (pipe, capture buffer)
    // Written when owned references come and go, and when the file goes.
    int refs __cacheline_aligned; // [a] owned references; never back from 0
    int released;              // [a] set once, by whoever releases the file
    struct epoch_cb free_cb;   // the releaser's
    // 1 (until released) + borrowed + FILE_HOLD * held references.
    struct refcache_obj shared __cacheline_aligned;
    // The offset and its lock: read, write and lseek through one description are
    // atomic with respect to each other (POSIX 2.9.7), even when they sleep.
    struct sleeplock poslock __cacheline_aligned;
    uint64_t pos;              // [l,r]
};

#define FILE_HOLD (1LL << 32) // a held reference's weight in file.shared

// Status flags F_SETFL may change (Linux: O_APPEND, O_NONBLOCK, O_ASYNC, O_DIRECT,
// O_NOATIME).
#define FILE_SETFL_MASK (O_APPEND | O_NONBLOCK | O_ASYNC | O_DIRECT | O_NOATIME)

// A new description with one reference; ip (if any) is the caller's reference,
// handed over. NULL if out of memory (then ip is still the caller's).
struct file *file_alloc(const struct file_ops *ops, uint32_t flags, struct inode *ip, void *priv);
void file_get(struct file *f); // the caller already holds an owned reference
// An owned reference from a lookup (the caller borrows f or can see it in its
// slot): false if no owned reference is left (then take a held one).
bool file_get_unless_zero(struct file *f);
// Drop an owned reference. When the last reference of any kind goes, the file
// is released at once (a pipe's other end sees EOF now). The memory is freed
// later (refcache and a grace period), since lock-free fd lookups may still be
// looking at it.
void file_put(struct file *f);
// Held and borrowed references (fdtable.c takes them from fd slots; see
// there). file_hold and file_borrow count this CPU only; the caller must know
// f is not dead: it holds another reference to it that it keeps until the new
// one is made, or it found f in an fd slot inside an epoch section and checks,
// after the call, that the slot still holds f (a close that empties the slot
// later sees the new reference). file_unhold and file_unborrow may release the
// file: call them outside any epoch section, on any CPU.
void file_hold(struct file *f);
void file_unhold(struct file *f);
void file_borrow(struct file *f);
void file_unborrow(struct file *f);
// f may be held or borrowed from now on (it is in a table threads share): set
// `lent` now, while the caller alone knows f, rather than in the first borrow,
// where two threads looking the fd up would both write f's first line.
void file_lend(struct file *f);
// References to f now, of every kind: an exact read of every CPU's count, for
// the rare caller that must know (the AF_UNIX collector, net/unix_gc.c).
int64_t file_count(struct file *f);

// Open a ScaleFS inode (the caller's reference is handed over on success) with
// open flags: regular files, directories and device nodes.
int file_open_inode(struct inode *ip, int oflags, struct file **out);

// Access mode 3 (Linux: "neither", for ioctl-only use) and O_PATH descriptors
// allow neither reading nor writing.
static inline bool file_readable(struct file *f)
{
    uint32_t a = f->flags & (O_ACCMODE | O_PATH);
    return a == O_RDONLY || a == O_RDWR;
}
static inline bool file_writable(struct file *f)
{
    uint32_t a = f->flags & (O_ACCMODE | O_PATH);
    return a == O_WRONLY || a == O_RDWR;
}

// The operations behind read/write/pread/pwrite/lseek (NULL pos: the file's own).
long file_read(struct file *f, uint64_t ubuf, size_t n, const int64_t *pos);
long file_write(struct file *f, uint64_t ubuf, size_t n, const int64_t *pos);
long file_lseek(struct file *f, int64_t off, int whence);
int file_stat(struct file *f, uint32_t mask, struct fs_stat *st);
long file_ioctl(struct file *f, unsigned long req, uint64_t arg);

// The ScaleFS-backed operations (regular files, directories), for file.c's users.
extern const struct file_ops inode_file_ops, dir_file_ops;
