/* tests/unit/test_stats.c -- query/stats.c: summaries of small known
 * distributions (median, p5, p95 by numpy's linear interpolation, MAD),
 * computed by hand; the robust z-score and its scale floor; the effect
 * (excess over p95, outside); the too-few-steps rule; and the ranking of
 * parts, where a part every normal step has at the anomaly's size ranks
 * low however large and a part no normal step has ranks first.
 *
 * The scale z is measured in is max(1.4826 * MAD, (p95 - p5) / 3.29,
 * floor), the floor being what the caller passes (1% of the period) but
 * never under 1 us: each test below makes a different one of the three
 * win, and the all-equal and all-zero distributions fall on the floor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "query/query_int.h"

#define MS 1000000ull

/* a double that is not exactly representable (a quotient): equal to 12
 * significant digits, which any wrong formula misses */
#define assert_near(a, b)                                                                          \
    do {                                                                                           \
        double a_ = (a), b_ = (b), d_ = a_ - b_, m_ = b_ < 0 ? -b_ : b_;                           \
        if (d_ < 0)                                                                                \
            d_ = -d_;                                                                              \
        if (d_ > 1e-12 * (m_ > 1 ? m_ : 1))                                                        \
            fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);                                    \
    } while (0)
/* a double the computation gives exactly (interpolation weights are
 * hundredths of small integers, chosen so that the results are exact) */
#define assert_exact(a, b)                                                                         \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (a_ != b_)                                                                              \
            fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);                                    \
    } while (0)

static void assert_sorted(const uint64_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        assert_true(v[i - 1] <= v[i]);
}

/* n = 5: h = 4p/100; p5 at 0.2 (10 + 0.2 * 10), p95 at 3.8 (40 + 0.8 *
 * 10); deviations from 30 are 20 10 0 10 20, their median 10 */
static void test_odd_distribution(void **state)
{
    (void)state;
    uint64_t v[] = {50, 10, 40, 20, 30};
    query_stats_summary s = query_stats_summarize(v, 5);
    assert_int_equal(s.n, 5);
    assert_int_equal(s.nonzero, 5);
    assert_exact(s.median, 30);
    assert_exact(s.p5, 12);
    assert_exact(s.p95, 48);
    assert_exact(s.mad, 10);
    assert_sorted(v, 5);
}

/* n = 6, sorted 1 2 3 4 7 100: the median between 3 and 4 (3.5); p5 at
 * 0.25 (1.25); p95 at 4.75 (7 + 0.75 * 93 = 76.75); deviations from 3.5
 * are 2.5 1.5 0.5 0.5 3.5 96.5, sorted 0.5 0.5 1.5 2.5 3.5 96.5, their
 * median 2 -- the outlier moves neither the median nor the MAD */
static void test_even_distribution(void **state)
{
    (void)state;
    uint64_t v[] = {100, 4, 1, 7, 3, 2};
    query_stats_summary s = query_stats_summarize(v, 6);
    assert_int_equal(s.n, 6);
    assert_exact(s.median, 3.5);
    assert_exact(s.p5, 1.25);
    assert_exact(s.p95, 76.75);
    assert_exact(s.mad, 2);
}

/* 0, 1, ..., 20 us: p5 and p95 fall on order statistics 1 and 19; the
 * deviations from 10 us are 0, 1, 1, 2, 2, ... 10, 10 us, the 11th of
 * them 5 us.  1.4826 * 5 us = 7.413 us is above the percentile spread
 * (18 us / 3.29 = 5.47 us) and the 1 us floor: the MAD sets the scale. */
