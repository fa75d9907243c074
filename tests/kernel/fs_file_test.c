// ScaleFS files: holes, sparse files, truncate (shrink and extend), append,
// limits, concurrent writers of disjoint pages, concurrent appends, readers
// racing with truncates, that freeing a file returns its pages, and a file's
// times changed on every CPU, kept in a busy CPU's slot, and never past the
// inode's life.
#include "fstest.h"
#include "inode.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "sync/refcache.h"
#include "testutil.h"

static struct inode *D;

static struct inode *newfile(const char *name)
{
    struct inode *ip;
    return fs_create(D, name, 0644, FS_EXCL, &ip) ? NULL : ip;
}

static uint64_t blocks(struct inode *ip)
{
    struct fs_stat st;
    fs_stat(ip, STATX_BLOCKS, &st);
    return st.blocks;
}

static bool all_bytes(const char *p, size_t n, char c)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != c)
            return false;
    return true;
}

KTEST(fs_file_holes_and_sparse)
{
    KREQUIRE((D = fst_scratch("t_holes")) != NULL);
    struct inode *f = newfile("f");
    KREQUIRE(f);
    char *buf = kmalloc(4 * PGSIZE);
    KREQUIRE(buf);
    KCHECK_EQ(fs_write(f, "abc", 3, 0), 3);
    KCHECK_EQ(fs_write(f, "xyz", 3, 3 * PGSIZE + 100), 3);
    KCHECK_EQ(filedata_size(f), 3 * PGSIZE + 103);
    KCHECK_EQ(blocks(f), 2 * 8); // pages 0 and 3
    memset(buf, 0x55, 4 * PGSIZE);
    KCHECK_EQ(fs_read(f, buf, 4 * PGSIZE, 0), 3 * PGSIZE + 103);
    KCHECK(memcmp(buf, "abc", 3) == 0);
    KCHECK(all_bytes(buf + 3, 3 * PGSIZE + 97, 0)); // the hole and page 3's head
    KCHECK(memcmp(buf + 3 * PGSIZE + 100, "xyz", 3) == 0);
    KCHECK_EQ(fs_read(f, buf, 10, 3 * PGSIZE + 103), 0); // at the end
    KCHECK_EQ(fs_read(f, buf, 10, 1ULL << 40), 0);
    // Far away: a 4-level tree, still one data page.
    uint64_t far = 300ULL << 30; // 300 GiB
    KCHECK_EQ(fs_write(f, "Q", 1, far), 1);
    KCHECK_EQ(filedata_size(f), far + 1);
    KCHECK_EQ(blocks(f), 3 * 8);
    KCHECK_EQ(fs_read(f, buf, 2 * PGSIZE, 1ULL << 30), 2 * PGSIZE);
    KCHECK(all_bytes(buf, 2 * PGSIZE, 0));
    KCHECK_EQ(fs_read(f, buf, 4, far - 3), 4);
    KCHECK(all_bytes(buf, 3, 0) && buf[3] == 'Q');
    KCHECK_EQ(fs_read(f, buf, 3, 0), 3); // the old pages moved down the taller tree
    KCHECK(memcmp(buf, "abc", 3) == 0);
    // Limits.
    KCHECK_EQ(fs_write(f, "x", 1, FS_FILE_MAX), -EFBIG);
    KCHECK_EQ(fs_write(f, "xy", 2, FS_FILE_MAX - 1), 1); // short write up to the limit
    KCHECK_EQ(fs_truncate(f, FS_FILE_MAX + 1), -EFBIG);
    KCHECK_EQ(fs_truncate(f, -1), -EINVAL);
    KCHECK_EQ(fs_truncate(D, 0), -EISDIR);
    KCHECK_EQ(fs_write(D, "x", 1, 0), -EISDIR);
    KCHECK_EQ(fs_truncate(f, 0), 0);
    KCHECK_EQ(blocks(f), 0);
    KCHECK_EQ(filedata_size(f), 0);
    kfree(buf);
    fs_iput(f);
    fs_iput(D);
    fst_rm_rf("/t_holes");
}

