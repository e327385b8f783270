/* tests/unit/test_chan.c -- the channel of byte batches (base/chan.c)
 * on its own, with batches of a few bytes so that every path runs often:
 * items of every size, some larger than a batch, come out whole and in
 * order on another thread; the producer blocks while every batch is
 * queued and goes on when one is given back; close hands over the rest;
 * an abort from either end stops the other's wait; drain returns once
 * the consumer has given everything back; the producer's look
 * (base_chan_waiting) runs while it waits.  make tsan runs it under
 * ThreadSanitizer too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <time.h>

#include "base/base.h"

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

/* Waits (up to 10 s) for *v to reach want; then checks it stays there a
 * while, which is how a blocked thread is told from a slow one. */
static void settles_at(atomic_size_t *v, size_t want)
{
    for (int i = 0; i < 10000 && atomic_load(v) < want; i++)
        sleep_ms(1);
    assert_int_equal(atomic_load(v), want);
    sleep_ms(30);
    assert_int_equal(atomic_load(v), want);
}

/* ---- items through the channel, in order, on two threads ---- */

#define ITEMS 20000

/* item i: its length (4 bytes), then that many bytes of i's pattern; every
 * 997th is larger than a batch */
static uint32_t item_len(uint32_t i) { return i % 997 == 5 ? 300 + i % 50 : i % 41; }
static char item_byte(uint32_t i, uint32_t k) { return (char)(i * 31 + k); }

typedef struct order_ctx {
    base_chan ch;
    uint32_t seen;  /* the consumer's: items checked */
    size_t batches; /* the consumer's: batches taken */
    bool bad;
} order_ctx;

static void *consume_items(void *arg)
{
    order_ctx *o = arg;
    const base_chan_batch *b;
    while ((b = base_chan_take(&o->ch))) {
        o->batches++;
        for (size_t at = 0; at < b->len;) {
            uint32_t n;
            memcpy(&n, b->buf + at, 4);
            at += 4;
            if (n != item_len(o->seen) || at + n > b->len)
                o->bad = true;
            for (uint32_t k = 0; k < n && !o->bad; k++)
                o->bad = b->buf[at + k] != item_byte(o->seen, k);
            at += n;
            o->seen++;
        }
        base_chan_give(&o->ch);
    }
    return NULL;
}

static void test_order(void **state)
{
    (void)state;
    order_ctx o = {0};
    assert_int_equal(base_chan_init(&o.ch, 3, 64, NULL, NULL), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, consume_items, &o), 0);
    for (uint32_t i = 0; i < ITEMS; i++) {
        uint32_t n = item_len(i);
        char *p = base_chan_room(&o.ch, 4 + n);
        assert_non_null(p);
        memcpy(p, &n, 4);
        for (uint32_t k = 0; k < n; k++)
            p[4 + k] = item_byte(i, k);
    }
    base_chan_close(&o.ch);
    pthread_join(th, NULL);
    assert_false(o.bad);
    assert_int_equal(o.seen, ITEMS);
    assert_true(o.batches > ITEMS / 40); /* small batches (grown ones hold 20 items): many hand-overs */
    base_chan_free(&o.ch);
}

/* ---- blocking, and an abort from the consumer ---- */

typedef struct block_ctx {
    base_chan ch;
    atomic_size_t handed; /* hand-overs returned */
    atomic_bool refused;  /* one returned false */
} block_ctx;

static void *hand_over_forever(void *arg)
{
    block_ctx *k = arg;
    for (;;) {
        char *p = base_chan_room(&k->ch, 8);
        memcpy(p, "12345678", 8);
        if (!base_chan_hand_over(&k->ch)) {
            atomic_store(&k->refused, true);
            return NULL;
        }
        atomic_fetch_add(&k->handed, 1);
    }
}

