/* tests/unit/test_perfetto.c -- the Perfetto reader (ingest/perfetto/)
 * fed traces built here, field by field, with a small protobuf writer and
 * the field numbers of Perfetto's published schema: a full-form
 * sched_switch bundle, the same scheduling as a compact_sched bundle
 * (which must give exactly the same events and threads), binder
 * transactions with a reply, atrace prints, compressed_packets, and
 * corrupt input (a bad varint, a length past the end). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "db/db.h"
#include "ingest/ftrace/ftrace_map_int.h"
#include "ingest/ingest.h"
#include "ingest/perfetto/perfetto_int.h"

#include "ftrace_rec.h"
#include "pb_build.h"

/* ---- a protobuf writer and its Perfetto messages: pb_build.h ---- */

static rec *read_pb(const pb *trace, int want_rc, char *err, size_t errlen)
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

static const rec_event *nth_named(const rec *r, const char *name, int n)
{
    for (size_t i = 0; i < r->nev; i++)
        if (strcmp(r->ev[i].name, name) == 0 && n-- == 0)
            return &r->ev[i];
    fail_msg("no event %s", name);
    return NULL;
}

/* ---- scheduling: the full form, and the compact form of the same ---- */

/* CPU 0: idle -> a(10) at 500 (full, in both traces), then a sleeps for b(20)
 * at 1000, b wakes a at 1500, b is preempted by a at 2000. */
static void sched_head(pb *trace)
{
    pb b = {.n = 0};
    pb_u(&b, 1, 0);
    put_switch(&b, 500, "swapper/0", 0, 0, "a", 10);
    put_bundle(trace, &b);
}

static void sched_full(pb *trace)
{
    sched_head(trace);
    pb b = {.n = 0};
    pb_u(&b, 1, 0);
    put_switch(&b, 1000, "a", 10, 1, "b", 20);
    put_waking(&b, 1500, 20, "a", 10, 0);
    put_switch(&b, 2000, "b", 20, 0, "a", 10);
    put_bundle(trace, &b);
}

static void sched_compact(pb *trace)
{
    sched_head(trace);
    pb cs = {.n = 0};
    pb_s(&cs, 5, "b"); /* intern_table */
    pb_s(&cs, 5, "a");
    const uint64_t sts[] = {1000, 1000}, sstate[] = {1, 0}, spid[] = {20, 10}, sprio[] = {120, 120}, scomm[] = {0, 1};
    pb_packed(&cs, 1, sts, 2); /* switch_timestamp, delta-encoded */
    pb_packed(&cs, 2, sstate, 2);
    pb_packed(&cs, 3, spid, 2);
    pb_packed(&cs, 4, sprio, 2);
    pb_packed(&cs, 6, scomm, 2);
    const uint64_t wts[] = {1500}, wpid[] = {10}, wcpu[] = {0}, wprio[] = {120}, wcomm[] = {1};
    pb_packed(&cs, 7, wts, 1); /* waking_timestamp */
    pb_packed(&cs, 8, wpid, 1);
    pb_packed(&cs, 9, wcpu, 1);
    pb_packed(&cs, 10, wprio, 1);
    pb_packed(&cs, 11, wcomm, 1);
    pb b = {.n = 0};
    pb_u(&b, 1, 0);
    pb_m(&b, 4, &cs); /* compact_sched */
    put_bundle(trace, &b);
}

static void test_full_switch(void **state)
{
    (void)state;
    pb t = {.n = 0};
    sched_full(&t);
    rec *r = read_pb(&t, 0, NULL, 0);
    assert_int_equal(r->nev, 4);
    const rec_event *e = nth_named(r, "sched_switch", 1);
    assert_int_equal(e->ev.ts, 1000);
    assert_int_equal(e->ev.tid, 10);
    assert_int_equal(e->ev.type, DB_EV_WAIT);
    assert_attr(e, "reason", "sleep");
    assert_attr(e, "next_comm", "b");
    assert_attr(e, "prev_prio", "120");
    e = nth_named(r, "sched_waking", 0);
    assert_int_equal(e->ev.tid, 20);
    assert_attr(e, "tid", "10");
    e = nth_named(r, "sched_switch", 2);
    assert_int_equal(e->ev.type, DB_EV_RAW); /* R: a preemption */
    assert_string_equal(find_thread(r, 10)->name, "a");
    assert_string_equal(find_thread(r, 20)->name, "b");
    rec_free(r);
}

static void test_compact_is_full(void **state)
{
    (void)state;
    pb f = {.n = 0}, c = {.n = 0};
    sched_full(&f);
    sched_compact(&c);
    rec *rf = read_pb(&f, 0, NULL, 0), *rc = read_pb(&c, 0, NULL, 0);
    assert_same_events(rf, rc);
    assert_int_equal(rc->nth, rf->nth);
    for (size_t i = 0; i < rf->nth; i++) {
        rec_thread *t = find_thread(rc, rf->th[i].tid);
        assert_non_null(t);
        assert_int_equal(t->pid, rf->th[i].pid);
        assert_string_equal(t->name, rf->th[i].name);
    }
    rec_free(rf);
    rec_free(rc);
}

/* ---- binder: a request, its receipt, the reply and its receipt ---- */

static void put_txn(pb *bundle, uint64_t ts, uint32_t pid, int32_t id, int32_t node, int32_t proc, int32_t thread,
                    int reply, uint32_t flags)
{
    pb m = {.n = 0};
    pb_u(&m, 1, (uint64_t)id);
    pb_u(&m, 2, (uint64_t)node);
    pb_u(&m, 3, (uint64_t)proc);
    pb_u(&m, 4, (uint64_t)thread);
    pb_u(&m, 5, (uint64_t)reply);
    pb_u(&m, 6, 3);
    pb_u(&m, 7, flags);
    put_event(bundle, ts, pid, 50, &m);
}

static void put_recv(pb *bundle, uint64_t ts, uint32_t pid, int32_t id)
{
    pb m = {.n = 0};
    pb_u(&m, 1, (uint64_t)id);
    put_event(bundle, ts, pid, 51, &m);
}

/* Each event's process from process_tree's table of threads, its
 * answer kept in the thread's entry after the thread's first event: 40
 * threads of 7 processes seen, then 300 threads the table does not know
 * (the thread table grows, its entries moved), then the 40 again */
static void test_tgids_kept(void **state)
{
    (void)state;
    pb t = {.n = 0}, pt = {.n = 0}, pkt = {.n = 0};
    for (uint32_t tid = 1000; tid < 1040; tid++) {
        pb th = {.n = 0};
        pb_u(&th, 1, tid);
        pb_u(&th, 3, 2000 + tid % 7);
        pb_m(&pt, 2, &th);
    }
    pb_m(&pkt, 2, &pt);
    pb_m(&t, 1, &pkt);
    pb idle = {.n = 0};
    pb_u(&idle, 1, 1);
    pb_u(&idle, 2, 0);
    uint64_t ts = 100;
    static const uint32_t from[] = {1000, 3000, 1000}, to[] = {1040, 3300, 1040};
    for (int round = 0; round < 3; round++) {
        pb b = {.n = 0};
        pb_u(&b, 1, 0);
        for (uint32_t tid = from[round]; tid < to[round]; tid++)
            put_event(&b, ts++, tid, 13, &idle);
        put_bundle(&t, &b);
    }
    rec *r = read_pb(&t, 0, NULL, 0);
    assert_int_equal(r->nev, 380);
    for (size_t i = 0; i < r->nev; i++) {
        uint32_t tid = r->ev[i].ev.tid;
        assert_int_equal(r->ev[i].ev.pid, tid >= 3000 ? tid : 2000 + tid % 7);
    }
    rec_free(r);
}

/* cpu_idle's and cpu_frequency's state=, a long one's text kept from
 * the kind's last event: the same number, another, a short one between,
 * and the other kind's in turn */
