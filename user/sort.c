// sort [-bfnrsu] [-t c] [-k key]... [-o file] [file...]: sort the lines of the
// files (standard input if none, or "-"), a stable merge sort.
//
// Lines compare by their keys, in order; lines whose keys all compare equal
// compare as whole lines, byte by byte (-s: they stay in input order).
// Without -k the key is the whole line.
//   -k F1[.C1][mods][,F2[.C2][mods]]  a key from field F1 (its character C1,
//        default 1) to the end of field F2 (its character C2; default: the
//        line's end); mods are any of b f n r, which replace the global ones
//        for this key
//   -t c  fields are separated by c; without it, a field is a run of
//        non-blanks with the blanks before it
//   -b    blanks at the start of a key are skipped
//   -f    lowercase letters compare as uppercase
//   -n    the key is a number (blanks, a -, digits, a . and digits); what is
//        not one counts as 0
//   -r    reverse the order
//   -u    of lines whose keys compare equal, print only the first
//   -o file   write to file (which may be one of the inputs)
// Exit status 0, 2 on error.
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MOD_B = 1, MOD_F = 2, MOD_N = 4, MOD_R = 8 };

struct key {
    int f1, c1, f2, c2;          // fields and characters from 1; f2 0: to the line's end
    int mods;                    // MOD_*; 0: the global ones
};

static struct key keys[16];
static int nkeys, global_mods, opt_s, opt_u, sep = -1;

struct line { char *s; size_t len; };

static void die(const char *msg, const char *arg)
{
    fprintf(stderr, "sort: %s%s%s\n", arg ? arg : "", arg ? ": " : "", msg);
    exit(2);
}

// ---- keys ---------------------------------------------------------------------------

static const char *skip_blanks(const char *p, const char *end)
{
    while (p < end && isblank((unsigned char)*p))
        p++;
    return p;
}

// Where field f (from 1) of [s, end) starts; end if the line has fewer fields.
static const char *field_start(const char *s, const char *end, int f)
{
    const char *p = s;
    for (; f > 1 && p < end; f--) {
        if (sep >= 0) {
            while (p < end && *p != sep)
                p++;
            if (p < end)
                p++;             // past the separator
        } else {
            p = skip_blanks(p, end);
            while (p < end && !isblank((unsigned char)*p))
                p++;             // the next field starts with its blanks
        }
    }
    return f > 1 ? end : p;
}

// Where field f ends (its separator, or the blank after its non-blanks).
static const char *field_end(const char *p, const char *end)
{
    if (sep >= 0) {
        while (p < end && *p != sep)
            p++;
        return p;
    }
    p = skip_blanks(p, end);
    while (p < end && !isblank((unsigned char)*p))
        p++;
    return p;
}

// The key k of line l, as [*kb, *ke).
static void key_of(const struct line *l, const struct key *k, int mods,
                   const char **kb, const char **ke)
{
    const char *s = l->s, *end = l->s + l->len;
    const char *b = field_start(s, end, k->f1);
    if (mods & MOD_B)
        b = skip_blanks(b, end);
    b = k->c1 - 1 < end - b ? b + k->c1 - 1 : end;
    const char *e = end;
    if (k->f2) {
        const char *f = field_start(s, end, k->f2);
        if (k->c2 == 0) {
            e = field_end(f, end);
        } else {
            if (mods & MOD_B)
                f = skip_blanks(f, end);
            e = k->c2 < end - f ? f + k->c2 : end;
        }
    }
    *kb = b;
    *ke = e < b ? b : e;
}

// ---- comparing ----------------------------------------------------------------------