KTEST(fs_file_truncate)
{
    KREQUIRE((D = fst_scratch("t_trunc")) != NULL);
    struct inode *f = newfile("f");
    KREQUIRE(f);
    char *buf = kmalloc(4 * PGSIZE);
    KREQUIRE(buf);
    memset(buf, 'A', 3 * PGSIZE);
    KCHECK_EQ(fs_write(f, buf, 3 * PGSIZE, 0), 3 * PGSIZE);
    KCHECK_EQ(blocks(f), 3 * 8);
    KCHECK_EQ(fs_truncate(f, 5000), 0);          // shrink into page 1
    KCHECK_EQ(filedata_size(f), 5000);
    KCHECK_EQ(blocks(f), 2 * 8);                 // page 2 freed
    KCHECK_EQ(fs_truncate(f, 3 * PGSIZE), 0);    // extend again: zeros, not the old A's
    KCHECK_EQ(fs_read(f, buf, 4 * PGSIZE, 0), 3 * PGSIZE);
    KCHECK(all_bytes(buf, 5000, 'A'));
    KCHECK(all_bytes(buf + 5000, 3 * PGSIZE - 5000, 0));
    // Write past the end after a shrink: the gap reads as zeros.
    memset(buf, 'B', 10);
    KCHECK_EQ(fs_truncate(f, 100), 0);
    KCHECK_EQ(fs_write(f, buf, 10, 6000), 10);
    KCHECK_EQ(fs_read(f, buf, 4 * PGSIZE, 0), 6010);
    KCHECK(all_bytes(buf, 100, 'A'));
    KCHECK(all_bytes(buf + 100, 5900, 0));
    KCHECK(all_bytes(buf + 6000, 10, 'B'));
    // Same size: nothing changes.
    KCHECK_EQ(fs_truncate(f, 6010), 0);
    KCHECK_EQ(filedata_size(f), 6010);
    // Append.
    KCHECK_EQ(fs_truncate(f, 0), 0);
    for (int i = 0; i < 1000; i++)
        KCHECK_EQ(fs_append(f, "0123456789", 10), 10);
    KCHECK_EQ(filedata_size(f), 10000);
    KCHECK_EQ(fs_read(f, buf, 20, 4090), 20);
    KCHECK(memcmp(buf, "0123456789012345678", 19) == 0);
    kfree(buf);
    fs_iput(f);
    fs_iput(D);
    fst_rm_rf("/t_trunc");
}

// Bytes past the end can hold junk (stores through a mapping of the last page,
// or an in-place writer that raced with a shrinking truncate). An extension
// zeroes exactly the bytes it exposes and does not write itself, and nothing
// further: the junk beyond stays until an extension takes it in.
KTEST(fs_file_extension_cleans_what_it_exposes)
{
    KREQUIRE((D = fst_scratch("t_clean")) != NULL);
    struct inode *f = newfile("f");
    KREQUIRE(f);
    char *buf = kmalloc(2 * PGSIZE);
    KREQUIRE(buf);
    KCHECK_EQ(fs_write(f, "abcdefghij", 10, 0), 10);
    void *pg = NULL;
    KREQUIRE(fs_map_page(f, 0, &pg) == 0);
    char *p = pg;
    memset(p + 10, 'X', PGSIZE - 10); // a store past the end through the mapping
    KCHECK_EQ(fs_write(f, "KL", 2, 50), 2);
    KCHECK_EQ(fs_read(f, buf, 2 * PGSIZE, 0), 52);
    KCHECK(memcmp(buf, "abcdefghij", 10) == 0 && all_bytes(buf + 10, 40, 0));
    KCHECK(memcmp(buf + 50, "KL", 2) == 0);
    KCHECK(all_bytes(p + 52, PGSIZE - 52, 'X')); // not part of the file: untouched
    KCHECK_EQ(fs_truncate(f, 3000), 0);
    KCHECK_EQ(fs_read(f, buf, 2 * PGSIZE, 0), 3000);
    KCHECK(all_bytes(buf + 52, 3000 - 52, 0));
    KCHECK(all_bytes(p + 3000, PGSIZE - 3000, 'X'));
    KCHECK_EQ(fs_write(f, "Z", 1, PGSIZE + 5), 1); // exposes the rest of page 0 and a hole
    KCHECK_EQ(fs_read(f, buf, 2 * PGSIZE, 0), PGSIZE + 6);
    KCHECK(all_bytes(buf + 3000, PGSIZE + 5 - 3000, 0) && buf[PGSIZE + 5] == 'Z');
    KCHECK(all_bytes(p + 3000, PGSIZE - 3000, 0)); // (no reference: f keeps the page)
    kfree(buf);
    fs_iput(f);
    fs_iput(D);
    fst_rm_rf("/t_clean");
}

