// getopt: POSIX short options, with "+"/":" prefixes and GNU-style "--";
// getopt_long adds "--name", "--name=value", "--name value" and unique
// abbreviations. Neither permutes argv: scanning stops at the first non-option.
#include <getopt.h>
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

// A long option "--name[=value]" at argv[optind].
static int long_option(int argc, char *const argv[], const char *opts,
                       const struct option *longopts, int *index)
{
    const char *arg = argv[optind] + 2;
    size_t len = strcspn(arg, "=");
    int found = -1, ambiguous = 0;
    for (int i = 0; longopts[i].name; i++) {
        if (strncmp(longopts[i].name, arg, len) != 0)
            continue;
        if (strlen(longopts[i].name) == len) {  // exact match wins
            found = i;
            ambiguous = 0;
            break;
        }
        if (found >= 0)
            ambiguous = 1;
        else
            found = i;
    }
    int colon = *opts == ':' || ((*opts == '+' || *opts == '-') && opts[1] == ':');
    optind++;
    if (found < 0 || ambiguous) {
        optopt = 0;
        if (opterr && !colon)
            fprintf(stderr, "%s: %s option '--%.*s'\n", argv[0],
                    ambiguous ? "ambiguous" : "unrecognized", (int)len, arg);
        return '?';
    }
    const struct option *o = &longopts[found];
    optarg = NULL;
    if (arg[len] == '=') {
        if (o->has_arg == no_argument) {
            optopt = o->val;
            if (opterr && !colon)
                fprintf(stderr, "%s: option '--%s' doesn't allow an argument\n", argv[0], o->name);
            return '?';
        }
        optarg = (char *)arg + len + 1;
    } else if (o->has_arg == required_argument) {
        if (optind >= argc) {
            optopt = o->val;
            if (opterr && !colon)
                fprintf(stderr, "%s: option '--%s' requires an argument\n", argv[0], o->name);
            return colon ? ':' : '?';
        }
        optarg = argv[optind++];
    }
    if (index)
        *index = found;
    if (o->flag) {
        *o->flag = o->val;
        return 0;
    }
    return o->val;
}

int getopt_long(int argc, char *const argv[], const char *opts, const struct option *longopts,
                int *index)
{
    if (optind == 0) {
        optind = 1;
        nextchar = 0;
    }
    if (nextchar == 0 && optind < argc && argv[optind] && argv[optind][0] == '-' &&
        argv[optind][1] == '-' && argv[optind][2])
        return long_option(argc, argv, opts, longopts, index);
    return getopt(argc, argv, opts);
}
