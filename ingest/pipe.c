/* ingest/pipe.c -- the reader in another thread: it parses while the
 * calling thread builds the graph (and hands the writes to the writer's
 * own thread, db/wqueue.c), so reading and the graph each have a core.
 * The sink stays in the calling thread, so that it sees one stream of
 * calls in the file's order whichever thread read them.
 *
 * The front sink the reader calls copies each call (event, thread,
 * process, symbol, skip, progress) into a batch; a full batch goes through
 * a bounded queue to the calling thread, which makes the same calls, in
 * the same order, on the back sink.  The back sink therefore sees exactly what it
 * would have seen without the pipe -- readers never read back what a sink
 * wrote into an event -- and the archive is byte for byte the same.
 *
 * Memory: at most PIPE_BATCHES batches of PIPE_BATCH bytes (a batch grows
 * only for a call larger than that), whatever the trace's size; as many
 * as the queue held at its fullest (base_bufstack), which is a few when the
 * reader is the slower side.
 *
 * Failure: when the back sink refuses a call, the consumer keeps its
 * message, discards what follows, and every later front call fails with
 * "PATH: message", which the reader passes on (ingest_sink_failed keeps a
 * message that names the file).  The failing event is behind the reader by
 * at most the queue, so the message names the file, not a line. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest_int.h"

/* 32 MB: slack for the graph's stops (it waits on the writer's queue
 * while the writer commits and syncs a batch, a good part of an ingest
 * with half as many batches: docs/PERFORMANCE.md); see wqueue.c's
 * WQ_BATCHES */
#define PIPE_BATCHES 32
#define PIPE_BATCH ((size_t)1 << 20)

typedef struct batch {
    char *buf;
    size_t len, cap;
} batch;

typedef struct ingest_pipe {
    ingest_sink back;
    const char *path;
    const ingest_opts *opts;
    pthread_mutex_t mu;
    pthread_cond_t cv_full, cv_free;
    batch b[PIPE_BATCHES]; /* a slot's buf: from spare while it is filled or queued, else NULL */
    base_bufstack spare;
    size_t head, count; /* the ready batches: b[head .. head + count) */
    size_t cur;         /* the batch the reader fills: b[(head + count) % N] when
                         * the queue is not full */
    bool done;          /* the reader has handed over everything */
    atomic_bool failed; /* the back sink refused a call */
    char err[1024];     /* its message */
    /* the reader's side */
    ingest_sink front;
    ingest_format format;
    ingest_stats st;
    int rc;
    char rerr[1024];
} ingest_pipe;

/* ---- the consumer ---- */

/* Makes the calls of one batch on the back sink; 0, or -1 (p->err set). */
static int replay(ingest_pipe *p, const batch *b)
{
    char err[1024] = "";
    if (ingest_calls_replay(b->buf, b->len, &p->back, err, sizeof err) == 0)
        return 0;
    snprintf(p->err, sizeof p->err, "%s", err);
    return -1;
}

/* The calling thread: every batch, in order, until the reader is done;
 * after a refusal the rest is discarded (the reader stops at its next
 * call). */
static void consume(ingest_pipe *p)
{
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->count == 0 && !p->done)
            pthread_cond_wait(&p->cv_full, &p->mu);
        if (p->count == 0)
            break;
        batch *b = &p->b[p->head];
        pthread_mutex_unlock(&p->mu);
        if (!atomic_load(&p->failed) && replay(p, b) < 0)
            atomic_store(&p->failed, true);
        pthread_mutex_lock(&p->mu);
        base_bufstack_give(&p->spare, b->buf, b->cap);
        *b = (batch){0};
        p->head = (p->head + 1) % PIPE_BATCHES;
        p->count--;
        pthread_cond_signal(&p->cv_free);
    }
    pthread_mutex_unlock(&p->mu);
}

/* ---- the front sink (the reader's thread) ---- */

