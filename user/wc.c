// wc [-lwc] [file...]: count lines, words and bytes (all three by default),
// with a total line for more than one file.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int show_l, show_w, show_c;
static long total[3];

static void print(const long n[3], const char *name)
{
    const char *sep = "";
    int show[3] = {show_l, show_w, show_c};
    for (int k = 0; k < 3; k++) {
        if (show[k]) {
            printf("%s%ld", sep, n[k]);
            sep = " ";
        }
    }
    if (name)
        printf(" %s", name);
    putchar('\n');
}

static int count(int fd, const char *name, const char *label)
{
    long n[3] = {0};
    char buf[8192];
    ssize_t r;
    int inword = 0;
    while ((r = read(fd, buf, sizeof buf)) > 0) {
        n[2] += r;
        for (ssize_t i = 0; i < r; i++) {
            char c = buf[i];
            n[0] += c == '\n';
            int space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
            n[1] += !space && !inword;
            inword = !space;
        }
    }
    if (r < 0) {
        fprintf(stderr, "wc: %s: %s\n", name, strerror(errno));
        return 1;
    }
    for (int k = 0; k < 3; k++)
        total[k] += n[k];
    print(n, label);
    return 0;
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        for (char *p = argv[i] + 1; *p; p++) {
            if (*p == 'l')
                show_l = 1;
            else if (*p == 'w')
                show_w = 1;
            else if (*p == 'c')
                show_c = 1;
            else {
                fprintf(stderr, "wc: unknown option -%c\nusage: wc [-lwc] [file...]\n", *p);
                return 2;
            }
        }
    }
    if (!show_l && !show_w && !show_c)
        show_l = show_w = show_c = 1;
    if (i >= argc)
        return count(0, "-", NULL);
    int status = 0, files = argc - i;
    for (; i < argc; i++) {
        int fd = strcmp(argv[i], "-") == 0 ? 0 : open(argv[i], O_RDONLY);
        if (fd < 0) {
            fprintf(stderr, "wc: %s: %s\n", argv[i], strerror(errno));
            status = 1;
            continue;
        }
        status |= count(fd, argv[i], argv[i]);
        if (fd > 0)
            close(fd);
    }
    if (files > 1)
        print(total, "total");
    return status;
}
