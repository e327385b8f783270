/* db/keysort.c -- the index keys of a batch, handed out in key order.
 *
 * The edge blocks and the time index (of a trace out of time order) get
 * their keys in event order, not key order (the thread and object indexes
 * go in chunks of their own: thrindex.c, chunkq.c); inserted one by one
 * they would land all over the
 * tree and split pages in half, so the writer keeps a batch's keys here
 * and puts them in sorted at its end: each range then grows at its end,
 * where LMDB splits as it does for an append, leaving full pages.
 *
 * The sort is a radix sort, linear in the keys: each key is reduced to
 * its table and the 8 bytes after the trace id (which every key of a
 * writer shares) -- the node, object or time, which is all that tells
 * most keys apart -- and those are sorted least significant byte first,
 * skipping the bytes every key shares (the high bytes of node ids).
 * Being stable, it leaves keys that tie on those 12 bytes (the keys of
 * one object or one node pair) in arrival order, which is their time
 * order, so the rest of the key only has to be compared when a run of
 * ties is out of order (an Argus trace out of time order).  A comparison
 * sort of the edge keys, each its own node pair, was the largest cost of
 * an ingest (docs/PERFORMANCE.md).  Edges are now kept as records and
 * sorted by a radix sort of their own (below). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "db_int.h"

typedef struct ks_key {
    uint8_t dbi, len;
    unsigned char k[DB_KEYSORT_MAX];
} ks_key;

/* a key reduced to what the radix sort looks at: 16 bytes, so that each
 * of its passes moves two thirds of what the 24 of (table << 32 | bytes
 * 0-3, bytes 4-11, index) moved.  Bytes 0-3 are the trace id, the same in
 * every key of a writer; a batch whose keys differ there is sorted by
 * comparison instead. */
typedef struct ks_rec {
    uint64_t lo;  /* bytes 4-11 (zero-padded) */
    uint32_t dbi; /* the table */
    uint32_t i;   /* the key */
} ks_rec;

/* a table's edges (edges_in, edges_out), as records, not keys */
typedef struct ks_edges {
    db_edge_rec *r;
    size_t n, cap;
    uint32_t lo, hi; /* the least and the greatest a of r[0..n) */
} ks_edges;

struct db_keysort {
    ks_key *key;
    size_t n, cap;
    ks_rec *rec, *tmp; /* scratch of the drain, n each */
    size_t rcap;
    ks_edges edge[2];  /* [0] edges_in, [1] edges_out */
    db_edge_rec *eout; /* the edges' drain: the other half of a radix pass */
    size_t ecap;
    uint32_t *count;   /* ... and its counts, 1 << KS_DIGIT_MAX */
};

db_keysort *db_keysort_new(void) { return calloc(1, sizeof(db_keysort)); }

void db_keysort_free(db_keysort *ks)
{
    if (!ks)
        return;
    free(ks->key);
    free(ks->rec);
    free(ks->tmp);
    free(ks->edge[0].r);
    free(ks->edge[1].r);
    free(ks->eout);
    free(ks->count);
    free(ks);
}

size_t db_keysort_count(const db_keysort *ks) { return ks->n + ks->edge[0].n + ks->edge[1].n; }

/* inline: called twice an edge from db_keysort_add_edge_pair */
static inline void put_edge(ks_edges *e, const db_edge_rec *r)
{
    /* the node range, as edges come: the sort's digits depend on it */
    if (!e->n || r->a < e->lo)
        e->lo = r->a;
    if (!e->n || r->a > e->hi)
        e->hi = r->a;
    e->r[e->n++] = *r;
}

/* an edge that needs more room; out of line (and a tail call), so that
 * the add below saves no registers: it is called twice an edge */
static __attribute__((noinline)) int grow_and_put_edge(ks_edges *e, const db_edge_rec *r)
{
    size_t cap = e->cap ? e->cap * 2 : 65536;
    db_edge_rec *nr = realloc(e->r, cap * sizeof *nr);
    if (!nr)
        return -1;
    e->r = nr;
    e->cap = cap;
    put_edge(e, r);
    return 0;
}

int db_keysort_add_edge(db_keysort *ks, int side, const db_edge_rec *r)
{
    ks_edges *e = &ks->edge[side != 0];
    if (e->n == e->cap)
        return grow_and_put_edge(e, r);
    put_edge(e, r);
    return 0;
}

