// Open file descriptions: reference counting, the offset, and the operations on
// ScaleFS files and directories.
//
// Commute: operations through different descriptions share nothing here. Through
// one description, read/write/lseek serialise on its offset lock (POSIX wants
// them atomic with respect to each other); pread/pwrite take no lock and write
// nothing in the description, so they commute with each other (and, for
// disjoint pages, ScaleFS keeps them apart too).
//
// References (file.h): the shared count `refs` is written only when owned
// references come and go (open, close and dup in the process that opened the
// file). The descriptors a forked or spawned child inherits hold the file in a
// per-CPU refcache count instead, so a posix_spawn, its child's run and exit,
// and a sibling thread's calls on those files write no shared line; fd lookups
// in a table shared by threads borrow it in the same count at a lower weight,
// so fstat, pread, pwrite, mmap through one description from two cores write
// no shared line either. A file that was never held or borrowed (`lent` is
// clear: the process that opened it never forked, and no other thread shared
// its table) has nothing in those counts, and its last close reads none of
// them. Otherwise only a drop that may be the last reads every CPU's count: an
// owned or held drop once refs is 0 (a held drop learns that from `unowned`,
// set once, so it reads nothing that owned dups and closes write), a borrow's
// end once the file is dead. The last of the three kinds releases the file,
// once.
//
// ScaleFS copies with memcpy inside epoch sections, so user memory (which may
// fault) is never touched there: data goes through a kernel bounce page.
#include "file/file.h"
#include "file/dev.h"
#include "fs.h"
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "sync/atomic.h"
#include "uapi/errno.h"

// Freeing, after the release: the shared count's base reference goes a grace
// period later (drop_base: by then no lookup that found f in a slot before the
// slots were emptied can still take a reference); once refcache has seen the
// count at zero for good, f is freed a grace period later (a borrow's end may
// still be reading `dead`). One epoch_cb serves both steps in turn.
static void free_cb(struct epoch_cb *cb) { kfree(container_of(cb, struct file, free_cb)); }

static void shared_released(struct refcache_obj *o)
{
    epoch_defer(&container_of(o, struct file, shared)->free_cb, free_cb);
}

// Straight into the shared count: a file's base going through this CPU's
// refcache slot would leave that slot changed for every file closed here, and
// each such slot is a line other CPUs' exact reads (last closes in shared
// tables) then fetch again.
static void drop_base(struct epoch_cb *cb)
{
    refcache_add_direct(&container_of(cb, struct file, free_cb)->shared, -1);
}

struct file *file_alloc(const struct file_ops *ops, uint32_t flags, struct inode *ip, void *priv)
{
    struct file *f = kzalloc(sizeof *f);
    if (!f)
        return NULL;
    f->refs = 1;
    refcache_init(&f->shared, 1, shared_released);
    f->flags = flags;
    f->ops = ops;
    f->ip = ip;
    f->priv = priv;
    sleeplock_init(&f->poslock, "file offset");
    return f;
}

void file_get(struct file *f) { fetch_add_relaxed(&f->refs, 1); }

bool file_get_unless_zero(struct file *f)
{
    int r = load_relaxed(&f->refs);
    while (r > 0)
        if (cas_acquire(&f->refs, &r, r + 1))
            return true;
    return false;
}

// Every party below stores (refs and unowned, its hold or borrow count, dead),
// then fences, then reads the others: of the last two to leave, at least one
// sees the other gone. Called inside an epoch section, so that f stays
// allocated meanwhile.

// f is dead: release it unless something borrows it (then the last borrow's
// end will), once. `shared` is the exact count, read after the fence.
static bool claim_release(struct file *f, int64_t shared)
{
    if (shared != 1)
        return false;
    int no = 0;
    return cas_fail_relaxed(&f->released, &no, 1);
}

// refs is 0 for good: if no held reference is left, f is dead; release it if
// nothing borrows it.
static bool claim_death(struct file *f)
{
    WRITE_ONCE(f->unowned, true); // held drops read this, not refs' busy line
    fence();
    // Never lent: the count is its base alone. A holder or borrower racing with
    // us sets lent before its own fence (take_shared): if we miss that, its look
    // at the slot after the fence misses f, and it takes nothing.
    int64_t shared = READ_ONCE(f->lent) ? refcache_read_exact(&f->shared) : 1;
    if (shared >= FILE_HOLD)
        return false; // the last holder's drop will see unowned
    WRITE_ONCE(f->dead, true);
    if (shared != 1) { // borrowed: look again now that dead is visible
        fence();
        shared = refcache_read_exact(&f->shared);
    }
    return claim_release(f, shared);
}

