/* tests/unit/test_argus.c -- the Argus trace format reader (ingest/argus/argus.c,
 * argus_event.c, argus_lex.re) on small files written by the test, and the
 * `argus:` markers of ftrace text on the recorded tests/traces/markers.*.
 *
 * markers.trace (tracefs text, RAW=1) and markers.txt (trace-cmd report -l)
 * were recorded with /work/shared/traces/record.sh running `sh markers.sh`:
 *   M=/sys/kernel/tracing/trace_marker
 *   echo "argus: dispatch_enqueue queue=0x1 block=0xB10C" > $M
 *   echo "argus: dispatch_invoke begin queue=0x1 block=0xb10c func=0x3" > $M
 *   echo "argus: flag_write addr=0x10 value=1 sym=\"ready flag\"" > $M
 *   printf 'argus: flag_read addr=0x10 value=1' > $M
 *   echo "argus: dispatch_invoke end" > $M
 *   echo "hello, not argus" > $M
 *   ( echo "argus: wakeup tid=$$ reason=test" > $M )
 *   echo "argus: syscall begin name=fake nr=999" > $M
 *   echo "argus: syscall end nr=999 ret=-4" > $M
 *   echo "argus:<TAB>timer_arm  timer=0x20 deadline=5000 note=kept" > $M */
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
#include "ingest/argus/argus_int.h"
#include "ingest/ingest.h"

/* ---- a recording sink: every call, in order, as one line of text ---- */

typedef struct rec_event {
    db_event ev;
    char name[48];
    char attrs[512]; /* the attrs joined with ' ' */
} rec_event;

typedef struct rec {
    rec_event ev[64];
    size_t nev;        /* events seen (only the first 64 kept) */
    char calls[8192];  /* "P501 TextEdit;T501/1001 main f1;S16 x;E1001;" */
    size_t procs, threads, symbols;
    bool markers; /* keep only the Argus events of markers and raw markers */
} rec;

static void add_call(rec *r, const char *fmt, ...)
{
    size_t l = strlen(r->calls);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->calls + l, sizeof r->calls - l, fmt, ap);
    va_end(ap);
}

static int on_proc(void *ctx, uint32_t pid, const char *name, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    rec *r = ctx;
    r->procs++;
    add_call(r, "P%u %s;", pid, name);
    return 0;
}

static int on_thread(void *ctx, const db_thread *t, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    rec *r = ctx;
    r->threads++;
    add_call(r, "T%u/%u %s f%u;", t->pid, t->tid, t->name, t->flags);
    return 0;
}

static int on_symbol(void *ctx, uint64_t addr, const char *name, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    rec *r = ctx;
    r->symbols++;
    add_call(r, "S%llx %s;", (unsigned long long)addr, name);
    return 0;
}

static int on_event(void *ctx, db_event *ev, char *err, size_t errlen)
{
    rec *r = ctx;
    if (r->markers && !(ev->type != DB_EV_RAW && strcmp(ev->name, db_evtype_name(ev->type)) == 0) &&
        strcmp(ev->name, "tracing_mark_write") != 0 && strcmp(ev->name, "print") != 0)
        return 0;
    if (ev->type == DB_EV_FLAG_READ && ev->val == 666) { /* the sink refuses this one */
        snprintf(err, errlen, "sink says no");
        return -1;
    }
    if (r->nev < 64) {
        rec_event *e = &r->ev[r->nev];
        e->ev = *ev;
        snprintf(e->name, sizeof e->name, "%s", ev->name);
        size_t o = 0;
        for (size_t i = 0; i < ev->attrs_len && o + 1 < sizeof e->attrs; i++)
            e->attrs[o++] = ev->attrs[i] ? ev->attrs[i] : ' ';
        if (o > 0 && e->attrs[o - 1] == ' ')
            o--;
        e->attrs[o] = '\0';
        e->ev.name = e->ev.attrs = NULL;
        if (r->nev < 8)
            add_call(r, "E%u;", ev->tid);
    }
    r->nev++;
    return 0;
}

static char *write_temp(const char *content)
{
    char *path = strdup("/tmp/test_argus_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(content);
    assert_int_equal(write(fd, content, n), (ssize_t)n);
    close(fd);
    return path;
}

static int run_file(rec *r, const char *path, ingest_format *f, ingest_stats *st, char *err, size_t errlen)
{
    ingest_sink s = {.ctx = r, .proc = on_proc, .thread = on_thread, .symbol = on_symbol, .event = on_event};
    bool markers = r->markers;
    memset(r, 0, sizeof *r);
    r->markers = markers;
    return ingest_file(path, &s, f, st, err, errlen);
}

/* Reads text, which must succeed; r is filled. */
static void ingest_ok(rec *r, const char *text)
{
    char *path = write_temp(text);
    char err[512] = "";
    ingest_format f;
    ingest_stats st;
    int rc = run_file(r, path, &f, &st, err, sizeof err);
    unlink(path);
    free(path);
    if (rc != 0)
        fail_msg("%s", err);
    if (!r->markers) {
        assert_int_equal(f, INGEST_ARGUS);
        assert_int_equal(st.events, r->nev);
    }
}

static const char *HEAD = "#argus-trace 1\n"
                          "proc 501 \"TextEdit\"\n"
                          "thread 501 1001 \"main\" main\n"
                          "thread 501 1002 \"worker\"\n";

/* Reads text, which must fail with "PATH:LINE: ...word...". */
static void expect_text_error(const char *text, int line, const char *word)
{
    char *path = write_temp(text);
    rec *r = calloc(1, sizeof *r);
    assert_non_null(r);
    char err[512] = "", want[32];
    assert_int_equal(run_file(r, path, NULL, NULL, err, sizeof err), -1);
    snprintf(want, sizeof want, ":%d: ", line);
    if (strncmp(err, path, strlen(path)) != 0 || strncmp(err + strlen(path), want, strlen(want)) != 0 ||
        !strstr(err, word))
        fail_msg("error '%s' lacks '%s' / '%s'", err, want, word);
    unlink(path);
    free(path);
    free(r);
}

/* Reads HEAD + body, which must fail with "PATH:LINE: ...word...". */
static void expect_error(const char *body, int line, const char *word)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", HEAD, body);
    expect_text_error(text, line, word);
}

