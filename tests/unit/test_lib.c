/* tests/unit/test_lib.c -- libargusq's public API (include/argusq.h) on
 * the real traces: ingest with options, progress and warnings; statements
 * into a buffer, a stream and a FILE, the same bytes each way; errors with
 * their positions; sessions; and many readers in one process: four threads
 * on one handle, and on two handles of the same file (one environment,
 * lib/registry.c) while a fifth thread ingests through one of them, every
 * answer the same as a lone thread's. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/argusq.h"

#define ANOMALY "tests/traces/lockchain-anomaly.txt"
#define NORMAL "tests/traces/lockchain-normal.txt"

static char tmpdir[64], path[128];

static void rm_rf(const char *dir)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* A fresh archive holding "anomaly" and "normal". */
static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/argusq-lib-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(path, sizeof path, "%s/a.db", tmpdir);
    argusq_error e;
    argusq_ingest_opts o = {.size = sizeof o, .name = "anomaly", .arch = "x86_64"};
    if (argusq_ingest_into(path, 0, ANOMALY, &o, NULL, &e))
        return fprintf(stderr, "%s\n", e.message), -1;
    o.name = "normal";
    if (argusq_ingest_into(path, 0, NORMAL, &o, NULL, &e))
        return fprintf(stderr, "%s\n", e.message), -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rm_rf(tmpdir);
    return 0;
}

/* src run on a into a buffer (JSON unless format says otherwise); the
 * caller frees it. */
static char *query(argusq_archive *a, const char *src, int format, const char *trace)
{
    argusq_query_opts o = {.size = sizeof o, .format = format, .trace = trace};
    argusq_error e;
    char *out;
    size_t len;
    long n = argusq_query(a, src, &o, &out, &len, &e);
    if (n < 0)
        fail_msg("%s: %s", src, e.message);
    assert_non_null(out);
    assert_int_equal(strlen(out), len);
    return out;
}

static void test_version_and_formats(void **state)
{
    (void)state;
    assert_string_equal(argusq_version(), ARGUSQ_VERSION);
    assert_int_equal(argusq_format_from_name("json"), ARGUSQ_FORMAT_JSON);
    assert_int_equal(argusq_format_from_name("table"), ARGUSQ_FORMAT_TABLE);
    assert_int_equal(argusq_format_from_name("perfetto"), ARGUSQ_FORMAT_PERFETTO);
    assert_int_equal(argusq_format_from_name("xml"), -1);
    argusq_error e;
    assert_int_equal(argusq_label_check("run", "slow", &e), 0);
    assert_int_equal(argusq_label_check("1run", "slow", &e), -1);
    assert_int_equal(e.code, ARGUSQ_ERR_USAGE);
    assert_non_null(strstr(e.message, "a label is a letter"));
}

struct progress_seen {
    unsigned calls, phases, warnings;
    uint64_t events, bytes, total;
    char warning[512];
};

static void on_progress(void *ctx, uint64_t bytes, uint64_t total, uint64_t events, const char *phase)
{
    struct progress_seen *p = ctx;
    p->calls++;
    if (phase)
        p->phases++;
    p->events = events;
    p->bytes = bytes;
    p->total = total;
}

static void on_warning(void *ctx, const char *msg)
{
    struct progress_seen *p = ctx;
    p->warnings++;
    snprintf(p->warning, sizeof p->warning, "%s", msg);
}

/* An ingest through a handle, with labels, progress and a warning (a raw
 * trace without --arch leaves its syscalls unnamed); its info is the
 * catalog's. */
