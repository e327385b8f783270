/* query/exec_find.c -- `find nodes|events [where] [order by] [limit]`.
 *
 * Events are read through the narrowest index the `where` clause allows
 * (a node, a thread and time range, an object, a time range); the whole
 * clause is still evaluated on every event read, so the index is only a
 * prefilter and never changes the answer. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query_int.h"

typedef struct find_ctx {
    query_session *s;
    const query_stmt *st;
    bool json, collect;   /* collect: rows are sorted before output */
    uint64_t n;           /* rows matched */
    query_table t;
    db_node *nodes;       /* collected rows */
    db_event *events;
    char *text;           /* collected events' names and attrs */
    size_t text_len, text_cap;
    size_t *text_at;      /* where each collected event's text starts */
    size_t at_cap;
    db_edge *edges;
    size_t len, cap;
    bool oom;
    query_view *view;     /* DOT, SVG, Perfetto: nodes drawn at the end */
    query_group *group;   /* group by / compute: rows go there (exec_group.c) */
} find_ctx;

static bool enough(const find_ctx *c)
{
    return c->st->has_limit && !c->collect && !c->group && c->n >= c->st->limit;
}

/* A row of a grouped statement: into its group. */
static void to_group(find_ctx *c, const query_row *row)
{
    if (query_group_add(c->group, row))
        c->oom = true;
    c->n++;
}

static void emit_node(find_ctx *c, const db_node *n)
{
    if (c->group)
        to_group(c, &(query_row){.node = n});
    else if (c->json) {
        fputs(c->n ? "," : "", c->s->out);
        query_json_node(c->s->out, n, -1);
    } else if (c->view)
        query_view_add_node(c->view, 0, n, false);
    else
        query_table_node(&c->t, n);
    c->n++;
}

static void emit_event(find_ctx *c, const db_event *ev)
{
    if (c->group) {
        to_group(c, &(query_row){.ev = ev});
        return;
    }
    if (c->json) {
        fputs(c->n ? "," : "", c->s->out);
        query_json_event(c->s->out, ev);
    } else
        query_table_event(&c->t, ev);
    c->n++;
}

static void emit_edge(find_ctx *c, const db_edge *e)
{
    if (c->group) {
        to_group(c, &(query_row){.edge = e});
        return;
    }
    if (c->json) {
        fputs(c->n ? "," : "", c->s->out);
        query_json_edge(c->s->out, e);
    } else {
        query_table_u64(&c->t, e->from);
        query_table_u64(&c->t, e->to);
        query_table_str(&c->t, db_edge_kind_name(e->kind));
        query_table_u64(&c->t, e->from_event);
        query_table_u64(&c->t, e->to_event);
    }
    c->n++;
}

static int grow(find_ctx *c, size_t elem, void **arr)
{
    if (c->len < c->cap)
        return 0;
    size_t n = c->cap ? c->cap * 2 : 256;
    void *p = realloc(*arr, n * elem);
    if (!p) {
        c->oom = true;
        return -1;
    }
    *arr = p;
    c->cap = n;
    return 0;
}

static int node_cb(void *p, const db_node *n)
{
    find_ctx *c = p;
    query_row row = {.node = n};
    if (c->st->where && !query_eval(c->st->where, &row))
        return 0;
    if (!c->collect) {
        emit_node(c, n);
        return enough(c) ? 1 : 0;
    }
    if (grow(c, sizeof *c->nodes, (void **)&c->nodes))
        return -1;
    c->nodes[c->len++] = *n;
    return 0;
}

/* ---- nodes through the signature index ----
 * `thread = "NAME"` (with `kind = "K"` or not) among the top-level `and`s of
 * the where clause: the signature index holds exactly that thread's nodes
 * (one key per kind), so only they are read.  They are gathered and sorted
 * by id, which keeps the output in the order a full scan gives. */
