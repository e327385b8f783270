/* tests/unit/test_ctf_perf.c -- the LTTng / perf CTF mapping (ctf_map.c)
 * fed field sets written here, and perf script lines (perf.c): each must
 * give the db event an ftrace line of the same tracepoint gives. */
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
#include "ingest/ctf.h"
#include "ingest/ftrace.h"
#include "ingest/ingest.h"
#include "ingest/perf.h"

#include "ftrace_rec.h"

/* ---- field sets ---- */

#define U(n, v) {.name = n, .type = CTF_F_UINT, .u = v}
#define I(n, v) {.name = n, .type = CTF_F_INT, .i = v}
#define S(n, v) {.name = n, .type = CTF_F_STR, .s = v, .slen = sizeof v - 1}
#define N(a) (sizeof(a) / sizeof(a)[0])

typedef struct cm {
    rec *r;
    ingest_sink sink;
    ingest_stats st;
    ctf_map *m;
    char err[512];
    uint64_t n;
} cm;

static void cm_open(cm *c)
{
    memset(c, 0, sizeof *c);
    c->r = rec_new(true);
    c->sink = (ingest_sink){.ctx = c->r, .proc = on_proc, .thread = on_thread, .event = on_event, .skip = on_skip};
    c->m = ingest_ctf_map_new("trace", &c->sink, NULL, &c->st, c->err, sizeof c->err);
    assert_non_null(c->m);
}

static void cm_close(cm *c)
{
    ingest_ctf_map_free(c->m);
    rec_free(c->r);
}

static int feed(cm *c, const char *name, uint64_t ts, int64_t cpu, const ctf_field *pay, size_t npay)
{
    ctf_event_in e = {.name = name, .ts = ts, .cpu = cpu, .pay = pay, .npay = npay};
    return ingest_ctf_map_event(c->m, &e, ++c->n);
}

static const rec_event *last(cm *c) { return &c->r->ev[c->r->nev - 1]; }

/* LTTng: tid for pid, the task from the CPU's last switch, a wakeup */
static void test_lttng_switch_and_wakeup(void **state)
{
    (void)state;
    cm c;
    cm_open(&c);
    /* the task on CPU 1 before its first switch (the reader's prescan) */
    assert_int_equal(ingest_ctf_map_seed(c.m, 1, 0, "swapper/1", 9), 0);
    ctf_field w[] = {S("comm", "worker"), U("tid", 42), I("prio", 20), I("target_cpu", 1)};
    assert_int_equal(feed(&c, "sched_waking", 1000, 1, w, N(w)), 0);
    assert_int_equal(feed(&c, "sched_wakeup", 1500, 1, w, N(w)), 0);
    const rec_event *e = last(&c);
    assert_int_equal(e->ev.type, DB_EV_WAKEUP);
    assert_int_equal(e->ev.obj, 42);
    assert_int_equal(e->ev.tid, 0); /* the idle task of CPU 1 woke it */
    assert_int_equal(e->ev.cpu, 1);
    assert_int_equal(e->ev.ts, 1500);
    assert_attr(e, "reason", "wakeup");
    ctf_field sw[] = {S("prev_comm", "swapper/1"), U("prev_tid", 0), I("prev_prio", 20), I("prev_state", 0),
                      S("next_comm", "worker"),    U("next_tid", 42), I("next_prio", 20)};
    assert_int_equal(feed(&c, "sched_switch", 2000, 1, sw, N(sw)), 0);
    assert_int_equal(last(&c)->ev.type, DB_EV_RAW); /* R: a preemption, not a wait */
    assert_attr(last(&c), "next_pid", "42");
    /* the next task is now CPU 1's: a syscall of it, by the new naming */
    ctf_field ent[] = {U("fd", 3), U("count", 16)};
    assert_int_equal(feed(&c, "syscall_entry_read", 2100, 1, ent, N(ent)), 0);
    e = last(&c);
    assert_int_equal(e->ev.tid, 42);
    assert_int_equal(e->ev.type, DB_EV_SYSCALL);
    assert_int_equal(e->ev.phase, DB_PH_BEGIN);
    assert_string_equal(e->name, "sys_enter_read");
    assert_attr(e, "name", "read");
    assert_attr(e, "args", "fd: 0x3, count: 0x10");
    ctf_field ex[] = {I("ret", -11)};
    assert_int_equal(feed(&c, "syscall_exit_read", 2200, 1, ex, N(ex)), 0);
    assert_int_equal(last(&c)->ev.val, -11);
    /* worker sleeps: a wait (S) */
    ctf_field out[] = {S("prev_comm", "worker"), U("prev_tid", 42), I("prev_prio", 20), I("prev_state", 1),
                       S("next_comm", "swapper/1"), U("next_tid", 0), I("next_prio", 20)};
    assert_int_equal(feed(&c, "sched_switch", 3000, 1, out, N(out)), 0);
    assert_int_equal(last(&c)->ev.type, DB_EV_WAIT);
    assert_attr(last(&c), "reason", "sleep");
    rec_thread *t = find_thread(c.r, 42);
    assert_non_null(t);
    assert_string_equal(t->name, "worker");
    assert_int_equal(c.r->order_errors, 0);
    cm_close(&c);
}

