/* tests/unit/test_perfetto_other.c -- the FtraceEvents the schema subset
 * leaves out (ingest/perfetto_other.c): sub-messages written here byte by
 * byte, with the field numbers of Perfetto's published schema, decoded
 * to their pairs (an unsigned, a negative int32, a string, fields and
 * events the table does not name, generic, fixed-size values), corrupt
 * ones refused with where they break, and one such event read from a
 * whole trace in memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "db/db.h"
#include "ingest/ftrace.h"
#include "ingest/ingest.h"
#include "ingest/perfetto.h"
#include "ingest/perfetto_int.h"
#include "ingest/perfetto_other.h"

#include "ftrace_rec.h"

/* a reader with no file: only its pairs and obuf are used */
static pf_reader *reader(void)
{
    pf_reader *d = calloc(1, sizeof *d);
    assert_non_null(d);
    d->fr.nkv = 0;
    return d;
}

static int decode(pf_reader *d, uint32_t field, const unsigned char *m, size_t n, const char **name,
                  pf_other_fault *f)
{
    d->fr.nkv = 0;
    return ingest_pf_other_pairs(d, field, m, n, name, f);
}

/* pair i is key=want */
static void pair(const pf_reader *d, int i, const char *key, const char *want)
{
    assert_true(i < d->fr.nkv);
    const ftrace_kv *kv = &d->fr.kv[i];
    char k[64], v[256];
    snprintf(k, sizeof k, "%.*s", (int)kv->klen, kv->key);
    snprintf(v, sizeof v, "%.*s", (int)kv->vlen, kv->val);
    assert_string_equal(k, key);
    assert_string_equal(v, want);
}

static void test_table_sorted(void **state)
{
    (void)state;
    for (size_t i = 1; i < pfo_nevents; i++)
        assert_true(pfo_events[i - 1].num < pfo_events[i].num);
    for (size_t i = 0; i < pfo_nevents; i++)
        for (size_t j = 1; j < pfo_events[i].nfields; j++)
            assert_true(pfo_events[i].fields[j - 1].num < pfo_events[i].fields[j].num);
}

/* ClockSetRateFtraceEvent (field 16): name 1, state 2 (uint64), cpu_id 3 */
static void test_unsigned_and_string(void **state)
{
    (void)state;
    pf_reader *d = reader();
    const unsigned char m[] = {0x0a, 0x04, 'm', 'i', 'f', '\n', /* name "mif\n" */
                               0x10, 0xc0, 0x9a, 0x0c,          /* state 200000 */
                               0x18, 0x03};                     /* cpu_id 3 */
    const char *name = NULL;
    pf_other_fault f;
    assert_int_equal(decode(d, 16, m, sizeof m, &name, &f), 0);
    assert_string_equal(name, "clock_set_rate");
    assert_int_equal(d->fr.nkv, 3);
    pair(d, 0, "name", "mif"); /* without its newline */
    pair(d, 1, "state", "200000");
    pair(d, 2, "cpu_id", "3");
    free(d);
}

/* OomScoreAdjUpdateFtraceEvent (field 326): comm 1, oom_score_adj 2
 * (int32: -1000 as ten bytes, two's complement, not zigzag), pid 3; and
 * RssStatFtraceEvent (313) with a negative int64 size and a uint32 mm_id
 * of all ones */
static void test_negative(void **state)
{
    (void)state;
    pf_reader *d = reader();
    const unsigned char m[] = {0x0a, 0x02, 'l', 'm',
                               0x10, 0x98, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
                               0x18, 0x07};
    const char *name = NULL;
    pf_other_fault f;
    assert_int_equal(decode(d, 326, m, sizeof m, &name, &f), 0);
    assert_string_equal(name, "oom_score_adj_update");
    pair(d, 0, "comm", "lm");
    pair(d, 1, "oom_score_adj", "-1000");
    pair(d, 2, "pid", "7");
    const unsigned char r[] = {0x08, 0x01,                                                       /* member 1 */
                               0x10, 0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* size -5 */
                               0x18, 0x01,                                                       /* curr 1 */
                               0x20, 0xff, 0xff, 0xff, 0xff, 0x0f};                              /* mm_id */
    assert_int_equal(decode(d, 313, r, sizeof r, &name, &f), 0);
    assert_string_equal(name, "rss_stat");
    pair(d, 0, "member", "1");
    pair(d, 1, "size", "-5");
    pair(d, 2, "curr", "1");
    pair(d, 3, "mm_id", "4294967295");
    free(d);
}

