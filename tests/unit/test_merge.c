/* tests/unit/test_merge.c -- the time merge (ingest/merge.c, ingest_int.h),
 * driven here as its two callers drive it: the runs shape as Perfetto's
 * merge of the CPUs does (items of many sources, each source's in runs),
 * the window shape as the reorder window does (one source, each arrival
 * placed from the newest end).  What leaves is checked against a stable
 * sort by (time, arrival) where nothing can be late, and against a model
 * of the rule (the oldest of what is held leaves once the bound is
 * reached; a late item goes on at the time before it) where something
 * can: random, nearly sorted and tied inputs, the bound, late items. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ingest/ingest_int.h"

/* ---- inputs ---- */

typedef struct t_in {
    uint64_t ts;
    uint32_t src; /* its source (the runs shape) */
} t_in;

/* what left, in order: the input's index and the time it went on at */
typedef struct t_out {
    size_t k;
    uint64_t ts;
} t_out;

/* xorshift64, of the state at *s */
static uint64_t rng(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* n items of nsrc sources: random times below span (span small: many
 * ties), or, nearly sorted, a rising clock with each item moved back by
 * less than jitter */
static t_in *gen(uint64_t *rs, size_t n, uint32_t nsrc, uint64_t span, uint64_t jitter)
{
    t_in *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t k = 0; k < n; k++) {
        v[k].src = (uint32_t)(rng(rs) % nsrc);
        if (jitter) {
            uint64_t t = 1000 + 3 * k;
            v[k].ts = t - rng(rs) % jitter;
        } else {
            v[k].ts = rng(rs) % span;
        }
    }
    return v;
}

/* ---- the references ---- */

/* by time, then index (arrival) */
static int cmp_stable(const void *a, const void *b)
{
    const t_out *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* a stable sort by (time, arrival): what leaves when nothing is late */
static void assert_stable_sorted(const t_in *in, size_t n, const t_out *out)
{
    t_out *want = malloc(n * sizeof *want);
    assert_non_null(want);
    for (size_t k = 0; k < n; k++)
        want[k] = (t_out){k, in[k].ts};
    qsort(want, n, sizeof *want, cmp_stable);
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(out[k].k, want[k].k);
        assert_int_equal(out[k].ts, want[k].ts);
    }
    free(want);
}

/* The runs shape's promise, as one list of every item held: once max are
 * held, the oldest by (time, arrival) leaves before the next is held; one
 * earlier than the last to leave goes on at that one's time. */
static uint64_t model_runs(const t_in *in, size_t n, size_t max, t_out *out)
{
    size_t *h = malloc(n * sizeof *h), nh = 0, no = 0;
    assert_non_null(h);
    uint64_t last = 0, late = 0;
    for (size_t k = 0; k <= n; k++) {
        while (nh == max || (k == n && nh > 0)) {
            size_t b = 0;
            for (size_t j = 1; j < nh; j++)
                if (in[h[j]].ts < in[h[b]].ts || (in[h[j]].ts == in[h[b]].ts && h[j] < h[b]))
                    b = j;
            uint64_t ts = in[h[b]].ts;
            if (no > 0 && ts < last) {
                ts = last;
                late++;
            }
            out[no++] = (t_out){h[b], ts};
            last = ts;
            memmove(h + b, h + b + 1, (nh - b - 1) * sizeof *h);
            nh--;
        }
        if (k < n)
            h[nh++] = k;
    }
    free(h);
    return late;
}

/* The window shape's rule, with no stop of the caller's: an arrival goes
 * after every held item not later than it, or, earlier than the last to
 * leave, first, at that one's time; once max are held, the first leaves. */
static uint64_t model_window(const t_in *in, size_t n, size_t max, t_out *out)
{
    t_out *h = malloc(n * sizeof *h);
    size_t nh = 0, no = 0;
    assert_non_null(h);
    uint64_t last = 0, late = 0;
    for (size_t k = 0; k < n; k++) {
        t_out it = {k, in[k].ts};
        size_t at = 0;
        if (no > 0 && it.ts < last) {
            it.ts = last;
            late++;
        } else {
            while (at < nh && h[at].ts <= it.ts)
                at++;
        }
        memmove(h + at + 1, h + at, (nh - at) * sizeof *h);
        h[at] = it;
        if (++nh == max) {
            out[no++] = h[0];
            last = h[0].ts;
            memmove(h, h + 1, --nh * sizeof *h);
        }
    }
    for (size_t j = 0; j < nh; j++)
        out[no++] = h[j];
    free(h);
    return late;
}

/* ---- the runs shape, driven as perfetto.c drives it ---- */

typedef struct t_run {
    ingest_merge_run run;
    size_t *k; /* its items, k[head .. len) */
    uint64_t *seq;
    size_t head, len, cap;
    uint32_t src;
} t_run;

