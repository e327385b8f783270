/* db/nodetop.c -- each thread's nodes with the longest waits and the
 * longest runs, for `find nodes where thread = X order by blocked|duration
 * desc limit K` without reading every node of a busy thread (a busy
 * thread of a long trace has hundreds of thousands).
 *
 * While a trace's graph is written, a bounded min-heap per (thread key,
 * field) keeps the DB_TOP_MAX nodes with the largest value; the writer
 * puts each as one value at commit:
 *
 *   key   trace(4) thread_key(4) field(1)
 *   value total(4) then, largest first (ties: smaller id first),
 *         value(8) id(4) for each kept node -- all big-endian
 *
 * total is how many nodes the thread key has: when it equals the number
 * kept, the list is every node of it.  Memory: 12 bytes a kept node, at
 * most DB_TOP_MAX of them per thread key and field. */
#include <stdlib.h>
#include <string.h>

#include "db_int.h"

typedef struct top_ent {
    uint64_t v;
    uint32_t id;
} top_ent;

typedef struct top_list {
    uint32_t key;
    uint32_t total;
    top_ent *heap[DB_TOP__COUNT]; /* min-heaps by (v, -id) */
    uint32_t n[DB_TOP__COUNT], cap[DB_TOP__COUNT];
} top_list;

struct db_nodetop {
    top_list *l;
    size_t n, cap;
    base_map slots; /* thread key -> list */
};

db_nodetop *db_nodetop_new(void) { return calloc(1, sizeof(db_nodetop)); }

void db_nodetop_free(db_nodetop *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        for (int f = 0; f < DB_TOP__COUNT; f++)
            free(t->l[i].heap[f]);
    free(t->l);
    base_map_free(&t->slots);
    free(t);
}

/* "a ranks below b": the smaller value, or of equals the larger id (a
 * full scan sorted by value keeps the smaller id first) */
static bool below(const top_ent *a, const top_ent *b)
{
    return a->v < b->v || (a->v == b->v && a->id > b->id);
}

static void sift_up(top_ent *h, uint32_t i)
{
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!below(&h[i], &h[p]))
            break;
        top_ent x = h[i];
        h[i] = h[p];
        h[p] = x;
        i = p;
    }
}

/* The lowest of the full heap h[0..n) replaced by e, which ranks above
 * it: the hole the lowest leaves goes down the path of lower children to
 * a leaf, one compare a level, and e goes up from there to its place (a
 * node that makes a full list ranks among its highest, so not far), not
 * the compare of e with both children a level and their swap.  The list
 * keeps the same nodes whatever the heap's shape: its lowest goes, e
 * comes in. */
static void replace_lowest(top_ent *h, uint32_t n, top_ent e)
{
    uint32_t i = 0;
    for (uint32_t l = 1; l < n; l = 2 * i + 1) {
        uint32_t m = l + 1 < n && below(&h[l + 1], &h[l]) ? l + 1 : l;
        h[i] = h[m];
        i = m;
    }
    while (i > 0 && below(&e, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
}

static top_list *list_of(db_nodetop *t, uint32_t key)
{
    uint32_t i;
    if (base_map_get(&t->slots, key, &i))
        return &t->l[i];
    if (t->n == t->cap) {
        size_t c = t->cap ? t->cap * 2 : 64;
        void *p = realloc(t->l, c * sizeof *t->l);
        if (!p)
            return NULL;
        t->l = p;
        t->cap = c;
    }
    if (base_map_put(&t->slots, key, (uint32_t)t->n))
        return NULL;
    top_list *l = &t->l[t->n++];
    memset(l, 0, sizeof *l);
    l->key = key;
    return l;
}

/* e into a list not full, or over the lowest of a full one */
static __attribute__((noinline)) int keep_slow(top_list *l, int f, top_ent e)
{
    if (l->n[f] == DB_TOP_MAX) {
        replace_lowest(l->heap[f], l->n[f], e);
        return 0;
    }
    if (l->n[f] == l->cap[f]) {
        uint32_t c = l->cap[f] ? l->cap[f] * 4 : 4;
        if (c > DB_TOP_MAX)
            c = DB_TOP_MAX;
        void *p = realloc(l->heap[f], c * sizeof *l->heap[f]);
        if (!p)
            return -1;
        l->heap[f] = p;
        l->cap[f] = c;
    }
    l->heap[f][l->n[f]] = e;
    sift_up(l->heap[f], l->n[f]++);
    return 0;
}

/* Most nodes of a busy thread rank below its full list's lowest: that
 * test alone is inline, the rest out of line, so that the two calls a
 * node saves no registers */
static inline int keep(top_list *l, int f, uint64_t v, uint32_t id)
{
    top_ent e = {v, id};
    if (l->n[f] == DB_TOP_MAX && !below(&l->heap[f][0], &e))
        return 0; /* full, and e ranks no higher than the lowest */
    return keep_slow(l, f, e);
}

int db_nodetop_add(db_nodetop *t, const db_node *n, uint32_t key)
{
    top_list *l = list_of(t, key);
    if (!l)
        return -1;
    l->total++;
    if (keep(l, DB_TOP_BLOCKED, n->blocked, n->id) || keep(l, DB_TOP_DURATION, n->end - n->begin, n->id))
        return -1;
    return 0;
}

/* "a goes before b" in a list's stored order: a ranks above b */
static bool ranks_above(const void *a, const void *b) { return below(b, a); }

/* A list's entries, highest rank first, into out (base.h; tmp: room
 * for n), with no call per compare as qsort's merge sort makes.  Ranks
 * are a total order (a list holds a node once), so any sort gives the
 * same bytes. */
static void sort_by_rank(const top_ent *h, uint32_t n, top_ent *out, top_ent *tmp)
{
    memcpy(out, h, n * sizeof *h);
    base_sort_merge(out, tmp, n, sizeof *out, ranks_above);
}

int db_nodetop_flush(db_nodetop *t, uint32_t trace, db_put_fn put, void *ctx)
{
    unsigned char *v = malloc(4 + 12 * (size_t)DB_TOP_MAX);
    if (!v)
        return -2; /* as the thread index says out of memory */
    top_ent sorted[DB_TOP_MAX], tmp[DB_TOP_MAX];
    int rc = 0;
    for (size_t i = 0; i < t->n && rc == 0; i++) {
        top_list *l = &t->l[i];
        for (int f = 0; f < DB_TOP__COUNT && rc == 0; f++) {
            sort_by_rank(l->heap[f], l->n[f], sorted, tmp);
            db_put_be32(v, l->total);
            for (uint32_t j = 0; j < l->n[f]; j++) {
                db_put_be64(v + 4 + 12 * j, sorted[j].v);
                db_put_be32(v + 4 + 12 * j + 8, sorted[j].id);
            }
            unsigned char k[9];
            db_put_be32(k, trace);
            db_put_be32(k + 4, l->key);
            k[8] = (unsigned char)f;
            rc = put(ctx, k, sizeof k, v, 4 + 12 * (size_t)l->n[f]);
        }
    }
    free(v);
    return rc;
}

int db_nodetop_decode(const void *data, size_t len, db_top *out)
{
    const unsigned char *p = data;
    if (len < 4 || (len - 4) % 12 || (len - 4) / 12 > DB_TOP_MAX)
        return -1;
    out->total = db_get_be32(p);
    out->n = (uint32_t)((len - 4) / 12);
    for (uint32_t j = 0; j < out->n; j++) {
        out->v[j] = db_get_be64(p + 4 + 12 * j);
        out->id[j] = db_get_be32(p + 4 + 12 * j + 8);
    }
    return 0;
}
