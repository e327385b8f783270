/* tests/unit/test_lexer.c -- the query lexer (query/query_lex.re). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <strings.h>

#include "query/query_ast.h"
#include "query_grammar.h"

#define MAXTOK 64

typedef struct lexed {
    query_arena arena;
    query_token tok[MAXTOK];
    int n; /* tokens before the end (the end token is tok[n]) */
    int rc; /* 0, or -1 when a lexical error stopped it */
    query_error err;
} lexed;

/* Lexes src (len bytes) to the end or the first error. */
static void lex_n(lexed *L, const char *src, size_t len)
{
    memset(L, 0, sizeof *L);
    query_lexer lx;
    assert_int_equal(query_lex_init(&lx, src, len, &L->arena), 0);
    for (;;) {
        assert_true(L->n < MAXTOK);
        int code = query_lex_next(&lx, &L->tok[L->n], &L->err);
        if (code < 0) {
            L->rc = -1;
            return;
        }
        if (code == 0)
            return;
        assert_int_equal(code, L->tok[L->n].code);
        L->n++;
    }
}

static void lex(lexed *L, const char *src)
{
    lex_n(L, src, strlen(src));
}

static void done(lexed *L)
{
    query_arena_free(&L->arena);
}

/* Lexes src, expecting exactly the codes given (terminated by -1). */
static void expect_codes(const char *src, ...)
{
    lexed L;
    lex(&L, src);
    assert_int_equal(L.rc, 0);
    va_list ap;
    va_start(ap, src);
    int i = 0;
    for (int c; (c = va_arg(ap, int)) != -1; i++) {
        assert_true(i < L.n);
        if (L.tok[i].code != c)
            fail_msg("%s: token %d (%.*s): code %d, want %d", src, i, (int)L.tok[i].len,
                     L.tok[i].text, L.tok[i].code, c);
    }
    va_end(ap);
    assert_int_equal(L.n, i);
    done(&L);
}

/* Lexes src, expecting a lexical error at line/col whose message contains msg. */
static void expect_error(const char *src, size_t len, int line, int col, const char *msg)
{
    lexed L;
    lex_n(&L, src, len);
    if (L.rc != -1)
        fail_msg("%s: no error", src);
    if (L.err.line != line || L.err.col != col || !strstr(L.err.msg, msg))
        fail_msg("%s: got %d:%d \"%s\", want %d:%d \"%s\"", src, L.err.line, L.err.col, L.err.msg,
                 line, col, msg);
    assert_int_equal(L.err.offset, (size_t)(col - 1)); /* all error inputs are one line */
    done(&L);
}

/* One literal token: code, magnitude, sign. */
static void expect_number(const char *src, int code, uint64_t mag, bool neg)
{
    lexed L;
    lex(&L, src);
    if (L.rc != 0)
        fail_msg("%s: %s", src, L.err.msg);
    assert_int_equal(L.n, 1);
    if (L.tok[0].code != code || L.tok[0].uval != mag || L.tok[0].is_negative != neg)
        fail_msg("%s: code %d value %llu neg %d", src, L.tok[0].code,
                 (unsigned long long)L.tok[0].uval, L.tok[0].is_negative);
    assert_int_equal(L.tok[0].len, strlen(src));
    done(&L);
}

static void test_keywords(void **state)
{
    (void)state;
    expect_codes("traces use trace help show node events of find nodes where order by asc desc",
                 QTK_TRACES, QTK_USE, QTK_TRACE, QTK_HELP, QTK_SHOW, QTK_NODE, QTK_EVENTS, QTK_OF,
                 QTK_FIND, QTK_NODES, QTK_WHERE, QTK_ORDER, QTK_BY, QTK_ASC, QTK_DESC, -1);
    expect_codes("limit slice back forward from depth via with weak or and not in",
                 QTK_LIMIT, QTK_SLICE, QTK_BACK, QTK_FORWARD, QTK_FROM, QTK_DEPTH, QTK_VIA,
                 QTK_WITH, QTK_WEAK, QTK_OR, QTK_AND, QTK_NOT, QTK_IN, -1);
    expect_codes("export to Export exported", QTK_EXPORT, QTK_TO, QTK_EXPORT, QTK_ID, -1);
    /* case-insensitive */
    expect_codes("TRACES Find wHeRe NoT", QTK_TRACES, QTK_FIND, QTK_WHERE, QTK_NOT, -1);
}