static void test_mad_sets_the_scale(void **state)
{
    (void)state;
    uint64_t v[21];
    for (int i = 0; i < 21; i++)
        v[i] = (uint64_t)(20 - i) * 1000;
    query_stats_summary s = query_stats_summarize(v, 21);
    assert_int_equal(s.nonzero, 20);
    assert_exact(s.median, 10000);
    assert_exact(s.p5, 1000);
    assert_exact(s.p95, 19000);
    assert_exact(s.mad, 5000);
    assert_near(query_stats_scale(&s, 0), 7413);
    assert_near(query_stats_z(&s, 30000, 0), 20000.0 / 7413);
    assert_near(query_stats_z(&s, 0, 0), -10000.0 / 7413);

    query_stats_effect e = query_stats_effect_of(&s, 30000, 0);
    assert_near(e.z, 20000.0 / 7413);
    assert_near(e.scale, 7413);
    assert_int_equal(e.excess, 11000);
    assert_true(e.outside);
    /* inside the normal range */
    e = query_stats_effect_of(&s, 15000, 0);
    assert_near(e.z, 5000.0 / 7413);
    assert_int_equal(e.excess, 0);
    assert_false(e.outside);
    /* above p95, but by less than the floor (1 us) */
    e = query_stats_effect_of(&s, 19500, 0);
    assert_int_equal(e.excess, 500);
    assert_false(e.outside);
    /* a floor above the MAD's scale takes over */
    assert_near(query_stats_scale(&s, 10000), 10000);
}

/* 6 normal steps without the part, 4 with 20 ms of it: more than half
 * are 0, so median and MAD are 0, but p95 is 20 ms (index 8.55, between
 * two 20 ms values): the spread, 20 ms / 3.29, sets the scale, and an
 * anomaly of 20 ms is 3.29 of it above the median but not outside. */
static void test_spread_sets_the_scale(void **state)
{
    (void)state;
    uint64_t v[] = {20 * MS, 0, 0, 20 * MS, 0, 0, 20 * MS, 0, 20 * MS, 0};
    query_stats_summary s = query_stats_summarize(v, 10);
    assert_int_equal(s.nonzero, 4);
    assert_exact(s.median, 0);
    assert_exact(s.mad, 0);
    assert_exact(s.p5, 0);
    assert_exact(s.p95, 20 * MS);
    assert_near(query_stats_scale(&s, MS), 20e6 / 3.29);
    query_stats_effect e = query_stats_effect_of(&s, 20 * MS, MS);
    assert_near(e.z, 3.29);
    assert_int_equal(e.excess, 0);
    assert_false(e.outside);
}

/* Every normal step has the part at exactly 30 ms: MAD and spread are 0,
 * the scale is the floor (1% of a 284 ms period, 2.84 ms), and z counts
 * floors beyond 30 ms. */
static void test_all_equal(void **state)
{
    (void)state;
    uint64_t v[10];
    for (int i = 0; i < 10; i++)
        v[i] = 30 * MS;
    query_stats_summary s = query_stats_summarize(v, 10);
    assert_int_equal(s.n, 10);
    assert_int_equal(s.nonzero, 10);
    assert_exact(s.median, 30e6);
    assert_exact(s.p5, 30e6);
    assert_exact(s.p95, 30e6);
    assert_exact(s.mad, 0);

    uint64_t fl = query_stats_floor_of_period(284 * MS);
    assert_int_equal(fl, 2840000);
    assert_exact(query_stats_scale(&s, fl), 2840000);
    /* no floor asked for, or one under 1 us: 1 us */
    assert_exact(query_stats_scale(&s, 0), 1000);
    assert_exact(query_stats_scale(&s, 500), 1000);

    query_stats_effect e = query_stats_effect_of(&s, 30 * MS, fl);
    assert_exact(e.z, 0);
    assert_int_equal(e.excess, 0);
    assert_false(e.outside);
    /* 1 ms more: above p95, not by more than the floor */
    e = query_stats_effect_of(&s, 31 * MS, fl);
    assert_near(e.z, 1e6 / 2.84e6);
    assert_int_equal(e.excess, MS);
    assert_false(e.outside);
    e = query_stats_effect_of(&s, 40 * MS, fl);
    assert_near(e.z, 10e6 / 2.84e6);
    assert_int_equal(e.excess, 10 * MS);
    assert_true(e.outside);
    e = query_stats_effect_of(&s, 20 * MS, fl);
    assert_near(e.z, -10e6 / 2.84e6);
    assert_int_equal(e.excess, 0);
    assert_false(e.outside);
}

