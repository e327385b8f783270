/* tests/unit/test_ftrace.c -- the ftrace text reader on the shipped traces
 * (tests/traces) and on small hand-written files for the edge cases. */
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

/* ---- the shipped traces ---- */

static const char *const traces[] = {
    "tests/traces/lockchain-anomaly.txt",       "tests/traces/ipcdaemon.txt",
    "tests/traces/lockchain-anomaly-report.txt", "tests/traces/lockchain-anomaly-raw.trace",
    "tests/traces/ipcdaemon-raw.trace",         "tests/traces/lockchain-normal.txt",
};

static void test_counts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof traces / sizeof traces[0]; i++) {
        size_t headers;
        size_t want = count_event_lines(traces[i], &headers);
        rec *r = rec_new(false);
        ingest_stats st;
        ingest_format fmt;
        char err[512] = "";
        int rc = run(r, traces[i], &fmt, &st, err, sizeof err);
        if (rc != 0)
            fail_msg("%s: %s", traces[i], err);
        assert_true(want > 800);
        assert_int_equal(r->nev, want);
        assert_int_equal(st.events, want);
        assert_int_equal(st.skipped, headers);
        assert_int_equal(r->skips, headers);
        assert_int_equal(r->order_errors, 0);
        bool raw = strstr(traces[i], ".trace") != NULL;
        assert_int_equal(fmt, raw ? INGEST_FTRACE_TRACE : INGEST_TRACE_CMD_REPORT);
        rec_free(r);
    }
}

/* thread tid was declared with this name and, unless pid is 0, belongs to
 * process pid */
static void assert_thread(rec *r, uint32_t tid, uint32_t pid, const char *name)
{
    rec_thread *t = find_thread(r, tid);
    assert_non_null(t);
    if (pid)
        assert_int_equal(t->pid, pid);
    assert_string_equal(t->name, name);
}

/* lockchain's threads and processes, as the text declares them */
static void lockchain_threads(rec *r)
{
    /* threads: 4123 (worker) belongs to process 4122 through clone_flags
     * 3d0f00 (CLONE_THREAD) of its task_newtask */
    assert_thread(r, 4123, 4122, "worker");
    assert_thread(r, 4124, 4122, "hog");
    assert_thread(r, 4122, 4122, "ui-main");
    rec_thread *t = find_thread(r, 4120);
    assert_non_null(t);
    assert_int_equal(t->pid, 4120); /* clone_flags 1200000: a process */
    /* -l cuts comm to 8 chars; sched_switch/sched_wakeup fields restore it */
    assert_thread(r, 15, 0, "rcu_preempt");
    int p = find_proc(r, 0);
    assert_true(p >= 0);
    assert_string_equal(r->pnames[p], "swapper");
    p = find_proc(r, 4122);
    assert_true(p >= 0);
    assert_string_equal(r->pnames[p], "ui-main");
    assert_true(find_proc(r, 4123) < 0); /* a thread, not a process */

    size_t worker_events = 0;
    for (size_t i = 0; i < r->nev; i++)
        if (r->ev[i].ev.tid == 4123) {
            assert_int_equal(r->ev[i].ev.pid, 4122);
            worker_events++;
        }
    assert_true(worker_events > 50);
}

