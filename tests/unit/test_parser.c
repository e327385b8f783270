/* tests/unit/test_parser.c -- the query parser (query/query_grammar.y,
 * query/parse.c, query/ast.c): statements to S-expressions, precedence,
 * positions, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "query/query.h"
#include "query/query_ast.h"

/* The dump of every statement of src, joined by '\n'; fails on a parse
 * error.  Caller frees. */
static char *dump_script(const char *src)
{
    query_error err;
    query_script *s = query_parse(src, strlen(src), &err);
    if (!s)
        fail_msg("%s\n  -> %d:%d %s", src, err.line, err.col, err.msg);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    for (size_t i = 0; i < query_script_count(s); i++) {
        if (i)
            fputc('\n', f);
        query_ast_dump(query_script_stmt(s, i), f);
    }
    fclose(f);
    query_script_free(s);
    return buf;
}

static void expect_parse(const char *src, const char *want)
{
    char *got = dump_script(src);
    if (strcmp(got, want) != 0)
        fail_msg("%s\n  got:  %s\n  want: %s", src, got, want);
    free(got);
}

/* For "where" tests: the dump of `find nodes where EXPR`. */
static void expect_where(const char *expr, const char *want)
{
    char src[512], full[512];
    snprintf(src, sizeof src, "find nodes where %s", expr);
    snprintf(full, sizeof full, "(find nodes (where %s))", want);
    expect_parse(src, full);
}

static void expect_error(const char *src, int line, int col, const char *msg)
{
    query_error err;
    memset(&err, 0, sizeof err);
    query_script *s = query_parse(src, strlen(src), &err);
    if (s) {
        query_script_free(s);
        fail_msg("%s: parsed, want error \"%s\"", src, msg);
    }
    if (err.line != line || err.col != col || strcmp(err.msg, msg) != 0)
        fail_msg("%s\n  got:  %d:%d %s\n  want: %d:%d %s", src, err.line, err.col, err.msg, line,
                 col, msg);
    /* the offset agrees with line and column */
    size_t off = 0;
    for (int l = 1; l < line; l++)
        off = (size_t)(strchr(src + off, '\n') - src) + 1;
    assert_int_equal(err.offset, off + (size_t)col - 1);
}

/* ---- statement forms ---- */

static void test_simple_statements(void **state)
{
    (void)state;
    expect_parse("traces", "(traces)");
    expect_parse("TRACES;", "(traces)");
    expect_parse("use trace \"lockchain-anomaly\"", "(use \"lockchain-anomaly\")");
    expect_parse("use trace \"a \\\"q\\\" \\\\ b\"", "(use \"a \\\"q\\\" \\\\ b\")");
    expect_parse("help", "(help)");
    expect_parse("help slice", "(help slice)");
    expect_parse("help where", "(help where)");
    expect_parse("help in", "(help in)");
    expect_parse("help and", "(help and)");
    expect_parse("help not", "(help not)");
    expect_parse("help Find", "(help Find)");
    expect_parse("help durations", "(help durations)");
    expect_parse("show node 12", "(show-node 12)");
    expect_parse("show node 0x10 in trace \"t1\"", "(show-node 16 (in-trace \"t1\"))");
    expect_parse("events of node 7", "(events-of 7)");
    expect_parse("Events Of Node 7 In Trace \"x\";", "(events-of 7 (in-trace \"x\"))");
}

static void test_find(void **state)
{
    (void)state;
    expect_parse("find nodes", "(find nodes)");
    expect_parse("find events", "(find events)");
    expect_parse("find events where name = \"futex\" and type = \"syscall\" order by ts desc limit 5",
                 "(find events (where (and (= name \"futex\") (= type \"syscall\")))"
                 " (order-by ts desc) (limit 5))");
    expect_parse("find nodes where blocked > 300ms order by blocked limit 10 in trace \"lc\"",
                 "(find nodes (where (> blocked 300000000ns)) (order-by blocked asc) (limit 10)"
                 " (in-trace \"lc\"))");
    expect_parse("find nodes order by begin asc", "(find nodes (order-by begin asc))");
    expect_parse("find nodes limit 0", "(find nodes (limit 0))");
    expect_parse("find events in trace \"t\"", "(find events (in-trace \"t\"))");
    expect_parse("find events where tid = 3 in trace \"t\"",
                 "(find events (where (= tid 3)) (in-trace \"t\"))");
    expect_parse("find events where tid in (3) in trace \"t\"",
                 "(find events (where (in tid (3))) (in-trace \"t\"))");
}

