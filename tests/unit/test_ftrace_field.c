/* tests/unit/test_ftrace_field.c -- the ftrace text reader on what other
 * people's machines write, one cause a test, on minimal lines
 * written here after the files of ../shared/foreign. */
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

/* Ingests text, expecting success; the stats too. */
static rec *ingest_stats_of(const char *text, ingest_stats *st)
{
    char *path = write_temp(text);
    rec *r = rec_new(true);
    char err[512];
    if (run(r, path, NULL, st, err, sizeof err) != 0)
        fail_msg("%s", err);
    unlink(path);
    free(path);
    return r;
}

static void expect_refused(const char *text, const char *where, const char *why)
{
    char *path = write_temp(text);
    rec *r = rec_new(false);
    char err[512] = "";
    assert_int_equal(run(r, path, NULL, NULL, err, sizeof err), -1);
    if (!strstr(err, where) || !strstr(err, why))
        fail_msg("error '%s' lacks '%s' / '%s'", err, where, why);
    unlink(path);
    free(path);
    rec_free(r);
}

/* 1. syscalls:* print no event name, only `sys_NAME(args)` and
 * `sys_NAME -> ret` (tc-ftrace_syscalls.txt); as the first line too. */
static void test_syscall_print_forms(void **state)
{
    (void)state;
    ingest_stats st;
    rec *r = ingest_stats_of("           <...>-4083  [004] ....   395.705679: sys_ioctl(fd: ff, cmd: 5410, arg: 7ffe)\n"
                             "           <...>-4083  [004] ....   395.705680: sys_ioctl -> 0xfffffffffffffff5\n",
                             &st);
    assert_int_equal(r->nev, 2);
    assert_string_equal(r->ev[0].name, "sys_enter_ioctl");
    assert_int_equal(r->ev[0].ev.type, DB_EV_SYSCALL);
    assert_int_equal(r->ev[0].ev.phase, DB_PH_BEGIN);
    assert_attr(&r->ev[0], "name", "ioctl");
    assert_attr(&r->ev[0], "args", "fd: ff, cmd: 5410, arg: 7ffe");
    assert_attr(&r->ev[0], "nr", "16"); /* x86-64 ioctl */
    assert_string_equal(r->ev[1].name, "sys_exit_ioctl");
    assert_int_equal(r->ev[1].ev.phase, DB_PH_END);
    assert_int_equal(r->ev[1].ev.val, -11);
    rec_free(r);
}

/* 3. kernels before 3.10 print trace_marker writes as event `0:`
 * (catapult-android_systrace.txt). */
static void test_marker_event_zero(void **state)
{
    (void)state;
    one o = ingest_text("    hwc_eventmon-336   [000] 50260.929925: 0: C|124|VSYNC|1\n");
    assert_string_equal(o.e->name, "0");
    assert_attr(o.e, "buf", "C|124|VSYNC|1");
    rec_free(o.r);
}

/* 2. one event, several lines: a print whose string holds newlines, an
 * unknown event's text (perfetto-bad_print.txt), a stack trace's frames. */
static void test_multiline_events(void **state)
{
    (void)state;
    ingest_stats st;
    rec *r = ingest_stats_of("  <...>-882 (882) [003] .... 10.771186: event: event: abc xyz =0x34\n"
                             "some = 000, other = 0x4\n"
                             "xyz = 0x0\n"
                             "  a-1 (1) [000] .... 10.771242: tracing_mark_write: B|1|x\n"
                             "  a-1 (1) [000] .... 10.771243: print: tracing_mark_write: one\n"
                             "two\n"
                             "  a-1 (1) [000] .... 10.771250: kernel_stack: <stack trace >\n"
                             "=> try_to_wake_up (ffffffffa8902e5f)\n"
                             "=> __wake_up (ffffffffa89259c3)\n"
                             "  a-1 (1) [000] .... 10.771251: sys_exit: NR 1 = 0\n",
                             &st);
    assert_int_equal(r->nev, 5);
    assert_int_equal(st.events, 5);
    assert_int_equal(st.joined, 5);
    assert_attr(&r->ev[0], "raw", "event: abc xyz =0x34\nsome = 000, other = 0x4\nxyz = 0x0");
    assert_attr(&r->ev[2], "buf", "one\ntwo");
    assert_attr(&r->ev[3], "backtrace", "try_to_wake_up\n__wake_up");
    rec_free(r);
    /* after an event whose text is one line, a stray line is still an error */
    expect_refused("  a-1 [000] 1.000001: sys_exit: NR 1 = 0\nnot an event\n  a-1 [000] 1.000002: sys_exit: NR 1 = 0\n",
                   ":2: ", "not an ftrace event line");
}