static void test_lockchain_txt(void **state)
{
    (void)state;
    rec *r = rec_new(true);
    char err[512];
    assert_int_equal(run(r, "tests/traces/lockchain-anomaly.txt", NULL, NULL, err, sizeof err), 0);

    /* <idle>-0  0dNh4.  1088.969362: sched_wakeup: hog:4124 [120] CPU:000 */
    const rec_event *e = find_event(r, 1088969362000ull, "sched_wakeup");
    assert_non_null(e);
    assert_int_equal(e->ev.type, DB_EV_WAKEUP);
    assert_int_equal(e->ev.obj, 4124);
    assert_int_equal(e->ev.tid, 0);
    assert_int_equal(e->ev.pid, 0);
    assert_int_equal(e->ev.cpu, 0);
    assert_int_equal(e->ev.ctx, DB_CTX_HARDIRQ);
    assert_int_equal(e->ev.id, 0);
    assert_attr(e, "tid", "4124");
    assert_attr(e, "comm", "hog");
    assert_attr(e, "reason", "wakeup");

    /* bash-4120  1.....  1088.966940: sys_exit: NR 1 = 2 (the first event) */
    e = &r->ev[0];
    assert_int_equal(e->ev.ts, 1088966940000ull);
    assert_int_equal(e->ev.type, DB_EV_SYSCALL);
    assert_int_equal(e->ev.phase, DB_PH_END);
    assert_int_equal(e->ev.obj, 1);
    assert_int_equal(e->ev.val, 2);
    assert_int_equal(e->ev.cpu, 1);
    assert_int_equal(e->ev.ctx, DB_CTX_THREAD);
    assert_attr(e, "name", "write");
    assert_attr(e, "ret", "2");

    /* bash-4120  1.....  1088.966942: sys_enter: NR 33 (b, 1, 55f93c3f99bc, 0, 7, b) */
    e = find_event(r, 1088966942000ull, "sys_enter");
    assert_non_null(e);
    assert_int_equal(e->ev.phase, DB_PH_BEGIN);
    assert_int_equal(e->ev.obj, 33);
    assert_attr(e, "nr", "33");
    assert_attr(e, "name", "dup2");
    assert_attr(e, "args", "b, 1, 55f93c3f99bc, 0, 7, b");

    /* ui-main-4122 1.Ns1. 1088.968045: softirq_entry: vec=9 [action=RCU] */
    e = find_event(r, 1088968045000ull, "softirq_entry");
    assert_non_null(e);
    assert_int_equal(e->ev.type, DB_EV_INTERRUPT);
    assert_int_equal(e->ev.phase, DB_PH_BEGIN);
    assert_int_equal(e->ev.obj, 9);
    assert_int_equal(e->ev.ctx, DB_CTX_SOFTIRQ);
    assert_attr(e, "vec", "9");
    assert_attr(e, "action", "RCU");
    assert_attr(e, "softirq", "1");

    /* ui-main-4122 1dNh2. 1088.968036: hrtimer_start: hrtimer=0xffff888627d1c6f8
     * function=tick_nohz_handler/0x0 expires=1088972000000 ... */
    e = find_event(r, 1088968036000ull, "hrtimer_start");
    assert_non_null(e);
    assert_int_equal(e->ev.type, DB_EV_TIMER_ARM);
    assert_int_equal(e->ev.obj, 0xffff888627d1c6f8ull);
    assert_attr(e, "timer", "0xffff888627d1c6f8");
    assert_attr(e, "func", "tick_nohz_handler");
    assert_attr(e, "deadline", "1088972000000");
    e = find_event(r, 1088968017000ull, "hrtimer_expire_entry");
    assert_non_null(e);
    assert_int_equal(e->ev.type, DB_EV_TIMER_CALLOUT);
    assert_int_equal(e->ev.phase, DB_PH_BEGIN);
    assert_attr(e, "now", "1088968016703");
    e = find_event(r, 1088968274000ull, "hrtimer_cancel");
    assert_non_null(e);
    assert_int_equal(e->ev.type, DB_EV_TIMER_CANCEL);
    assert_int_equal(e->ev.obj, 0xffff888627c1c6f8ull);

    /* workqueue: queue (0d.s2.), execute_start/end on kworker/-11 */
    e = find_event(r, 1089076046000ull, "workqueue_queue_work");
    assert_non_null(e);
    assert_int_equal(e->ev.type, DB_EV_DISPATCH_ENQUEUE);
    assert_int_equal(e->ev.obj, 0xffffffff83124e60ull);
    assert_attr(e, "block", "0xffffffff83124e60");
    assert_attr(e, "func", "vmstat_shepherd");
    assert_attr(e, "queue", "events");
    e = find_event(r, 1089076072000ull, "workqueue_execute_start");
    assert_non_null(e);
    assert_int_equal(e->ev.type, DB_EV_DISPATCH_INVOKE);
    assert_int_equal(e->ev.phase, DB_PH_BEGIN);
    assert_int_equal(e->ev.tid, 11);
    assert_int_equal(e->ev.obj, 0xffffffff83124e60ull);
    assert_attr(e, "func", "vmstat_shepherd");
    e = find_event(r, 1089076078000ull, "workqueue_execute_end");
    assert_non_null(e);
    assert_int_equal(e->ev.phase, DB_PH_END);
    e = find_event(r, 1089076047000ull, "workqueue_activate_work");
    assert_non_null(e);
    assert_int_equal(e->ev.type, DB_EV_RAW);

    /* bash-4120 1d..2. 1088.967130: sched_switch: bash:4120 [120] R ==> bash:4122 [120] */
    e = find_event(r, 1088967130000ull, "sched_switch");
    assert_non_null(e);
    assert_int_equal(e->ev.type, DB_EV_RAW);
    assert_int_equal(e->ev.obj, 4122);
    /* ui-main-4122 1d..2. 1088.968276: sched_switch: ui-main:4122 [120] S ==> ui-main:4123 [120] */
    e = find_event(r, 1088968276000ull, "sched_switch");
    assert_non_null(e);
    assert_int_equal(e->ev.type, DB_EV_WAIT);
    assert_int_equal(e->ev.obj, 4123);
    assert_attr(e, "reason", "sleep");
    assert_attr(e, "state", "S");
    assert_attr(e, "next_pid", "4123");
    assert_attr(e, "next_comm", "ui-main");

    /* fork: bash-4120 1088.967119 sched_process_fork ... child_pid=4122 */
    e = find_event(r, 1088967119000ull, "sched_process_fork");
    assert_non_null(e);
    assert_int_equal(e->ev.type, DB_EV_WAKEUP);
    assert_int_equal(e->ev.obj, 4122);
    assert_attr(e, "reason", "fork");

    lockchain_threads(r);
    assert_int_equal(r->order_errors, 0);
    rec_free(r);
}

