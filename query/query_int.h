/* query/query_int.h -- internals of the executor (exec*.c, fields.c, out.c).
 * The AST is in query_ast.h. */
#ifndef ARGUSQ_QUERY_INT_H
#define ARGUSQ_QUERY_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../graph/graph.h"
#include "query_ast.h"

/* ---- values (fields.c) ---- */
typedef enum query_vtype { QV_NONE = 0, QV_NUM, QV_STR } query_vtype;

/* A number is a sign and a 64-bit magnitude, so that both kernel addresses
 * (above INT64_MAX) and negative return values compare right. */
typedef struct query_val {
    query_vtype t;
    bool neg;
    uint64_t mag;
    const char *s;
    size_t n;
} query_val;

/* The row an expression is evaluated on: a node or an event. */
typedef struct query_row {
    const db_node *node;
    const db_event *ev;
} query_row;

/* Checks that every field of e exists for the target (events accept any
 * attribute name).  Returns 0, or -1 with err at the field. */
int query_check_fields(const query_expr *e, query_target target, query_error *err);
int query_check_field(const query_name *f, query_target target, query_error *err);
bool query_eval(const query_expr *e, const query_row *row);
query_val query_field(const query_name *f, const query_row *row);
int query_val_cmp(const query_val *a, const query_val *b, bool *comparable);

/* event fields derived from the phase of an event */
const char *query_event_phase(const db_event *ev); /* "begin", "send", ... or NULL */
bool query_event_is_fixed_field(const char *name);

/* ---- output (out.c) ---- */
void query_json_str(FILE *f, const char *s, size_t n);
void query_json_node(FILE *f, const db_node *n, int depth); /* depth < 0: none */
void query_json_edge(FILE *f, const db_edge *e);
void query_json_event(FILE *f, const db_event *ev);
void query_fmt_duration(char *buf, size_t len, uint64_t ns);
void query_fmt_ts(char *buf, size_t len, uint64_t ns);

/* Rows for people (aligned columns, readable times) or for programs
 * (CSV: a header row, raw integer nanoseconds). */
typedef struct query_table {
    int ncols;
    char **cells;
    size_t ncells, cap;
    bool oom;
    bool csv;
} query_table;

void query_table_init(query_table *t, query_format f, int ncols, const char *const *heads);
void query_table_ts(query_table *t, uint64_t ns);   /* a timestamp cell */
void query_table_dur(query_table *t, uint64_t ns, bool dash_if_zero); /* a duration cell */
void query_table_cell(query_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void query_table_print(query_table *t, FILE *f);
void query_table_free(query_table *t);
void query_table_nodes_init(query_table *t, query_format f);
void query_table_node(query_table *t, const db_node *n);
void query_table_events_init(query_table *t, query_format f);
void query_table_event(query_table *t, const db_event *ev);
bool query_rows_format(query_format f); /* table or csv */

/* Graphviz DOT (slices, show node, find nodes) */
void query_dot_begin(FILE *f);
void query_dot_node(FILE *f, const db_node *n, bool start);
void query_dot_edge(FILE *f, const db_edge *e);
void query_dot_end(FILE *f);

/* ---- errors ---- */
int query_fail(query_error *err, const query_pos *pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- statements (exec.c, exec_find.c, exec_slice.c) ---- */
db_reader *query_open_trace(query_session *s, const query_name *in, query_error *err);
int query_exec_find(query_session *s, const query_stmt *st, query_error *err);
int query_exec_slice(query_session *s, const query_stmt *st, query_error *err);
int query_exec_rule_stmt(query_session *s, const query_stmt *st, query_error *err); /* exec_rules.c */

#endif
