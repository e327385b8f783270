/* tests/unit/test_db_records.c -- the archive's keys and records in
 * memory, no file: big-endian keys sort as their numbers and
 * db_key_order is LMDB's order; node records, edge keys and edge blocks
 * (db/codec.c) come back whole and damage is refused; the names of event
 * types and edge kinds and an event's attributes, by key and as numbers
 * (db/types.c); each thread's top nodes (db/nodetop.c).  (The archive
 * itself: test_db.c.) */
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

static void test_be_keys_sort_numerically(void **state)
{
    (void)state;
    uint64_t vals[] = {0, 1, 255, 256, 65535, 1ULL << 32, (1ULL << 32) + 1, UINT64_MAX - 1, UINT64_MAX};
    size_t n = sizeof vals / sizeof vals[0];
    for (size_t i = 0; i < n; i++) {
        unsigned char a[8];
        db_put_be64(a, vals[i]);
        assert_int_equal(db_get_be64(a), vals[i]);
        for (size_t j = 0; j < n; j++) {
            unsigned char b[8];
            db_put_be64(b, vals[j]);
            int c = memcmp(a, b, 8);
            int want = (vals[i] > vals[j]) - (vals[i] < vals[j]);
            assert_int_equal(c > 0 ? 1 : c < 0 ? -1 : 0, want);
        }
    }
    unsigned char k[4];
    db_put_be32(k, 0x01020304u);
    assert_memory_equal(k, "\x01\x02\x03\x04", 4);
    assert_int_equal(db_get_be32(k), 0x01020304u);
}

/* db_key_order is LMDB's default order (memcmp of the shorter length,
 * then the shorter first): the sign agrees for keys of every length up to
 * 40 that differ in one byte, in a few, or are prefixes of each other. */
static int memn_order(const unsigned char *a, size_t la, const unsigned char *b, size_t lb)
{
    int c = memcmp(a, b, la < lb ? la : lb);
    if (c)
        return c < 0 ? -1 : 1;
    return (la > lb) - (la < lb);
}

static void test_key_order_is_lmdb_order(void **state)
{
    (void)state;
    unsigned seed = 12345;
    for (int round = 0; round < 200000; round++) {
        unsigned char a[40], b[40];
        seed = seed * 1103515245u + 12345u;
        size_t la = (seed >> 8) % 41, lb = round % 3 ? la : (seed >> 16) % 41;
        for (size_t i = 0; i < sizeof a; i++) {
            seed = seed * 1103515245u + 12345u;
            a[i] = b[i] = (unsigned char)(seed >> 16);
        }
        /* change none, one or two bytes of b, to a value below or above */
        for (int k = round % 3; k > 0; k--) {
            seed = seed * 1103515245u + 12345u;
            b[(seed >> 8) % 40] = (unsigned char)(seed >> 20);
        }
        MDB_val x = {la, a}, y = {lb, b};
        int got = db_key_order(&x, &y);
        assert_int_equal(got > 0 ? 1 : got < 0 ? -1 : 0, memn_order(a, la, b, lb));
    }
}