static void test_lockchain_raw(void **state)
{
    (void)state;
    rec *r = rec_new(true);
    char err[512];
    assert_int_equal(run(r, "tests/traces/lockchain-anomaly-raw.trace", NULL, NULL, err, sizeof err), 0);

    /* a futex wait that timed out: sys_exit: NR 202 = -110 */
    const rec_event *e = NULL;
    for (size_t i = 0; i < r->nev && !e; i++)
        if (strcmp(r->ev[i].name, "sys_exit") == 0 && r->ev[i].ev.val == -110)
            e = &r->ev[i];
    assert_non_null(e);
    assert_int_equal(e->ev.type, DB_EV_SYSCALL);
    assert_int_equal(e->ev.phase, DB_PH_END);
    assert_int_equal(e->ev.obj, 202);
    assert_attr(e, "name", "futex");
    assert_attr(e, "ret", "-110");

    /* worker-4154 (4153): process from the TGID column */
    assert_thread(r, 4154, 4153, "worker");
    assert_thread(r, 4155, 4153, "hog");
    assert_thread(r, 4153, 0, "ui-main");

    /* <idle>-0 (-------) [000] d.h..: TGID unknown, idle is process 0 */
    for (size_t i = 0; i < r->nev; i++) {
        if (r->ev[i].ev.tid == 0)
            assert_int_equal(r->ev[i].ev.pid, 0);
        if (r->ev[i].ev.tid == 4154)
            assert_int_equal(r->ev[i].ev.pid, 4153);
    }

    /* bash-4151 (4151) [000] d.h.. 1090.668013: hrtimer_expire_entry:
     * hrtimer=000000001ff35041 (hashed pointer, no 0x) */
    e = find_event(r, 1090668013000ull, "hrtimer_expire_entry");
    assert_non_null(e);
    assert_int_equal(e->ev.type, DB_EV_TIMER_CALLOUT);
    assert_int_equal(e->ev.obj, 0x1ff35041);
    assert_int_equal(e->ev.ctx, DB_CTX_HARDIRQ);
    assert_int_equal(e->ev.cpu, 0);
    assert_attr(e, "timer", "0x1ff35041");
    assert_attr(e, "func", "tick_nohz_handler");

    /* tracefs sched_switch: key=value form */
    size_t waits = 0;
    for (size_t i = 0; i < r->nev; i++)
        if (r->ev[i].ev.type == DB_EV_WAIT) {
            waits++;
            assert_string_equal(r->ev[i].name, "sched_switch");
        }
    assert_true(waits > 50);
    assert_int_equal(r->order_errors, 0);
    rec_free(r);
}

static void test_ipcdaemon_raw(void **state)
{
    (void)state;
    rec *r = rec_new(true);
    char err[512];
    assert_int_equal(run(r, "tests/traces/ipcdaemon-raw.trace", NULL, NULL, err, sizeof err), 0);
    /* <idle>-0 (-------) [001] d.h1. 1090.493714: irq_handler_entry: irq=36 name=virtio1-req.0 */
    const rec_event *e = find_event(r, 1090493714000ull, "irq_handler_entry");
    assert_non_null(e);
    assert_int_equal(e->ev.type, DB_EV_INTERRUPT);
    assert_int_equal(e->ev.phase, DB_PH_BEGIN);
    assert_int_equal(e->ev.obj, 36);
    assert_int_equal(e->ev.cpu, 1);
    assert_attr(e, "name", "virtio1-req.0");
    e = find_event(r, 1090493725000ull, "irq_handler_exit");
    assert_non_null(e);
    assert_int_equal(e->ev.phase, DB_PH_END);
    assert_attr(e, "ret", "handled");
    /* memfd:sealed-91-1528 (1528): comm with ':' and '-' */
    assert_thread(r, 1528, 0, "memfd:sealed-91");
    /* kworker/u8:0-12 */
    assert_thread(r, 12, 0, "kworker/u8:0");
    /* tracefs workqueue_queue_work: work struct=000000006b0fe49c */
    e = find_event(r, 1090416027000ull, "workqueue_queue_work");
    assert_non_null(e);
    assert_int_equal(e->ev.obj, 0x6b0fe49c);
    assert_attr(e, "block", "0x6b0fe49c");
    assert_attr(e, "queue", "events");
    /* the exec renames process 4144 */
    int p = find_proc(r, 4144);
    assert_true(p >= 0);
    assert_string_equal(r->pnames[p], "daemon");
    rec_free(r);
}

/* ---- line forms ---- */

static void test_three_forms(void **state)
{
    (void)state;
    static const char *const sw[3] = {
        "# tracer: nop\n"
        "          bash-4120    (   4120) [001] d..2.  1088.967130: sched_switch: prev_comm=bash "
        "prev_pid=4120 prev_prio=120 prev_state=D ==> next_comm=kworker/0:1 next_pid=11 next_prio=120\n",
        "cpus=2\n    bash-4120    1d..2.  1088.967130: sched_switch:         bash:4120 [120] D ==> "
        "kworker/0:1:11 [120]\n",
        "cpus=2\n            bash-4120  [001]  1088.967130: sched_switch:         bash:4120 [120] D "
        "==> kworker/0:1:11 [120]\n",
    };
    static const uint8_t ctx[3] = {DB_CTX_THREAD, DB_CTX_THREAD, DB_CTX_UNKNOWN};
    for (int i = 0; i < 3; i++) {
        one o = ingest_text(sw[i]);
        assert_int_equal(o.r->nev, 1);
        assert_int_equal(o.e->ev.type, DB_EV_WAIT);
        assert_int_equal(o.e->ev.ts, 1088967130000ull);
        assert_int_equal(o.e->ev.tid, 4120);
        assert_int_equal(o.e->ev.pid, 4120);
        assert_int_equal(o.e->ev.cpu, 1);
        assert_int_equal(o.e->ev.obj, 11);
        assert_int_equal(o.e->ev.ctx, ctx[i]);
        assert_attr(o.e, "reason", "io");
        assert_attr(o.e, "state", "D");
        assert_attr(o.e, "next_comm", "kworker/0:1"); /* split at the last ':' */
        assert_attr(o.e, "next_pid", "11");
        assert_attr(o.e, "prev_comm", "bash");
        rec_free(o.r);
    }

    static const char *const wk[3] = {
        "# tracer: nop\n"
        "          <idle>-0       (-------) [000] dNs4.  1090.416025: sched_wakeup: "
        "comm=rcu_preempt pid=15 prio=120 target_cpu=000\n",
        "    <idle>-0       0dNs4.  1090.416025: sched_wakeup:         rcu_preempt:15 [120] CPU:000\n",
        "  <idle>-0     [000]  1090.416025: sched_wakeup:         rcu_preempt:15 [120] CPU:000\n",
    };
    static const uint8_t wctx[3] = {DB_CTX_SOFTIRQ, DB_CTX_SOFTIRQ, DB_CTX_UNKNOWN};
    for (int i = 0; i < 3; i++) {
        one o = ingest_text(wk[i]);
        assert_int_equal(o.e->ev.type, DB_EV_WAKEUP);
        assert_int_equal(o.e->ev.obj, 15);
        assert_int_equal(o.e->ev.tid, 0);
        assert_int_equal(o.e->ev.ts, 1090416025000ull);
        assert_int_equal(o.e->ev.ctx, wctx[i]);
        assert_attr(o.e, "tid", "15");
        assert_attr(o.e, "comm", "rcu_preempt");
        assert_attr(o.e, "target_cpu", "000");
        rec_free(o.r);
    }
}

