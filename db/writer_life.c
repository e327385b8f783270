/* db/writer_life.c -- a writer's life: the archive's writer lock and a
 * write transaction (writer_new), what killed writers left deleted
 * (reclaim), a new trace begun (listed DB_TRACE_INGESTING until its
 * commit: readers never see part of a trace), a committed trace opened
 * for a change, a rebuild's hidden copy made and swapped in at commit,
 * the graph cleared, the commit and the abort, and the writers of catalog
 * changes (manage.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "writer_int.h"

/* Keys deleted per transaction when a hidden trace is deleted (clear.c). */
#define DB_CLEAR_BUDGET (8u << 20) /* bytes of leaf entries a step deletes (clear.c) */

static void free_events(db_writer *w)
{
    free(w->nrec.nodes);
    free(w->nrec.nref);
    w->nrec.nodes = NULL;
    w->nrec.nref = NULL;
    db_evblock_enc_free(w->ev.enc);
    db_evfront_free(&w->ev.front);
    db_thrindex_free(w->ix.thr);
    db_thrindex_free(w->ix.nthr);
    w->ix.nthr = NULL;
    for (int i = 0; i < OIX__COUNT; i++) {
        db_thrindex_free(w->ix.oix[i]);
        w->ix.oix[i] = NULL;
    }
    db_sigindex_free(w->ix.sigs);
    w->ix.sigs = NULL;
    db_normbuf_free(w->ix.norms);
    w->ix.norms = NULL;
    db_nodetop_free(w->ix.top);
    w->ix.top = NULL;
    db_evblock_free(&w->ev.scanblk);
    db_evblock_free(&w->ev.patchblk);
    db_names_free(&w->names);
    free(w->ev.patch);
    free(w->keys.emerge);
    free(w->keys.ebuf);
    w->keys.emerge = NULL;
    w->keys.ebuf = NULL;
    w->keys.emerge_cap = w->keys.ebuf_cap = 0;
    w->ev.enc = NULL;
    w->ix.thr = NULL;
    w->ev.patch = NULL;
}

/* The writer lock goes with the writer's memory. */
static void writer_free(db_writer *w)
{
    if (w->lock_fd >= 0)
        close(w->lock_fd);
    db_keysort_free(w->keys.ks);
    db_chunkq_free(w->ix.chunks);
    base_map_free(&w->batch.runs);
    free_events(w);
    free(w);
}

/* Deletes the traces an interrupted ingest left in the catalog as
 * DB_TRACE_INGESTING.  Only called with the writer lock held, so no live
 * ingest can own them. */
static int reclaim(db_writer *w, db_error *err)
{
    db_wr_tails_lost(w); /* its deletes change pages */
    if (db_catalog_drop_repeats(w->a, w->txn, err))
        return -1;
    uint32_t ids[64];
    char names[64][256];
    int n = 0;
    MDB_cursor *c;
    int rc = mdb_cursor_open(w->txn, w->a->dbi[DBI_TRACES], &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    MDB_val k, v;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0 && n < 64; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size >= sizeof names[0])
            continue;
        memcpy(names[n], k.mv_data, k.mv_size);
        names[n][k.mv_size] = 0;
        db_trace_info t;
        if (db_catalog_get(w->a, w->txn, names[n], &t, err) == 1 && t.state != DB_TRACE_COMPLETE)
            ids[n++] = t.id;
    }
    mdb_cursor_close(c);
    for (int i = 0; i < n; i++) {
        /* in steps, each committed: the trace is hidden all along, and a
         * big one would otherwise be copied into memory page by page */
        db_clear st = {.trace = ids[i]};
        while ((rc = db_clear_step(w->a, w->txn, &st, DB_CLEAR_BUDGET, err)) == 1)
            if (db_wr_flush(w, err))
                return -1;
        if (rc)
            return -1;
        unsigned char id[4];
        db_put_be32(id, ids[i]);
        MDB_val nk = {strlen(names[i]), names[i]}, ik = {4, id}, iv;
        mdb_del(w->txn, w->a->dbi[DBI_TRACES], &nk, NULL);
        /* the id's entry, unless it names another trace now */
        if (mdb_get(w->txn, w->a->dbi[DBI_TRACE_IDS], &ik, &iv) == 0 && iv.mv_size == nk.mv_size &&
            memcmp(iv.mv_data, nk.mv_data, nk.mv_size) == 0)
            mdb_del(w->txn, w->a->dbi[DBI_TRACE_IDS], &ik, NULL);
    }
    if (!n)
        return 0;
    /* LMDB reuses a page two commits after the one that freed it (the
     * last commit is the snapshot a new reader would get): one more,
     * small, commit lets the next one -- an ingest's first batch, often
     * its only one -- write into the space just freed */
    uint32_t fmt = DB_FORMAT_VERSION;
    MDB_val fk = {6, "format"}, fv = {4, &fmt};
    if (db_wr_flush(w, err))
        return -1;
    rc = mdb_put(w->txn, w->a->dbi[DBI_META], &fk, &fv, 0);
    return rc ? db_lmdb_fail(err, rc, "write") : db_wr_flush(w, err);
}

