/* tests/unit/test_keysort.c -- db/keysort.c hands a batch's index keys out
 * in LMDB's order (table, then memcmp of the key) whatever order they came
 * in: keys of one prefix in time order (the common case, chained), out of
 * order (an Argus trace out of time order: sorted), several tables, keys
 * of other lengths (edge keys, each its own node pair; keys shorter than
 * the 12 bytes the radix sort looks at), and a second batch after the
 * first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "db/db_int.h"

typedef struct out_key {
    int dbi;
    size_t len;
    unsigned char k[DB_KEYSORT_MAX];
} out_key;

typedef struct sink {
    out_key *k;
    size_t n, cap;
    int stop_at; /* return 7 on this key (1-based), 0: never */
} sink;

static int collect(void *ctx, int dbi, const unsigned char *k, size_t len)
{
    sink *s = ctx;
    assert_true(s->n < s->cap);
    s->k[s->n].dbi = dbi;
    s->k[s->n].len = len;
    memcpy(s->k[s->n].k, k, len);
    s->n++;
    return s->stop_at && (int)s->n == s->stop_at ? 7 : 0;
}

static int lmdb_order(const void *a, const void *b)
{
    const out_key *x = a, *y = b;
    if (x->dbi != y->dbi)
        return x->dbi < y->dbi ? -1 : 1;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->k, y->k, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static void be(unsigned char *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)v;
}

/* A thread index key: trace, tid, ts, id (24 bytes), or an object key
 * with an 8-byte object (28 bytes), or a time key (20 bytes), or an edge
 * key (trace, node, node, kind, event, event: 29 bytes), or a short key
 * of 5 to 11 bytes. */
static size_t make_key(unsigned char *k, int shape, uint32_t who, uint64_t ts, uint64_t id)
{
    be(k, 1, 4);
    if (shape == 0) {
        be(k + 4, who, 4);
        be(k + 8, ts, 8);
        be(k + 16, id, 8);
        return 24;
    }
    if (shape == 1) {
        be(k + 4, 0xffff888000000000ull + who * 64ull, 8);
        be(k + 12, ts, 8);
        be(k + 20, id, 8);
        return 28;
    }
    if (shape == 2) {
        be(k + 4, ts, 8);
        be(k + 12, id, 8);
        return 20;
    }
    if (shape == 3) {
        be(k + 4, who * 7919u % 100003u, 4);
        be(k + 8, (uint32_t)(ts % 65537), 4);
        k[12] = (unsigned char)(id % 3);
        be(k + 13, ts, 8);
        be(k + 21, id, 8);
        return 29;
    }
    size_t len = 5 + id % 7;
    for (size_t i = 4; i < len; i++)
        k[i] = (unsigned char)(who >> (i % 3));
    return len;
}

static void run_batch(db_keysort *ks, unsigned seed, size_t n, bool in_time_order)
{
    out_key *want = calloc(n, sizeof *want);
    sink s = {calloc(n, sizeof *s.k), 0, n, 0};
    assert_non_null(want);
    assert_non_null(s.k);
    srand(seed);
    uint64_t ts = 1000;
    for (size_t i = 0; i < n; i++) {
        int shape = rand() % 5, dbi = 3 + shape % 4;
        ts += in_time_order ? (uint64_t)(rand() % 5) : 0;
        uint64_t t = in_time_order ? ts : (uint64_t)(rand() % 100000);
        want[i].dbi = dbi;
        uint32_t who = (uint32_t)(rand() % (shape == 3 ? 100000 : 37));
        want[i].len = make_key(want[i].k, shape, who, t, i + 1);
        assert_int_equal(db_keysort_add(ks, dbi, want[i].k, want[i].len), 0);
    }
    assert_int_equal(db_keysort_count(ks), n);
    assert_int_equal(db_keysort_drain(ks, collect, NULL, &s), 0);
    assert_int_equal(db_keysort_count(ks), 0);
    qsort(want, n, sizeof *want, lmdb_order);
    assert_int_equal(s.n, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(s.k[i].dbi, want[i].dbi);
        assert_int_equal(s.k[i].len, want[i].len);
        assert_memory_equal(s.k[i].k, want[i].k, want[i].len);
    }
    free(want);
    free(s.k);
}