/* No normal step has the part: the anomaly's value against the floor */
static void test_all_zero(void **state)
{
    (void)state;
    uint64_t v[8] = {0};
    query_stats_summary s = query_stats_summarize(v, 8);
    assert_int_equal(s.n, 8);
    assert_int_equal(s.nonzero, 0);
    assert_exact(s.median, 0);
    assert_exact(s.p95, 0);
    assert_exact(s.mad, 0);
    query_stats_effect e = query_stats_effect_of(&s, 5 * MS, 2840000);
    assert_near(e.z, 5e6 / 2.84e6);
    assert_int_equal(e.excess, 5 * MS);
    assert_true(e.outside);
    assert_exact(query_stats_z(&s, 5 * MS, 0), 5000);
    assert_exact(query_stats_z(&s, 0, 0), 0);
}

static void test_floor_of_period(void **state)
{
    (void)state;
    assert_int_equal(query_stats_floor_of_period(284 * MS), 2840000);
    assert_int_equal(query_stats_floor_of_period(150000), 1500);
    assert_int_equal(query_stats_floor_of_period(50000), 1000);
    assert_int_equal(query_stats_floor_of_period(0), 1000);
}

static void test_too_few(void **state)
{
    (void)state;
    assert_int_equal(QUERY_STATS_MIN_STEPS, 5);
    for (size_t n = 0; n < 5; n++)
        assert_true(query_stats_too_few(n));
    assert_false(query_stats_too_few(5));
    assert_false(query_stats_too_few(6));
    assert_false(query_stats_too_few(100));
}

/* n = 0, 1 and 2 give finite summaries and effects */
static void test_few_values(void **state)
{
    (void)state;
    query_stats_summary s = query_stats_summarize(NULL, 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(s.nonzero, 0);
    assert_exact(s.median, 0);
    assert_exact(s.p5, 0);
    assert_exact(s.p95, 0);
    assert_exact(s.mad, 0);
    query_stats_effect e = query_stats_effect_of(&s, 5000, 0);
    assert_exact(e.z, 5);
    assert_int_equal(e.excess, 5000);
    assert_true(e.outside);

    uint64_t one[] = {7000};
    s = query_stats_summarize(one, 1);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.nonzero, 1);
    assert_exact(s.median, 7000);
    assert_exact(s.p5, 7000);
    assert_exact(s.p95, 7000);
    assert_exact(s.mad, 0);
    e = query_stats_effect_of(&s, 7000, 0);
    assert_exact(e.z, 0);
    assert_false(e.outside);
    e = query_stats_effect_of(&s, 9000, 0);
    assert_exact(e.z, 2);
    assert_int_equal(e.excess, 2000);
    assert_true(e.outside);

    /* p5 at 0.05 (1000 + 0.05 * 2000), p95 at 0.95; deviations 1000, 1000 */
    uint64_t two[] = {3000, 1000};
    s = query_stats_summarize(two, 2);
    assert_exact(s.median, 2000);
    assert_exact(s.p5, 1100);
    assert_exact(s.p95, 2900);
    assert_exact(s.mad, 1000);
}

/* A frame's critical path over 10 normal steps (row k: part k in each
 * step) and the anomaly's, floor 1% of a 284 ms period (2.84 ms):
 *   0 ui-main timer: 30 ms in every step (the frame loop's sleep), 30.2 ms
 *   1 hog timer: in no normal step, 20 ms in the anomaly
 *   2 ui-main running: 1.0 .. 1.9 ms, 1.5 ms (inside)
 *   3 server running: 100 ms in every step, 100 ms in the anomaly
 *   4 worker running: 5 ms in every step, none in the anomaly
 *   5 worker io: 10 ms in every step, 30 ms: 20 ms more, as part 1
 * Every scale is the floor, so the z are 0.2/2.84, 20/2.84, 0.05/2.84, 0,
 * -5/2.84, 20/2.84: part 1 first (it ties with part 5 on z, and no normal
 * step has it), part 3 -- the largest -- below every part that grew. */
