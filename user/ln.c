// ln [-s] target name, ln [-s] target... dir: make hard (or -s symbolic) links.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int symbolic;

static int make_link(const char *target, const char *name)
{
    if ((symbolic ? symlink(target, name) : link(target, name)) < 0) {
        fprintf(stderr, "ln: %s: %s\n", name, strerror(errno));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int i = 1;
    if (i < argc && strcmp(argv[i], "-s") == 0) {
        symbolic = 1;
        i++;
    }
    int n = argc - i;
    if (n < 2) {
        fprintf(stderr, "usage: ln [-s] target name | ln [-s] target... dir\n");
        return 2;
    }
    const char *last = argv[argc - 1];
    struct stat st;
    if (stat(last, &st) < 0 || !S_ISDIR(st.st_mode)) {
        if (n > 2) {
            fprintf(stderr, "ln: %s: Not a directory\n", last);
            return 1;
        }
        return make_link(argv[i], last);
    }
    // Into a directory: each link is named after its target's last component.
    int status = 0;
    for (; i < argc - 1; i++) {
        const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        char *name = malloc(strlen(last) + strlen(base) + 2);
        if (!name)
            return 1;
        sprintf(name, "%s/%s", last, base);
        status |= make_link(argv[i], name);
        free(name);
    }
    return status;
}
