// echo [-n] [word...]: print the words separated by spaces; -n: no newline.
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int i = 1;
    int newline = 1;
    if (i < argc && strcmp(argv[i], "-n") == 0) {
        newline = 0;
        i++;
    }
    for (int first = i; i < argc; i++) {
        if (i > first)
            putchar(' ');
        fputs(argv[i], stdout);
    }
    if (newline)
        putchar('\n');
    return fflush(stdout) == 0 ? 0 : 1;
}
