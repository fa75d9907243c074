// write, writev and ioctl for file descriptors 0-2 only, all of which are the
// console (or a test's capture buffer). A stopgap until the file-descriptor table
// exists: that work replaces this file.
#include "console.h"
#include "mm.h"
#include "proc.h"
#include "syscall.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "usercopy.h"

#define CHUNK 256

void proc_console_write(const char *s, size_t n)
{
    struct proc *p = proc_current();
    struct capture *c = p ? p->capture : NULL;
    if (!c) {
        console_write(s, n);
        return;
    }
    spin_lock(&c->lock);
    size_t m = MIN(n, c->cap - c->len);
    memcpy(c->buf + c->len, s, m);
    c->len += m;
    spin_unlock(&c->lock);
}

static bool is_console(int fd) { return fd >= 0 && fd <= 2; }

// Copy in and write out a chunk at a time; a fault after some bytes went out
// reports those bytes, as Linux does.
static long write_user(uint64_t buf, size_t n)
{
    char k[CHUNK];
    size_t done = 0;
    if (!user_range_valid(buf, n))
        return -EFAULT;
    while (done < n) {
        size_t m = MIN(n - done, sizeof k);
        if (copy_from_user(k, buf + done, m) < 0)
            return done ? (long)done : -EFAULT;
        proc_console_write(k, m);
        done += m;
    }
    return done;
}

long sys_write(int fd, uint64_t buf, size_t n)
{
    if (!is_console(fd))
        return -EBADF;
    if ((long)n < 0)
        return -EINVAL;
    return write_user(buf, n);
}

#define IOV_MAX 1024

long sys_writev(int fd, uint64_t uiov, int iovcnt)
{
    if (!is_console(fd))
        return -EBADF;
    if (iovcnt < 0 || iovcnt > IOV_MAX)
        return -EINVAL;
    long total = 0;
    for (int i = 0; i < iovcnt; i++) {
        struct iovec v;
        if (copy_from_user(&v, uiov + i * sizeof v, sizeof v) < 0)
            return total ? total : -EFAULT;
        if ((long)v.iov_len < 0)
            return -EINVAL;
        long r = write_user(v.iov_base, v.iov_len);
        if (r < 0)
            return total ? total : r;
        total += r;
        if ((size_t)r < v.iov_len)
            break;
    }
    return total;
}

long sys_ioctl(int fd, unsigned long req, uint64_t arg)
{
    if (!is_console(fd))
        return -EBADF;
    if (req == TIOCGWINSZ) {
        struct winsize ws = {.ws_row = 24, .ws_col = 80};
        return copy_to_user(arg, &ws, sizeof ws);
    }
    if (req == TCGETS) {
        // A serial line in cooked mode: ICRNL | IXON, OPOST | ONLCR, B38400 | CS8 |
        // CREAD, ISIG | ICANON | ECHO | ECHOE | ECHOK | IEXTEN.
        struct termios t = {.c_iflag = 0x500, .c_oflag = 0x5, .c_cflag = 0xbf,
                            .c_lflag = 0x8a3b};
        return copy_to_user(arg, &t, sizeof t);
    }
    return -ENOTTY;
}
