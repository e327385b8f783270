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
 * The batches go through a base_chan (base/chan.c).  Memory: at most
 * PIPE_BATCHES batches of PIPE_BATCH bytes (a batch grows only for a call
 * larger than that), whatever the trace's size; of those, only as many
 * are touched as the queue held at its fullest, which is a few when the
 * reader is the slower side.
 *
 * Failure: when the back sink refuses a call, the consumer keeps its
 * message, aborts the channel (what is queued is dropped, and the reader
 * waits for it no more), and every later front call fails with
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
 * WQ_BATCHES_INGEST */
#define PIPE_BATCHES 32
#define PIPE_BATCH ((size_t)1 << 20)

typedef struct ingest_pipe {
    ingest_sink back;
    const char *path;
    const ingest_opts *opts;
    atomic_bool failed; /* the back sink refused a call */
    char err[1024];     /* its message */
    /* the reader's side */
    ingest_sink front;
    base_chan ch; /* the reader fills ch.fill, the calling thread replays
                   * what it hands over; fill sits among the reader's own
                   * fields, away from back, which replay reads each call */
    ingest_format format;
    ingest_stats st;
    int rc;
    char rerr[1024];
} ingest_pipe;

/* ---- the consumer ---- */

/* Makes the calls of one batch on the back sink; 0, or -1 (p->err set). */
static int replay(ingest_pipe *p, const base_chan_batch *b)
{
    char err[1024] = "";
    if (ingest_calls_replay(b->buf, b->len, &p->back, err, sizeof err) == 0)
        return 0;
    snprintf(p->err, sizeof p->err, "%s", err);
    return -1;
}

/* The calling thread: every batch, in order, until the reader is done;
 * after a refusal the channel is aborted, so what is queued is dropped
 * and the reader waits no more (it stops at its next call). */
static void consume(ingest_pipe *p)
{
    const base_chan_batch *b;
    while ((b = base_chan_take(&p->ch))) {
        if (replay(p, b) < 0) {
            atomic_store(&p->failed, true);
            base_chan_abort(&p->ch);
        }
        base_chan_give(&p->ch);
    }
}

/* ---- the front sink (the reader's thread) ---- */

static int failed(ingest_pipe *p, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s", p->path, p->err);
    return -1;
}

/* Room for n bytes in the current batch: a full batch is handed over
 * first (a call larger than a batch grows it).  NULL when out of memory.
 * Inline where it fits, as it mostly does, not a call of room each
 * event. */
static inline char *room(ingest_pipe *p, size_t n) { return base_chan_room(&p->ch, n); }

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
    base_chan_batch *b = &p->ch.fill;
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
    if (!atomic_load(&p->failed) && p->ch.fill.len)
        base_chan_hand_over(&p->ch);
}

/* The reader's thread: the whole file through the front sink, then the
 * last batch. */
static void *read_all(void *arg)
{
    ingest_pipe *p = arg;
    pthread_setname_np(pthread_self(), "argusq-read"); /* for top -H, perf */
    p->rc = ingest_file_opts(p->path, &p->front, p->opts, &p->format, &p->st, p->rerr, sizeof p->rerr);
    base_chan_close(&p->ch);
    return NULL;
}

int ingest_file_threaded(const char *path, const ingest_sink *back, const ingest_opts *opts, ingest_format *format,
                         ingest_stats *st, char *err, size_t errlen)
{
    ingest_pipe *p = calloc(1, sizeof *p);
    pthread_t th;
    if (!p)
        return ingest_file_opts(path, back, opts, format, st, err, errlen);
    p->back = *back;
    p->path = path;
    p->opts = opts;
    atomic_init(&p->failed, false);
    p->front = (ingest_sink){.ctx = p,
                             .proc = back->proc ? f_proc : NULL,
                             .thread = back->thread ? f_thread : NULL,
                             .symbol = back->symbol ? f_symbol : NULL,
                             .event = back->event ? f_event : NULL,
                             .skip = back->skip ? f_skip : NULL,
                             .progress = back->progress ? f_progress : NULL,
                             .end = f_end};
    if (base_chan_init(&p->ch, PIPE_BATCHES, PIPE_BATCH, NULL, NULL) != 0)
        goto alone;
    if (pthread_create(&th, NULL, read_all, p) != 0) {
        base_chan_free(&p->ch);
        goto alone;
    }
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
    base_chan_free(&p->ch);
    free(p);
    return rc;
alone: /* no second thread: the plain path */
    free(p);
    return ingest_file_opts(path, back, opts, format, st, err, errlen);
}
