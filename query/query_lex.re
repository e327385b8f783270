/* query/query_lex.re -- the query language lexer (re2c 3.0).
 *
 * Generated into build/gen/query_lex.c.  Token codes come from the lemon
 * grammar (build/gen/query_grammar.h); the token type and the lexer state
 * are declared in query/query_ast.h.
 *
 * The source is copied into the arena with a NUL sentinel (re2c:eof); a
 * NUL byte before the real end is an ordinary (bad) character.  Every
 * token records its byte offset, 1-based line and 1-based byte column.
 *
 * Tokens: keywords (case-insensitive), identifiers [A-Za-z_][A-Za-z0-9_.]*,
 * strings "..." with \" and \\ escapes, integers (decimal, 0x hex, with an
 * optional leading '-'), durations (digits[.digits] then ns|us|ms|s,
 * converted to whole nanoseconds), = != <> < <= > >= ( ) , ;.
 * `--` starts a comment to the end of the line. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "query/query_ast.h"
#include "query_grammar.h"

int query_lex_init(query_lexer *lx, const char *src, size_t len, query_arena *a)
{
    memset(lx, 0, sizeof *lx);
    char *copy = query_arena_alloc(a, len + 1);
    if (!copy)
        return -1;
    if (len)
        memcpy(copy, src, len);
    lx->arena = a;
    lx->base = (const unsigned char *)copy;
    lx->cur = lx->base;
    lx->lim = lx->base + len;
    lx->line_start = lx->base;
    lx->line = 1;
    return 0;
}

static query_pos lex_pos(const query_lexer *lx, const unsigned char *at)
{
    query_pos p;
    p.line = lx->line;
    p.col = (int)(at - lx->line_start) + 1;
    p.offset = (size_t)(at - lx->base);
    return p;
}

__attribute__((format(printf, 4, 5)))
static int lex_error(query_lexer *lx, query_error *err, const unsigned char *at, const char *fmt, ...)
{
    if (!err)
        return -1;
    query_pos p = lex_pos(lx, at);
    memset(err, 0, sizeof *err);
    err->line = p.line;
    err->col = p.col;
    err->offset = p.offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* The token text for a message, cut short if long. */
#define TEXT_ARGS(s, e) ((e) - (s) > 40 ? 40 : (int)((e) - (s))), (const char *)(s), \
                        ((e) - (s) > 40 ? "..." : "")

static int digit_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return c - 'A' + 10;
}

/* s..e: [-](digits | 0x hexdigits).  0, or -1 on overflow (uint64 for a
 * non-negative value, int64 for a negative one). */
static int lex_integer(const unsigned char *s, const unsigned char *e, uint64_t *mag, bool *neg)
{
    *neg = false;
    if (*s == '-') {
        *neg = true;
        s++;
    }
    unsigned base = 10;
    if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    uint64_t v = 0;
    for (; s < e; s++) {
        if (__builtin_mul_overflow(v, base, &v) || __builtin_add_overflow(v, (uint64_t)digit_value(*s), &v))
            return -1;
    }
    if (*neg && v > (uint64_t)INT64_MAX + 1)
        return -1;
    if (v == 0)
        *neg = false;
    *mag = v;
    return 0;
}

/* s..e: digits [. digits] (ns|us|ms|s).  0; -1 overflow; -2 not a whole
 * number of nanoseconds. */
static int lex_duration(const unsigned char *s, const unsigned char *e, uint64_t *out)
{
    int exp;
    if (e - s >= 2 && e[-1] == 's' && (e[-2] == 'n' || e[-2] == 'u' || e[-2] == 'm')) {
        exp = e[-2] == 'n' ? 0 : e[-2] == 'u' ? 3 : 6;
        e -= 2;
    } else {
        exp = 9;
        e -= 1;
    }
    uint64_t scale = 1;
    for (int i = 0; i < exp; i++)
        scale *= 10;

    uint64_t ip = 0;
    for (; s < e && *s != '.'; s++)
        if (__builtin_mul_overflow(ip, 10, &ip) || __builtin_add_overflow(ip, (uint64_t)(*s - '0'), &ip))
            return -1;
    uint64_t frac = 0;
    int nfrac = 0;
    if (s < e) { /* at '.' */
        s++;
        while (e > s && e[-1] == '0') /* trailing zeros change nothing */
            e--;
        if (e - s > exp)
            return -2;
        for (; s < e; s++, nfrac++)
            frac = frac * 10 + (uint64_t)(*s - '0');
    }
    for (int i = nfrac; i < exp; i++)
        frac *= 10; /* frac < 10^exp <= 10^9: no overflow */
    uint64_t v;
    if (__builtin_mul_overflow(ip, scale, &v) || __builtin_add_overflow(v, frac, &v))
        return -1;
    *out = v;
    return 0;
}

