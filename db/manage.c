/* db/manage.c -- changes to the catalog of an archive's traces: a trace
 * dropped or renamed.
 *
 * The catalog (catalog.c) has two tables: `traces` (name -> the trace's
 * entry, whose id names its keys everywhere else) and `trace_ids` (a slot
 * id -> name: the listing's order, and the "latest" mark in meta names a
 * slot).  A rebuilt trace keeps its slot and gets a new id, so slot and
 * id can differ.
 *
 * Both changes are one write transaction under the writer lock: readers
 * see the archive before or after.  A dropped trace is hidden in that
 * transaction (its entry renamed to a name no user can give, its state
 * INGESTING, its slot gone), then deleted in committed steps as what a
 * killed ingest leaves (writer_life.c, reclaim): its pages are free for the
 * next writes at once, and a crash in between leaves the deletion to the
 * next writer.
 *
 * Also here: `argusq compact` (the archive copied without free pages, the
 * copy put in its place), `argusq backup` (a copy of the last commit,
 * while others read and write) and `argusq info`. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_int.h"

/* The slot of the trace named `name` in trace_ids: 1 (*slot set), 0, -1. */
static int find_slot(db_archive *a, MDB_txn *txn, const char *name, uint32_t *slot, db_error *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn, a->dbi[DBI_TRACE_IDS], &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    MDB_val k, v;
    size_t n = strlen(name);
    int got = 0;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT))
        if (k.mv_size == 4 && v.mv_size == n && memcmp(v.mv_data, name, n) == 0) {
            *slot = db_get_be32(k.mv_data);
            got = 1;
            break;
        }
    mdb_cursor_close(c);
    if (!got && rc != MDB_NOTFOUND)
        return db_lmdb_fail(err, rc, "catalog");
    return got;
}

/* The committed trace named `name`, in the writer's transaction. */
static int get_trace(db_archive *a, MDB_txn *txn, const char *name, db_trace_info *t, db_error *err)
{
    int got = db_catalog_get(a, txn, name, t, err);
    if (got == 0 || (got > 0 && t->state != DB_TRACE_COMPLETE))
        return db_fail(err, -1, "no trace named \"%s\" in %s", name, a->path);
    return got < 0 ? -1 : 0;
}

/* "latest" names a slot: when that slot goes, the default trace is the
 * one ingested last of those left. */
static int move_latest(db_archive *a, MDB_txn *txn, uint32_t gone, db_error *err)
{
    MDB_val lk = {6, "latest"}, lv;
    int rc = mdb_get(txn, a->dbi[DBI_META], &lk, &lv);
    if (rc == MDB_NOTFOUND || (rc == 0 && (lv.mv_size != 4 || db_get_be32(lv.mv_data) != gone)))
        return 0;
    if (rc)
        return db_lmdb_fail(err, rc, "catalog");
    MDB_cursor *c;
    if ((rc = mdb_cursor_open(txn, a->dbi[DBI_TRACE_IDS], &c)) != 0)
        return db_lmdb_fail(err, rc, "cursor");
    MDB_val k, v;
    unsigned char id[4];
    rc = mdb_cursor_get(c, &k, &v, MDB_LAST);
    if (rc == 0 && k.mv_size == 4)
        memcpy(id, k.mv_data, 4);
    mdb_cursor_close(c);
    if (rc == MDB_NOTFOUND)
        rc = mdb_del(txn, a->dbi[DBI_META], &lk, NULL);
    else if (rc == 0) {
        lv = (MDB_val){4, id};
        rc = mdb_put(txn, a->dbi[DBI_META], &lk, &lv, 0);
    }
    return rc ? db_lmdb_fail(err, rc, "catalog") : 0;
}

int db_drop_trace(db_archive *a, const char *name, db_trace_info *out, db_error *err)
{
    db_writer *w = db_writer_catalog(a, err);
    if (!w)
        return -1;
    MDB_txn *txn = db_writer_txn(w);
    db_trace_info t;
    uint32_t slot = 0;
    int got;
    if (get_trace(a, txn, name, &t, err) || (got = find_slot(a, txn, name, &slot, err)) < 0)
        goto fail;
    if (out)
        *out = t;
    MDB_val nk = {strlen(name), (void *)name};
    int rc = mdb_del(txn, a->dbi[DBI_TRACES], &nk, NULL);
    if (!rc && got) {
        unsigned char id[4];
        db_put_be32(id, slot);
        MDB_val ik = {4, id};
        rc = mdb_del(txn, a->dbi[DBI_TRACE_IDS], &ik, NULL);
    }
    if (rc) {
        db_lmdb_fail(err, rc, "catalog");
        goto fail;
    }
    /* hidden, and deleted by the commit's reclaim */
    snprintf(t.name, sizeof t.name, "\001dropped %u", t.id);
    t.state = DB_TRACE_INGESTING;
    if (db_catalog_put_entry(a, txn, &t, err) || (got && move_latest(a, txn, slot, err)))
        goto fail;
    return db_writer_catalog_commit(w, err);
fail:
    db_writer_abort(w);
    return -1;
}

