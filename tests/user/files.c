// File system calls over the file system: open flags, read/write and their
// vector and positioned forms, rewrites of the same bytes and writes cut short
// by a fault, lseek, stat/statx, getdents64, directories, rename (and
// RENAME_EXCHANGE), links, symlinks, truncate, cwd, access, times, modes, and
// errno on bad input. Runs in our guest and on the Linux host.
#include "suite.h"
#include <dirent.h>
#include <stdint.h>
#include <sys/uio.h>

static int slurp(const char *path, char *buf, size_t n) // bytes read or -1
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    int k = (int)read(fd, buf, n);
    close(fd);
    return k;
}

static int put(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    int k = (int)write(fd, s, strlen(s));
    close(fd);
    return k;
}

static void open_flags(void)
{
    char buf[64] = {0};
    check(put("a", "hello") == 5, "create and write a file");
    CHECK_ERR(open("a", O_RDWR | O_CREAT | O_EXCL, 0644), EEXIST, "O_CREAT|O_EXCL on an existing file is EEXIST");
    CHECK_ERR(open("missing", O_RDONLY), ENOENT, "open of a missing file is ENOENT");
    CHECK_ERR(open("missing/x", O_RDONLY | O_CREAT, 0644), ENOENT, "O_CREAT under a missing directory is ENOENT");
    CHECK_ERR(open("a/x", O_RDONLY), ENOTDIR, "a file in the middle of a path is ENOTDIR");
    CHECK_ERR(open("a/", O_RDONLY), ENOTDIR, "a trailing slash on a file is ENOTDIR");
    int fd = open("a", O_WRONLY | O_TRUNC);
    check(fd >= 0 && lseek(fd, 0, SEEK_END) == 0, "O_TRUNC empties the file");
    close(fd);
    put("a", "12345");
    fd = open("a", O_WRONLY | O_APPEND);
    check(write(fd, "67", 2) == 2 && lseek(fd, 0, SEEK_SET) == 0 && write(fd, "89", 2) == 2,
          "O_APPEND writes");
    close(fd);
    check(slurp("a", buf, sizeof buf) == 9 && memcmp(buf, "123456789", 9) == 0,
          "O_APPEND writes land at the end whatever the offset");
    CHECK_ERR(open("a", O_RDONLY | O_DIRECTORY), ENOTDIR, "O_DIRECTORY on a file is ENOTDIR");
    mkdir("d", 0755);
    fd = open("d", O_RDONLY | O_DIRECTORY);
    check(fd >= 0, "O_DIRECTORY opens a directory");
    CHECK_ERR(read(fd, buf, 1), EISDIR, "read of a directory is EISDIR");
    close(fd);
    CHECK_ERR(open("d", O_WRONLY), EISDIR, "a directory opened for writing is EISDIR");
    CHECK_ERR(open("d", O_RDONLY | O_CREAT, 0644), EISDIR, "O_CREAT on a directory is EISDIR");
    symlink("a", "ln");
    CHECK_ERR(open("ln", O_RDONLY | O_NOFOLLOW), ELOOP, "O_NOFOLLOW on a symlink is ELOOP");
    fd = open("ln", O_RDONLY);
    check(fd >= 0 && read(fd, buf, 3) == 3 && memcmp(buf, "123", 3) == 0, "open follows a symlink");
    close(fd);
    fd = open("ln2", O_RDWR | O_CREAT | O_NOFOLLOW, 0600);
    check(fd >= 0, "O_CREAT|O_NOFOLLOW creates a new file");
    close(fd);
    fd = open("a", O_RDONLY | O_NONBLOCK);
    check(fd >= 0 && (fcntl(fd, F_GETFL) & O_NONBLOCK), "O_NONBLOCK is kept in the status flags");
    CHECK_ERR(write(fd, "x", 1), EBADF, "write to an O_RDONLY fd is EBADF");
    close(fd);
    fd = open("a", O_WRONLY);
    CHECK_ERR(read(fd, buf, 1), EBADF, "read from an O_WRONLY fd is EBADF");
    close(fd);
    fd = open("ln", O_PATH | O_NOFOLLOW);
    struct stat st;
    check(fd >= 0 && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode), "O_PATH|O_NOFOLLOW names the symlink itself");
    CHECK_ERR(read(fd, buf, 1), EBADF, "read of an O_PATH fd is EBADF");
    close(fd);
    fd = open("d", O_PATH | O_DIRECTORY);
    check(fd >= 0 && faccessat(fd, ".", F_OK, 0) == 0, "an O_PATH directory works as a dirfd");
    close(fd);
    fd = creat("c", 0644);
    check(fd >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_WRONLY, "creat opens write-only");
    close(fd);
}

