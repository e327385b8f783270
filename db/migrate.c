/* db/migrate.c -- an archive of an earlier format made current, keeping
 * every trace.
 *
 * What an archive holds falls in two parts.  What was recorded -- the
 * catalog, the events with their attributes, threads, processes, symbols
 * and user rules -- changed its layout rarely (formats 2 and 3 kept an
 * event a record; 4 put events in blocks, db/evblock.c).  What is derived
 * from it -- nodes, edges, the indexes, signatures -- changed with almost
 * every format, and is rebuilt by the current rules anyway.  So a
 * migration copies the recorded part into a new file of this format
 * beside the archive (PATH.migrate-PID), re-encoding it where its layout
 * changed; the caller rebuilds each trace's graph there (query_migrate:
 * `rebuild graph` of every trace); db_migrate_commit renames the new file
 * over the archive.  A crash leaves the old archive or the new one; the
 * writer lock of the old file is held throughout, so no ingest of this
 * argusq writes into the file being replaced.
 *
 * Format history (DB_FORMAT_VERSION): 1 (no format record; before the
 * graph was built in the stream: not migrated, re-ingest), 2 (events one
 * record each, catalog entries of version 2), 3 (catalog version 3: the
 * unordered flag), 4 (events in blocks), 5 (nodes' running and runnable),
 * 6 (edges in blocks, object indexes and signatures in chunks), 7 (the
 * labels table; 6 was migrated to 7 in place), 8 (nodes' oncpu, and
 * runnable time from sched_waking: every graph rebuilt).
 * tests/fixtures/formats holds an archive of each, written by the commit
 * that last wrote it (make-fixtures.sh), and tests/e2e/test_formats.py
 * checks that each migrates and answers as that argusq did. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_int.h"

#define MIGRATE_FIRST 2u           /* the oldest format migrated */
#define MIGRATE_COMMIT (32u << 20) /* bytes copied between commits of the new file */

struct db_migration {
    char path[4096];
    char tmp[4200];
    int lock_fd;     /* the old file, flocked: its writer lock */
    MDB_env *old;    /* the old file, read only */
    uint32_t from;   /* its format */
    db_archive *to;  /* the new file */
    MDB_txn *txn;    /* of the new file */
    uint64_t copied; /* bytes since the last commit */
    uint32_t *ids;   /* the old archive's complete traces */
    size_t nids;
};

/* Formats 2 and 3: an event's fixed part, its name and attributes after
 * it (the codec of those formats, db/codec.c at 7111534 and b474407). */
typedef struct migrate_event_rec {
    uint64_t ts;
    uint64_t obj;
    int64_t val;
    uint32_t tid, pid, node;
    uint32_t attrs_len;
    uint16_t cpu;
    uint16_t name_len;
    uint8_t type, phase, ctx, pad;
} migrate_event_rec;

static int migrate_event_decode(const MDB_val *k, const MDB_val *v, db_event *out)
{
    migrate_event_rec r;
    if (k->mv_size != 12 || v->mv_size < sizeof r)
        return -1;
    memcpy(&r, v->mv_data, sizeof r);
    const char *p = (const char *)v->mv_data + sizeof r;
    if (sizeof r + (size_t)r.name_len + r.attrs_len != v->mv_size || (r.name_len && p[r.name_len - 1]) ||
        r.type >= DB_EV__COUNT)
        return -1;
    *out = (db_event){
        .id = db_get_be64((const unsigned char *)k->mv_data + 4), .ts = r.ts, .tid = r.tid, .pid = r.pid,
        .cpu = r.cpu, .type = r.type, .phase = r.phase, .ctx = r.ctx, .obj = r.obj, .val = r.val,
        .name = r.name_len ? p : "", .attrs = p + r.name_len, .attrs_len = r.attrs_len,
    };
    return 0;
}

static int db_format_of_env(MDB_env *env, uint32_t *fmt)
{
    MDB_txn *txn;
    MDB_dbi meta;
    int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (rc)
        return rc;
    *fmt = 0;
    rc = mdb_dbi_open(txn, "meta", 0, &meta);
    MDB_val k = {6, "format"}, v;
    if (!rc && (rc = mdb_get(txn, meta, &k, &v)) == 0 && v.mv_size == 4)
        memcpy(fmt, v.mv_data, 4);
    else if (rc == MDB_NOTFOUND)
        *fmt = 1, rc = 0;
    mdb_txn_abort(txn);
    return rc;
}

