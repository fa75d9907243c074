// Character devices: the device-number table, /dev/null and /dev/zero, and the
// /dev directory made at boot. Device nodes are ScaleFS inodes (S_IFCHR with a
// device number, fs_mknod); opening one looks its number up here.
//
// Scalability: the table is constant; null and zero keep no state, so all their
// operations commute and write nothing shared.
#include "file/dev.h"
#include "file/file.h"
#include "fs.h"
#include "mm/mm.h"
#include "mm/usercopy.h"
#include "uapi/errno.h"

static long null_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    (void)f, (void)ubuf, (void)n, (void)pos;
    return 0;
}

static long sink_write(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    (void)f, (void)ubuf, (void)pos;
    return (long)n;
}

static long zero_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    (void)f, (void)pos;
    // A fault part-way reports what was cleared before it; clear page by page.
    size_t done = 0;
    while (done < n) {
        size_t k = MIN(n - done, PGSIZE - (ubuf + done) % PGSIZE);
        if (clear_user(ubuf + done, k) < 0)
            return done ? (long)done : -EFAULT;
        done += k;
    }
    return (long)done;
}

static const struct file_ops null_ops = {.read = null_read, .write = sink_write, .seekable = true};
static const struct file_ops zero_ops = {.read = zero_read, .write = sink_write, .seekable = true};

static const struct {
    const char *path;
    uint32_t major, minor, mode;
    const struct file_ops *ops;
} devices[] = {
    {"/dev/null", 1, 3, 0666, &null_ops},
    {"/dev/zero", 1, 5, 0666, &zero_ops},
    {"/dev/tty", 5, 0, 0666, &tty_ops},
    {"/dev/console", 5, 1, 0600, &tty_ops},
};

const char *dev_name(uint32_t rdev)
{
    for (size_t i = 0; i < ARRAY_SIZE(devices); i++)
        if (MKDEV(devices[i].major, devices[i].minor) == rdev)
            return devices[i].path;
    return NULL;
}

const struct file_ops *dev_lookup(uint32_t rdev)
{
    for (size_t i = 0; i < ARRAY_SIZE(devices); i++)
        if (MKDEV(devices[i].major, devices[i].minor) == rdev)
            return devices[i].ops;
    return NULL;
}

void dev_init(void)
{
    int err = fs_mkdir(NULL, "/dev", 0755);
    if (err && err != -EEXIST)
        kprintf("dev: mkdir /dev: error %d\n", err);
    for (size_t i = 0; i < ARRAY_SIZE(devices); i++) {
        err = fs_mknod(NULL, devices[i].path, S_IFCHR | devices[i].mode,
                       MKDEV(devices[i].major, devices[i].minor));
        if (err && err != -EEXIST)
            kprintf("dev: mknod %s: error %d\n", devices[i].path, err);
    }
}
