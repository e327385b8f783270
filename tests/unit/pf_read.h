/* tests/unit/pf_read.h -- what the Perfetto reader's unit tests of whole
 * traces (test_perfetto.c, test_perfetto_order.c, test_perfetto_fast.c)
 * share: a trace built with pb_build.h read from memory into a recording
 * sink (ftrace_rec.h), the scheduling trace of CPU 0 they build on, and
 * two events' comparison.  Static inline: each test program has its own
 * copy, and one that leaves a helper unused is not warned. */
#ifndef ARGUSQ_TESTS_PF_READ_H
#define ARGUSQ_TESTS_PF_READ_H

/* trace read from memory (as t.pftrace) into a new recording sink: the
 * reader's return must be want_rc (its message in err, errlen bytes, or
 * a buffer of its own when err is NULL), every use after its
 * declaration */
static inline rec *read_pb(const pb *trace, int want_rc, char *err, size_t errlen)
{
    rec *r = rec_new(true);
    ingest_sink s = {.ctx = r, .proc = on_proc, .thread = on_thread, .event = on_event, .skip = on_skip};
    ingest_stats st;
    memset(&st, 0, sizeof st);
    char e[512];
    if (!err) {
        err = e;
        errlen = sizeof e;
    }
    int rc = ingest_perfetto_read_mem("t.pftrace", trace->b, trace->n, &s, &st, err, errlen);
    if (rc != want_rc)
        fail_msg("rc %d, want %d: %s", rc, want_rc, err);
    assert_int_equal(r->order_errors, 0);
    return r;
}

/* ---- scheduling: the full form (the compact form of the same: test_perfetto.c) ---- */

/* CPU 0: idle -> a(10) at 500 (full, in both traces), then a sleeps for b(20)
 * at 1000, b wakes a at 1500, b is preempted by a at 2000. */
static inline void sched_head(pb *trace)
{
    pb b = {.n = 0};
    pb_u(&b, 1, 0);
    put_switch(&b, 500, "swapper/0", 0, 0, "a", 10);
    put_bundle(trace, &b);
}

static inline void sched_full(pb *trace)
{
    sched_head(trace);
    pb b = {.n = 0};
    pb_u(&b, 1, 0);
    put_switch(&b, 1000, "a", 10, 1, "b", 20);
    put_waking(&b, 1500, 20, "a", 10, 0);
    put_switch(&b, 2000, "b", 20, 0, "a", 10);
    put_bundle(trace, &b);
}

/* ---- the same db events ---- */

/* a and b: the same name, type, phase, object, thread and attributes
 * (the packed pairs shown when not) */
static inline void assert_same(const rec_event *a, const rec_event *b)
{
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->ev.type, b->ev.type);
    assert_int_equal(a->ev.phase, b->ev.phase);
    assert_int_equal(a->ev.obj, b->ev.obj);
    assert_int_equal(a->ev.tid, b->ev.tid);
    if (a->ev.attrs_len != b->ev.attrs_len || memcmp(a->attrs, b->attrs, a->ev.attrs_len) != 0) {
        char x[1024], y[1024]; /* the packed pairs, NULs shown as | */
        size_t nx = a->ev.attrs_len < sizeof x - 1 ? a->ev.attrs_len : sizeof x - 1;
        size_t ny = b->ev.attrs_len < sizeof y - 1 ? b->ev.attrs_len : sizeof y - 1;
        memcpy(x, a->attrs, nx);
        memcpy(y, b->attrs, ny);
        x[nx] = y[ny] = '\0';
        for (size_t i = 0; i < nx; i++)
            x[i] = x[i] ? x[i] : '|';
        for (size_t i = 0; i < ny; i++)
            y[i] = y[i] ? y[i] : '|';
        fail_msg("%s: other attributes: '%s' and '%s'", a->name, x, y);
    }
}

#endif
