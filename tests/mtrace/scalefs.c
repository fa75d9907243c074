// Guest program for ScaleFS's sharing test (issue 3): two CPUs looking up,
// creating and unlinking *different* names in one directory must write no cache
// line the other touches. Each pair runs as one mtrace test, call 0 on CPU 0 and
// call 1 on CPU 1, one after the other, PAIRS_REPEAT times (pairs.h); the host side
// (tools/mtrace/validate --kernel ours) checks the plugin's verdicts. Built
// against our libc; runs on our kernel (and, proving nothing, on Linux).
//
// The private pairs commute: stat of two existing names, open(O_CREAT|O_EXCL)
// of two new names (O_ANYFD when the two share an fd table), unlink of two
// names, mkdir of two names, rename of two names to two others, link of two
// files to two new names, and of one file to two new names, a link and an open
// of its source, open of two files and of one (for reading, and for
// writing: the ETXTBSY writers count is a refcache count), stat of one file; and
// failures with operations on the names they name: a link that fails with
// EEXIST and a stat of its source, a rename of a missing name that fails with
// ENOENT and a link whose source is the rename's target, a rename over an
// existing file and a link that fails with EEXIST on that name. The
// shared pairs are the controls that let the test fail: two writes
// to one pipe, and open(O_CREAT) of one name (the second open finds the file
// the first created: they do not commute).
//
// File data: two faults of different pages of a file share no byte, and a
// fault shares no line with a stat, a read or an in-place write of the file
// (the inode's flag that the first fault wrote on the size line is gone:
// mmap's records tell truncate, kernel/mm/uvm_file.c); the control is a write past
// the end, whose new size the fault must read.
//
// For each test it prints the line the host side reads:
//   mtrace-test ID CALL0 CALL1 NAME expect=shared|private
#include "pairs.h"

#include <errno.h>
#include <sys/stat.h>

#define DIR "/tmp/mtrace-scalefs"

static int own_fd[2];
static int pipefd[2];
// Each side's stat buffer on its own cache lines: the kernel writes them.
static struct side_stat {
    struct stat st;
} __attribute__((aligned(64))) st[2];

// DIR/<prefix><side>, in one of two buffers per side used in turn (so that a
// call can name two paths); each side's buffers on lines of their own.
static struct side_names {
    char buf[2][sizeof DIR + 3];
    int turn;
} __attribute__((aligned(64))) names[2];
static const char *name(char prefix, int side)
{
    struct side_names *n = &names[side];
    char *b = n->buf[n->turn++ & 1];
    snprintf(b, sizeof n->buf[0], DIR "/%c%d", prefix, side);
    return b;
}

static void make_file(const char *path)
{
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    if (fd < 0)
        die(path);
    close(fd);
}

static void own_data(int side)
{
    own_fd[side] = -1;
    memset(&st[side], 0, sizeof st[side]);
    name('x', side), name('x', side);
}

static void close_own(int side) { close(own_fd[side]); }

// The directory holds FILLER other names too, so that its hash table has
// grown to a few hundred buckets: two names share a bucket (and so its line)
// only with probability 1 / buckets, which no design of a hash table avoids.
#define FILLER 500
static void make_dir(void)
{
    char path[sizeof DIR + 16];
    if (mkdir(DIR, 0755) != 0)
        die("mkdir " DIR);
    for (int i = 0; i < FILLER; i++) {
        snprintf(path, sizeof path, DIR "/f%d", i);
        make_file(path);
    }
}

static void call_stat(int side)
{
    if (stat(name('s', side), &st[side].st) != 0)
        die("stat");
}

static void prepare_creat(void)
{
    unlink(name('n', 0)), unlink(name('n', 1));
}
static void call_creat_excl(int side)
{
    if ((own_fd[side] = open(name('n', side), O_CREAT | O_EXCL | O_WRONLY, 0600)) < 0)
        die("open O_CREAT|O_EXCL");
}
static void call_creat_excl_anyfd(int side)
{
    own_fd[side] = open(name('n', side), O_CREAT | O_EXCL | O_WRONLY | O_ANYFD, 0600);
    if (own_fd[side] < 0)
        die("open O_CREAT|O_EXCL|O_ANYFD");
}

