// pwd: print the current working directory.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
    char buf[4096];
    if (!getcwd(buf, sizeof buf)) {
        fprintf(stderr, "pwd: %s\n", strerror(errno));
        return 1;
    }
    puts(buf);
    return 0;
}