static void test_ingest_info_progress_warning(void **state)
{
    (void)state;
    argusq_error e;
    argusq_archive *a = argusq_open(path, ARGUSQ_OPEN_WRITE, &e);
    assert_non_null(a);
    assert_string_equal(argusq_path(a), path);
    const char *labels[] = {"run=slow", "box=ci 7"};
    struct progress_seen seen = {0};
    argusq_ingest_opts o = {.size = sizeof o, .name = "raw", .labels = labels, .nlabels = 2,
                            .progress = on_progress, .warning = on_warning, .ctx = &seen, .threads = 1};
    argusq_ingest_info info = {.size = sizeof info};
    assert_int_equal(argusq_ingest(a, "tests/traces/lockchain-anomaly-raw.trace", &o, &info, &e), 0);
    assert_string_equal(info.trace, "raw");
    assert_int_equal(info.events, 1083);
    assert_int_equal(info.nodes, 227);
    assert_int_equal(info.unnamed, 414);
    assert_true(info.seconds > 0);
    assert_true(seen.calls >= 3 && seen.phases == 2); /* the read, then two phases */
    assert_int_equal(seen.events, 1083);
    assert_true(seen.total > 0 && seen.bytes == seen.total);
    assert_int_equal(seen.warnings, 1);
    assert_non_null(strstr(seen.warning, "414 syscall events keep their number without a name"));
    char *out = query(a, "traces where label.run = \"slow\"", ARGUSQ_FORMAT_JSON, NULL);
    assert_non_null(strstr(out, "\"name\":\"raw\""));
    assert_non_null(strstr(out, "\"box\":\"ci 7\""));
    argusq_free(out);
    /* a name taken: refused, nothing kept */
    assert_int_equal(argusq_ingest(a, NORMAL, &o, NULL, &e), -1);
    assert_int_equal(e.code, ARGUSQ_ERR_INGEST);
    /* a bad label, a missing file */
    const char *bad[] = {"nokey"};
    argusq_ingest_opts ob = {.size = sizeof ob, .labels = bad, .nlabels = 1};
    assert_int_equal(argusq_ingest(a, NORMAL, &ob, NULL, &e), -1);
    assert_int_equal(e.code, ARGUSQ_ERR_USAGE);
    assert_int_equal(argusq_ingest(a, "tests/traces/no-such.txt", NULL, NULL, &e), -1);
    assert_int_equal(e.code, ARGUSQ_ERR_IO);
    assert_non_null(strstr(e.message, "No such file"));
    argusq_close(a);
}

/* Every 4096th event takes the sink's progress path (lib/ingest.c's
 * sink_event_progress), out of line: a trace of 15,128 events, read in
 * this thread and in a second, has them all stored and counted. */
static void test_ingest_progress_events(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 2; threads++) {
        argusq_error e;
        argusq_archive *a = argusq_open(path, ARGUSQ_OPEN_WRITE, &e);
        assert_non_null(a);
        struct progress_seen seen = {0};
        argusq_ingest_opts o = {.size = sizeof o, .name = threads == 1 ? "disk1" : "disk2",
                                .progress = on_progress, .ctx = &seen, .threads = threads};
        argusq_ingest_info info = {.size = sizeof info};
        assert_int_equal(argusq_ingest(a, "tests/traces/diskio-anomaly.trace", &o, &info, &e), 0);
        assert_int_equal(info.events, 15128);
        assert_int_equal(seen.events, 15128);
        argusq_close(a);
    }
}

/* A rules file's error names the file, its line and column, and gives the
 * line for the caret; an ingest's bad line quotes it defanged. */