static void prepare_unlink(void)
{
    make_file(name('u', 0)), make_file(name('u', 1));
}
static void call_unlink(int side)
{
    if (unlink(name('u', side)) != 0)
        die("unlink");
}

static void prepare_mkdir(void)
{
    rmdir(name('m', 0)), rmdir(name('m', 1));
}
static void call_mkdir(int side)
{
    if (mkdir(name('m', side), 0755) != 0)
        die("mkdir");
}

// Each side renames its own name to another new name.
static char renamed[2][sizeof DIR + 3];
static void prepare_rename(void)
{
    for (int side = 0; side < 2; side++) {
        snprintf(renamed[side], sizeof renamed[side], DIR "/t%d", side);
        unlink(renamed[side]);
        make_file(name('r', side));
    }
}
static void call_rename(int side)
{
    if (rename(name('r', side), renamed[side]) != 0)
        die("rename");
}

static void prepare_link(void)
{
    unlink(name('l', 0)), unlink(name('l', 1));
}
static void call_link(int side)
{
    if (link(name('s', side), name('l', side)) != 0)
        die("link");
}

// Links of one source name to two new names, and a link against an open of its
// source: the link pins the source entry in its own CPU's slot instead of
// locking the source's bucket (fs/linkpin.c), so neither writes what the other
// reads.
static void call_link_same_source(int side)
{
    if (link(name('s', 0), name('l', side)) != 0)
        die("link");
}
static void call_link_or_open_source(int side)
{
    if (side == 0 && link(name('s', 0), name('l', 0)) != 0)
        die("link");
    if (side == 1 && (own_fd[1] = open(name('s', 0), O_RDONLY)) < 0)
        die("open");
}
static void close_side1(int side)
{
    if (side == 1)
        close(own_fd[1]);
}

// Failures write nothing, not even a bucket lock (fs/dirops.c, fs/rename.c):
// side 0's link fails with EEXIST while side 1 stats its source; side 0's
// rename of a missing name fails with ENOENT while side 1 links its target.
static void call_link_eexist_or_stat(int side)
{
    if (side == 0 && (link(name('s', 0), name('s', 1)) == 0 || errno != EEXIST))
        die("link: expected EEXIST");
    if (side == 1 && stat(name('s', 0), &st[side].st) != 0)
        die("stat");
}
static void call_rename_enoent_or_link(int side)
{
    if (side == 0 && (rename(name('q', 0), name('s', 1)) == 0 || errno != ENOENT))
        die("rename: expected ENOENT");
    if (side == 1 && link(name('s', 1), name('l', 1)) != 0)
        die("link");
}

// A rename over an existing file and a link that fails because that name
// exists: the rename changes the name's entry in place (fs/rename.c, rebind),
// on a line apart from what the link's lookup compares, and locks only its
// source's bucket.
static void prepare_rename_over(void)
{
    make_file(name('o', 0));
    make_file(name('v', 1));
}
static void call_rename_over_or_link_eexist(int side)
{
    if (side == 0 && rename(name('o', 0), name('v', 1)) != 0)
        die("rename");
    if (side == 1 && (link(name('s', 0), name('v', 1)) == 0 || errno != EEXIST))
        die("link: expected EEXIST");
}

static void call_open_rdonly(int side)
{
    if ((own_fd[side] = open(name('s', side), O_RDONLY)) < 0)
        die("open");
}
static void call_open_same_rdonly(int side)
{
    if ((own_fd[side] = open(name('s', 0), O_RDONLY)) < 0)
        die("open");
}
static void call_open_same_wronly(int side)
{
    if ((own_fd[side] = open(name('s', 0), O_WRONLY)) < 0)
        die("open O_WRONLY");
}
static void call_stat_same(int side)
{
    if (stat(name('s', 0), &st[side].st) != 0)
        die("stat");
}

static void make_pipe(void)
{
    if (pipe(pipefd) != 0)
        die("pipe");
}
static void call_write_pipe(int side)
{
    (void)side;
    if (write(pipefd[1], "x", 1) != 1)
        die("write pipe");
}
static void close_pipe_side(int side)
{
    (void)side;
    close(pipefd[0]), close(pipefd[1]);
}