/* ---- declarations ---- */

static void test_declarations(void **state)
{
    (void)state;
    rec *r = calloc(1, sizeof *r);
    ingest_ok(r, "#argus-trace 1\r\n"
                 "# a comment\r\n"
                 "\r\n"
                 "   \t \n"
                 "proc 501 \"Text \\\"Edit\\\" \\\\ x\"\r\n"
                 "thread 501 1001 \"main\" main\n"
                 "thread\t501  1002\t\"rl\" runloop main\n"
                 "thread 0x1f5 1003 \"plain\"\n"
                 "thread 777 1004 \"orphan\" runloop\n" /* 777 never declared */
                 "symbol 0xFF10 \"g_ready\"\n"
                 "symbol 42 \"forty two\"\n"
                 "proc 501 \"TextEdit2\"\n"        /* rename */
                 "thread 501 1003 \"renamed\"\n"
                 "    # indented comment\n"
                 "1 1003 timeshare begin\r\n");
    assert_string_equal(r->calls, "P501 Text \"Edit\" \\ x;"
                                  "T501/1001 main f1;"
                                  "T501/1002 rl f3;"
                                  "T501/1003 plain f0;"
                                  "P777 orphan;T777/1004 orphan f2;"
                                  "Sff10 g_ready;"
                                  "S2a forty two;"
                                  "P501 TextEdit2;"
                                  "T501/1003 renamed f0;"
                                  "E1003;");
    assert_int_equal(r->ev[0].ev.pid, 501);
    free(r);
}

/* ---- every event type ---- */

typedef struct ev_case {
    const char *line;
    int type, phase;
    uint64_t obj;
    int64_t val;
    const char *attrs;
} ev_case;