// Outside any epoch section (release may sleep). The base references keep f
// allocated.
static void release(struct file *f)
{
    if (f->ops->release)
        f->ops->release(f);
    if (f->ip)
        fs_iput(f->ip);
    epoch_defer(&f->free_cb, drop_base);
}

void file_put(struct file *f)
{
    epoch_enter();
    bool rel = sub_fetch(&f->refs, 1) == 0 && claim_death(f);
    epoch_exit();
    if (rel)
        release(f);
}

// Held and borrowed references differ only in their weight in f->shared.
static void take_shared(struct file *f, int64_t weight)
{
    file_lend(f);
    refcache_add(&f->shared, weight); // a write to this CPU's refcache only
    fence();
}

void file_lend(struct file *f)
{
    if (!load_relaxed(&f->lent))
        store_relaxed(&f->lent, true);
}

// Drop one: a held drop may be the last once no owned reference is left, a
// borrow's end once f is dead.
static void drop_shared(struct file *f, int64_t weight)
{
    epoch_enter();
    refcache_add(&f->shared, -weight);
    fence();
    bool rel = weight == FILE_HOLD
                   ? READ_ONCE(f->unowned) && claim_death(f)
                   : READ_ONCE(f->dead) && claim_release(f, refcache_read_exact(&f->shared));
    epoch_exit();
    if (rel)
        release(f);
}

int64_t file_count(struct file *f)
{
    // shared = its base (until released) + borrowed + FILE_HOLD * held.
    int64_t shared = READ_ONCE(f->lent) ? refcache_read_exact(&f->shared) - 1 : 0;
    return load_relaxed(&f->refs) + shared / FILE_HOLD + shared % FILE_HOLD;
}

void file_hold(struct file *f) { take_shared(f, FILE_HOLD); }
void file_unhold(struct file *f) { drop_shared(f, FILE_HOLD); }
void file_borrow(struct file *f) { take_shared(f, 1); }
void file_unborrow(struct file *f) { drop_shared(f, 1); }

// ---- bounce buffers --------------------------------------------------------------

#define BOUNCE_MAX_PAGES 256 // O_APPEND writes up to 1 MiB go to the file in one piece

struct bounce {
    char *buf;
    size_t size, pages;
};

// A buffer for a transfer of n bytes: at least a page; up to `want` bytes.
static bool bounce_get(struct bounce *b, size_t want)
{
    b->pages = 1;
    if (want > PGSIZE) {
        size_t p = MIN(PGROUNDUP(want) / PGSIZE, (size_t)BOUNCE_MAX_PAGES);
        if ((b->buf = page_alloc_contig(p))) {
            b->pages = p;
            b->size = p * PGSIZE;
            return true;
        }
    }
    b->buf = page_alloc();
    b->size = PGSIZE;
    return b->buf != NULL;
}

static void bounce_put(struct bounce *b)
{
    if (b->pages > 1)
        page_free_contig(b->buf, b->pages);
    else
        page_free(b->buf);
}

// ---- ScaleFS regular files ---------------------------------------------------------

static long inode_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    struct bounce b;
    if (!bounce_get(&b, PGSIZE))
        return -ENOMEM;
    size_t done = 0;
    long err = 0;
    while (done < n) {
        size_t want = MIN(n - done, b.size);
        int64_t k = fs_read(f->ip, b.buf, want, *pos + done);
        if (k <= 0) {
            err = k;
            break;
        }
        size_t c = copy_to_user_some(ubuf + done, b.buf, k);
        done += c;
        if (c < (size_t)k) {
            err = -EFAULT; // a short read, unless nothing was copied
            break;
        }
        if ((size_t)k < want)
            break; // the end of the file
    }
    bounce_put(&b);
    *pos += done;
    return done ? (long)done : err;
}

