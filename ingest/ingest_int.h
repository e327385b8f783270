/* ingest/ingest_int.h -- what every reader shares (not public).
 *
 *   ingest_lines_*      the streaming line splitter (lines.c): one large
 *                       buffer, lines split in place, never the whole file;
 *                       and the text readers' loop over lines
 *   errors              the readers' messages, "PATH:LINE: what" (errors.c)
 *   ingest_attr_reserve the buffer an event's key=value attributes go to (attrs.c)
 *   numbers             parsed from and printed into text (numbers.c)
 *   ingest_call_*       sink calls as bytes (calls.c), for the pipe and the
 *                       reorder window
 *   ingest_merge_*      the time merge: held items in time order, the bound,
 *                       the oldest-first release, the late rule (merge.c),
 *                       for the reorder window and Perfetto's CPU merge
 *   ingest_reorder_*    the reorder window of the text readers (reorder.c)
 *
 * Each family of readers has a folder and an internal header of its own,
 * which includes this one: argus/, ftrace/ (text, trace.dat, and the
 * ftrace mapping, ftrace_map_int.h, which perf/, ctf/ and perfetto/ feed
 * too), perf/, ctf/, perfetto/. */
#ifndef ARGUSQ_INGEST_INT_H
#define ARGUSQ_INGEST_INT_H

#include <assert.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ingest.h"

/* ---- line splitter ---- */

/* Requirement: a line longer than this is an error (no line is ever copied
 * out of the buffer, so the buffer must hold the longest line whole). */
#define INGEST_LINE_MAX ((size_t)1 << 20)
/* A name (process, thread, symbol, event) longer than this is an error: no
 * real trace has one, so it means a corrupt file.  Shorter names longer
 * than the archive keeps (DB_NAME_MAX) are cut. */
#define INGEST_NAME_MAX 4096

typedef struct ingest_lines {
    FILE *f;
    const char *path;
    char *buf;       /* INGEST_LINE_MAX + 2 bytes: room for '\n' and a NUL */
    size_t cap;      /* bytes of data the buffer may hold */
    size_t len;      /* bytes of data in buf */
    size_t pos;      /* start of the next line */
    bool eof;
    uint64_t lineno; /* number of the line last returned (1-based) */
    /* progress: the sink's callback, called after every fread */
    void (*progress)(void *ctx, uint64_t bytes, uint64_t total);
    void *progress_ctx;
    uint64_t read, size; /* bytes read so far; the file's size (0 unknown) */
} ingest_lines;

int ingest_lines_open(ingest_lines *lb, const char *path, char *err, size_t errlen);
void ingest_lines_close(ingest_lines *lb);
/* Reads more data if the buffer holds no complete line; used once before
 * the first line so that ingest_detect sees the head of the file. */
int ingest_lines_fill(ingest_lines *lb, char *err, size_t errlen);
/* Next line, NUL-terminated in place (its '\n' and a trailing '\r' are
 * overwritten).  The line stays valid until the next call.
 * Returns 1 (a line), 0 (end of file) or -1 (err = "PATH:LINE: ..."). */
int ingest_lines_next(ingest_lines *lb, char **line, size_t *len, char *err, size_t errlen);

/* The text readers' loop (argus, perf script, ftrace text and systrace):
 * each line to the reader's handler, numbered and counted.  Lines come
 * from lb, or from a source that reads through it (systrace's page,
 * ftrace/ftrace_page.c), whose lines take lb's number too. */
typedef struct ingest_line_loop {
    ingest_lines *lb;
    /* NULL: lb's lines; else the source's, as ingest_lines_next gives them */
    int (*next)(void *src, char **line, size_t *len, char *err, size_t errlen);
    void *src;
    ingest_stats *st;  /* st->lines counts the lines handed on */
    uint64_t *lineno;  /* the reader's line number, set before each call */
    /* 0 for a line read; else the loop stops and returns it */
    int (*line)(void *reader, char *line, size_t len);
    void *reader;
} ingest_line_loop;
/* 0 at the end of the text, -1 for a read error (err set), or what the
 * handler returned for the line that stopped it. */