static void test_full_blocks(void **state)
{
    (void)state;
    block_ctx k = {0};
    assert_int_equal(base_chan_init(&k.ch, 2, 16, NULL, NULL), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, hand_over_forever, &k), 0);
    /* two buffers: one queued, the next filled; its hand-over waits */
    settles_at(&k.handed, 1);
    const base_chan_batch *b = base_chan_take(&k.ch);
    assert_non_null(b);
    assert_int_equal(b->len, 8);
    assert_memory_equal(b->buf, "12345678", 8);
    settles_at(&k.handed, 1); /* taken is not given back */
    base_chan_give(&k.ch);
    settles_at(&k.handed, 2);
    assert_false(atomic_load(&k.refused));
    base_chan_abort(&k.ch); /* the consumer's: the blocked producer goes */
    pthread_join(th, NULL);
    assert_true(atomic_load(&k.refused));
    assert_null(base_chan_take(&k.ch)); /* what was queued is dropped */
    /* the producer may go on after an abort: its bytes are dropped */
    assert_non_null(base_chan_room(&k.ch, 40));
    assert_false(base_chan_hand_over(&k.ch));
    assert_int_equal(k.ch.fill.len, 0);
    base_chan_close(&k.ch);
    base_chan_free(&k.ch);
}

/* ---- an abort from the producer ---- */

typedef struct take_ctx {
    base_chan ch;
    atomic_size_t took;  /* batches taken */
    atomic_size_t ended; /* take returned NULL */
} take_ctx;

static void *take_all(void *arg)
{
    take_ctx *t = arg;
    while (base_chan_take(&t->ch)) {
        atomic_fetch_add(&t->took, 1);
        base_chan_give(&t->ch);
    }
    atomic_store(&t->ended, 1);
    return NULL;
}

static void test_abort_producer(void **state)
{
    (void)state;
    take_ctx t = {0};
    assert_int_equal(base_chan_init(&t.ch, 4, 32, NULL, NULL), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, take_all, &t), 0);
    memcpy(base_chan_room(&t.ch, 3), "abc", 3);
    assert_true(base_chan_hand_over(&t.ch));
    settles_at(&t.took, 1);
    assert_int_equal(atomic_load(&t.ended), 0); /* waits for more */
    base_chan_abort(&t.ch);
    settles_at(&t.ended, 1);
    pthread_join(th, NULL);
    assert_int_equal(atomic_load(&t.took), 1);
    base_chan_free(&t.ch);

    /* batches queued but not taken are dropped */
    assert_int_equal(base_chan_init(&t.ch, 4, 32, NULL, NULL), 0);
    for (int i = 0; i < 3; i++) {
        base_chan_room(&t.ch, 5)[0] = 'x';
        assert_true(base_chan_hand_over(&t.ch));
    }
    base_chan_abort(&t.ch);
    assert_null(base_chan_take(&t.ch));
    base_chan_free(&t.ch); /* ASan: no buffer lost */
}

/* ---- close ---- */

static void test_close(void **state)
{
    (void)state;
    base_chan ch;
    assert_int_equal(base_chan_init(&ch, 2, 32, NULL, NULL), 0);
    memcpy(base_chan_room(&ch, 5), "hello", 5);
    base_chan_close(&ch); /* the part-filled batch goes too */
    const base_chan_batch *b = base_chan_take(&ch);
    assert_non_null(b);
    assert_int_equal(b->len, 5);
    assert_memory_equal(b->buf, "hello", 5);
    base_chan_give(&ch);
    assert_null(base_chan_take(&ch));
    assert_null(base_chan_take(&ch));
    base_chan_free(&ch);

    /* closed empty: nothing to take, and a consumer waiting is woken */
    take_ctx t = {0};
    assert_int_equal(base_chan_init(&t.ch, 2, 32, NULL, NULL), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, take_all, &t), 0);
    sleep_ms(10);
    base_chan_close(&t.ch);
    pthread_join(th, NULL);
    assert_int_equal(atomic_load(&t.took), 0);
    base_chan_free(&t.ch);
}

/* ---- an item larger than a batch ---- */

