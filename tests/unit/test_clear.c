/* tests/unit/test_clear.c -- deleting a trace's keys in steps (db/clear.c):
 * with any budget, every key of the trace goes from every table (the
 * signature index too, keyed by thread key first) and no key of another
 * trace does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "db/db.h"
#include "db/db_int.h"

static char tmpdir[64], path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/argusq-clear-XXXXXX");
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

/* A trace of `nodes` nodes over 7 thread keys, each with a signature, an
 * edge to the one before and three events: every index gets keys. */
static uint32_t write_trace(db_archive *a, const char *name, uint32_t nodes)
{
    db_error err = {0};
    db_writer *w = db_writer_begin(a, name, "test", "unit", &err);
    assert_non_null(w);
    for (uint32_t t = 1; t <= 7; t++) {
        db_thread th = {.tid = t, .pid = 1};
        snprintf(th.name, sizeof th.name, "worker-%u", t);
        assert_int_equal(db_writer_thread(w, &th, &err), 0);
    }
    assert_int_equal(db_writer_proc(w, 1, "p", &err), 0);
    uint64_t ts = 1000;
    for (uint32_t i = 1; i <= nodes; i++) {
        uint32_t tid = 1 + i % 7;
        db_event ev = {.tid = tid, .pid = 1, .cpu = DB_CPU_NONE, .type = DB_EV_TIMER_ARM, .obj = 0x100 + i % 13,
                       .name = "timer_arm"};
        uint64_t first = 0;
        for (int k = 0; k < 3; k++) {
            ev.ts = ts++;
            ev.node = i;
            assert_int_equal(db_writer_event(w, &ev, &err), 0);
            if (!first)
                first = ev.id;
        }
        db_node n = {.id = i, .tid = tid, .pid = 1, .events = 3, .begin = ts - 3, .end = ts - 1,
                     .first_event = first, .last_event = first + 2};
        snprintf(n.thread, sizeof n.thread, "worker-%u", tid);
        assert_int_equal(db_writer_node(w, &n, &err), 0);
        db_sig s = {.node = i, .thread_key = db_thread_key(n.thread, n.kind), .n = 2, .h = {i % 5, 100 + i % 3}};
        assert_int_equal(db_writer_signature(w, &s, &err), 0);
        if (i > 1) {
            db_edge e = {.from = i - 1, .to = i, .kind = DB_EDGE_WAKEUP, .from_event = first - 1,
                         .to_event = first};
            assert_int_equal(db_writer_edge(w, &e, &err), 0);
        }
    }
    db_trace_info info;
    assert_int_equal(db_writer_commit(w, &info, &err), 0);
    return info.id;
}

/* Keys of trace `id` in every table but the catalog's (the signature
 * index's trace is its key's second word). */
static size_t keys_of(db_archive *a, uint32_t id)
{
    MDB_txn *txn;
    assert_int_equal(mdb_txn_begin(a->env, NULL, MDB_RDONLY, &txn), 0);
    size_t n = 0;
    for (int d = DBI_EVENTS; d < DBI__COUNT; d++) {
        if (d == DBI_NORMS)
            continue; /* one dictionary for every trace */
        MDB_cursor *c;
        assert_int_equal(mdb_cursor_open(txn, a->dbi[d], &c), 0);
        MDB_val k, v;
        size_t at = d == DBI_SIGS ? 4 : 0;
        while (mdb_cursor_get(c, &k, &v, MDB_NEXT) == 0)
            if (k.mv_size >= at + 4 && db_get_be32((const unsigned char *)k.mv_data + at) == id)
                n++;
        mdb_cursor_close(c);
    }
    mdb_txn_abort(txn);
    return n;
}

static void test_clear_in_steps(void **state)
{
    (void)state;
    db_error err = {0};
    db_archive *a = db_open(path, false, &err);
    assert_non_null(a);
    uint32_t ids[3] = {write_trace(a, "one", 300), write_trace(a, "two", 2000), write_trace(a, "three", 500)};
    size_t before[3];
    for (int i = 0; i < 3; i++)
        before[i] = keys_of(a, ids[i]);
    assert_true(before[1] > 2000);
    /* trace two in steps of a few keys, each step its own transaction */
    db_clear st = {.trace = ids[1]};
    int rc, steps = 0;
    do {
        MDB_txn *txn;
        assert_int_equal(mdb_txn_begin(a->env, NULL, 0, &txn), 0);
        rc = db_clear_step(a, txn, &st, 7, &err);
        assert_true(rc >= 0);
        assert_int_equal(mdb_txn_commit(txn), 0);
        steps++;
    } while (rc == 1);
    assert_true((size_t)steps >= before[1] / 7);
    assert_int_equal(keys_of(a, ids[1]), 0);
    assert_int_equal(keys_of(a, ids[0]), before[0]);
    assert_int_equal(keys_of(a, ids[2]), before[2]);
    /* and trace three in one step */
    MDB_txn *txn;
    assert_int_equal(mdb_txn_begin(a->env, NULL, 0, &txn), 0);
    assert_int_equal(db_clear_trace_txn(a, txn, ids[2], false, &err), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    assert_int_equal(keys_of(a, ids[2]), 0);
    assert_int_equal(keys_of(a, ids[0]), before[0]);
    db_close(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_clear_in_steps, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
