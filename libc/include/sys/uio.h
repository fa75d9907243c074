// Scatter/gather I/O.
#pragma once
#include <sys/types.h>
struct iovec {
    void *iov_base;
    size_t iov_len;
};
ssize_t readv(int fd, const struct iovec *iov, int n);
ssize_t writev(int fd, const struct iovec *iov, int n);
ssize_t preadv(int fd, const struct iovec *iov, int n, off_t off);
ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off);
