/* query/exec_critpath.c -- `critical path of node N | of thread "NAME"`:
 * the node's period (the wait before it, and its run) partitioned into
 * (thread, node, state) parts by critpath.c, printed as rows, JSON, or
 * drawn (the nodes of the parts, and the edges between them). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

/* Time a node's thread was not running: the wait before it and the
 * preempted part of its span. */
uint64_t query_not_running(const db_node *n)
{
    uint64_t span = n->end - n->begin;
    return n->blocked + (span > n->running ? span - n->running : 0);
}

struct worst {
    db_reader *r;
    db_node best;
    bool found;
    db_error *de;
    const char *name;
    uint32_t tids[64];
    int ntids;
};

static void consider(struct worst *w, const db_node *n)
{
    if (n->kind != DB_NODE_THREAD)
        return;
    /* ties: the first node (the signature index hands a thread's nodes out
     * chunk by chunk, not strictly by id) */
    uint64_t nr = query_not_running(n), br = w->found ? query_not_running(&w->best) : 0;
    if (!w->found || nr > br || (nr == br && n->id < w->best.id)) {
        w->best = *n;
        w->found = true;
    }
}

static int worst_one(void *ctx, const db_sig *c)
{
    struct worst *w = ctx;
    db_node n;
    int got = db_get_node_of(w->r, c->trace, c->node, &n, w->de);
    if (got < 0)
        return -1;
    if (got)
        consider(w, &n);
    return 0;
}

static int worst_node(void *ctx, const db_node *n)
{
    consider(ctx, n);
    return 0;
}

static int named(void *ctx, const db_thread *t)
{
    struct worst *w = ctx;
    if (strncmp(t->name, w->name, DB_NAME_MAX) == 0 && w->ntids < 64)
        w->tids[w->ntids++] = t->tid;
    return 0;
}

struct by_name {
    const char *name;
    uint32_t tid;
    bool found;
};

static int first_named(void *ctx, const db_thread *t)
{
    struct by_name *b = ctx;
    if (!b->found && strncmp(t->name, b->name, DB_NAME_MAX) == 0) {
        b->tid = t->tid;
        b->found = true;
    }
    return 0;
}

int query_thread_tid(db_reader *r, const char *name, uint32_t *tid, db_error *de)
{
    struct by_name b = {.name = name};
    if (db_scan_threads(r, first_named, &b, de))
        return -1;
    *tid = b.tid;
    return b.found;
}

/* Threads by id: the threads the trace names NAME (their latest name),
 * each one's own nodes through the node_thread index -- the name a node
 * kept may be an older or a cut one (a text recording's first node of a
 * thread has the comm of its creator).  A name no thread has now is
 * looked up by the nodes' names (the signature index). */
int query_worst_step(db_reader *r, uint32_t trace_id, const char *name, db_node *out, db_error *de)
{
    struct worst w = {.r = r, .de = de, .name = name};
    if (trace_id == db_reader_trace(r)->id && db_scan_threads(r, named, &w, de))
        return -1;
    for (int i = 0; i < w.ntids; i++)
        if (db_scan_thread_nodes(r, w.tids[i], 0, UINT64_MAX, worst_node, &w, de))
            return -1;
    if (!w.found && db_scan_sigs(r, graph_thread_key(name, DB_NODE_THREAD), trace_id, worst_one, &w, de))
        return -1;
    if (w.found)
        *out = w.best;
    return w.found;
}

void query_json_cp_parts(FILE *f, const query_cp *cp)
{
    fputc('[', f);
    for (size_t i = 0; i < cp->n; i++) {
        const query_cp_part *p = &cp->parts[i];
        fputs(i ? ",{\"thread\":" : "{\"thread\":", f);
        query_json_str(f, p->thread, strnlen(p->thread, DB_NAME_MAX));
        fprintf(f, ",\"tid\":%" PRIu32 ",\"node\":%" PRIu32 ",\"state\":\"%s\",\"begin\":%" PRIu64 ",\"ns\":%" PRIu64,
                p->tid, p->node, query_cp_state_name(p->state), p->begin, p->ns);
        if (p->device)
            fprintf(f, ",\"device\":\"%s\"", query_cp_device_name(p->device));
        if (p->held_tid) { /* runnable: the thread whose cpu it held */
            fputs(",\"held_off\":{\"thread\":", f);
            query_json_str(f, p->held_thread, strnlen(p->held_thread, DB_NAME_MAX));
            fprintf(f, ",\"tid\":%" PRIu32 "}", p->held_tid);
        }
        if (p->flush_tid) { /* io: writes the thread's cache flush waited for */
            fputs(",\"flush\":{\"thread\":", f);
            query_json_str(f, p->flush_thread, strnlen(p->flush_thread, DB_NAME_MAX));
            fprintf(f, ",\"tid\":%" PRIu32 ",\"bytes\":%" PRIu64 "}", p->flush_tid, p->flush_bytes);
        }
        if (p->for_tid) {
            fputs(",\"for\":{\"thread\":", f);
            query_json_str(f, p->for_thread, strnlen(p->for_thread, DB_NAME_MAX));
            fprintf(f, ",\"tid\":%" PRIu32 ",\"node\":%" PRIu32 "}", p->for_tid, p->for_node);
        }
        fputc('}', f);
    }
    fputc(']', f);
}