static void test_rank(void **state)
{
    (void)state;
    enum { K = 6, N = 10 };
    uint64_t anomaly[K] = {30200000, 20 * MS, 1500000, 100 * MS, 0, 30 * MS};
    uint64_t normal[K * N];
    for (int j = 0; j < N; j++) {
        normal[0 * N + j] = 30 * MS;
        normal[1 * N + j] = 0;
        normal[2 * N + j] = 1000000 + 100000 * (uint64_t)((j * 3) % N); /* 1.0 .. 1.9 ms, shuffled */
        normal[3 * N + j] = 100 * MS;
        normal[4 * N + j] = 5 * MS;
        normal[5 * N + j] = 10 * MS;
    }
    query_stats_summary sum[K];
    query_stats_effect eff[K];
    size_t order[K];
    query_stats_rank(anomaly, normal, K, N, query_stats_floor_of_period(284 * MS), sum, eff, order);

    size_t want[K] = {1, 5, 0, 2, 3, 4};
    for (int i = 0; i < K; i++)
        if (order[i] != want[i])
            fail_msg("order[%d] = %zu, expected %zu", i, order[i], want[i]);

    assert_near(eff[0].z, 0.2e6 / 2.84e6);
    assert_false(eff[0].outside);
    assert_near(eff[1].z, 20e6 / 2.84e6);
    assert_exact(eff[1].z, eff[5].z);
    assert_true(eff[1].outside);
    assert_int_equal(eff[1].excess, 20 * MS);
    assert_int_equal(sum[1].nonzero, 0);
    assert_true(eff[5].outside);
    assert_int_equal(sum[5].nonzero, 10);
    /* the running part: its own summary, inside its range */
    assert_exact(sum[2].median, 1450000);
    assert_exact(sum[2].p5, 1045000);
    assert_exact(sum[2].p95, 1855000);
    assert_exact(sum[2].mad, 250000);
    assert_exact(eff[2].scale, 2840000);
    assert_near(eff[2].z, 0.05e6 / 2.84e6);
    assert_false(eff[2].outside);
    assert_sorted(normal + 2 * N, N);
    /* the largest part, the same size in every run */
    assert_exact(eff[3].z, 0);
    assert_int_equal(eff[3].excess, 0);
    assert_false(eff[3].outside);
    assert_near(eff[4].z, -5e6 / 2.84e6);
    for (int k = 0; k < K; k++)
        assert_int_equal(sum[k].n, N);
}

/* A part 4 of 10 normal steps have at 20 ms (z 3.29 by the spread) ranks
 * below a 5 ms part no normal step has (z 5 over a 1 ms floor); two new
 * parts of equal z go by index; no normal steps at all ranks by value
 * against the floor; no keys is nothing to do. */
static void test_rank_new_part_and_ties(void **state)
{
    (void)state;
    enum { K = 4, N = 10 };
    uint64_t anomaly[K] = {20 * MS, 5 * MS, 3 * MS, 3 * MS};
    uint64_t normal[K * N] = {0};
    for (int j = 0; j < 4; j++)
        normal[0 * N + j] = 20 * MS;
    query_stats_summary sum[K];
    query_stats_effect eff[K];
    size_t order[K];
    query_stats_rank(anomaly, normal, K, N, MS, sum, eff, order);
    assert_near(eff[0].z, 3.29);
    assert_false(eff[0].outside);
    assert_exact(eff[1].z, 5);
    assert_true(eff[1].outside);
    assert_exact(eff[2].z, 3);
    assert_exact(eff[3].z, 3);
    assert_int_equal(order[0], 1);
    assert_int_equal(order[1], 0);
    assert_int_equal(order[2], 2);
    assert_int_equal(order[3], 3);

    /* no normal steps (the caller should have fallen back; still finite) */
    uint64_t a0[3] = {3000, 9000, 0};
    query_stats_rank(a0, NULL, 3, 0, 0, sum, eff, order);
    assert_int_equal(sum[0].n, 0);
    assert_exact(eff[0].z, 3);
    assert_exact(eff[1].z, 9);
    assert_exact(eff[2].z, 0);
    assert_int_equal(order[0], 1);
    assert_int_equal(order[1], 0);
    assert_int_equal(order[2], 2);

    /* one normal step */
    uint64_t a1[2] = {4000, 4000}, n1[2] = {4000, 0};
    query_stats_rank(a1, n1, 2, 1, 0, sum, eff, order);
    assert_int_equal(order[0], 1);
    assert_int_equal(order[1], 0);
    assert_exact(eff[0].z, 0);
    assert_exact(eff[1].z, 4);

    query_stats_rank(NULL, NULL, 0, 10, 0, NULL, NULL, NULL);
}

