/* query/flush.c -- whose writes a cache flush waited for.
 *
 * A block request with a preflush (rwbs `F...`: fsync's `FWS`, the `FF`
 * the block layer issues for it) completes only once the device has made
 * every write it completed before durable.  The time such a request takes
 * is the cost of those writes, not of the flush's own few bytes: on a disk
 * with a volatile cache (or a virtual disk whose host must write the
 * guest's data out first) an fsync of one page waits for whatever another
 * process wrote just before it.  So a wait a flush ended is the writers':
 * the threads that queued writes to the same device since its last flush
 * completed, in proportion to the bytes each queued (the submit events
 * carry them; the completion path cannot say whose data the device is
 * still writing out). */
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

/* Events read back from the flush for the writes before it: a flush's
 * stretch of a trace is short, and an unbounded walk back would read a
 * whole trace without flushes. */
#define FLUSH_SCAN (1u << 20)

static bool attr_is(const db_event *ev, const char *key, const char *val, size_t len)
{
    const char *v;
    size_t n;
    return db_event_attr(ev, key, &v, &n) && n == len && memcmp(v, val, len) == 0;
}

static bool rwbs_has(const db_event *ev, char c, bool first)
{
    const char *v;
    size_t n;
    if (!db_event_attr(ev, "rwbs", &v, &n) || !n)
        return false;
    return first ? v[0] == c : memchr(v, c, n) != NULL;
}

static bool named(const db_event *ev, const char *name)
{
    return ev->name && strcmp(ev->name, name) == 0;
}

/* The writes of one submit event kind (block_bio_queue, else
 * block_rq_insert, else block_rq_issue: each request passes through up
 * to all three, so only one kind is counted) */
enum { BY_BIO, BY_INSERT, BY_ISSUE, BY__COUNT };

static int kind_of(const db_event *ev)
{
    if (named(ev, "block_bio_queue"))
        return BY_BIO;
    if (named(ev, "block_rq_insert"))
        return BY_INSERT;
    if (named(ev, "block_rq_issue"))
        return BY_ISSUE;
    return -1;
}

static void add(query_flush *t, uint32_t tid, uint32_t node, uint64_t bytes)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->w[i].tid == tid) {
            t->w[i].bytes += bytes;
            if (!t->w[i].node)
                t->w[i].node = node;
            return;
        }
    if (t->n == QUERY_FLUSH_WRITERS) { /* the smallest writer gives way */
        size_t lo = 0;
        for (size_t i = 1; i < t->n; i++)
            if (t->w[i].bytes < t->w[lo].bytes)
                lo = i;
        if (t->w[lo].bytes >= bytes)
            return;
        t->w[lo] = (struct query_flush_writer){.tid = tid, .node = node, .bytes = bytes};
        return;
    }
    t->w[t->n++] = (struct query_flush_writer){.tid = tid, .node = node, .bytes = bytes};
}

int query_flush_writers(db_reader *r, const db_edge *io, query_flush *out, db_error *de)
{
    memset(out, 0, sizeof *out);
    db_event ev;
    int got = db_get_event(r, io->to_event, &ev, de);
    if (got <= 0)
        return got;
    bool flush = rwbs_has(&ev, 'F', true);
    got = db_get_event(r, io->from_event, &ev, de);
    if (got <= 0)
        return got;
    flush = flush || rwbs_has(&ev, 'F', true);
    const char *d;
    size_t dl;
    char dev[32];
    if (!flush || !db_event_attr(&ev, "dev", &d, &dl) || dl >= sizeof dev)
        return 0;
    memcpy(dev, d, dl);
    query_flush by[BY__COUNT] = {0};
    for (uint64_t id = io->from_event; id > 1 && io->from_event - id < FLUSH_SCAN;) {
        if ((got = db_get_event(r, --id, &ev, de)) < 0)
            return -1;
        if (!got || !ev.name || memcmp(ev.name, "block_", 6) != 0 || !attr_is(&ev, "dev", dev, dl))
            continue;
        if (named(&ev, "block_rq_complete") && rwbs_has(&ev, 'F', true))
            break; /* the device's previous flush: what came before is durable */
        int k = kind_of(&ev);
        uint64_t sectors;
        if (k < 0 || !rwbs_has(&ev, 'W', false) || !db_event_attr_u64(&ev, "nr_sector", &sectors) || !sectors)
            continue;
        add(&by[k], ev.tid, ev.node, sectors * 512);
        by[k].total += sectors * 512;
    }
    for (int k = 0; k < BY__COUNT; k++)
        if (by[k].total) {
            *out = by[k];
            return 1;
        }
    return 0;
}