static const ev_case cases[] = {
    {"syscall begin name=read nr=0", DB_EV_SYSCALL, DB_PH_BEGIN, 0, 0, "name=read nr=0"},
    {"syscall end nr=3 ret=-9", DB_EV_SYSCALL, DB_PH_END, 3, -9, "nr=3 ret=-9"},
    {"syscall begin name=open", DB_EV_SYSCALL, DB_PH_BEGIN, UINT64_MAX, 0, "name=open"},
    {"syscall end name=open ret=0x10", DB_EV_SYSCALL, DB_PH_END, UINT64_MAX, 16, "name=open ret=0x10"},
    {"backtrace frames=0x1,0xFf,3", DB_EV_BACKTRACE, DB_PH_NONE, 0, 0, "frames=0x1,0xFf,3"},
    {"backtrace frames=0x10", DB_EV_BACKTRACE, DB_PH_NONE, 0, 0, "frames=0x10"},
    {"nsapp_event begin class=10", DB_EV_NSAPP_EVENT, DB_PH_BEGIN, 0, 0, "class=10"},
    {"nsapp_event end", DB_EV_NSAPP_EVENT, DB_PH_END, 0, 0, ""},
    {"wait reason=semaphore timeout=1000", DB_EV_WAIT, DB_PH_NONE, 0, 0, "reason=semaphore timeout=1000"},
    {"wakeup tid=1002 reason=\"io done\"", DB_EV_WAKEUP, DB_PH_NONE, 1002, 0, "tid=1002 reason=io done"},
    {"interrupt begin irq=36", DB_EV_INTERRUPT, DB_PH_BEGIN, 36, 0, "irq=36"},
    {"interrupt end irq=36", DB_EV_INTERRUPT, DB_PH_END, 36, 0, "irq=36"},
    {"timeshare begin", DB_EV_TIMESHARE, DB_PH_BEGIN, 0, 0, ""},
    {"timeshare end", DB_EV_TIMESHARE, DB_PH_END, 0, 0, ""},
    {"dispatch_enqueue queue=0x1 block=0xB2", DB_EV_DISPATCH_ENQUEUE, DB_PH_NONE, 0xb2, 0, "queue=0x1 block=0xb2"},
    {"dispatch_invoke begin queue=0x1 block=0xb2 func=0x3", DB_EV_DISPATCH_INVOKE, DB_PH_BEGIN, 0xb2, 0,
     "queue=0x1 block=0xb2 func=0x3"},
    {"dispatch_invoke end", DB_EV_DISPATCH_INVOKE, DB_PH_END, 0, 0, ""},
    {"dispatch_mig_service begin", DB_EV_DISPATCH_MIG_SERVICE, DB_PH_BEGIN, 0, 0, ""},
    {"dispatch_mig_service end", DB_EV_DISPATCH_MIG_SERVICE, DB_PH_END, 0, 0, ""},
    {"runloop_submit rl=0x5 block=0x6", DB_EV_RUNLOOP_SUBMIT, DB_PH_NONE, 6, 0, "rl=0x5 block=0x6"},
    {"runloop_invoke begin rl=0x5 block=0x6 func=0x7", DB_EV_RUNLOOP_INVOKE, DB_PH_BEGIN, 6, 0,
     "rl=0x5 block=0x6 func=0x7"},
    {"runloop_invoke end block=0x6", DB_EV_RUNLOOP_INVOKE, DB_PH_END, 6, 0, "block=0x6"},
    {"runloop_observer stage=before_waiting", DB_EV_RUNLOOP_OBSERVER, DB_PH_NONE, 0, 0, "stage=before_waiting"},
    {"runloop_observer stage=\"exit\"", DB_EV_RUNLOOP_OBSERVER, DB_PH_NONE, 0, 0, "stage=exit"},
    {"mach_msg send dest=0xffffff8012345600 reply=0xffffff8012345700 id=29 kmsg=0xffffff80aa000010",
     DB_EV_MACH_MSG, DB_PH_BEGIN, 0xffffff8012345600ull, 0,
     "dest=0xffffff8012345600 reply=0xffffff8012345700 id=29 kmsg=0xffffff80aa000010"},
    {"mach_msg recv dest=0x100 reply=0 id=29 voucher=0x9 peer=501", DB_EV_MACH_MSG, DB_PH_END, 0x100, 0,
     "dest=0x100 reply=0 id=29 voucher=0x9 peer=501"},
    {"voucher addr=0x77 on_behalf_of=501", DB_EV_VOUCHER, DB_PH_NONE, 0x77, 0, "addr=0x77 on_behalf_of=501"},
    {"timer_arm timer=0x20 deadline=5000 func=0x30", DB_EV_TIMER_ARM, DB_PH_NONE, 0x20, 0,
     "timer=0x20 deadline=5000 func=0x30"},
    {"timer_cancel timer=0x20", DB_EV_TIMER_CANCEL, DB_PH_NONE, 0x20, 0, "timer=0x20"},
    {"timer_callout begin timer=0x20", DB_EV_TIMER_CALLOUT, DB_PH_BEGIN, 0x20, 0, "timer=0x20"},
    {"timer_callout end timer=0x20", DB_EV_TIMER_CALLOUT, DB_PH_END, 0x20, 0, "timer=0x20"},
    {"flag_write addr=0x40 value=7 sym=\"g_ready\"", DB_EV_FLAG_WRITE, DB_PH_NONE, 0x40, 7,
     "addr=0x40 value=7 sym=g_ready"},
    {"flag_read addr=0x40 value=-1", DB_EV_FLAG_READ, DB_PH_NONE, 0x40, -1, "addr=0x40 value=-1"},
    {"flag_read addr=0x40 value=0xffffffffffffffff sym=x", DB_EV_FLAG_READ, DB_PH_NONE, 0x40, -1,
     "addr=0x40 value=0xffffffffffffffff sym=x"},
};

#define NCASES (sizeof cases / sizeof cases[0])

static void test_event_types(void **state)
{
    (void)state;
    static char text[16384];
    snprintf(text, sizeof text, "%s", HEAD);
    for (size_t i = 0; i < NCASES; i++) {
        size_t l = strlen(text);
        snprintf(text + l, sizeof text - l, "%zu 1001 %s\n", 5000 + i, cases[i].line);
    }
    rec *r = calloc(1, sizeof *r);
    ingest_ok(r, text);
    assert_int_equal(r->nev, NCASES);
    bool seen[DB_EV__COUNT] = {false};
    for (size_t i = 0; i < NCASES; i++) {
        const rec_event *e = &r->ev[i];
        const ev_case *c = &cases[i];
        if (e->ev.type != c->type || e->ev.phase != c->phase || e->ev.obj != c->obj || e->ev.val != c->val ||
            strcmp(e->attrs, c->attrs) != 0 || strcmp(e->name, db_evtype_name(c->type)) != 0)
            fail_msg("'%s': got %s type %d phase %d obj %llx val %lld attrs '%s'", c->line, e->name, e->ev.type,
                     e->ev.phase, (unsigned long long)e->ev.obj, (long long)e->ev.val, e->attrs);
        assert_int_equal(e->ev.ts, 5000 + i);
        assert_int_equal(e->ev.tid, 1001);
        assert_int_equal(e->ev.pid, 501);
        assert_int_equal(e->ev.cpu, DB_CPU_NONE);
        assert_int_equal(e->ev.ctx, DB_CTX_THREAD);
        seen[c->type] = true;
    }
    for (int t = 1; t < DB_EV__COUNT; t++)
        if (!seen[t])
            fail_msg("no case for %s", db_evtype_name(t));
    free(r);
}

static void test_attributes(void **state)
{
    (void)state;
    rec *r = calloc(1, sizeof *r);
    ingest_ok(r, "#argus-trace 1\n"
                 "thread 1 2 \"t\"\n"
                 "0x10 2 dispatch_enqueue zz=\"a \\\"q\\\" \\\\ b\" block=0XAB queue=1 extra=a=b,c neg=-0x1F "
                 "n=007 empty=\"\" u=\"h\\xe9llo\" block=0x99\n"
                 "16 2 wait reason=\"two words\"\n");
    /* the first block= is the obj; both are kept, in line order */
    assert_int_equal(r->ev[0].ev.obj, 0xab);
    assert_int_equal(r->ev[0].ev.ts, 16);
    assert_string_equal(r->ev[0].attrs, "zz=a \"q\" \\ b block=0xab queue=1 extra=a=b,c neg=-0x1f n=007 "
                                        "empty= u=h\\xe9llo block=0x99");
    assert_string_equal(r->ev[1].attrs, "reason=two words");
    assert_int_equal(r->ev[1].ev.ts, 16); /* equal timestamps are fine */
    free(r);
}