/* the old naming: softirq_*, sys_X / exit_syscall; irq context */
static void test_lttng_old_naming_and_irqs(void **state)
{
    (void)state;
    cm c;
    cm_open(&c);
    assert_int_equal(ingest_ctf_map_seed(c.m, 0, 7, "sh", 2), 0);
    ctf_field a[] = {U("fd", 1)};
    assert_int_equal(feed(&c, "sys_ioctl", 10, 0, a, N(a)), 0);
    assert_string_equal(last(&c)->name, "sys_enter_ioctl");
    ctf_field ie[] = {I("irq", 27), S("name", "ahci")};
    assert_int_equal(feed(&c, "irq_handler_entry", 20, 0, ie, N(ie)), 0);
    assert_int_equal(last(&c)->ev.type, DB_EV_INTERRUPT);
    assert_int_equal(last(&c)->ev.ctx, DB_CTX_HARDIRQ);
    ctf_field ix[] = {I("irq", 27), I("ret", 1)};
    assert_int_equal(feed(&c, "irq_handler_exit", 30, 0, ix, N(ix)), 0);
    ctf_field v[] = {U("vec", 3)};
    assert_int_equal(feed(&c, "softirq_entry", 40, 0, v, N(v)), 0);
    assert_string_equal(last(&c)->name, "softirq_entry");
    assert_int_equal(last(&c)->ev.ctx, DB_CTX_SOFTIRQ);
    assert_attr(last(&c), "softirq", "1");
    assert_int_equal(feed(&c, "irq_softirq_exit", 50, 0, v, N(v)), 0);
    assert_string_equal(last(&c)->name, "softirq_exit");
    assert_int_equal(last(&c)->ev.phase, DB_PH_END);
    ctf_field r[] = {I("ret", 0)};
    assert_int_equal(feed(&c, "exit_syscall", 60, 0, r, N(r)), 0);
    const rec_event *e = last(&c);
    assert_string_equal(e->name, "sys_exit_ioctl");
    assert_int_equal(e->ev.type, DB_EV_SYSCALL);
    assert_int_equal(e->ev.phase, DB_PH_END);
    assert_int_equal(e->ev.ctx, DB_CTX_THREAD);
    assert_int_equal(e->ev.tid, 7);
    cm_close(&c);
}

/* the thread table at start; a fork's child in its process (LTTng's
 * child_pid is the tgid); no task known yet: skipped */