typedef struct t_runs {
    ingest_merge m;
    const t_in *in;
    t_run **cur; /* each source's run items are appended to */
    t_out *out;
    size_t nout, most; /* items out; most held at once */
    uint64_t late;
} t_runs;

static t_run *run_of(ingest_merge_run *r)
{
    return INGEST_MERGE_OF(r, t_run, run);
}

static void runs_pop(t_runs *t)
{
    t_run *r = run_of(ingest_merge_top(&t->m));
    size_t k = r->k[r->head++];
    if (r->head == r->len) {
        ingest_merge_top_done(&t->m);
        if (t->cur[r->src] == r)
            t->cur[r->src] = NULL;
        free(r->k);
        free(r->seq);
        free(r);
    } else {
        ingest_merge_top_next(&t->m, t->in[r->k[r->head]].ts, r->seq[r->head]);
    }
    uint64_t ts = ingest_merge_out(&t->m, t->in[k].ts);
    t->out[t->nout++] = (t_out){k, ts};
}

static void runs_push(t_runs *t, size_t k)
{
    if (ingest_merge_full(&t->m))
        runs_pop(t);
    uint64_t seq = ingest_merge_arrive(&t->m);
    if (t->m.held > t->most)
        t->most = t->m.held;
    const t_in *it = &t->in[k];
    t_run *r = t->cur[it->src];
    bool fresh = !r || !ingest_merge_run_takes(&r->run, it->ts);
    if (fresh) {
        assert_int_equal(ingest_merge_run_room(&t->m), 0);
        r = calloc(1, sizeof *r);
        assert_non_null(r);
        r->src = it->src;
    }
    if (r->len == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 4;
        r->k = realloc(r->k, r->cap * sizeof *r->k);
        r->seq = realloc(r->seq, r->cap * sizeof *r->seq);
        assert_true(r->k && r->seq);
    }
    r->k[r->len] = k;
    r->seq[r->len++] = seq;
    ingest_merge_run_appended(&r->run, it->ts);
    if (fresh) {
        r->run.first = (ingest_merge_key){it->ts, seq};
        t->cur[it->src] = r;
        ingest_merge_run_add(&t->m, &r->run);
    }
}

/* in through the runs shape, of at most max held: what left, late counted */
static t_out *run_runs(const t_in *in, size_t n, uint32_t nsrc, size_t max, uint64_t *late, size_t *most)
{
    t_runs t = {.in = in, .out = malloc((n + 1) * sizeof(t_out))};
    t.cur = calloc(nsrc, sizeof *t.cur);
    assert_true(t.out && t.cur);
    ingest_merge_init(&t.m, max, &t.late);
    for (size_t k = 0; k < n; k++)
        runs_push(&t, k);
    while (t.m.held)
        runs_pop(&t);
    assert_int_equal(t.nout, n);
    assert_int_equal(t.m.nruns, 0);
    ingest_merge_free(&t.m);
    free(t.cur);
    *late = t.late;
    if (most)
        *most = t.most;
    return t.out;
}

/* ---- the window shape, driven as reorder.c drives it ---- */

/* in through the window shape, at most max held (one leaves once max
 * are): what left, late counted */
static t_out *run_window(const t_in *in, size_t n, size_t max, uint64_t *late, size_t *most)
{
    ingest_merge m;
    uint64_t nlate = 0;
    ingest_merge_init(&m, max, &nlate);
    assert_int_equal(ingest_merge_win_init(&m), 0);
    ingest_merge_key *keys = malloc(n * sizeof *keys);
    t_out *out = malloc((n + 1) * sizeof *out);
    assert_true(keys && out);
    size_t no = 0, top = 0;
    for (size_t k = 0; k <= n; k++) {
        while (k == n && m.nwin > 0) {
            ingest_merge_key *o = ingest_merge_win_take(&m);
            out[no++] = (t_out){(size_t)(o - keys), o->ts};
        }
        if (k == n)
            break;
        uint64_t ts = in[k].ts;
        size_t i = m.nwin;
        while (i > 0 && ingest_merge_win_at(&m, i - 1)->ts > ts)
            i--;
        ingest_merge_late(&m, &ts, ingest_merge_win_floor(&m, i));
        keys[k] = (ingest_merge_key){ts, ingest_merge_arrive(&m)};
        assert_int_equal(keys[k].seq, k);
        ingest_merge_win_put(&m, i, &keys[k]);
        if (m.held > top)
            top = m.held;
        if (ingest_merge_full(&m)) {
            ingest_merge_key *o = ingest_merge_win_take(&m);
            out[no++] = (t_out){(size_t)(o - keys), o->ts};
        }
    }
    assert_int_equal(no, n);
    assert_int_equal(m.held, 0);
    ingest_merge_free(&m);
    free(keys);
    *late = nlate;
    if (most)
        *most = top;
    return out;
}

