// File data: a radix array of pages per file, with the size under a seqlock.
//
// Commute: reads of anything with reads; reads, writes and page faults of
// mappings (fs_map_page) of disjoint pages. None of them takes a lock or
// writes a shared line:
//  - a reader, an in-place writer or a fault reads the size seqlock's sequence
//    and the size (line 1 of the inode, written only by size changes), walks
//    the tree (reads only) and copies from or to its own pages (a fault takes
//    a reference on its page and writes nothing in the inode: truncate finds
//    mappings through mmap's records, kernel/mm/uvm_file.c);
//  - a writer that finds a hole installs a zeroed page with one compare-and-swap
//    on that page's slot (slots of 8 neighbouring pages share a line; the tree
//    grows in height with a compare-and-swap on the root word, once per
//    factor of 512 in size);
//  - times go to the CPU's own slot for the inode (itime.c).
// Size changes do not commute with each other, nor with accesses near the end,
// and they serialise on the seqlock's spinlock: appends, writes past the end,
// truncates. Where the model lets them commute anyway (two writes past the end
// that leave the same size in either order, a read or a fault below the old
// end while a write extends the file), they still share the size line: each
// must read the one size word that the other writes. A truncate to the
// current size changes nothing and writes nothing.
//
// The size seqlock. Its sequence moves only while a truncate shrinks the file:
// lock-free readers and in-place writers check it around their copy and retry
// (writers: under the lock) if it moved, so they never return data of a page
// freed under them or leave data in a page cut off by the truncate. Appends
// and other extensions take the same spinlock without moving the sequence, and
// publish the new size only after the data is in place, so readers are never
// made to retry by a growing file.
//
// Invariant: every byte at or beyond `size` reads as zero once it becomes part
// of the file. Truncate zeroes the tail of the last page and detaches the pages
// past it; an in-place writer racing with a shrinking truncate may still put a
// page or bytes past the new end before it notices, so every extension first
// cleans what it exposes without writing it, [old size, first byte written):
// zeroes those bytes in partial pages and detaches any whole page there
// (clean_beyond). Bytes further on are cleaned by the extension that exposes
// them.
//
// Freeing: detached pages and subtrees go to a batch (a page of pointers) freed
// a grace period later (epoch_defer): lock-free readers and writers that still
// see them finish first, and whatever a racing writer installed into a detached
// subtree is freed with it.
#include "inode.h"
#include "mm/mm.h"
#include "mm/uvm.h"
#include "sync/atomic.h"
#include "x86/x86.h"

#define SLOT_SHIFT 9
#define SLOTS (1U << SLOT_SHIFT)
#define ROOT_PTR(r) ((void **)((r) & ~(PGSIZE - 1)))
#define ROOT_H(r) ((int)((r) & 7))

static uint64_t cap_pages(int h) { return 1ULL << (SLOT_SHIFT * h); }
static unsigned slot_of(uint64_t pg, int h) { return (pg >> (SLOT_SHIFT * (h - 1))) & (SLOTS - 1); }
static int height_for(uint64_t pg)
{
    int h = 0;
    while (pg >= cap_pages(h))
        h++;
    return h;
}


// ---- the tree -----------------------------------------------------------------

// Page pg, or NULL for a hole. Readers: inside an epoch section.
static char *page_find(struct filemap *m, uint64_t pg)
{
    uintptr_t r = load_acquire(&m->root);
    if (!r || pg >= cap_pages(ROOT_H(r)))
        return NULL;
    void **node = ROOT_PTR(r);
    for (int h = ROOT_H(r); h > 0 && node; h--)
        node = load_acquire(&node[slot_of(pg, h)]);
    return (char *)node;
}

// Page pg, installing zeroed pages and nodes as needed; NULL if out of memory.
// Lock-free: racing installers agree through compare-and-swap.
static char *page_get(struct filemap *m, uint64_t pg)
{
    uintptr_t r;
    while (!(r = load_acquire(&m->root)) || pg >= cap_pages(ROOT_H(r))) {
        // Grow by one level (the old root becomes slot 0), or start the tree.
        void **n = page_alloc_zeroed();
        if (!n)
            return NULL;
        int h = r ? ROOT_H(r) + 1 : height_for(pg);
        if (r)
            n[0] = ROOT_PTR(r);
        if (!cas(&m->root, &r, (uintptr_t)n | h))
            page_free(n); // never published
    }
    void **node = ROOT_PTR(r);
    for (int h = ROOT_H(r); h > 0; h--) {
        void **slot = &node[slot_of(pg, h)];
        void *child = load_acquire(slot);
        if (!child) {
            void *n = page_alloc_zeroed();
            if (!n)
                return NULL;
            if (cas(slot, &child, n))
                child = n;
            else {
                page_free(n);
                child = load_acquire(slot);
            }
        }
        node = child;
    }
    return (char *)node;
}

