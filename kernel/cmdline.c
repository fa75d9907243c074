// The kernel command line: space-separated words, each `key` or `key=value`.
#include "bootinfo.h"
#include "kernel.h"

char kernel_cmdline[BOOTINFO_CMDLINE_MAX];

void cmdline_init(const struct bootinfo *bi)
{
    strlcpy(kernel_cmdline, bi->cmdline, sizeof kernel_cmdline);
}

// Find the word whose key is `key`; return its value (after '=') or "" if bare.
const char *cmdline_get(const char *key, size_t *len)
{
    size_t klen = strlen(key);
    const char *p = kernel_cmdline;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        size_t wlen = p - w;
        if (wlen >= klen && strncmp(w, key, klen) == 0 && (wlen == klen || w[klen] == '=')) {
            const char *v = wlen == klen ? w + klen : w + klen + 1;
            if (len)
                *len = p - v;
            return v;
        }
    }
    return NULL;
}

bool cmdline_has(const char *key) { return cmdline_get(key, NULL) != NULL; }

long cmdline_int(const char *key, long dflt)
{
    size_t len;
    const char *v = cmdline_get(key, &len);
    if (!v || len == 0)
        return dflt;
    long n = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return dflt;
        n = n * 10 + (v[i] - '0');
    }
    return n;
}
