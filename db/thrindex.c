/* db/thrindex.c -- the chunked indexes: each thread's events (and nodes)
 * in time order, and each object's (port, block, timer address).
 *
 * A key per event (trace, tid, ts, id) cost a key and LMDB's overhead for
 * every event, and a sorted insert (docs/PERFORMANCE.md).  Here one key
 * starts a chunk of one thread's events and its value lists the ids of
 * the thread's next events as varint deltas (a thread's ids only grow:
 * every reader gives a thread's events in time order, and ids are given
 * in arrival order).  A chunk ends when its
 * value reaches DB_THR_CHUNK_BYTES, when time would go backwards (then the
 * next chunk starts at its own time, and order holds chunk by chunk), or
 * when the writer flushes the chunks (at commit, and when they hold more
 * than DB_THR_PENDING_MAX bytes in all, so memory stays bounded whatever the
 * number of threads).  Readers seek a time by the chunk keys and walk the
 * deltas.
 *
 * The object indexes are the same with a key of 8 bytes: a timer address
 * has many events, and a key per event made ev_timer and ev_port a good
 * part of the archive.  Objects come and go (a dispatch block is seen
 * three times), so the memory the chunks hold is counted too: past
 * DB_THR_HELD_MAX every chunk is written and, past THR_KEEP_MAX keys,
 * forgotten; memory is bounded by the keys between two flushes, not by
 * the trace.  DB_THR_HELD_MAX is 4 MB: with more, the block index's peak
 * grew with the trace and showed in the ingest's peak memory
 * (docs/PERFORMANCE.md); a flush is written between commits, so more of
 * them cost little.  Such a flush is tens of thousands of puts all over a
 * table: the writer defers the object indexes' to where it may commit
 * between them (writer_chunks.c, flush_objects). */
#include <stdlib.h>
#include <string.h>

#include "db_int.h"

/* DB_THR_CHUNK_BYTES, DB_THR_PENDING_MAX, DB_THR_HELD_MAX, the chunks and the
 * index itself are in db_int.h, for db_thrindex_add's common case */
#define THR_KEEP_MAX 4096u
/* What a key's chunk counts against DB_THR_HELD_MAX: its record and its
 * slot in the key map, as a number of its own, so that when chunks are
 * written -- and so the archive's bytes -- does not hang on the record's
 * layout in memory (the record is 72 bytes, the slot 24) */
#define THR_CHUNK_HELD 96u

typedef db_thrix_chunk chunk;

db_thrindex *db_thrindex_new(unsigned key_bytes, bool deferred)
{
    db_thrindex *t = calloc(1, sizeof(db_thrindex));
    if (t) {
        t->key_bytes = key_bytes == 8 ? 8 : 4;
        t->deferred = deferred;
    }
    return t;
}

bool db_thrindex_due(const db_thrindex *t)
{
    return t->pending > DB_THR_PENDING_MAX || t->held > DB_THR_HELD_MAX;
}

/* every chunk closed: forget them all */
static void forget(db_thrindex *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->c[i].buf);
    t->n = 0;
    t->held = 0;
    base_map_free(&t->slots);
}

void db_thrindex_free(db_thrindex *t)
{
    if (!t)
        return;
    forget(t);
    free(t->c);
    free(t);
}

/* a key's first chunk */
static chunk *new_chunk(db_thrindex *t, uint64_t key)
{
    if (t->n == t->cap) {
        size_t c = t->cap ? t->cap * 2 : 64;
        void *p = realloc(t->c, c * sizeof *t->c);
        if (!p)
            return NULL;
        t->c = p;
        t->cap = c;
    }
    if (base_map_put(&t->slots, key, (uint32_t)t->n))
        return NULL;
    chunk *c = &t->c[t->n++];
    memset(c, 0, sizeof *c);
    c->key = key;
    t->held += THR_CHUNK_HELD;
    return c;
}

/* An open chunk's lim: one compare of db_thrindex_add_fast's for the
 * three of open, DB_THR_CHUNK_BYTES and the buffer's room, on every event
 * and node. */
static void set_lim(chunk *c) { c->lim = (uint32_t)(c->cap < DB_THR_CHUNK_BYTES ? c->cap : DB_THR_CHUNK_BYTES); }

static int put_chunk(db_thrindex *t, chunk *c, uint32_t trace, db_thrindex_put put, void *ctx)
{
    if (!c->open)
        return 0;
    unsigned char k[28], *p = k + 4 + t->key_bytes;
    db_put_be32(k, trace);
    if (t->key_bytes == 8)
        db_put_be64(k + 4, c->key);
    else
        db_put_be32(k + 4, (uint32_t)c->key);
    db_put_be64(p, c->first_ts);
    db_put_be64(p + 8, c->first_id);
    c->open = false;
    c->lim = 0;
    t->pending -= c->len;
    int rc = put(ctx, k, (size_t)(p + 16 - k), c->buf, c->len);
    c->len = 0;
    return rc;
}

