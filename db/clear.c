/* db/clear.c -- deleting a trace's keys: its graph (a graph pass after an
 * out-of-order ingest), or everything of a trace nobody sees any more (an
 * interrupted ingest, the old copy a `rebuild graph` replaced).  LMDB puts
 * freed pages on its free list, so the next writes reuse the space.
 *
 * A delete dirties the page it deletes from, so deleting a big trace in
 * one transaction would hold a copy of most of it in memory: a hidden
 * trace is deleted in steps of at most `budget` bytes of entries, each its own
 * transaction (db_clear_step); nobody sees the trace in between, and what
 * a crash leaves of it the next writer deletes. */
#include <string.h>

#include "db_int.h"

/* Clearing a big trace reads most of its tables: what it has read is
 * unmapped every so often (db_archive_trim).  A read fault maps the 16
 * pages around the one read (the kernel's fault-around; MADV_RANDOM does
 * not stop it), and deleting an event block frees its overflow pages, a
 * fault of its own: CLEAR_TRIM deletes between two trims mapped enough
 * to make the peak of a `rebuild graph`, which grew with the trace (the
 * old copy is cleared at the end; docs/PERFORMANCE.md).  So every
 * CLEAR_CHECK deletes the file pages mapped are read from the kernel
 * (db_archive_file_rss), and past CLEAR_TRIM_RSS more than after the last
 * trim the mapping goes; where /proc is not there, every CLEAR_TRIM
 * deletes. */
#define CLEAR_CHECK 32u
#define CLEAR_TRIM_RSS (4u << 20)
#define CLEAR_TRIM 256u

/* After the n-th delete of a run; *base: the file pages mapped after the
 * last trim (0: unknown). */
static void trim_check(db_archive *a, unsigned n, uint64_t *base)
{
    if (n % CLEAR_CHECK == 0 && !db_archive_trim_past(a, base, CLEAR_TRIM_RSS) && n % CLEAR_TRIM == 0)
        db_archive_trim(a);
}

/* A step's budget is in bytes of the leaf entries it deletes: a delete
 * copies its page into the transaction's memory (LMDB's copy on write),
 * and pages of big entries -- a thread index's chunks, four to a page --
 * made a budget counted in keys copy far more than it meant to allow
 * (docs/PERFORMANCE.md).  A value in overflow pages leaves only a pointer
 * in its leaf. */
static void charge(uint64_t *budget, const MDB_val *k, const MDB_val *v)
{
    uint64_t cost = k->mv_size + (v->mv_size > 2000 ? 8 : v->mv_size) + 10;
    *budget = *budget > cost ? *budget - cost : 0;
}

/* Deletes the keys of `trace` in one table (keys start with the id), as
 * many as *budget allows (counted down); 1 when some are left.  After a
 * delete the cursor stands on the key that followed, which MDB_NEXT gives;
 * a run ends with a seek that finds no key of the trace, so a cursor that
 * lost its place (past the end of a page, as LMDB's cursors once did)
 * leaves nothing behind. */
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
    uint64_t base = db_archive_file_rss(a);
    bool seek = true;
    for (;;) {
        if (!*budget) {
            mdb_cursor_close(c);
            return 1;
        }
        if (seek) {
            key = (MDB_val){4, k};
            rc = mdb_cursor_get(c, &key, &v, MDB_SET_RANGE);
        } else
            rc = mdb_cursor_get(c, &key, &v, MDB_NEXT);
        if (rc == 0 && (key.mv_size < 4 || memcmp(key.mv_data, k, 4) != 0))
            rc = MDB_NOTFOUND;
        if (rc) {
            if (seek || rc != MDB_NOTFOUND)
                break;
            seek = true; /* the end of the run, or a cursor that lost its place */
            continue;
        }
        charge(budget, &key, &v);
        if ((rc = mdb_cursor_del(c, 0)) != 0)
            break;
        seek = false;
        trim_check(a, ++n, &base);
    }
    mdb_cursor_close(c);
    return rc && rc != MDB_NOTFOUND ? db_lmdb_fail(err, rc, "delete") : 0;
}

/* The signature index is keyed by thread key first (tk, trace, node): the
 * trace's chunks are found by seeking (tk, trace) for each thread key the
 * table has, from *next_tk on (where the next step resumes) -- a seek per
 * thread key of the archive and one per chunk, where going through the
 * trace's nodes for their keys was a decode and a seek per node, far
 * more of them (docs/PERFORMANCE.md). */
static int clear_sigs(db_archive *a, MDB_txn *txn, uint32_t trace, uint32_t *next_tk, uint64_t *budget,
                      db_error *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn, a->dbi[DBI_SIGS], &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    uint32_t tk = *next_tk;
    unsigned n = 0;
    uint64_t base = db_archive_file_rss(a);
    for (;;) {
        if (!*budget) {
            *next_tk = tk;
            mdb_cursor_close(c);
            return 1;
        }
        unsigned char sk[8];
        db_put_be32(sk, tk);
        db_put_be32(sk + 4, trace);
        MDB_val key = {8, sk}, v;
        if ((rc = mdb_cursor_get(c, &key, &v, MDB_SET_RANGE)) != 0)
            break;
        if (key.mv_size < 8) /* not a key this index writes: left alone */
            break;
        uint32_t ktk = db_get_be32(key.mv_data), ktr = db_get_be32((const unsigned char *)key.mv_data + 4);
        if (ktk != tk) { /* the next thread key in the table */
            tk = ktk;
            continue;
        }
        if (ktr != trace) { /* none (left) of this key: the next key */
            if (tk == UINT32_MAX)
                break;
            tk++;
            continue;
        }
        charge(budget, &key, &v);
        if ((rc = mdb_cursor_del(c, 0)) != 0)
            break;
        trim_check(a, ++n, &base);
    }
    mdb_cursor_close(c);
    return rc && rc != MDB_NOTFOUND ? db_lmdb_fail(err, rc, "delete") : 0;
}

static const int graph_tables[] = {DBI_NODES, DBI_EDGES_IN, DBI_EDGES_OUT, DBI_NODE_THREAD, DBI_NODETOP};
static const int event_tables[] = {DBI_EVENTS, DBI_EV_TIME, DBI_EV_THREAD, DBI_EV_PORT, DBI_EV_BLOCK,
                                   DBI_EV_TIMER, DBI_THREADS, DBI_PROCS, DBI_SYMBOLS, DBI_RULES, DBI_LABELS};
enum { N_GRAPH = sizeof graph_tables / sizeof graph_tables[0], N_EVENT = sizeof event_tables / sizeof event_tables[0] };

int db_clear_step(db_archive *a, MDB_txn *txn, db_clear *st, uint64_t budget, db_error *err)
{
    int rc = 0;
    size_t last = st->graph_only ? N_GRAPH : N_GRAPH + N_EVENT;
    if (st->stage == 0) { /* signatures (keyed by thread key first) */
        rc = clear_sigs(a, txn, st->trace, &st->next_tk, &budget, err);
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
