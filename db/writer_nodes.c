/* db/writer_nodes.c -- node records.  A node's id is given when it
 * opens and it is written when it closes, so ids arrive out of order;
 * put one by one they would split pages in half.  They wait here and go
 * in sorted at the end of the batch (or when DB_NODES_MAX bytes wait),
 * extending the table as appends do.  A node also goes into its
 * thread's node_thread chunk and its thread key's top lists
 * (writer_chunks.c). */
#include <stddef.h>

#include "writer_int.h"

#define DB_NODES_MAX (16u << 20)

static int cmp_nref(const void *a, const void *b)
{
    uint32_t x = ((const struct nref *)a)->id, y = ((const struct nref *)b)->id;
    return (x > y) - (x < y);
}

/* The batch's nodes in id order by their place in [lo, hi]: the ids of a
 * batch are nearly all of a range, so each goes straight to its place,
 * without qsort's merge sort over the batch (nor qsort_r's per run of ties
 * in keysort.c's sort_run).  false (nothing changed) when the range is
 * sparse, an id comes twice, or memory is short: qsort then. */
static bool place_nodes(db_writer *w, uint32_t lo, uint32_t hi)
{
    size_t n = w->nrec.nnref, range = (size_t)hi - lo + 1;
    if (range > 4 * n + 4096)
        return false;
    uint32_t *at = calloc(range, sizeof *at);
    /* out takes nref's place (and room), not copied back into it */
    struct nref *out = malloc(w->nrec.nref_cap * sizeof *out);
    bool ok = at && out;
    for (size_t i = 0; ok && i < n; i++) {
        uint32_t *slot = &at[w->nrec.nref[i].id - lo];
        ok = !*slot;
        *slot = (uint32_t)i + 1;
    }
    if (ok) {
        size_t k = 0;
        for (size_t j = 0; j < range; j++)
            if (at[j])
                out[k++] = w->nrec.nref[at[j] - 1];
        free(w->nrec.nref);
        w->nrec.nref = out;
        out = NULL;
    }
    free(at);
    free(out);
    return ok;
}

/* ... and when the range is sparse or an id came twice, a radix sort of
 * id - lo (stable: of an id that came twice, the later goes in last, as
 * qsort's merge sort left them), in as few passes of up to 16 bits as
 * the range needs, not qsort's call of a compare per pair.  false when
 * memory is short: qsort then. */
#define DB_NREF_DIGIT_MAX 16

static bool radix_nodes(db_writer *w, uint32_t lo, uint32_t hi)
{
    size_t n = w->nrec.nnref;
    unsigned bits = base_radix_bits(hi - lo), width = base_radix_width(bits, DB_NREF_DIGIT_MAX);
    struct nref *tmp = malloc(n * sizeof *tmp);
    uint32_t *count = malloc(((size_t)1 << width) * sizeof *count);
    bool ok = tmp && count;
    if (ok) {
        struct nref *src = base_radix_u32(w->nrec.nref, tmp, n, sizeof *tmp, offsetof(struct nref, id), lo, hi - lo,
                                          bits, width, count);
        if (src != w->nrec.nref)
            memcpy(w->nrec.nref, src, n * sizeof *src);
    }
    free(tmp);
    free(count);
    return ok;
}

int db_wr_put_nodes(db_writer *w, db_error *err)
{
    bool sorted = true;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < w->nrec.nnref; i++) {
        uint32_t id = w->nrec.nref[i].id;
        sorted = sorted && (i == 0 || w->nrec.nref[i - 1].id < id);
        lo = id < lo ? id : lo;
        hi = id > hi ? id : hi;
    }
    if (!sorted && !place_nodes(w, lo, hi) && !radix_nodes(w, lo, hi))
        qsort(w->nrec.nref, w->nrec.nnref, sizeof *w->nrec.nref, cmp_nref);
    /* A key whose id is above that of the key appended just before is
     * past the table's last (the same trace, big-endian ids): appended
     * without db_wr_append_flag's compare and call to memcpy, as it would
     * answer. */
    unsigned flags = 0;
    for (size_t i = 0; i < w->nrec.nnref; i++) {
        unsigned char k[8];
        db_put_be32(k, w->info.id);
        db_put_be32(k + 4, w->nrec.nref[i].id);
        if (flags == MDB_APPEND && w->nrec.nref[i].id > w->nrec.nref[i - 1].id)
            memcpy(w->tail.last[DBI_NODES], k, 8); /* last_len[DBI_NODES] is 8 */
        else
            flags = db_wr_append_flag(w, DBI_NODES, k, 8);
        if (db_wr_put_as(w, DBI_NODES, k, 8, w->nrec.nodes + w->nrec.nref[i].off, w->nrec.nref[i].len, flags, err))
            return -1;
    }
    w->nrec.nnref = w->nrec.nodes_len = 0;
    return 0;
}

__attribute__((noinline)) int db_writer_node_back(db_writer *w, const db_node *n, uint32_t thread_key, db_error *err)
{
    /* the first room is what a batch's records may take (pages are
     * mapped as they are written), so that realloc does not copy them
     * again and again as it doubles from 64 KB */
    if (w->nrec.nodes_len + DB_NODE_REC_MAX > w->nrec.nodes_cap) {
        size_t c = w->nrec.nodes_cap ? w->nrec.nodes_cap * 2 : DB_NODES_MAX + 2 * DB_NODE_REC_MAX;
        void *p = realloc(w->nrec.nodes, c);
        if (!p)
            return db_fail_oom(err);
        w->nrec.nodes = p;
        w->nrec.nodes_cap = c;
    }
    if (w->nrec.nnref == w->nrec.nref_cap) {
        size_t c = w->nrec.nref_cap ? w->nrec.nref_cap * 2 : 4096;
        void *p = realloc(w->nrec.nref, c * sizeof *w->nrec.nref);
        if (!p)
            return db_fail_oom(err);
        w->nrec.nref = p;
        w->nrec.nref_cap = c;
    }
    /* the thread's own timeline: not the interrupts that landed on it */
    bool isolated = db_node_kind_isolated(n->kind);
    if (!isolated) { /* chunks of (begin, id), as the thread index's */
        if (!w->ix.nthr && !(w->ix.nthr = db_thrindex_new(4, false)))
            return db_fail_oom(err);
        int rc = db_thrindex_add(w->ix.nthr, w->info.id, n->tid, n->begin, n->id, db_wr_nthr_put, w);
        if (rc)
            return db_wr_thr_fail(w, rc, err);
    }
    if ((!w->ix.top && !(w->ix.top = db_nodetop_new())) || db_nodetop_add(w->ix.top, n, thread_key))
        return db_fail_oom(err);
    size_t len = db_node_encode(n, w->nrec.nodes + w->nrec.nodes_len);
    w->nrec.nref[w->nrec.nnref++] = (struct nref){n->id, (uint32_t)w->nrec.nodes_len, (uint32_t)len};
    w->nrec.nodes_len += len;
    w->info.nodes++;
    w->batch.ops++;
    return w->nrec.nodes_len > DB_NODES_MAX ? db_wr_put_nodes(w, err) : 0;
}
