/* db/writer_records.c -- the trace's small tables: its threads and
 * processes (kept also in the writer's names, names.c, which the graph
 * asks at nearly every wakeup), symbols, labels, and the user's rules of
 * the graph. */
#include "writer_int.h"

int db_writer_proc_back(db_writer *w, uint32_t pid, const char *name, db_error *err)
{
    unsigned char k[8];
    db_put_be32(k, w->info.id);
    db_put_be32(k + 4, pid);
    MDB_val key = {8, k}, v;
    int rc = db_names_proc(&w->names, pid) ? 0 : mdb_get(w->txn, w->a->dbi[DBI_PROCS], &key, &v);
    if (rc == MDB_NOTFOUND)
        w->info.processes++;
    else if (rc)
        return db_lmdb_fail(err, rc, "read");
    size_t n = strnlen(name, DB_NAME_MAX - 1);
    db_names_set_proc(&w->names, pid, name, n);
    return db_wr_put(w, DBI_PROCS, k, 8, name, n, err);
}

int db_writer_thread_back(db_writer *w, const db_thread *t, db_error *err)
{
    unsigned char k[8];
    db_put_be32(k, w->info.id);
    db_put_be32(k + 4, t->tid);
    MDB_val key = {8, k}, v;
    int rc = db_names_thread(&w->names, t->tid) ? 0 : mdb_get(w->txn, w->a->dbi[DBI_THREADS], &key, &v);
    if (rc == MDB_NOTFOUND)
        w->info.threads++;
    else if (rc)
        return db_lmdb_fail(err, rc, "read");
    db_thread copy = db_thread_stored(t);
    db_names_set_thread(&w->names, &copy);
    return db_wr_put(w, DBI_THREADS, k, 8, &copy, sizeof copy, err);
}

int db_writer_symbol_back(db_writer *w, uint64_t addr, const char *name, db_error *err)
{
    unsigned char k[12];
    db_put_be32(k, w->info.id);
    db_put_be64(k + 4, addr);
    return db_wr_put(w, DBI_SYMBOLS, k, 12, name, strnlen(name, 255), err);
}

/* key and value checked (db_writer_label) */
int db_writer_label_back(db_writer *w, const char *key, const char *value, db_error *err)
{
    unsigned char k[4 + DB_LABEL_KEY_MAX];
    return db_wr_put(w, DBI_LABELS, k, db_label_key(k, w->info.id, key), value, strlen(value), err);
}

int db_writer_get_thread_back(db_writer *w, uint32_t tid, db_thread *out, db_error *err)
{
    const db_thread *t = db_names_thread(&w->names, tid);
    if (t) {
        *out = *t;
        return 1;
    }
    unsigned char k[8];
    db_put_be32(k, w->info.id);
    db_put_be32(k + 4, tid);
    MDB_val key = {8, k}, v;
    int rc = mdb_get(w->txn, w->a->dbi[DBI_THREADS], &key, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc || v.mv_size != sizeof *out)
        return rc ? db_lmdb_fail(err, rc, "read") : db_fail(err, -1, "damaged thread record");
    memcpy(out, v.mv_data, sizeof *out);
    db_names_set_thread(&w->names, out);
    return 1;
}

int db_writer_get_proc_back(db_writer *w, uint32_t pid, char *name, size_t len, db_error *err)
{
    const char *have = db_names_proc(&w->names, pid);
    if (have) {
        db_name_copy(name, len, have, strlen(have));
        return 1;
    }
    unsigned char k[8];
    db_put_be32(k, w->info.id);
    db_put_be32(k + 4, pid);
    MDB_val key = {8, k}, v;
    int rc = mdb_get(w->txn, w->a->dbi[DBI_PROCS], &key, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return db_lmdb_fail(err, rc, "read");
    db_names_set_proc(&w->names, pid, v.mv_data, v.mv_size);
    db_name_copy(name, len, v.mv_data, v.mv_size);
    return 1;
}

void db_writer_skip_back(db_writer *w) { w->info.skipped++; }

struct last_rule {
    uint32_t seq;
};

static int last_rule_cb(void *ctx, uint32_t seq, const char *text)
{
    (void)text;
    ((struct last_rule *)ctx)->seq = seq;
    return 0;
}

int db_writer_add_rule_back(db_writer *w, const char *text, size_t len, uint32_t *seq, db_error *err)
{
    struct last_rule l = {0};
    if (db_writer_scan_rules_back(w, last_rule_cb, &l, err))
        return -1;
    unsigned char k[8];
    db_put_be32(k, w->info.id);
    db_put_be32(k + 4, l.seq + 1);
    *seq = l.seq + 1;
    MDB_val key = {8, k}, v = {len, (void *)text};
    int rc = mdb_put(w->txn, w->a->dbi[DBI_RULES], &key, &v, 0);
    return rc ? db_lmdb_fail(err, rc, "write") : 0;
}

int db_writer_drop_rule_back(db_writer *w, uint32_t seq, db_error *err)
{
    unsigned char k[8];
    db_put_be32(k, w->info.id);
    db_put_be32(k + 4, seq);
    MDB_val key = {8, k};
    int rc = mdb_del(w->txn, w->a->dbi[DBI_RULES], &key, NULL);
    if (rc == MDB_NOTFOUND)
        return 0;
    return rc ? db_lmdb_fail(err, rc, "delete") : 1;
}

int db_writer_scan_rules_back(db_writer *w, db_rule_cb cb, void *ctx, db_error *err)
{
    return db_scan_rules_txn(w->txn, w->a->dbi[DBI_RULES], w->info.id, cb, ctx, err);
}
