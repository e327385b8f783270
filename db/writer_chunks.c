/* db/writer_chunks.c -- the chunked indexes: by thread (ev_thread), a
 * thread's nodes (node_thread), by object (ev_port, ev_block, ev_timer),
 * signatures (sigs), each a run of chunks of deltas per key (thrindex.c,
 * sigindex.c); each thread key's top lists (nodetop.c); and the
 * dictionary of normal forms (normbuf.c).  Their puts are chunks, each
 * after the one before of its key, counted for the batch as such
 * (count_chunk), some held for the batch's end (chunkq.c,
 * db_wr_drain_chunks); the object indexes and the dictionary write when
 * they hold too much, at a safe point (db_wr_flush_due), where a batch
 * may end between their puts. */
#include <errno.h>

#include "writer_int.h"

/* A chunk (up to a kilobyte: thrindex.c, sigindex.c, nodetop.c) goes in
 * after the chunk before it of the same thread or object: a batch's
 * chunks of one key land on the page at the end of that key's run, and
 * fill it.  Counted as a page each, the chunks made an ordinary batch
 * guess far more pages than its commit wrote, while the batches of
 * sorted runs guessed right: the largest batch, and memory, grew with the
 * trace.  So the first chunk of a key in a batch counts a page, and every
 * chunk twice its bytes (the pages it fills split half full), as a sorted
 * run's puts do; a flush of every open chunk (a commit's, or when they
 * hold too much) is then a page a key, as it should be (counted a quarter
 * page each, such a flush wrote far more than guessed;
 * docs/PERFORMANCE.md).
 *
 * The key of a chunk without its last part (time and id, or first node)
 * names the run it goes to (chunk_run). */
static size_t chunk_run(int dbi, size_t klen)
{
    if (dbi == DBI_NODETOP)
        return klen; /* trace, thread key, field: one value each */
    if (dbi == DBI_SIGS)
        return klen > 4 ? klen - 4 : klen; /* thread key, trace | first node */
    return klen > 16 ? klen - 16 : klen;   /* trace, tid or object | time, id */
}

/* The run's name for the batch's maps (count_chunk's, chunkq.c's): the
 * table mixed in first, then the key part's words of 8 bytes (a thread
 * chunk's and a signature chunk's are one: trace and thread; no two of
 * one table then share a name), then its bytes past them; a word at a
 * time, not FNV-1a's byte at a time.  The words big-endian, so that the
 * thread is in their low bits: read as they lie, a thread's low bits went
 * to the high ones, and most names shared their slot in the map the runs
 * had then, whose slot came from a key's low bits (base_map's home takes
 * every bit, but the words stay as they are: the names need no change). */
static uint64_t run_hash(int dbi, const unsigned char *k, size_t klen)
{
    const uint64_t mul = 0x100000001b3ull;
    uint64_t h = (0xcbf29ce484222325ull ^ (uint64_t)dbi) * mul;
    size_t i = 0, n = chunk_run(dbi, klen);
    for (; i + 8 <= n; i += 8)
        h = (h ^ db_get_be64(k + i)) * mul;
    for (; i < n; i++)
        h = (h ^ k[i]) * mul;
    return h;
}

/* fresh: the chunk is its run's first in the batch (h: run_hash's);
 * NULL: asked of the writer's map of the runs of chunks put as they come
 * (those waiting for the batch's end are known to their queue, which
 * says: chunk_put) */
static inline __attribute__((always_inline)) void count_chunk(db_writer *w, uint64_t h, const bool *fresh,
                                                              size_t bytes)
{
    if (w->batch.touch_w < 1024) { /* a sorted run (flush_objects): the object indexes', which never wait */
        db_wr_count_put(w, 0, bytes);
        return;
    }
    uint32_t seen;
    if (fresh ? *fresh : !base_map_get(&w->batch.runs, h, &seen)) {
        w->batch.touched += 1024;
        if (!fresh)
            (void)base_map_put(&w->batch.runs, h, 0); /* out of memory: the next counts a page again */
    }
    w->batch.appended += 2 * (bytes + 10);
}

/* A batch's chunks of the thread, node-thread and signature indexes wait
 * for its end (chunkq.c, db_wr_drain_chunks), counted now as their puts were
 * (the batches end where they did), so that they go into LMDB in key
 * order: appends, less of LMDB's work, and tables of fewer pages. */
