/* tests/unit/test_perfetto.c -- the Perfetto reader (ingest/perfetto/)
 * fed traces built here, field by field, with a small protobuf writer and
 * the field numbers of Perfetto's published schema: a full-form
 * sched_switch bundle, the same scheduling as a compact_sched bundle
 * (which must give exactly the same events and threads), binder
 * transactions with a reply, atrace prints, compressed_packets, and
 * corrupt input (a bad varint, a length past the end); the same db events
 * as the ftrace text of the same events, a compact switch's prev from its
 * CPU's state, prios as text.  The order events are handed on in:
 * test_perfetto_order.c; the hand decoder: test_perfetto_fast.c. */
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
#include "pf_read.h"

/* ---- a protobuf writer and its Perfetto messages: pb_build.h; a trace
 * read, sched_head and sched_full, assert_same: pf_read.h ---- */

static const rec_event *nth_named(const rec *r, const char *name, int n)
{
    for (size_t i = 0; i < r->nev; i++)
        if (strcmp(r->ev[i].name, name) == 0 && n-- == 0)
            return &r->ev[i];
    fail_msg("no event %s", name);
    return NULL;
}

/* ---- scheduling: the full form, and the compact form of the same ---- */

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

/* ---- a CPU's compact switches: the prev of each from the CPU's state ---- */

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

/* ---- prios as text ---- */

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_switch),
        cmocka_unit_test(test_compact_is_full),
        cmocka_unit_test(test_binder),
        cmocka_unit_test(test_tgids_kept),
        cmocka_unit_test(test_idle_states),
        cmocka_unit_test(test_print_slices),
        cmocka_unit_test(test_bad_varint),
        cmocka_unit_test(test_length_past_end),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_same_as_text),
        cmocka_unit_test(test_compact_first_prev_named),
        cmocka_unit_test(test_compact_prev_after_full),
        cmocka_unit_test(test_compact_prev_lengths),
        cmocka_unit_test(test_prio_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