static void test_oversize(void **state)
{
    (void)state;
    base_chan ch;
    assert_int_equal(base_chan_init(&ch, 2, 16, NULL, NULL), 0);
    memcpy(base_chan_room(&ch, 4), "head", 4);
    /* does not fit: the 4 bytes go first, then the batch grows */
    char *p = base_chan_room(&ch, 100);
    assert_non_null(p);
    memset(p, 'z', 100);
    assert_int_equal(ch.fill.len, 100);
    assert_int_equal(ch.fill.cap, 128); /* 16 doubled until it fits */
    const base_chan_batch *b = base_chan_take(&ch);
    assert_int_equal(b->len, 4);
    assert_memory_equal(b->buf, "head", 4);
    base_chan_give(&ch);
    assert_true(base_chan_hand_over(&ch));
    b = base_chan_take(&ch);
    assert_int_equal(b->len, 100);
    assert_int_equal(b->buf[99], 'z');
    base_chan_give(&ch);
    /* the grown buffer is kept as it is: given back last, filled next */
    assert_true(base_chan_hand_over(&ch)); /* an empty batch */
    assert_int_equal(ch.fill.cap, 128);
    b = base_chan_take(&ch);
    assert_int_equal(b->len, 0);
    assert_int_equal(b->cap, 16);
    base_chan_give(&ch);
    base_chan_abort(&ch);
    base_chan_free(&ch);

    /* on an empty batch it grows at once, and the next item still fits
     * in what it grew to */
    assert_int_equal(base_chan_init(&ch, 1, 8, NULL, NULL), 0);
    assert_non_null(base_chan_room(&ch, 20));
    assert_int_equal(ch.fill.cap, 32);
    assert_non_null(base_chan_room(&ch, 12));
    assert_int_equal(ch.fill.len, 32);
    base_chan_close(&ch);
    b = base_chan_take(&ch);
    assert_int_equal(b->len, 32);
    base_chan_give(&ch);
    base_chan_free(&ch);
}

/* ---- drain, and the producer's look while it waits ---- */

typedef struct drain_ctx {
    base_chan ch;
    size_t bytes; /* the consumer's: bytes read */
    atomic_size_t looks;
} drain_ctx;

static void *read_slowly(void *arg)
{
    drain_ctx *d = arg;
    const base_chan_batch *b;
    while ((b = base_chan_take(&d->ch))) {
        sleep_ms(1);
        d->bytes += b->len;
        base_chan_give(&d->ch);
    }
    return NULL;
}

static unsigned look(void *ctx)
{
    drain_ctx *d = ctx;
    atomic_fetch_add(&d->looks, 1);
    return 2; /* ms */
}

static void test_drain(void **state)
{
    (void)state;
    drain_ctx d = {0};
    assert_int_equal(base_chan_init(&d.ch, 4, 32, NULL, NULL), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, read_slowly, &d), 0);
    for (int round = 1; round <= 3; round++) {
        for (int i = 0; i < 40; i++)
            base_chan_room(&d.ch, 10)[0] = 1;
        assert_true(base_chan_drain(&d.ch));
        /* every batch given back: the consumer's count is complete, and
         * the lock ordered it before this read */
        assert_int_equal(d.bytes, (size_t)round * 400);
    }
    assert_true(base_chan_drain(&d.ch)); /* nothing to drain */
    base_chan_close(&d.ch);
    pthread_join(th, NULL);
    base_chan_free(&d.ch);
}

static void test_waiting(void **state)
{
    (void)state;
    block_ctx k = {0};
    drain_ctx d = {0};
    /* the producer looks as it hands a batch over, waiting or not */
    assert_int_equal(base_chan_init(&k.ch, 2, 16, look, &d), 0);
    assert_true(base_chan_hand_over(&k.ch));
    assert_int_equal(atomic_load(&d.looks), 1);
    base_chan_abort(&k.ch);
    base_chan_free(&k.ch);

    /* and, waiting on a full channel, at least every 2 ms */
    atomic_store(&d.looks, 0);
    assert_int_equal(base_chan_init(&k.ch, 2, 16, look, &d), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, hand_over_forever, &k), 0);
    settles_at(&k.handed, 1);
    size_t before = atomic_load(&d.looks);
    sleep_ms(50);
    assert_true(atomic_load(&d.looks) >= before + 3);
    base_chan_abort(&k.ch);
    pthread_join(th, NULL);
    assert_true(atomic_load(&k.refused));
    base_chan_free(&k.ch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),     cmocka_unit_test(test_full_blocks), cmocka_unit_test(test_abort_producer),
        cmocka_unit_test(test_close),     cmocka_unit_test(test_oversize),    cmocka_unit_test(test_drain),
        cmocka_unit_test(test_waiting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
