/* tests/unit/test_perfetto_fast.c -- the Perfetto reader's hand decoder
 * (ingest/perfetto/perfetto_fast.c) and its reads: traces built here
 * (pb_build.h, pf_read.h) written as protobuf allows but the hand decoder
 * does not take on, or takes on with protobuf's rules, read as protobuf-c
 * reads them; its structs, packed again by protobuf-c, the bytes of
 * protobuf-c's own unpack (messages of every length and order, unknown
 * fields, compact_sched); varints read a word at a time; comms of every
 * length; and the arena it allocates from (perfetto.c: a string's
 * length, the chunks' size classes). */
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

/* ---- the decoder's reads: varints, comms ---- */

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

/* The fields of the commonest messages (a switch's, a wakeup's, a
 * cpu_idle's) in Perfetto's order and in others: reversed,
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

/* ---- the arena ---- */

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
        cmocka_unit_test(test_hand_decoder_agrees),
        cmocka_unit_test(test_varint),
        cmocka_unit_test(test_comm_lengths),
        cmocka_unit_test(test_arena_strlen),
        cmocka_unit_test(test_fast_decoder),
        cmocka_unit_test(test_short_varint),
        cmocka_unit_test(test_fast_compact),
        cmocka_unit_test(test_fast_plan_order),
        cmocka_unit_test(test_chunk_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