// File data and mappings (fs/filedata.c): a file of four pages, new for each
// run (so each fault below is the first the file ever had), with times from
// 1970 (so that a call in a window that marks a time must store it, even in a
// kernel that skips updates within a clock grain). Each side maps it in its
// setup, outside the window.
#define PG 4096
#define DATA DIR "/data"
static struct side_map {
    char *p;
    int fd;
} __attribute__((aligned(64))) map[2];
static const char page_of_a[PG] = {[0 ... PG - 1] = 'a'};

static void prepare_data(void)
{
    unlink(DATA);
    int fd = open(DATA, O_CREAT | O_RDWR, 0600);
    for (int i = 0; i < 4; i++)
        if (fd < 0 || pwrite(fd, page_of_a, PG, (off_t)i * PG) != PG)
            die("write " DATA);
    static const struct timespec old[2] = {{1, 0}, {1, 0}};
    if (futimens(fd, old) != 0)
        die("futimens " DATA);
    close(fd);
}
static void map_data(int side)
{
    map[side].fd = open(DATA, O_RDWR);
    map[side].p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, map[side].fd, 0);
    if (map[side].fd < 0 || map[side].p == MAP_FAILED)
        die("mmap " DATA);
}
static void unmap_data(int side)
{
    munmap(map[side].p, 4 * PG);
    close(map[side].fd);
}
// A fault of page 2*side: the two faults share no byte (their pages' reference
// words may share a line, kernel/mm/page.c).
static void call_fault(int side)
{
    if (*(volatile char *)(map[side].p + 2 * side * PG) != 'a')
        die("fault: wrong data");
}
// Side 0 stats the file (size included), side 1 faults page 2.
static void call_stat_or_fault(int side)
{
    if (side == 0 && stat(DATA, &st[0].st) != 0)
        die("stat " DATA);
    if (side == 1)
        call_fault(1);
}
// Side 0 reads page 0, or writes it in place; side 1 faults page 2.
static void call_pread_or_fault(int side)
{
    char buf[8];
    if (side == 0 && pread(map[0].fd, buf, sizeof buf, 0) != sizeof buf)
        die("pread " DATA);
    if (side == 1)
        call_fault(1);
}
static void call_pwrite_or_fault(int side)
{
    if (side == 0 && pwrite(map[0].fd, "bbbbbbbb", 8, 0) != 8)
        die("pwrite " DATA);
    if (side == 1)
        call_fault(1);
}
// Each side writes its own page in place (2*side), through its own descriptor:
// the times both set go to their CPUs' own slots (fs/itime.c).
static void call_pwrite_own_page(int side)
{
    if (pwrite(map[side].fd, "bbbbbbbb", 8, (off_t)2 * side * PG) != 8)
        die("pwrite " DATA);
}
// Side 0 reads page 0 (marking atime), side 1 writes page 2 (mtime, ctime).
static void call_pread_or_pwrite(int side)
{
    char buf[8];
    if (side == 0 && pread(map[0].fd, buf, sizeof buf, 0) != sizeof buf)
        die("pread " DATA);
    if (side == 1 && pwrite(map[1].fd, "bbbbbbbb", 8, 2 * PG) != 8)
        die("pwrite " DATA);
}
// The control: side 0 extends the file by pages, side 1's fault reads the page
// count it changes (fs/inode.h, npages).
static void call_extend_or_fault(int side)
{
    if (side == 0 && pwrite(map[0].fd, "bbbbbbbb", 8, 4 * PG) != 8)
        die("pwrite past the end of " DATA);
    if (side == 1)
        call_fault(1);
}

static void call_creat_same(int side)
{
    if ((own_fd[side] = open(name('n', 0), O_CREAT | O_WRONLY, 0600)) < 0)
        die("open O_CREAT");
}

