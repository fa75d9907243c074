// mv source target, mv source... dir: rename files (within one file system).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int move(const char *from, const char *to)
{
    if (rename(from, to) < 0) {
        fprintf(stderr, "mv: %s: %s\n", errno == ENOENT ? from : to, strerror(errno));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: mv source target | mv source... dir\n");
        return 2;
    }
    const char *last = argv[argc - 1];
    struct stat st;
    if (stat(last, &st) < 0 || !S_ISDIR(st.st_mode)) {
        if (argc > 3) {
            fprintf(stderr, "mv: %s: Not a directory\n", last);
            return 1;
        }
        return move(argv[1], last);
    }
    int status = 0;
    for (int i = 1; i < argc - 1; i++) {
        const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        char *to = malloc(strlen(last) + strlen(base) + 2);
        if (!to)
            return 1;
        sprintf(to, "%s/%s", last, base);
        status |= move(argv[i], to);
        free(to);
    }
    return status;
}