/* 4. out of order: put back in place within the window; an event too
 * far behind is kept at the time of the event before it, and counted. */
static void test_reorder_window(void **state)
{
    (void)state;
    ingest_stats st;
    rec *r = ingest_stats_of("  a-1 [006] 7115.449594: sys_exit: NR 1 = 0\n"
                             "  b-2 [006] 7115.449811: sys_exit: NR 1 = 0\n"
                             "  c-3 [005] 7115.449809: sys_exit: NR 1 = 0\n"
                             "  b-2 [006] 7115.449900: sys_exit: NR 1 = 0\n",
                             &st);
    assert_int_equal(r->nev, 4);
    assert_int_equal(r->ev[1].ev.tid, 3); /* 449809 before 449811 */
    assert_int_equal(r->ev[2].ev.tid, 2);
    assert_int_equal(st.reordered, 1);
    assert_int_equal(st.late, 0);
    for (size_t i = 1; i < r->nev; i++)
        assert_true(r->ev[i].ev.ts >= r->ev[i - 1].ev.ts);
    assert_int_equal(r->order_errors, 0);
    rec_free(r);
    /* systrace's synthetic last line, at 0.0: put first */
    r = ingest_stats_of("  a-1 [000] 50.000001: sys_exit: NR 1 = 0\n"
                        "  dummy-0000 [000] 0.0: 0: trace_event_clock_sync: parent_ts=0.0\n",
                        &st);
    assert_int_equal(r->nev, 2);
    assert_int_equal(st.reordered, 1);
    assert_int_equal(r->ev[0].ev.ts, 0);
    assert_int_equal(r->order_errors, 0);
    rec_free(r);
    /* an event before its own thread's declaration cannot go there: it is
     * kept late, at the time of the event before it */
    r = ingest_stats_of("  a-1 [000] 50.000001: sys_exit: NR 1 = 0\n"
                        "  a-1 [001] 40.000001: sys_exit: NR 1 = 0\n",
                        &st);
    assert_int_equal(r->nev, 2);
    assert_int_equal(st.late, 1);
    assert_int_equal(st.reordered, 0);
    assert_int_equal(r->ev[1].ev.ts, 50000001000ull);
    assert_int_equal(r->order_errors, 0);
    rec_free(r);
    /* nor does a thread's move to another process pass the events it
     * made in the one before (found by fuzz_ftrace): each keeps its pid */
    r = ingest_stats_of("  <idle>-0 (-------) [000] d.h1. 1.000002: hrtimer_expire_entry: hrtimer=0000001f "
                        "function=tick_nohz_handler now=1\n"
                        "  <idle>-0 (-------) [000] d.h1. 1.000004: hrtimer_expire_enry:t hrtimer=0000005e\n"
                        "  <idle>-0 (   4144) [000] ..... 1.000001: task_rename: pid=4144 oldcomm=bash "
                        "newcomm=ipcdaemon oom_score_adj=0\n",
                        &st);
    assert_int_equal(r->nev, 3);
    assert_int_equal(r->ev[0].ev.pid, 0);
    assert_int_equal(r->ev[1].ev.pid, 0);
    assert_int_equal(r->ev[2].ev.pid, 4144);
    assert_int_equal(st.late, 1);
    assert_int_equal(r->order_errors, 0);
    rec_free(r);
}

/* 5. a trace cut inside its last line keeps what came before */
static void test_cut_last_line(void **state)
{
    (void)state;
    ingest_stats st;
    rec *r = ingest_stats_of("  a-1 [000] 1.000001: sys_exit: NR 1 = 0\n"
                             "  a-1 [000] 1.000002: sched_switch: prev_comm=a prev_pid=1\n\n",
                             &st);
    assert_int_equal(r->nev, 1);
    assert_int_equal(st.truncated, 2);
    rec_free(r);
    r = ingest_stats_of("  a-1 [000] 1.000001: sys_exit: NR 1 = 0\n  a-1 [00", &st);
    assert_int_equal(r->nev, 1);
    assert_int_equal(st.truncated, 2);
    rec_free(r);
    /* no event before it: nothing was cut, the file is bad */
    expect_refused("cpus=2\n  a-1 [00\n", ":2: ", "not an ftrace event line");
    /* a bad column is no cut */
    expect_refused("  a-1 [000] 1.000001: sys_exit: NR 1 = 0\n  a-1 [000] 1.0000011234: sys_exit: NR 1 = 0\n", ":2: ",
                   "bad timestamp");
}