static void test_slice(void **state)
{
    (void)state;
    expect_parse("slice back from node 42", "(slice back 42)");
    expect_parse("slice forward from node 42", "(slice forward 42)");
    expect_parse("slice back from node 3 depth 4", "(slice back 3 (depth 4))");
    expect_parse("slice back from node 3 via wakeup", "(slice back 3 (via wakeup))");
    expect_parse("slice back from node 3 with weak", "(slice back 3 (with-weak))");
    expect_parse("slice forward from node 3 depth 4 via wakeup, ipc,weak with weak in trace \"x\"",
                 "(slice forward 3 (depth 4) (via wakeup ipc weak) (with-weak) (in-trace \"x\"))");
    expect_parse("SLICE BACK FROM NODE 9 VIA Timer, dispatch, node, with",
                 "(slice back 9 (via Timer dispatch node with))");
}

static void test_rules(void **state)
{
    (void)state;
    expect_parse("rule boundary syscall begin where name = \"select\"",
                 "(rule boundary (syscall begin (where (= name \"select\"))))");
    expect_parse("rule boundary sys_enter", "(rule boundary (sys_enter))");
    expect_parse("rule connect flag_write where sym = \"need_display\" to flag_read on addr = addr",
                 "(rule connect (flag_write (where (= sym \"need_display\"))) (flag_read) (on addr addr))");
    expect_parse("rule connect mach_msg send to mach_msg recv where id = 29 on kmsg = kmsg in trace \"t\"",
                 "(rule connect (mach_msg send) (mach_msg recv (where (= id 29))) (on kmsg kmsg) (in-trace \"t\"))");
    expect_parse("rule ignore wakeup where reason = \"mutex\"",
                 "(rule ignore (wakeup (where (= reason \"mutex\"))))");
    expect_parse("rules", "(rules)");
    expect_parse("drop rule 3", "(drop-rule 3)");
    expect_parse("rebuild graph in trace \"x\"", "(rebuild-graph (in-trace \"x\"))");
    /* the phase words and the new keywords stay usable as fields */
    expect_where("end > 5 and begin < 3 and graph = 1 and on = 2", "(and (and (and (> end 5) (< begin 3)) (= graph 1)) (= on 2))");
    expect_error("rule boundary", 1, 14, "unexpected end of input");
    expect_error("rule connect a to b on x", 1, 25, "unexpected end of input");
}

