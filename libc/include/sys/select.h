// Synchronous I/O multiplexing: select and pselect over fd_set (1024 fds).
#pragma once
#include <signal.h>
#include <sys/time.h>
#include <sys/types.h>

#define FD_SETSIZE 1024
typedef struct {
    unsigned long fds_bits[FD_SETSIZE / (8 * sizeof(long))];
} fd_set;
#define __FD_WORD(fd) ((fd) / (8 * (int)sizeof(long)))
#define __FD_MASK(fd) (1UL << ((fd) % (8 * (int)sizeof(long))))
#define FD_ZERO(s) __builtin_memset((s), 0, sizeof(fd_set))
#define FD_SET(fd, s) ((void)((s)->fds_bits[__FD_WORD(fd)] |= __FD_MASK(fd)))
#define FD_CLR(fd, s) ((void)((s)->fds_bits[__FD_WORD(fd)] &= ~__FD_MASK(fd)))
#define FD_ISSET(fd, s) (((s)->fds_bits[__FD_WORD(fd)] & __FD_MASK(fd)) != 0)

int select(int n, fd_set *restrict r, fd_set *restrict w, fd_set *restrict e,
           struct timeval *restrict timeout);
int pselect(int n, fd_set *restrict r, fd_set *restrict w, fd_set *restrict e,
            const struct timespec *restrict timeout, const sigset_t *restrict mask);