/* query/pool.c: which normal steps a diagnosis judges against.  Groups
 * of equal score, the most alike first (of equal scores, one form holding
 * the other first, then as given), no further than the first groups that
 * hold five; the parts of one (thread, state) in a step add up. */
static void add_step(query_pool *p, const char *trace, const char *archive, double score, bool contained)
{
    query_pool_step st = {.score = score, .contained = contained, .period = 10 * MS};
    snprintf(st.trace, sizeof st.trace, "%s", trace);
    query_pool_part parts[3] = {{"a", QUERY_CP_RUNNING, 1 * MS}, {"b", QUERY_CP_TIMER, 2 * MS},
                                {"a", QUERY_CP_RUNNING, 3 * MS}};
    assert_int_equal(query_pool_add(p, &st, parts, 3, archive), 0);
}

static void test_pool_choose(void **state)
{
    (void)state;
    query_pool p = {0};
    add_step(&p, "t1", NULL, 0.8, false);      /* 0 */
    add_step(&p, "t1", NULL, 1.0, false);      /* 1 */
    add_step(&p, "t2", "/x.db", 0.9, false);   /* 2 */
    add_step(&p, "t2", NULL, 1.0, true);       /* 3 */
    add_step(&p, "t3", NULL, 0.9, false);      /* 4 */
    add_step(&p, "t3", NULL, 0.9, true);       /* 5 */
    add_step(&p, "t4", NULL, 0.8, false);      /* 6 */
    add_step(&p, "t4", NULL, 0.7, false);      /* 7 */
    size_t which[8];
    size_t n = query_pool_choose(&p, which);
    /* 1.0 (2 steps), then 0.9 (3: 5 in all): no 0.8 */
    size_t want[] = {3, 1, 5, 2, 4};
    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(which[i], want[i]);
    /* parts of one (thread, state) added up: a running 4 ms, b timer 2 ms */
    assert_int_equal(p.steps[0].n, 2);
    assert_int_equal(p.parts[p.steps[0].first].ns, 4 * MS);
    assert_int_equal(p.parts[p.steps[0].first + 1].ns, 2 * MS);
    /* a trace of the same name in another archive is another trace */
    assert_true(p.steps[2].trace_id != p.steps[3].trace_id);
    assert_true(p.steps[4].trace_id == p.steps[5].trace_id);
    assert_string_equal(query_pool_archive(&p, &p.steps[2]), "/x.db");
    assert_null(query_pool_archive(&p, &p.steps[3]));
    assert_int_equal(query_pool_state("timer"), QUERY_CP_TIMER);
    assert_int_equal(query_pool_state("asleep"), -1);
    query_pool_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_odd_distribution),
        cmocka_unit_test(test_even_distribution),
        cmocka_unit_test(test_mad_sets_the_scale),
        cmocka_unit_test(test_spread_sets_the_scale),
        cmocka_unit_test(test_all_equal),
        cmocka_unit_test(test_all_zero),
        cmocka_unit_test(test_floor_of_period),
        cmocka_unit_test(test_too_few),
        cmocka_unit_test(test_few_values),
        cmocka_unit_test(test_rank),
        cmocka_unit_test(test_rank_new_part_and_ties),
        cmocka_unit_test(test_pool_choose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
