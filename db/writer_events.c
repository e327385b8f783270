/* db/writer_events.c -- event blocks and patches: the events table's
 * blocks (made by the front, evfront.c: the queue's on a threaded
 * writer, the writer's own, ev.front, on an unthreaded one) put under
 * their first event's id; each event's index entries (its thread's
 * chunk, its object's, the time index of a trace out of time order);
 * the nodes a graph pass gives stored events, set into their blocks
 * (db_wr_apply_patches); and the scans of a trace's events, in id or time
 * order, on which a graph pass runs. */
#include "writer_int.h"

/* Nodes set by a graph pass wait in memory at most this many, then go
 * into their blocks (a block rewritten once for all of its events when
 * they come in id order). */
#define DB_PATCH_MAX (1u << 20)

/* Writes the block being re-encoded (write_patched), if it holds events. */
static int put_block(db_writer *w, db_error *err)
{
    if (!w->ev.enc || !db_evblock_enc_count(w->ev.enc))
        return 0;
    db_evblk blk = {.first = db_evblock_enc_first(w->ev.enc)};
    blk.bytes = db_evblock_enc_bytes(w->ev.enc, &blk.len);
    int rc = db_writer_put_block(w, &blk, err);
    db_evblock_enc_reset(w->ev.enc);
    return rc;
}

/* Appends an event to the block being re-encoded (a full one is written). */
static int add_to_block(db_writer *w, const db_event *ev, db_error *err)
{
    if (!w->ev.enc && !(w->ev.enc = db_evblock_enc_new()))
        return db_fail_oom(err);
    int rc = db_evblock_enc_add(w->ev.enc, ev);
    if (rc == 1) {
        if (put_block(w, err))
            return -1;
        rc = db_evblock_enc_add(w->ev.enc, ev);
    }
    return rc ? db_fail_oom(err) : 0;
}

/* Writes back the block in patchblk with its new nodes (re-encoded: it
 * may come out as two blocks). */
static int write_patched(db_writer *w, db_error *err)
{
    db_evblock *b = &w->ev.patchblk;
    if (!b->n)
        return 0;
    size_t n = b->n;
    b->n = 0; /* what the archive has from now on */
    for (size_t i = 0; i < n; i++)
        if (add_to_block(w, &b->ev[i], err))
            return -1;
    return put_block(w, err);
}

static int cmp_patch(const void *a, const void *b)
{
    uint64_t x = ((const struct patch *)a)->id, y = ((const struct patch *)b)->id;
    return (x > y) - (x < y);
}

/* Puts the nodes db_writer_set_event_node collected into their blocks. */
int db_wr_apply_patches(db_writer *w, db_error *err)
{
    if (!w->ev.npatch)
        return 0;
    if (w->ev.patch_unsorted)
        qsort(w->ev.patch, w->ev.npatch, sizeof *w->ev.patch, cmp_patch);
    for (size_t i = 0; i < w->ev.npatch; i++) {
        uint64_t id = w->ev.patch[i].id;
        if (!db_evblock_get(&w->ev.patchblk, id)) {
            if (write_patched(w, err))
                return -1;
            db_wr_trim_every(w, DB_EVBLOCK_BYTES);
            int got = db_evblock_load(w->txn, w->a->dbi[DBI_EVENTS], w->info.id, id, &w->ev.patchblk, err);
            if (got <= 0)
                return got < 0 ? -1 : db_fail(err, -1, "event %llu is missing", (unsigned long long)id);
        }
        ((db_event *)db_evblock_get(&w->ev.patchblk, id))->node = w->ev.patch[i].node;
    }
    w->ev.npatch = 0;
    w->ev.patch_unsorted = false;
    return write_patched(w, err);
}

/* The node is kept in memory and goes into the event's block later
 * (db_wr_apply_patches): rewriting a block per event would cost hundreds of
 * events' encoding each. */
int db_writer_set_event_node_back(db_writer *w, uint64_t event_id, uint32_t node, db_error *err)
{
    if (w->ev.npatch == w->ev.patch_cap) {
        size_t c = w->ev.patch_cap ? w->ev.patch_cap * 2 : 4096;
        void *p = realloc(w->ev.patch, c * sizeof *w->ev.patch);
        if (!p)
            return db_fail_oom(err);
        w->ev.patch = p;
        w->ev.patch_cap = c;
    }
    if (w->ev.npatch && event_id < w->ev.patch[w->ev.npatch - 1].id)
        w->ev.patch_unsorted = true;
    w->ev.patch[w->ev.npatch++] = (struct patch){event_id, node};
    w->batch.ops++;
    return w->ev.npatch >= DB_PATCH_MAX ? db_wr_apply_patches(w, err) : 0;
}

static int time_key(db_writer *w, uint64_t ts, uint64_t id, db_error *err)
{
    unsigned char k[20];
    db_put_be32(k, w->info.id);
    db_put_be64(k + 4, ts);
    db_put_be64(k + 12, id);
    return db_wr_put_later(w, DBI_EV_TIME, k, 20, err);
}

