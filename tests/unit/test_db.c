/* tests/unit/test_db.c -- key encoding, edge keys, and the archive (event
 * blocks: test_evblock.c):
 * a trace is visible only after commit; an abort leaves nothing. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static char tmpdir[64];
static char path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/argusq-test-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    snprintf(path, sizeof path, "%s/a.db", tmpdir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char lock[160];
    snprintf(lock, sizeof lock, "%s-lock", path);
    unlink(path);
    unlink(lock);
    rmdir(tmpdir);
    return 0;
}

static int count_cb(void *ctx, const db_event *ev)
{
    (void)ev;
    ++*(int *)ctx;
    return 0;
}

static int count_traces(void *ctx, const db_trace_info *t)
{
    (void)t;
    ++*(int *)ctx;
    return 0;
}

static void write_trace(db_archive *a, const char *name, bool commit)
{
    db_error err = {0};
    db_writer *w = db_writer_begin(a, name, "test", "unit", &err);
    assert_non_null(w);
    db_thread th = {.tid = 5, .pid = 5, .name = "t5"};
    assert_int_equal(db_writer_thread(w, &th, &err), 0);
    assert_int_equal(db_writer_proc(w, 5, "p5", &err), 0);
    /* out of time order on purpose: the time index sorts them */
    uint64_t ts[] = {300, 100, 200};
    for (int i = 0; i < 3; i++) {
        db_event ev = {.ts = ts[i], .tid = 5, .pid = 5, .cpu = DB_CPU_NONE, .type = DB_EV_TIMER_ARM,
                       .obj = 0xabc, .name = "timer_arm"};
        assert_int_equal(db_writer_event(w, &ev, &err), 0);
        assert_int_equal(ev.id, (uint64_t)i + 1);
    }
    db_node n = {.id = 1, .tid = 5, .events = 3, .begin = 100, .end = 300};
    assert_int_equal(db_writer_node(w, &n, &err), 0);
    n.id = 2;
    assert_int_equal(db_writer_node(w, &n, &err), 0);
    db_edge e = {.from = 1, .to = 2, .kind = DB_EDGE_WAKEUP, .from_event = 1, .to_event = 2};
    assert_int_equal(db_writer_edge(w, &e, &err), 0);
    if (commit) {
        db_trace_info info;
        assert_int_equal(db_writer_commit(w, &info, &err), 0);
        assert_int_equal(info.events, 3);
        assert_int_equal(info.nodes, 2);
        assert_int_equal(info.edges, 1);
        assert_int_equal(info.threads, 1);
        assert_int_equal(info.first_ts, 100);
        assert_int_equal(info.last_ts, 300);
    } else
        db_writer_abort(w);
}

static int time_order_cb(void *ctx, const db_event *ev)
{
    uint64_t *last = ctx;
    assert_true(ev->ts >= *last);
    *last = ev->ts;
    return 0;
}

static int edge_cb(void *ctx, const db_edge *e)
{
    *(db_edge *)ctx = *e;
    return 0;
}

