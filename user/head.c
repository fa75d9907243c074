// head [-n N | -N] [file...]: print the first N (default 10) lines.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int head(FILE *f, const char *name, long lines)
{
    int c;
    while (lines > 0 && (c = getc(f)) != EOF) {
        putchar(c);
        lines -= c == '\n';
    }
    if (ferror(f)) {
        fprintf(stderr, "head: %s: %s\n", name, strerror(errno));
        return 1;
    }
    return 0;
}

// Parses -n N, -nN or -N; returns the index of the first file argument, or -1.
static int parse_count(int argc, char **argv, long *lines)
{
    int i = 1;
    if (i < argc && argv[i][0] == '-' && argv[i][1]) {
        const char *num = argv[i] + 1;
        if (*num == 'n')
            num = num[1] ? num + 1 : (++i < argc ? argv[i] : "");
        char *end;
        *lines = strtol(num, &end, 10);
        if (!*num || *end || *lines < 0)
            return -1;
        i++;
    }
    return i;
}

int main(int argc, char **argv)
{
    long lines = 10;
    int i = parse_count(argc, argv, &lines);
    if (i < 0) {
        fprintf(stderr, "usage: head [-n N] [file...]\n");
        return 2;
    }
    if (i >= argc)
        return head(stdin, "-", lines);
    int status = 0, many = argc - i > 1;
    for (int first = i; i < argc; i++) {
        FILE *f = fopen(argv[i], "r");
        if (!f) {
            fprintf(stderr, "head: %s: %s\n", argv[i], strerror(errno));
            status = 1;
            continue;
        }
        if (many)
            printf("%s==> %s <==\n", i > first ? "\n" : "", argv[i]);
        status |= head(f, argv[i], lines);
        fclose(f);
    }
    return status;
}
