// Line editing for an interactive shell on a terminal, as real shells' line
// editors do it: while a line is read, the terminal is put in non-canonical,
// no-echo mode and the editor itself draws the line; the settings it found
// come back before the line is run, so commands start with the terminal as
// it was (and a user's stty stays in force).
//
//   left/right, ^B/^F   move a character     Home/End, ^A/^E   start/end of line
//   backspace, ^H       erase before cursor  Delete, ^D        erase at cursor
//   ^K  erase to the end   ^U  to the start   ^W  the word before the cursor
//   up/down, ^P/^N      history (this shell's lines, in memory)
//   tab                 complete a file name (the first word: a command from
//                       $PATH or a builtin); a second tab lists the choices
//   ^L  clear the screen   ^C  cancel the line   ^D on an empty line: end of input
//
// The screen is redrawn from the changed position on, with ANSI cursor
// movement, so the prompt is never rewritten (except after ^L or a list of
// completions). Lines longer than the terminal's width are not handled: the
// cursor movement assumes one screen line.
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "sh.h"

#define HISTORY_MAX 500
#define CTRL(c) ((c) & 0x1f)

static struct termios shell_tio;   // the terminal as the editor found it
static char *history[HISTORY_MAX]; // oldest first
static size_t history_len;

struct editor {
    char *buf;          // the line, NUL-terminated (malloc)
    size_t len, pos, cap;
    const char *prompt;
    size_t hist;        // the history entry shown; history_len: the new line
    char *pending;      // the new line, kept while history is shown
    int tabs;           // tabs in a row (the second lists the choices)
    char out[4096];     // screen output, written once per key
    size_t outlen;
};

bool lineedit_start(int fd)
{
    return isatty(fd) && tcgetattr(fd, &shell_tio) == 0;
}

