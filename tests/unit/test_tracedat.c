/* tests/unit/test_tracedat.c -- the trace.dat reader (ingest/ftrace/tracedat.c):
 * tests/traces/lockchain-anomaly.dat must give exactly the events of its
 * `trace-cmd report -l` text in both print forms -- printed with
 * libtraceevent's plugins (lockchain-anomaly.txt) and without
 * (lockchain-anomaly-noplugin.txt) -- but with the records' nanosecond
 * timestamps where the text has microseconds; cut and garbage files must
 * fail with the file's name and a non-zero status. */
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
#include "ingest/ingest.h"

#define DAT "tests/traces/lockchain-anomaly.dat"
#define TXT "tests/traces/lockchain-anomaly.txt"
#define TXT_NOPLUGIN "tests/traces/lockchain-anomaly-noplugin.txt"

/* ---- a sink that keeps every event and the last name of every thread ---- */

typedef struct ev_copy {
    db_event ev;
    char name[64];
    char attrs[1024];
} ev_copy;

typedef struct th_copy {
    uint32_t tid, pid;
    char name[DB_NAME_MAX];
} th_copy;

typedef struct rec {
    ev_copy *ev;
    size_t nev, cap;
    th_copy th[1024];
    size_t nth;
    size_t skips, order_errors;
} rec;

static th_copy *find_thread(rec *r, uint32_t tid)
{
    for (size_t i = 0; i < r->nth; i++)
        if (r->th[i].tid == tid)
            return &r->th[i];
    return NULL;
}

static int on_thread(void *ctx, const db_thread *t, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    rec *r = ctx;
    th_copy *th = find_thread(r, t->tid);
    if (!th && r->nth < 1024)
        th = &r->th[r->nth++];
    if (th) {
        th->tid = t->tid;
        th->pid = t->pid;
        memcpy(th->name, t->name, DB_NAME_MAX);
    }
    return 0;
}

static int on_event(void *ctx, db_event *ev, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    rec *r = ctx;
    th_copy *th = find_thread(r, ev->tid);
    if (!th || th->pid != ev->pid)
        r->order_errors++;
    if (r->nev == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 1024;
        r->ev = realloc(r->ev, r->cap * sizeof *r->ev);
        assert_non_null(r->ev);
    }
    ev_copy *e = &r->ev[r->nev++];
    memset(e, 0, sizeof *e);
    e->ev = *ev;
    snprintf(e->name, sizeof e->name, "%s", ev->name);
    assert_true(ev->attrs_len <= sizeof e->attrs);
    memcpy(e->attrs, ev->attrs, ev->attrs_len);
    e->ev.name = NULL;
    e->ev.attrs = NULL;
    return 0;
}

static void on_skip(void *ctx) { ((rec *)ctx)->skips++; }

static int run(rec *r, const char *path, ingest_format *fmt, ingest_stats *st, char *err, size_t errlen)
{
    ingest_sink s = {.ctx = r, .thread = on_thread, .event = on_event, .skip = on_skip};
    /* the text traces of tests/traces were recorded on x86-64 */
    ingest_opts o = {.arch = "x86_64"};
    return ingest_file_opts(path, &s, &o, fmt, st, err, errlen);
}