#define REBUILD_CHUNKS_MAX (1u << 20)
static bool chunk_waits(const db_writer *w, int dbi)
{
    /* A rebuild holds the signature chunks too (up to
     * REBUILD_CHUNKS_MAX): put as they came, a thread key's chunks land
     * on pages all over the file, and `match` and `diagnose` read all of
     * one key's.  It puts the thread indexes' chunks as they come: held,
     * they raise its peak memory (docs/PERFORMANCE.md). */
    return w->batched && (dbi == DBI_SIGS || (!w->rebuild && (dbi == DBI_EV_THREAD || dbi == DBI_NODE_THREAD)));
}

/* The batch's chunks, run by run (chunkq.c): a chunk past the table's
 * last key is appended, the others put through the cursor, which is left
 * next to where the one before went. */
struct chunk_drain {
    db_writer *w;
    int dbi;       /* the table of the chunks so far, or -1 */
    MDB_val last;  /* its last key (none: mv_data NULL) */
};

static int chunk_out(void *ctx, int dbi, MDB_val *key, MDB_val *val)
{
    struct chunk_drain *d = ctx;
    db_writer *w = d->w;
    int rc;
    if (dbi != d->dbi) {
        if (!w->tail.cur[dbi] && (rc = mdb_cursor_open(w->txn, w->a->dbi[dbi], &w->tail.cur[dbi])) != 0)
            return rc;
        MDB_val v;
        rc = mdb_cursor_get(w->tail.cur[dbi], &d->last, &v, MDB_LAST);
        if (rc && rc != MDB_NOTFOUND)
            return rc;
        if (rc)
            d->last.mv_data = NULL;
        d->dbi = dbi;
        db_wr_tail_lost(w, dbi);
    }
    if (!d->last.mv_data || db_key_order(key, &d->last) > 0) {
        d->last = *key; /* in the chunks' memory, to the drain's end */
        return db_wr_tail_put(w, dbi, key, val);
    }
    db_wr_trim_every(w, val->mv_size);
    db_wr_tail_lost(w, dbi);
    return mdb_cursor_put(w->tail.cur[dbi], key, val, 0);
}

int db_wr_drain_chunks(db_writer *w, db_error *err)
{
    if (!db_chunkq_count(w->ix.chunks))
        return 0;
    struct chunk_drain d = {w, -1, {0, NULL}};
    int rc = db_chunkq_drain(w->ix.chunks, chunk_out, &d);
    if (rc == -1)
        return db_fail_oom(err);
    return rc ? db_lmdb_fail(err, rc, "write") : 0;
}

static int chunk_put(db_writer *w, int dbi, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    uint64_t h = run_hash(dbi, k, klen);
    w->batch.ops++;
    if (chunk_waits(w, dbi)) {
        bool fresh;
        if ((!w->ix.chunks && !(w->ix.chunks = db_chunkq_new())) ||
            db_chunkq_add(w->ix.chunks, h, dbi, k, klen, chunk_run(dbi, klen), v, vlen, &fresh)) {
            w->ix.thr_rc = ENOMEM;
            return -1;
        }
        count_chunk(w, h, &fresh, klen + vlen);
        if (w->rebuild && db_chunkq_bytes(w->ix.chunks) > REBUILD_CHUNKS_MAX) {
            struct chunk_drain d = {w, -1, {0, NULL}};
            int rc = db_chunkq_drain(w->ix.chunks, chunk_out, &d);
            if (rc) {
                w->ix.thr_rc = rc == -1 ? ENOMEM : rc;
                return -1;
            }
        }
        return db_wr_between_puts(w);
    }
    count_chunk(w, h, NULL, klen + vlen);
    db_wr_trim_every(w, vlen);
    MDB_val key = {klen, (void *)k}, val = {vlen, (void *)v};
    /* through the table's cursor, not mdb_put: a cursor left on the leaf
     * the key goes into skips the search from the root (the chunks of a
     * thread follow each other), and mdb_put sets one up every call */
    db_wr_tail_lost(w, dbi);
    w->ix.thr_rc = w->tail.cur[dbi] ? 0 : mdb_cursor_open(w->txn, w->a->dbi[dbi], &w->tail.cur[dbi]);
    if (!w->ix.thr_rc)
        w->ix.thr_rc = mdb_cursor_put(w->tail.cur[dbi], &key, &val, 0);
    if (w->ix.thr_rc)
        return -1;
    /* The commit writes every open chunk of every index, each a put into
     * the middle of its table: batches end between them, or that last
     * transaction's copies of the pages it changes -- which LMDB keeps to
     * the end -- grow with the tables (docs/PERFORMANCE.md). */
    return db_wr_between_puts(w);
}