/* fields and events the table does not name: fN=, ftrace_event_N */
static void test_unknown(void **state)
{
    (void)state;
    pf_reader *d = reader();
    const unsigned char m[] = {0x0a, 0x01, 'x',                   /* name */
                               0x48, 0x07,                        /* field 9 varint 7 */
                               0x55, 0x01, 0x00, 0x00, 0x80,      /* field 10 fixed32 */
                               0x59, 1, 2, 0, 0, 0, 0, 0, 0,      /* field 11 fixed64 513 */
                               0x62, 0x03, 'a', 'b', 'c',         /* field 12 text */
                               0x6a, 0x02, 0x01, 0xff};           /* field 13 bytes */
    const char *name = NULL;
    pf_other_fault f;
    assert_int_equal(decode(d, 320, m, sizeof m, &name, &f), 0);
    assert_string_equal(name, "clk_enable");
    assert_int_equal(d->fr.nkv, 6);
    pair(d, 0, "name", "x");
    pair(d, 1, "f9", "7");
    pair(d, 2, "f10", "2147483649");
    pair(d, 3, "f11", "513");
    pair(d, 4, "f12", "abc");
    pair(d, 5, "f13", "0x01ff"); /* not text: hex */
    free(d);
    d = reader();
    const unsigned char b[] = {0x6a, 0x02, 0x01, 0xff, 0x08, 0x2a};
    assert_int_equal(decode(d, 999, b, sizeof b, &name, &f), 0);
    assert_string_equal(name, "ftrace_event_999");
    assert_int_equal(d->fr.nkv, 2);
    pair(d, 0, "f13", "0x01ff");
    pair(d, 1, "f1", "42");
    free(d);
}

/* GenericFtraceEvent (327): event_name 1, field 2 = {name 1, str_value 3 |
 * int_value 4 | uint_value 5} */
static void test_generic(void **state)
{
    (void)state;
    pf_reader *d = reader();
    const unsigned char m[] = {
        0x0a, 0x0e, 'm', 'a', 'l', 'i', '_', 'p', 'm', '_', 's', 't', 'a', 't', 'u', 's',
        0x12, 0x0a, 0x0a, 0x06, 'g', 'p', 'u', '_', 'i', 'd', 0x28, 0x00,            /* uint 0 */
        0x12, 0x12, 0x0a, 0x05, 'd', 'e', 'l', 't', 'a',                             /* int -5 */
        0x20, 0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        0x12, 0x09, 0x0a, 0x01, 's', 0x1a, 0x04, 'h', 'i', '!', '\n',                /* str */
    };
    const char *name = NULL;
    pf_other_fault f;
    assert_int_equal(decode(d, 327, m, sizeof m, &name, &f), 0);
    assert_string_equal(name, "mali_pm_status");
    assert_int_equal(d->fr.nkv, 3);
    pair(d, 0, "gpu_id", "0");
    pair(d, 1, "delta", "-5");
    pair(d, 2, "s", "hi!");
    /* no event_name: the event keeps the message's name */
    const unsigned char g[] = {0x12, 0x04, 0x0a, 0x02, 'o', 'k'};
    assert_int_equal(decode(d, 327, g, sizeof g, &name, &f), 0);
    assert_string_equal(name, "generic");
    pair(d, 0, "ok", "");
    free(d);
}

/* corrupt sub-messages: -1, and the byte where they break */
static void test_corrupt(void **state)
{
    (void)state;
    pf_reader *d = reader();
    const char *name = NULL;
    pf_other_fault f;
    /* a string's length past the end */
    const unsigned char cut[] = {0x18, 0x03, 0x0a, 0x09, 'a', 'b'};
    assert_int_equal(decode(d, 16, cut, sizeof cut, &name, &f), -1);
    assert_int_equal(f.at, 3);
    assert_string_equal(f.why, "a length past the end");
    /* a varint cut by the end */
    const unsigned char var[] = {0x08, 0x01, 0x10, 0xff, 0xff};
    assert_int_equal(decode(d, 313, var, sizeof var, &name, &f), -1);
    assert_int_equal(f.at, 3);
    assert_string_equal(f.why, "bad varint");
    /* a fixed64 cut by the end, a group's wire type, field number 0 */
    const unsigned char fix[] = {0x09, 1, 2, 3};
    assert_int_equal(decode(d, 313, fix, sizeof fix, &name, &f), -1);
    assert_int_equal(f.at, 1);
    const unsigned char grp[] = {0x08, 0x01, 0x0b};
    assert_int_equal(decode(d, 313, grp, sizeof grp, &name, &f), -1);
    assert_int_equal(f.at, 2);
    assert_string_equal(f.why, "bad wire type");
    const unsigned char zero[] = {0x00, 0x01};
    assert_int_equal(decode(d, 313, zero, sizeof zero, &name, &f), -1);
    /* inside a generic event's field */
    const unsigned char gen[] = {0x0a, 0x01, 'e', 0x12, 0x03, 0x0a, 0x05, 'x'};
    assert_int_equal(decode(d, 327, gen, sizeof gen, &name, &f), -1);
    assert_int_equal(f.at, 6);
    free(d);
}

