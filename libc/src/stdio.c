// Buffered streams (FILE): open/close, buffering, reads and writes.
// Each FILE has its own lock, so threads using different streams share no
// state beyond the open-stream list, which only fopen/fclose/fflush(NULL) take.
// fopen opens with O_ANYFD (kernel/uapi/ext.h): a stream promises no
// particular descriptor number, so the kernel may allocate from the calling
// core's own part of the descriptor table, and fopens on different cores
// commute there. (Linux ignores the flag and gives the lowest free number.)
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "stdio_impl.h"

static unsigned char stdin_buf[UNGET + BUFSIZ], stdout_buf[UNGET + BUFSIZ];
static struct _FILE std_files[3] = {
    {.fd = 0, .flags = F_READ | F_NOCLOSE, .bufmode = -1, .base = stdin_buf,
     .buf = stdin_buf + UNGET, .bufsize = BUFSIZ},
    {.fd = 1, .flags = F_WRITE | F_NOCLOSE, .bufmode = -1, .base = stdout_buf,
     .buf = stdout_buf + UNGET, .bufsize = BUFSIZ},
    {.fd = 2, .flags = F_WRITE | F_NOCLOSE, .bufmode = _IONBF},
};
#undef stdin
#undef stdout
#undef stderr
FILE *const stdin = &std_files[0];
FILE *const stdout = &std_files[1];
FILE *const stderr = &std_files[2];

static struct lock list_lock;
static FILE *open_list;

void flockfile(FILE *f) { __lock(&f->lock); }
void funlockfile(FILE *f) { __unlock(&f->lock); }

static void list_add(FILE *f)
{
    __lock(&list_lock);
    f->next = open_list;
    if (open_list)
        open_list->prev = f;
    open_list = f;
    __unlock(&list_lock);
}

static void list_remove(FILE *f)
{
    __lock(&list_lock);
    if (f->prev)
        f->prev->next = f->next;
    else
        open_list = f->next;
    if (f->next)
        f->next->prev = f->prev;
    __unlock(&list_lock);
}

static int parse_mode(const char *mode, int *oflags)
{
    int fl;
    switch (*mode) {
    case 'r': fl = O_RDONLY; break;
    case 'w': fl = O_WRONLY | O_CREAT | O_TRUNC; break;
    case 'a': fl = O_WRONLY | O_CREAT | O_APPEND; break;
    default: errno = EINVAL; return -1;
    }
    for (const char *m = mode + 1; *m; m++) {
        if (*m == '+')
            fl = (fl & ~O_ACCMODE) | O_RDWR;
        else if (*m == 'x')
            fl |= O_EXCL;
        else if (*m == 'e')
            fl |= O_CLOEXEC;
    }
    *oflags = fl;
    return 0;
}

static FILE *file_new(int fd, int oflags)
{
    FILE *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->fd = fd;
    int acc = oflags & O_ACCMODE;
    f->flags = (acc != O_WRONLY ? F_READ : 0) | (acc != O_RDONLY ? F_WRITE : 0) |
               (oflags & O_APPEND ? F_APPEND : 0);
    f->bufmode = -1;  // decided on first use: line-buffered for terminals
    list_add(f);
    return f;
}

FILE *fopen(const char *restrict path, const char *restrict mode)
{
    int oflags;
    if (parse_mode(mode, &oflags) < 0)
        return NULL;
    int fd = open(path, oflags | O_ANYFD, 0666);
    if (fd < 0)
        return NULL;
    FILE *f = file_new(fd, oflags);
    if (!f)
        close(fd);
    return f;
}

FILE *fdopen(int fd, const char *mode)
{
    int oflags;
    if (parse_mode(mode, &oflags) < 0)
        return NULL;
    if (oflags & O_APPEND)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_APPEND);
    return file_new(fd, oflags);
}

