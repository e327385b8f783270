/* tests/unit/test_perfetto_other.c -- the FtraceEvents the schema subset
 * leaves out (ingest/perfetto/perfetto_other.c): sub-messages written here byte by
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
#include "ingest/ftrace/ftrace_map_int.h"
#include "ingest/ingest.h"
#include "ingest/perfetto/perfetto_int.h"
#include "ingest/perfetto/perfetto_other_int.h"

#include "ftrace_rec.h"
#include "pb_build.h"

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
    size_t name_len = SIZE_MAX;
    int rc = ingest_pf_other_pairs(d, field, m, n, name, &name_len, f);
    if (rc == 0) /* the name's length given with it */
        assert_int_equal(name_len, strlen(*name));
    return rc;
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
    /* its tracefs text, `%s state=%lu cpu_id=%lu`, starts without a key:
     * the text reader keeps it whole */
    assert_int_equal(d->fr.nkv, 1);
    pair(d, 0, "raw", "mif state=200000 cpu_id=3"); /* the name without its newline */
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
    pair(d, 0, "pid", "7"); /* `pid=%d comm=%s oom_score_adj=%hd` */
    pair(d, 1, "comm", "lm");
    pair(d, 2, "oom_score_adj", "-1000");
    const unsigned char r[] = {0x08, 0x01,                                                       /* member 1 */
                               0x10, 0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* size -5 */
                               0x18, 0x01,                                                       /* curr 1 */
                               0x20, 0xff, 0xff, 0xff, 0xff, 0x0f};                              /* mm_id */
    assert_int_equal(decode(d, 313, r, sizeof r, &name, &f), 0);
    assert_string_equal(name, "rss_stat");
    pair(d, 0, "mm_id", "4294967295"); /* `mm_id=%u curr=%d type=%s size=%ldB` */
    pair(d, 1, "curr", "1");
    pair(d, 2, "type", "MM_ANONPAGES");
    pair(d, 3, "size", "-5B");
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
    pair(d, 0, "raw", "x"); /* `%s`: its text, then the fields it does not show */
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

/* varints of every width, 1 to 10 bytes, as values first in the
 * message, after a tag of two bytes (field 200) and of three (20000),
 * and last (at the message's end, fewer than ten bytes left): each the
 * number written (the short ones are read byte by byte, small_varint) */
