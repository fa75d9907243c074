// Guest program for mtrace on our kernel: descriptors, file data, pipes and
// memory, in pairs that commute and so should share no cache line -- two
// threads of one process (one fd table, one address space) each using their
// own descriptors with O_ANYFD, their own pipes, files and mappings; two
// processes writing their own files in one directory; reads of one file. The
// controls that must share: two lseeks of one open file (one offset) and two
// writes to one pipe. Two fstats or preads of one descriptor in two threads
// commute and share nothing: the lookups borrow the file in per-CPU counts
// (kernel/file/file.c). A query lseek (SEEK_CUR by 0) takes no lock. A posix_spawn
// of a missing program reads no fd slot another thread's open writes; faults of
// one file page in two processes write nothing of the page, and one of them
// shares nothing with a write extending the file inside that page; writes to
// pipes without readers, SIGPIPE ignored, share nothing, nor two reads of one
// pipe's end of file or two writes to one pipe without readers. Harness: pairs.h; host
// side: tools/mtrace/validate --kernel ours --program /tests/mtrace/fds.
#include "pairs.h"

#include <errno.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define DIR "/tmp/mtrace-fds"

// Per side, on lines of its own: the kernel writes some of it.
static struct side_state {
    int fd, fd2, pipe[2];
    pid_t child;
    char *map;
    struct stat st;
    char buf[8];
} __attribute__((aligned(64))) side[2];

static int shared_fd = -1;                // one open file for both sides
static int shared_pipe[2];

static void own_data(int s)
{
    memset(&side[s], 0, sizeof side[s]);
}

static const char *path(int s)
{
    return s ? DIR "/1" : DIR "/0";
}

static void open_own_devnull(int s)
{
    if ((side[s].fd = open("/dev/null", O_RDWR | O_ANYFD)) < 0)
        die("open /dev/null");
}
static void close_own(int s) { close(side[s].fd); }
static void call_close(int s) { close(side[s].fd); }

static void call_dup3_anyfd(int s)
{
    if ((side[s].fd2 = (int)syscall(SYS_dup3, side[s].fd, -1, O_ANYFD)) < 0)
        die("dup3 O_ANYFD");
}
static void close_both(int s) { close(side[s].fd), close(side[s].fd2); }

static void call_pipe2_anyfd(int s)
{
    if (pipe2(side[s].pipe, O_ANYFD) != 0)
        die("pipe2 O_ANYFD");
}
static void close_own_pipe(int s) { close(side[s].pipe[0]), close(side[s].pipe[1]); }

static void make_own_pipe(int s)
{
    if (pipe2(side[s].pipe, O_ANYFD) != 0 || write(side[s].pipe[1], "p", 1) != 1)
        die("own pipe");
}
static void call_read_own_pipe(int s)
{
    if (read(side[s].pipe[0], side[s].buf, 1) != 1)
        die("read own pipe");
}

static void open_own_file(int s)
{
    if ((side[s].fd = open(path(s), O_RDWR | O_CREAT | O_ANYFD, 0600)) < 0)
        die("open own file");
}
static void call_write_own(int s)
{
    if (write(side[s].fd, "x", 1) != 1)
        die("write own file");
}
static void call_pread_own(int s)
{
    if (pread(side[s].fd, side[s].buf, 1, 0) != 1)
        die("pread own file");
}
static void prepare_own_files(void)
{
    for (int s = 0; s < 2; s++) {
        int fd = open(path(s), O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || write(fd, "data", 4) != 4)
            die("own file");
        close(fd);
    }
}

// One file, opened by each side itself.
static void prepare_one_file(void)
{
    int fd = open(path(0), O_RDWR | O_CREAT | O_TRUNC, 0600);
    char c;
    if (fd < 0 || write(fd, "data", 4) != 4 || pread(fd, &c, 1, 0) != 1)
        die("one file");
    close(fd);
}
static void open_one_file(int s)
{
    if ((side[s].fd = open(path(0), O_RDONLY | O_ANYFD)) < 0)
        die("open one file");
}

// One descriptor of one open file, shared by the two threads.
static void open_shared_fd(void)
{
    prepare_one_file();
    if (shared_fd >= 0)
        close(shared_fd);
    if ((shared_fd = open(path(0), O_RDONLY)) < 0)
        die("open shared fd");
}
static void call_fstat_shared(int s)
{
    if (fstat(shared_fd, &side[s].st) != 0)
        die("fstat");
}
static void call_pread_shared(int s)
{
    if (pread(shared_fd, side[s].buf, 1, s) != 1)
        die("pread shared fd");
}
static void call_lseek_query_shared(int s)
{
    (void)s;
    if (lseek(shared_fd, 0, SEEK_CUR) != 0)
        die("lseek SEEK_CUR");
}
static void call_lseek_shared(int s)
{
    if (lseek(shared_fd, s + 1, SEEK_SET) != s + 1)
        die("lseek");
}

