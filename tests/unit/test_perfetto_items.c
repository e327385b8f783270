/* tests/unit/test_perfetto_items.c -- the Perfetto reader's self-contained
 * held events (ingest/perfetto/perfetto_int.h's pf_item forms, perfetto_comms.c,
 * perfetto_map.c's ingest_pf_names with own, the keep of perfetto.c and
 * perfetto_fast.c's ingest_pf_keep_event): the intern table of comms; a
 * full sched_switch, wakeup, cpu_idle, cpu_frequency, print, binder
 * event, sched_blocked_reason or other event held in its own form (or
 * kept) gives the very events and messages its full form gives, without
 * reading its packet's arena, and one that does not fit (a long comm, a
 * prio the form cannot tell from none) stays full; the compact form's
 * comms of every length give what the full form's do; and a packet's
 * arena, released as soon as none of its held events reads it, is not
 * released while one does. */
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

/* ---- the intern table ---- */

static void test_comm_ids(void **state)
{
    (void)state;
    pf_comms t;
    memset(&t, 0, sizeof t);
    assert_int_equal(ingest_pf_comm_id(&t, "", 0), 0);
    assert_int_equal(ingest_pf_comm_id(&t, NULL, 0), 0);
    assert_string_equal(ingest_pf_comm_str(&t, 0), "");
    assert_int_equal(ingest_pf_comm_len(&t, 0), 0);
    /* the bytes up to n only: what follows is not the comm's */
    uint32_t a = ingest_pf_comm_id(&t, "abcXYZ", 3);
    assert_int_not_equal(a, PF_COMM_NONE);
    assert_int_not_equal(a, 0);
    assert_int_equal(ingest_pf_comm_id(&t, "abc", 3), a);
    assert_string_equal(ingest_pf_comm_str(&t, a), "abc");
    assert_int_equal(ingest_pf_comm_len(&t, a), 3);
    assert_int_not_equal(ingest_pf_comm_id(&t, "ab", 2), a);
    assert_int_not_equal(ingest_pf_comm_id(&t, "abcd", 4), a);
    /* 15 bytes have an id, 16 none */
    const char *l15 = "0123456789abcde", *l16 = "0123456789abcdef";
    uint32_t b = ingest_pf_comm_id(&t, l15, 15);
    assert_int_not_equal(b, PF_COMM_NONE);
    assert_string_equal(ingest_pf_comm_str(&t, b), l15);
    assert_int_equal(ingest_pf_comm_len(&t, b), 15);
    assert_int_equal(ingest_pf_comm_id(&t, l16, 16), PF_COMM_NONE);
    /* every length 1..15, two strings differing in one byte each place */
    for (size_t n = 1; n <= 15; n++)
        for (size_t k = 0; k < n; k++) {
            char s[16], u[16];
            memset(s, 'q', n);
            memcpy(u, s, n);
            u[k] = 'r';
            s[n] = u[n] = '\0';
            uint32_t x = ingest_pf_comm_id(&t, s, n), y = ingest_pf_comm_id(&t, u, n);
            assert_int_not_equal(x, y);
            assert_string_equal(ingest_pf_comm_str(&t, x), s);
            assert_string_equal(ingest_pf_comm_str(&t, y), u);
            assert_int_equal(ingest_pf_comm_id(&t, s, n), x);
        }
    ingest_pf_comms_free(&t);
}

/* ingest_pf_comm_id16 (its key by two loads and masks) gives the id the
 * copying ingest_pf_comm_id gives, for arena strings of 0 to 17 bytes
 * whose blocks hold other bytes after the NUL, as a reused chunk's do. */