/* `trace-cmd report` prints an event through libtraceevent's plugins when
 * the machine has them (package libtraceevent1-plugin), else through the
 * kernel's print format: both texts of one event give the same event,
 * attributes byte for byte (lines from tests/traces/lockchain-anomaly.txt
 * and lockchain-anomaly-noplugin.txt).  The plugin's extra `/0x0` and the
 * print format's extra `mode=` and `was_armed=` are not kept. */
static void test_plugin_forms_same_event(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"bash:4120 [120] S ==> lockchain:4122 [120]",
         "prev_comm=bash prev_pid=4120 prev_prio=120 prev_state=S ==> next_comm=lockchain next_pid=4122 "
         "next_prio=120"},
        {"bash:4122 [120] CPU:001", "comm=bash pid=4122 prio=120 target_cpu=001"},
        {"hrtimer=0xffffc900031cfb80 function=hrtimer_wakeup/0x0 expires=1088998322387 "
         "softexpires=1088998272387",
         "hrtimer=0xffffc900031cfb80 function=hrtimer_wakeup expires=1088998322387 softexpires=1088998272387 "
         "mode=0x1 was_armed=0"},
        {"hrtimer=0xffff888627d1c6f8 now=1088968016703 function=tick_nohz_handler/0x0",
         "hrtimer=0xffff888627d1c6f8 function=tick_nohz_handler now=1088968016703"},
    };
    static const char *const events[][3] = {
        {"sched_switch", NULL}, {"sched_wakeup_new", "sched_wakeup", "sched_waking"},
        {"hrtimer_start", NULL}, {"hrtimer_expire_entry", NULL}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        for (int k = 0; k < 3 && events[i][k]; k++) {
            one o[2];
            for (int f = 0; f < 2; f++) {
                char text[512];
                snprintf(text, sizeof text, "cpus=2\n    bash-4120    1d..2.  1088.968096: %s: %s\n",
                         events[i][k], pairs[i][f]);
                o[f] = ingest_text(text);
                assert_int_equal(o[f].r->nev, 1);
            }
            const db_event *a = &o[0].e->ev, *b = &o[1].e->ev;
            assert_int_equal(a->type, b->type);
            assert_int_equal(a->obj, b->obj);
            assert_true(a->type != DB_EV_RAW || strcmp(events[i][k], "sched_waking") == 0);
            if (a->attrs_len != b->attrs_len || memcmp(o[0].e->attrs, o[1].e->attrs, a->attrs_len) != 0)
                fail_msg("%s: the plugin's and the print format's texts give other attributes", events[i][k]);
            rec_free(o[0].r);
            rec_free(o[1].r);
        }
    }
    /* the plugin never prints the "+" of a preempted task (R+): that much
     * of the kernel's text is lost in the plugin's */
    one o = ingest_text("cpus=2\n  x-1 1d..2. 5.000001: sched_switch: x:1 [120] R ==> y:2 [120]\n");
    assert_attr(o.e, "state", "R");
    rec_free(o.r);
}

/* trace-cmd's plugin prints TASK_IDLE as W and swaps X/Z: state= and
 * reason= use the kernel's letters. */
static void test_switch_states(void **state)
{
    (void)state;
    one o = ingest_text("  kworker/0:1-11 [000] 5.000001: sched_switch: kworker/0:1:11 [120] W ==> "
                        "swapper/0:0 [120]\n");
    assert_int_equal(o.e->ev.type, DB_EV_WAIT);
    assert_attr(o.e, "state", "I");
    assert_attr(o.e, "reason", "idle");
    assert_int_equal(o.e->ev.obj, 0);
    rec_free(o.r);
    o = ingest_text("  x-1 [000] 5.000001: sched_switch: prev_comm=x prev_pid=1 prev_prio=120 "
                    "prev_state=R+ ==> next_comm=y next_pid=2 next_prio=120\n");
    assert_int_equal(o.e->ev.type, DB_EV_RAW);
    assert_int_equal(o.e->ev.obj, 2);
    rec_free(o.r);
}

/* prev_state as the kernel's number (`trace-cmd report -R`): each
 * number's attributes are made once and kept by the number
 * (ftrace_state_memo), so the numbers come twice, in two orders, more of
 * them than the memo has slots: every switch must still say its own
 * state, reason and wait. */