// Data pages may also be mapped into address spaces (fs_map_page), without a
// reference of their own: a mapping holds the inode, and a truncate takes the
// pages it detaches out of every mapping before they are freed.
static void free_tree(void *p, int h)
{
    if (h == 0) {
        page_free(p);
        return;
    }
    for (unsigned i = 0; i < SLOTS; i++)
        if (((void **)p)[i])
            free_tree(((void **)p)[i], h - 1);
    page_free(p);
}

// ---- deferred freeing of detached pages --------------------------------------------

struct freebatch {
    struct epoch_cb cb;
    struct freebatch *next; // the detacher's earlier batches, or the inode's orphans
    uint32_t n;
    uintptr_t item[]; // page or node address | its height (0 = data page)
};
#define BATCH_MAX ((PGSIZE - sizeof(struct freebatch)) / sizeof(uintptr_t))

// What one call detached, in batches kept until it is done: a truncate must take
// the pages out of the mappings that may hold them (uvm_truncate_file) first.
struct detacher {
    struct freebatch *b;
};

static void batch_free(struct freebatch *b)
{
    for (uint32_t i = 0; i < b->n; i++)
        free_tree((void *)(b->item[i] & ~(PGSIZE - 1)), (int)(b->item[i] & 7));
    page_free(b);
}

static void batch_free_cb(struct epoch_cb *cb)
{
    batch_free(container_of(cb, struct freebatch, cb));
}

// Room for one more item; false if out of memory.
static bool det_room(struct detacher *d)
{
    if (d->b && d->b->n < BATCH_MAX)
        return true;
    struct freebatch *nb = page_alloc();
    if (!nb)
        return false;
    nb->n = 0;
    nb->next = d->b;
    d->b = nb;
    return true;
}

// Free what d detached a grace period from now (lock-free readers may still be
// copying from it). If a truncate of the file once failed to take its pages out
// of every mapping (out of memory), pages past the end may still be mapped: then
// they are kept until the file itself is freed.
static void det_finish(struct inode *ip, struct detacher *d)
{
    for (struct freebatch *b = d->b, *next; b; b = next) {
        next = b->next;
        if (!b->n) {
            page_free(b);
        } else if (load_acquire(&ip->file.maps_stale)) {
            b->next = load_relaxed(&ip->file.orphans);
            while (!__atomic_compare_exchange_n(&ip->file.orphans, &b->next, b, false,
                                                __ATOMIC_RELEASE, __ATOMIC_RELAXED))
                ;
        } else {
            epoch_defer(&b->cb, batch_free_cb);
        }
    }
    d->b = NULL;
}

// Detach pages [lo, hi) below node (height h, first page base). The size lock
// is held, so slots change only from NULL to a page (racing installers).
static int detach_node(void **node, int h, uint64_t base, uint64_t lo, uint64_t hi,
                       struct detacher *d)
{
    uint64_t span = cap_pages(h - 1);
    for (unsigned i = lo <= base ? 0 : (lo - base) / span; i < SLOTS; i++) {
        uint64_t s = base + i * span;
        if (s >= hi)
            break;
        void *c = load_acquire(&node[i]);
        if (!c)
            continue;
        if (s >= lo && hi - s >= span) {
            if (!det_room(d))
                return -ENOMEM;
            c = xchg(&node[i], NULL);
            d->b->item[d->b->n++] = (uintptr_t)c | (h - 1);
        } else if (h > 1) {
            int err = detach_node(c, h - 1, s, lo, hi, d);
            if (err)
                return err;
        }
    }
    return 0;
}

static int detach_range(struct filemap *m, uint64_t lo, uint64_t hi, struct detacher *d)
{
    for (;;) {
        uintptr_t r = load_acquire(&m->root);
        if (!r || lo >= cap_pages(ROOT_H(r)) || lo >= hi)
            return 0;
        if (lo > 0 || hi < cap_pages(ROOT_H(r)))
            return ROOT_H(r) ? detach_node(ROOT_PTR(r), ROOT_H(r), 0, lo, hi, d) : 0;
        if (!det_room(d))
            return -ENOMEM;
        if (cas(&m->root, &r, 0)) { // the whole tree (lost only to a racing growth)
            d->b->item[d->b->n++] = r;
            return 0;
        }
    }
}