/* ---- argusq's dump extensions (argus_restore.c, docs/ARGUS-DUMP.md) ---- */

static const char *DUMP = "#argus-trace 1\n"
                          "# a dump\n"
                          "dump format=ftrace-trace name=\"x \\\"y\\\"\" source=\"/t.txt\" ingested=5 events=3 later=1\n"
                          "label \"k\" \"v\\tw\"\n"
                          "rule \"rule ignore wakeup where tid = 1\"\n"
                          "thread 1 2 \"t\\tb\\x01\"\n"
                          "20 2 raw @name=sched_switch @cpu=3 @ctx=softirq @obj=0x10 @val=-5 prev_state=S "
                          "@attr=\"we ird=1\" n=0xAB neg=-0x1F\n"
                          "10 2 wakeup @name=sched_wakeup @obj=7 q=\"a\\\"b\\\\c\\nd\\q\" big=\"123456789012345678901\"\n"
                          "30 2 mach_msg recv @ctx=unknown @val=-9223372036854775808\n";

static void test_dump_events(void **state)
{
    (void)state;
    rec *r = calloc(1, sizeof *r);
    ingest_ok(r, DUMP);
    assert_int_equal(r->nev, 3);
    assert_string_equal(r->calls, "P1 t\tb\x01;T1/2 t\tb\x01 f0;E2;E2;E2;");
    const db_event *e = &r->ev[0].ev;
    assert_int_equal(e->type, DB_EV_RAW);
    assert_string_equal(r->ev[0].name, "sched_switch");
    assert_int_equal(e->cpu, 3);
    assert_int_equal(e->ctx, DB_CTX_SOFTIRQ);
    assert_int_equal(e->obj, 0x10);
    assert_int_equal(e->val, -5);
    /* taken as written: no hex rewritten; @attr in its place */
    assert_string_equal(r->ev[0].attrs, "prev_state=S we ird=1 n=0xAB neg=-0x1F");
    e = &r->ev[1].ev;
    assert_int_equal(e->ts, 10); /* before the thread's 20: a dump keeps the archive's order */
    assert_int_equal(e->type, DB_EV_WAKEUP);
    assert_string_equal(r->ev[1].name, "sched_wakeup");
    assert_int_equal(e->obj, 7);
    assert_int_equal(e->cpu, DB_CPU_NONE);
    assert_int_equal(e->ctx, DB_CTX_THREAD);
    assert_string_equal(r->ev[1].attrs, "q=a\"b\\c\nd\\q big=123456789012345678901");
    e = &r->ev[2].ev;
    assert_int_equal(e->type, DB_EV_MACH_MSG);
    assert_int_equal(e->phase, DB_PH_END);
    assert_int_equal(e->ctx, DB_CTX_UNKNOWN);
    assert_true(e->val == INT64_MIN);
    assert_string_equal(r->ev[2].name, "mach_msg");

    char *path = write_temp(DUMP);
    ingest_dump_head h;
    char err[512] = "";
    assert_int_equal(ingest_dump_head_read(path, &h, err, sizeof err), 1);
    assert_string_equal(h.format, "ftrace-trace");
    assert_string_equal(h.name, "x \"y\"");
    assert_string_equal(h.source, "/t.txt");
    assert_true(h.have_events && h.events == 3);
    assert_int_equal(h.nlabels, 1);
    assert_string_equal(h.labels[0], "k");
    assert_string_equal(h.labels[1], "v\tw");
    assert_int_equal(h.nrules, 1);
    assert_string_equal(h.rules[0], "rule ignore wakeup where tid = 1");
    assert_int_equal(h.rule_lines[0], 5);
    ingest_dump_head_free(&h);
    unlink(path);
    free(path);
    /* a file of version 1 is no dump */
    path = write_temp(HEAD);
    assert_int_equal(ingest_dump_head_read(path, &h, err, sizeof err), 0);
    assert_null(h.labels);
    unlink(path);
    free(path);
    free(r);
}

