/* tests/unit/test_thrindex.c -- the thread index's chunks and the object
 * indexes' (db/thrindex.c), the writer's keys of a thread's or an
 * object's events: each id comes back once, in order, from the chunks
 * written; a step back in time or an id not above the last starts a
 * chunk; the writer's fast add and the index's inline add do what the
 * whole add does; keys of 8 bytes, more than are kept; a deferred index
 * holds its chunks until the writer flushes and hands them out in key
 * order.  And the writer's new normal forms (db/normbuf.c): each hash
 * once, handed out in hash order.  (The events table's blocks:
 * test_evblock.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "db/db.h"
#include "db/db_int.h"

/* ---- the thread index ---- */

typedef struct chunks {
    size_t n;
    unsigned char key[64][24];
    unsigned char val[64][1100];
    size_t vlen[64];
} chunks;

static int keep(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    chunks *c = ctx;
    assert_int_equal(klen, 24);
    assert_true(c->n < 64 && vlen <= sizeof c->val[0]);
    memcpy(c->key[c->n], k, 24);
    memcpy(c->val[c->n], v, vlen);
    c->vlen[c->n++] = vlen;
    return 0;
}

static void test_thread_chunks(void **state)
{
    (void)state;
    db_thrindex *t = db_thrindex_new(4, false);
    chunks *c = calloc(1, sizeof *c);
    /* thread 7: ids 1, 3, 5, ... with a step back in time at id 201 */
    uint64_t ts = 100;
    for (uint64_t id = 1; id <= 2001; id += 2) {
        ts = id == 201 ? ts - 50 : ts + 10;
        assert_int_equal(db_thrindex_add(t, 9, 7, ts, id, keep, c), 0);
        assert_int_equal(db_thrindex_add(t, 9, 8, ts, id + 1, keep, c), 0);
    }
    assert_int_equal(db_thrindex_flush(t, 9, keep, c), 0);
    assert_int_equal(db_thrindex_flush(t, 9, keep, c), 0); /* nothing twice */
    uint64_t want7 = 1, want8 = 2, chunks7 = 0;
    for (size_t i = 0; i < c->n; i++) {
        assert_int_equal(db_get_be32(c->key[i]), 9);
        uint32_t tid = db_get_be32(c->key[i] + 4);
        assert_true(c->vlen[i] <= 1000);
        db_thrchunk it;
        db_thrchunk_begin(&it, c->key[i], 24, c->val[i], c->vlen[i]);
        uint64_t id;
        if (tid == 7) {
            chunks7++;
            /* a chunk never holds the step back: 201 starts one */
            assert_true(db_get_be64(c->key[i] + 16) <= 199 || db_get_be64(c->key[i] + 16) >= 201);
        }
        while (db_thrchunk_next(&it, &id)) {
            uint64_t *want = tid == 7 ? &want7 : &want8;
            assert_int_equal(id, *want);
            *want += 2;
        }
    }
    assert_int_equal(want7, 2003);
    assert_int_equal(want8, 2004);
    assert_true(chunks7 >= 2);
    free(c);
    db_thrindex_free(t);
}

/* The writer's inline case (writer_events.c, db_writer_event_back): a byte of
 * delta onto the key's open chunk, or no, with nothing changed -- the
 * writer then makes the whole add. */
static void test_thread_chunk_fast_add(void **state)
{
    (void)state;
    db_thrindex *t = db_thrindex_new(4, false);
    chunks *c = calloc(1, sizeof *c);
    assert_false(db_thrindex_add_fast(t, 7, 100, 1)); /* no chunk yet */
    assert_int_equal(t->n, 0);
    assert_int_equal(db_thrindex_add(t, 9, 7, 100, 1, keep, c), 0); /* opens it */
    assert_false(db_thrindex_add_fast(t, 7, 105, 2));                 /* no room yet */
    assert_int_equal(db_thrindex_add(t, 9, 7, 105, 2, keep, c), 0);
    assert_true(db_thrindex_add_fast(t, 7, 110, 3));
    size_t len = t->c[0].len, pending = t->pending;
    assert_false(db_thrindex_add_fast(t, 7, 105, 4));         /* back in time */
    assert_false(db_thrindex_add_fast(t, 7, 120, 3));         /* id not above */
    assert_false(db_thrindex_add_fast(t, 7, 120, 3 + 0x80));  /* two bytes */
    assert_false(db_thrindex_add_fast(t, 8, 120, 5));         /* another key */
    assert_int_equal(t->c[0].len, len);
    assert_int_equal(t->pending, pending);
    assert_int_equal(t->c[0].last_ts, 110);
    assert_int_equal(t->c[0].last_id, 3);
    assert_int_equal(db_thrindex_add(t, 9, 7, 120, 3 + 0x80, keep, c), 0);
    assert_int_equal(db_thrindex_flush(t, 9, keep, c), 0);
    assert_int_equal(c->n, 1);
    static const uint64_t want[] = {1, 2, 3, 3 + 0x80};
    db_thrchunk it;
    db_thrchunk_begin(&it, c->key[0], 24, c->val[0], c->vlen[0]);
    uint64_t id;
    size_t at = 0;
    while (db_thrchunk_next(&it, &id))
        assert_int_equal(id, want[at++]);
    assert_int_equal(at, 4);
    free(c);
    db_thrindex_free(t);
}