static void test_ingest_errors(void **state)
{
    (void)state;
    char rules[160], bad[160];
    snprintf(rules, sizeof rules, "%s/bad.rules", tmpdir);
    FILE *f = fopen(rules, "w");
    assert_non_null(f);
    fputs("rule ignore wakeup where tid = 4124;\nrule boundray x;\n", f);
    fclose(f);
    argusq_error e;
    argusq_ingest_opts o = {.size = sizeof o, .name = "r", .rules = rules};
    assert_int_equal(argusq_ingest_into(path, 0, ANOMALY, &o, NULL, &e), -1);
    assert_int_equal(e.code, ARGUSQ_ERR_STATEMENT);
    assert_string_equal(e.source, rules);
    assert_int_equal(e.line, 2);
    assert_int_equal(e.col, 6);
    assert_string_equal(e.text, "rule boundray x;");
    assert_string_equal(e.message, "syntax error near \"boundray\"");
    snprintf(bad, sizeof bad, "%s/bad.txt", tmpdir);
    f = fopen(bad, "w");
    FILE *in = fopen(ANOMALY, "r");
    assert_non_null(f);
    assert_non_null(in);
    char line[4096];
    for (int i = 1; fgets(line, sizeof line, in) && i < 60; i++)
        fputs(i == 41 ? "garbage\x1b[31m\n" : line, f);
    fclose(in);
    fclose(f);
    assert_int_equal(argusq_ingest_into(path, 0, bad, NULL, NULL, &e), -1);
    assert_int_equal(e.code, ARGUSQ_ERR_INGEST);
    assert_non_null(strstr(e.message, "bad.txt:41:"));
    assert_non_null(strstr(e.message, "garbage?[31m"));
    /* nothing of either is in the archive; a missing trace file made no archive */
    argusq_archive *a = argusq_open(path, ARGUSQ_OPEN_READ, &e);
    assert_non_null(a);
    char *out = query(a, "traces", ARGUSQ_FORMAT_CSV, NULL);
    assert_null(strstr(out, "\nr,"));
    assert_null(strstr(out, "bad.txt"));
    argusq_free(out);
    argusq_close(a);
    char other[160];
    snprintf(other, sizeof other, "%s/other.db", tmpdir);
    assert_int_equal(argusq_ingest_into(other, 0, "tests/traces/no-such.txt", NULL, NULL, &e), -1);
    assert_int_equal(e.code, ARGUSQ_ERR_IO);
    struct stat st;
    assert_int_equal(stat(other, &st), -1);
    assert_null(argusq_open(other, ARGUSQ_OPEN_READ, &e));
    assert_int_equal(e.code, ARGUSQ_ERR_ARCHIVE);
    assert_non_null(strstr(e.message, "no such archive"));
}

/* Errors about a token say where it is; a script's failing statement says
 * which it was and where it begins. */
static void test_statement_errors(void **state)
{
    (void)state;
    argusq_error e;
    argusq_archive *a = argusq_open(path, ARGUSQ_OPEN_READ, &e);
    assert_non_null(a);
    char *out;
    assert_int_equal(argusq_query(a, "find nodes wher tid = 1", NULL, &out, NULL, &e), -1);
    argusq_free(out);
    assert_int_equal(e.code, ARGUSQ_ERR_STATEMENT);
    assert_int_equal(e.line, 1);
    assert_int_equal(e.col, 12);
    assert_int_equal(e.offset, 11);
    assert_int_equal(e.stmt_count, 0); /* did not parse */
    assert_int_equal(argusq_query(a, "traces;\n\n  use trace \"nope\"; traces", NULL, &out, NULL, &e), -1);
    assert_int_equal(e.line, 3);
    assert_int_equal(e.col, 13);
    assert_int_equal(e.offset, 21);
    assert_int_equal(e.stmt_index, 1);
    assert_int_equal(e.stmt_count, 3);
    assert_int_equal(e.stmt_line, 3);
    assert_non_null(strstr(e.message, "no trace named \"nope\""));
    argusq_free(out);
    argusq_close(a);
}

/* The three outputs give the same bytes; the stream says after each
 * statement which trace it read; a writer that says stop stops the run. */
struct collect {
    char *buf;
    size_t len;
    char traces[8][64];
    size_t nstmts;
    int stop_after; /* calls of write before it says stop; 0: never */
    int calls;
};

static int collect_write(void *ctx, const char *buf, size_t len)
{
    struct collect *c = ctx;
    c->buf = realloc(c->buf, c->len + len + 1);
    memcpy(c->buf + c->len, buf, len);
    c->len += len;
    c->buf[c->len] = 0;
    return c->stop_after && ++c->calls >= c->stop_after;
}

static void collect_statement(void *ctx, size_t index, const char *trace)
{
    struct collect *c = ctx;
    assert_int_equal(index, c->nstmts);
    snprintf(c->traces[c->nstmts++], sizeof c->traces[0], "%s", trace);
}