/* Decodes the string token s..e (quotes included) into the arena. */
static int lex_string(query_lexer *lx, query_error *err, const unsigned char *s,
                      const unsigned char *e, query_token *tok)
{
    char *buf = query_arena_alloc(lx->arena, (size_t)(e - s));
    if (!buf)
        return lex_error(lx, err, s, "out of memory");
    size_t n = 0;
    for (const unsigned char *p = s + 1; p < e - 1; p++) {
        if (*p == '\\') {
            if (p[1] != '"' && p[1] != '\\') {
                if (p[1] >= 0x20 && p[1] < 0x7f)
                    return lex_error(lx, err, p, "bad escape \"\\%c\" in string (only \\\" and \\\\)", p[1]);
                return lex_error(lx, err, p, "bad escape in string (only \\\" and \\\\)");
            }
            p++;
        }
        buf[n++] = (char)*p;
    }
    buf[n] = '\0';
    tok->str = buf;
    tok->str_len = n;
    return 0;
}

int query_lex_next(query_lexer *lx, query_token *tok, query_error *err)
{
    const unsigned char *YYCURSOR = lx->cur, *YYLIMIT = lx->lim, *YYMARKER = YYCURSOR;
    const unsigned char *start;
    int code;

    memset(tok, 0, sizeof *tok);
    for (;;) {
        start = YYCURSOR;
        /*!re2c
            re2c:define:YYCTYPE = "unsigned char";
            re2c:yyfill:enable = 0;
            re2c:eof = 0;

            dec  = [0-9]+;
            hex  = "0" [xX] [0-9a-fA-F]+;
            frac = [0-9]+ "." [0-9]+;
            unit = "ns" | "us" | "ms" | "s";
            idc  = [A-Za-z0-9_.];
            id   = [A-Za-z_] idc*;
            sch  = [^"\\\n\x00];
            esc  = "\\" [^\n\x00];

            $                     { code = 0; goto done; }
            "\n"                  { lx->line++; lx->line_start = YYCURSOR; continue; }
            [ \t\r\v\f]+          { continue; }
            "--" [^\n]*           { continue; }

            ["] (sch | esc)* ["]  { code = QTK_STRING; goto string; }
            ["] (sch | esc)* "\\"? {
                if (YYCURSOR < YYLIMIT && *YYCURSOR == '\0')
                    return lex_error(lx, err, YYCURSOR, "NUL byte in string");
                return lex_error(lx, err, start, "unterminated string");
            }

            "-"? (dec | hex)      { code = QTK_INTEGER; goto integer; }
            (dec | frac) unit     { code = QTK_DURATION; goto duration; }
            "-" (dec | frac) unit {
                return lex_error(lx, err, start, "negative duration \"%.*s%s\"",
                                 TEXT_ARGS(start, YYCURSOR));
            }
            "-"? dec idc+ {
                return lex_error(lx, err, start, "bad number \"%.*s%s\" (durations take ns, us, ms or s)",
                                 TEXT_ARGS(start, YYCURSOR));
            }

            ";"   { code = QTK_SEMI; goto done; }
            ","   { code = QTK_COMMA; goto done; }
            "("   { code = QTK_LP; goto done; }
            ")"   { code = QTK_RP; goto done; }
            "="   { code = QTK_EQ; goto done; }
            "!=" | "<>" { code = QTK_NE; goto done; }
            "<"   { code = QTK_LT; goto done; }
            "<="  { code = QTK_LE; goto done; }
            ">"   { code = QTK_GT; goto done; }
            ">="  { code = QTK_GE; goto done; }

            'traces'  { code = QTK_TRACES; goto done; }
            'between' { code = QTK_BETWEEN; goto done; }
            'group'   { code = QTK_GROUP; goto done; }
            'compute' { code = QTK_COMPUTE; goto done; }
            'rule'    { code = QTK_RULE; goto done; }
            'rules'   { code = QTK_RULES; goto done; }
            'boundary' { code = QTK_BOUNDARY; goto done; }
            'connect' { code = QTK_CONNECT; goto done; }
            'ignore'  { code = QTK_IGNORE; goto done; }
            'to'      { code = QTK_TO; goto done; }
            'on'      { code = QTK_ON; goto done; }
            'drop'    { code = QTK_DROP; goto done; }
            'rebuild' { code = QTK_REBUILD; goto done; }
            'rename'  { code = QTK_RENAME; goto done; }
            'label'   { code = QTK_LABEL; goto done; }
            'set'     { code = QTK_SET; goto done; }
            'unset'   { code = QTK_UNSET; goto done; }
            'graph'   { code = QTK_GRAPH; goto done; }
            'begin'   { code = QTK_BEGIN; goto done; }
            'match'   { code = QTK_MATCH; goto done; }
            'compare' { code = QTK_COMPARE; goto done; }
            'path'    { code = QTK_PATH; goto done; }
            'diagnose' { code = QTK_DIAGNOSE; goto done; }
            'thread'  { code = QTK_THREAD; goto done; }
            'against' { code = QTK_AGAINST; goto done; }
            'archive' { code = QTK_ARCHIVE; goto done; }
            'check'   { code = QTK_CHECK; goto done; }
            'fix'     { code = QTK_FIX; goto done; }
            'after'   { code = QTK_AFTER; goto done; }
            'transaction' { code = QTK_TRANSACTION; goto done; }
            'critical' { code = QTK_CRITICAL; goto done; }
            'edges'   { code = QTK_EDGES; goto done; }
            'export'  { code = QTK_EXPORT; goto done; }
            'end'     { code = QTK_END; goto done; }
            'send'    { code = QTK_SEND; goto done; }
            'recv'    { code = QTK_RECV; goto done; }
            'use'     { code = QTK_USE; goto done; }
            'trace'   { code = QTK_TRACE; goto done; }
            'help'    { code = QTK_HELP; goto done; }
            'show'    { code = QTK_SHOW; goto done; }
            'node'    { code = QTK_NODE; goto done; }
            'events'  { code = QTK_EVENTS; goto done; }
            'of'      { code = QTK_OF; goto done; }
            'find'    { code = QTK_FIND; goto done; }
            'nodes'   { code = QTK_NODES; goto done; }
            'where'   { code = QTK_WHERE; goto done; }
            'order'   { code = QTK_ORDER; goto done; }
            'by'      { code = QTK_BY; goto done; }
            'asc'     { code = QTK_ASC; goto done; }
            'desc'    { code = QTK_DESC; goto done; }
            'limit'   { code = QTK_LIMIT; goto done; }
            'slice'   { code = QTK_SLICE; goto done; }
            'back'    { code = QTK_BACK; goto done; }
            'forward' { code = QTK_FORWARD; goto done; }
            'from'    { code = QTK_FROM; goto done; }
            'depth'   { code = QTK_DEPTH; goto done; }
            'via'     { code = QTK_VIA; goto done; }
            'with'    { code = QTK_WITH; goto done; }
            'weak'    { code = QTK_WEAK; goto done; }
            'or'      { code = QTK_OR; goto done; }
            'and'     { code = QTK_AND; goto done; }
            'not'     { code = QTK_NOT; goto done; }
            'in'      { code = QTK_IN; goto done; }

            /* `thread = ui-main`: a name with a '-' (a thread, a trace)
             * is a value, which the language quotes; there is no
             * subtraction to mean */
            id ("-" idc+)+ {
                return lex_error(lx, err, start,
                                 "%.*s%s is not a field: a value with '-' in it is a string, \"%.*s%s\"",
                                 TEXT_ARGS(start, YYCURSOR), TEXT_ARGS(start, YYCURSOR));
            }
            id    { code = QTK_ID; goto done; }

            * {
                if (*start >= 0x21 && *start < 0x7f)
                    return lex_error(lx, err, start, "bad character '%c'", *start);
                return lex_error(lx, err, start, "bad character '\\x%02x'", *start);
            }
        */
    }

integer:
    if (lex_integer(start, YYCURSOR, &tok->uval, &tok->is_negative) < 0)
        return lex_error(lx, err, start, "integer out of range \"%.*s%s\"", TEXT_ARGS(start, YYCURSOR));
    goto done;

duration:
    switch (lex_duration(start, YYCURSOR, &tok->uval)) {
    case -1:
        return lex_error(lx, err, start, "duration out of range \"%.*s%s\"", TEXT_ARGS(start, YYCURSOR));
    case -2:
        return lex_error(lx, err, start, "duration \"%.*s%s\" is not a whole number of nanoseconds",
                         TEXT_ARGS(start, YYCURSOR));
    default:
        break;
    }
    goto done;

string:
    if (lex_string(lx, err, start, YYCURSOR, tok) < 0)
        return -1;
    goto done;

done:
    (void)YYMARKER;
    tok->code = code;
    tok->text = (const char *)start;
    tok->len = (size_t)(YYCURSOR - start);
    tok->pos = lex_pos(lx, start);
    lx->cur = YYCURSOR;
    return code;
}
