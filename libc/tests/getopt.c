// getopt: clusters, attached and separate arguments, errors, "--".
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
    return tap_done();
}