static void zero_part(struct filemap *m, uint64_t pg, size_t lo, size_t hi)
{
    char *p = page_find(m, pg);
    if (p)
        memset(p + lo, 0, hi - lo);
}

// Make [from, to) read as zeros before it becomes part of the file: zero the
// partial pages at its ends, detach the whole pages between. Only those bytes:
// what lies past `to` is cleaned by the extension that takes it in. So an
// extension writes no line of the file's data outside the range it adds
// (a read of the old last page, or another extension beside it, shares only
// the lines where their bytes meet).
static int clean_beyond(struct inode *ip, uint64_t from, uint64_t to, struct detacher *d)
{
    if (from >= to)
        return 0;
    uint64_t lo = PGROUNDUP(from) / PGSIZE, hi = to / PGSIZE; // whole pages: [lo, hi)
    if (from % PGSIZE)
        zero_part(&ip->map, from / PGSIZE, from % PGSIZE,
                  to / PGSIZE == from / PGSIZE ? to % PGSIZE : PGSIZE);
    if (to % PGSIZE && hi >= lo)
        zero_part(&ip->map, hi, 0, to % PGSIZE);
    return lo < hi ? detach_range(&ip->map, lo, hi, d) : 0;
}

// ---- copying ---------------------------------------------------------------------

static size_t copy_in(struct filemap *m, const char *buf, size_t n, uint64_t off)
{
    size_t done = 0;
    while (done < n) {
        uint64_t pos = off + done;
        size_t k = MIN(n - done, PGSIZE - pos % PGSIZE);
        char *p = page_get(m, pos / PGSIZE);
        if (!p)
            break;
        memcpy(p + pos % PGSIZE, buf + done, k);
        done += k;
    }
    return done;
}

static void copy_out(struct filemap *m, char *buf, size_t n, uint64_t off)
{
    for (size_t done = 0; done < n;) {
        uint64_t pos = off + done;
        size_t k = MIN(n - done, PGSIZE - pos % PGSIZE);
        char *p = page_find(m, pos / PGSIZE);
        if (p)
            memcpy(buf + done, p + pos % PGSIZE, k);
        else
            memset(buf + done, 0, k); // a hole
        done += k;
    }
}

// ---- operations -------------------------------------------------------------------

uint64_t filedata_size(struct inode *ip) { return load_acquire(&ip->size); }

// The pages a size covers, kept apart from the size for faults (fs_map_page):
// stored only when it changes, so a write or truncate inside the last page
// writes nothing a fault reads. With the size lock held, after the size.
static void set_npages(struct inode *ip, uint64_t size)
{
    uint64_t n = PGROUNDUP(size) / PGSIZE;
    if (n != ip->npages)
        store_release(&ip->npages, n);
}

// Reads and writes go in chunks of this much, each in its own epoch section
// (a long section would hold up every CPU's reclamation) and each atomic with
// respect to truncate on its own, as in Linux, where that holds per page.
#define IO_CHUNK (64 * PGSIZE)

static size_t read_chunk(struct inode *ip, char *buf, size_t n, uint64_t off)
{
    size_t got;
    epoch_enter();
    for (;;) {
        uint32_t s = seq_read_begin(&ip->sizelock);
        uint64_t size = filedata_size(ip);
        got = off < size ? MIN(n, size - off) : 0;
        copy_out(&ip->map, buf, got, off);
        if (!seq_read_retry(&ip->sizelock, s))
            break;
    }
    epoch_exit();
    return got;
}

int64_t filedata_read(struct inode *ip, void *buf, size_t n, uint64_t off)
{
    size_t done = 0;
    n = MIN(n, (size_t)INT64_MAX);
    while (done < n) {
        size_t want = MIN(n - done, IO_CHUNK), got = read_chunk(ip, (char *)buf + done, want, off + done);
        done += got;
        if (got < want)
            break; // the end of the file
    }
    return (int64_t)done;
}

