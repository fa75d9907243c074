// sh: a small POSIX-style shell. Lines are parsed into a tree (parse.c), words
// are expanded when their command runs (expand.c, so `false; echo $?` sees the
// new status), and commands start with posix_spawn (exec.c) -- the shell never
// forks. Builtins (builtin.c) run inside the shell. What needs a copy of the
// shell -- $(...) and background and-or lists -- runs in a new sh that gets
// the unexported variables as assignments in front of its script.
#pragma once
#include <stdbool.h>
#include <stddef.h>

// ---- memory: everything a command line needs, freed in one go --------------
void *arena_alloc(size_t n);   // zeroed; exits on out of memory
char *arena_strndup(const char *s, size_t n);
void arena_reset(void);
// A loop frees what each iteration allocated: everything since the mark.
struct arena_mark { void *block; size_t used; };
struct arena_mark arena_mark(void);
void arena_release(struct arena_mark m);
void *xmalloc(size_t n);       // long-lived allocations; exits on out of memory
char *xstrdup(const char *s);

// A growable string and a growable NULL-terminated array of strings (arena).
struct str { char *s; size_t len, cap; };
void str_addc(struct str *b, char c);
void str_adds(struct str *b, const char *s);
struct strv { char **v; size_t n, cap; };
void strv_add(struct strv *a, char *s);
char **strv_array(struct strv *a);    // the NULL-terminated array (never NULL)

// ---- the tree --------------------------------------------------------------
enum redir_kind { R_IN, R_OUT, R_APPEND, R_DUP };  // <  >  >>  n>&m / n<&m
struct redir {
    int fd;               // the descriptor redirected
    enum redir_kind kind;
    char *word;           // raw target word (file name, or fd number for R_DUP)
    struct redir *next;
};
enum cmd_kind { C_SIMPLE, C_IF, C_WHILE, C_UNTIL, C_FOR };
struct andor;
struct cmd {
    enum cmd_kind kind;
    struct strv words;    // SIMPLE: [NAME=value...] words; FOR: the words after `in`
    struct redir *redirs;
    char *var;            // FOR: the variable (NULL words and !has_in: "$@")
    bool has_in;
    struct andor *cond;   // IF, WHILE, UNTIL: the condition
    struct andor *body;   // IF: then; loops: do
    struct andor *orelse; // IF: else (an elif is an IF alone in it)
    char *text;           // compound commands: their source, for a second shell
    struct cmd *next;     // next command in the pipeline
};
enum { OP_NONE, OP_AND, OP_OR };
struct pipeline {
    struct cmd *cmds;
    int ncmds;
    bool negate;          // leading '!'
    int op;               // how the next pipeline is joined: OP_AND or OP_OR
    struct pipeline *next;
};
struct andor {            // pipelines joined by && and ||, then ; or & or newline
    struct pipeline *first;
    bool background;
    char *text;           // its source, for running it in a background shell
    struct andor *next;
};

enum parse_result { PARSE_OK, PARSE_INCOMPLETE, PARSE_ERROR };
enum parse_result parse(const char *src, struct andor **out);
const char *subst_end(const char *p);      // p after "$(": its ')', or NULL

// ---- variables and expansion ----------------------------------------------
void var_init(char **envp);
const char *var_get(const char *name);
void var_set(const char *name, const char *value, bool export);
void var_export(const char *name);
void var_unset(const char *name);
bool is_name(const char *s, size_t n);
size_t assignment_len(const char *word);   // length of NAME in NAME=..., or 0
char **var_environ(struct strv *extra);    // exported variables + extra NAME=value
char *var_script(const char *src);         // src preceded by NAME='value'; for the others
extern int last_status;                    // $?
extern int last_bg_pid;                    // $!
extern char **pos_args;                    // $0, $1, ... (NULL-terminated)
extern int pos_count;                      // $# (not counting $0)

void expand_word(const char *raw, struct strv *fields);
extern bool arith_failed;                  // a $((...)) was invalid: the command fails  // with field splitting
char *expand_one(const char *raw);         // one string: assignments, redirections
char *arith(const char *src);              // $((src)) (expanded); NULL if invalid
// The files pattern matches (backslash-escaped characters are literal),
// appended to out sorted; literal if none.
void glob_field(const char *pattern, const char *literal, struct strv *out);

// ---- running ---------------------------------------------------------------
int run_list(struct andor *list);          // returns the last status
int run_string(const char *src);           // parse and run; PARSE errors give 2
struct setup;
int run_sub_shell(const char *src, struct setup *s, bool wait);  // sh -c src; pid or status
char *command_output(const char *src);     // $(src): its output, last newlines cut
extern int subst_status;                   // status of the last $(...)
char *find_program(const char *name);      // the file $PATH gives, or NULL
int wait_pid(int pid);                     // its status as $? shows it
extern const char *sh_path;                // this shell's executable (for &, scripts)
extern int loop_depth, loop_break, loop_continue;   // for break and continue
extern bool interactive;
extern bool job_control; // interactive on our controlling terminal (exec.c)
extern int job_tty;

typedef int builtin_fn(int argc, char **argv);
builtin_fn *builtin_find(const char *name);
const char *builtin_name(size_t i);        // the i-th builtin's name; NULL past the last

// ---- line editing (lineedit.c) ------------------------------------------------
// Whether fd is a terminal the editor can use; remembers its settings, which
// the editor restores after every line.
bool lineedit_start(int fd);
// Show prompt and read one edited line from standard input: 1 and *line (the
// editor's buffer, ending in a newline, valid until the next call); 0 at end
// of input; -1 if ^C cancelled the line.
int lineedit_read(const char *prompt, char **line);

void sh_error(const char *fmt, ...);       // "sh: ..." on stderr
