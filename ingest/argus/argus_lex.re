/* ingest/argus/argus_lex.re -- re2c scanner for the tokens of an Argus line
 * (spec: "Strings are double-quoted with \" and \\ escapes.  Numbers are
 * decimal, or hexadecimal with 0x.").
 *
 *   number   123  0x1F  -4          (no more than 64 bits of magnitude)
 *   string   "a \"b\" \\ c"
 *   word     begin  io  0x1,0x2     (no blank, '"' or '=')
 *   KEY=VALUE with VALUE a number, a string or a word (which may hold '=');
 *            KEY may start with '@' (the fields of a dump's event)
 *
 * Tokens are separated by blanks: `"a"b`, `1=2` and `key=` are errors.
 * The line is NUL-terminated by the splitter and no rule consumes a NUL,
 * so the scanner never reads past the end of the line. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ingest/argus/argus_int.h"

/*!re2c
    re2c:yyfill:enable = 0;
    re2c:define:YYCTYPE = "unsigned char";
    re2c:tags = 1;

    num   = "-"? ([0-9]+ | "0" [xX] [0-9a-fA-F]+);
    str   = ["] ([^"\\\x00] | [\\] [^\x00])* ["];
    unstr = ["] ([^"\\\x00] | [\\] [^\x00])* [\\]? "\x00";
    key   = "@"? [A-Za-z_] [A-Za-z0-9_]*; /* @KEY: a dump's (docs/ARGUS-DUMP.md) */
    word  = [^ \t\x00"=]+;
    vword = [^ \t\x00"]+;
*/

bool ingest_argus_u64(const char *p, size_t n, uint64_t *out)
{
    bool hex = n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
    if (hex) {
        p += 2;
        n -= 2;
    }
    size_t all = n;
    while (n > 1 && p[0] == '0') { /* leading zeros do not count */
        p++;
        n--;
    }
    if (all == 0)
        return false;
    return hex ? ingest_hex_u64(p, n, out) : ingest_dec_u64(p, n, out);
}

/* A number token [p, e): sign, magnitude; false if it does not fit. */
static bool to_num(const unsigned char *p, const unsigned char *e, argus_val *v)
{
    v->kind = ARGUS_TK_NUM;
    v->p = (const char *)p;
    v->n = (size_t)(e - p);
    v->neg = *p == '-';
    p += v->neg;
    v->hex = e - p > 2 && (p[1] == 'x' || p[1] == 'X');
    return ingest_argus_u64((const char *)p, (size_t)(e - p), &v->num);
}

static void to_span(argus_val *v, argus_tk kind, const unsigned char *p, const unsigned char *e)
{
    v->kind = kind;
    v->p = (const char *)p;
    v->n = (size_t)(e - p);
    v->num = 0;
    v->neg = v->hex = false;
}

static argus_tk fail(argus_tok *t, const unsigned char *at, const char *why)
{
    t->kind = ARGUS_TK_ERR;
    t->at = (const char *)at;
    t->err = why;
    return ARGUS_TK_ERR;
}

/* The value after KEY=, at YYCURSOR. */
static argus_tk lex_value(const unsigned char **pp, argus_tok *t)
{
    const unsigned char *YYCURSOR = *pp;
    const unsigned char *s = YYCURSOR;
    /*!local:re2c:value
        num   { if (!to_num(s, YYCURSOR, &t->v))
                    return fail(t, s, "number out of range (more than 64 bits)");
                goto done; }
        str   { to_span(&t->v, ARGUS_TK_STR, s + 1, YYCURSOR - 1); goto done; }
        unstr { return fail(t, s, "unterminated string"); }
        vword { to_span(&t->v, ARGUS_TK_WORD, s, YYCURSOR); goto done; }
        *     { return fail(t, (const unsigned char *)t->at, "missing value after '='"); }
    */
done:
    *pp = YYCURSOR;
    return ARGUS_TK_KV;
}

argus_tk ingest_argus_lex(const char **pp, argus_tok *t)
{
    const unsigned char *YYCURSOR = (const unsigned char *)*pp;
    const unsigned char *k0, *k1;
    /*!stags:re2c:tok format = 'const unsigned char *@@;\n'; */
    argus_tk kind;
    while (*YYCURSOR == ' ' || *YYCURSOR == '\t')
        YYCURSOR++;
    const unsigned char *s = YYCURSOR;
    memset(t, 0, sizeof *t);
    t->at = (const char *)s;
    /*!local:re2c:tok
        "\x00" { *pp = (const char *)s; return t->kind = ARGUS_TK_END; }
        num    { if (!to_num(s, YYCURSOR, &t->v))
                     return fail(t, s, "number out of range (more than 64 bits)");
                 kind = ARGUS_TK_NUM; goto done; }
        str    { to_span(&t->v, ARGUS_TK_STR, s + 1, YYCURSOR - 1); kind = ARGUS_TK_STR; goto done; }
        unstr  { return fail(t, s, "unterminated string"); }
        @k0 key @k1 "=" {
                 t->key = (const char *)k0;
                 t->klen = (size_t)(k1 - k0);
                 kind = lex_value(&YYCURSOR, t);
                 if (kind == ARGUS_TK_ERR)
                     return kind;
                 goto done; }
        word   { to_span(&t->v, ARGUS_TK_WORD, s, YYCURSOR); kind = ARGUS_TK_WORD; goto done; }
        *      { return fail(t, s, "stray '='"); }
    */
done:
    if (*YYCURSOR != ' ' && *YYCURSOR != '\t' && *YYCURSOR != '\0')
        return fail(t, YYCURSOR, "missing blank between two tokens");
    *pp = (const char *)YYCURSOR;
    return t->kind = kind;
}

size_t ingest_argus_val_text(const argus_val *v, char *dst)
{
    if (v->kind == ARGUS_TK_NUM && v->hex) { /* "%s0x%llx", without printf's cost per event */
        static const char digits[] = "0123456789abcdef";
        char tmp[16];
        size_t o = 0, k = 0;
        uint64_t x = v->num;
        if (v->neg)
            dst[o++] = '-';
        dst[o++] = '0';
        dst[o++] = 'x';
        do
            tmp[k++] = digits[x & 15];
        while ((x >>= 4) != 0);
        while (k)
            dst[o++] = tmp[--k];
        return o;
    }
    if (v->kind != ARGUS_TK_STR) {
        memcpy(dst, v->p, v->n);
        return v->n;
    }
    size_t o = 0;
    for (size_t i = 0; i < v->n; i++) {
        /* \" and \\ are the escapes; any other backslash is kept as is */
        if (v->p[i] == '\\' && i + 1 < v->n && (v->p[i + 1] == '"' || v->p[i + 1] == '\\'))
            i++;
        dst[o++] = v->p[i];
    }
    return o;
}
