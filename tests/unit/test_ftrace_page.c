/* tests/unit/test_ftrace_page.c -- where the ftrace text of a file is
 * (ftrace_page.c: the legacy systrace page's JavaScript string, unescaped)
 * and the names a file gives its `<...>` tasks further on
 * (ftrace_ahead.c), on small hand-written files. */
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
#include "ingest/ftrace/ftrace_int.h"
#include "ingest/ingest.h"

#include "ftrace_rec.h"

#define HEAD "<!DOCTYPE HTML>\n<html>\n<body>\n  <script>\n  var linuxPerfData = \"\\\n"
#define MARK(ts, text) "  app-7  [000] ...1  5." ts ": tracing_mark_write: " text

/* The events of a page; the line of the file an error names. */
static rec *page(const char *text, int want_rc, char *err, size_t errlen, char **path)
{
    *path = write_temp(text);
    rec *r = rec_new(true);
    ingest_format fmt;
    int rc = run(r, *path, &fmt, NULL, err, errlen);
    if (rc != want_rc)
        fail_msg("rc %d, want %d: %s", rc, want_rc, err);
    if (rc == 0)
        assert_int_equal(fmt, INGEST_SYSTRACE_HTML);
    return r;
}

static void test_js_string(void **state)
{
    (void)state;
    char err[512] = "", *path;
    /* as systrace.py wrote it: `\n\` after each line, `\n";` after the last */
    rec *r = page(HEAD MARK("000001", "B|7|one") "\\n\\\n"
                  /* two lines in one of the file, and escapes */
                  MARK("000002", "say \\\"hi\\\" \\\\ \\u00e9\\ud83d\\ude00 \\x41\\ttab") "\\n"
                  MARK("000003", "E") "\\n\\\n"
                  /* a line of text over two of the file: a continuation without \n */
                  MARK("000004", "B|7|t") "\\\nwo\\n\\\n"
                  MARK("000005", "E") "\\n\";\n"
                  "  var timelineViewEl;\n  m.importEvents(\"[]\", true, [linuxPerfData]);\n"
                  "  </script>\n</body>\n</html>\n",
                  0, err, sizeof err, &path);
    assert_int_equal(r->nev, 5);
    assert_attr(&r->ev[0], "buf", "B|7|one");
    assert_attr(&r->ev[1], "buf", "say \"hi\" \\ \xc3\xa9\xf0\x9f\x98\x80 A\ttab");
    assert_attr(&r->ev[3], "buf", "B|7|two");
    assert_int_equal(r->ev[4].ev.ts, 5000005000ull);
    unlink(path);
    free(path);
    rec_free(r);

    /* trimmed (trappy's test page): no `\n\`, no closing quote: a line
     * break ends a line, </script> the string */
    r = page(HEAD MARK("000001", "B|7|a") "\n" MARK("000002", "E") "\n  </script>\n</body>\n</html>\n", 0, err,
             sizeof err, &path);
    assert_int_equal(r->nev, 2);
    unlink(path);
    free(path);
    rec_free(r);
}

static void test_js_errors(void **state)
{
    (void)state;
    char err[512] = "", *path;
    const char *bad[] = {"\\x4g", "\\u12", "\\0", "\\u0000"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, HEAD MARK("000001", "B|7|a") "\\n\\\n" MARK("000002", "E %s") "\\n\";\n</script>\n",
                 bad[i]);
        rec *r = page(text, -1, err, sizeof err, &path);
        char want[600];
        snprintf(want, sizeof want, "%s:7: ", path); /* the file's line of the escape */
        if (strncmp(err, want, strlen(want)) != 0 || !strstr(err, "escape"))
            fail_msg("%s: '%s', want '%s'", bad[i], err, want);
        unlink(path);
        free(path);
        rec_free(r);
    }
    /* a bad line of text is named by the file's line it is on (after an
     * event whose text cannot go on over lines, as a marker's may) */
    rec *r = page(HEAD "  app-7  [000] d..3  5.000001: sched_waking: comm=b pid=8 prio=120 target_cpu=000\\n\\\n"
                  "not an event\\n\\\n" MARK("000002", "E") "\\n\";\n</script>\n",
                  -1, err, sizeof err, &path);
    char want[600];
    snprintf(want, sizeof want, "%s:7: not an ftrace event line: 'not an event'", path);
    assert_string_equal(err, want);
    unlink(path);
    free(path);
    rec_free(r);
}

/* A `<...>` task named only by later lines is declared once, by that
 * name, before its first event: its own prev_comm, a later wakeup's comm,
 * a later next_comm, its task column on a later line.  One nothing names
 * stays `<...>`. */
static void test_names_ahead(void **state)
{
    (void)state;
    const char *text = "  <...>-1234 [000] d..3 1.000100: sched_waking: comm=main pid=1000 prio=120 target_cpu=001\n"
                       "  <...>-1300 [001] ...1 1.000110: tracing_mark_write: B|1300|x\n"
                       "  <...>-1400 [001] ...1 1.000120: tracing_mark_write: B|1400|x\n"
                       "  <...>-1500 [001] ...1 1.000130: tracing_mark_write: B|1500|x\n"
                       "  <...>-1600 [001] ...1 1.000140: tracing_mark_write: B|1600|x\n"
                       "  <...>-1234 [000] d..3 1.000200: sched_switch: prev_comm=worker prev_pid=1234 prev_prio=120 "
                       "prev_state=S ==> next_comm=poller next_pid=1400 next_prio=120\n"
                       "  <idle>-0 [001] d.h3 1.000300: sched_waking: comm=helper pid=1300 prio=120 target_cpu=001\n"
                       "  reader-1500 [001] ...1 1.000400: tracing_mark_write: E\n";
    char *path = write_temp(text);
    rec *r = rec_new(true);
    char err[512];
    if (run(r, path, NULL, NULL, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_string_equal(find_thread(r, 1234)->name, "worker");
    assert_string_equal(find_thread(r, 1300)->name, "helper");
    assert_string_equal(find_thread(r, 1400)->name, "poller");
    assert_string_equal(find_thread(r, 1500)->name, "reader");
    assert_string_equal(find_thread(r, 1600)->name, "<...>");
    assert_int_equal(r->thread_calls, 6); /* the idle task and five, none renamed */
    assert_int_equal(r->order_errors, 0);
    unlink(path);
    free(path);
    rec_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_js_string),
        cmocka_unit_test(test_js_errors),
        cmocka_unit_test(test_names_ahead),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
