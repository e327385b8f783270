/* db/writer.c -- the writer's public calls (db.h), and its thread.  A
 * new trace, and a rebuild's copy, are written by a thread of their own
 * (wqueue.c), which makes every LMDB call of the writer: a call made on
 * the caller's thread of such a writer (front) is queued there (db_wq_*)
 * or, when the caller needs its answer, made there while the caller
 * waits (db_wsync_*).  Made on the writer's thread, or on a writer
 * without one, a call runs at once through its single-threaded half
 * (db_writer_*_back: writer_*.c, whose jobs writer_int.h lists).  The
 * queue's thread calls those halves directly, never these. */
#include <stdlib.h>
#include <string.h>

#include "writer_int.h"

/* A call made on a threaded writer from another thread than its own: it
 * goes through the queue (wqueue.c), and the writer's thread makes it.
 * The thread's id is the writer's own copy, compared inline, not asked of
 * the queue by a call: front() runs for every event, event id, node,
 * signature and edge the graph's thread hands the writer. */
static bool front(const db_writer *w) { return w->q && !writer_same(writer_self(), w->q_thread); }

/* Each call below tests front() and hands the call to the queue or makes
 * it through its half.  The calls the graph's thread makes for every
 * event, node, signature and edge are that test alone, inlined where they
 * are made, and their halves are functions of their own, which the
 * queue's replay calls directly: in one function, the half's prologue and
 * epilogue (six registers saved and restored) ran for every call the
 * graph's thread queued, and the front() test for every call the writer's
 * thread replayed.  The other calls stay calls (noinline): inlined, the
 * front test and the queue's own answers (db_wsync_get_thread's names)
 * grew the graph's per-event functions (node_append) by hundreds of bytes
 * for calls most events never make. */

struct begin_args {
    db_archive *a;
    const char *name, *format, *source;
    db_error *err;
};

static db_writer *begin_there(db_wq *q, void *ctx)
{
    struct begin_args *b = ctx;
    db_writer *w = db_writer_begin_here(b->a, b->name, b->format, b->source, b->err);
    if (w) { /* on the writer's thread */
        w->q = q;
        w->q_thread = writer_self();
        w->relayed = db_wq_interrupted(q);
    }
    return w;
}

/* A new trace is written by a thread of its own (wqueue.c), unless
 * $ARGUSQ_WRITER_THREAD=0 or no thread can be had. */
db_writer *db_writer_begin(db_archive *a, const char *name, const char *format, const char *source,
                           db_error *err)
{
    const char *env = getenv("ARGUSQ_WRITER_THREAD");
    db_wq *q = env && strcmp(env, "0") == 0 ? NULL : db_wq_start(false);
    if (!q)
        return db_writer_begin_here(a, name, format, source, err);
    struct begin_args b = {a, name, format, source, err};
    db_writer *w = db_wq_begin(q, begin_there, &b);
    if (!w)
        db_wq_stop(q);
    return w;
}

/* The names the copy starts with, told to the queue's front (the graph
 * asks it for a thread's name; it answers from what it carried), read
 * from the old copy in a read transaction of the caller's thread. */
static int know_one(void *ctx, const MDB_val *k, const MDB_val *v)
{
    db_writer *w = ctx;
    if (k->mv_size != 8)
        return 0;
    if (v->mv_size == sizeof(db_thread)) {
        db_thread t;
        memcpy(&t, v->mv_data, sizeof t);
        t.name[DB_NAME_MAX - 1] = 0;
        db_wq_know_thread(w->q, &t);
    }
    return 0;
}

static int know_proc(void *ctx, const MDB_val *k, const MDB_val *v)
{
    db_writer *w = ctx;
    if (k->mv_size != 8)
        return 0;
    char name[DB_NAME_MAX];
    db_name_copy(name, sizeof name, v->mv_data, v->mv_size);
    db_wq_know_proc(w->q, db_get_be32((const unsigned char *)k->mv_data + 4), name);
    return 0;
}

static int know_names(db_writer *w, db_error *err)
{
    MDB_txn *rt;
    int rc = mdb_txn_begin(w->a->env, NULL, MDB_RDONLY, &rt);
    if (rc)
        return db_lmdb_fail(err, rc, "read transaction");
    unsigned char k[4];
    db_put_be32(k, w->replaces.id);
    rc = db_scan_prefix(rt, w->a->dbi[DBI_THREADS], k, 4, k, 4, know_one, w, err);
    if (!rc)
        rc = db_scan_prefix(rt, w->a->dbi[DBI_PROCS], k, 4, k, 4, know_proc, w, err);
    mdb_txn_abort(rt);
    return rc;
}

struct rebuild_args {
    db_archive *a;
    const char *trace;
    db_error *err;
};

