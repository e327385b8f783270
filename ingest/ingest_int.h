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
 *   ingest_reorder_*    the reorder window of the text readers (reorder.c)
 *
 * Each family of readers has a folder and an internal header of its own,
 * which includes this one: argus/, ftrace/ (text, trace.dat, and the
 * ftrace mapping, ftrace_map_int.h, which perf/, ctf/ and perfetto/ feed
 * too), perf/, ctf/, perfetto/. */
#ifndef ARGUSQ_INGEST_INT_H
#define ARGUSQ_INGEST_INT_H

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
