/* query/ast.c -- the AST: arena, the constructors the grammar actions
 * call, and the S-expression printer (query_ast_dump). */
#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query_ast.h"
#include "query_grammar.h" /* QTK_* token codes (build/gen) */

/* ---- arena ---- */

struct query_arena_block {
    query_arena_block *next;
    size_t used, cap;
    max_align_t data[]; /* cap bytes */
};

#define ARENA_ALIGN (sizeof(max_align_t))
#define ARENA_MIN_BLOCK 4096

static void *arena_fail(query_arena *a)
{
    if (a->oom)
        longjmp(*a->oom, 1);
    return NULL;
}

void *query_arena_alloc(query_arena *a, size_t n)
{
    if (n == 0)
        n = 1;
    if (n > SIZE_MAX / 4)
        return arena_fail(a);
    n = (n + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    query_arena_block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = b ? b->cap * 2 : ARENA_MIN_BLOCK;
        if (cap > 1u << 20)
            cap = 1u << 20;
        if (cap < n)
            cap = n;
        b = malloc(sizeof *b + cap);
        if (!b)
            return arena_fail(a);
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
    }
    void *p = (unsigned char *)b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *query_arena_strndup(query_arena *a, const char *s, size_t n)
{
    char *p = query_arena_alloc(a, n + 1);
    if (p && n)
        memcpy(p, s, n);
    return p;
}

void query_arena_free(query_arena *a)
{
    query_arena_block *b = a->head;
    while (b) {
        query_arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}

/* ---- errors ---- */

void query_ast_error(query_parse_state *ps, const query_pos *pos, const char *fmt, ...)
{
    if (ps->failed)
        return;
    ps->failed = true;
    memset(&ps->err, 0, sizeof ps->err);
    if (pos) {
        ps->err.line = pos->line;
        ps->err.col = pos->col;
        ps->err.offset = pos->offset;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err.msg, sizeof ps->err.msg, fmt, ap);
    va_end(ap);
}

void query_ast_syntax_error(query_parse_state *ps, const query_token *t)
{
    if (t->code == 0) {
        query_ast_error(ps, &t->pos, "unexpected end of input");
        return;
    }
    int n = t->len > 60 ? 60 : (int)t->len;
    query_ast_error(ps, &t->pos, "syntax error near \"%.*s%s\"", n, t->text,
                    t->len > 60 ? "..." : "");
}

/* ---- constructors ---- */

query_stmt *query_ast_stmt(query_parse_state *ps, query_stmt_kind kind, const query_token *first)
{
    query_stmt *st = query_arena_alloc(ps->arena, sizeof *st);
    st->kind = kind;
    st->pos = first->pos;
    st->text = first->text;
    return st;
}

void query_ast_add_stmt(query_parse_state *ps, const query_stmt *st)
{
    if (ps->count == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 8;
        const query_stmt **v = query_arena_alloc(ps->arena, cap * sizeof *v);
        if (ps->count)
            memcpy(v, ps->stmts, ps->count * sizeof *v);
        ps->stmts = v;
        ps->cap = cap;
    }
    /* the statement ends where the token that completed it (';' or the
     * end of input) begins */
    query_stmt *w = (query_stmt *)st;
    if (ps->cur && ps->cur->text >= st->text) {
        size_t n = (size_t)(ps->cur->text - st->text);
        while (n && (st->text[n - 1] == ' ' || st->text[n - 1] == '\t' || st->text[n - 1] == '\n' ||
                     st->text[n - 1] == '\r'))
            n--;
        w->text_len = n;
    }
    ps->stmts[ps->count++] = st;
}

query_name query_ast_name(query_parse_state *ps, const query_token *t)
{
    query_name n = { .pos = t->pos };
    if (t->code == QTK_STRING) {
        n.name = t->str;
        n.len = t->str_len;
    } else {
        n.name = query_arena_strndup(ps->arena, t->text, t->len);
        n.len = t->len;
    }
    return n;
}

query_literal query_ast_literal(query_parse_state *ps, const query_token *t)
{
    query_literal l = { .pos = t->pos };
    l.text = query_arena_strndup(ps->arena, t->text, t->len);
    switch (t->code) {
    case QTK_STRING:
        l.kind = QUERY_LIT_STRING;
        l.str = t->str;
        l.len = t->str_len;
        return l;
    case QTK_DURATION:
        l.kind = QUERY_LIT_DURATION;
        break;
    default:
        l.kind = QUERY_LIT_INT;
        break;
    }
    l.uval = t->uval;
    if (t->is_negative && t->uval != 0) {
        l.is_negative = true;
        l.fits_int64 = true;
        /* magnitude <= 2^63 (checked by the lexer) */
        l.ival = t->uval == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)t->uval;
    } else if (t->uval <= (uint64_t)INT64_MAX) {
        l.fits_int64 = true;
        l.ival = (int64_t)t->uval;
    }
    return l;
}

query_ast_num query_ast_count(query_parse_state *ps, const query_token *t, const char *what)
{
    query_ast_num n = { .has = true, .value = t->uval, .pos = t->pos };
    if (t->is_negative && t->uval != 0) {
        query_ast_error(ps, &t->pos, "%s must be a non-negative integer", what);
        n.value = 0;
    }
    return n;
}

query_operand query_ast_field_operand(query_parse_state *ps, const query_token *t)
{
    query_operand o = { .kind = QUERY_OPD_FIELD, .pos = t->pos };
    o.field = query_ast_name(ps, t);
    return o;
}

query_operand query_ast_lit_operand(const query_literal *lit)
{
    query_operand o = { .kind = QUERY_OPD_LITERAL, .pos = lit->pos, .lit = *lit };
    return o;
}

static query_expr *new_expr(query_parse_state *ps, query_expr_kind kind, query_pos pos)
{
    query_expr *e = query_arena_alloc(ps->arena, sizeof *e);
    e->kind = kind;
    e->pos = pos;
    e->depth = 1;
    return e;
}

/* An operator over operands of depth d: refused past QUERY_EXPR_DEPTH_MAX. */
static void set_depth(query_parse_state *ps, query_expr *e, int d)
{
    e->depth = d + 1;
    if (e->depth > QUERY_EXPR_DEPTH_MAX)
        query_ast_error(ps, &e->pos, "expression nested too deeply (more than %d operators)",
                        QUERY_EXPR_DEPTH_MAX);
}

query_expr *query_ast_binary(query_parse_state *ps, query_expr_kind kind, const query_token *op,
                             const query_expr *lhs, const query_expr *rhs)
{
    query_expr *e = new_expr(ps, kind, op->pos);
    e->bin.lhs = lhs;
    e->bin.rhs = rhs;
    set_depth(ps, e, lhs->depth > rhs->depth ? lhs->depth : rhs->depth);
    return e;
}

query_expr *query_ast_not(query_parse_state *ps, const query_token *op, const query_expr *arg)
{
    query_expr *e = new_expr(ps, QUERY_EX_NOT, op->pos);
    e->unary.arg = arg;
    set_depth(ps, e, arg->depth);
    return e;
}

/* `kind = thread`, `kind = wakeup`: a kind's name written bare is that
 * name, not a field (`thread` is one too): kinds are a closed set, and
 * the kind compared with a field is never what was meant. */
static query_operand kind_word(const query_operand *field, const query_operand *w)
{
    if (field->kind != QUERY_OPD_FIELD || w->kind != QUERY_OPD_FIELD || strcasecmp(field->field.name, "kind") != 0 ||
        (db_node_kind_from_name(w->field.name, w->field.len) < 0 &&
         db_edge_kind_from_name(w->field.name, w->field.len) < 0))
        return *w;
    query_operand o = {.kind = QUERY_OPD_LITERAL, .pos = w->pos};
    o.lit = (query_literal){.kind = QUERY_LIT_STRING, .pos = w->pos, .text = w->field.name, .str = w->field.name,
                            .len = w->field.len};
    return o;
}

query_expr *query_ast_cmp(query_parse_state *ps, const query_ast_op *op, const query_operand *lhs,
                          const query_operand *rhs)
{
    query_expr *e = new_expr(ps, QUERY_EX_CMP, op->pos);
    e->cmp.op = op->op;
    e->cmp.lhs = kind_word(rhs, lhs);
    e->cmp.rhs = kind_word(lhs, rhs);
    return e;
}

query_expr *query_ast_in(query_parse_state *ps, const query_token *op, const query_token *field,
                         const query_ast_lits *items, bool negated)
{
    query_expr *e = new_expr(ps, QUERY_EX_IN, op->pos);
    e->in.lhs = query_ast_field_operand(ps, field);
    e->in.items = items->items;
    e->in.count = items->count;
    e->in.negated = negated;
    return e;
}

/* Grows an arena vector of `size`-byte items to hold one more. */
static void *vec_grow(query_parse_state *ps, void *items, size_t count, size_t *cap, size_t size)
{
    if (count < *cap)
        return items;
    size_t ncap = *cap ? *cap * 2 : 4;
    void *v = query_arena_alloc(ps->arena, ncap * size);
    if (count)
        memcpy(v, items, count * size);
    *cap = ncap;
    return v;
}

void query_ast_names_push(query_parse_state *ps, query_ast_names *v, query_name n)
{
    v->items = vec_grow(ps, v->items, v->count, &v->cap, sizeof *v->items);
    v->items[v->count++] = n;
}

/* ---- group by / compute ---- */

/* the aggregates by the names a statement may call them */
static const struct {
    const char *name;
    query_agg_fn fn;
} fns[] = {{"count", QUERY_AGG_COUNT}, {"sum", QUERY_AGG_SUM},   {"min", QUERY_AGG_MIN},
           {"max", QUERY_AGG_MAX},     {"avg", QUERY_AGG_AVG},   {"median", QUERY_AGG_P50},
           {"p50", QUERY_AGG_P50},     {"p90", QUERY_AGG_P90},   {"p95", QUERY_AGG_P95},
           {"p99", QUERY_AGG_P99}};

void query_agg_words(query_words *ws)
{
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        query_words_add(ws, fns[i].name);
}

query_agg query_ast_agg(query_parse_state *ps, const query_token *fn, const query_token *field)
{
    query_agg a = {.fn_name = query_ast_name(ps, fn), .pos = fn->pos};
    if (field)
        a.field = query_ast_name(ps, field);
    size_t i = 0;
    while (i < sizeof fns / sizeof fns[0] && strcasecmp(fns[i].name, a.fn_name.name) != 0)
        i++;
    if (i == sizeof fns / sizeof fns[0])
        query_ast_error(ps, &a.pos,
                        field ? "no aggregate \"%s\" (count, sum, min, max, avg, median, p50, p90, p95, p99)"
                              : "\"%s\" is no aggregate: count, or FN(FIELD) with FN one of sum, min, max, avg, "
                                "median, p50, p90, p95, p99",
                        a.fn_name.name);
    else {
        a.fn = fns[i].fn;
        if (!field && a.fn != QUERY_AGG_COUNT)
            query_ast_error(ps, &a.pos, "%s of what? %s(FIELD)", a.fn_name.name, a.fn_name.name);
    }
    return a;
}

void query_ast_aggs_push(query_parse_state *ps, query_ast_aggs *v, query_agg a)
{
    v->items = vec_grow(ps, v->items, v->count, &v->cap, sizeof *v->items);
    v->items[v->count++] = a;
}

/* " count", " sum(blocked)": an aggregate as the printer and the
 * output's column heads name it (lower case) */
void query_agg_name_print(const query_agg *a, FILE *out)
{
    if (a->field.name)
        fprintf(out, " %s(%s)", query_agg_fn_name(a->fn), a->field.name);
    else
        fprintf(out, " %s", query_agg_fn_name(a->fn));
}

const char *query_agg_fn_name(query_agg_fn f)
{
    static const char *const names[] = {
        [QUERY_AGG_COUNT] = "count", [QUERY_AGG_SUM] = "sum", [QUERY_AGG_MIN] = "min",
        [QUERY_AGG_MAX] = "max",     [QUERY_AGG_AVG] = "avg", [QUERY_AGG_P50] = "p50",
        [QUERY_AGG_P90] = "p90",     [QUERY_AGG_P95] = "p95", [QUERY_AGG_P99] = "p99",
    };
    assert((size_t)f < sizeof names / sizeof names[0] && names[f]);
    return names[f];
}

/* The same aggregate: function and field (case ignored). */
static bool same_agg(const query_agg *a, const query_agg *b)
{
    bool fa = a->field.name != NULL, fb = b->field.name != NULL;
    return a->fn == b->fn && fa == fb && (!fa || strcasecmp(a->field.name, b->field.name) == 0);
}

/* The statement's aggregates: count first, then those of `compute`, then
 * the one `order by` names if it is none of them. */
void query_ast_group(query_parse_state *ps, query_stmt *st, const query_ast_group_by *g, const query_ast_order *o)
{
    st->order_agg = -1;
    if (!g->has) {
        if (o->is_agg)
            query_ast_error(ps, &o->agg.pos, "order by an aggregate needs `group by` or `compute`");
        return;
    }
    st->grouped = true;
    st->group_pos = g->pos;
    st->group_by = g->by.items;
    st->ngroup = g->by.count;
    query_ast_aggs all = {0};
    query_agg count = {.fn = QUERY_AGG_COUNT, .fn_name = {.name = "count", .len = 5}, .pos = g->pos};
    query_ast_aggs_push(ps, &all, count);
    for (size_t i = 0; i < g->aggs.count; i++) {
        size_t j = 0;
        while (j < all.count && !same_agg(&all.items[j], &g->aggs.items[i]))
            j++;
        if (j == all.count)
            query_ast_aggs_push(ps, &all, g->aggs.items[i]);
    }
    if (o->has && !o->is_agg && strcasecmp(o->field.name, "count") == 0)
        st->order_agg = 0; /* `order by count`: the rows of each group */
    else if (o->is_agg) {
        size_t j = 0;
        while (j < all.count && !same_agg(&all.items[j], &o->agg))
            j++;
        if (j == all.count)
            query_ast_aggs_push(ps, &all, o->agg);
        st->order_agg = (int)j;
    }
    st->aggs = all.items;
    st->naggs = all.count;
}

void query_ast_lits_push(query_parse_state *ps, query_ast_lits *v, query_literal l)
{
    v->items = vec_grow(ps, v->items, v->count, &v->cap, sizeof *v->items);
    v->items[v->count++] = l;
}

/* ---- the clauses of match and diagnose ----
 * They come in any order (the grammar collects them in a list: as
 * optional clauses in a fixed order, `against trace "T" in archive "P"`
 * and the anomaly's `in trace "A"` after it would need two tokens of
 * lookahead after `in`), so the actions check what a statement takes. */

void query_ast_clause_trace(query_parse_state *ps, query_ast_clauses *c, const query_token *s)
{
    if (c->trace.name)
        query_ast_error(ps, &s->pos, "`in trace` given twice");
    c->trace = query_ast_name(ps, s);
}

void query_ast_clause_archive(query_parse_state *ps, query_ast_clauses *c, const query_token *s)
{
    if (c->archive.name)
        query_ast_error(ps, &s->pos, "`in archive` given twice");
    else if (s->str_len == 0)
        query_ast_error(ps, &s->pos, "an empty archive path");
    c->archive = query_ast_name(ps, s);
}

void query_ast_clause_against(query_parse_state *ps, query_ast_clauses *c, const query_token *against,
                              const query_token *s)
{
    if (c->against.name || c->against_traces)
        query_ast_error(ps, &against->pos, "`against` given twice");
    c->against = query_ast_name(ps, s);
    c->against_pos = against->pos;
}

void query_ast_clause_traces(query_parse_state *ps, query_ast_clauses *c, const query_token *word,
                             const query_token *traces, const query_expr *where)
{
    bool against = word->code == QTK_AGAINST;
    if (against ? c->against.name || c->against_traces : c->traces)
        query_ast_error(ps, &word->pos, "%s given twice", against ? "`against`" : "`in traces`");
    if (against) {
        c->against_traces = true;
        c->against_pos = word->pos;
        c->against_where = where;
        c->against_traces_pos = traces->pos;
    } else {
        c->traces = true;
        c->where = where;
        c->traces_pos = traces->pos;
    }
}

void query_ast_clause_limit(query_parse_state *ps, query_ast_clauses *c, const query_token *kw,
                            const query_token *k)
{
    if (c->limit.has)
        query_ast_error(ps, &kw->pos, "`limit` given twice");
    c->limit = query_ast_count(ps, k, "limit");
}

void query_ast_places(query_parse_state *ps, query_stmt *st, const query_ast_clauses *c)
{
    st->archive = c->archive;
    st->trace = c->trace;
    if (c->limit.has && st->kind != QUERY_ST_MATCH)
        query_ast_error(ps, &c->limit.pos, "only match takes a limit");
    if (st->kind == QUERY_ST_MATCH) {
        st->has_limit = c->limit.has;
        st->limit = c->limit.value;
        /* where to look: one trace, a set, or (neither) every trace */
        if (c->against.name || c->against_traces)
            query_ast_error(ps, &c->against_pos, "match looks `in trace \"T\"` or `in traces where ...`, not against");
        else if (c->trace.name && c->traces)
            query_ast_error(ps, &c->traces_pos, "`in trace` and `in traces` exclude each other");
        st->traces_all = c->traces;
        st->traces_where = c->where;
        st->traces_pos = c->traces_pos;
        return;
    }
    if (st->kind == QUERY_ST_COMPARE_GROUPS) {
        /* two groups of runs of this archive: `in traces` and `against traces` */
        if (c->trace.name || c->against.name || c->archive.name || !c->traces || !c->against_traces)
            query_ast_error(ps, c->trace.name ? &c->trace.pos : c->against.name ? &c->against.pos
                                : c->archive.name ? &c->archive.pos : &st->pos,
                            "compare thread takes two groups of traces: `in traces [where ...] against traces "
                            "[where ...]`");
        st->traces_all = true;
        st->traces_where = c->where;
        st->traces_pos = c->traces_pos;
        st->against_all = true;
        st->against_where = c->against_where;
        st->against_traces_pos = c->against_traces_pos;
        return;
    }
    /* diagnose: `in trace` is the anomaly's; against says where the
     * baseline is, in the archive `in archive` names */
    if (c->traces)
        query_ast_error(ps, &c->traces_pos, "diagnose takes `against traces where ...`, not `in traces`");
    st->against = c->against;
    st->traces_all = c->against_traces;
    st->traces_where = c->against_where;
    st->traces_pos = c->against_traces_pos;
}

/* ---- printer ---- */

const char *query_cmp_op_str(query_cmp_op op)
{
    static const char *const names[] = {
        [QUERY_OP_EQ] = "=", [QUERY_OP_NE] = "!=", [QUERY_OP_LT] = "<",
        [QUERY_OP_LE] = "<=", [QUERY_OP_GT] = ">", [QUERY_OP_GE] = ">=",
    };
    return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

static void dump_string(const char *s, size_t len, FILE *out)
{
    fputc('"', out);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static void dump_literal(const query_literal *l, FILE *out)
{
    switch (l->kind) {
    case QUERY_LIT_STRING:
        dump_string(l->str, l->len, out);
        break;
    case QUERY_LIT_DURATION:
        fprintf(out, "%lluns", (unsigned long long)l->uval);
        break;
    case QUERY_LIT_INT:
        if (l->is_negative)
            fprintf(out, "%lld", (long long)l->ival);
        else
            fprintf(out, "%llu", (unsigned long long)l->uval);
        break;
    }
}

static void dump_operand(const query_operand *o, FILE *out)
{
    if (o->kind == QUERY_OPD_FIELD)
        fputs(o->field.name, out);
    else
        dump_literal(&o->lit, out);
}

void query_ast_dump_expr(const query_expr *e, FILE *out)
{
    switch (e->kind) {
    case QUERY_EX_AND:
    case QUERY_EX_OR:
        fputs(e->kind == QUERY_EX_AND ? "(and " : "(or ", out);
        query_ast_dump_expr(e->bin.lhs, out);
        fputc(' ', out);
        query_ast_dump_expr(e->bin.rhs, out);
        fputc(')', out);
        break;
    case QUERY_EX_NOT:
        fputs("(not ", out);
        query_ast_dump_expr(e->unary.arg, out);
        fputc(')', out);
        break;
    case QUERY_EX_CMP:
        fprintf(out, "(%s ", query_cmp_op_str(e->cmp.op));
        dump_operand(&e->cmp.lhs, out);
        fputc(' ', out);
        dump_operand(&e->cmp.rhs, out);
        fputc(')', out);
        break;
    case QUERY_EX_IN:
        fputs(e->in.negated ? "(not-in " : "(in ", out);
        dump_operand(&e->in.lhs, out);
        fputs(" (", out);
        for (size_t i = 0; i < e->in.count; i++) {
            if (i)
                fputc(' ', out);
            dump_literal(&e->in.items[i], out);
        }
        fputs("))", out);
        break;
    }
}

static void dump_in_trace(const query_stmt *st, FILE *out)
{
    if (st->trace.name) {
        fputs(" (in-trace ", out);
        dump_string(st->trace.name, st->trace.len, out);
        fputc(')', out);
    }
}

/* match ... in traces [where E], diagnose ... against traces [where E],
 * and the archive they look in */
static void dump_traces_where(const query_stmt *st, FILE *out)
{
    if (st->traces_where) {
        fputs(" (traces-where ", out);
        query_ast_dump_expr(st->traces_where, out);
        fputc(')', out);
    } else if (st->traces_all)
        fputs(" (traces)", out);
    if (st->archive.name) {
        fputs(" (in-archive ", out);
        dump_string(st->archive.name, st->archive.len, out);
        fputc(')', out);
    }
}

static void dump_find(const query_stmt *st, FILE *out)
{
    fprintf(out, "(find %s", st->target == QUERY_TARGET_NODES    ? "nodes"
                             : st->target == QUERY_TARGET_EDGES ? "edges"
                                                                : "events");
    if (st->where) {
        fputs(" (where ", out);
        query_ast_dump_expr(st->where, out);
        fputc(')', out);
    }
    if (st->grouped) {
        fputs(" (group-by", out);
        for (size_t i = 0; i < st->ngroup; i++)
            fprintf(out, " %s", st->group_by[i].name);
        fputs(") (aggregates", out);
        for (size_t i = 0; i < st->naggs; i++)
            query_agg_name_print(&st->aggs[i], out);
        fputc(')', out);
    }
    if (st->has_order && st->order_agg >= 0) {
        fputs(" (order-by", out);
        query_agg_name_print(&st->aggs[st->order_agg], out);
        fprintf(out, " %s)", st->order_desc ? "desc" : "asc");
    } else if (st->has_order)
        fprintf(out, " (order-by %s %s)", st->order_by.name, st->order_desc ? "desc" : "asc");
    if (st->has_limit)
        fprintf(out, " (limit %llu)", (unsigned long long)st->limit);
    dump_in_trace(st, out);
    fputc(')', out);
}

static void dump_rule(const query_stmt *st, FILE *out)
{
    static const char *const kinds[] = {"boundary", "connect", "ignore"};
    fprintf(out, "(rule %s", kinds[st->rule]);
    const query_rule_match *m[2] = {&st->ra, &st->rb};
    for (int i = 0; i < (st->rule == QUERY_RULE_CONNECT ? 2 : 1); i++) {
        fprintf(out, " (%s", m[i]->type.name);
        if (m[i]->phase.name)
            fprintf(out, " %s", m[i]->phase.name);
        if (m[i]->where) {
            fputs(" (where ", out);
            query_ast_dump_expr(m[i]->where, out);
            fputc(')', out);
        }
        fputc(')', out);
    }
    if (st->rule == QUERY_RULE_CONNECT)
        fprintf(out, " (on %s %s)", st->a_key.name, st->b_key.name);
    dump_in_trace(st, out);
    fputc(')', out);
}

/* diagnose and check fix */
static void dump_diagnose(const query_stmt *st, FILE *out)
{
    fputs(st->kind == QUERY_ST_DIAGNOSE ? "(diagnose" : "(check-fix", out);
    if (st->by_thread)
        fprintf(out, " (thread \"%s\")", st->thread_name.name);
    else
        fprintf(out, " %llu", (unsigned long long)st->node);
    if (st->against.name)
        fprintf(out, " (against \"%s\")", st->against.name);
    dump_traces_where(st, out);
    if (st->after.name)
        fprintf(out, " (after \"%s\")", st->after.name);
    else if (st->kind == QUERY_ST_CHECK_FIX && st->against_all) {
        fputs(" (after-traces", out);
        if (st->against_where) {
            fputc(' ', out);
            query_ast_dump_expr(st->against_where, out);
        }
        fputc(')', out);
    }
    dump_in_trace(st, out);
    fputc(')', out);
}

static void dump_slice(const query_stmt *st, FILE *out)
{
    fprintf(out, "(slice %s %llu", st->dir == QUERY_SLICE_BACK ? "back" : "forward",
            (unsigned long long)st->node);
    if (st->has_depth)
        fprintf(out, " (depth %llu)", (unsigned long long)st->depth);
    if (st->via_count) {
        fputs(" (via", out);
        for (size_t i = 0; i < st->via_count; i++)
            fprintf(out, " %s", st->via[i].name);
        fputc(')', out);
    }
    if (st->with_weak)
        fputs(" (with-weak)", out);
    dump_in_trace(st, out);
    fputc(')', out);
}

void query_ast_dump(const query_stmt *st, FILE *out)
{
    switch (st->kind) {
    case QUERY_ST_TRACES:
        fputs("(traces", out);
        if (st->where) {
            fputc(' ', out);
            query_ast_dump_expr(st->where, out);
        }
        fputc(')', out);
        return;
    case QUERY_ST_LABEL:
        fputs("(label ", out);
        dump_string(st->trace.name, st->trace.len, out);
        fprintf(out, " %s %.*s", st->has_label_value ? "set" : "unset", (int)st->new_name.len, st->new_name.name);
        if (st->has_label_value)
            fprintf(out, " %s", st->label_value.text);
        fputc(')', out);
        return;
    case QUERY_ST_USE:
        fputs("(use ", out);
        dump_string(st->trace.name, st->trace.len, out);
        fputc(')', out);
        return;
    case QUERY_ST_HELP:
        if (st->topic.name)
            fprintf(out, "(help %s)", st->topic.name);
        else
            fputs("(help)", out);
        return;
    case QUERY_ST_SHOW_NODE:
    case QUERY_ST_EVENTS_OF:
        fprintf(out, "(%s %llu", st->kind == QUERY_ST_SHOW_NODE ? "show-node" : "events-of",
                (unsigned long long)st->node);
        dump_in_trace(st, out);
        fputc(')', out);
        return;
    case QUERY_ST_FIND:
        dump_find(st, out);
        return;
    case QUERY_ST_RULE:
        dump_rule(st, out);
        return;
    case QUERY_ST_MATCH:
        fprintf(out, "(match %llu", (unsigned long long)st->node);
        dump_in_trace(st, out);
        dump_traces_where(st, out);
        if (st->has_limit)
            fprintf(out, " (limit %llu)", (unsigned long long)st->limit);
        fputc(')', out);
        return;
    case QUERY_ST_COMPARE_NODES:
        fprintf(out, "(compare-nodes %llu %llu", (unsigned long long)st->node, (unsigned long long)st->node2);
        dump_in_trace(st, out);
        fputc(')', out);
        return;
    case QUERY_ST_COMPARE_GROUPS:
        fprintf(out, "(compare-groups (thread \"%s\")", st->thread_name.name);
        dump_traces_where(st, out);
        if (st->against_where) {
            fputs(" (against-where ", out);
            query_ast_dump_expr(st->against_where, out);
            fputc(')', out);
        } else
            fputs(" (against-traces)", out);
        fputc(')', out);
        return;
    case QUERY_ST_COMPARE_PATHS:
        fputs("(compare-paths ", out);
        query_ast_dump(st->path_a, out);
        fputc(' ', out);
        query_ast_dump(st->path_b, out);
        fputc(')', out);
        return;
    case QUERY_ST_DIAGNOSE:
    case QUERY_ST_CHECK_FIX:
        dump_diagnose(st, out);
        return;
    case QUERY_ST_EXPORT:
        fputs("(export ", out);
        query_ast_dump(st->inner, out);
        fputc(' ', out);
        dump_string(st->file.name, st->file.len, out);
        fputc(')', out);
        return;
    case QUERY_ST_CRITICAL_PATH:
        fputs("(critical-path", out);
        if (st->by_thread)
            fprintf(out, " (thread \"%s\")", st->thread_name.name);
        else
            fprintf(out, " %llu", (unsigned long long)st->node);
        dump_in_trace(st, out);
        fputc(')', out);
        return;
    case QUERY_ST_TRANSACTION:
        fprintf(out, "(transaction %llu", (unsigned long long)st->node);
        if (st->has_depth)
            fprintf(out, " (depth %llu)", (unsigned long long)st->depth);
        dump_in_trace(st, out);
        fputc(')', out);
        return;
    case QUERY_ST_RULES:
        fputs("(rules", out);
        dump_in_trace(st, out);
        fputc(')', out);
        return;
    case QUERY_ST_DROP_RULE:
        fprintf(out, "(drop-rule %llu", (unsigned long long)st->node);
        dump_in_trace(st, out);
        fputc(')', out);
        return;
    case QUERY_ST_DROP_TRACE:
        fputs("(drop-trace ", out);
        dump_string(st->trace.name, st->trace.len, out);
        fputc(')', out);
        return;
    case QUERY_ST_RENAME_TRACE:
        fputs("(rename-trace ", out);
        dump_string(st->trace.name, st->trace.len, out);
        fputc(' ', out);
        dump_string(st->new_name.name, st->new_name.len, out);
        fputc(')', out);
        return;
    case QUERY_ST_REBUILD:
        fputs("(rebuild-graph", out);
        dump_in_trace(st, out);
        fputc(')', out);
        return;
    case QUERY_ST_SLICE:
        dump_slice(st, out);
        return;
    }
    fputs("(?)", out);
}
