// Guest program for mtrace's self-test: pairs of calls whose footprints are
// known to share a cache line in Linux 6.1 (a written pipe, a directory, a
// process's fd table or address space, the dentry of a file both close, a page
// both read into) or known not to (calls that only touch the caller's own task,
// fd table, files, pipes and address space). Each pair runs as one mtrace test,
// call 0 on CPU 0 and call 1 on CPU 1, one after the other, PAIRS_REPEAT times
// (the harness is tests/mtrace/pairs.h); the host side (tools/mtrace/validate)
// checks the plugin's verdicts.
//
// The private pairs also check that the plugin skips interrupts: without that,
// a timer tick inside one window writes jiffies and the clock, which the other
// call reads (mmap-2proc did in most runs). mmap in two processes is private at
// byte granularity only: now and then one call zeroes a new object in a line
// where the other reads a neighbouring one.
//
// For each test it prints the runner-log line the analysis reads:
//   mtrace-test ID CALL0 CALL1 NAME expect=shared|private|bytes-private
// Needs 2 CPUs. Without the plugin it runs the same and proves nothing.
#include "pairs.h"

#include <sys/stat.h>
#include <sys/syscall.h>

// What a pair shares before it forks or spawns its thread.
static int pipefd[2];
static int own_fd[2];                     // per side: an fd the side opened itself
static void *mapped[2];

static void nothing(void) {}
static void nothing_side(int side) { (void)side; }
static void own_data(int side) { (void)side; } // the calls write no data of ours

static void call_getpid(int side) { (void)side; syscall(SYS_getpid); }

static void open_devnull(int side)
{
    if ((own_fd[side] = open("/dev/null", O_WRONLY)) < 0)
        die("open /dev/null");
}
static void close_own(int side) { close(own_fd[side]); }
static void call_write_own(int side)
{
    if (write(own_fd[side], "x", 1) != 1)
        die("write");
}

static void make_pipe(void)
{
    if (pipe(pipefd) != 0)
        die("pipe");
}
static void close_pipe(int side)
{
    if (side == 0) // after both windows
        close(pipefd[0]), close(pipefd[1]);
}
static void call_write_pipe(int side)
{
    (void)side;
    if (write(pipefd[1], "x", 1) != 1)
        die("write pipe");
}

static int own_pipe[2][2];
static void make_own_pipe(int side)
{
    if (pipe(own_pipe[side]) != 0 || write(own_pipe[side][1], "p", 1) != 1)
        die("own pipe");
}
static void call_write_own_pipe(int side)
{
    if (write(own_pipe[side][1], "x", 1) != 1)
        die("write own pipe");
}
static void close_own_pipe(int side) { close(own_pipe[side][0]), close(own_pipe[side][1]); }

static void call_close_own(int side) { close(own_fd[side]); }

// One page of a memfd, mapped by each side itself after the fork, so at
// different virtual addresses: the calls share it only physically.
static int memfd;
static char *view[2];
static void make_memfd(void)
{
    if ((memfd = memfd_create("mtrace", 0)) < 0 || ftruncate(memfd, 4096) != 0)
        die("memfd");
}
static void map_view(int side)
{
    make_own_pipe(side);
    // Both processes have the same layout: ask for different addresses.
    void *hint = (void *)(0x200000000000UL + side * 0x100000UL);
    view[side] = mmap(hint, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (view[side] == MAP_FAILED)
        die("mmap memfd");
    view[side][0] = 0;                    // fault it in outside the window
}
static void call_read_into_view(int side)
{
    if (read(own_pipe[side][0], view[side], 1) != 1)
        die("read into view");
}
static void unmap_view(int side)
{
    close_own_pipe(side);
    munmap(view[side], 4096);
    if (side == 0)
        close(memfd);
}

// The directory also holds FILLER other names, so that a hash-table directory
// (ours, fs/dirhash.c) has grown to a few hundred buckets and "0" and "1" are in
// different ones but for a chance of about 1 / buckets. Linux shares the
// directory's lock and inode whatever it holds.
#define FILLER 500
static void make_dir(void)
{
    static int filled;
    char path[32];
    mkdir("/tmp/v", 0755);
    for (; filled < FILLER; filled++) {
        snprintf(path, sizeof path, "/tmp/v/f%d", filled);
        int fd = open(path, O_CREAT | O_WRONLY, 0600);
        if (fd < 0)
            die("filler");
        close(fd);
        // After the last filler, the measured names once, outside any window:
        // an insert into a crowded bucket ends with the table's resize check
        // (fs/dirhash.c), which must not fall into the first measured run.
        if (filled == FILLER - 1)
            for (int k = 0; k < 2; k++) {
                snprintf(path, sizeof path, "/tmp/v/%d", k);
                close(open(path, O_CREAT | O_WRONLY, 0600));
                unlink(path);
            }
    }
    unlink("/tmp/v/0");
    unlink("/tmp/v/1");
}
static void call_creat(int side)
{
    char path[] = "/tmp/v/0";
    path[7] += side;
    if ((own_fd[side] = open(path, O_CREAT | O_WRONLY, 0600)) < 0)
        die("creat");
}

static void call_open_devnull(int side) { open_devnull(side); }

static void call_mmap(int side)
{
    mapped[side] = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped[side] == MAP_FAILED)
        die("mmap");
}
static void unmap(int side) { munmap(mapped[side], 4096); }

static const struct pair pairs[] = {
    { "getpid-2proc", "getpid", "getpid", 0, "private", nothing, nothing_side, call_getpid,
      nothing_side },
    { "write-own-devnull-2proc", "write", "write", 0, "private", nothing, open_devnull,
      call_write_own, close_own },
    { "write-own-pipe-2proc", "write", "write", 0, "private", nothing, make_own_pipe,
      call_write_own_pipe, close_own_pipe },
    { "mmap-2proc", "mmap", "mmap", 0, "bytes-private", nothing, nothing_side, call_mmap, unmap },
    // Each process closes its own open file, but both files are /dev/null: the
    // last fput drops a reference on the shared dentry and on the device.
    { "close-own-devnull-2proc", "close", "close", 0, "shared", nothing, open_devnull,
      call_close_own, nothing_side },
    // Each process reads from its own pipe into its own mapping of one page: the
    // kernel writes the same physical line through different virtual addresses.
    { "read-into-one-page-2proc", "read", "read", 0, "shared", make_memfd, map_view,
      call_read_into_view, unmap_view },
    { "write-same-pipe-2proc", "write", "write", 0, "shared", make_pipe, nothing_side,
      call_write_pipe, close_pipe },
    { "creat-same-dir-2proc", "open", "open", 0, "shared", make_dir, nothing_side, call_creat,
      close_own },
    { "open-same-fdtable-2thread", "open", "open", 1, "shared", nothing, nothing_side,
      call_open_devnull, close_own },
    { "mmap-same-mm-2thread", "mmap", "mmap", 1, "shared", nothing, nothing_side, call_mmap,
      unmap },
};

int main(void)
{
    pairs_map();
    // Loads are not messages: these would otherwise report a test 999.
    (void)*(volatile char *)(MTRACE_BASE + MTRACE_ID + 999);
    (void)*(volatile char *)(MTRACE_BASE + MTRACE_OPEN);
    (void)*(volatile char *)(MTRACE_BASE + MTRACE_DONE);
    pairs_run(pairs, sizeof pairs / sizeof pairs[0]);
    return 0;
}
