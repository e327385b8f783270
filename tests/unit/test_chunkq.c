/* tests/unit/test_chunkq.c -- db/chunkq.c hands a batch's chunks out in
 * LMDB's order (table, then memcmp of the key) whatever order they came
 * in: runs of several tables interleaved, a run's chunks out of order
 * (sorted), runs longer than the sort's 16-chunk pieces, a key that came
 * twice (both, in the order they came), a callback that stops the drain,
 * a second drain in the batch and a second batch after it, which runs are
 * fresh (their first chunk of the batch).  (base.h's sorts themselves:
 * test_base.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "db/db_int.h"

typedef struct got {
    int dbi;
    size_t klen;
    unsigned char k[32];
    uint32_t tag; /* the value: the order the chunk came in */
} got;

typedef struct sink {
    got *g;
    size_t n, cap;
    size_t stop_at; /* return 7 on this chunk (1-based), 0: never */
} sink;

static int collect(void *ctx, int dbi, MDB_val *key, MDB_val *val)
{
    sink *s = ctx;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->g = realloc(s->g, s->cap * sizeof *s->g);
        assert_non_null(s->g);
    }
    got *g = &s->g[s->n++];
    assert_true(key->mv_size <= sizeof g->k);
    assert_int_equal(val->mv_size, 4);
    g->dbi = dbi;
    g->klen = key->mv_size;
    memcpy(g->k, key->mv_data, key->mv_size);
    memcpy(&g->tag, val->mv_data, 4);
    return s->stop_at && s->n == s->stop_at ? 7 : 0;
}

static uint64_t hash_of(int dbi, const unsigned char *k, size_t plen)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)dbi;
    for (size_t i = 0; i < plen; i++)
        h = (h ^ k[i]) * 0x100000001b3ull;
    return h;
}

/* the chunk; whether its run is fresh (its first since the batch began) */
static bool add(db_chunkq *q, int dbi, const unsigned char *k, size_t klen, size_t plen, uint32_t tag)
{
    bool fresh = false;
    assert_int_equal(db_chunkq_add(q, hash_of(dbi, k, plen), dbi, k, klen, plen, &tag, 4, &fresh), 0);
    return fresh;
}

/* a thread chunk's key: trace, tid | ts, id */
static void thread_key(unsigned char *k, uint32_t tid, uint64_t ts, uint64_t id)
{
    db_put_be32(k, 9);
    db_put_be32(k + 4, tid);
    db_put_be64(k + 8, ts);
    db_put_be64(k + 16, id);
}

/* a signature chunk's key: thread key, trace | first node */
static void sig_key(unsigned char *k, uint32_t tk, uint32_t first)
{
    db_put_be32(k, tk);
    db_put_be32(k + 4, 9);
    db_put_be32(k + 8, first);
}

static int order(const got *a, const got *b)
{
    if (a->dbi != b->dbi)
        return a->dbi < b->dbi ? -1 : 1;
    MDB_val x = {a->klen, (void *)a->k}, y = {b->klen, (void *)b->k};
    return db_key_order(&x, &y);
}

/* Adds a batch: 40 threads' chunks (dbi 3) and 30 thread keys' signature
 * chunks (dbi 5), interleaved; every fifth of a thread's chunks starts
 * back in time; thread 13's chunk at ts 5000 comes twice.  The count. */
static size_t add_batch(db_chunkq *q, uint32_t round)
{
    unsigned char k[24];
    uint32_t tag = 0;
    uint64_t ts[40];
    for (int t = 0; t < 40; t++)
        ts[t] = 100;
    for (uint32_t i = 0; i < 3000; i++) {
        uint32_t tid = (i * 7 + round) % 40;
        ts[tid] += i % 5 == 4 ? (uint64_t)-3 : 10; /* back in time */
        thread_key(k, tid + 1, 1000 + ts[tid], i + 1);
        add(q, 3, k, 24, 8, tag++);
        if (i % 3 == 0) {
            sig_key(k, (i * 11) % 30, 3000 - i);
            add(q, 5, k, 12, 8, tag++);
        }
    }
    thread_key(k, 13, 5000, 1);
    add(q, 3, k, 24, 8, tag++);
    add(q, 3, k, 24, 8, tag++);
    return tag;
}