/* Node records: varints and names come back whole; damage is refused. */
static void test_node_record_roundtrip(void **state)
{
    (void)state;
    db_node n = {.id = 77, .tid = 4124, .pid = 4120, .kind = DB_NODE_SOFTIRQ, .cpu = DB_CPU_NONE,
                 .begin = 1088969362000123, .end = 1088969662000456, .blocked = 300000000, .events = 9,
                 .oncpu = 1088969361999000, .first_event = 123456789, .last_event = 123456800};
    snprintf(n.thread, sizeof n.thread, "%s", "softirq/TIMER with a name of forty-seven chars");
    snprintf(n.proc, sizeof n.proc, "%s", "");
    unsigned char buf[DB_NODE_REC_MAX];
    size_t len = db_node_encode(&n, buf);
    assert_true(len <= sizeof buf && len < 82);
    db_node out;
    assert_int_equal(db_node_decode(buf, len, 77, &out), 0);
    assert_memory_equal(&out, &n, sizeof n);
    n.pid = 1; /* a process id below the thread id */
    n.cpu = 3;
    len = db_node_encode(&n, buf);
    assert_int_equal(db_node_decode(buf, len, 77, &out), 0);
    assert_int_equal(out.pid, 1);
    assert_int_equal(out.cpu, 3);
    for (size_t cut = 0; cut < len; cut++)
        assert_int_equal(db_node_decode(buf, cut, 77, &out), -1);
    buf[len] = 0;
    assert_int_equal(db_node_decode(buf, len + 1, 77, &out), -1);
    /* the largest record, both names full, in exactly DB_NODE_REC_MAX
     * bytes of the heap (the names' copies write their whole room) */
    db_node big = {.id = 78, .tid = UINT32_MAX, .pid = 0, .kind = DB_NODE_SOFTIRQ, .cpu = 65000,
                   .begin = 1, .end = 0, .blocked = UINT64_MAX, .running = UINT64_MAX, .runnable = UINT64_MAX, .oncpu = 1,
                   .events = UINT32_MAX, .first_event = UINT64_MAX, .last_event = UINT64_MAX - 1};
    memset(big.thread, 't', DB_NAME_MAX - 1);
    memset(big.proc, 'p', DB_NAME_MAX - 1);
    unsigned char *heap = malloc(DB_NODE_REC_MAX);
    assert_non_null(heap);
    len = db_node_encode(&big, heap);
    assert_true(len <= DB_NODE_REC_MAX);
    assert_int_equal(db_node_decode(heap, len, 78, &out), 0);
    assert_memory_equal(&out, &big, sizeof big);
    free(heap);
}

/* A name of every length (none past DB_NAME_MAX - 1) is stored as its
 * bytes to the first NUL, whatever lies past it (name_len reads the room
 * in words): bytes 0x01, 0x80 and 0xff after the NUL, and a room with no
 * NUL at all. */
static void test_node_record_names(void **state)
{
    (void)state;
    static const unsigned char after[] = {0x01, 0x80, 0xff, 'x'};
    for (size_t len = 0; len <= DB_NAME_MAX; len++)
        for (size_t a = 0; a < sizeof after; a++) {
            db_node n = {.id = 5, .tid = 7, .pid = 7, .kind = DB_NODE_THREAD, .cpu = DB_CPU_NONE, .begin = 10, .end = 20};
            for (size_t i = 0; i < DB_NAME_MAX; i++) {
                n.thread[i] = (char)(i < len ? 'a' + i % 26 : after[a]);
                n.proc[i] = (char)(i < len ? 0x80 + i : after[(a + 1) % sizeof after]);
            }
            if (len < DB_NAME_MAX)
                n.thread[len] = n.proc[len] = 0;
            unsigned char buf[DB_NODE_REC_MAX];
            size_t got = db_node_encode(&n, buf);
            db_node out;
            assert_int_equal(db_node_decode(buf, got, 5, &out), 0);
            size_t want = len < DB_NAME_MAX - 1 ? len : DB_NAME_MAX - 1;
            assert_int_equal(strlen(out.thread), want);
            assert_int_equal(strlen(out.proc), want);
            assert_memory_equal(out.thread, n.thread, want);
            assert_memory_equal(out.proc, n.proc, want);
        }
}

static void test_edge_key_roundtrip(void **state)
{
    (void)state;
    db_edge e = {.from = 10, .to = 20, .kind = DB_EDGE_TIMER, .from_event = 111, .to_event = 222}, out;
    unsigned char k[DB_EDGE_KEY_LEN];
    db_edge_rec r;
    db_edge_key(k, 3, e.to, e.from, &e);
    db_edge_rec_from_key(k, &r);
    db_edge_from_rec(&r, true, &out);
    assert_int_equal(out.from, 10);
    assert_int_equal(out.to, 20);
    assert_int_equal(out.kind, DB_EDGE_TIMER);
    assert_int_equal(out.from_event, 111);
    assert_int_equal(out.to_event, 222);
}