static void test_outputs_agree(void **state)
{
    (void)state;
    const char *src = "traces; find nodes where thread = \"ui-main\" order by blocked desc limit 3; "
                      "slice back from node 79 depth 3 in trace \"normal\"";
    argusq_error e;
    argusq_archive *a = argusq_open(path, ARGUSQ_OPEN_READ, &e);
    assert_non_null(a);
    for (int format = ARGUSQ_FORMAT_JSON; format <= ARGUSQ_FORMAT_PERFETTO; format++) {
        if (format == ARGUSQ_FORMAT_DOT || format == ARGUSQ_FORMAT_SVG || format == ARGUSQ_FORMAT_PERFETTO)
            src = "slice back from node 79 depth 3 in trace \"normal\"";
        argusq_query_opts o = {.size = sizeof o, .format = format, .trace = "anomaly"};
        argusq_session *s = argusq_session_new(a, &o, &e);
        assert_non_null(s);
        char *buf;
        size_t len;
        long n = argusq_session_query(s, src, strlen(src), &buf, &len, &e);
        if (n < 0)
            fail_msg("%s", e.message);
        struct collect c = {0};
        argusq_output out = {.size = sizeof out, .write = collect_write, .statement = collect_statement, .ctx = &c};
        assert_int_equal(argusq_session_stream(s, src, strlen(src), &out, &e), n);
        assert_int_equal(c.len, len);
        assert_memory_equal(c.buf, buf, len);
        assert_int_equal(c.nstmts, (size_t)n);
        assert_string_equal(c.traces[n - 1], "normal"); /* the slice's in trace */
        if (n == 3) {
            assert_string_equal(c.traces[0], ""); /* traces reads no one trace */
            assert_string_equal(c.traces[1], "anomaly"); /* the session's */
        }
        FILE *f = tmpfile();
        assert_non_null(f);
        assert_int_equal(argusq_session_run_file(s, src, strlen(src), f, &e), n);
        assert_int_equal((size_t)ftell(f), len);
        rewind(f);
        char *back = malloc(len + 1);
        assert_int_equal(fread(back, 1, len, f), len);
        assert_memory_equal(back, buf, len);
        if (format == ARGUSQ_FORMAT_SVG)
            assert_non_null(strstr(buf, "</svg>"));
        free(back);
        fclose(f);
        free(c.buf);
        argusq_free(buf);
        argusq_session_free(s);
    }
    struct collect c = {.stop_after = 1};
    argusq_output out = {.size = sizeof out, .write = collect_write, .ctx = &c};
    assert_int_equal(argusq_query_stream(a, "traces; traces; traces", NULL, &out, &e), -1);
    assert_int_equal(e.code, ARGUSQ_ERR_STOPPED);
    assert_int_equal(e.stmt_index, 0);
    free(c.buf);
    argusq_close(a);
}

/* A session keeps `use trace`; `help` answers without an archive. */
static void test_session_use_trace(void **state)
{
    (void)state;
    argusq_error e;
    argusq_archive *a = argusq_open(path, ARGUSQ_OPEN_READ, &e);
    argusq_session *s = argusq_session_new(a, NULL, &e);
    assert_non_null(s);
    assert_string_equal(argusq_session_trace(s), "");
    char *out;
    const char *use = "use trace \"normal\"";
    assert_int_equal(argusq_session_query(s, use, strlen(use), &out, NULL, &e), 1);
    assert_string_equal(out, "{\"trace\":\"normal\"}\n");
    argusq_free(out);
    assert_string_equal(argusq_session_trace(s), "normal");
    struct collect c = {0};
    argusq_output o = {.size = sizeof o, .write = collect_write, .statement = collect_statement, .ctx = &c};
    const char *find = "find nodes limit 1";
    assert_int_equal(argusq_session_stream(s, find, strlen(find), &o, &e), 1);
    assert_string_equal(c.traces[0], "normal");
    free(c.buf);
    argusq_session_free(s);
    argusq_close(a);
    s = argusq_session_new(NULL, NULL, &e);
    assert_int_equal(argusq_session_query(s, "help", 4, &out, NULL, &e), 1);
    assert_non_null(strstr(out, "slice"));
    argusq_free(out);
    assert_int_equal(argusq_session_query(s, "traces", 6, &out, NULL, &e), -1);
    assert_int_equal(e.code, ARGUSQ_ERR_USAGE);
    argusq_free(out);
    argusq_session_free(s);
}

