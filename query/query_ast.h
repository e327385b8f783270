/* query/query_ast.h -- the AST of the query language (internal to query/).
 *
 * This header is the contract between the front end (query/query_lex.re,
 * query/query_grammar.y, query/parse.c, query/ast.c) and the executor
 * (query/exec*.c).  query_parse() (query.h) returns a query_script; every
 * statement in it is a query_stmt as described below.
 *
 * Memory: everything reachable from a query_script -- statements,
 * expressions, names, decoded strings, lists -- lives in one arena owned by
 * the script and is freed by query_script_free().  Nothing in the AST is
 * individually freeable; never keep a pointer into it past that call.
 *
 * Positions: every token the executor may want to complain about (a field,
 * a literal, a node number, a `via` kind, the trace string, the help
 * topic, an operator) carries a query_pos: 1-based line and column and the
 * 0-based byte offset in the source passed to query_parse.  Columns count
 * bytes (a tab is one column).  To report an error at a token:
 *
 *     err->line = f->pos.line; err->col = f->pos.col; err->offset = f->pos.offset;
 *     snprintf(err->msg, sizeof err->msg, "unknown field \"%s\"", f->name);
 *
 * Names (fields, via kinds, help topics) are kept exactly as written in the
 * source (case preserved); the language's keywords are case-insensitive,
 * so the executor should match field and kind names case-insensitively
 * (strcasecmp) for consistency.  A keyword used as a field name (`node`,
 * `events`, `limit`, ...; any keyword but and/or/not/in) arrives as an
 * ordinary field. */
#ifndef ARGUSQ_QUERY_AST_H
#define ARGUSQ_QUERY_AST_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "query.h"

/* ===================================================================== *
 *  Part 1: the AST (what the executor uses)                             *
 * ===================================================================== */

typedef struct query_pos {
    int line;      /* 1-based */
    int col;       /* 1-based, in bytes */
    size_t offset; /* 0-based byte offset in the source */
} query_pos;

/* An identifier or string as a name: a field, an `order by` field, a `via`
 * kind, a trace name, a help topic.  `name` is NUL-terminated; `len` is
 * its length in bytes (a trace name from a string literal cannot contain
 * a NUL byte: the lexer rejects one). */
typedef struct query_name {
    const char *name; /* NULL when absent (e.g. no `in trace`) */
    size_t len;
    query_pos pos;
} query_name;

/* ---- literals ---- */
typedef enum query_lit_kind {
    QUERY_LIT_STRING = 0, /* "text": str/len hold the decoded bytes */
    QUERY_LIT_INT,        /* 42, 0x2a, -110 */
    QUERY_LIT_DURATION    /* 300ms, 1.5us: an integer count of nanoseconds */
} query_lit_kind;

/* The value of an INT or DURATION literal:
 *   is_negative == false:  the value is uval (0 .. UINT64_MAX); ival equals
 *                          it when uval <= INT64_MAX (fits_int64), else 0
 *   is_negative == true:   the value is ival (INT64_MIN .. -1); uval is its
 *                          magnitude.  Only INT literals can be negative,
 *                          and -0 is normalized to 0 (not negative).
 * The lexer rejects values that do not fit (error at the literal). */
typedef struct query_literal {
    query_lit_kind kind;
    query_pos pos;
    const char *text; /* the literal as written (NUL-terminated), e.g. "0x2a", "\"a\\\"b\"" */
    /* STRING */
    const char *str;  /* decoded, NUL-terminated; NULL for INT/DURATION */
    size_t len;
    /* INT, DURATION */
    uint64_t uval;
    int64_t ival;
    bool is_negative;
    bool fits_int64;  /* ival holds the value */
} query_literal;

/* ---- expressions (the `where` clause) ---- */
typedef enum query_operand_kind {
    QUERY_OPD_FIELD = 0, /* a field name: `field` */
    QUERY_OPD_LITERAL    /* a literal: `lit` */
} query_operand_kind;

