// test EXPRESSION, [ EXPRESSION ]: exit 0 if the expression is true, 1 if
// false, 2 if it is malformed. Expressions: ! E; E -a E; E -o E; STRING;
// -n S; -z S; S = S; S != S; N -eq|-ne|-lt|-le|-gt|-ge N; -e|-f|-d|-h|-L|-r|-w|-x|-s FILE.
// (-a binds tighter than -o; no parentheses.)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char **args;
static int pos, end;

static void bad(const char *why)
{
    fprintf(stderr, "test: %s\n", why);
    exit(2);
}

static long number(const char *s)
{
    char *e;
    long n = strtol(s, &e, 10);
    if (!*s || *e)
        bad("integer expected");
    return n;
}

static int file_test(char op, const char *path)
{
    struct stat st;
    if (op == 'h' || op == 'L')
        return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
    if (op == 'r' || op == 'w' || op == 'x')
        return access(path, op == 'r' ? R_OK : op == 'w' ? W_OK : X_OK) == 0;
    if (stat(path, &st) < 0)
        return 0;
    return op == 'e' || (op == 'f' && S_ISREG(st.st_mode)) || (op == 'd' && S_ISDIR(st.st_mode)) ||
           (op == 's' && st.st_size > 0);
}

// One primary: a unary test, a binary comparison, or a lone string.
static int primary(void)
{
    if (pos >= end)
        bad("argument expected");
    if (strcmp(args[pos], "!") == 0) {
        pos++;
        return !primary();
    }
    const char *a = args[pos];
    if (pos + 2 < end) {
        const char *op = args[pos + 1], *b = args[pos + 2];
        int r = -1;
        if (strcmp(op, "=") == 0) r = strcmp(a, b) == 0;
        else if (strcmp(op, "!=") == 0) r = strcmp(a, b) != 0;
        else if (strcmp(op, "-eq") == 0) r = number(a) == number(b);
        else if (strcmp(op, "-ne") == 0) r = number(a) != number(b);
        else if (strcmp(op, "-lt") == 0) r = number(a) < number(b);
        else if (strcmp(op, "-le") == 0) r = number(a) <= number(b);
        else if (strcmp(op, "-gt") == 0) r = number(a) > number(b);
        else if (strcmp(op, "-ge") == 0) r = number(a) >= number(b);
        if (r >= 0) {
            pos += 3;
            return r;
        }
    }
    if (a[0] == '-' && a[1] && !a[2] && strchr("nzefdhLrwxs", a[1]) && pos + 1 < end) {
        const char *s = args[pos + 1];
        pos += 2;
        if (a[1] == 'n')
            return *s != 0;
        if (a[1] == 'z')
            return *s == 0;
        return file_test(a[1], s);
    }
    pos++;
    return *a != 0;
}

static int and_expr(void)
{
    int r = primary();
    while (pos < end && strcmp(args[pos], "-a") == 0) {
        pos++;
        r = primary() && r;
    }
    return r;
}

static int or_expr(void)
{
    int r = and_expr();
    while (pos < end && strcmp(args[pos], "-o") == 0) {
        pos++;
        r = and_expr() || r;
    }
    return r;
}

int main(int argc, char **argv)
{
    const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    args = argv;
    pos = 1;
    end = argc;
    if (strcmp(name, "[") == 0) {
        if (argc < 2 || strcmp(argv[argc - 1], "]") != 0)
            bad("missing ]");
        end--;
    }
    if (pos >= end)
        return 1;   // no expression: false
    int r = or_expr();
    if (pos < end)
        bad("too many arguments");
    return !r;
}