static void test_commit_and_abort(void **state)
{
    (void)state;
    db_error err = {0};
    db_archive *a = db_open(path, false, &err);
    assert_non_null(a);
    write_trace(a, "aborted", false);
    write_trace(a, "kept", true);
    int n = 0;
    assert_int_equal(db_list_traces(a, count_traces, &n, &err), 0);
    assert_int_equal(n, 1);
    db_trace_info t;
    assert_int_equal(db_find_trace(a, "aborted", &t, &err), 0);
    assert_int_equal(db_latest_trace(a, &t, &err), 1);
    assert_string_equal(t.name, "kept");
    /* a name is taken once */
    assert_null(db_writer_begin(a, "kept", "test", "unit", &err));
    assert_non_null(strstr(err.msg, "already exists"));
    db_close(a);

    /* a second open, read-only, sees the committed trace */
    a = db_open(path, true, &err);
    assert_non_null(a);
    db_reader *r = db_reader_open(a, "kept", &err);
    assert_non_null(r);
    int cnt = 0;
    assert_int_equal(db_scan_events(r, count_cb, &cnt, &err), 0);
    assert_int_equal(cnt, 3);
    uint64_t last = 0;
    assert_int_equal(db_scan_time(r, 0, UINT64_MAX, time_order_cb, &last, &err), 0);
    assert_int_equal(last, 300);
    cnt = 0;
    assert_int_equal(db_scan_time(r, 150, 250, count_cb, &cnt, &err), 0);
    assert_int_equal(cnt, 1);
    cnt = 0;
    assert_int_equal(db_scan_object(r, DB_IX_TIMER, 0xabc, count_cb, &cnt, &err), 0);
    assert_int_equal(cnt, 3);
    cnt = 0;
    assert_int_equal(db_scan_thread(r, 5, 0, 150, count_cb, &cnt, &err), 0);
    assert_int_equal(cnt, 1);
    db_edge e = {0};
    assert_int_equal(db_edges_in(r, 2, edge_cb, &e, &err), 0);
    assert_int_equal(e.from, 1);
    assert_int_equal(e.kind, DB_EDGE_WAKEUP);
    db_node node;
    assert_int_equal(db_get_node(r, 2, &node, &err), 1);
    assert_int_equal(db_get_node(r, 3, &node, &err), 0);
    db_reader_close(r);
    assert_null(db_reader_open(a, "aborted", &err));
    db_close(a);
}

/* An archive of another format: an earlier one that can be migrated is
 * refused with both numbers and err.old_format set (the caller migrates
 * it: query_migrate); the first format and a newer one are refused. */