typedef struct query_operand {
    query_operand_kind kind;
    query_pos pos;       /* == field.pos or lit.pos */
    query_name field;    /* FIELD */
    query_literal lit;   /* LITERAL */
} query_operand;

typedef enum query_expr_kind {
    QUERY_EX_AND = 0, /* bin.lhs and bin.rhs */
    QUERY_EX_OR,      /* bin.lhs or bin.rhs */
    QUERY_EX_NOT,     /* not unary.arg */
    QUERY_EX_CMP,     /* cmp.lhs <cmp.op> cmp.rhs */
    QUERY_EX_IN       /* in.lhs [not] in (in.items[0..in.count)) */
} query_expr_kind;

typedef enum query_cmp_op {
    QUERY_OP_EQ = 0, /* =  */
    QUERY_OP_NE,     /* != or <> */
    QUERY_OP_LT,     /* <  */
    QUERY_OP_LE,     /* <= */
    QUERY_OP_GT,     /* >  */
    QUERY_OP_GE      /* >= */
} query_cmp_op;

typedef struct query_expr query_expr;
/* The evaluator, the field checker and the printer recurse over an
 * expression, so its depth is bounded (`a or b or ...` nests one level per
 * operator, without parentheses, and would otherwise overflow the stack). */
#define QUERY_EXPR_DEPTH_MAX 1000

struct query_expr {
    query_expr_kind kind;
    int depth; /* 1 for a comparison or `in`; operators: 1 + their deepest operand */
    /* The operator's token: the `and` / `or` / `not` keyword, the
     * comparison operator, or the `in` keyword (the `not` of `not in`). */
    query_pos pos;
    union {
        struct { const query_expr *lhs, *rhs; } bin;          /* AND, OR */
        struct { const query_expr *arg; } unary;              /* NOT */
        struct { query_cmp_op op; query_operand lhs, rhs; } cmp; /* CMP: either side
                                                   may be a field or a literal */
        struct {                                              /* IN */
            query_operand lhs;            /* always a field */
            const query_literal *items;   /* count >= 1 literals */
            size_t count;
            bool negated;                 /* `not in` */
        } in;
    };
};

/* ---- statements ---- */
typedef enum query_stmt_kind {
    QUERY_ST_TRACES = 0, /* traces */
    QUERY_ST_USE,        /* use trace "NAME"           -> trace */
    QUERY_ST_HELP,       /* help [WORD]                -> topic */
    QUERY_ST_SHOW_NODE,  /* show node N                -> node, trace */
    QUERY_ST_EVENTS_OF,  /* events of node N           -> node, trace */
    QUERY_ST_FIND,       /* find nodes|events ...      -> target, where, order, limit, trace */
    QUERY_ST_SLICE,      /* slice back|forward from node N ... -> dir, node, depth, via, with_weak, trace */
    QUERY_ST_RULE,       /* rule boundary|connect|ignore ... -> rule, ra, rb, a_key, b_key, trace */
    QUERY_ST_RULES,      /* rules                      -> trace */
    QUERY_ST_DROP_RULE,  /* drop rule N                -> node (the rule number), trace */
    QUERY_ST_REBUILD,    /* rebuild graph              -> trace */
    QUERY_ST_MATCH,      /* match node N [in trace | in traces [where E]] [in archive]
                            -> node, trace or traces_all/traces_where (where to look), archive */
    QUERY_ST_COMPARE_NODES, /* compare node A with node B -> node, node2, trace (of B) */
    QUERY_ST_COMPARE_PATHS, /* compare path (SLICE) with (SLICE) -> path_a (normal), path_b (anomalous) */
    QUERY_ST_DIAGNOSE,   /* diagnose node N | thread "NAME" [against trace "T" | against traces [where E]]
                            [in archive "P"] [in trace "A"] (in any order)
                            -> node or thread_name, against or traces_all/traces_where, archive, trace */
    QUERY_ST_CHECK_FIX,  /* check fix of node N | thread "NAME" after trace "T" -> node or thread_name, after, trace */
    QUERY_ST_TRANSACTION, /* transaction from node N [depth D] -> node, depth, trace */
    QUERY_ST_EXPORT,     /* export STMT to "FILE"      -> inner, file */
    QUERY_ST_CRITICAL_PATH, /* critical path of node N | of thread "NAME" -> node or thread_name, trace */
    QUERY_ST_DROP_TRACE,    /* drop trace "NAME"          -> trace */
    QUERY_ST_RENAME_TRACE,  /* rename trace "A" to "B"    -> trace (A), new_name (B) */
    QUERY_ST_LABEL,         /* label trace "A" set K = V | unset K -> trace, new_name (K), label_value */
    QUERY_ST_COMPARE_GROUPS /* compare thread "NAME" in traces [where E1] against traces [where E2]
                               -> thread_name, traces_all/traces_where (E1), against_all/against_where (E2) */
} query_stmt_kind;

