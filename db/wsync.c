/* db/wsync.c -- the calls of a threaded writer that wait for its thread
 * (wqueue.c): each packs its arguments, has the thread make the call's
 * single-threaded half (db_writer_*_back, db_int.h), and returns what it
 * returned.  Commit and abort also stop the thread. */
#include <string.h>

#include "db_int.h"

struct a_thread {
    db_writer *w;
    uint32_t id;
    db_thread *out;
    char *name;
    size_t len;
    db_error *err;
};

static int f_get_thread(void *p)
{
    struct a_thread *a = p;
    return db_writer_get_thread_back(a->w, a->id, a->out, a->err);
}

int db_wsync_get_thread(db_wq *q, db_writer *w, uint32_t tid, db_thread *out, db_error *err)
{
    bool absent;
    const db_thread *t = db_wq_known_thread(q, tid, &absent);
    if (t) {
        *out = *t;
        return 1;
    }
    if (absent)
        return 0;
    struct a_thread a = {w, tid, out, NULL, 0, err};
    return db_wq_run(q, f_get_thread, &a, err);
}

static int f_get_proc(void *p)
{
    struct a_thread *a = p;
    return db_writer_get_proc_back(a->w, a->id, a->name, a->len, a->err);
}

int db_wsync_get_proc(db_wq *q, db_writer *w, uint32_t pid, char *name, size_t len, db_error *err)
{
    bool absent;
    const char *n = db_wq_known_proc(q, pid, &absent);
    if (n) {
        db_name_copy(name, len, n, strlen(n));
        return 1;
    }
    if (absent)
        return 0;
    struct a_thread a = {w, pid, NULL, name, len, err};
    return db_wq_run(q, f_get_proc, &a, err);
}

struct a_end {
    db_wq *q;
    db_writer *w;
    db_trace_info *out;
    db_error *err;
};

/* A call queued before failed: the trace is abandoned. */
static int f_commit(void *p)
{
    struct a_end *a = p;
    if (db_wq_failed(a->q, a->err)) {
        db_writer_abort_back(a->w);
        return -1;
    }
    return db_writer_commit_back(a->w, a->out, a->err);
}

int db_wsync_commit(db_wq *q, db_writer *w, db_trace_info *out, db_error *err)
{
    struct a_end a = {q, w, out, err};
    int rc = db_wq_run_always(q, f_commit, &a, err);
    db_wq_stop(q);
    return rc;
}

static int f_abort(void *p)
{
    db_writer_abort_back(((struct a_end *)p)->w);
    return 0;
}

void db_wsync_abort(db_wq *q, db_writer *w)
{
    db_error e = {0};
    struct a_end a = {q, w, NULL, &e};
    db_wq_run_always(q, f_abort, &a, &e);
    db_wq_stop(q);
}

struct a_misc {
    db_writer *w;
    db_error *err;
    const char *text;
    size_t len;
    uint32_t seq, *seqp;
    db_rule_cb rule_cb;
    db_event_cb event_cb;
    void *ctx;
};

static int f_clear_graph(void *p)
{
    struct a_misc *a = p;
    return db_writer_clear_graph_back(a->w, a->err);
}

int db_wsync_clear_graph(db_wq *q, db_writer *w, db_error *err)
{
    struct a_misc a = {.w = w, .err = err};
    return db_wq_run(q, f_clear_graph, &a, err);
}

static int f_add_rule(void *p)
{
    struct a_misc *a = p;
    return db_writer_add_rule_back(a->w, a->text, a->len, a->seqp, a->err);
}

int db_wsync_add_rule(db_wq *q, db_writer *w, const char *text, size_t len, uint32_t *seq, db_error *err)
{
    struct a_misc a = {.w = w, .err = err, .text = text, .len = len, .seqp = seq};
    return db_wq_run(q, f_add_rule, &a, err);
}

static int f_drop_rule(void *p)
{
    struct a_misc *a = p;
    return db_writer_drop_rule_back(a->w, a->seq, a->err);
}

int db_wsync_drop_rule(db_wq *q, db_writer *w, uint32_t seq, db_error *err)
{
    struct a_misc a = {.w = w, .err = err, .seq = seq};
    return db_wq_run(q, f_drop_rule, &a, err);
}

static int f_scan_rules(void *p)
{
    struct a_misc *a = p;
    return db_writer_scan_rules_back(a->w, a->rule_cb, a->ctx, a->err);
}

int db_wsync_scan_rules(db_wq *q, db_writer *w, db_rule_cb cb, void *ctx, db_error *err)
{
    struct a_misc a = {.w = w, .err = err, .rule_cb = cb, .ctx = ctx};
    return db_wq_run(q, f_scan_rules, &a, err);
}

/* The callback runs on the writer's thread: a graph pass's writes made
 * from it run at once there. */
static int f_scan_time(void *p)
{
    struct a_misc *a = p;
    return db_writer_scan_time_back(a->w, a->event_cb, a->ctx, a->err);
}

int db_wsync_scan_time(db_wq *q, db_writer *w, db_event_cb cb, void *ctx, db_error *err)
{
    struct a_misc a = {.w = w, .err = err, .event_cb = cb, .ctx = ctx};
    return db_wq_run(q, f_scan_time, &a, err);
}