static void print_json(query_session *s, const query_cp *cp, bool life)
{
    FILE *f = s->out;
    fputs("{\"node\":", f);
    query_json_node(f, &cp->node, -1);
    fprintf(f, ",\"period\":{\"begin\":%" PRIu64 ",\"end\":%" PRIu64 ",\"ns\":%" PRIu64 "},\"parts\":",
            cp->begin, cp->end, cp->end - cp->begin);
    query_json_cp_parts(f, cp);
    query_cp_totals t = query_cp_sum(cp);
    fprintf(f, ",\"life\":%s,", life ? "true" : "false");
    query_json_cp_totals(f, &t);
    fputs("}\n", f);
}

void query_json_cp_totals(FILE *f, const query_cp_totals *t)
{
    fputs("\"totals\":{", f);
    for (int i = 0; i < QUERY_CP__COUNT; i++)
        fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", query_cp_state_name(i), t->state[i]);
    fprintf(f, "},\"devices\":{\"disk\":%" PRIu64 ",\"network\":%" PRIu64 ",\"device\":%" PRIu64 "}",
            t->dev[QUERY_DEV_DISK], t->dev[QUERY_DEV_NETWORK], t->dev[QUERY_DEV_DEVICE]);
}

/* "running 3.1ms 1.0%, io 231ms 92.4% (disk 46ms, network 185ms), ..." */
void query_text_cp_totals(FILE *f, const query_cp *cp)
{
    query_cp_totals t = query_cp_sum(cp);
    uint64_t period = cp->end - cp->begin;
    for (int i = 0, k = 0; i < QUERY_CP__COUNT; i++) {
        if (!t.state[i])
            continue;
        char d[32];
        query_fmt_duration(d, sizeof d, t.state[i]);
        fprintf(f, "%s %s %s %.1f%%", k++ ? "," : "", query_cp_state_name(i), d,
                period ? 100.0 * (double)t.state[i] / (double)period : 0.0);
        if (i != QUERY_CP_IO)
            continue;
        int m = 0;
        for (int dv = QUERY_DEV_DISK; dv <= QUERY_DEV_DEVICE; dv++)
            if (t.dev[dv]) {
                query_fmt_duration(d, sizeof d, t.dev[dv]);
                fprintf(f, "%s%s %s", m++ ? ", " : " (", query_cp_device_name(dv), d);
            }
        if (m)
            fputc(')', f);
    }
    fputc('\n', f);
}

static void print_table(query_session *s, const query_cp *cp, bool life)
{
    /* CSV: numbers as numbers (share a fraction of the period), the
     * device and the requester in columns of their own */
    static const char *const heads[] = {"thread", "tid", "node", "state", "begin", "ns", "share", "for",
                                        "device", "for_tid", "for_node"};
    bool csv = s->format == QUERY_FMT_CSV;
    query_table t;
    query_table_init(&t, s->format, csv ? 11 : 8, heads);
    uint64_t period = cp->end - cp->begin;
    for (size_t i = 0; i < cp->n; i++) {
        const query_cp_part *p = &cp->parts[i];
        query_table_str(&t, p->thread);
        query_table_u64(&t, p->tid);
        query_table_u64(&t, p->node);
        if (p->device && !csv)
            query_table_cell(&t, "%s (%s)", query_cp_state_name(p->state), query_cp_device_name(p->device));
        else
            query_table_str(&t, query_cp_state_name(p->state));
        query_table_ts(&t, p->begin);
        query_table_dur(&t, p->ns, false);
        if (csv)
            query_table_cell(&t, "%.6f", period ? (double)p->ns / (double)period : 0.0);
        else
            query_table_cell(&t, "%.1f%%", period ? 100.0 * (double)p->ns / (double)period : 0.0);
        if (csv) {
            query_table_str(&t, p->for_tid ? p->for_thread : p->flush_tid ? p->flush_thread : "");
            query_table_str(&t, p->device ? query_cp_device_name(p->device) : "");
            if (p->for_tid || p->flush_tid)
                query_table_u64(&t, p->for_tid ? p->for_tid : p->flush_tid);
            else
                query_table_str(&t, "");
            if (p->for_tid)
                query_table_u64(&t, p->for_node);
            else
                query_table_str(&t, "");
        } else if (p->for_tid)
            query_table_cell(&t, "%s (node %" PRIu32 ")", p->for_thread, p->for_node);
        else if (p->flush_tid) {
            char by[32];
            query_fmt_bytes(by, sizeof by, p->flush_bytes);
            query_table_cell(&t, "%s's cache flush (%s written)", p->flush_thread, by);
        } else
            query_table_str(&t, s->format == QUERY_FMT_CSV ? "" : "-");
    }
    if (s->format == QUERY_FMT_TABLE) {
        char a[32], b[32];
        query_fmt_ts(a, sizeof a, cp->begin);
        query_fmt_duration(b, sizeof b, period);
        if (life)
            fprintf(s->out, "critical path of thread %s (tid %" PRIu32 "): %s from %s\n", cp->node.thread,
                    cp->node.tid, b, a);
        else
            fprintf(s->out, "critical path of node %" PRIu32 " (%s): %s from %s\n", cp->node.id, cp->node.thread,
                    b, a);
    }
    query_table_show(s, &t);
    query_table_free(&t);
    if (s->format == QUERY_FMT_TABLE) {
        fputs("in all:", s->out);
        query_text_cp_totals(s->out, cp);
    }
}