static const struct pair pairs[] = {
    { "stat-other-name-2proc", "stat", "stat", 0, "private",
      NULL, NULL, call_stat, NULL },
    { "stat-other-name-2thread", "stat", "stat", 1, "private",
      NULL, NULL, call_stat, NULL },
    { "creat-excl-other-name-2proc", "open", "open", 0, "private",
      prepare_creat, NULL, call_creat_excl, close_own },
    { "creat-excl-anyfd-other-name-2thread", "open", "open", 1, "private",
      prepare_creat, NULL, call_creat_excl_anyfd, close_own },
    { "unlink-other-name-2proc", "unlink", "unlink", 0, "private",
      prepare_unlink, NULL, call_unlink, NULL },
    { "mkdir-other-name-2proc", "mkdir", "mkdir", 0, "private",
      prepare_mkdir, NULL, call_mkdir, NULL },
    { "rename-other-names-2proc", "rename", "rename", 0, "private",
      prepare_rename, NULL, call_rename, NULL },
    { "link-other-names-2proc", "link", "link", 0, "private",
      prepare_link, NULL, call_link, NULL },
    { "link-same-source-2proc", "link", "link", 0, "private",
      prepare_link, NULL, call_link_same_source, NULL },
    { "link-open-source-2proc", "link", "open", 0, "private",
      prepare_link, NULL, call_link_or_open_source, close_side1 },
    { "link-eexist-stat-source-2proc", "link", "stat", 0, "private",
      NULL, NULL, call_link_eexist_or_stat, NULL },
    { "rename-enoent-link-target-2proc", "rename", "link", 0, "private",
      prepare_link, NULL, call_rename_enoent_or_link, NULL },
    { "rename-over-link-eexist-2proc", "rename", "link", 0, "private",
      prepare_rename_over, NULL, call_rename_over_or_link_eexist, NULL },
    { "open-other-name-2proc", "open", "open", 0, "private",
      NULL, NULL, call_open_rdonly, close_own },
    { "open-same-name-2proc", "open", "open", 0, "private",
      NULL, NULL, call_open_same_rdonly, close_own },
    { "open-wronly-same-name-2proc", "open", "open", 0, "private",
      NULL, NULL, call_open_same_wronly, close_own },
    { "stat-same-name-2proc", "stat", "stat", 0, "private",
      NULL, NULL, call_stat_same, NULL },
    { "fault-other-page-2proc", "memread", "memread", 0, "bytes-private",
      prepare_data, map_data, call_fault, unmap_data },
    { "stat-fault-same-file-2proc", "stat", "memread", 0, "private",
      prepare_data, map_data, call_stat_or_fault, unmap_data },
    { "pread-fault-other-page-2proc", "pread", "memread", 0, "private",
      prepare_data, map_data, call_pread_or_fault, unmap_data },
    { "pwrite-fault-other-page-2proc", "pwrite", "memread", 0, "private",
      prepare_data, map_data, call_pwrite_or_fault, unmap_data },
    { "pwrite-other-page-2proc", "pwrite", "pwrite", 0, "private",
      prepare_data, map_data, call_pwrite_own_page, unmap_data },
    { "pread-pwrite-other-page-2proc", "pread", "pwrite", 0, "private",
      prepare_data, map_data, call_pread_or_pwrite, unmap_data },
    { "extend-fault-same-file-2proc", "pwrite", "memread", 0, "shared",
      prepare_data, map_data, call_extend_or_fault, unmap_data },
    { "write-same-pipe-2proc", "write", "write", 0, "shared",
      make_pipe, NULL, call_write_pipe, close_pipe_side },
    { "creat-same-name-2proc", "open", "open", 0, "shared",
      prepare_creat, NULL, call_creat_same, close_own },
};

int main(void)
{
    pairs_map();
    // The directory's hash seed is its inode number, and inode numbers count
    // per CPU (fs/inode.c). Made on CPU 0, where the boot unpacked the initial
    // file system, they moved with every file added to the image, and so did
    // which names share a bucket. CPU 1 has made no inode before.
    pin(1);
    make_dir();
    make_file(name('s', 0)), make_file(name('s', 1));
    pin(0);
    pairs_run(pairs, sizeof pairs / sizeof pairs[0]);
    return 0;
}
