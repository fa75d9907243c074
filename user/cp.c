// cp [-r] source target, cp [-r] source... dir: copy files (-r: directories too).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int recursive;

static int fail(const char *path)
{
    fprintf(stderr, "cp: %s: %s\n", path, strerror(errno));
    return 1;
}

static char *join(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    if (!p) {
        fprintf(stderr, "cp: out of memory\n");
        exit(1);
    }
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
    int in = open(from, O_RDONLY);
    if (in < 0)
        return fail(from);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode & 0777);
    if (out < 0) {
        close(in);
        return fail(to);
    }
    char buf[8192];
    ssize_t n;
    int status = 0;
    while ((n = read(in, buf, sizeof buf)) > 0) {
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, n - off);
            if (w < 0) {
                status = fail(to);
                n = -2;
                break;
            }
            off += w;
        }
        if (n == -2)
            break;
    }
    if (n == -1)
        status = fail(from);
    close(in);
    if (close(out) < 0 && !status)
        status = fail(to);
    return status;
}

static int copy(const char *from, const char *to);

static int copy_dir(const char *from, const char *to, mode_t mode)
{
    if (mkdir(to, mode & 0777) < 0 && errno != EEXIST)
        return fail(to);
    DIR *d = opendir(from);
    if (!d)
        return fail(from);
    int status = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *f = join(from, e->d_name), *t = join(to, e->d_name);
        status |= copy(f, t);
        free(f);
        free(t);
    }
    closedir(d);
    return status;
}

static int copy(const char *from, const char *to)
{
    struct stat st;
    if (stat(from, &st) < 0)
        return fail(from);
    if (S_ISDIR(st.st_mode)) {
        if (!recursive) {
            fprintf(stderr, "cp: %s: Is a directory (use -r)\n", from);
            return 1;
        }
        return copy_dir(from, to, st.st_mode);
    }
    return copy_file(from, to, st.st_mode);
}

int main(int argc, char **argv)
{
    int i = 1;
    if (i < argc && strcmp(argv[i], "-r") == 0) {
        recursive = 1;
        i++;
    }
    int n = argc - i;
    if (n < 2) {
        fprintf(stderr, "usage: cp [-r] source target | cp [-r] source... dir\n");
        return 2;
    }
    const char *last = argv[argc - 1];
    struct stat st;
    if (stat(last, &st) < 0 || !S_ISDIR(st.st_mode)) {
        if (n > 2) {
            fprintf(stderr, "cp: %s: Not a directory\n", last);
            return 1;
        }
        return copy(argv[i], last);
    }
    int status = 0;
    for (; i < argc - 1; i++) {
        const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        char *to = join(last, base);
        status |= copy(argv[i], to);
        free(to);
    }
    return status;
}