static void test_analysis_statements(void **state)
{
    (void)state;
    expect_parse("match node 4 in trace \"normal\"", "(match 4 (in-trace \"normal\"))");
    expect_parse("match node 4 in traces where label.run = \"normal\"",
                 "(match 4 (traces-where (= label.run \"normal\")))");
    expect_parse("diagnose thread \"ui-main\" against traces where events > 10 in trace \"a\"",
                 "(diagnose (thread \"ui-main\") (traces-where (> events 10)) (in-trace \"a\"))");
    expect_parse("compare node 1 with node 2", "(compare-nodes 1 2)");
    expect_parse("compare node 1 with node 2 in trace \"n\"", "(compare-nodes 1 2 (in-trace \"n\"))");
    expect_parse("compare path (slice back from node 3 in trace \"n\") with (slice back from node 9 depth 4)",
                 "(compare-paths (slice back 3 (in-trace \"n\")) (slice back 9 (depth 4)))");
    expect_parse("diagnose node 188", "(diagnose 188)");
    expect_parse("diagnose node 188 against trace \"normal\"", "(diagnose 188 (against \"normal\"))");
    expect_parse("diagnose thread \"ui-main\" against trace \"n\" in trace \"a\"",
                 "(diagnose (thread \"ui-main\") (against \"n\") (in-trace \"a\"))");
    expect_parse("check fix of thread \"ui-main\" after trace \"fixed\"",
                 "(check-fix (thread \"ui-main\") (after \"fixed\"))");
    expect_parse("check fix of node 7 in trace \"a\" after trace \"b\"",
                 "(check-fix 7 (after \"b\") (in-trace \"a\"))");
    expect_parse("check fix of thread \"ui\" in traces where label.run = \"broken\" after traces where events > 1",
                 "(check-fix (thread \"ui\") (traces-where (= label.run \"broken\")) (after-traces (> events 1)))");
    expect_parse("check fix of thread \"ui\" in traces after traces",
                 "(check-fix (thread \"ui\") (traces) (after-traces))");
    expect_parse("transaction from node 5 depth 3", "(transaction 5 (depth 3))");
    /* the new keywords stay usable as fields */
    expect_where("thread = \"x\" and path = 1 and match = 2", "(and (and (= thread \"x\") (= path 1)) (= match 2))");
    expect_error("diagnose thread ui-main", 1, 17, "ui-main is not a field: a value with '-' in it is a string, \"ui-main\"");
    expect_error("compare path (traces) with", 1, 27, "unexpected end of input");
    /* counterparts from another archive file; the clauses of
     * match and diagnose come in any order, each once */
    expect_parse("match node 4 in archive \"b.db\"", "(match 4 (in-archive \"b.db\"))");
    expect_parse("match node 4 in archive \"b.db\" in trace \"n\"", "(match 4 (in-trace \"n\") (in-archive \"b.db\"))");
    expect_parse("match node 4 in traces where label.run = \"normal\" in archive \"/x/b.db\"",
                 "(match 4 (traces-where (= label.run \"normal\")) (in-archive \"/x/b.db\"))");
    expect_parse("match node 4 in traces", "(match 4 (traces))");
    expect_parse("find nodes where blocked > 10ms group by thread order by sum(blocked) desc limit 5",
                 "(find nodes (where (> blocked 10000000ns)) (group-by thread) (aggregates count sum(blocked))"
                 " (order-by sum(blocked) desc) (limit 5))");
    expect_parse("find events group by type, name compute median(ts), max(ts), count order by count",
                 "(find events (group-by type name) (aggregates count p50(ts) max(ts)) (order-by count asc))");
    expect_parse("find edges compute sum(from)", "(find edges (group-by) (aggregates count sum(from)))");
    expect_error("find nodes group by thread compute total(x)", 1, 36,
                 "no aggregate \"total\" (count, sum, min, max, avg, median, p50, p90, p95, p99)");
    expect_error("find nodes order by max(blocked)", 1, 21, "order by an aggregate needs `group by` or `compute`");
    expect_where("group = 1 and compute = 2", "(and (= group 1) (= compute 2))");
    expect_parse("match node 4 limit 50 in trace \"n\"", "(match 4 (in-trace \"n\") (limit 50))");
    expect_parse("match node 4 in traces limit 0", "(match 4 (traces) (limit 0))");
    expect_error("match node 4 limit 5 limit 6", 1, 22, "`limit` given twice");
    expect_error("match node 4 limit -5", 1, 20, "limit must be a non-negative integer");
    expect_error("diagnose node 4 limit 5", 1, 23, "only match takes a limit");
    expect_error("slice back from node 3 depth 10001", 1, 30, "depth is at most 10000");
    expect_parse("slice back from node 3 depth 10000", "(slice back 3 (depth 10000))");
    expect_parse("diagnose thread \"ui-main\" against trace \"n\" in archive \"b.db\" in trace \"a\"",
                 "(diagnose (thread \"ui-main\") (against \"n\") (in-archive \"b.db\") (in-trace \"a\"))");
    expect_parse("diagnose node 188 in trace \"a\" against traces in archive \"b.db\"",
                 "(diagnose 188 (traces) (in-archive \"b.db\") (in-trace \"a\"))");
    expect_parse("diagnose node 188 against traces where label.run = \"normal\" in trace \"a\"",
                 "(diagnose 188 (traces-where (= label.run \"normal\")) (in-trace \"a\"))");
    expect_parse("diagnose node 188 in archive \"b.db\"", "(diagnose 188 (in-archive \"b.db\"))");
    /* archive stays usable as a field */
    expect_where("archive = 1", "(= archive 1)");
    expect_error("match node 4 in archive \"a\" in archive \"b\"", 1, 40, "`in archive` given twice");
    expect_error("match node 4 in trace \"a\" in trace \"b\"", 1, 36, "`in trace` given twice");
    expect_error("match node 4 in trace \"a\" in traces", 1, 30, "`in trace` and `in traces` exclude each other");
    expect_error("match node 4 against trace \"a\"", 1, 14,
                 "match looks `in trace \"T\"` or `in traces where ...`, not against");
    expect_error("diagnose node 4 in traces where name = \"x\"", 1, 20,
                 "diagnose takes `against traces where ...`, not `in traces`");
    /* compare thread: two groups of runs */
    expect_parse("compare thread \"ui-main\" in traces where label.run = \"slow\" against traces where "
                 "label.run = \"normal\"",
                 "(compare-groups (thread \"ui-main\") (traces-where (= label.run \"slow\")) "
                 "(against-where (= label.run \"normal\")))");
    expect_parse("compare thread \"w\" against traces in traces where events > 5",
                 "(compare-groups (thread \"w\") (traces-where (> events 5)) (against-traces))");
    expect_error("compare thread \"w\" in traces where events > 5", 1, 1,
                 "compare thread takes two groups of traces: `in traces [where ...] against traces [where ...]`");
    expect_error("compare thread \"w\" in traces against trace \"n\"", 1, 44,
                 "compare thread takes two groups of traces: `in traces [where ...] against traces [where ...]`");
    expect_error("diagnose node 4 against trace \"a\" against traces", 1, 35, "`against` given twice");
    expect_error("match node 4 in archive \"\"", 1, 25, "an empty archive path");
    expect_error("match node 4 in archive", 1, 24, "unexpected end of input");
    expect_error("check fix of node 3", 1, 20, "unexpected end of input");
}

