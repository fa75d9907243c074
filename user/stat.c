// stat file...: print what stat(2) (lstat for symbolic links) says about each file.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *type_name(mode_t m)
{
    return S_ISREG(m) ? "regular file" : S_ISDIR(m) ? "directory"
         : S_ISLNK(m) ? "symbolic link" : S_ISCHR(m) ? "character device"
         : S_ISBLK(m) ? "block device" : S_ISFIFO(m) ? "fifo"
         : S_ISSOCK(m) ? "socket" : "unknown";
}

static void print_time(const char *label, const struct timespec *ts)
{
    char buf[64];
    struct tm tm;
    strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", gmtime_r(&ts->tv_sec, &tm));
    printf("%s: %s.%09ld UTC\n", label, buf, ts->tv_nsec);
}

int main(int argc, char **argv)
{
    int status = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: stat file...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (lstat(argv[i], &st) < 0) {
            fprintf(stderr, "stat: %s: %s\n", argv[i], strerror(errno));
            status = 1;
            continue;
        }
        printf("  File: %s", argv[i]);
        char target[4096];
        ssize_t n;
        if (S_ISLNK(st.st_mode) && (n = readlink(argv[i], target, sizeof target - 1)) >= 0) {
            target[n] = 0;
            printf(" -> %s", target);
        }
        printf("\n  Size: %lld  Blocks: %lld  Type: %s\n", (long long)st.st_size,
               (long long)st.st_blocks, type_name(st.st_mode));
        printf("Device: %llx  Inode: %llu  Links: %lu\n", (unsigned long long)st.st_dev,
               (unsigned long long)st.st_ino, (unsigned long)st.st_nlink);
        printf("Access: %04o  Uid: %u  Gid: %u\n", (unsigned)(st.st_mode & 07777),
               (unsigned)st.st_uid, (unsigned)st.st_gid);
        print_time("Access", &st.st_atim);
        print_time("Modify", &st.st_mtim);
        print_time("Change", &st.st_ctim);
    }
    return status;
}
