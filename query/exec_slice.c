/* query/exec_slice.c -- `slice back|forward from node N` (paper/004 §Path
 * Slicing) and `transaction from node N` (paper/002), and how a walked
 * path is printed. */
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

#define SLICE_DEFAULT_DEPTH 20

static int kinds_of(const query_stmt *st, uint32_t *kinds, query_error *err)
{
    if (st->via_count == 0) {
        *kinds = query_causal_kinds() | (st->with_weak ? 1u << DB_EDGE_WEAK : 0);
        return 0;
    }
    *kinds = 0;
    for (size_t i = 0; i < st->via_count; i++) {
        const query_name *v = &st->via[i];
        int k = db_edge_kind_from_name(v->name, v->len);
        if (k < 0)
            return query_fail(err, &v->pos,
                              "unknown edge kind \"%s\" (kinds: wakeup weak ipc ipc_reply dispatch runloop "
                              "timer flag user preempt)",
                              v->name);
        *kinds |= 1u << k;
    }
    if (st->with_weak)
        *kinds |= 1u << DB_EDGE_WEAK;
    return 0;
}

/* "wakeup -> 7" for a node reached against the edge (back), "7 -> wakeup"
 * along it; without printf, as a table prints one per row */
static void edge_cell(query_table *t, const db_edge *via, bool against)
{
    char id[24], b[96];
    id[base_fmt_u64(id, against ? via->to : via->from)] = '\0';
    const char *kind = db_edge_kind_name(via->kind);
    const char *l = against ? kind : id, *r = against ? id : kind;
    size_t ln = strlen(l), rn = strlen(r);
    if (ln + rn + 5 > sizeof b) { /* no kind's name is that long */
        query_table_str(t, kind);
        return;
    }
    memcpy(b, l, ln);
    memcpy(b + ln, " -> ", 4);
    memcpy(b + ln + 4, r, rn + 1);
    query_table_str(t, b);
}

static void print_table(query_session *s, const query_path *p, bool back)
{
    static const char *const heads[] = {"depth", "edge", "node", "kind", "thread", "tid", "proc",
                                        "begin", "duration", "blocked", "events"};
    query_table t;
    query_table_init(&t, s->format, 11, heads);
    for (size_t i = 0; i < p->len; i++) {
        const query_path_item *it = &p->items[i];
        const db_node *n = &it->node;
        query_table_u64(&t, (uint64_t)it->depth);
        if (i == 0)
            query_table_str(&t, "-");
        else
            edge_cell(&t, &it->via, it->via.to != n->id); /* to another node: reached against the edge */
        query_table_u64(&t, n->id);
        query_table_str(&t, db_node_kind_name(n->kind));
        query_table_str(&t, n->thread);
        query_table_u64(&t, n->tid);
        query_table_str(&t, n->proc);
        query_table_ts(&t, n->begin);
        query_table_dur(&t, n->end - n->begin, false);
        query_table_dur(&t, n->blocked, true);
        query_table_u64(&t, n->events);
    }
    bool csv = t.csv;
    query_table_show(s, &t);
    query_table_free(&t);
    if (csv)
        return;
    /* the longest chain found, read from the start node outwards */
    if (p->len > 1) {
        fprintf(s->out, "\nlongest chain: %s#%" PRIu32, p->items[0].node.thread, p->items[0].node.id);
        size_t path[64], np = 0;
        for (size_t i = p->len - 1; i != 0 && np < 64; i = p->items[i].parent)
            path[np++] = i;
        for (size_t k = np; k-- > 0;) {
            const query_path_item *it = &p->items[path[k]];
            fprintf(s->out, back ? " <-%s- %s#%" PRIu32 : " -%s-> %s#%" PRIu32, db_edge_kind_name(it->via.kind),
                    it->node.thread, it->node.id);
        }
        fputc('\n', s->out);
    }
    fprintf(s->out, "%zu nodes, %zu edges\n", p->len, p->elen);
    if (p->full)
        fprintf(s->out, "stopped at %d nodes: more lie beyond them (a smaller depth, or `via` fewer kinds)\n",
                QUERY_PATH_MAX);
}

/* A walked path in the session's format. */
void query_print_path(query_session *s, const query_path *p, bool back)
{
    if (s->format == QUERY_FMT_JSON) {
        fputs("{\"nodes\":[", s->out);
        for (size_t i = 0; i < p->len; i++) {
            fputs(i ? "," : "", s->out);
            query_json_node(s->out, &p->items[i].node, p->items[i].depth);
        }
        fputs("],\"edges\":[", s->out);
        for (size_t i = 0; i < p->elen; i++) {
            fputs(i ? "," : "", s->out);
            query_json_edge(s->out, &p->edges[i]);
        }
        /* truncated: the walk stopped at QUERY_PATH_MAX nodes */
        fprintf(s->out, "],\"truncated\":%s}\n", p->full ? "true" : "false");
    } else
        print_table(s, p, back);
}

