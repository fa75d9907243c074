// The kernel command line: space-separated words, each `key` or `key=value`;
// double quotes keep spaces inside a word (RUN="ls -l /").
#include "bootinfo.h"
#include "kernel.h"

char kernel_cmdline[BOOTINFO_CMDLINE_MAX];

void cmdline_init(const struct bootinfo *bi)
{
    strlcpy(kernel_cmdline, bi->cmdline, sizeof kernel_cmdline);
}

// The word at *p (after any spaces), advancing *p past it; NULL at the end.
// A double-quoted part of a word may hold spaces: RUN="ls -l" is one word.
static const char *next_word(const char **p, size_t *len)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    if (!*s)
        return NULL;
    const char *w = s;
    bool quoted = false;
    for (; *s && (quoted || *s != ' '); s++)
        if (*s == '"')
            quoted = !quoted;
    *len = s - w;
    *p = s;
    return w;
}

// In the command line `line`, the value of the word whose key is `key` (after
// '=', quotes and all), or "" if it is bare; NULL if there is none.
const char *cmdline_find(const char *line, const char *key, size_t *len)
{
    size_t klen = strlen(key), wlen;
    const char *w;
    while ((w = next_word(&line, &wlen)) != NULL) {
        if (wlen >= klen && strncmp(w, key, klen) == 0 && (wlen == klen || w[klen] == '=')) {
            const char *v = wlen == klen ? w + klen : w + klen + 1;
            if (len)
                *len = w + wlen - v;
            return v;
        }
    }
    return NULL;
}

const char *cmdline_get(const char *key, size_t *len)
{
    return cmdline_find(kernel_cmdline, key, len);
}

// init's environment, as Linux builds it: every key=value word of `line`,
// with its double quotes removed (RUN="ls -l" becomes RUN=ls -l). The strings
// go into buf, pointers to them into envp (NULL-terminated). Returns their
// number, or -1 if buf or envp is too small.
int cmdline_env(const char *line, char *buf, size_t size, char **envp, int max)
{
    int n = 0;
    size_t used = 0, wlen;
    const char *w;
    while ((w = next_word(&line, &wlen)) != NULL) {
        size_t k = 0;
        while (k < wlen && w[k] != '=')
            k++;
        if (k == 0 || k == wlen)
            continue;   // a bare word, or no key
        if (n + 1 >= max || used + wlen + 1 > size)
            return -1;
        envp[n++] = buf + used;
        for (size_t i = 0; i < wlen; i++)
            if (w[i] != '"')
                buf[used++] = w[i];
        buf[used++] = 0;
    }
    envp[n] = NULL;
    return n;
}

bool cmdline_has(const char *key) { return cmdline_get(key, NULL) != NULL; }

bool cmdline_uint(const char *key, uint32_t *out)
{
    return cmdline_find_uint(kernel_cmdline, key, out);
}

bool cmdline_find_uint(const char *line, const char *key, uint32_t *out)
{
    size_t len;
    const char *v = cmdline_find(line, key, &len);
    if (!v)
        return false;
    uint64_t n = 0;
    for (size_t i = 0; i < len && v[i] >= '0' && v[i] <= '9'; i++)
        n = MIN(n * 10 + (uint64_t)(v[i] - '0'), (uint64_t)UINT32_MAX);
    *out = (uint32_t)n;
    return true;
}
