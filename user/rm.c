// rm [-rf] file...: remove files; -r: directories and what they hold;
// -f: no complaint (and no failure) for files that do not exist.
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int recursive, force;

static int complain(const char *path)
{
    if (force && errno == ENOENT)
        return 0;
    fprintf(stderr, "rm: %s: %s\n", path, strerror(errno));
    return 1;
}

static int remove_path(const char *path);

// Remove everything in directory path, then the directory.
static int remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return complain(path);
    int status = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *child = malloc(strlen(path) + strlen(e->d_name) + 2);
        if (!child) {
            fprintf(stderr, "rm: out of memory\n");
            closedir(d);
            return 1;
        }
        sprintf(child, "%s/%s", path, e->d_name);
        status |= remove_path(child);
        free(child);
    }
    closedir(d);
    if (rmdir(path) < 0)
        status |= complain(path);
    return status;
}

static int remove_path(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return complain(path);
    if (S_ISDIR(st.st_mode)) {
        if (recursive)
            return remove_tree(path);
        fprintf(stderr, "rm: %s: Is a directory\n", path);
        return 1;
    }
    if (unlink(path) < 0)
        return complain(path);
    return 0;
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        for (char *p = argv[i] + 1; *p; p++) {
            if (*p == 'r' || *p == 'R') {
                recursive = 1;
            } else if (*p == 'f') {
                force = 1;
            } else {
                fprintf(stderr, "rm: unknown option -%c\nusage: rm [-rf] file...\n", *p);
                return 2;
            }
        }
    }
    if (i >= argc && !force) {
        fprintf(stderr, "usage: rm [-rf] file...\n");
        return 2;
    }
    int status = 0;
    for (; i < argc; i++)
        status |= remove_path(argv[i]);
    return status;
}