static void migration_free(db_migration *m)
{
    if (m->txn)
        mdb_txn_abort(m->txn);
    db_close(m->to);
    if (m->old)
        mdb_env_close(m->old);
    if (m->lock_fd >= 0)
        close(m->lock_fd);
    free(m->ids);
    free(m);
}

void db_migrate_abort(db_migration *m)
{
    if (!m)
        return;
    bool made = m->to != NULL;
    char tmp[sizeof m->tmp];
    memcpy(tmp, m->tmp, sizeof tmp);
    migration_free(m);
    if (made) {
        unlink(tmp);
        char lock[sizeof tmp + 8];
        snprintf(lock, sizeof lock, "%s-lock", tmp);
        unlink(lock);
    }
}

/* A commit of the new file every MIGRATE_COMMIT bytes: its dirty pages
 * stay bounded.  Unsynced: no one opens the file before the final sync
 * (db_migrate_commit) and the rename. */
static int put(db_migration *m, MDB_dbi dbi, MDB_val *k, MDB_val *v, db_error *err)
{
    int rc = mdb_put(m->txn, dbi, k, v, 0);
    if (rc)
        return db_lmdb_fail(err, rc, m->tmp);
    m->copied += k->mv_size + v->mv_size;
    if (m->copied < MIGRATE_COMMIT)
        return 0;
    m->copied = 0;
    rc = mdb_txn_commit(m->txn);
    m->txn = NULL;
    if (!rc)
        rc = mdb_txn_begin(m->to->env, NULL, 0, &m->txn);
    return rc ? db_lmdb_fail(err, rc, m->tmp) : 0;
}

static bool complete(const db_migration *m, const MDB_val *k)
{
    if (k->mv_size < 4)
        return false;
    uint32_t id = db_get_be32(k->mv_data);
    for (size_t i = 0; i < m->nids; i++)
        if (m->ids[i] == id)
            return true;
    return false;
}

/* The catalog: complete traces only (an ingest killed under an older
 * argusq left its hidden entry; the old argusq would have deleted it).
 * Version 2 entries are version 3's without the unordered flag, which is
 * set: the rebuild finds out again. */
static int copy_catalog(db_migration *m, MDB_txn *rt, db_error *err)
{
    MDB_dbi traces, ids;
    int rc = mdb_dbi_open(rt, "traces", 0, &traces);
    if (!rc)
        rc = mdb_dbi_open(rt, "trace_ids", 0, &ids);
    if (rc)
        return db_lmdb_fail(err, rc, m->path);
    MDB_cursor *c;
    if ((rc = mdb_cursor_open(rt, traces, &c)) != 0)
        return db_lmdb_fail(err, rc, m->path);
    MDB_val k, v;
    int ret = 0;
    while (!ret && (rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) == 0) {
        uint32_t ver;
        db_trace_info t;
        if (v.mv_size != sizeof ver + sizeof t) {
            ret = db_fail(err, -1, "%s: a catalog entry of %zu bytes: not format %u's", m->path, v.mv_size,
                          m->from);
            break;
        }
        memcpy(&ver, v.mv_data, sizeof ver);
        memcpy(&t, (const char *)v.mv_data + sizeof ver, sizeof t);
        if (ver != 2 && ver != DB_TRACE_INFO_VERSION) {
            ret = db_fail(err, -1, "%s: a catalog entry of version %u", m->path, ver);
            break;
        }
        if (ver == 2)
            t.unordered = 1;
        t.name[sizeof t.name - 1] = 0;
        if (t.state != DB_TRACE_COMPLETE)
            continue;
        uint32_t *p = realloc(m->ids, (m->nids + 1) * sizeof *p);
        if (!p) {
            ret = db_fail_oom(err);
            break;
        }
        m->ids = p;
        m->ids[m->nids++] = t.id;
        ret = db_catalog_put_entry(m->to, m->txn, &t, err);
    }
    mdb_cursor_close(c);
    if (ret)
        return -1;
    if (rc != MDB_NOTFOUND)
        return db_lmdb_fail(err, rc, m->path);
    /* the listing's order and names, of complete traces: keyed by the id
     * a trace was first ingested with, which a rebuild does not change
     * (its copy's id is the catalog's), so found by name */
    if ((rc = mdb_cursor_open(rt, ids, &c)) != 0)
        return db_lmdb_fail(err, rc, m->path);
    while (!ret && (rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) == 0) {
        MDB_val tv;
        uint32_t state;
        int got = mdb_get(rt, traces, &v, &tv);
        if (got == MDB_NOTFOUND || (got == 0 && tv.mv_size < 4 + sizeof(db_trace_info)))
            continue;
        if (got) {
            ret = db_lmdb_fail(err, got, m->path);
            break;
        }
        memcpy(&state, (const char *)tv.mv_data + 4 + offsetof(db_trace_info, state), sizeof state);
        if (state == DB_TRACE_COMPLETE)
            ret = put(m, m->to->dbi[DBI_TRACE_IDS], &k, &v, err);
    }
    mdb_cursor_close(c);
    return ret ? -1 : rc == MDB_NOTFOUND ? 0 : db_lmdb_fail(err, rc, m->path);
}