// ---- concurrency ---------------------------------------------------------------

#define PAGES_PER_THREAD 24
static struct inode *shared_file;
static int nthreads;

// The byte at offset o of page pg, as written by its owner thread.
static char pattern(uint64_t pg, size_t o) { return (char)(pg * 7 + o / 8 + 1); }

static void write_pages(int i, void *arg)
{
    bool in_place = arg != NULL;
    char *buf = kmalloc(PGSIZE);
    if (!buf)
        return;
    for (int k = 0; k < PAGES_PER_THREAD; k++) {
        uint64_t pg = (uint64_t)k * nthreads + i; // interleaved: neighbours in one node
        for (size_t o = 0; o < PGSIZE; o++)
            buf[o] = pattern(pg, o);
        // In two halves, so the same page is also written twice.
        if (fs_write(shared_file, buf, PGSIZE / 2, pg * PGSIZE) != PGSIZE / 2 ||
            fs_write(shared_file, buf + PGSIZE / 2, PGSIZE / 2, pg * PGSIZE + PGSIZE / 2) !=
                PGSIZE / 2)
            ktest_failed(__FILE__, __LINE__, "write of page %lu (%s)", pg,
                         in_place ? "in place" : "extending");
    }
    kfree(buf);
}

static int verify_pages(int npages)
{
    char *buf = kmalloc(PGSIZE);
    int bad = 0;
    for (int pg = 0; pg < npages && buf; pg++) {
        if (fs_read(shared_file, buf, PGSIZE, (uint64_t)pg * PGSIZE) != PGSIZE) {
            bad++;
            continue;
        }
        for (size_t o = 0; o < PGSIZE; o++)
            if (buf[o] != pattern(pg, o)) {
                bad++;
                break;
            }
    }
    kfree(buf);
    return bad;
}

KTEST(fs_file_concurrent_disjoint_writers)
{
    KREQUIRE((D = fst_scratch("t_cwrite")) != NULL);
    nthreads = 2 * ncpu_online;
    int npages = nthreads * PAGES_PER_THREAD;
    // Extending writes (they serialise on the size lock, but must all land).
    KREQUIRE((shared_file = newfile("ext")));
    KCHECK(fst_run(nthreads, write_pages, NULL));
    KCHECK_EQ(filedata_size(shared_file), (uint64_t)npages * PGSIZE);
    KCHECK_EQ(verify_pages(npages), 0);
    fs_iput(shared_file);
    // In-place writes into holes: lock-free page installation racing in shared nodes.
    KREQUIRE((shared_file = newfile("inplace")));
    KCHECK_EQ(fs_truncate(shared_file, (int64_t)npages * PGSIZE), 0);
    KCHECK_EQ(blocks(shared_file), 0);
    KCHECK(fst_run(nthreads, write_pages, (void *)1));
    KCHECK_EQ(filedata_size(shared_file), (uint64_t)npages * PGSIZE);
    KCHECK_EQ(verify_pages(npages), 0);
    KCHECK_EQ(blocks(shared_file), (uint64_t)npages * 8); // no page installed twice
    fs_iput(shared_file);
    fs_iput(D);
    fst_rm_rf("/t_cwrite");
}

#define APPENDS 200
static void append_records(int i, void *arg)
{
    (void)arg;
    char rec[16];
    for (int k = 0; k < APPENDS; k++) {
        ksnprintf(rec, sizeof rec, "%03d:%05d......", i, k);
        rec[15] = '\n';
        if (fs_append(shared_file, rec, 16) != 16)
            ktest_failed(__FILE__, __LINE__, "append");
    }
}

