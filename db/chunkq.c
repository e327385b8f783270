/* db/chunkq.c -- the chunks of a batch (thread, node-thread and
 * signature indexes: thrindex.c, sigindex.c), kept until its end and
 * handed out run by run: the runs (a thread's, a thread key's: the key
 * without its last part, writer_chunks.c's chunk_run) in key order, a run's
 * chunks in the order they came.
 *
 * Put as they came, a thread's chunk and the next chunk of another thread
 * went into places far apart, each searched from the root, and LMDB's
 * search was most of a put's cost.  A run's chunks follow each other in its
 * table, and runs in key order walk the table once: the first batch of a
 * trace appends them (the writer tells by the table's last key), the
 * others land next to where the last one went.  The order of two puts of
 * different keys changes nothing that is stored, and a key put twice comes
 * twice in its run, in the order it came: the tables are what the puts as
 * they came made.
 *
 * The runs are the batch's, kept to its end (db_chunkq_end_batch), a
 * drain only emptying them: the writer counts a run's first chunk of the
 * batch as a page (writer_chunks.c, count_chunk), and asks add whether it is
 * that, not a map of its own by the same name, which would cost a lookup
 * and a put a chunk.  A drain within a batch (a graph cleared) leaves a
 * run known, as that map did.
 *
 * Memory: a batch's chunks (the writer counts them into its bound on the
 * batch's pages, as it counted their puts), one copy each, and its runs. */
#include <stdlib.h>
#include <string.h>

#include "db_int.h"

#define CQ_NONE UINT32_MAX

typedef struct cq_chunk {
    uint32_t off;  /* of its key, then its value, in buf */
    uint32_t vlen;
    uint32_t next; /* the run's next chunk, or CQ_NONE */
    uint8_t dbi, klen;
} cq_chunk;

typedef struct cq_run {
    uint64_t head; /* the first 8 bytes of the run's key part, big-endian (zero-padded) */
    uint32_t first, last; /* CQ_NONE: drained, no chunk since */
    uint8_t dbi, plen;
} cq_run;

struct db_chunkq {
    cq_chunk *c;
    size_t n, cap;
    cq_run *r;
    size_t nr, rcap;
    base_map runs; /* the run's hash -> r, to the batch's end */
    unsigned char *buf;
    size_t len, bcap;
    struct cq_rord *order, *otmp; /* the drain's runs in key order, those with chunks */
    size_t ocap, otcap;
    struct cq_ord *ord, *tmp; /* ... and a run's chunks in key order */
    size_t ordcap, tmpcap;
};

db_chunkq *db_chunkq_new(void) { return calloc(1, sizeof(db_chunkq)); }

void db_chunkq_free(db_chunkq *q)
{
    if (!q)
        return;
    free(q->c);
    free(q->r);
    base_map_free(&q->runs);
    free(q->buf);
    free(q->order);
    free(q->otmp);
    free(q->ord);
    free(q->tmp);
    free(q);
}

size_t db_chunkq_count(const db_chunkq *q) { return q ? q->n : 0; }

int db_chunkq_add(db_chunkq *q, uint64_t hash, int dbi, const unsigned char *k, size_t klen, size_t plen, const void *v,
                  size_t vlen, bool *fresh)
{
    if (klen > UINT8_MAX || plen > klen || q->len + klen + vlen > UINT32_MAX || q->n >= CQ_NONE ||
        !base_grow((void **)&q->c, &q->cap, q->n + 1, sizeof *q->c) ||
        !base_grow((void **)&q->buf, &q->bcap, q->len + klen + vlen, 1))
        return -1;
    uint32_t ri;
    *fresh = !base_map_get(&q->runs, hash, &ri);
    if (*fresh) {
        if (!base_grow((void **)&q->r, &q->rcap, q->nr + 1, sizeof *q->r) ||
            base_map_put(&q->runs, hash, (uint32_t)q->nr))
            return -1;
        unsigned char head[8] = {0};
        memcpy(head, k, plen < 8 ? plen : 8);
        q->r[q->nr] = (cq_run){db_get_be64(head), CQ_NONE, CQ_NONE, (uint8_t)dbi, (uint8_t)plen};
        ri = (uint32_t)q->nr++;
    }
    cq_run *r = &q->r[ri];
    if (r->last != CQ_NONE)
        q->c[r->last].next = (uint32_t)q->n;
    else
        r->first = (uint32_t)q->n;
    r->last = (uint32_t)q->n;
    q->c[q->n++] = (cq_chunk){(uint32_t)q->len, (uint32_t)vlen, CQ_NONE, (uint8_t)dbi, (uint8_t)klen};
    memcpy(q->buf + q->len, k, klen);
    if (vlen) /* a chunk of one event has no value (nor buffer) */
        memcpy(q->buf + q->len + klen, v, vlen);
    q->len += klen + vlen;
    return 0;
}

/* A run for the drain's sort of the runs: its table, its key part's
 * first 8 bytes and the key (of its first chunk), in the element itself,
 * so that the compare needs nothing else (base.h), and is inlined, not
 * called through qsort_r. */
