// The lexer and parser: a command line becomes a list of and-or lists of
// pipelines of commands: simple ones, and if/while/until/for holding lists. Words stay raw (quotes, backslashes and $ are
// handled at run time by expand.c); the lexer only needs to know where they end.
#include <ctype.h>
#include <string.h>

#include "sh.h"

enum tok_kind { T_WORD, T_NEWLINE, T_SEMI, T_AMP, T_PIPE, T_AND, T_OR, T_REDIR, T_EOF };

struct tok {
    enum tok_kind kind;
    const char *start;    // where it begins in the source
    const char *end;
    int fd;               // T_REDIR: the descriptor
    enum redir_kind rkind;
};

static const char *src_pos;   // the lexer's position
static struct tok tok;        // the current (lookahead) token
static bool incomplete;       // input ended inside a quote or after an operator
static bool failed;

static bool is_meta(char c) { return c == '|' || c == '&' || c == ';' || c == '<' || c == '>' || c == '\n'; }

// p is just after "$(": the ')' that closes the command substitution, or
// NULL if the input ends first. Quotes and nested parentheses are skipped.
const char *subst_end(const char *p)
{
    int depth = 1;
    while (*p) {
        char c = *p++;
        if (c == '\\') {
            if (!*p)
                return NULL;
            p++;
        } else if (c == '\'' || c == '"') {
            while (*p && *p != c) {
                if (c == '"' && *p == '\\' && p[1])
                    p++;
                p++;
            }
            if (!*p)
                return NULL;
            p++;
        } else if (c == '(') {
            depth++;
        } else if (c == ')' && --depth == 0) {
            return p - 1;
        }
    }
    return NULL;
}

// Scan one word's extent, honouring quotes, backslashes and $(...).
static const char *scan_word(const char *p)
{
    while (*p && *p != ' ' && *p != '\t' && !is_meta(*p)) {
        char c = *p++;
        if (c == '\\') {
            if (!*p) { incomplete = true; return p; }
            p++;
        } else if (c == '$' && *p == '(') {
            const char *e = subst_end(p + 1);
            if (!e) { incomplete = true; return p + strlen(p); }
            p = e + 1;
        } else if (c == '\'') {
            while (*p && *p != '\'')
                p++;
            if (!*p) { incomplete = true; return p; }
            p++;
        } else if (c == '"') {
            while (*p && *p != '"') {
                if (*p == '$' && p[1] == '(') {
                    const char *e = subst_end(p + 2);
                    if (!e) { incomplete = true; return p + strlen(p); }
                    p = e + 1;
                    continue;
                }
                if (*p == '\\' && p[1])
                    p++;
                p++;
            }
            if (!*p) { incomplete = true; return p; }
            p++;
        }
    }
    return p;
}

// A redirection operator at p (after an optional descriptor number); returns its length.
static int scan_redir(const char *p, int fd)
{
    tok.kind = T_REDIR;
    if (p[0] == '<') {
        tok.fd = fd >= 0 ? fd : 0;
        tok.rkind = p[1] == '&' ? R_DUP : R_IN;
        return p[1] == '&' ? 2 : 1;
    }
    tok.fd = fd >= 0 ? fd : 1;
    if (p[1] == '>') { tok.rkind = R_APPEND; return 2; }
    if (p[1] == '&') { tok.rkind = R_DUP; return 2; }
    tok.rkind = R_OUT;
    return p[1] == '|' ? 2 : 1;
}

static void next(void)
{
    const char *p = src_pos;
    while (*p == ' ' || *p == '\t' || (p[0] == '\\' && p[1] == '\n'))
        p += *p == '\\' ? 2 : 1;
    if (*p == '#')
        while (*p && *p != '\n')
            p++;
    tok.start = p;
    int len = 1;
    switch (*p) {
    case 0: tok.kind = T_EOF; len = 0; break;
    case '\n': tok.kind = T_NEWLINE; break;
    case ';': tok.kind = T_SEMI; break;
    case '|':
        tok.kind = p[1] == '|' ? T_OR : T_PIPE;
        len = p[1] == '|' ? 2 : 1;
        break;
    case '&':
        tok.kind = p[1] == '&' ? T_AND : T_AMP;
        len = p[1] == '&' ? 2 : 1;
        break;
    case '<': case '>': len = scan_redir(p, -1); break;
    default: {
        const char *e = scan_word(p);
        // A word of digits right before < or > is the descriptor to redirect.
        const char *d = p;
        int fd = 0;
        while (d < e && isdigit((unsigned char)*d))
            fd = fd * 10 + (*d++ - '0');
        if (d == e && e - p <= 2 && (*e == '<' || *e == '>')) {
            len = (int)(e - p) + scan_redir(e, fd);
        } else {
            tok.kind = T_WORD;
            len = (int)(e - p);
        }
    }
    }
    src_pos = p + len;
    tok.end = src_pos;
}