/* A walked path in the session's format; DOT, SVG and Perfetto draw it
 * with reader r's telling events.  Returns 0, or -1 with err. */
int query_output_path(query_session *s, db_reader *r, const query_path *p, bool back, query_error *err)
{
    if (!query_view_format(s->format)) {
        query_print_path(s, p, back);
        return 0;
    }
    query_view v;
    query_view_init(&v);
    query_view_add_path(&v, query_view_group(&v, r, NULL), p);
    int rc = query_view_print(s, &v, err);
    query_view_free(&v);
    return rc;
}

static int depth_of(const query_stmt *st)
{
    assert(!st->has_depth || st->depth <= QUERY_DEPTH_MAX); /* the parser refuses more */
    return st->has_depth ? (int)st->depth : SLICE_DEFAULT_DEPTH;
}

/* The walk's outcome as a statement error (1: the start node is missing). */
int query_path_fail(int rc, db_reader *r, const query_stmt *st, const db_error *de, query_error *err)
{
    if (rc == 1)
        return query_fail(err, &st->node_pos, "no node %" PRIu64 " in trace \"%s\"", st->node,
                          db_reader_trace(r)->name);
    return query_fail(err, NULL, "%s", de->msg);
}

int query_exec_slice(query_session *s, const query_stmt *st, query_error *err)
{
    uint32_t kinds;
    if (kinds_of(st, &kinds, err))
        return -1;
    db_reader *r = query_open_trace(s, &st->trace, err);
    if (!r)
        return -1;
    db_error de = {0};
    query_path p;
    memset(&p, 0, sizeof p); /* freed below even when no walk ran (node >= 2^32) */
    bool back = st->dir == QUERY_SLICE_BACK;
    int rc = st->node > UINT32_MAX ? 1
                                   : query_path_walk(r, (uint32_t)st->node, back ? QUERY_WALK_IN : QUERY_WALK_OUT,
                                                     kinds, depth_of(st), &p, &de);
    if (rc)
        rc = query_path_fail(rc, r, st, &de, err);
    else
        rc = query_output_path(s, r, &p, back, err);
    query_path_free(&p);
    db_reader_close(r);
    return rc;
}

/* paper/002: "initiate the graph with the execution segment containing user
 * input as a root.  Then we check all of the connections except wake-up
 * connector ... until there is no more can be added.  After this process,
 * we will check all the segments that contain wait event.  If a segment has
 * following segments in time order from the same thread in the cluster, we
 * will include the execution segment from another thread that contains the
 * wake-up event to make the former thread runnable." */
static int add_wakers(db_reader *r, query_path *p, db_error *de)
{
    size_t n = p->len; /* the cluster before this step */
    for (size_t i = 0; i < n; i++) {
        const db_node *seg = &p->items[i].node;
        bool later = false; /* a later segment of the same thread in the cluster */
        for (size_t j = 0; j < n && !later; j++)
            later = p->items[j].node.tid == seg->tid && p->items[j].node.begin > seg->end &&
                    p->items[j].node.kind == seg->kind;
        if (!later)
            continue;
        /* the weak edge runs from the segment's wait to the wakeup */
        query_path weak = {0};
        int rc = query_path_walk(r, seg->id, QUERY_WALK_OUT, 1u << DB_EDGE_WEAK, 1, &weak, de);
        for (size_t k = 1; rc == 0 && k < weak.len; k++) {
            size_t before = p->len;
            rc = query_path_add(r, p, weak.items[k].node.id, i, &weak.items[k].via, de);
            if (!rc && p->len > before && p->elen < QUERY_PATH_MAX) {
                db_edge *e = realloc(p->edges, (p->elen + 1) * sizeof *e);
                if (!e)
                    rc = db_fail_oom(de);
                else {
                    p->edges = e;
                    p->ecap = p->elen + 1;
                    p->edges[p->elen++] = weak.items[k].via;
                }
            }
        }
        query_path_free(&weak);
        if (rc)
            return -1;
    }
    return 0;
}

int query_exec_transaction(query_session *s, const query_stmt *st, query_error *err)
{
    db_reader *r = query_open_trace(s, &st->trace, err);
    if (!r)
        return -1;
    db_error de = {0};
    query_path p;
    memset(&p, 0, sizeof p); /* freed below even when no walk ran (node >= 2^32) */
    uint32_t kinds = query_causal_kinds() & ~(1u << DB_EDGE_WAKEUP);
    int rc = st->node > UINT32_MAX ? 1
                                   : query_path_walk(r, (uint32_t)st->node, QUERY_WALK_IN | QUERY_WALK_OUT, kinds,
                                                     depth_of(st), &p, &de);
    if (!rc && add_wakers(r, &p, &de))
        rc = -1;
    if (rc)
        rc = query_path_fail(rc, r, st, &de, err);
    else
        rc = query_output_path(s, r, &p, false, err);
    query_path_free(&p);
    db_reader_close(r);
    return rc;
}