// Compare [a, ae) and [b, be) as numbers: optional blanks, an optional -,
// digits, optionally a . and more digits; anything else ends the number.
static int num_compare(const char *a, const char *ae, const char *b, const char *be)
{
    // LAB find BEGIN
    a = skip_blanks(a, ae);
    b = skip_blanks(b, be);
    int na = a < ae && *a == '-', nb = b < be && *b == '-';
    a += na;
    b += nb;
    while (a < ae && *a == '0')
        a++;
    while (b < be && *b == '0')
        b++;
    const char *ia = a, *ib = b;         // the integer parts, without leading zeros
    while (a < ae && isdigit((unsigned char)*a))
        a++;
    while (b < be && isdigit((unsigned char)*b))
        b++;
    int r = (a - ia > b - ib) - (a - ia < b - ib);   // more digits: larger
    for (const char *p = ia, *q = ib; !r && p < a; p++, q++)
        r = (*p > *q) - (*p < *q);
    // The fractions, digit by digit; a missing digit is a 0.
    a += a < ae && *a == '.';
    b += b < be && *b == '.';
    while (!r && ((a < ae && isdigit((unsigned char)*a)) || (b < be && isdigit((unsigned char)*b)))) {
        int da = a < ae && isdigit((unsigned char)*a) ? *a++ : '0';
        int db = b < be && isdigit((unsigned char)*b) ? *b++ : '0';
        r = (da > db) - (da < db);
    }
    // -0 and 0 are equal: a sign counts only when the magnitudes are not 0.
    int zero = !r;
    for (const char *p = ia; zero && p < a; p++)
        zero = *p == '0' || *p == '.';
    if (na != nb && !(r == 0 && zero))
        return na ? -1 : 1;
    return na ? -r : r;
    // LAB find SKELETON
    // // TODO (labs/find): compare the numbers at a and b (see above); this
    // // compares them as text.
    // size_t la = (size_t)(ae - a), lb = (size_t)(be - b);
    // int r = memcmp(a, b, la < lb ? la : lb);
    // return r ? r : (la > lb) - (la < lb);
    // LAB find END
}

static int text_compare(const char *a, const char *ae, const char *b, const char *be, int fold)
{
    for (; a < ae && b < be; a++, b++) {
        int ca = (unsigned char)*a, cb = (unsigned char)*b;
        if (fold) {
            ca = toupper(ca);
            cb = toupper(cb);
        }
        if (ca != cb)
            return ca - cb;
    }
    return (a < ae) - (b < be);
}

static int key_compare(const struct line *x, const struct line *y, const struct key *k)
{
    int mods = k->mods ? k->mods : global_mods;
    const char *a, *ae, *b, *be;
    key_of(x, k, mods, &a, &ae);
    key_of(y, k, mods, &b, &be);
    int r = mods & MOD_N ? num_compare(a, ae, b, be) : text_compare(a, ae, b, be, mods & MOD_F);
    return mods & MOD_R ? -r : r;
}

// Keys only: equal here is what -u drops.
static int keys_compare(const struct line *x, const struct line *y)
{
    for (int i = 0; i < nkeys; i++) {
        int r = key_compare(x, y, &keys[i]);
        if (r)
            return r;
    }
    return 0;
}

static int compare(const struct line *x, const struct line *y)
{
    int r = keys_compare(x, y);
    if (r || opt_s || opt_u)
        return r;
    r = text_compare(x->s, x->s + x->len, y->s, y->s + y->len, 0);
    return global_mods & MOD_R ? -r : r;
}

// ---- sorting ------------------------------------------------------------------------

// Sort v[0..n) stably, with tmp (n entries) as scratch space.
static void merge_sort(struct line *v, struct line *tmp, size_t n)
{
    // LAB find BEGIN
    if (n < 2)
        return;
    size_t half = n / 2;
    merge_sort(v, tmp, half);
    merge_sort(v + half, tmp, n - half);
    // Merge the halves into tmp; on a tie the left one goes first (stable).
    size_t i = 0, j = half, k = 0;
    while (i < half && j < n)
        tmp[k++] = compare(&v[j], &v[i]) < 0 ? v[j++] : v[i++];
    while (i < half)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
    // LAB find SKELETON
    // // TODO (labs/find): sort v[0..n) stably with compare(); tmp has room for
    // // n lines.
    // (void)v;
    // (void)tmp;
    // (void)n;
    // (void)compare;
    // LAB find END
}

// ---- input, options, output ---------------------------------------------------------

static struct line *lines;
static size_t nlines, cap;

static void read_lines(FILE *f, const char *name)
{
    char *s = NULL;
    size_t scap = 0;
    ssize_t n;
    while ((n = getline(&s, &scap, f)) >= 0) {
        if (n > 0 && s[n - 1] == '\n')
            s[--n] = 0;
        if (nlines == cap) {
            cap = cap ? 2 * cap : 1024;
            if (!(lines = realloc(lines, cap * sizeof *lines)))
                die("out of memory", NULL);
        }
        lines[nlines++] = (struct line){s, (size_t)n};
        s = NULL;
        scap = 0;
    }
    free(s);
    if (ferror(f))
        die(strerror(errno), name);
}