static void test_export(void **state)
{
    (void)state;
    expect_parse("export slice back from node 188 depth 4 to \"chain.json\"",
                 "(export (slice back 188 (depth 4)) \"chain.json\")");
    expect_parse("EXPORT find nodes where thread = \"ui-main\" limit 3 in trace \"a\" TO \"n.json\";",
                 "(export (find nodes (where (= thread \"ui-main\")) (limit 3) (in-trace \"a\")) \"n.json\")");
    expect_parse("export diagnose thread \"ui-main\" against trace \"normal\" to \"d.json\"",
                 "(export (diagnose (thread \"ui-main\") (against \"normal\")) \"d.json\")");
    expect_parse("export show node 3 to \"a b.svg\"; traces", "(export (show-node 3) \"a b.svg\")\n(traces)");
    expect_parse("export traces to \"t.json\"", "(export (traces) \"t.json\")");
    /* `to` inside the statement (rule connect) and at its end */
    expect_parse("export rule connect a to b on x = y to \"r\"", "(export (rule connect (a) (b) (on x y)) \"r\")");
    /* the grammar nests exports; the executor refuses them */
    expect_parse("export export traces to \"a\" to \"b\"", "(export (export (traces) \"a\") \"b\")");
    /* export stays usable as a field and a help topic */
    expect_where("export = 1 and x = export", "(and (= export 1) (= x export))");
    expect_parse("help export", "(help export)");
    expect_parse("find nodes order by export desc", "(find nodes (order-by export desc))");
    expect_error("export traces", 1, 14, "unexpected end of input");
    expect_error("export traces to file", 1, 18, "syntax error near \"file\"");
    expect_error("export to \"f\"", 1, 8, "syntax error near \"to\"");
}

static void test_statement_text(void **state)
{
    (void)state;
    const char *src = "rules;\n  rule ignore wakeup where tid = 5 ;\nrebuild graph";
    query_error err;
    query_script *s = query_parse(src, strlen(src), &err);
    assert_non_null(s);
    assert_int_equal(query_script_count(s), 3);
    size_t len;
    const char *t = query_stmt_text(query_script_stmt(s, 1), &len);
    assert_int_equal(len, strlen("rule ignore wakeup where tid = 5"));
    assert_memory_equal(t, "rule ignore wakeup where tid = 5", len);
    t = query_stmt_text(query_script_stmt(s, 2), &len);
    assert_int_equal(len, strlen("rebuild graph"));
    assert_memory_equal(t, "rebuild graph", len);
    query_script_free(s);
}

/* ---- expressions ---- */

static void test_precedence(void **state)
{
    (void)state;
    expect_where("a = 1 or b = 2 and not c = 3", "(or (= a 1) (and (= b 2) (not (= c 3))))");
    expect_where("a = 1 and b = 2 or c = 3", "(or (and (= a 1) (= b 2)) (= c 3))");
    expect_where("(a = 1 or b = 2) and c = 3", "(and (or (= a 1) (= b 2)) (= c 3))");
    expect_where("not a = 1 and b = 2", "(and (not (= a 1)) (= b 2))");
    expect_where("not (a = 1 and b = 2)", "(not (and (= a 1) (= b 2)))");
    expect_where("a = 1 or b = 2 or c = 3", "(or (or (= a 1) (= b 2)) (= c 3))");
    expect_where("a = 1 and b = 2 and c = 3", "(and (and (= a 1) (= b 2)) (= c 3))");
    expect_where("not not a = 1", "(not (not (= a 1)))");
    expect_where("((a = 1))", "(= a 1)");
    expect_where("a = 1 AND b = 2 Or NOT c = 3", "(or (and (= a 1) (= b 2)) (not (= c 3)))");
}

static void test_comparisons(void **state)
{
    (void)state;
    expect_where("a = 1", "(= a 1)");
    expect_where("a != 1", "(!= a 1)");
    expect_where("a <> 1", "(!= a 1)");
    expect_where("a < 1", "(< a 1)");
    expect_where("a <= 1", "(<= a 1)");
    expect_where("a > 1", "(> a 1)");
    expect_where("a >= 1", "(>= a 1)");
    expect_where("3 < tid", "(< 3 tid)");
    expect_where("tid = pid", "(= tid pid)");
    /* a kind's name, bare, is the kind (it may be a field too: thread) */
    expect_where("kind = thread", "(= kind \"thread\")");
    expect_where("wakeup != KIND", "(!= \"wakeup\" KIND)");
    expect_where("kind = threads", "(= kind threads)");
    expect_where("thread = proc", "(= thread proc)");
    expect_where("val = -110", "(= val -110)");
    expect_where("val>-9223372036854775808", "(> val -9223372036854775808)");
    expect_where("obj = 0xffffffffffffffff", "(= obj 18446744073709551615)");
    expect_where("ts >= 1.5us", "(>= ts 1500ns)");
    expect_where("name = \"a\\\"b\\\\c\"", "(= name \"a\\\"b\\\\c\")");
    expect_where("attr.comm = \"x\"", "(= attr.comm \"x\")");
}

