/* db/evfront.c -- the half of storing an event that needs no transaction:
 * its id and its place in a block of the events table (evblock.c).
 *
 * It runs where the caller of db_writer_event runs: in a threaded writer
 * (wqueue.c) that is the graph's thread, not the writer's, so encoding the
 * events -- a good part of what the writer's thread did
 * (docs/PERFORMANCE.md) -- happens beside the LMDB work instead of in
 * front of it.  The writer gets each event's index entries (db_evix) and,
 * now and then, a whole block to put.
 *
 * A block is cut when it is full, and for nothing else (not at a batch's
 * commit), so a threaded and an unthreaded ingest store the same blocks.
 * The writer must have every block of the events before it reads them
 * back: the first event out of time order hands over the block so far
 * (the writer then builds a time index from the stored blocks), and so
 * does db_evfront_take before a scan, a graph's clearing or the commit. */
#include <stdlib.h>

#include "db_int.h"

/* Hands over the block being filled: it becomes `done` (valid until the
 * next hand-over) and an empty one is filled from now on. */
static void hand_over(db_evfront *f, db_evblk *out)
{
    db_evblock_enc *t = f->done;
    f->done = f->fill;
    f->fill = t;
    db_evblock_enc_reset(f->fill);
    out->bytes = db_evblock_enc_bytes(f->done, &out->len);
    out->first = db_evblock_enc_first(f->done);
}

/* The event that needs more than the block being filled: the first of
 * all, the first out of time order, or one the block has no room for (rc,
 * what the add said: 1 full, else out of memory).  Out of line, so that
 * db_evfront_add's common case (inline, db_int.h) saves fewer registers
 * (test_evblock's test_front takes every path here). */
int db_evfront_add_more(db_evfront *f, db_event *ev, db_evblk *out, int rc)
{
    if (rc) { /* full (never right after a hand-over: one event fits) */
        if (rc != 1)
            return -1;
        hand_over(f, out);
        return db_evblock_enc_add(f->fill, ev) ? -1 : 1;
    }
    if (!f->fill) {
        f->fill = db_evblock_enc_new();
        f->done = db_evblock_enc_new();
        if (!f->fill || !f->done)
            return -1;
    }
    ev->id = ++f->events;
    int handed = 0;
    /* the writer reads back what it stored when it starts a time index */
    if (!f->unordered && ev->ts < f->last_ts) {
        f->unordered = true;
        if (db_evblock_enc_count(f->fill)) {
            hand_over(f, out);
            handed = 1;
        }
    }
    f->last_ts = ev->ts;
    rc = db_evblock_enc_add(f->fill, ev);
    if (rc == 1) {
        hand_over(f, out);
        handed = 1;
        rc = db_evblock_enc_add(f->fill, ev);
    }
    return rc ? -1 : handed;
}

int db_evfront_take(db_evfront *f, db_evblk *out)
{
    if (!f->fill || !db_evblock_enc_count(f->fill))
        return 0;
    hand_over(f, out);
    return 1;
}

void db_evfront_free(db_evfront *f)
{
    db_evblock_enc_free(f->fill);
    db_evblock_enc_free(f->done);
    f->fill = f->done = NULL;
}