static void test_switch_state_numbers(void **state)
{
    (void)state;
    static const struct {
        unsigned v;
        const char *letters, *reason; /* reason NULL: runnable, no wait */
    } want[] = {
        {0, "R", NULL},         {1, "S", "sleep"},       {2, "D", "io"},        {0x100, "R+", NULL},
        {0x80, "I", "idle"},    {130, "D|K", "io"},      {0x101, "S|W", "sleep"}, {1026, "D|N", "io"},
        {0x40, "P", "P"},       {4, "T", "T"},           {0x10, "X", "X"},      {2049, "S+", NULL},
        {3, "S|D", "sleep"},    {0x20, "Z", "Z"},        {8, "t", "t"},         {6, "D|T", "io"},
        {0x81, "S|K", "sleep"}, {5, "S|T", "sleep"},     {0x102, "D|W", "io"},  {9, "S|t", "sleep"},
    };
    size_t n = sizeof want / sizeof *want;
    char text[16384];
    size_t len = 0;
    for (size_t k = 0; k < 2 * n; k++) {
        size_t i = k < n ? k : 2 * n - 1 - k;
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "  x-1 [000] 5.%06zu: sched_switch: prev_comm=x prev_pid=1 prev_prio=120 "
                                "prev_state=%u ==> next_comm=y next_pid=2 next_prio=120\n",
                                k + 1, want[i].v);
    }
    one o = ingest_text(text);
    assert_int_equal(o.r->nev, 2 * n);
    for (size_t k = 0; k < 2 * n; k++) {
        size_t i = k < n ? k : 2 * n - 1 - k;
        const rec_event *e = &o.r->ev[k];
        db_event ev = e->ev;
        ev.attrs = e->attrs;
        const char *v;
        size_t vl;
        assert_attr(e, "state", want[i].letters);
        if (want[i].reason) {
            assert_int_equal(e->ev.type, DB_EV_WAIT);
            assert_attr(e, "reason", want[i].reason);
        } else {
            assert_int_equal(e->ev.type, DB_EV_RAW);
            assert_false(db_event_attr(&ev, "reason", &v, &vl));
        }
        assert_int_equal(e->ev.obj, 2);
        assert_attr(e, "next_pid", "2");
        assert_attr(e, "next_comm", "y");
    }
    rec_free(o.r);
}

static void test_comm_forms(void **state)
{
    (void)state;
    /* blanks and -DIGITS inside comm: the tid is after the last '-' */
    one o = ingest_text("  my proc-12-99 [003] 7.5: sys_exit: NR 0 = 3\n");
    assert_int_equal(o.e->ev.tid, 99);
    assert_int_equal(o.e->ev.cpu, 3);
    assert_int_equal(o.e->ev.ts, 7500000000ull);
    assert_string_equal(find_thread(o.r, 99)->name, "my proc-12");
    rec_free(o.r);
    o = ingest_text("kworker/-11      0.....  1089.076072: workqueue_execute_start: work struct "
                    "0xffffffff83124e60: function vmstat_shepherd\n");
    assert_int_equal(o.e->ev.tid, 11);
    assert_string_equal(find_thread(o.r, 11)->name, "kworker/");
    rec_free(o.r);
    o = ingest_text(" (sd-pam)-1234    (   1233) [001] ..... 1.123456789: foo_bar: a=1 b=x y\n");
    assert_int_equal(o.e->ev.tid, 1234);
    assert_int_equal(o.e->ev.pid, 1233);
    assert_int_equal(o.e->ev.ts, 1123456789ull);
    assert_int_equal(o.e->ev.type, DB_EV_RAW);
    assert_string_equal(o.e->name, "foo_bar");
    assert_attr(o.e, "a", "1");
    assert_attr(o.e, "b", "x y");
    assert_string_equal(find_thread(o.r, 1234)->name, "(sd-pam)");
    rec_free(o.r);
}

static void test_misc_events(void **state)
{
    (void)state;
    one o = ingest_text("cpus=1\n"
                        "version = 6\n"
                        "CPU 0 is empty\n"
                        "CPU:1 [LOST 123 EVENTS]\n"
                        "\n"
                        "  cat-50 [000] 2.000001: sys_enter_read: fd: 0x00000003, buf: 0x7ffd, count: 0x10\n"
                        "  cat-50 [000] 2.000002: sys_exit_read: 0xfffffffffffffff5\n"
                        "  cat-50 [000] 2.000003: tracing_mark_write: argus: wait reason=x\n"
                        "  cat-50 [000] 2.000004: sys_enter: NR 999 (0, 0)\n"
                        "  cat-50 [000] 2.000005: task_newtask: pid=51 comm=cat clone_flags=10000 oom_score_adj=0\n"
                        "  cat-51 [000] 2.000006: task_rename: pid=51 oldcomm=cat newcomm=reader oom_score_adj=0\n"
                        "  cat-50 [000] 2.000007: sched_process_exec: filename=/usr/bin/averyveryverylongname pid=50 old_pid=50\n");
    assert_int_equal(o.r->nev, 7);
    assert_int_equal(o.r->skips, 4);
    const rec_event *e = &o.r->ev[0];
    assert_int_equal(e->ev.type, DB_EV_SYSCALL);
    assert_int_equal(e->ev.phase, DB_PH_BEGIN);
    assert_int_equal(e->ev.obj, 0);
    assert_attr(e, "name", "read");
    assert_attr(e, "nr", "0");
    assert_attr(e, "args", "fd: 0x00000003, buf: 0x7ffd, count: 0x10");
    e = &o.r->ev[1];
    assert_int_equal(e->ev.phase, DB_PH_END);
    assert_int_equal(e->ev.val, -11);
    assert_attr(e, "ret", "-11");
    e = &o.r->ev[2]; /* an argus: marker is the event it spells (test_argus.c) */
    assert_int_equal(e->ev.type, DB_EV_WAIT);
    assert_string_equal(e->name, "wait");
    assert_attr(e, "reason", "x");
    e = &o.r->ev[3];
    assert_int_equal(e->ev.obj, 999); /* x86-64 has no 999: it stays a number */
    assert_no_attr(e, "name");
    /* CLONE_THREAD: 51 is a thread of 50, then renamed */
    rec_thread *t = find_thread(o.r, 51);
    assert_int_equal(t->pid, 50);
    assert_string_equal(t->name, "reader");
    assert_int_equal(o.r->ev[5].ev.pid, 50);
    int p = find_proc(o.r, 50);
    assert_string_equal(o.r->pnames[p], "averyveryverylo"); /* 15 chars */
    assert_int_equal(o.r->order_errors, 0);
    /* every event's name_len is its name's (the argus marker's too, which
     * its mapping renamed), the renamed one's unset or right */
    assert_int_equal(o.r->bad_name_lens, 0);
    assert_true(o.r->name_lens >= 6);
    rec_free(o.r);
}

