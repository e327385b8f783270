/* db/wqueue.c -- the writer's own thread: an ingest's LMDB work (event
 * blocks, index keys, the sort and puts of each batch, its commit) runs
 * beside the graph, so that parsing, the graph and the archive each have
 * a core's worth of time on the machine's cores instead of sharing one.
 *
 * LMDB's write transactions belong to the thread that began them (the
 * writer's lock is a mutex only its owner may unlock), so every LMDB call
 * of a threaded writer is made on this thread, the transaction's begin and
 * commit included.  The calls that return nothing the caller needs (an
 * event, a node, an edge, a signature, ...) are copied into a queue of
 * byte batches and made there in the same order; the others (commit,
 * abort, a scan, a lookup the front cannot answer) wait for the queue to
 * empty and run there too.  The writer's code is the same either way: a
 * public db_writer_* call made on this thread runs at once, which is also
 * how a graph pass run by db_writer_scan_time on it writes its nodes.  The
 * archive is therefore byte for byte what the unthreaded writer makes
 * ($ARGUSQ_WRITER_THREAD=0 selects it; tests compare the two).
 *
 * An event is the exception: the front encodes it into its block itself
 * (evfront.c) and queues only what the indexes need of it and, when one
 * is full, the block, so that the encoding runs beside the LMDB work.
 *
 * What the front answers itself: the next event id (it counts the events
 * it queues) and the trace's threads and processes (it keeps those it
 * queued: a trace being ingested has no others, up to the names cache's
 * bound, past which it asks the thread).
 *
 * The batches go through a base_chan (base/chan.c), which this file never
 * aborts: every queued call is made or skipped on the thread, so that an
 * abort or commit queued after a failure still runs.  Memory: nb batches
 * of WQ_BATCH bytes (WQ_BATCHES_INGEST or _REBUILD), all allocated by
 * db_wq_start.  Failure: the first call that fails on the thread keeps
 * its message; the calls queued after it are skipped, and every later
 * call through the front returns it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db_int.h"

/* A batch's commit and sync stop this thread for tens of milliseconds,
 * and the graph's thread stops too once the queue is full, so a larger
 * queue is slack: an ingest has WQ_BATCHES_INGEST, with which make
 * bench's ingests ran faster than with half of it; a rebuild keeps
 * WQ_BATCHES_REBUILD, with which its peak RSS stays flat with the
 * trace's size (docs/PERFORMANCE.md): the channel allocates them all
 * before the threads run, and touches only as many as it held at its
 * fullest. */
#define WQ_BATCHES_INGEST 32
#define WQ_BATCHES_REBUILD 16
#define WQ_BATCH ((size_t)1 << 20)

enum {
    OP_EVENT = 1,
    OP_NODE,
    OP_EDGE,
    OP_SIG,
    OP_NORM,
    OP_PROC,
    OP_THREAD,
    OP_SYMBOL,
    OP_LABEL, /* "key\0value\0" */
    OP_SKIP,
    OP_SET_NODE,
    OP_CALL,
    OP_EVENT_BLK, /* an event after a block the front handed over */
    OP_BLOCK,     /* a block alone */
    OP_NODE_SIG,  /* a node, then its signature at the next WQ_ALIGN */
};

/* Every op starts on a multiple of WQ_ALIGN bytes of its batch (whose
 * buffer malloc aligns): its tag, then its payload WQ_ALIGN bytes on, in
 * WQ_ALIGN-byte steps.  So replay hands the writer the event's index
 * entries, a node, an edge and a signature where they lie in the batch,
 * not copied out first (a node is 176 bytes, a signature's hashes a call
 * to memcpy); the padding costs the graph's thread next to nothing. */
#define WQ_ALIGN 8u

static inline size_t wq_round(size_t n) { return (n + WQ_ALIGN - 1) & ~(size_t)(WQ_ALIGN - 1); }

/* an OP_NODE_SIG's node and thread key: its signature starts after */
#define WQ_NODE_BYTES wq_round(sizeof(db_node) + sizeof(uint32_t))