/* A writer with its write transaction, holding the archive's writer lock:
 * LMDB serializes transactions, not the batches of one ingest, so a second
 * ingest waits here until the first has finished. */
static db_writer *writer_new(db_archive *a, db_error *err)
{
    if (a->readonly) {
        db_fail_readonly(a, err);
        return NULL;
    }
    db_writer *w = calloc(1, sizeof *w);
    if (!w) {
        db_fail(err, -1, "out of memory");
        return NULL;
    }
    w->a = a;
    w->batch.touch_w = 1024;
    db_wr_tails_lost(w);
    MDB_stat es;
    w->tail.page_room = mdb_env_stat(a->env, &es) ? 0 : db_tail_room(es.ms_psize);
    /* A writer's reads land all over the file (a leaf per put), and for
     * each the kernel would map 64 KB around it: the resident set then
     * grew between two trims (docs/PERFORMANCE.md).  Advice for the whole
     * map, which only this process's writer and readers share. */
    if (a->map)
        madvise(a->map, a->map_len, MADV_RANDOM);
    /* tests make batches small to exercise many commits on small traces */
    const char *bo = getenv("ARGUSQ_BATCH_OPS");
    w->batch.max_ops = bo && atoll(bo) > 0 ? (uint64_t)atoll(bo) : DB_BATCH_OPS;
    const char *bs = getenv("ARGUSQ_BATCH_SYNC");
    w->batch.nosync = bs && strcmp(bs, "0") == 0;
    w->lock_fd = open(a->path, O_RDONLY | O_CLOEXEC);
    if (w->lock_fd < 0 || flock(w->lock_fd, LOCK_EX) != 0) {
        db_fail(err, -1, "%s: cannot take the writer lock: %s", a->path, strerror(errno));
        if (w->lock_fd >= 0)
            close(w->lock_fd);
        free(w);
        return NULL;
    }
    /* `argusq compact` puts a new file in the archive's place: a process
     * that opened the old one must not write into it (its writes would
     * go to a file no one opens again) */
    struct stat here, there;
    int envfd;
    if (mdb_env_get_fd(a->env, &envfd) == 0 && fstat(envfd, &here) == 0 && stat(a->path, &there) == 0 &&
        (here.st_ino != there.st_ino || here.st_dev != there.st_dev)) {
        db_fail(err, -1, "%s: the archive was replaced (compacted) since it was opened: open it again", a->path);
        close(w->lock_fd);
        free(w);
        return NULL;
    }
    int rc = mdb_txn_begin(a->env, NULL, 0, &w->txn);
    if (rc) {
        db_lmdb_fail(err, rc, "write transaction");
        close(w->lock_fd);
        free(w);
        return NULL;
    }
    if (reclaim(w, err)) {
        db_writer_abort_back(w);
        return NULL;
    }
    w->flushed = false;
    return w;
}