// ---- screen output -----------------------------------------------------------
static void out_flush(struct editor *e)
{
    size_t done = 0;
    while (done < e->outlen) {
        ssize_t n = write(2, e->out + done, e->outlen - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    e->outlen = 0;
}

static void out_bytes(struct editor *e, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (e->outlen == sizeof e->out)
            out_flush(e);
        e->out[e->outlen++] = s[i];
    }
}

static void out_str(struct editor *e, const char *s) { out_bytes(e, s, strlen(s)); }

// UTF-8 continuation bytes take no column of their own.
static bool is_cont(char c) { return ((unsigned char)c & 0xc0) == 0x80; }

static size_t columns(const char *s, size_t n)
{
    size_t cols = 0;
    for (size_t i = 0; i < n; i++)
        cols += !is_cont(s[i]);
    return cols;
}

static void cursor_move(struct editor *e, size_t cols, char dir)
{
    if (cols == 0)
        return;
    char seq[32];
    snprintf(seq, sizeof seq, "\033[%zu%c", cols, dir);
    out_str(e, seq);
}

// Redraw from byte `from` (where the cursor is now) to the end, then put
// the cursor at e->pos.
static void redraw_from(struct editor *e, size_t from)
{
    out_bytes(e, e->buf + from, e->len - from);
    out_str(e, "\033[K");
    cursor_move(e, columns(e->buf + e->pos, e->len - e->pos), 'D');
}

// The prompt and the whole line again, on a fresh screen line.
static void redraw_all(struct editor *e)
{
    out_str(e, "\r\033[K");
    out_str(e, e->prompt);
    redraw_from(e, 0);
}

static void move_to(struct editor *e, size_t pos)
{
    if (pos < e->pos)
        cursor_move(e, columns(e->buf + pos, e->pos - pos), 'D');
    else
        out_bytes(e, e->buf + e->pos, pos - e->pos);
    e->pos = pos;
}

// ---- editing -----------------------------------------------------------------
static void reserve(struct editor *e, size_t more)
{
    if (e->len + more + 1 <= e->cap)
        return;
    while (e->len + more + 1 > e->cap)
        e->cap = e->cap ? 2 * e->cap : 128;
    char *p = realloc(e->buf, e->cap);
    if (!p) {
        sh_error("out of memory");
        exit(2);
    }
    e->buf = p;
}

static void insert(struct editor *e, const char *s, size_t n)
{
    reserve(e, n);
    memmove(e->buf + e->pos + n, e->buf + e->pos, e->len - e->pos + 1);
    memcpy(e->buf + e->pos, s, n);
    e->len += n;
    size_t from = e->pos;
    e->pos += n;
    if (e->pos == e->len)
        out_bytes(e, s, n);   // typing at the end: just echo
    else
        redraw_from(e, from);
}

// Delete bytes [from, to), the cursor at or after to goes with them.
static void delete_range(struct editor *e, size_t from, size_t to)
{
    if (from >= to)
        return;
    move_to(e, from);
    memmove(e->buf + from, e->buf + to, e->len - to + 1);
    e->len -= to - from;
    redraw_from(e, from);
}

static size_t char_before(struct editor *e, size_t pos)
{
    while (pos > 0 && is_cont(e->buf[--pos]))
        ;
    return pos;
}

static size_t char_after(struct editor *e, size_t pos)
{
    if (pos < e->len)
        pos++;
    while (pos < e->len && is_cont(e->buf[pos]))
        pos++;
    return pos;
}

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

// ^W: the blanks before the cursor and the word before them.
static void erase_word(struct editor *e)
{
    size_t p = e->pos;
    while (p > 0 && is_blank(e->buf[p - 1]))
        p--;
    while (p > 0 && !is_blank(e->buf[p - 1]))
        p--;
    delete_range(e, p, e->pos);
}

static void set_line(struct editor *e, const char *s)
{
    move_to(e, 0);
    e->len = 0;
    reserve(e, strlen(s));
    strcpy(e->buf, s);
    e->len = e->pos = strlen(s);
    redraw_from(e, 0);
}

// ---- history -------------------------------------------------------------------
static void history_add(const char *line)
{
    if (!*line || (history_len && strcmp(history[history_len - 1], line) == 0))
        return;
    if (history_len == HISTORY_MAX) {
        free(history[0]);
        memmove(history, history + 1, (HISTORY_MAX - 1) * sizeof *history);
        history_len--;
    }
    history[history_len++] = xstrdup(line);
}

// Show the entry `step` away (-1: older, +1: newer); the new line is kept
// aside while older ones are shown.
static void history_move(struct editor *e, int step)
{
    if ((step < 0 && e->hist == 0) || (step > 0 && e->hist == history_len)) {
        out_str(e, "\a");
        return;
    }
    if (e->hist == history_len) {
        free(e->pending);
        e->pending = xstrdup(e->buf);
    }
    e->hist += step;
    set_line(e, e->hist == history_len ? e->pending : history[e->hist]);
}

// ---- completion ------------------------------------------------------------------
struct names { char **v; size_t n, cap; };

static void names_add(struct names *a, const char *name, bool dir)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 16;
        char **v = realloc(a->v, a->cap * sizeof *v);
        if (!v)
            return;   // out of memory: fewer choices
        a->v = v;
    }
    char *s = malloc(strlen(name) + 2);
    if (!s)
        return;
    strcpy(s, name);
    if (dir)
        strcat(s, "/");   // directories end with '/', so completing goes on into them
    a->v[a->n++] = s;
}

static void names_free(struct names *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

// The entries of directory dir starting with prefix; with commands, only
// executable files (no directories).
static void add_dir_matches(struct names *a, const char *dir, const char *prefix, bool commands)
{
    DIR *d = opendir(*dir ? dir : ".");
    if (!d)
        return;
    size_t plen = strlen(prefix);
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *n = de->d_name;
        if (strncmp(n, prefix, plen) != 0 || !strcmp(n, ".") || !strcmp(n, ".."))
            continue;
        if (n[0] == '.' && prefix[0] != '.')
            continue;
        char *path = malloc(strlen(dir) + strlen(n) + 2);
        if (!path)
            break;
        sprintf(path, "%s%s%s", dir, *dir && dir[strlen(dir) - 1] != '/' ? "/" : "", n);
        struct stat st;
        bool isdir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
        if (!commands)
            names_add(a, n, isdir);
        else if (!isdir && access(path, X_OK) == 0)
            names_add(a, n, false);
        free(path);
    }
    closedir(d);
}

static void add_commands(struct names *a, const char *prefix)
{
    for (size_t i = 0; builtin_name(i); i++)
        if (strncmp(builtin_name(i), prefix, strlen(prefix)) == 0)
            names_add(a, builtin_name(i), false);
    const char *path = var_get("PATH");
    while (path && *path) {
        size_t n = strcspn(path, ":");
        char *dir = malloc(n + 1);
        if (!dir)
            return;
        memcpy(dir, path, n);
        dir[n] = 0;
        add_dir_matches(a, n ? dir : ".", prefix, true);
        free(dir);
        path += n + (path[n] == ':');
    }
}