int db_rename_trace(db_archive *a, const char *from, const char *to, db_error *err)
{
    if (db_name_check(to, err))
        return -1;
    db_writer *w = db_writer_catalog(a, err);
    if (!w)
        return -1;
    MDB_txn *txn = db_writer_txn(w);
    db_trace_info t, other;
    uint32_t slot = 0;
    int got, taken;
    if (get_trace(a, txn, from, &t, err) || (taken = db_catalog_get(a, txn, to, &other, err)) < 0 ||
        (got = find_slot(a, txn, from, &slot, err)) < 0)
        goto fail;
    if (taken && strcmp(from, to) != 0) {
        db_fail(err, -1, "trace \"%s\" already exists in %s", to, a->path);
        goto fail;
    }
    MDB_val nk = {strlen(from), (void *)from};
    int rc = mdb_del(txn, a->dbi[DBI_TRACES], &nk, NULL);
    snprintf(t.name, sizeof t.name, "%s", to);
    if (!rc && got) {
        unsigned char id[4];
        db_put_be32(id, slot);
        MDB_val ik = {4, id}, iv = {strlen(to), (void *)to};
        rc = mdb_put(txn, a->dbi[DBI_TRACE_IDS], &ik, &iv, 0);
    }
    if (rc) {
        db_lmdb_fail(err, rc, "catalog");
        goto fail;
    }
    if (db_catalog_put_entry(a, txn, &t, err))
        goto fail;
    return db_writer_catalog_commit(w, err);
fail:
    db_writer_abort(w);
    return -1;
}

/* ---- compact, backup, info ---- */

/* compact's copy into a new file (O_EXCL: never over another file),
 * synced; db_replace_file puts it in the archive's place. */
static int copy_to(db_writer *w, const char *path, db_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return db_fail(err, -1, "%s: %s", path, strerror(errno));
    int rc = db_writer_copy(w, fd, true, err);
    if (!rc && fsync(fd) != 0)
        rc = db_fail(err, -1, "%s: %s", path, strerror(errno));
    if (close(fd) != 0 && !rc)
        rc = db_fail(err, -1, "%s: %s", path, strerror(errno));
    if (rc)
        unlink(path);
    return rc;
}

int db_compact(db_archive *a, uint64_t *before, uint64_t *after, db_error *err)
{
    struct stat st;
    db_writer *w = db_writer_catalog(a, err); /* the lock; dropped traces deleted */
    if (!w)
        return -1;
    db_remove_leftovers(a->path);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.compact-%ld", a->path, (long)getpid());
    int rc = stat(a->path, &st) == 0 ? 0 : db_fail(err, -1, "%s: %s", a->path, strerror(errno));
    *before = rc ? 0 : (uint64_t)st.st_size;
    if (!rc)
        rc = copy_to(w, tmp, err);
    if (!rc && stat(tmp, &st) == 0)
        *after = (uint64_t)st.st_size;
    /* the new file takes the archive's name in one step: a crash leaves
     * the old archive or the new one (and at worst the copy beside it) */
    if (!rc && (rc = db_replace_file(tmp, a->path, err)) != 0)
        unlink(tmp);
    db_writer_abort(w); /* holds nothing now: the lock goes */
    return rc;
}

int db_backup(db_archive *a, const char *path, db_error *err)
{
    base_outfile o;
    if (base_outfile_open(&o, path, BASE_OUTFILE_EXCL, err->msg, sizeof err->msg))
        return -1;
    /* LMDB writes the copy by fd: nothing went through o.f's buffer */
    int rc = mdb_env_copyfd2(a->env, fileno(o.f), MDB_CP_COMPACT);
    if (rc) {
        base_outfile_abort(&o);
        return db_lmdb_fail(err, rc, "copy");
    }
    return base_outfile_commit(&o, err->msg, sizeof err->msg);
}

static int info_trace(void *ctx, const db_trace_info *t)
{
    db_archive_info *o = ctx;
    o->traces++;
    o->events += t->events;
    o->nodes += t->nodes;
    o->edges += t->edges;
    return 0;
}