static void test_in(void **state)
{
    (void)state;
    expect_where("name in (\"futex\", \"read\")", "(in name (\"futex\" \"read\"))");
    expect_where("tid not in (1, 0x2, -3)", "(not-in tid (1 2 -3))");
    expect_where("ts in (1ms)", "(in ts (1000000ns))");
    expect_where("name in (\"futex\") and tid not in (1,2) or not kind in (\"timer\")",
                 "(or (and (in name (\"futex\")) (not-in tid (1 2))) (not (in kind (\"timer\"))))");
    expect_where("node In (1) AND events NOT IN (2)", "(and (in node (1)) (not-in events (2)))");
}

static void test_keywords_as_fields(void **state)
{
    (void)state;
    expect_parse("find events where name = \"futex\" and type = \"syscall\" order by ts desc limit 5",
                 "(find events (where (and (= name \"futex\") (= type \"syscall\")))"
                 " (order-by ts desc) (limit 5))");
    expect_where("node = 3 and events > 2 and thread = \"x\" and kind = \"timer\" and id = 1",
                 "(and (and (and (and (= node 3) (> events 2)) (= thread \"x\")) (= kind \"timer\"))"
                 " (= id 1))");
    expect_where("limit = 1 or order = 2 or desc = 3 or trace = 4 or where = 5 or weak = 6",
                 "(or (or (or (or (or (= limit 1) (= order 2)) (= desc 3)) (= trace 4)) (= where 5))"
                 " (= weak 6))");
    expect_where("nodes = 1 or from = 2 or depth = 3 or via = 4 or with = 5 or traces = 6",
                 "(or (or (or (or (or (= nodes 1) (= from 2)) (= depth 3)) (= via 4)) (= with 5))"
                 " (= traces 6))");
    expect_where("1 < node", "(< 1 node)");
    /* every keyword but and/or/not/in works as a field and as a help topic */
    static const char *const kws[] = {
        "traces", "use", "trace", "help", "show", "node", "events", "of", "find", "nodes",
        "where", "order", "by", "asc", "desc", "limit", "slice", "back", "forward", "from",
        "depth", "via", "with", "weak",
    };
    for (size_t i = 0; i < sizeof kws / sizeof kws[0]; i++) {
        char src[128], want[128];
        snprintf(src, sizeof src, "%s = 1 and x = %s", kws[i], kws[i]);
        snprintf(want, sizeof want, "(and (= %s 1) (= x %s))", kws[i], kws[i]);
        expect_where(src, want);
        snprintf(src, sizeof src, "%s in (1) or %s not in (2)", kws[i], kws[i]);
        snprintf(want, sizeof want, "(or (in %s (1)) (not-in %s (2)))", kws[i], kws[i]);
        expect_where(src, want);
        snprintf(src, sizeof src, "find events order by %s desc", kws[i]);
        snprintf(want, sizeof want, "(find events (order-by %s desc))", kws[i]);
        expect_parse(src, want);
        snprintf(src, sizeof src, "help %s;", kws[i]);
        snprintf(want, sizeof want, "(help %s)", kws[i]);
        expect_parse(src, want);
        snprintf(src, sizeof src, "slice back from node 1 via %s, %s", kws[i], kws[i]);
        snprintf(want, sizeof want, "(slice back 1 (via %s %s))", kws[i], kws[i]);
        expect_parse(src, want);
    }
    expect_parse("find nodes order by node desc", "(find nodes (order-by node desc))");
    expect_parse("find nodes order by desc desc", "(find nodes (order-by desc desc))");
    expect_parse("find nodes order by limit limit 2", "(find nodes (order-by limit asc) (limit 2))");
    expect_parse("find events order by events", "(find events (order-by events asc))");
    /* case kept as written */
    expect_parse("FIND NODES WHERE Name = \"x\" ORDER BY TS DESC",
                 "(find nodes (where (= Name \"x\")) (order-by TS desc))");
}

/* ---- scripts ---- */

static void test_scripts(void **state)
{
    (void)state;
    const char *src = "traces;\n"
                      "-- switch\n"
                      "use trace \"a\";\n"
                      "\n"
                      "   find nodes -- the big ones\n"
                      "     where blocked > 1s\n"
                      "     limit 3;\n"
                      "slice back from node 7;  help\n";
    query_error err;
    query_script *s = query_parse(src, strlen(src), &err);
    assert_non_null(s);
    assert_int_equal(query_script_count(s), 5);
    int lines[] = { 1, 3, 5, 8, 8 };
    int cols[] = { 1, 1, 4, 1, 26 };
    query_stmt_kind kinds[] = { QUERY_ST_TRACES, QUERY_ST_USE, QUERY_ST_FIND, QUERY_ST_SLICE,
                                QUERY_ST_HELP };
    for (size_t i = 0; i < 5; i++) {
        const query_stmt *st = query_script_stmt(s, i);
        assert_non_null(st);
        assert_int_equal(st->kind, kinds[i]);
        assert_int_equal(query_stmt_line(st), lines[i]);
        assert_int_equal(st->pos.col, cols[i]);
    }
    assert_null(query_script_stmt(s, 5));
    query_script_free(s);

    expect_parse(src, "(traces)\n(use \"a\")\n(find nodes (where (> blocked 1000000000ns)) (limit 3))\n"
                      "(slice back 7)\n(help)");
    expect_parse("traces;;; traces ;", "(traces)\n(traces)");
    expect_parse("help help; help", "(help help)\n(help)");
}