static void read_write(void)
{
    char buf[64];
    int fd = open("rw", O_RDWR | O_CREAT | O_TRUNC, 0644);
    check(write(fd, "abcdef", 6) == 6, "write");
    check(read(fd, buf, 10) == 0, "read at the end returns 0");
    check(lseek(fd, 10, SEEK_SET) == 10 && read(fd, buf, 10) == 0 && lseek(fd, 0, SEEK_CUR) == 10,
          "read past the end returns 0 and leaves the offset");
    check(pwrite(fd, "0123456789AB", 12, 0) == 12 && read(fd, buf, 10) == 2 &&
              memcmp(buf, "AB", 2) == 0 && lseek(fd, 0, SEEK_CUR) == 12,
          "after the file grows past the offset, a read there gets the new bytes");
    check(ftruncate(fd, 6) == 0 && lseek(fd, 6, SEEK_SET) == 6 && pwrite(fd, "abcdef", 6, 0) == 6,
          "(back to six bytes)");
    check(pread(fd, buf, 3, 2) == 3 && memcmp(buf, "cde", 3) == 0, "pread at an offset");
    check(lseek(fd, 0, SEEK_CUR) == 6, "pread leaves the offset alone");
    check(pwrite(fd, "XY", 2, 1) == 2 && lseek(fd, 0, SEEK_CUR) == 6, "pwrite leaves the offset alone");
    CHECK_ERR(pread(fd, buf, 1, -1), EINVAL, "pread at a negative offset is EINVAL");
    struct iovec iov[3] = {{"12", 2}, {"", 0}, {"345", 3}};
    check(writev(fd, iov, 3) == 5, "writev gathers");
    lseek(fd, 0, SEEK_SET);
    char a[4] = {0}, b[20] = {0};
    struct iovec riov[2] = {{a, 3}, {b, sizeof b}};
    check(readv(fd, riov, 2) == 11 && memcmp(a, "aXY", 3) == 0 && memcmp(b, "def12345", 8) == 0,
          "readv scatters");
    CHECK_ERR(readv(fd, riov, -1), EINVAL, "readv with a negative count is EINVAL");
    CHECK_ERR(writev(fd, iov, 5000), EINVAL, "writev with more than IOV_MAX is EINVAL");
    check(lseek(fd, 100, SEEK_SET) == 100 && write(fd, "z", 1) == 1, "write past the end");
    check(pread(fd, buf, 4, 50) == 4 && memcmp(buf, "\0\0\0\0", 4) == 0, "the gap reads as zeros");
    check(lseek(fd, -1, SEEK_END) == 100, "SEEK_END");
    check(lseek(fd, 5, SEEK_CUR) == 105, "SEEK_CUR");
    CHECK_ERR(lseek(fd, -200, SEEK_CUR), EINVAL, "lseek to a negative offset is EINVAL");
    CHECK_ERR(lseek(fd, 0, 17), EINVAL, "lseek with a bad whence is EINVAL");
    check(read(fd, buf, 1) == 0, "read beyond the end returns 0");
    char *big = malloc(1 << 20);
    memset(big, 'q', 1 << 20);
    check(pwrite(fd, big, 1 << 20, 4096) == 1 << 20, "a 1 MiB write");
    memset(big, 0, 1 << 20);
    check(pread(fd, big, 1 << 20, 4096) == 1 << 20 && big[0] == 'q' && big[(1 << 20) - 1] == 'q',
          "a 1 MiB read");
    free(big);
    close(fd);
}

// Writes of bytes the file already holds, of partly new bytes, and from a
// buffer that runs into an unmapped page: the bytes before the fault are
// written and counted, a fault on the first byte is EFAULT, and nothing else
// changes.
static int same_as(int fd, const char *ref, int n)
{
    static char got[3 * 4096];
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_size == n && pread(fd, got, n, 0) == n &&
           memcmp(got, ref, n) == 0;
}