/* Tables as a REPL shows them: the rows counted (a JSON answer has none),
 * without the header row, and a block per row (psql's \x). */
static void test_session_display(void **state)
{
    (void)state;
    argusq_error e;
    argusq_archive *a = argusq_open(path, ARGUSQ_OPEN_READ, &e);
    argusq_query_opts qo = {.size = sizeof qo, .format = ARGUSQ_FORMAT_TABLE};
    argusq_session *s = argusq_session_new(a, &qo, &e);
    assert_non_null(s);
    assert_int_equal(argusq_session_rows(s), -1);
    char *out;
    const char *find = "find nodes where kind = \"thread\" limit 3";
    assert_int_equal(argusq_session_query(s, find, strlen(find), &out, NULL, &e), 1);
    assert_int_equal(argusq_session_rows(s), 3);
    assert_non_null(strstr(out, "node  kind"));
    argusq_free(out);
    assert_int_equal(argusq_session_set_display(s, ARGUSQ_DISPLAY_NO_HEADERS, &e), 0);
    assert_int_equal(argusq_session_query(s, find, strlen(find), &out, NULL, &e), 1);
    assert_null(strstr(out, "node  kind"));
    int lines = 0;
    for (const char *c = out; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 3);
    argusq_free(out);
    assert_int_equal(argusq_session_set_display(s, ARGUSQ_DISPLAY_EXPANDED, &e), 0);
    assert_int_equal(argusq_session_query(s, find, strlen(find), &out, NULL, &e), 1);
    assert_non_null(strstr(out, "-[ RECORD 3 ]"));
    assert_null(strstr(out, "-[ RECORD 4 ]"));
    assert_non_null(strstr(out, "\nkind     | thread\n")); /* under the widest name, duration */
    argusq_free(out);
    assert_int_equal(argusq_session_set_display(s, 8, &e), -1);
    assert_int_equal(e.code, ARGUSQ_ERR_USAGE);
    assert_int_equal(argusq_session_set_format(s, ARGUSQ_FORMAT_JSON, &e), 0);
    assert_int_equal(argusq_session_query(s, find, strlen(find), &out, NULL, &e), 1);
    assert_int_equal(argusq_session_rows(s), -1);
    argusq_free(out);
    argusq_session_free(s);
    argusq_close(a);
}

/* ---- the caller's interrupt ----
 * What argusq's Ctrl-C handler sets, set here by the library's own
 * callbacks in the middle of a run, as a signal would come: no timing. */

struct interrupter {
    volatile sig_atomic_t flag;
    size_t len;        /* output seen */
    const char *phase; /* ingest: set the flag at this progress phase (NULL: while reading) */
    unsigned calls;
};

static int interrupt_write(void *ctx, const char *buf, size_t len)
{
    (void)buf;
    struct interrupter *k = ctx;
    k->len += len;
    k->flag = 1; /* after the first 64 KiB of output */
    return 0;
}

static void interrupt_progress(void *ctx, uint64_t bytes, uint64_t total, uint64_t events, const char *phase)
{
    (void)bytes, (void)total, (void)events;
    struct interrupter *k = ctx;
    k->calls++;
    if (k->phase ? phase && strcmp(phase, k->phase) == 0 : !phase)
        k->flag = 1;
}

/* A statement stops at its next read: its output cut short, the run
 * failed with INTERRUPTED, no statement after it run; the session (its
 * `use trace`) goes on once the flag is cleared. */