static void test_idle_states(void **state)
{
    (void)state;
    static const struct {
        int msg; /* 13 cpu_idle, 11 cpu_frequency */
        uint64_t state;
        const char *text;
    } ev[] = {
        {13, 4294967295u, "4294967295"}, {13, 1, "1"},           {13, 4294967295u, "4294967295"},
        {11, 1804800, "1804800"},        {13, 4294967295u, "4294967295"}, {11, 691200, "691200"},
        {13, 10000, "10000"},            {13, 9999, "9999"},      {11, 691200, "691200"},
        {13, 4294967295u, "4294967295"},
    };
    const size_t n = sizeof ev / sizeof *ev;
    pb t = {.n = 0}, b = {.n = 0};
    pb_u(&b, 1, 0);
    for (size_t i = 0; i < n; i++) {
        pb m = {.n = 0};
        pb_u(&m, 1, ev[i].state);
        pb_u(&m, 2, 0);
        put_event(&b, 100 + i, 0, ev[i].msg, &m);
    }
    put_bundle(&t, &b);
    rec *r = read_pb(&t, 0, NULL, 0);
    assert_int_equal(r->nev, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(r->ev[i].name, ev[i].msg == 13 ? "cpu_idle" : "cpu_frequency");
        assert_attr(&r->ev[i], "state", ev[i].text);
    }
    rec_free(r);
}

static void test_binder(void **state)
{
    (void)state;
    pb t = {.n = 0};
    /* process_tree (packet field 2): server 30 (/system/bin/srv), its thread 31 */
    pb pt = {.n = 0}, proc = {.n = 0}, th = {.n = 0}, pkt = {.n = 0};
    pb_u(&proc, 1, 30);
    pb_s(&proc, 3, "/system/bin/srv");
    pb_m(&pt, 1, &proc);
    pb_u(&th, 1, 31);
    pb_s(&th, 2, "binder:30_1");
    pb_u(&th, 3, 30);
    pb_m(&pt, 2, &th);
    pb_m(&pkt, 2, &pt);
    pb_m(&t, 1, &pkt);
    pb b0 = {.n = 0}, b1 = {.n = 0};
    pb_u(&b0, 1, 0);
    pb_u(&b1, 1, 1);
    put_txn(&b0, 100, 10, 7, 5, 30, 0, 0, 0x10); /* request of 10 to node 5 of 30 */
    put_recv(&b1, 150, 31, 7);
    put_txn(&b1, 200, 31, 8, 0, 10, 10, 1, 0); /* the reply, to thread 10 */
    put_recv(&b0, 250, 10, 8);
    put_txn(&b0, 300, 10, 9, 5, 30, 0, 0, 0x11); /* oneway */
    put_bundle(&t, &b0);
    put_bundle(&t, &b1);
    rec *r = read_pb(&t, 0, NULL, 0);
    assert_int_equal(r->nev, 5);
    const rec_event *req = nth_named(r, "binder_transaction", 0), *rep = nth_named(r, "binder_transaction", 1);
    const rec_event *got = nth_named(r, "binder_transaction_received", 0);
    const rec_event *back = nth_named(r, "binder_transaction_received", 1);
    const rec_event *ow = nth_named(r, "binder_transaction", 2);
    assert_int_equal(req->ev.type, DB_EV_MACH_MSG);
    assert_int_equal(req->ev.phase, DB_PH_BEGIN);
    assert_int_equal(got->ev.phase, DB_PH_END);
    assert_int_equal(got->ev.tid, 31);
    assert_int_equal(got->ev.pid, 30);
    assert_string_equal(find_thread(r, 31)->name, "binder:30_1");
    assert_attr(req, "dest", "0x5");
    assert_attr(req, "reply", "0x20000000a"); /* the requester's reply port: thread 10 */
    assert_attr(req, "oneway", "0");
    assert_attr(got, "dest", "0x5");
    assert_attr(got, "reply", "0x20000000a");
    assert_attr(got, "kmsg", "7");
    assert_attr(rep, "binder_reply", "1");
    assert_attr(rep, "dest", "0x20000000a"); /* sent to the port the request named */
    assert_attr(back, "dest", "0x20000000a");
    assert_int_equal(back->ev.tid, 10);
    assert_attr(ow, "oneway", "1");
    assert_attr(ow, "reply", "0x0");
    rec_free(r);
}

/* ---- atrace prints, inside compressed_packets ---- */

static void put_print(pb *bundle, uint64_t ts, uint32_t pid, const char *buf)
{
    pb m = {.n = 0};
    pb_u(&m, 1, 0xffffffc010000000ull);
    pb_s(&m, 2, buf);
    put_event(bundle, ts, pid, 3, &m);
}

static void test_print_slices(void **state)
{
    (void)state;
    pb inner = {.n = 0}, b = {.n = 0};
    pb_u(&b, 1, 2);
    put_print(&b, 100, 40, "B|40|Choreographer#doFrame 191059\n");
    put_print(&b, 200, 40, "E|40\n");
    put_print(&b, 300, 40, "C|40|frames|3\n");
    put_bundle(&inner, &b);
    /* TracePacket.compressed_packets (50): a Trace, zlib'd */
    unsigned char z[16384];
    uLongf zn = sizeof z;
    assert_int_equal(compress(z, &zn, inner.b, inner.n), Z_OK);
    pb pkt = {.n = 0}, t = {.n = 0};
    pb_bytes(&pkt, 50, z, zn);
    pb_m(&t, 1, &pkt);
    rec *r = read_pb(&t, 0, NULL, 0);
    assert_int_equal(r->nev, 3);
    const rec_event *e = nth_named(r, "print", 0);
    assert_int_equal(e->ev.type, DB_EV_RAW);
    assert_int_equal(e->ev.cpu, 2);
    assert_attr(e, "buf", "B|40|Choreographer#doFrame 191059");
    assert_attr(e, "atrace", "B");
    assert_attr(e, "slice", "Choreographer#doFrame");
    assert_attr(e, "tgid", "40");
    e = nth_named(r, "print", 1);
    assert_attr(e, "atrace", "E");
    e = nth_named(r, "print", 2);
    assert_attr(e, "counter", "frames");
    assert_attr(e, "value", "3");
    rec_free(r);
}

/* ---- the same db events as the ftrace text of the same events ---- */

static void assert_same(const rec_event *a, const rec_event *b)
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