static void test_empty(void **state)
{
    (void)state;
    const char *srcs[] = { "", "   \n\t", "-- nothing\n-- at all", ";", " ; ;\n;" };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        query_error err;
        query_script *s = query_parse(srcs[i], strlen(srcs[i]), &err);
        assert_non_null(s);
        assert_int_equal(query_script_count(s), 0);
        assert_null(query_script_stmt(s, 0));
        query_script_free(s);
    }
    query_error err;
    query_script *s = query_parse(NULL, 0, &err);
    assert_non_null(s);
    assert_int_equal(query_script_count(s), 0);
    query_script_free(s);
    query_script_free(NULL);
}

static void test_length_respected(void **state)
{
    (void)state;
    /* only the first len bytes count, the rest is not even looked at */
    const char *src = "traces; garbage @@@";
    query_error err;
    query_script *s = query_parse(src, 7, &err);
    assert_non_null(s);
    assert_int_equal(query_script_count(s), 1);
    query_script_free(s);
}

static void test_err_untouched_on_success(void **state)
{
    (void)state;
    query_error err, copy;
    memset(&err, 0x5a, sizeof err);
    memcpy(&copy, &err, sizeof err);
    query_script *s = query_parse("find nodes where tid = 3", 24, &err);
    assert_non_null(s);
    assert_memory_equal(&err, &copy, sizeof err);
    query_script_free(s);
    /* a NULL err is allowed */
    assert_null(query_parse("find", 4, NULL));
}

/* ---- positions in the AST ---- */

static void test_positions(void **state)
{
    (void)state;
    const char *src = "find events\n"
                      "  where name = \"futex\" and tid not in (1, 2)\n"
                      "  order by ts desc limit 5 in trace \"t\";\n"
                      "slice back from node 42 depth 3 via wakeup, ipc";
    query_error err;
    query_script *s = query_parse(src, strlen(src), &err);
    assert_non_null(s);
    const query_stmt *st = query_script_stmt(s, 0);
    const query_expr *w = st->where;
    assert_int_equal(w->kind, QUERY_EX_AND);
    assert_int_equal(w->pos.line, 2);
    assert_int_equal(w->pos.col, 24); /* "and" */

    const query_expr *c = w->bin.lhs;
    assert_int_equal(c->kind, QUERY_EX_CMP);
    assert_int_equal(c->cmp.op, QUERY_OP_EQ);
    assert_int_equal(c->pos.col, 14);
    assert_int_equal(c->cmp.lhs.kind, QUERY_OPD_FIELD);
    assert_string_equal(c->cmp.lhs.field.name, "name");
    assert_int_equal(c->cmp.lhs.field.len, 4);
    assert_int_equal(c->cmp.lhs.field.pos.line, 2);
    assert_int_equal(c->cmp.lhs.field.pos.col, 9);
    assert_int_equal(c->cmp.lhs.field.pos.offset, 12 + 8);
    assert_int_equal(c->cmp.lhs.pos.col, 9);
    assert_int_equal(c->cmp.rhs.kind, QUERY_OPD_LITERAL);
    assert_int_equal(c->cmp.rhs.lit.kind, QUERY_LIT_STRING);
    assert_string_equal(c->cmp.rhs.lit.str, "futex");
    assert_int_equal(c->cmp.rhs.lit.len, 5);
    assert_string_equal(c->cmp.rhs.lit.text, "\"futex\"");
    assert_int_equal(c->cmp.rhs.lit.pos.col, 16);
    assert_int_equal(c->cmp.rhs.pos.col, 16);

    const query_expr *in = w->bin.rhs;
    assert_int_equal(in->kind, QUERY_EX_IN);
    assert_true(in->in.negated);
    assert_int_equal(in->pos.col, 32); /* "not" */
    assert_string_equal(in->in.lhs.field.name, "tid");
    assert_int_equal(in->in.lhs.field.pos.col, 28);
    assert_int_equal(in->in.count, 2);
    assert_int_equal(in->in.items[0].kind, QUERY_LIT_INT);
    assert_int_equal(in->in.items[0].uval, 1);
    assert_int_equal(in->in.items[0].pos.col, 40);
    assert_int_equal(in->in.items[1].pos.col, 43);

    assert_true(st->has_order);
    assert_string_equal(st->order_by.name, "ts");
    assert_int_equal(st->order_by.pos.line, 3);
    assert_int_equal(st->order_by.pos.col, 12);
    assert_true(st->order_desc);
    assert_true(st->has_limit);
    assert_int_equal(st->limit, 5);
    assert_int_equal(st->limit_pos.col, 26);
    assert_string_equal(st->trace.name, "t");
    assert_int_equal(st->trace.len, 1);
    assert_int_equal(st->trace.pos.line, 3);
    assert_int_equal(st->trace.pos.col, 37);

    st = query_script_stmt(s, 1);
    assert_int_equal(st->kind, QUERY_ST_SLICE);
    assert_int_equal(st->dir, QUERY_SLICE_BACK);
    assert_int_equal(st->node, 42);
    assert_int_equal(st->node_pos.line, 4);
    assert_int_equal(st->node_pos.col, 22);
    assert_true(st->has_depth);
    assert_int_equal(st->depth, 3);
    assert_int_equal(st->depth_pos.col, 31);
    assert_int_equal(st->via_count, 2);
    assert_string_equal(st->via[0].name, "wakeup");
    assert_int_equal(st->via[0].pos.col, 37);
    assert_string_equal(st->via[1].name, "ipc");
    assert_int_equal(st->via[1].pos.col, 45);
    assert_false(st->with_weak);
    assert_null(st->trace.name);
    assert_null(st->where);
    query_script_free(s);

    /* help topic and the use trace name */
    s = query_parse("help  slice; use trace \"x y\"", 28, &err);
    assert_non_null(s);
    assert_string_equal(query_script_stmt(s, 0)->topic.name, "slice");
    assert_int_equal(query_script_stmt(s, 0)->topic.pos.col, 7);
    assert_string_equal(query_script_stmt(s, 1)->trace.name, "x y");
    assert_int_equal(query_script_stmt(s, 1)->trace.pos.col, 24);
    query_script_free(s);
}

