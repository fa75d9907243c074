// getopt: POSIX short options, with "+"/":" prefixes and GNU-style "--".
// Does not permute argv: scanning stops at the first non-option.
#include <stdio.h>
#include <string.h>
#include <unistd.h>

char *optarg;
int optind = 1, opterr = 1, optopt;
static int nextchar;  // position inside a cluster like -abc

int getopt(int argc, char *const argv[], const char *opts)
{
    if (optind == 0) {  // glibc's way to request a reset
        optind = 1;
        nextchar = 0;
    }
    if (*opts == '+' || *opts == '-')
        opts++;
    int colon = *opts == ':';
    optarg = NULL;
    if (nextchar == 0) {
        if (optind >= argc || !argv[optind] || argv[optind][0] != '-' || !argv[optind][1])
            return -1;
        if (strcmp(argv[optind], "--") == 0) {
            optind++;
            return -1;
        }
        nextchar = 1;
    }
    const char *arg = argv[optind];
    int c = (unsigned char)arg[nextchar++];
    const char *spec = c != ':' ? strchr(opts, c) : NULL;
    if (!spec) {
        optopt = c;
        if (!arg[nextchar]) {
            optind++;
            nextchar = 0;
        }
        if (opterr && !colon)
            fprintf(stderr, "%s: invalid option -- '%c'\n", argv[0], c);
        return '?';
    }
    if (spec[1] == ':') {
        if (arg[nextchar]) {
            optarg = (char *)arg + nextchar;
        } else if (spec[2] == ':') {
            optarg = NULL;  // optional argument absent
        } else if (optind + 1 < argc) {
            optarg = argv[++optind];
        } else {
            optopt = c;
            optind++;
            nextchar = 0;
            if (colon)
                return ':';
            if (opterr)
                fprintf(stderr, "%s: option requires an argument -- '%c'\n", argv[0], c);
            return '?';
        }
        optind++;
        nextchar = 0;
        return c;
    }
    if (!arg[nextchar]) {
        optind++;
        nextchar = 0;
    }
    return c;
}