int db_wr_thr_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    return chunk_put(ctx, DBI_EV_THREAD, k, klen, v, vlen);
}

int db_wr_nthr_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    return chunk_put(ctx, DBI_NODE_THREAD, k, klen, v, vlen);
}

static int port_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    return chunk_put(ctx, DBI_EV_PORT, k, klen, v, vlen);
}

static int block_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    return chunk_put(ctx, DBI_EV_BLOCK, k, klen, v, vlen);
}

static int timer_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    return chunk_put(ctx, DBI_EV_TIMER, k, klen, v, vlen);
}

static db_thrindex_put const oix_put[OIX__COUNT] = {port_put, block_put, timer_put};
static const int oix_dbi[OIX__COUNT] = {DBI_EV_PORT, DBI_EV_BLOCK, DBI_EV_TIMER};

static int sig_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    return chunk_put(ctx, DBI_SIGS, k, klen, v, vlen);
}

static int top_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    return chunk_put(ctx, DBI_NODETOP, k, klen, v, vlen);
}

/* An object index key: trace, object, ts, event id. */
int db_wr_put_obj(db_writer *w, int ix, const db_evix *x, db_error *err)
{
    if (!w->ix.oix[ix] && !(w->ix.oix[ix] = db_thrindex_new(8, true)))
        return db_fail_oom(err);
    int rc = db_thrindex_add(w->ix.oix[ix], w->info.id, x->obj, x->ts, x->id, oix_put[ix], w);
    if (rc == 1 && !w->batched) /* one transaction: no commit between */
        rc = db_thrindex_flush(w->ix.oix[ix], w->info.id, oix_put[ix], w);
    w->ix.objects_due |= rc == 1; /* the next safe point writes them (flush_objects) */
    return rc < 0 ? db_wr_thr_fail(w, rc, err) : 0;
}

/* The object indexes' chunks, written when they hold too much (thrindex.c):
 * tens of thousands of puts all over ev_block in a big trace, each
 * dirtying a page of its own.  Done inside one batch, LMDB's dirty pages
 * for them grew with the table (docs/PERFORMANCE.md); here, between two
 * events, the batch may end between two puts (chunk_put), as the final
 * commit's does. */
static int flush_objects(db_writer *w, db_error *err)
{
    int rc = 0;
    bool was = w->ix.chunk_commits;
    w->ix.chunk_commits = true;
    w->ix.objects_due = false;
    for (int i = 0; i < OIX__COUNT && !rc; i++)
        if (w->ix.oix[i] && db_thrindex_due(w->ix.oix[i])) {
            db_wr_sorted_run(w, oix_dbi[i], db_thrindex_open(w->ix.oix[i]));
            if ((rc = db_thrindex_flush(w->ix.oix[i], w->info.id, oix_put[i], w)) != 0)
                rc = db_wr_thr_fail(w, rc, err);
        }
    w->batch.touch_w = 1024;
    w->ix.chunk_commits = was;
    return rc;
}

/* A normal form into the dictionary: the first text of a hash stays.
 * The batch may end between two (chunk_commits), as between chunks. */
static int norm_put(void *ctx, uint32_t hash, const char *text, size_t len)
{
    db_writer *w = ctx;
    unsigned char k[4];
    db_put_be32(k, hash);
    MDB_val key = {4, k}, val = {len, (void *)text};
    db_wr_trim_every(w, len);
    db_wr_tail_lost(w, DBI_NORMS);
    w->ix.thr_rc = mdb_put(w->txn, w->a->dbi[DBI_NORMS], &key, &val, MDB_NOOVERWRITE);
    if (w->ix.thr_rc == MDB_KEYEXIST) /* a form already there changes no page */
        return w->ix.thr_rc = 0;
    if (w->ix.thr_rc)
        return -1;
    w->batch.ops++;
    db_wr_count_put(w, 0, 4 + len);
    return db_wr_between_puts(w);
}