/* the next op after one whose payload ended at p */
static inline const char *wq_next(const char *p)
{
    return (const char *)(((uintptr_t)p + WQ_ALIGN - 1) & ~(uintptr_t)(WQ_ALIGN - 1));
}

typedef int (*wq_fn)(void *arg);

struct db_wq {
    pthread_t thread;
    db_writer *w; /* set by the first call, run on the thread */
    atomic_bool failed;
    db_error err; /* the failure, written before failed is set */
    const volatile sig_atomic_t *interrupt; /* the front's (db_wq_interrupt) */
    atomic_bool interrupted;                /* the front saw it set */
    /* the front's own */
    db_evfront front; /* the events, into blocks (evfront.c) */
    base_chan ch;     /* the front fills ch.fill, among its own fields, away
                       * from w and failed, which replay reads for each op */
    db_names names;
    bool names_complete; /* a miss means "no such thread" */
};

/* ---- the thread ---- */

static const char *take(const char **p, void *dst, size_t n)
{
    memcpy(dst, *p, n);
    *p += n;
    return *p;
}

static void fail(db_wq *q, const db_error *e)
{
    if (atomic_load(&q->failed))
        return;
    q->err = *e;
    atomic_store(&q->failed, true);
}

/* One op of the kinds after an event and an edge (tag), its payload at
 * p, made (skipped after a failure, but for OP_CALL); its error in *e.
 * Returns where the op's payload ends. */
static const char *replay_op(db_wq *q, uint8_t tag, const char *p, db_error *e)
{
    int rc = 0;
    bool skip = atomic_load(&q->failed);
    switch (tag) {
    case OP_EVENT: {
        const db_evix *x = (const db_evix *)p;
        p += sizeof *x;
        if (!skip)
            rc = db_writer_event_back(q->w, x, NULL, e);
        break;
    }
    case OP_EDGE: {
        const db_edge *ed = (const db_edge *)p;
        p += sizeof *ed;
        if (!skip)
            rc = db_writer_edge_back(q->w, ed, e);
        break;
    }
    case OP_EVENT_BLK:
    case OP_BLOCK: {
        const db_evix *x = (const db_evix *)p;
        db_evblk blk;
        if (tag != OP_BLOCK)
            p += sizeof *x;
        take(&p, &blk.first, sizeof blk.first);
        take(&p, &blk.len, sizeof blk.len);
        blk.bytes = (const unsigned char *)p;
        p += blk.len;
        if (!skip)
            rc = tag == OP_BLOCK ? db_writer_put_block(q->w, &blk, e) : db_writer_event_back(q->w, x, &blk, e);
        break;
    }
    case OP_NODE: {
        const db_node *n = (const db_node *)p;
        uint32_t key;
        p += sizeof *n;
        take(&p, &key, sizeof key);
        if (!skip)
            rc = db_writer_node_back(q->w, n, key, e);
        break;
    }
    case OP_NODE_SIG: {
        const db_node *n = (const db_node *)p;
        uint32_t key;
        memcpy(&key, p + sizeof *n, sizeof key);
        const db_sig *s = (const db_sig *)(p + WQ_NODE_BYTES);
        p += WQ_NODE_BYTES + offsetof(db_sig, h) + s->n * sizeof *s->h;
        if (!skip && !(rc = db_writer_node_back(q->w, n, key, e))) {
            if (e->msg[0]) /* as between two ops */
                *e = (db_error){0};
            rc = db_writer_signature_back(q->w, s, e);
        }
        break;
    }
    case OP_SIG: {
        /* its head and its n hashes, not the whole db_sig: the
         * writer reads no more (db_sigindex_add) */
        const db_sig *s = (const db_sig *)p;
        p += offsetof(db_sig, h) + s->n * sizeof *s->h;
        if (!skip)
            rc = db_writer_signature_back(q->w, s, e);
        break;
    }
    case OP_NORM: {
        uint32_t h;
        take(&p, &h, sizeof h);
        if (!skip)
            rc = db_writer_norm_back(q->w, h, p, e);
        p += strlen(p) + 1;
        break;
    }
    case OP_PROC: {
        uint32_t pid;
        take(&p, &pid, sizeof pid);
        if (!skip)
            rc = db_writer_proc_back(q->w, pid, p, e);
        p += strlen(p) + 1;
        break;
    }
    case OP_THREAD: {
        db_thread t;
        take(&p, &t, sizeof t);
        if (!skip)
            rc = db_writer_thread_back(q->w, &t, e);
        break;
    }
    case OP_SYMBOL: {
        uint64_t addr;
        take(&p, &addr, sizeof addr);
        if (!skip)
            rc = db_writer_symbol_back(q->w, addr, p, e);
        p += strlen(p) + 1;
        break;
    }
    case OP_LABEL: {
        const char *key = p;
        p += strlen(p) + 1;
        if (!skip)
            rc = db_writer_label_back(q->w, key, p, e);
        p += strlen(p) + 1;
        break;
    }
    case OP_SKIP:
        if (!skip)
            db_writer_skip_back(q->w);
        break;
    case OP_SET_NODE: {
        uint64_t id;
        uint32_t node;
        take(&p, &id, sizeof id);
        take(&p, &node, sizeof node);
        if (!skip)
            rc = db_writer_set_event_node_back(q->w, id, node, e);
        break;
    }
    case OP_CALL: {
        wq_fn fn;
        void *arg;
        int *out;
        take(&p, &fn, sizeof fn);
        take(&p, &arg, sizeof arg);
        take(&p, &out, sizeof out);
        *out = fn(arg); /* made even after a failure: an abort must run */
        break;
    }
    default: abort(); /* only this file writes the queue */
    }
    if (rc)
        fail(q, e);
    return p;
}