int db_info(db_archive *a, db_archive_info *out, db_error *err)
{
    memset(out, 0, sizeof *out);
    MDB_envinfo ei;
    MDB_stat ms;
    int fd, rc;
    struct stat st;
    if ((rc = mdb_env_info(a->env, &ei)) != 0 || (rc = mdb_env_stat(a->env, &ms)) != 0)
        return db_lmdb_fail(err, rc, a->path);
    if (mdb_env_get_fd(a->env, &fd) == 0 && fstat(fd, &st) == 0)
        out->file_bytes = (uint64_t)st.st_size;
    out->page_size = ms.ms_psize;
    out->pages_used = (uint64_t)ei.me_last_pgno + 1;
    MDB_txn *txn;
    if ((rc = mdb_txn_begin(a->env, NULL, MDB_RDONLY, &txn)) != 0)
        return db_lmdb_fail(err, rc, "read transaction");
    /* LMDB's free list (its database 0): each record a list of pages,
     * its first word their count */
    MDB_cursor *c;
    uint64_t freed = 0;
    if ((rc = mdb_cursor_open(txn, 0, &c)) == 0) {
        MDB_val k, v;
        while ((rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) == 0)
            if (v.mv_size >= sizeof(size_t)) {
                size_t n;
                memcpy(&n, v.mv_data, sizeof n);
                freed += n;
            }
        mdb_cursor_close(c);
    }
    MDB_val fk = {6, "format"}, fv;
    if (mdb_get(txn, a->dbi[DBI_META], &fk, &fv) == 0 && fv.mv_size == 4)
        memcpy(&out->format, fv.mv_data, 4);
    mdb_txn_abort(txn);
    if (rc && rc != MDB_NOTFOUND)
        return db_lmdb_fail(err, rc, "free list");
    /* pages past the last one used, in a file LMDB grew ahead, are free too */
    uint64_t in_file = out->file_bytes / out->page_size;
    out->pages_free = freed + (in_file > out->pages_used ? in_file - out->pages_used : 0);
    return db_list_traces(a, info_trace, out, err);
}

/* ---- labels (the labels table: id, key -> value) ---- */

int db_label_trace(db_archive *a, const char *name, const char *key, const char *value, db_error *err)
{
    if (db_label_check(key, value ? strlen(value) : 0, err))
        return -1;
    db_writer *w = db_writer_catalog(a, err);
    if (!w)
        return -1;
    MDB_txn *txn = db_writer_txn(w);
    db_trace_info t;
    if (get_trace(a, txn, name, &t, err)) {
        db_writer_abort(w);
        return -1;
    }
    unsigned char k[4 + DB_LABEL_KEY_MAX];
    MDB_val kv = {db_label_key(k, t.id, key), k}, vv = {value ? strlen(value) : 0, (void *)value};
    int rc = value ? mdb_put(txn, a->dbi[DBI_LABELS], &kv, &vv, 0) : mdb_del(txn, a->dbi[DBI_LABELS], &kv, NULL);
    if (rc == MDB_NOTFOUND) {
        db_writer_abort(w);
        return 0;
    }
    if (rc) {
        db_lmdb_fail(err, rc, "labels");
        db_writer_abort(w);
        return -1;
    }
    return db_writer_catalog_commit(w, err) ? -1 : 1;
}

struct label_scan {
    db_label_cb cb;
    void *ctx;
};

static int label_one(void *ctx, const MDB_val *k, const MDB_val *v)
{
    struct label_scan *ls = ctx;
    char key[DB_LABEL_KEY_MAX + 1];
    if (k->mv_size <= 4 || k->mv_size - 4 > DB_LABEL_KEY_MAX)
        return 0;
    memcpy(key, (const char *)k->mv_data + 4, k->mv_size - 4);
    key[k->mv_size - 4] = 0;
    return ls->cb(ls->ctx, key, v->mv_data, v->mv_size);
}

int db_trace_labels(db_archive *a, uint32_t trace, db_label_cb cb, void *ctx, db_error *err)
{
    MDB_txn *txn;
    int rc = mdb_txn_begin(a->env, NULL, MDB_RDONLY, &txn);
    if (rc)
        return db_lmdb_fail(err, rc, "read transaction");
    unsigned char k[4];
    db_put_be32(k, trace);
    struct label_scan ls = {cb, ctx};
    rc = db_scan_prefix(txn, a->dbi[DBI_LABELS], k, 4, k, 4, label_one, &ls, err);
    mdb_txn_abort(txn);
    return rc;
}