/* A table whose layout is this format's: its entries as they are (of
 * complete traces, when its keys start with a trace id). */
static int copy_table(db_migration *m, MDB_txn *rt, const char *name, int to, bool by_trace, db_error *err)
{
    MDB_dbi dbi;
    int rc = mdb_dbi_open(rt, name, 0, &dbi);
    if (rc == MDB_NOTFOUND)
        return 0;
    MDB_cursor *c;
    if (rc || (rc = mdb_cursor_open(rt, dbi, &c)) != 0)
        return db_lmdb_fail(err, rc, m->path);
    MDB_val k, v;
    int ret = 0;
    while (!ret && (rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) == 0) {
        if (to == DBI_META && k.mv_size == 6 && memcmp(k.mv_data, "format", 6) == 0)
            continue;
        if (!by_trace || complete(m, &k))
            ret = put(m, m->to->dbi[to], &k, &v, err);
    }
    mdb_cursor_close(c);
    return ret ? -1 : rc == MDB_NOTFOUND ? 0 : db_lmdb_fail(err, rc, m->path);
}

static int put_block(db_migration *m, db_evblock_enc *enc, uint32_t trace, db_error *err)
{
    if (!db_evblock_enc_count(enc))
        return 0;
    unsigned char k[12];
    db_put_be32(k, trace);
    db_put_be64(k + 4, db_evblock_enc_first(enc));
    size_t len;
    const unsigned char *b = db_evblock_enc_bytes(enc, &len);
    MDB_val key = {sizeof k, k}, v = {len, (void *)b};
    int rc = put(m, m->to->dbi[DBI_EVENTS], &key, &v, err);
    db_evblock_enc_reset(enc);
    return rc;
}

/* Formats 2 and 3: each event its own record, put into blocks of
 * consecutive ids as an ingest does. */
static int copy_event_records(db_migration *m, MDB_txn *rt, db_error *err)
{
    MDB_dbi dbi;
    MDB_cursor *c;
    int rc = mdb_dbi_open(rt, "events", 0, &dbi);
    if (rc || (rc = mdb_cursor_open(rt, dbi, &c)) != 0)
        return db_lmdb_fail(err, rc, m->path);
    db_evblock_enc *enc = db_evblock_enc_new();
    if (!enc) {
        mdb_cursor_close(c);
        return db_fail_oom(err);
    }
    uint32_t trace = 0;
    uint64_t last = 0;
    MDB_val k, v;
    int ret = 0;
    while (!ret && (rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) == 0) {
        if (!complete(m, &k))
            continue;
        db_event ev;
        if (migrate_event_decode(&k, &v, &ev)) {
            ret = db_fail(err, -1, "%s: a damaged event record (trace %u, event %llu)", m->path,
                          db_get_be32(k.mv_data),
                          k.mv_size == 12 ? (unsigned long long)db_get_be64((const unsigned char *)k.mv_data + 4)
                                          : 0ull);
            break;
        }
        uint32_t t = db_get_be32(k.mv_data);
        if (t != trace || ev.id != last + 1) { /* a block holds consecutive ids of one trace */
            ret = put_block(m, enc, trace, err);
            trace = t;
        }
        last = ev.id;
        int add = ret ? 0 : db_evblock_enc_add(enc, &ev);
        if (add == 1 && !(ret = put_block(m, enc, trace, err)))
            add = db_evblock_enc_add(enc, &ev);
        if (!ret && add)
            ret = db_fail_oom(err);
    }
    if (!ret && rc != MDB_NOTFOUND)
        ret = db_lmdb_fail(err, rc, m->path);
    if (!ret)
        ret = put_block(m, enc, trace, err);
    db_evblock_enc_free(enc);
    mdb_cursor_close(c);
    return ret;
}