/* Makes the calls of one batch. */
static void replay(db_wq *q, const char *p, const char *end)
{
    /* One error for the batch, cleared only when a call wrote to it: a
     * db_error is 516 bytes, too many to zero for each of the several
     * calls an event makes. */
    db_error e = {0};
    for (; p < end; p = wq_next(p)) {
        uint8_t tag = (uint8_t)*p;
        p += WQ_ALIGN;
        p = replay_op(q, tag, p, &e);
        /* msg alone: old_format is only ever set with a message
         * (archive.c, check_format) */
        if (e.msg[0])
            e = (db_error){0};
    }
}

static void *run(void *arg)
{
    db_wq *q = arg;
    pthread_setname_np(pthread_self(), "argusq-db"); /* for top -H, perf */
    const base_chan_batch *b;
    while ((b = base_chan_take(&q->ch))) {
        replay(q, b->buf, b->buf + b->len);
        base_chan_give(&q->ch);
    }
    return NULL;
}

/* ---- the front ---- */

/* The front's look at the caller's interrupt, passed on to the thread. */
static void relay(db_wq *q)
{
    if (q->interrupt && *q->interrupt)
        atomic_store_explicit(&q->interrupted, true, memory_order_relaxed);
}

/* The channel's look as the front hands a batch over or waits for the
 * thread (base_chan_waiting): the interrupt passed on, and with one to
 * pass on, waits in steps of 50 ms, so that a commit the thread has yet
 * to make is not made (a long queue takes seconds). */
static unsigned front_waiting(void *ctx)
{
    db_wq *q = ctx;
    relay(q);
    return q->interrupt ? 50 : 0;
}

db_wq *db_wq_start(bool rebuild)
{
    db_wq *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    size_t nb = rebuild ? WQ_BATCHES_REBUILD : WQ_BATCHES_INGEST;
    if (base_chan_init(&q->ch, nb, WQ_BATCH, front_waiting, q) != 0) {
        free(q);
        return NULL;
    }
    if (pthread_create(&q->thread, NULL, run, q) == 0) {
        q->names_complete = true;
        return q;
    }
    base_chan_free(&q->ch);
    free(q);
    return NULL;
}