static void test_interrupted_statement(void **state)
{
    (void)state;
    argusq_error e;
    argusq_archive *a = argusq_open(path, ARGUSQ_OPEN_READ, &e);
    assert_non_null(a);
    char *whole = query(a, "find events in trace \"normal\"", ARGUSQ_FORMAT_JSON, NULL);
    size_t whole_len = strlen(whole);
    assert_true(whole_len > 2 * 65536); /* the output comes in pieces of 64 KiB */
    argusq_free(whole);
    struct interrupter k = {0};
    argusq_query_opts qo = {.size = sizeof qo, .format = ARGUSQ_FORMAT_JSON, .interrupt = &k.flag};
    argusq_session *s = argusq_session_new(a, &qo, &e);
    assert_non_null(s);
    char *out;
    const char *use = "use trace \"normal\"";
    assert_int_equal(argusq_session_query(s, use, strlen(use), &out, NULL, &e), 1);
    argusq_free(out);
    struct collect c = {0};
    argusq_output o = {.size = sizeof o, .write = interrupt_write, .statement = collect_statement, .ctx = &k};
    const char *two = "find events; traces";
    assert_int_equal(argusq_session_stream(s, two, strlen(two), &o, &e), -1);
    assert_int_equal(e.code, ARGUSQ_ERR_INTERRUPTED);
    assert_string_equal(e.message, "interrupted");
    assert_int_equal(e.stmt_index, 0);
    assert_true(k.len > 0 && k.len < whole_len);
    /* while the flag stays set, nothing runs */
    assert_int_equal(argusq_session_query(s, "traces", 6, &out, NULL, &e), -1);
    assert_int_equal(e.code, ARGUSQ_ERR_INTERRUPTED);
    assert_string_equal(out, "");
    argusq_free(out);
    /* cleared: the session's trace is still "normal" */
    k.flag = 0;
    assert_string_equal(argusq_session_trace(s), "normal");
    o.write = collect_write;
    o.ctx = &c;
    const char *find = "find nodes limit 1";
    assert_int_equal(argusq_session_stream(s, find, strlen(find), &o, &e), 1);
    assert_string_equal(c.traces[0], "normal");
    free(c.buf);
    argusq_session_free(s);
    argusq_close(a);
}

/* An ingest interrupted while it reads, or once it writes the archive,
 * keeps nothing of its trace; the name is free for the next. */
static void test_interrupted_ingest(void **state)
{
    (void)state;
    argusq_error e;
    argusq_archive *a = argusq_open(path, ARGUSQ_OPEN_WRITE, &e);
    assert_non_null(a);
    char *before = query(a, "traces", ARGUSQ_FORMAT_JSON, NULL);
    const char *phases[] = {NULL, "building the graph", "writing the archive"};
    for (int threads = 1; threads <= 2; threads++)
        for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++) {
            struct interrupter k = {.phase = phases[i]};
            argusq_ingest_opts o = {.size = sizeof o, .name = "disk", .progress = interrupt_progress, .ctx = &k,
                                    .threads = threads, .interrupt = &k.flag};
            assert_int_equal(argusq_ingest(a, "tests/traces/diskio-anomaly.trace", &o, NULL, &e), -1);
            assert_int_equal(e.code, ARGUSQ_ERR_INTERRUPTED);
            assert_string_equal(e.message, "tests/traces/diskio-anomaly.trace: interrupted; nothing of it was kept");
            assert_true(k.calls > 0);
            char *after = query(a, "traces", ARGUSQ_FORMAT_JSON, NULL);
            assert_string_equal(after, before);
            argusq_free(after);
        }
    argusq_ingest_opts o = {.size = sizeof o, .name = "disk"};
    argusq_ingest_info info = {.size = sizeof info};
    assert_int_equal(argusq_ingest(a, "tests/traces/diskio-anomaly.trace", &o, &info, &e), 0);
    assert_int_equal(info.events, 15128);
    argusq_free(before);
    argusq_close(a);
}

/* ---- many readers ---- */

static const char *const stmts[] = {
    "find nodes where thread = \"ui-main\" order by blocked desc limit 5",
    "slice back from node 79 depth 6",
    "diagnose thread \"ui-main\" against trace \"anomaly\"",
    "match node 79 in traces where name = \"anomaly\"",
    "find events where tid = 4111 limit 50",
    "critical path of thread \"ui-main\"",
};
#define NSTMTS (sizeof stmts / sizeof stmts[0])
#define ROUNDS 8

struct reader {
    argusq_archive *a[2]; /* a[1] may be a[0] */
    char *const *want;
    int id, failures;
};