/* more fields than the pairs hold: the first FTRACE_KV_MAX, nothing past obuf */
static void test_many_fields(void **state)
{
    (void)state;
    pf_reader *d = reader();
    unsigned char m[4096];
    size_t n = 0;
    for (int i = 0; i < 200; i++) { /* field 100+: a 2-byte tag, 17 bytes of hex each */
        m[n++] = (unsigned char)(0x80 | ((100 + i) << 3 | 2));
        m[n++] = (unsigned char)((100 + i) >> 4);
        m[n++] = 16;
        memset(m + n, 0x01, 16);
        n += 16;
    }
    const char *name = NULL;
    pf_other_fault f;
    assert_int_equal(decode(d, 16, m, n, &name, &f), 0);
    assert_int_equal(d->fr.nkv, FTRACE_KV_MAX);
    pair(d, 0, "f100", "0x01010101010101010101010101010101");
    free(d);
}

/* ---- through the reader: a trace in memory ---- */

typedef struct pb {
    unsigned char b[1024];
    size_t n;
} pb;

static void pb_raw(pb *p, uint64_t v)
{
    do {
        p->b[p->n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

static void pb_u(pb *p, unsigned f, uint64_t v)
{
    pb_raw(p, (uint64_t)f << 3);
    pb_raw(p, v);
}

static void pb_bytes(pb *p, unsigned f, const void *d, size_t n)
{
    pb_raw(p, (uint64_t)f << 3 | 2);
    pb_raw(p, n);
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

/* Trace { packet { ftrace_events { cpu 0, event { timestamp, pid 5,
 * FIELD = sub } } } } */
static void put(pb *trace, uint64_t ts, unsigned field, const unsigned char *sub, size_t n)
{
    pb e = {.n = 0}, bundle = {.n = 0}, pkt = {.n = 0};
    pb_u(&e, 1, ts);
    pb_u(&e, 2, 5);
    pb_bytes(&e, field, sub, n);
    pb_u(&bundle, 1, 0);
    pb_bytes(&bundle, 2, e.b, e.n);
    pb_bytes(&pkt, 1, bundle.b, bundle.n);
    pb_bytes(trace, 1, pkt.b, pkt.n);
}

static void test_read(void **state)
{
    (void)state;
    const unsigned char csr[] = {0x0a, 0x03, 'm', 'i', 'f', 0x10, 0xc0, 0x9a, 0x0c, 0x18, 0x03};
    pb t = {.n = 0};
    put(&t, 1000, 16, csr, sizeof csr);
    rec *r = rec_new(true);
    ingest_sink s = {.ctx = r, .proc = on_proc, .thread = on_thread, .event = on_event, .skip = on_skip};
    ingest_stats st;
    memset(&st, 0, sizeof st);
    char err[512] = "";
    assert_int_equal(ingest_perfetto_read_mem("t.pftrace", t.b, t.n, &s, &st, err, sizeof err), 0);
    assert_int_equal(r->nev, 1);
    assert_string_equal(r->ev[0].name, "clock_set_rate");
    assert_int_equal(r->ev[0].ev.type, DB_EV_RAW);
    assert_attr(&r->ev[0], "name", "mif");
    assert_attr(&r->ev[0], "state", "200000");
    assert_attr(&r->ev[0], "cpu_id", "3");
    rec_free(r);
    /* a second packet whose rss_stat is cut inside: the file, the packet's
     * byte, the event and where in it */
    size_t at = t.n;
    const unsigned char bad[] = {0x08, 0x01, 0x10, 0xff};
    put(&t, 2000, 313, bad, sizeof bad);
    r = rec_new(true);
    s.ctx = r;
    assert_int_equal(ingest_perfetto_read_mem("t.pftrace", t.b, t.n, &s, &st, err, sizeof err), -1);
    char want[128];
    snprintf(want, sizeof want, "t.pftrace: byte %zu: packet 2: rss_stat (FtraceEvent field 313): bad varint at byte 3 of its 4",
             at);
    assert_string_equal(err, want);
    rec_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_sorted), cmocka_unit_test(test_unsigned_and_string),
        cmocka_unit_test(test_negative),     cmocka_unit_test(test_unknown),
        cmocka_unit_test(test_generic),      cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_many_fields),  cmocka_unit_test(test_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
