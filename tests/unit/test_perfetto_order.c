/* tests/unit/test_perfetto_order.c -- the order in which the Perfetto
 * reader (ingest/perfetto/) hands events on, fed traces built here
 * (pb_build.h, pf_read.h): the merge of the CPUs (perfetto.c), by time,
 * ties in arrival order, a CPU's late bundle put in place, over many
 * runs, long runs and more events than the merge holds; and
 * sched_blocked_reason on the switches it holds (perfetto_blocked.c),
 * which names the wait of its task's newest held switch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "db/db.h"
#include "ingest/ftrace/ftrace_map_int.h"
#include "ingest/ingest.h"
#include "ingest/perfetto/perfetto_int.h"

#include "ftrace_rec.h"
#include "pb_build.h"
#include "pf_read.h"

/* ---- sched_blocked_reason and the switches held (perfetto_blocked.c) ---- */

/* sched_blocked_reason (FtraceEvent 18) names the wait of its task's newest
 * held switch: of a's two sleeps, the later; b's switch, and a task with
 * no switch held, are left as they were. */
static void put_blocked(pb *bundle, uint64_t ts, uint32_t waker, uint32_t pid, uint64_t caller)
{
    pb m = {.n = 0};
    pb_u(&m, 1, pid);
    pb_u(&m, 2, caller);
    pb_u(&m, 3, 1);
    put_event(bundle, ts, waker, 18, &m);
}

static bool has_attr(const rec_event *e, const char *key)
{
    const char *v;
    size_t n;
    db_event ev = e->ev;
    ev.attrs = e->attrs;
    return db_event_attr(&ev, key, &v, &n);
}

static void test_blocked_reason(void **state)
{
    (void)state;
    pb t = {.n = 0}, b0 = {.n = 0}, b1 = {.n = 0};
    pb_u(&b0, 1, 0);
    put_switch(&b0, 1000, "a", 10, 2 /* D */, "b", 20);
    put_switch(&b0, 1500, "b", 20, 0, "a", 10);
    put_switch(&b0, 2000, "a", 10, 2, "b", 20);
    put_bundle(&t, &b0);
    pb_u(&b1, 1, 1);
    put_blocked(&b1, 2500, 30, 10, 0xffffabcdull);
    put_blocked(&b1, 2600, 30, 99, 0x1234ull);
    put_bundle(&t, &b1);
    rec *r = read_pb(&t, 0, NULL, 0);
    const rec_event *e = find_event(r, 2000, "sched_switch");
    assert_non_null(e);
    assert_attr(e, "blocked_caller", "0xffffabcd");
    assert_false(has_attr(find_event(r, 1000, "sched_switch"), "blocked_caller"));
    assert_false(has_attr(find_event(r, 1500, "sched_switch"), "blocked_caller"));
    rec_free(r);
}

/* The held switches go into perfetto_blocked.c at the first
 * sched_blocked_reason, in the order they came, though the runs that hold
 * them are not in that order: task 10's switches of CPU 0 (at 5000 and
 * 7000) came before the one of CPU 1 (at 4000, the first run of the heap
 * of runs), which is the one the reason marks; a second reason, once
 * switches are kept one by one, marks the newest again. */
static void test_blocked_first_reason(void **state)
{
    (void)state;
    pb t = {.n = 0}, b0 = {.n = 0}, b1 = {.n = 0}, b2 = {.n = 0}, b3 = {.n = 0};
    pb_u(&b0, 1, 0);
    put_switch(&b0, 5000, "a", 10, 2, "b", 20);
    put_switch(&b0, 6000, "b", 20, 0, "a", 10);
    put_switch(&b0, 7000, "a", 10, 2, "b", 20);
    put_bundle(&t, &b0);
    pb_u(&b1, 1, 1);
    put_switch(&b1, 4000, "a", 10, 2, "c", 30);
    put_bundle(&t, &b1);
    pb_u(&b2, 1, 2);
    put_blocked(&b2, 7500, 40, 10, 0xabcull);
    put_bundle(&t, &b2);
    pb_u(&b3, 1, 1);
    put_switch(&b3, 8000, "c", 30, 0, "a", 10);
    put_switch(&b3, 9000, "a", 10, 2, "c", 30);
    put_blocked(&b3, 9500, 40, 10, 0xdefull);
    put_bundle(&t, &b3);
    rec *r = read_pb(&t, 0, NULL, 0);
    assert_attr(find_event(r, 4000, "sched_switch"), "blocked_caller", "0xabc");
    assert_false(has_attr(find_event(r, 5000, "sched_switch"), "blocked_caller"));
    assert_false(has_attr(find_event(r, 7000, "sched_switch"), "blocked_caller"));
    assert_attr(find_event(r, 9000, "sched_switch"), "blocked_caller", "0xdef");
    rec_free(r);
}