/* A block gives back its edges exactly, in order, whatever the distances
 * (backward edges, events far apart, the largest ids); a cut or padded
 * value is damaged, never misread. */
static void test_edge_block_roundtrip(void **state)
{
    (void)state;
    uint32_t base = 0xfffffff0u; /* the last block of node ids */
    db_edge_rec in[6] = {
        {base, 0, DB_EDGE_WAKEUP, UINT64_MAX - 5, 7},
        {base, base - 1, DB_EDGE_TIMER, 3, UINT64_MAX},
        {base + 1, base + 15, DB_EDGE_IPC, 1000, 1000},
        {base + 1, base + 15, DB_EDGE_IPC, 1000, 1001},
        {base + 9, 1, DB_EDGE_WEAK, 0, 0},
        {base + 15, UINT32_MAX, DB_EDGE__COUNT - 1, 1ull << 40, (1ull << 40) - 1},
    };
    unsigned char buf[6 * DB_EDGE_REC_MAX], k[8];
    size_t len = db_edgeblk_encode(in, 6, buf);
    assert_true(len <= sizeof buf);
    db_edgeblk_key(k, 3, base + 7);
    assert_int_equal(db_get_be32(k + 4), base >> DB_EDGE_BLOCK_SHIFT);
    MDB_val key = {8, k}, v = {len, buf};
    db_edgeblk_it it;
    db_edge_rec r;
    db_edgeblk_begin(&it, &key, &v);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(db_edgeblk_next(&it, &r), 1);
        assert_int_equal(db_edge_rec_cmp(&r, &in[i]), 0);
        assert_int_equal(r.from_event, in[i].from_event);
    }
    assert_int_equal(db_edgeblk_next(&it, &r), 0);
    /* cut anywhere: the edges before the cut, then damaged unless the
     * cut falls between two edges */
    for (size_t cut = 1; cut < len; cut++) {
        MDB_val vc = {cut, buf};
        int got, n = 0;
        db_edgeblk_begin(&it, &key, &vc);
        while ((got = db_edgeblk_next(&it, &r)) == 1)
            n++;
        assert_true(got == -1 || (got == 0 && n < 6));
    }
    /* an offset past the block's 16 nodes */
    unsigned char bad[8] = {DB_EDGE_BLOCK_NODES, 0, 0, 0, 0};
    MDB_val vb = {5, bad};
    db_edgeblk_begin(&it, &key, &vb);
    assert_int_equal(db_edgeblk_next(&it, &r), -1);
    /* a key of another length */
    MDB_val k4 = {4, k};
    db_edgeblk_begin(&it, &k4, &v);
    assert_int_equal(db_edgeblk_next(&it, &r), -1);
}

static void test_names(void **state)
{
    (void)state;
    for (int t = 0; t < DB_EV__COUNT; t++) {
        const char *n = db_evtype_name(t);
        assert_int_equal(db_evtype_from_name(n, strlen(n)), t);
    }
    for (int k = 0; k < DB_EDGE__COUNT; k++) {
        const char *n = db_edge_kind_name(k);
        assert_int_equal(db_edge_kind_from_name(n, strlen(n)), k);
    }
    assert_int_equal(db_edge_kind_from_name("wakeupx", 7), -1);
}

/* An attribute by its key (a key that is a prefix of another is not it),
 * and as a number: the readers' decimal and 0x hex, and what strtoull's
 * base 0 reads besides (octal, uppercase hex), as before its fast path. */
