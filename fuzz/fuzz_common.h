/* fuzz/fuzz_common.h -- shared by the libFuzzer harnesses of the trace
 * readers (fuzz_ftrace.c, fuzz_argus.c).
 *
 *   fuzz_lines_open   the readers' own line splitter (ingest_lines) over the
 *                     fuzzer's bytes, through fmemopen: the same code path
 *                     as a file, without touching the disk
 *   fuzz_sink         a sink that stores nothing but checks what ingest.h
 *                     promises: proc before thread, thread before event, an
 *                     event's pid is its thread's, names are C strings
 *   fuzz_check_error  a failed read says "PATH:LINE: what" (or PATH: ...)
 *
 * A broken promise aborts, which libFuzzer reports as a crash. */
#ifndef ARGUSQ_FUZZ_COMMON_H
#define ARGUSQ_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest_int.h"

#define FUZZ_PATH "fuzz-input"

static inline void fuzz_fail(const char *what, unsigned long long a)
{
    fprintf(stderr, "fuzz: broken promise: %s (%llu)\n", what, a);
    abort();
}

/* Like ingest_lines_open, but over memory, and with one buffer for every
 * input (a fresh 1 MB buffer per input costs an mmap under ASan, most of
 * an execution's time).  Returns 0, or -1 (no memory). */
static inline int fuzz_lines_open(ingest_lines *lb, const uint8_t *data, size_t size)
{
    static char *buf;
    memset(lb, 0, sizeof *lb);
    lb->path = FUZZ_PATH;
    lb->cap = INGEST_LINE_MAX + 1;
    if (!buf && !(buf = malloc(lb->cap + 1)))
        return -1;
    lb->buf = buf;
    /* "r" never writes through the pointer; fmemopen wants it non-const */
    lb->f = fmemopen((void *)(uintptr_t)data, size, "r");
    return lb->f ? 0 : -1;
}

/* ingest_lines_close without freeing the shared buffer. */
static inline void fuzz_lines_close(ingest_lines *lb)
{
    fclose(lb->f);
}

/* ---- the checking sink: a state per id (base_map: id -> its entry) ---- */

enum { FZ_PROC = 1, FZ_THREAD = 2 };

typedef struct fuzz_ent {
    uint32_t pid; /* of thread id, when FZ_THREAD */
    uint8_t flags;
} fuzz_ent;

typedef struct fuzz_sink {
    fuzz_ent *tab;
    size_t cap, used;
    base_map ids;
    uint64_t events;
    unsigned sum; /* touches every byte the reader hands over */
} fuzz_sink;

static inline fuzz_ent *fuzz_get(fuzz_sink *s, uint32_t id)
{
    uint32_t i;
    if (!base_map_get(&s->ids, id, &i)) {
        if (!base_grow((void **)&s->tab, &s->cap, s->used + 1, sizeof *s->tab) ||
            base_map_put(&s->ids, id, (uint32_t)s->used))
            abort();
        i = (uint32_t)s->used++;
        s->tab[i] = (fuzz_ent){0};
    }
    return &s->tab[i];
}

static inline void fuzz_touch(fuzz_sink *s, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        s->sum += (unsigned char)p[i];
}

static int fz_proc(void *ctx, uint32_t pid, const char *name, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    fuzz_sink *s = ctx;
    fuzz_touch(s, name, strlen(name));
    fuzz_get(s, pid)->flags |= FZ_PROC;
    return 0;
}

static int fz_thread(void *ctx, const db_thread *t, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    fuzz_sink *s = ctx;
    if (!memchr(t->name, '\0', sizeof t->name))
        fuzz_fail("thread name not terminated", t->tid);
    if (!(fuzz_get(s, t->pid)->flags & FZ_PROC))
        fuzz_fail("thread() before proc() of its pid", t->pid);
    fuzz_ent *e = fuzz_get(s, t->tid);
    e->flags |= FZ_THREAD;
    e->pid = t->pid;
    return 0;
}

static int fz_symbol(void *ctx, uint64_t addr, const char *name, char *err, size_t errlen)
{
    (void)addr, (void)err, (void)errlen;
    fuzz_touch(ctx, name, strlen(name));
    return 0;
}

static int fz_event(void *ctx, db_event *ev, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    fuzz_sink *s = ctx;
    fuzz_ent *e = fuzz_get(s, ev->tid);
    if (!(e->flags & FZ_THREAD))
        fuzz_fail("event() of an undeclared thread", ev->tid);
    if (e->pid != ev->pid)
        fuzz_fail("event's pid is not its thread's", ev->pid);
    if (!ev->name)
        fuzz_fail("event without a name", s->events);
    fuzz_touch(s, ev->name, strlen(ev->name));
    fuzz_touch(s, ev->attrs, ev->attrs_len);
    s->events++;
    return 0;
}

static inline ingest_sink fuzz_sink_make(fuzz_sink *s)
{
    memset(s, 0, sizeof *s);
    ingest_sink k = {.ctx = s, .proc = fz_proc, .thread = fz_thread, .symbol = fz_symbol,
                     .event = fz_event};
    return k;
}

static inline void fuzz_sink_free(fuzz_sink *s)
{
    free(s->tab);
    base_map_free(&s->ids);
}

/* rc of a reader: on failure the message must name the input, then a line
 * number (the promise of ingest.h: "PATH:LINE: message"). */
static inline void fuzz_check_error(int rc, const char *err)
{
    size_t n = strlen(FUZZ_PATH);
    if (rc == 0)
        return;
    if (rc != -1)
        fuzz_fail("reader returned neither 0 nor -1", (unsigned long long)rc);
    if (strncmp(err, FUZZ_PATH ":", n + 1) != 0 || err[n + 1] < '0' || err[n + 1] > '9')
        fuzz_fail("error message without PATH:LINE", 0);
    if (!strchr(err + n + 1, ' '))
        fuzz_fail("error message says nothing", 0);
}

#endif