// Writes that change the size, and in-place writes that met a truncate.
// The seqlock's spinlock serialises them without moving its sequence.
static int64_t write_locked(struct inode *ip, const char *buf, size_t n, uint64_t off, bool append)
{
    struct detacher d = {0};
    int64_t ret;
    spin_lock(&ip->sizelock.lock);
    uint64_t size = ip->size;
    if (append)
        off = size;
    if (off >= FS_FILE_MAX) {
        ret = -EFBIG;
        goto out;
    }
    n = MIN(n, FS_FILE_MAX - off);
    // The bytes the copy writes need no cleaning, only the gap before them.
    if (off + n > size && (ret = clean_beyond(ip, size, off, &d)) < 0)
        goto out;
    ret = (int64_t)copy_in(&ip->map, buf, n, off);
    if (ret == 0)
        ret = -ENOMEM;
    else if (off + ret > size) {
        store_release(&ip->size, off + ret); // after the data
        set_npages(ip, off + ret);
    }
out:
    spin_unlock(&ip->sizelock.lock);
    det_finish(ip, &d);
    return ret;
}

static int64_t write_chunk(struct inode *ip, const char *buf, size_t n, uint64_t off)
{
    bool done = false;
    epoch_enter();
    uint32_t s = seq_read_begin(&ip->sizelock);
    if (off + n <= filedata_size(ip))
        done = copy_in(&ip->map, buf, n, off) == n && !seq_read_retry(&ip->sizelock, s);
    epoch_exit();
    return done ? (int64_t)n : write_locked(ip, buf, n, off, false);
}

int64_t filedata_write(struct inode *ip, const void *buf, size_t n, uint64_t off)
{
    if (n == 0)
        return 0;
    if (off >= FS_FILE_MAX)
        return -EFBIG;
    n = MIN(n, FS_FILE_MAX - off);
    size_t done = 0;
    uint64_t until = 0;
    while (done < n) {
        size_t want = MIN(n - done, IO_CHUNK);
        int64_t k = write_chunk(ip, (const char *)buf + done, want, off + done);
        if (k > 0)
            done += k;
        if (k == (int64_t)want)
            continue;
        // Short of pages: the copy runs in an epoch section or under the size
        // lock, where the allocator cannot wait for frees. Wait here.
        if (page_wait_for_frees(&until))
            continue;
        if (k < 0)
            return done ? (int64_t)done : k; // a short write, or the error
        break;
    }
    return (int64_t)done;
}

int64_t filedata_append(struct inode *ip, const void *buf, size_t n)
{
    if (n == 0)
        return 0;
    int64_t k;
    uint64_t until = 0;
    do // as filedata_write
        k = write_locked(ip, buf, n, 0, true);
    while (k == -ENOMEM && page_wait_for_frees(&until));
    return k;
}

int filedata_truncate(struct inode *ip, uint64_t len)
{
    struct detacher d = {0};
    int err = 0;
    if (len > FS_FILE_MAX)
        return -EFBIG;
    // Already that long (open(O_TRUNC) of an empty file): nothing changes, so
    // nothing is written, and stats and reads of the size commute with it. The
    // size load is its linearisation point; bytes past the end are cleaned by
    // the next extension whatever happens here.
    if (len == filedata_size(ip))
        return 0;
    seq_write_begin(&ip->sizelock); // lock-free accessors retry around this
    uint64_t size = ip->size;
    if (len < size) {
        store_release(&ip->size, len);
        set_npages(ip, len);
        if (len % PGSIZE) {
            char *p = page_find(&ip->map, len / PGSIZE);
            if (p)
                memset(p + len % PGSIZE, 0, PGSIZE - len % PGSIZE);
        }
        // Out of memory for the batch leaves pages past the end: harmless, the
        // next extension cleans them (clean_beyond) and freeing the file frees them.
        detach_range(&ip->map, PGROUNDUP(len) / PGSIZE, UINT64_MAX, &d);
    } else if (len > size && !(err = clean_beyond(ip, size, len, &d))) {
        store_release(&ip->size, len);
        set_npages(ip, len);
    }
    seq_write_end(&ip->sizelock);
    // Mapped pages past the new last page go too (SIGBUS on access); a smaller
    // last page stays mapped, as in POSIX. Against a fault: before it asks for a
    // page it marks its CPU's record of the mapping (uvm_file.c) and then loads the
    // page count; we store the count and then look at the marked records, so a
    // page handed out on the old count is seen there. Mappings that never held a
    // page of the file are not looked at.
    if (PGROUNDUP(len) < PGROUNDUP(size)) {
        fence();
        if (!uvm_truncate_file(ip, PGROUNDUP(len) / PGSIZE))
            store_release(&ip->file.maps_stale, true);
    }
    det_finish(ip, &d);
    return err;
}

static uint64_t count_pages(void **node, int h)
{
    if (h == 0)
        return 1;
    uint64_t n = 0;
    for (unsigned i = 0; i < SLOTS; i++) {
        void *c = load_acquire(&node[i]);
        if (c)
            n += count_pages(c, h - 1);
    }
    return n;
}

