// sleep seconds: wait that long (a decimal fraction is allowed: sleep 0.5).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    char *end;
    double secs = argc == 2 ? strtod(argv[1], &end) : -1;
    if (argc != 2 || *end || secs < 0) {
        fprintf(stderr, "usage: sleep seconds\n");
        return 2;
    }
    struct timespec ts = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};
    while (nanosleep(&ts, &ts) < 0)
        if (errno != EINTR)
            return 1;
    return 0;
}
