/* tests/unit/test_ctf_perf.c -- the LTTng / perf CTF mapping (ctf_map.c)
 * fed field sets written here, and perf script lines (perf.c): each must
 * give the db event an ftrace line of the same tracepoint gives; an
 * LTTng-UST event lands on the thread of its vtid context. */
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
#include "ingest/ctf/ctf_int.h"
#include "ingest/ftrace/ftrace_map_int.h"
#include "ingest/ingest.h"
#include "ingest/perf/perf_int.h"

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

/* an LTTng-UST event: its contexts (vtid, vpid, procname) and payload */
static int feed_ust(cm *c, const char *name, uint64_t ts, int64_t cpu, const ctf_field *ctx, size_t nctx,
                    const ctf_field *pay, size_t npay)
{
    ctf_event_in e = {.name = name, .ust = true, .ts = ts, .cpu = cpu, .ctx = ctx, .nctx = nctx, .pay = pay,
                      .npay = npay};
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

/* LTTng before ctf_integer_hex (2.0, 2.1, still 2.5) declared pointers
 * as decimal integers: the addresses the mapping reads are hex all the
 * same (a 64-bit one in decimal was refused, a 32-bit one misread) */
static void test_lttng_decimal_pointers(void **state)
{
    (void)state;
    cm c;
    cm_open(&c);
    assert_int_equal(ingest_ctf_map_seed(c.m, 0, 2001, "worker", 6), 0);
    ctf_field cancel[] = {U("hrtimer", 0xFFFF88003A5C7E28ull)};
    assert_int_equal(feed(&c, "hrtimer_cancel", 10, 0, cancel, N(cancel)), 0);
    assert_int_equal(last(&c)->ev.type, DB_EV_TIMER_CANCEL);
    assert_int_equal(last(&c)->ev.obj, 0xFFFF88003A5C7E28ull);
    assert_attr(last(&c), "timer", "0xffff88003a5c7e28");
    ctf_field start[] = {U("hrtimer", 0xF5A3C0E0), U("function", 0xC1057A40), I("expires", 5050000000),
                         I("softexpires", 5050000000)};
    assert_int_equal(feed(&c, "hrtimer_start", 20, 0, start, N(start)), 0);
    assert_int_equal(last(&c)->ev.type, DB_EV_TIMER_ARM);
    assert_int_equal(last(&c)->ev.obj, 0xF5A3C0E0); /* not 0x4121149664, its decimal digits */
    assert_attr(last(&c), "func", "0xc1057a40");
    assert_attr(last(&c), "deadline", "5050000000"); /* times stay decimal */
    ctf_field work[] = {U("work", 0xFFFF88003B1C2D40ull), U("function", 0xFFFFFFFF8106C2E0ull)};
    assert_int_equal(feed(&c, "workqueue_execute_start", 30, 0, work, N(work)), 0);
    assert_int_equal(last(&c)->ev.type, DB_EV_DISPATCH_INVOKE);
    assert_attr(last(&c), "block", "0xffff88003b1c2d40");
    /* 2.0's sched_wakeup carries success: kept, and still a wakeup */
    ctf_field w[] = {S("comm", "helper"), I("tid", 2002), I("prio", 20), I("success", 1), I("target_cpu", 1)};
    assert_int_equal(feed(&c, "sched_wakeup", 40, 0, w, N(w)), 0);
    assert_int_equal(last(&c)->ev.type, DB_EV_WAKEUP);
    assert_int_equal(last(&c)->ev.obj, 2002);
    assert_int_equal(c.r->order_errors, 0);
    cm_close(&c);
}

/* LTTng-UST: an application's event on the thread of its vtid context,
 * raw under its provider:event name; without vtid it is nobody's:
 * skipped, and counted as such for the summary */
static void test_lttng_ust(void **state)
{
    (void)state;
    cm c;
    cm_open(&c);
    assert_int_equal(ingest_ctf_map_seed(c.m, 1, 0, "swapper/1", 9), 0);
    ctf_field ctx[] = {I("vtid", 4243), I("vpid", 4242), S("procname", "myapp-worker")};
    ctf_field pay[] = {I("id", 2), S("what", "work")};
    assert_int_equal(feed_ust(&c, "myapp:request_begin", 100, 1, ctx, N(ctx), pay, N(pay)), 0);
    const rec_event *e = last(&c);
    assert_string_equal(e->name, "myapp:request_begin");
    assert_int_equal(e->ev.type, DB_EV_RAW);
    assert_int_equal(e->ev.tid, 4243);
    assert_int_equal(e->ev.pid, 4242);
    assert_int_equal(e->ev.cpu, 1);
    assert_int_equal(e->ev.ctx, DB_CTX_THREAD);
    assert_attr(e, "id", "2");
    assert_attr(e, "what", "work");
    rec_thread *t = find_thread(c.r, 4243);
    assert_non_null(t);
    assert_string_equal(t->name, "myapp-worker");
    assert_int_equal(t->pid, 4242);
    /* an application's event named like the kernel's is not the kernel's */
    ctf_field sw[] = {S("prev_comm", "x"), I("prev_tid", 7), I("prev_prio", 20), I("prev_state", 1),
                      S("next_comm", "y"), I("next_tid", 8), I("next_prio", 20)};
    assert_int_equal(feed_ust(&c, "sched_switch", 150, 1, ctx, N(ctx), sw, N(sw)), 0);
    assert_int_equal(last(&c)->ev.type, DB_EV_RAW);
    assert_int_equal(last(&c)->ev.tid, 4243);
    /* CPU 1's task is still swapper: the UST events did not move it */
    ctf_field v[] = {U("vec", 3)};
    assert_int_equal(feed(&c, "softirq_raise", 160, 1, v, N(v)), 0);
    assert_int_equal(last(&c)->ev.tid, 0);
    /* no vtid: skipped, whoever runs on the CPU */
    ctf_field none[] = {U("baddr", 0x7FF7F1D2E000ull)};
    size_t nev = c.r->nev;
    assert_int_equal(feed_ust(&c, "lttng_ust_statedump:bin_info", 200, 1, NULL, 0, none, N(none)), 0);
    assert_int_equal(c.r->nev, nev);
    assert_int_equal(c.r->skips, 1);
    assert_int_equal(c.st.ust, 3);
    assert_int_equal(c.st.ust_no_tid, 1);
    assert_int_equal(c.st.skipped, 1);
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
    assert_int_equal(ingest_detect_folder("tests/unit"), INGEST_UNKNOWN); /* no metadata in it or below */
    /* an LTTng session: no metadata, but traces below it */
    assert_int_equal(ingest_detect_folder("tests/fixtures/ctf/lttng-2.1-session"), INGEST_CTF);
    assert_int_equal(ingest_detect_folder("tests/fixtures/ctf/lttng-2.1-session/kernel"), INGEST_CTF);
}

/* ---- damaged metadata (ctf_meta.c) ---- */

static void test_meta_complaint(void **state)
{
    (void)state;
    /* babeltrace2 2.0.4's log of a metadata whose line 10 does not parse
     * (the lexer's line first, then the parser's, then the decoder's),
     * coloured as on a terminal, with a line another thread wrote */
    static const char log[] =
        "11-25 05:26:54.807 15509 15509 E PLUGIN-CTF-METADATA-LEXER yylex@lexer.l:138 \033[1;31mAt line 10 in "
        "metadata stream: Invalid character: char=\"@\", val=0x40\033[0m\n"
        "another thread's line\n"
        "11-25 05:26:54.807 15509 15509 E PLUGIN/CTF/META/PARSER yyerror@parser.y:943 At line 11 in metadata "
        "stream: syntax error, unexpected CTF_ERROR: token=\"@\"\n"
        "11-25 05:26:54.807 15509 15509 E PLUGIN/CTF/META/IR-VISITOR f@v.c:4732 [src] At line 0 in metadata "
        "stream: Cannot set trace's native byte order: ret=-22\n";
    unsigned line = 0;
    char msg[200];
    char *other = NULL;
    size_t olen = 0;
    FILE *o = open_memstream(&other, &olen);
    assert_true(ingest_ctf_meta_complaint(log, sizeof log - 1, &line, msg, sizeof msg, o));
    fclose(o);
    assert_int_equal(line, 10);
    assert_string_equal(msg, "Invalid character: char=\"@\", val=0x40");
    assert_string_equal(other, "another thread's line\n");
    free(other);
    /* the IR visitor's line 0 is no place; nothing else: no complaint */
    const char *l0 = strstr(log, "11-25 05:26:54.807 15509 15509 E PLUGIN/CTF/META/IR");
    line = 0;
    assert_false(ingest_ctf_meta_complaint(l0, strlen(l0), &line, msg, sizeof msg, NULL));
    assert_false(ingest_ctf_meta_complaint("", 0, &line, msg, sizeof msg, NULL));
}

/* A packetized metadata file: each packet a 37-byte header (magic, uuid,
 * checksum, content_size and packet_size in bits, 5 bytes), its text, and
 * padding to packet_size. */
static void put32(unsigned char *p, uint32_t v, bool be)
{
    for (int i = 0; i < 4; i++)
        p[be ? 3 - i : i] = (unsigned char)(v >> (8 * i));
}

static size_t meta_packet(unsigned char *out, const char *text, size_t size, bool be)
{
    size_t n = strlen(text);
    memset(out, 0, size);
    put32(out, 0x75D11D57u, be);
    put32(out + 24, (uint32_t)((37 + n) * 8), be);
    put32(out + 28, (uint32_t)(size * 8), be);
    memcpy(out + 37, text, n);
    return size;
}

static void test_meta_locate(void **state)
{
    (void)state;
    for (int be = 0; be < 2; be++) {
        unsigned char buf[512];
        size_t n = meta_packet(buf, "trace {\n\tmajor = 1;\n", 128, be);
        n += meta_packet(buf + n, "\tminor = 8;\n};\n", 128, be);
        char path[] = "/tmp/argusq-meta-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, buf, n), (ssize_t)n);
        close(fd);
        ctf_meta_place w;
        assert_int_equal(ingest_ctf_meta_locate(path, 2, &w), 0);
        assert_true(w.packetized && w.found);
        assert_int_equal(w.packets, 2);
        assert_int_equal(w.packet, 1);
        assert_int_equal(w.offset, 37 + 8); /* after "trace {\n" */
        assert_int_equal(ingest_ctf_meta_locate(path, 4, &w), 0); /* "};" opens packet 2's second line */
        assert_int_equal(w.packet, 2);
        assert_int_equal(w.offset, 128 + 37 + 12);
        /* the parser's "unexpected end": the line after the last newline */
        assert_int_equal(ingest_ctf_meta_locate(path, 5, &w), 0);
        assert_true(w.found);
        assert_int_equal(w.offset, 128 + 37 + 15);
        assert_int_equal(ingest_ctf_meta_locate(path, 9, &w), 0);
        assert_false(w.found);
        unlink(path);
    }
    /* a text metadata file: its lines are the file's */
    char *path = write_temp("/* CTF 1.8 */\ntrace {\n");
    ctf_meta_place w;
    assert_int_equal(ingest_ctf_meta_locate(path, 2, &w), 0);
    assert_false(w.packetized);
    unlink(path);
    free(path);
    assert_int_equal(ingest_ctf_meta_locate("/nonexistent/metadata", 1, &w), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lttng_switch_and_wakeup), cmocka_unit_test(test_lttng_old_naming_and_irqs),
        cmocka_unit_test(test_lttng_statedump_and_fork), cmocka_unit_test(test_lttng_decimal_pointers),
        cmocka_unit_test(test_lttng_ust),                cmocka_unit_test(test_perf_ctf),
        cmocka_unit_test(test_perf_lex),                 cmocka_unit_test(test_perf_script_file),
        cmocka_unit_test(test_detect),                   cmocka_unit_test(test_meta_complaint),
        cmocka_unit_test(test_meta_locate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
