/* query/parse.c -- the parse driver: runs the re2c lexer
 * (query/query_lex.re) and feeds its tokens to the lemon parser
 * (query/query_grammar.y), which builds the AST (query_ast.h) in the
 * script's arena.
 *
 * Errors: the first lexical, syntax or semantic error stops the parse; the
 * parser and the arena are freed and query_parse returns NULL with err
 * filled (query_parse_some keeps the statements before it).  Out of memory anywhere longjmps back here (query_arena.oom). */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "query_ast.h"
#include "query_grammar.h"

/* The lemon parser (%name query_parser); lemon emits no prototypes. */
void *query_parserAlloc(void *(*alloc)(size_t));
void query_parserFree(void *p, void (*dealloc)(void *));
void query_parser(void *p, int major, query_token minor, query_parse_state *ps);

static void set_oom(query_error *err)
{
    memset(err, 0, sizeof *err);
    snprintf(err->msg, sizeof err->msg, "out of memory");
}

static query_script *parse(const char *src, size_t len, bool some, query_error *err)
{
    query_script *volatile s = calloc(1, sizeof *s);
    if (!s) {
        if (err)
            set_oom(err);
        return NULL;
    }
    void *volatile parser = NULL;
    jmp_buf oom;
    if (setjmp(oom)) {
        if (parser)
            query_parserFree(parser, free);
        query_arena_free(&s->arena);
        free(s);
        if (err)
            set_oom(err);
        return NULL;
    }
    s->arena.oom = &oom;

    query_parse_state ps;
    memset(&ps, 0, sizeof ps);
    ps.arena = &s->arena;

    query_lexer lx;
    query_lex_init(&lx, src ? src : "", src ? len : 0, &s->arena);
    parser = query_parserAlloc(malloc);
    if (!parser)
        longjmp(oom, 1);

    query_token tok;
    /* the statements a ';' (or the end) closed: the parser reduces one on
     * the token after it, so a statement that fails at its own next word
     * was counted before it failed, and must not run */
    size_t closed = 0;
    for (;;) {
        int code = query_lex_next(&lx, &tok, &ps.err);
        if (code < 0) {
            ps.failed = true;
            break;
        }
        ps.cur = &tok;
        query_parser(parser, code, tok, &ps);
        if (ps.failed || code == 0)
            break;
        if (code == QTK_SEMI)
            closed = ps.count;
    }
    if (ps.failed)
        ps.count = closed;
    query_parserFree(parser, free);
    parser = NULL;

    if (ps.failed && err)
        *err = ps.err;
    if (ps.failed && !some) {
        query_arena_free(&s->arena);
        free(s);
        return NULL;
    }
    s->stmts = ps.stmts;
    s->count = ps.count;
    s->arena.oom = NULL; /* the jmp_buf dies with this frame */
    return s;
}

query_script *query_parse(const char *src, size_t len, query_error *err) { return parse(src, len, false, err); }

query_script *query_parse_some(const char *src, size_t len, query_error *err)
{
    if (err)
        err->msg[0] = 0;
    return parse(src, len, true, err);
}

size_t query_script_count(const query_script *s)
{
    return s ? s->count : 0;
}

const query_stmt *query_script_stmt(const query_script *s, size_t i)
{
    return s && i < s->count ? s->stmts[i] : NULL;
}

void query_script_free(query_script *s)
{
    if (!s)
        return;
    query_arena_free(&s->arena);
    free(s);
}

const char *query_stmt_text(const query_stmt *st, size_t *len)
{
    *len = st ? st->text_len : 0;
    return st ? st->text : "";
}

int query_stmt_line(const query_stmt *st)
{
    return st ? st->pos.line : 0;
}

bool query_stmt_needs_archive(const query_stmt *st) { return st->kind != QUERY_ST_HELP; }