/* The fast add takes an event exactly when its chunk is open and has
 * room in its buffer and below DB_THR_CHUNK_BYTES (its lim: set as the
 * chunk opens, grows and closes); db_thrindex_add does the rest, growing
 * the buffer and closing full chunks; every id comes back once. */
static void test_thread_chunk_fast_room(void **state)
{
    (void)state;
    db_thrindex *t = db_thrindex_new(4, false);
    chunks *c = calloc(1, sizeof *c);
    enum { COUNT = 3000 };
    size_t fast = 0;
    for (uint64_t id = 1; id <= COUNT; id++) {
        const db_thrix_chunk *ch = t->n ? &t->c[0] : NULL;
        bool room = ch && ch->open && ch->len + 10 <= ch->cap && ch->len + 10 <= DB_THR_CHUNK_BYTES;
        bool took = db_thrindex_add_fast(t, 7, 100 + id, id);
        assert_int_equal(took, room);
        fast += took;
        if (!took)
            assert_int_equal(db_thrindex_add(t, 9, 7, 100 + id, id, keep, c), 0);
    }
    assert_true(fast > COUNT - 20);
    assert_int_equal(db_thrindex_flush(t, 9, keep, c), 0);
    assert_false(t->c[0].open);
    assert_false(db_thrindex_add_fast(t, 7, 100 + COUNT + 1, COUNT + 1)); /* closed */
    assert_true(c->n >= 3);
    uint64_t want = 1;
    for (size_t i = 0; i < c->n; i++) {
        db_thrchunk it;
        db_thrchunk_begin(&it, c->key[i], 24, c->val[i], c->vlen[i]);
        uint64_t id;
        while (db_thrchunk_next(&it, &id))
            assert_int_equal(id, want++);
    }
    assert_int_equal(want, COUNT + 1);
    free(c);
    db_thrindex_free(t);
}

/* An id not above the chunk's last starts a chunk of its own (its delta
 * would not be positive), as a step back in time does; the chunk before
 * keeps what it had. */
static void test_thread_chunk_id_back(void **state)
{
    (void)state;
    db_thrindex *t = db_thrindex_new(4, false);
    chunks *c = calloc(1, sizeof *c);
    static const uint64_t ids[] = {10, 20, 15, 30, 30, 31};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
        assert_int_equal(db_thrindex_add(t, 9, 7, 100 + i, ids[i], keep, c), 0);
    assert_int_equal(db_thrindex_flush(t, 9, keep, c), 0);
    /* chunks (10, 20), (15, 30), (30, 31) */
    static const uint64_t first[] = {10, 15, 30}, want[] = {10, 20, 15, 30, 30, 31};
    assert_int_equal(c->n, 3);
    size_t at = 0;
    for (size_t i = 0; i < c->n; i++) {
        assert_int_equal(db_get_be64(c->key[i] + 16), first[i]);
        assert_int_equal(db_get_be64(c->key[i] + 8), 100 + at);
        db_thrchunk it;
        db_thrchunk_begin(&it, c->key[i], 24, c->val[i], c->vlen[i]);
        uint64_t id;
        while (db_thrchunk_next(&it, &id))
            assert_int_equal(id, want[at++]);
    }
    assert_int_equal(at, 6);
    free(c);
    db_thrindex_free(t);
}

/* ---- the object indexes: keys of 8 bytes, more keys than are kept ---- */

typedef struct objchunks {
    size_t n;
    uint64_t obj[20000], first_id[20000], ids[20000];
} objchunks;

static int keep_obj(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    objchunks *c = ctx;
    assert_int_equal(klen, 28);
    assert_int_equal(db_get_be32(k), 9);
    assert_true(c->n < 20000);
    db_thrchunk it;
    db_thrchunk_begin(&it, k, klen, v, vlen);
    uint64_t id, n = 0;
    while (db_thrchunk_next(&it, &id))
        n++;
    c->obj[c->n] = db_get_be64(k + 4);
    c->first_id[c->n] = db_get_be64(k + 20);
    c->ids[c->n++] = n;
    return 0;
}