static long inode_write(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    bool append = f->flags & O_APPEND;
    struct bounce b;
    if (!bounce_get(&b, append ? n : PGSIZE))
        return -ENOMEM;
    size_t done = 0;
    long err = 0;
    while (done < n) {
        size_t want = MIN(n - done, b.size);
        size_t m = copy_from_user_some(b.buf, ubuf + done, want);
        if (m == 0) {
            err = -EFAULT; // a short write, unless nothing was written
            break;
        }
        int64_t k = append ? fs_append(f->ip, b.buf, m) : fs_write(f->ip, b.buf, m, *pos + done);
        if (k <= 0) {
            err = k;
            break;
        }
        done += k;
        if ((size_t)k < m)
            break;
    }
    bounce_put(&b);
    if (append) { // the offset follows the end of the file
        struct fs_stat st;
        fs_stat(f->ip, STATX_SIZE, &st);
        *pos = st.size;
    } else {
        *pos += done;
    }
    return done ? (long)done : err;
}

// A description open for writing holds write access (fs_get_write) until it goes.
static void inode_release(struct file *f)
{
    if (file_writable(f))
        fs_put_write(f->ip);
}

const struct file_ops inode_file_ops = {
    .read = inode_read,
    .write = inode_write,
    .release = inode_release,
    .seekable = true,
};

static long dir_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    (void)f, (void)ubuf, (void)n, (void)pos;
    return -EISDIR;
}

const struct file_ops dir_file_ops = {
    .read = dir_read,
    .seekable = true,
};

int file_open_inode(struct inode *ip, int oflags, struct file **out)
{
    uint32_t mode = fs_mode(ip);
    const struct file_ops *ops;
    int acc = oflags & O_ACCMODE;
    if (S_ISDIR(mode)) {
        if (acc != O_RDONLY || (oflags & (O_CREAT | O_TRUNC)))
            return -EISDIR; // (O_TRUNC asks for write access, as in Linux)
        ops = &dir_file_ops;
    } else if (oflags & O_DIRECTORY) {
        return -ENOTDIR;
    } else if (S_ISREG(mode)) {
        ops = &inode_file_ops;
    } else if (S_ISCHR(mode)) {
        if (!(ops = dev_lookup(fs_rdev(ip))))
            return -ENXIO;
    } else if (S_ISLNK(mode)) {
        return -ELOOP; // O_NOFOLLOW met a symlink
    } else {
        return -ENXIO;
    }
    // Writing a regular file, or truncating it: ETXTBSY while it is executed.
    // A writer keeps its write access until the description goes (inode_release).
    bool writer = S_ISREG(mode) && (acc == O_WRONLY || acc == O_RDWR);
    bool access = writer || ((oflags & O_TRUNC) && S_ISREG(mode));
    int err = access ? fs_get_write(ip) : 0;
    if (err)
        return err;
    // O_TRUNC truncates even with O_RDONLY, as Linux does.
    if ((oflags & O_TRUNC) && S_ISREG(mode))
        err = fs_truncate(ip, 0);
    // Creation flags are not kept (Linux: F_GETFL does not show them).
    uint32_t keep = oflags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW |
                                O_DIRECTORY);
    struct file *f = err ? NULL : file_alloc(ops, keep | O_LARGEFILE, ip, NULL);
    if (!err && !f)
        err = -ENOMEM;
    if (access && (err || !writer))
        fs_put_write(ip);
    if (err)
        return err;
    *out = f;
    return 0;
}

// ---- the generic operations ----------------------------------------------------------

// Linux's cap on one transfer (INT_MAX rounded down to a page).
#define MAX_RW_COUNT 0x7ffff000UL

static long check_rw(struct file *f, uint64_t ubuf, size_t n, bool write)
{
    if (write ? !file_writable(f) : !file_readable(f))
        return -EBADF;
    if (write ? !f->ops->write : !f->ops->read)
        return -EINVAL;
    if (!user_range_valid(ubuf, n))
        return -EFAULT;
    return 0;
}