static void make_shared_pipe(void)
{
    if (pipe(shared_pipe) != 0)
        die("pipe");
}
static void call_write_shared_pipe(int s)
{
    (void)s;
    if (write(shared_pipe[1], "x", 1) != 1)
        die("write pipe");
}
static void close_shared_pipe(int s)
{
    if (s == 0)
        close(shared_pipe[0]), close(shared_pipe[1]);
}

static void call_mmap_own_file(int s)
{
    side[s].map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, side[s].fd, 0);
    if (side[s].map == MAP_FAILED)
        die("mmap own file");
}
static void unmap_close(int s)
{
    munmap(side[s].map, 4096);
    close(side[s].fd);
}

static void map_own_page(int s)
{
    side[s].map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (side[s].map == MAP_FAILED)
        die("mmap own page");
}
static void map_and_touch_own_page(int s)
{
    map_own_page(s);
    side[s].map[0] = 1;
}
static void call_munmap_own(int s)
{
    if (munmap(side[s].map, 4096) != 0)
        die("munmap");
}
static void call_touch_own(int s) { side[s].map[0] = 1; } // the page fault

// A posix_spawn whose program is missing (ENOENT, no child) against an open in
// a sibling thread: the spawn copies the caller's fds only once the program has
// loaded (kernel/proc/spawn.c), so it reads none of the slots the open writes.
static void call_spawn_missing_or_open(int s)
{
    if (s == 0) {
        char *argv[] = {"nonexistent", NULL}, *envp[] = {NULL};
        pid_t pid;
        if (posix_spawn(&pid, DIR "/nonexistent", NULL, NULL, argv, envp) != ENOENT)
            die("posix_spawn: expected ENOENT");
    } else if ((side[s].fd = open("/dev/null", O_RDONLY)) < 0) {
        die("open /dev/null");
    }
}
// Two processes, each in a process group of its own, each posix_spawn a
// child: pids come from per-CPU ranges and go into buckets in the creating
// CPU's per-CPU area (kernel/proc/pid.c), so allocating and publishing them
// shares nothing; /proc keeps no list that a spawn would have to update.
// (In one group the two children would join its per-CPU partitions, whose
// member lists share a line with the parents' pgrp pointers: pgrp.c's.)
static void spawn_true(pid_t *pid)
{
    char *argv[] = {"true", NULL}, *envp[] = {NULL};
    if (posix_spawn(pid, "/bin/true", NULL, NULL, argv, envp) != 0)
        die("posix_spawn /bin/true");
}
// Once before: the first executor of a file sets up its write count
// (fs/writecount.c), a one-time write both windows would see.
static void spawn_once(void)
{
    pid_t pid;
    spawn_true(&pid);
    waitpid(pid, NULL, 0);
}
static void own_group(int s)
{
    (void)s;
    if (setpgid(0, 0) != 0)
        die("setpgid");
}
static void call_spawn_own_child(int s) { spawn_true(&side[s].child); }
static void reap_own_child(int s) { waitpid(side[s].child, NULL, 0); }

static void close_opened(int s)
{
    if (s == 1)
        close(side[s].fd);
}
static void unmap_own(int s) { munmap(side[s].map, 4096); }

// One page of one file, mapped by each process itself: both fault it in. The
// page is the file's own and the mapping holds the inode, not the page
// (kernel/mm/uvm_internal.h, VP_FILEPG), so the faults write nothing of the page: the text of
// a program that many processes run is the common case.
static void map_one_file(int s)
{
    open_one_file(s);
    side[s].map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, side[s].fd, 0);
    if (side[s].map == MAP_FAILED)
        die("mmap one file");
}
static void call_fault_one_file(int s)
{
    if (side[s].map[s] != "data"[s])
        die("read one file's page");
}

// One file: side 0 extends it inside its only page while side 1 faults that
// page in. The fault asks only whether its page lies inside the file, from the
// page count (fs/inode.h, npages), which the extension does not change; the
// size it moves is on another line.
static void open_or_map_one_file(int s)
{
    if (s == 1) {
        map_one_file(s);
    } else if ((side[s].fd = open(path(0), O_RDWR | O_ANYFD)) < 0) {
        die("open one file for writing");
    }
}
static void call_extend_or_fault(int s)
{
    if (s == 0 && pwrite(side[s].fd, "!", 1, 100) != 1)
        die("extend one file");
    if (s == 1)
        call_fault_one_file(s);
}
static void close_or_unmap(int s)
{
    if (s == 1)
        munmap(side[s].map, 4096);
    close(side[s].fd);
}

// Each thread writes to its own pipe whose reader is gone (EPIPE), in a
// process that ignores SIGPIPE: the signal each sends itself is discarded
// without the process's lock (kernel/proc/signal.c, discard_at_once).
static void ignore_sigpipe(void) { signal(SIGPIPE, SIG_IGN); }
static void make_broken_pipe(int s)
{
    if (pipe2(side[s].pipe, O_ANYFD) != 0)
        die("broken pipe");
    close(side[s].pipe[0]);
}
static void call_write_broken_pipe(int s)
{
    if (write(side[s].pipe[1], "x", 1) != -1 || errno != EPIPE)
        die("write to a pipe without readers: expected EPIPE");
}
static void close_broken_pipe(int s) { close(side[s].pipe[1]); }

