/* query/source.c -- where a statement's counterparts come from: `match` and
 * `diagnose` look in traces of the session's archive, or of another
 * archive file (`in archive "PATH"`: a baseline found in another
 * machine's archive).
 *
 * Counterparts are found through the signature index, whose keys and
 * normal forms are hashes of texts (a thread's name and role, "wait:futex",
 * "wakeup:worker"), the same in every archive: the anomaly's signature,
 * read from the session's archive, is looked up as it is in the other
 * one.  Only trace ids are the archive's own, so whatever names a trace
 * by id goes through a reader of the archive it is in (scan). */
#include <string.h>
#include <stdlib.h>

#include "query_int.h"

/* The other archive, opened read-only through the session's opener; the
 * session's own file named again (by any path) is the session's archive. */
static int open_other(query_session *s, const query_name *name, query_source *src, query_error *err)
{
    if (!s->opener.open)
        return query_fail(err, &name->pos, "`in archive` needs a session that can open archives (libargusq)");
    char msg[512] = "";
    db_archive *db = NULL;
    void *h = s->opener.open(s->opener.ctx, name->name, &db, msg, sizeof msg);
    if (!h)
        return query_fail(err, &name->pos, "%s", msg[0] ? msg : "cannot open the archive");
    uint64_t d1, i1, d2, i2;
    if (db_file_id(s->archive, &d1, &i1) == 0 && db_file_id(db, &d2, &i2) == 0 && d1 == d2 && i1 == i2) {
        s->opener.close(s->opener.ctx, h);
        return 0;
    }
    src->archive = db;
    src->handle = h;
    src->path = name->name;
    return 0;
}

/* A reader of the other archive, for its signature index and its trace
 * names: its latest trace will do, as any would. */
static int open_scan(query_source *src, const query_name *name, query_error *err)
{
    db_error de = {0};
    db_trace_info t;
    int got = db_latest_trace(src->archive, &t, &de);
    if (got <= 0)
        return query_fail(err, &name->pos, got < 0 ? "%s" : "archive \"%s\" holds no trace",
                          got < 0 ? de.msg : src->path);
    if (!(src->scan = db_reader_open(src->archive, t.name, &de)))
        return query_fail(err, &name->pos, "%s", de.msg);
    return 0;
}

int query_source_open(query_session *s, const query_stmt *st, const query_name *trace, bool every,
                      query_source *src, query_error *err)
{
    *src = (query_source){.archive = s->archive, .ids = &src->one, .nids = 1};
    if (st->archive.name &&
        (open_other(s, &st->archive, src, err) || (src->path && open_scan(src, &st->archive, err)))) {
        query_source_close(s, src);
        return -1;
    }
    if (src->scan) /* its scans of the other archive's signatures are the long part */
        db_reader_interrupt(src->scan, s->interrupt);
    if (trace && trace->name) {
        db_trace_info t;
        db_error de = {0};
        int got = db_find_trace(src->archive, trace->name, &t, &de);
        if (got <= 0) {
            if (got < 0)
                query_fail(err, &trace->pos, "%s", de.msg);
            else if (src->path)
                query_fail(err, &trace->pos, "no trace named \"%s\" in archive \"%s\"", trace->name, src->path);
            else
                query_fail(err, &trace->pos, "no trace named \"%s\"", trace->name);
            query_source_close(s, src);
            return -1;
        }
        src->one = t.id;
    } else if (st->traces_all || st->traces_where || (!every && src->path)) {
        /* a list: `traces [where]`, and diagnose's default in another
         * archive (its every trace, ranked as such a list is) */
        uint32_t *ids;
        size_t n;
        if (query_traces_in(src->archive, src->path, st->traces_where, &st->traces_pos, &ids, &n, err)) {
            query_source_close(s, src);
            return -1;
        }
        if (n == 0) {
            free(ids);
            query_fail(err, &st->archive.pos, "archive \"%s\" holds no trace", src->path ? src->path : "");
            query_source_close(s, src);
            return -1;
        }
        src->ids = ids;
        src->nids = n;
        src->listed = true;
    }
    return 0;
}

void query_source_close(query_session *s, query_source *src)
{
    if (src->ids != &src->one)
        free(src->ids);
    src->ids = &src->one;
    if (src->scan)
        db_reader_close(src->scan);
    src->scan = NULL;
    if (src->handle)
        s->opener.close(s->opener.ctx, src->handle);
    src->handle = NULL;
}

int query_source_trace_name(const query_source *src, db_reader *self, uint32_t trace, char *buf, size_t len,
                            db_error *de)
{
    return db_trace_name(src->scan ? src->scan : self, trace, buf, len, de);
}