/* An edge into both tables: r as edges_in has it, and with a and b
 * swapped into edges_out.  One call an edge, not two (with the writer's
 * count of each around it): see writer_keys.c, db_writer_edge_back. */
bool db_keysort_add_edge_pair_fast(db_keysort *ks, const db_edge_rec *r)
{
    ks_edges *in_side = &ks->edge[0], *out_side = &ks->edge[1];
    if (in_side->n == in_side->cap || out_side->n == out_side->cap)
        return false;
    db_edge_rec out = *r;
    out.a = r->b;
    out.b = r->a;
    put_edge(in_side, r);
    put_edge(out_side, &out);
    return true;
}

int db_keysort_add_edge_pair(db_keysort *ks, const db_edge_rec *r)
{
    db_edge_rec out = *r;
    out.a = r->b;
    out.b = r->a;
    ks_edges *in_side = &ks->edge[0], *out_side = &ks->edge[1];
    if (in_side->n == in_side->cap || out_side->n == out_side->cap)
        return db_keysort_add_edge(ks, 0, r) || db_keysort_add_edge(ks, 1, &out) ? -1 : 0;
    put_edge(in_side, r);
    put_edge(out_side, &out);
    return 0;
}

int db_keysort_add(db_keysort *ks, int dbi, const unsigned char *k, size_t len)
{
    if (len > DB_KEYSORT_MAX)
        return -1;
    if (ks->n == ks->cap) {
        size_t cap = ks->cap ? ks->cap * 2 : 65536;
        ks_key *nk = realloc(ks->key, cap * sizeof *nk);
        if (!nk)
            return -1;
        ks->key = nk;
        ks->cap = cap;
    }
    ks_key *e = &ks->key[ks->n++];
    e->dbi = (uint8_t)dbi;
    e->len = (uint8_t)len;
    memcpy(e->k, k, len);
    if (len < 12) /* reduce reads 12 bytes: zero-padded */
        memset(e->k + len, 0, 12 - len);
    return 0;
}

/* table first, then the key's bytes (memcmp order: LMDB's order) */
static int key_cmp(const ks_key *x, const ks_key *y)
{
    if (x->dbi != y->dbi)
        return x->dbi < y->dbi ? -1 : 1;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->k, y->k, n);
    if (c)
        return c;
    return (x->len > y->len) - (x->len < y->len);
}

static int index_cmp(const void *a, const void *b, void *keys)
{
    const ks_key *k = keys;
    return key_cmp(&k[((const ks_rec *)a)->i], &k[((const ks_rec *)b)->i]);
}

/* bytes 0-3 (the trace) into *head, the rest of what is sorted on into
 * the record: read in place, as a key is zero-padded to 12 bytes (a copy
 * of its length into a zeroed buffer first stalled the loads after it,
 * which showed in the drain's profile: docs/PERFORMANCE.md) */
static ks_rec reduce(const ks_key *e, uint32_t i, uint32_t *head)
{
    *head = db_get_be32(e->k);
    return (ks_rec){db_get_be64(e->k + 4), e->dbi, i};
}

static unsigned digit(const ks_rec *r, int d) /* d: 0..8, least significant first */
{
    return (unsigned)((d < 8 ? r->lo >> (8 * d) : r->dbi) & 0xff);
}

/* Sorts ks->rec by (dbi, lo), stably; ks->tmp is its scratch.  Only the
 * digits where some key differs from the first (a bit of ddbi / dlo set)
 * are counted and sorted by: the high bytes of node ids are the same in
 * every key, and counting every digit for every key was wasted work. */
static void radix(db_keysort *ks, uint32_t ddbi, uint64_t dlo)
{
    size_t n = ks->n;
    int dig[9], nd = 0;
    for (int d = 0; d < 9; d++)
        if ((d < 8 ? dlo >> (8 * d) : ddbi) & 0xff)
            dig[nd++] = d;
    if (!nd)
        return; /* every key ties on the 12 bytes: arrival order */
    uint32_t (*count)[256] = calloc((size_t)nd, sizeof *count);
    ks_rec *src = ks->rec, *dst = ks->tmp;
    if (!count) { /* no room for the counts: the comparison sort will do */
        qsort_r(src, n, sizeof *src, index_cmp, ks->key);
        return;
    }
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < nd; j++)
            count[j][digit(&src[i], dig[j])]++;
    for (int j = 0; j < nd; j++) {
        int d = dig[j];
        uint32_t at = 0;
        for (int v = 0; v < 256; v++) {
            uint32_t c = count[j][v];
            count[j][v] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[j][digit(&src[i], d)]++] = src[i];
        ks_rec *t = src;
        src = dst;
        dst = t;
    }
    free(count);
    ks->rec = src;
    ks->tmp = dst;
}