static void *reader_main(void *p)
{
    struct reader *r = p;
    argusq_query_opts o = {.size = sizeof o, .format = ARGUSQ_FORMAT_JSON, .trace = "normal"};
    argusq_error e;
    for (int round = 0; round < ROUNDS; round++)
        for (size_t i = 0; i < NSTMTS; i++) {
            size_t k = (i + (size_t)r->id) % NSTMTS; /* the threads in different orders */
            char *out;
            if (argusq_query(r->a[(round + r->id) & 1], stmts[k], &o, &out, NULL, &e) < 0 ||
                strcmp(out, r->want[k]) != 0)
                r->failures++;
            argusq_free(out);
        }
    return NULL;
}

struct writer {
    argusq_archive *a;
    int rc;
    char msg[sizeof ((argusq_error *)0)->message];
};

static void *writer_main(void *p)
{
    struct writer *w = p;
    argusq_error e;
    argusq_ingest_opts o = {.size = sizeof o, .name = "during", .arch = "x86_64"};
    w->rc = argusq_ingest(w->a, ANOMALY, &o, NULL, &e);
    snprintf(w->msg, sizeof w->msg, "%s", e.message);
    return NULL;
}

static void run_readers(argusq_archive *a0, argusq_archive *a1, bool with_writer)
{
    char *want[NSTMTS];
    for (size_t i = 0; i < NSTMTS; i++) /* what one thread alone gets */
        want[i] = query(a0, stmts[i], ARGUSQ_FORMAT_JSON, "normal");
    pthread_t t[5];
    struct reader r[4];
    struct writer w = {.a = a1};
    for (int i = 0; i < 4; i++) {
        r[i] = (struct reader){.a = {a0, a1}, .want = want, .id = i};
        assert_int_equal(pthread_create(&t[i], NULL, reader_main, &r[i]), 0);
    }
    if (with_writer)
        assert_int_equal(pthread_create(&t[4], NULL, writer_main, &w), 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(r[i].failures, 0);
    }
    if (with_writer) {
        pthread_join(t[4], NULL);
        if (w.rc)
            fail_msg("ingest during the reads: %s", w.msg);
    }
    for (size_t i = 0; i < NSTMTS; i++)
        free(want[i]);
}

static void test_threads_one_handle(void **state)
{
    (void)state;
    argusq_error e;
    argusq_archive *a = argusq_open(path, ARGUSQ_OPEN_READ, &e);
    assert_non_null(a);
    run_readers(a, a, false);
    argusq_close(a);
}

/* The same file by two paths: one environment; a fifth thread ingests
 * through the second handle meanwhile, and both see its trace after. */
static void test_threads_two_handles_and_a_writer(void **state)
{
    (void)state;
    char other[160];
    snprintf(other, sizeof other, "%s/./a.db", tmpdir);
    argusq_error e;
    argusq_archive *a0 = argusq_open(path, ARGUSQ_OPEN_WRITE, &e);
    argusq_archive *a1 = argusq_open(other, ARGUSQ_OPEN_WRITE, &e);
    assert_non_null(a0);
    assert_non_null(a1);
    run_readers(a0, a1, true);
    for (int i = 0; i < 2; i++) {
        char *out = query(i ? a1 : a0, "traces", ARGUSQ_FORMAT_CSV, NULL);
        assert_non_null(strstr(out, "\nduring,"));
        argusq_free(out);
    }
    /* the first handle closed, the environment stays for the second */
    argusq_close(a0);
    char *out = query(a1, "find nodes limit 1 in trace \"during\"", ARGUSQ_FORMAT_JSON, NULL);
    assert_non_null(strstr(out, "\"nodes\":[{"));
    argusq_free(out);
    argusq_close(a1);
}

/* A read-only handle on a file open for writing refuses to write; a file
 * open read-only cannot be opened for writing until it is closed. */
