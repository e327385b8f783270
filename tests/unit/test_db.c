/* tests/unit/test_db.c -- the archive (key encoding, edge keys and the
 * other records in memory: test_db_records.c; event blocks:
 * test_evblock.c): a trace is visible only after commit; an abort leaves
 * nothing; archives of other formats and failed opens; handles shared
 * by threads; the threaded writer's queue across batches, node records
 * in id order over batches, appends that fill their pages. */
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
 * end the batch before its 20,000 puts. */
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
