/* db/writer_keys.c -- deferred key sorts.  Keys of the edge blocks and
 * of the time index of a trace out of time order arrive in event order,
 * not key order: they wait for the end of the batch (or DB_BATCH_KEYS of
 * them) and go in sorted (keysort.c), filling pages as appends do.
 * Edges come here whole: by target and by source, neither in key order
 * as they come (a wakeup joins an old node to a new one). */
#include "writer_int.h"

static int later_added(db_writer *w, db_error *err);

int db_wr_put_later(db_writer *w, int dbi, const unsigned char *k, size_t klen, db_error *err)
{
    if (klen > DB_KEYSORT_MAX)
        return db_fail(err, -1, "index key too long");
    if ((!w->keys.ks && !(w->keys.ks = db_keysort_new())) || db_keysort_add(w->keys.ks, dbi, k, klen) < 0)
        return db_fail_oom(err);
    return later_added(w, err);
}

/* An edge of edges_in (side 0) or edges_out (1), as db_wr_put_later's keys. */
static int edge_later(db_writer *w, int side, const db_edge_rec *r, db_error *err)
{
    if ((!w->keys.ks && !(w->keys.ks = db_keysort_new())) || db_keysort_add_edge(w->keys.ks, side, r) < 0)
        return db_fail_oom(err);
    return later_added(w, err);
}

static int later_added(db_writer *w, db_error *err)
{
    w->batch.ops++;
    w->keys.nkeys++;
    /* a writer of one transaction (rules, rebuild) puts them in as it
     * goes, a batch's worth at a time, so its memory stays bounded too */
    if (!w->batched && w->keys.nkeys >= DB_BATCH_KEYS)
        return db_wr_drain_later(w, err);
    return 0;
}

/* ---- edges, in blocks of 16 nodes (codec.c) ----
 * A block's edges come out of the batch's sort together (keysort.c) and
 * go in as one entry.  A block that an earlier batch (or an older drain
 * of this one) already wrote is read and merged: a wakeup can join a node
 * to one of an earlier batch. */
/* appends r[0..n) after the stored recs w->keys.emerge[0..stored) (both
 * sorted) into w->keys.emerge, merged, once each */
static size_t merge_recs(db_writer *w, size_t stored, const db_edge_rec *r, size_t n)
{
    db_edge_rec *m = w->keys.emerge;
    /* the merge is written from the back */
    size_t i = stored, j = n, out = stored + n;
    while (i || j) {
        if (!j || (i && db_edge_rec_cmp(&m[i - 1], &r[j - 1]) > 0))
            m[--out] = m[--i];
        else
            m[--out] = r[--j];
    }
    size_t k = 0;
    for (size_t x = 0; x < stored + n; x++)
        if (!k || db_edge_rec_cmp(&m[k - 1], &m[x]))
            m[k++] = m[x];
    return k;
}

/* One block's recs, sorted, each once (db_keysort_drain's edges callback). */
static int edges_put(void *ctx, int side, const db_edge_rec *recs, size_t n)
{
    db_writer *w = ctx;
    int dbi = side ? DBI_EDGES_OUT : DBI_EDGES_IN;
    unsigned char k[8];
    db_put_be32(k, w->info.id);
    db_put_be32(k + 4, recs[0].a >> DB_EDGE_BLOCK_SHIFT);
    if (!db_wr_past_last(w, dbi, k, sizeof k)) {
        MDB_val key = {sizeof k, k}, v;
        int rc = mdb_get(w->txn, w->a->dbi[dbi], &key, &v);
        if (rc && rc != MDB_NOTFOUND)
            return rc;
        size_t stored = 0;
        if (!rc) {
            db_edgeblk_it it;
            db_edge_rec r;
            int got;
            db_edgeblk_begin(&it, &key, &v);
            while ((got = db_edgeblk_next(&it, &r)) == 1) {
                if (!base_grow((void **)&w->keys.emerge, &w->keys.emerge_cap, stored + 1 + n, sizeof r))
                    return -1;
                w->keys.emerge[stored++] = r;
            }
            if (got < 0)
                return MDB_CORRUPTED;
        }
        if (!base_grow((void **)&w->keys.emerge, &w->keys.emerge_cap, stored + n, sizeof *recs))
            return -1;
        n = merge_recs(w, stored, recs, n);
        recs = w->keys.emerge;
    }
    if (!base_grow((void **)&w->keys.ebuf, &w->keys.ebuf_cap, n * DB_EDGE_REC_MAX, 1))
        return -1;
    MDB_val key = {sizeof k, k}, val = {db_edgeblk_encode(recs, n, w->keys.ebuf), w->keys.ebuf};
    unsigned flags = db_wr_append_flag(w, dbi, k, sizeof k);
    db_wr_count_put(w, flags, sizeof k + val.mv_size);
    if (flags != MDB_APPEND) {
        db_wr_trim_every(w, val.mv_size);
        db_wr_tail_lost(w, dbi);
        return mdb_put(w->txn, w->a->dbi[dbi], &key, &val, 0);
    }
    return db_wr_tail_put(w, dbi, &key, &val);
}