static void test_varint_widths(void **state)
{
    (void)state;
    for (int k = 1; k <= 10; k++) {
        uint64_t v = k == 10 ? UINT64_MAX : ((uint64_t)1 << (7 * k)) - 1;
        for (int low = 0; low < 2; low++) {
            if (low) /* the least of its width */
                v = k == 1 ? 0 : (uint64_t)1 << (7 * (k - 1));
            pb m = {.n = 0};
            pb_u(&m, 1, v);
            pb_u(&m, 200, v);
            pb_u(&m, 20000, v);
            pb_u(&m, 3, v);
            pf_reader *d = reader();
            const char *name = NULL;
            pf_other_fault f;
            assert_int_equal(decode(d, 999, m.b, m.n, &name, &f), 0);
            char want[24];
            snprintf(want, sizeof want, "%llu", (unsigned long long)v);
            assert_int_equal(d->fr.nkv, 4);
            pair(d, 0, "f1", want);
            pair(d, 1, "f200", want);
            pair(d, 2, "f20000", want);
            pair(d, 3, "f3", want);
            free(d);
        }
    }
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
    assert_attr(&r->ev[0], "raw", "mif state=200000 cpu_id=3");
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

/* ---- the same pairs as the tracefs text of the same event ---- */

/* the event into the trace, and the line tracefs prints for it into text */
static void both(pb *t, char *text, size_t cap, uint64_t ts, unsigned field, const pb *m, const char *name,
                 const char *fields)
{
    put(t, ts, field, m->b, m->n);
    size_t n = strlen(text);
    int w = snprintf(text + n, cap - n, "             app-5       [000] .....  0.%09llu: %s: %s\n",
                     (unsigned long long)ts, name, fields);
    assert_true(w > 0 && (size_t)w < cap - n);
}

static void show_attrs(char *out, size_t cap, const rec_event *e)
{
    size_t n = e->ev.attrs_len < cap - 1 ? e->ev.attrs_len : cap - 1;
    memcpy(out, e->attrs, n);
    out[n] = '\0';
    for (size_t i = 0; i < n; i++)
        out[i] = out[i] ? out[i] : '|';
}

/* The Perfetto trace t and the tracefs text give the same want events,
 * attribute for attribute. */
static void assert_same_as_text(const pb *t, const char *text, size_t want)
{
    rec *r = rec_new(true);
    ingest_sink s = {.ctx = r, .proc = on_proc, .thread = on_thread, .event = on_event, .skip = on_skip};
    ingest_stats st;
    memset(&st, 0, sizeof st);
    char err[512] = "";
    assert_int_equal(ingest_perfetto_read_mem("t.pftrace", t->b, t->n, &s, &st, err, sizeof err), 0);
    one o = ingest_text(text);
    assert_int_equal(r->nev, want);
    assert_int_equal(r->nev, o.r->nev);
    for (size_t i = 0; i < r->nev; i++) {
        const rec_event *a = &r->ev[i], *b = &o.r->ev[i];
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->ev.type, b->ev.type);
        assert_int_equal(a->ev.tid, b->ev.tid);
        assert_int_equal(a->ev.ts, b->ev.ts);
        if (a->ev.attrs_len != b->ev.attrs_len || memcmp(a->attrs, b->attrs, a->ev.attrs_len) != 0) {
            char x[1024], y[1024];
            show_attrs(x, sizeof x, a);
            show_attrs(y, sizeof y, b);
            fail_msg("%s: Perfetto '%s', text '%s'", a->name, x, y);
        }
    }
    rec_free(r);
    rec_free(o.r);
}

/* Events of the messages the schema subset leaves out, each built field
 * by field and written as the kernel prints it (the TP_printk of the
 * header perfetto_other_tab.c names for it; pointers unhashed, as with
 * no_hash_pointers, and kfree's call site one without a symbol, which %pS
 * prints as 0x...): the Perfetto reader and the text reader give the same
 * events, pair for pair. */