static void test_dump_errors(void **state)
{
    (void)state;
    static const struct {
        const char *event;
        const char *word;
    } bad[] = {
        {"1 2 raw @cpu=65535", "bad value for @cpu=: \"65535\""},
        {"1 2 raw @cpu=-1", "bad value for @cpu="},
        {"1 2 raw @ctx=irq", "bad value for @ctx=: \"irq\""},
        {"1 2 raw @obj=\"1\"", "bad value for @obj="},
        {"1 2 raw @val=9223372036854775808", "bad value for @val="},
        {"1 2 raw @zz=1", "unknown dump key @zz="},
        {"1 2 raw begin end", "unexpected \"end\""},
        {"1 2 raw \"str\"", "unexpected \"\"str\"\""},
        {"1 2 nosuch", "unknown event type \"nosuch\""},
        {"1 3 raw", "thread 3 is not declared"},
    };
    char text[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "#argus-trace 1\ndump format=argus\nthread 1 2 \"t\"\n%s\n", bad[i].event);
        expect_text_error(text, 4, bad[i].word);
    }
    expect_text_error("#argus-trace 1\ndump format=nope\n", 2, "unknown format \"nope\"");
    expect_text_error("#argus-trace 1\ndump name=\"x\"\n", 2, "missing format=");
    expect_text_error("#argus-trace 1\nthread 1 2 \"t\"\ndump format=argus\n", 3, "must be the first record");
    expect_text_error("#argus-trace 1\ndump format=argus events=2\nthread 1 2 \"t\"\n1 2 raw\n", 4,
                      "the dump holds 1 events, its dump record says 2");
    expect_text_error("#argus-trace 1\ndump format=argus\nthread 1 2 \"t\"\nlabel \"a\" \"b\"\n", 4,
                      "label records belong to the dump's header");
    expect_text_error("#argus-trace 1\ndump format=argus\nlabel \"a\"\n", 3, "bad label record");
    expect_text_error("#argus-trace 1\ndump format=argus\nrule x\n", 3, "bad rule record");
    /* without a dump record, none of it */
    expect_text_error("#argus-trace 1\nthread 1 2 \"t\"\n1 2 wait reason=io @cpu=1\n", 3,
                      "@cpu= is a key of argusq dumps");
    expect_text_error("#argus-trace 1\nlabel \"a\" \"b\"\n", 2, "unknown record \"label\"");
    /* and the header read says where a bad header line is */
    char *path = write_temp("#argus-trace 1\ndump format=argus\nlabel \"a\" 1\n");
    ingest_dump_head h;
    char err[512] = "";
    assert_int_equal(ingest_dump_head_read(path, &h, err, sizeof err), -1);
    assert_non_null(strstr(err, ":3: bad label record"));
    unlink(path);
    free(path);
}

/* ---- interleaved threads, and many of them ---- */

static void test_interleaved(void **state)
{
    (void)state;
    rec *r = calloc(1, sizeof *r);
    ingest_ok(r, "#argus-trace 1\n"
                 "proc 10 \"a\"\n"
                 "proc 20 \"b\"\n"
                 "thread 10 11 \"a1\"\n"
                 "thread 20 21 \"b1\"\n"
                 "500 11 wait reason=io\n"
                 "100 21 wakeup tid=11\n"
                 "600 11 syscall begin nr=1\n"
                 "100 21 wakeup tid=11\n"
                 "thread 10 12 \"a2\"\n"
                 "50 12 wait reason=x\n");
    assert_int_equal(r->nev, 5);
    assert_string_equal(r->calls, "P10 a;P20 b;T10/11 a1 f0;T20/21 b1 f0;E11;E21;E11;E21;T10/12 a2 f0;E12;");
    assert_int_equal(r->ev[1].ev.pid, 20);
    assert_int_equal(r->ev[4].ev.pid, 10);
    assert_int_equal(r->ev[4].ev.ts, 50);
    free(r);
}

static void test_many_threads(void **state)
{
    (void)state;
    enum { N = 3000 };
    size_t cap = (size_t)N * 80 + 64;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t l = (size_t)snprintf(text, cap, "#argus-trace 1\n");
    for (int i = 0; i < N; i++)
        l += (size_t)snprintf(text + l, cap - l, "thread %d %d \"t%d\"\n", 100000 + i / 10, 1 + i, i);
    for (int i = 0; i < N; i++)
        l += (size_t)snprintf(text + l, cap - l, "%d %d wakeup tid=%d\n", N - i, 1 + i, 1 + (i + 1) % N);
    rec *r = calloc(1, sizeof *r);
    ingest_ok(r, text);
    assert_int_equal(r->nev, N);
    assert_int_equal(r->threads, N);
    assert_int_equal(r->procs, N / 10);
    assert_int_equal(r->ev[63].ev.pid, 100000 + 63 / 10);
    free(text);
    free(r);
}

/* ---- errors: one per class, with the line ---- */

