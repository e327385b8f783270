/* query/stats.c -- how far a slow step's critical-path parts lie outside
 * what many normal steps do.
 *
 * One normal run is a sample of one: its wait may have been lucky, and a
 * part the slow step shares with every normal step (a frame loop's 30 ms
 * sleep) is no cause however large it is.  So each part (e.g. a (thread,
 * state) of the critical path) is compared with its distribution over the
 * normal steps, with robust statistics, because normal steps have tails
 * (a preemption, a cold cache) that would drag a mean and a standard
 * deviation towards the anomaly:
 *
 *   - a summary of the normal values: median, 5th and 95th percentiles,
 *     and the median absolute deviation (MAD);
 *   - the anomaly's robust z-score (x - median) / scale, where scale
 *     estimates the normal steps' standard deviation and never falls
 *     below a floor (query_stats_scale);
 *   - its excess over the 95th percentile, and whether that excess is more
 *     than the floor (outside the normal range by a meaningful amount).
 *
 * Nothing here allocates: buffers are the caller's, and the ones the
 * functions sort are named as sorted in place. */
#include <stdlib.h>

#include "query_int.h"

/* The p-th percentile (p in 0..100) of sorted v[0..n), n >= 1, by linear
 * interpolation between the order statistics at (n - 1) * p / 100 (numpy's
 * default, "linear").  The index is split in integers so that the
 * interpolation weight is exact. */
static double percentile(const uint64_t *v, size_t n, unsigned p)
{
    size_t h = (n - 1) * p;
    size_t lo = h / 100, rem = h % 100;
    if (rem == 0 || lo + 1 >= n)
        return (double)v[lo];
    return (double)v[lo] + (double)rem * (double)(v[lo + 1] - v[lo]) / 100.0;
}

/* The r-th smallest (0-based) of |v[i] - m| over sorted v[0..n), without
 * a buffer: the deviations of the values below m, read leftwards, and of
 * the others, read rightwards, are two ascending runs; merge them. */
static double kth_deviation(const uint64_t *v, size_t n, double m, size_t r)
{
    size_t k = 0; /* first value >= m */
    while (k < n && (double)v[k] < m)
        k++;
    size_t l = k, h = k; /* next on the left: v[l - 1]; on the right: v[h] */
    double d = 0;
    for (size_t i = 0; i <= r; i++) {
        bool left;
        if (l == 0)
            left = false;
        else if (h == n)
            left = true;
        else
            left = m - (double)v[l - 1] < (double)v[h] - m;
        d = left ? m - (double)v[--l] : (double)v[h++] - m;
    }
    return d;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

query_stats_summary query_stats_summarize(uint64_t *v, size_t n)
{
    query_stats_summary s = {.n = n};
    if (n == 0)
        return s;
    qsort(v, n, sizeof *v, cmp_u64);
    size_t z = 0;
    while (z < n && v[z] == 0)
        z++;
    s.nonzero = n - z;
    s.median = percentile(v, n, 50);
    s.p5 = percentile(v, n, 5);
    s.p95 = percentile(v, n, 95);
    /* the median of the deviations, by the same rule as the median */
    double lo = kth_deviation(v, n, s.median, (n - 1) / 2);
    s.mad = n % 2 ? lo : lo + (kth_deviation(v, n, s.median, n / 2) - lo) / 2;
    return s;
}

/* the floor callers ask for, never below QUERY_STATS_FLOOR_NS */
static double floor_of(uint64_t floor_ns)
{
    return (double)(floor_ns > QUERY_STATS_FLOOR_NS ? floor_ns : QUERY_STATS_FLOOR_NS);
}

bool query_stats_too_few(size_t nsteps)
{
    return nsteps < QUERY_STATS_MIN_STEPS;
}

uint64_t query_stats_floor_of_period(uint64_t period_ns)
{
    uint64_t f = period_ns / 100;
    return f > QUERY_STATS_FLOOR_NS ? f : QUERY_STATS_FLOOR_NS;
}

/* Two estimates of the normal steps' standard deviation, both consistent
 * for a normal distribution: 1.4826 * MAD, and the 5th-95th percentile
 * spread over 3.29 (the 95th lies 1.645 sigma above the median).  The
 * larger is taken: MAD is 0 when more than half the steps have the same
 * value -- a part 40% of normal steps have and the rest do not -- which
 * the percentile spread still shows.  And neither may fall below the
 * floor (floor_ns, at least QUERY_STATS_FLOOR_NS): when every normal step
 * has the same value (all 30 ms, or all 0: a part no normal step has)
 * both are 0, and the floor keeps z finite and in units that mean
 * something -- "how many floors (1% of the period) beyond the normal
 * value"; a difference under the floor is never more than 1 in z, however
 * tight the normal steps are. */
double query_stats_scale(const query_stats_summary *s, uint64_t floor_ns)
{
    double scale = 1.4826 * s->mad;
    double spread = (s->p95 - s->p5) / 3.29;
    if (spread > scale)
        scale = spread;
    double fl = floor_of(floor_ns);
    return scale > fl ? scale : fl;
}

double query_stats_z(const query_stats_summary *s, uint64_t x, uint64_t floor_ns)
{
    return ((double)x - s->median) / query_stats_scale(s, floor_ns);
}

query_stats_effect query_stats_effect_of(const query_stats_summary *s, uint64_t x, uint64_t floor_ns)
{
    query_stats_effect e = {0};
    e.scale = query_stats_scale(s, floor_ns);
    e.z = ((double)x - s->median) / e.scale;
    double over = (double)x - s->p95;
    if (over > 0) {
        e.excess = (uint64_t)over;
        e.outside = over > floor_of(floor_ns);
    }
    return e;
}

typedef struct rank_ctx {
    const uint64_t *anomaly;
    const query_stats_summary *sum;
    const query_stats_effect *eff;
} rank_ctx;

/* Most outside first: by z; of equal z, the part fewer normal steps have
 * (a new part before a grown one), then the larger excess, the larger
 * value, and the key's index, so that the order is total. */
static int by_effect(const void *a, const void *b, void *arg)
{
    const rank_ctx *c = arg;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const query_stats_effect *x = &c->eff[i], *y = &c->eff[j];
    if (x->z != y->z)
        return x->z > y->z ? -1 : 1;
    if (c->sum[i].nonzero != c->sum[j].nonzero)
        return c->sum[i].nonzero < c->sum[j].nonzero ? -1 : 1;
    if (x->excess != y->excess)
        return x->excess > y->excess ? -1 : 1;
    if (c->anomaly[i] != c->anomaly[j])
        return c->anomaly[i] > c->anomaly[j] ? -1 : 1;
    return (i > j) - (i < j);
}

void query_stats_rank(const uint64_t *anomaly, uint64_t *normal, size_t nkeys, size_t nsteps, uint64_t floor_ns,
                      query_stats_summary *sum, query_stats_effect *eff, size_t *order)
{
    for (size_t k = 0; k < nkeys; k++) {
        sum[k] = query_stats_summarize(nsteps ? normal + k * nsteps : NULL, nsteps);
        eff[k] = query_stats_effect_of(&sum[k], anomaly[k], floor_ns);
        order[k] = k;
    }
    rank_ctx c = {anomaly, sum, eff};
    if (nkeys > 1)
        qsort_r(order, nkeys, sizeof *order, by_effect, &c);
}