static bool str_conjunct(const query_expr *e, const char *field, const char **val)
{
    if (e->kind == QUERY_EX_AND)
        return str_conjunct(e->bin.lhs, field, val) || str_conjunct(e->bin.rhs, field, val);
    if (e->kind != QUERY_EX_CMP || e->cmp.op != QUERY_OP_EQ)
        return false;
    const query_operand *f = &e->cmp.lhs, *l = &e->cmp.rhs;
    if (f->kind != QUERY_OPD_FIELD) {
        f = &e->cmp.rhs;
        l = &e->cmp.lhs;
    }
    if (f->kind != QUERY_OPD_FIELD || l->kind != QUERY_OPD_LITERAL || l->lit.kind != QUERY_LIT_STRING ||
        strcasecmp(f->field.name, field) != 0)
        return false;
    *val = l->lit.str;
    return true;
}

typedef struct sig_nodes {
    db_reader *r;
    uint32_t *ids;
    size_t len, cap;
    db_error *de;
} sig_nodes;

static int sig_node(void *p, const db_sig *sig)
{
    sig_nodes *s = p;
    if (s->len == s->cap) {
        size_t n = s->cap ? s->cap * 2 : 256;
        uint32_t *v = realloc(s->ids, n * sizeof *v);
        if (!v)
            return db_fail_oom(s->de);
        s->ids = v;
        s->cap = n;
    }
    s->ids[s->len++] = sig->node;
    return 0;
}

static int cmp_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static uint64_t top_value(const db_node *n, int field)
{
    return field == DB_TOP_BLOCKED ? n->blocked : n->end - n->begin;
}

/* `... order by blocked|duration desc limit K`: the thread's top lists
 * (db/nodetop.c) hold the nodes with the largest values; when K rows that
 * pass the where clause are larger than every value a list left out, they
 * are the answer, whatever the nodes not read.  1 answered, 0 not (the
 * caller reads every node of the thread), -1 error. */
static int top_thread_nodes(db_reader *r, const query_stmt *st, find_ctx *c, const char *thread,
                            const char *kind, db_error *de)
{
    int field = !st->has_order || !st->order_desc || !st->has_limit || st->limit == 0 || st->limit > DB_TOP_MAX ? -1
                : strcasecmp(st->order_by.name, "blocked") == 0                                               ? DB_TOP_BLOCKED
                : strcasecmp(st->order_by.name, "duration") == 0                                              ? DB_TOP_DURATION
                                                                                                              : -1;
    if (field < 0)
        return 0;
    uint32_t ids[DB_TOP_MAX * DB_NODE__COUNT];
    size_t nids = 0, lists = 0;
    uint64_t floor = 0; /* every node left out of a list is <= floor */
    bool cut = false;
    db_top top;
    for (int k = 0; k < DB_NODE__COUNT; k++) {
        if (kind && strcmp(kind, db_node_kind_name(k)) != 0)
            continue;
        int got = db_get_top(r, graph_thread_key(thread, k), field, &top, de);
        if (got < 0)
            return -1;
        if (got == 0)
            continue;
        lists++;
        if (top.total > top.n && top.n && (!cut || top.v[top.n - 1] > floor)) {
            floor = top.v[top.n - 1];
            cut = true;
        }
        for (uint32_t i = 0; i < top.n; i++)
            ids[nids++] = top.id[i];
    }
    if (lists == 0) /* an archive from before the lists: read them all */
        return 0;
    qsort(ids, nids, sizeof *ids, cmp_id);
    for (size_t i = 0; i < nids; i++) {
        db_node n;
        int got = db_get_node(r, ids[i], &n, de);
        if (got < 0 || (got && node_cb(c, &n) < 0))
            return -1;
    }
    size_t above = 0;
    for (size_t i = 0; i < c->len; i++)
        above += !cut || top_value(&c->nodes[i], field) > floor;
    if (above >= st->limit)
        return 1;
    c->len = 0; /* too few above what the lists left out: read them all */
    return 0;
}

