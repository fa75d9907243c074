// mkdir [-p] dir...: make directories; -p: with their parents, and no error
// if they exist already.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// Make every prefix of path that ends before a '/', then path itself.
static int make_parents(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        int r = mkdir(path, 0777);
        int saved = errno;
        *p = '/';
        if (r < 0 && saved != EEXIST) {
            errno = saved;
            return -1;
        }
    }
    struct stat st;
    if (mkdir(path, 0777) < 0 && !(errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    int parents = 0, i = 1, status = 0;
    if (i < argc && strcmp(argv[i], "-p") == 0) {
        parents = 1;
        i++;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: mkdir [-p] dir...\n");
        return 2;
    }
    for (; i < argc; i++) {
        if ((parents ? make_parents(argv[i]) : mkdir(argv[i], 0777)) < 0) {
            fprintf(stderr, "mkdir: %s: %s\n", argv[i], strerror(errno));
            status = 1;
        }
    }
    return status;
}