/* A user rule (paper/000 §User Interactions), see docs in help "rule". */
typedef enum query_rule_kind {
    QUERY_RULE_BOUNDARY = 0, /* rule boundary MATCH */
    QUERY_RULE_CONNECT,      /* rule connect MATCH to MATCH on KEY = KEY */
    QUERY_RULE_IGNORE        /* rule ignore WORD [where ...]  (WORD: wakeup) */
} query_rule_kind;

/* An event pattern: TYPE [PHASE] [where KEY = LIT and ...] */
typedef struct query_rule_match {
    query_name type;         /* an Argus event type or a source event name */
    query_name phase;        /* begin/end/send/recv; name NULL if absent */
    const query_expr *where; /* NULL if absent */
} query_rule_match;

typedef enum query_target {
    QUERY_TARGET_NODES = 0,
    QUERY_TARGET_EVENTS,
    QUERY_TARGET_EDGES,
    QUERY_TARGET_TRACES /* traces where: catalog fields and label.KEY */
} query_target;

typedef enum query_slice_dir {
    QUERY_SLICE_BACK = 0,
    QUERY_SLICE_FORWARD
} query_slice_dir;

/* FIND ... group by / compute: an aggregate of the rows of a group
 * (query/exec_group.c) */
typedef enum query_agg_fn {
    QUERY_AGG_COUNT, QUERY_AGG_SUM, QUERY_AGG_MIN, QUERY_AGG_MAX, QUERY_AGG_AVG,
    QUERY_AGG_P50, QUERY_AGG_P90, QUERY_AGG_P95, QUERY_AGG_P99,
} query_agg_fn;
typedef struct query_agg {
    query_agg_fn fn;
    query_name fn_name;  /* as written */
    query_name field;    /* name NULL: count of the rows */
    query_pos pos;
} query_agg;

struct query_stmt {
    query_stmt_kind kind;
    query_pos pos;          /* the statement's first token */

    /* USE: the trace to switch to (always set).
     * SHOW_NODE, EVENTS_OF, FIND, SLICE: `in trace "NAME"`; trace.name is
     * NULL when the clause is absent (use the session's current trace).
     * Other kinds: trace.name == NULL. */
    query_name trace;

    /* HELP: the word after `help` as written; topic.name NULL for bare `help`. */
    query_name topic;

    /* SHOW_NODE, EVENTS_OF, SLICE: the node number (non-negative; the
     * parser does not range-check it against uint32) and its position. */
    uint64_t node;
    query_pos node_pos;
    bool has_span;           /* critical path of thread: between span_from and span_to */
    uint64_t span_from, span_to;