typedef struct cq_rord {
    uint64_t head;
    const unsigned char *key;
    uint32_t run;
    uint8_t dbi, plen;
} cq_rord;

/* by table, then by key part (memcmp order); no two runs of a drain are
 * equal (a run is its table and key part) */
static bool run_less(const void *a, const void *b)
{
    const cq_rord *x = a, *y = b;
    if (x->dbi != y->dbi)
        return x->dbi < y->dbi;
    if (x->head != y->head)
        return x->head < y->head;
    size_t n = x->plen < y->plen ? x->plen : y->plen;
    int c = n > 8 ? memcmp(x->key + 8, y->key + 8, n - 8) : 0;
    return c ? c < 0 : x->plen < y->plen;
}

/* A run's chunk for its sort: the key's bytes after the run's part (a
 * thread chunk's time and first id, a signature chunk's first node), as
 * two big-endian words, zero-padded; then the chunk's index, so that no
 * two tie and chunks of one key stay in the order they came. */
typedef struct cq_ord {
    uint64_t hi, lo;
    uint32_t i;
} cq_ord;

static cq_ord ord_of(const db_chunkq *q, uint32_t i, size_t plen)
{
    const cq_chunk *c = &q->c[i];
    const unsigned char *p = q->buf + c->off + plen;
    size_t n = c->klen > plen ? c->klen - plen : 0;
    if (n >= 16) /* a thread chunk's: read in place */
        return (cq_ord){db_get_be64(p), db_get_be64(p + 8), i};
    unsigned char b[16] = {0};
    for (size_t j = 0; j < n; j++)
        b[j] = p[j];
    return (cq_ord){db_get_be64(b), db_get_be64(b + 8), i};
}

static bool ord_less(const void *x, const void *y)
{
    const cq_ord *a = x, *b = y;
    if (a->hi != b->hi)
        return a->hi < b->hi;
    return a->lo != b->lo ? a->lo < b->lo : a->i < b->i;
}

/* a[0..n) sorted, tmp its scratch (base.h), with no call per compare
 * as qsort_r makes.  A run out of order is nearly in order (a chunk or a
 * few back in time, not far), so the insertion sort of the whole
 * (base_sort_nearly) is tried first; a run far out of order goes to the
 * merge sort. */
static void sort_ords(cq_ord *a, cq_ord *tmp, size_t n)
{
    if (!base_sort_nearly(a, n, sizeof *a, ord_less))
        base_sort_merge(a, tmp, n, sizeof *a, ord_less);
}

/* A run's chunks into q->ord, in key order: as they came, often; but a
 * thread's chunk that starts back in time (thrindex.c: a node written
 * after a later one of its thread) goes before the ones it follows.  Put
 * out of order, such a chunk went into the full page before the run's
 * end and split it in half, leaving the table's pages half empty. */
static size_t run_in_order(db_chunkq *q, const cq_run *r)
{
    size_t n = 0;
    bool sorted = true;
    for (uint32_t at = r->first; at != CQ_NONE; at = q->c[at].next) {
        q->ord[n] = ord_of(q, at, r->plen);
        sorted = sorted && (!n || ord_less(&q->ord[n - 1], &q->ord[n]));
        n++;
    }
    if (!sorted)
        sort_ords(q->ord, q->tmp, n);
    return n;
}

size_t db_chunkq_bytes(const db_chunkq *q) { return q ? q->len : 0; }

int db_chunkq_drain(db_chunkq *q, db_chunkq_cb cb, void *ctx)
{
    if (!q || !q->n)
        return 0;
    int rc = 0;
    size_t m = 0;
    if (!base_grow((void **)&q->order, &q->ocap, q->nr, sizeof *q->order) ||
        !base_grow((void **)&q->otmp, &q->otcap, q->nr, sizeof *q->otmp) ||
        !base_grow((void **)&q->ord, &q->ordcap, q->n, sizeof *q->ord) ||
        !base_grow((void **)&q->tmp, &q->tmpcap, q->n, sizeof *q->tmp))
        rc = -1;
    for (size_t i = 0; !rc && i < q->nr; i++) {
        const cq_run *r = &q->r[i];
        if (r->first != CQ_NONE)
            q->order[m++] = (cq_rord){r->head, q->buf + q->c[r->first].off, (uint32_t)i, r->dbi, r->plen};
    }
    if (!rc)
        base_sort_merge(q->order, q->otmp, m, sizeof *q->order, run_less);
    for (size_t i = 0; !rc && i < m; i++) {
        size_t n = run_in_order(q, &q->r[q->order[i].run]);
        for (size_t j = 0; !rc && j < n; j++) {
            const cq_chunk *c = &q->c[q->ord[j].i];
            MDB_val key = {c->klen, q->buf + c->off}, val = {c->vlen, q->buf + c->off + c->klen};
            rc = cb(ctx, c->dbi, &key, &val);
        }
    }
    for (size_t i = 0; i < q->nr; i++)
        q->r[i].first = q->r[i].last = CQ_NONE;
    q->n = q->len = 0;
    return rc;
}

void db_chunkq_end_batch(db_chunkq *q)
{
    if (!q)
        return;
    q->n = q->nr = q->len = 0;
    base_map_free(&q->runs);
}
