// ls [-la] [file...]: list directories (sorted, one name a line); -a: names
// starting with '.' too; -l: long format (mode, links, owner and group by name
// from /etc/passwd and /etc/group, or number, size, mtime).
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int all, longfmt;

static void mode_string(mode_t m, char *s)
{
    s[0] = S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : S_ISCHR(m) ? 'c' : S_ISBLK(m) ? 'b'
         : S_ISFIFO(m) ? 'p' : S_ISSOCK(m) ? 's' : '-';
    const char *rwx = "rwxrwxrwx";
    for (int i = 0; i < 9; i++)
        s[i + 1] = m & (0400 >> i) ? rwx[i] : '-';
    s[10] = 0;
}

// The name /etc/passwd or /etc/group (db) gives id (the first field of the line
// whose third is id), or the number itself.
static void id_name(const char *db, unsigned id, char *out, size_t n)
{
    snprintf(out, n, "%u", id);
    FILE *f = fopen(db, "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        char *end;
        if (c2 && strtoul(c2 + 1, &end, 10) == id && end > c2 + 1 && *end == ':') {
            snprintf(out, n, "%.*s", (int)(c1 - line), line);
            break;
        }
    }
    fclose(f);
}

// One entry: path is what to stat, name what to show.
static int show(const char *path, const char *name)
{
    if (!longfmt) {
        puts(name);
        return 0;
    }
    struct stat st;
    if (lstat(path, &st) < 0) {
        fprintf(stderr, "ls: %s: %s\n", path, strerror(errno));
        return 1;
    }
    char mode[11], when[32];
    struct tm tm;
    mode_string(st.st_mode, mode);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", gmtime_r(&st.st_mtime, &tm));
    char user[64], group[64];
    id_name("/etc/passwd", st.st_uid, user, sizeof user);
    id_name("/etc/group", st.st_gid, group, sizeof group);
    printf("%s %2lu %-8s %-8s %8lld %s %s", mode, (unsigned long)st.st_nlink, user, group,
           (long long)st.st_size, when, name);
    char target[4096];
    ssize_t n;
    if (S_ISLNK(st.st_mode) && (n = readlink(path, target, sizeof target - 1)) >= 0) {
        target[n] = 0;
        printf(" -> %s", target);
    }
    putchar('\n');
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "ls: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int status = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' && !all)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **p = realloc(names, cap * sizeof *names);
            if (!p)
                break;
            names = p;
        }
        if (!(names[n] = strdup(e->d_name)))
            break;
        n++;
    }
    if (e) {
        fprintf(stderr, "ls: %s: out of memory\n", dir);
        status = 1;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        char *path = malloc(strlen(dir) + strlen(names[i]) + 2);
        if (path) {
            sprintf(path, "%s/%s", dir, names[i]);
            status |= show(path, names[i]);
            free(path);
        }
        free(names[i]);
    }
    free(names);
    return status;
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        for (char *p = argv[i] + 1; *p; p++) {
            if (*p == 'a')
                all = 1;
            else if (*p == 'l')
                longfmt = 1;
            else if (*p != '1') {
                fprintf(stderr, "ls: unknown option -%c\nusage: ls [-la] [file...]\n", *p);
                return 2;
            }
        }
    }
    if (i >= argc)
        return list_dir(".");
    // Files first, then each directory (under a heading if there are several).
    int status = 0, operands = argc - i, shown = 0;
    for (int k = i; k < argc; k++) {
        struct stat st;
        if (stat(argv[k], &st) < 0 && lstat(argv[k], &st) < 0) {
            fprintf(stderr, "ls: %s: %s\n", argv[k], strerror(errno));
            status = 1;
            argv[k] = NULL;
        } else if (!S_ISDIR(st.st_mode)) {
            status |= show(argv[k], argv[k]);
            argv[k] = NULL;
            shown = 1;
        }
    }
    for (int k = i; k < argc; k++) {
        if (!argv[k])
            continue;
        if (operands > 1)
            printf("%s%s:\n", shown ? "\n" : "", argv[k]);
        shown = 1;
        status |= list_dir(argv[k]);
    }
    return status;
}