KTEST(fs_file_concurrent_appends)
{
    KREQUIRE((D = fst_scratch("t_append")) != NULL);
    KREQUIRE((shared_file = newfile("log")));
    nthreads = 2 * ncpu_online;
    KCHECK(fst_run(nthreads, append_records, NULL));
    uint64_t size = filedata_size(shared_file);
    KCHECK_EQ(size, (uint64_t)nthreads * APPENDS * 16);
    char *buf = kmalloc(size);
    int *next = kzalloc(nthreads * sizeof(int));
    KREQUIRE(buf && next);
    KCHECK_EQ(fs_read(shared_file, buf, size, 0), (int64_t)size);
    int bad = 0;
    for (uint64_t r = 0; r < size / 16; r++) {
        const char *rec = buf + r * 16;
        int t = (rec[0] - '0') * 100 + (rec[1] - '0') * 10 + (rec[2] - '0');
        int k = 0;
        for (int j = 4; j < 9; j++)
            k = k * 10 + rec[j] - '0';
        if (t < 0 || t >= nthreads || k != next[t] || rec[15] != '\n')
            bad++;
        else
            next[t]++; // each thread's records in its own order, none torn or lost
    }
    KCHECK_EQ(bad, 0);
    kfree(buf);
    kfree(next);
    fs_iput(shared_file);
    fs_iput(D);
    fst_rm_rf("/t_append");
}

// Readers never see anything but the written pattern while a writer truncates
// the file to zero and rewrites it: a shrink makes them retry, never read freed
// or half-cleared pages.
static volatile int stop_race;
#define RACE_BYTES (6 * PGSIZE)

static void truncator(void)
{
    char *buf = kmalloc(RACE_BYTES);
    if (!buf)
        return;
    memset(buf, 'R', RACE_BYTES);
    for (int round = 0; round < 300; round++) {
        fs_truncate(shared_file, round % 3 ? 0 : PGSIZE + 17);
        fs_write(shared_file, buf, RACE_BYTES, 0);
    }
    kfree(buf);
}

static void race(int i, void *arg)
{
    (void)arg;
    if (i == 0) {
        truncator();
        WRITE_ONCE(stop_race, 1);
        return;
    }
    char *buf = kmalloc(RACE_BYTES);
    uint64_t seed = 12345 + i;
    while (buf && !READ_ONCE(stop_race)) {
        uint64_t off = rnd(&seed) % RACE_BYTES, n = rnd(&seed) % (2 * PGSIZE) + 1;
        int64_t got = fs_read(shared_file, buf, n, off);
        if (got < 0 || !all_bytes(buf, got, 'R')) {
            ktest_failed(__FILE__, __LINE__, "read %ld bytes at %lu: not all 'R'", got, off);
            break;
        }
    }
    kfree(buf);
}

KTEST(fs_file_readers_vs_truncate)
{
    KREQUIRE((D = fst_scratch("t_race")) != NULL);
    KREQUIRE((shared_file = newfile("f")));
    // Full of 'R' from the start: truncating an empty file up would make a
    // (correct) hole of zeros.
    char *buf = kmalloc(RACE_BYTES);
    KREQUIRE(buf);
    memset(buf, 'R', RACE_BYTES);
    KCHECK_EQ(fs_write(shared_file, buf, RACE_BYTES, 0), RACE_BYTES);
    kfree(buf);
    stop_race = 0;
    KCHECK(fst_run(MAX(2, ncpu_online), race, NULL));
    fs_iput(shared_file);
    fs_iput(D);
    fst_rm_rf("/t_race");
}

KTEST(fs_file_memory_returned)
{
    KREQUIRE((D = fst_scratch("t_fmem")) != NULL);
    size_t before = fst_free_pages();
    struct inode *f = newfile("f");
    KREQUIRE(f);
    char *buf = kzalloc(PGSIZE);
    KREQUIRE(buf);
    for (int i = 0; i < 64; i++)
        fs_write(f, buf, PGSIZE, (uint64_t)i * 3 * PGSIZE);
    fs_truncate(f, 10 * PGSIZE);
    fs_write(f, buf, 1, 5ULL << 30);
    fs_iput(f);
    KCHECK_EQ(fs_unlink(D, "f"), 0);
    kfree(buf);
    size_t after = fst_free_pages();
    KCHECK_EQ(after, before);
    fs_iput(D);
    fst_rm_rf("/t_fmem");
}