static void test_same_as_text(void **state)
{
    (void)state;
    pb t = {.n = 0}, m = {.n = 0};
    char text[8192] = "# tracer: nop\n";
    uint64_t ts = 1000;
#define NEXT(field, name, line)                                                                                      \
    do {                                                                                                             \
        both(&t, text, sizeof text, ts, field, &m, name, line);                                                      \
        ts += 1000;                                                                                                  \
        m.n = 0;                                                                                                     \
    } while (0)
    pb_i(&m, 1, 1); /* member: MM_ANONPAGES */
    pb_i(&m, 2, 532480);
    pb_u(&m, 3, 1);
    pb_u(&m, 4, 2396046776u);
    NEXT(313, "rss_stat", "mm_id=2396046776 curr=1 type=MM_ANONPAGES size=532480B");
    pb_i(&m, 1, 1858);
    pb_i(&m, 2, 11237);
    pb_u(&m, 3, 120);
    pb_u(&m, 4, 118);
    pb_u(&m, 5, 118);
    NEXT(52, "binder_set_priority", "proc=1858 thread=11237 old=120 => new=118 desired=118");
    /* a field given twice: its last value counts (protobuf), by a plan
     * (rss_stat) as by the text (binder_set_priority's `=>`) */
    pb_u(&m, 3, 0);
    pb_i(&m, 1, 1);
    pb_i(&m, 2, 4096);
    pb_u(&m, 3, 1);
    pb_u(&m, 4, 7);
    pb_i(&m, 2, 532480);
    NEXT(313, "rss_stat", "mm_id=7 curr=1 type=MM_ANONPAGES size=532480B");
    pb_i(&m, 1, 1858);
    pb_u(&m, 4, 100);
    pb_i(&m, 2, 11237);
    pb_u(&m, 3, 120);
    pb_u(&m, 4, 118);
    pb_u(&m, 5, 118);
    NEXT(52, "binder_set_priority", "proc=1858 thread=11237 old=120 => new=118 desired=118");
    pb_s(&m, 1, "17000010.devfreq_mif");
    pb_u(&m, 2, 1716000);
    pb_u(&m, 3, 3);
    NEXT(16, "clock_set_rate", "17000010.devfreq_mif state=1716000 cpu_id=3");
    pb_u(&m, 1, 0xffffffc0089e1a2cull);
    pb_u(&m, 2, 0xffffff8004a1b200ull);
    NEXT(298, "kfree", "call_site=0xffffffc0089e1a2c ptr=ffffff8004a1b200");
    pb_u(&m, 1, 9);
    NEXT(26, "softirq_raise", "vec=9 [action=RCU]");
    pb_u(&m, 1, 3);
    NEXT(26, "softirq_raise", "vec=3 [action=NET_RX]");
    pb_u(&m, 1, 0x5);
    pb_s(&m, 2, "Rescheduling interrupts");
    NEXT(23, "ipi_raise", "target_mask=00000000,00000005 (Rescheduling interrupts)");
    pb_s(&m, 1, "Rescheduling interrupts");
    NEXT(21, "ipi_entry", "(Rescheduling interrupts)");
    pb_s(&m, 1, "mali-cmar-backe");
    pb_i(&m, 2, 97);
    pb_i(&m, 3, 116);
    pb_i(&m, 4, 3000);
    NEXT(353, "sched_pi_setprio", "comm=mali-cmar-backe pid=3000 oldprio=116 newprio=97");
    pb_s(&m, 1, "dpm_suspend");
    pb_i(&m, 2, 2);
    pb_u(&m, 3, 1);
    NEXT(113, "suspend_resume", "dpm_suspend[2] begin");
    pb_i(&m, 1, 3);
    pb_i(&m, 2, 7);
    pb_i(&m, 3, 2348);
    pb_s(&m, 4, "ndroid.systemui");
    pb_i(&m, 6, 1);
    pb_s(&m, 7, "/top-app");
    NEXT(67, "cgroup_attach_task", "dst_root=3 dst_id=7 dst_level=1 dst_path=/top-app pid=2348 comm=ndroid.systemui");
    pb_u(&m, 1, 3);
    pb_s(&m, 2, "exynos");
    pb_u(&m, 3, 18880);
    pb_s(&m, 4, "CRTC:160-exynos-crtc-0");
    NEXT(416, "dma_fence_signaled", "driver=exynos timeline=CRTC:160-exynos-crtc-0 context=3 seqno=18880");
    pb_i(&m, 1, 0);
    pb_i(&m, 2, 45000);
    pb_i(&m, 3, 44000);
    pb_s(&m, 4, "BIG");
    NEXT(341, "thermal_temperature", "thermal_zone=BIG id=0 temp_prev=44000 temp=45000");
    pb_u(&m, 1, 2);
    pb_s(&m, 2, "thermal-cpufreq-0");
    NEXT(342, "cdev_update", "type=thermal-cpufreq-0 target=2");
    pb_s(&m, 1, "gle.android.gms");
    pb_i(&m, 2, -900);
    pb_i(&m, 3, 25240);
    NEXT(326, "oom_score_adj_update", "pid=25240 comm=gle.android.gms oom_score_adj=-900");
    pb_i(&m, 1, 2);
    pb_i(&m, 2, 0);
    pb_i(&m, 3, 1);
    NEXT(19, "sched_cpu_hotplug", "cpu 2 online error=0");
    pb_i(&m, 1, 0);
    pb_i(&m, 2, 3);
    NEXT(48, "mm_vmscan_kswapd_wake", "nid=0 order=3");
    pb_u(&m, 1, 32);
    NEXT(47, "mm_vmscan_direct_reclaim_end", "nr_reclaimed=32");
    pb_s(&m, 1, "eventpoll");
    pb_u(&m, 2, 0x5ca2);
    NEXT(404, "wakeup_source_activate", "eventpoll state=0x5ca2");
    pb_u(&m, 1, 300000);
    pb_u(&m, 2, 1800000);
    pb_u(&m, 3, 4);
    NEXT(12, "cpu_frequency_limits", "min=300000 max=1800000 cpu_id=4");
    pb_s(&m, 1, "dsi0_pll");
    pb_u(&m, 2, 1000000);
    NEXT(322, "clk_set_rate", "dsi0_pll 1000000");
    pb_s(&m, 1, "GATE_UFS_EMBD");
    NEXT(321, "clk_disable", "GATE_UFS_EMBD");
    pb_u(&m, 1, 196);
    pb_i(&m, 2, 4975444);
    pb_u(&m, 3, 8);
    pb_u(&m, 4, 0);
    NEXT(323, "binder_transaction_alloc_buf", "transaction=4975444 data_size=196 offsets_size=8 extra_buffers_size=0");
    pb_u(&m, 1, 0);
    pb_u(&m, 2, 434000);
    NEXT(332, "gpu_frequency", "state=434000 gpu_id=0");
    pb_i(&m, 1, 1234);
    NEXT(334, "mark_victim", "pid=1234");
    pb_s(&m, 1, "com.foo");
    pb_i(&m, 2, 99);
    pb_i(&m, 3, 1000);
    pb_i(&m, 4, 2000);
    pb_i(&m, 5, 300);
    NEXT(35, "lowmemory_kill", "com.foo (99), page cache 1000kB (limit 2000kB), free 300Kb");
    pb_s(&m, 1, "app");
    pb_i(&m, 2, 5);
    pb_i(&m, 3, 120);
    NEXT(242, "sched_process_wait", "comm=app pid=5 prio=120");
#undef NEXT
    assert_same_as_text(&t, text, 29);
}