    /* FIND */
    query_target target;
    const query_expr *where; /* NULL: no where clause */
    bool has_order;
    query_name order_by;     /* the `order by` field (when has_order) */
    bool order_desc;         /* `desc`; default and `asc` give false */
    bool has_limit;
    uint64_t limit;          /* non-negative (when has_limit) */
    query_pos limit_pos;
    /* FIND ... group by F, ... [compute AGG, ...] | compute AGG, ...:
     * grouped rows (grouped), the fields (none: one group of every row),
     * the aggregates in output order (count first), and order by an
     * aggregate (order_agg: an index into aggs; -1 for a field) */
    bool grouped;
    query_pos group_pos;
    const query_name *group_by;
    size_t ngroup;
    const query_agg *aggs;
    size_t naggs;
    int order_agg;

    /* SLICE */
    query_slice_dir dir;
    bool has_depth;
    uint64_t depth;          /* non-negative (when has_depth) */
    query_pos depth_pos;
    const query_name *via;   /* edge kinds as written, unvalidated; NULL/0 when no `via` */
    size_t via_count;
    bool with_weak;          /* `with weak` */

    /* RENAME_TRACE: the new name; LABEL: the label's key */
    query_name new_name;
    /* LABEL: the value to set (has_label_value), else the label goes */
    query_literal label_value;
    bool has_label_value;

    /* RULE */
    query_rule_kind rule;
    query_rule_match ra, rb; /* rb: the target of a connect */
    query_name a_key, b_key; /* connect ... on A_KEY = B_KEY */

    /* MATCH, COMPARE, DIAGNOSE, CHECK_FIX, TRANSACTION */
    uint64_t node2;          /* compare node A with node B: B */
    query_pos node2_pos;
    const query_stmt *path_a, *path_b; /* compare path: two SLICE statements */
    bool by_thread;          /* diagnose / check fix: thread_name instead of node */
    query_name thread_name;
    query_name against;      /* diagnose ... against trace "T"; name NULL if absent */
    const query_expr *traces_where; /* match ... in traces where E, diagnose ...
                                       against traces where E; NULL if absent */
    bool traces_all;         /* `in traces` / `against traces`, with or without where */
    query_pos traces_pos;    /* its `traces` */
    /* COMPARE_GROUPS: the second group, `against traces [where E2]` */
    const query_expr *against_where;
    bool against_all;
    query_pos against_traces_pos;
    /* MATCH, DIAGNOSE: `in archive "PATH"`, the archive file the
     * counterparts come from (the trace names of `in trace`, `against
     * trace` and `traces where` are its traces); name NULL if absent */
    query_name archive;
    query_name after;        /* check fix ... after trace "T" */

    /* EXPORT: the statement whose output goes to the file */
    const query_stmt *inner;
    query_name file;

    /* Every statement: its source text, without the ';' */
    const char *text;
    size_t text_len;
};

/* The script: statements in source order.  (Opaque in query.h.) */
typedef struct query_arena_block query_arena_block;
typedef struct query_arena {
    query_arena_block *head;
    jmp_buf *oom; /* if set, allocation failure longjmps here (value 1)
                     instead of returning NULL */
} query_arena;

struct query_script {
    query_arena arena;        /* owns everything below */
    const query_stmt **stmts;
    size_t count;
};

/* Prints a statement as one S-expression line, without a newline, e.g.
 *   (find events (where (and (= name "futex") (> ts 300000000ns)))
 *          (order-by ts desc) (limit 5) (in-trace "t"))   [on one line]
 * Forms:
 *   (traces)  (use "T")  (help)  (help WORD)
 *   (show-node N [(in-trace "T")])  (events-of N [(in-trace "T")])
 *   (find nodes|events [(where E)] [(order-by F asc|desc)] [(limit K)] [(in-trace "T")])
 *   (slice back|forward N [(depth D)] [(via K ...)] [(with-weak)] [(in-trace "T")])
 *   (export STMT "FILE")
 * Expressions: (or A B) (and A B) (not A) (OP L R) with OP one of
 *   = != < <= > >=, (in F (LIT ...)) (not-in F (LIT ...)).
 * Operands: a field prints bare; "string" (with \" \\ and \xNN escapes);
 *   an integer in decimal (hex literals too); a duration as Nns. */
void query_ast_dump(const query_stmt *st, FILE *out);
void query_ast_dump_expr(const query_expr *e, FILE *out);