/* A run of ties out of order, by whole keys: most are two or three keys
 * (the edges of one node pair), where qsort_r's setup costs more than
 * the sort; insertion sort gives the same order (keys that compare equal
 * are equal bytes). */
static void sort_run(db_keysort *ks, ks_rec *r, size_t n)
{
    if (n > 16) {
        qsort_r(r, n, sizeof *r, index_cmp, ks->key);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        ks_rec x = r[i];
        size_t j = i;
        for (; j > 0 && key_cmp(&ks->key[r[j - 1].i], &ks->key[x.i]) > 0; j--)
            r[j] = r[j - 1];
        r[j] = x;
    }
}

/* ---- edges ----
 * Edges came as keys (trace, a, b, kind, events: 29 bytes) through the
 * sort above, which took their 9 bytes of table and nodes digit by digit
 * and gave each key back to be decoded again: the writer's largest cost
 * after LMDB.  Kept as records, an edge is sorted by its
 * node a alone (the radix sort below), then a run of one node's edges,
 * nearly always one or two in order, by the rest (db_edge_rec_cmp, which
 * is the keys' memcmp order).
 *
 * The records themselves move, between the table's own array and eout,
 * rather than an index of (a - lo, place) sorted in 11-bit passes, then
 * the records fetched by it and the runs found in a pass of their own.
 * A batch's edges of a table span about as many nodes as there are
 * edges, so a digit of up to 16 bits sorts them in one pass (a digit is
 * no wider than the edges need: the counts are cleared and summed every
 * pass). */
#define KS_DIGIT_MAX 16

static bool edge_less(const void *x, const void *y) { return db_edge_rec_cmp(x, y) < 0; }

/* One node's edges r[0..n), n > 1, in arrival order: sorted by the rest
 * of the edge (rarely needed), then moved down to out (out <= r), each
 * once (an edge stored twice is one edge, as it was when an edge was a
 * key); the number moved.  tmp: room for n, for the sort.  A run out of
 * order is nearly in order, and sorted by insertion (base.h); far out
 * of order, by the merge sort; neither calls a compare as qsort does.
 * Equal edges are the same bytes: any sort gives the same run. */
static size_t put_run(db_edge_rec *out, db_edge_rec *r, size_t n, db_edge_rec *tmp)
{
    bool sorted = true;
    for (size_t i = 1; i < n && sorted; i++)
        sorted = db_edge_rec_cmp(&r[i - 1], &r[i]) <= 0;
    if (!sorted && !base_sort_nearly(r, n, sizeof *r, edge_less))
        base_sort_merge(r, tmp, n, sizeof *r, edge_less);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!k || db_edge_rec_cmp(&out[k - 1], &r[i]))
            out[k++] = r[i];
    return k;
}

/* The digits of a radix sort of n values of `bits` bits: as few passes
 * as digits of KS_DIGIT_MAX bits allow (of no more bits than n needs:
 * a few edges are not worth clearing 65,536 counts for), the bits shared
 * out evenly; the digit's width, 0 when the values are all the same. */
static unsigned digit_bits(unsigned bits, size_t n)
{
    unsigned most = 8;
    while (most < KS_DIGIT_MAX && ((size_t)1 << most) < n)
        most++;
    return base_radix_width(bits, most);
}

/* The side's edges sorted by a, stably (ties in arrival order), moved
 * between e->r and ks->eout, one pass a digit of a - lo; the array they
 * end in. */
static db_edge_rec *by_node(db_keysort *ks, const ks_edges *e)
{
    unsigned bits = base_radix_bits(e->hi - e->lo);
    return base_radix_u32(e->r, ks->eout, e->n, sizeof *e->r, offsetof(db_edge_rec, a), e->lo, e->hi - e->lo, bits,
                        digit_bits(bits, e->n), ks->count);
}

/* One side's edges, a block (DB_EDGE_BLOCK_NODES nodes) at a time, in
 * order, each once: sorted by node, then in one pass the runs of one
 * node -- nearly all a single edge -- each in order (put_run), moved
 * down over the copies of an edge left out before them (rare), and a
 * block handed out when the next run starts another: one pass over the
 * edges, not two (runs, then blocks). */