/* The batch the front fills. */
static base_chan_batch *filling(db_wq *q) { return &q->ch.fill; }

void db_wq_interrupt(db_wq *q, const volatile sig_atomic_t *flag) { q->interrupt = flag; }

const atomic_bool *db_wq_interrupted(db_wq *q) { return &q->interrupted; }

static char *put(char *p, const void *src, size_t n)
{
    memcpy(p, src, n);
    return p + n;
}

/* Room for an op; -1 (err set) once the thread has failed.  Inline: its
 * call and frame would cost as much as its body, for every event, node,
 * signature and edge. */
static inline char *op(db_wq *q, uint8_t tag, size_t n, db_error *err)
{
    if (atomic_load(&q->failed)) {
        *err = q->err;
        return NULL;
    }
    /* base_chan_room's common case here, so that only the answer of
     * base_chan_room_more (which hands a full batch over, and grows one
     * for an op larger than a batch) is tested for NULL, not the batch's
     * pointer too */
    size_t need = WQ_ALIGN + wq_round(n);
    base_chan_batch *b = filling(q);
    char *p = b->buf + b->len;
    if (b->len + need <= b->cap)
        b->len += need;
    else if (!(p = base_chan_room_more(&q->ch, need))) {
        db_fail_oom(err);
        return NULL;
    }
    *p = (char)tag;
    return p + WQ_ALIGN;
}

/* Queues a block the front handed over, after the event x unless NULL. */
static int queue_block(db_wq *q, const db_evix *x, const db_evblk *blk, db_error *err)
{
    size_t head = x ? sizeof *x : 0;
    char *p = op(q, x ? OP_EVENT_BLK : OP_BLOCK, head + sizeof blk->first + sizeof blk->len + blk->len, err);
    if (!p)
        return -1;
    if (x)
        p = put(p, x, sizeof *x);
    p = put(put(p, &blk->first, sizeof blk->first), &blk->len, sizeof blk->len);
    put(p, blk->bytes, blk->len);
    return 0;
}

int db_wq_event(db_wq *q, db_event *ev, db_error *err)
{
    db_evblk blk;
    int handed = db_evfront_add(&q->front, ev, &blk); /* ev->id: what the writer gives it */
    if (handed < 0)
        return db_fail_oom(err);
    db_evix x;
    if (handed) {
        db_evix_of(&x, ev);
        return queue_block(q, &x, &blk, err);
    }
    char *p = op(q, OP_EVENT, sizeof x, err);
    if (!p)
        return -1;
    /* made where it goes (an op's payload is WQ_ALIGN-aligned, as a
     * db_evix needs), not on the stack and copied */
    _Static_assert(_Alignof(db_evix) <= WQ_ALIGN, "an op's payload holds a db_evix");
    db_evix_of((db_evix *)(void *)p, ev);
    return 0;
}

int db_wq_hand_block(db_wq *q, db_error *err)
{
    db_evblk blk;
    return db_evfront_take(&q->front, &blk) ? queue_block(q, NULL, &blk, err) : 0;
}

uint64_t db_wq_next_event_id(const db_wq *q) { return q->front.events + 1; }

int db_wq_node(db_wq *q, const db_node *n, uint32_t thread_key, db_error *err)
{
    char *p = op(q, OP_NODE, sizeof *n + sizeof thread_key, err);
    return p ? (put(put(p, n, sizeof *n), &thread_key, sizeof thread_key), 0) : -1;
}

int db_wq_edge(db_wq *q, const db_edge *e, db_error *err)
{
    char *p = op(q, OP_EDGE, sizeof *e, err);
    return p ? (put(p, e, sizeof *e), 0) : -1;
}

/* A signature's bytes in an op: its head and the hashes the node has,
 * not a copy of the whole db_sig (272 bytes, most of them unused) */
static uint32_t sig_hashes(const db_sig *s) { return s->n > DB_SIG_MAX ? DB_SIG_MAX : s->n; }

static size_t sig_bytes(const db_sig *s) { return offsetof(db_sig, h) + sig_hashes(s) * sizeof *s->h; }