static void test_same_as_text(void **state)
{
    (void)state;
    pb t = {.n = 0}, b = {.n = 0}, m = {.n = 0}, si = {.n = 0}, un = {.n = 0}, pkt = {.n = 0};
    /* system_info (45): an x86-64 machine, as run() tells the text reader */
    pb_s(&un, 4, "x86_64");
    pb_m(&si, 1, &un);
    pb_m(&pkt, 45, &si);
    pb_m(&t, 1, &pkt);
    pb_u(&b, 1, 1);
    put_switch(&b, 1000001000, "a", 10, 2, "b", 20); /* D */
    pb_s(&m, 1, "b");
    pb_u(&m, 2, 10);
    pb_u(&m, 3, 120);
    pb_u(&m, 4, 1);
    pb_u(&m, 5, 1);
    put_event(&b, 1000002000, 20, 17, &m); /* sched_wakeup */
    m.n = 0;
    pb_u(&m, 1, 36);
    pb_s(&m, 2, "virtio1");
    put_event(&b, 1000003000, 20, 36, &m); /* irq_handler_entry */
    m.n = 0;
    pb_u(&m, 1, 36);
    pb_u(&m, 2, 1);
    put_event(&b, 1000004000, 20, 37, &m); /* irq_handler_exit */
    m.n = 0;
    pb_u(&m, 1, 9);
    put_event(&b, 1000005000, 20, 24, &m); /* softirq_entry */
    m.n = 0;
    pb_u(&m, 1, 30);
    pb_s(&m, 2, "kid");
    pb_u(&m, 3, 0x3d0f00);
    pb_u(&m, 4, 0);
    put_event(&b, 1000006000, 20, 235, &m); /* task_newtask */
    m.n = 0;
    pb_s(&m, 1, "b");
    pb_u(&m, 2, 20);
    pb_s(&m, 3, "b");
    pb_u(&m, 4, 31);
    put_event(&b, 1000006100, 20, 239, &m); /* sched_process_fork */
    m.n = 0;
    pb_s(&m, 1, "/bin/sh");
    pb_u(&m, 2, 31);
    pb_u(&m, 3, 31);
    put_event(&b, 1000006200, 31, 237, &m); /* sched_process_exec */
    m.n = 0;
    pb_u(&m, 1, 31);
    pb_s(&m, 2, "sh");
    pb_s(&m, 3, "sh2");
    pb_u(&m, 4, 0);
    put_event(&b, 1000006300, 31, 236, &m); /* task_rename */
    m.n = 0;
    pb_u(&m, 1, 63);
    const uint64_t args[] = {1, 0x7ffd, 3, 0, 0, 0};
    pb_packed(&m, 2, args, 6);
    put_event(&b, 1000006400, 31, 329, &m); /* sys_enter */
    m.n = 0;
    pb_u(&m, 1, 63);
    pb_u(&m, 2, (uint64_t)-2);
    put_event(&b, 1000006500, 31, 330, &m); /* sys_exit */
    m.n = 0;
    pb_u(&m, 1, 1);
    pb_u(&m, 2, 1);
    put_event(&b, 1000006600, 31, 13, &m); /* cpu_idle */
    m.n = 0;
    pb_s(&m, 1, "sh2");
    pb_u(&m, 2, 31);
    pb_u(&m, 3, 31); /* tgid */
    pb_u(&m, 4, 120);
    put_event(&b, 1000006700, 31, 238, &m); /* sched_process_exit */
    put_txn(&b, 1000006800, 20, 7, 5, 30, 0, 0, 0x10);
    /* a reply, oneway, to a thread: binder's values (ftrace_binder_vals)
     * give the pairs' attributes, a negative number's too */
    put_txn(&b, 1000006850, 20, 8, -1, 10, 10, 1, 0x11);
    put_recv(&b, 1000006900, 20, 7);
    m.n = 0;
    pb_s(&m, 2, "B|20|frame 7\n");
    put_event(&b, 1000007000, 20, 3, &m); /* print */
    put_bundle(&t, &b);
    rec *r = read_pb(&t, 0, NULL, 0);
    one o = ingest_text(
        "# tracer: nop\n"
        "   a-10    [001] d..2  1.000001000: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=D"
        " ==> next_comm=b next_pid=20 next_prio=120\n"
        "   b-20    [001] d..2  1.000002000: sched_wakeup: comm=b pid=10 prio=120 target_cpu=001\n"
        "   b-20    [001] d.h2  1.000003000: irq_handler_entry: irq=36 name=virtio1\n"
        "   b-20    [001] d.h2  1.000004000: irq_handler_exit: irq=36 ret=handled\n"
        "   b-20    [001] ..s2  1.000005000: softirq_entry: vec=9 [action=RCU]\n"
        "   b-20    [001] ....  1.000006000: task_newtask: pid=30 comm=kid clone_flags=3d0f00 oom_score_adj=0\n"
        "   b-20    [001] ....  1.000006100: sched_process_fork: comm=b pid=20 child_comm=b child_pid=31\n"
        "   b-31    [001] ....  1.000006200: sched_process_exec: filename=/bin/sh pid=31 old_pid=31\n"
        "   sh-31   [001] ....  1.000006300: task_rename: pid=31 oldcomm=sh newcomm=sh2 oom_score_adj=0\n"
        "   sh2-31  [001] ....  1.000006400: sys_enter: NR 63 (1, 7ffd, 3, 0, 0, 0)\n"
        "   sh2-31  [001] ....  1.000006500: sys_exit: NR 63 = -2\n"
        "   sh2-31  [001] ....  1.000006600: cpu_idle: state=1 cpu_id=1\n"
        "   sh2-31  [001] ....  1.000006700: sched_process_exit: comm=sh2 pid=31 prio=120\n"
        "   b-20    [001] ....  1.000006800: binder_transaction: transaction=7 dest_node=5 dest_proc=30"
        " dest_thread=0 reply=0 flags=0x10 code=0x3\n"
        "   b-20    [001] ....  1.000006850: binder_transaction: transaction=8 dest_node=-1 dest_proc=10"
        " dest_thread=10 reply=1 flags=0x11 code=0x3\n"
        "   b-20    [001] ....  1.000006900: binder_transaction_received: transaction=7\n"
        "   b-20    [001] ....  1.000007000: tracing_mark_write: B|20|frame 7\n");
    assert_int_equal(r->nev, o.r->nev);
    for (size_t i = 0; i < r->nev; i++) {
        if (i == r->nev - 1) /* print and tracing_mark_write: the same text, two names */
            assert_int_equal(r->ev[i].ev.type, o.r->ev[i].ev.type);
        else
            assert_same(&r->ev[i], &o.r->ev[i]);
    }
    const rec_event *pe = &r->ev[r->nev - 1], *te = &o.r->ev[o.r->nev - 1];
    assert_int_equal(pe->ev.attrs_len, te->ev.attrs_len);
    assert_memory_equal(pe->attrs, te->attrs, pe->ev.attrs_len);
    rec_free(r);
    rec_free(o.r);
}

/* ---- the merge of the CPUs: by time, a CPU's late bundle put in place ---- */

/* A bundle of cpu holding one compact switch, its prev implied. */
static void put_compact_switch(pb *trace, uint32_t cpu, uint64_t ts, int64_t state, const char *nc, uint32_t np)
{
    pb cs = {.n = 0};
    pb_s(&cs, 5, nc);
    const uint64_t sts[] = {ts}, sstate[] = {(uint64_t)state}, spid[] = {np}, sprio[] = {120}, scomm[] = {0};
    pb_packed(&cs, 1, sts, 1);
    pb_packed(&cs, 2, sstate, 1);
    pb_packed(&cs, 3, spid, 1);
    pb_packed(&cs, 4, sprio, 1);
    pb_packed(&cs, 6, scomm, 1);
    pb b = {.n = 0};
    pb_u(&b, 1, cpu);
    pb_m(&b, 4, &cs);
    put_bundle(trace, &b);
}

/* A bundle of cpu holding one compact waking of task wp named wc. */
static void put_compact_waking(pb *trace, uint32_t cpu, uint64_t ts, const char *wc, uint32_t wp)
{
    pb cs = {.n = 0};
    pb_s(&cs, 5, wc);
    const uint64_t wts[] = {ts}, wpid[] = {wp}, wcpu[] = {cpu}, wprio[] = {120}, wcomm[] = {0};
    pb_packed(&cs, 7, wts, 1);
    pb_packed(&cs, 8, wpid, 1);
    pb_packed(&cs, 9, wcpu, 1);
    pb_packed(&cs, 10, wprio, 1);
    pb_packed(&cs, 11, wcomm, 1);
    pb b = {.n = 0};
    pb_u(&b, 1, cpu);
    pb_m(&b, 4, &cs);
    put_bundle(trace, &b);
}

static const rec_event *switch_on(const rec *r, uint32_t cpu)
{
    for (size_t i = 0; i < r->nev; i++)
        if (strcmp(r->ev[i].name, "sched_switch") == 0 && r->ev[i].ev.cpu == cpu)
            return &r->ev[i];
    fail_msg("no sched_switch on cpu %u", cpu);
    return NULL;
}

/* A compact switch's prev_comm, the next_comm of the switch before it
 * on its CPU as the CPU's state keeps it (pf_copy_comm): comms of 1 to
 * 30 bytes, one CPU each, cut to 23 as the full form's field would be;
 * and the first switch's next_comm and a compact waking's comm whole
 * (each measured at its emit, ingest_pf_arena_strlen) */