static void check_batch(const sink *s, size_t count)
{
    assert_int_equal(s->n, count);
    size_t twice = 0;
    for (size_t i = 1; i < s->n; i++) {
        int c = order(&s->g[i - 1], &s->g[i]);
        assert_true(c <= 0);
        if (c == 0) { /* the key that came twice: in the order it came */
            assert_true(s->g[i - 1].tag < s->g[i].tag);
            twice++;
        }
    }
    assert_int_equal(twice, 1);
}

static void test_runs_in_key_order(void **state)
{
    (void)state;
    db_chunkq *q = db_chunkq_new();
    assert_non_null(q);
    /* a second drain in the same batch (its runs kept, emptied), then a
     * second batch */
    for (uint32_t round = 0; round < 3; round++) {
        size_t count = add_batch(q, round);
        assert_int_equal(db_chunkq_count(q), count);
        sink s = {0};
        assert_int_equal(db_chunkq_drain(q, collect, &s), 0);
        check_batch(&s, count);
        assert_int_equal(db_chunkq_count(q), 0);
        free(s.g);
        if (round == 1)
            db_chunkq_end_batch(q);
    }
    db_chunkq_free(q);
}

static void test_callback_stops_the_drain(void **state)
{
    (void)state;
    db_chunkq *q = db_chunkq_new();
    assert_non_null(q);
    add_batch(q, 0);
    sink s = {.stop_at = 100};
    assert_int_equal(db_chunkq_drain(q, collect, &s), 7);
    assert_int_equal(s.n, 100);
    assert_int_equal(db_chunkq_count(q), 0); /* emptied all the same */
    free(s.g);
    db_chunkq_free(q);
}

/* fresh: a run's first chunk since the batch began, whether drained
 * since or not; after end_batch, fresh again */
static void test_fresh_runs(void **state)
{
    (void)state;
    db_chunkq *q = db_chunkq_new();
    assert_non_null(q);
    unsigned char k[24];
    for (int batch = 0; batch < 2; batch++) {
        for (uint32_t i = 0; i < 600; i++) {
            uint32_t tid = i % 200;
            thread_key(k, tid, 1000 + i, i + 1);
            assert_int_equal(add(q, 3, k, 24, 8, i), i < 200); /* the thread's first */
            sig_key(k, tid, i);
            assert_int_equal(add(q, 5, k, 12, 8, i), i < 200); /* another table: a run of its own */
            if (i == 300) { /* a drain within the batch (a graph cleared) */
                sink s = {0};
                assert_int_equal(db_chunkq_drain(q, collect, &s), 0);
                assert_int_equal(s.n, 2 * 301);
                free(s.g);
            }
        }
        sink s = {0};
        assert_int_equal(db_chunkq_drain(q, collect, &s), 0);
        assert_int_equal(s.n, 2 * 299);
        for (size_t i = 1; i < s.n; i++)
            assert_true(order(&s.g[i - 1], &s.g[i]) < 0);
        free(s.g);
        db_chunkq_end_batch(q);
    }
    db_chunkq_free(q);
}

/* runs named by 12 bytes, alike in the first 8 (the sort of the runs
 * compares the rest): drained in key order */
static void test_long_run_names(void **state)
{
    (void)state;
    db_chunkq *q = db_chunkq_new();
    assert_non_null(q);
    unsigned char k[16];
    uint32_t r = 777;
    size_t count = 0;
    for (uint32_t i = 0; i < 500; i++) {
        r = r * 1103515245u + 12345u;
        memset(k, 0x5a, 8);
        db_put_be32(k + 8, (r >> 8) % 50);
        db_put_be32(k + 12, i);
        add(q, 7, k, 16, 12, i);
        count++;
    }
    sink s = {0};
    assert_int_equal(db_chunkq_drain(q, collect, &s), 0);
    assert_int_equal(s.n, count);
    for (size_t i = 1; i < s.n; i++)
        assert_true(order(&s.g[i - 1], &s.g[i]) <= 0);
    free(s.g);
    db_chunkq_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_in_key_order),
        cmocka_unit_test(test_callback_stops_the_drain),
        cmocka_unit_test(test_fresh_runs),
        cmocka_unit_test(test_long_run_names),
    };
    return cmocka_run_group_tests_name("chunkq", tests, NULL, NULL);
}