static void test_comm_ids_arena(void **state)
{
    (void)state;
    pf_reader d;
    memset(&d, 0, sizeof d);
    pf_hold h = {.d = &d, .hint = 4096, .refs = 1};
    pf_comms t;
    memset(&t, 0, sizeof t);
    for (size_t n = 0; n <= 17; n++)
        for (char fill = 'a'; fill <= 'c'; fill++) {
            char *s = ingest_pf_alloc(&h, 32);
            assert_non_null(s);
            memset(s, 'z' - (int)n, 32); /* after the NUL: not the comm's */
            memset(s, fill, n);
            s[n] = '\0';
            uint32_t a = ingest_pf_comm_id16(&t, s, n), b = ingest_pf_comm_id(&t, s, n);
            assert_int_equal(a, b);
            assert_int_equal(a, n > PF_COMM_LONGEST ? PF_COMM_NONE : n == 0 ? 0 : a);
            if (a != PF_COMM_NONE) {
                assert_string_equal(ingest_pf_comm_str(&t, a), s);
                assert_int_equal(ingest_pf_comm_len(&t, a), n);
            }
        }
    assert_int_equal(t.n, 1 + 15 * 3);
    ingest_pf_comms_free(&t);
    while (h.chunks) {
        pf_chunk *c = h.chunks;
        h.chunks = c->next;
        free(c);
    }
}

/* Full: PF_COMMS_MAX ids (with ""), then none for a new comm, the old
 * ones still found. */
static void test_comm_ids_full(void **state)
{
    (void)state;
    pf_comms t;
    memset(&t, 0, sizeof t);
    uint32_t first = 0;
    for (uint32_t i = 1; i < PF_COMMS_MAX; i++) {
        char s[16];
        int n = snprintf(s, sizeof s, "t%u", i);
        uint32_t id = ingest_pf_comm_id(&t, s, (size_t)n);
        assert_int_equal(id, i);
        if (i == 1)
            first = id;
    }
    assert_int_equal(ingest_pf_comm_id(&t, "new", 3), PF_COMM_NONE);
    assert_int_equal(ingest_pf_comm_id(&t, "t1", 2), first);
    char s[16];
    int n = snprintf(s, sizeof s, "t%u", PF_COMMS_MAX - 1);
    assert_int_equal(ingest_pf_comm_id(&t, s, (size_t)n), PF_COMMS_MAX - 1);
    ingest_pf_comms_free(&t);
}

/* ---- an item in its own form gives the events of its full form ---- */

typedef struct emitter {
    pf_reader d;
    rec *r;
    ingest_sink sink;
    ingest_stats st;
    char err[512];
    pf_hold h;
} emitter;

static void emitter_init(emitter *e)
{
    memset(e, 0, sizeof *e);
    e->r = rec_new(true);
    e->sink = (ingest_sink){.ctx = e->r, .proc = on_proc, .thread = on_thread, .event = on_event, .skip = on_skip};
    e->d.path = "t.pftrace";
    assert_int_equal(ingest_ft_reader_init(&e->d.fr, e->d.path, &e->sink, &e->st, e->err, sizeof e->err), 0);
    e->d.idle_hash = ingest_ft_comm_hash("<idle>", 6);
    e->h = (pf_hold){.d = &e->d, .refs = 1, .packet = 7, .offset = 99};
}

static void emitter_free(emitter *e)
{
    while (e->h.keep) {
        pf_chunk *c = e->h.keep;
        e->h.keep = c->next;
        free(c);
    }
    ingest_ft_reader_free(&e->d.fr);
    ingest_pf_comms_free(&e->d.comms);
    rec_free(e->r);
}

/* ev on CPU 1 at ts into both: full into a, in its own form into b where
 * it fits, else (keep) a copy in its hold's keep, as do_bundle holds
 * them; want: the form b held it in.  Before b's emit of a form that is
 * not the arena's, the event's FtraceEvent and the arena ah of its
 * strings are overwritten: b's item must not read them.  want_rc: both emits' result (-1: the same
 * message). */
