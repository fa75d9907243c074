// File-backed mmap: MAP_SHARED mappings and read/write see one copy of the data,
// MAP_PRIVATE mappings copy on write, and the fd checks give Linux's errnos.
#include "suite.h"

#define PG 4096

static int make_file(const char *name, int pages)
{
    int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, pages * PG) != 0 || pwrite(fd, "hello", 5, 0) != 5)
        return -1;
    return fd;
}

static void shared_mapping(void)
{
    int fd = make_file("shared", 2);
    char *p = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    check(fd >= 0 && p != MAP_FAILED, "MAP_SHARED of a regular file");
    if (p == MAP_FAILED)
        return;
    check(memcmp(p, "hello", 5) == 0 && p[5] == 0 && p[2 * PG - 1] == 0,
          "the mapping shows the file's data, zeros after it");
    p[PG + 7] = 'Z';
    char c = 0;
    check(pread(fd, &c, 1, PG + 7) == 1 && c == 'Z', "a store through the mapping is seen by read");
    check(pwrite(fd, "abc", 3, 10) == 3 && memcmp(p + 10, "abc", 3) == 0,
          "a write is seen through the mapping");
    char *q = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, PG);
    check(q != MAP_FAILED && q[7] == 'Z', "a second mapping at an offset shares the page");
    munmap(q, PG);
    check(munmap(p, 2 * PG) == 0, "munmap of the file mapping");
    close(fd);
}

static void private_mapping(void)
{
    int fd = make_file("private", 1);
    char *p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    check(fd >= 0 && p != MAP_FAILED && memcmp(p, "hello", 5) == 0, "MAP_PRIVATE of a file");
    if (p == MAP_FAILED)
        return;
    p[0] = 'J';
    char buf[5] = {0};
    check(pread(fd, buf, 5, 0) == 5 && memcmp(buf, "hello", 5) == 0 && p[0] == 'J',
          "a store to a private mapping stays private");
    munmap(p, PG);
    close(fd);
}

static void errors(void)
{
    int fd = make_file("errs", 1);
    close(fd);
    int ro = open("errs", O_RDONLY), wo = open("errs", O_WRONLY), ap = open("errs", O_RDWR | O_APPEND);
    void *r = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, ro, 0);
    check(r != MAP_FAILED, "a writable private mapping of a read-only fd is allowed");
    if (r != MAP_FAILED)
        munmap(r, PG);
    CHECK_ERR(mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0), EACCES,
              "a writable shared mapping of a read-only fd is EACCES");
    CHECK_ERR(mmap(NULL, PG, PROT_READ, MAP_SHARED, wo, 0), EACCES,
              "mapping a write-only fd is EACCES");
    r = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, ap, 0);
    check(r != MAP_FAILED, "a writable shared mapping of an O_APPEND fd is allowed");
    if (r != MAP_FAILED)
        munmap(r, PG);
    CHECK_ERR(mmap(NULL, PG, PROT_READ, MAP_SHARED, 999, 0), EBADF, "a closed fd is EBADF");
    r = mmap(NULL, PG, PROT_READ, MAP_SHARED, ro, 0);
    CHECK_ERR(mprotect(r, PG, PROT_READ | PROT_WRITE), EACCES,
              "mprotect cannot make a shared mapping of a read-only fd writable");
    check(mprotect(r, PG, PROT_NONE) == 0 && mprotect(r, PG, PROT_READ) == 0,
          "but may take and give back read access");
    munmap(r, PG);
    int pfd[2];
    if (pipe(pfd) == 0) {
        CHECK_ERR(mmap(NULL, PG, PROT_READ, MAP_SHARED, pfd[0], 0), ENODEV, "a pipe is ENODEV");
        CHECK_ERR(mmap(NULL, PG, PROT_READ, MAP_SHARED, pfd[1], 0), EACCES,
                  "a pipe's write end is EACCES (access is checked first)");
        char c;
        CHECK_ERR(pread(pfd[1], &c, 1, 0), ESPIPE, "pread on a pipe's write end is ESPIPE, not EBADF");
        close(pfd[0]);
        close(pfd[1]);
    }
    int dir = open(".", O_RDONLY | O_DIRECTORY);
    CHECK_ERR(mmap(NULL, PG, PROT_READ, MAP_SHARED, dir, 0), ENODEV, "a directory is ENODEV");
    CHECK_ERR(mmap(NULL, PG, PROT_READ, MAP_SHARED, ro, 1), EINVAL, "an unaligned offset is EINVAL");
    close(dir);
    close(ro);
    close(wo);
    close(ap);
}

int main(void)
{
    if (enter_scratch("mmapfile") != 0)
        return 1;
    shared_mapping();
    private_mapping();
    errors();
    unlink("shared");
    unlink("private");
    unlink("errs");
    chdir("/");
    rmdir(suite_dir);
    return suite_end();
}