static void test_compact_prev_lengths(void **state)
{
    (void)state;
    const char abc[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    pb t = {.n = 0};
    for (uint32_t n = 1; n <= 30; n++) {
        char comm[40];
        memcpy(comm, abc, n);
        comm[n] = '\0';
        put_compact_switch(&t, n, 1000 + n, 1, comm, 100 + n);
        put_compact_switch(&t, n, 2000 + n, 1, "z", 500 + n);
        put_compact_waking(&t, n, 3000 + n, comm, 700 + n);
    }
    rec *r = read_pb(&t, 0, NULL, 0);
    for (uint32_t n = 1; n <= 30; n++) {
        char comm[40], want[40];
        memcpy(comm, abc, n);
        comm[n] = '\0';
        memcpy(want, abc, n < 23 ? n : 23);
        want[n < 23 ? n : 23] = '\0';
        assert_attr(switch_on(r, n), "next_comm", comm);
        const rec_event *second = NULL, *waking = NULL;
        int seen = 0;
        for (size_t i = 0; i < r->nev && !second; i++)
            if (strcmp(r->ev[i].name, "sched_switch") == 0 && r->ev[i].ev.cpu == n && ++seen == 2)
                second = &r->ev[i];
        for (size_t i = 0; i < r->nev && !waking; i++)
            if (strcmp(r->ev[i].name, "sched_waking") == 0 && r->ev[i].ev.cpu == n)
                waking = &r->ev[i];
        assert_non_null(second);
        assert_attr(second, "prev_comm", want);
        assert_non_null(waking);
        assert_attr(waking, "comm", comm);
    }
    rec_free(r);
}

/* The first compact switch of a CPU: its prev is the task an earlier
 * event there showed, named as the file names it elsewhere (here only
 * by its sched_process_exit); the idle task is swapper/CPU; a CPU with
 * no event before stays <...>. */
static void test_compact_first_prev_named(void **state)
{
    (void)state;
    pb t = {.n = 0}, b1 = {.n = 0}, b2 = {.n = 0}, ex = {.n = 0}, si = {.n = 0};
    pb_u(&b1, 1, 1);
    put_print(&b1, 100, 30, "hello");
    pb_s(&ex, 1, "cat"); /* SchedProcessExitFtraceEvent {comm 1, pid 2} */
    pb_u(&ex, 2, 30);
    put_event(&b1, 150, 30, 238, &ex);
    put_bundle(&t, &b1);
    pb_u(&b2, 1, 2);
    pb_u(&si, 1, 7); /* softirq_entry in the idle task */
    put_event(&b2, 120, 0, 24, &si);
    put_bundle(&t, &b2);
    put_compact_switch(&t, 1, 200, 16 /* X */, "swapper/1", 0);
    put_compact_switch(&t, 2, 210, 0, "b", 20);
    put_compact_switch(&t, 3, 220, 0, "c", 40);
    rec *r = read_pb(&t, 0, NULL, 0);
    const rec_event *e = switch_on(r, 1);
    assert_int_equal(e->ev.tid, 30);
    assert_attr(e, "prev_pid", "30");
    assert_attr(e, "prev_comm", "cat");
    assert_string_equal(find_thread(r, 30)->name, "cat");
    e = switch_on(r, 2);
    assert_int_equal(e->ev.tid, 0);
    assert_attr(e, "prev_pid", "0");
    assert_attr(e, "prev_comm", "swapper/2");
    e = switch_on(r, 3);
    assert_attr(e, "prev_comm", "<...>");
    rec_free(r);
}

/* A compact switch's prev_comm is the comm of the CPU's last switch,
 * copied (cut to 23 bytes) when a compact switch reads it or its bundle
 * ends: the last of several full switches, in the same bundle or an
 * earlier packet; an event of another task on the CPU clears it. */
static void test_compact_prev_after_full(void **state)
{
    (void)state;
    const char *longc = "abcdefghijklmnopqrstuvwxyz0123"; /* 30 bytes */
    pb t = {.n = 0}, b1 = {.n = 0}, b2 = {.n = 0}, cs = {.n = 0};
    pb_u(&b1, 1, 1);
    put_switch(&b1, 100, "swapper/1", 0, 0, "first", 50);
    put_switch(&b1, 110, "first", 50, 1, longc, 60);
    put_bundle(&t, &b1);
    put_compact_switch(&t, 1, 200, 1, "next", 70); /* a later packet */
    pb_u(&b2, 1, 2);
    put_switch(&b2, 300, "swapper/2", 0, 0, "one", 80);
    put_switch(&b2, 310, "one", 80, 1, "gammagammagammagammagamma12", 90);
    pb_s(&cs, 5, "delta"); /* the same bundle */
    const uint64_t sts[] = {400}, sstate[] = {1}, spid[] = {95}, sprio[] = {120}, scomm[] = {0};
    pb_packed(&cs, 1, sts, 1);
    pb_packed(&cs, 2, sstate, 1);
    pb_packed(&cs, 3, spid, 1);
    pb_packed(&cs, 4, sprio, 1);
    pb_packed(&cs, 6, scomm, 1);
    pb_m(&b2, 4, &cs);
    put_bundle(&t, &b2);
    rec *r = read_pb(&t, 0, NULL, 0);
    const rec_event *e = NULL;
    for (size_t i = 0; i < r->nev; i++)
        if (r->ev[i].ev.ts == 200)
            e = &r->ev[i];
    assert_non_null(e);
    assert_attr(e, "prev_pid", "60");
    assert_attr(e, "prev_comm", "abcdefghijklmnopqrstuvw");
    for (size_t i = 0; i < r->nev; i++)
        if (r->ev[i].ev.ts == 400)
            e = &r->ev[i];
    assert_int_equal(e->ev.ts, 400);
    assert_attr(e, "prev_pid", "90");
    assert_attr(e, "prev_comm", "gammagammagammagammagam"); /* cut, not the table's name */
    rec_free(r);
}

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

/* ---- the hand decoder (perfetto_fast.c) and protobuf-c agree ---- */

static void assert_all_same(const rec *a, const rec *b)
{
    assert_int_equal(a->nev, b->nev);
    for (size_t i = 0; i < a->nev; i++) {
        assert_same(&a->ev[i], &b->ev[i]);
        assert_int_equal(a->ev[i].ev.ts, b->ev[i].ev.ts);
        assert_int_equal(a->ev[i].ev.cpu, b->ev[i].ev.cpu);
    }
}

/* sched_full's second bundle, written as protobuf allows but as the hand
 * decoder does not take on (a tag in 5 bytes: protobuf-c reads that
 * packet), or takes on with protobuf's rules (a field given twice: the
 * last wins; a oneof given twice: the last member; fields nobody knows) */
static void sched_odd(pb *trace)
{
    sched_head(trace);
    pb b = {.n = 0};
    pb_u(&b, 1, 0);
    pb_u(&b, 9, 77); /* unknown to the schema */
    pb s = {.n = 0}, e = {.n = 0}, w = {.n = 0}, idle = {.n = 0};
    pb_s(&s, 1, "zzz"); /* replaced below */
    pb_s(&s, 1, "a");
    pb_u(&s, 2, 10);
    pb_u(&s, 3, 120);
    pb_u(&s, 4, 1);
    pb_s(&s, 5, "b");
    pb_u(&s, 6, 20);
    pb_u(&s, 7, 120);
    const unsigned char ts5[] = {0x88, 0x80, 0x80, 0x80, 0x00}; /* field 1, varint, in 5 bytes */
    memcpy(e.b, ts5, sizeof ts5);
    e.n = sizeof ts5;
    pb_raw(&e, 1000);
    pb_u(&e, 2, 10);
    pb_m(&e, 4, &s);
    pb_m(&b, 2, &e);
    pb_u(&idle, 1, 3);
    pb_s(&w, 1, "a");
    pb_u(&w, 2, 10);
    pb_u(&w, 3, 120);
    pb_u(&w, 4, 1);
    pb_u(&w, 5, 0);
    e.n = 0;
    pb_u(&e, 1, 1500);
    pb_u(&e, 2, 20);
    pb_m(&e, 13, &idle); /* cpu_idle, then sched_waking: the waking */
    pb_m(&e, 20, &w);
    pb_m(&b, 2, &e);
    put_switch(&b, 2000, "b", 20, 0, "a", 10);
    pb pkt = {.n = 0};
    pb_m(&pkt, 1, &b);
    pb_s(&pkt, 99, "unknown");
    pb_m(trace, 1, &pkt);
}

static void test_hand_decoder_agrees(void **state)
{
    (void)state;
    pb f = {.n = 0}, o = {.n = 0};
    sched_full(&f);
    sched_odd(&o);
    rec *rf = read_pb(&f, 0, NULL, 0), *ro = read_pb(&o, 0, NULL, 0);
    assert_all_same(rf, ro);
    rec_free(ro);
    /* ftrace_events twice in a packet: protobuf-c merges the bundles */
    pb m = {.n = 0}, b1 = {.n = 0}, b2 = {.n = 0}, pkt = {.n = 0};
    sched_head(&m);
    pb_u(&b1, 1, 0);
    put_switch(&b1, 1000, "a", 10, 1, "b", 20);
    pb_u(&b2, 1, 0);
    put_waking(&b2, 1500, 20, "a", 10, 0);
    put_switch(&b2, 2000, "b", 20, 0, "a", 10);
    pb_m(&pkt, 1, &b1);
    pb_m(&pkt, 1, &b2);
    pb_m(&m, 1, &pkt);
    rec *rm = read_pb(&m, 0, NULL, 0);
    assert_all_same(rf, rm);
    rec_free(rm);
    rec_free(rf);
    /* an event the schema leaves out beside those it holds: its unknown
     * field (kept by the hand decoder as protobuf-c keeps it) names it */
    pb u = {.n = 0}, b = {.n = 0}, rss = {.n = 0};
    pb_u(&b, 1, 0);
    put_switch(&b, 500, "swapper/0", 0, 0, "a", 10);
    pb_u(&rss, 1, 5);
    put_event(&b, 600, 10, 313, &rss);
    put_waking(&b, 700, 10, "b", 20, 0);
    put_bundle(&u, &b);
    rec *ru = read_pb(&u, 0, NULL, 0);
    assert_int_equal(ru->nev, 3);
    assert_string_equal(ru->ev[1].name, "rss_stat");
    assert_string_equal(ru->ev[2].name, "sched_waking");
    rec_free(ru);
    /* a field of the wrong wire type: protobuf-c refuses the packet */
    pb c = {.n = 0}, cb = {.n = 0}, ce = {.n = 0};
    sched_head(&c);
    size_t at = c.n;
    pb_u(&ce, 1, 1000);
    pb_s(&ce, 2, "10"); /* pid, a varint, as bytes */
    pb_m(&cb, 2, &ce);
    put_bundle(&c, &cb);
    char err[512], want[64];
    rec *rc = read_pb(&c, -1, err, sizeof err);
    snprintf(want, sizeof want, "t.pftrace: byte %zu: packet 2: corrupt protobuf", at);
    assert_non_null(strstr(err, want));
    rec_free(rc);
}

/* ingest_pf_varint reads up to 8 bytes at once when 10 are there: every
 * length, with what follows the varint's last byte set (it must not leak
 * in), and with the buffer ending at the varint (the byte-wise path),
 * gives what a byte-wise reading gives; a varint cut short or of 11
 * bytes is refused. */
static uint64_t varint_ref(const unsigned char *b, size_t *len)
{
    uint64_t x = 0;
    size_t i = 0;
    do
        x |= (uint64_t)(b[i] & 0x7f) << (7 * i);
    while (b[i++] & 0x80 && i < 10);
    *len = i;
    return x;
}

static void test_varint(void **state)
{
    (void)state;
    uint64_t vals[200];
    size_t nv = 0;
    for (unsigned k = 0; k < 64; k++) {
        vals[nv++] = (uint64_t)1 << k;
        vals[nv++] = ((uint64_t)1 << k) - 1;
        vals[nv++] = ((uint64_t)1 << k) | 0x5555555555555555ull >> (63 - k);
    }
    vals[nv++] = UINT64_MAX;
    vals[nv++] = 1234567890123ull;
    for (size_t i = 0; i < nv; i++) {
        for (int tail = 0; tail < 3; tail++) { /* nothing after; 0xff bytes; 0x00 bytes */
            pb b = {.n = 0};
            pb_raw(&b, vals[i]);
            size_t n = b.n;
            if (tail)
                for (int k = 0; k < 12; k++)
                    b.b[b.n++] = tail == 1 ? 0xff : 0x00;
            size_t rl;
            uint64_t want = varint_ref(b.b, &rl), got = 0;
            assert_int_equal(rl, n);
            assert_int_equal(want, vals[i]);
            const uint8_t *p = b.b;
            assert_true(ingest_pf_varint(&p, b.b + b.n, &got));
            assert_int_equal(got, want);
            assert_int_equal(p - b.b, n);
        }
    }
    /* cut short, with and without room for the wide read */
    unsigned char cut[16];
    memset(cut, 0x80, sizeof cut);
    const uint8_t *p = cut;
    uint64_t v;
    assert_false(ingest_pf_varint(&p, cut + 5, &v));
    assert_false(ingest_pf_varint(&p, cut + 16, &v)); /* eleven continuation bytes */
    assert_ptr_equal(p, cut);
    cut[9] = 0x01; /* ten bytes: the bits past 64 dropped, as protobuf-c does */
    assert_true(ingest_pf_varint(&p, cut + 16, &v));
    assert_int_equal(v, (uint64_t)1 << 63);
    assert_int_equal(p - cut, 10);
}

/* ingest_pf_short_varint (tags and lengths): every value below 2^28
 * written in each width from its own to 4 bytes (padded, as Perfetto
 * writes a nested message's length), with bytes after it and without
 * (the byte-wise path), gives the value and the width; 5 bytes, or cut
 * short, are refused. */
static void test_short_varint(void **state)
{
    (void)state;
    const uint32_t vals[] = {0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 0x1fffff, 0x200000, 0xfffffff, 0x5a5a5a5, 0x1234567};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        int own = 1;
        while (own < 4 && vals[i] >> (7 * own))
            own++;
        for (int w = own; w <= 4; w++)
            for (int tail = 0; tail < 3; tail++) {
                unsigned char b[16];
                memset(b, tail == 1 ? 0xff : 0, sizeof b);
                for (int k = 0; k < w; k++)
                    b[k] = (unsigned char)(((vals[i] >> (7 * k)) & 0x7f) | (k < w - 1 ? 0x80 : 0));
                const uint8_t *p = b;
                uint32_t v = 0;
                assert_true(ingest_pf_short_varint(&p, b + (tail ? sizeof b : (size_t)w), &v));
                assert_int_equal(v, vals[i]);
                assert_int_equal(p - b, w);
            }
    }
    const unsigned char five[8] = {0x81, 0x80, 0x80, 0x80, 0x00, 0, 0, 0};
    const uint8_t *p = five;
    uint32_t v;
    assert_false(ingest_pf_short_varint(&p, five + 8, &v));
    assert_false(ingest_pf_short_varint(&p, five + 5, &v));
    assert_false(ingest_pf_short_varint(&p, five + 3, &v)); /* cut */
    assert_ptr_equal(p, five);
}