static void emit_both_rc(emitter *a, emitter *b, ArgusqPf__FtraceEvent *ev, pf_hold *ah, uint64_t ts, int want,
                         bool keep, int want_rc)
{
    emitter *e[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        pf_item it;
        memset(&it, 0, sizeof it);
        it.form = PF_FULL;
        it.ev = ev;
        it.ts = ts;
        it.tid = ev->pid;
        it.cpu = 1;
        it.ctx = DB_CTX_THREAD;
        it.hold = &e[i]->h;
        assert_int_equal(ingest_pf_names(&e[i]->d, &it, i == 1), 0);
        if (i == 1 && keep && it.form == PF_FULL && (it.ev = ingest_pf_keep_event(&b->h, ev)))
            it.form = PF_KEPT_FULL;
        assert_int_equal(it.form, i == 1 ? want : PF_FULL);
        if (i == 1 && !pf_item_in_arena(it.form)) {
            memset(ev, 0, sizeof *ev);
            for (pf_chunk *c = ah->chunks; c; c = c->next)
                memset(c->data, '#', c->used);
        }
        int rc = ingest_pf_emit(&e[i]->d, &it, NULL);
        if (rc != want_rc)
            fail_msg("emit: %d: %s", rc, e[i]->err);
    }
    if (want_rc < 0)
        assert_string_equal(a->err, b->err);
}

static void emit_both(emitter *a, emitter *b, ArgusqPf__FtraceEvent *ev, pf_hold *ah, uint64_t ts, int want)
{
    emit_both_rc(a, b, ev, ah, ts, want, false, 0);
}

/* the same events (ftrace_rec.h), and the same threads' names */
static void assert_same_recs(const rec *a, const rec *b)
{
    assert_same_events(a, b);
    assert_int_equal(a->nth, b->nth);
    for (size_t i = 0; i < a->nth; i++)
        assert_string_equal(a->th[i].name, b->th[i].name);
}

/* arena strings as the decoders make them (ingest_pf_arena_strlen reads
 * 16 bytes of one): in a hold's arena */
static char *astr(pf_hold *h, const char *s)
{
    char *c = ingest_pf_alloc(h, strlen(s) + 1);
    assert_non_null(c);
    strcpy(c, s);
    return c;
}

static void own_switches(emitter *a, emitter *b, pf_hold *ah, uint64_t *ts)
{
    /* switches: prios present or not, comms "", NULL, 15 and 16 bytes */
    struct {
        const char *pc, *nc;
        int32_t pp, np;
        bool has_prio;
        int32_t prio;
        int64_t state;
        int want;
    } sw[] = {
        {"a", "b", 10, 20, true, 120, 1, PF_SWITCH},
        {"b", "a", 20, 10, false, 0, 0, PF_SWITCH},
        {"", NULL, 30, 0, true, 100, 2, PF_SWITCH},
        {NULL, "c", 0, 40, true, -5, 0x400, PF_SWITCH},
        {"0123456789abcde", "edcba9876543210", 50, 51, true, 120, 64, PF_SWITCH},
        {"0123456789abcdef", "x", 52, 53, true, 120, 1, PF_FULL},
        {"x", "0123456789abcdefg", 54, 55, true, 120, 1, PF_FULL},
        {"y", "z", 56, 57, true, INT32_MIN, 1, PF_FULL},
        {"y", "z", 58, 59, true, INT32_MIN + 1, (int64_t)1 << 40, PF_SWITCH},
    };
    for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
        ArgusqPf__SchedSwitchFtraceEvent s = ARGUSQ_PF__SCHED_SWITCH_FTRACE_EVENT__INIT;
        ArgusqPf__FtraceEvent ev = ARGUSQ_PF__FTRACE_EVENT__INIT;
        s.prev_comm = sw[i].pc ? astr(ah, sw[i].pc) : NULL;
        s.next_comm = sw[i].nc ? astr(ah, sw[i].nc) : NULL;
        s.has_prev_pid = s.has_next_pid = s.has_next_prio = s.has_prev_state = 1;
        s.prev_pid = sw[i].pp;
        s.next_pid = sw[i].np;
        s.has_prev_prio = sw[i].has_prio;
        s.prev_prio = sw[i].prio;
        s.next_prio = 110;
        s.prev_state = sw[i].state;
        ev.has_pid = 1;
        ev.pid = (uint32_t)sw[i].pp;
        ev.event_case = ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_SWITCH;
        ev.sched_switch = &s;
        emit_both(a, b, &ev, ah, (*ts)++, sw[i].want);
    }
}