uint64_t filedata_pages(struct inode *ip)
{
    epoch_enter();
    uintptr_t r = load_acquire(&ip->map.root);
    uint64_t n = r ? count_pages(ROOT_PTR(r), ROOT_H(r)) : 0;
    epoch_exit();
    return n;
}

void filedata_free(struct inode *ip)
{
    uintptr_t r = ip->map.root;
    if (r)
        free_tree(ROOT_PTR(r), ROOT_H(r));
    ip->map.root = 0;
    for (struct freebatch *b = ip->file.orphans, *next; b; b = next) {
        next = b->next;
        batch_free(b);
    }
    ip->file.orphans = NULL;
}

// ---- the interface ------------------------------------------------------------------

static int check_regular(struct inode *ip)
{
    return S_ISREG(ip->mode) ? 0 : S_ISDIR(ip->mode) ? -EISDIR : -EINVAL;
}

int64_t fs_read(struct inode *ip, void *buf, size_t n, uint64_t off)
{
    int err = check_regular(ip);
    if (err)
        return err;
    int64_t got = filedata_read(ip, buf, n, off);
    if (got >= 0 && n > 0)
        inode_touch(ip, T_ATIME);
    return got;
}

// A read through a description whose offset is *pos, at or past the end of
// regular file ip, returns 0 and leaves the offset alone: decided here without
// the description's offset lock, so that such reads through one description
// commute and write nothing but their CPU's atime slot. The offset is read
// between two looks at the size seqlock's sequence, which moves only when a
// truncate shrinks the file; so when the offset was read the size was at most
// the one read after it, and a read then would have found the end.
bool fs_read_at_end(struct inode *ip, const uint64_t *pos, size_t n)
{
    if (check_regular(ip))
        return false;
    uint32_t s = seq_read_begin(&ip->sizelock);
    uint64_t p = load_relaxed(pos);
    uint64_t size = filedata_size(ip);
    if (seq_read_retry(&ip->sizelock, s) || p < size)
        return false;
    if (n > 0)
        inode_touch(ip, T_ATIME);
    return true;
}

int64_t fs_write(struct inode *ip, const void *buf, size_t n, uint64_t off)
{
    int err = check_regular(ip);
    if (err)
        return err;
    int64_t done = filedata_write(ip, buf, n, off);
    if (done > 0)
        inode_touch(ip, T_MTIME | T_CTIME);
    return done;
}

int64_t fs_append(struct inode *ip, const void *buf, size_t n)
{
    int err = check_regular(ip);
    if (err)
        return err;
    int64_t done = filedata_append(ip, buf, n);
    if (done > 0)
        inode_touch(ip, T_MTIME | T_CTIME);
    return done;
}

int fs_truncate(struct inode *ip, int64_t size)
{
    int err = check_regular(ip);
    if (err)
        return err;
    if (size < 0)
        return -EINVAL;
    err = filedata_truncate(ip, (uint64_t)size);
    if (!err)
        inode_touch(ip, T_MTIME | T_CTIME);
    return err;
}

// A page for a memory mapping (uvm_fault.c): the file's own page, so that MAP_SHARED
// stores and read/write see each other; a hole inside the file gets a zeroed page
// as a write would. The caller gets no reference: it holds the inode, which
// keeps its pages, and has recorded the mapping, so that a truncate that
// detaches the page takes it out of the caller's descriptor (uvm_truncate_file)
// before freeing it. Two faults of one page in different address spaces thus
// write nothing of the page. -EFAULT beyond the end of the file (SIGBUS).
// With page NULL, only the answer: 0 or -EFAULT, no page.
int fs_map_page(struct inode *ip, uint64_t pg, void **page)
{
    int err = check_regular(ip);
    if (err)
        return err;
    // A caller that maps the page marked its record of the mapping (with a
    // full barrier) before this (uvm_fault.c, vp_populate): a truncate that stored a
    // smaller page count before our load finds the mark and takes the page out
    // again (filedata_truncate). Nothing here writes the inode, and the count is
    // off the size's line, so faults commute with reads, in-place writes, stats,
    // writes inside the last page and other faults of the file.
    if (pg >= load_acquire(&ip->npages))
        return -EFAULT;
    if (!page)
        return 0; // only asked whether the page lies inside the file
    epoch_enter(); // the tree's nodes (the caller's own section keeps the page)
    char *p = page_get(&ip->map, pg);
    epoch_exit();
    *page = p;
    return p ? 0 : -ENOMEM;
}