/* What the tracefs text has that the trace cannot give: the nearest
 * honest form.  mm_page_alloc of a 5.x kernel (pfn, no page: page= left
 * out) with gfp_flags in hex; kmalloc's %pS call site as its address and
 * gfp_flags 0 as "none"; signal_generate without errno=; a value past a
 * __print_symbolic list as the kernel prints it (0x%lx); an older
 * kernel's form (kswapd_wake with zid); a field the format does not
 * show after the line's pairs; a field of the wrong wire type: the pairs
 * by field name. */
static void test_nearest_form(void **state)
{
    (void)state;
    pf_reader *d = reader();
    const char *name = NULL;
    pf_other_fault f;
    pb m = {.n = 0};
    pb_u(&m, 1, 0xcc0);
    pb_i(&m, 2, 1);
    pb_u(&m, 3, 0);
    pb_u(&m, 5, 0x8a3f1);
    assert_int_equal(decode(d, 307, m.b, m.n, &name, &f), 0);
    assert_string_equal(name, "mm_page_alloc");
    assert_int_equal(d->fr.nkv, 4);
    pair(d, 0, "pfn", "0x8a3f1");
    pair(d, 1, "order", "0");
    pair(d, 2, "migratetype", "1");
    pair(d, 3, "gfp_flags", "0xcc0");
    m.n = 0;
    pb_u(&m, 1, 128);
    pb_u(&m, 2, 100);
    pb_u(&m, 3, 0xffffffc008123456ull);
    pb_u(&m, 4, 0);
    pb_u(&m, 5, 0xffffff8000ab0000ull);
    assert_int_equal(decode(d, 299, m.b, m.n, &name, &f), 0);
    assert_int_equal(d->fr.nkv, 5);
    pair(d, 0, "call_site", "0xffffffc008123456");
    pair(d, 1, "ptr", "ffffff8000ab0000");
    pair(d, 2, "bytes_req", "100");
    pair(d, 3, "bytes_alloc", "128");
    pair(d, 4, "gfp_flags", "none");
    m.n = 0;
    pb_i(&m, 1, 0);
    pb_s(&m, 2, "app");
    pb_i(&m, 3, 1);
    pb_i(&m, 4, 5);
    pb_i(&m, 5, 0);
    pb_i(&m, 6, 9);
    assert_int_equal(decode(d, 325, m.b, m.n, &name, &f), 0);
    assert_int_equal(d->fr.nkv, 6);
    pair(d, 0, "sig", "9");
    pair(d, 1, "code", "0");
    pair(d, 2, "comm", "app");
    pair(d, 3, "pid", "5");
    pair(d, 4, "grp", "1");
    pair(d, 5, "res", "0");
    m.n = 0;
    pb_i(&m, 1, 7);
    pb_i(&m, 2, 4096);
    pb_u(&m, 3, 0);
    pb_u(&m, 4, 1);
    assert_int_equal(decode(d, 313, m.b, m.n, &name, &f), 0);
    pair(d, 2, "type", "0x7");
    pair(d, 3, "size", "4096B");
    m.n = 0;
    pb_i(&m, 1, 0);
    pb_i(&m, 2, 3);
    pb_i(&m, 3, 2);
    assert_int_equal(decode(d, 48, m.b, m.n, &name, &f), 0);
    assert_int_equal(d->fr.nkv, 3);
    pair(d, 0, "nid", "0");
    pair(d, 1, "zid", "2");
    pair(d, 2, "order", "3");
    m.n = 0;
    pb_i(&m, 1, 1);
    pb_i(&m, 2, 4);
    pb_i(&m, 3, 77);
    pb_s(&m, 4, "sh");
    pb_s(&m, 5, "bg");
    pb_i(&m, 6, 2);
    pb_s(&m, 7, "/a/bg");
    pb_u(&m, 9, 5);
    assert_int_equal(decode(d, 67, m.b, m.n, &name, &f), 0);
    assert_int_equal(d->fr.nkv, 8);
    pair(d, 5, "comm", "sh");
    pair(d, 6, "cname", "bg");
    pair(d, 7, "f9", "5");
    m.n = 0;
    pb_s(&m, 1, "mif"); /* state as a string: no print format fits */
    pb_s(&m, 2, "x");
    pb_u(&m, 3, 1);
    assert_int_equal(decode(d, 16, m.b, m.n, &name, &f), 0);
    assert_int_equal(d->fr.nkv, 3);
    pair(d, 0, "name", "mif");
    pair(d, 1, "state", "x");
    free(d);
}