static void test_shared_modes(void **state)
{
    (void)state;
    argusq_error e;
    argusq_archive *w = argusq_open(path, ARGUSQ_OPEN_WRITE, &e);
    argusq_archive *r = argusq_open(path, ARGUSQ_OPEN_READ, &e);
    assert_non_null(w);
    assert_non_null(r);
    char *out;
    const char *label = "label trace \"normal\" set k = \"v\"";
    assert_int_equal(argusq_query(r, label, NULL, &out, NULL, &e), -1);
    argusq_free(out);
    assert_non_null(strstr(e.message, "read-only"));
    assert_int_equal(argusq_query(w, label, NULL, &out, NULL, &e), 1);
    argusq_free(out);
    argusq_close(w);
    argusq_close(r);
    r = argusq_open(path, ARGUSQ_OPEN_READ, &e);
    assert_null(argusq_open(path, ARGUSQ_OPEN_WRITE, &e));
    assert_int_equal(e.code, ARGUSQ_ERR_ARCHIVE);
    assert_non_null(strstr(e.message, "read-only"));
    argusq_close(r);
    w = argusq_open(path, ARGUSQ_OPEN_WRITE, &e);
    assert_non_null(w);
    argusq_close(w);
}

/* s without its first occurrence of cut (in place) */
static void cut_out(char *s, const char *cut)
{
    char *p = strstr(s, cut);
    assert_non_null(p);
    memmove(p, p + strlen(cut), strlen(p + strlen(cut)) + 1);
}

/* argusq_dump of a trace, ingested into a second archive, and a diagnose
 * of the first's anomaly against it there (`in archive`, through the
 * registry): the answer of the first archive holding both; the second
 * file is only held during the statement. */
static void test_dump_and_other_archive(void **state)
{
    (void)state;
    char dump[160], other[160];
    snprintf(dump, sizeof dump, "%s/normal.argus", tmpdir);
    snprintf(other, sizeof other, "%s/b.db", tmpdir);
    argusq_error e;
    argusq_archive *a = argusq_open(path, ARGUSQ_OPEN_WRITE, &e);
    assert_non_null(a);
    argusq_dump_info info = {.size = sizeof info};
    assert_int_equal(argusq_dump(a, "nope", dump, &info, &e), -1);
    assert_int_equal(e.code, ARGUSQ_ERR_USAGE);
    assert_int_equal(access(dump, F_OK), -1);
    assert_int_equal(argusq_dump(a, "normal", dump, &info, &e), 0);
    assert_string_equal(info.trace, "normal");
    assert_true(info.events > 0);
    assert_int_equal(argusq_ingest_into(other, 0, dump, NULL, NULL, &e), 0);

    char stmt[512];
    snprintf(stmt, sizeof stmt, "diagnose thread \"ui-main\" against trace \"normal\" in archive \"%s\"", other);
    char *got = query(a, stmt, ARGUSQ_FORMAT_JSON, "anomaly");
    char *want = query(a, "diagnose thread \"ui-main\" against trace \"normal\"", ARGUSQ_FORMAT_JSON, "anomaly");
    char key[256];
    snprintf(key, sizeof key, ",\"archive\":\"%s\"", other);
    cut_out(got, key);
    assert_string_equal(got, want);
    argusq_free(got);
    /* the session's own file, named again: the session's archive */
    snprintf(stmt, sizeof stmt, "diagnose thread \"ui-main\" against trace \"normal\" in archive \"%s\"", path);
    got = query(a, stmt, ARGUSQ_FORMAT_JSON, "anomaly");
    assert_string_equal(got, want);
    argusq_free(got);
    argusq_free(want);
    /* no handle on the other file is left: it opens for writing */
    argusq_archive *w = argusq_open(other, ARGUSQ_OPEN_WRITE, &e);
    assert_non_null(w);
    argusq_close(w);
    argusq_close(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dump_and_other_archive, setup, teardown),
        cmocka_unit_test(test_version_and_formats),
        cmocka_unit_test_setup_teardown(test_ingest_info_progress_warning, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ingest_progress_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ingest_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_statement_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outputs_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session_use_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session_display, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_statement, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_ingest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_one_handle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_two_handles_and_a_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_modes, setup, teardown),
    };
    return cmocka_run_group_tests_name("lib", tests, NULL, NULL);
}
