/* db/catalog.c -- the catalog of an archive's traces: its entries read
 * and written (traces: name -> db_trace_info; trace_ids: a slot -> name,
 * the listing's order; meta "latest"), the names a trace and a label may
 * have, and a label's key.  Read by every reader and writer; changed as
 * a whole by manage.c (drop, rename, label) and writer_life.c (a new trace,
 * a rebuild's swap). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "db_int.h"

/* ---- entries ---- */

int db_catalog_decode(const MDB_val *v, db_trace_info *out)
{
    uint32_t ver;
    if (v->mv_size != sizeof ver + sizeof *out)
        return -1;
    memcpy(&ver, v->mv_data, sizeof ver);
    if (ver != DB_TRACE_INFO_VERSION)
        return -1;
    memcpy(out, (const char *)v->mv_data + sizeof ver, sizeof *out);
    return 0;
}

/* Catalog lookup by name, inside any transaction. */
int db_catalog_get(db_archive *a, MDB_txn *txn, const char *name, db_trace_info *out, db_error *err)
{
    MDB_val k = {strlen(name), (void *)name}, v;
    int rc = mdb_get(txn, a->dbi[DBI_TRACES], &k, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return db_lmdb_fail(err, rc, "catalog");
    if (db_catalog_decode(&v, out))
        return db_fail(err, -1, "%s: catalog entry of trace \"%s\" is damaged", a->path, name);
    return 1;
}

static int with_read_txn(db_archive *a, MDB_txn **txn, db_error *err)
{
    int rc = mdb_txn_begin(a->env, NULL, MDB_RDONLY, txn);
    return rc ? db_lmdb_fail(err, rc, "read transaction") : 0;
}

int db_list_traces(db_archive *a, db_trace_cb cb, void *ctx, db_error *err)
{
    MDB_txn *txn;
    if (with_read_txn(a, &txn, err))
        return -1;
    /* trace_ids is in the order traces were ingested (a rebuilt trace
     * keeps its place there, under the id it was ingested with) */
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn, a->dbi[DBI_TRACE_IDS], &c), ret = 0;
    MDB_val k, v, *seen = NULL;
    size_t nseen = 0;
    for (rc = rc ? rc : mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0 && ret == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        char name[256];
        if (v.mv_size >= sizeof name)
            continue;
        /* a name under a second slot, which an archive written before the
         * writer kept a rebuilt trace's slot may hold (the next writer
         * deletes it, writer_life.c): listed once, at its first slot */
        bool repeat = false;
        for (size_t i = 0; i < nseen && !repeat; i++)
            repeat = seen[i].mv_size == v.mv_size && memcmp(seen[i].mv_data, v.mv_data, v.mv_size) == 0;
        if (repeat)
            continue;
        MDB_val *more = realloc(seen, (nseen + 1) * sizeof *seen);
        if (!more) {
            ret = db_fail(err, -1, "out of memory");
            break;
        }
        seen = more;
        seen[nseen++] = v; /* the map's bytes: they stay while the read transaction lasts */
        memcpy(name, v.mv_data, v.mv_size);
        name[v.mv_size] = 0;
        db_trace_info t;
        int got = db_catalog_get(a, txn, name, &t, err);
        if (got < 0) {
            ret = -1;
            break;
        }
        if (got && t.state == DB_TRACE_COMPLETE) /* never part of a trace */
            ret = cb(ctx, &t);
    }
    if (rc && rc != MDB_NOTFOUND && !ret)
        ret = db_lmdb_fail(err, rc, "catalog");
    free(seen);
    mdb_cursor_close(c);
    mdb_txn_abort(txn);
    return ret;
}

int db_find_trace(db_archive *a, const char *name, db_trace_info *out, db_error *err)
{
    MDB_txn *txn;
    if (with_read_txn(a, &txn, err))
        return -1;
    int got = db_catalog_get(a, txn, name, out, err);
    mdb_txn_abort(txn);
    return got == 1 && out->state != DB_TRACE_COMPLETE ? 0 : got;
}

int db_latest_trace(db_archive *a, db_trace_info *out, db_error *err)
{
    MDB_txn *txn;
    if (with_read_txn(a, &txn, err))
        return -1;
    MDB_val k = {6, "latest"}, v;
    int rc = mdb_get(txn, a->dbi[DBI_META], &k, &v), got = 0;
    if (rc == 0 && v.mv_size == 4) {
        MDB_val nk, nv;
        unsigned char id[4];
        memcpy(id, v.mv_data, 4);
        nk = (MDB_val){4, id};
        rc = mdb_get(txn, a->dbi[DBI_TRACE_IDS], &nk, &nv);
        if (rc == 0 && nv.mv_size < 256) {
            char name[256];
            memcpy(name, nv.mv_data, nv.mv_size);
            name[nv.mv_size] = 0;
            got = db_catalog_get(a, txn, name, out, err);
        }
    }
    if (rc && rc != MDB_NOTFOUND)
        got = db_lmdb_fail(err, rc, "catalog");
    mdb_txn_abort(txn);
    return got;
}