/* The hand decoder copies a string of up to 16 bytes as a few moves:
 * comms of every length from 0 to 40 come out whole (next_comm=). */
/* Comms of every length to 40 in each field the mapping takes with its
 * length (ftrace_switch_vals, ftrace_wake_vals; measured as the names
 * are given): a switch's next_comm and prev_comm (empty: `<...>`) and a
 * waking's comm, each written whole. */
static void test_comm_lengths(void **state)
{
    (void)state;
    const char abc[] = "abcdefghijklmnopqrstuvwxyz0123456789ABCD";
    pb t = {.n = 0}, b = {.n = 0};
    pb_u(&b, 1, 0);
    for (uint32_t n = 0; n <= 40; n++) {
        char comm[48];
        memcpy(comm, abc, n);
        comm[n] = '\0';
        put_switch(&b, 1000 + 3 * n, "p", 5, 1, comm, 100 + n);
        put_switch(&b, 1001 + 3 * n, comm, 300 + n, 1, "q", 6);
        put_waking(&b, 1002 + 3 * n, 6, comm, 500 + n, 0);
    }
    put_bundle(&t, &b);
    rec *r = read_pb(&t, 0, NULL, 0);
    assert_int_equal(r->nev, 3 * 41);
    for (uint32_t n = 0; n <= 40; n++) {
        char comm[48];
        memcpy(comm, abc, n);
        comm[n] = '\0';
        assert_attr(&r->ev[3 * n], "next_comm", comm);
        assert_attr(&r->ev[3 * n + 1], "prev_comm", n ? comm : "<...>");
        assert_attr(&r->ev[3 * n + 2], "comm", comm);
    }
    rec_free(r);
}

