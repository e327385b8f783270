/* db/clear.c -- deleting a trace's keys: its graph before `rebuild graph`,
 * or everything an interrupted ingest left behind.  LMDB puts freed pages
 * on its free list, so the next writes reuse the space. */
#include <string.h>

#include "db_int.h"

/* Clearing a big graph reads most of its tables: what it has read is
 * unmapped every so often (db_archive_trim), 1.8 GB otherwise at 19M. */
#define CLEAR_TRIM 16384u

/* Deletes every key of `trace` in one table (keys start with the id). */
static int clear_table(db_archive *a, MDB_txn *txn, int dbi, uint32_t trace, db_error *err)
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
        key = (MDB_val){4, k};
        if ((rc = mdb_cursor_get(c, &key, &v, MDB_SET_RANGE)) != 0)
            break;
        if (key.mv_size < 4 || memcmp(key.mv_data, k, 4) != 0)
            break;
        if ((rc = mdb_cursor_del(c, 0)) != 0)
            break;
        if (++n % CLEAR_TRIM == 0)
            db_archive_trim(a);
    }
    mdb_cursor_close(c);
    return rc && rc != MDB_NOTFOUND ? db_lmdb_fail(err, rc, "delete") : 0;
}

/* The signature index is keyed by thread key first: the trace's entries
 * are found through its nodes (a node's name and kind give its key). */
static int clear_sigs(db_archive *a, MDB_txn *txn, uint32_t trace, db_error *err)
{
    unsigned char k[4];
    db_put_be32(k, trace);
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn, a->dbi[DBI_NODES], &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    MDB_val key = {4, k}, v;
    unsigned nd = 0;
    for (rc = mdb_cursor_get(c, &key, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(c, &key, &v, MDB_NEXT)) {
        if (key.mv_size != 8 || memcmp(key.mv_data, k, 4) != 0)
            break;
        db_node n;
        uint32_t id = db_get_be32((const unsigned char *)key.mv_data + 4);
        if (db_node_decode(v.mv_data, v.mv_size, id, &n))
            continue; /* damaged: its signature stays behind, unreachable */
        unsigned char sk[12];
        db_put_be32(sk, db_thread_key(n.thread, n.kind));
        memcpy(sk + 4, key.mv_data, 8);
        MDB_val skey = {12, sk};
        int d = mdb_del(txn, a->dbi[DBI_SIGS], &skey, NULL);
        if (++nd % CLEAR_TRIM == 0)
            db_archive_trim(a);
        if (d && d != MDB_NOTFOUND) {
            rc = d;
            break;
        }
    }
    mdb_cursor_close(c);
    return rc && rc != MDB_NOTFOUND ? db_lmdb_fail(err, rc, "delete") : 0;
}

int db_clear_trace_txn(db_archive *a, MDB_txn *txn, uint32_t trace, bool graph_only, db_error *err)
{
    static const int graph[] = {DBI_NODES, DBI_EDGES_IN, DBI_EDGES_OUT, DBI_NODE_THREAD, DBI_NODETOP};
    static const int rest[] = {DBI_EVENTS, DBI_EV_TIME, DBI_EV_THREAD, DBI_EV_PORT, DBI_EV_BLOCK,
                               DBI_EV_TIMER, DBI_THREADS, DBI_PROCS, DBI_SYMBOLS, DBI_RULES};
    if (clear_sigs(a, txn, trace, err))
        return -1;
    for (size_t i = 0; i < sizeof graph / sizeof graph[0]; i++)
        if (clear_table(a, txn, graph[i], trace, err))
            return -1;
    for (size_t i = 0; !graph_only && i < sizeof rest / sizeof rest[0]; i++)
        if (clear_table(a, txn, rest[i], trace, err))
            return -1;
    return 0;
}
