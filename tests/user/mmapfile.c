// File-backed mmap: MAP_SHARED mappings and read/write see one copy of the data,
// MAP_PRIVATE mappings copy on write, and the fd checks give Linux's errnos.
#include "suite.h"
#include <setjmp.h>
#include <signal.h>
#include <sys/wait.h>

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

// A load or store at p: 0 if it worked, else the signal, with its code and address.
static sigjmp_buf fault_jb;
static volatile int fault_code;
static void *volatile fault_addr;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    fault_code = si->si_code;
    fault_addr = si->si_addr;
    siglongjmp(fault_jb, sig);
}

static int touch(volatile char *p, int write, char *val)
{
    struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO}, old_bus, old_segv;
    sigaction(SIGBUS, &sa, &old_bus);
    sigaction(SIGSEGV, &sa, &old_segv);
    fault_code = 0;
    fault_addr = NULL;
    int sig = sigsetjmp(fault_jb, 1);
    if (sig == 0) {
        if (write)
            *p = *val;
        else
            *val = *p;
    }
    sigaction(SIGBUS, &old_bus, NULL);
    sigaction(SIGSEGV, &old_segv, NULL);
    return sig;
}

// Shrinking a file takes the pages past its new end out of every mapping, even
// pages already touched (and private copies): an access gets SIGBUS
// (BUS_ADRERR, si_addr the address). Growing it again brings zeroed pages.
static void truncate_mapping(int flags, const char *what)
{
    char name[32], msg[160], c = 0;
    snprintf(name, sizeof name, "trunc-%s", what);
    int fd = make_file(name, 3);
    char *p = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, flags, fd, 0);
    snprintf(msg, sizeof msg, "%s: mapping a 3-page file", what);
    check(fd >= 0 && p != MAP_FAILED, msg);
    if (p == MAP_FAILED)
        return;
    p[PG] = 'a';
    p[2 * PG + 5] = 'b';
    // A child that shares the mapping (fork) loses the pages too.
    // The child maps the page in its own page table, then waits for the truncate.
    int ready[2], go[2];
    if (pipe(ready) != 0 || pipe(go) != 0)
        check(0, "pipes");
    pid_t child = fork();
    if (child == 0) {
        char x = 0;
        int mapped = touch(p + 2 * PG, 0, &x) == 0;
        if (write(ready[1], "r", 1) != 1 || read(go[0], &x, 1) != 1)
            _exit(2);
        _exit(mapped && touch(p + 2 * PG, 0, &x) == SIGBUS && fault_code == BUS_ADRERR &&
                      fault_addr == p + 2 * PG ? 0 : 1);
    }
    check(read(ready[0], &c, 1) == 1, "the child touched the page");
    check(ftruncate(fd, PG + 100) == 0, "ftruncate shrinks a mapped file");
    check(write(go[1], "g", 1) == 1, "and lets the child look again");
    close(ready[0]);
    close(ready[1]);
    close(go[0]);
    close(go[1]);
    snprintf(msg, sizeof msg, "%s: a touched page past the new end gives SIGBUS (BUS_ADRERR, si_addr)",
             what);
    check(touch(p + 2 * PG + 5, 0, &c) == SIGBUS && fault_code == BUS_ADRERR &&
              fault_addr == p + 2 * PG + 5, msg);
    snprintf(msg, sizeof msg, "%s: so does a store there", what);
    check(touch(p + 2 * PG, 1, &c) == SIGBUS && fault_addr == p + 2 * PG, msg);
    snprintf(msg, sizeof msg, "%s: the page holding the new end stays, zeroed past it", what);
    check(touch(p + PG, 0, &c) == 0 && c == 'a' && touch(p + PG + 100, 0, &c) == 0 && c == 0, msg);
    int st = -1;
    snprintf(msg, sizeof msg, "%s: a forked child sharing the mapping gets SIGBUS too", what);
    check(child > 0 && waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0, msg);
    check(ftruncate(fd, 3 * PG) == 0, "ftruncate grows the file again");
    snprintf(msg, sizeof msg, "%s: after growing, the page reads as zeros", what);
    check(touch(p + 2 * PG + 5, 0, &c) == 0 && c == 0, msg);
    if (flags & MAP_SHARED) {
        p[2 * PG + 6] = 'c';
        check(pread(fd, &c, 1, 2 * PG + 6) == 1 && c == 'c', "shared: the new page is the file's");
    }
    munmap(p, 3 * PG);
    close(fd);
    unlink(name);
}

int main(void)
{
    if (enter_scratch("mmapfile") != 0)
        return 1;
    shared_mapping();
    private_mapping();
    truncate_mapping(MAP_SHARED, "shared");
    truncate_mapping(MAP_PRIVATE, "private");
    errors();
    unlink("shared");
    unlink("private");
    unlink("errs");
    chdir("/");
    rmdir(suite_dir);
    return suite_end();
}