static void test_in_time_order(void **state)
{
    (void)state;
    db_keysort *ks = db_keysort_new();
    assert_non_null(ks);
    run_batch(ks, 1, 50000, true);
    run_batch(ks, 2, 3000, true); /* a second batch on the same sorter */
    db_keysort_free(ks);
}

static void test_out_of_time_order(void **state)
{
    (void)state;
    db_keysort *ks = db_keysort_new();
    assert_non_null(ks);
    run_batch(ks, 3, 20000, false);
    run_batch(ks, 4, 1, false);
    db_keysort_free(ks);
}

static void test_callback_stops_the_drain(void **state)
{
    (void)state;
    db_keysort *ks = db_keysort_new();
    unsigned char k[DB_KEYSORT_MAX];
    for (int i = 0; i < 10; i++) {
        size_t len = make_key(k, 0, 5, (uint64_t)(100 - i), (uint64_t)i);
        assert_int_equal(db_keysort_add(ks, 3, k, len), 0);
    }
    sink s = {calloc(10, sizeof *s.k), 0, 10, 4};
    assert_int_equal(db_keysort_drain(ks, collect, NULL, &s), 7);
    assert_int_equal(s.n, 4);
    assert_int_equal(db_keysort_count(ks), 0); /* what was left is gone */
    assert_int_equal(db_keysort_add(ks, 3, k, DB_KEYSORT_MAX + 1), -1);
    free(s.k);
    db_keysort_free(ks);
}

/* ---- edges: db_keysort_add_edge, handed out a block at a time ---- */

typedef struct edge_sink {
    db_edge_rec *r;
    size_t n, cap;
    int side;       /* of the calls so far */
    uint32_t block; /* of the last call */
    size_t calls;
} edge_sink;

static int collect_edges(void *ctx, int side, const db_edge_rec *r, size_t n)
{
    edge_sink *s = ctx;
    assert_true(n > 0);
    uint32_t block = r[0].a >> DB_EDGE_BLOCK_SHIFT;
    /* side 0 first; blocks ascending within a side, each given once */
    assert_true(side >= s->side);
    if (s->calls && side == s->side)
        assert_true(block > s->block);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(r[i].a >> DB_EDGE_BLOCK_SHIFT, block);
    s->side = side;
    s->block = block;
    s->calls++;
    assert_true(s->n + n <= s->cap);
    memcpy(s->r + s->n, r, n * sizeof *r);
    s->n += n;
    return 0;
}

static int rec_order(const void *a, const void *b) { return db_edge_rec_cmp(a, b); }

/* n edges a side, a over a span of `span` nodes (the radix sort takes
 * digits of at most 16 bits, no wider than n needs: one pass or several),
 * a third of them twice, a node's edges in random order; what comes out
 * is each side's distinct edges in db_edge_rec_cmp order (side 0's, then
 * side 1's). */
