/* query/path.c -- walking the graph from a node: the breadth-first search
 * behind `slice` (paper/004 §Path Slicing), `transaction` (paper/002) and
 * the paths `diagnose` compares.  Each step is one lookup of the block of
 * edges_in or edges_out that holds the node's edges (the edges of 16
 * nodes a record); a hash set of the node ids met keeps every node once.  (A
 * bitmap over every node id of the trace cost a page fault per node
 * visited, most of a slice's time: docs/PERFORMANCE.md.) */
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

typedef struct walk {
    db_reader *r;
    query_path *p;
    uint32_t kinds;
    bool in;          /* following edges into the current node */
    size_t cur;
    size_t cap, ecap;
    db_error *de;
    bool oom;
} walk;

static size_t seen_slot(const uint32_t *seen, size_t cap, uint32_t node)
{
    size_t i = ((uint64_t)node * 0x9E3779B97F4A7C15u) >> 32 & (cap - 1);
    while (seen[i] && seen[i] != node + 1)
        i = (i + 1) & (cap - 1);
    return i;
}

bool query_path_has(const query_path *p, uint32_t node)
{
    return node <= p->nnodes && p->seen_cap && p->seen[seen_slot(p->seen, p->seen_cap, node)];
}

/* Marks node met (not met before): 0, or -1 out of memory. */
static int seen_add(query_path *p, uint32_t node)
{
    if ((p->seen_len + 1) * 2 > p->seen_cap) {
        size_t cap = p->seen_cap ? p->seen_cap * 2 : 256;
        uint32_t *s = calloc(cap, sizeof *s);
        if (!s)
            return -1;
        for (size_t i = 0; i < p->seen_cap; i++)
            if (p->seen[i])
                s[seen_slot(s, cap, p->seen[i] - 1)] = p->seen[i];
        free(p->seen);
        p->seen = s;
        p->seen_cap = cap;
    }
    p->seen[seen_slot(p->seen, p->seen_cap, node)] = node + 1;
    p->seen_len++;
    return 0;
}

/* Adds a node (not seen before) reached from item `parent` by edge `via`. */
static int add(walk *w, uint32_t id, size_t parent, const db_edge *via)
{
    query_path *p = w->p;
    if (id > p->nnodes || query_path_has(p, id))
        return 0;
    if (p->len >= QUERY_PATH_MAX) {
        p->full = true;
        return 0;
    }
    if (!query_grow((void **)&p->items, &w->cap, p->len + 1, sizeof *p->items)) {
        w->oom = true;
        return -1;
    }
    query_path_item *it = &p->items[p->len];
    int got = db_get_node(w->r, id, &it->node, w->de);
    if (got <= 0)
        return got < 0 ? -1 : 0;
    if (seen_add(p, id)) {
        w->oom = true;
        return -1;
    }
    it->depth = p->len ? p->items[parent].depth + 1 : 0;
    it->parent = parent;
    if (via)
        it->via = *via;
    else
        memset(&it->via, 0, sizeof it->via);
    p->len++;
    return 0;
}

int query_path_add(db_reader *r, query_path *p, uint32_t id, size_t parent, const db_edge *via, db_error *de)
{
    walk w = {.r = r, .p = p, .de = de, .cap = p->cap, .ecap = p->ecap};
    int rc = add(&w, id, parent, via);
    p->cap = w.cap;
    return rc || w.oom ? -1 : 0;
}

static int follow(void *ctx, const db_edge *e)
{
    walk *w = ctx;
    if (!(w->kinds & (1u << e->kind)))
        return 0;
    query_path *p = w->p;
    if (!query_grow((void **)&p->edges, &w->ecap, p->elen + 1, sizeof *p->edges)) {
        w->oom = true;
        return -1;
    }
    p->edges[p->elen++] = *e;
    return add(w, w->in ? e->from : e->to, w->cur, e);
}

int query_path_walk(db_reader *r, uint32_t start, unsigned dirs, uint32_t kinds, int max_depth, query_path *p,
                    db_error *de)
{
    memset(p, 0, sizeof *p);
    p->nnodes = db_reader_trace(r)->nodes;
    walk w = {.r = r, .p = p, .kinds = kinds, .de = de};
    if (add(&w, start, 0, NULL) || p->len == 0) {
        p->cap = w.cap;
        return w.oom ? db_fail_oom(de) : p->len ? -1 : 1; /* 1: no such node */
    }
    int rc = 0;
    for (w.cur = 0; w.cur < p->len && !rc; w.cur++) {
        if (p->items[w.cur].depth >= max_depth)
            continue;
        uint32_t id = p->items[w.cur].node.id;
        if (dirs & QUERY_WALK_IN) {
            w.in = true;
            rc = db_edges_in(r, id, follow, &w, de);
        }
        if (!rc && (dirs & QUERY_WALK_OUT)) {
            w.in = false;
            rc = db_edges_out(r, id, follow, &w, de);
        }
    }
    p->cap = w.cap;
    p->ecap = w.ecap;
    if (w.oom)
        return db_fail_oom(de);
    return rc ? -1 : 0;
}

void query_path_free(query_path *p)
{
    free(p->items);
    free(p->edges);
    free(p->seen);
    memset(p, 0, sizeof *p);
}

/* The edge kinds every analysis follows: all but weak (wait -> wakeup
 * runs against causality). */
uint32_t query_causal_kinds(void)
{
    return ((1u << DB_EDGE__COUNT) - 1) & ~(1u << DB_EDGE_WEAK);
}