static void syntax_error(void)
{
    if (failed || incomplete)
        return;
    failed = true;
    if (tok.kind == T_EOF || tok.kind == T_NEWLINE)
        sh_error("syntax error: unexpected end of line");
    else
        sh_error("syntax error near '%.*s'", (int)(tok.end - tok.start), tok.start);
}

// After an operator that needs more (| && ||), newlines are skipped; the end
// of input there means the command continues on the next line.
static void skip_newlines_after_operator(void)
{
    while (tok.kind == T_NEWLINE)
        next();
    if (tok.kind == T_EOF)
        incomplete = true;
}

static bool is_word(const char *w)
{
    return tok.kind == T_WORD && (size_t)(tok.end - tok.start) == strlen(w) &&
           strncmp(tok.start, w, tok.end - tok.start) == 0;
}

// Words that end a list inside a compound command, not commands themselves.
static const char *const closers[] = {"then", "elif", "else", "fi", "do", "done", NULL};

static bool is_one_of(const char *const *words)
{
    for (; words && *words; words++)
        if (is_word(*words))
            return true;
    return false;
}

static struct andor *parse_list(const char *const *stops);

// Expect the reserved word w here (the end of input means: more to come).
static bool expect(const char *w)
{
    if (is_word(w)) {
        next();
        return true;
    }
    if (tok.kind == T_EOF)
        incomplete = true;
    else
        syntax_error();
    return false;
}

static bool parse_redirs(struct cmd *c)
{
    struct redir **tail = &c->redirs;
    while (*tail)
        tail = &(*tail)->next;
    while (tok.kind == T_REDIR) {
        struct redir *r = arena_alloc(sizeof *r);
        r->fd = tok.fd;
        r->kind = tok.rkind;
        next();
        if (tok.kind != T_WORD) {
            syntax_error();
            return false;
        }
        r->word = arena_strndup(tok.start, tok.end - tok.start);
        *tail = r;
        tail = &r->next;
        next();
    }
    return true;
}

// if LIST then LIST [elif LIST then LIST]... [else LIST] fi   (after "if"/"elif")
static bool parse_if(struct cmd *c)
{
    static const char *const then_stop[] = {"then", NULL};
    static const char *const body_stop[] = {"elif", "else", "fi", NULL};
    static const char *const else_stop[] = {"fi", NULL};
    c->kind = C_IF;
    c->cond = parse_list(then_stop);
    if (failed || incomplete || !expect("then"))
        return false;
    c->body = parse_list(body_stop);
    if (failed || incomplete)
        return false;
    if (is_word("elif")) {
        next();
        struct cmd *e = arena_alloc(sizeof *e);
        struct pipeline *pl = arena_alloc(sizeof *pl);
        c->orelse = arena_alloc(sizeof *c->orelse);
        c->orelse->first = pl;
        pl->cmds = e;
        pl->ncmds = 1;
        return parse_if(e);   // it ends with the same fi
    }
    if (is_word("else")) {
        next();
        c->orelse = parse_list(else_stop);
        if (failed || incomplete)
            return false;
    }
    return expect("fi");
}

// while/until LIST do LIST done; for NAME [in WORD...] ; do LIST done
static bool parse_loop(struct cmd *c)
{
    static const char *const do_stop[] = {"do", NULL};
    static const char *const done_stop[] = {"done", NULL};
    if (c->kind == C_FOR) {
        if (tok.kind != T_WORD || !is_name(tok.start, tok.end - tok.start)) {
            syntax_error();
            return false;
        }
        c->var = arena_strndup(tok.start, tok.end - tok.start);
        next();
        while (tok.kind == T_NEWLINE)
            next();
        if (is_word("in")) {
            c->has_in = true;
            for (next(); tok.kind == T_WORD; next())
                strv_add(&c->words, arena_strndup(tok.start, tok.end - tok.start));
        }
        while (tok.kind == T_SEMI || tok.kind == T_NEWLINE)
            next();
    } else {
        c->cond = parse_list(do_stop);
        if (failed || incomplete)
            return false;
    }
    if (!expect("do"))
        return false;
    c->body = parse_list(done_stop);
    return !failed && !incomplete && expect("done");
}