static void own_wakeups(emitter *a, emitter *b, pf_hold *ah, uint64_t *ts)
{
    /* wakeups of the three kinds, comms short, "", NULL and long */
    const char *wc[] = {"a", "", NULL, "0123456789abcde", "0123456789abcdef"};
    for (size_t i = 0; i < sizeof wc / sizeof wc[0]; i++)
        for (int kind = 0; kind < 3; kind++) {
            ArgusqPf__SchedWakeupFtraceEvent w = ARGUSQ_PF__SCHED_WAKEUP_FTRACE_EVENT__INIT;
            ArgusqPf__FtraceEvent ev = ARGUSQ_PF__FTRACE_EVENT__INIT;
            w.comm = wc[i] ? astr(ah, wc[i]) : NULL;
            w.has_pid = w.has_prio = w.has_target_cpu = 1;
            w.pid = 60 + (int32_t)i;
            w.prio = 120;
            w.target_cpu = kind;
            ev.has_pid = 1;
            ev.pid = 20;
            if (kind == 0) {
                ev.event_case = ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_WAKEUP;
                ev.sched_wakeup = &w;
            } else if (kind == 1) { /* the same layout (perfetto_fast.c's plan_checked) */
                ev.event_case = ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_WAKING;
                ev.sched_waking = (ArgusqPf__SchedWakingFtraceEvent *)(void *)&w;
            } else {
                ev.event_case = ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_WAKEUP_NEW;
                ev.sched_wakeup_new = (ArgusqPf__SchedWakeupNewFtraceEvent *)(void *)&w;
            }
            emit_both(a, b, &ev, ah, (*ts)++, i == 4 ? PF_FULL : PF_WAKE);
        }
}

static void own_idle_freq(emitter *a, emitter *b, pf_hold *ah, uint64_t *ts)
{
    /* cpu_idle and cpu_frequency: the idle exit's 4294967295 twice (the
     * text kept), short and long states */
    const uint32_t states[] = {4294967295u, 4294967295u, 0, 3, 1800000, 9999, 10000};
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++)
        for (int idle = 0; idle < 2; idle++) {
            ArgusqPf__CpuIdleFtraceEvent c = ARGUSQ_PF__CPU_IDLE_FTRACE_EVENT__INIT;
            ArgusqPf__FtraceEvent ev = ARGUSQ_PF__FTRACE_EVENT__INIT;
            c.has_state = c.has_cpu_id = 1;
            c.state = states[i];
            c.cpu_id = (uint32_t)i;
            ev.has_pid = 1;
            ev.pid = 0;
            if (idle) {
                ev.event_case = ARGUSQ_PF__FTRACE_EVENT__EVENT_CPU_IDLE;
                ev.cpu_idle = &c;
            } else {
                ev.event_case = ARGUSQ_PF__FTRACE_EVENT__EVENT_CPU_FREQUENCY;
                ev.cpu_frequency = (ArgusqPf__CpuFrequencyFtraceEvent *)(void *)&c;
            }
            emit_both(a, b, &ev, ah, (*ts)++, idle ? PF_IDLE : PF_FREQ);
        }
}