// Characters that must be quoted in a word the shell will read back.
static bool needs_quote(char c) { return c && strchr(" \t\n\\'\"$&|;<>()*?[]`#", c); }

static void insert_quoted(struct editor *e, const char *s)
{
    for (; *s; s++) {
        if (needs_quote(*s))
            insert(e, "\\", 1);
        insert(e, s, 1);
    }
}

static bool in_command_position(struct editor *e, size_t start)
{
    while (start > 0 && is_blank(e->buf[start - 1]))
        start--;
    return start == 0 || strchr(";|&(", e->buf[start - 1]);
}

static void list_choices(struct editor *e, struct names *a)
{
    out_str(e, "\r\n");
    for (size_t i = 0; i < a->n; i++) {
        out_str(e, a->v[i]);
        out_str(e, i + 1 < a->n ? "  " : "\r\n");
    }
    redraw_all(e);
}

// Where the word before the cursor starts: after a blank that is not
// escaped, or an operator.
static size_t word_start(struct editor *e)
{
    size_t start = e->pos;
    while (start > 0 && !(is_blank(e->buf[start - 1]) && (start < 2 || e->buf[start - 2] != '\\')) &&
           !strchr(";|&<>()", e->buf[start - 1]))
        start--;
    return start;
}

// The word from start to the cursor, its backslashes removed (malloc).
static char *unescaped_word(struct editor *e, size_t start)
{
    char *word = malloc(e->pos - start + 1), *w = word;
    if (!word)
        return NULL;
    for (size_t i = start; i < e->pos; i++)
        if (e->buf[i] != '\\' || (i > start && e->buf[i - 1] == '\\'))
            *w++ = e->buf[i];
    *w = 0;
    return word;
}

// Sorted, each once (a command can be in two PATH directories).
static void sort_unique(struct names *a)
{
    qsort(a->v, a->n, sizeof *a->v, name_cmp);
    size_t n = 0;
    for (size_t i = 0; i < a->n; i++)
        if (n == 0 || strcmp(a->v[n - 1], a->v[i]) != 0)
            a->v[n++] = a->v[i];
        else
            free(a->v[i]);
    a->n = n;
}

static size_t common_prefix(struct names *a)
{
    size_t common = a->n ? strlen(a->v[0]) : 0;
    for (size_t i = 1; i < a->n; i++)
        for (size_t k = 0; k < common; k++)
            if (a->v[i][k] != a->v[0][k]) {
                common = k;
                break;
            }
    return common;
}

// Tab: complete the word before the cursor as far as all choices agree; one
// choice is completed with a space after it (a directory with its '/').
static void complete(struct editor *e)
{
    size_t start = word_start(e);
    char *word = unescaped_word(e, start);
    if (!word)
        return;
    struct names a = {0};
    char *slash = strrchr(word, '/');
    const char *base = slash ? slash + 1 : word;
    if (!slash && in_command_position(e, start)) {
        add_commands(&a, word);
    } else {
        char *dir = slash ? strndup(word, (size_t)(slash - word) + 1) : strdup("");
        if (dir)
            add_dir_matches(&a, dir, base, false);
        free(dir);
    }
    sort_unique(&a);
    size_t blen = strlen(base), common = common_prefix(&a);
    if (a.n == 1) {
        insert_quoted(e, a.v[0] + blen);
        if (a.v[0][common - 1] != '/')
            insert(e, " ", 1);
    } else if (common > blen) {
        a.v[0][common] = 0;
        insert_quoted(e, a.v[0] + blen);
    } else if (a.n > 1 && e->tabs > 1) {
        list_choices(e, &a);
    } else {
        out_str(e, "\a");
    }
    names_free(&a);
    free(word);
}

// ---- keys -----------------------------------------------------------------------
// One byte from the terminal: the byte, or -1 at end of input or an error.
static int read_byte(void)
{
    for (;;) {
        unsigned char c;
        ssize_t n = read(0, &c, 1);
        if (n == 1)
            return c;
        if (n < 0 && errno == EINTR)
            continue;
        return -1;
    }
}

enum { K_UP = 256, K_DOWN, K_RIGHT, K_LEFT, K_HOME, K_END, K_DELETE, K_UNKNOWN };