static void test_event_attr(void **state)
{
    (void)state;
    static const char attrs[] = "na=1\0name=futex\0nr=202\0hex=0x7fFf\0oct=0755\0big=18446744073709551615\0"
                                "bad=12ab\0neg=-1\0empty=\0bare\0";
    db_event ev = {.attrs = attrs, .attrs_len = sizeof attrs - 1};
    const char *v;
    size_t n;
    assert_true(db_event_attr(&ev, "name", &v, &n));
    assert_int_equal(n, 5);
    assert_memory_equal(v, "futex", 5);
    assert_true(db_event_attr(&ev, "na", &v, &n));
    assert_int_equal(n, 1);
    assert_false(db_event_attr(&ev, "nam", &v, &n));
    assert_false(db_event_attr(&ev, "bare", &v, &n)); /* no '=' */
    assert_true(db_event_attr(&ev, "empty", &v, &n));
    assert_int_equal(n, 0);
    uint64_t x = 0;
    assert_true(db_event_attr_u64(&ev, "nr", &x));
    assert_int_equal(x, 202);
    assert_true(db_event_attr_u64(&ev, "hex", &x));
    assert_int_equal(x, 0x7fff);
    assert_true(db_event_attr_u64(&ev, "oct", &x));
    assert_int_equal(x, 0755);
    assert_true(db_event_attr_u64(&ev, "big", &x));
    assert_true(x == UINT64_MAX);
    assert_true(db_event_attr_u64(&ev, "neg", &x));
    assert_true(x == UINT64_MAX); /* strtoull's wrap, as ever */
    assert_false(db_event_attr_u64(&ev, "bad", &x));
    assert_false(db_event_attr_u64(&ev, "empty", &x));
    assert_false(db_event_attr_u64(&ev, "name", &x));
}

/* ---- each thread's top nodes (db/nodetop.c) ---- */

typedef struct top_out {
    unsigned char key[9];
    db_top top;
    int puts;
} top_out;

static int top_capture(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    top_out *o = ctx;
    /* keep the one list asked for: field in the last key byte */
    if (klen == 9 && k[8] == o->key[8]) {
        memcpy(o->key, k, 9);
        assert_int_equal(db_nodetop_decode(v, vlen, &o->top), 0);
    }
    o->puts++;
    return 0;
}

/* The kept nodes are the DB_TOP_MAX largest, largest first, ties by id,
 * for a thread with many nodes in random order (checked against a sort). */
static void test_nodetop_keeps_the_largest(void **state)
{
    (void)state;
    enum { N = 1000 };
    static uint64_t blocked[N + 1];
    srand(7);
    db_nodetop *t = db_nodetop_new();
    assert_non_null(t);
    for (uint32_t id = 1; id <= N; id++) {
        db_node n = {.id = id, .kind = DB_NODE_THREAD, .begin = 100, .end = 100 + id % 17};
        snprintf(n.thread, sizeof n.thread, "worker");
        n.blocked = blocked[id] = (uint64_t)(rand() % 300); /* many ties */
        assert_int_equal(db_nodetop_add(t, &n, db_thread_key(n.thread, n.kind)), 0);
    }
    top_out o = {.key = {[8] = DB_TOP_BLOCKED}};
    assert_int_equal(db_nodetop_flush(t, 5, top_capture, &o), 0);
    assert_int_equal(o.puts, 2); /* one key: two fields */
    assert_int_equal(db_get_be32(o.key), 5);
    assert_int_equal(db_get_be32(o.key + 4), db_thread_key("worker", DB_NODE_THREAD));
    assert_int_equal(o.top.total, N);
    assert_int_equal(o.top.n, DB_TOP_MAX);
    /* the expected order: value desc, id asc */
    uint32_t want[N];
    for (uint32_t i = 0; i < N; i++)
        want[i] = i + 1;
    for (uint32_t i = 1; i < N; i++) /* insertion sort: small N */
        for (uint32_t j = i; j > 0; j--) {
            uint32_t a = want[j - 1], b = want[j];
            if (blocked[a] > blocked[b] || (blocked[a] == blocked[b] && a < b))
                break;
            want[j - 1] = b;
            want[j] = a;
        }
    for (uint32_t i = 0; i < DB_TOP_MAX; i++) {
        assert_int_equal(o.top.id[i], want[i]);
        assert_int_equal(o.top.v[i], blocked[want[i]]);
    }
    db_nodetop_free(t);
    /* a damaged value is refused */
    db_top x;
    unsigned char bad[7] = {0};
    assert_int_equal(db_nodetop_decode(bad, sizeof bad, &x), -1);
}