static void rewrites(void)
{
    enum { N = 3 * 4096 };
    static char ref[N], buf[N];
    for (int i = 0; i < N; i++)
        ref[i] = (char)(i * 7 + i / 64);
    int fd = open("rw2", O_RDWR | O_CREAT | O_TRUNC, 0644);
    check(pwrite(fd, ref, N, 0) == N, "write three pages");
    check(pwrite(fd, ref, N, 0) == N && pwrite(fd, ref + 100, 5000, 100) == 5000 &&
              pwrite(fd, ref + 4090, 13, 4090) == 13 && same_as(fd, ref, N),
          "rewriting the bytes already there, whole and unaligned, changes nothing");
    memcpy(buf, ref + 3000, 3000);
    for (int i = 10; i < 3000; i += 128)
        buf[i] ^= 1; // a byte in every other 64-byte line, across a page boundary
    memcpy(ref + 3000, buf, 3000);
    check(pwrite(fd, buf, 3000, 3000) == 3000 && same_as(fd, ref, N),
          "a write that changes some lines of its range");
    char *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    check(two != MAP_FAILED && munmap(two + 4096, 4096) == 0, "a page with nothing after it");
    if (two == MAP_FAILED)
        return;
    memset(two, 'F', 4096);
    memset(ref + 200, 'F', 100);
    check(lseek(fd, 200, SEEK_SET) == 200 && write(fd, two + 4096 - 100, 300) == 100 &&
              lseek(fd, 0, SEEK_CUR) == 300 && same_as(fd, ref, N),
          "a write that faults midway writes and counts the bytes before the fault");
    memcpy(two + 4096 - 64, ref + 1000, 64);
    check(pwrite(fd, two + 4096 - 64, 128, 1000) == 64 && same_as(fd, ref, N),
          "the bytes already there up to a fault: their count, nothing changed");
    CHECK_ERR(pwrite(fd, two + 4096, 10, 0), EFAULT, "a write whose first byte faults is EFAULT");
    check(same_as(fd, ref, N), "... and changes nothing");
    munmap(two, 4096);
    close(fd);
    unlink("rw2");
}

static void bad_input(void)
{
    char buf[16];
    void *gone = unmapped_page();
    int fd = open("a", O_RDWR);
    CHECK_ERR(syscall(SYS_read, fd, NULL, 4), EFAULT, "read into NULL is EFAULT");
    CHECK_ERR(syscall(SYS_read, fd, KERNEL_PTR, 4), EFAULT, "read into a kernel address is EFAULT");
    CHECK_ERR(syscall(SYS_read, fd, gone, 4), EFAULT, "read into an unmapped page is EFAULT");
    CHECK_ERR(syscall(SYS_write, fd, gone, 4), EFAULT, "write from an unmapped page is EFAULT");
    CHECK_ERR(syscall(SYS_write, fd, KERNEL_PTR, 4), EFAULT, "write from a kernel address is EFAULT");
    CHECK_ERR(syscall(SYS_read, fd, buf, (size_t)-1), EFAULT, "read with a huge length is EFAULT");
    CHECK_ERR(syscall(SYS_pwrite64, fd, buf, (size_t)-1, 0), EFAULT, "pwrite with a huge length is EFAULT");
    CHECK_ERR(syscall(SYS_readv, fd, NULL, 1), EFAULT, "readv of a NULL vector is EFAULT");
    CHECK_ERR(syscall(SYS_read, -1, buf, 1), EBADF, "read of fd -1 is EBADF");
    CHECK_ERR(syscall(SYS_read, 1 << 20, buf, 1), EBADF, "read of fd 2^20 is EBADF");
    CHECK_ERR(syscall(SYS_open, NULL, O_RDONLY), EFAULT, "open(NULL) is EFAULT");
    CHECK_ERR(syscall(SYS_open, KERNEL_PTR, O_RDONLY), EFAULT, "open of a kernel address is EFAULT");
    CHECK_ERR(syscall(SYS_open, gone, O_RDONLY), EFAULT, "open of an unmapped path is EFAULT");
    CHECK_ERR(syscall(SYS_open, "", O_RDONLY), ENOENT, "open(\"\") is ENOENT");
    CHECK_ERR(syscall(SYS_stat, NULL, buf), EFAULT, "stat(NULL) is EFAULT");
    CHECK_ERR(syscall(SYS_stat, "a", KERNEL_PTR), EFAULT, "stat into a kernel address is EFAULT");
    CHECK_ERR(syscall(SYS_fstat, fd, gone), EFAULT, "fstat into an unmapped page is EFAULT");
    CHECK_ERR(syscall(SYS_mkdir, NULL, 0755), EFAULT, "mkdir(NULL) is EFAULT");
    CHECK_ERR(syscall(SYS_unlink, KERNEL_PTR), EFAULT, "unlink of a kernel address is EFAULT");
    CHECK_ERR(syscall(SYS_rename, "a", NULL), EFAULT, "rename to NULL is EFAULT");
    CHECK_ERR(syscall(SYS_getcwd, NULL, 4096), EFAULT, "getcwd into NULL is EFAULT");
    char *longpath = malloc(5000);
    memset(longpath, 'x', 4999);
    longpath[4999] = 0;
    CHECK_ERR(syscall(SYS_open, longpath, O_RDONLY), ENAMETOOLONG, "a 5000-byte path is ENAMETOOLONG");
    memset(longpath, 'y', 300);
    longpath[300] = 0;
    CHECK_ERR(syscall(SYS_open, longpath, O_RDONLY | O_CREAT, 0644), ENAMETOOLONG,
              "a 300-byte name is ENAMETOOLONG");
    free(longpath);
    CHECK_ERR(syscall(SYS_openat, 12345, "a", O_RDONLY), EBADF, "openat with a closed dirfd is EBADF");
    CHECK_ERR(syscall(SYS_openat, fd, "a", O_RDONLY), ENOTDIR, "openat with a file as dirfd is ENOTDIR");
    check(syscall(SYS_openat, 12345, suite_dir, O_RDONLY) >= 0, "an absolute path ignores dirfd");
    CHECK_ERR(syscall(SYS_getdents64, fd, buf, sizeof buf), ENOTDIR, "getdents64 of a file is ENOTDIR");
    CHECK_ERR(syscall(SYS_newfstatat, AT_FDCWD, "a", buf, 0x40000), EINVAL, "newfstatat with a bad flag is EINVAL");
    CHECK_ERR(syscall(SYS_unlinkat, AT_FDCWD, "a", 0x1), EINVAL, "unlinkat with a bad flag is EINVAL");
    CHECK_ERR(syscall(SYS_renameat2, AT_FDCWD, "a", AT_FDCWD, "b", 0x100), EINVAL,
              "renameat2 with a bad flag is EINVAL");
    CHECK_ERR(syscall(SYS_linkat, AT_FDCWD, "a", AT_FDCWD, "b", 0x1), EINVAL, "linkat with a bad flag is EINVAL");
    CHECK_ERR(syscall(SYS_faccessat, AT_FDCWD, "a", 0x10), EINVAL, "faccessat with a bad mode is EINVAL");
    close(fd);
}