static int copy_recorded(db_migration *m, db_error *err)
{
    MDB_txn *rt;
    int rc = mdb_txn_begin(m->old, NULL, MDB_RDONLY, &rt);
    if (rc)
        return db_lmdb_fail(err, rc, m->path);
    if ((rc = mdb_txn_begin(m->to->env, NULL, 0, &m->txn)) != 0) {
        mdb_txn_abort(rt);
        return db_lmdb_fail(err, rc, m->tmp);
    }
    int ret = copy_catalog(m, rt, err);
    if (!ret)
        ret = copy_table(m, rt, "meta", DBI_META, false, err);
    static const struct {
        const char *name;
        int dbi;
    } same[] = {{"threads", DBI_THREADS}, {"procs", DBI_PROCS}, {"symbols", DBI_SYMBOLS}, {"rules", DBI_RULES},
                {"labels", DBI_LABELS}};
    for (size_t i = 0; !ret && i < sizeof same / sizeof same[0]; i++)
        ret = copy_table(m, rt, same[i].name, same[i].dbi, true, err);
    if (!ret)
        ret = m->from >= 4 ? copy_table(m, rt, "events", DBI_EVENTS, true, err) : copy_event_records(m, rt, err);
    mdb_txn_abort(rt);
    if (!ret) {
        rc = mdb_txn_commit(m->txn);
        m->txn = NULL;
        if (rc)
            ret = db_lmdb_fail(err, rc, m->tmp);
    }
    return ret;
}

/* The archive's file with LMDB alone (db_open would refuse its format). */
static int open_env(const char *path, unsigned flags, MDB_env **env)
{
    int rc = mdb_env_create(env);
    if (rc) {
        *env = NULL;
        return rc;
    }
    if (!(rc = mdb_env_set_maxdbs(*env, 32)) && !(rc = mdb_env_set_mapsize(*env, (size_t)1 << 40)))
        rc = mdb_env_open(*env, path, MDB_NOSUBDIR | MDB_NOTLS | flags, 0644);
    return rc;
}

db_migration *db_migrate_begin(const char *path, uint32_t *from, db_error *err)
{
    db_migration *m = calloc(1, sizeof *m);
    if (!m) {
        db_fail_oom(err);
        return NULL;
    }
    m->lock_fd = -1;
    snprintf(m->path, sizeof m->path, "%s", path);
    snprintf(m->tmp, sizeof m->tmp, "%s.migrate-%ld", path, (long)getpid());
    /* the writer lock of this argusq (db/writer_life.c): on the file itself */
    m->lock_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (m->lock_fd < 0 || flock(m->lock_fd, LOCK_EX) != 0) {
        db_fail(err, -1, "%s: cannot take the writer lock: %s", path, strerror(errno));
        migration_free(m);
        return NULL;
    }
    int rc = open_env(path, MDB_RDONLY, &m->old);
    if (!rc)
        rc = db_format_of_env(m->old, &m->from);
    if (rc) {
        db_lmdb_fail(err, rc, path);
        migration_free(m);
        return NULL;
    }
    *from = m->from;
    /* another process may have migrated it while this one waited for the
     * lock: the file at path is then the new one, of this format */
    if (m->from == DB_FORMAT_VERSION) {
        migration_free(m);
        return NULL;
    }
    if (m->from < MIGRATE_FIRST || m->from > DB_FORMAT_VERSION) {
        if (m->from < MIGRATE_FIRST)
            db_fail(err, -1, "%s: archive format %u, from before argusq kept a format record: it cannot be "
                             "migrated (re-ingest the traces)", path, m->from);
        else
            db_fail(err, -1, "%s: archive format %u, newer than this argusq's %u: use a newer argusq", path,
                    m->from, DB_FORMAT_VERSION);
        migration_free(m);
        return NULL;
    }
    db_remove_leftovers(path); /* of killed migrations (the lock is held) */
    if (!(m->to = db_open(m->tmp, false, err)) || copy_recorded(m, err)) {
        db_migrate_abort(m);
        return NULL;
    }
    return m;
}

db_archive *db_migrate_archive(db_migration *m) { return m->to; }

uint32_t db_format_version(void) { return DB_FORMAT_VERSION; }

int db_migrate_commit(db_migration *m, db_error *err)
{
    /* every batch of the rebuilds and the copy, on the disk before the
     * file takes the archive's name */
    int rc = mdb_env_sync(m->to->env, 1);
    if (rc) {
        db_lmdb_fail(err, rc, m->tmp);
        db_migrate_abort(m);
        return -1;
    }
    db_close(m->to);
    m->to = NULL;
    rc = db_replace_file(m->tmp, m->path, err);
    if (rc)
        unlink(m->tmp);
    migration_free(m); /* the old file's lock goes with it */
    return rc;
}
