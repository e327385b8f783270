/* fuzz/fuzz_query.c -- libFuzzer harness of the query language: the bytes
 * are a script, parsed by query_parse; every statement it holds is printed
 * (query_ast_dump), parsed again from its own text (which must give the
 * same statement), and run against a small archive built once at start
 * from two shipped traces (tests/traces/lockchain-*.txt), its output
 * thrown away.  Statements that write (rules, rebuild, export) are only
 * parsed and compiled, so every input sees the same archive.
 *
 * Promises checked (a broken one aborts, a crash for libFuzzer): a failed
 * parse or statement says what is wrong, with a position inside the input;
 * a statement's text parses back to the same statement. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "graph/graph.h"
#include "ingest/ingest.h"
#include "query/query.h"
#include "query/query_ast.h"

#ifndef FUZZ_ROOT
#define FUZZ_ROOT "."
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static db_archive *archive; /* NULL: parse only (the traces were not found) */
static char dir[64], dbpath[96];
static FILE *devnull;

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "fuzz_query: %s: %s\n", what, msg);
    abort();
}

/* ---- the archive: ingest as the cli does, graph built after the read ---- */

static int s_proc(void *w, uint32_t pid, const char *name, char *err, size_t len)
{
    db_error de = {0};
    return db_writer_proc(w, pid, name, &de) ? snprintf(err, len, "%s", de.msg), -1 : 0;
}

static int s_thread(void *w, const db_thread *t, char *err, size_t len)
{
    db_error de = {0};
    return db_writer_thread(w, t, &de) ? snprintf(err, len, "%s", de.msg), -1 : 0;
}

static int s_event(void *w, db_event *ev, char *err, size_t len)
{
    db_error de = {0};
    return db_writer_event(w, ev, &de) ? snprintf(err, len, "%s", de.msg), -1 : 0;
}

static void ingest(const char *file, const char *name)
{
    char path[512], err[1024] = "";
    snprintf(path, sizeof path, "%s/tests/traces/%s", FUZZ_ROOT, file);
    db_error de = {0};
    db_writer *w = db_writer_begin(archive, name, "trace-cmd-report", path, &de);
    if (!w)
        die(path, de.msg);
    ingest_sink sink = {.ctx = w, .proc = s_proc, .thread = s_thread, .event = s_event};
    graph_stats gs;
    db_trace_info info;
    if (ingest_file(path, &sink, NULL, NULL, err, sizeof err))
        die(path, err);
    if (graph_build(w, NULL, 0, &gs, &de) || db_writer_commit(w, &info, &de))
        die(path, de.msg);
}

static void cleanup(void)
{
    if (archive)
        db_close(archive);
    archive = NULL;
    char lock[128];
    snprintf(lock, sizeof lock, "%s-lock", dbpath);
    unlink(dbpath);
    unlink(lock);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    devnull = fopen("/dev/null", "w");
    if (!devnull)
        die("/dev/null", "cannot open");
    char probe[512];
    snprintf(probe, sizeof probe, "%s/tests/traces/lockchain-normal.txt", FUZZ_ROOT);
    if (access(probe, R_OK) != 0) {
        fprintf(stderr, "fuzz_query: %s not found: parsing only\n", probe);
        return 0;
    }
    /* a small map: the fuzzer's address space is shared with ASan's shadow */
    setenv("ARGUSQ_MAP_MB", "256", 1);
    snprintf(dir, sizeof dir, "/tmp/argusq-fuzz-XXXXXX");
    if (!mkdtemp(dir))
        die("mkdtemp", "failed");
    snprintf(dbpath, sizeof dbpath, "%s/argus.db", dir);
    db_error de = {0};
    archive = db_open(dbpath, false, &de);
    if (!archive)
        die(dbpath, de.msg);
    atexit(cleanup);
    ingest("lockchain-normal.txt", "normal");
    ingest("lockchain-anomaly.txt", "anomaly"); /* the latest: the default trace */
    return 0;
}

/* ---- one input ---- */

static void check_error(const query_error *e, size_t len, const char *what)
{
    if (!e->msg[0])
        die(what, "failed without a message");
    if (e->line < 0 || e->col < 0 || (e->line > 0 && (e->col == 0 || e->offset > len)))
        die(what, "error position outside the input");
}

/* The S-expression of a statement, malloc'd. */
static char *dump(const query_stmt *st)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        abort();
    query_ast_dump(st, f);
    fclose(f);
    return buf;
}

/* Its own text must parse to the same statement. */
static void reparse(const query_stmt *st)
{
    size_t tl;
    const char *text = query_stmt_text(st, &tl);
    query_error e = {0};
    query_script *sc = query_parse(text, tl, &e);
    if (!sc || query_script_count(sc) != 1)
        die("reparse", sc ? "not one statement" : e.msg);
    char *a = dump(st), *b = dump(query_script_stmt(sc, 0));
    if (strcmp(a, b) != 0) {
        fprintf(stderr, "first:  %s\nagain:  %s\n", a, b);
        die("reparse", "a different statement");
    }
    free(a);
    free(b);
    query_script_free(sc);
}

static bool read_only(const query_stmt *st)
{
    switch (st->kind) {
    case QUERY_ST_RULE:
    case QUERY_ST_DROP_RULE:
    case QUERY_ST_REBUILD:
    case QUERY_ST_EXPORT: /* writes a file; its inner statement runs instead */
        return false;
    default:
        return true;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const query_format formats[] = {QUERY_FMT_TABLE, QUERY_FMT_JSON, QUERY_FMT_CSV,
                                           QUERY_FMT_DOT, QUERY_FMT_PERFETTO};
    query_error e = {0};
    query_script *sc = query_parse((const char *)data, size, &e);
    if (!sc) {
        check_error(&e, size, "parse");
        return 0;
    }
    /* the output format: any, but the same for the same input (no svg:
     * it runs Graphviz) */
    query_session s = {.archive = archive, .archive_path = dbpath, .out = devnull,
                       .format = formats[size % (sizeof formats / sizeof formats[0])]};
    for (size_t i = 0; i < query_script_count(sc); i++) {
        const query_stmt *st = query_script_stmt(sc, i);
        reparse(st);
        if (st->kind == QUERY_ST_RULE) {
            graph_rule r;
            memset(&e, 0, sizeof e);
            if (query_rule_compile(st, &r, &e))
                check_error(&e, size, "rule");
        }
        if (st->kind == QUERY_ST_EXPORT)
            st = st->inner;
        if (!archive || !read_only(st))
            continue;
        memset(&e, 0, sizeof e);
        if (query_exec(&s, st, &e))
            check_error(&e, size, "exec");
    }
    query_script_free(sc);
    return 0;
}
