// env [-i] [NAME=value...] [command [arg...]]: print the environment, or run
// command with the environment changed; exits with the command's status.
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv)
{
    int i = 1;
    if (i < argc && strcmp(argv[i], "-i") == 0) {
        static char *empty[] = {NULL};
        environ = empty;
        i++;
    }
    for (; i < argc && strchr(argv[i], '=') && argv[i][0] != '='; i++) {
        char *eq = strchr(argv[i], '=');
        *eq = 0;
        if (setenv(argv[i], eq + 1, 1) < 0) {
            fprintf(stderr, "env: %s: %s\n", argv[i], strerror(errno));
            return 125;
        }
    }
    if (i >= argc) {
        for (char **e = environ; *e; e++)
            puts(*e);
        return 0;
    }
    pid_t pid;
    int err = posix_spawnp(&pid, argv[i], NULL, NULL, argv + i, environ);
    if (err) {
        fprintf(stderr, "env: %s: %s\n", argv[i], strerror(err));
        return err == ENOENT ? 127 : 126;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return 125;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