static void own_prints(emitter *a, emitter *b, pf_hold *ah, uint64_t *ts)
{
    /* prints: short ones in the item, longer ones in the keep, line ends
     * stripped either way */
    const char *prints[] = {"E|10", "", NULL, "C|10|counter|5\n", "0123456789012345678901234567890",
                            "B|10|a slice whose name is longer than the item\r\n"};
    for (size_t i = 0; i < sizeof prints / sizeof prints[0]; i++) {
        ArgusqPf__PrintFtraceEvent m = ARGUSQ_PF__PRINT_FTRACE_EVENT__INIT;
        ArgusqPf__FtraceEvent ev = ARGUSQ_PF__FTRACE_EVENT__INIT;
        m.buf = prints[i] ? astr(ah, prints[i]) : NULL;
        ev.has_pid = 1;
        ev.pid = 10;
        ev.event_case = ARGUSQ_PF__FTRACE_EVENT__EVENT_PRINT;
        ev.print = &m;
        emit_both(a, b, &ev, ah, (*ts)++, prints[i] && strlen(prints[i]) > PF_PRINT_MAX ? PF_KEPT_PRINT : PF_PRINT);
    }
}

static void own_binder_blocked(emitter *a, emitter *b, pf_hold *ah, uint64_t *ts)
{
    /* binder: a transaction, a reply, their receipts */
    for (int reply = 0; reply < 2; reply++) {
        ArgusqPf__BinderTransactionFtraceEvent m = ARGUSQ_PF__BINDER_TRANSACTION_FTRACE_EVENT__INIT;
        ArgusqPf__BinderTransactionReceivedFtraceEvent r = ARGUSQ_PF__BINDER_TRANSACTION_RECEIVED_FTRACE_EVENT__INIT;
        ArgusqPf__FtraceEvent ev = ARGUSQ_PF__FTRACE_EVENT__INIT;
        m.has_debug_id = m.has_target_node = m.has_to_proc = m.has_to_thread = m.has_reply = m.has_code = m.has_flags = 1;
        m.debug_id = 77 + reply;
        m.target_node = reply ? 0 : 5;
        m.to_proc = 20;
        m.to_thread = reply ? 10 : 0;
        m.reply = reply;
        m.code = 3;
        m.flags = 0x10;
        ev.has_pid = 1;
        ev.pid = reply ? 20 : 10;
        ev.event_case = ARGUSQ_PF__FTRACE_EVENT__EVENT_BINDER_TRANSACTION;
        ev.binder_transaction = &m;
        emit_both(a, b, &ev, ah, (*ts)++, PF_BINDER);
        r.has_debug_id = 1;
        r.debug_id = 77 + reply;
        ev = (ArgusqPf__FtraceEvent)ARGUSQ_PF__FTRACE_EVENT__INIT;
        ev.has_pid = 1;
        ev.pid = reply ? 10 : 20;
        ev.event_case = ARGUSQ_PF__FTRACE_EVENT__EVENT_BINDER_TRANSACTION_RECEIVED;
        ev.binder_transaction_received = &r;
        emit_both(a, b, &ev, ah, (*ts)++, PF_BINDER);
    }
    {
        ArgusqPf__SchedBlockedReasonFtraceEvent m = ARGUSQ_PF__SCHED_BLOCKED_REASON_FTRACE_EVENT__INIT;
        ArgusqPf__FtraceEvent ev = ARGUSQ_PF__FTRACE_EVENT__INIT;
        m.has_pid = m.has_caller = m.has_io_wait = 1;
        m.pid = 10;
        m.caller = 0xffffffff81234567ull;
        m.io_wait = 1;
        ev.has_pid = 1;
        ev.pid = 0;
        ev.event_case = ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_BLOCKED_REASON;
        ev.sched_blocked_reason = &m;
        emit_both(a, b, &ev, ah, (*ts)++, PF_BLOCKED);
    }
}