static void put_format(uint32_t fmt)
{
    db_error err = {0};
    db_archive *a = db_open(path, false, &err); /* made, when it is not yet */
    db_close(a);
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi meta;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 32), 0);
    assert_int_equal(mdb_env_open(env, path, MDB_NOSUBDIR, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "meta", 0, &meta), 0);
    MDB_val k = {6, "format"}, v = {4, &fmt};
    assert_int_equal(mdb_put(txn, meta, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

static void test_format_version(void **state)
{
    (void)state;
    db_error err = {0};
    put_format(3);
    assert_null(db_open(path, true, &err));
    assert_int_equal(err.old_format, 3);
    assert_non_null(strstr(err.msg, "archive format 3, written by an older argusq"));
    char want[32];
    snprintf(want, sizeof want, "reads format %u", DB_FORMAT_VERSION);
    assert_non_null(strstr(err.msg, want));
    err = (db_error){0};
    assert_null(db_open(path, false, &err));
    assert_int_equal(err.old_format, 3);

    err = (db_error){0};
    put_format(1);
    assert_null(db_open(path, false, &err));
    assert_int_equal(err.old_format, 0);
    assert_non_null(strstr(err.msg, "archive format 1, from before argusq kept a format record"));

    err = (db_error){0};
    put_format(DB_FORMAT_VERSION + 1);
    assert_null(db_open(path, true, &err));
    assert_int_equal(err.old_format, 0);
    assert_non_null(strstr(err.msg, "newer than this argusq's"));
}

/* A failed open leaves nothing behind: not the lock file LMDB made beside
 * a file that is not an archive, or beside a directory; and it names the
 * path. */
static void test_failed_open_leaves_nothing(void **state)
{
    (void)state;
    char lock[160], want[200];
    struct stat st;
    snprintf(lock, sizeof lock, "%s-lock", path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 1000; i++)
        fputs("not an archive\n", f);
    fclose(f);
    for (int readonly = 0; readonly < 2; readonly++) {
        db_error err = {0};
        assert_null(db_open(path, readonly, &err));
        snprintf(want, sizeof want, "%s: not an argusq archive", path);
        assert_string_equal(err.msg, want);
        assert_int_not_equal(stat(lock, &st), 0);
    }
    unlink(path);
    assert_int_equal(mkdir(path, 0755), 0);
    for (int readonly = 0; readonly < 2; readonly++) {
        db_error err = {0};
        assert_null(db_open(path, readonly, &err));
        snprintf(want, sizeof want, "%s: Is a directory", path);
        assert_string_equal(err.msg, want);
        assert_int_not_equal(stat(lock, &st), 0);
    }
    rmdir(path);
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

/* db_share: another handle on an archive's environment, read-only or not
 * (not: only over a writable one); what a handle finds lazily (the map to
 * trim, /proc/self/statm) is found once when four threads ask at once (a
 * race here is for ThreadSanitizer to see: make tsan). */
struct trim_ctx {
    db_archive *a;
    int got;
};

static void *trim_thread(void *p)
{
    struct trim_ctx *c = p;
    db_error err = {0};
    db_trace_info t;
    for (int i = 0; i < 50; i++) {
        db_archive_trim(c->a);
        (void)db_archive_file_rss(c->a);
        c->got += db_latest_trace(c->a, &t, &err) == 1;
    }
    return NULL;
}

static void test_shared_handles_from_threads(void **state)
{
    (void)state;
    db_error err = {0};
    db_archive *a = db_open(path, false, &err);
    assert_non_null(a);
    write_trace(a, "t", true);
    db_archive *r = db_share(a, path, true, &err), *w = db_share(a, path, false, &err);
    assert_non_null(r);
    assert_non_null(w);
    uint64_t dev, ino;
    struct stat st;
    assert_int_equal(db_file_id(r, &dev, &ino), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_true(dev == (uint64_t)st.st_dev && ino == (uint64_t)st.st_ino);
    pthread_t t[4];
    struct trim_ctx c[4];
    for (int i = 0; i < 4; i++) {
        c[i] = (struct trim_ctx){i & 1 ? w : a, 0};
        assert_int_equal(pthread_create(&t[i], NULL, trim_thread, &c[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(c[i].got, 50);
    }
    /* the read-only handle may not write; the other may */
    assert_null(db_writer_begin(r, "x", "test", "unit", &err));
    assert_non_null(strstr(err.msg, "read-only"));
    write_trace(w, "u", true);
    db_close(r);
    db_close(w); /* the environment is a's: still open */
    db_trace_info info;
    assert_int_equal(db_find_trace(a, "u", &info, &err), 1);
    db_close(a);
    /* a read-only environment gives no writable handle */
    a = db_open(path, true, &err);
    assert_non_null(a);
    assert_null(db_share(a, path, false, &err));
    assert_non_null(strstr(err.msg, "read-only"));
    db_close(a);
}

/* The threaded writer's queue (wqueue.c) across its batches: 200,000
 * edges are some 7 MB of calls, several batches handed over, each call
 * made once and whole. */
static void test_queue_batches(void **state)
{
    (void)state;
    db_error err = {0};
    db_archive *a = db_open(path, false, &err);
    assert_non_null(a);
    db_writer *w = db_writer_begin(a, "q", "test", "unit", &err);
    assert_non_null(w);
    db_event ev = {.ts = 1, .tid = 5, .pid = 5, .cpu = DB_CPU_NONE, .type = DB_EV_TIMER_ARM, .name = "timer_arm"};
    assert_int_equal(db_writer_event(w, &ev, &err), 0);
    db_node n = {.id = 1, .tid = 5, .events = 1, .begin = 1, .end = 1};
    assert_int_equal(db_writer_node(w, &n, &err), 0);
    n.id = 2;
    assert_int_equal(db_writer_node(w, &n, &err), 0);
    enum { EDGES = 200000 };
    for (uint32_t i = 0; i < EDGES; i++) {
        db_edge e = {.from = 1 + i % 2, .to = 2 - i % 2, .kind = DB_EDGE_WAKEUP, .from_event = i, .to_event = i + 1};
        assert_int_equal(db_writer_edge(w, &e, &err), 0);
    }
    db_trace_info info;
    assert_int_equal(db_writer_commit(w, &info, &err), 0);
    assert_int_equal(info.events, 1);
    assert_int_equal(info.nodes, 2);
    assert_int_equal(info.edges, EDGES);
    db_reader *r = db_reader_open(a, "q", &err);
    assert_non_null(r);
    db_edge last = {0};
    assert_int_equal(db_edges_in(r, 2, edge_cb, &last, &err), 0);
    assert_int_equal(last.from, 1);
    assert_int_equal(last.to, 2);
    db_reader_close(r);
    db_close(a);
}

/* The writer's queue (wqueue.c) keeps its ops on WQ_ALIGN-byte steps and
 * hands the writer pointers into its batches: ops of every payload size
 * in turn -- signatures of 0 to DB_SIG_MAX hashes, normal forms and
 * process names of 0 to 40 bytes, nodes and edges -- through a threaded
 * writer come back as they went in, across several batches. */
static void test_queue_ops_of_every_size(void **state)
{
    (void)state;
    db_error err = {0};
    db_archive *a = db_open(path, false, &err);
    assert_non_null(a);
    db_writer *w = db_writer_begin(a, "q", "test", "unit", &err);
    assert_non_null(w);
    enum { NODES = 6000 };
    char text[64];
    for (uint32_t id = 1; id <= NODES; id++) {
        size_t len = id % 41;
        for (size_t i = 0; i < len; i++)
            text[i] = (char)('a' + (id + i) % 26);
        text[len] = 0;
        assert_int_equal(db_writer_norm(w, 0x10000u + id, text, &err), 0);
        assert_int_equal(db_writer_proc(w, id, text, &err), 0);
        db_node n = {.id = id, .tid = 100 + id % 7, .pid = 100, .kind = DB_NODE_THREAD, .cpu = DB_CPU_NONE,
                     .begin = 10 * id, .end = 10 * id + 5, .events = 1, .first_event = id, .last_event = id};
        snprintf(n.thread, sizeof n.thread, "t%u", id % 7);
        db_sig sig = {.node = id, .thread_key = db_thread_key(n.thread, n.kind), .n = id % (DB_SIG_MAX + 1)};
        for (uint32_t i = 0; i < sig.n; i++)
            sig.h[i] = id * 100 + i;
        assert_int_equal(db_writer_node_sig(w, &n, sig.thread_key, &sig, &err), 0);
        db_edge e = {.from = id, .to = id % NODES + 1, .kind = DB_EDGE_WAKEUP, .from_event = id, .to_event = id + 1};
        assert_int_equal(db_writer_edge(w, &e, &err), 0);
    }
    db_trace_info info;
    assert_int_equal(db_writer_commit(w, &info, &err), 0);
    assert_int_equal(info.nodes, NODES);
    assert_int_equal(info.edges, NODES);
    db_reader *r = db_reader_open(a, "q", &err);
    assert_non_null(r);
    for (uint32_t id = 1; id <= NODES; id++) {
        db_node n;
        assert_int_equal(db_get_node(r, id, &n, &err), 1);
        assert_int_equal(n.begin, 10 * id);
        db_sig sig;
        assert_int_equal(db_get_sig(r, id, &sig, &err), 1);
        assert_int_equal(sig.n, id % (DB_SIG_MAX + 1));
        for (uint32_t i = 0; i < sig.n; i++)
            assert_int_equal(sig.h[i], id * 100 + i);
        char got[64];
        assert_int_equal(db_norm_text(r, 0x10000u + id, got, sizeof got, &err), 1);
        assert_int_equal(strlen(got), id % 41);
        db_edge last = {0};
        assert_int_equal(db_edges_in(r, id % NODES + 1, edge_cb, &last, &err), 0);
        assert_int_equal(last.from, id);
    }
    db_reader_close(r);
    db_close(a);
}

/* The nodes of a batch go in in id order whatever order they came in:
 * ids of a dense range (placed by id), of a sparse one (radix-sorted, in
 * two passes: the ids span more than 16 bits), and an id that comes
 * twice (its later record stays, as a later put replaces the earlier). */
typedef struct node_seen {
    uint32_t last_id;
    size_t n;
    bool ordered, matched;
} node_seen;

static int node_seen_cb(void *ctx, const db_node *n)
{
    node_seen *s = ctx;
    s->ordered = s->ordered && (s->n == 0 || n->id > s->last_id);
    s->matched = s->matched && n->begin == (n->id == 77 ? 2000 : 1000 + (uint64_t)n->id);
    s->last_id = n->id;
    s->n++;
    return 0;
}

static void write_nodes(db_archive *a, const char *name, uint32_t step, size_t count)
{
    db_error err = {0};
    db_writer *w = db_writer_begin(a, name, "test", "unit", &err);
    assert_non_null(w);
    for (size_t i = 0; i < count; i++) {
        uint32_t id = (uint32_t)((i * 7919 % count) + 1) * step; /* a permutation */
        db_node n = {.id = id, .tid = 5, .begin = 1000 + (uint64_t)id, .end = 5000000};
        assert_int_equal(db_writer_node(w, &n, &err), 0);
    }
    db_node twice = {.id = 77, .tid = 5, .begin = 2000, .end = 5000000};
    assert_int_equal(db_writer_node(w, &twice, &err), 0);
    db_trace_info info;
    assert_int_equal(db_writer_commit(w, &info, &err), 0);
}

/* Node records over many batches (ARGUSQ_BATCH_OPS, an edge after each
 * node so that a batch may end there): each batch's ids are scattered,
 * some below the last id a batch before put (a put into the table) and
 * some above (appends, db_wr_put_nodes' run without db_wr_append_flag's compare);
 * each comes back once, in order, with its own record. */
static void nodes_over_batches(const char *batch_ops, size_t count)
{
    db_error err = {0};
    db_archive *a = db_open(path, false, &err);
    assert_non_null(a);
    setenv("ARGUSQ_BATCH_OPS", batch_ops, 1);
    db_writer *w = db_writer_begin(a, "batches", "test", "unit", &err);
    unsetenv("ARGUSQ_BATCH_OPS");
    assert_non_null(w);
    for (size_t i = 0; i < count; i++) {
        uint32_t id = (uint32_t)(i * 7919 % count) + 1;
        db_node n = {.id = id, .tid = 5, .begin = id == 77 ? 2000 : 1000 + (uint64_t)id, .end = 5000000};
        assert_int_equal(db_writer_node(w, &n, &err), 0);
        db_edge e = {.from = id, .to = (uint32_t)(id % count + 1), .kind = DB_EDGE_WAKEUP, .from_event = 1, .to_event = 2};
        assert_int_equal(db_writer_edge(w, &e, &err), 0);
    }
    db_trace_info info;
    assert_int_equal(db_writer_commit(w, &info, &err), 0);
    db_reader *r = db_reader_open(a, "batches", &err);
    assert_non_null(r);
    node_seen s = {0, 0, true, true};
    assert_int_equal(db_scan_nodes(r, node_seen_cb, &s, &err), 0);
    assert_int_equal(s.n, count);
    assert_true(s.ordered);
    assert_true(s.matched);
    db_reader_close(r);
    db_close(a);
}

static void test_nodes_over_batches(void **state)
{
    (void)state;
    nodes_over_batches("700", 6000);
}

/* Batches that end on their pages (db_wr_batch_full's DB_BATCH_PAGES), not
 * their puts: from the second on, each node below the ids already
 * stored is a put into the table, a page each, and some 2,800 of them
 * end the batch before its 20,000 puts.  The sanitizer build (tests)
 * compares db_wr_batch_full's whole-number bound (pages_left) with the exact
 * sum at every safe point and aborts where they differ. */
static void test_nodes_over_page_batches(void **state)
{
    (void)state;
    nodes_over_batches("20000", 30000);
}

static void test_nodes_in_id_order(void **state)
{
    (void)state;
    db_error err = {0};
    db_archive *a = db_open(path, false, &err);
    assert_non_null(a);
    write_nodes(a, "dense", 1, 5000);   /* 77 among them: twice */
    write_nodes(a, "sparse", 101, 5000); /* up to 505,000: 19 bits; 77 once */
    const char *names[] = {"dense", "sparse"};
    size_t want[] = {5000, 5001};
    for (int t = 0; t < 2; t++) {
        db_reader *r = db_reader_open(a, names[t], &err);
        assert_non_null(r);
        node_seen s = {0, 0, true, true};
        assert_int_equal(db_scan_nodes(r, node_seen_cb, &s, &err), 0);
        assert_int_equal(s.n, want[t]);
        assert_true(s.ordered);
        assert_true(s.matched);
        db_reader_close(r);
    }
    db_close(a);
}

/* The leaf pages of table dbi of the archive at path, and of a fresh
 * LMDB file its entries went into with MDB_APPEND, in order, in one
 * transaction. */
static void leaves_as_appended(int dbi, size_t *got, size_t *want)
{
    db_error err = {0};
    db_archive *a = db_open(path, true, &err);
    assert_non_null(a);
    char ref[160];
    snprintf(ref, sizeof ref, "%s/ref.db", tmpdir);
    MDB_env *env;
    MDB_txn *rt, *wt;
    MDB_dbi main;
    MDB_cursor *c;
    MDB_stat st;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_mapsize(env, 64u << 20), 0);
    assert_int_equal(mdb_env_open(env, ref, MDB_NOSUBDIR, 0644), 0);
    assert_int_equal(mdb_txn_begin(a->env, NULL, MDB_RDONLY, &rt), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &wt), 0);
    assert_int_equal(mdb_dbi_open(wt, NULL, 0, &main), 0);
    assert_int_equal(mdb_cursor_open(rt, a->dbi[dbi], &c), 0);
    MDB_val k, v;
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT))
        assert_int_equal(mdb_put(wt, main, &k, &v, MDB_APPEND), 0);
    mdb_cursor_close(c);
    assert_int_equal(mdb_stat(rt, a->dbi[dbi], &st), 0);
    *got = st.ms_leaf_pages;
    assert_int_equal(mdb_stat(wt, main, &st), 0);
    *want = st.ms_leaf_pages;
    mdb_txn_abort(wt);
    mdb_txn_abort(rt);
    mdb_env_close(env);
    char lock[170];
    snprintf(lock, sizeof lock, "%s-lock", ref);
    unlink(ref);
    unlink(lock);
    db_close(a);
}

/* The writer appends without MDB_APPEND while it knows the last leaf has
 * room (writer_tail.c, db_wr_tail_put): its pages must come out as MDB_APPEND's,
 * full, over batches (each a new transaction, whose leaf is not known
 * until an append splits) and records of every size. */
static void test_appends_fill_pages(void **state)
{
    (void)state;
    db_error err = {0};
    db_archive *a = db_open(path, false, &err);
    assert_non_null(a);
    setenv("ARGUSQ_BATCH_OPS", "2000", 1);
    db_writer *w = db_writer_begin(a, "full", "test", "unit", &err);
    unsetenv("ARGUSQ_BATCH_OPS");
    assert_non_null(w);
    enum { COUNT = 9000 };
    for (uint32_t id = 1; id <= COUNT; id++) {
        db_node n = {.id = id, .tid = id % 7, .begin = 1000 + (uint64_t)id * id, .end = 1u << 30};
        memset(n.thread, 'x', id % 40); /* records of 30 to 90 bytes */
        assert_int_equal(db_writer_node(w, &n, &err), 0);
        db_edge e = {.from = id, .to = id + 1, .kind = DB_EDGE_WAKEUP, .from_event = id, .to_event = id + id % 300};
        assert_int_equal(db_writer_edge(w, &e, &err), 0);
    }
    db_trace_info info;
    assert_int_equal(db_writer_commit(w, &info, &err), 0);
    db_close(a);
    const int tables[] = {DBI_NODES, DBI_EDGES_IN, DBI_EDGES_OUT};
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
        size_t got, want;
        leaves_as_appended(tables[i], &got, &want);
        assert_true(want > 4);
        assert_int_equal(got, want);
    }
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
        cmocka_unit_test_setup_teardown(test_commit_and_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_format_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_open_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_handles_from_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_ops_of_every_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nodes_in_id_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nodes_over_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nodes_over_page_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_appends_fill_pages, setup, teardown),
    };
    return cmocka_run_group_tests_name("db", tests, NULL, NULL);
}