/* atrace's markers: every attribute, in order (buf=, atrace=, tgid=,
 * slice= or counter=, cookie= or value=), written at once */
static void test_atrace_markers(void **state)
{
    (void)state;
    static const char *const lines[][2] = {
        {"B|40|Choreographer#doFrame 191059", "buf=B|40|Choreographer#doFrame 191059;atrace=B;tgid=40;slice=Choreographer#doFrame;"},
        {"E|40", "buf=E|40;atrace=E;tgid=40;"},
        {"E", "buf=E;atrace=E;"},
        {"C|40|frames|3", "buf=C|40|frames|3;atrace=C;tgid=40;counter=frames;value=3;"},
        {"S|40|a|b|7", "buf=S|40|a|b|7;atrace=S;tgid=40;slice=a|b;cookie=7;"},
        {"F|x|name 12", "buf=F|x|name 12;atrace=F;slice=name;"},
        {"B|40|a|b", "buf=B|40|a|b;atrace=B;tgid=40;slice=a|b;"},
        {"B|40|5 7", "buf=B|40|5 7;atrace=B;tgid=40;slice=5;"},
        {"B|40|", "buf=B|40|;"},
        {"X|1|y", "buf=X|1|y;"},
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        char text[256], got[256];
        snprintf(text, sizeof text, "  cat-50 [000] 2.000001: tracing_mark_write: %s\n", lines[i][0]);
        one o = ingest_text(text);
        assert_int_equal(o.r->nev, 1);
        size_t n = o.e->ev.attrs_len;
        assert_true(n < sizeof got);
        for (size_t k = 0; k < n; k++)
            got[k] = o.e->attrs[k] ? o.e->attrs[k] : ';';
        got[n] = '\0';
        assert_string_equal(got, lines[i][1]);
        rec_free(o.r);
    }
}

/* ---- errors ---- */

static void expect_error(const char *text, const char *want1, const char *want2)
{
    char *path = write_temp(text);
    rec *r = rec_new(false);
    char err[512] = "";
    assert_int_equal(run(r, path, NULL, NULL, err, sizeof err), -1);
    if (strncmp(err, path, strlen(path)) != 0 || !strstr(err, want1) || (want2 && !strstr(err, want2)))
        fail_msg("error '%s' lacks '%s' / '%s'", err, want1, want2 ? want2 : "");
    unlink(path);
    free(path);
    rec_free(r);
}

static void test_errors(void **state)
{
    (void)state;
    const char *ok = "    bash-4120    1.....  1088.966940: sys_exit:             NR 1 = 2\n";
    char buf[1024];
    snprintf(buf, sizeof buf, "cpus=2\n%sthis is not an event\n%s", ok, ok);
    expect_error(buf, ":3: ", "not an ftrace event line");
    snprintf(buf, sizeof buf, "cpus=2\n%s    bash-4120    1.....  1088.9669401234: sys_exit: NR 1 = 2\n", ok);
    expect_error(buf, ":3: ", "bad timestamp");
    snprintf(buf, sizeof buf, "cpus=2\n    bash-4120    1.....  1088: sys_exit: NR 1 = 2\n");
    expect_error(buf, ":2: ", "bad timestamp");
    snprintf(buf, sizeof buf, "cpus=2\n    bash-4120    1.....  1088.1: sys_exit: NR x = 2\n");
    expect_error(buf, ":2: ", "sys_exit");
    expect_error("#argus-trace 2\nproc 1 \"x\"\n", ":1: ", "#argus-trace 1");
    expect_error("hello\n", ":1: ", "unknown trace format");

    /* a line longer than 1 MiB */
    size_t n = INGEST_LINE_MAX + 100;
    char *big = malloc(n + 200);
    assert_non_null(big);
    strcpy(big, ok);
    size_t l = strlen(big);
    memset(big + l, 'x', n);
    strcpy(big + l + n, "\n");
    expect_error(big, ":2: ", "line too long");
    /* ... also as the last line, without a newline */
    big[l + n] = '\0';
    expect_error(big, ":2: ", "line too long");
    free(big);
}

static void test_sink_error(void **state)
{
    (void)state;
    const char *path = "tests/traces/lockchain-anomaly.txt";
    rec *r = rec_new(false);
    r->fail_at = 5;
    r->fail_msg = "disk full";
    char err[512];
    assert_int_equal(run(r, path, NULL, NULL, err, sizeof err), -1);
    assert_string_equal(err, "tests/traces/lockchain-anomaly.txt:6: disk full");
    rec_free(r);
    r = rec_new(false);
    r->fail_at = 2;
    r->fail_msg = "tests/traces/lockchain-anomaly.txt:3: mine";
    assert_int_equal(run(r, path, NULL, NULL, err, sizeof err), -1);
    assert_string_equal(err, "tests/traces/lockchain-anomaly.txt:3: mine");
    rec_free(r);
}

/* Copy k of the raw trace is k * 2 s later: each " SSSS.UUUUUU:" timestamp
 * (four digits of seconds) moves, so that no thread's time goes back. */