/* 1: answered through the index; 0: the clause allows no index; -1 error */
static int scan_thread_nodes(db_reader *r, const query_stmt *st, find_ctx *c, db_error *de)
{
    const char *thread, *kind = NULL;
    if (!st->where || !str_conjunct(st->where, "thread", &thread))
        return 0;
    str_conjunct(st->where, "kind", &kind);
    int top = c->collect ? top_thread_nodes(r, st, c, thread, kind, de) : 0;
    if (top)
        return top;
    sig_nodes s = {.r = r, .de = de};
    for (int k = 0; k < DB_NODE__COUNT; k++) {
        if (kind && strcmp(kind, db_node_kind_name(k)) != 0)
            continue;
        if (db_scan_sigs(r, graph_thread_key(thread, k), db_reader_trace(r)->id, sig_node, &s, de)) {
            free(s.ids);
            return -1;
        }
    }
    if (s.len > 1) /* s.ids is NULL when the thread has no node */
        if (s.len)
        qsort(s.ids, s.len, sizeof *s.ids, cmp_id);
    int rc = 0;
    for (size_t i = 0; i < s.len && rc == 0; i++) {
        db_node n;
        int got = db_get_node(r, s.ids[i], &n, de);
        rc = got < 0 ? -1 : got ? node_cb(c, &n) : 0;
    }
    free(s.ids);
    return rc < 0 ? -1 : 1;
}

/* An event handed out by a reader is valid during the callback only: a
 * collected one keeps its name and attrs in c->text (pointers are set
 * when the scan is over and the text no longer moves). */
static int keep_text(find_ctx *c, const db_event *ev)
{
    size_t nl = strlen(ev->name) + 1, need = c->text_len + nl + ev->attrs_len;
    if (need > c->text_cap) {
        size_t cap = c->text_cap ? c->text_cap * 2 : 65536;
        while (cap < need)
            cap *= 2;
        void *t = realloc(c->text, cap);
        if (!t) {
            c->oom = true;
            return -1;
        }
        c->text = t;
        c->text_cap = cap;
    }
    if (c->at_cap < c->cap) {
        void *a = realloc(c->text_at, c->cap * sizeof *c->text_at);
        if (!a) {
            c->oom = true;
            return -1;
        }
        c->text_at = a;
        c->at_cap = c->cap;
    }
    c->text_at[c->len] = c->text_len;
    memcpy(c->text + c->text_len, ev->name, nl);
    memcpy(c->text + c->text_len + nl, ev->attrs, ev->attrs_len);
    c->text_len = need;
    return 0;
}

static void point_text(find_ctx *c)
{
    for (size_t i = 0; i < c->len; i++) {
        c->events[i].name = c->text + c->text_at[i];
        c->events[i].attrs = c->events[i].name + strlen(c->events[i].name) + 1;
    }
}

static int event_cb(void *p, const db_event *ev)
{
    find_ctx *c = p;
    query_row row = {.ev = ev};
    if (c->st->where && !query_eval(c->st->where, &row))
        return 0;
    if (!c->collect) {
        emit_event(c, ev);
        return enough(c) ? 1 : 0;
    }
    if (grow(c, sizeof *c->events, (void **)&c->events) || keep_text(c, ev))
        return -1;
    c->events[c->len++] = *ev;
    return 0;
}

static int edge_cb(void *p, const db_edge *e)
{
    find_ctx *c = p;
    query_row row = {.edge = e};
    if (c->st->where && !query_eval(c->st->where, &row))
        return 0;
    if (!c->collect) {
        emit_edge(c, e);
        return enough(c) ? 1 : 0;
    }
    if (grow(c, sizeof *c->edges, (void **)&c->edges))
        return -1;
    c->edges[c->len++] = *e;
    return 0;
}

static int row_cmp(const void *a, const void *b, void *p)
{
    const find_ctx *c = p;
    query_row ra = {0}, rb = {0};
    if (c->st->target == QUERY_TARGET_NODES) {
        ra.node = a;
        rb.node = b;
    } else if (c->st->target == QUERY_TARGET_EDGES) {
        ra.edge = a;
        rb.edge = b;
    } else {
        ra.ev = a;
        rb.ev = b;
    }
    query_val va = query_field(&c->st->order_by, &ra), vb = query_field(&c->st->order_by, &rb);
    bool ok;
    int r = query_val_cmp(&va, &vb, &ok);
    if (!ok) /* rows without the field sort last */
        r = (va.t == QV_NONE) - (vb.t == QV_NONE);
    if (r == 0) { /* equals keep id order, however the rows were read */
        uint64_t x = ra.node ? ra.node->id : ra.ev ? ra.ev->id : 0, y = rb.node ? rb.node->id : rb.ev ? rb.ev->id : 0;
        return (x > y) - (x < y);
    }
    return c->st->order_desc ? -r : r;
}