// One pipe whose writers are gone: both sides read its end of file. Or one
// whose reader is gone: both write (EPIPE, SIGPIPE ignored). Either is decided
// from a look at the pipe without its locks (kernel/file/pipe.c).
static void make_widowed_pipe(int end)
{
    ignore_sigpipe();
    if (pipe(shared_pipe) != 0)
        die("pipe");
    close(shared_pipe[end]);
}
static void make_pipe_without_writer(void) { make_widowed_pipe(1); }
static void make_pipe_without_reader(void) { make_widowed_pipe(0); }
static void call_read_eof(int s)
{
    if (read(shared_pipe[0], side[s].buf, 1) != 0)
        die("read a pipe without writers: expected 0");
}
static void call_write_epipe(int s)
{
    (void)s;
    if (write(shared_pipe[1], "x", 1) != -1 || errno != EPIPE)
        die("write a pipe without readers: expected EPIPE");
}
static void close_widowed_pipe(int s)
{
    if (s == 0) // after both windows; the other end is closed already
        close(shared_pipe[0]), close(shared_pipe[1]);
}

static const struct pair pairs[] = {
    { "close-own-anyfd-2thread", "close", "close", 1, "private",
      NULL, open_own_devnull, call_close, NULL },
    { "dup3-anyfd-2thread", "dup3", "dup3", 1, "private",
      NULL, open_own_devnull, call_dup3_anyfd, close_both },
    { "pipe2-anyfd-2thread", "pipe2", "pipe2", 1, "private",
      NULL, NULL, call_pipe2_anyfd, close_own_pipe },
    { "read-own-pipe-2thread", "read", "read", 1, "private",
      NULL, make_own_pipe, call_read_own_pipe, close_own_pipe },
    { "write-own-file-2proc", "write", "write", 0, "private",
      prepare_own_files, open_own_file, call_write_own, close_own },
    { "write-own-file-2thread", "write", "write", 1, "private",
      prepare_own_files, open_own_file, call_write_own, close_own },
    { "pread-one-file-2proc", "pread64", "pread64", 0, "private",
      prepare_one_file, open_one_file, call_pread_own, close_own },
    // In a table with more than one user, fd_get borrows the file (a per-CPU
    // refcache count) where Linux's fdget takes a shared reference.
    { "fstat-one-fd-2thread", "fstat", "fstat", 1, "private",
      open_shared_fd, NULL, call_fstat_shared, NULL },
    { "pread-one-fd-2thread", "pread64", "pread64", 1, "private",
      open_shared_fd, NULL, call_pread_shared, NULL },
    { "lseek-query-one-fd-2thread", "lseek", "lseek", 1, "private",
      open_shared_fd, NULL, call_lseek_query_shared, NULL },
    { "mmap-own-file-2thread", "mmap", "mmap", 1, "private",
      prepare_own_files, open_own_file, call_mmap_own_file, unmap_close },
    { "munmap-own-page-2thread", "munmap", "munmap", 1, "private",
      NULL, map_and_touch_own_page, call_munmap_own, NULL },
    { "fault-own-page-2thread", "fault", "fault", 1, "private",
      NULL, map_own_page, call_touch_own, unmap_own },
    { "fault-one-file-page-2proc", "fault", "fault", 0, "private",
      prepare_one_file, map_one_file, call_fault_one_file, unmap_close },
    { "extend-fault-one-file-2proc", "pwrite64", "fault", 0, "private",
      prepare_one_file, open_or_map_one_file, call_extend_or_fault, close_or_unmap },
    { "write-broken-pipe-2thread", "write", "write", 1, "private",
      ignore_sigpipe, make_broken_pipe, call_write_broken_pipe, close_broken_pipe },
    { "read-eof-one-pipe-2proc", "read", "read", 0, "private",
      make_pipe_without_writer, NULL, call_read_eof, close_widowed_pipe },
    { "write-epipe-one-pipe-2proc", "write", "write", 0, "private",
      make_pipe_without_reader, NULL, call_write_epipe, close_widowed_pipe },
    { "spawn-missing-open-2thread", "spawn", "open", 1, "private",
      NULL, NULL, call_spawn_missing_or_open, close_opened },
    { "spawn-own-child-2proc", "spawn", "spawn", 0, "private",
      spawn_once, own_group, call_spawn_own_child, reap_own_child },
    { "lseek-one-file-2thread", "lseek", "lseek", 1, "shared",
      open_shared_fd, NULL, call_lseek_shared, NULL },
    { "write-one-pipe-2proc", "write", "write", 0, "shared",
      make_shared_pipe, NULL, call_write_shared_pipe, close_shared_pipe },
};

int main(void)
{
    pairs_map();
    if (mkdir(DIR, 0755) != 0)
        die("mkdir " DIR);
    pairs_run(pairs, sizeof pairs / sizeof pairs[0]);
    return 0;
}