static void test_object_chunks(void **state)
{
    (void)state;
    db_thrindex *t = db_thrindex_new(8, false);
    objchunks *c = calloc(1, sizeof *c);
    /* 6000 objects that differ only above bit 32 (a 32-bit key would
     * merge them), three events each, a flush (a commit) after each
     * round: past the kept keys, chunks are forgotten and begin again */
    uint64_t id = 0;
    for (int round = 0; round < 3; round++) {
        for (uint64_t o = 0; o < 6000; o++)
            assert_int_equal(db_thrindex_add(t, 9, (o << 32) | 0xabc, 1000 + id, id + 1, keep_obj, c), 0), id++;
        assert_int_equal(db_thrindex_flush(t, 9, keep_obj, c), 0);
    }
    /* one chunk per object and round, holding that object's event */
    assert_int_equal(c->n, 18000);
    for (size_t i = 0; i < c->n; i++) {
        assert_int_equal(c->obj[i] & 0xffffffffu, 0xabc);
        assert_int_equal((c->first_id[i] - 1) % 6000, c->obj[i] >> 32);
        assert_int_equal(c->ids[i], 1);
    }
    free(c);
    db_thrindex_free(t);
}

/* A deferred index (the writer's object indexes) does not write when its
 * chunks hold too much: add says so (1) and the flush, when the writer
 * calls it, hands the chunks out in key order whatever their arrival. */
typedef struct keys_seen {
    size_t n;
    uint64_t *obj;
} keys_seen;

static int keep_order(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    (void)v;
    (void)vlen;
    keys_seen *c = ctx;
    assert_int_equal(klen, 28);
    assert_true(c->n < 200000);
    c->obj[c->n++] = db_get_be64(k + 4);
    return 0;
}

/* the chunks an index wrote: their count and a hash of their bytes */
typedef struct chunk_sum {
    size_t n;
    uint64_t h;
} chunk_sum;

static int sum_chunks(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    chunk_sum *c = ctx;
    const unsigned char *b = v;
    c->n++;
    for (size_t i = 0; i < klen; i++)
        c->h = (c->h ^ k[i]) * 0x100000001b3ull;
    for (size_t i = 0; i < vlen; i++)
        c->h = (c->h ^ b[i]) * 0x100000001b3ull;
    return 0;
}

/* db_thrindex_add's inline case (one byte of delta into an open chunk,
 * the index not due after it) does what db_thrindex_add_more does: two
 * indexes fed the same adds, one through each, answer the same and write
 * the same chunks at the same adds -- threads of 900 events, deltas of 1
 * and of 200 (two bytes), time going back now and then, until their
 * chunks hold too much and are written, for a thread index (it flushes
 * itself) and an object index (deferred: add says 1). */
static void test_thrindex_inline_add(void **state)
{
    (void)state;
    for (int deferred = 0; deferred < 2; deferred++) {
        db_thrindex *a = db_thrindex_new(deferred ? 8 : 4, deferred), *b = db_thrindex_new(deferred ? 8 : 4, deferred);
        chunk_sum ca = {0, 0}, cb = {0, 0};
        uint64_t id = 0;
        int ra = 0, rb = 0;
        for (uint32_t key = 1; key <= 6000 && ra != 1; key++)
            for (int e = 0; e < 900 && ra != 1; e++) {
                id += e % 7 == 3 ? 200 : 1;
                uint64_t ts = 1000 + id - (e % 50 == 49 ? 500 : 0);
                ra = db_thrindex_add(a, 9, key, ts, id, sum_chunks, &ca);
                rb = db_thrindex_add_more(b, 9, key, ts, id, sum_chunks, &cb);
                assert_int_equal(ra, rb);
                assert_int_equal(ca.n, cb.n);
                assert_true(ca.h == cb.h);
            }
        assert_true(ca.n > 0 || ra == 1); /* the chunks were written, or are due */
        assert_int_equal(db_thrindex_flush(a, 9, sum_chunks, &ca), 0);
        assert_int_equal(db_thrindex_flush(b, 9, sum_chunks, &cb), 0);
        assert_int_equal(ca.n, cb.n);
        assert_true(ca.h == cb.h);
        db_thrindex_free(a);
        db_thrindex_free(b);
    }
}