static void put_sig(char *p, const db_sig *s)
{
    uint32_t n = sig_hashes(s);
    memcpy(p, s, offsetof(db_sig, h));
    memcpy(p + offsetof(db_sig, n), &n, sizeof n);
    put(p + offsetof(db_sig, h), s->h, n * sizeof *s->h);
}

int db_wq_signature(db_wq *q, const db_sig *s, db_error *err)
{
    char *p = op(q, OP_SIG, sig_bytes(s), err);
    if (!p)
        return -1;
    put_sig(p, s);
    return 0;
}

/* The graph writes a node with its signature (db_writer_node_sig): one op
 * for both, one turn of replay's loop and one op's room asked for, not
 * two. */
int db_wq_node_sig(db_wq *q, const db_node *n, uint32_t thread_key, const db_sig *s, db_error *err)
{
    char *p = op(q, OP_NODE_SIG, WQ_NODE_BYTES + sig_bytes(s), err);
    if (!p)
        return -1;
    put(put(p, n, sizeof *n), &thread_key, sizeof thread_key);
    put_sig(p + WQ_NODE_BYTES, s);
    return 0;
}

/* An op of a number and a string (NUL included). */
static int num_text(db_wq *q, uint8_t tag, const void *num, size_t size, const char *s, size_t len, db_error *err)
{
    char *p = op(q, tag, size + len + 1, err);
    if (!p)
        return -1;
    p = put(put(p, num, size), s, len);
    *p = 0;
    return 0;
}

int db_wq_label(db_wq *q, const char *key, const char *value, db_error *err)
{
    size_t k = strlen(key), v = strlen(value);
    char *p = op(q, OP_LABEL, k + v + 2, err);
    if (!p)
        return -1;
    p = put(put(p, key, k + 1), value, v + 1);
    (void)p;
    return 0;
}

int db_wq_norm(db_wq *q, uint32_t hash, const char *text, db_error *err)
{
    return num_text(q, OP_NORM, &hash, sizeof hash, text, strnlen(text, 255), err);
}

int db_wq_proc(db_wq *q, uint32_t pid, const char *name, db_error *err)
{
    size_t n = strnlen(name, DB_NAME_MAX - 1);
    if (num_text(q, OP_PROC, &pid, sizeof pid, name, n, err))
        return -1;
    db_names_set_proc(&q->names, pid, name, n);
    q->names_complete = q->names_complete && db_names_proc(&q->names, pid);
    return 0;
}

int db_wq_thread(db_wq *q, const db_thread *t, db_error *err)
{
    char *p = op(q, OP_THREAD, sizeof *t, err);
    if (!p)
        return -1;
    db_thread copy = db_thread_stored(t); /* as the writer keeps it */
    put(p, &copy, sizeof copy);
    db_names_set_thread(&q->names, &copy);
    q->names_complete = q->names_complete && db_names_thread(&q->names, t->tid);
    return 0;
}

/* A trace that starts with threads and processes the queue did not carry
 * (a rebuild's copy, which copies them on the writer's thread): the front
 * learns them, so that a miss still means "no such thread". */
void db_wq_know_thread(db_wq *q, const db_thread *t)
{
    db_thread copy = db_thread_stored(t);
    db_names_set_thread(&q->names, &copy);
    q->names_complete = q->names_complete && db_names_thread(&q->names, t->tid);
}

void db_wq_know_proc(db_wq *q, uint32_t pid, const char *name)
{
    size_t n = strnlen(name, DB_NAME_MAX - 1);
    db_names_set_proc(&q->names, pid, name, n);
    q->names_complete = q->names_complete && db_names_proc(&q->names, pid);
}

int db_wq_symbol(db_wq *q, uint64_t addr, const char *name, db_error *err)
{
    return num_text(q, OP_SYMBOL, &addr, sizeof addr, name, strnlen(name, 255), err);
}

void db_wq_skip(db_wq *q)
{
    db_error e;
    op(q, OP_SKIP, 0, &e);
}