struct statx_buf { // Linux's struct statx (musl has no header for it)
    uint32_t mask, blksize;
    uint64_t attributes;
    uint32_t nlink, uid, gid;
    uint16_t mode, spare0;
    uint64_t ino, size, blocks, attributes_mask;
    struct { int64_t sec; uint32_t nsec; int32_t r; } atime, btime, ctime, mtime;
    uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
    uint64_t spare[14];
};
#define STATX_NLINK 0x4
#define STATX_SIZE 0x200
#define STATX_BASIC_STATS 0x7ff

static void stats(void)
{
    struct stat st, lst;
    put("s", "12345678");
    check(stat("s", &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 8 && st.st_nlink == 1 &&
              (st.st_mode & 0777) == 0644,
          "stat of a file: type, size, links, mode");
    int fd = open("s", O_RDONLY);
    struct stat fst;
    check(fstat(fd, &fst) == 0 && fst.st_ino == st.st_ino && fst.st_dev == st.st_dev, "fstat agrees with stat");
    symlink("s", "sl");
    check(lstat("sl", &lst) == 0 && S_ISLNK(lst.st_mode) && lst.st_size == 1, "lstat of a symlink");
    check(stat("sl", &lst) == 0 && lst.st_ino == st.st_ino, "stat follows a symlink");
    check(fstatat(AT_FDCWD, "sl", &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode),
          "newfstatat AT_SYMLINK_NOFOLLOW");
    check(syscall(SYS_newfstatat, fd, "", &lst, AT_EMPTY_PATH) == 0 && lst.st_ino == st.st_ino,
          "newfstatat AT_EMPTY_PATH stats the fd");
    CHECK_ERR(syscall(SYS_newfstatat, fd, "", &lst, 0), ENOENT, "an empty path without AT_EMPTY_PATH is ENOENT");
    struct statx_buf sx;
    memset(&sx, 0xff, sizeof sx);
    check(syscall(SYS_statx, AT_FDCWD, "s", 0, STATX_BASIC_STATS, &sx) == 0 && sx.size == 8 &&
              sx.nlink == 1 && sx.ino == st.st_ino && (sx.mask & STATX_SIZE),
          "statx basic stats");
    link("s", "s2");
    check(syscall(SYS_statx, AT_FDCWD, "s2", 0, STATX_NLINK, &sx) == 0 && (sx.mask & STATX_NLINK) &&
              sx.nlink == 2,
          "statx STATX_NLINK counts the new link");
    check(syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_SIZE, &sx) == 0 && sx.size == 8,
          "statx AT_EMPTY_PATH");
    CHECK_ERR(syscall(SYS_statx, AT_FDCWD, "s", 0, 0x80000000u, &sx), EINVAL, "statx with STATX__RESERVED is EINVAL");
    CHECK_ERR(syscall(SYS_statx, AT_FDCWD, "s", 0x6000, STATX_SIZE, &sx), EINVAL,
              "statx with both sync flags is EINVAL");
    CHECK_ERR(syscall(SYS_statx, AT_FDCWD, "s", 0, STATX_SIZE, KERNEL_PTR), EFAULT, "statx into a kernel address is EFAULT");
    close(fd);
    check(stat(".", &st) == 0 && S_ISDIR(st.st_mode), "stat of . is a directory");
}