/* one field of kind k, its value by case c: the plans' shortcuts and
 * their way back to the text (a blank, a width, a missing field, a string
 * for a number, a line past PFO_LINE_MAX) */
static void some_value(pb *m, const pfo_field *fd, int c)
{
    /* a blank inside, after, before: the text reader's pairs differ from
     * the value (`a k=v` is two pairs, `trail ` loses its blank) */
    static const char *const strs[] = {"mif", "", "a b", "tab\there", "x=y", "end\n", "[z]", "a k=v", "trail ", " lead"};
    static char big[4091]; /* fits the line alone, not with its key */
    memset(big, 'q', sizeof big - 1);
    if (c % 9 == 8 && fd->num % 3 == 0)
        return; /* missing */
    if (fd->kind == PFO_STR || c % 11 == 10) {
        if (c % 13 == 12)
            pb_s(m, fd->num, big);
        else
            pb_s(m, fd->num, strs[(size_t)(c + fd->num) % (sizeof strs / sizeof *strs)]);
        return;
    }
    static const int64_t nums[] = {0, 1, 3, 7, -5, 120, 4294967295, -1000, 2396046776, INT64_MIN, 99999};
    pb_i(m, fd->num, nums[(size_t)(c * 7 + fd->num) % (sizeof nums / sizeof *nums)]);
}

/* The pairs made from a key=value format's plan are those of its text
 * read back by the text reader, for every event with print formats and
 * values of every kind (a reader without plans writes and reads the
 * text). */