static long rw(struct file *f, uint64_t ubuf, size_t n, const int64_t *upos, bool write)
{
    // pread/pwrite on a stream: ESPIPE before the access mode (Linux's order).
    if (upos && !f->ops->seekable)
        return -ESPIPE;
    long err = check_rw(f, ubuf, n, write);
    if (err)
        return err;
    n = MIN(n, MAX_RW_COUNT);
    if (upos) { // pread/pwrite: an explicit offset, the file's own untouched
        if (*upos < 0)
            return -EINVAL;
        uint64_t pos = (uint64_t)*upos;
        return write ? f->ops->write(f, ubuf, n, &pos) : f->ops->read(f, ubuf, n, &pos);
    }
    if (!f->ops->seekable) // streams: no offset to protect
        return write ? f->ops->write(f, ubuf, n, NULL) : f->ops->read(f, ubuf, n, NULL);
    // A read at the end of a file needs no offset lock (fs_read_at_end): two of
    // them through one description write nothing in common.
    if (!write && f->ops == &inode_file_ops && fs_read_at_end(f->ip, &f->pos, n))
        return 0;
    sleeplock_acquire(&f->poslock);
    uint64_t pos = f->pos;
    long r = write ? f->ops->write(f, ubuf, n, &pos) : f->ops->read(f, ubuf, n, &pos);
    WRITE_ONCE(f->pos, pos); // lseek reads it without the lock
    sleeplock_release(&f->poslock);
    return r;
}

long file_read(struct file *f, uint64_t ubuf, size_t n, const int64_t *pos)
{
    return rw(f, ubuf, n, pos, false);
}

long file_write(struct file *f, uint64_t ubuf, size_t n, const int64_t *pos)
{
    return rw(f, ubuf, n, pos, true);
}

// SEEK_SET and SEEK_CUR from position pos: the new offset, or -EINVAL/-EOVERFLOW.
static long seek_simple(int64_t pos, int64_t off, int whence)
{
    int64_t npos;
    if (__builtin_add_overflow(whence == SEEK_CUR ? pos : 0, off, &npos))
        return -EOVERFLOW;
    return npos < 0 ? -EINVAL : npos;
}

// SEEK_END in a file of `size` bytes: the new offset, or -EOVERFLOW/-EINVAL.
static long seek_end(int64_t size, int64_t off)
{
    int64_t npos;
    if (__builtin_add_overflow(size, off, &npos))
        return -EOVERFLOW;
    return npos < 0 ? -EINVAL : npos;
}

// The size lseek sees: the inode's, or 0 for files without one.
static int64_t file_size(struct file *f)
{
    if (!f->ip)
        return 0;
    struct fs_stat st;
    fs_stat(f->ip, STATX_SIZE, &st);
    return (int64_t)st.size;
}

long file_lseek(struct file *f, int64_t off, int whence)
{
    if (!f->ops->seekable)
        return -ESPIPE;
    if (whence == SEEK_SET || whence == SEEK_CUR || whence == SEEK_END) {
        // A seek that fails, or leaves the offset where it is (lseek(fd, 0,
        // SEEK_CUR) above all, or SEEK_END when the offset is at the end
        // already), writes nothing: it needs no lock, and such lseeks through
        // one description commute with each other (the offset is one word,
        // stored whole under the lock).
        if (whence == SEEK_SET && off < 0)
            return -EINVAL; // without even reading the offset
        int64_t cur = (int64_t)READ_ONCE(f->pos);
        long r = whence == SEEK_END ? seek_end(file_size(f), off) : seek_simple(cur, off, whence);
        if (r < 0 || r == cur)
            return r;
    }
    sleeplock_acquire(&f->poslock);
    int64_t size = whence == SEEK_SET || whence == SEEK_CUR ? 0 : file_size(f);
    long r;
    switch (whence) {
    case SEEK_SET:
    case SEEK_CUR: r = seek_simple((int64_t)f->pos, off, whence); break;
    case SEEK_END: r = seek_end(size, off); break;
    case SEEK_DATA: // no holes are reported: all of the file is data
        r = off < 0 || off >= size ? -ENXIO : off;
        break;
    case SEEK_HOLE:
        r = off < 0 || off >= size ? -ENXIO : size;
        break;
    default: r = -EINVAL;
    }
    if (r >= 0)
        WRITE_ONCE(f->pos, (uint64_t)r);
    sleeplock_release(&f->poslock);
    return r;
}

int file_stat(struct file *f, uint32_t mask, struct fs_stat *st)
{
    if (f->ip)
        return fs_stat(f->ip, mask, st);
    if (f->ops->stat)
        return f->ops->stat(f, mask, st);
    memset(st, 0, sizeof *st);
    return 0;
}

long file_ioctl(struct file *f, unsigned long req, uint64_t arg)
{
    return f->ops->ioctl ? f->ops->ioctl(f, req, arg) : -ENOTTY;
}