/* perfetto_blocked.c against the rule itself: thousands of switches of
 * five tasks held, handed on in random order (as a wrapped ring buffer
 * hands them on), and reasons between; each reason marks the newest
 * arrived switch of its task still held, found here by looking at all,
 * and each switch handed on takes the caller of the last reason that
 * marked it, or none. */
static void test_blocked_model(void **state)
{
    (void)state;
    enum { N = 4000 };
    static int32_t pid_of[N];
    static bool held[N], marked[N];
    static uint64_t caller_of[N];
    memset(held, 0, sizeof held);
    memset(marked, 0, sizeof marked);
    pf_blk *b = NULL;
    uint32_t x = 777;
    size_t next = 0, nheld = 0, ntaken_marked = 0;
    for (int step = 0; step < 3 * N; step++) {
        x = x * 1103515245u + 12345u;
        unsigned r = (x >> 16) % 10;
        if (r < 4 && next < N) { /* a switch arrives */
            pid_of[next] = 1 + (int32_t)((x >> 8) % 5);
            assert_int_equal(ingest_pf_blk_held(&b, pid_of[next], next), 0);
            held[next++] = true;
            nheld++;
        } else if (r < 8 && nheld) { /* one held is handed on, any */
            size_t k = (x >> 4) % next;
            while (!held[k])
                k = (k + 1) % next;
            held[k] = false;
            nheld--;
            uint64_t caller = 0;
            bool has = ingest_pf_blk_take(b, pid_of[k], k, &caller);
            assert_int_equal(has, marked[k]);
            if (has) {
                assert_int_equal(caller, caller_of[k]);
                ntaken_marked++;
            }
        } else { /* a reason */
            int32_t pid = 1 + (int32_t)((x >> 9) % 6); /* 6: a task with none */
            size_t want = N;
            for (size_t k = 0; k < next; k++)
                if (held[k] && pid_of[k] == pid)
                    want = k;
            ingest_pf_blk_reason(b, pid, 0x1000 + (uint64_t)step);
            if (want < N) {
                marked[want] = true;
                caller_of[want] = 0x1000 + (uint64_t)step;
            }
        }
    }
    assert_true(ntaken_marked > 100); /* the model marked, and took, many */
    ingest_pf_blk_free(b);
}

/* ---- the merge of the CPUs: by time, a CPU's late bundle put in place ---- */

static void test_merge_order(void **state)
{
    (void)state;
    pb t = {.n = 0}, b0 = {.n = 0}, b1 = {.n = 0}, b2 = {.n = 0};
    pb_u(&b0, 1, 0);
    put_waking(&b0, 100, 10, "x", 1, 0);
    put_waking(&b0, 300, 10, "x", 1, 0);
    pb_u(&b1, 1, 1);
    put_waking(&b1, 200, 20, "x", 1, 1);
    put_waking(&b1, 200, 20, "x", 1, 1);
    pb_u(&b2, 1, 0);
    put_waking(&b2, 250, 10, "x", 1, 0); /* before CPU 0's last: goes in place */
    put_bundle(&t, &b0);
    put_bundle(&t, &b1);
    put_bundle(&t, &b2);
    rec *r = read_pb(&t, 0, NULL, 0);
    const uint64_t want[] = {100, 200, 200, 250, 300};
    const uint16_t cpu[] = {0, 1, 1, 0, 0};
    assert_int_equal(r->nev, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(r->ev[i].ev.ts, want[i]);
        assert_int_equal(r->ev[i].ev.cpu, cpu[i]);
    }
    rec_free(r);
}

/* The events of r are those of arrival 0..n-1 (woken tid 2000 + arrival,
 * at ts[arrival]) in the stable sort of their arrival numbers by time
 * (order: room for n). */
static void assert_stable_by_time(const rec *r, const uint64_t *ts, size_t *order, size_t n)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && ts[order[j - 1]] > ts[order[j]]; j--) {
            size_t tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }
    for (size_t i = 0; i < n; i++) {
        char want[16];
        snprintf(want, sizeof want, "%zu", 2000 + order[i]);
        assert_int_equal(r->ev[i].ev.ts, ts[order[i]]);
        assert_attr(&r->ev[i], "tid", want);
    }
}

/* Many runs (six CPUs' bundles, each out of order and with equal times):
 * every event is held until the end, so the merge hands them on in the
 * order of a stable sort by time, ties in arrival order. */
static void test_merge_many(void **state)
{
    (void)state;
    enum { NCPU = 6, NBUNDLE = 5, NEV = 8, N = NCPU * NBUNDLE * NEV };
    pb t = {.n = 0};
    uint64_t ts[N];
    uint32_t x = 12345;
    size_t n = 0;
    for (int b = 0; b < NBUNDLE; b++)
        for (int c = 0; c < NCPU; c++) {
            pb bu = {.n = 0};
            pb_u(&bu, 1, (uint64_t)c);
            for (int k = 0; k < NEV; k++, n++) {
                x = x * 1103515245u + 12345u;
                ts[n] = 1000 + 10 * ((x >> 16) % 40); /* forty times: many ties */
                put_waking(&bu, ts[n], 10 + (uint32_t)c, "w", 2000 + (uint32_t)n, c);
            }
            put_bundle(&t, &bu);
        }
    rec *r = read_pb(&t, 0, NULL, 0);
    assert_int_equal(r->nev, N);
    size_t order[N];
    assert_stable_by_time(r, ts, order, N);
    rec_free(r);
}

