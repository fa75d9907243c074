// The environment: getenv, setenv, unsetenv, putenv, clearenv.
// Strings setenv allocates are never freed: a caller may still hold a pointer
// getenv returned. The environ array itself is reallocated as it grows.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libc.h"

char **environ;
static char **owned;  // the array we allocated, if environ is ours
static size_t owned_cap;

void __environ_init(char **envp) { environ = envp; }

static size_t env_count(void)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    return n;
}

// Index of "name=" in environ, or -1.
static long env_find(const char *name, size_t len)
{
    for (size_t i = 0; environ && environ[i]; i++)
        if (strncmp(environ[i], name, len) == 0 && environ[i][len] == '=')
            return (long)i;
    return -1;
}

char *getenv(const char *name)
{
    size_t len = strchrnul(name, '=') - name;
    long i = env_find(name, len);
    return i < 0 ? NULL : environ[i] + len + 1;
}

char *secure_getenv(const char *name) { return getenv(name); }

static int env_add(char *s)
{
    size_t n = env_count();
    if (environ != owned || n + 2 > owned_cap) {
        size_t cap = (n + 2) * 2;
        char **a = malloc(cap * sizeof *a);
        if (!a)
            return -1;
        if (n)
            memcpy(a, environ, n * sizeof *a);
        if (environ == owned)
            free(owned);
        environ = owned = a;
        owned_cap = cap;
    }
    environ[n] = s;
    environ[n + 1] = NULL;
    return 0;
}

int putenv(char *s)
{
    size_t len = strchrnul(s, '=') - s;
    if (!s[len])
        return unsetenv(s);
    long i = env_find(s, len);
    if (i >= 0) {
        environ[i] = s;
        return 0;
    }
    return env_add(s);
}

int setenv(const char *name, const char *value, int overwrite)
{
    size_t len = strlen(name);
    if (!len || strchr(name, '=')) {
        errno = EINVAL;
        return -1;
    }
    if (!overwrite && env_find(name, len) >= 0)
        return 0;
    size_t vlen = strlen(value);
    char *s = malloc(len + vlen + 2);
    if (!s)
        return -1;
    memcpy(s, name, len);
    s[len] = '=';
    memcpy(s + len + 1, value, vlen + 1);
    if (putenv(s) < 0) {
        free(s);
        return -1;
    }
    return 0;
}

int unsetenv(const char *name)
{
    size_t len = strlen(name);
    if (!len || strchr(name, '=')) {
        errno = EINVAL;
        return -1;
    }
    long i;
    while ((i = env_find(name, len)) >= 0) {
        size_t n = env_count();
        memmove(&environ[i], &environ[i + 1], (n - i) * sizeof *environ);
    }
    return 0;
}

int clearenv(void)
{
    if (environ == owned)
        free(owned);
    environ = owned = NULL;
    owned_cap = 0;
    return 0;
}