/* The trace turned out not to be in time order: index the events stored
 * so far (ids 1..upto, read back block by block). */
static int time_index_from_start(db_writer *w, uint64_t upto, db_error *err)
{
    w->info.unordered = 1;
    uint64_t next = 1;
    while (next <= upto) {
        db_wr_trim_every(w, DB_EVBLOCK_BYTES); /* a graph pass reads every block */
        int got = db_evblock_load(w->txn, w->a->dbi[DBI_EVENTS], w->info.id, next, &w->ev.scanblk, err);
        if (got <= 0)
            return got < 0 ? -1 : db_fail(err, -1, "event %llu is missing", (unsigned long long)next);
        const db_event *ev;
        for (; next <= upto && (ev = db_evblock_get(&w->ev.scanblk, next)) != NULL; next++)
            if (time_key(w, ev->ts, next, err))
                return -1;
        if (next <= upto && db_wr_batch_full(w) && db_wr_flush(w, err))
            return -1;
    }
    return 0;
}

/* A block of events, into the events table under its first event's id. */
int db_writer_put_block(db_writer *w, const db_evblk *blk, db_error *err)
{
    unsigned char k[12];
    db_put_be32(k, w->info.id);
    db_put_be64(k + 4, blk->first);
    return db_wr_put(w, DBI_EVENTS, k, sizeof k, blk->bytes, blk->len, err);
}

/* The unthreaded front's block being filled, put (a threaded writer's
 * front queues its own: db_wq_hand_block). */
int db_wr_hand_block(db_writer *w, db_error *err)
{
    db_evblk blk;
    return db_evfront_take(&w->ev.front, &blk) ? db_writer_put_block(w, &blk, err) : 0;
}

__attribute__((noinline)) int db_writer_event_here(db_writer *w, db_event *ev, db_error *err)
{
    db_evblk blk;
    int handed = db_evfront_add(&w->ev.front, ev, &blk);
    if (handed < 0)
        return db_fail_oom(err);
    db_evix x;
    db_evix_of(&x, ev);
    return db_writer_event_back(w, &x, handed ? &blk : NULL, err);
}

/* The object index (OIX_*) an event of this type goes into, or -1. */
static inline int obj_index(unsigned type)
{
    switch (type) {
    case DB_EV_MACH_MSG: return OIX_PORT;
    case DB_EV_DISPATCH_ENQUEUE:
    case DB_EV_DISPATCH_INVOKE:
    case DB_EV_RUNLOOP_SUBMIT:
    case DB_EV_RUNLOOP_INVOKE: return OIX_BLOCK;
    case DB_EV_TIMER_ARM:
    case DB_EV_TIMER_CANCEL:
    case DB_EV_TIMER_CALLOUT: return OIX_TIMER;
    default: return -1;
    }
}

static __attribute__((noinline)) int event_back(db_writer *w, const db_evix *x, const db_evblk *blk, db_error *err);

/* An event that only extends its thread's open chunk by a byte, with no
 * block, no commit due, in time order and of no object, is done here,
 * where nothing is called and so no register saved; anything else, or
 * what the chunk cannot take, goes to event_back whole, nothing of the
 * event done before (db_thrindex_add_fast changes nothing when it says
 * no).  What it saves is event_back's six registers saved and restored,
 * and the type's switch, for nearly every event. */
int db_writer_event_back(db_writer *w, const db_evix *x, const db_evblk *blk, db_error *err)
{
    if (blk || w->ix.objects_due || w->ix.norms_due || db_wr_batch_near(w) || w->info.unordered ||
        x->ts < w->ev.last_ts ||
        !w->ix.thr || obj_index(x->type) >= 0 || !db_thrindex_add_fast(w->ix.thr, x->tid, x->ts, x->id))
        return event_back(w, x, blk, err);
    w->info.events = x->id;
    w->batch.ops++;
    w->ev.last_ts = x->ts;
    if (x->ts < w->info.first_ts)
        w->info.first_ts = x->ts;
    if (x->ts > w->info.last_ts)
        w->info.last_ts = x->ts;
    return 0;
}

static int event_back(db_writer *w, const db_evix *x, const db_evblk *blk, db_error *err)
{
    if (db_wr_maybe_flush(w, err))
        return -1;
    w->info.events = x->id;
    w->batch.ops++;
    if (blk && db_writer_put_block(w, blk, err))
        return -1;
    /* while ids follow time (ftrace always does), the events table is its
     * own time index; the first event out of order starts a real one
     * (the front handed over the events before it) */
    if (!w->info.unordered && x->ts < w->ev.last_ts && time_index_from_start(w, x->id - 1, err))
        return -1;
    w->ev.last_ts = x->ts;
    if (w->info.unordered && time_key(w, x->ts, x->id, err))
        return -1;
    if (!w->ix.thr && !(w->ix.thr = db_thrindex_new(4, false)))
        return db_fail_oom(err);
    int rc = db_thrindex_add(w->ix.thr, w->info.id, x->tid, x->ts, x->id, db_wr_thr_put, w);
    if (rc)
        return db_wr_thr_fail(w, rc, err);
    int obj_ix = obj_index(x->type);
    if (obj_ix >= 0 && db_wr_put_obj(w, obj_ix, x, err))
        return -1;

    if (x->ts < w->info.first_ts)
        w->info.first_ts = x->ts;
    if (x->ts > w->info.last_ts)
        w->info.last_ts = x->ts;
    return 0;
}