/* ingest_pf_arena_strlen of arena strings of 0 to 40 bytes, each block
 * filled with non-NUL bytes before the string and its NUL are written
 * (what follows the NUL is not zero, as in a reused chunk), is strlen's;
 * and each block is 16-aligned, as its 16-byte read takes it to be. */
static void test_arena_strlen(void **state)
{
    (void)state;
    pf_reader d;
    memset(&d, 0, sizeof d);
    pf_hold h = {.d = &d, .hint = 64, .refs = 1};
    for (size_t n = 0; n <= 40; n++) {
        char *s = ingest_pf_alloc(&h, n + 1);
        assert_non_null(s);
        assert_int_equal((uintptr_t)s % 16, 0);
        memset(s, 'x', (n + 1 + 15) & ~(size_t)15);
        for (size_t i = 0; i < n; i++)
            s[i] = (char)('a' + i % 26);
        s[n] = '\0';
        assert_int_equal(ingest_pf_arena_strlen(s), n);
    }
    while (h.chunks) {
        pf_chunk *c = h.chunks;
        h.chunks = c->next;
        free(c);
    }
}

/* Prios of every width as text, as printf's %lld gives them: a switch's
 * prev_prio and next_prio and a waking's prio (three digits and fewer
 * are written inline, ftrace_sched.c fmt_prio; the rest by
 * base_fmt_i64) */
static void test_prio_text(void **state)
{
    (void)state;
    const int64_t prios[] = {0, 1, 9, 10, 11, 99, 100, 101, 120, 139, 990, 999, 1000, 1001, 65535, -1, -120, INT32_MAX, INT32_MIN};
    const size_t n = sizeof prios / sizeof prios[0];
    pb t = {.n = 0}, b = {.n = 0};
    pb_u(&b, 1, 0);
    for (size_t i = 0; i < n; i++) {
        pb s = {.n = 0};
        pb_s(&s, 1, "p");
        pb_u(&s, 2, 5);
        pb_i(&s, 3, prios[i]);
        pb_u(&s, 4, 1);
        pb_s(&s, 5, "q");
        pb_u(&s, 6, 6);
        pb_i(&s, 7, prios[n - 1 - i]);
        put_event(&b, 1000 + 2 * i, 5, 4, &s);
        pb w = {.n = 0};
        pb_s(&w, 1, "q");
        pb_u(&w, 2, 6);
        pb_i(&w, 3, prios[i]);
        pb_u(&w, 4, 1);
        pb_u(&w, 5, 0);
        put_event(&b, 1001 + 2 * i, 5, 20, &w);
    }
    put_bundle(&t, &b);
    rec *r = read_pb(&t, 0, NULL, 0);
    assert_int_equal(r->nev, 2 * n);
    for (size_t i = 0; i < n; i++) {
        char want[24], back[24];
        snprintf(want, sizeof want, "%lld", (long long)prios[i]);
        snprintf(back, sizeof back, "%lld", (long long)prios[n - 1 - i]);
        assert_attr(&r->ev[2 * i], "prev_prio", want);
        assert_attr(&r->ev[2 * i], "next_prio", back);
        assert_attr(&r->ev[2 * i + 1], "prio", want);
    }
    rec_free(r);
}

/* ---- the hand decoder alone: its structs, packed again by protobuf-c,
 * are the bytes protobuf-c's own unpack of the packet packs to ---- */

/* field f of message m, its length written in width bytes (a padded
 * varint, as Perfetto's writer leaves a nested message's length) */
static void pb_pad(pb *p, unsigned f, const pb *m, int width)
{
    pb_raw(p, (uint64_t)f << 3 | 2);
    for (int i = 0; i < width; i++)
        p->b[p->n++] = (unsigned char)(((m->n >> (7 * i)) & 0x7f) | (i < width - 1 ? 0x80 : 0));
    memcpy(p->b + p->n, m->b, m->n);
    p->n += m->n;
}

static void pack_same(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
    size_t na = protobuf_c_message_get_packed_size(a), nb = protobuf_c_message_get_packed_size(b);
    assert_int_equal(na, nb);
    uint8_t *ba = malloc(na + 1), *bb = malloc(nb + 1);
    assert_int_equal(protobuf_c_message_pack(a, ba), na);
    assert_int_equal(protobuf_c_message_pack(b, bb), nb);
    assert_memory_equal(ba, bb, na);
    free(ba);
    free(bb);
}

/* The hand decoder's answer for TracePacket pkt (1: read by hand, 0:
 * left to protobuf-c); when 1, its bundle is protobuf-c's. */
static int fast_vs_protobuf_c(const pb *pkt)
{
    pf_reader d;
    memset(&d, 0, sizeof d);
    char err[256];
    d.fr.err = err;
    d.fr.errlen = sizeof err;
    assert_int_equal(ingest_pf_fast_init(&d), 0);
    pf_hold h = {.d = &d, .hint = 1024, .refs = 1};
    pf_fast f;
    int rc = ingest_pf_fast_packet(&d, &h, pkt->b, pkt->n, &f);
    if (rc == 1) {
        ArgusqPf__TracePacket *ref = argusq_pf__trace_packet__unpack(NULL, pkt->n, pkt->b);
        assert_non_null(ref);
        assert_non_null(f.bundle);
        assert_non_null(ref->ftrace_events);
        pack_same(&f.bundle->base, &ref->ftrace_events->base);
        /* and each event message's type: sched_waking's bytes pack as
         * sched_wakeup's, so packing alone would not tell */
        assert_int_equal(f.bundle->n_event, ref->ftrace_events->n_event);
        for (size_t i = 0; i < f.bundle->n_event; i++) {
            const ArgusqPf__FtraceEvent *a = f.bundle->event[i], *b = ref->ftrace_events->event[i];
            assert_int_equal(a->event_case, b->event_case);
            /* the oneof's members are all message pointers, in one union */
            const ProtobufCMessage *ma = (const ProtobufCMessage *)a->sched_switch,
                                   *mb = (const ProtobufCMessage *)b->sched_switch;
            if (a->event_case != ARGUSQ_PF__FTRACE_EVENT__EVENT__NOT_SET)
                assert_ptr_equal(ma->descriptor, mb->descriptor);
        }
        argusq_pf__trace_packet__free_unpacked(ref, NULL);
    }
    while (h.chunks) {
        pf_chunk *c = h.chunks;
        h.chunks = c->next;
        free(c);
    }
    free(d.fast_ev);
    ingest_pf_fast_free(&d);
    return rc;
}

/* FtraceEvent {timestamp, pid, common_flags, field = msg (its length in width bytes)} */
static void put_event_w(pb *bundle, uint64_t ts, uint32_t pid, unsigned field, const pb *msg, int width)
{
    pb e = {.n = 0};
    pb_u(&e, 1, ts);
    pb_u(&e, 2, pid);
    pb_u(&e, 5, 0x10);
    pb_pad(&e, field, msg, width);
    pb_m(bundle, 2, &e);
}