static void dirs(void)
{
    struct stat st;
    check(mkdir("m", 0755) == 0, "mkdir");
    CHECK_ERR(mkdir("m", 0755), EEXIST, "mkdir of an existing name is EEXIST");
    check(mkdirat(AT_FDCWD, "m/sub", 0700) == 0, "mkdirat");
    check(stat("m", &st) == 0 && st.st_nlink == 3, "a subdirectory adds a link to its parent");
    CHECK_ERR(rmdir("m"), ENOTEMPTY, "rmdir of a non-empty directory is ENOTEMPTY");
    CHECK_ERR(unlink("m"), EISDIR, "unlink of a directory is EISDIR");
    put("m/f", "x");
    CHECK_ERR(rmdir("m/f"), ENOTDIR, "rmdir of a file is ENOTDIR");
    int dfd = open("m", O_RDONLY | O_DIRECTORY);
    check(unlinkat(dfd, "f", 0) == 0 && unlinkat(dfd, "sub", AT_REMOVEDIR) == 0,
          "unlinkat relative to a directory fd, with and without AT_REMOVEDIR");
    CHECK_ERR(unlinkat(dfd, "sub", AT_REMOVEDIR), ENOENT, "unlinkat of a missing name is ENOENT");
    close(dfd);
    check(rmdir("m") == 0, "rmdir of an empty directory");

    // getdents64, via readdir and raw.
    mkdir("g", 0755);
    const char *names[] = {"one", "two", "three", "four", "five"};
    for (int i = 0; i < 5; i++) {
        char p[32];
        snprintf(p, sizeof p, "g/%s", names[i]);
        put(p, "x");
    }
    DIR *d = opendir("g");
    int seen = 0, dots = 0, n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        n++;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            dots++;
        for (int i = 0; i < 5; i++)
            if (!strcmp(e->d_name, names[i]) && e->d_type == DT_REG)
                seen |= 1 << i;
    }
    if (d)
        closedir(d);
    check(n == 7 && dots == 2 && seen == 31, "getdents64 lists . and .. and every name once, with d_type");
    // One entry at a time with a small buffer, then resume from a d_off.
    int fd = open("g", O_RDONLY | O_DIRECTORY);
    char buf[40];
    long k = syscall(SYS_getdents64, fd, buf, sizeof buf);
    int64_t off1;
    memcpy(&off1, buf + 8, 8);
    check(k > 0 && k <= (long)sizeof buf, "getdents64 with room for one entry returns one");
    int count = 1;
    while ((k = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
        count++;
    check(k == 0 && count == 7, "small reads see all 7 entries, then 0");
    check(lseek(fd, off1, SEEK_SET) == off1, "lseek to a d_off");
    count = 0;
    while (syscall(SYS_getdents64, fd, buf, sizeof buf) > 0)
        count++;
    check(count == 6, "the listing resumes after the first entry");
    lseek(fd, 0, SEEK_SET);
    CHECK_ERR(syscall(SYS_getdents64, fd, buf, 10), EINVAL, "getdents64 with too small a buffer is EINVAL");
    CHECK_ERR(syscall(SYS_getdents64, fd, KERNEL_PTR, 4096), EFAULT, "getdents64 into a kernel address is EFAULT");
    close(fd);
    for (int i = 0; i < 5; i++) {
        char p[32];
        snprintf(p, sizeof p, "g/%s", names[i]);
        unlink(p);
    }
    rmdir("g");
}

static void names(void)
{
    char buf[64];
    struct stat st;
    put("r1", "one");
    put("r2", "two");
    check(rename("r1", "r2") == 0, "rename over an existing file");
    check(slurp("r2", buf, sizeof buf) == 3 && !memcmp(buf, "one", 3) && access("r1", F_OK) == -1,
          "the target is replaced and the source gone");
    put("r3", "three");
    CHECK_ERR(syscall(SYS_renameat2, AT_FDCWD, "r3", AT_FDCWD, "r2", 1), EEXIST,
              "RENAME_NOREPLACE onto an existing name is EEXIST");
    check(syscall(SYS_renameat2, AT_FDCWD, "r3", AT_FDCWD, "r4", 1) == 0 && access("r4", F_OK) == 0,
          "RENAME_NOREPLACE to a new name");
    CHECK_ERR(rename("nothere", "r5"), ENOENT, "rename of a missing name is ENOENT");
    mkdir("rd", 0755);
    CHECK_ERR(rename("r4", "rd"), EISDIR, "rename of a file over a directory is EISDIR");
    CHECK_ERR(rename("rd", "rd/x"), EINVAL, "rename of a directory into itself is EINVAL");
    check(rename("rd", "rd2") == 0 && stat("rd2", &st) == 0 && S_ISDIR(st.st_mode), "rename of a directory");
    rmdir("rd2");

    check(link("r2", "l2") == 0 && stat("r2", &st) == 0 && st.st_nlink == 2, "link adds a name");
    CHECK_ERR(link("r2", "r4"), EEXIST, "link to an existing name is EEXIST");
    mkdir("ld", 0755);
    CHECK_ERR(link("ld", "ld2"), EPERM, "link of a directory is EPERM");
    rmdir("ld");
    check(unlink("l2") == 0 && stat("r2", &st) == 0 && st.st_nlink == 1, "unlink removes a name");

    check(symlink("r2", "sy") == 0, "symlink");
    long n = readlink("sy", buf, sizeof buf);
    check(n == 2 && !memcmp(buf, "r2", 2), "readlink returns the target, unterminated");
    check(readlink("sy", buf, 1) == 1, "readlink truncates to the buffer");
    CHECK_ERR(readlink("r2", buf, sizeof buf), EINVAL, "readlink of a file is EINVAL");
    CHECK_ERR(syscall(SYS_readlink, "sy", buf, 0), EINVAL, "readlink with size 0 is EINVAL");
    CHECK_ERR(symlink("x", "sy"), EEXIST, "symlink onto an existing name is EEXIST");
    CHECK_ERR(symlink("", "sz"), ENOENT, "an empty symlink target is ENOENT");
    check(symlinkat("r2", AT_FDCWD, "sy2") == 0 && readlinkat(AT_FDCWD, "sy2", buf, sizeof buf) == 2,
          "symlinkat and readlinkat");
    check(linkat(AT_FDCWD, "sy2", AT_FDCWD, "hl", AT_SYMLINK_FOLLOW) == 0 && lstat("hl", &st) == 0 &&
              S_ISREG(st.st_mode),
          "linkat AT_SYMLINK_FOLLOW links the target");
    check(linkat(AT_FDCWD, "sy2", AT_FDCWD, "hl2", 0) == 0 && lstat("hl2", &st) == 0 && S_ISLNK(st.st_mode),
          "linkat without it links the symlink");
    unlink("hl");
    unlink("hl2");
    unlink("sy");
    unlink("sy2");
    unlink("r2");
    unlink("r4");
}

#define RENAME_NOREPLACE 1
#define RENAME_EXCHANGE 2

static long exchange(const char *a, const char *b, int flags)
{
    return syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE | flags);
}

