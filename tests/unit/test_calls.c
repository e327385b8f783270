/* tests/unit/test_calls.c -- sink calls as bytes (ingest/calls.c, the
 * inline event call of ingest/ingest_int.h) and the ingest pipe
 * (ingest/pipe.c): replayed calls are the calls made, and a file read in
 * a second thread gives the sink exactly what reading it in this one
 * does, across many batches. */
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
#include "ingest/ingest_int.h"
#include "ingest/ingest.h"

#include "ftrace_rec.h"

/* Events of every name length a batch meets (none, empty, the few bytes
 * the copy makes moves of, past them), with and without attributes,
 * written as calls and replayed: the same events, each with its name's
 * length (name_len). */
static void test_event_calls(void **state)
{
    (void)state;
    static char buf[1 << 16];
    const char *names[] = {NULL, "", "a", "abc", "abcd", "sched_w", "sched_wa", "sched_switch",
                           "sched_switch_ab", "sched_switch_abc", "sched_switch_abcd",
                           "a_name_longer_than_a_few_moves_copy"};
    const char attrs[] = "pid=1\0comm=x y\0";
    size_t nn = sizeof names / sizeof *names, len = 0;
    for (size_t i = 0; i < 2 * nn; i++) {
        db_event ev;
        memset(&ev, 0, sizeof ev);
        ev.ts = 1000 + i;
        ev.tid = (uint32_t)i;
        ev.obj = 0x1234567890ull + i;
        ev.val = -(int64_t)i;
        ev.name = names[i % nn];
        ev.attrs = i < nn ? NULL : attrs;
        ev.attrs_len = i < nn ? 0 : sizeof attrs - 1;
        size_t size = ingest_call_event_size(&ev);
        assert_true(len + size <= sizeof buf);
        memset(buf + len, 0x5a, size); /* every byte must be written */
        ingest_call_event_put(buf + len, &ev, size);
        len += size;
    }
    rec *r = rec_new(true);
    ingest_sink s = {.ctx = r, .event = on_event};
    char err[256] = "";
    assert_int_equal(ingest_calls_replay(buf, len, &s, err, sizeof err), 0);
    assert_int_equal(r->nev, 2 * nn);
    for (size_t i = 0; i < 2 * nn; i++) {
        const rec_event *e = &r->ev[i];
        assert_int_equal(e->ev.ts, 1000 + i);
        assert_int_equal(e->ev.tid, i);
        assert_int_equal(e->ev.obj, 0x1234567890ull + i);
        assert_int_equal(e->ev.val, -(int64_t)i);
        assert_string_equal(e->name, names[i % nn] ? names[i % nn] : "");
        assert_int_equal(e->ev.name_len, strlen(e->name)); /* measured by the call, not again */
        assert_int_equal(e->ev.attrs_len, i < nn ? 0 : sizeof attrs - 1);
        if (i >= nn)
            assert_memory_equal(e->attrs, attrs, sizeof attrs - 1);
    }
    rec_free(r);
}

/* Events between calls of every other kind (replay takes an event on a
 * path of its own, the rest through its switch): each call made, in
 * order, each event after the names it uses (rec's order_errors), and
 * past them all a tag that is no call's stops the replay with its
 * message. */
static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    rec *r = ctx;
    assert_int_equal(done, r->progress_calls++); /* in order */
    assert_int_equal(total, 6);
}

