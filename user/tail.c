// tail [-n N | -N] [file]: print the last N (default 10) lines.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// The whole input in memory: simple, and fine for the files we have.
static char *slurp(int fd, size_t *len)
{
    size_t cap = 8192;
    char *buf = malloc(cap);
    *len = 0;
    ssize_t n;
    while (buf && (n = read(fd, buf + *len, cap - *len)) > 0) {
        *len += n;
        if (*len == cap) {
            char *p = realloc(buf, cap *= 2);
            if (!p)
                free(buf);
            buf = p;
        }
    }
    if (buf && n < 0) {
        free(buf);
        return NULL;
    }
    if (!buf)
        errno = ENOMEM;
    return buf;
}

int main(int argc, char **argv)
{
    long lines = 10;
    int i = 1;
    if (i < argc && argv[i][0] == '-' && argv[i][1]) {
        const char *num = argv[i] + 1;
        if (*num == 'n')
            num = num[1] ? num + 1 : (++i < argc ? argv[i] : "");
        char *end;
        lines = strtol(num, &end, 10);
        if (!*num || *end || lines < 0) {
            fprintf(stderr, "usage: tail [-n N] [file]\n");
            return 2;
        }
        i++;
    }
    const char *name = i < argc ? argv[i] : "-";
    int fd = strcmp(name, "-") == 0 ? 0 : open(name, O_RDONLY);
    size_t len;
    char *buf = fd < 0 ? NULL : slurp(fd, &len);
    if (!buf) {
        fprintf(stderr, "tail: %s: %s\n", name, strerror(errno));
        return 1;
    }
    // Walk back over `lines` newlines; a final newline ends the last line.
    size_t start = len;
    if (start > 0 && buf[start - 1] == '\n')
        start--;
    long seen = 0;
    while (start > 0 && lines > 0) {
        if (buf[start - 1] == '\n' && ++seen == lines)
            break;
        start--;
    }
    if (lines == 0)
        start = len;
    fwrite(buf + start, 1, len - start, stdout);
    free(buf);
    return 0;
}
