// Buffered standard I/O.
#pragma once
#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct _FILE FILE;
typedef long fpos_t;

#define EOF (-1)
#define BUFSIZ 4096
#define FILENAME_MAX 4096
#define FOPEN_MAX 1000
#define L_tmpnam 20
#define TMP_MAX 10000
#define P_tmpdir "/tmp"
#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2
#define _IOFBF 0
#define _IOLBF 1
#define _IONBF 2

extern FILE *const stdin;
extern FILE *const stdout;
extern FILE *const stderr;
#define stdin stdin
#define stdout stdout
#define stderr stderr

FILE *fopen(const char *restrict path, const char *restrict mode);
FILE *fdopen(int fd, const char *mode);
FILE *freopen(const char *restrict path, const char *restrict mode, FILE *restrict f);
FILE *fmemopen(void *restrict buf, size_t size, const char *restrict mode);
FILE *tmpfile(void);
int fclose(FILE *f);
int fflush(FILE *f);
int setvbuf(FILE *restrict f, char *restrict buf, int mode, size_t size);
void setbuf(FILE *restrict f, char *restrict buf);
int fileno(FILE *f);
int feof(FILE *f);
int ferror(FILE *f);
void clearerr(FILE *f);
int fseek(FILE *f, long off, int whence);
int fseeko(FILE *f, off_t off, int whence);
long ftell(FILE *f);
off_t ftello(FILE *f);
void rewind(FILE *f);
int fgetpos(FILE *restrict f, fpos_t *restrict pos);
int fsetpos(FILE *f, const fpos_t *pos);
void flockfile(FILE *f);
void funlockfile(FILE *f);

int fgetc(FILE *f);
int getc(FILE *f);
int getchar(void);
int getc_unlocked(FILE *f);
int ungetc(int c, FILE *f);
char *fgets(char *restrict s, int n, FILE *restrict f);
ssize_t getline(char **restrict line, size_t *restrict cap, FILE *restrict f);
ssize_t getdelim(char **restrict line, size_t *restrict cap, int delim, FILE *restrict f);
int fputc(int c, FILE *f);
int putc(int c, FILE *f);
int putchar(int c);
int putc_unlocked(int c, FILE *f);
int fputs(const char *restrict s, FILE *restrict f);
int puts(const char *s);
size_t fread(void *restrict p, size_t size, size_t n, FILE *restrict f);
size_t fwrite(const void *restrict p, size_t size, size_t n, FILE *restrict f);

int printf(const char *restrict fmt, ...) __attribute__((format(printf, 1, 2)));
int fprintf(FILE *restrict f, const char *restrict fmt, ...) __attribute__((format(printf, 2, 3)));
int dprintf(int fd, const char *restrict fmt, ...) __attribute__((format(printf, 2, 3)));
int sprintf(char *restrict s, const char *restrict fmt, ...) __attribute__((format(printf, 2, 3)));
int snprintf(char *restrict s, size_t n, const char *restrict fmt, ...) __attribute__((format(printf, 3, 4)));
int asprintf(char **out, const char *restrict fmt, ...) __attribute__((format(printf, 2, 3)));
int vprintf(const char *restrict fmt, va_list ap);
int vfprintf(FILE *restrict f, const char *restrict fmt, va_list ap);
int vdprintf(int fd, const char *restrict fmt, va_list ap);
int vsprintf(char *restrict s, const char *restrict fmt, va_list ap);
int vsnprintf(char *restrict s, size_t n, const char *restrict fmt, va_list ap);
int vasprintf(char **out, const char *restrict fmt, va_list ap);

int scanf(const char *restrict fmt, ...) __attribute__((format(scanf, 1, 2)));
int fscanf(FILE *restrict f, const char *restrict fmt, ...) __attribute__((format(scanf, 2, 3)));
int sscanf(const char *restrict s, const char *restrict fmt, ...) __attribute__((format(scanf, 2, 3)));
int vscanf(const char *restrict fmt, va_list ap);
int vfscanf(FILE *restrict f, const char *restrict fmt, va_list ap);
int vsscanf(const char *restrict s, const char *restrict fmt, va_list ap);

void perror(const char *s);
int remove(const char *path);
int rename(const char *from, const char *to);
