/* tests/unit/test_table.c -- result tables (query/out.c): cells kept in
 * one arena, printed aligned or as CSV, with the same text printf gave. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "query/query_int.h"

/* what t prints, as a string the caller frees */
static char *printed(query_table *t)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    assert_non_null(f);
    query_table_print(t, f);
    fclose(f);
    return s;
}

static void test_aligned(void **state)
{
    (void)state;
    static const char *const heads[] = {"id", "name", "ts"};
    query_table t;
    query_table_init(&t, QUERY_FMT_TABLE, 3, heads);
    query_table_u64(&t, 7);
    query_table_str(&t, "ws.main");
    query_table_ts(&t, 1000004169000ull);
    query_table_u64(&t, UINT64_MAX);
    query_table_cell(&t, "%s-%d", "x", 42);
    query_table_ts(&t, 0);
    char *s = printed(&t);
    assert_string_equal(s, "id                    name     ts\n"
                           "7                     ws.main  1000.004169\n"
                           "18446744073709551615  x-42     0.000000\n");
    free(s);
    query_table_free(&t);
}

/* a terminal's table shows line breaks and tabs escaped; CSV keeps them
 * and quotes the field */
static void test_escapes(void **state)
{
    (void)state;
    static const char *const heads[] = {"a", "b"};
    query_table t;
    query_table_init(&t, QUERY_FMT_TABLE, 2, heads);
    query_table_str(&t, "one\ttwo\n");
    query_table_cell(&t, "%s", "\r");
    char *s = printed(&t);
    assert_string_equal(s, "a           b\none\\ttwo\\n  \\r\n");
    free(s);
    query_table_free(&t);

    query_table_init(&t, QUERY_FMT_CSV, 2, heads);
    query_table_str(&t, "x,\"y\"\n");
    query_table_ts(&t, 1500000000ull); /* CSV: raw nanoseconds */
    s = printed(&t);
    assert_string_equal(s, "a,b\n\"x,\"\"y\"\"\n\",1500000000\n");
    free(s);
    query_table_free(&t);
}

/* cells longer than the arena's first block, and many of them */
static void test_growth(void **state)
{
    (void)state;
    static const char *const heads[] = {"n", "text"};
    size_t big = 10000;
    char *long_text = malloc(big + 1);
    assert_non_null(long_text);
    memset(long_text, 'a', big);
    long_text[big] = '\0';
    long_text[big / 2] = '\t'; /* escaped: the cell grows by one in place */
    query_table t;
    query_table_init(&t, QUERY_FMT_TABLE, 2, heads);
    for (uint64_t i = 0; i < 1000; i++) {
        query_table_u64(&t, i);
        if (i == 500)
            query_table_str(&t, long_text);
        else
            query_table_cell(&t, "%0*d", (int)(i % 300), 5);
    }
    assert_false(t.oom);
    assert_int_equal(t.ncells, 2002);
    char *s = printed(&t);
    /* every row is as wide as the widest cell of its first column */
    const char *row500 = strstr(s, "\n500  ");
    assert_non_null(row500);
    assert_int_equal(strchr(row500 + 6, '\n') - (row500 + 6), (long)big + 1); /* \t became two bytes */
    char buf[400];
    snprintf(buf, sizeof buf, "\n999  %0*d\n", 999 % 300, 5);
    assert_non_null(strstr(s, buf));
    free(s);
    free(long_text);
    query_table_free(&t);
}

/* query_fmt_ts is printf's "%llu.%06llu" of seconds and microseconds */
static void test_ts_as_printf(void **state)
{
    (void)state;
    static const uint64_t v[] = {0, 999, 1000, 999999999, 1000000000, 1234567890123456789ull, UINT64_MAX};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char want[64], got[64];
        snprintf(want, sizeof want, "%" PRIu64 ".%06" PRIu64, v[i] / 1000000000u, v[i] % 1000000000u / 1000u);
        query_fmt_ts(got, sizeof got, v[i]);
        assert_string_equal(got, want);
        query_fmt_ts(got, 12, v[i]); /* too short for the fast path: truncated as snprintf would */
        want[11] = '\0';
        assert_string_equal(got, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aligned),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_ts_as_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