/* Lists of every length a flush sorts (nodetop.c, sort_by_rank: runs
 * merged from 1 up, odd lengths leaving a short run): 1 to 130 nodes of a
 * thread key each, values with ties, come out as the reference sort of
 * the key's nodes by value desc, id asc, cut at DB_TOP_MAX. */
enum { TOP_ALL_N = 1000 }; /* node ids 1 .. TOP_ALL_N - 1 */
typedef struct top_all {
    uint64_t v[TOP_ALL_N][2]; /* by node id: blocked, duration */
    uint32_t key_of[TOP_ALL_N];
    int checked;
} top_all;

static int top_check(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    top_all *a = ctx;
    db_top got;
    assert_int_equal(klen, 9);
    assert_int_equal(db_nodetop_decode(v, vlen, &got), 0);
    uint32_t key = db_get_be32(k + 4), f = k[8], want[TOP_ALL_N], n = 0;
    for (uint32_t id = 1; id < TOP_ALL_N; id++)
        if (a->key_of[id] == key)
            want[n++] = id;
    assert_int_equal(got.total, n);
    for (uint32_t i = 1; i < n; i++) /* value desc, id asc */
        for (uint32_t j = i; j > 0; j--) {
            uint32_t x = want[j - 1], y = want[j];
            if (a->v[x][f] > a->v[y][f] || (a->v[x][f] == a->v[y][f] && x < y))
                break;
            want[j - 1] = y;
            want[j] = x;
        }
    assert_int_equal(got.n, n < DB_TOP_MAX ? n : DB_TOP_MAX);
    for (uint32_t i = 0; i < got.n; i++) {
        assert_int_equal(got.id[i], want[i]);
        assert_int_equal(got.v[i], a->v[want[i]][f]);
    }
    a->checked++;
    return 0;
}

static void test_nodetop_lists_of_every_length(void **state)
{
    (void)state;
    static const uint32_t lens[] = {1, 2, 3, 5, 8, 9, 17, 31, 33, 64, 65, 127, 128, 129, 130};
    enum { K = sizeof lens / sizeof *lens };
    static top_all a;
    memset(&a, 0, sizeof a);
    db_nodetop *t = db_nodetop_new();
    assert_non_null(t);
    srand(11);
    uint32_t id = 1;
    for (uint32_t k = 0; k < K; k++)
        for (uint32_t i = 0; i < lens[k]; i++, id++) {
            assert_true(id < TOP_ALL_N);
            db_node n = {.id = id, .kind = DB_NODE_THREAD, .begin = 1000};
            snprintf(n.thread, sizeof n.thread, "k%u", k);
            n.blocked = a.v[id][0] = (uint64_t)(rand() % 20);
            n.end = n.begin + (a.v[id][1] = (uint64_t)(rand() % 20));
            a.key_of[id] = db_thread_key(n.thread, n.kind);
            assert_int_equal(db_nodetop_add(t, &n, a.key_of[id]), 0);
        }
    assert_int_equal(db_nodetop_flush(t, 9, top_check, &a), 0);
    assert_int_equal(a.checked, 2 * K);
    db_nodetop_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_be_keys_sort_numerically),
        cmocka_unit_test(test_key_order_is_lmdb_order),
        cmocka_unit_test(test_node_record_roundtrip),
        cmocka_unit_test(test_node_record_names),
        cmocka_unit_test(test_edge_key_roundtrip),
        cmocka_unit_test(test_edge_block_roundtrip),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_event_attr),
        cmocka_unit_test(test_nodetop_keeps_the_largest),
        cmocka_unit_test(test_nodetop_lists_of_every_length),
    };
    return cmocka_run_group_tests_name("db_records", tests, NULL, NULL);
}