static char *write_temp(const void *data, size_t n)
{
    char *path = strdup("/tmp/test_tracedat_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, n), (ssize_t)n);
    close(fd);
    return path;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* ---- tests ---- */

static void free_rec(rec *r)
{
    free(r->ev);
    free(r);
}

/* The .dat's events against those of one report text of it. */
static void same_events_as(const rec *a, const ingest_stats *sa, const char *txt)
{
    rec *b = calloc(1, sizeof *b);
    assert_non_null(b);
    char err[512] = "";
    ingest_format fb;
    ingest_stats sb;
    if (run(b, txt, &fb, &sb, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(fb, INGEST_TRACE_CMD_REPORT);
    assert_int_equal(a->nev, b->nev);
    assert_int_equal(sa->events, sb.events);
    assert_int_equal(sb.skipped, 1); /* the text's cpus=2 header: no event, no line in a .dat */
    assert_int_equal(sa->skipped, 0);
    for (size_t i = 0; i < a->nev; i++) {
        const ev_copy *x = &a->ev[i], *y = &b->ev[i];
        /* report -l prints microseconds, rounded */
        if ((x->ev.ts + 500) / 1000 * 1000 != y->ev.ts || x->ev.tid != y->ev.tid || x->ev.pid != y->ev.pid ||
            x->ev.cpu != y->ev.cpu || x->ev.type != y->ev.type || x->ev.phase != y->ev.phase ||
            x->ev.ctx != y->ev.ctx || x->ev.obj != y->ev.obj || x->ev.val != y->ev.val ||
            strcmp(x->name, y->name) != 0 || x->ev.attrs_len != y->ev.attrs_len ||
            memcmp(x->attrs, y->attrs, x->ev.attrs_len) != 0)
            fail_msg("%s: event %zu differs: %s at %llu on %u (dat) / %s at %llu on %u (txt)", txt, i + 1,
                     x->name, (unsigned long long)x->ev.ts, x->ev.tid, y->name, (unsigned long long)y->ev.ts,
                     y->ev.tid);
    }
    /* the same threads in the same processes; report -l cuts the comm
     * column to 8 characters, the binary file has it whole */
    assert_int_equal(a->nth, b->nth);
    for (size_t i = 0; i < b->nth; i++) {
        const th_copy *t = NULL;
        for (size_t j = 0; j < a->nth; j++)
            if (a->th[j].tid == b->th[i].tid)
                t = &a->th[j];
        assert_non_null(t);
        assert_int_equal(t->pid, b->th[i].pid);
        assert_int_equal(strncmp(t->name, b->th[i].name, strlen(b->th[i].name)), 0);
    }
    free_rec(b);
}

static void test_same_events_as_report(void **state)
{
    (void)state;
    rec *a = calloc(1, sizeof *a);
    assert_non_null(a);
    char err[512] = "";
    ingest_format fa;
    ingest_stats sa;
    if (run(a, DAT, &fa, &sa, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(fa, INGEST_TRACE_DAT);
    assert_string_equal(ingest_format_name(fa), "trace-dat");
    assert_int_equal(a->nev, 1105);
    assert_int_equal(a->order_errors, 0);
    same_events_as(a, &sa, TXT);
    same_events_as(a, &sa, TXT_NOPLUGIN);
    th_copy *sealed = find_thread(a, 1528);
    assert_non_null(sealed);
    assert_string_equal(sealed->name, "memfd:sealed-91");
    free_rec(a);
}

/* The records' own timestamps, not the text's microseconds: the first
 * event is sys_exit at 1088.966940 in the text. */
static void test_nanoseconds(void **state)
{
    (void)state;
    rec *a = calloc(1, sizeof *a);
    assert_non_null(a);
    char err[512] = "";
    if (run(a, DAT, NULL, NULL, err, sizeof err) != 0)
        fail_msg("%s", err);
    size_t sub_us = 0;
    for (size_t i = 0; i < a->nev; i++) {
        sub_us += a->ev[i].ev.ts % 1000 != 0;
        if (i)
            assert_true(a->ev[i].ev.ts >= a->ev[i - 1].ev.ts);
    }
    assert_true(a->ev[0].ev.ts / 1000 == 1088966939 || a->ev[0].ev.ts / 1000 == 1088966940);
    assert_true(a->ev[0].ev.ts != 1088966940000ull);
    assert_true(sub_us > a->nev * 9 / 10); /* one in 1000 may fall on a whole microsecond */
    free_rec(a);
}

static void test_detect(void **state)
{
    (void)state;
    assert_int_equal(ingest_detect("\x17\x08\x44tracing6\0", 12), INGEST_TRACE_DAT);
    assert_int_equal(ingest_detect("\x17\x08\x44trac", 7), INGEST_TRACE_DAT); /* cut short */
    assert_int_equal(ingest_detect("\x17\x08\x45tracing", 10), INGEST_UNKNOWN);
    assert_int_equal(ingest_detect("cpus=2\n", 7), INGEST_TRACE_CMD_REPORT);
}

/* a failure names the file; nothing is read as events */
static void expect_fail(const void *data, size_t n, const char *want)
{
    char *path = write_temp(data, n);
    rec *r = calloc(1, sizeof *r);
    assert_non_null(r);
    char err[512] = "";
    assert_int_equal(run(r, path, NULL, NULL, err, sizeof err), -1);
    if (strncmp(err, path, strlen(path)) != 0 || !strstr(err, want))
        fail_msg("error '%s' does not name %s or say '%s'", err, path, want);
    assert_int_equal(r->nev, 0);
    free(r->ev);
    free(r);
    unlink(path);
    free(path);
}

static void test_cut_and_garbage(void **state)
{
    (void)state;
    size_t len;
    unsigned char *dat = slurp(DAT, &len);
    expect_fail(dat, 7, ": offset 7: the file ends inside the trace.dat magic");
    expect_fail(dat, 100, "cut short or corrupt");
    expect_fail(dat, 600000, "cut short or corrupt");
    expect_fail(dat, len - 10000, "cut short or corrupt"); /* inside the CPU data */
    unsigned char junk[4096];
    memcpy(junk, dat, 10);
    for (size_t i = 10; i < sizeof junk; i++)
        junk[i] = (unsigned char)(i * 7919u >> 3);
    expect_fail(junk, sizeof junk, "cut short or corrupt");
    free(dat);
}

static void test_missing_file(void **state)
{
    (void)state;
    rec *r = calloc(1, sizeof *r);
    assert_non_null(r);
    char err[512] = "";
    assert_int_equal(run(r, "/nonexistent/x.dat", NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/x.dat"));
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_events_as_report),
        cmocka_unit_test(test_nanoseconds),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_cut_and_garbage),
        cmocka_unit_test(test_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