static void test_fast_decoder(void **state)
{
    (void)state;
    /* every length of a nested message from 1 to 4 bytes, padded or not,
     * the commonest messages, values of every size up to a message's
     * last byte (the word-wide reads past it; values of two and three
     * bytes, read byte by byte, with two, three and more bytes of the
     * message left: a switch's prev_pid and its next_pid, the last),
     * comms of 0 to 20 bytes */
    pb bu = {.n = 0};
    pb_u(&bu, 1, 3);
    for (int w = 1; w <= 4; w++)
        for (unsigned k = 0; k <= 20; k++) {
            char comm[24];
            memset(comm, 'a' + (char)w, k);
            comm[k] = '\0';
            uint64_t big = ((uint64_t)1 << (3 * k)) - 1;
            pb s = {.n = 0}, wk = {.n = 0}, idle = {.n = 0};
            pb_s(&s, 1, comm);
            pb_u(&s, 2, big & 0xffffffff);
            pb_u(&s, 3, 120);
            pb_u(&s, 4, big);
            pb_s(&s, 5, comm);
            pb_i(&s, 6, -(int64_t)k);
            pb_u(&s, 7, big);
            put_event_w(&bu, 1000 + k, 10 + k, 4, &s, w);
            pb_s(&wk, 1, comm);
            pb_u(&wk, 2, big);
            pb_u(&wk, 5, k);
            put_event_w(&bu, 2000 + k, 10 + k, k & 1 ? 20 : 17, &wk, w);
            pb_u(&idle, 1, 0xffffffffu);
            pb_u(&idle, 2, big);
            put_event_w(&bu, 3000 + k, 0, 13, &idle, w);
        }
    pb pkt = {.n = 0};
    pb_m(&pkt, 1, &bu);
    assert_int_equal(fast_vs_protobuf_c(&pkt), 1);

    /* fields FtraceEvent does not declare, of each wire type, kept as
     * protobuf-c keeps them (an event the subset leaves out); five in one
     * event: protobuf-c reads that event */
    pb b2 = {.n = 0}, rss = {.n = 0}, e = {.n = 0};
    pb_u(&rss, 1, 5);
    pb_u(&rss, 2, 123456789);
    for (int n = 1; n <= 5; n++) {
        e.n = 0;
        pb_u(&e, 1, 4000 + (uint64_t)n);
        pb_u(&e, 2, 7);
        pb_pad(&e, 313, &rss, 4);
        if (n >= 2)
            pb_u(&e, 400, 99999); /* varint */
        if (n >= 3) {
            pb_raw(&e, 401 << 3 | 5); /* fixed32 */
            memcpy(e.b + e.n, "\1\2\3\4", 4);
            e.n += 4;
        }
        if (n >= 4) {
            pb_raw(&e, 402 << 3 | 1); /* fixed64 */
            memcpy(e.b + e.n, "\1\2\3\4\5\6\7\10", 8);
            e.n += 8;
        }
        if (n >= 5)
            pb_m(&e, 100000, &rss); /* past the decoder's table */
        pb_m(&b2, 2, &e);
    }
    pkt.n = 0;
    pb_m(&pkt, 1, &b2);
    assert_int_equal(fast_vs_protobuf_c(&pkt), 1);

    /* a length in 5 bytes: protobuf-c reads that event; a declared field
     * of another wire type, a value running past its message's end (but
     * not the packet's): protobuf-c refuses the event, so the packet is
     * left to it */
    pb b3 = {.n = 0}, idle = {.n = 0};
    pb_u(&idle, 1, 1);
    put_event_w(&b3, 5000, 0, 13, &idle, 5);
    pkt.n = 0;
    pb_m(&pkt, 1, &b3);
    assert_int_equal(fast_vs_protobuf_c(&pkt), 1);
    b3.n = 0;
    e.n = 0;
    pb_u(&e, 1, 5000);
    pb_s(&e, 13, "x"); /* cpu_idle as a string */
    pb_m(&b3, 2, &e);
    pkt.n = 0;
    pb_m(&pkt, 1, &b3);
    assert_int_equal(fast_vs_protobuf_c(&pkt), 0);
    b3.n = 0;
    idle.n = 0;
    pb_u(&idle, 1, 1);
    pb_raw(&idle, 2 << 3);
    idle.b[idle.n++] = 0x81; /* cpu_id's varint goes on past the message */
    put_event_w(&b3, 5000, 0, 13, &idle, 1);
    pb_u(&b3, 1, 0x7f); /* the bundle's cpu: the bytes after it */
    pkt.n = 0;
    pb_m(&pkt, 1, &b3);
    assert_int_equal(fast_vs_protobuf_c(&pkt), 0);

    /* timestamp and pid, read ahead of the table: given again (the later
     * counts), in the other order, a pid past 32 bits (its low 32); a
     * timestamp running past its event's end: protobuf-c's */
    pb b4 = {.n = 0}, id = {.n = 0};
    pb_u(&id, 1, 2);
    e.n = 0;
    pb_u(&e, 1, 6000);
    pb_u(&e, 2, 0x1234567890ull);
    pb_u(&e, 1, 6001);
    pb_u(&e, 2, 9);
    pb_pad(&e, 13, &id, 1);
    pb_m(&b4, 2, &e);
    e.n = 0;
    pb_u(&e, 2, 8);
    pb_u(&e, 1, 6002);
    pb_pad(&e, 13, &id, 1);
    pb_m(&b4, 2, &e);
    e.n = 0;
    pb_u(&e, 1, 6003);
    pb_u(&e, 2, 0x1234567890ull);
    pb_m(&b4, 2, &e);
    pkt.n = 0;
    pb_m(&pkt, 1, &b4);
    assert_int_equal(fast_vs_protobuf_c(&pkt), 1);
    b4.n = 0;
    e.n = 0;
    pb_raw(&e, 1 << 3);
    e.b[e.n++] = 0x81;
    pb_m(&b4, 2, &e);
    pb_u(&b4, 1, 0x7f);
    pkt.n = 0;
    pb_m(&pkt, 1, &b4);
    assert_int_equal(fast_vs_protobuf_c(&pkt), 0);
}

/* compact_sched by the hand decoder: packed numbers of every size (a
 * negative int32 in 10 bytes, a uint64 in 10), more than 8 of them (the
 * count 8 bytes at a time), an empty array, the intern table; a field
 * given twice, or a number not packed: protobuf-c reads it (and agrees);
 * a packed field whose last varint is cut: refused by both */
/* An event message of the fields in order[] (0 ends it; strs: a mask of
 * the string fields), each number a value of its own (a field given again has
 * another): field of FtraceEvent (4 sched_switch, 20 sched_waking, 13
 * cpu_idle) in a packet, with the bundle's cpu after the event, so its
 * bytes are not the packet's last.  A string field -1 adds next_comm
 * again, cut: a length past the message. */
static void plan_packet(pb *pkt, unsigned field, const int *order, unsigned strs)
{
    pb m = {.n = 0}, bu = {.n = 0};
    for (int i = 0; order[i]; i++) {
        int f = order[i];
        if (f == -1) {
            pb_raw(&m, 5 << 3 | 2);
            m.b[m.n++] = 9;
            m.b[m.n++] = 'x';
        } else if (strs >> f & 1) {
            pb_s(&m, (unsigned)f, f == 1 ? "prev-task-name" : "next");
        } else if (f == 2 && i > 0) {
            pb_i(&m, 2, -5 - i); /* negative: ten bytes */
        } else {
            pb_u(&m, (unsigned)f, 100u * (unsigned)f + 10u * (unsigned)i);
        }
    }
    put_event_w(&bu, 1000, 5, field, &m, 1);
    pb_u(&bu, 1, 2);
    pkt->n = 0;
    pb_m(pkt, 1, &bu);
}

/* The fields of the messages read by a plan (perfetto_fast.c in_order:
 * a switch's, a wakeup's, a cpu_idle's, in Perfetto's order; the first
 * out of place and the rest are the table's) in other orders: reversed,
 * one missing, one given again after the rest or at once (the later
 * counts), none, a cut string, a number as a string; each as protobuf-c
 * unpacks it */