static void test_identifiers(void **state)
{
    (void)state;
    expect_codes("name tid _x9 attr.key nodes2 node.id innode Traces_ x",
                 QTK_ID, QTK_ID, QTK_ID, QTK_ID, QTK_ID, QTK_ID, QTK_ID, QTK_ID, QTK_ID, -1);
    lexed L;
    lex(&L, "attr.key_2 Node");
    assert_int_equal(L.n, 2);
    assert_int_equal(L.tok[0].len, 10);
    assert_memory_equal(L.tok[0].text, "attr.key_2", 10);
    assert_int_equal(L.tok[1].code, QTK_NODE); /* keyword: the parser falls back to ID */
    assert_memory_equal(L.tok[1].text, "Node", 4);
    done(&L);
}

static void test_punctuation(void **state)
{
    (void)state;
    expect_codes("; , ( ) = != <> < <= > >=", QTK_SEMI, QTK_COMMA, QTK_LP, QTK_RP, QTK_EQ, QTK_NE,
                 QTK_NE, QTK_LT, QTK_LE, QTK_GT, QTK_GE, -1);
    /* no spaces needed */
    expect_codes("tid=3;x!=-1,(a<=b)", QTK_ID, QTK_EQ, QTK_INTEGER, QTK_SEMI, QTK_ID, QTK_NE,
                 QTK_INTEGER, QTK_COMMA, QTK_LP, QTK_ID, QTK_LE, QTK_ID, QTK_RP, -1);
    expect_codes("a<>b>=c<d>e", QTK_ID, QTK_NE, QTK_ID, QTK_GE, QTK_ID, QTK_LT, QTK_ID, QTK_GT,
                 QTK_ID, -1);
}

static void test_comments_whitespace(void **state)
{
    (void)state;
    expect_codes("", -1);
    expect_codes("   \t\r\n\n  ", -1);
    expect_codes("-- only a comment", -1);
    expect_codes("traces -- the list\n; -- done", QTK_TRACES, QTK_SEMI, -1);
    expect_codes("a--b\nc", QTK_ID, QTK_ID, -1);
    expect_codes("\"-- not a comment\"", QTK_STRING, -1);
}

static void test_positions(void **state)
{
    (void)state;
    lexed L;
    const char *src = "find nodes\n  where tid\t= 3 -- c\n\n\"s\";";
    lex(&L, src);
    assert_int_equal(L.rc, 0);
    assert_int_equal(L.n, 8);
    struct { int line, col; } want[] = { { 1, 1 }, { 1, 6 }, { 2, 3 }, { 2, 9 },
                                         { 2, 13 }, { 2, 15 }, { 4, 1 }, { 4, 4 } };
    for (int i = 0; i < 8; i++) {
        assert_int_equal(L.tok[i].pos.line, want[i].line);
        assert_int_equal(L.tok[i].pos.col, want[i].col);
        assert_memory_equal(src + L.tok[i].pos.offset, L.tok[i].text, L.tok[i].len);
    }
    assert_int_equal(L.tok[2].pos.offset, 13);
    assert_int_equal(L.tok[5].pos.offset, 25);
    /* the end token: after the ';' on line 4 */
    assert_int_equal(L.tok[8].code, 0);
    assert_int_equal(L.tok[8].pos.line, 4);
    assert_int_equal(L.tok[8].pos.col, 5);
    assert_int_equal(L.tok[8].pos.offset, strlen(src));
    assert_int_equal(L.tok[8].len, 0);
    done(&L);

    /* CRLF line ends */
    lex(&L, "a\r\n b");
    assert_int_equal(L.n, 2);
    assert_int_equal(L.tok[1].pos.line, 2);
    assert_int_equal(L.tok[1].pos.col, 2);
    assert_int_equal(L.tok[1].pos.offset, 4);
    done(&L);
}