static void test_plans_same_as_text(void **state)
{
    (void)state;
    pf_reader *a = reader(), *b = reader();
    assert_int_equal(ingest_pf_other_init(b), 0);
    size_t planned = 0;
    for (size_t i = 0; i < pfo_nevents; i++) {
        const pfo_event *ev = &pfo_events[i];
        if (!ev->nprints)
            continue;
        for (int c = 0; c < 40; c++) {
            pb m = {.n = 0};
            for (size_t j = 0; j < ev->nfields; j++)
                some_value(&m, &ev->fields[j], c);
            const char *na = NULL, *nb = NULL;
            pf_other_fault fa, fb;
            assert_int_equal(decode(a, ev->num, m.b, m.n, &na, &fa), decode(b, ev->num, m.b, m.n, &nb, &fb));
            assert_string_equal(na, nb);
            assert_int_equal(a->fr.nkv, b->fr.nkv);
            /* a plan's keys are its format's, the text's in the line */
            if (c == 0 && b->fr.nkv > 0 && (b->fr.kv[0].key < b->obuf || b->fr.kv[0].key >= b->obuf + sizeof b->obuf))
                planned++;
            for (int k = 0; k < a->fr.nkv; k++) {
                const ftrace_kv *x = &a->fr.kv[k], *y = &b->fr.kv[k];
                assert_int_equal(x->klen, y->klen);
                assert_memory_equal(x->key, y->key, x->klen);
                assert_int_equal(x->vlen, y->vlen);
                assert_memory_equal(x->val, y->val, x->vlen);
            }
        }
    }
    assert_true(planned >= 20); /* rss_stat, binder_transaction_alloc_buf, ... have plans */
    ingest_pf_other_free(b);
    free(a);
    free(b);
}

/* the attributes ingest_ft_attr_pairs writes of d's pairs, as said
 * (kv_distinct) and the long way (each key searched for first): the same */
static bool attrs_as_said(pf_reader *d)
{
    bool said = d->fr.kv_distinct;
    d->fr.alen = 0;
    assert_int_equal(ingest_ft_attr_pairs(&d->fr), 0);
    char fast[1024];
    size_t n = d->fr.alen;
    assert_true(n <= sizeof fast);
    memcpy(fast, d->fr.ab, n);
    d->fr.kv_distinct = false;
    d->fr.alen = 0;
    assert_int_equal(ingest_ft_attr_pairs(&d->fr), 0);
    assert_int_equal(d->fr.alen, n);
    assert_memory_equal(d->fr.ab, fast, n);
    return said;
}

/* keys all different and without '=': the pairs are written at once
 * (kv_distinct); a field given twice, or a generic event's field named
 * with an '=', the long way, which leaves the later of a key out */
static void test_keys_distinct(void **state)
{
    (void)state;
    pf_reader *d = reader();
    assert_int_equal(ingest_pf_other_init(d), 0);
    const char *name = NULL;
    pf_other_fault f;
    pb m = {.n = 0};
    pb_i(&m, 1, 1);
    pb_i(&m, 2, 532480);
    pb_u(&m, 3, 1);
    pb_u(&m, 4, 7);
    assert_int_equal(decode(d, 313, m.b, m.n, &name, &f), 0);
    assert_int_equal(d->fr.nkv, 4);
    assert_true(attrs_as_said(d)); /* rss_stat's four, its plan's: distinct by the plan */
    pb_u(&m, 9, 5);
    assert_int_equal(decode(d, 313, m.b, m.n, &name, &f), 0);
    assert_true(attrs_as_said(d)); /* rss_stat's four and f9 */
    pb_u(&m, 9, 6);
    assert_int_equal(decode(d, 313, m.b, m.n, &name, &f), 0);
    assert_false(attrs_as_said(d)); /* f9 twice: the first kept */
    pb g = {.n = 0}, fld = {.n = 0};
    pb_s(&fld, 1, "a");
    pb_s(&fld, 3, "2=z");
    pb_m(&g, 2, &fld);
    fld.n = 0;
    pb_s(&fld, 1, "b");
    pb_u(&fld, 5, 2);
    pb_m(&g, 2, &fld);
    assert_int_equal(decode(d, 327, g.b, g.n, &name, &f), 0);
    assert_true(attrs_as_said(d));
    fld.n = 0;
    pb_s(&fld, 1, "a=2");
    pb_u(&fld, 5, 3);
    pb_m(&g, 2, &fld);
    assert_int_equal(decode(d, 327, g.b, g.n, &name, &f), 0);
    assert_false(attrs_as_said(d)); /* key a=2 is found in a=2=z: left out */
    assert_int_equal(d->fr.alen, strlen("a=2=z") + 1 + strlen("b=2") + 1);
    ingest_pf_other_free(d);
    free(d->fr.ab);
    free(d);
}