static void test_lttng_statedump_and_fork(void **state)
{
    (void)state;
    cm c;
    cm_open(&c);
    ctf_field x[] = {U("vec", 1)};
    assert_int_equal(feed(&c, "softirq_raise", 5, 3, x, N(x)), 0);
    assert_int_equal(c.r->nev, 0);
    assert_int_equal(c.r->skips, 1);
    assert_int_equal(ingest_ctf_map_seed(c.m, 0, 100, "lttng-sessiond", 14), 0);
    ctf_field sd[] = {U("tid", 201), U("vtid", 201), U("pid", 200), S("name", "firefox-gfx"), I("status", 5)};
    assert_int_equal(feed(&c, "lttng_statedump_process_state", 10, 0, sd, N(sd)), 0);
    rec_thread *t = find_thread(c.r, 201);
    assert_non_null(t);
    assert_int_equal(t->pid, 200);
    assert_string_equal(t->name, "firefox-gfx");
    ctf_field fk[] = {S("parent_comm", "lttng-sessiond"), U("parent_tid", 100), U("parent_pid", 100),
                      S("child_comm", "lttng-sessiond"),  U("child_tid", 101),  U("child_pid", 100)};
    assert_int_equal(feed(&c, "sched_process_fork", 20, 0, fk, N(fk)), 0);
    const rec_event *e = last(&c);
    assert_int_equal(e->ev.type, DB_EV_WAKEUP);
    assert_int_equal(e->ev.obj, 101);
    assert_attr(e, "reason", "fork");
    t = find_thread(c.r, 101);
    assert_non_null(t);
    assert_int_equal(t->pid, 100); /* a thread of the parent's process */
    assert_int_equal(c.r->order_errors, 0);
    cm_close(&c);
}

/* perf data convert --to-ctf: system:event names, perf_tid/perf_pid/perf_cpu,
 * common_flags for the context, ftrace's own field names */
static void test_perf_ctf(void **state)
{
    (void)state;
    cm c;
    cm_open(&c);
    ctf_field w[] = {U("perf_ip", 0),        U("perf_tid", 0),       U("perf_pid", 0),    U("perf_cpu", 2),
                     I("common_flags", 13),  I("common_pid", 0),     S("comm", "perf"),   I("pid", 1834),
                     I("prio", 120),         I("success", 1),        I("target_cpu", 2)};
    assert_int_equal(feed(&c, "sched:sched_wakeup", 100, -1, w, N(w)), 0);
    const rec_event *e = last(&c);
    assert_string_equal(e->name, "sched_wakeup");
    assert_int_equal(e->ev.type, DB_EV_WAKEUP);
    assert_int_equal(e->ev.obj, 1834);
    assert_int_equal(e->ev.cpu, 2);
    assert_int_equal(e->ev.ctx, DB_CTX_HARDIRQ); /* 0x08 in common_flags */
    ctf_field sw[] = {U("perf_tid", 1832),       U("perf_pid", 1832),  U("perf_cpu", 3), I("common_flags", 1),
                      S("prev_comm", "perf"),    I("prev_pid", 1832),  I("prev_prio", 120), I("prev_state", 1),
                      S("next_comm", "swapper/3"), I("next_pid", 0),   I("next_prio", 120)};
    assert_int_equal(feed(&c, "sched:sched_switch", 200, -1, sw, N(sw)), 0);
    e = last(&c);
    assert_int_equal(e->ev.tid, 1832);
    assert_int_equal(e->ev.type, DB_EV_WAIT);
    assert_int_equal(e->ev.ctx, DB_CTX_THREAD);
    assert_string_equal(find_thread(c.r, 1832)->name, "perf");
    cm_close(&c);
}

/* ---- perf script lines ---- */

static void test_perf_lex(void **state)
{
    (void)state;
    ftrace_line li;
    const char *l = "     migration/0    18 [000] 66515.938959:       sched:sched_waking: comm=perf pid=12978 "
                    "prio=120 target_cpu=000";
    assert_true(ingest_perf_lex_line(l, &li, true));
    assert_int_equal(li.comm_len, 11);
    assert_memory_equal(li.comm, "migration/0", 11);
    assert_int_equal(li.tid, 18);
    assert_false(li.has_tgid);
    assert_int_equal(li.cpu, 0);
    assert_int_equal(li.ts, 66515938959000ull);
    assert_int_equal(li.name_len, 12);
    assert_memory_equal(li.name, "sched_waking", 12);
    assert_memory_equal(li.fields, "comm=perf", 9);
    /* -F pid,tid, --ns, a comm with a blank */
    l = "  Web Content  4000/4012 [001] 12.000000123: sched:sched_switch: prev_comm=x";
    assert_true(ingest_perf_lex_line(l, &li, true));
    assert_int_equal(li.comm_len, 11);
    assert_int_equal(li.tgid, 4000);
    assert_true(li.has_tgid);
    assert_int_equal(li.tid, 4012);
    assert_int_equal(li.cpu, 1);
    assert_int_equal(li.ts, 12000000123ull);
    /* ftrace's own lines are not perf's */
    assert_false(ingest_perf_lex_line("  bash-4120  [001] d..2  1088.966940: sched_switch: prev_comm=bash", &li, true));
    assert_false(ingest_perf_lex_line("hello world", &li, false));
    /* a sample event: its period before the name (not for detection) */
    l = "perf 10 [000] 1.5:     250000 cpu-clock:  ffffffff81000000 x ([kernel])";
    assert_false(ingest_perf_lex_line(l, &li, true));
    assert_true(ingest_perf_lex_line(l, &li, false));
    assert_memory_equal(li.name, "cpu-clock", 9);
}