static int drain_side(db_keysort *ks, int side, db_keysort_edges_cb cb, void *ctx)
{
    db_edge_rec *r = by_node(ks, &ks->edge[side]);
    db_edge_rec *other = r == ks->edge[side].r ? ks->eout : ks->edge[side].r; /* a sort's scratch */
    size_t n = ks->edge[side].n, k = 0, first = 0;
    for (size_t s = 0, end; s < n; s = end) {
        uint32_t a = r[s].a;
        for (end = s + 1; end < n && r[end].a == a; end++)
            ;
        if (k > first && (r[first].a ^ a) >> DB_EDGE_BLOCK_SHIFT) {
            int rc = cb(ctx, side, r + first, k - first);
            if (rc)
                return rc;
            first = k;
        }
        if (end - s > 1)
            k += put_run(r + k, r + s, end - s, other + s);
        else if (k++ != s)
            r[k - 1] = r[s];
    }
    return k > first ? cb(ctx, side, r + first, k - first) : 0;
}

/* Both sides, edges_in first. */
static int drain_edges(db_keysort *ks, db_keysort_edges_cb cb, void *ctx)
{
    size_t most = ks->edge[0].n > ks->edge[1].n ? ks->edge[0].n : ks->edge[1].n;
    if (!ks->count && !(ks->count = malloc(sizeof *ks->count << KS_DIGIT_MAX)))
        return -1;
    if (most > ks->ecap) {
        free(ks->eout);
        ks->eout = malloc(most * sizeof *ks->eout);
        ks->ecap = ks->eout ? most : 0;
        if (!ks->ecap)
            return -1;
    }
    int rc = 0;
    for (int side = 0; side < 2 && !rc; side++)
        if (ks->edge[side].n)
            rc = drain_side(ks, side, cb, ctx);
    return rc;
}

int db_keysort_drain(db_keysort *ks, db_keysort_cb cb, db_keysort_edges_cb ecb, void *ctx)
{
    int rc = 0;
    size_t n = ks->n;
    if (!n)
        goto edges;
    if (n > ks->rcap) {
        free(ks->rec);
        free(ks->tmp);
        ks->rec = malloc(n * sizeof *ks->rec);
        ks->tmp = malloc(n * sizeof *ks->tmp);
        ks->rcap = ks->rec && ks->tmp ? n : 0;
        if (!ks->rcap) {
            rc = -1;
            goto done;
        }
    }
    /* the bits where some key differs from the first */
    uint32_t head0, head, dhead = 0, ddbi = 0;
    uint64_t dlo = 0;
    ks->rec[0] = reduce(&ks->key[0], 0, &head0);
    for (size_t i = 1; i < n; i++) {
        ks->rec[i] = reduce(&ks->key[i], (uint32_t)i, &head);
        dhead |= head ^ head0;
        ddbi |= ks->rec[i].dbi ^ ks->rec[0].dbi;
        dlo |= ks->rec[i].lo ^ ks->rec[0].lo;
    }
    if (dhead) /* keys of several traces: never from one writer */
        qsort_r(ks->rec, n, sizeof *ks->rec, index_cmp, ks->key);
    else
        radix(ks, ddbi, dlo);
    /* runs that tie on (table, 12 bytes): in arrival order, usually the
     * order of the rest of the key too */
    for (size_t s = 0, e; s < n; s = e) {
        bool sorted = true;
        for (e = s + 1; e < n && ks->rec[e].dbi == ks->rec[s].dbi && ks->rec[e].lo == ks->rec[s].lo; e++)
            if (sorted && key_cmp(&ks->key[ks->rec[e - 1].i], &ks->key[ks->rec[e].i]) > 0)
                sorted = false;
        if (!sorted)
            sort_run(ks, ks->rec + s, e - s);
    }
    /* the keys in sorted order are all over the batch's megabytes of
     * them: each is fetched a few keys ahead (their cache misses showed
     * in the drain's profile: docs/PERFORMANCE.md) */
    for (size_t i = 0; i < n && !rc; i++) {
        if (i + 8 < n)
            __builtin_prefetch(&ks->key[ks->rec[i + 8].i]);
        const ks_key *e = &ks->key[ks->rec[i].i];
        rc = cb(ctx, e->dbi, e->k, e->len);
    }
done:
    ks->n = 0;
edges:
    if (!rc && (ks->edge[0].n || ks->edge[1].n))
        rc = drain_edges(ks, ecb, ctx);
    ks->edge[0].n = ks->edge[1].n = 0;
    return rc;
}
