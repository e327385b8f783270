/* base/chan.c -- a channel of byte batches from one thread to another
 * (base.h): the ring, its lock and conditions, the batches' buffers, and
 * the two ends' waits.  What a batch holds, and what a refused item
 * means, are the users' (ingest/pipe.c, db/wqueue.c).
 *
 * Every buffer is in exactly one place: fill (the producer's), the ring
 * (queued, or taken by the consumer), or spare.  Until the channel is
 * aborted there are nb of them, so a producer that holds fill leaves the
 * ring a free slot, and one that waited for count < nb finds a buffer in
 * spare. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "base.h"

/* Both ends' share, under mu. */
struct base_chan_ring {
    pthread_mutex_t mu;
    pthread_cond_t ready; /* a batch queued, the channel closed or aborted */
    pthread_cond_t freed; /* a batch given back, or the channel aborted */
    base_chan_batch q[BASE_CHAN_MAX]; /* queued: q[head .. head + count) mod nb */
    size_t nb, head, count;           /* a taken batch counts until given back */
    size_t wake;                      /* the producer waits for count <= wake */
    bool taken;                       /* the consumer reads q[head] */
    bool closed, aborted;
    base_bufstack spare; /* the buffers neither filled nor queued */
    base_chan_waiting waiting;
    void *ctx;
};

_Static_assert(BASE_CHAN_MAX < BASE_BUFSTACK_MAX, "spare holds every buffer, and one more after an abort");

int base_chan_init(base_chan *c, size_t nb, size_t size, base_chan_waiting waiting, void *ctx)
{
    assert(nb >= 1 && nb <= BASE_CHAN_MAX && size > 0);
    struct base_chan_ring *r = calloc(1, sizeof *r);
    *c = (base_chan){.ring = r};
    if (!r)
        return -1;
    r->nb = nb;
    r->wake = SIZE_MAX;
    r->waiting = waiting;
    r->ctx = ctx;
    base_bufstack_init(&r->spare, size);
    for (size_t i = 0; i < nb; i++) {
        char *b = malloc(size);
        if (!b)
            goto spare;
        base_bufstack_give(&r->spare, b, size);
    }
    c->fill.buf = base_bufstack_take(&r->spare, &c->fill.cap);
    if (pthread_mutex_init(&r->mu, NULL) != 0)
        goto spare;
    if (pthread_cond_init(&r->ready, NULL) != 0)
        goto mu;
    if (pthread_cond_init(&r->freed, NULL) != 0)
        goto ready;
    return 0;
ready:
    pthread_cond_destroy(&r->ready);
mu:
    pthread_mutex_destroy(&r->mu);
spare:
    free(c->fill.buf);
    base_bufstack_free(&r->spare);
    free(r);
    *c = (base_chan){0};
    return -1;
}

void base_chan_free(base_chan *c)
{
    struct base_chan_ring *r = c->ring;
    pthread_cond_destroy(&r->freed);
    pthread_cond_destroy(&r->ready);
    pthread_mutex_destroy(&r->mu);
    free(c->fill.buf);
    for (size_t i = 0; i < r->count; i++)
        free(r->q[(r->head + i) % r->nb].buf);
    base_bufstack_free(&r->spare);
    free(r);
    *c = (base_chan){0};
}

/* ---- the producer (the lock held in each but room_more) ---- */

/* fill into the ring, for the consumer; once aborted, emptied instead */
static void queue_fill(base_chan *c)
{
    struct base_chan_ring *r = c->ring;
    if (r->waiting)
        r->waiting(r->ctx);
    if (r->aborted) {
        c->fill.len = 0;
        return;
    }
    assert(r->count < r->nb); /* fill held a buffer, so the ring has a slot */
    r->q[(r->head + r->count) % r->nb] = c->fill;
    r->count++;
    c->fill = (base_chan_batch){0};
    pthread_cond_signal(&r->ready);
}

/* Waits until at most `most` batches are queued, or the channel is
 * aborted; then fill has a buffer (NULL when an abort left none and
 * memory ran out: room_more then allocates one itself).  false when
 * aborted. */
