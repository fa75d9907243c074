// ScaleFS: the in-RAM file system's interface for the rest of the kernel (system
// calls, exec, the boot code). Everything here returns a negative errno
// (kernel/uapi/errno.h) on failure; nothing panics on bad input or lack of memory.
//
// Inode pointers. Every `struct inode *` the API hands out carries one reference,
// which the caller gives back with fs_iput(). Functions that take an inode only
// borrow the caller's reference. `cwd` arguments name the directory relative paths
// start from; NULL means the root. Paths are at most FS_PATH_MAX bytes including
// the terminating NUL, names at most FS_NAME_MAX bytes.
//
// See fs/README.md for the design and for what each operation reads and writes.
#pragma once
#include "kernel.h"
#include "uapi/abi.h"
#include "uapi/errno.h"

struct bootinfo;
struct inode;

#define FS_NAME_MAX 255
#define FS_PATH_MAX 4096
#define FS_SYMLOOP_MAX 40      // symlinks followed per path resolution (Linux: 40)

// File types, permission bits, DT_* and STATX_* values are Linux's, from
// uapi/abi.h. fs_stat's mask of wanted fields uses the STATX_* bits: fields not
// asked for are not computed (and their inode cache lines not read); in
// particular the link count, which costs a visit to every CPU's refcache, is read
// only when STATX_NLINK is set.

// Flags.
#define FS_NOFOLLOW 0x1    // do not follow a symlink named by the last component
#define FS_EXCL 0x2        // fs_create: fail with EEXIST if the name exists
#define FS_FOLLOW 0x4      // fs_link: follow a symlink named by oldpath (AT_SYMLINK_FOLLOW)
#define FS_NOREPLACE 0x8   // fs_rename_flags: fail with EEXIST if newpath exists
#define FS_EXCHANGE 0x10   // fs_rename_flags: swap the two names' files (both must exist)

struct fs_timespec {
    int64_t sec;
    uint32_t nsec;
};

struct fs_stat {
    uint32_t mask;          // the fields filled in (what was asked for)
    uint32_t mode;          // type and permission bits
    uint64_t ino;
    uint64_t nlink;
    uint32_t uid, gid;      // always 0 for now
    uint64_t size;          // bytes; symlinks: target length; directories: 0
    uint64_t blocks;        // 512-byte units of memory holding file data
    uint32_t rdev;          // device nodes: the device number (MKDEV), with STATX_TYPE
    struct fs_timespec atime, mtime, ctime;
};

// Start-up: make the root directory and unpack the boot loader's cpio archive
// into it. Called once by kmain after SMP is up.
void fs_boot(const struct bootinfo *bi);
int fs_init(void);           // the root directory alone (fs_boot calls it)
struct inode *fs_root(void); // borrowed: the root is never freed

// References.
void fs_iget(struct inode *ip);
void fs_iput(struct inode *ip);

// Names.
int fs_lookup(struct inode *cwd, const char *path, int flags, struct inode **ipp);
int fs_create(struct inode *cwd, const char *path, uint32_t mode, int flags, struct inode **ipp);
// A regular file with no name (memfd_create): link count 0, one reference for
// the caller; freed once the last reference goes.
int fs_create_unlinked(uint32_t mode, struct inode **ipp);
int fs_mkdir(struct inode *cwd, const char *path, uint32_t mode);
int fs_symlink(struct inode *cwd, const char *target, const char *path);
int fs_readlink(struct inode *cwd, const char *path, char *buf, size_t n); // bytes copied
int fs_link(struct inode *oldcwd, const char *oldpath, struct inode *newcwd, const char *newpath,
            int flags);
int fs_unlink(struct inode *cwd, const char *path);
int fs_rmdir(struct inode *cwd, const char *path);
int fs_rename(struct inode *oldcwd, const char *oldpath, struct inode *newcwd, const char *newpath);
int fs_rename_flags(struct inode *oldcwd, const char *oldpath, struct inode *newcwd,
                    const char *newpath, int flags); // FS_NOREPLACE, FS_EXCHANGE