static void test_deferred_object_chunks(void **state)
{
    (void)state;
    db_thrindex *t = db_thrindex_new(8, true);
    keys_seen *c = calloc(1, sizeof *c);
    uint64_t *seen = calloc(200000, sizeof *seen);
    c->obj = seen;
    int rc = 0;
    uint64_t n = 0;
    /* objects in descending order, two events each, until too much is held */
    uint64_t id = 0;
    while (rc == 0 && n < 200000) {
        uint64_t obj = (200000 - n) * 64;
        assert_int_equal(db_thrindex_add(t, 9, obj, 1000 + id, id + 1, keep_order, c), 0), id++;
        rc = db_thrindex_add(t, 9, obj, 1000 + id, id + 1, keep_order, c), id++;
        n++;
    }
    assert_int_equal(rc, 1);
    assert_true(db_thrindex_due(t));
    assert_int_equal(c->n, 0); /* nothing written yet */
    /* more adds while the writer is not at a point to flush: still held */
    assert_int_equal(db_thrindex_add(t, 9, 7, 5000000, id + 1, keep_order, c), 0), id++;
    assert_int_equal(db_thrindex_add(t, 9, 7, 5000001, id + 1, keep_order, c), 1), id++;
    n++;
    assert_int_equal(db_thrindex_flush(t, 9, keep_order, c), 0);
    assert_false(db_thrindex_due(t));
    assert_int_equal(c->n, n);
    for (size_t i = 1; i < c->n; i++)
        assert_true(c->obj[i - 1] < c->obj[i]);
    assert_int_equal(c->obj[0], 7);
    free(seen);
    free(c);
    db_thrindex_free(t);
}

/* ---- the writer's new normal forms ---- */

/* The writer's new normal forms (db/normbuf.c): each hash once (the first
 * text stays, as in the dictionary), handed out in hash order whatever
 * their arrival, the add saying when too much waits; after a flush none
 * waits, and the next round starts empty. */
typedef struct norms_seen {
    size_t n;
    uint32_t hash[100000];
    char first[16];
} norms_seen;

static int keep_norm(void *ctx, uint32_t hash, const char *text, size_t len)
{
    norms_seen *c = ctx;
    assert_true(c->n < 100000);
    char want[32];
    snprintf(want, sizeof want, "form:%u", (unsigned)hash);
    if (hash == 77) /* the text given first, not the second */
        snprintf(want, sizeof want, "first");
    assert_int_equal(len, strlen(want));
    assert_memory_equal(text, want, len);
    c->hash[c->n++] = hash;
    return 0;
}

static void test_normbuf(void **state)
{
    (void)state;
    db_normbuf *b = db_normbuf_new();
    norms_seen *c = calloc(1, sizeof *c);
    assert_int_equal(db_normbuf_add(b, 77, "first", 5), 0);
    assert_int_equal(db_normbuf_add(b, 77, "second", 6), 0);
    int rc = 0;
    uint32_t n = 0;
    char t[32];
    /* descending hashes, each twice, until the buffer says it is full */
    while (rc == 0 && n < 100000) {
        uint32_t h = 4000000000u - n * 7919u;
        snprintf(t, sizeof t, "form:%u", (unsigned)h);
        rc = db_normbuf_add(b, h, t, strlen(t));
        if (rc == 0)
            assert_int_equal(db_normbuf_add(b, h, t, strlen(t)), 0);
        n++;
    }
    assert_int_equal(rc, 1);
    assert_true(n > 1000 && n < 100000);
    assert_int_equal(db_normbuf_count(b), n + 1);
    assert_int_equal(db_normbuf_flush(b, keep_norm, c), 0);
    assert_int_equal(c->n, n + 1);
    assert_int_equal(c->hash[0], 77);
    for (size_t i = 1; i < c->n; i++)
        assert_true(c->hash[i - 1] < c->hash[i]);
    assert_int_equal(db_normbuf_count(b), 0);
    assert_int_equal(db_normbuf_flush(b, keep_norm, c), 0); /* nothing twice */
    assert_int_equal(c->n, n + 1);
    /* a hash flushed before may come again: the dictionary refuses it */
    assert_int_equal(db_normbuf_add(b, 77, "first", 5), 0);
    assert_int_equal(db_normbuf_count(b), 1);
    db_normbuf_free(b);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thread_chunks),
        cmocka_unit_test(test_thread_chunk_id_back),
        cmocka_unit_test(test_thread_chunk_fast_add),
        cmocka_unit_test(test_thread_chunk_fast_room),
        cmocka_unit_test(test_object_chunks),
        cmocka_unit_test(test_deferred_object_chunks),
        cmocka_unit_test(test_thrindex_inline_add),
        cmocka_unit_test(test_normbuf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