const char *query_cmp_op_str(query_cmp_op op); /* "=", "!=", ... */

/* ===================================================================== *
 *  Part 2: front-end internals (lexer, arena, parser state).  The       *
 *  executor needs none of this.                                         *
 * ===================================================================== */

/* ---- arena (query/ast.c) ---- */
/* Zeroed memory aligned for any type.  On failure: longjmp(*a->oom, 1) if
 * a->oom is set, else NULL. */
void *query_arena_alloc(query_arena *a, size_t n);
char *query_arena_strndup(query_arena *a, const char *s, size_t n);
void query_arena_free(query_arena *a);

/* ---- lexer (query/query_lex.re) ---- */
/* A token.  `code` is a QTK_* value from the generated
 * build/gen/query_grammar.h, or 0 at the end of input. */
typedef struct query_token {
    int code;
    const char *text;    /* source text (not NUL-terminated); "" at end */
    size_t len;
    query_pos pos;
    const char *str;     /* STRING: decoded bytes, NUL-terminated (arena) */
    size_t str_len;
    uint64_t uval;       /* INTEGER, DURATION: magnitude (DURATION in ns) */
    bool is_negative;    /* INTEGER: written with '-' (never for 0) */
} query_token;

typedef struct query_lexer {
    query_arena *arena;
    const unsigned char *base, *cur, *lim, *line_start;
    int line;
} query_lexer;

/* Copies src[0..len) into the arena (NUL-terminated, as the lexer needs a
 * sentinel).  Returns 0, or -1 when out of memory. */
int query_lex_init(query_lexer *lx, const char *src, size_t len, query_arena *a);
/* The next token: returns its code (> 0), 0 at the end of input, or -1 on
 * a lexical error with err filled (position of the offending token). */
int query_lex_next(query_lexer *lx, query_token *tok, query_error *err);

/* ---- parser state (the lemon %extra_argument) and grammar actions ---- */
typedef struct query_parse_state {
    query_arena *arena;
    const query_stmt **stmts; /* grows by doubling in the arena */
    size_t count, cap;
    const query_token *cur;   /* the token being fed (for stack overflow) */
    bool failed;              /* err holds the first error */
    query_error err;
} query_parse_state;

/* Small value types of the grammar's non-terminals. */
#define QUERY_DEPTH_MAX 10000 /* slice and transaction: steps from the start at most */

typedef struct query_ast_num {
    bool has;
    uint64_t value;
    query_pos pos;
} query_ast_num;

typedef struct query_ast_between {
    query_ast_num from, to;
} query_ast_between;

typedef struct query_ast_order {
    bool has, desc;
    query_name field;  /* a field; an aggregate's function name (is_agg) */
    bool is_agg;
    query_agg agg;     /* order by sum(blocked) */
} query_ast_order;


typedef struct query_ast_op {
    query_cmp_op op;
    query_pos pos;
} query_ast_op;

typedef struct query_ast_names {
    query_name *items;
    size_t count, cap;
} query_ast_names;

typedef struct query_ast_aggs {
    query_agg *items;
    size_t count, cap;
} query_ast_aggs;

typedef struct query_ast_group_by {
    bool has;          /* group by, or compute alone */
    query_pos pos;
    query_ast_names by;
    query_ast_aggs aggs;
} query_ast_group_by;

/* The clauses after `match node N` and `diagnose ...`, in any order,
 * each at most once: `in trace`, `in traces [where]`, `in archive`,
 * `against trace`, `against traces [where]` (query_ast_places checks which
 * a statement takes). */
typedef struct query_ast_clauses {
    query_name trace;          /* in trace "T" */
    query_name archive;        /* in archive "PATH" */
    query_name against;        /* against trace "T" */
    bool traces, against_traces; /* in traces / against traces */
    const query_expr *where;   /* in traces' where, NULL if none */
    const query_expr *against_where; /* against traces' where, NULL if none */
    query_pos traces_pos;      /* in traces' `traces` */
    query_pos against_traces_pos; /* against traces' `traces` */
    query_pos against_pos;     /* its `against` */
    query_ast_num limit;       /* limit K (match) */
} query_ast_clauses;