static int flush_norms(db_writer *w, db_error *err)
{
    w->ix.norms_due = false;
    if (!db_normbuf_count(w->ix.norms))
        return 0;
    bool was = w->ix.chunk_commits;
    w->ix.chunk_commits = true;
    db_wr_sorted_run(w, DBI_NORMS, db_normbuf_count(w->ix.norms));
    int rc = db_normbuf_flush(w->ix.norms, norm_put, w);
    w->batch.touch_w = 1024;
    w->ix.chunk_commits = was;
    return rc ? db_wr_thr_fail(w, rc, err) : 0;
}

/* The object indexes' or the dictionary's writes a safe point found due. */
__attribute__((noinline)) int db_wr_flush_due(db_writer *w, db_error *err)
{
    if (w->ix.objects_due && flush_objects(w, err))
        return -1;
    return w->ix.norms_due ? flush_norms(w, err) : 0;
}

/* The final commit's writes of the indexes: every open chunk of the
 * thread, node-thread and object indexes, the signature index's, the top
 * lists, then the dictionary's waiting forms; the batch may end between
 * two of their puts (ix.chunk_commits, set by the commit). */
int db_wr_flush_indexes(db_writer *w, db_error *err)
{
    int ret = 0;
    if (w->ix.thr && (ret = db_thrindex_flush(w->ix.thr, w->info.id, db_wr_thr_put, w)) != 0)
        ret = db_wr_thr_fail(w, ret, err);
    if (!ret && w->ix.nthr && (ret = db_thrindex_flush(w->ix.nthr, w->info.id, db_wr_nthr_put, w)) != 0)
        ret = db_wr_thr_fail(w, ret, err);
    for (int i = 0; i < OIX__COUNT && !ret; i++)
        if (w->ix.oix[i]) {
            db_wr_sorted_run(w, oix_dbi[i], db_thrindex_open(w->ix.oix[i]));
            if ((ret = db_thrindex_flush(w->ix.oix[i], w->info.id, oix_put[i], w)) != 0)
                ret = db_wr_thr_fail(w, ret, err);
            w->batch.touch_w = 1024;
        }
    if (!ret && w->ix.sigs && (ret = db_sigindex_flush(w->ix.sigs, w->info.id, sig_put, w)) != 0)
        ret = db_wr_thr_fail(w, ret, err);
    if (!ret && w->ix.top && (ret = db_nodetop_flush(w->ix.top, w->info.id, top_put, w)) != 0)
        ret = db_wr_thr_fail(w, ret, err);
    return ret ? ret : flush_norms(w, err);
}

__attribute__((noinline)) int db_writer_signature_back(db_writer *w, const db_sig *sig, db_error *err)
{
    /* chunks of a committed trace are not reopened: a trace's signatures
     * are written with its graph (ingest, rebuild's new copy) */
    if (w->existing)
        return db_fail(err, -1, "signatures are written with their trace's graph");
    if (!w->ix.sigs && !(w->ix.sigs = db_sigindex_new()))
        return db_fail_oom(err);
    int rc = db_sigindex_add(w->ix.sigs, w->info.id, sig, sig_put, w);
    return rc ? db_wr_thr_fail(w, rc, err) : 0;
}

int db_writer_norm_back(db_writer *w, uint32_t hash, const char *text, db_error *err)
{
    /* the dictionary is one table for every trace: a form another trace
     * (or an earlier flush) brought is there already, and its put is
     * refused (norm_put).  Not looked up here: a lookup per form, at a
     * random place of the table, was most of the writer's page faults
     * (docs/PERFORMANCE.md) and kept mapping pages between two trims;
     * the sorted flush visits the table in order instead. */
    if (!w->ix.norms && !(w->ix.norms = db_normbuf_new()))
        return db_fail_oom(err);
    int rc = db_normbuf_add(w->ix.norms, hash, text, strnlen(text, 255));
    if (rc < 0)
        return db_fail_oom(err);
    if (rc && !w->batched) /* one transaction: no commit between */
        return flush_norms(w, err);
    w->ix.norms_due |= rc == 1; /* the next safe point writes them (flush_norms) */
    return 0;
}