static void shift_seconds(char *s, size_t n, int k)
{
    for (size_t i = 0; i + 13 <= n; i++) {
        const char *p = s + i;
        if (p[0] != ' ' || p[5] != '.' || p[12] != ':')
            continue;
        bool digits = true;
        for (int j = 1; j < 12; j++)
            digits = digits && (j == 5 || (p[j] >= '0' && p[j] <= '9'));
        if (!digits)
            continue;
        int sec = atoi(p + 1) + 2 * k;
        char d[5];
        snprintf(d, sizeof d, "%04d", sec);
        memcpy(s + i + 1, d, 4);
    }
}

/* Many chunks: the trace repeated past the 1 MiB buffer several times. */
static void test_streaming(void **state)
{
    (void)state;
    FILE *in = fopen("tests/traces/lockchain-anomaly-raw.trace", "r");
    assert_non_null(in);
    char *body = malloc(1 << 20);
    size_t n = fread(body, 1, 1 << 20, in);
    fclose(in);
    char path[] = "/tmp/test_ftrace_big_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    char *copy = malloc(n);
    assert_non_null(copy);
    for (int i = 0; i < 40; i++) {
        memcpy(copy, body, n);
        shift_seconds(copy, n, i);
        assert_int_equal(write(fd, copy, n), (ssize_t)n);
    }
    free(copy);
    close(fd);
    free(body);
    rec *r = rec_new(false);
    ingest_stats st;
    char err[512];
    assert_int_equal(run(r, path, NULL, &st, err, sizeof err), 0);
    assert_int_equal(st.events, 40 * 1083);
    assert_int_equal(st.lines, 40 * 1095);
    unlink(path);
    rec_free(r);
}

static void test_detect(void **state)
{
    (void)state;
    assert_int_equal(ingest_detect("#argus-trace 1\n", 15), INGEST_ARGUS);
    assert_int_equal(ingest_detect("# tracer: nop\n#\n", 16), INGEST_FTRACE_TRACE);
    assert_int_equal(ingest_detect("cpus=2\n", 7), INGEST_TRACE_CMD_REPORT);
    const char *l = "  bash-1 1.....  1.000001: x: y\n";
    assert_int_equal(ingest_detect(l, strlen(l)), INGEST_TRACE_CMD_REPORT);
    l = "  bash-1 [001] d..2.  1.000001: x: y\n";
    assert_int_equal(ingest_detect(l, strlen(l)), INGEST_FTRACE_TRACE);
    l = "  bash-1 (    1) [001] 1.000001: x: y\n";
    assert_int_equal(ingest_detect(l, strlen(l)), INGEST_FTRACE_TRACE);
    l = "  bash-1 [001]  1.000001: x: y\n";
    assert_int_equal(ingest_detect(l, strlen(l)), INGEST_TRACE_CMD_REPORT);
    assert_int_equal(ingest_detect("garbage\n", 8), INGEST_UNKNOWN);
    assert_int_equal(ingest_detect("", 0), INGEST_UNKNOWN);
    assert_string_equal(ingest_format_name(INGEST_FTRACE_TRACE), "ftrace-trace");
    assert_string_equal(ingest_format_name(INGEST_TRACE_CMD_REPORT), "trace-cmd-report");
    assert_string_equal(ingest_format_name(INGEST_ARGUS), "argus");
}

/* A reader that gives the comm column's hash (ftrace_line.comm_hash, as
 * Perfetto's reader does for <idle>) gets what the text would give, and
 * the hash given is what the column is known by. */
static int comm_line(ftrace_reader *fr, uint32_t tid, const char *comm, uint64_t ts, bool give)
{
    char name[] = "tick";
    ftrace_line li;
    memset(&li, 0, sizeof li);
    li.comm = comm;
    li.comm_len = strlen(comm);
    li.comm_hash = give ? ingest_ft_comm_hash(comm, strlen(comm)) : 0;
    li.tid = tid;
    li.ts = ts;
    li.name = name;
    li.name_len = 4;
    li.fields = "";
    fr->nkv = 0;
    return ingest_ft_event(fr, &li, FTRACE_EV_OTHER);
}

