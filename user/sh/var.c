// Shell variables: a list of NAME=value with an export flag, started from the
// environment. Also the special parameters $? $! $0..$9 $#.
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sh.h"

struct var {
    char *name;
    char *value;
    bool exported;
    struct var *next;
};

static struct var *vars;
int last_status;
int last_bg_pid;
char **pos_args;
int pos_count;

bool is_name(const char *s, size_t n)
{
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return false;
    return true;
}

size_t assignment_len(const char *word)
{
    const char *eq = strchr(word, '=');
    return eq && is_name(word, eq - word) ? (size_t)(eq - word) : 0;
}

static struct var *lookup(const char *name)
{
    for (struct var *v = vars; v; v = v->next)
        if (strcmp(v->name, name) == 0)
            return v;
    return NULL;
}

void var_init(char **envp)
{
    for (; *envp; envp++) {
        size_t n = assignment_len(*envp);
        if (!n)
            continue;
        char *name = xstrdup(*envp);
        name[n] = 0;
        var_set(name, *envp + n + 1, true);
        free(name);
    }
}

const char *var_get(const char *name)
{
    struct var *v = lookup(name);
    return v ? v->value : NULL;
}

void var_set(const char *name, const char *value, bool export)
{
    struct var *v = lookup(name);
    if (!v) {
        v = xmalloc(sizeof *v);
        v->name = xstrdup(name);
        v->value = NULL;
        v->exported = false;
        v->next = vars;
        vars = v;
    }
    free(v->value);
    v->value = xstrdup(value);
    v->exported |= export;
}

// export NAME without a value: mark it, creating it empty if it is unset.
void var_export(const char *name)
{
    if (!lookup(name))
        var_set(name, "", true);
    lookup(name)->exported = true;
}

void var_unset(const char *name)
{
    for (struct var **pp = &vars; *pp; pp = &(*pp)->next) {
        struct var *v = *pp;
        if (strcmp(v->name, name) == 0) {
            *pp = v->next;
            free(v->name);
            free(v->value);
            free(v);
            return;
        }
    }
}

// The environment for a new program: exported variables, except those that
// a command-prefix assignment (in extra, NAME=value) overrides.
char **var_environ(struct strv *extra)
{
    struct strv env = {0};
    for (struct var *v = vars; v; v = v->next) {
        if (!v->exported)
            continue;
        size_t n = strlen(v->name);
        bool overridden = false;
        for (size_t i = 0; extra && i < extra->n; i++)
            if (strncmp(extra->v[i], v->name, n) == 0 && extra->v[i][n] == '=')
                overridden = true;
        if (overridden)
            continue;
        char *s = arena_alloc(n + strlen(v->value) + 2);
        strcpy(s, v->name);
        s[n] = '=';
        strcpy(s + n + 1, v->value);
        strv_add(&env, s);
    }
    for (size_t i = 0; extra && i < extra->n; i++)
        strv_add(&env, extra->v[i]);
    return strv_array(&env);
}

// For a second shell: the unexported variables as assignments before src,
// each value single-quoted (a ' inside becomes '\'').
char *var_script(const char *src)
{
    struct str out = {0};
    for (struct var *v = vars; v; v = v->next) {
        if (v->exported)
            continue;
        str_adds(&out, v->name);
        str_adds(&out, "='");
        for (const char *c = v->value; *c; c++)
            str_adds(&out, *c == '\'' ? "'\\''" : (char[]){*c, 0});
        str_adds(&out, "'\n");
    }
    str_adds(&out, src);
    return out.s;
}
