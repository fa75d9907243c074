// uname [-asnrvm]: print system information (default -s: the kernel's name).
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

int main(int argc, char **argv)
{
    struct utsname u;
    if (uname(&u) < 0) {
        fprintf(stderr, "uname: %s\n", strerror(errno));
        return 1;
    }
    const char *fields[] = {u.sysname, u.nodename, u.release, u.version, u.machine};
    const char *letters = "snrvm";
    int want[5] = {0};
    int any = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-' || !argv[i][1]) {
            fprintf(stderr, "usage: uname [-asnrvm]\n");
            return 2;
        }
        for (char *p = argv[i] + 1; *p; p++) {
            const char *l = strchr(letters, *p);
            if (*p == 'a') {
                for (int k = 0; k < 5; k++)
                    want[k] = 1;
            } else if (l) {
                want[l - letters] = 1;
            } else {
                fprintf(stderr, "uname: unknown option -%c\n", *p);
                return 2;
            }
            any = 1;
        }
    }
    if (!any)
        want[0] = 1;
    const char *sep = "";
    for (int k = 0; k < 5; k++) {
        if (want[k]) {
            printf("%s%s", sep, fields[k]);
            sep = " ";
        }
    }
    putchar('\n');
    return 0;
}
