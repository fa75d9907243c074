// netsink PORT ROUNDS: the guest's side of tools/bench-net, host-to-guest TCP
// throughput through QEMU's user network; the same static binary in our guest
// and as the only program of Debian's Linux 6.1 (tools/linuxguest --net).
// Listens on 0.0.0.0:PORT and says so on standard output, then ROUNDS times
// accepts one connection, reads it to its end (64 KiB reads) and answers
// with the byte count ("N\n") before closing it. Exit status 0, 1 on error.
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fail(const char *what)
{
    perror(what);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: netsink PORT ROUNDS\n");
        return 1;
    }
    int one = 1, rounds = atoi(argv[2]);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
        return fail("netsink: socket");
    if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 4) < 0)
        return fail("netsink: bind/listen");
    printf("netsink: listening on %s\n", argv[1]);
    fflush(stdout);
    static char buf[64 * 1024];
    for (int r = 0; r < rounds; r++) {
        int c = accept(l, NULL, NULL);
        if (c < 0)
            return fail("netsink: accept");
        long long total = 0;
        ssize_t n;
        while ((n = read(c, buf, sizeof buf)) > 0)
            total += n;
        if (n < 0)
            return fail("netsink: read");
        char reply[32];
        int len = snprintf(reply, sizeof reply, "%lld\n", total);
        if (write(c, reply, (size_t)len) != len)
            return fail("netsink: write");
        close(c);
    }
    close(l);
    return 0;
}