/* ---- the index a `where` clause allows (events) ---- */

typedef struct plan {
    enum { PLAN_SCAN, PLAN_TIME, PLAN_THREAD, PLAN_NODE, PLAN_OBJECT } kind;
    uint64_t t0, t1, key;
    db_obj_index ix;
} plan;

static bool const_of(const query_expr *e, const char **field, query_cmp_op *op, uint64_t *v)
{
    if (e->kind != QUERY_EX_CMP)
        return false;
    const query_operand *f = &e->cmp.lhs, *l = &e->cmp.rhs;
    query_cmp_op o = e->cmp.op;
    if (f->kind != QUERY_OPD_FIELD) { /* 5 < ts: flip */
        const query_operand *x = f;
        f = l;
        l = x;
        static const query_cmp_op flip[] = {QUERY_OP_EQ, QUERY_OP_NE, QUERY_OP_GT, QUERY_OP_GE, QUERY_OP_LT,
                                            QUERY_OP_LE};
        o = flip[o];
    }
    if (f->kind != QUERY_OPD_FIELD || l->kind != QUERY_OPD_LITERAL || l->lit.kind == QUERY_LIT_STRING ||
        l->lit.is_negative)
        return false;
    *field = f->field.name;
    *op = o;
    *v = l->lit.uval;
    return true;
}

static void plan_conjunct(plan *p, const query_expr *e)
{
    if (e->kind == QUERY_EX_AND) {
        plan_conjunct(p, e->bin.lhs);
        plan_conjunct(p, e->bin.rhs);
        return;
    }
    const char *f;
    query_cmp_op op;
    uint64_t v;
    if (!const_of(e, &f, &op, &v))
        return;
    if (strcasecmp(f, "ts") == 0) {
        if ((op == QUERY_OP_EQ || op == QUERY_OP_GE) && v > p->t0)
            p->t0 = v;
        if (op == QUERY_OP_GT && v + 1 > p->t0 && v < UINT64_MAX)
            p->t0 = v + 1;
        if ((op == QUERY_OP_EQ || op == QUERY_OP_LE) && v < p->t1)
            p->t1 = v;
        if (op == QUERY_OP_LT && v > 0 && v - 1 < p->t1)
            p->t1 = v - 1;
        if (p->kind == PLAN_SCAN)
            p->kind = PLAN_TIME;
        return;
    }
    if (op != QUERY_OP_EQ)
        return;
    if (strcasecmp(f, "node") == 0 && v <= UINT32_MAX) {
        p->kind = PLAN_NODE;
        p->key = v;
    } else if (strcasecmp(f, "tid") == 0 && v <= UINT32_MAX && p->kind != PLAN_NODE) {
        p->kind = PLAN_THREAD;
        p->key = v;
    } else if (p->kind == PLAN_SCAN || p->kind == PLAN_TIME) {
        static const struct { const char *f; db_obj_index ix; } objs[] = {
            {"timer", DB_IX_TIMER}, {"block", DB_IX_BLOCK}, {"port", DB_IX_PORT}};
        for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
            if (strcasecmp(f, objs[i].f) == 0) {
                p->kind = PLAN_OBJECT;
                p->ix = objs[i].ix;
                p->key = v;
            }
    }
}

static int scan_events(db_reader *r, const query_stmt *st, find_ctx *c, db_error *de)
{
    plan p = {.kind = PLAN_SCAN, .t0 = 0, .t1 = UINT64_MAX};
    if (st->where)
        plan_conjunct(&p, st->where);
    switch (p.kind) {
    case PLAN_NODE: return db_scan_node_events(r, (uint32_t)p.key, event_cb, c, de);
    case PLAN_THREAD: return db_scan_thread(r, (uint32_t)p.key, p.t0, p.t1, event_cb, c, de);
    case PLAN_OBJECT: return db_scan_object(r, p.ix, p.key, event_cb, c, de);
    case PLAN_TIME: return p.t0 > p.t1 ? 0 : db_scan_time(r, p.t0, p.t1, event_cb, c, de);
    default: return db_scan_events(r, event_cb, c, de);
    }
}