static void test_comm_hash_given(void **state)
{
    (void)state;
    static const struct {
        uint32_t tid;
        const char *comm;
    } lines[] = {{0, "<idle>"}, {7, "worker"}, {0, "<idle>"}, {7, "worker2"}, {7, "worker2"}, {0, "<idle>"}, {9, "<...>"}};
    rec *r[2];
    for (int give = 0; give < 2; give++) {
        r[give] = rec_new(true);
        ingest_sink s = {.ctx = r[give], .proc = on_proc, .thread = on_thread, .event = on_event, .skip = on_skip};
        ingest_stats st;
        memset(&st, 0, sizeof st);
        char err[256];
        ftrace_reader fr;
        assert_int_equal(ingest_ft_reader_init(&fr, "t", &s, &st, err, sizeof err), 0);
        for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
            assert_int_equal(comm_line(&fr, lines[i].tid, lines[i].comm, 1000 * (i + 1), give), 0);
        ingest_ft_reader_free(&fr);
    }
    assert_int_equal(r[0]->nev, r[1]->nev);
    assert_int_equal(r[0]->thread_calls, r[1]->thread_calls);
    assert_int_equal(r[0]->proc_calls, r[1]->proc_calls);
    assert_int_equal(r[0]->nth, r[1]->nth);
    for (size_t i = 0; i < r[0]->nth; i++) {
        assert_int_equal(r[0]->th[i].tid, r[1]->th[i].tid);
        assert_string_equal(r[0]->th[i].name, r[1]->th[i].name);
    }
    assert_string_equal(find_thread(r[1], 7)->name, "worker2");
    assert_string_equal(find_thread(r[1], 0)->name, "<idle>");
    rec_free(r[0]);
    rec_free(r[1]);

    /* the hash given, not the text, is what a column is compared by: the
     * same hash under another text is the same column (no rename) */
    rec *q = rec_new(true);
    ingest_sink s = {.ctx = q, .proc = on_proc, .thread = on_thread, .event = on_event, .skip = on_skip};
    ingest_stats st;
    memset(&st, 0, sizeof st);
    char err[256];
    ftrace_reader fr;
    assert_int_equal(ingest_ft_reader_init(&fr, "t", &s, &st, err, sizeof err), 0);
    assert_int_equal(comm_line(&fr, 7, "worker", 1000, true), 0);
    char name[] = "tick";
    ftrace_line li;
    memset(&li, 0, sizeof li);
    li.comm = "other";
    li.comm_len = 5;
    li.comm_hash = ingest_ft_comm_hash("worker", 6);
    li.tid = 7;
    li.ts = 2000;
    li.name = name;
    li.name_len = 4;
    li.fields = "";
    fr.nkv = 0;
    assert_int_equal(ingest_ft_event(&fr, &li, FTRACE_EV_OTHER), 0);
    assert_string_equal(find_thread(q, 7)->name, "worker");
    assert_int_equal(comm_line(&fr, 7, "other", 3000, false), 0);
    assert_string_equal(find_thread(q, 7)->name, "other");
    ingest_ft_reader_free(&fr);
    rec_free(q);
}

static void test_lexer(void **state)
{
    (void)state;
    ftrace_line li;
    char a[] = "  <idle>-0  0dNh4.  1088.969362: sched_wakeup: hog:4124 [120] CPU:000";
    assert_int_equal(ingest_ftrace_lex_line(a, &li), FTRACE_LEX_OK);
    assert_int_equal(li.tid, 0);
    assert_int_equal(li.cpu, 0);
    assert_int_equal(li.flags_len, 5);
    assert_memory_equal(li.flags, "dNh4.", 5);
    assert_int_equal(li.form, FTRACE_FORM_REPORT_L);
    assert_int_equal(li.ts, 1088969362000ull);
    assert_int_equal(li.name_len, 12);
    assert_memory_equal(li.comm, "<idle>", 6);
    assert_string_equal(li.fields, "hog:4124 [120] CPU:000");
    char b[] = " memfd:sealed-91-1528    (   1528) [000] d..3.  1090.414073: hrtimer_cancel: h=1  ";
    assert_int_equal(ingest_ftrace_lex_line(b, &li), FTRACE_LEX_OK);
    assert_int_equal(li.tid, 1528);
    assert_true(li.has_tgid);
    assert_int_equal(li.tgid, 1528);
    assert_int_equal(li.comm_len, 15);
    assert_int_equal(li.fields_len, 3);
    assert_int_equal(li.form, FTRACE_FORM_TRACEFS);
    char c[] = "  x-1 (-------) [012] d..3.  5.1: e: ";
    assert_int_equal(ingest_ftrace_lex_line(c, &li), FTRACE_LEX_OK);
    assert_false(li.has_tgid);
    assert_int_equal(li.cpu, 12);
    assert_int_equal(li.ts, 5100000000ull);
    assert_int_equal(li.fields_len, 0);
    char d[] = "  x-1 [000] 5.: e: f";
    assert_int_equal(ingest_ftrace_lex_line(d, &li), FTRACE_LEX_BAD_TS);
    char e[] = "  x-1 [000] 5.1: : f";
    assert_int_equal(ingest_ftrace_lex_line(e, &li), FTRACE_LEX_NOMATCH);
    assert_int_equal(ingest_ftrace_lex_header("CPU:1 [LOST 123 EVENTS]"), 1);
    assert_int_equal(ingest_ftrace_lex_header("version = 6"), 1);
    assert_int_equal(ingest_ftrace_lex_header("cpus=2"), 1);
    assert_int_equal(ingest_ftrace_lex_header("CPU 0 is empty"), 1);
    assert_int_equal(ingest_ftrace_lex_header("CPU 0 is full"), 0);
    ftrace_kv kv[8];
    assert_int_equal(ingest_ftrace_lex_kv("vec=9 [action=RCU]", kv, 8), 2);
    assert_memory_equal(kv[1].key, "action", 6);
    assert_int_equal(kv[1].vlen, 3);
    assert_int_equal(ingest_ftrace_lex_kv("work struct=0x1", kv, 8), -1);
    assert_int_equal(ingest_ftrace_lex_kv("NR 1 = 2", kv, 8), -1);
    assert_int_equal(ingest_ftrace_lex_kv("a=1 b=2 c=3", kv, 2), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_atrace_markers), cmocka_unit_test(test_counts),        cmocka_unit_test(test_lockchain_txt),
        cmocka_unit_test(test_lockchain_raw), cmocka_unit_test(test_ipcdaemon_raw),
        cmocka_unit_test(test_three_forms),   cmocka_unit_test(test_switch_states),
        cmocka_unit_test(test_switch_state_numbers),
        cmocka_unit_test(test_plugin_forms_same_event),
        cmocka_unit_test(test_comm_forms),    cmocka_unit_test(test_misc_events),
        cmocka_unit_test(test_errors),        cmocka_unit_test(test_sink_error),
        cmocka_unit_test(test_streaming),     cmocka_unit_test(test_detect),
        cmocka_unit_test(test_lexer),         cmocka_unit_test(test_comm_hash_given),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
