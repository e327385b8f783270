/* query/exec_slice.c -- `slice back|forward from node N` (paper/004 §Path
 * Slicing): the nodes reached from N by following edges into it (back)
 * or out of it (forward), breadth first, up to a depth.  Weak edges
 * (wait -> wakeup) are followed only when asked: they point from the
 * waiter to the waker, against causality.  Each step is one prefix scan
 * of the edges_in (or edges_out) index. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

#define SLICE_DEFAULT_DEPTH 20

typedef struct slice_item {
    db_node node;
    int depth;
    size_t parent;   /* index of the node it was reached from */
    db_edge via;     /* the edge it was reached by (item 0: none) */
} slice_item;

typedef struct slice_ctx {
    const query_stmt *st;
    uint32_t kinds;          /* bit per db_edge_kind that may be followed */
    db_reader *r;
    db_error *de;
    unsigned char *seen;     /* bitmap over node ids */
    uint64_t nnodes;
    slice_item *items;
    size_t len, cap;
    db_edge *edges;
    size_t elen, ecap;
    size_t cur;              /* the item being expanded */
    bool oom;
} slice_ctx;

static int push(void **arr, size_t *cap, size_t len, size_t elem)
{
    if (len < *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 64;
    void *p = realloc(*arr, n * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

static int follow(void *p, const db_edge *e)
{
    slice_ctx *c = p;
    if (!(c->kinds & (1u << e->kind)))
        return 0;
    if (push((void **)&c->edges, &c->ecap, c->elen, sizeof *c->edges)) {
        c->oom = true;
        return -1;
    }
    c->edges[c->elen++] = *e;
    uint32_t next = c->st->dir == QUERY_SLICE_BACK ? e->from : e->to;
    if (next > c->nnodes || (c->seen[next / 8] & (1u << (next % 8))))
        return 0;
    c->seen[next / 8] |= (unsigned char)(1u << (next % 8));
    if (push((void **)&c->items, &c->cap, c->len, sizeof *c->items)) {
        c->oom = true;
        return -1;
    }
    slice_item *it = &c->items[c->len];
    int got = db_get_node(c->r, next, &it->node, c->de);
    if (got <= 0)
        return got < 0 ? -1 : 0;
    it->depth = c->items[c->cur].depth + 1;
    it->parent = c->cur;
    it->via = *e;
    c->len++;
    return 0;
}

static int kinds_of(const query_stmt *st, uint32_t *kinds, query_error *err)
{
    if (st->via_count == 0) {
        *kinds = ((1u << DB_EDGE__COUNT) - 1) & ~(st->with_weak ? 0u : 1u << DB_EDGE_WEAK);
        return 0;
    }
    *kinds = 0;
    for (size_t i = 0; i < st->via_count; i++) {
        const query_name *v = &st->via[i];
        int k = db_edge_kind_from_name(v->name, v->len);
        if (k < 0)
            return query_fail(err, &v->pos,
                              "unknown edge kind \"%s\" (kinds: wakeup weak ipc ipc_reply dispatch runloop "
                              "timer flag user)",
                              v->name);
        *kinds |= 1u << k;
    }
    if (st->with_weak)
        *kinds |= 1u << DB_EDGE_WEAK;
    return 0;
}

static void print_table(query_session *s, const slice_ctx *c)
{
    static const char *const heads[] = {"depth", "edge", "node", "kind", "thread", "tid", "proc",
                                        "begin", "duration", "blocked", "events"};
    query_table t;
    query_table_init(&t, s->format, 11, heads);
    bool back = c->st->dir == QUERY_SLICE_BACK;
    for (size_t i = 0; i < c->len; i++) {
        const slice_item *it = &c->items[i];
        const db_node *n = &it->node;
        query_table_cell(&t, "%d", it->depth);
        if (i == 0)
            query_table_cell(&t, "-");
        else if (back)
            query_table_cell(&t, "%s -> %" PRIu32, db_edge_kind_name(it->via.kind), it->via.to);
        else
            query_table_cell(&t, "%" PRIu32 " -> %s", it->via.from, db_edge_kind_name(it->via.kind));
        query_table_cell(&t, "%" PRIu32, n->id);
        query_table_cell(&t, "%s", db_node_kind_name(n->kind));
        query_table_cell(&t, "%s", n->thread);
        query_table_cell(&t, "%" PRIu32, n->tid);
        query_table_cell(&t, "%s", n->proc);
        query_table_ts(&t, n->begin);
        query_table_dur(&t, n->end - n->begin, false);
        query_table_dur(&t, n->blocked, true);
        query_table_cell(&t, "%" PRIu32, n->events);
    }
    bool csv = t.csv;
    query_table_print(&t, s->out);
    query_table_free(&t);
    if (csv)
        return;
    /* the longest chain found, read from the start node outwards */
    if (c->len > 1) {
        size_t i = c->len - 1;
        fprintf(s->out, "\nlongest chain: %s#%" PRIu32, c->items[0].node.thread, c->items[0].node.id);
        size_t path[64], np = 0;
        for (; i != 0 && np < 64; i = c->items[i].parent)
            path[np++] = i;
        for (size_t k = np; k-- > 0;) {
            const slice_item *it = &c->items[path[k]];
            fprintf(s->out, back ? " <-%s- %s#%" PRIu32 : " -%s-> %s#%" PRIu32, db_edge_kind_name(it->via.kind),
                    it->node.thread, it->node.id);
        }
        fputc('\n', s->out);
    }
    fprintf(s->out, "%zu nodes, %zu edges\n", c->len, c->elen);
}

int query_exec_slice(query_session *s, const query_stmt *st, query_error *err)
{
    slice_ctx c = {.st = st};
    if (kinds_of(st, &c.kinds, err))
        return -1;
    int max_depth = st->has_depth ? (st->depth > 100000 ? 100000 : (int)st->depth) : SLICE_DEFAULT_DEPTH;
    db_reader *r = query_open_trace(s, &st->trace, err);
    if (!r)
        return -1;
    db_error de = {{0}};
    c.r = r;
    c.de = &de;
    c.nnodes = db_reader_trace(r)->nodes;
    int rc = 0;
    c.seen = calloc(c.nnodes / 8 + 1, 1);
    c.items = calloc(1, sizeof *c.items);
    c.cap = 1;
    if (!c.seen || !c.items) {
        rc = query_fail(err, NULL, "out of memory");
        goto out;
    }
    int got = st->node > UINT32_MAX ? 0 : db_get_node(r, (uint32_t)st->node, &c.items[0].node, &de);
    if (got <= 0) {
        rc = got < 0 ? query_fail(err, &st->node_pos, "%s", de.msg)
                     : query_fail(err, &st->node_pos, "no node %" PRIu64 " in trace \"%s\"", st->node,
                                  db_reader_trace(r)->name);
        goto out;
    }
    c.len = 1;
    c.seen[st->node / 8] |= (unsigned char)(1u << (st->node % 8));
    for (c.cur = 0; c.cur < c.len && !rc; c.cur++) {
        if (c.items[c.cur].depth >= max_depth)
            continue;
        uint32_t id = c.items[c.cur].node.id;
        rc = st->dir == QUERY_SLICE_BACK ? db_edges_in(r, id, follow, &c, &de)
                                         : db_edges_out(r, id, follow, &c, &de);
    }
    if (rc) {
        rc = query_fail(err, NULL, "%s", c.oom ? "out of memory" : de.msg);
        goto out;
    }
    if (s->format == QUERY_FMT_JSON) {
        fputs("{\"nodes\":[", s->out);
        for (size_t i = 0; i < c.len; i++) {
            fputs(i ? "," : "", s->out);
            query_json_node(s->out, &c.items[i].node, c.items[i].depth);
        }
        fputs("],\"edges\":[", s->out);
        for (size_t i = 0; i < c.elen; i++) {
            fputs(i ? "," : "", s->out);
            query_json_edge(s->out, &c.edges[i]);
        }
        fputs("]}\n", s->out);
    } else if (s->format == QUERY_FMT_DOT) {
        query_dot_begin(s->out);
        for (size_t i = 0; i < c.len; i++)
            query_dot_node(s->out, &c.items[i].node, i == 0);
        for (size_t i = 0; i < c.elen; i++)
            query_dot_edge(s->out, &c.edges[i]);
        query_dot_end(s->out);
    } else
        print_table(s, &c);
out:
    free(c.seen);
    free(c.items);
    free(c.edges);
    db_reader_close(r);
    return rc;
}