int db_catalog_put_entry(db_archive *a, MDB_txn *txn, const db_trace_info *t, db_error *err)
{
    unsigned char buf[sizeof(uint32_t) + sizeof *t];
    uint32_t ver = DB_TRACE_INFO_VERSION;
    memcpy(buf, &ver, sizeof ver);
    memcpy(buf + sizeof ver, t, sizeof *t);
    MDB_val k = {strlen(t->name), (void *)t->name}, v = {sizeof buf, buf};
    int rc = mdb_put(txn, a->dbi[DBI_TRACES], &k, &v, 0);
    return rc ? db_lmdb_fail(err, rc, "catalog") : 0;
}

/* Writes a catalog entry; `latest` makes it the default trace. */
int db_catalog_put(db_archive *a, MDB_txn *txn, const db_trace_info *t, bool latest, db_error *err)
{
    if (db_catalog_put_entry(a, txn, t, err))
        return -1;
    unsigned char id[4];
    db_put_be32(id, t->id);
    MDB_val ik = {4, id}, iv = {strlen(t->name), (void *)t->name};
    int rc = mdb_put(txn, a->dbi[DBI_TRACE_IDS], &ik, &iv, 0);
    MDB_val lk = {6, "latest"}, lv = {4, id};
    if (!rc && latest)
        rc = mdb_put(txn, a->dbi[DBI_META], &lk, &lv, 0);
    return rc ? db_lmdb_fail(err, rc, "catalog") : 0;
}

/* ---- names ---- */

int db_name_check(const char *name, db_error *err)
{
    size_t n = strlen(name);
    if (n == 0 || n >= sizeof ((db_trace_info *)0)->name)
        return db_fail(err, -1, "trace name must be 1 to 255 bytes");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)name[i] < 0x20)
            return db_fail(err, -1, "trace name may not contain control characters");
    return 0;
}

/* Slots of trace_ids that repeat a name listed under a lower slot.  A
 * trace keeps the slot it was ingested under; before this was checked, a
 * write into a rebuilt trace (a rule, a label) added a second slot under
 * the trace's new id, so an archive may hold such repeats: the first slot
 * is the trace's place in the listing, the others are deleted.  Every
 * writer does this as it begins (writer_life.c, reclaim). */
int db_catalog_drop_repeats(db_archive *a, MDB_txn *txn, db_error *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn, a->dbi[DBI_TRACE_IDS], &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    MDB_val *seen = NULL, k, v;
    size_t n = 0, cap = 0;
    int ret = 0;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0 && !ret; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        bool repeat = false;
        for (size_t i = 0; i < n && !repeat; i++)
            repeat = seen[i].mv_size == v.mv_size && memcmp(seen[i].mv_data, v.mv_data, v.mv_size) == 0;
        if (repeat) {
            if ((rc = mdb_cursor_del(c, 0)) != 0)
                ret = db_lmdb_fail(err, rc, "catalog");
            continue;
        }
        /* a copy: the data of a cursor's record moves when it deletes */
        MDB_val *more = n < cap ? seen : realloc(seen, (cap = cap ? 2 * cap : 16) * sizeof *seen);
        void *copy = more ? malloc(v.mv_size + 1) : NULL;
        if (more)
            seen = more;
        if (!copy) {
            ret = db_fail(err, -1, "out of memory");
            break;
        }
        memcpy(copy, v.mv_data, v.mv_size);
        seen[n++] = (MDB_val){v.mv_size, copy};
    }
    if (!ret && rc && rc != MDB_NOTFOUND)
        ret = db_lmdb_fail(err, rc, "catalog");
    mdb_cursor_close(c);
    for (size_t i = 0; i < n; i++)
        free(seen[i].mv_data);
    free(seen);
    return ret;
}

/* ---- labels (the labels table: id, key -> value) ---- */

int db_label_check(const char *key, size_t vlen, db_error *err)
{
    size_t n = strlen(key);
    bool ok = n > 0 && n <= DB_LABEL_KEY_MAX && (isalpha((unsigned char)key[0]) || key[0] == '_');
    for (size_t i = 1; ok && i < n; i++)
        ok = isalnum((unsigned char)key[i]) || key[i] == '_' || key[i] == '.';
    if (!ok)
        return db_fail(err, -1,
                       "label \"%s\": a label is a letter or '_' and then letters, digits, '_' or '.' "
                       "(at most %d)", key, DB_LABEL_KEY_MAX);
    if (vlen > DB_LABEL_VALUE_MAX)
        return db_fail(err, -1, "label %s: a value of %zu bytes (at most %d)", key, vlen, DB_LABEL_VALUE_MAX);
    return 0;
}

size_t db_label_key(unsigned char *k, uint32_t trace, const char *key)
{
    size_t n = strlen(key);
    db_put_be32(k, trace);
    memcpy(k + 4, key, n);
    return 4 + n;
}