static int by_key(const void *a, const void *b, void *chunks)
{
    const chunk *c = chunks;
    uint64_t x = c[*(const uint32_t *)a].key, y = c[*(const uint32_t *)b].key;
    return (x > y) - (x < y);
}

size_t db_thrindex_open(const db_thrindex *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->c[i].open;
    return n;
}

int db_thrindex_flush(db_thrindex *t, uint32_t trace, db_thrindex_put put, void *ctx)
{
    /* a deferred index's flush is tens of thousands of objects: in key
     * order, neighbours share the pages they go into */
    uint32_t *order = t->deferred && t->n > 1 ? malloc(t->n * sizeof *order) : NULL;
    if (order) {
        for (size_t i = 0; i < t->n; i++)
            order[i] = (uint32_t)i;
        qsort_r(order, t->n, sizeof *order, by_key, t->c);
    }
    for (size_t i = 0; i < t->n; i++)
        if (put_chunk(t, &t->c[order ? order[i] : i], trace, put, ctx)) {
            free(order);
            return -1;
        }
    free(order);
    if (t->n > THR_KEEP_MAX || t->held > DB_THR_HELD_MAX)
        forget(t);
    return 0;
}

/* id after the chunk's last id, as a varint delta (room for it is there) */
static inline void append(db_thrindex *t, chunk *c, uint64_t ts, uint64_t id)
{
    uint64_t d = id - c->last_id;
    size_t before = c->len;
    while (d >= 0x80) {
        c->buf[c->len++] = (unsigned char)(d | 0x80);
        d >>= 7;
    }
    c->buf[c->len++] = (unsigned char)d;
    t->pending += c->len - before;
    c->last_ts = ts;
    c->last_id = id;
}

static int after_append(db_thrindex *t, uint32_t trace, db_thrindex_put put, void *ctx)
{
    if (db_thrindex_due(t))
        return t->deferred ? 1 : db_thrindex_flush(t, trace, put, ctx);
    return 0;
}

/* An event that ends its chunk, opens one or needs more room: out of line
 * (a tail call) for db_thrindex_add_more's sake, which then saves no
 * registers on the common path. */
static __attribute__((noinline)) int add_slow(db_thrindex *t, chunk *c, uint32_t trace, uint64_t ts, uint64_t id,
                                              db_thrindex_put put, void *ctx)
{
    if (c->open && (c->len + 10 > DB_THR_CHUNK_BYTES || ts < c->last_ts || id <= c->last_id) &&
        put_chunk(t, c, trace, put, ctx))
        return -1;
    if (!c->open) {
        c->open = true;
        set_lim(c);
        c->first_ts = c->last_ts = ts;
        c->first_id = c->last_id = id;
        return 0;
    }
    if (c->len + 10 > c->cap) {
        size_t n = c->cap ? c->cap * 2 : 32;
        void *p = realloc(c->buf, n);
        if (!p)
            return -2;
        t->held += n - c->cap;
        c->buf = p;
        c->cap = n;
        set_lim(c);
    }
    append(t, c, ts, id);
    return after_append(t, trace, put, ctx);
}

/* ... or of a key not seen before (or since the chunks were forgotten) */
static __attribute__((noinline)) int add_new(db_thrindex *t, uint32_t trace, uint64_t key, uint64_t ts, uint64_t id,
                                             db_thrindex_put put, void *ctx)
{
    chunk *c = new_chunk(t, key);
    return c ? add_slow(t, c, trace, ts, id, put, ctx) : -2;
}

/* Every add (db_int.h's db_thrindex_add does its one case inline and
 * asks this of the rest). */
int db_thrindex_add_more(db_thrindex *t, uint32_t trace, uint64_t key, uint64_t ts, uint64_t id,
                         db_thrindex_put put, void *ctx)
{
    uint32_t i;
    if (!base_map_get(&t->slots, key, &i))
        return add_new(t, trace, key, ts, id, put, ctx);
    chunk *c = &t->c[i];
    if (c->len + 10 > c->lim || ts < c->last_ts || id <= c->last_id)
        return add_slow(t, c, trace, ts, id, put, ctx);
    append(t, c, ts, id);
    return after_append(t, trace, put, ctx);
}

/* ---- reading a chunk ---- */

void db_thrchunk_begin(db_thrchunk *it, const void *key, size_t klen, const void *val, size_t vlen)
{
    /* trace, tid (4) or object (8), ts, id */
    const unsigned char *k = key;
    bool ok = klen == 24 || klen == 28;
    it->first_ts = ok ? db_get_be64(k + klen - 16) : 0;
    it->next = ok ? db_get_be64(k + klen - 8) : 0;
    it->p = val;
    it->end = (const unsigned char *)val + vlen;
    it->started = false;
}

bool db_thrchunk_next(db_thrchunk *it, uint64_t *id)
{
    if (!it->started) {
        it->started = true;
        *id = it->next;
        return it->next != 0;
    }
    uint64_t d = 0;
    for (unsigned shift = 0; it->p < it->end && shift < 64; shift += 7) {
        unsigned char b = *it->p++;
        d |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            it->next += d;
            *id = it->next;
            return d != 0;
        }
    }
    return false;
}