/* 8. `trace-cmd report -R` prints prev_state as a number, whose bits
 * depend on the kernel (lisa-trace_txt.txt, trappy-trace_idle_unsorted). */
static void test_numeric_prev_state(void **state)
{
    (void)state;
    static const struct {
        const char *num, *letters, *reason; /* reason NULL: not a wait */
    } cases[] = {
        {"0", "R", NULL},     {"4096", "R+", NULL}, {"256", "R+", NULL}, {"1", "S", "sleep"},
        {"2", "D", "io"},     {"130", "D|K", "io"}, {"128", "I", "idle"}, {"64", "P", "P"},
        {"1026", "D|N", "io"}, {"2049", "S+", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char line[256];
        snprintf(line, sizeof line,
                 "  x-5 [001] 6.000001: sched_switch: prev_comm=x prev_pid=5 prev_prio=120 prev_state=%s "
                 "next_comm=y next_pid=6 next_prio=120\n",
                 cases[i].num);
        one o = ingest_text(line);
        assert_attr(o.e, "state", cases[i].letters);
        if (cases[i].reason) {
            assert_int_equal(o.e->ev.type, DB_EV_WAIT);
            assert_attr(o.e, "reason", cases[i].reason);
        } else {
            assert_int_equal(o.e->ev.type, DB_EV_RAW);
        }
        rec_free(o.r);
    }
}

/* 10, 11. `<...>` is a name tracefs no longer had: a field of the same
 * file names the task (tc-trace-android-sched-irq.txt); a process is
 * named after its leader when a field names the leader first. */
static void test_names_from_fields(void **state)
{
    (void)state;
    ingest_stats st;
    rec *r = ingest_stats_of("  <...>-1252 [000] dNh2 108.255501: sched_wakeup: comm=x pid=9 prio=1 target_cpu=000\n"
                             "  <...>-1252 [000] d..3 108.255517: sched_switch: prev_comm=logd.auditd prev_pid=1252 "
                             "prev_prio=130 prev_state=R+ ==> next_comm=EventThread next_pid=1338 next_prio=97\n"
                             "  <...>-1338 (600) [000] .... 108.255600: sys_exit: NR 1 = 0\n"
                             "  w-7 [000] .... 108.255700: sched_wakeup: comm=surfaceflinger pid=600 prio=1 "
                             "target_cpu=000\n"
                             "  binder-601 (600) [000] .... 108.255800: sys_exit: NR 1 = 0\n",
                             &st);
    assert_string_equal(find_thread(r, 1252)->name, "logd.auditd");
    assert_string_equal(find_thread(r, 1338)->name, "EventThread");
    int p = find_proc(r, 600);
    assert_true(p >= 0);
    /* 600 was named by 1338's line first (a guess); the wakeup's field
     * names the leader, and 601's process is declared then by it */
    assert_int_equal(r->order_errors, 0);
    rec_free(r);
}

/* report -l cuts the comm column to 8 characters: a field's full comm
 * restores the name of a thread declared by such a cut, and only then
 * (ingest_ft_full_comm's test without a call, its renames apart): not a
 * shorter name, not 8 characters that differ from the comm's, not a name
 * a field gives again unchanged. */
static void test_cut_names_restored(void **state)
{
    (void)state;
    ingest_stats st;
    rec *r = ingest_stats_of("  surfacef-600 [000] .... 1.000001: sys_exit: NR 1 = 0\n"
                             "  abc-601 [000] .... 1.000002: sys_exit: NR 1 = 0\n"
                             "  EventThr-602 [000] .... 1.000003: sys_exit: NR 1 = 0\n"
                             "  binder:6-603 [000] .... 1.000004: sys_exit: NR 1 = 0\n"
                             "  w-7 [000] .... 1.000010: sched_wakeup: comm=surfaceflinger pid=600 prio=1 target_cpu=000\n"
                             "  w-7 [000] .... 1.000011: sched_wakeup: comm=abcdefghij pid=601 prio=1 target_cpu=000\n"
                             "  w-7 [000] .... 1.000012: sched_wakeup: comm=EventThxyz pid=602 prio=1 target_cpu=000\n"
                             "  w-7 [000] .... 1.000013: sched_wakeup: comm=binder:6 pid=603 prio=1 target_cpu=000\n"
                             "  w-7 [000] .... 1.000014: sched_wakeup: comm=surfaceflinger pid=600 prio=1 target_cpu=000\n",
                             &st);
    assert_string_equal(find_thread(r, 600)->name, "surfaceflinger");
    assert_string_equal(find_thread(r, 601)->name, "abc");
    assert_string_equal(find_thread(r, 602)->name, "EventThr");
    assert_string_equal(find_thread(r, 603)->name, "binder:6");
    rec_free(r);
}

/* A task's own lines: the same column and TGID again change nothing
 * (resolve_task's case without a call), a TGID column or comm column that
 * changes declares the thread again, `<...>` keeps the name, and a line
 * without a TGID column keeps the process it had. */
static void test_task_columns(void **state)
{
    (void)state;
    ingest_stats st;
    rec *r = ingest_stats_of("  a-5 (5) [000] .... 1.000001: sys_exit: NR 1 = 0\n"
                             "  a-5 (5) [000] .... 1.000002: sys_exit: NR 1 = 0\n"
                             "  a-5 (6) [000] .... 1.000003: sys_exit: NR 1 = 0\n"
                             "  b-5 (6) [000] .... 1.000004: sys_exit: NR 1 = 0\n"
                             "  <...>-5 (6) [000] .... 1.000005: sys_exit: NR 1 = 0\n"
                             "  b-5 (6) [000] .... 1.000006: sys_exit: NR 1 = 0\n"
                             "  c-8 [000] .... 1.000007: sys_exit: NR 1 = 0\n"
                             "  c-8 [000] .... 1.000008: sys_exit: NR 1 = 0\n"
                             "  d-8 [000] .... 1.000009: sys_exit: NR 1 = 0\n"
                             "  d-8 [000] .... 1.000010: sys_exit: NR 1 = 0\n",
                             &st);
    assert_string_equal(find_thread(r, 5)->name, "b");
    assert_int_equal(find_thread(r, 5)->pid, 6);
    assert_string_equal(find_thread(r, 8)->name, "d");
    assert_int_equal(find_thread(r, 8)->pid, 8);
    /* 5: a in 5, a in 6, b; 8: c, d */
    assert_int_equal(r->thread_calls, 5);
    assert_int_equal(r->nev, 10);
    rec_free(r);
}

/* 9. text does not say its machine: a raw syscall keeps its number and
 * gets no name unless the machine is given (NR 240: futex on 32-bit ARM,
 * mq_open on x86-64). */
static void test_syscall_names_need_the_machine(void **state)
{
    (void)state;
    char *path = write_temp("  a-1 [000] 1.000001: sys_enter: NR 240 (a1, 81, 2, 0, 0, 0)\n");
    rec *r = rec_new(true);
    ingest_sink s = {.ctx = r, .proc = on_proc, .thread = on_thread, .event = on_event};
    ingest_stats st;
    char err[256];
    assert_int_equal(ingest_file(path, &s, NULL, &st, err, sizeof err), 0);
    assert_int_equal(r->ev[0].ev.obj, 240);
    assert_attr(&r->ev[0], "nr", "240");
    db_event ev = r->ev[0].ev;
    ev.attrs = r->ev[0].attrs;
    const char *v;
    size_t n;
    assert_false(db_event_attr(&ev, "name", &v, &n));
    assert_int_equal(st.unnamed, 1);
    rec_free(r);
    r = rec_new(true);
    assert_int_equal(run(r, path, NULL, &st, err, sizeof err), 0); /* x86_64 */
    assert_attr(&r->ev[0], "name", "mq_open");
    rec_free(r);
    unlink(path);
    free(path);
}

/* The flag column in its layouts: 4 flags (irqs-off, need-resched,
 * hardirq/softirq, preempt-depth), 5 since Linux 5.14 (migrate-disable),
 * none at all (irq-info off), each with the context in the third. */
static void test_flag_layouts(void **state)
{
    (void)state;
    static const struct {
        const char *flags;
        int ctx;
    } cases[] = {
        {"d..2", DB_CTX_THREAD}, {"dNh2", DB_CTX_HARDIRQ}, {"d.s4", DB_CTX_SOFTIRQ}, {"....", DB_CTX_THREAD},
        {"d..2.", DB_CTX_THREAD}, {"dNh1.", DB_CTX_HARDIRQ}, {"..s.1", DB_CTX_SOFTIRQ}, {"d.H3.", DB_CTX_HARDIRQ},
        {"dnz1.", DB_CTX_HARDIRQ}, {"", DB_CTX_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char line[160];
        snprintf(line, sizeof line, "  a-1 (1) [002] %s%s 5.000001: sys_exit: NR 1 = 0\n", cases[i].flags,
                 cases[i].flags[0] ? "" : " ");
        one o = ingest_text(line);
        assert_int_equal(o.e->ev.ctx, cases[i].ctx);
        assert_int_equal(o.e->ev.cpu, 2);
        rec_free(o.r);
    }
}

/* Decimal fields: every length up to 20 digits, the 64-bit edge, and
 * what is not a number (the 19-digit fast path and the checked one). */
static void test_decimal_numbers(void **state)
{
    (void)state;
    uint64_t v = 7;
    const char *max = "18446744073709551615";
    assert_true(ingest_dec_u64(max, 20, &v));
    assert_true(v == UINT64_MAX);
    assert_false(ingest_dec_u64("18446744073709551616", 20, &v));
    assert_false(ingest_dec_u64("99999999999999999999", 20, &v));
    assert_false(ingest_dec_u64("123456789012345678901", 21, &v));
    assert_true(ingest_dec_u64("9999999999999999999", 19, &v));
    assert_true(v == 9999999999999999999ull);
    assert_true(ingest_dec_u64("0000000000000000042", 19, &v) && v == 42);
    assert_true(ingest_dec_u64("00000000000000000042", 20, &v) && v == 42);
    uint64_t want = 0;
    char buf[21];
    for (int n = 1; n <= 19; n++) {
        buf[n - 1] = (char)('0' + n % 10);
        want = want * 10 + (uint64_t)(n % 10);
        assert_true(ingest_dec_u64(buf, (size_t)n, &v));
        assert_true(v == want);
    }
    assert_false(ingest_dec_u64("", 0, &v));
    assert_false(ingest_dec_u64("12a4", 4, &v));
    assert_false(ingest_dec_u64("-1", 2, &v));
    assert_false(ingest_dec_u64("1/", 2, &v)); /* '/' is '0' - 1 */
    assert_false(ingest_dec_u64("1:", 2, &v)); /* ':' is '9' + 1 */
    assert_false(ingest_dec_u64("1\xe9", 2, &v));
}

/* ingest_fmt_i64_03 prints as "%03lld": the three digits of 0-999 at
 * once, and every other number (negative, four digits and more) the
 * long way. */
static void test_fmt_03(void **state)
{
    (void)state;
    const int64_t vs[] = {-1000, -999, -100, -99, -10, -9, -1, 0, 1, 9, 10, 99, 100, 998, 999, 1000, 1001,
                          99999, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        char want[32], got[32];
        int wn = snprintf(want, sizeof want, "%03lld", (long long)vs[i]);
        size_t n = ingest_fmt_i64_03(got, vs[i]);
        got[n] = '\0';
        assert_int_equal(n, (size_t)wn);
        assert_string_equal(got, want);
    }
    for (int64_t v = -1100; v <= 1100; v++) {
        char want[32], got[32];
        snprintf(want, sizeof want, "%03lld", (long long)v);
        got[ingest_fmt_i64_03(got, v)] = '\0';
        assert_string_equal(got, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syscall_print_forms), cmocka_unit_test(test_marker_event_zero),
        cmocka_unit_test(test_multiline_events),    cmocka_unit_test(test_reorder_window),
        cmocka_unit_test(test_cut_last_line),       cmocka_unit_test(test_numeric_prev_state),
        cmocka_unit_test(test_names_from_fields),   cmocka_unit_test(test_cut_names_restored), cmocka_unit_test(test_task_columns),   cmocka_unit_test(test_flag_layouts),
        cmocka_unit_test(test_syscall_names_need_the_machine), cmocka_unit_test(test_decimal_numbers),
        cmocka_unit_test(test_fmt_03),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