static void test_integers(void **state)
{
    (void)state;
    expect_number("0", QTK_INTEGER, 0, false);
    expect_number("42", QTK_INTEGER, 42, false);
    expect_number("007", QTK_INTEGER, 7, false);
    expect_number("18446744073709551615", QTK_INTEGER, UINT64_MAX, false);
    expect_number("0x2a", QTK_INTEGER, 42, false);
    expect_number("0XfF", QTK_INTEGER, 255, false);
    expect_number("0xffffffffffffffff", QTK_INTEGER, UINT64_MAX, false);
    expect_number("0x0000000000000000001", QTK_INTEGER, 1, false);
    /* negative */
    expect_number("-110", QTK_INTEGER, 110, true);
    expect_number("-0", QTK_INTEGER, 0, false);
    expect_number("-0x10", QTK_INTEGER, 16, true);
    expect_number("-9223372036854775808", QTK_INTEGER, (uint64_t)INT64_MAX + 1, true);
}

static void test_durations(void **state)
{
    (void)state;
    expect_number("300ms", QTK_DURATION, 300000000ull, false);
    expect_number("1.5us", QTK_DURATION, 1500, false);
    expect_number("10ns", QTK_DURATION, 10, false);
    expect_number("2s", QTK_DURATION, 2000000000ull, false);
    expect_number("0s", QTK_DURATION, 0, false);
    expect_number("1.25ms", QTK_DURATION, 1250000, false);
    expect_number("0.000000001s", QTK_DURATION, 1, false);
    expect_number("1.000000000000000000000s", QTK_DURATION, 1000000000ull, false);
    expect_number("3.0ns", QTK_DURATION, 3, false);
    expect_number("18446744073s", QTK_DURATION, 18446744073000000000ull, false);
    expect_number("18446744073709551615ns", QTK_DURATION, UINT64_MAX, false);
    expect_number("18446744073.709551615s", QTK_DURATION, UINT64_MAX, false);
    /* the unit must follow immediately */
    expect_codes("300 ms", QTK_INTEGER, QTK_ID, -1);
    expect_codes("blocked>300ms", QTK_ID, QTK_GT, QTK_DURATION, -1);
}

static void test_strings(void **state)
{
    (void)state;
    lexed L;
    lex(&L, "\"futex\" \"\" \"a\\\"b\\\\c\" \"caf\xc3\xa9 -- x\"");
    assert_int_equal(L.rc, 0);
    assert_int_equal(L.n, 4);
    assert_string_equal(L.tok[0].str, "futex");
    assert_int_equal(L.tok[0].str_len, 5);
    assert_int_equal(L.tok[0].len, 7);
    assert_string_equal(L.tok[1].str, "");
    assert_int_equal(L.tok[1].str_len, 0);
    assert_string_equal(L.tok[2].str, "a\"b\\c");
    assert_int_equal(L.tok[2].str_len, 5);
    assert_int_equal(L.tok[2].pos.col, 12);
    assert_string_equal(L.tok[3].str, "caf\xc3\xa9 -- x");
    done(&L);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("find \"abc", 9, 1, 6, "unterminated string");
    expect_error("use trace \"abc\nx\"", 17, 1, 11, "unterminated string");
    expect_error("x = \"ab\\", 8, 1, 5, "unterminated string");
    expect_error("x = \"a\\nb\"", 10, 1, 7, "bad escape \"\\n\"");
    expect_error("x = \"a\0b\"", 9, 1, 7, "NUL byte in string");
    expect_error("find nodes where tid @ 3", 24, 1, 22, "bad character '@'");
    expect_error("a - b", 5, 1, 3, "bad character '-'");
    expect_error("thread = ui-main", 16, 1, 10,
                 "ui-main is not a field: a value with '-' in it is a string, \"ui-main\"");
    expect_error("x = a-b-c1 and", 14, 1, 5, "a-b-c1 is not a field");
    expect_error("a\0b", 3, 1, 2, "bad character '\\x00'");
    expect_error("x = \xc3\xa9", 6, 1, 5, "bad character '\\xc3'");
    expect_error("limit 12abc", 11, 1, 7, "bad number \"12abc\"");
    expect_error("x > 1.5", 7, 1, 5, "bad number \"1.5\"");
    expect_error("x > 300m", 8, 1, 5, "bad number \"300m\"");
    expect_error("x > 300msec", 11, 1, 5, "bad number \"300msec\"");
    expect_error("x > 0x", 6, 1, 5, "bad number \"0x\"");
    expect_error("x > 0x1g", 8, 1, 5, "bad number \"0x1g\"");
    expect_error("x > 12.", 7, 1, 5, "bad number \"12.\"");
    expect_error("x > -5ms", 8, 1, 5, "negative duration");
    expect_error("x > 0.5ns", 9, 1, 5, "not a whole number of nanoseconds");
    expect_error("x > 1.0001us", 12, 1, 5, "not a whole number of nanoseconds");
    expect_error("x = 18446744073709551616", 24, 1, 5, "integer out of range");
    expect_error("x = 0x10000000000000000", 23, 1, 5, "integer out of range");
    expect_error("x = -9223372036854775809", 24, 1, 5, "integer out of range");
    expect_error("x > 18446744074s", 16, 1, 5, "duration out of range");
    expect_error("x > 18446744073709551616ns", 26, 1, 5, "duration out of range");

    /* errors on later lines carry that line */
    lexed L;
    lex(&L, "traces;\n  x = \"open");
    assert_int_equal(L.rc, -1);
    assert_int_equal(L.err.line, 2);
    assert_int_equal(L.err.col, 7);
    assert_int_equal(L.err.offset, 14);
    done(&L);
}