static void test_perf_script_file(void **state)
{
    (void)state;
    char *path = write_temp(
        "# ========\n# hostname : vm\n# perf version : 6.1.187\n# ========\n"
        "            perf 12978 [000] 66515.938951:       sched:sched_waking: comm=migration/0 pid=18 prio=0 "
        "target_cpu=000\n"
        "            perf 12978 [000] 66515.938956:       sched:sched_switch: prev_comm=perf prev_pid=12978 "
        "prev_prio=120 prev_state=D ==> next_comm=migration/0 next_pid=18 next_prio=0\n"
        "     migration/0    18 [000] 66515.938971: sched:sched_stat_runtime: comm=migration/0 pid=18 "
        "runtime=15443 [ns]\n"
        "             :-1    -1 [001] 66515.939000:       sched:sched_switch: prev_comm=hog2 prev_pid=20706 "
        "prev_prio=120 prev_state=X ==> next_comm=swapper/1 next_pid=0 next_prio=120\n");
    rec *r = rec_new(true);
    ingest_format f;
    ingest_stats st;
    char err[512];
    assert_int_equal(run(r, path, &f, &st, err, sizeof err), 0);
    assert_int_equal(f, INGEST_PERF_SCRIPT);
    assert_string_equal(ingest_format_name(f), "perf-script");
    assert_string_equal(st.meta.recorder, "perf 6.1.187");
    assert_string_equal(st.meta.host, "vm");
    assert_int_equal(r->nev, 4);
    assert_string_equal(r->ev[0].name, "sched_waking");
    assert_int_equal(r->ev[1].ev.type, DB_EV_WAIT);
    assert_attr(&r->ev[1], "reason", "io");
    assert_int_equal(r->ev[1].ev.ts, 66515938956000ull);
    assert_int_equal(r->ev[1].ev.cpu, 0);
    assert_int_equal(r->ev[3].ev.tid, 20706); /* perf's -1: the switch's prev */
    assert_string_equal(find_thread(r, 20706)->name, "hog2");
    assert_int_equal(r->order_errors, 0);
    rec_free(r);
    unlink(path);
    free(path);
    /* not a perf script line after perf's lines: the file and line */
    path = write_temp("            perf 12978 [000] 66515.938951:       sched:sched_waking: comm=m pid=18 prio=0 "
                      "target_cpu=000\nthis is not perf\n");
    r = rec_new(true);
    assert_int_equal(run(r, path, &f, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, ":2: not a perf script line"));
    rec_free(r);
    unlink(path);
    free(path);
}

static void test_detect(void **state)
{
    (void)state;
    assert_int_equal(ingest_detect("PERFILE2\x68\0\0\0", 12), INGEST_PERF_DATA);
    const char *t = "perf 1 [000] 1.000001: sched:sched_switch: prev_comm=a\n";
    assert_int_equal(ingest_detect(t, strlen(t)), INGEST_PERF_SCRIPT);
    assert_int_equal(ingest_detect_folder("/nonexistent"), INGEST_UNKNOWN);
    assert_int_equal(ingest_detect_folder("tests"), INGEST_UNKNOWN); /* a folder without metadata */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lttng_switch_and_wakeup), cmocka_unit_test(test_lttng_old_naming_and_irqs),
        cmocka_unit_test(test_lttng_statedump_and_fork), cmocka_unit_test(test_perf_ctf),
        cmocka_unit_test(test_perf_lex),                 cmocka_unit_test(test_perf_script_file),
        cmocka_unit_test(test_detect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