int ingest_lines_each(const ingest_line_loop *l, char *err, size_t errlen);

/* ---- errors (errors.c) ---- */

/* "PATH:LINE: " and the message, into err (the readers' error form). */
int ingest_vfail(char *err, size_t errlen, const char *path, uint64_t line, const char *fmt, va_list ap);
/* A message without a line (whole-file errors). */
void ingest_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A sink stopped the read: keep its message, with "PATH:LINE: " in front
 * unless it names the file already ("PATH:...").  Returns -1. */
int ingest_sink_failed(char *err, size_t errlen, const char *path, uint64_t line);

/* ---- the attribute buffer (attrs.c) ---- */

/* Room for need more bytes after the alen bytes of the attribute buffer
 * *ab (grown, keeping its content, when *acap is too small).  Returns
 * *ab + alen, or NULL when out of memory.  The ftrace family's
 * attributes (ftrace_reader's ab) and the Argus reader's (argus_attrs)
 * grow through it. */
char *ingest_attr_reserve(char **ab, size_t alen, size_t *acap, size_t need);

/* ---- numbers (numbers.c) ---- */

/* %03lld at b (room for 24 bytes; no NUL), without printf's cost on the
 * per-event path: at least three digits, the sign one of them; returns
 * the length (the other numbers: base_fmt_u64, base_fmt_i64,
 * base_fmt_hex) */
size_t ingest_fmt_i64_03(char *b, int64_t v);

/* Numbers over [p, p + n): decimal, and hex with or without 0x.  The
 * decimals inline: the mapping reads a few an event (pids, a state), and
 * two calls each cost more than the parse. */
bool ingest_dec_u64_long(const char *p, size_t n, uint64_t *out); /* 20 digits, checked for overflow */
static inline bool ingest_dec_u64(const char *p, size_t n, uint64_t *out)
{
    if (n == 0 || n > 20)
        return false;
    if (n == 20)
        return ingest_dec_u64_long(p, n, out);
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) { /* 19 digits cannot overflow: no check per digit */
        unsigned d = (unsigned)(unsigned char)p[i] - '0';
        if (d > 9)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}
