// grep [-civlnrqF] pattern [file...]: print the lines that match pattern.
// Patterns are a small basic regular expression language: literal characters,
// . (any), [abc] [a-z] [^...] (classes), x* (zero or more), ^ and $ (anchors),
// \x (x literally). -i ignore case, -v non-matching lines, -c count, -l file
// names only, -n line numbers, -r search directories, -q quiet, -F fixed string.
// Exit status: 0 if a line was selected, 1 if none, 2 on error.
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { ANY, CHAR, CLASS };

struct item {
    int kind;
    unsigned char c;             // CHAR
    unsigned char set[256];      // CLASS: set[c] != 0 if c is in it
    int star;                    // repeated zero or more times
};

static struct item *items;
static int nitems, anchor_start, anchor_end;
static int opt_i, opt_v, opt_c, opt_l, opt_n, opt_r, opt_q, opt_F;
static int show_names, errors;

static unsigned char fold(unsigned char c) { return opt_i ? (unsigned char)tolower(c) : c; }

// Parse [...] at p (just after '['); returns the position after ']', or NULL.
static const char *parse_class(const char *p, struct item *it)
{
    int negate = *p == '^';
    p += negate;
    memset(it->set, 0, sizeof it->set);
    const char *first = p;
    while (*p && (*p != ']' || p == first)) {
        unsigned char lo = (unsigned char)*p, hi = lo;
        if (p[1] == '-' && p[2] && p[2] != ']') {
            hi = (unsigned char)p[2];
            p += 3;
        } else {
            p++;
        }
        for (int c = lo; c <= hi; c++)
            it->set[fold((unsigned char)c)] = 1;
    }
    if (!*p)
        return NULL;
    if (negate)
        for (int c = 0; c < 256; c++)
            it->set[c] = !it->set[c];
    return p + 1;
}

static int compile(const char *pat)
{
    items = calloc(strlen(pat) + 1, sizeof *items);
    if (!items)
        return -1;
    if (!opt_F && *pat == '^') {
        anchor_start = 1;
        pat++;
    }
    while (*pat) {
        if (!opt_F && pat[0] == '$' && !pat[1]) {
            anchor_end = 1;
            break;
        }
        struct item *it = &items[nitems++];
        if (opt_F) {
            it->kind = CHAR;
            it->c = fold((unsigned char)*pat++);
            continue;
        }
        if (*pat == '*' && nitems == 1) {          // a leading * is literal
            it->kind = CHAR;
            it->c = '*';
            pat++;
        } else if (*pat == '.') {
            it->kind = ANY;
            pat++;
        } else if (*pat == '[') {
            it->kind = CLASS;
            if (!(pat = parse_class(pat + 1, it)))
                return -1;
        } else {
            if (*pat == '\\' && pat[1])
                pat++;
            it->kind = CHAR;
            it->c = fold((unsigned char)*pat++);
        }
        if (*pat == '*' && !opt_F) {
            it->star = 1;
            pat++;
        }
    }
    return 0;
}

static int item_matches(const struct item *it, unsigned char c)
{
    c = fold(c);
    return it->kind == ANY || (it->kind == CHAR ? it->c == c : it->set[c]);
}

static int match_here(int k, const char *t)
{
    // LAB grep BEGIN
    for (; k < nitems; k++) {
        const struct item *it = &items[k];
        if (it->star) {
            // Try every number of repetitions, longest last.
            for (;; t++) {
                if (match_here(k + 1, t))
                    return 1;
                if (!*t || !item_matches(it, (unsigned char)*t))
                    return 0;
            }
        }
        if (!*t || !item_matches(it, (unsigned char)*t))
            return 0;
        t++;
    }
    return !anchor_end || !*t;
    // LAB grep SKELETON
    // // TODO (labs/grep): 1 if items[k..] match the text at t (anchor_end: up to
    // // its end). item_matches tells whether one item takes one character.
    // (void)k;
    // (void)t;
    // (void)item_matches;
    // return 0;
    // LAB grep END
}