static struct cmd *parse_compound(struct cmd *c)
{
    const char *start = tok.start;
    bool ok;
    if (is_word("if")) {
        next();
        ok = parse_if(c);
    } else {
        c->kind = is_word("while") ? C_WHILE : is_word("until") ? C_UNTIL : C_FOR;
        next();
        ok = parse_loop(c);
    }
    if (!ok || !parse_redirs(c))
        return NULL;
    c->text = arena_strndup(start, tok.start - start);
    return c;
}

static struct cmd *parse_cmd(void)
{
    struct cmd *c = arena_alloc(sizeof *c);
    if (is_word("if") || is_word("while") || is_word("until") || is_word("for"))
        return parse_compound(c);
    if (is_one_of(closers)) {
        syntax_error();
        return NULL;
    }
    for (;;) {
        if (tok.kind == T_WORD) {
            strv_add(&c->words, arena_strndup(tok.start, tok.end - tok.start));
            next();
        } else if (tok.kind == T_REDIR) {
            if (!parse_redirs(c))
                return NULL;
        } else {
            break;
        }
    }
    if (c->words.n == 0 && !c->redirs) {
        syntax_error();
        return NULL;
    }
    return c;
}

static struct pipeline *parse_pipeline(void)
{
    struct pipeline *pl = arena_alloc(sizeof *pl);
    if (tok.kind == T_WORD && tok.end - tok.start == 1 && *tok.start == '!') {
        pl->negate = true;
        next();
    }
    struct cmd **tail = &pl->cmds;
    for (;;) {
        struct cmd *c = parse_cmd();
        if (!c)
            return NULL;
        *tail = c;
        tail = &c->next;
        pl->ncmds++;
        if (tok.kind != T_PIPE)
            return pl;
        next();
        skip_newlines_after_operator();
        if (incomplete)
            return NULL;
    }
}

static struct andor *parse_andor(void)
{
    struct andor *ao = arena_alloc(sizeof *ao);
    const char *start = tok.start;
    struct pipeline **tail = &ao->first;
    for (;;) {
        struct pipeline *pl = parse_pipeline();
        if (!pl)
            return NULL;
        *tail = pl;
        tail = &pl->next;
        if (tok.kind != T_AND && tok.kind != T_OR)
            break;
        pl->op = tok.kind == T_AND ? OP_AND : OP_OR;
        next();
        skip_newlines_after_operator();
        if (incomplete)
            return NULL;
    }
    ao->text = arena_strndup(start, tok.start - start);
    return ao;
}

// And-or lists separated by ; & or newlines, up to one of the stop words at
// the start of a command (NULL: up to the end of the input).
static struct andor *parse_list(const char *const *stops)
{
    struct andor *head = NULL, **tail = &head;
    for (;;) {
        while (tok.kind == T_NEWLINE || (stops && tok.kind == T_SEMI))
            next();
        if (tok.kind == T_EOF) {
            if (stops)
                incomplete = true;   // the compound command goes on
            break;
        }
        if (is_one_of(stops))
            break;
        struct andor *ao = parse_andor();
        if (!ao)
            break;
        *tail = ao;
        tail = &ao->next;
        if (tok.kind == T_AMP)
            ao->background = true;
        else if (is_one_of(stops))
            continue;
        else if (tok.kind != T_SEMI && tok.kind != T_NEWLINE && tok.kind != T_EOF) {
            syntax_error();
            break;
        }
        if (tok.kind != T_EOF)
            next();
    }
    return head;
}

enum parse_result parse(const char *src, struct andor **out)
{
    src_pos = src;
    incomplete = failed = false;
    next();
    *out = parse_list(NULL);
    if (incomplete)
        return PARSE_INCOMPLETE;
    return failed ? PARSE_ERROR : PARSE_OK;
}