static void test_errors(void **state)
{
    (void)state;
    /* HEAD is lines 1-4 */
    expect_error("1 1001 wait reason=x\n1 1001 foo x=1\n", 6, "unknown event type \"foo\"");
    expect_error("1 1001 raw\n", 5, "unknown event type");
    expect_error("1 1234 wait reason=x\n", 5, "thread 1234 is not declared");
    expect_error("1 1001 wait reason=x\n1 1002 wait reason=x\n1000 1001 wait reason=x\n\n# c\n"
                 "900 1001 wait reason=x\n",
                 10, "thread 1001: timestamp 900 is before 1000 of line 7");
    expect_error("12x 1001 wait reason=x\n", 5, "bad timestamp");
    expect_error("-5 1001 wait reason=x\n", 5, "bad timestamp");
    expect_error("18446744073709551616 1001 wait reason=x\n", 5, "out of range");
    expect_error("0x10000000000000000 1001 wait reason=x\n", 5, "out of range");
    expect_error("1 abc wait reason=x\n", 5, "bad thread id");
    expect_error("1 4294967296 wait reason=x\n", 5, "bad thread id");
    expect_error("1\n", 5, "missing thread id");
    expect_error("1 1001\n", 5, "missing event type");
    expect_error("1 1001 flag_write addr=zz value=1\n", 5, "bad value for addr=");
    expect_error("1 1001 flag_write addr=0x1 value=x\n", 5, "bad value for value=");
    expect_error("1 1001 flag_write addr=-1 value=1\n", 5, "bad value for addr=");
    expect_error("1 1001 wakeup tid=4294967296\n", 5, "bad value for tid=");
    expect_error("1 1001 wait reason=x timeout=soon\n", 5, "bad value for timeout=");
    expect_error("1 1001 backtrace frames=0x1,,0x2\n", 5, "bad value for frames=");
    expect_error("1 1001 backtrace frames=\"0x1\"\n", 5, "bad value for frames=");
    expect_error("1 1001 voucher addr=0x1 on_behalf_of=me\n", 5, "bad value for on_behalf_of=");
    expect_error("1 1001 runloop_observer stage=later\n", 5, "bad value for stage=");
    expect_error("1 1001 dispatch_enqueue queue=0x1 block=0x100000000000000000\n", 5, "out of range");
    /* missing words and keys */
    expect_error("1 1001 syscall nr=1\n", 5, "missing begin or end");
    expect_error("1 1001 mach_msg dest=1\n", 5, "missing send or recv");
    expect_error("1 1001 mach_msg begin dest=1\n", 5, "expected send or recv");
    expect_error("1 1001 syscall begin\n", 5, "missing key name= or nr=");
    expect_error("1 1001 syscall end ret=0\n", 5, "missing key name= or nr=");
    expect_error("1 1001 backtrace\n", 5, "missing key frames=");
    expect_error("1 1001 nsapp_event begin\n", 5, "missing key class=");
    expect_error("1 1001 wait\n", 5, "missing key reason=");
    expect_error("1 1001 wakeup reason=x\n", 5, "missing key tid=");
    expect_error("1 1001 interrupt begin\n", 5, "missing key irq=");
    expect_error("1 1001 interrupt end\n", 5, "missing key irq=");
    expect_error("1 1001 timeshare\n", 5, "missing begin or end");
    expect_error("1 1001 dispatch_enqueue block=1\n", 5, "missing key queue=");
    expect_error("1 1001 dispatch_enqueue queue=1\n", 5, "missing key block=");
    expect_error("1 1001 dispatch_invoke begin queue=1\n", 5, "missing key block=");
    expect_error("1 1001 dispatch_mig_service\n", 5, "missing begin or end");
    expect_error("1 1001 runloop_submit block=1\n", 5, "missing key rl=");
    expect_error("1 1001 runloop_invoke begin rl=1\n", 5, "missing key block=");
    expect_error("1 1001 runloop_observer\n", 5, "missing key stage=");
    expect_error("1 1001 mach_msg send reply=1\n", 5, "missing key dest=");
    expect_error("1 1001 voucher addr=1\n", 5, "missing key on_behalf_of=");
    expect_error("1 1001 timer_arm timer=1\n", 5, "missing key deadline=");
    expect_error("1 1001 timer_cancel\n", 5, "missing key timer=");
    expect_error("1 1001 timer_callout end\n", 5, "missing key timer=");
    expect_error("1 1001 flag_write addr=1\n", 5, "missing key value=");
    expect_error("1 1001 flag_read value=1\n", 5, "missing key addr=");
    /* extra words */
    expect_error("1 1001 wait now reason=x\n", 5, "unexpected word \"now\"");
    expect_error("1 1001 timeshare begin end\n", 5, "unexpected word \"end\"");
    expect_error("1 1001 timeshare begin \"x\"\n", 5, "unexpected word");
    /* strings and tokens */
    expect_error("1 1001 wait reason=\"never closed\n", 5, "unterminated string");
    expect_error("1 1001 wait reason=\"ends in \\\"\n", 5, "unterminated string");
    expect_error("1 1001 wait reason=\n", 5, "missing value");
    expect_error("1 1001 wait reason=\"a\"b\n", 5, "missing blank");
    expect_error("1 1001 wait =x\n", 5, "stray");
    /* declarations */
    expect_error("proc x \"a\"\n", 5, "bad proc declaration");
    expect_error("proc 1\n", 5, "missing the quoted name");
    expect_error("proc 1 a\n", 5, "missing the quoted name");
    expect_error("proc 1 \"a\" b\n", 5, "unexpected \"b\"");
    expect_error("thread 1 \"a\"\n", 5, "bad tid");
    expect_error("thread 1 2 \"a\" main ui\n", 5, "unexpected \"ui\"");
    expect_error("thread 1 2 \"a\n", 5, "unterminated string");
    expect_error("symbol zz \"a\"\n", 5, "bad symbol declaration");
    expect_error("symbol 0x10\n", 5, "missing the quoted name");
    expect_error("process 1 \"a\"\n", 5, "unknown record \"process\"");
    /* the sink's own message gets PATH:LINE: in front */
    expect_error("1 1001 flag_read addr=1 value=666\n", 5, "sink says no");
}

static void test_first_line(void **state)
{
    (void)state;
    const char *bad[] = {"#argus-trace 2\nproc 1 \"a\"\n", "#argus-trace 1 \nproc 1 \"a\"\n",
                         "#argus-trace\n"};
    for (size_t i = 0; i < 3; i++) {
        char *path = write_temp(bad[i]);
        rec *r = calloc(1, sizeof *r);
        char err[512] = "";
        ingest_format f;
        assert_int_equal(run_file(r, path, &f, NULL, err, sizeof err), -1);
        assert_int_equal(f, INGEST_ARGUS);
        assert_non_null(strstr(err, ":1: "));
        assert_non_null(strstr(err, "#argus-trace 1"));
        unlink(path);
        free(path);
        free(r);
    }
}