static bool wait_queued(base_chan *c, size_t most)
{
    struct base_chan_ring *r = c->ring;
    r->wake = most;
    while (r->count > most && !r->aborted) {
        unsigned ms = r->waiting ? r->waiting(r->ctx) : 0;
        if (!ms) {
            pthread_cond_wait(&r->freed, &r->mu);
            continue;
        }
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        t.tv_sec += ms / 1000;
        t.tv_nsec += (long)(ms % 1000) * 1000000;
        if (t.tv_nsec >= 1000000000) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000;
        }
        pthread_cond_clockwait(&r->freed, &r->mu, CLOCK_MONOTONIC, &t);
    }
    r->wake = SIZE_MAX;
    if (!c->fill.buf) {
        assert(r->aborted || r->spare.n); /* nb buffers, at most nb - 1 queued */
        c->fill.buf = base_bufstack_take(&r->spare, &c->fill.cap);
    }
    return !r->aborted;
}

bool base_chan_hand_over(base_chan *c)
{
    struct base_chan_ring *r = c->ring;
    pthread_mutex_lock(&r->mu);
    queue_fill(c);
    bool ok = wait_queued(c, r->nb - 1);
    pthread_mutex_unlock(&r->mu);
    return ok;
}

bool base_chan_drain(base_chan *c)
{
    struct base_chan_ring *r = c->ring;
    pthread_mutex_lock(&r->mu);
    if (c->fill.len)
        queue_fill(c);
    bool ok = wait_queued(c, 0);
    pthread_mutex_unlock(&r->mu);
    return ok;
}

void base_chan_close(base_chan *c)
{
    struct base_chan_ring *r = c->ring;
    pthread_mutex_lock(&r->mu);
    if (c->fill.len)
        queue_fill(c);
    r->closed = true;
    pthread_cond_signal(&r->ready);
    pthread_mutex_unlock(&r->mu);
}

/* A full fill handed over first; then, if the n bytes still do not fit,
 * fill grows in doublings of its size (a grown buffer goes back to spare
 * as it is, for the next large item). */
char *base_chan_room_more(base_chan *c, size_t n)
{
    base_chan_batch *b = &c->fill;
    if (b->len && b->len + n > b->cap)
        base_chan_hand_over(c); /* aborted: fill emptied, which serves as well */
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : c->ring->spare.size;
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

/* ---- the consumer ---- */

const base_chan_batch *base_chan_take(base_chan *c)
{
    struct base_chan_ring *r = c->ring;
    pthread_mutex_lock(&r->mu);
    assert(!r->taken); /* the last one was given back */
    while (!r->count && !r->closed && !r->aborted)
        pthread_cond_wait(&r->ready, &r->mu);
    const base_chan_batch *b = NULL;
    if (r->count && !r->aborted) {
        b = &r->q[r->head];
        r->taken = true;
    }
    pthread_mutex_unlock(&r->mu);
    return b;
}

void base_chan_give(base_chan *c)
{
    struct base_chan_ring *r = c->ring;
    pthread_mutex_lock(&r->mu);
    assert(r->taken && r->count);
    base_chan_batch *b = &r->q[r->head];
    base_bufstack_give(&r->spare, b->buf, b->cap);
    *b = (base_chan_batch){0};
    r->head = (r->head + 1) % r->nb;
    r->count--;
    r->taken = false;
    if (r->count <= r->wake) /* not a wake-up for each batch of a drain */
        pthread_cond_signal(&r->freed);
    pthread_mutex_unlock(&r->mu);
}

/* ---- either side ---- */

void base_chan_abort(base_chan *c)
{
    struct base_chan_ring *r = c->ring;
    pthread_mutex_lock(&r->mu);
    r->aborted = true;
    size_t keep = r->taken ? 1 : 0; /* the consumer's, until it gives it back */
    for (size_t i = keep; i < r->count; i++) {
        base_chan_batch *b = &r->q[(r->head + i) % r->nb];
        base_bufstack_give(&r->spare, b->buf, b->cap);
        *b = (base_chan_batch){0};
    }
    r->count = keep;
    pthread_cond_broadcast(&r->ready);
    pthread_cond_broadcast(&r->freed);
    pthread_mutex_unlock(&r->mu);
}