// A new node: mode's type is S_IFCHR (a device node, rdev its number), S_IFREG
// (an empty file) or S_IFSOCK (a name for an AF_UNIX socket, kernel/net/unix.c);
// other types give -EPERM. EEXIST if the name exists.
int fs_mknod(struct inode *cwd, const char *path, uint32_t mode, uint32_t rdev);

// Attributes.
int fs_stat(struct inode *ip, uint32_t mask, struct fs_stat *st);
int fs_stat_path(struct inode *cwd, const char *path, int flags, uint32_t mask, struct fs_stat *st);
uint32_t fs_mode(struct inode *ip);  // type and permission bits (cheap, no nlink)
uint64_t fs_ino(struct inode *ip);
uint32_t fs_rdev(struct inode *ip);  // device nodes: the device number
void fs_chmod(struct inode *ip, uint32_t mode); // permission bits (07777); ctime
// Set atime and/or mtime (nanoseconds since 1970; FS_TIME_OMIT leaves one alone,
// FS_TIME_NOW takes the clock); ctime becomes now.
#define FS_TIME_OMIT UINT64_MAX
#define FS_TIME_NOW (UINT64_MAX - 1)
void fs_set_times(struct inode *ip, uint64_t atime, uint64_t mtime);

// File data. Reads past the end return 0; holes read as zeros.
int64_t fs_read(struct inode *ip, void *buf, size_t n, uint64_t off);
// Is a read at offset *pos (read here, without the description's lock) at the
// end of regular file ip? Then it marks atime (n > 0) and the read returns 0.
bool fs_read_at_end(struct inode *ip, const uint64_t *pos, size_t n);
int64_t fs_write(struct inode *ip, const void *buf, size_t n, uint64_t off);
int64_t fs_append(struct inode *ip, const void *buf, size_t n); // at the end, atomically
int fs_truncate(struct inode *ip, int64_t size);
// Memory mappings (kernel/mm/uvm_fault.c): page pg of a regular file, without a reference
// (the caller holds the inode and has recorded its mapping for truncate); 0,
// -EFAULT beyond the end of the file, -ENOMEM, or -EINVAL/-EISDIR for other
// inode types. page NULL: only whether pg lies inside the file (0 or -EFAULT).
int fs_map_page(struct inode *ip, uint64_t pg, void **page);
// ETXTBSY (writecount.c): a regular file is either open for writing or executed,
// never both. fs_get_write: -ETXTBSY if some address space executes ip, else one
// more writer (fs_put_write drops it). fs_deny_write: -ETXTBSY if ip is open for
// writing, else one more executor (fs_allow_write drops it). Other types: 0, no count.
int fs_get_write(struct inode *ip);
void fs_put_write(struct inode *ip);
// n more writers at once, by a holder of write access (mmap through a description
// open for writing, fork copying mapped pages that count): nothing to check. And
// n writers going at once.
void fs_get_write_again(struct inode *ip, int64_t n);
void fs_put_write_n(struct inode *ip, int64_t n);
int fs_deny_write(struct inode *ip);
void fs_deny_write_again(struct inode *ip); // one more, by a holder of one (fork)
void fs_allow_write(struct inode *ip);
#define FS_FILE_MAX (1ULL << 40) // largest file size (EFBIG beyond)

// Directory listing. *pos starts at 0; each entry gets a stable position, so a
// listing interrupted and resumed at the returned position neither repeats nor
// skips entries that exist the whole time, whatever else is created, removed or
// resized meanwhile. "." and ".." come first. fill returns nonzero to stop before
// consuming the entry; fs_readdir returns 0 at the end, 1 if fill stopped it, or
// a negative errno.
typedef int (*fs_filldir_t)(void *arg, const char *name, size_t len, uint64_t ino, unsigned type);
int fs_readdir(struct inode *dir, uint64_t *pos, fs_filldir_t fill, void *arg);

// Initial contents: unpack a cpio "newc" archive into dir. Returns 0 or the first
// error (malformed archive: -EINVAL); entries before the error stay.
int fs_unpack_cpio(struct inode *dir, const void *data, size_t len);