static inline bool ingest_dec_u32(const char *p, size_t n, uint32_t *out)
{
    uint64_t v;
    if (!ingest_dec_u64(p, n, &v) || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}
bool ingest_dec_i64(const char *p, size_t n, int64_t *out);
bool ingest_hex_u64(const char *p, size_t n, uint64_t *out);

/* ---- sink calls as bytes (calls.c): the ingest pipe and the reorder
 * window keep calls to make later ---- */

enum { INGEST_C_PROC = 1, INGEST_C_THREAD, INGEST_C_SYMBOL, INGEST_C_EVENT, INGEST_C_SKIP, INGEST_C_PROGRESS };

/* Bytes of a call (tag included), and the call written at q. */
size_t ingest_call_named_size(size_t num, const char *name); /* proc: num 4, symbol: num 8 */
void ingest_call_named_put(char *q, uint8_t tag, const void *num, size_t size, const char *name);
/* An event's call inline, its name copied as a few moves: one an event,
 * where the calls and memcpy's for the name and the db_event cost more
 * than the copy.  The name's length is name_len where the reader gave it
 * (ingest_ft_event: every event of the ftrace family), not measured
 * again by strlen. */
/* an event's call with a name of nl bytes */
static inline size_t ingest_call_event_bytes(const db_event *ev, size_t nl)
{
    return 1 + sizeof *ev + 4 + nl + 1 + ev->attrs_len;
}
static inline size_t ingest_call_event_size(const db_event *ev)
{
    return ingest_call_event_bytes(ev, db_event_name_len(ev));
}
/* size: ingest_call_event_size's, which measured the name already */
static inline void ingest_call_event_put(char *q, const db_event *ev, size_t size)
{
    const char *name = ev->name ? ev->name : "";
    uint32_t nl = (uint32_t)(size - (1 + sizeof *ev + 4 + 1 + ev->attrs_len));
    *q++ = INGEST_C_EVENT;
    memcpy(q, ev, sizeof *ev);
    q += sizeof *ev;
    memcpy(q, &nl, 4);
    q += 4;
    base_copy_short(q, name, nl + 1);
    q += nl + 1;
    if (ev->attrs_len)
        memcpy(q, ev->attrs, ev->attrs_len);
}
#define INGEST_CALL_THREAD_SIZE (1 + sizeof(db_thread))
void ingest_call_thread_put(char *q, const db_thread *t);
#define INGEST_CALL_PROGRESS_SIZE (1 + 16)
void ingest_call_progress_put(char *q, uint64_t done, uint64_t total);
/* Makes the calls of [q, q + len) on s; 0, or -1 with err set. */
int ingest_calls_replay(const char *q, size_t len, const ingest_sink *s, char *err, size_t errlen);

/* ---- the time merge (merge.c) ----
 *
 * What the readers that put events back in time order share: items held
 * in the order of (time, then arrival), at most max of them, handed on
 * oldest first, and the late rule: an item that would go on before one
 * with a later time goes on at that one's time instead, counted (late).
 * The items are the caller's (groups of sink calls, Perfetto's pf_item):
 * the merge holds their keys, ingest_merge_key, which the caller embeds
 * in what it holds, and gives them back as pointers to those keys
 * (INGEST_MERGE_OF finds the caller's struct).  Two shapes hold them:
 *
 *   runs    many sources, each mostly in time order (Perfetto's CPUs):
 *           the caller keeps each source's items in runs, each in time
 *           order (a source's item joins its current run unless earlier
 *           than the run's last, ingest_merge_run_takes), and the merge
 *           orders the runs in a heap by their first items' keys, kept in
 *           the run itself: a k-way merge, whose order is that of one
 *           heap of every item, with the items in the caller's arrays
 *           (warm) and a heap of a few runs (a heap of every item costs a
 *           cache miss a level).  The late rule applies as items leave,
 *           against the last one handed on.
 *   window  one source with small inversions (the text readers): the
 *           held items in one array, oldest first, into which the caller
 *           places each arrival from the newest end (in a sorted input:
 *           no move at all), stopping where it must (the reorder window
 *           keeps an event behind its thread's declarations); the late
 *           rule applies as an item is placed, against the item before
 *           it (or the last handed on), so that what is held stays in
 *           time order and leaves as it is.
 *
 * The hot calls are inline: one or two an event, where a call would cost
 * as much as their compares. */
typedef struct ingest_merge_key {
    uint64_t ts;  /* the time it goes on at */
    uint64_t seq; /* its arrival (ingest_merge_arrive): ties go in that order */
} ingest_merge_key;

/* a run of one source's items in time order (the runs shape), embedded in
 * the caller's run; the caller keeps first as its first item's keys */
typedef struct ingest_merge_run {
    uint64_t last_ts;     /* of its last item */
    ingest_merge_key first;
} ingest_merge_run;

/* the caller's struct of type T whose member M is at p */
#define INGEST_MERGE_OF(p, T, M) ((T *)(void *)((char *)(p) - offsetof(T, M)))

typedef struct ingest_merge {
    size_t held, max; /* items held; the bound (ingest_merge_full) */
    uint64_t seq;     /* the next arrival */
    uint64_t out_ts;  /* time of the last item handed on */
    bool out_any;
    uint64_t *late;   /* items gone on late, counted here (ingest_stats.late) */
    ingest_merge_run **heap; /* the runs shape: a heap of the runs by first */
    size_t nruns, heap_cap;
    ingest_merge_key **win;  /* the window shape: win[head .. head + nwin), oldest first */
    size_t head, nwin;       /* win has room for 2 * max: compacted at its end */
} ingest_merge;

/* An empty merge of at most max items, late ones counted in *late.  The
 * window shape needs ingest_merge_win_init too. */
void ingest_merge_init(ingest_merge *m, size_t max, uint64_t *late);
/* its arrays (the items are the caller's) */
void ingest_merge_free(ingest_merge *m);

/* a before b: earlier, or as early and arrived first */
static inline bool ingest_merge_before(const ingest_merge_key *a, const ingest_merge_key *b)
{
    return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

/* max are held: the oldest goes on, before another is held (the runs
 * shape's caller, Perfetto) or as soon as the one that made max is placed
 * (the window's: the reorder window holds max - 1 between events). */
static inline bool ingest_merge_full(const ingest_merge *m)
{
    return m->held == m->max;
}

/* One more item held: its arrival number. */
static inline uint64_t ingest_merge_arrive(ingest_merge *m)
{
    assert(m->held < m->max);
    m->held++;
    return m->seq++;
}

/* The late rule: an item that goes on after one of time floor goes on at
 * floor if earlier (counted).  True: late. */
static inline bool ingest_merge_late(ingest_merge *m, uint64_t *ts, uint64_t floor)
{
    if (*ts >= floor)
        return false;
    *ts = floor;
    (*m->late)++;
    return true;
}

/* An item of time ts leaves, oldest first: the time it goes on at (the
 * late rule, against the last one handed on). */
static inline uint64_t ingest_merge_out(ingest_merge *m, uint64_t ts)
{
    assert(m->held > 0);
    m->held--;
    if (m->out_any)
        ingest_merge_late(m, &ts, m->out_ts);
    assert(!m->out_any || ts >= m->out_ts); /* what leaves is in time order */
    m->out_any = true;
    m->out_ts = ts;
    return ts;
}

/* -- the runs shape -- */

/* May an item of time ts join run r (its source's current run)?  Not if
 * earlier than its last: it starts a new run. */
static inline bool ingest_merge_run_takes(const ingest_merge_run *r, uint64_t ts)
{
    return ts >= r->last_ts;
}

/* an item of time ts appended to run r */
static inline void ingest_merge_run_appended(ingest_merge_run *r, uint64_t ts)
{
    assert(ts >= r->last_ts);
    r->last_ts = ts;
}

/* Room in the heap for one run more: 0, or -1 out of memory (before the
 * caller makes the run, so that ingest_merge_run_add cannot fail). */
int ingest_merge_run_room(ingest_merge *m);
/* A new run, its first item (r->first) held: into the heap. */
void ingest_merge_run_add(ingest_merge *m, ingest_merge_run *r);

/* the run whose first item is the oldest held (some are held) */
static inline ingest_merge_run *ingest_merge_top(const ingest_merge *m)
{
    assert(m->nruns > 0);
    return m->heap[0];
}

/* the run at i of the heap moved down to its place; always inlined: the
 * run that gave the oldest item mostly stays first, one level's compares,
 * and a call would cost a good part of that */
static inline __attribute__((always_inline)) void ingest_merge_sift(ingest_merge *m, size_t i)
{
    ingest_merge_run **h = m->heap;
    ingest_merge_run *r = h[i];
    for (;;) {
        size_t l = 2 * i + 1, rr = l + 1, c = i;
        ingest_merge_run *cr = r;
        if (l < m->nruns && ingest_merge_before(&h[l]->first, &cr->first))
            c = l, cr = h[l];
        if (rr < m->nruns && ingest_merge_before(&h[rr]->first, &cr->first))
            c = rr, cr = h[rr];
        if (c == i)
            break;
        h[i] = cr;
        i = c;
    }
    h[i] = r;
}

/* The top run's first item went (ingest_merge_out), and its next one, of
 * time ts and arrival seq, is its first now. */
static inline void ingest_merge_top_next(ingest_merge *m, uint64_t ts, uint64_t seq)
{
    ingest_merge_run *r = m->heap[0];
    ingest_merge_key k = {ts, seq};
    assert(!ingest_merge_before(&k, &r->first)); /* a run is in time order */
    r->first = k;
    ingest_merge_sift(m, 0);
}

/* The top run's last item went: the run leaves the heap (the caller frees it). */
static inline void ingest_merge_top_done(ingest_merge *m)
{
    assert(m->nruns > 0);
    if (--m->nruns > 0) {
        m->heap[0] = m->heap[m->nruns];
        ingest_merge_sift(m, 0);
    }
}

/* -- the window shape -- */

/* Its array (2 * max keys): 0, or -1 out of memory. */
int ingest_merge_win_init(ingest_merge *m);

/* the held item at i, oldest first (i < m->nwin) */
static inline ingest_merge_key *ingest_merge_win_at(const ingest_merge *m, size_t i)
{
    return m->win[m->head + i];
}

/* The time an item placed at i (before the held item at i) goes on at, at
 * least: that of the item before it, or of the last one handed on. */
static inline uint64_t ingest_merge_win_floor(const ingest_merge *m, size_t i)
{
    return i > 0 ? ingest_merge_win_at(m, i - 1)->ts : m->out_any ? m->out_ts : 0;
}

/* k (arrived: ingest_merge_arrive; k->ts at least ingest_merge_win_floor's)
 * placed at i, before the held item at i. */
static inline void ingest_merge_win_put(ingest_merge *m, size_t i, ingest_merge_key *k)
{
    assert(i <= m->nwin && m->nwin < m->held);
    assert(k->ts >= ingest_merge_win_floor(m, i));
    assert(i == m->nwin || k->ts <= ingest_merge_win_at(m, i)->ts); /* held in time order */
    if (m->head + m->nwin == 2 * m->max) { /* at the array's end: compacted */
        memmove(m->win, m->win + m->head, m->nwin * sizeof *m->win);
        m->head = 0;
    }
    ingest_merge_key **o = m->win + m->head;
    if (i < m->nwin)
        memmove(o + i + 1, o + i, (m->nwin - i) * sizeof *o);
    o[i] = k;
    m->nwin++;
}

/* The oldest held item leaves (it goes on at its time: placed at no
 * less than the floor, it is never late here). */
static inline ingest_merge_key *ingest_merge_win_take(ingest_merge *m)
{
    assert(m->nwin > 0);
    ingest_merge_key *k = m->win[m->head++];
    if (--m->nwin == 0)
        m->head = 0;
    assert(!m->out_any || k->ts >= m->out_ts);
    ingest_merge_out(m, k->ts);
    return k;
}

/* ---- the reorder window (reorder.c) ----
 *
 * Per-CPU ring buffers merge into one text with small inversions (and
 * tools append lines of their own: systrace's `0.0: clock_sync`).  The
 * window holds the last INGEST_REORDER_WINDOW events, each with the
 * declarations its line made, and hands them on in time order (stable:
 * equal times keep file order).  An event earlier than one already
 * handed on cannot be put back: it goes on at that event's time, and is
 * counted (st->late); one the window put back in place is counted in
 * st->reordered. */
#define INGEST_REORDER_WINDOW 4096
typedef struct ingest_reorder ingest_reorder;
/* *lineno: the reader's current line, named when back refuses an event.
 * NULL when out of memory. */
ingest_reorder *ingest_reorder_new(const ingest_sink *back, ingest_stats *st, const char *path,
                                   const uint64_t *lineno);
/* The sink the reader calls (valid while ro lives). */
const ingest_sink *ingest_reorder_front(ingest_reorder *ro);
/* Hands on everything held (declarations not followed by their event are
 * dropped: the line that made them failed).  0, or -1 with err set. */
int ingest_reorder_finish(ingest_reorder *ro, char *err, size_t errlen);
void ingest_reorder_free(ingest_reorder *ro);

#endif