// A truncate that could not take its pages out of every mapping (out of memory
// in uvm_truncate_file) leaves them mapped: from then on the file keeps what it
// detaches, and frees it with itself. The failure is simulated by the flag.
KTEST(fs_file_orphans_kept_until_freed)
{
    KREQUIRE((D = fst_scratch("t_orph")) != NULL);
    size_t before = fst_free_pages();
    struct inode *f = newfile("f");
    KREQUIRE(f);
    char *buf = kzalloc(PGSIZE);
    KREQUIRE(buf);
    memset(buf, 'q', PGSIZE);
    KCHECK_EQ(fs_write(f, buf, PGSIZE, 0), PGSIZE);
    KCHECK_EQ(fs_write(f, buf, PGSIZE, 2 * PGSIZE), PGSIZE);
    void *pg = NULL;
    KREQUIRE(fs_map_page(f, 2, &pg) == 0); // as a mapping the truncate missed
    store_release(&f->file.maps_stale, true);
    KCHECK_EQ(fs_truncate(f, PGSIZE), 0);
    KCHECK(f->file.orphans != NULL);
    fst_quiesce(); // grace periods pass: a freed page would be reused or stamped
    KCHECK(!page_free_stamped(pg) && all_bytes(pg, PGSIZE, 'q'));
    fs_iput(f);
    KCHECK_EQ(fs_unlink(D, "f"), 0);
    kfree(buf);
    KCHECK_EQ(fst_free_pages(), before); // the orphans went with the file
    fs_iput(D);
    fst_rm_rf("/t_orph");
}

// ---- times ----------------------------------------------------------------------

static void write_on_cpu(int i, void *f)
{
    char c = 'w';
    if (fs_write(f, &c, 1, (uint64_t)i) != 1)
        ktest_failed(__FILE__, __LINE__, "write on cpu %d", i % ncpu_online);
}

static void read_on_cpu(int i, void *f)
{
    char c;
    if (fs_read(f, &c, 1, (uint64_t)i) != 1)
        ktest_failed(__FILE__, __LINE__, "read on cpu %d", i % ncpu_online);
}

static void times_of(struct inode *ip, uint64_t t[3])
{
    struct fs_stat st;
    fs_stat(ip, STATX_ATIME | STATX_MTIME | STATX_CTIME, &st);
    t[0] = st.atime.sec * 1000000000ULL + st.atime.nsec;
    t[1] = st.mtime.sec * 1000000000ULL + st.mtime.nsec;
    t[2] = st.ctime.sec * 1000000000ULL + st.ctime.nsec;
}

// A file's times, changed on every CPU: writes move mtime and ctime, reads
// atime (strictly: every read), and nothing else.
KTEST(fs_file_times_per_cpu)
{
    uint64_t t[3], t2[3];
    struct inode *f;
    KREQUIRE((D = fst_scratch("t_ftime")) != NULL);
    KREQUIRE((f = newfile("f")) != NULL);
    fs_set_times(f, 5000000000ULL, 1000000000000ULL);
    times_of(f, t);
    KCHECK_EQ(t[0], 5000000000ULL);
    KCHECK_EQ(t[1], 1000000000000ULL);
    KCHECK(fst_run(ncpu_online, write_on_cpu, f));
    times_of(f, t);
    KCHECK_EQ(t[0], 5000000000ULL);
    KCHECK(t[1] > 1000000000000ULL && t[2] >= t[1]);
    fs_set_times(f, FS_TIME_OMIT, 2000000000000ULL); // earlier than the cached time
    refcache_flush_all();
    times_of(f, t);
    KCHECK_EQ(t[1], 2000000000000ULL);
    KCHECK(fst_run(ncpu_online, read_on_cpu, f));
    times_of(f, t);
    KCHECK(t[0] > 5000000000ULL);
    KCHECK_EQ(t[1], 2000000000000ULL);
    refcache_flush_all(); // the slots' times move into the inode: same values
    times_of(f, t2);
    for (int i = 0; i < 3; i++)
        KCHECK_EQ(t2[i], t[i]);
    fs_iput(f);
    fs_iput(D);
    fst_rm_rf("/t_ftime");
}

// A CPU that keeps changing a file's time keeps it in its own slot (itime.c):
// the inode's field, on the line of the size that every read and exec reads,
// is not written while it goes on, stat sees the slot's time all the while,
// and the field gets it once the CPU stops. White-box: reads ip->atime.
static volatile uint64_t keep_until;
static volatile int keep_field_changes;
static void keep_reading(int i, void *f)
{
    if (i != (ncpu_online > 1 ? 1 : 0))
        return;
    char c;
    struct inode *ip = f;
    uint64_t field = load_relaxed(&ip->atime);
    while (refcache_epoch() < keep_until) {
        if (fs_read(ip, &c, 1, 0) != 1)
            ktest_failed(__FILE__, __LINE__, "read");
        uint64_t now = load_relaxed(&ip->atime);
        if (now != field) {
            keep_field_changes++;
            field = now;
        }
    }
}

