// chmod MODE file...: set the files' permission bits to the octal MODE.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
    char *end;
    long mode = argc > 2 ? strtol(argv[1], &end, 8) : -1;
    if (argc < 3 || *end || mode < 0 || mode > 07777) {
        fprintf(stderr, "usage: chmod octal-mode file...\n");
        return 2;
    }
    int status = 0;
    for (int i = 2; i < argc; i++) {
        if (chmod(argv[i], (mode_t)mode) < 0) {
            fprintf(stderr, "chmod: %s: %s\n", argv[i], strerror(errno));
            status = 1;
        }
    }
    return status;
}
