/* db/codec.c -- the stored form of edges, and the range scan every index
 * lookup in db/ goes through (events: evblock.c). */
#include <string.h>

#include "db_int.h"

/* Edge keys: trace, a, b, kind, from_event, to_event -- (a, b) is (to, from)
 * in edges_in and (from, to) in edges_out. */
void db_edge_key(unsigned char *k, uint32_t trace, uint32_t a, uint32_t b, const db_edge *e)
{
    db_put_be32(k, trace);
    db_put_be32(k + 4, a);
    db_put_be32(k + 8, b);
    k[12] = e->kind;
    db_put_be64(k + 13, e->from_event);
    db_put_be64(k + 21, e->to_event);
}

void db_edge_from_key(const unsigned char *k, bool in, db_edge *e)
{
    uint32_t a = db_get_be32(k + 4), b = db_get_be32(k + 8);
    e->to = in ? a : b;
    e->from = in ? b : a;
    e->kind = k[12];
    e->from_event = db_get_be64(k + 13);
    e->to_event = db_get_be64(k + 21);
}

/* Walks keys in [lo, hi] (memcmp order; hi compared on its first hi_len
 * bytes, so a prefix as hi means "everything starting with it"). */
int db_scan_prefix(MDB_txn *txn, MDB_dbi dbi, const unsigned char *lo, size_t lo_len,
                   const unsigned char *hi, size_t hi_len, db_key_cb cb, void *ctx, db_error *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn, dbi, &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    MDB_val k = {lo_len, (void *)lo}, v;
    int ret = 0;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        size_t n = k.mv_size < hi_len ? k.mv_size : hi_len;
        if (memcmp(k.mv_data, hi, n) > 0)
            break;
        if ((ret = cb(ctx, &k, &v)) != 0)
            break;
    }
    mdb_cursor_close(c);
    if (ret)
        return ret;
    if (rc && rc != MDB_NOTFOUND)
        return db_lmdb_fail(err, rc, "scan");
    return 0;
}

struct rule_scan {
    db_rule_cb cb;
    void *ctx;
};

static int rule_one(void *p, const MDB_val *k, const MDB_val *v)
{
    struct rule_scan *s = p;
    char text[4096];
    size_t n = v->mv_size < sizeof text - 1 ? v->mv_size : sizeof text - 1;
    memcpy(text, v->mv_data, n);
    text[n] = 0;
    return k->mv_size == 8 ? s->cb(s->ctx, db_get_be32((const unsigned char *)k->mv_data + 4), text) : 0;
}

/* The rules of a trace in number order, in any transaction. */
int db_scan_rules_txn(MDB_txn *txn, MDB_dbi dbi, uint32_t trace, db_rule_cb cb, void *ctx, db_error *err)
{
    unsigned char k[4];
    db_put_be32(k, trace);
    struct rule_scan s = {cb, ctx};
    return db_scan_prefix(txn, dbi, k, 4, k, 4, rule_one, &s, err);
}