static void test_literal_values(void **state)
{
    (void)state;
    query_error err;
    const char *src = "find events where a in (-110, 18446744073709551615, 0x7fffffffffffffff, 300ms,"
                      " -9223372036854775808, -0, \"\")";
    query_script *s = query_parse(src, strlen(src), &err);
    assert_non_null(s);
    const query_expr *e = query_script_stmt(s, 0)->where;
    assert_int_equal(e->in.count, 7);
    const query_literal *l = e->in.items;
    assert_int_equal(l[0].kind, QUERY_LIT_INT);
    assert_true(l[0].is_negative);
    assert_true(l[0].fits_int64);
    assert_int_equal(l[0].ival, -110);
    assert_int_equal(l[0].uval, 110);
    assert_false(l[1].is_negative);
    assert_false(l[1].fits_int64);
    assert_true(l[1].uval == UINT64_MAX);
    assert_true(l[2].fits_int64);
    assert_true(l[2].ival == INT64_MAX);
    assert_int_equal(l[3].kind, QUERY_LIT_DURATION);
    assert_int_equal(l[3].uval, 300000000);
    assert_int_equal(l[3].ival, 300000000);
    assert_null(l[3].str);
    assert_true(l[4].is_negative);
    assert_true(l[4].ival == INT64_MIN);
    assert_false(l[5].is_negative);
    assert_int_equal(l[5].ival, 0);
    assert_string_equal(l[5].text, "-0");
    assert_int_equal(l[6].kind, QUERY_LIT_STRING);
    assert_string_equal(l[6].str, "");
    assert_int_equal(l[6].len, 0);
    query_script_free(s);
}

/* ---- errors ---- */

