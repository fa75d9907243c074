// The program the pairwise suite's posix_spawn calls start (op `spawn` in
// tools/commuter/model.py): one read from, or one write to, a descriptor it
// inherited or got from a file action, reported by how it ends, since the
// caller waits for it and sees nothing else:
//   commuter-child r FD V UNIT  read one data value (UNIT bytes, pattern.h):
//                               exit with it (0..255); end of file: die of
//                               SIGUSR1; EBADF: die of SIGUSR2
//   commuter-child w FD V UNIT  write value V: exit 0; EBADF: die of SIGUSR2;
//                               a pipe without readers: the kernel's SIGPIPE
// Anything else (another errno, a short transfer, bytes that are no value's
// pattern, a write that returns EPIPE without the signal) dies of SIGTERM,
// which the model never expects.
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "pattern.h"

#define MAX_UNIT 4096

_Noreturn static void die(int sig)
{
    raise(sig);
    _exit(125);
}

int main(int argc, char **argv)
{
    // Dispositions and mask are inherited (the runner ignores SIGPIPE and
    // blocks SIGCHLD): make the signals that report an outcome fatal.
    signal(SIGPIPE, SIG_DFL);
    signal(SIGUSR1, SIG_DFL);
    signal(SIGUSR2, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (argc < 5)
        die(SIGTERM);
    int fd = atoi(argv[2]);
    long unit = atol(argv[4]);
    if (unit < 1 || unit > MAX_UNIT)
        die(SIGTERM);
    static unsigned char buf[MAX_UNIT];
    long n;
    if (argv[1][0] == 'r') {
        n = read(fd, buf, unit);
        if (n == unit && ct_value(buf, unit) != CT_GARBLED)
            _exit(ct_value(buf, unit));
        die(n == 0 ? SIGUSR1 : n < 0 && errno == EBADF ? SIGUSR2 : SIGTERM);
    }
    ct_fill(buf, (unsigned char)atoi(argv[3]), unit);
    n = write(fd, buf, unit);
    if (n == unit)
        _exit(0);
    die(n < 0 && errno == EBADF ? SIGUSR2 : SIGTERM);
}
