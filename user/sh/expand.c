// Word expansion at run time: quote removal, backslashes, $NAME ${NAME} $? $$
// $! $# $0..$9 $@ $*, $(command), $((arithmetic)), and a leading ~. The results of unquoted expansions are
// split into fields at blanks, and words with unquoted * ? [ become the file
// names they match (glob.c); quoted text is never split or matched.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sh.h"

bool arith_failed;

struct fields {
    struct strv *out;
    struct str cur;
    struct str pat;  // cur as a pattern: quoted * ? [ \ escaped with a backslash
    bool have;       // cur is a field even if empty (it had quotes or text)
    bool glob;       // cur has an unquoted * ? or [
    bool split;      // split unquoted expansions and expand patterns
                     // (false for assignments and redirection targets)
};

static void add_char(struct fields *f, char c, bool quoted)
{
    str_addc(&f->cur, c);
    f->have = true;
    if (!f->split)
        return;
    bool meta = c == '*' || c == '?' || c == '[';
    if (quoted && (meta || c == '\\'))
        str_addc(&f->pat, '\\');
    else if (meta)
        f->glob = true;
    str_addc(&f->pat, c);
}

static void end_field(struct fields *f)
{
    if (f->have) {
        char *field = f->cur.s ? f->cur.s : arena_strndup("", 0);
        if (f->glob)
            glob_field(f->pat.s, field, f->out);
        else
            strv_add(f->out, field);
        f->cur = f->pat = (struct str){0};
        f->have = f->glob = false;
    }
}

static void add_text(struct fields *f, const char *s, bool quoted)
{
    if (quoted || !f->split)
        f->have = true;   // even "" is a field
    for (; *s; s++) {
        if (!quoted && f->split && (*s == ' ' || *s == '\t' || *s == '\n'))
            end_field(f);
        else
            add_char(f, *s, quoted);
    }
}

static const char *special(char c, char *buf, size_t size)
{
    switch (c) {
    case '?': snprintf(buf, size, "%d", last_status); return buf;
    case '$': snprintf(buf, size, "%d", (int)getpid()); return buf;
    case '!': snprintf(buf, size, "%d", last_bg_pid); return buf;
    case '#': snprintf(buf, size, "%d", pos_count); return buf;
    }
    if (c >= '0' && c <= '9')
        return c - '0' <= pos_count ? pos_args[c - '0'] : "";
    return NULL;
}

// $@ and $*: the positional parameters. Quoted "$@" keeps each one a field.
static void add_all_args(struct fields *f, char which, bool quoted)
{
    for (int i = 1; i <= pos_count; i++) {
        if (i > 1) {
            if (quoted && which == '@' && f->split)
                end_field(f);
            else
                add_text(f, " ", quoted);
        }
        add_text(f, pos_args[i], quoted);
    }
    if (quoted && which == '@' && pos_count == 0 && f->cur.len == 0)
        f->have = false;   // "$@" with no arguments is no field at all
}

// Expand the $ at *pp, advancing past it.
static void dollar(struct fields *f, const char **pp, bool quoted)
{
    const char *p = *pp + 1;
    char buf[32];
    const char *val;
    if (*p == '{') {
        const char *e = strchr(p, '}');
        if (!e) {
            add_text(f, "$", true);
            *pp = p;
            return;
        }
        char *name = arena_strndup(p + 1, e - p - 1);
        val = strlen(name) == 1 ? special(name[0], buf, sizeof buf) : NULL;
        if (!val)
            val = var_get(name);
        *pp = e + 1;
    } else if (*p == '(') {
        const char *e = subst_end(p + 1);
        if (!e) {
            add_text(f, "$", true);
            *pp = p;
            return;
        }
        char *inner = arena_strndup(p + 1, e - p - 1);
        if (inner[0] == '(' && e[-1] == ')') {
            // $((expression)): the parentheses are part of it, harmlessly.
            char *v = arith(expand_one(inner));
            if (!v)
                arith_failed = true;
            add_text(f, v ? v : "", quoted);
        } else {
            add_text(f, command_output(inner), quoted);
        }
        *pp = e + 1;
        return;
    } else if (*p == '@' || *p == '*') {
        add_all_args(f, *p, quoted);
        *pp = p + 1;
        return;
    } else if ((val = special(*p, buf, sizeof buf)) != NULL) {
        *pp = p + 1;
    } else if (is_name(p, 1)) {
        const char *e = p;
        while (is_name(p, e - p + 1))
            e++;
        val = var_get(arena_strndup(p, e - p));
        *pp = e;
    } else {
        add_text(f, "$", true);   // a lone $ is itself
        *pp = p;
        return;
    }
    if (val)
        add_text(f, val, quoted);
    else if (quoted)
        f->have = true;
}

static void expand(const char *p, struct fields *f)
{
    if (p[0] == '~' && (p[1] == '/' || p[1] == 0) && var_get("HOME")) {
        add_text(f, var_get("HOME"), true);
        p++;
    }
    while (*p) {
        char c = *p;
        if (c == '\\') {
            if (p[1] == '\n') {   // line continuation
                p += 2;
                continue;
            }
            if (p[1]) {
                add_char(f, p[1], true);
                p += 2;
            } else {
                p++;
            }
        } else if (c == '\'') {
            const char *e = strchr(p + 1, '\'');
            if (!e)
                e = p + strlen(p);
            f->have = true;
            for (p++; p < e; p++)
                add_char(f, *p, true);
            if (*p)
                p++;
        } else if (c == '"') {
            f->have = true;
            p++;
            while (*p && *p != '"') {
                if (*p == '\\' && p[1] && strchr("$`\"\\\n", p[1])) {
                    if (p[1] != '\n')
                        add_char(f, p[1], true);
                    p += 2;
                } else if (*p == '$') {
                    dollar(f, &p, true);
                } else {
                    add_char(f, *p++, true);
                }
            }
            if (*p)
                p++;
        } else if (c == '$') {
            dollar(f, &p, false);
        } else {
            add_char(f, c, false);
            p++;
        }
    }
    end_field(f);
}

void expand_word(const char *raw, struct strv *fields)
{
    struct fields f = {.out = fields, .split = true};
    expand(raw, &f);
}

char *expand_one(const char *raw)
{
    struct strv out = {0};
    struct fields f = {.out = &out, .split = false};
    f.have = true;   // an empty value is still one (empty) string
    expand(raw, &f);
    return out.n ? out.v[0] : "";
}
