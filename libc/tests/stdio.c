// Buffered stdio on real files: write through fopen, read back in several
// ways, seek, unget, append, line reading, scanf, and the interaction of
// buffering with the file position.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tap.h"

static char path[64];

// Several threads print whole lines to one stream: each line must come out
// intact (stdio locks the stream for the length of each call).
static FILE *shared;
static void *printer(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < 2000; i++)
        fprintf(shared, "thread %ld line %d %s\n", id, i, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    return NULL;
}

static void threads(void)
{
    shared = fopen(path, "w");
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, printer, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    fclose(shared);
    FILE *f = fopen(path, "r");
    char line[128];
    int next[4] = {0}, bad = 0, n = 0;
    while (fgets(line, sizeof line, f)) {
        long id;
        int i;
        char tail[64];
        if (sscanf(line, "thread %ld line %d %63s", &id, &i, tail) != 3 || id < 0 || id > 3 ||
            i != next[id] || strlen(tail) != 32)
            bad++;
        else
            next[id]++;
        n++;
    }
    fclose(f);
    check(bad == 0 && n == 8000, "4 threads x 2000 fprintf lines to one stream, none torn (%d bad)",
          bad);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/libc-stdio-%d", getpid());
    FILE *f = fopen(path, "w");
    check(f != NULL, "fopen for writing");
    for (int i = 0; i < 1000; i++)
        fprintf(f, "line %d\n", i);
    fputs("tail", f);
    fputc('!', f);
    struct stat st;
    stat(path, &st);
    check(st.st_size < 8895, "output is buffered before fclose (%ld bytes on disk)", (long)st.st_size);
    check(fclose(f) == 0, "fclose");
    stat(path, &st);
    check(st.st_size == 8890 + 5, "fclose flushed everything (%ld bytes)", (long)st.st_size);

    f = fopen(path, "r");
    char line[64];
    int n = 0, ok = 1;
    while (fgets(line, sizeof line, f)) {
        char want[64];
        snprintf(want, sizeof want, n < 1000 ? "line %d\n" : "tail!", n);
        ok &= strcmp(line, want) == 0;
        n++;
    }
    check(ok && n == 1001, "fgets reads back every line (%d)", n);
    check(feof(f) && !ferror(f), "feof after the last line");
    rewind(f);
    check(!feof(f) && fgetc(f) == 'l', "rewind clears EOF");
    check(ungetc('X', f) == 'X' && fgetc(f) == 'X' && fgetc(f) == 'i', "ungetc pushes back");
    check(fseek(f, 10, SEEK_SET) == 0 && ftell(f) == 10 && fgetc(f) == 'e', "fseek/ftell");
    check(fseek(f, -5, SEEK_END) == 0 && fgets(line, sizeof line, f) && strcmp(line, "tail!") == 0,
          "fseek from the end");
    fseek(f, 0, SEEK_SET);
    char block[100];
    check(fread(block, 1, 100, f) == 100 && memcmp(block, "line 0\nline 1\n", 14) == 0,
          "fread");
    check(ftell(f) == 100, "ftell after fread (%ld)", ftell(f));
    static char all[9000];
    fseek(f, 0, SEEK_SET);
    size_t got = fread(all, 1, sizeof all, f);
    check(got == 8895 && feof(f), "a large fread reads all (%zu)", got);
    fseek(f, 0, SEEK_SET);
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len = getline(&buf, &cap, f);
    check(len == 7 && strcmp(buf, "line 0\n") == 0, "getline");
    int num = -1;
    char word[16];
    check(fscanf(f, "%15s %d", word, &num) == 2 && strcmp(word, "line") == 0 && num == 1,
          "fscanf");
    check(fgetc(f) == '\n', "fscanf leaves the rest of the line");
    free(buf);
    fclose(f);

    f = fopen(path, "a");
    fputs("\nappended", f);
    fclose(f);
    f = fopen(path, "r+");
    fseek(f, -8, SEEK_END);
    check(fgets(line, sizeof line, f) && strcmp(line, "appended") == 0, "append mode writes at the end");
    fseek(f, 0, SEEK_SET);
    fputs("LINE", f);
    fseek(f, 0, SEEK_SET);
    check(fgets(line, sizeof line, f) && strcmp(line, "LINE 0\n") == 0, "r+: write then read back");
    fclose(f);

    errno = 0;
    check(fopen("/nonexistent/dir/file", "r") == NULL && errno == ENOENT, "fopen failure sets errno");
    check(fopen(path, "q") == NULL && errno == EINVAL, "fopen with a bad mode: EINVAL");

    int fd = open(path, O_RDONLY);
    f = fdopen(fd, "r");
    check(f && fileno(f) == fd && fgetc(f) == 'L', "fdopen");
    fclose(f);

    // Unbuffered and line-buffered modes.
    f = fopen(path, "w");
    setvbuf(f, NULL, _IONBF, 0);
    fputs("abc", f);
    stat(path, &st);
    check(st.st_size == 3, "unbuffered stream writes at once");
    fclose(f);
    f = fopen(path, "w");
    setvbuf(f, NULL, _IOLBF, 0);
    fputs("ab", f);
    stat(path, &st);
    long before = st.st_size;
    fputs("c\nd", f);
    stat(path, &st);
    check(before == 0 && st.st_size == 4, "line-buffered stream flushes at newline");
    fclose(f);

    int a, b;
    char s[8];
    double d;
    check(sscanf("12 0x1f abc 2.5", "%d %i %7s %lf", &a, &b, s, &d) == 4 && a == 12 && b == 31 &&
          strcmp(s, "abc") == 0 && d == 2.5, "sscanf of mixed conversions");
    check(sscanf("key=value;", "%[^=]=%[^;]", s, line) == 2 && strcmp(s, "key") == 0 &&
          strcmp(line, "value") == 0, "sscanf with scan sets");
    check(sscanf("", "%d", &a) == EOF, "sscanf of empty input returns EOF");
    check(sscanf("x", "%d", &a) == 0, "sscanf matching failure returns 0");
    threads();
    check(remove(path) == 0 && access(path, F_OK) == -1, "remove");
    return tap_done();
}
