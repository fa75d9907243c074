// The program the pairwise suite's posix_spawn calls start (op `spawn` in
// tools/commuter/model.py): one read from, or one write to, a descriptor it
// inherited or got from a file action, reported by how it ends, since the
// caller waits for it and sees nothing else:
//   commuter-child r FD       read 1 byte: exit with it (0..255); end of
//                             file: die of SIGUSR1; EBADF: die of SIGUSR2
//   commuter-child w FD BYTE  write BYTE: exit 0; EBADF: die of SIGUSR2; a
//                             pipe without readers: the kernel's SIGPIPE
// Anything else (another errno, a write that returns EPIPE without the
// signal) dies of SIGTERM, which the model never expects.
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

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
    if (argc < 3)
        die(SIGTERM);
    int fd = atoi(argv[2]);
    unsigned char b = argc > 3 ? (unsigned char)atoi(argv[3]) : 0;
    long n;
    if (argv[1][0] == 'r') {
        n = read(fd, &b, 1);
        if (n == 1)
            _exit(b);
        die(n == 0 ? SIGUSR1 : errno == EBADF ? SIGUSR2 : SIGTERM);
    }
    n = write(fd, &b, 1);
    if (n == 1)
        _exit(0);
    die(n < 0 && errno == EBADF ? SIGUSR2 : SIGTERM);
}