static void test_mixed_calls(void **state)
{
    (void)state;
    static char buf[1 << 14];
    size_t len = 0;
    for (uint32_t i = 0; i < 6; i++) {
        uint32_t pid = 100 + i;
        char name[16];
        snprintf(name, sizeof name, "p%u", i);
        ingest_call_named_put(buf + len, INGEST_C_PROC, &pid, 4, name);
        len += ingest_call_named_size(4, name);
        db_thread t;
        memset(&t, 0, sizeof t);
        t.tid = 200 + i;
        t.pid = pid;
        snprintf(t.name, sizeof t.name, "t%u", i);
        ingest_call_thread_put(buf + len, &t);
        len += 1 + sizeof t;
        db_event ev;
        memset(&ev, 0, sizeof ev);
        ev.ts = 1000 + i;
        ev.tid = t.tid;
        ev.pid = pid;
        ev.name = "sched_switch";
        size_t size = ingest_call_event_size(&ev);
        ingest_call_event_put(buf + len, &ev, size);
        len += size;
        buf[len++] = (char)INGEST_C_SKIP;
        ingest_call_progress_put(buf + len, i, 6);
        len += 17;
    }
    buf[len++] = 0x7f; /* no call's */
    rec *r = rec_new(true);
    ingest_sink s = {.ctx = r, .event = on_event, .thread = on_thread, .proc = on_proc, .skip = on_skip,
                     .progress = on_progress};
    char err[256] = "";
    assert_int_equal(ingest_calls_replay(buf, len, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad sink call 127"));
    assert_int_equal(r->proc_calls, 6);
    assert_int_equal(r->thread_calls, 6);
    assert_int_equal(r->skips, 6);
    assert_int_equal(r->progress_calls, 6);
    assert_int_equal(r->nev, 6);
    assert_int_equal(r->order_errors, 0);
    for (uint32_t i = 0; i < 6; i++) {
        assert_int_equal(r->ev[i].ev.ts, 1000 + i);
        assert_int_equal(r->ev[i].ev.tid, 200 + i);
        assert_string_equal(r->ev[i].name, "sched_switch");
    }
    rec_free(r);
}

/* A text trace of some MiB of calls: through the pipe (many batches,
 * each filled to its end) and read directly, the same calls. */
static void test_pipe_same(void **state)
{
    (void)state;
    size_t n = 40000, cap = n * 160, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "  t%zu-%zu [000] 5.%06zu: sched_waking: comm=w%zu pid=%zu prio=120 target_cpu=001\n",
                                i % 7, 100 + i % 7, i + 1, i % 13, 200 + i % 13);
    char *path = write_temp(text);
    free(text);
    rec *a = rec_new(true), *b = rec_new(true);
    ingest_sink sa = {.ctx = a, .event = on_event, .thread = on_thread, .proc = on_proc, .skip = on_skip};
    ingest_sink sb = {.ctx = b, .event = on_event, .thread = on_thread, .proc = on_proc, .skip = on_skip};
    ingest_stats st;
    char err[512];
    assert_int_equal(ingest_file_opts(path, &sa, NULL, NULL, &st, err, sizeof err), 0);
    assert_int_equal(ingest_file_threaded(path, &sb, NULL, NULL, &st, err, sizeof err), 0);
    unlink(path);
    free(path);
    assert_int_equal(a->nev, n);
    assert_int_equal(b->nev, n);
    for (size_t i = 0; i < n; i++) {
        const db_event *x = &a->ev[i].ev, *y = &b->ev[i].ev;
        assert_true(x->ts == y->ts && x->tid == y->tid && x->pid == y->pid && x->cpu == y->cpu &&
                    x->type == y->type && x->phase == y->phase && x->ctx == y->ctx && x->obj == y->obj &&
                    x->val == y->val);
        assert_string_equal(a->ev[i].name, b->ev[i].name);
        assert_int_equal(a->ev[i].ev.attrs_len, b->ev[i].ev.attrs_len);
        assert_memory_equal(a->ev[i].attrs, b->ev[i].attrs, a->ev[i].ev.attrs_len);
    }
    assert_int_equal(a->thread_calls, b->thread_calls);
    assert_int_equal(a->proc_calls, b->proc_calls);
    /* each replayed event's name_len its name's length (the pipe's
     * front sink sizes a call from name_len, pipe.c f_event) */
    assert_int_equal(b->name_lens, n);
    assert_int_equal(b->bad_name_lens, 0);
    rec_free(a);
    rec_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_calls),
        cmocka_unit_test(test_mixed_calls),
        cmocka_unit_test(test_pipe_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