static int newer(const struct timespec *a, const struct timespec *b) // a later than b
{
    return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

// renameat2(RENAME_EXCHANGE): the two names swap their files, whatever the types.
static void exchanges(void)
{
    char buf[64] = {0};
    struct stat s1, s2, t1, t2, d;
    put("x1", "one");
    put("x2", "two");
    stat("x1", &s1);
    stat("x2", &s2);
    int fd = open("x1", O_RDONLY);
    check(exchange("x1", "x2", 0) == 0, "RENAME_EXCHANGE of two files");
    check(stat("x1", &t1) == 0 && stat("x2", &t2) == 0 && t1.st_ino == s2.st_ino && t2.st_ino == s1.st_ino,
          "the names swap inode numbers");
    check(slurp("x1", buf, sizeof buf) == 3 && !memcmp(buf, "two", 3) && slurp("x2", buf, sizeof buf) == 3 &&
              !memcmp(buf, "one", 3),
          "the contents follow their files");
    check(read(fd, buf, sizeof buf) == 3 && !memcmp(buf, "one", 3), "an open file keeps its file");
    close(fd);
    check(t1.st_nlink == 1 && t2.st_nlink == 1, "link counts stay");

    mkdir("xd", 0755);
    put("xd/in", "inside");
    mkdir("xs", 0755);
    stat(".", &s1);
    stat("xs", &s2);
    check(exchange("x1", "xd", 0) == 0 && stat("x1", &t1) == 0 && S_ISDIR(t1.st_mode) &&
              slurp("x1/in", buf, sizeof buf) == 6 && slurp("xd", buf, sizeof buf) == 3,
          "a directory and a file exchange in one directory");
    check(exchange("x1", "xs/f", 0) == -1 && errno == ENOENT, "RENAME_EXCHANGE with a missing target is ENOENT");
    put("xs/f", "file");
    check(exchange("x1", "xs/f", 0) == 0 && slurp("xs/f/in", buf, sizeof buf) == 6 &&
              slurp("x1", buf, sizeof buf) == 4,
          "a directory and a file exchange across directories");
    check(stat("xs/f/..", &t1) == 0 && t1.st_ino == s2.st_ino, "the moved directory's .. is its new parent");
    check(stat("xs", &t2) == 0 && t2.st_nlink == s2.st_nlink + 1 && stat(".", &d) == 0 &&
              d.st_nlink == s1.st_nlink - 1,
          "the parents' link counts follow the directory");

    CHECK_ERR(exchange("nothere", "x2", 0), ENOENT, "RENAME_EXCHANGE from a missing name is ENOENT");
    CHECK_ERR(exchange("x2", "nothere", 0), ENOENT, "RENAME_EXCHANGE to a missing name is ENOENT");
    CHECK_ERR(exchange("x1", "x2", RENAME_NOREPLACE), EINVAL, "RENAME_EXCHANGE with RENAME_NOREPLACE is EINVAL");
    CHECK_ERR(exchange("xs", "xs/f", 0), EINVAL, "exchanging a directory with a name inside it is EINVAL");
    CHECK_ERR(exchange("xs/f/in", "xs", 0), EINVAL, "exchanging a directory with a name below it is EINVAL");
    CHECK_ERR(exchange("x1/", "x2", 0), ENOTDIR, "a trailing slash on a file is ENOTDIR");
    check(link("x2", "x3") == 0 && exchange("x2", "x3", 0) == 0 && stat("x2", &t1) == 0 &&
              stat("x3", &t2) == 0 && t1.st_ino == t2.st_ino,
          "two names of one file: nothing to do");
    check(slurp("x1", buf, sizeof buf) == 4 && !memcmp(buf, "file", 4) && slurp("x2", buf, sizeof buf) == 3 &&
              !memcmp(buf, "one", 3),
          "failed exchanges change nothing");
    unlink("xs/f/in");
    rmdir("xs/f");
    rmdir("xs");
    const char *rm[] = {"x1", "x2", "x3", "xd", NULL};
    for (int i = 0; rm[i]; i++)
        unlink(rm[i]);
}

// POSIX: link and unlink mark the file's ctime (unlink while links remain).
static void link_times(void)
{
    struct stat a, b, c;
    put("lt", "x");
    stat("lt", &a);
    usleep(30000); // past the time stamps' grain on both kernels
    check(link("lt", "lt2") == 0 && stat("lt", &b) == 0 && newer(&b.st_ctim, &a.st_ctim),
          "link marks the file's ctime");
    check(b.st_mtim.tv_sec == a.st_mtim.tv_sec && b.st_mtim.tv_nsec == a.st_mtim.tv_nsec,
          "link leaves the file's mtime");
    usleep(30000);
    check(unlink("lt2") == 0 && stat("lt", &c) == 0 && newer(&c.st_ctim, &b.st_ctim),
          "unlink marks the ctime of a file it leaves linked");
    unlink("lt");
}

static void sizes_and_attrs(void)
{
    struct stat st;
    put("t", "0123456789");
    check(truncate("t", 4) == 0 && stat("t", &st) == 0 && st.st_size == 4, "truncate shrinks");
    int fd = open("t", O_RDWR);
    check(ftruncate(fd, 8192) == 0 && fstat(fd, &st) == 0 && st.st_size == 8192, "ftruncate grows");
    char buf[8];
    check(pread(fd, buf, 4, 4) == 4 && !memcmp(buf, "\0\0\0\0", 4), "the grown part reads as zeros");
    CHECK_ERR(ftruncate(fd, -1), EINVAL, "ftruncate to a negative size is EINVAL");
    CHECK_ERR(truncate("t", -1), EINVAL, "truncate to a negative size is EINVAL");
    mkdir("td", 0755);
    CHECK_ERR(truncate("td", 0), EISDIR, "truncate of a directory is EISDIR");
    rmdir("td");
    check(fsync(fd) == 0 && fdatasync(fd) == 0, "fsync and fdatasync of a file");
    close(fd);
    fd = open("t", O_RDONLY);
    CHECK_ERR(ftruncate(fd, 0), EINVAL, "ftruncate of an O_RDONLY fd is EINVAL");
    check(fchmod(fd, 0600) == 0 && fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0600, "fchmod");
    check(fchmodat(AT_FDCWD, "t", 0640, 0) == 0 && stat("t", &st) == 0 && (st.st_mode & 07777) == 0640,
          "fchmodat");
    close(fd);
    struct timespec ts[2] = {{1000000000, 5}, {1100000000, 7}};
    check(utimensat(AT_FDCWD, "t", ts, 0) == 0 && stat("t", &st) == 0 && st.st_atim.tv_sec == 1000000000 &&
              st.st_mtim.tv_sec == 1100000000 && st.st_mtim.tv_nsec == 7,
          "utimensat sets atime and mtime");
    struct timespec omit[2] = {{0, UTIME_OMIT}, {5, UTIME_NOW}};
    check(utimensat(AT_FDCWD, "t", omit, 0) == 0 && stat("t", &st) == 0 && st.st_atim.tv_sec == 1000000000 &&
              st.st_mtim.tv_sec > 1100000000,
          "UTIME_OMIT and UTIME_NOW");
    struct timespec bad[2] = {{0, 1000000000}, {0, 0}};
    CHECK_ERR(utimensat(AT_FDCWD, "t", bad, 0), EINVAL, "utimensat with tv_nsec out of range is EINVAL");
    check(access("t", R_OK | W_OK) == 0, "access R_OK|W_OK");
    CHECK_ERR(access("t", X_OK), EACCES, "access X_OK without an x bit is EACCES");
    CHECK_ERR(access("nothere", F_OK), ENOENT, "access of a missing name is ENOENT");
    mode_t old = umask(077);
    fd = open("u", O_RDWR | O_CREAT, 0666);
    check(fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0600, "umask applies to new files");
    check(umask(old) == 077, "umask returns the old mask");
    close(fd);
    unlink("u");

    // An unlinked file stays readable through an open fd.
    fd = open("t", O_RDWR);
    pwrite(fd, "live", 4, 0);
    check(unlink("t") == 0 && fstat(fd, &st) == 0 && st.st_nlink == 0, "an open file can be unlinked");
    check(pread(fd, buf, 4, 0) == 4 && !memcmp(buf, "live", 4), "and is still readable");
    close(fd);
}

static void cwd(void)
{
    char buf[256];
    mkdir("cw", 0755);
    check(chdir("cw") == 0, "chdir");
    check(getcwd(buf, sizeof buf) && strlen(buf) > 3 && !strcmp(buf + strlen(buf) - 3, "/cw") &&
              !strncmp(buf, suite_dir, strlen(suite_dir)),
          "getcwd names the new directory");
    CHECK_ERR(syscall(SYS_getcwd, buf, 2), ERANGE, "getcwd with too small a buffer is ERANGE");
    long n = syscall(SYS_getcwd, buf, sizeof buf);
    check(n == (long)strlen(buf) + 1, "the getcwd system call returns the length with the NUL");
    put("here", "x");
    check(access("../cw/here", F_OK) == 0, "relative paths start at the new cwd");
    int fd = open("..", O_RDONLY | O_DIRECTORY);
    check(fchdir(fd) == 0 && getcwd(buf, sizeof buf) && !strcmp(buf, suite_dir), "fchdir");
    close(fd);
    CHECK_ERR(chdir("cw/here"), ENOTDIR, "chdir to a file is ENOTDIR");
    CHECK_ERR(chdir("nothere"), ENOENT, "chdir to a missing directory is ENOENT");
    fd = open("cw/here", O_RDONLY);
    CHECK_ERR(fchdir(fd), ENOTDIR, "fchdir to a file is ENOTDIR");
    close(fd);
    int dfd = open("cw", O_RDONLY | O_DIRECTORY);
    check(faccessat(dfd, "here", F_OK, 0) == 0, "faccessat relative to a directory fd");
    close(dfd);
    unlink("cw/here");
    rmdir("cw");
}

// memfd_create: a read/write file with no name.
static void memfd(void)
{
    char buf[8] = {0}, longname[300];
    struct stat st;
    int fd = memfd_create("suite", 0);
    check(fd >= 0 && write(fd, "memfd", 5) == 5 && pread(fd, buf, 5, 0) == 5 &&
              memcmp(buf, "memfd", 5) == 0, "memfd_create: a file to write and read back");
    check(fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 0 &&
              st.st_size == 5, "memfd_create: a regular file with no link");
    check(fd >= 0 && ftruncate(fd, 4096) == 0 && fstat(fd, &st) == 0 && st.st_size == 4096,
          "memfd_create: ftruncate sets its size");
    check(fd >= 0 && !(fcntl(fd, F_GETFD) & FD_CLOEXEC), "memfd_create without MFD_CLOEXEC");
    close(fd);
    fd = memfd_create("suite", MFD_CLOEXEC);
    check(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "MFD_CLOEXEC sets FD_CLOEXEC");
    close(fd);
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    CHECK_ERR(memfd_create(longname, 0), EINVAL, "memfd_create with a name over 249 bytes is EINVAL");
    CHECK_ERR(memfd_create("suite", 0x100), EINVAL, "memfd_create with an unknown flag is EINVAL");
    CHECK_ERR(memfd_create((const char *)1, 0), EFAULT, "memfd_create with a bad name is EFAULT");
}

int main(void)
{
    if (enter_scratch("files") != 0)
        return 1;
    open_flags();
    read_write();
    rewrites();
    bad_input();
    stats();
    dirs();
    names();
    exchanges();
    link_times();
    sizes_and_attrs();
    cwd();
    memfd();
    const char *rm[] = {"a", "c", "ln", "ln2", "rw", "s", "s2", "sl", NULL};
    for (int i = 0; rm[i]; i++)
        unlink(rm[i]);
    rmdir("d");
    chdir("/");
    check(rmdir(suite_dir) == 0, "scratch directory removed");
    return suite_end();
}