struct in_view {
    query_view *v;
    int g;
};

static int edge_in_view(void *ctx, const db_edge *e)
{
    struct in_view *iv = ctx;
    if (e->kind != DB_EDGE_WEAK && query_view_find(iv->v, iv->g, e->from))
        query_view_add_edge(iv->v, iv->g, e);
    return 0;
}

/* The view: the parts' nodes, the period's node first, and the edges the
 * walk followed between them (those among the nodes drawn). */
static int print_view(query_session *s, db_reader *r, const query_cp *cp, query_error *err)
{
    query_view v;
    query_view_init(&v);
    int g = query_view_group(&v, r, "anomaly");
    v.cp = cp;
    v.cp_grp = g;
    query_view_add_node(&v, g, &cp->node, true);
    db_error de = {0};
    for (size_t i = 0; i < cp->n; i++) {
        db_node n;
        if (cp->parts[i].node && db_get_node(r, cp->parts[i].node, &n, &de) == 1)
            query_view_add_node(&v, g, &n, false);
    }
    query_view_sort(&v);
    struct in_view iv = {&v, g};
    for (size_t i = 0, len = v.len; i < len; i++)
        if (db_edges_in(r, v.nodes[i].n.id, edge_in_view, &iv, &de)) {
            query_view_free(&v);
            return query_fail(err, NULL, "%s", de.msg);
        }
    int rc = query_view_print(s, &v, err);
    query_view_free(&v);
    return rc;
}

int query_exec_critical(query_session *s, const query_stmt *st, query_error *err)
{
    db_reader *r = query_open_trace(s, &st->trace, err);
    if (!r)
        return -1;
    db_error de = {0};
    db_node n;
    int got = st->by_thread ? query_worst_step(r, db_reader_trace(r)->id, st->thread_name.name, &n, &de)
                            : st->node > UINT32_MAX ? 0 : db_get_node(r, (uint32_t)st->node, &n, &de);
    if (got <= 0) {
        int rc = got < 0 ? query_fail(err, &st->pos, "%s", de.msg)
                 : st->by_thread ? query_fail(err, &st->thread_name.pos, "no thread named \"%s\" has a node",
                                              st->thread_name.name)
                                 : query_fail(err, &st->node_pos, "no node %llu", (unsigned long long)st->node);
        db_reader_close(r);
        return rc;
    }
    /* of a thread: its whole life (its worst step is the node shown), or
     * the stretch of it asked for; of a node: the node's period */
    query_cp cp;
    uint64_t b = 0, e = 0;
    int life = st->by_thread ? query_thread_life(r, n.tid, false, &b, &e, NULL, &de) : 0;
    if (life > 0 && st->has_span) {
        b = st->span_from > b ? st->span_from : b;
        e = st->span_to < e ? st->span_to : e;
        if (e <= b) {
            db_reader_close(r);
            return query_fail(err, &st->thread_name.pos, "thread \"%s\" (tid %" PRIu32 ") has no life between those times",
                              st->thread_name.name, n.tid);
        }
    }
    if (life < 0 || (life > 0 ? query_critical_path_span(r, &n, b, e, &cp, &de) : query_critical_path(r, &n, &cp, &de))) {
        db_reader_close(r);
        return query_fail(err, &st->pos, "%s", de.msg);
    }
    int rc = 0;
    if (s->format == QUERY_FMT_SVG)
        query_cp_svg(s->out, &cp);
    else if (query_view_format(s->format))
        rc = print_view(s, r, &cp, err);
    else if (s->format == QUERY_FMT_JSON)
        print_json(s, &cp, life > 0);
    else
        print_table(s, &cp, life > 0);
    query_cp_free(&cp);
    db_reader_close(r);
    return rc;
}