static void own_other_kept(emitter *a, emitter *b, pf_hold *ah, uint64_t *ts)
{
    /* events the schema subset leaves out (clock_set_rate, field 16): a
     * short message in the item, a long one in the keep */
    for (size_t len = 3; len <= 40; len += 37) {
        uint8_t *raw = ingest_pf_alloc(ah, 64);
        assert_non_null(raw);
        size_t n = 0;
        raw[n++] = (uint8_t)(len + 6); /* the length protobuf-c keeps in front */
        raw[n++] = 0x0a;                /* name */
        raw[n++] = (uint8_t)len;
        memset(raw + n, 'm', len);
        n += len;
        raw[n++] = 0x10; /* state 200000 */
        raw[n++] = 0xc0;
        raw[n++] = 0x9a;
        raw[n++] = 0x0c;
        ProtobufCMessageUnknownField u = {.tag = 16, .wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED, .len = n,
                                          .data = raw};
        ArgusqPf__FtraceEvent ev = ARGUSQ_PF__FTRACE_EVENT__INIT;
        ev.base.n_unknown_fields = 1;
        ev.base.unknown_fields = &u;
        ev.has_pid = 1;
        ev.pid = 10;
        emit_both(a, b, &ev, ah, (*ts)++, len + 6 > PF_OTHER_MAX ? PF_KEPT_OTHER : PF_OTHER);
    }
    /* one the item has no form for, kept whole (its strings too) */
    {
        ArgusqPf__TaskRenameFtraceEvent m = ARGUSQ_PF__TASK_RENAME_FTRACE_EVENT__INIT;
        ArgusqPf__FtraceEvent ev = ARGUSQ_PF__FTRACE_EVENT__INIT;
        m.has_pid = m.has_oom_score_adj = 1;
        m.pid = 10;
        m.oldcomm = astr(ah, "old-name");
        m.newcomm = astr(ah, "new-name");
        m.oom_score_adj = -100;
        ev.has_pid = 1;
        ev.pid = 10;
        ev.event_case = ARGUSQ_PF__FTRACE_EVENT__EVENT_TASK_RENAME;
        ev.task_rename = &m;
        emit_both_rc(a, b, &ev, ah, (*ts)++, PF_KEPT_FULL, true, 0);
    }
    /* a long-comm switch, kept whole */
    {
        ArgusqPf__SchedSwitchFtraceEvent m = ARGUSQ_PF__SCHED_SWITCH_FTRACE_EVENT__INIT;
        ArgusqPf__FtraceEvent ev = ARGUSQ_PF__FTRACE_EVENT__INIT;
        m.prev_comm = astr(ah, "a-comm-of-twenty-bytes");
        m.next_comm = astr(ah, "x");
        m.has_prev_pid = m.has_next_pid = m.has_prev_state = 1;
        m.prev_pid = 70;
        m.next_pid = 71;
        m.prev_state = 1;
        ev.has_pid = 1;
        ev.pid = 70;
        ev.event_case = ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_SWITCH;
        ev.sched_switch = &m;
        emit_both_rc(a, b, &ev, ah, (*ts)++, PF_KEPT_FULL, true, 0);
    }
}