/* Hands the current batch to the consumer and takes a free one. */
static void hand_over(ingest_pipe *p)
{
    pthread_mutex_lock(&p->mu);
    p->count++;
    pthread_cond_signal(&p->cv_full);
    while (p->count == PIPE_BATCHES) /* every batch is the consumer's */
        pthread_cond_wait(&p->cv_free, &p->mu);
    p->cur = (p->head + p->count) % PIPE_BATCHES;
    batch *b = &p->b[p->cur];
    if (!b->buf) /* NULL when out of memory: room_more then asks for room itself */
        b->buf = base_bufstack_take(&p->spare, &b->cap);
    pthread_mutex_unlock(&p->mu);
}

static int failed(ingest_pipe *p, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s", p->path, p->err);
    return -1;
}

/* room's other cases: a full batch handed over, a call larger than a
 * batch */
static char *room_more(ingest_pipe *p, size_t n)
{
    batch *b = &p->b[p->cur];
    if (b->len && b->len + n > b->cap) {
        hand_over(p);
        b = &p->b[p->cur];
    }
    if (b->len + n > b->cap) { /* one call larger than a batch (or no batch: out of memory) */
        size_t cap = b->cap ? b->cap : PIPE_BATCH;
        while (b->len + n > cap)
            cap *= 2;
        char *nb = realloc(b->buf, cap);
        if (!nb)
            return NULL;
        b->buf = nb;
        b->cap = cap;
    }
    char *q = b->buf + b->len;
    b->len += n;
    return q;
}

/* Room for n bytes in the current batch: a full batch is handed over
 * first.  NULL when out of memory.  Inline where it fits, as it mostly
 * does, not a call of room each event. */
static inline char *room(ingest_pipe *p, size_t n)
{
    batch *b = &p->b[p->cur];
    if (b->len + n > b->cap)
        return room_more(p, n);
    char *q = b->buf + b->len;
    b->len += n;
    return q;
}

/* Room for a call of n bytes (tag included); NULL with err set when the
 * back sink has refused a call or memory ran out. */
static inline char *call(ingest_pipe *p, size_t n, char *err, size_t errlen)
{
    /* acquire: the consumer's message (p->err), written before it set
     * failed, is read next (relaxed, it raced with that write: TSan, an
     * ingest interrupted while it read) */
    if (atomic_load_explicit(&p->failed, memory_order_acquire)) {
        failed(p, err, errlen);
        return NULL;
    }
    char *q = room(p, n);
    if (!q)
        snprintf(err, errlen, "out of memory (ingest pipe)");
    return q;
}

static int f_proc(void *ctx, uint32_t pid, const char *name, char *err, size_t errlen)
{
    char *q = call(ctx, ingest_call_named_size(4, name), err, errlen);
    if (q)
        ingest_call_named_put(q, INGEST_C_PROC, &pid, 4, name);
    return q ? 0 : -1;
}

static int f_symbol(void *ctx, uint64_t addr, const char *name, char *err, size_t errlen)
{
    char *q = call(ctx, ingest_call_named_size(8, name), err, errlen);
    if (q)
        ingest_call_named_put(q, INGEST_C_SYMBOL, &addr, 8, name);
    return q ? 0 : -1;
}

static int f_thread(void *ctx, const db_thread *t, char *err, size_t errlen)
{
    char *q = call(ctx, INGEST_CALL_THREAD_SIZE, err, errlen);
    if (q)
        ingest_call_thread_put(q, t);
    return q ? 0 : -1;
}

/* Any event: its name measured if need be, room made, a refusal
 * reported. */
static __attribute__((noinline)) int f_event_any(ingest_pipe *p, db_event *ev, char *err, size_t errlen)
{
    size_t size = ingest_call_event_size(ev);
    char *q = call(p, size, err, errlen);
    if (q)
        ingest_call_event_put(q, ev, size);
    return q ? 0 : -1;
}

/* An event whose name's length is known and that fits the batch, with
 * nothing refused: copied here, with no call but the name's memcpy (a
 * name past 16 bytes) and the attributes', so two registers are saved;
 * the rest by f_event_any, a tail call.  As one function, it saved and
 * restored five an event, err and errlen kept for the refusal's message
 * and the event for strlen's call. */
static int f_event(void *ctx, db_event *ev, char *err, size_t errlen)
{
    ingest_pipe *p = ctx;
    batch *b = &p->b[p->cur];
    size_t size = ingest_call_event_bytes(ev, ev->name_len);
    if (!ev->name_len || atomic_load_explicit(&p->failed, memory_order_relaxed) ||
        b->len + size > b->cap)
        return f_event_any(p, ev, err, errlen);
    char *q = b->buf + b->len;
    b->len += size;
    ingest_call_event_put(q, ev, size);
    return 0;
}