static void run_edges(db_keysort *ks, unsigned seed, size_t n, uint32_t base, uint32_t span)
{
    db_edge_rec *want = calloc(4 * n, sizeof *want);
    edge_sink s = {calloc(4 * n, sizeof *s.r), 0, 4 * n, 0, 0, 0};
    assert_non_null(want);
    assert_non_null(s.r);
    srand(seed);
    size_t nw[2] = {0, 0};
    for (int side = 0; side < 2; side++) {
        db_edge_rec *w = want + side * 2 * n;
        for (size_t i = 0; i < n; i++) {
            db_edge_rec r = {0};
            r.a = base + (uint32_t)((uint64_t)rand() * rand() % span);
            r.b = r.a + (uint32_t)(rand() % 7) - 3;
            r.kind = (uint8_t)(rand() % 4);
            r.from_event = (uint64_t)rand() % 50;
            r.to_event = r.from_event + (uint64_t)(rand() % 3);
            w[nw[side]++] = r;
            assert_int_equal(db_keysort_add_edge(ks, side, &r), 0);
            if (i % 3 == 0) { /* the same edge again */
                w[nw[side]++] = r;
                assert_int_equal(db_keysort_add_edge(ks, side, &r), 0);
            }
        }
    }
    assert_int_equal(db_keysort_count(ks), nw[0] + nw[1]);
    assert_int_equal(db_keysort_drain(ks, collect, collect_edges, &s), 0); /* no keys */
    assert_int_equal(db_keysort_count(ks), 0);
    size_t at = 0;
    for (int side = 0; side < 2; side++) {
        db_edge_rec *w = want + side * 2 * n;
        qsort(w, nw[side], sizeof *w, rec_order);
        size_t k = 0;
        for (size_t i = 0; i < nw[side]; i++)
            if (!k || db_edge_rec_cmp(&w[k - 1], &w[i]))
                w[k++] = w[i];
        for (size_t i = 0; i < k; i++, at++) {
            assert_true(at < s.n);
            assert_int_equal(db_edge_rec_cmp(&s.r[at], &w[i]), 0);
        }
    }
    assert_int_equal(at, s.n);
    free(want);
    free(s.r);
}

static void test_edges(void **state)
{
    (void)state;
    db_keysort *ks = db_keysort_new();
    assert_non_null(ks);
    run_edges(ks, 5, 20000, 1000, 3000);      /* many edges a node: runs sorted */
    run_edges(ks, 6, 5000, 7, 1u << 30);      /* three passes of 10 bits */
    run_edges(ks, 7, 300, 123456, 1);         /* every edge of one node */
    run_edges(ks, 8, 1, UINT32_MAX - 5, 1);   /* one edge a side */
    run_edges(ks, 9, 50000, 77, 60000);       /* one pass of 16 bits */
    run_edges(ks, 10, 50000, 5, 1u << 16);    /* 17 bits: two passes */
    run_edges(ks, 11, 40, 0, UINT32_MAX);     /* 32 bits, few edges: four of 8 */
    db_keysort_free(ks);
}

/* One node's 300 edges a side nearly in order (every 10th swapped with
 * the one before, every 50th far back, some twice): the insertion sort's
 * case (put_run), each side's distinct edges in db_edge_rec_cmp order */
static void test_edge_run_nearly_in_order(void **state)
{
    (void)state;
    db_keysort *ks = db_keysort_new();
    assert_non_null(ks);
    enum { N = 300 };
    db_edge_rec in[N];
    for (size_t i = 0; i < N; i++)
        in[i] = (db_edge_rec){.a = 4242, .b = 4243, .kind = 1, .from_event = 10 * i, .to_event = 10 * i + 1};
    for (size_t i = 9; i < N; i += 10) {
        db_edge_rec t = in[i];
        in[i] = in[i - 1];
        in[i - 1] = t;
    }
    for (size_t i = 49; i < N; i += 50)
        in[i].from_event = 10 * (i - 45) + 5, in[i].to_event = in[i].from_event + 1;
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; i < N; i++) {
            assert_int_equal(db_keysort_add_edge(ks, side, &in[i]), 0);
            if (i % 7 == 0)
                assert_int_equal(db_keysort_add_edge(ks, side, &in[i]), 0);
        }
    edge_sink s = {calloc(4 * N, sizeof(db_edge_rec)), 0, 4 * N, 0, 0, 0};
    assert_non_null(s.r);
    assert_int_equal(db_keysort_drain(ks, collect, collect_edges, &s), 0);
    assert_int_equal(s.n, 2 * N);
    for (size_t i = 0; i < s.n; i++)
        if (i % N)
            assert_true(db_edge_rec_cmp(&s.r[i - 1], &s.r[i]) < 0);
    free(s.r);
    db_keysort_free(ks);
}

/* db_keysort_add_edge_pair is add_edge of r on side 0 and of r with a and
 * b swapped on side 1: the same drain, block for block, as those two
 * calls give, past the arrays' first growth (65,536 edges) too. */
