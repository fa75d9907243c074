// Directories and paths: mkdir, opendir/readdir over many entries, rmdir,
// getcwd/chdir, realpath, unlink, rename.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tap.h"

int main(void)
{
    char dir[] = "/tmp/libc-dir-XXXXXX";
    check(mkdtemp(dir) != NULL, "mkdtemp");
    char path[PATH_MAX];
    for (int i = 0; i < 300; i++) {
        snprintf(path, sizeof path, "%s/file-%03d", dir, i);
        int fd = open(path, O_CREAT | O_WRONLY, 0644);
        close(fd);
    }
    mkdir(strcat(strcpy(path, dir), "/sub"), 0755);
    DIR *d = opendir(dir);
    int files = 0, subs = 0, dots = 0;
    struct dirent *e;
    static char seen[300];
    while ((e = readdir(d))) {
        int n;
        if (sscanf(e->d_name, "file-%d", &n) == 1 && n >= 0 && n < 300 && !seen[n]) {
            seen[n] = 1;
            files += e->d_type == DT_REG || e->d_type == DT_UNKNOWN;
        } else if (strcmp(e->d_name, "sub") == 0) {
            subs += e->d_type == DT_DIR || e->d_type == DT_UNKNOWN;
        } else if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            dots++;
        }
    }
    check(files == 300 && subs == 1 && dots == 2, "readdir lists every entry once (%d files)", files);
    rewinddir(d);
    check(readdir(d) != NULL, "rewinddir");
    closedir(d);
    check(opendir("/nonexistent-dir") == NULL && errno == ENOENT, "opendir of a missing dir: ENOENT");

    char cwd[PATH_MAX];
    check(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    check(chdir(dir) == 0, "chdir");
    char here[PATH_MAX];
    check(getcwd(here, sizeof here) && strcmp(here, dir) == 0, "getcwd after chdir");
    char *rp = realpath("sub/../file-001", NULL);
    snprintf(path, sizeof path, "%s/file-001", dir);
    check(rp && strcmp(rp, path) == 0, "realpath resolves .. relative to the cwd");
    free(rp);
    symlink("sub", "link");
    rp = realpath("link/.", NULL);
    snprintf(path, sizeof path, "%s/sub", dir);
    check(rp && strcmp(rp, path) == 0, "realpath follows symlinks");
    free(rp);
    check(rename("file-000", "renamed") == 0 && access("renamed", F_OK) == 0 &&
          access("file-000", F_OK) == -1, "rename");
    char *dyn = getcwd(NULL, 0);
    check(dyn && strcmp(dyn, dir) == 0, "getcwd(NULL, 0) allocates");
    free(dyn);
    chdir(cwd);

    for (int i = 1; i < 300; i++) {
        snprintf(path, sizeof path, "%s/file-%03d", dir, i);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/renamed", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/link", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/sub", dir);
    check(rmdir(dir) == -1 && errno == ENOTEMPTY, "rmdir of a non-empty directory: ENOTEMPTY");
    check(rmdir(path) == 0 && rmdir(dir) == 0, "rmdir");
    return tap_done();
}
