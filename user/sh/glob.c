// Pathname expansion: an unquoted * ? or [...] in a word makes it a pattern,
// replaced by the sorted names of the files it matches (or kept as it is if
// none does). Quoted characters reach here escaped with a backslash.
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sh.h"

// [...] at p (just after '['): does it hold c? *end is set past the ']'.
static bool match_class(const char *p, char c, const char **end)
{
    bool negate = *p == '!' || *p == '^';
    bool found = false;
    p += negate;
    const char *first = p;
    while (*p && (*p != ']' || p == first)) {
        char lo = *p == '\\' && p[1] ? *++p : *p;
        char hi = lo;
        if (p[1] == '-' && p[2] && p[2] != ']') {
            p += 2;
            hi = *p == '\\' && p[1] ? *++p : *p;
        }
        found |= lo <= c && c <= hi;
        p++;
    }
    *end = *p ? p + 1 : NULL;
    return found != negate;
}

static bool match(const char *pat, const char *s)
{
    for (; *pat; pat++, s++) {
        if (*pat == '*') {
            for (const char *t = s;; t++) {
                if (match(pat + 1, t))
                    return true;
                if (!*t)
                    return false;
            }
        }
        if (!*s)
            return false;
        if (*pat == '?')
            continue;
        if (*pat == '[') {
            const char *end;
            bool in = match_class(pat + 1, *s, &end);
            if (end) {
                if (!in)
                    return false;
                pat = end - 1;
                continue;
            }
            // an unclosed [ is itself
        }
        if (*pat == '\\' && pat[1])
            pat++;
        if (*pat != *s)
            return false;
    }
    return !*s;
}

static bool has_meta(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\\')
            i++;
        else if (p[i] == '*' || p[i] == '?' || p[i] == '[')
            return true;
    }
    return false;
}

static char *unescape(const char *p, size_t n)
{
    char *s = arena_alloc(n + 1), *o = s;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\\' && i + 1 < n)
            i++;
        *o++ = p[i];
    }
    return s;
}

static char *join(const char *a, const char *b)
{
    char *s = arena_alloc(strlen(a) + strlen(b) + 1);
    strcpy(s, a);
    return strcat(s, b);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

// Expand the rest of the pattern, pat, below the directory base ("" or ending in '/').
static void walk(const char *base, const char *pat, struct strv *out)
{
    const char *slash = strchr(pat, '/');
    size_t n = slash ? (size_t)(slash - pat) : strlen(pat);
    struct stat st;
    if (!has_meta(pat, n)) {
        char *path = join(base, unescape(pat, n));
        if (!slash) {
            if (lstat(path, &st) == 0)
                strv_add(out, path);
        } else {
            walk(join(path, "/"), slash + 1, out);
        }
        return;
    }
    DIR *d = opendir(*base ? base : ".");
    if (!d)
        return;
    char *comp = arena_strndup(pat, n);
    struct strv names = {0};
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        // A leading dot is matched only by a leading dot in the pattern.
        if (e->d_name[0] == '.' && comp[0] != '.')
            continue;
        if (match(comp, e->d_name))
            strv_add(&names, arena_strndup(e->d_name, strlen(e->d_name)));
    }
    closedir(d);
    if (names.n)
        qsort(names.v, names.n, sizeof *names.v, by_name);
    for (size_t i = 0; i < names.n; i++) {
        char *path = join(base, names.v[i]);
        if (!slash)
            strv_add(out, path);
        else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            walk(join(path, "/"), slash + 1, out);
    }
}

void glob_field(const char *pattern, const char *literal, struct strv *out)
{
    size_t before = out->n;
    if (pattern[0] == '/')
        walk("/", pattern + 1, out);
    else
        walk("", pattern, out);
    if (out->n == before)
        strv_add(out, (char *)literal);
}