static void test_own_forms(void **state)
{
    (void)state;
    emitter a, b;
    emitter_init(&a);
    emitter_init(&b);
    pf_reader ad;
    memset(&ad, 0, sizeof ad);
    pf_hold ah = {.d = &ad, .hint = 4096, .refs = 1}; /* the events' strings */
    uint64_t ts = 1000;
    own_switches(&a, &b, &ah, &ts);
    own_wakeups(&a, &b, &ah, &ts);
    own_idle_freq(&a, &b, &ah, &ts);
    own_prints(&a, &b, &ah, &ts);
    own_binder_blocked(&a, &b, &ah, &ts);
    own_other_kept(&a, &b, &ah, &ts);
    assert_int_equal(a.r->nev, 9 + 15 + 14 + 6 + 4 + 1 + 2 + 1 + 1);
    assert_same_recs(a.r, b.r);
    assert_attr(&b.r->ev[43], "buf", "B|10|a slice whose name is longer than the item");
    /* a corrupt message of an other event: the same message */
    for (int kept = 0; kept < 2; kept++) {
        uint8_t *raw = ingest_pf_alloc(&ah, 64);
        assert_non_null(raw);
        size_t n = kept ? 40 : 4;
        raw[0] = (uint8_t)n;
        memset(raw + 1, 0, n);
        raw[1] = 0x0a; /* name: a length past the end */
        raw[2] = 0x7f;
        ProtobufCMessageUnknownField u = {.tag = 16, .wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED, .len = n + 1,
                                          .data = raw};
        ArgusqPf__FtraceEvent ev = ARGUSQ_PF__FTRACE_EVENT__INIT;
        ev.base.n_unknown_fields = 1;
        ev.base.unknown_fields = &u;
        ev.has_pid = 1;
        ev.pid = 10;
        emit_both_rc(&a, &b, &ev, &ah, ts++, kept ? PF_KEPT_OTHER : PF_OTHER, false, -1);
        assert_non_null(strstr(a.err, "packet 7"));
    }
    /* a few values as the kernel prints them, so the comparison is of events */
    assert_attr(&b.r->ev[0], "next_comm", "b");
    assert_attr(&b.r->ev[2], "prev_comm", "<...>");
    assert_attr(&b.r->ev[4], "prev_comm", "0123456789abcde");
    assert_attr(&b.r->ev[9], "comm", "a");
    assert_attr(&b.r->ev[24], "state", "4294967295");
    while (ah.chunks) {
        pf_chunk *c = ah.chunks;
        ah.chunks = c->next;
        free(c);
    }
    emitter_free(&a);
    emitter_free(&b);
}

/* ---- whole traces ---- */

static void put_print(pb *bundle, uint64_t ts, uint32_t pid, const char *buf)
{
    pb m = {.n = 0};
    pb_s(&m, 2, buf);
    put_event(bundle, ts, pid, 3, &m);
}

