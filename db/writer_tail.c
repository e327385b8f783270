/* db/writer_tail.c -- tail appends: the writer's puts.  A new trace's
 * keys sort after every older trace's, so most of its puts go at the end
 * of their table: appended, which keeps the B-tree's pages full and skips
 * the search from the root.  The inline paths (db_wr_append_flag,
 * db_wr_tail_put, db_wr_put_as) are in writer_int.h.
 *
 * An append goes through the table's cursor.  LMDB's MDB_APPEND first
 * finds the table's last leaf again from the root (mdb_cursor_last
 * searches whenever the tree has more than one level), a good part of
 * what an append costs.  A put without the flag from a cursor left on
 * the last leaf compares the key with that leaf's first and last and,
 * its parents being the last of theirs, takes the end of the leaf with no
 * search: the same node in the same place -- but when the leaf is full,
 * LMDB splits it in the middle, where MDB_APPEND would start a new leaf
 * and leave this one full.  So the leaf's bytes are counted (db_tail_*,
 * db_int.h): a put that fits goes in without the flag, one that does not
 * with MDB_APPEND, which splits as an append does (db_wr_tail_split).
 * The pages come out as MDB_APPEND alone makes them (test_db compares the
 * page counts), and whatever the count says, LMDB puts every key where it
 * belongs: a wrong count could only leave pages emptier.  The flagless
 * put is not free (mdb_cursor_set still compares the key), but cheaper
 * than the search from the root. */
#include "writer_int.h"

/* memcmp of n bytes, 8 at a time as big-endian words: the keys are 8 to
 * 28 bytes, too short for a call to memcmp (and its result's use) to pay
 * on every append.  Inline, so that db_wr_past_last holds it: the puts of
 * every file inline db_wr_past_last's head, and its rest, with the
 * compare, is one call. */
static inline int key_cmp(const unsigned char *a, const unsigned char *b, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x = db_get_be64(a + i), y = db_get_be64(b + i);
        if (x != y)
            return x < y ? -1 : 1;
    }
    for (; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

bool db_wr_past_last(const db_writer *w, int dbi, const unsigned char *k, size_t klen)
{
    if (klen > IX_KEY_MAX || w->existing)
        return false;
    size_t n = klen < w->tail.last_len[dbi] ? klen : w->tail.last_len[dbi];
    int cmp = key_cmp(k, w->tail.last[dbi], n);
    return !(w->tail.last_len[dbi] && cmp <= 0 && !(cmp == 0 && klen > w->tail.last_len[dbi]));
}

/* db_wr_tail_put's put that may not fit, or to a leaf not known */
int db_wr_tail_split(db_writer *w, int dbi, MDB_val *key, MDB_val *val)
{
    int rc = w->tail.cur[dbi] ? 0 : mdb_cursor_open(w->txn, w->a->dbi[dbi], &w->tail.cur[dbi]);
    if (rc)
        return rc;
    db_tail *t = &w->tail.leaf[dbi];
    size_t node = db_tail_node(key->mv_size, val->mv_size);
    if (db_tail_fits(t, node, w->tail.page_room)) {
        t->used += node;
        return mdb_cursor_put(w->tail.cur[dbi], key, val, 0);
    }
    bool small = db_tail_small(node, w->tail.page_room), known = t->used != DB_TAIL_UNKNOWN;
    MDB_stat st;
    size_t leaves = small && !known && !mdb_stat(w->txn, w->a->dbi[dbi], &st) ? st.ms_leaf_pages : SIZE_MAX;
    rc = mdb_cursor_put(w->tail.cur[dbi], key, val, MDB_APPEND);
    /* a new leaf holds this node alone: after a put that did not fit the
     * known leaf, or one that the table's count of leaves shows split */
    bool split = known || (leaves != SIZE_MAX && !mdb_stat(w->txn, w->a->dbi[dbi], &st) && st.ms_leaf_pages != leaves);
    t->used = !rc && small && split ? node : DB_TAIL_UNKNOWN;
    return rc;
}

void db_wr_tails_lost(db_writer *w)
{
    for (int i = 0; i < DBI__COUNT; i++)
        db_wr_tail_lost(w, i);
}

/* Cursors die with their transaction (and what their appends knew of
 * the last leaves: the next transaction copies them anew). */
void db_wr_close_cursors(db_writer *w)
{
    db_wr_tails_lost(w);
    for (int i = 0; i < DBI__COUNT; i++)
        if (w->tail.cur[i]) {
            mdb_cursor_close(w->tail.cur[i]);
            w->tail.cur[i] = NULL;
        }
}

/* Puts a key, appending when it sorts after the last key this writer put
 * into the same table (every key of a new trace sorts after older
 * traces). */
int db_wr_put(db_writer *w, int dbi, const unsigned char *k, size_t klen, const void *v, size_t vlen,
              db_error *err)
{
    return db_wr_put_as(w, dbi, k, klen, v, vlen, db_wr_append_flag(w, dbi, k, klen), err);
}