static void test_syntax_errors(void **state)
{
    (void)state;
    expect_error("find nodes where tid = = 3", 1, 24, "syntax error near \"=\"");
    expect_error("slice back from node x", 1, 22, "syntax error near \"x\"");
    expect_error("slice back from node 1.5ms", 1, 22, "syntax error near \"1.5ms\"");
    expect_error("show node \"3\"", 1, 11, "syntax error near \"\"3\"\"");
    expect_error("find nodes where", 1, 17, "unexpected end of input");
    expect_error("find", 1, 5, "unexpected end of input");
    expect_error("find nodes where (a = 1", 1, 24, "unexpected end of input");
    expect_error("traces traces", 1, 8, "syntax error near \"traces\"");
    expect_error("find nodes where a = 1 b = 2", 1, 24, "syntax error near \"b\"");
    expect_error("find nodes where a", 1, 19, "unexpected end of input");
    expect_error("find nodes where x in ()", 1, 24, "syntax error near \")\"");
    expect_error("find nodes where x in (a)", 1, 24, "syntax error near \"a\"");
    expect_error("find nodes where 1 in (1)", 1, 20, "syntax error near \"in\"");
    expect_error("find nodes where x not = 1", 1, 24, "syntax error near \"=\"");
    expect_error("use trace foo", 1, 11, "syntax error near \"foo\"");
    expect_error("use \"foo\"", 1, 5, "syntax error near \"\"foo\"\"");
    expect_error("slice sideways from node 1", 1, 7, "syntax error near \"sideways\"");
    expect_error("slice back from node 1 with weak depth 3", 1, 34, "syntax error near \"depth\"");
    expect_error("slice back from node 1 via", 1, 27, "unexpected end of input");
    expect_error("slice back from node 1 via wakeup,", 1, 35, "unexpected end of input");
    expect_error("find nodes limit 5 order by ts", 1, 20, "syntax error near \"order\"");
    expect_error("find nodes order ts", 1, 18, "syntax error near \"ts\"");
    expect_error("help help help", 1, 11, "syntax error near \"help\"");
    expect_error("help slice in trace \"t\"", 1, 12, "syntax error near \"in\"");
    expect_error("traces in trace \"t\"", 1, 8, "syntax error near \"in\"");
    expect_error("hello", 1, 1, "syntax error near \"hello\"");
    expect_error("find nodes where a = 1 order by", 1, 32, "unexpected end of input");
    /* a later statement, a later line */
    expect_error("traces;\nfind nodes where tid = 3\n  order ts", 3, 9, "syntax error near \"ts\"");
    /* a long token is cut short in the message */
    expect_error("traces a_very_long_identifier_that_goes_on_and_on_and_on_and_on_forever", 1, 8,
                 "syntax error near \"a_very_long_identifier_that_goes_on_and_on_and_on_and_on_for...\"");
}

static void test_semantic_errors(void **state)
{
    (void)state;
    expect_error("find nodes limit -1", 1, 18, "limit must be a non-negative integer");
    expect_error("show node -3", 1, 11, "node id must be a non-negative integer");
    expect_error("events of node -0x3", 1, 16, "node id must be a non-negative integer");
    expect_error("slice back from node 1 depth -2", 1, 30, "depth must be a non-negative integer");
    /* -0 is zero, not negative */
    expect_parse("show node -0", "(show-node 0)");
}

static void test_lexical_errors(void **state)
{
    (void)state;
    expect_error("find nodes where name = \"abc", 1, 25, "unterminated string");
    expect_error("find nodes where tid @ 3", 1, 22, "bad character '@'");
    expect_error("traces;\n  find nodes where ts > 5min", 2, 25,
                 "bad number \"5min\" (durations take ns, us, ms or s)");
    expect_error("find nodes where x = 99999999999999999999", 1, 22,
                 "integer out of range \"99999999999999999999\"");
    expect_error("find nodes where x = \"a\\tb\"", 1, 24,
                 "bad escape \"\\t\" in string (only \\\" and \\\\)");
    /* a lexical error after a syntax error is not reached: the first wins */
    expect_error("traces traces @", 1, 8, "syntax error near \"traces\"");
    /* a lexical error in a later statement fails the whole script */
    expect_error("traces; help; find nodes where x = 1.5", 1, 36, "bad number \"1.5\" (durations take ns, us, ms or s)");
}

static void test_nesting(void **state)
{
    (void)state;
    /* deep but fine */
    char src[4096];
    int n = 0;
    n += sprintf(src + n, "find nodes where ");
    for (int i = 0; i < 50; i++)
        n += sprintf(src + n, "(");
    n += sprintf(src + n, "a = 1");
    for (int i = 0; i < 50; i++)
        n += sprintf(src + n, ")");
    expect_where("((((((((((a = 1))))))))))", "(= a 1)");
    char *got = dump_script(src);
    assert_string_equal(got, "(find nodes (where (= a 1)))");
    free(got);

    /* too deep: an error, not a crash */
    n = sprintf(src, "find nodes where ");
    for (int i = 0; i < 1000; i++)
        n += sprintf(src + n, "not ");
    sprintf(src + n, "a = 1");
    query_error err;
    assert_null(query_parse(src, strlen(src), &err));
    assert_string_equal(err.msg, "query is nested too deeply");
    assert_int_equal(err.line, 1);
    assert_true(err.col > 17);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple_statements),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_statement_text),
        cmocka_unit_test(test_export),
        cmocka_unit_test(test_analysis_statements),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_comparisons),
        cmocka_unit_test(test_in),
        cmocka_unit_test(test_keywords_as_fields),
        cmocka_unit_test(test_scripts),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_length_respected),
        cmocka_unit_test(test_err_untouched_on_success),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_literal_values),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_semantic_errors),
        cmocka_unit_test(test_lexical_errors),
        cmocka_unit_test(test_nesting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
