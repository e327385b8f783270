/* ingest/calls.c -- sink calls as bytes: the ingest pipe (pipe.c) carries
 * them to another thread, the reorder window (reorder.c) holds them until
 * their time comes.  A call is a tag byte and its arguments copied flat;
 * replaying the bytes makes the same calls, in the same order. */
#include <stdio.h>
#include <string.h>

#include "ingest_int.h"

static char *wr(char *q, const void *src, size_t n)
{
    memcpy(q, src, n);
    return q + n;
}

static size_t rd(const char *p, void *dst, size_t n)
{
    memcpy(dst, p, n);
    return n;
}

size_t ingest_call_named_size(size_t num, const char *name)
{
    return 1 + num + 4 + strlen(name) + 1;
}

void ingest_call_named_put(char *q, uint8_t tag, const void *num, size_t size, const char *name)
{
    uint32_t n = (uint32_t)strlen(name);
    *q++ = (char)tag;
    q = wr(q, num, size);
    q = wr(q, &n, 4);
    memcpy(q, name, n + 1);
}

void ingest_call_thread_put(char *q, const db_thread *t)
{
    *q++ = INGEST_C_THREAD;
    wr(q, t, sizeof *t);
}

void ingest_call_progress_put(char *q, uint64_t done, uint64_t total)
{
    *q++ = INGEST_C_PROGRESS;
    q = wr(q, &done, 8);
    wr(q, &total, 8);
}

/* A call other than an event, at q (after its tag): what the sink said,
 * or -1 (err set) for a tag that is no call's.  *qp: past its arguments. */
static int replay_other(const char **qp, uint8_t tag, const ingest_sink *s, char *err, size_t errlen)
{
    const char *q = *qp;
    int rc = 0;
    switch (tag) {
    case INGEST_C_PROC: {
        uint32_t pid, n;
        q += rd(q, &pid, 4);
        q += rd(q, &n, 4);
        if (s->proc)
            rc = s->proc(s->ctx, pid, q, err, errlen);
        q += n + 1;
        break;
    }
    case INGEST_C_THREAD: {
        db_thread t;
        q += rd(q, &t, sizeof t);
        if (s->thread)
            rc = s->thread(s->ctx, &t, err, errlen);
        break;
    }
    case INGEST_C_SYMBOL: {
        uint64_t addr;
        uint32_t n;
        q += rd(q, &addr, 8);
        q += rd(q, &n, 4);
        if (s->symbol)
            rc = s->symbol(s->ctx, addr, q, err, errlen);
        q += n + 1;
        break;
    }
    case INGEST_C_SKIP:
        if (s->skip)
            s->skip(s->ctx);
        break;
    case INGEST_C_PROGRESS: {
        uint64_t done, total;
        q += rd(q, &done, 8);
        q += rd(q, &total, 8);
        if (s->progress)
            s->progress(s->ctx, done, total);
        break;
    }
    default:
        snprintf(err, errlen, "internal error: bad sink call %u", tag);
        return -1;
    }
    *qp = q;
    return rc;
}

int ingest_calls_replay(const char *q, size_t len, const ingest_sink *s, char *err, size_t errlen)
{
    const char *end = q + len;
    while (q < end) {
        int rc = 0;
        uint8_t tag = (uint8_t)*q++;
        /* an event (nearly every call) on a path of its own, laid out
         * as the one expected, not through the switch's jump table */
        if (__builtin_expect(tag == INGEST_C_EVENT, 1)) {
            db_event ev;
            uint32_t nl;
            q += rd(q, &ev, sizeof ev);
            q += rd(q, &nl, 4);
            ev.name = q;
            ev.name_len = nl; /* the graph thread's, not measured again (db.h) */
            q += nl + 1;
            ev.attrs = q;
            q += ev.attrs_len;
            if (s->event)
                rc = s->event(s->ctx, &ev, err, errlen);
        } else
            rc = replay_other(&q, tag, s, err, errlen);
        if (rc != 0) {
            if (!err[0])
                snprintf(err, errlen, "the archive refused an event");
            return -1;
        }
    }
    return 0;
}