static void test_line_too_long(void **state)
{
    (void)state;
    size_t n = INGEST_LINE_MAX + 10;
    char *text = malloc(n + 200);
    assert_non_null(text);
    int l = snprintf(text, 200, "#argus-trace 1\nthread 1 2 \"a\"\n1 2 wait reason=");
    memset(text + l, 'x', n);
    strcpy(text + l + n, "\n");
    char *path = write_temp(text);
    rec *r = calloc(1, sizeof *r);
    char err[512] = "";
    assert_int_equal(run_file(r, path, NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, ":3: line too long"));
    unlink(path);
    free(path);
    free(text);
    free(r);
}

/* ---- the scanner on its own ---- */

static void test_lexer(void **state)
{
    (void)state;
    const char *p = "  0x1F -12 word \"s \\\" t\" k=v=w k2=\"q\" k3=18446744073709551615\t";
    argus_tok t;
    assert_int_equal(ingest_argus_lex(&p, &t), ARGUS_TK_NUM);
    assert_true(t.v.hex && !t.v.neg && t.v.num == 0x1f);
    assert_int_equal(ingest_argus_lex(&p, &t), ARGUS_TK_NUM);
    assert_true(t.v.neg && t.v.num == 12);
    assert_int_equal(ingest_argus_lex(&p, &t), ARGUS_TK_WORD);
    assert_int_equal(t.v.n, 4);
    assert_int_equal(ingest_argus_lex(&p, &t), ARGUS_TK_STR);
    char buf[64];
    buf[ingest_argus_val_text(&t.v, buf)] = '\0';
    assert_string_equal(buf, "s \" t");
    assert_int_equal(ingest_argus_lex(&p, &t), ARGUS_TK_KV);
    assert_int_equal(t.klen, 1);
    assert_int_equal(t.v.kind, ARGUS_TK_WORD);
    assert_int_equal(t.v.n, 3);
    assert_int_equal(ingest_argus_lex(&p, &t), ARGUS_TK_KV);
    assert_int_equal(t.v.kind, ARGUS_TK_STR);
    assert_int_equal(ingest_argus_lex(&p, &t), ARGUS_TK_KV);
    assert_true(t.v.kind == ARGUS_TK_NUM && t.v.num == UINT64_MAX);
    assert_int_equal(ingest_argus_lex(&p, &t), ARGUS_TK_END);
    assert_int_equal(ingest_argus_lex(&p, &t), ARGUS_TK_END);
    const char *errs[] = {"18446744073709551616", "0x10000000000000000", "\"open", "k=", "\"a\"b", "1=2", "="};
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
        p = errs[i];
        if (ingest_argus_lex(&p, &t) != ARGUS_TK_ERR)
            fail_msg("'%s' scanned", errs[i]);
    }
    p = "0x000000000000000000001 12abc -";
    assert_int_equal(ingest_argus_lex(&p, &t), ARGUS_TK_NUM); /* leading zeros do not count */
    assert_int_equal(t.v.num, 1);
    assert_int_equal(ingest_argus_lex(&p, &t), ARGUS_TK_WORD);
    assert_int_equal(ingest_argus_lex(&p, &t), ARGUS_TK_WORD);
}

/* ---- ftrace markers ---- */

/* The ten markers of markers.sh, as both recordings show them. */
static void check_markers(const rec *r)
{
    static const struct {
        int type, phase;
        uint64_t obj;
        int64_t val;
        const char *attrs;
    } want[] = {
        {DB_EV_DISPATCH_ENQUEUE, DB_PH_NONE, 0xb10c, 0, "queue=0x1 block=0xb10c"},
        {DB_EV_DISPATCH_INVOKE, DB_PH_BEGIN, 0xb10c, 0, "queue=0x1 block=0xb10c func=0x3"},
        {DB_EV_FLAG_WRITE, DB_PH_NONE, 0x10, 1, "addr=0x10 value=1 sym=ready flag"},
        {DB_EV_FLAG_READ, DB_PH_NONE, 0x10, 1, "addr=0x10 value=1"},
        {DB_EV_DISPATCH_INVOKE, DB_PH_END, 0, 0, ""},
        {DB_EV_RAW, DB_PH_NONE, 0, 0, "buf=hello, not argus"},
        {DB_EV_WAKEUP, DB_PH_NONE, 0, 0, NULL}, /* tid= the shell's pid */
        {DB_EV_SYSCALL, DB_PH_BEGIN, 999, 0, "name=fake nr=999"},
        {DB_EV_SYSCALL, DB_PH_END, 999, -4, "nr=999 ret=-4"},
        {DB_EV_TIMER_ARM, DB_PH_NONE, 0x20, 0, "timer=0x20 deadline=5000 note=kept"},
    };
    assert_int_equal(r->nev, 10);
    uint32_t sh = r->ev[0].ev.tid;
    for (size_t i = 0; i < 10; i++) {
        const rec_event *e = &r->ev[i];
        assert_int_equal(e->ev.type, want[i].type);
        assert_int_equal(e->ev.phase, want[i].phase);
        assert_int_equal(e->ev.val, want[i].val);
        assert_int_equal(e->ev.ctx, DB_CTX_THREAD); /* both have a flag column */
        assert_true(e->ev.cpu != DB_CPU_NONE);
        assert_int_equal(e->ev.pid, e->ev.tid);
        if (i > 0)
            assert_true(e->ev.ts > r->ev[i - 1].ev.ts);
        if (want[i].type != DB_EV_RAW)
            assert_string_equal(e->name, db_evtype_name(want[i].type));
        if (want[i].type == DB_EV_WAKEUP) { /* from the subshell to the shell */
            char a[64];
            snprintf(a, sizeof a, "tid=%u reason=test", sh);
            assert_string_equal(e->attrs, a);
            assert_int_equal(e->ev.obj, sh);
            assert_int_not_equal(e->ev.tid, sh);
            continue;
        }
        assert_int_equal(e->ev.tid, sh);
        assert_int_equal(e->ev.obj, want[i].obj);
        assert_string_equal(e->attrs, want[i].attrs);
    }
}