static void test_edge_pairs(void **state)
{
    (void)state;
    db_keysort *one = db_keysort_new(), *two = db_keysort_new();
    assert_non_null(one);
    assert_non_null(two);
    size_t n = 70000;
    edge_sink a = {calloc(2 * n, sizeof *a.r), 0, 2 * n, 0, 0, 0}, b = {calloc(2 * n, sizeof *b.r), 0, 2 * n, 0, 0, 0};
    assert_non_null(a.r);
    assert_non_null(b.r);
    srand(21);
    for (size_t i = 0; i < n; i++) {
        db_edge_rec r = {0};
        r.a = 100 + (uint32_t)(rand() % 90000);
        r.b = r.a + (uint32_t)(rand() % 50) - 25;
        r.kind = (uint8_t)(rand() % 4);
        r.from_event = (uint64_t)rand() % 1000;
        r.to_event = r.from_event + (uint64_t)(rand() % 9);
        /* the writer's inline add (db_writer_edge_back), and the call
         * when a table is full: at the first edge, and past 65,536 */
        bool fast = db_keysort_add_edge_pair_fast(one, &r);
        assert_int_equal(fast, i != 0 && i != 65536);
        if (!fast)
            assert_int_equal(db_keysort_add_edge_pair(one, &r), 0);
        db_edge_rec out = r;
        out.a = r.b;
        out.b = r.a;
        assert_int_equal(db_keysort_add_edge(two, 0, &r), 0);
        assert_int_equal(db_keysort_add_edge(two, 1, &out), 0);
    }
    assert_int_equal(db_keysort_count(one), 2 * n);
    assert_int_equal(db_keysort_drain(one, collect, collect_edges, &a), 0);
    assert_int_equal(db_keysort_drain(two, collect, collect_edges, &b), 0);
    assert_int_equal(a.n, b.n);
    assert_int_equal(a.calls, b.calls);
    assert_memory_equal(a.r, b.r, a.n * sizeof *a.r);
    free(a.r);
    free(b.r);
    db_keysort_free(one);
    db_keysort_free(two);
}

/* keys and edges in one drain: the keys first, then the edges */
typedef struct both {
    sink keys;
    edge_sink edges;
} both;

static int both_key(void *ctx, int dbi, const unsigned char *k, size_t len)
{
    both *b = ctx;
    assert_int_equal(b->edges.n, 0);
    return collect(&b->keys, dbi, k, len);
}

static int both_edges(void *ctx, int side, const db_edge_rec *r, size_t n)
{
    return collect_edges(&((both *)ctx)->edges, side, r, n);
}

static void test_keys_then_edges(void **state)
{
    (void)state;
    db_keysort *ks = db_keysort_new();
    assert_non_null(ks);
    unsigned char k[DB_KEYSORT_MAX];
    size_t len = make_key(k, 0, 5, 10, 1);
    db_edge_rec r = {.a = 40, .b = 41};
    assert_int_equal(db_keysort_add_edge(ks, 1, &r), 0);
    assert_int_equal(db_keysort_add(ks, 3, k, len), 0);
    assert_int_equal(db_keysort_count(ks), 2);
    both b = {{calloc(1, sizeof *b.keys.k), 0, 1, 0}, {calloc(1, sizeof *b.edges.r), 0, 1, 0, 0, 0}};
    assert_int_equal(db_keysort_drain(ks, both_key, both_edges, &b), 0);
    assert_int_equal(b.keys.n, 1);
    assert_int_equal(b.edges.n, 1);
    assert_int_equal(b.edges.side, 1);
    assert_int_equal(b.edges.r[0].a, 40);
    assert_int_equal(db_keysort_count(ks), 0);
    free(b.keys.k);
    free(b.edges.r);
    db_keysort_free(ks);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_time_order),
        cmocka_unit_test(test_out_of_time_order),
        cmocka_unit_test(test_callback_stops_the_drain),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_edge_run_nearly_in_order),
        cmocka_unit_test(test_edge_pairs),
        cmocka_unit_test(test_keys_then_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