FILE *freopen(const char *restrict path, const char *restrict mode, FILE *restrict f)
{
    int oflags;
    fflush(f);
    if (!path || parse_mode(mode, &oflags) < 0) {
        errno = EINVAL;
        return NULL;
    }
    int fd = open(path, oflags, 0666);
    if (fd < 0)
        return NULL;
    __lock(&f->lock);
    if (fd != f->fd) {
        dup2(fd, f->fd);
        close(fd);
    }
    int acc = oflags & O_ACCMODE;
    f->flags = (f->flags & (F_OWNBUF | F_NOCLOSE)) | (acc != O_WRONLY ? F_READ : 0) |
               (acc != O_RDONLY ? F_WRITE : 0) | (oflags & O_APPEND ? F_APPEND : 0);
    f->rpos = f->rend = NULL;
    f->wpos = NULL;
    __unlock(&f->lock);
    return f;
}

FILE *tmpfile(void)
{
    int fd = open("/tmp", O_TMPFILE | O_RDWR | O_ANYFD, 0600);
    if (fd < 0) {
        char name[] = "/tmp/tmpfileXXXXXX";
        fd = mkstemp(name);
        if (fd < 0)
            return NULL;
        unlink(name);
    }
    FILE *f = file_new(fd, O_RDWR);
    if (!f)
        close(fd);
    return f;
}

// Buffer allocation on first use; terminals get line buffering.
static int setup_buffer(FILE *f)
{
    if (f->bufmode < 0)
        f->bufmode = isatty(f->fd) ? _IOLBF : _IOFBF;
    if (f->buf || f->bufmode == _IONBF)
        return 0;
    f->base = malloc(UNGET + BUFSIZ);
    if (!f->base) {
        f->bufmode = _IONBF;
        return 0;
    }
    f->buf = f->base + UNGET;
    f->bufsize = BUFSIZ;
    f->flags |= F_OWNBUF;
    return 0;
}

int setvbuf(FILE *restrict f, char *restrict buf, int mode, size_t size)
{
    if (mode != _IOFBF && mode != _IOLBF && mode != _IONBF) {
        errno = EINVAL;
        return -1;
    }
    __lock(&f->lock);
    f->bufmode = mode;
    if (buf && size > UNGET && mode != _IONBF) {
        if (f->flags & F_OWNBUF)
            free(f->base);
        f->flags &= ~F_OWNBUF;
        f->base = (unsigned char *)buf;
        f->buf = f->base + UNGET;
        f->bufsize = size - UNGET;
    }
    __unlock(&f->lock);
    return 0;
}

void setbuf(FILE *restrict f, char *restrict buf)
{
    setvbuf(f, buf, buf ? _IOFBF : _IONBF, BUFSIZ);
}