struct scan_ctx {
    db_writer *w;
    db_event_cb cb;
    void *ctx;
    db_error *err;
};

/* One event of the time index, by id, to the callback. */
static int scan_one(void *p, const MDB_val *key, const MDB_val *val)
{
    (void)val;
    struct scan_ctx *s = p;
    db_writer *w = s->w;
    uint64_t id = db_get_be64((const unsigned char *)key->mv_data + key->mv_size - 8);
    if (!db_evblock_get(&w->ev.scanblk, id)) /* a block read, not the one in hand */
        db_wr_trim_every(w, DB_EVBLOCK_BYTES);
    int got = db_evblock_load(w->txn, w->a->dbi[DBI_EVENTS], w->info.id, id, &w->ev.scanblk, s->err);
    if (got <= 0)
        return got < 0 ? -1 : db_fail(s->err, -1, "event %llu is missing", (unsigned long long)id);
    db_event e = *db_evblock_get(&w->ev.scanblk, id);
    return s->cb(s->ctx, &e);
}

/* A trace in time order: its blocks in id order. */
static int scan_blocks(db_writer *w, uint32_t trace, db_event_cb cb, void *ctx, db_error *err)
{
    for (uint64_t next = 1;;) {
        db_wr_trim_every(w, DB_EVBLOCK_BYTES); /* a graph pass reads every block */
        int got = db_evblock_load(w->txn, w->a->dbi[DBI_EVENTS], trace, next, &w->ev.scanblk, err);
        if (got <= 0)
            return got;
        const db_event *ev;
        for (; (ev = db_evblock_get(&w->ev.scanblk, next)) != NULL; next++) {
            db_event e = *ev; /* the callback may not change the block's copy */
            int rc = cb(ctx, &e);
            if (rc)
                return rc;
        }
        if (w->batched && db_wr_batch_full(w) && db_wr_flush(w, err))
            return -1;
    }
}

int db_writer_scan_source_back(db_writer *w, db_event_cb cb, void *ctx, db_error *err)
{
    w->in_scan = true;
    int rc = scan_blocks(w, w->replaces.id, cb, ctx, err);
    w->in_scan = false;
    return rc;
}

/* Walks the events in time order.  In a batched writer it commits every
 * DB_BATCH_OPS puts (the callback's writes); the time index's walk then
 * seeks back to the key it stopped at: a cursor does not survive its
 * transaction. */
int db_writer_scan_time_back(db_writer *w, db_event_cb cb, void *ctx, db_error *err)
{
    if (db_wr_hand_block(w, err))
        return -1;
    if (db_wr_apply_patches(w, err) || db_wr_drain_later(w, err))
        return -1;
    w->in_scan = true;
    if (!w->info.unordered) {
        int rc = scan_blocks(w, w->info.id, cb, ctx, err);
        w->in_scan = false;
        return rc;
    }
    int table = DBI_EV_TIME;
    size_t full = 20;
    unsigned char key[20];
    size_t klen = 4;
    db_put_be32(key, w->info.id);
    struct scan_ctx s = {w, cb, ctx, err};
    int ret = 0;
    bool again = true, resumed = false;
    while (again && !ret) {
        again = false;
        MDB_cursor *c;
        int rc = mdb_cursor_open(w->txn, w->a->dbi[table], &c);
        if (rc) {
            ret = db_lmdb_fail(err, rc, "cursor");
            break;
        }
        MDB_val k = {klen, key}, v;
        rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
        if (resumed && rc == 0 && k.mv_size == klen && memcmp(k.mv_data, key, klen) == 0)
            rc = mdb_cursor_get(c, &k, &v, MDB_NEXT); /* done before the commit */
        for (; rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
            if (k.mv_size != full || memcmp(k.mv_data, key, 4) != 0)
                break;
            memcpy(key, k.mv_data, full);
            klen = full;
            if ((ret = scan_one(&s, &k, &v)) != 0)
                break;
            if (w->batched && db_wr_batch_full(w)) {
                again = resumed = true;
                break;
            }
        }
        mdb_cursor_close(c);
        if (!ret && rc && rc != MDB_NOTFOUND)
            ret = db_lmdb_fail(err, rc, "scan");
        if (!ret && again)
            ret = db_wr_flush(w, err);
    }
    w->in_scan = false;
    return ret;
}