/* Long runs (perfetto.c keeps a run as a chain of segments of 4 to 256
 * events): three CPUs of 1,000 events each, held to the end, CPU 1's
 * going back in time half way (a second run), CPU 2's in bundles of 7;
 * handed on as a stable sort by time. */
static void test_merge_long(void **state)
{
    (void)state;
    enum { NCPU = 3, NEV = 1000, N = NCPU * NEV };
    static uint64_t ts[N];
    static size_t order[N];
    unsigned char *buf = malloc(1 << 20);
    assert_non_null(buf);
    size_t len = 0, n = 0;
    pb bu = {.n = 0}, pkt = {.n = 0};
    for (int c = 0; c < NCPU; c++) {
        pb_u(&bu, 1, (uint64_t)c);
        for (int k = 0; k < NEV; k++, n++) {
            ts[n] = 1000 + 3 * (uint64_t)k + (uint64_t)c;
            if (c == 1 && k >= NEV / 2)
                ts[n] -= 1200; /* back in time: a new run */
            put_waking(&bu, ts[n], 10, "w", 2000 + (uint32_t)n, c);
            if (bu.n > sizeof bu.b / 2 || k == NEV - 1 || (c == 2 && k % 7 == 6)) {
                pkt.n = 0;
                put_bundle(&pkt, &bu);
                assert_true(len + pkt.n <= 1 << 20);
                memcpy(buf + len, pkt.b, pkt.n);
                len += pkt.n;
                bu.n = 0;
                pb_u(&bu, 1, (uint64_t)c);
            }
        }
        bu.n = 0;
    }
    rec *r = rec_new(true);
    ingest_sink sk = {.ctx = r, .proc = on_proc, .thread = on_thread, .event = on_event, .skip = on_skip};
    ingest_stats st;
    memset(&st, 0, sizeof st);
    char err[512];
    assert_int_equal(ingest_perfetto_read_mem("t.pftrace", buf, len, &sk, &st, err, sizeof err), 0);
    assert_int_equal(r->nev, N);
    assert_stable_by_time(r, ts, order, N);
    rec_free(r);
    free(buf);
}

/* More events than the merge holds (PF_HEAP_MAX, 65,536), so it hands
 * them on while it reads: two CPUs, each going back in time every 600
 * events (a new run, whose segments of every size, 4 to 256 events, come
 * from perfetto.c's pools once the first runs are handed on), in bundles
 * of 50 (a packet's hold each, reused in turn); never back past an event
 * handed on, so the order is a stable sort by time. */
static void test_merge_reuse(void **state)
{
    (void)state;
    enum { NCPU = 2, NEV = 36000, N = NCPU * NEV, BUF = 4 << 20 };
    static uint64_t ts[N];
    static size_t order[N];
    unsigned char *buf = malloc(BUF);
    assert_non_null(buf);
    size_t len = 0, n = 0;
    pb bu = {.n = 0}, pkt = {.n = 0};
    for (int k0 = 0; k0 < NEV; k0 += 50)
        for (int c = 0; c < NCPU; c++) {
            bu.n = 0;
            pb_u(&bu, 1, (uint64_t)c);
            for (int k = k0; k < k0 + 50; k++, n++) {
                ts[n] = 1000 + 10 * (uint64_t)k + (uint64_t)c - ((k / 300) % 2 ? 40 : 0);
                put_waking(&bu, ts[n], 10, "w", 2000 + (uint32_t)n, c);
            }
            pkt.n = 0;
            put_bundle(&pkt, &bu);
            assert_true(len + pkt.n <= BUF);
            memcpy(buf + len, pkt.b, pkt.n);
            len += pkt.n;
        }
    rec *r = rec_new(true);
    ingest_sink sk = {.ctx = r, .proc = on_proc, .thread = on_thread, .event = on_event, .skip = on_skip};
    ingest_stats st;
    memset(&st, 0, sizeof st);
    char err[512];
    assert_int_equal(ingest_perfetto_read_mem("t.pftrace", buf, len, &sk, &st, err, sizeof err), 0);
    assert_int_equal(r->nev, N);
    assert_int_equal(st.late, 0);
    assert_stable_by_time(r, ts, order, N);
    rec_free(r);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_order),
        cmocka_unit_test(test_merge_many),
        cmocka_unit_test(test_merge_long),
        cmocka_unit_test(test_merge_reuse),
        cmocka_unit_test(test_blocked_reason),
        cmocka_unit_test(test_blocked_first_reason),
        cmocka_unit_test(test_blocked_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