static void assert_same_out(const t_out *a, const t_out *b, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(a[k].k, b[k].k);
        assert_int_equal(a[k].ts, b[k].ts);
    }
}

static void assert_in_time_order(const t_out *o, size_t n)
{
    for (size_t k = 1; k < n; k++)
        assert_true(o[k - 1].ts <= o[k].ts);
}

/* ---- the tests ---- */

/* Holding them all, both shapes give the stable sort: random times (few
 * distinct: many ties), of one source and of many. */
static void test_random_unbounded(void **state)
{
    (void)state;
    uint64_t rs = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 40; round++) {
        size_t n = 1 + rng(&rs) % 3000;
        uint32_t nsrc = 1 + (uint32_t)(rng(&rs) % 9);
        uint64_t span = round % 2 ? 1 + rng(&rs) % 50 : UINT64_MAX / 2;
        t_in *in = gen(&rs, n, nsrc, span, 0);
        uint64_t late;
        t_out *o = run_runs(in, n, nsrc, n, &late, NULL);
        assert_int_equal(late, 0);
        assert_stable_sorted(in, n, o);
        free(o);
        o = run_window(in, n, n + 1, &late, NULL);
        assert_int_equal(late, 0);
        assert_stable_sorted(in, n, o);
        free(o);
        free(in);
    }
}

/* Nearly sorted (each item at most jitter - 1 behind the clock, three a
 * tick): a bound of more than the disorder's reach gives the stable sort
 * and nothing late; less gives what the model says. */
static void test_nearly_sorted(void **state)
{
    (void)state;
    uint64_t rs = 12345;
    for (int round = 0; round < 30; round++) {
        size_t n = 500 + rng(&rs) % 5000;
        uint32_t nsrc = 1 + (uint32_t)(rng(&rs) % 8);
        uint64_t jitter = 1 + rng(&rs) % 300;
        t_in *in = gen(&rs, n, nsrc, 0, jitter);
        size_t reach = (size_t)jitter + 2; /* items behind a given one: fewer than jitter / 3 + 1 */
        uint64_t late;
        t_out *o = run_runs(in, n, nsrc, reach, &late, NULL);
        assert_int_equal(late, 0);
        assert_stable_sorted(in, n, o);
        free(o);
        o = run_window(in, n, reach + 1, &late, NULL);
        assert_int_equal(late, 0);
        assert_stable_sorted(in, n, o);
        free(o);
        free(in);
    }
}

/* Bounded, random: both shapes as their models, in time order as they
 * leave, never more than the bound held. */
static void test_bounded_model(void **state)
{
    (void)state;
    uint64_t rs = 777;
    for (int round = 0; round < 60; round++) {
        size_t n = 1 + rng(&rs) % 2000;
        uint32_t nsrc = 1 + (uint32_t)(rng(&rs) % 6);
        size_t max = 1 + rng(&rs) % 64;
        uint64_t span = round % 3 == 0 ? 8 : round % 3 == 1 ? 1000 : UINT64_MAX;
        t_in *in = round % 2 ? gen(&rs, n, nsrc, span, 0) : gen(&rs, n, nsrc, 0, 1 + rng(&rs) % 400);
        t_out *want = malloc(n * sizeof *want);
        assert_non_null(want);
        uint64_t late, want_late;
        size_t most;
        want_late = model_runs(in, n, max, want);
        t_out *o = run_runs(in, n, nsrc, max, &late, &most);
        assert_int_equal(late, want_late);
        assert_true(most <= max);
        assert_same_out(o, want, n);
        assert_in_time_order(o, n);
        free(o);
        size_t wmax = max + 1;
        want_late = model_window(in, n, wmax, want);
        o = run_window(in, n, wmax, &late, &most);
        assert_int_equal(late, want_late);
        assert_true(most <= wmax);
        assert_same_out(o, want, n);
        assert_in_time_order(o, n);
        free(o);
        free(want);
        free(in);
    }
}

/* The bound: the runs shape releases the oldest when the item after the
 * max-th arrives, the window once the max-th is placed. */
static void test_bound(void **state)
{
    (void)state;
    enum { N = 10, MAX = 4 };
    t_in in[N];
    for (size_t k = 0; k < N; k++)
        in[k] = (t_in){.ts = 100 - k, .src = (uint32_t)k}; /* falling: every one a run */
    uint64_t late;
    size_t most;
    t_out *o = run_runs(in, N, N, MAX, &late, &most);
    assert_int_equal(most, MAX);
    /* the first to leave is the oldest of the first MAX: item 3 (97) */
    assert_int_equal(o[0].k, 3);
    assert_int_equal(late, N - MAX); /* every later one is earlier than the one before */
    assert_in_time_order(o, N);
    free(o);
    o = run_window(in, N, MAX, &late, &most);
    assert_int_equal(most, MAX);
    assert_int_equal(o[0].k, 3);
    assert_in_time_order(o, N);
    free(o);
}