static int parse_number(const char **p)
{
    if (!isdigit((unsigned char)**p))
        return -1;
    long v = strtol(*p, (char **)p, 10);
    return v > 1 << 20 ? -1 : (int)v;
}

static int parse_mods(const char **p)
{
    int m = 0;
    for (;; (*p)++) {
        switch (**p) {
        case 'b': m |= MOD_B; break;
        case 'f': m |= MOD_F; break;
        case 'n': m |= MOD_N; break;
        case 'r': m |= MOD_R; break;
        default: return m;
        }
    }
}

// -k F1[.C1][mods][,F2[.C2][mods]]
static void parse_key(const char *arg)
{
    if (nkeys == (int)(sizeof keys / sizeof keys[0]))
        die("too many keys", arg);
    struct key *k = &keys[nkeys++];
    const char *p = arg;
    k->c1 = 1;
    if ((k->f1 = parse_number(&p)) < 1)
        die("bad key", arg);
    if (*p == '.' && (p++, (k->c1 = parse_number(&p)) < 1))
        die("bad key", arg);
    k->mods = parse_mods(&p);
    if (*p == ',') {
        p++;
        if ((k->f2 = parse_number(&p)) < 1)
            die("bad key", arg);
        if (*p == '.' && (p++, (k->c2 = parse_number(&p)) < 0))
            die("bad key", arg);
        k->mods |= parse_mods(&p);
    }
    if (*p)
        die("bad key", arg);
}

static const char *out;             // -o's file

// The options before the first file operand; returns that operand's index.
static int options(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (strcmp(argv[i], "--") == 0)
            return i + 1;
        for (const char *p = argv[i] + 1; *p; p++) {
            char opt[3] = {'-', *p, 0};
            if (*p == 'k' || *p == 't' || *p == 'o') {
                // The option's argument: the rest of this word, or the next one.
                const char *v = p[1] ? p + 1 : i + 1 < argc ? argv[++i] : NULL;
                if (!v)
                    die("option needs an argument", opt);
                if (*p == 'k')
                    parse_key(v);
                else if (*p == 'o')
                    out = v;
                else if (!v[0] || v[1])
                    die("the separator must be one character", v);
                else
                    sep = (unsigned char)v[0];
                break;
            }
            switch (*p) {
            case 'b': global_mods |= MOD_B; break;
            case 'f': global_mods |= MOD_F; break;
            case 'n': global_mods |= MOD_N; break;
            case 'r': global_mods |= MOD_R; break;
            case 's': opt_s = 1; break;
            case 'u': opt_u = 1; break;
            default: die("unknown option", opt);
            }
        }
    }
    return i;
}

int main(int argc, char **argv)
{
    int i = options(argc, argv);
    if (nkeys == 0)
        keys[nkeys++] = (struct key){.f1 = 1, .c1 = 1};   // the whole line
    if (i == argc)
        read_lines(stdin, "-");
    for (; i < argc; i++) {
        if (strcmp(argv[i], "-") == 0) {
            read_lines(stdin, "-");
            continue;
        }
        FILE *f = fopen(argv[i], "r");
        if (!f)
            die(strerror(errno), argv[i]);
        read_lines(f, argv[i]);
        fclose(f);
    }
    struct line *tmp = malloc((nlines ? nlines : 1) * sizeof *tmp);
    if (!tmp)
        die("out of memory", NULL);
    merge_sort(lines, tmp, nlines);
    // Opened only now: the output file may be one of the inputs.
    if (out && !freopen(out, "w", stdout))
        die(strerror(errno), out);
    for (size_t k = 0; k < nlines; k++) {
        if (opt_u && k > 0 && keys_compare(&lines[k - 1], &lines[k]) == 0)
            continue;
        fwrite(lines[k].s, 1, lines[k].len, stdout);
        putchar('\n');
    }
    if (fflush(stdout) != 0)
        die(strerror(errno), out ? out : "standard output");
    return 0;
}