/* A trace id never given before (ids only grow). */
static int new_id(db_writer *w, uint32_t *id, db_error *err)
{
    uint32_t next = 1;
    MDB_val k = {7, "next_id"}, v;
    int rc = mdb_get(w->txn, w->a->dbi[DBI_META], &k, &v);
    if (rc == 0 && v.mv_size == 4)
        memcpy(&next, v.mv_data, 4);
    uint32_t after = next + 1;
    v = (MDB_val){4, &after};
    rc = mdb_put(w->txn, w->a->dbi[DBI_META], &k, &v, 0);
    if (rc)
        return db_lmdb_fail(err, rc, "write");
    *id = next;
    return 0;
}

db_writer *db_writer_begin_here(db_archive *a, const char *name, const char *format, const char *source,
                                db_error *err)
{
    if (db_name_check(name, err))
        return NULL;
    db_writer *w = writer_new(a, err);
    if (!w)
        return NULL;
    db_trace_info old;
    int got = db_catalog_get(a, w->txn, name, &old, err);
    if (got != 0) {
        if (got > 0)
            db_fail(err, -1, "trace \"%s\" already exists in %s (use --name to give another name)", name,
                    a->path);
        db_writer_abort_back(w);
        return NULL;
    }
    if (new_id(w, &w->info.id, err)) {
        db_writer_abort_back(w);
        return NULL;
    }
    memcpy(w->info.name, name, strlen(name) + 1);
    snprintf(w->info.format, sizeof w->info.format, "%s", format ? format : "");
    snprintf(w->info.source, sizeof w->info.source, "%s", source ? source : "");
    w->info.first_ts = UINT64_MAX;
    /* listed as ingesting until the commit: hidden from readers, and known
     * to the next writer if this process dies */
    w->info.state = DB_TRACE_INGESTING;
    if (db_catalog_put(a, w->txn, &w->info, false, err)) {
        db_writer_abort_back(w);
        return NULL;
    }
    w->batched = true;
    return w;
}

db_writer *db_writer_open(db_archive *a, const char *trace, db_error *err)
{
    db_writer *w = writer_new(a, err);
    if (!w)
        return NULL;
    w->existing = true;
    int got = db_catalog_get(a, w->txn, trace, &w->info, err);
    if (got <= 0) {
        if (got == 0)
            db_fail(err, -1, "no trace named \"%s\" in %s", trace, a->path);
        db_writer_abort_back(w);
        return NULL;
    }
    return w;
}

/* Copies the keys of trace `from` in one table to the writer's trace
 * (keys start with the trace id; the rest and the values as they are). */