/* Late items by hand.  Runs: 10 and 20 held (max 2), 5 comes: 10 leaves
 * first, 5 goes on at 10, counted.  Window (max 3): 10, 20 held, 30
 * makes 10 leave, 5 goes first at 10. */
static void test_late(void **state)
{
    (void)state;
    t_in a[] = {{10, 0}, {20, 1}, {5, 2}};
    uint64_t late;
    t_out *o = run_runs(a, 3, 3, 2, &late, NULL);
    assert_int_equal(late, 1);
    t_out want_runs[] = {{0, 10}, {2, 10}, {1, 20}};
    assert_same_out(o, want_runs, 3);
    free(o);
    t_in b[] = {{10, 0}, {20, 0}, {30, 0}, {5, 0}};
    o = run_window(b, 4, 3, &late, NULL);
    assert_int_equal(late, 1);
    t_out want_win[] = {{0, 10}, {3, 10}, {1, 20}, {2, 30}};
    assert_same_out(o, want_win, 4);
    free(o);
}

/* Ties.  Every item at one time: arrival order, across sources.  And a
 * late item among ties: the runs shape keeps it by its own time and
 * arrival (it leaves first, at the last time handed on); the window
 * places it first at that time, before the held items of that time. */
static void test_ties(void **state)
{
    (void)state;
    enum { N = 200 };
    t_in in[N];
    for (size_t k = 0; k < N; k++)
        in[k] = (t_in){.ts = 42, .src = (uint32_t)(k * 7 % 5)};
    uint64_t late;
    t_out *o = run_runs(in, N, 5, 16, &late, NULL);
    assert_int_equal(late, 0);
    assert_stable_sorted(in, N, o);
    free(o);
    o = run_window(in, N, 16, &late, NULL);
    assert_int_equal(late, 0);
    assert_stable_sorted(in, N, o);
    free(o);

    /* a, b, c at 10 (d's source apart), d at 5 once a has gone */
    t_in t[] = {{10, 0}, {10, 0}, {10, 0}, {5, 1}};
    o = run_runs(t, 4, 2, 3, &late, NULL);
    t_out want_runs[] = {{0, 10}, {3, 10}, {1, 10}, {2, 10}};
    assert_int_equal(late, 1);
    assert_same_out(o, want_runs, 4);
    free(o);
    o = run_window(t, 4, 3, &late, NULL);
    /* max 3: a leaves when c is placed; d goes first, at 10 */
    t_out want_win[] = {{0, 10}, {3, 10}, {1, 10}, {2, 10}};
    assert_int_equal(late, 1);
    assert_same_out(o, want_win, 4);
    free(o);
}

/* The window: a caller that stops before a later held item (the reorder
 * window before its thread's declaration) places the arrival there, at
 * the time of the item before it, counted late. */
static void test_window_stop(void **state)
{
    (void)state;
    ingest_merge m;
    uint64_t late = 0;
    ingest_merge_init(&m, 8, &late);
    assert_int_equal(ingest_merge_win_init(&m), 0);
    ingest_merge_key k[4];
    uint64_t ts[] = {10, 20, 30, 15};
    for (size_t j = 0; j < 3; j++) {
        k[j] = (ingest_merge_key){ts[j], ingest_merge_arrive(&m)};
        ingest_merge_win_put(&m, m.nwin, &k[j]);
    }
    /* 15 stopped behind 20 (at 2, not 1): at 20 */
    uint64_t t = ts[3];
    assert_true(ingest_merge_late(&m, &t, ingest_merge_win_floor(&m, 2)));
    assert_int_equal(t, 20);
    k[3] = (ingest_merge_key){t, ingest_merge_arrive(&m)};
    ingest_merge_win_put(&m, 2, &k[3]);
    assert_int_equal(late, 1);
    size_t want[] = {0, 1, 3, 2};
    for (size_t j = 0; j < 4; j++)
        assert_ptr_equal(ingest_merge_win_take(&m), &k[want[j]]);
    assert_int_equal(m.held, 0);
    assert_int_equal(late, 1);
    ingest_merge_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_unbounded), cmocka_unit_test(test_nearly_sorted),
        cmocka_unit_test(test_bounded_model),    cmocka_unit_test(test_bound),
        cmocka_unit_test(test_late),             cmocka_unit_test(test_ties),
        cmocka_unit_test(test_window_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