int db_wq_set_event_node(db_wq *q, uint64_t event_id, uint32_t node, db_error *err)
{
    char *p = op(q, OP_SET_NODE, sizeof event_id + sizeof node, err);
    return p ? (put(put(p, &event_id, sizeof event_id), &node, sizeof node), 0) : -1;
}

/* Runs fn(arg) on the thread once everything queued before is done. */
static int call(db_wq *q, wq_fn fn, void *arg)
{
    int rc = -1;
    int *out = &rc;
    char *p = base_chan_room(&q->ch, WQ_ALIGN + wq_round(sizeof fn + sizeof arg + sizeof out));
    if (!p)
        return -1; /* the caller's error says out of memory */
    *p = (char)OP_CALL;
    p += WQ_ALIGN;
    put(put(put(p, &fn, sizeof fn), &arg, sizeof arg), &out, sizeof out);
    /* the call is its batch's last op: once the thread has given every
     * batch back, it has made it and written rc (the channel's lock orders
     * that write before this read); never false, the channel is never
     * aborted */
    base_chan_drain(&q->ch);
    return rc;
}

/* A call whose errors come back in a db_error: with the queue's failure,
 * if an earlier queued call failed. */
static int call_err(db_wq *q, wq_fn fn, void *arg, db_error *err)
{
    int rc = call(q, fn, arg);
    if (rc == -1 && !err->msg[0])
        db_fail_oom(err);
    return rc;
}

int db_wq_failed(db_wq *q, db_error *err)
{
    if (!atomic_load(&q->failed))
        return 0;
    *err = q->err;
    return -1;
}

struct a_begin {
    db_wq *q;
    db_writer *(*fn)(db_wq *q, void *ctx);
    void *ctx;
    db_writer *w;
};

static int f_begin(void *p)
{
    struct a_begin *a = p;
    a->w = a->fn(a->q, a->ctx);
    a->q->w = a->w;
    return 0;
}

db_writer *db_wq_begin(db_wq *q, db_writer *(*fn)(db_wq *q, void *ctx), void *ctx)
{
    struct a_begin a = {q, fn, ctx, NULL};
    if (call(q, f_begin, &a))
        return NULL;
    return a.w;
}

struct a_fn {
    db_wq *q;
    int (*fn)(void *ctx);
    void *ctx;
    db_error *err;
    bool always;
};

static int f_any(void *p)
{
    struct a_fn *a = p;
    if (!a->always && db_wq_failed(a->q, a->err))
        return -1;
    return a->fn(a->ctx);
}

/* fn(ctx) on the thread, after what was queued before; unless one of those
 * failed (its error then), or `always`. */
static int run_fn(db_wq *q, int (*fn)(void *ctx), void *ctx, db_error *err, bool always)
{
    struct a_fn a = {q, fn, ctx, err, always};
    return call_err(q, f_any, &a, err);
}

int db_wq_run(db_wq *q, int (*fn)(void *ctx), void *ctx, db_error *err) { return run_fn(q, fn, ctx, err, false); }

int db_wq_run_always(db_wq *q, int (*fn)(void *ctx), void *ctx, db_error *err)
{
    return run_fn(q, fn, ctx, err, true);
}

const db_thread *db_wq_known_thread(const db_wq *q, uint32_t tid, bool *absent)
{
    const db_thread *t = db_names_thread(&q->names, tid);
    *absent = !t && q->names_complete;
    return t;
}

const char *db_wq_known_proc(const db_wq *q, uint32_t pid, bool *absent)
{
    const char *n = db_names_proc(&q->names, pid);
    *absent = !n && q->names_complete;
    return n;
}

void db_wq_stop(db_wq *q)
{
    if (!q)
        return;
    base_chan_close(&q->ch); /* what is left goes (after a failure: skipped) */
    pthread_join(q->thread, NULL);
    base_chan_free(&q->ch);
    db_names_free(&q->names);
    db_evfront_free(&q->front);
    free(q);
}