static db_writer *rebuild_there(db_wq *q, void *ctx)
{
    struct rebuild_args *b = ctx;
    db_writer *w = db_writer_rebuild_here(b->a, b->trace, b->err);
    if (w) { /* on the writer's thread */
        w->q = q;
        w->q_thread = writer_self();
        w->relayed = db_wq_interrupted(q);
    }
    return w;
}

/* A rebuild's copy is written by a thread of its own too, while the
 * caller reads the old copy and builds the graph (scan_source). */
db_writer *db_writer_rebuild(db_archive *a, const char *trace, db_error *err)
{
    const char *env = getenv("ARGUSQ_WRITER_THREAD");
    db_wq *q = env && strcmp(env, "0") == 0 ? NULL : db_wq_start(true);
    if (!q)
        return db_writer_rebuild_here(a, trace, err);
    struct rebuild_args b = {a, trace, err};
    db_writer *w = db_wq_begin(q, rebuild_there, &b);
    if (!w) {
        db_wq_stop(q);
        return NULL;
    }
    if (know_names(w, err)) {
        db_writer_abort(w);
        return NULL;
    }
    return w;
}

/* A threaded rebuild reads the old copy on the caller's thread, in a read
 * transaction of its own, while the writer's thread writes and commits
 * the new copy: the old one is committed and nothing changes it before
 * the swap.  The transaction is renewed every SCAN_RENEW blocks, or it
 * would keep every page the writer's batches free from being reused (the
 * file would grow by a batch's pages per batch), and the map is trimmed
 * as the writer's is. */
#define SCAN_RENEW 64u

static int scan_old(db_writer *w, db_event_cb cb, void *ctx, db_error *err)
{
    MDB_txn *rt;
    int rc = mdb_txn_begin(w->a->env, NULL, MDB_RDONLY, &rt);
    if (rc)
        return db_lmdb_fail(err, rc, "read transaction");
    db_evblock blk = {0};
    int ret = 0;
    for (uint64_t next = 1, n = 1; !ret; n++) {
        if (n % SCAN_RENEW == 0) {
            mdb_txn_reset(rt);
            if ((rc = mdb_txn_renew(rt)) != 0) {
                ret = db_lmdb_fail(err, rc, "read transaction");
                break;
            }
            db_archive_trim(w->a);
        }
        int got = db_evblock_load(rt, w->a->dbi[DBI_EVENTS], w->replaces.id, next, &blk, err);
        if (got <= 0) {
            ret = got;
            break;
        }
        const db_event *ev;
        for (; !ret && (ev = db_evblock_get(&blk, next)) != NULL; next++) {
            db_event e = *ev; /* the callback may not change the block's copy */
            ret = cb(ctx, &e);
        }
    }
    db_evblock_free(&blk);
    mdb_txn_abort(rt);
    return ret;
}

int db_writer_scan_source(db_writer *w, db_event_cb cb, void *ctx, db_error *err)
{
    if (!w->rebuild)
        return db_fail(err, -1, "scan_source: not a rebuild");
    return front(w) ? scan_old(w, cb, ctx, err) : db_writer_scan_source_back(w, cb, ctx, err);
}

void db_writer_interrupt(db_writer *w, const volatile sig_atomic_t *flag)
{
    w->interrupt = flag;
    if (w->q)
        db_wq_interrupt(w->q, flag);
}

/* The front's look at the caller's interrupt before it asks for the
 * commit (the thread reads the queue's copy: db_wr_interrupted). */
static int front_interrupted(const db_writer *w, db_error *err)
{
    return w->interrupt && *w->interrupt ? db_fail(err, -1, "interrupted") : 0;
}

__attribute__((noinline)) int db_writer_commit(db_writer *w, db_trace_info *out, db_error *err)
{
    if (front(w))
        return front_interrupted(w, err) || db_wq_hand_block(w->q, err) ? (db_writer_abort(w), -1)
                                                                         : db_wsync_commit(w->q, w, out, err);
    return db_writer_commit_back(w, out, err);
}

__attribute__((noinline)) void db_writer_abort(db_writer *w)
{
    if (!w)
        return;
    if (front(w))
        db_wsync_abort(w->q, w);
    else
        db_writer_abort_back(w);
}

const char *db_writer_format(const db_writer *w) { return w->info.format; }

uint64_t db_writer_next_event_id(const db_writer *w)
{
    return front(w) ? db_wq_next_event_id(w->q) : w->ev.front.events + 1;
}

int db_writer_event(db_writer *w, db_event *ev, db_error *err)
{
    return front(w) ? db_wq_event(w->q, ev, err) : db_writer_event_here(w, ev, err);
}

int db_writer_node(db_writer *w, const db_node *n, db_error *err)
{
    return db_writer_node_key(w, n, db_thread_key(n->thread, n->kind), err);
}

int db_writer_node_key(db_writer *w, const db_node *n, uint32_t thread_key, db_error *err)
{
    return front(w) ? db_wq_node(w->q, n, thread_key, err) : db_writer_node_back(w, n, thread_key, err);
}