static int scan_nodes(db_reader *r, const query_stmt *st, find_ctx *c, db_error *de)
{
    int rc = scan_thread_nodes(r, st, c, de);
    return rc == 0 ? db_scan_nodes(r, node_cb, c, de) : rc < 0 ? -1 : 0;
}

int query_exec_find(query_session *s, const query_stmt *st, query_error *err)
{
    bool nodes = st->target == QUERY_TARGET_NODES;
    if (st->where && query_check_fields(st->where, st->target, err))
        return -1;
    if (st->grouped ? query_group_check(st, s, err)
                    : st->has_order && query_check_field(&st->order_by, st->target, err))
        return -1;
    query_group *group = st->grouped ? query_group_new(st) : NULL;
    if (st->grouped && !group)
        return query_fail(err, NULL, "out of memory");
    db_reader *r = query_open_trace(s, &st->trace, err);
    if (!r) {
        query_group_free(group);
        return -1;
    }
    query_view view;
    query_view_init(&view);
    /* grouped: every row to its group, in the order read (order and
     * limit are the groups') */
    find_ctx c = {.s = s, .st = st, .json = s->format == QUERY_FMT_JSON && !group, .collect = st->has_order && !group,
                  .view = nodes && !group && query_view_format(s->format) ? &view : NULL, .group = group};
    if (c.view)
        query_view_group(&view, r, NULL);
    bool edges = st->target == QUERY_TARGET_EDGES;
    static const char *const edge_heads[] = {"from", "to", "kind", "from_event", "to_event"};
    if (nodes)
        query_table_nodes_init(&c.t, s->format);
    else if (edges)
        query_table_init(&c.t, s->format, 5, edge_heads);
    else
        query_table_events_init(&c.t, s->format);
    if (c.json)
        fprintf(s->out, "{\"%s\":[", nodes ? "nodes" : edges ? "edges" : "events");
    db_error de = {0};
    int rc = (!st->has_limit || st->limit > 0 || group)
                 ? (nodes   ? scan_nodes(r, st, &c, &de)
                    : edges ? db_scan_edges(r, edge_cb, &c, &de)
                            : scan_events(r, st, &c, &de))
                 : 0;
    if (rc > 0) /* stopped at the limit */
        rc = 0;
    if (!rc && c.collect && !c.oom) {
        if (!nodes && !edges)
            point_text(&c);
        void *rows = nodes ? (void *)c.nodes : edges ? (void *)c.edges : (void *)c.events;
        size_t size = nodes ? sizeof *c.nodes : edges ? sizeof *c.edges : sizeof *c.events;
        if (c.len > 1) /* rows is NULL when nothing was collected (limit 0) */
            if (c.len)
            qsort_r(rows, c.len, size, row_cmp, &c);
        size_t k = st->has_limit && st->limit < c.len ? (size_t)st->limit : c.len;
        for (size_t i = 0; i < k; i++) {
            if (nodes)
                emit_node(&c, &c.nodes[i]);
            else if (edges)
                emit_edge(&c, &c.edges[i]);
            else
                emit_event(&c, &c.events[i]);
        }
    }
    if (group) {
        if (!rc && !c.oom && query_group_print(group, s, err))
            rc = -2; /* err is filled */
    } else if (c.json)
        fputs("]}\n", s->out);
    else if (c.view) {
        if (!rc && !c.oom && query_view_print(s, &view, err))
            rc = -2; /* err is filled */
    } else if (!rc)
        query_table_show(s, &c.t);
    if (rc == -2)
        rc = -1;
    else if (c.oom || c.t.oom)
        rc = query_fail(err, NULL, "out of memory");
    else if (rc)
        rc = query_fail(err, NULL, "%s", de.msg);
    query_view_free(&view);
    query_group_free(group);
    query_table_free(&c.t);
    free(c.nodes);
    free(c.events);
    free(c.text);
    free(c.text_at);
    free(c.edges);
    db_reader_close(r);
    return rc;
}