static int copy_table(db_writer *w, int dbi, uint32_t from, db_error *err)
{
    unsigned char k[4];
    db_put_be32(k, from);
    MDB_cursor *c;
    int rc = mdb_cursor_open(w->txn, w->a->dbi[dbi], &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    MDB_val key = {4, k}, v;
    int ret = 0;
    for (rc = mdb_cursor_get(c, &key, &v, MDB_SET_RANGE); rc == 0 && !ret;
         rc = mdb_cursor_get(c, &key, &v, MDB_NEXT)) {
        if (key.mv_size < 4 || key.mv_size > IX_KEY_MAX || memcmp(key.mv_data, k, 4) != 0)
            break;
        unsigned char nk[IX_KEY_MAX];
        memcpy(nk, key.mv_data, key.mv_size);
        db_put_be32(nk, w->info.id);
        /* keys of the new id sort after every other trace's: appended,
         * which does not disturb this cursor's place */
        ret = db_wr_put(w, dbi, nk, key.mv_size, v.mv_data, v.mv_size, err);
    }
    mdb_cursor_close(c);
    if (!ret && rc && rc != MDB_NOTFOUND)
        ret = db_lmdb_fail(err, rc, "read");
    return ret;
}

db_writer *db_writer_rebuild_here(db_archive *a, const char *trace, db_error *err)
{
    db_writer *w = writer_new(a, err);
    if (!w)
        return NULL;
    int got = db_catalog_get(a, w->txn, trace, &w->replaces, err);
    if (got <= 0 || w->replaces.state != DB_TRACE_COMPLETE) {
        if (got >= 0)
            db_fail(err, -1, "no trace named \"%s\" in %s", trace, a->path);
        db_writer_abort_back(w);
        return NULL;
    }
    w->rebuild = true;
    db_trace_info *t = &w->info;
    *t = w->replaces;
    if (new_id(w, &t->id, err)) {
        db_writer_abort_back(w);
        return NULL;
    }
    /* hidden (a name no user can give) until the commit swaps it in */
    snprintf(t->name, sizeof t->name, "\001rebuild of %u", w->replaces.id);
    t->state = DB_TRACE_INGESTING;
    t->events = t->nodes = t->edges = 0; /* counted again as they are written */
    t->first_ts = UINT64_MAX;
    t->last_ts = 0;
    t->unordered = 0;
    static const int copied[] = {DBI_THREADS, DBI_PROCS, DBI_SYMBOLS, DBI_RULES, DBI_LABELS};
    if (db_catalog_put(a, w->txn, t, false, err)) {
        db_writer_abort_back(w);
        return NULL;
    }
    for (size_t i = 0; i < sizeof copied / sizeof copied[0]; i++)
        if (copy_table(w, copied[i], w->replaces.id, err)) {
            db_writer_abort_back(w);
            return NULL;
        }
    w->batched = true;
    return w;
}

/* At the commit of a rebuild: the new copy takes the trace's name, the
 * old one becomes a hidden trace that is deleted afterwards, step by step
 * (reclaim), all in the one last transaction: readers see the old copy or
 * the new one.  Trace ids name the copies; the listing (trace_ids) keeps
 * the id the trace was first ingested with, which names it. */
static int swap_in(db_writer *w, db_error *err)
{
    db_trace_info t = w->info, old = w->replaces;
    unsigned char id[4];
    db_put_be32(id, t.id);
    MDB_val hk = {strlen(t.name), t.name}, ik = {4, id};
    int rc = mdb_del(w->txn, w->a->dbi[DBI_TRACES], &hk, NULL);
    if (!rc)
        rc = mdb_del(w->txn, w->a->dbi[DBI_TRACE_IDS], &ik, NULL);
    if (rc)
        return db_lmdb_fail(err, rc, "catalog");
    /* the trace keeps its entry in trace_ids (its place in the listing,
     * and the latest mark if it has it), which names it */
    memcpy(t.name, old.name, sizeof t.name);
    t.ingested_at = old.ingested_at;
    t.state = DB_TRACE_COMPLETE;
    snprintf(old.name, sizeof old.name, "\001replaced %u", old.id);
    old.state = DB_TRACE_INGESTING;
    if (db_catalog_put_entry(w->a, w->txn, &t, err) || db_catalog_put_entry(w->a, w->txn, &old, err))
        return -1;
    w->info = t;
    return 0;
}

/* After a rebuild's commit: the old copy goes, in steps.  If this fails
 * or the process dies, the next writer finishes it (reclaim). */
static void drop_replaced(db_writer *w)
{
    db_error e;
    if (mdb_txn_begin(w->a->env, NULL, 0, &w->txn))
        return;
    if (reclaim(w, &e) == 0 && w->txn)
        mdb_txn_commit(w->txn);
    else if (w->txn)
        mdb_txn_abort(w->txn);
    w->txn = NULL;
}

int db_writer_clear_graph_back(db_writer *w, db_error *err)
{
    if (db_wr_hand_block(w, err))
        return -1;
    /* what an abandoned graph pass left waiting goes in first, so that
     * the clearing deletes it too */
    int rc;
    if (db_wr_apply_patches(w, err) || db_wr_put_nodes(w, err) || db_wr_drain_later(w, err))
        return -1;
    if (w->ix.nthr && (rc = db_thrindex_flush(w->ix.nthr, w->info.id, db_wr_nthr_put, w)) != 0)
        return db_wr_thr_fail(w, rc, err);
    if (db_wr_drain_chunks(w, err))
        return -1;
    db_wr_tails_lost(w); /* the clearing deletes what the last leaves held */
    if (db_clear_trace_txn(w->a, w->txn, w->info.id, true, err))
        return -1;
    db_nodetop_free(w->ix.top); /* the lists of the graph cleared */
    w->ix.top = NULL;
    w->info.nodes = w->info.edges = 0;
    return 0;
}

void db_writer_abort_back(db_writer *w)
{
    db_wr_close_cursors(w);
    db_keysort_free(w->keys.ks);
    w->keys.ks = NULL;
    w->keys.nkeys = 0;
    if (w->txn)
        mdb_txn_abort(w->txn);
    w->txn = NULL;
    /* batches already committed: delete them now (if this fails too, the
     * next writer's reclaim does it) */
    db_error e;
    if (w->flushed && !mdb_txn_begin(w->a->env, NULL, 0, &w->txn) && reclaim(w, &e) == 0 && w->txn)
        mdb_txn_commit(w->txn);
    else if (w->txn)
        mdb_txn_abort(w->txn);
    writer_free(w);
}

/* ---- a writer of catalog changes (manage.c) ---- */

db_writer *db_writer_catalog(db_archive *a, db_error *err) { return writer_new(a, err); }

/* the caller writes through it as it likes: no leaf is known after */
MDB_txn *db_writer_txn(db_writer *w)
{
    db_wr_tails_lost(w);
    return w->txn;
}

int db_writer_copy(db_writer *w, int fd, bool compact, db_error *err)
{
    /* the catalog writer's transaction holds nothing (leftovers were
     * deleted and committed when it began): the copy reads the last
     * commit, and nobody writes while the lock is held */
    db_wr_close_cursors(w);
    if (w->txn)
        mdb_txn_abort(w->txn);
    w->txn = NULL;
    w->flushed = false;
    int rc = mdb_env_copyfd2(w->a->env, fd, compact ? MDB_CP_COMPACT : 0);
    return rc ? db_lmdb_fail(err, rc, "copy") : 0;
}

int db_writer_catalog_commit(db_writer *w, db_error *err)
{
    db_wr_close_cursors(w);
    int rc = mdb_txn_commit(w->txn);
    w->txn = NULL;
    int ret = rc ? db_wr_commit_fail(w, rc, err) : 0;
    if (!ret)
        drop_replaced(w); /* what the change hid goes now, in steps */
    writer_free(w);
    return ret;
}

int db_writer_commit_back(db_writer *w, db_trace_info *out, db_error *err)
{
    if (w->info.first_ts == UINT64_MAX)
        w->info.first_ts = 0;
    if (!w->existing)
        w->info.ingested_at = (uint64_t)time(NULL);
    w->info.state = DB_TRACE_COMPLETE;
    w->ix.chunk_commits = true;
    int ret = db_wr_interrupted(w, err) || db_wr_hand_block(w, err) || db_wr_apply_patches(w, err) ||
              db_wr_put_nodes(w, err);
    if (!ret)
        ret = db_wr_flush_indexes(w, err);
    ret = ret || db_wr_drain_later(w, err) || db_wr_drain_chunks(w, err) ||
          /* a trace already listed keeps its slot in trace_ids, which
           * after a rebuild is not its id: only its entry is written */
          (w->rebuild     ? swap_in(w, err)
           : w->existing ? db_catalog_put_entry(w->a, w->txn, &w->info, err)
                         : db_catalog_put(w->a, w->txn, &w->info, true, err));
    if (!ret) {
        db_wr_close_cursors(w);
        int rc = mdb_txn_commit(w->txn);
        w->txn = NULL;
        if (rc)
            ret = db_wr_commit_fail(w, rc, err);
    }
    if (!ret && out)
        *out = w->info;
    if (ret) { /* the abort deletes what earlier batches committed */
        db_writer_abort_back(w);
        return ret;
    }
    if (w->rebuild)
        drop_replaced(w);
    writer_free(w);
    return ret;
}