static void f_skip(void *ctx)
{
    ingest_pipe *p = ctx;
    char *q = room(p, 1);
    if (q)
        *q = INGEST_C_SKIP;
}

static void f_progress(void *ctx, uint64_t done, uint64_t total)
{
    ingest_pipe *p = ctx;
    char *q = room(p, INGEST_CALL_PROGRESS_SIZE);
    if (q)
        ingest_call_progress_put(q, done, total);
}

/* The reader is done but for its cleanup: its last batch goes now. */
static void f_end(void *ctx)
{
    ingest_pipe *p = ctx;
    if (!atomic_load(&p->failed) && p->b[p->cur].len)
        hand_over(p);
}

/* The reader's thread: the whole file through the front sink, then the
 * last batch. */
static void *read_all(void *arg)
{
    ingest_pipe *p = arg;
    pthread_setname_np(pthread_self(), "argusq-read"); /* for top -H, perf */
    p->rc = ingest_file_opts(p->path, &p->front, p->opts, &p->format, &p->st, p->rerr, sizeof p->rerr);
    pthread_mutex_lock(&p->mu);
    if (p->b[p->cur].len)
        p->count++;
    p->done = true;
    pthread_cond_signal(&p->cv_full);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int ingest_file_threaded(const char *path, const ingest_sink *back, const ingest_opts *opts, ingest_format *format,
                         ingest_stats *st, char *err, size_t errlen)
{
    ingest_pipe *p = calloc(1, sizeof *p);
    pthread_t th;
    int made = 0;
    if (!p)
        return ingest_file_opts(path, back, opts, format, st, err, errlen);
    p->back = *back;
    p->path = path;
    p->opts = opts;
    base_bufstack_init(&p->spare, PIPE_BATCH);
    if (!(p->b[0].buf = base_bufstack_take(&p->spare, &p->b[0].cap)))
        goto alone;
    atomic_init(&p->failed, false);
    p->front = (ingest_sink){.ctx = p,
                             .proc = back->proc ? f_proc : NULL,
                             .thread = back->thread ? f_thread : NULL,
                             .symbol = back->symbol ? f_symbol : NULL,
                             .event = back->event ? f_event : NULL,
                             .skip = back->skip ? f_skip : NULL,
                             .progress = back->progress ? f_progress : NULL,
                             .end = f_end};
    if (pthread_mutex_init(&p->mu, NULL) != 0)
        goto alone;
    made = 1;
    if (pthread_cond_init(&p->cv_full, NULL) != 0)
        goto alone;
    made = 2;
    if (pthread_cond_init(&p->cv_free, NULL) != 0)
        goto alone;
    made = 3;
    if (pthread_create(&th, NULL, read_all, p) != 0)
        goto alone;
    consume(p);
    pthread_join(th, NULL);
    int rc = p->rc;
    if (format)
        *format = p->format;
    if (st)
        *st = p->st;
    if (rc != 0) /* the reader's message (it carries a refusal's too) */
        snprintf(err, errlen, "%s", p->rerr);
    else if (atomic_load(&p->failed)) /* refused after the reader's last call */
        rc = failed(p, err, errlen);
    pthread_cond_destroy(&p->cv_free);
    pthread_cond_destroy(&p->cv_full);
    pthread_mutex_destroy(&p->mu);
    for (int i = 0; i < PIPE_BATCHES; i++)
        free(p->b[i].buf);
    base_bufstack_free(&p->spare);
    free(p);
    return rc;
alone: /* no second thread: the plain path */
    if (made >= 3)
        pthread_cond_destroy(&p->cv_free);
    if (made >= 2)
        pthread_cond_destroy(&p->cv_full);
    if (made >= 1)
        pthread_mutex_destroy(&p->mu);
    for (int i = 0; i < PIPE_BATCHES; i++)
        free(p->b[i].buf);
    base_bufstack_free(&p->spare);
    free(p);
    return ingest_file_opts(path, back, opts, format, st, err, errlen);
}
