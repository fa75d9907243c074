// getopt: clusters, attached and separate arguments, errors, "--".
#include <getopt.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"

int main(void)
{
    char *argv1[] = {"prog", "-ab", "-c", "carg", "-dval", "--", "-x", "rest", NULL};
    int argc1 = 8;
    char seen[16] = "";
    char *c_arg = NULL, *d_arg = NULL;
    int opt;
    opterr = 0;
    while ((opt = getopt(argc1, argv1, "abc:d:")) != -1) {
        strncat(seen, (char[]){(char)opt, 0}, 1);
        if (opt == 'c')
            c_arg = optarg;
        if (opt == 'd')
            d_arg = optarg;
    }
    check(strcmp(seen, "abcd") == 0, "options in order (%s)", seen);
    check(c_arg && strcmp(c_arg, "carg") == 0, "separate argument");
    check(d_arg && strcmp(d_arg, "val") == 0, "attached argument");
    check(optind == 6 && strcmp(argv1[optind], "-x") == 0, "\"--\" ends options (optind %d)", optind);

    char *argv2[] = {"prog", "-z", "-c", NULL};
    optind = 1;
    check(getopt(3, argv2, "c:") == '?' && optopt == 'z', "unknown option: '?' and optopt");
    check(getopt(3, argv2, "c:") == '?' && optopt == 'c', "missing argument: '?'");
    optind = 1;
    getopt(3, argv2, ":c:");
    check(getopt(3, argv2, ":c:") == ':', "missing argument with leading ':' returns ':'");

    char *argv3[] = {"prog", "file", "-a", NULL};
    optind = 1;
    check(getopt(3, argv3, "a") == -1 && optind == 1, "stops at the first non-option");

    static int verbose;
    static const struct option longopts[] = {
        {"verbose", no_argument, &verbose, 1},
        {"output", required_argument, NULL, 'o'},
        {"level", optional_argument, NULL, 'l'},
        {"lever", no_argument, NULL, 'L'},
        {NULL, 0, NULL, 0},
    };
    char *argv4[] = {"prog", "--verbose", "--output=x.txt", "--output", "y.txt", "-l",
                     "--level=3", "--lev", "--bogus", "file", NULL};
    int argc4 = 10, idx = -1;
    optind = 1;
    check(getopt_long(argc4, argv4, "o:l", longopts, &idx) == 0 && verbose == 1 && idx == 0,
          "getopt_long sets a flag");
    check(getopt_long(argc4, argv4, "o:l", longopts, &idx) == 'o' && strcmp(optarg, "x.txt") == 0,
          "getopt_long --name=value");
    check(getopt_long(argc4, argv4, "o:l", longopts, &idx) == 'o' && strcmp(optarg, "y.txt") == 0,
          "getopt_long --name value");
    check(getopt_long(argc4, argv4, "o:l", longopts, &idx) == 'l' && optarg == NULL,
          "getopt_long falls back to short options");
    check(getopt_long(argc4, argv4, "o:l", longopts, &idx) == 'l' && strcmp(optarg, "3") == 0,
          "getopt_long optional argument");
    check(getopt_long(argc4, argv4, "o:l", longopts, &idx) == '?', "an ambiguous abbreviation is an error");
    check(getopt_long(argc4, argv4, "o:l", longopts, &idx) == '?', "an unknown long option is an error");
    check(getopt_long(argc4, argv4, "o:l", longopts, &idx) == -1 && strcmp(argv4[optind], "file") == 0,
          "getopt_long stops at the first operand");
    return tap_done();
}
