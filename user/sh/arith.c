// Arithmetic expansion, $((expression)): C's integer operators on longs,
// with parentheses, decimal numbers and variable names (unset or empty is 0).
// Precedence, loosest first: || && | ^ & (== !=) (< <= > >=) (<< >>) (+ -)
// (* / %), then unary - + ! ~.
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sh.h"

static const char *ap;   // where the parser is
static bool bad;         // the expression is not valid
static bool said;        // ... and a message says why

static void skip_space(void)
{
    while (isspace((unsigned char)*ap))
        ap++;
}

static long expr(int level);

static long primary(void)
{
    skip_space();
    char c = *ap;
    if (c == '(') {
        ap++;
        long v = expr(0);
        skip_space();
        if (*ap == ')')
            ap++;
        else
            bad = true;
        return v;
    }
    if (c == '-' || c == '+' || c == '!' || c == '~') {
        ap++;
        long v = primary();
        return c == '-' ? (long)-(unsigned long)v : c == '+' ? v : c == '!' ? !v : ~v;
    }
    if (isdigit((unsigned char)c))
        return strtol(ap, (char **)&ap, 10);
    if (is_name(ap, 1)) {
        const char *s = ap;
        while (is_name(s, ap - s + 1))
            ap++;
        const char *v = var_get(arena_strndup(s, ap - s));
        return v && *v ? strtol(v, NULL, 10) : 0;
    }
    bad = true;
    return 0;
}

// Binary operators by level (0 loosest); longer spellings before their prefixes.
static const char *const ops[][4] = {
    {"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<=", ">=", "<", ">"},
    {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"},
};
#define LEVELS (int)(sizeof ops / sizeof ops[0])

// The operator of this level at ap, or NULL. "|" must not be the start of
// "||", nor "&" of "&&", nor "<" of "<<".
static const char *match_op(int level)
{
    skip_space();
    for (int i = 0; i < 4 && ops[level][i]; i++) {
        const char *op = ops[level][i];
        size_t n = strlen(op);
        if (strncmp(ap, op, n) != 0)
            continue;
        if (n == 1 && (ap[1] == op[0] || ((op[0] == '<' || op[0] == '>') && ap[1] == '=')))
            continue;
        return op;
    }
    return NULL;
}

static long apply(const char *op, long a, long b)
{
    switch (op[0]) {
    case '|': return op[1] ? a || b : a | b;
    case '&': return op[1] ? a && b : a & b;
    case '^': return a ^ b;
    case '=': return a == b;
    case '!': return a != b;
    // Overflow wraps around (computed unsigned), as in other shells.
    case '<': return op[1] == '=' ? a <= b : op[1] == '<' ? (long)((unsigned long)a << (b & 63)) : a < b;
    case '>': return op[1] == '=' ? a >= b : op[1] == '>' ? a >> (b & 63) : a > b;
    case '+': return (long)((unsigned long)a + (unsigned long)b);
    case '-': return (long)((unsigned long)a - (unsigned long)b);
    case '*': return (long)((unsigned long)a * (unsigned long)b);
    }
    if (b == 0) {
        sh_error("arithmetic: division by zero");
        bad = said = true;
        return 0;
    }
    if (b == -1)   // LONG_MIN / -1 would trap
        return op[0] == '/' ? (long)-(unsigned long)a : 0;
    return op[0] == '/' ? a / b : a % b;
}

static long expr(int level)
{
    if (level == LEVELS)
        return primary();
    long v = expr(level + 1);
    const char *op;
    while ((op = match_op(level)) != NULL) {
        ap += strlen(op);
        v = apply(op, v, expr(level + 1));
    }
    return v;
}

// The value of src (already expanded text between "$((" and "))"), as a
// string; NULL after an error message if it is not a valid expression.
char *arith(const char *src)
{
    ap = src;
    bad = said = false;
    long v = expr(0);
    skip_space();
    if (bad || *ap) {
        if (!said)
            sh_error("arithmetic: bad expression: %s", src);
        return NULL;
    }
    char *out = arena_alloc(24);
    snprintf(out, 24, "%ld", v);
    return out;
}