static rec *read_pb(const pb *trace)
{
    rec *r = rec_new(true);
    ingest_sink s = {.ctx = r, .proc = on_proc, .thread = on_thread, .event = on_event, .skip = on_skip};
    ingest_stats st;
    memset(&st, 0, sizeof st);
    char err[512];
    if (ingest_perfetto_read_mem("t.pftrace", trace->b, trace->n, &s, &st, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(r->order_errors, 0);
    return r;
}

/* CPU 0: a -> n1 at 1000, n1 sleeps for n2 at 2000, n2 wakes a at 2500,
 * n2 -> a at 3000; the comms n1, n2 of the given lengths, full or compact
 * (the first switch full in both, as test_perfetto.c's sched_compact) */
static void sched_trace(pb *t, size_t l1, size_t l2, bool compact)
{
    char n1[40], n2[40];
    memset(n1, 'p', l1);
    n1[l1] = '\0';
    memset(n2, 'q', l2);
    n2[l2] = '\0';
    pb h = {.n = 0};
    pb_u(&h, 1, 0);
    put_switch(&h, 1000, "a", 10, 0, n1, 11);
    put_bundle(t, &h);
    pb b = {.n = 0};
    pb_u(&b, 1, 0);
    if (!compact) {
        put_switch(&b, 2000, n1, 11, 1, n2, 12);
        put_waking(&b, 2500, 12, "a", 10, 0);
        put_switch(&b, 3000, n2, 12, 0, "a", 10);
    } else {
        pb cs = {.n = 0};
        pb_s(&cs, 5, n2); /* intern_table */
        pb_s(&cs, 5, "a");
        const uint64_t sts[] = {2000, 1000}, sstate[] = {1, 0}, spid[] = {12, 10}, sprio[] = {120, 120},
                       scomm[] = {0, 1};
        pb_packed(&cs, 1, sts, 2);
        pb_packed(&cs, 2, sstate, 2);
        pb_packed(&cs, 3, spid, 2);
        pb_packed(&cs, 4, sprio, 2);
        pb_packed(&cs, 6, scomm, 2);
        const uint64_t wts[] = {2500}, wpid[] = {10}, wcpu[] = {0}, wprio[] = {120}, wcomm[] = {1};
        pb_packed(&cs, 7, wts, 1);
        pb_packed(&cs, 8, wpid, 1);
        pb_packed(&cs, 9, wcpu, 1);
        pb_packed(&cs, 10, wprio, 1);
        pb_packed(&cs, 11, wcomm, 1);
        pb_m(&b, 4, &cs);
    }
    put_bundle(t, &b);
}

/* The compact form with comms of every length around the intern table's
 * bound (15: an id; 16 and longer: the arena form) gives the full form's
 * events; a prev's comm of more than 23 bytes is cut to 23, as the CPU
 * keeps it (pf_cpu), in either form. */
static void test_compact_comm_lengths(void **state)
{
    (void)state;
    const size_t lens[] = {0, 1, 14, 15, 16, 17, 23, 24, 30};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        for (size_t j = 0; j < sizeof lens / sizeof lens[0]; j++) {
            pb f = {.n = 0}, c = {.n = 0};
            sched_trace(&f, lens[i], lens[j], false);
            sched_trace(&c, lens[i], lens[j], true);
            rec *rf = read_pb(&f), *rc = read_pb(&c);
            assert_int_equal(rf->nev, 4);
            if (lens[i] <= 23 && lens[j] <= 23) {
                assert_same_recs(rf, rc);
            } else { /* the CPU keeps a comm cut to 23 bytes: a compact prev_comm is that */
                char cut[24];
                memset(cut, 'p', 23);
                cut[lens[i] < 23 ? lens[i] : 23] = '\0';
                assert_attr(&rc->ev[1], "prev_comm", lens[i] ? cut : "<...>");
                memset(cut, 'q', 23);
                cut[lens[j] < 23 ? lens[j] : 23] = '\0';
                assert_attr(&rc->ev[3], "prev_comm", lens[j] ? cut : "<...>");
            }
            rec_free(rf);
            rec_free(rc);
        }
}

/* A packet's arena goes back to the pool when none of its held events
 * reads it: CPU 1's packet holds events of the arena form (prints, a
 * switch with a long comm) until the end, while CPU 0's later packets,
 * all self-contained, are decoded and their arenas reused; the held ones
 * must still read their own packet's bytes. */
static void test_arena_kept_while_read(void **state)
{
    (void)state;
    pb t = {.n = 0}, b = {.n = 0};
    pb_u(&b, 1, 1);
    put_print(&b, 9000, 30, "B|30|held-one");
    put_switch(&b, 9001, "a-rather-long-comm", 30, 1, "x", 31);
    put_print(&b, 9002, 31, "B|31|held-two");
    put_bundle(&t, &b);
    for (int k = 0; k < 20; k++) {
        pb o = {.n = 0};
        pb_u(&o, 1, 0);
        put_waking(&o, 100 + 4 * (uint64_t)k, 40, "overwriter-xyz", 41, 0);
        put_print(&o, 101 + 4 * (uint64_t)k, 40, "E|40"); /* arena form: released at its emit */
        put_switch(&o, 102 + 4 * (uint64_t)k, "w", 40, 1, "zz", 41);
        put_bundle(&t, &o);
    }
    rec *r = read_pb(&t);
    assert_int_equal(r->nev, 3 + 20 * 3);
    const rec_event *e = &r->ev[r->nev - 3];
    assert_int_equal(e->ev.ts, 9000);
    assert_attr(&r->ev[r->nev - 2], "prev_comm", "a-rather-long-comm");
    assert_attr(&r->ev[r->nev - 2], "next_comm", "x");
    assert_int_equal(r->ev[r->nev - 1].ev.ts, 9002);
    rec_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comm_ids),
        cmocka_unit_test(test_comm_ids_full),
        cmocka_unit_test(test_comm_ids_arena),
        cmocka_unit_test(test_own_forms),
        cmocka_unit_test(test_compact_comm_lengths),
        cmocka_unit_test(test_arena_kept_while_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