int db_writer_signature(db_writer *w, const db_sig *sig, db_error *err)
{
    return front(w) ? db_wq_signature(w->q, sig, err) : db_writer_signature_back(w, sig, err);
}

/* front() asked once for both (a pthread_self call and the test), and
 * one call from the graph, not two. */
int db_writer_node_sig(db_writer *w, const db_node *n, uint32_t thread_key, const db_sig *sig, db_error *err)
{
    if (front(w))
        return db_wq_node_sig(w->q, n, thread_key, sig, err);
    return db_writer_node_back(w, n, thread_key, err) || db_writer_signature_back(w, sig, err) ? -1 : 0;
}

int db_writer_edge(db_writer *w, const db_edge *e, db_error *err)
{
    return front(w) ? db_wq_edge(w->q, e, err) : db_writer_edge_back(w, e, err);
}

__attribute__((noinline)) int db_writer_set_event_node(db_writer *w, uint64_t event_id, uint32_t node, db_error *err)
{
    return front(w) ? db_wq_set_event_node(w->q, event_id, node, err)
                    : db_writer_set_event_node_back(w, event_id, node, err);
}

__attribute__((noinline)) int db_writer_norm(db_writer *w, uint32_t hash, const char *text, db_error *err)
{
    return front(w) ? db_wq_norm(w->q, hash, text, err) : db_writer_norm_back(w, hash, text, err);
}

__attribute__((noinline)) int db_writer_clear_graph(db_writer *w, db_error *err)
{
    if (front(w))
        return db_wq_hand_block(w->q, err) ? -1 : db_wsync_clear_graph(w->q, w, err);
    return db_writer_clear_graph_back(w, err);
}

/* the front's block being filled goes first, as everything before does:
 * the scan reads the events back */
__attribute__((noinline)) int db_writer_scan_time(db_writer *w, db_event_cb cb, void *ctx, db_error *err)
{
    if (front(w))
        return db_wq_hand_block(w->q, err) ? -1 : db_wsync_scan_time(w->q, w, cb, ctx, err);
    return db_writer_scan_time_back(w, cb, ctx, err);
}

__attribute__((noinline)) int db_writer_proc(db_writer *w, uint32_t pid, const char *name, db_error *err)
{
    return front(w) ? db_wq_proc(w->q, pid, name, err) : db_writer_proc_back(w, pid, name, err);
}

__attribute__((noinline)) int db_writer_thread(db_writer *w, const db_thread *t, db_error *err)
{
    return front(w) ? db_wq_thread(w->q, t, err) : db_writer_thread_back(w, t, err);
}

__attribute__((noinline)) int db_writer_symbol(db_writer *w, uint64_t addr, const char *name, db_error *err)
{
    return front(w) ? db_wq_symbol(w->q, addr, name, err) : db_writer_symbol_back(w, addr, name, err);
}

__attribute__((noinline)) int db_writer_label(db_writer *w, const char *key, const char *value, db_error *err)
{
    if (db_label_check(key, strlen(value), err))
        return -1;
    return front(w) ? db_wq_label(w->q, key, value, err) : db_writer_label_back(w, key, value, err);
}

__attribute__((noinline)) int db_writer_get_thread(db_writer *w, uint32_t tid, db_thread *out, db_error *err)
{
    return front(w) ? db_wsync_get_thread(w->q, w, tid, out, err) : db_writer_get_thread_back(w, tid, out, err);
}

__attribute__((noinline)) int db_writer_get_proc(db_writer *w, uint32_t pid, char *name, size_t len, db_error *err)
{
    return front(w) ? db_wsync_get_proc(w->q, w, pid, name, len, err)
                    : db_writer_get_proc_back(w, pid, name, len, err);
}

void db_writer_skip(db_writer *w)
{
    if (front(w))
        db_wq_skip(w->q);
    else
        db_writer_skip_back(w);
}

__attribute__((noinline)) int db_writer_add_rule(db_writer *w, const char *text, size_t len, uint32_t *seq,
                                                  db_error *err)
{
    return front(w) ? db_wsync_add_rule(w->q, w, text, len, seq, err)
                    : db_writer_add_rule_back(w, text, len, seq, err);
}

__attribute__((noinline)) int db_writer_drop_rule(db_writer *w, uint32_t seq, db_error *err)
{
    return front(w) ? db_wsync_drop_rule(w->q, w, seq, err) : db_writer_drop_rule_back(w, seq, err);
}

__attribute__((noinline)) int db_writer_scan_rules(db_writer *w, db_rule_cb cb, void *ctx, db_error *err)
{
    return front(w) ? db_wsync_scan_rules(w->q, w, cb, ctx, err) : db_writer_scan_rules_back(w, cb, ctx, err);
}
