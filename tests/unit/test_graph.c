/* tests/unit/test_graph.c -- the boundary and edge rules on small event
 * sequences written to a real archive, read back through the reader. */
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
#include "graph/graph.h"

#define N DB_CPU_NONE
#define T DB_CTX_THREAD
#define H DB_CTX_HARDIRQ

typedef struct spec {
    uint64_t ts;
    uint32_t tid;
    uint16_t cpu;
    uint8_t ctx, type, phase;
    uint64_t obj;
    const char *name;
} spec;

static char dir[64], path[128];
static db_archive *arch;
static db_reader *rd;

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/argusq-graph-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/g.db", dir);
    db_error err = {{0}};
    arch = db_open(path, false, &err);
    assert_non_null(arch);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    db_reader_close(rd);
    rd = NULL;
    db_close(arch);
    char lock[160];
    snprintf(lock, sizeof lock, "%s-lock", path);
    unlink(path);
    unlink(lock);
    rmdir(dir);
    return 0;
}

/* Writes the events (ids 1..n in order), builds the graph, commits, and
 * opens a reader on the result. */
static void build(const spec *s, size_t n)
{
    db_error err = {{0}};
    db_writer *w = db_writer_begin(arch, "g", "test", "unit", &err);
    assert_non_null(w);
    for (uint32_t tid = 1; tid <= 4; tid++) {
        db_thread th = {.tid = tid, .pid = tid};
        snprintf(th.name, sizeof th.name, "t%u", tid);
        assert_int_equal(db_writer_thread(w, &th, &err), 0);
    }
    for (size_t i = 0; i < n; i++) {
        db_event ev = {.ts = s[i].ts, .tid = s[i].tid, .pid = s[i].tid, .cpu = s[i].cpu, .ctx = s[i].ctx,
                       .type = s[i].type, .phase = s[i].phase, .obj = s[i].obj,
                       .name = s[i].name ? s[i].name : db_evtype_name(s[i].type)};
        assert_int_equal(db_writer_event(w, &ev, &err), 0);
    }
    graph_stats st;
    assert_int_equal(graph_build(w, NULL, 0, &st, &err), 0);
    assert_int_equal(db_writer_commit(w, NULL, &err), 0);
    rd = db_reader_open(arch, "g", &err);
    assert_non_null(rd);
}

/* The node event `id` was put in. */
static uint32_t node_of(uint64_t id)
{
    db_event ev;
    db_error err = {{0}};
    assert_int_equal(db_get_event(rd, id, &ev, &err), 1);
    assert_true(ev.node > 0);
    return ev.node;
}

typedef struct edges {
    db_edge e[16];
    int n;
} edges;

static int collect(void *ctx, const db_edge *e)
{
    edges *x = ctx;
    if (x->n < 16)
        x->e[x->n++] = *e;
    return 0;
}

static edges in_edges(uint32_t node)
{
    edges x = {.n = 0};
    db_error err = {{0}};
    assert_int_equal(db_edges_in(rd, node, collect, &x, &err), 0);
    return x;
}

static bool has_edge(uint32_t from, uint32_t to, int kind)
{
    edges x = in_edges(to);
    for (int i = 0; i < x.n; i++)
        if (x.e[i].from == from && x.e[i].kind == kind)
            return true;
    return false;
}

static db_node node(uint32_t id)
{
    db_node n;
    db_error err = {{0}};
    assert_int_equal(db_get_node(rd, id, &n, &err), 1);
    return n;
}

/* paper/000 1.b and 2.a: a wait ends a node; the wakeup connects to the
 * first event after the wait, and a weak edge runs from the wait back. */
static void test_wait_and_wakeup(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, 0, T, DB_EV_SYSCALL, DB_PH_BEGIN, 202, NULL},
        {20, 1, 0, T, DB_EV_WAIT, 0, 0, NULL},
        {30, 2, 1, T, DB_EV_WAKEUP, 0, 1, NULL},
        {40, 1, 0, T, DB_EV_SYSCALL, DB_PH_END, 202, NULL},
    };
    build(s, 4);
    uint32_t a = node_of(1), waker = node_of(3), b = node_of(4);
    assert_int_equal(node_of(2), a);
    assert_int_not_equal(a, b);
    assert_true(has_edge(waker, b, DB_EDGE_WAKEUP));
    assert_true(has_edge(a, waker, DB_EDGE_WEAK));
    assert_false(has_edge(waker, a, DB_EDGE_WAKEUP));
    assert_int_equal(node(b).blocked, 20);
    assert_int_equal(node(a).blocked, 0);
}

/* paper/000 1.a: an interrupt is isolated from the thread it lands on and
 * a wakeup inside it belongs to it; the interrupted thread's node is not
 * split. */
static void test_interrupt_isolated(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, 1, T, DB_EV_WAIT, 0, 0, NULL},
        {20, 2, 0, T, DB_EV_SYSCALL, DB_PH_BEGIN, 0, NULL},
        {30, 2, 0, H, DB_EV_INTERRUPT, DB_PH_BEGIN, 36, NULL},
        {31, 2, 0, H, DB_EV_WAKEUP, 0, 1, NULL},
        {32, 2, 0, H, DB_EV_INTERRUPT, DB_PH_END, 36, NULL},
        {40, 2, 0, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL},
        {50, 1, 1, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL},
    };
    build(s, 7);
    uint32_t irq = node_of(3);
    assert_int_equal(node_of(4), irq);
    assert_int_equal(node_of(5), irq);
    assert_int_equal(node(irq).kind, DB_NODE_INTERRUPT);
    assert_int_equal(node_of(2), node_of(6));
    assert_int_not_equal(node_of(2), irq);
    assert_true(has_edge(irq, node_of(7), DB_EDGE_WAKEUP));
    assert_false(has_edge(node_of(2), node_of(7), DB_EDGE_WAKEUP));
}