// After ESC: CSI (ESC [ params final) and SS3 (ESC O final) sequences.
static int read_escape(void)
{
    int c = read_byte();
    if (c != '[' && c != 'O')
        return K_UNKNOWN;
    int num = 0;
    while ((c = read_byte()) >= 0 && ((c >= '0' && c <= '9') || c == ';'))
        num = c == ';' ? num : num * 10 + (c - '0');
    switch (c) {
    case 'A': return K_UP;
    case 'B': return K_DOWN;
    case 'C': return K_RIGHT;
    case 'D': return K_LEFT;
    case 'H': return K_HOME;
    case 'F': return K_END;
    case '~':
        return num == 1 || num == 7 ? K_HOME : num == 4 || num == 8 ? K_END
             : num == 3 ? K_DELETE : K_UNKNOWN;
    }
    return K_UNKNOWN;
}

enum result { R_MORE, R_LINE, R_EOF, R_CANCEL };

static enum result key(struct editor *e, int c)
{
    e->tabs = c == '\t' ? e->tabs + 1 : 0;
    switch (c) {
    case '\r': case '\n':
        move_to(e, e->len);
        out_str(e, "\r\n");
        return R_LINE;
    case CTRL('C'):
        move_to(e, e->len);
        out_str(e, "^C\r\n");
        return R_CANCEL;
    case CTRL('D'):
        if (e->len == 0) {
            out_str(e, "\r\n");
            return R_EOF;
        }
        delete_range(e, e->pos, char_after(e, e->pos));
        break;
    case K_DELETE: delete_range(e, e->pos, char_after(e, e->pos)); break;
    case 0x7f: case CTRL('H'): delete_range(e, char_before(e, e->pos), e->pos); break;
    case K_LEFT: case CTRL('B'): move_to(e, char_before(e, e->pos)); break;
    case K_RIGHT: case CTRL('F'): move_to(e, char_after(e, e->pos)); break;
    case K_HOME: case CTRL('A'): move_to(e, 0); break;
    case K_END: case CTRL('E'): move_to(e, e->len); break;
    case CTRL('K'): delete_range(e, e->pos, e->len); break;
    case CTRL('U'): delete_range(e, 0, e->pos); break;
    case CTRL('W'): erase_word(e); break;
    case K_UP: case CTRL('P'): history_move(e, -1); break;
    case K_DOWN: case CTRL('N'): history_move(e, +1); break;
    case CTRL('L'): out_str(e, "\033[H\033[2J"); redraw_all(e); break;
    case '\t': complete(e); break;
    default:
        if (c >= 0x20 && c < 0x7f) {
            char ch = (char)c;
            insert(e, &ch, 1);
        } else if (c >= 0x80 && c < 0x100) { // UTF-8: its bytes go in as they come
            char ch = (char)c;
            insert(e, &ch, 1);
        }
    }
    return R_MORE;
}

// The terminal for editing: bytes as they are typed, nothing echoed, and ^C,
// ^Z, ^\ arrive as keys (the editor handles ^C; the others do nothing here).
static void raw_mode(void)
{
    struct termios t = shell_tio;
    t.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG | IEXTEN);
    t.c_iflag &= ~(tcflag_t)(ICRNL | IXON);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    tcsetattr(0, TCSADRAIN, &t);
}

int lineedit_read(const char *prompt, char **line)
{
    static struct editor e;
    e.prompt = prompt;
    e.len = e.pos = 0;
    e.tabs = 0;
    e.hist = history_len;
    reserve(&e, 0);
    e.buf[0] = 0;
    tcgetattr(0, &shell_tio); // the settings now (on failure: the last ones)
    raw_mode();
    out_str(&e, prompt);
    out_flush(&e);
    enum result r = R_MORE;
    while (r == R_MORE) {
        int c = read_byte();
        if (c < 0) {
            r = R_EOF;
            break;
        }
        r = key(&e, c == 033 ? read_escape() : c);
        out_flush(&e);
    }
    tcsetattr(0, TCSADRAIN, &shell_tio);
    free(e.pending);
    e.pending = NULL;
    if (r != R_LINE)
        return r == R_EOF ? 0 : -1;
    history_add(e.buf);
    reserve(&e, 1);
    e.buf[e.len] = '\n';
    e.buf[e.len + 1] = 0;
    *line = e.buf;
    return 1;
}