/* An event's number gives the same table entry by the index
 * ingest_pf_other_init makes as by the search of a reader without it:
 * every number to past the table's last, listed or not */
static void test_event_index(void **state)
{
    (void)state;
    pf_reader *a = reader(), *b = reader();
    assert_int_equal(ingest_pf_other_init(b), 0);
    assert_non_null(b->other_ix);
    size_t listed = 0;
    for (uint32_t num = 3; num < pfo_events[pfo_nevents - 1].num + 40; num++) {
        const char *na = NULL, *nb = NULL;
        pf_other_fault fa, fb;
        assert_int_equal(decode(a, num, NULL, 0, &na, &fa), 0);
        assert_int_equal(decode(b, num, NULL, 0, &nb, &fb), 0);
        assert_string_equal(na, nb);
        listed += strncmp(nb, "ftrace_event_", 13) != 0;
    }
    assert_int_equal(listed, pfo_nevents);
    ingest_pf_other_free(b);
    assert_null(b->other_ix);
    free(a);
    free(b);
}

/* A field's key by the index ingest_pf_other_init makes (other_keys)
 * is the one the search of a reader without it finds: every event, its
 * fields out of order, numbers past its last and between, and the pairs
 * of an event without print formats (zero's) all by field name */
static void test_field_keys(void **state)
{
    (void)state;
    pf_reader *a = reader(), *b = reader();
    assert_int_equal(ingest_pf_other_init(b), 0);
    assert_non_null(b->other_keys);
    size_t by_name = 0;
    for (size_t i = 0; i < pfo_nevents; i++) {
        const pfo_event *ev = &pfo_events[i];
        uint32_t top = 0;
        for (size_t j = 0; j < ev->nfields; j++)
            top = ev->fields[j].num > top ? ev->fields[j].num : top;
        pb m = {.n = 0};
        for (uint32_t num = top + 3; num > 0; num--) /* last to first */
            pb_i(&m, num, (int64_t)num * -1000003);
        pb_s(&m, 1, "s");
        const char *na = NULL, *nb = NULL;
        pf_other_fault fa, fb;
        assert_int_equal(decode(a, ev->num, m.b, m.n, &na, &fa), decode(b, ev->num, m.b, m.n, &nb, &fb));
        assert_string_equal(na, nb);
        assert_int_equal(a->fr.nkv, b->fr.nkv);
        for (int k = 0; k < a->fr.nkv; k++) {
            const ftrace_kv *x = &a->fr.kv[k], *y = &b->fr.kv[k];
            assert_int_equal(x->klen, y->klen);
            assert_memory_equal(x->key, y->key, x->klen);
            assert_int_equal(x->vlen, y->vlen);
            assert_memory_equal(x->val, y->val, x->vlen);
            by_name += x->key[0] != 'f' || x->klen == 1 || x->key[1] < '0' || x->key[1] > '9';
        }
    }
    assert_true(by_name > 100); /* most pairs named by the table */
    ingest_pf_other_free(b);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_sorted), cmocka_unit_test(test_unsigned_and_string),
        cmocka_unit_test(test_negative),     cmocka_unit_test(test_unknown), cmocka_unit_test(test_varint_widths),
        cmocka_unit_test(test_generic),      cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_many_fields),  cmocka_unit_test(test_read),
        cmocka_unit_test(test_same_as_text), cmocka_unit_test(test_nearest_form),
        cmocka_unit_test(test_plans_same_as_text), cmocka_unit_test(test_keys_distinct),
        cmocka_unit_test(test_event_index), cmocka_unit_test(test_field_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