typedef struct query_ast_lits {
    query_literal *items;
    size_t count, cap;
} query_ast_lits;

/* Records the first error (later ones are ignored) and marks ps failed.
 * pos may be NULL (no position). */
void query_ast_error(query_parse_state *ps, const query_pos *pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void query_ast_syntax_error(query_parse_state *ps, const query_token *t);

query_stmt *query_ast_stmt(query_parse_state *ps, query_stmt_kind kind, const query_token *first);
void query_ast_add_stmt(query_parse_state *ps, const query_stmt *st);
query_name query_ast_name(query_parse_state *ps, const query_token *t);
query_literal query_ast_literal(query_parse_state *ps, const query_token *t);
/* A non-negative integer (node id, limit, depth); `what` names it in the
 * error for a negative one. */
query_ast_num query_ast_count(query_parse_state *ps, const query_token *t, const char *what);
query_operand query_ast_field_operand(query_parse_state *ps, const query_token *t);
query_operand query_ast_lit_operand(const query_literal *lit);
query_expr *query_ast_binary(query_parse_state *ps, query_expr_kind kind, const query_token *op,
                             const query_expr *lhs, const query_expr *rhs);
query_expr *query_ast_not(query_parse_state *ps, const query_token *op, const query_expr *arg);
query_expr *query_ast_cmp(query_parse_state *ps, const query_ast_op *op, const query_operand *lhs,
                          const query_operand *rhs);
query_expr *query_ast_in(query_parse_state *ps, const query_token *op, const query_token *field,
                         const query_ast_lits *items, bool negated);
void query_ast_names_push(query_parse_state *ps, query_ast_names *v, query_name n);
/* Adds one clause to c: an error (at the clause) when c has it already. */
void query_ast_clause_trace(query_parse_state *ps, query_ast_clauses *c, const query_token *s);
void query_ast_clause_archive(query_parse_state *ps, query_ast_clauses *c, const query_token *s);
void query_ast_clause_against(query_parse_state *ps, query_ast_clauses *c, const query_token *against,
                              const query_token *s);
query_agg query_ast_agg(query_parse_state *ps, const query_token *fn, const query_token *field);
/* " count", " sum(blocked)" (median is p50) */
void query_agg_name_print(const query_agg *a, FILE *out);
/* "count", "sum", ..., "p99": the name printers and column heads give f */
const char *query_agg_fn_name(query_agg_fn f);

/* ---- the language's words, for completion (words.c) ----
 * A list filled up to cap; n counts every word offered, each once (of
 * those stored: a list cut short may count a word twice). */
typedef struct query_words {
    const char **w;
    size_t n, cap;
} query_words;
void query_words_add(query_words *ws, const char *w); /* w static, added unless there (case ignored) */
void query_fields_words(query_words *ws);            /* fields.c: every table's fields */
void query_agg_words(query_words *ws);               /* ast.c: the aggregates */
void query_ast_aggs_push(query_parse_state *ps, query_ast_aggs *v, query_agg a);
void query_ast_group(query_parse_state *ps, query_stmt *st, const query_ast_group_by *g, const query_ast_order *o);
void query_ast_clause_limit(query_parse_state *ps, query_ast_clauses *c, const query_token *kw,
                            const query_token *k);
void query_ast_clause_traces(query_parse_state *ps, query_ast_clauses *c, const query_token *word,
                             const query_token *traces, const query_expr *where);
/* The clauses into st (MATCH or DIAGNOSE), with an error at the first
 * one st does not take. */
void query_ast_places(query_parse_state *ps, query_stmt *st, const query_ast_clauses *c);
void query_ast_lits_push(query_parse_state *ps, query_ast_lits *v, query_literal l);

#endif