static int write_all(FILE *f, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t w = write(f->fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            f->flags |= F_ERR;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int __fflush_unlocked(FILE *f)
{
    if (f->wpos && f->wpos > f->buf) {
        size_t n = (size_t)(f->wpos - f->buf);
        f->wpos = f->buf;
        if (write_all(f, f->buf, n) < 0)
            return EOF;
    }
    // Unread input: give it back to the file position.
    if (f->rpos && f->rpos < f->rend) {
        lseek(f->fd, f->rpos - f->rend, SEEK_CUR);
        f->rpos = f->rend = NULL;
    }
    return 0;
}

int fflush(FILE *f)
{
    if (f) {
        __lock(&f->lock);
        int r = __fflush_unlocked(f);
        __unlock(&f->lock);
        return r;
    }
    int r = 0;
    for (int i = 0; i < 3; i++)
        if (std_files[i].wpos && fflush(&std_files[i]))
            r = EOF;
    __lock(&list_lock);
    for (FILE *p = open_list; p; p = p->next)
        if (p->wpos) {
            __lock(&p->lock);
            if (__fflush_unlocked(p))
                r = EOF;
            __unlock(&p->lock);
        }
    __unlock(&list_lock);
    return r;
}

int fclose(FILE *f)
{
    int r = fflush(f);
    if (f->flags & F_NOCLOSE) {
        close(f->fd);
        return r;
    }
    list_remove(f);
    if (close(f->fd) < 0)
        r = EOF;
    if (f->flags & F_OWNBUF)
        free(f->base);
    free(f);
    return r;
}

// Copy into the buffer, flushing whenever it fills; large writes bypass it.
static size_t buffered_write(FILE *f, const unsigned char *s, size_t n)
{
    if (!f->wpos)
        f->wpos = f->buf;
    size_t room = f->bufsize - (size_t)(f->wpos - f->buf);
    if (n >= room + f->bufsize) {
        if (__fflush_unlocked(f) < 0 || write_all(f, s, n) < 0)
            return 0;
        return n;
    }
    size_t done = 0;
    while (done < n) {
        room = f->bufsize - (size_t)(f->wpos - f->buf);
        size_t k = n - done < room ? n - done : room;
        memcpy(f->wpos, s + done, k);
        f->wpos += k;
        done += k;
        if (f->wpos == f->buf + f->bufsize && __fflush_unlocked(f) < 0)
            return 0;
    }
    return n;
}

size_t __fwrite_unlocked(const void *p, size_t n, FILE *f)
{
    const unsigned char *s = p;
    if (!(f->flags & F_WRITE)) {
        f->flags |= F_ERR;
        errno = EBADF;
        return 0;
    }
    if (f->rpos) {  // switching from reading to writing
        __fflush_unlocked(f);
        f->rpos = f->rend = NULL;
    }
    setup_buffer(f);
    if (f->bufmode == _IONBF || !f->buf)
        return write_all(f, s, n) < 0 ? 0 : n;
    if (f->bufmode == _IOLBF) {
        // Everything through the last newline goes out now; the rest waits.
        const unsigned char *nl = memrchr(s, '\n', n);
        if (nl) {
            size_t k = (size_t)(nl - s) + 1;
            if (buffered_write(f, s, k) < k || __fflush_unlocked(f) < 0)
                return 0;
            return k + buffered_write(f, s + k, n - k);
        }
    }
    return buffered_write(f, s, n);
}

size_t fwrite(const void *restrict p, size_t size, size_t n, FILE *restrict f)
{
    size_t total;
    if (__builtin_mul_overflow(size, n, &total) || total == 0)
        return 0;
    __lock(&f->lock);
    size_t w = __fwrite_unlocked(p, total, f);
    __unlock(&f->lock);
    return w / size;
}

int fputc(int c, FILE *f)
{
    unsigned char ch = (unsigned char)c;
    __lock(&f->lock);
    size_t w = __fwrite_unlocked(&ch, 1, f);
    __unlock(&f->lock);
    return w ? ch : EOF;
}
int putc(int c, FILE *f) { return fputc(c, f); }
int putc_unlocked(int c, FILE *f)
{
    unsigned char ch = (unsigned char)c;
    return __fwrite_unlocked(&ch, 1, f) ? ch : EOF;
}
int putchar(int c) { return fputc(c, stdout); }

int fputs(const char *restrict s, FILE *restrict f)
{
    size_t n = strlen(s);
    __lock(&f->lock);
    size_t w = __fwrite_unlocked(s, n, f);
    __unlock(&f->lock);
    return w == n ? 0 : EOF;
}

int puts(const char *s)
{
    size_t n = strlen(s);
    __lock(&stdout->lock);
    int r = __fwrite_unlocked(s, n, stdout) == n && __fwrite_unlocked("\n", 1, stdout) == 1;
    __unlock(&stdout->lock);
    return r ? 0 : EOF;
}

// Refill the read buffer of a buffered stream; returns bytes now available
// (0 at EOF or error).
static size_t fill(FILE *f)
{
    if (!(f->flags & F_READ)) {
        f->flags |= F_ERR;
        errno = EBADF;
        return 0;
    }
    if (f->wpos) {  // switching from writing to reading
        if (__fflush_unlocked(f) < 0)
            return 0;
        f->wpos = NULL;
    }
    // Reading a line-buffered or unbuffered stream flushes stdout first, so
    // prompts appear before input is awaited.
    if (f->bufmode == _IOLBF && f != stdout)
        fflush(stdout);
    setup_buffer(f);
    unsigned char *buf = f->buf;
    ssize_t r;
    do
        r = read(f->fd, buf, f->bufsize);
    while (r < 0 && errno == EINTR);
    if (r <= 0) {
        f->flags |= r == 0 ? F_EOF : F_ERR;
        f->rpos = f->rend = NULL;
        return 0;
    }
    f->rpos = buf;
    f->rend = buf + r;
    return (size_t)r;
}

int __fgetc_unlocked(FILE *f)
{
    if (f->rpos && f->rpos < f->rend)
        return *f->rpos++;
    setup_buffer(f);
    if (!f->buf) {
        unsigned char c;
        if (!(f->flags & F_READ)) {
            f->flags |= F_ERR;
            return EOF;
        }
        ssize_t r;
        do
            r = read(f->fd, &c, 1);
        while (r < 0 && errno == EINTR);
        if (r <= 0) {
            f->flags |= r == 0 ? F_EOF : F_ERR;
            return EOF;
        }
        return c;
    }
    if (!fill(f))
        return EOF;
    return *f->rpos++;
}

int fgetc(FILE *f)
{
    __lock(&f->lock);
    int c = __fgetc_unlocked(f);
    __unlock(&f->lock);
    return c;
}
int getc(FILE *f) { return fgetc(f); }
int getc_unlocked(FILE *f) { return __fgetc_unlocked(f); }
int getchar(void) { return fgetc(stdin); }

int ungetc(int c, FILE *f)
{
    if (c == EOF)
        return EOF;
    __lock(&f->lock);
    setup_buffer(f);
    int ok = 0;
    if (f->buf && !f->wpos) {
        if (!f->rpos)
            f->rpos = f->rend = f->buf;
        if (f->rpos > f->base) {
            *--f->rpos = (unsigned char)c;
            f->flags &= ~F_EOF;
            ok = 1;
        }
    }
    __unlock(&f->lock);
    return ok ? (unsigned char)c : EOF;
}

size_t fread(void *restrict p, size_t size, size_t n, FILE *restrict f)
{
    size_t total;
    if (__builtin_mul_overflow(size, n, &total) || total == 0)
        return 0;
    unsigned char *d = p;
    size_t done = 0;
    __lock(&f->lock);
    while (done < total) {
        if (f->rpos && f->rpos < f->rend) {
            size_t k = (size_t)(f->rend - f->rpos);
            if (k > total - done)
                k = total - done;
            memcpy(d + done, f->rpos, k);
            f->rpos += k;
            done += k;
            continue;
        }
        setup_buffer(f);
        if (!f->buf || total - done >= f->bufsize) {
            // Large reads go straight into the caller's memory.
            if (f->wpos && __fflush_unlocked(f) < 0)
                break;
            f->wpos = NULL;
            if (!(f->flags & F_READ)) {
                f->flags |= F_ERR;
                break;
            }
            ssize_t r = read(f->fd, d + done, total - done);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                f->flags |= r == 0 ? F_EOF : F_ERR;
                break;
            }
            done += (size_t)r;
            continue;
        }
        if (!fill(f))
            break;
    }
    __unlock(&f->lock);
    return done / size;
}

char *fgets(char *restrict s, int n, FILE *restrict f)
{
    if (n <= 0)
        return NULL;
    int i = 0;
    __lock(&f->lock);
    while (i < n - 1) {
        int c = __fgetc_unlocked(f);
        if (c == EOF)
            break;
        s[i++] = (char)c;
        if (c == '\n')
            break;
    }
    __unlock(&f->lock);
    if (i == 0)
        return NULL;
    s[i] = 0;
    return s;
}

ssize_t getdelim(char **restrict line, size_t *restrict cap, int delim, FILE *restrict f)
{
    if (!line || !cap) {
        errno = EINVAL;
        return -1;
    }
    size_t len = 0;
    __lock(&f->lock);
    for (;;) {
        int c = __fgetc_unlocked(f);
        if (c == EOF && len == 0) {
            __unlock(&f->lock);
            return -1;
        }
        if (len + 2 > *cap || !*line) {
            size_t nc = *cap < 64 ? 128 : *cap * 2;
            char *nl = realloc(*line, nc);
            if (!nl) {
                __unlock(&f->lock);
                return -1;
            }
            *line = nl;
            *cap = nc;
        }
        if (c == EOF)
            break;
        (*line)[len++] = (char)c;
        if (c == delim)
            break;
    }
    __unlock(&f->lock);
    (*line)[len] = 0;
    return (ssize_t)len;
}

ssize_t getline(char **restrict line, size_t *restrict cap, FILE *restrict f)
{
    return getdelim(line, cap, '\n', f);
}

int fileno(FILE *f) { return f->fd; }
int feof(FILE *f) { return !!(f->flags & F_EOF); }
int ferror(FILE *f) { return !!(f->flags & F_ERR); }
void clearerr(FILE *f)
{
    __lock(&f->lock);
    f->flags &= ~(F_EOF | F_ERR);
    __unlock(&f->lock);
}

int fseeko(FILE *f, off_t off, int whence)
{
    __lock(&f->lock);
    // SEEK_CUR is relative to the logical position, which lags the fd's by
    // the unread bytes; __fflush_unlocked gives those back first.
    int r = __fflush_unlocked(f);
    f->wpos = NULL;
    f->rpos = f->rend = NULL;
    if (r == 0 && lseek(f->fd, off, whence) < 0)
        r = -1;
    if (r == 0)
        f->flags &= ~F_EOF;
    __unlock(&f->lock);
    return r ? -1 : 0;
}
int fseek(FILE *f, long off, int whence) { return fseeko(f, off, whence); }

off_t ftello(FILE *f)
{
    __lock(&f->lock);
    off_t pos = lseek(f->fd, 0, SEEK_CUR);
    if (pos >= 0) {
        if (f->rpos)
            pos -= f->rend - f->rpos;
        if (f->wpos)
            pos += f->wpos - f->buf;
    }
    __unlock(&f->lock);
    return pos;
}
long ftell(FILE *f) { return ftello(f); }
void rewind(FILE *f)
{
    fseeko(f, 0, SEEK_SET);
    clearerr(f);
}
int fgetpos(FILE *restrict f, fpos_t *restrict pos)
{
    off_t p = ftello(f);
    if (p < 0)
        return -1;
    *pos = p;
    return 0;
}
int fsetpos(FILE *f, const fpos_t *pos) { return fseeko(f, *pos, SEEK_SET); }

int remove(const char *path)
{
    int r = unlink(path);
    if (r < 0 && errno == EISDIR)
        r = rmdir(path);
    return r;
}

void perror(const char *s)
{
    const char *msg = strerror(errno);
    if (s && *s)
        fprintf(stderr, "%s: %s\n", s, msg);
    else
        fprintf(stderr, "%s\n", msg);
}

// At exit: flush everything (no locking: other threads may be stopped mid-call).
void __stdio_exit(void)
{
    for (int i = 0; i < 3; i++)
        __fflush_unlocked(&std_files[i]);
    for (FILE *p = open_list; p; p = p->next)
        __fflush_unlocked(p);
}

// fork() copies only the calling thread: hold every stream's lock across it,
// so the child cannot inherit a stream another thread was in the middle of.
void __stdio_atfork(int phase)
{
    if (phase == 0) {
        __lock(&list_lock);
        for (int i = 0; i < 3; i++)
            __lock(&std_files[i].lock);
        for (FILE *p = open_list; p; p = p->next)
            __lock(&p->lock);
        return;
    }
    for (int i = 0; i < 3; i++)
        phase == 1 ? __unlock(&std_files[i].lock) : (void)(std_files[i].lock.v = 0);
    for (FILE *p = open_list; p; p = p->next)
        phase == 1 ? __unlock(&p->lock) : (void)(p->lock.v = 0);
    phase == 1 ? __unlock(&list_lock) : (void)(list_lock.v = 0);
}