static int put_sorted(void *ctx, int dbi, const unsigned char *k, size_t len)
{
    db_writer *w = ctx;
    int rc = 0;
    if (!w->tail.cur[dbi] && (rc = mdb_cursor_open(w->txn, w->a->dbi[dbi], &w->tail.cur[dbi])) != 0)
        return rc;
    MDB_val key = {len, (void *)k}, val = {0, ""};
    /* the first batch of a new trace appends every key */
    unsigned flags = db_wr_append_flag(w, dbi, k, len);
    db_wr_count_put(w, flags, len);
    if (flags == MDB_APPEND)
        return db_wr_tail_put(w, dbi, &key, &val);
    db_wr_trim_every(w, len);
    db_wr_tail_lost(w, dbi);
    return mdb_cursor_put(w->tail.cur[dbi], &key, &val, flags);
}

int db_wr_drain_later(db_writer *w, db_error *err)
{
    if (!w->keys.nkeys)
        return 0;
    int rc = db_keysort_drain(w->keys.ks, put_sorted, edges_put, w);
    w->keys.nkeys = 0; /* the drain empties the sort, failed or not */
    if (rc == -1)
        return db_fail_oom(err);
    return rc ? db_lmdb_fail(err, rc, "write") : 0;
}

static __attribute__((noinline)) int edge_back(db_writer *w, const db_edge *e, db_error *err);

/* An edge with no commit due and room in both of the sort's tables is
 * added here, where nothing is called, so no register saved (as an
 * event is: db_writer_event_back); anything else goes to edge_back
 * whole. */
int db_writer_edge_back(db_writer *w, const db_edge *e, db_error *err)
{
    if (w->ix.objects_due || w->ix.norms_due || db_wr_batch_near(w) || !w->keys.ks ||
        !(w->batched || w->keys.nkeys + 2 < DB_BATCH_KEYS))
        return edge_back(w, e, err);
    db_edge_rec r = {e->to, e->from, e->kind, e->from_event, e->to_event};
    if (!db_keysort_add_edge_pair_fast(w->keys.ks, &r))
        return edge_back(w, e, err);
    w->batch.ops += 2;
    w->keys.nkeys += 2;
    w->info.edges++;
    return 0;
}

static int edge_back(db_writer *w, const db_edge *e, db_error *err)
{
    /* a batch ends between two edges too: a node that ends can bring
     * hundreds (the graph's end, a broadcast), and they wait in memory */
    if (db_wr_maybe_flush(w, err))
        return -1;
    /* by target and by source: neither in key order as edges come (a
     * wakeup joins an old node to a new one), so they go in sorted at the
     * end of the batch, filling pages as appends do */
    db_edge_rec r = {e->to, e->from, e->kind, e->from_event, e->to_event};
    /* both sides in one call, not edge_later's two, counted together,
     * unless a writer of one transaction would drain between them
     * (later_added) */
    if (w->batched || w->keys.nkeys + 2 < DB_BATCH_KEYS) {
        if ((!w->keys.ks && !(w->keys.ks = db_keysort_new())) || db_keysort_add_edge_pair(w->keys.ks, &r) < 0)
            return db_fail_oom(err);
        w->batch.ops += 2;
        w->keys.nkeys += 2;
    } else {
        if (edge_later(w, 0, &r, err))
            return -1;
        r.a = e->from;
        r.b = e->to;
        if (edge_later(w, 1, &r, err))
            return -1;
    }
    w->info.edges++;
    return 0;
}