/* The words a shell completes (query_words_list): every word is one token
 * of the language, the lexer's keywords are all there (made from its
 * rules), and so are each table's fields, the aggregates and the kinds. */
static bool has_word(const char **w, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(w[i], s) == 0)
            return true;
    return false;
}

static void test_language_words(void **state)
{
    (void)state;
    const char *w[512];
    size_t n = query_words_list(w, sizeof w / sizeof w[0]);
    assert_true(n > 100 && n <= sizeof w / sizeof w[0]);
    int keywords = 0, seen[1024] = {0};
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < i; j++)
            if (strcasecmp(w[i], w[j]) == 0)
                fail_msg("\"%s\" twice", w[i]);
        lexed L;
        lex(&L, w[i]);
        if (L.rc != 0 || L.n != 1 || L.tok[0].len != strlen(w[i]))
            fail_msg("\"%s\" is not one token", w[i]);
        int code = L.tok[0].code;
        assert_true(code > 0 && code < 1024);
        if (code != QTK_ID) {
            assert_int_equal(seen[code]++, 0); /* one spelling per keyword */
            keywords++;
        }
        done(&L);
    }
    /* every keyword of test_keywords, and the last the lexer added */
    const char *must[] = {"traces", "use", "trace", "help", "show", "node", "events", "of", "find", "nodes",
                          "where", "order", "by", "asc", "desc", "limit", "slice", "back", "forward", "from",
                          "depth", "via", "with", "weak", "or", "and", "not", "in", "export", "to",
                          "diagnose", "critical", "transaction", "between", "send", "recv",
                          /* fields of nodes, events, edges, traces */
                          "duration", "blocked", "runnable", "phase", "from_event", "first_ts",
                          /* aggregates, kinds of nodes and edges */
                          "median", "p99", "softirq", "timeshare", "ipc_reply", "preempt"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        if (!has_word(w, n, must[i]))
            fail_msg("\"%s\" is not offered", must[i]);
    assert_true(keywords >= 60);
    /* a list too short is filled, and says how many there are */
    const char *few[8];
    assert_true(query_words_list(few, 8) > 8);
    assert_string_equal(few[0], w[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keywords),
        cmocka_unit_test(test_identifiers),
        cmocka_unit_test(test_punctuation),
        cmocka_unit_test(test_comments_whitespace),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_language_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