KTEST(fs_file_times_stay_with_a_cpu_that_keeps_changing_them)
{
    uint64_t t[3];
    struct inode *f;
    KREQUIRE((D = fst_scratch("t_fkeep")) != NULL);
    KREQUIRE((f = newfile("f")) != NULL);
    KCHECK_EQ(fs_write(f, "x", 1, 0), 1);
    fs_set_times(f, 5000000000ULL, FS_TIME_OMIT); // every slot flushed, atime known
    keep_field_changes = 0;
    keep_until = refcache_epoch() + 8;
    KCHECK(fst_run(ncpu_online, keep_reading, f));
    // Before: one write of the field per epoch (8). A kept slot: none, or one
    // if the reader's first flush came before its first read.
    kprintf("# the inode's atime field changed %d times in 8 epochs\n", keep_field_changes);
    KCHECK(keep_field_changes <= 1);
    times_of(f, t);
    KCHECK(t[0] > 5000000000ULL);
    for (uint64_t end = refcache_epoch() + 4; refcache_epoch() < end;)
        sched_sleep_until(nsec_now() + 5000000);
    KCHECK_EQ(load_relaxed(&f->atime), t[0]); // moved in once the CPU stopped
    fs_iput(f);
    fs_iput(D);
    fst_rm_rf("/t_fkeep");
}

// The slot's lifetime (itime.c): a time changed on one CPU just before the
// file's last reference goes on another, whose refcache review frees the
// inode. The inode's grace of 3 epochs lets the first CPU's flush empty its
// slot before; with refcache's 2, that flush wrote into freed inodes, which
// kpoison (make test's guests) found at their next allocation. The reads are
// on CPU 0 and the drops on CPU 1: CPU 0 advances the epoch at the end of its
// tick, so CPU 1's review in a new epoch comes before CPU 0's next flush.
#define KEEPFREE_FILES 64
static struct inode *keepfree[KEEPFREE_FILES];
static volatile int keepfree_go, keepfree_done;
static void keepfree_pair(int i, void *arg)
{
    (void)arg;
    if (i == 1) {
        for (int k = 0; k < KEEPFREE_FILES; k++) {
            store_release(&keepfree_go, k + 1);
            while (load_acquire(&keepfree_done) != k + 1)
                pause();
            fs_iput(keepfree[k]); // the last reference
            if (k % 8 == 7) // spread the drops over a few epochs
                sched_sleep_until(nsec_now() + 7000000);
        }
    } else if (i == 0) {
        for (int k = 0; k < KEEPFREE_FILES; k++) {
            while (load_acquire(&keepfree_go) != k + 1)
                pause();
            char c;
            if (fs_read(keepfree[k], &c, 1, 0) != 1)
                ktest_failed(__FILE__, __LINE__, "read");
            store_release(&keepfree_done, k + 1);
        }
    }
}

KTEST(fs_file_times_kept_never_outlive_the_inode)
{
    if (ncpu_online < 2) {
        kprintf("# needs 2 CPUs; nothing to check\n");
        return;
    }
    KREQUIRE((D = fst_scratch("t_fkeepfree")) != NULL);
    int64_t inodes0, inodes, dents;
    for (int round = 0; round < 4; round++) {
        fst_quiesce();
        fs_count_objects(&inodes0, &dents);
        char name[8] = "f00";
        for (int k = 0; k < KEEPFREE_FILES; k++) {
            name[1] = (char)('0' + k / 10);
            name[2] = (char)('0' + k % 10);
            KREQUIRE((keepfree[k] = newfile(name)) != NULL);
            KCHECK_EQ(fs_write(keepfree[k], "x", 1, 0), 1);
            KCHECK_EQ(fs_unlink(D, name), 0);
        }
        fst_quiesce(); // the names' references gone: ours are the last
        keepfree_go = keepfree_done = 0;
        KCHECK(fst_run(2, keepfree_pair, NULL));
        fst_quiesce();
        fs_count_objects(&inodes, &dents);
        KCHECK(inodes <= inodes0); // every file freed
    }
    fs_iput(D);
    fst_rm_rf("/t_fkeepfree");
}
