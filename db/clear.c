/* db/clear.c -- deleting a trace's keys: its graph (a graph pass after an
 * out-of-order ingest), or everything of a trace nobody sees any more (an
 * interrupted ingest, the old copy a `rebuild graph` replaced).  LMDB puts
 * freed pages on its free list, so the next writes reuse the space.
 *
 * A delete dirties the page it deletes from, so deleting a big trace in
 * one transaction would hold a copy of most of it in memory: a hidden
 * trace is deleted in steps of at most `budget` keys, each step its own
 * transaction (db_clear_step); nobody sees the trace in between, and what
 * a crash leaves of it the next writer deletes. */
#include <string.h>

#include "db_int.h"

/* Clearing a big trace reads most of its tables: what it has read is
 * unmapped every so often (db_archive_trim), 1.8 GB otherwise at 19M.
 * Each delete faults in its leaf, and the kernel maps the pages around
 * it too (64 KB a fault), so every 1024: some 64 MB at most (every 16384
 * let the deletion of a 19M-event trace's old copy reach 700 MB). */
#define CLEAR_TRIM 1024u

/* Deletes the keys of `trace` in one table (keys start with the id), at
 * most *budget of them (counted down); 1 when some are left. */
static int clear_table(db_archive *a, MDB_txn *txn, int dbi, uint32_t trace, uint64_t *budget, db_error *err)
{
    unsigned char k[4];
    db_put_be32(k, trace);
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn, a->dbi[dbi], &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    MDB_val key, v;
    unsigned n = 0;
    /* seek again after each delete: a cursor left past the last key by a
     * delete cannot be read from */
    for (;;) {
        if (!*budget) {
            mdb_cursor_close(c);
            return 1;
        }
        key = (MDB_val){4, k};
        if ((rc = mdb_cursor_get(c, &key, &v, MDB_SET_RANGE)) != 0)
            break;
        if (key.mv_size < 4 || memcmp(key.mv_data, k, 4) != 0)
            break;
        if ((rc = mdb_cursor_del(c, 0)) != 0)
            break;
        --*budget;
        if (++n % CLEAR_TRIM == 0)
            db_archive_trim(a);
    }
    mdb_cursor_close(c);
    return rc && rc != MDB_NOTFOUND ? db_lmdb_fail(err, rc, "delete") : 0;
}

/* The signature index is keyed by thread key first: the trace's chunks
 * are found through its nodes (a node's name and kind give its key),
 * from node *next on; *next is where the next step resumes.  A node's
 * thread key loses all its chunks of the trace at once, and the nodes
 * after it with the same key find none left. */
static int clear_sig_key(MDB_cursor *sc, uint32_t tk, uint32_t trace, unsigned *nd, db_archive *a)
{
    unsigned char sk[8];
    db_put_be32(sk, tk);
    db_put_be32(sk + 4, trace);
    for (;;) {
        MDB_val key = {8, sk}, v;
        int rc = mdb_cursor_get(sc, &key, &v, MDB_SET_RANGE);
        if (rc)
            return rc == MDB_NOTFOUND ? 0 : rc;
        if (key.mv_size < 8 || memcmp(key.mv_data, sk, 8) != 0)
            return 0;
        if ((rc = mdb_cursor_del(sc, 0)) != 0)
            return rc;
        if (++*nd % CLEAR_TRIM == 0)
            db_archive_trim(a);
    }
}

static int clear_sigs(db_archive *a, MDB_txn *txn, uint32_t trace, uint32_t *next, uint64_t *budget,
                      db_error *err)
{
    unsigned char k[8];
    db_put_be32(k, trace);
    db_put_be32(k + 4, *next);
    MDB_cursor *c, *sc;
    int rc = mdb_cursor_open(txn, a->dbi[DBI_NODES], &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    if ((rc = mdb_cursor_open(txn, a->dbi[DBI_SIGS], &sc)) != 0) {
        mdb_cursor_close(c);
        return db_lmdb_fail(err, rc, "cursor");
    }
    MDB_val key = {8, k}, v;
    unsigned nd = 0;
    for (rc = mdb_cursor_get(c, &key, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(c, &key, &v, MDB_NEXT)) {
        if (key.mv_size != 8 || memcmp(key.mv_data, k, 4) != 0)
            break;
        if (!*budget) {
            *next = db_get_be32((const unsigned char *)key.mv_data + 4);
            mdb_cursor_close(c);
            mdb_cursor_close(sc);
            return 1;
        }
        --*budget;
        db_node n;
        uint32_t id = db_get_be32((const unsigned char *)key.mv_data + 4);
        if (db_node_decode(v.mv_data, v.mv_size, id, &n))
            continue; /* damaged: its signature stays behind, unreachable */
        if ((rc = clear_sig_key(sc, db_thread_key(n.thread, n.kind), trace, &nd, a)) != 0)
            break;
    }
    mdb_cursor_close(c);
    mdb_cursor_close(sc);
    return rc && rc != MDB_NOTFOUND ? db_lmdb_fail(err, rc, "delete") : 0;
}

static const int graph_tables[] = {DBI_NODES, DBI_EDGES_IN, DBI_EDGES_OUT, DBI_NODE_THREAD, DBI_NODETOP};
static const int event_tables[] = {DBI_EVENTS, DBI_EV_TIME, DBI_EV_THREAD, DBI_EV_PORT, DBI_EV_BLOCK,
                                   DBI_EV_TIMER, DBI_THREADS, DBI_PROCS, DBI_SYMBOLS, DBI_RULES};
enum { N_GRAPH = sizeof graph_tables / sizeof graph_tables[0], N_EVENT = sizeof event_tables / sizeof event_tables[0] };

int db_clear_step(db_archive *a, MDB_txn *txn, db_clear *st, uint64_t budget, db_error *err)
{
    int rc = 0;
    size_t last = st->graph_only ? N_GRAPH : N_GRAPH + N_EVENT;
    if (st->stage == 0) { /* signatures first: they are found through the nodes */
        rc = clear_sigs(a, txn, st->trace, &st->next_node, &budget, err);
        if (rc)
            return rc;
        st->stage = 1;
    }
    for (; st->stage <= last; st->stage++) {
        size_t i = st->stage - 1;
        int dbi = i < N_GRAPH ? graph_tables[i] : event_tables[i - N_GRAPH];
        if ((rc = clear_table(a, txn, dbi, st->trace, &budget, err)) != 0)
            return rc;
    }
    return 0;
}

int db_clear_trace_txn(db_archive *a, MDB_txn *txn, uint32_t trace, bool graph_only, db_error *err)
{
    db_clear st = {.trace = trace, .graph_only = graph_only};
    return db_clear_step(a, txn, &st, UINT64_MAX, err) ? -1 : 0;
}