static void test_markers_recorded(void **state)
{
    (void)state;
    const char *files[] = {"tests/traces/markers.trace", "tests/traces/markers.txt"};
    ingest_format fmts[] = {INGEST_FTRACE_TRACE, INGEST_TRACE_CMD_REPORT};
    for (int i = 0; i < 2; i++) {
        rec *r = calloc(1, sizeof *r);
        r->markers = true;
        char err[512] = "";
        ingest_format f;
        if (run_file(r, files[i], &f, NULL, err, sizeof err) != 0)
            fail_msg("%s", err);
        assert_int_equal(f, fmts[i]);
        check_markers(r);
        if (i == 0) /* tracefs: 1050.014471 */
            assert_int_equal(r->ev[0].ev.ts, 1050014471000ull);
        free(r);
    }
}

static void marker_error(const char *text, const char *want)
{
    char *path = write_temp(text);
    rec *r = calloc(1, sizeof *r);
    char err[512] = "";
    assert_int_equal(run_file(r, path, NULL, NULL, err, sizeof err), -1);
    if (strncmp(err, path, strlen(path)) != 0 || !strstr(err, want))
        fail_msg("error '%s' lacks '%s'", err, want);
    unlink(path);
    free(path);
    free(r);
}

static void test_markers_text(void **state)
{
    (void)state;
    rec *r = calloc(1, sizeof *r);
    r->markers = true;
    ingest_ok(r, "cpus=2\n"
                 "  cat-50 [001] 2.000001: print: tracing_mark_write: argus: wait reason=\"a b\"\\n\n"
                 "  cat-50 [001] 2.000002: tracing_mark_write: argus:   interrupt begin irq=9  \n"
                 "  cat-50 [001] 2.000003: tracing_mark_write: argus:x\n"
                 "  cat-50 [001] 2.000004: tracing_mark_write: argus\n"
                 "  cat-50 [001] 2.000005: print: tracing_mark_write: hello\\n\n");
    assert_int_equal(r->nev, 5);
    assert_int_equal(r->ev[0].ev.type, DB_EV_WAIT);
    assert_string_equal(r->ev[0].name, "wait");
    assert_string_equal(r->ev[0].attrs, "reason=a b");
    assert_int_equal(r->ev[0].ev.ts, 2000001000ull);
    assert_int_equal(r->ev[0].ev.cpu, 1);
    assert_int_equal(r->ev[0].ev.ctx, DB_CTX_UNKNOWN); /* report without -l */
    assert_int_equal(r->ev[1].ev.type, DB_EV_INTERRUPT);
    assert_int_equal(r->ev[1].ev.obj, 9);
    assert_string_equal(r->ev[1].attrs, "irq=9");
    assert_int_equal(r->ev[2].ev.type, DB_EV_RAW);
    assert_string_equal(r->ev[2].attrs, "buf=argus:x");
    assert_int_equal(r->ev[3].ev.type, DB_EV_RAW);
    assert_int_equal(r->ev[4].ev.type, DB_EV_RAW);
    free(r);

    const char *ok = "  cat-50 [001] 2.000001: tracing_mark_write: argus: wait reason=x\n";
    char buf[1024];
    snprintf(buf, sizeof buf, "%s  cat-50 [001] 2.000002: tracing_mark_write: argus: bogus x=1\n", ok);
    marker_error(buf, ":2: argus marker: unknown event type \"bogus\"");
    snprintf(buf, sizeof buf, "%s%s  cat-50 [001] 2.000003: print: tracing_mark_write: argus: wait\\n\n", ok, ok);
    marker_error(buf, ":3: argus marker: wait: missing key reason=");
    snprintf(buf, sizeof buf, "%s  cat-50 [001] 2.000002: tracing_mark_write: argus: \n", ok);
    marker_error(buf, ":2: argus marker: missing event type");
    snprintf(buf, sizeof buf, "%s  cat-50 [001] 2.000002: tracing_mark_write: argus: flag_write addr=x value=1\n",
             ok);
    marker_error(buf, ":2: argus marker: flag_write: bad value for addr=");
    snprintf(buf, sizeof buf, "%s  cat-50 [001] 2.000002: tracing_mark_write: argus: wait reason=\"x\n", ok);
    marker_error(buf, ":2: argus marker: wait: unterminated string");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_declarations),  cmocka_unit_test(test_event_types),
        cmocka_unit_test(test_attributes),    cmocka_unit_test(test_interleaved),
        cmocka_unit_test(test_many_threads),  cmocka_unit_test(test_errors),
        cmocka_unit_test(test_first_line),    cmocka_unit_test(test_line_too_long),
        cmocka_unit_test(test_lexer),         cmocka_unit_test(test_markers_recorded),
        cmocka_unit_test(test_markers_text),  cmocka_unit_test(test_dump_events),
        cmocka_unit_test(test_dump_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