static void test_fast_plan_order(void **state)
{
    (void)state;
    static const int sw[][10] = {
        {1, 2, 3, 4, 5, 6, 7},    {7, 6, 5, 4, 3, 2, 1},    {1, 2, 4, 5, 6, 7}, {1, 2, 3, 4, 5, 6, 7, 2},
        {2, 1, 3, 4, 5, 6, 7},    {0},                      {1, 5},             {1, 2, 3, 4, 6, 7, 5},
        {1, 2, 3, 4, 5, 6, 6, 7}, {1, 2, 3, 4, 5, 6, 7, 7}, {1, 2, 3, 3, 4},
    };
    static const int wk[][10] = {
        {1, 2, 3, 4, 5}, {5, 4, 3, 2, 1}, {1, 3, 4, 5}, {1, 2, 3, 4, 5, 2}, {1, 2, 2, 3, 4, 5}, {0}, {2, 3, 4, 5}, {1, 2, 3, 5, 4},
    };
    static const int idle[][10] = {{1, 2}, {2, 1}, {1, 1, 2}, {1, 2, 2}, {2}, {1}, {0}, {1, 2, 1}};
    pb pkt = {.n = 0};
    for (size_t c = 0; c < sizeof sw / sizeof sw[0]; c++) {
        plan_packet(&pkt, 4, sw[c], 1u << 1 | 1u << 5);
        if (fast_vs_protobuf_c(&pkt) != 1)
            fail_msg("switch, order %zu", c);
    }
    static const int cut[] = {1, 2, 3, 4, 5, 6, -1, 0};
    plan_packet(&pkt, 4, cut, 1u << 1 | 1u << 5);
    assert_int_equal(fast_vs_protobuf_c(&pkt), 0);
    static const int wrong[] = {1, 2, 3, 0}; /* prev_pid a string: refused, by protobuf-c too */
    plan_packet(&pkt, 4, wrong, 1u << 1 | 1u << 2);
    assert_int_equal(fast_vs_protobuf_c(&pkt), 0);
    for (size_t c = 0; c < sizeof wk / sizeof wk[0]; c++) {
        plan_packet(&pkt, 20, wk[c], 1u << 1);
        if (fast_vs_protobuf_c(&pkt) != 1)
            fail_msg("sched_waking, order %zu", c);
        plan_packet(&pkt, 17, wk[c], 1u << 1); /* sched_wakeup */
        if (fast_vs_protobuf_c(&pkt) != 1)
            fail_msg("sched_wakeup, order %zu", c);
    }
    for (size_t c = 0; c < sizeof idle / sizeof idle[0]; c++) {
        plan_packet(&pkt, 13, idle[c], 0);
        if (fast_vs_protobuf_c(&pkt) != 1)
            fail_msg("cpu_idle, order %zu", c);
    }
}

static void test_fast_compact(void **state)
{
    (void)state;
    uint64_t vals[40];
    for (int i = 0; i < 40; i++)
        vals[i] = ((uint64_t)1 << (i * 64 / 40)) + (uint64_t)i;
    vals[3] = (uint64_t)(int64_t)-5;
    vals[7] = UINT64_MAX;
    for (int variant = 0; variant < 4; variant++) {
        pb cs = {.n = 0}, b = {.n = 0}, pkt = {.n = 0};
        pb_s(&cs, 5, "swapper/0");
        pb_s(&cs, 5, "");
        pb_s(&cs, 5, "a much longer comm than sixteen");
        pb_packed(&cs, 1, vals, 40);                /* uint64 */
        pb_packed(&cs, 2, vals + 1, 39);            /* int64 */
        pb_packed(&cs, 3, vals, 17);                /* int32 */
        pb_packed(&cs, 4, vals + 20, 9);            /* int32 */
        pb_packed(&cs, 6, vals, 0);                 /* uint32, empty */
        pb_packed(&cs, 12, vals + 2, 1);            /* uint32 */
        if (variant == 1)
            pb_packed(&cs, 3, vals, 3); /* twice: joined */
        if (variant == 2)
            pb_u(&cs, 8, 42); /* waking_pid, not packed */
        if (variant == 3) {
            pb_raw(&cs, 9 << 3 | 2);
            pb_raw(&cs, 2);
            cs.b[cs.n++] = 0x01;
            cs.b[cs.n++] = 0x81; /* cut */
        }
        pb_u(&b, 1, 2);
        pb_m(&b, 4, &cs);
        pb_m(&pkt, 1, &b);
        assert_int_equal(fast_vs_protobuf_c(&pkt), variant == 3 ? 0 : 1);
    }
}

/* ---- corrupt input ---- */

static void test_bad_varint(void **state)
{
    (void)state;
    pb t = {.n = 0};
    sched_full(&t);
    size_t at = t.n;
    t.b[t.n++] = 0x0a; /* a packet's tag, then a length of 11 continuation bytes */
    memset(t.b + t.n, 0xff, 11);
    t.n += 11;
    char err[512], want[64];
    rec *r = read_pb(&t, -1, err, sizeof err);
    snprintf(want, sizeof want, "t.pftrace: byte %zu: ", at + 1); /* the varint's own offset */
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "bad varint"));
    rec_free(r);
    /* inside a packet: a bundle's event whose length runs past the packet */
    pb bad = {.n = 0};
    sched_head(&bad);
    at = bad.n;
    const unsigned char pkt[] = {0x0a, 0x04, 0x0a, 0x02, 0x12, 0x10};
    memcpy(bad.b + bad.n, pkt, sizeof pkt);
    bad.n += sizeof pkt;
    r = read_pb(&bad, -1, err, sizeof err);
    snprintf(want, sizeof want, "t.pftrace: byte %zu: packet 2: corrupt", at);
    assert_non_null(strstr(err, want));
    rec_free(r);
}

static void test_length_past_end(void **state)
{
    (void)state;
    pb t = {.n = 0};
    sched_full(&t);
    size_t at = t.n;
    const unsigned char cut[] = {0x0a, 0x20, 0x08, 0x01, 0x08};
    memcpy(t.b + t.n, cut, sizeof cut);
    t.n += sizeof cut;
    char err[512], want[64];
    rec *r = read_pb(&t, -1, err, sizeof err);
    snprintf(want, sizeof want, "t.pftrace: byte %zu: ", at);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "a length of 32 bytes runs past the end of the file"));
    rec_free(r);
}

static void test_detect(void **state)
{
    (void)state;
    pb t = {.n = 0};
    sched_full(&t);
    assert_int_equal(ingest_detect((const char *)t.b, t.n), INGEST_PERFETTO);
    const char *text = "\n# tracer: nop\n#\n  bash-1 [000] .... 1.000001: sched_waking: comm=a pid=2 prio=1\n";
    assert_int_not_equal(ingest_detect(text, strlen(text)), INGEST_PERFETTO);
}

/* The arena's chunk sizes: each at least what was asked and at most a
 * quarter more (past the smallest), one size a class, a chunk's own size
 * in its class (so a chunk freed is found again by its class), and the
 * classes in the order of the sizes. */
static void test_chunk_classes(void **state)
{
    (void)state;
    unsigned last = 0;
    size_t last_cap = 0;
    for (size_t want = 1; want <= ((size_t)5 << 20); want += want < 20000 ? 1 : want / 97) {
        unsigned cls, cls2;
        size_t cap = ingest_pf_chunk_class(want, &cls);
        assert_true(cap >= want);
        assert_true(cap <= 4096 || cap <= want + want / 4);
        assert_int_equal(ingest_pf_chunk_class(cap, &cls2), cap);
        assert_int_equal(cls2, cls);
        assert_true(cls >= last);
        if (cls == last)
            assert_true(last_cap == 0 || cap == last_cap);
        else
            assert_true(cap > last_cap);
        if (cap <= ((size_t)4 << 20))
            assert_true(cls < PF_POOL_CLASSES);
        else
            assert_true(cls >= PF_POOL_CLASSES);
        last = cls;
        last_cap = cap;
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_switch), cmocka_unit_test(test_compact_is_full),
        cmocka_unit_test(test_binder), cmocka_unit_test(test_tgids_kept),      cmocka_unit_test(test_idle_states),      cmocka_unit_test(test_print_slices),
        cmocka_unit_test(test_bad_varint),  cmocka_unit_test(test_length_past_end),
        cmocka_unit_test(test_detect),      cmocka_unit_test(test_merge_order),
        cmocka_unit_test(test_merge_many), cmocka_unit_test(test_merge_long), cmocka_unit_test(test_merge_reuse),
        cmocka_unit_test(test_same_as_text),  cmocka_unit_test(test_compact_first_prev_named), cmocka_unit_test(test_compact_prev_after_full),
        cmocka_unit_test(test_hand_decoder_agrees), cmocka_unit_test(test_blocked_reason), cmocka_unit_test(test_blocked_first_reason),
        cmocka_unit_test(test_blocked_model),
        cmocka_unit_test(test_varint), cmocka_unit_test(test_comm_lengths), cmocka_unit_test(test_arena_strlen), cmocka_unit_test(test_compact_prev_lengths), cmocka_unit_test(test_prio_text),
        cmocka_unit_test(test_fast_decoder), cmocka_unit_test(test_short_varint),
        cmocka_unit_test(test_fast_compact), cmocka_unit_test(test_fast_plan_order), cmocka_unit_test(test_chunk_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