static int matches(const char *line)
{
    if (anchor_start)
        return match_here(0, line);
    for (const char *t = line;; t++) {
        if (match_here(0, t))
            return 1;
        if (!*t)
            return 0;
    }
}

// A line without its newline, in a buffer that grows; NULL at end of file.
static char *read_line(FILE *f, char **buf, size_t *cap)
{
    size_t len = 0;
    int c;
    while ((c = getc(f)) != EOF && c != '\n') {
        if (len + 2 > *cap) {
            char *p = realloc(*buf, *cap = *cap ? 2 * *cap : 256);
            if (!p)
                return NULL;
            *buf = p;
        }
        (*buf)[len++] = (char)c;
    }
    if (c == EOF && len == 0)
        return NULL;
    if (!*buf && !(*buf = malloc(*cap = 256)))
        return NULL;
    (*buf)[len] = 0;
    return *buf;
}

// Search one open file; returns the number of selected lines.
static long search(FILE *f, const char *name)
{
    static char *buf;
    static size_t cap;
    long count = 0, lineno = 0;
    char *line;
    while ((line = read_line(f, &buf, &cap)) != NULL) {
        lineno++;
        if (matches(line) == opt_v)
            continue;
        count++;
        if (opt_q || opt_l)
            break;
        if (opt_c)
            continue;
        if (show_names)
            printf("%s:", name);
        if (opt_n)
            printf("%ld:", lineno);
        puts(line);
    }
    if (opt_c && !opt_q)
        show_names ? printf("%s:%ld\n", name, count) : printf("%ld\n", count);
    if (opt_l && count && !opt_q)
        puts(name);
    return count;
}

static long search_path(const char *path);

static long search_dir(const char *dir)
{
    // LAB grep BEGIN
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "grep: %s: %s\n", dir, strerror(errno));
        errors = 1;
        return 0;
    }
    long count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = malloc(strlen(dir) + strlen(e->d_name) + 2);
        if (!p)
            break;
        sprintf(p, "%s/%s", dir, e->d_name);
        count += search_path(p);
        free(p);
    }
    closedir(d);
    return count;
    // LAB grep SKELETON
    // // TODO (labs/grep): search every entry of dir but . and .., and sum the counts.
    // fprintf(stderr, "grep: %s: -r is not written yet\n", dir);
    // errors = 1;
    // return 0;
    // LAB grep END
}

static long search_path(const char *path)
{
    if (strcmp(path, "-") == 0)
        return search(stdin, "(standard input)");
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (opt_r)
            return search_dir(path);
        fprintf(stderr, "grep: %s: Is a directory\n", path);
        errors = 1;
        return 0;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "grep: %s: %s\n", path, strerror(errno));
        errors = 1;
        return 0;
    }
    long n = search(f, path);
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        for (char *p = argv[i] + 1; *p; p++) {
            int *flag = *p == 'i' ? &opt_i : *p == 'v' ? &opt_v : *p == 'c' ? &opt_c
                      : *p == 'l' ? &opt_l : *p == 'n' ? &opt_n : *p == 'r' ? &opt_r
                      : *p == 'q' ? &opt_q : *p == 'F' ? &opt_F : NULL;
            if (!flag) {
                fprintf(stderr, "grep: unknown option -%c\n", *p);
                return 2;
            }
            *flag = 1;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "usage: grep [-civlnrqF] pattern [file...]\n");
        return 2;
    }
    if (compile(argv[i++]) < 0) {
        fprintf(stderr, "grep: %s: bad pattern\n", argv[i - 1]);
        return 2;
    }
    long count = 0;
    show_names = argc - i > 1 || opt_r;
    if (i >= argc)
        count = opt_r ? search_path(".") : search_path("-");
    for (; i < argc; i++)
        count += search_path(argv[i]);
    if (opt_q && count)
        return 0;
    return errors ? 2 : count ? 0 : 1;
}