/* paper/000 2.e: timer armed -> callout, not across a cancel; a re-arm is
 * the arm that fires.  Timer callouts are isolated nodes. */
static void test_timer_not_across_cancel(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, 0, T, DB_EV_TIMER_ARM, 0, 0xa, NULL},
        {20, 1, 0, T, DB_EV_TIMER_CANCEL, 0, 0xa, NULL},
        {25, 1, 0, T, DB_EV_WAIT, 0, 0, NULL},
        {30, 2, 1, T, DB_EV_TIMER_ARM, 0, 0xa, NULL},
        {35, 2, 1, T, DB_EV_TIMER_ARM, 0, 0xb, NULL},
        {36, 2, 1, T, DB_EV_TIMER_CANCEL, 0, 0xb, NULL},
        {40, 3, 0, H, DB_EV_TIMER_CALLOUT, DB_PH_BEGIN, 0xa, NULL},
        {41, 3, 0, H, DB_EV_TIMER_CALLOUT, DB_PH_END, 0xa, NULL},
        {50, 3, 0, H, DB_EV_TIMER_CALLOUT, DB_PH_BEGIN, 0xb, NULL},
        {51, 3, 0, H, DB_EV_TIMER_CALLOUT, DB_PH_END, 0xb, NULL},
    };
    build(s, 10);
    uint32_t ta = node_of(7), tb = node_of(9);
    assert_int_equal(node(ta).kind, DB_NODE_TIMER);
    assert_int_not_equal(ta, tb);
    edges x = in_edges(ta);
    assert_int_equal(x.n, 1);
    assert_int_equal(x.e[0].from, node_of(4));
    assert_int_equal(x.e[0].from_event, 4);
    assert_int_equal(in_edges(tb).n, 0);
}

/* paper/000 1.b/1.c: a wait inside a dispatch callout does not split it;
 * each callout is its own node; enqueue -> invoke pairs first in first out. */
static void test_dispatch_callouts(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, 0, T, DB_EV_DISPATCH_ENQUEUE, 0, 0xb1, NULL},
        {11, 1, 0, T, DB_EV_WAIT, 0, 0, NULL},
        {12, 1, 0, T, DB_EV_DISPATCH_ENQUEUE, 0, 0xb1, NULL},
        {20, 2, 1, T, DB_EV_SYSCALL, DB_PH_BEGIN, 0, NULL},
        {21, 2, 1, T, DB_EV_DISPATCH_INVOKE, DB_PH_BEGIN, 0xb1, NULL},
        {22, 2, 1, T, DB_EV_WAIT, 0, 0, NULL},
        {23, 3, 0, T, DB_EV_WAKEUP, 0, 2, NULL},
        {24, 2, 1, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL},
        {25, 2, 1, T, DB_EV_DISPATCH_INVOKE, DB_PH_END, 0xb1, NULL},
        {30, 2, 1, T, DB_EV_DISPATCH_INVOKE, DB_PH_BEGIN, 0xb1, NULL},
        {31, 2, 1, T, DB_EV_DISPATCH_INVOKE, DB_PH_END, 0xb1, NULL},
        {40, 2, 1, T, DB_EV_SYSCALL, DB_PH_BEGIN, 0, NULL},
    };
    build(s, 12);
    uint32_t c1 = node_of(5), c2 = node_of(10);
    assert_int_equal(node_of(6), c1);
    assert_int_equal(node_of(8), c1);
    assert_int_equal(node_of(9), c1);
    assert_int_equal(node(c1).kind, DB_NODE_DISPATCH);
    assert_int_equal(node(c1).events, 4);
    assert_int_not_equal(node_of(4), c1);
    assert_int_not_equal(c2, c1);
    assert_int_not_equal(node_of(12), c2);
    assert_true(has_edge(node_of(1), c1, DB_EDGE_DISPATCH));
    assert_true(has_edge(node_of(3), c2, DB_EDGE_DISPATCH));
    assert_false(has_edge(node_of(1), c2, DB_EDGE_DISPATCH));
    assert_true(has_edge(node_of(7), c1, DB_EDGE_WAKEUP));
}

/* A new thread's first event is the target of the wakeup that created it
 * (sched_process_fork / sched_wakeup_new); a wakeup of a running thread
 * joins nothing. */
static void test_new_thread_and_running_thread(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, 0, T, DB_EV_WAKEUP, 0, 4, NULL},
        {20, 4, 1, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL},
        {30, 1, 0, T, DB_EV_WAKEUP, 0, 4, NULL},
        {40, 4, 1, T, DB_EV_SYSCALL, DB_PH_BEGIN, 0, NULL},
    };
    build(s, 4);
    assert_true(has_edge(node_of(1), node_of(2), DB_EDGE_WAKEUP));
    assert_int_equal(node_of(2), node_of(4));
    assert_int_equal(in_edges(node_of(4)).n, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_wait_and_wakeup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupt_isolated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timer_not_across_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_callouts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_thread_and_running_thread, setup, teardown),
    };
    return cmocka_run_group_tests_name("graph", tests, NULL, NULL);
}
