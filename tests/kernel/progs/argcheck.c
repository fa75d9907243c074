// Run by the exec tests (tests/user/proc.c): reports what it was given through its
// exit status, since the suites have no files or pipes to read its output from.
//   argcheck -x SCRIPT a b   (how the `shebang` script runs it)  -> 42
//   argcheck env             with EXECTEST=yes in its environment -> 43
//   anything else                                                -> argc
#include <stdlib.h>
#include <string.h>

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "-x") == 0)
        return argc == 5 && ends_with(argv[2], "/shebang") && strcmp(argv[3], "a") == 0 &&
                       strcmp(argv[4], "b") == 0
                   ? 42
                   : 1;
    if (argc >= 2 && strcmp(argv[1], "env") == 0) {
        const char *v = getenv("EXECTEST");
        return v && strcmp(v, "yes") == 0 ? 43 : 1;
    }
    return argc;
}
