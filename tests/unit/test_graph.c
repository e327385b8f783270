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
#include "graph/graph_int.h"

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
    const char *attrs; /* "key=value key=value" */
    uint32_t pid;      /* 0: the tid */
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
    db_error err = {0};
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
    db_error err = {0};
    db_writer *w = db_writer_begin(arch, "g", "test", "unit", &err);
    assert_non_null(w);
    for (uint32_t tid = 1; tid <= 6; tid++) {
        db_thread th = {.tid = tid, .pid = tid};
        snprintf(th.name, sizeof th.name, "t%u", tid);
        assert_int_equal(db_writer_thread(w, &th, &err), 0);
    }
    for (size_t i = 0; i < n; i++) {
        char attrs[256] = "";
        size_t alen = 0;
        if (s[i].attrs) { /* "a=1 b=2" -> "a=1\0b=2\0" */
            alen = strlen(s[i].attrs) + 1;
            memcpy(attrs, s[i].attrs, alen);
            for (size_t j = 0; j < alen; j++)
                if (attrs[j] == ' ')
                    attrs[j] = 0;
        }
        db_event ev = {.ts = s[i].ts, .tid = s[i].tid, .pid = s[i].pid ? s[i].pid : s[i].tid, .cpu = s[i].cpu,
                       .ctx = s[i].ctx, .type = s[i].type, .phase = s[i].phase, .obj = s[i].obj,
                       .name = s[i].name ? s[i].name : db_evtype_name(s[i].type), .attrs = attrs,
                       .attrs_len = alen};
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
    db_error err = {0};
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
    db_error err = {0};
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
    db_error err = {0};
    assert_int_equal(db_get_node(rd, id, &n, &err), 1);
    return n;
}

/* paper/000 1.b and 2.a: a wait ends a node; the wakeup connects to the
 * first event after the wait, and a weak edge runs from the wait back. */
static void test_wait_and_wakeup(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, 0, T, DB_EV_SYSCALL, DB_PH_BEGIN, 202, NULL, NULL, 0},
        {20, 1, 0, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {30, 2, 1, T, DB_EV_WAKEUP, 0, 1, NULL, NULL, 0},
        {40, 1, 0, T, DB_EV_SYSCALL, DB_PH_END, 202, NULL, NULL, 0},
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
        {10, 1, 1, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {20, 2, 0, T, DB_EV_SYSCALL, DB_PH_BEGIN, 0, NULL, NULL, 0},
        {30, 2, 0, H, DB_EV_INTERRUPT, DB_PH_BEGIN, 36, NULL, NULL, 0},
        {31, 2, 0, H, DB_EV_WAKEUP, 0, 1, NULL, NULL, 0},
        {32, 2, 0, H, DB_EV_INTERRUPT, DB_PH_END, 36, NULL, NULL, 0},
        {40, 2, 0, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL, NULL, 0},
        {50, 1, 1, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL, NULL, 0},
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
        {10, 1, 0, T, DB_EV_TIMER_ARM, 0, 0xa, NULL, NULL, 0},
        {20, 1, 0, T, DB_EV_TIMER_CANCEL, 0, 0xa, NULL, NULL, 0},
        {25, 1, 0, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {30, 2, 1, T, DB_EV_TIMER_ARM, 0, 0xa, NULL, NULL, 0},
        {35, 2, 1, T, DB_EV_TIMER_ARM, 0, 0xb, NULL, NULL, 0},
        {36, 2, 1, T, DB_EV_TIMER_CANCEL, 0, 0xb, NULL, NULL, 0},
        {40, 3, 0, H, DB_EV_TIMER_CALLOUT, DB_PH_BEGIN, 0xa, NULL, NULL, 0},
        {41, 3, 0, H, DB_EV_TIMER_CALLOUT, DB_PH_END, 0xa, NULL, NULL, 0},
        {50, 3, 0, H, DB_EV_TIMER_CALLOUT, DB_PH_BEGIN, 0xb, NULL, NULL, 0},
        {51, 3, 0, H, DB_EV_TIMER_CALLOUT, DB_PH_END, 0xb, NULL, NULL, 0},
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
        {10, 1, 0, T, DB_EV_DISPATCH_ENQUEUE, 0, 0xb1, NULL, NULL, 0},
        {11, 1, 0, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {12, 1, 0, T, DB_EV_DISPATCH_ENQUEUE, 0, 0xb1, NULL, NULL, 0},
        {20, 2, 1, T, DB_EV_SYSCALL, DB_PH_BEGIN, 0, NULL, NULL, 0},
        {21, 2, 1, T, DB_EV_DISPATCH_INVOKE, DB_PH_BEGIN, 0xb1, NULL, NULL, 0},
        {22, 2, 1, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {23, 3, 0, T, DB_EV_WAKEUP, 0, 2, NULL, NULL, 0},
        {24, 2, 1, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL, NULL, 0},
        {25, 2, 1, T, DB_EV_DISPATCH_INVOKE, DB_PH_END, 0xb1, NULL, NULL, 0},
        {30, 2, 1, T, DB_EV_DISPATCH_INVOKE, DB_PH_BEGIN, 0xb1, NULL, NULL, 0},
        {31, 2, 1, T, DB_EV_DISPATCH_INVOKE, DB_PH_END, 0xb1, NULL, NULL, 0},
        {40, 2, 1, T, DB_EV_SYSCALL, DB_PH_BEGIN, 0, NULL, NULL, 0},
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
        {10, 1, 0, T, DB_EV_WAKEUP, 0, 4, NULL, NULL, 0},
        {20, 4, 1, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL, NULL, 0},
        {30, 1, 0, T, DB_EV_WAKEUP, 0, 4, NULL, NULL, 0},
        {40, 4, 1, T, DB_EV_SYSCALL, DB_PH_BEGIN, 0, NULL, NULL, 0},
    };
    build(s, 4);
    assert_true(has_edge(node_of(1), node_of(2), DB_EDGE_WAKEUP));
    assert_int_equal(node_of(2), node_of(4));
    assert_int_equal(in_edges(node_of(4)).n, 1);
}

#define MSG DB_EV_MACH_MSG
#define SEND DB_PH_BEGIN
#define RECV DB_PH_END

/* paper/000 2.b: send -> receipt by kmsg even out of FIFO order, by FIFO
 * per port without kmsg; receipt carrying reply=R -> the next send to R. */
static void test_ipc_pairing(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, N, T, MSG, SEND, 0x100, NULL, "kmsg=0xa1 reply=0x900", 0},
        {11, 2, N, T, MSG, SEND, 0x100, NULL, "kmsg=0xa2", 0},
        {20, 3, N, T, MSG, RECV, 0x100, NULL, "kmsg=0xa2", 0},
        {30, 3, N, T, MSG, RECV, 0x100, NULL, "kmsg=0xa1 reply=0x900", 0},
        {40, 4, N, T, MSG, SEND, 0x900, NULL, NULL, 0},
        {50, 1, N, T, MSG, SEND, 0x200, NULL, NULL, 0},
        {51, 2, N, T, MSG, SEND, 0x200, NULL, NULL, 0},
        {60, 5, N, T, MSG, RECV, 0x200, NULL, NULL, 0},
        {61, 6, N, T, MSG, RECV, 0x200, NULL, NULL, 0},
    };
    build(s, 9);
    assert_true(has_edge(node_of(2), node_of(3), DB_EDGE_IPC));
    assert_true(has_edge(node_of(1), node_of(4), DB_EDGE_IPC));
    assert_false(has_edge(node_of(1), node_of(3), DB_EDGE_IPC));
    assert_true(has_edge(node_of(4), node_of(5), DB_EDGE_IPC_REPLY));
    assert_true(has_edge(node_of(6), node_of(8), DB_EDGE_IPC));
    assert_true(has_edge(node_of(7), node_of(9), DB_EDGE_IPC));
    assert_false(has_edge(node_of(7), node_of(8), DB_EDGE_IPC));
}

/* paper/000 1.d: a daemon thread receiving from two processes splits at
 * the second peer; a voucher on behalf of a peer in the set does not. */
static void test_peer_set_and_voucher(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, N, T, MSG, SEND, 0x100, NULL, "peer=3", 0},          /* app 1 -> daemon */
        {20, 3, N, T, MSG, RECV, 0x100, NULL, NULL, 0},              /* daemon: peer 1 */
        {21, 3, N, T, DB_EV_VOUCHER, 0, 0x77, NULL, "on_behalf_of=1", 0},
        {22, 3, N, T, MSG, SEND, 0x300, NULL, "peer=4 voucher=0x77", 0}, /* to 4 for 1: same node */
        {30, 2, N, T, MSG, SEND, 0x100, NULL, NULL, 0},              /* app 2 -> daemon */
        {40, 3, N, T, MSG, RECV, 0x100, NULL, NULL, 0},              /* peer 2: new node */
        {41, 3, N, T, MSG, SEND, 0x300, NULL, "peer=4", 0},          /* to 4, no voucher: new node */
    };
    build(s, 7);
    uint32_t d1 = node_of(2);
    assert_int_equal(node_of(3), d1);
    assert_int_equal(node_of(4), d1);
    assert_int_not_equal(node_of(6), d1);
    assert_int_not_equal(node_of(7), node_of(6));
}

/* paper/004: dispatch_mig_service inside a callout -- each service its own
 * node; the combined reply-send + next receipt splits at the receipt. */
static void test_mig_service(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, N, T, MSG, SEND, 0x100, NULL, "reply=0x901", 0},
        {11, 2, N, T, MSG, SEND, 0x100, NULL, "reply=0x902", 0},
        {20, 3, N, T, DB_EV_DISPATCH_INVOKE, DB_PH_BEGIN, 0xb, NULL, NULL, 0},
        {21, 3, N, T, DB_EV_DISPATCH_MIG_SERVICE, DB_PH_BEGIN, 0, NULL, NULL, 0},
        {22, 3, N, T, MSG, RECV, 0x100, NULL, "reply=0x901", 0},
        {23, 3, N, T, MSG, SEND, 0x901, NULL, NULL, 0},
        {24, 3, N, T, MSG, RECV, 0x100, NULL, "reply=0x902", 0},
        {25, 3, N, T, MSG, SEND, 0x902, NULL, NULL, 0},
        {26, 3, N, T, DB_EV_DISPATCH_MIG_SERVICE, DB_PH_END, 0, NULL, NULL, 0},
        {27, 3, N, T, DB_EV_DISPATCH_INVOKE, DB_PH_END, 0xb, NULL, NULL, 0},
    };
    build(s, 10);
    uint32_t a = node_of(5), b = node_of(7);
    assert_int_not_equal(a, b);
    assert_int_equal(node_of(6), a);
    assert_int_equal(node_of(8), b);
    assert_int_equal(node(a).kind, DB_NODE_SERVICE);
    assert_int_not_equal(node_of(3), a);
    assert_int_not_equal(node_of(10), b);
    assert_true(has_edge(node_of(1), a, DB_EDGE_IPC));
    assert_true(has_edge(node_of(2), b, DB_EDGE_IPC));
    assert_false(has_edge(node_of(1), b, DB_EDGE_IPC));
}

/* paper/002: RunLoopEntry begins a segment; a submitted block -> its invoke */
static void test_runloop(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, N, T, DB_EV_RUNLOOP_OBSERVER, 0, 0, NULL, "stage=entry", 0},
        {11, 1, N, T, DB_EV_SYSCALL, SEND, 0, NULL, NULL, 0},
        {12, 2, N, T, DB_EV_RUNLOOP_SUBMIT, 0, 0xbb, NULL, "rl=0x1", 0},
        {20, 1, N, T, DB_EV_RUNLOOP_OBSERVER, 0, 0, NULL, "stage=exit", 0},
        {21, 1, N, T, DB_EV_RUNLOOP_OBSERVER, 0, 0, NULL, "stage=entry", 0},
        {22, 1, N, T, DB_EV_RUNLOOP_INVOKE, DB_PH_BEGIN, 0xbb, NULL, "rl=0x1", 0},
        {23, 1, N, T, DB_EV_RUNLOOP_INVOKE, DB_PH_END, 0xbb, NULL, NULL, 0},
    };
    build(s, 7);
    assert_int_equal(node_of(2), node_of(1));
    assert_int_equal(node_of(4), node_of(1));
    assert_int_not_equal(node_of(5), node_of(1));
    assert_int_not_equal(node_of(6), node_of(5));
    assert_int_equal(node(node_of(6)).kind, DB_NODE_RUNLOOP);
    assert_true(has_edge(node_of(3), node_of(6), DB_EDGE_RUNLOOP));
}

/* paper/002 kernel thread for timers: callouts back to back, no ends. */
static void test_timers_back_to_back(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, N, T, DB_EV_TIMER_ARM, 0, 0xa, NULL, "deadline=100", 0},
        {11, 2, N, T, DB_EV_TIMER_ARM, 0, 0xb, NULL, "deadline=100", 0},
        {12, 1, N, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {13, 2, N, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {100, 5, N, T, DB_EV_TIMER_CALLOUT, DB_PH_BEGIN, 0xa, NULL, NULL, 0},
        {101, 5, N, T, DB_EV_WAKEUP, 0, 1, NULL, NULL, 0},
        {102, 5, N, T, DB_EV_TIMER_CALLOUT, DB_PH_BEGIN, 0xb, NULL, NULL, 0},
        {103, 5, N, T, DB_EV_WAKEUP, 0, 2, NULL, NULL, 0},
        {110, 1, N, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL, NULL, 0},
        {111, 2, N, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL, NULL, 0},
    };
    build(s, 10);
    uint32_t ta = node_of(5), tb = node_of(7);
    assert_int_not_equal(ta, tb);
    assert_int_equal(node_of(6), ta);
    assert_int_equal(node_of(8), tb);
    assert_true(has_edge(ta, node_of(9), DB_EDGE_WAKEUP));
    assert_true(has_edge(tb, node_of(10), DB_EDGE_WAKEUP));
    assert_false(has_edge(ta, node_of(10), DB_EDGE_WAKEUP));
    assert_true(has_edge(node_of(1), ta, DB_EDGE_TIMER));
    assert_true(has_edge(node_of(2), tb, DB_EDGE_TIMER));
}

/* One event of a spec fed to the streaming graph (graph_feed). */
static void feed_one(graph_feed *f, const spec *x)
{
    db_event ev = {.ts = x->ts, .tid = x->tid, .pid = x->pid ? x->pid : x->tid, .cpu = x->cpu, .ctx = x->ctx,
                   .type = x->type, .phase = x->phase, .obj = x->obj, .name = db_evtype_name(x->type),
                   .attrs = "", .attrs_len = 0};
    assert_int_equal(graph_feed_event(f, &ev), 0);
}

/* Whether node's signature holds the normal form text. */
static bool sig_has(uint32_t node, const char *text)
{
    db_sig sig;
    db_error err = {0};
    assert_int_equal(db_get_sig(rd, node, &sig, &err), 1);
    for (uint32_t i = 0; i < sig.n; i++) {
        char buf[256];
        if (db_norm_text(rd, sig.h[i], buf, sizeof buf, &err) == 1 && strcmp(buf, text) == 0)
            return true;
    }
    return false;
}

/* A new trace "g" and a graph feed on it (track: the feed is told of
 * namings, graph_feed_track_names). */
static db_writer *feed_begin(graph_feed *f, bool track, db_error *err)
{
    db_writer *w = db_writer_begin(arch, "g", "test", "unit", err);
    assert_non_null(w);
    assert_int_equal(graph_feed_begin(f, w, NULL, 0, err), 0);
    if (track)
        graph_feed_track_names(f);
    return w;
}

/* Names kept by the graph while the feed tracks them: a thread and a
 * process renamed (and told, graph_feed_named) name the nodes and the
 * wakeups after it by their new names, those before by the old. */
static void test_feed_names_tracked(void **state)
{
    (void)state;
    db_error err = {0};
    graph_feed f;
    db_writer *w = feed_begin(&f, true, &err);
    db_thread t1 = {.tid = 1, .pid = 1, .name = "before"}, t2 = {.tid = 2, .pid = 2, .name = "waker"};
    assert_int_equal(db_writer_thread(w, &t1, &err), 0);
    assert_int_equal(db_writer_thread(w, &t2, &err), 0);
    assert_int_equal(db_writer_proc(w, 1, "proc-old", &err), 0);
    graph_feed_named(&f);
    spec s[] = {
        {10, 1, N, T, DB_EV_SYSCALL, DB_PH_BEGIN, 1, NULL, NULL, 0},
        {20, 1, N, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {30, 2, N, T, DB_EV_WAKEUP, 0, 1, NULL, NULL, 0},
        {35, 2, N, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {40, 1, N, T, DB_EV_SYSCALL, DB_PH_END, 1, NULL, NULL, 0},
        {50, 1, N, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        /* renamed here */
        {60, 2, N, T, DB_EV_WAKEUP, 0, 1, NULL, NULL, 0},
        {70, 1, N, T, DB_EV_SYSCALL, DB_PH_END, 1, NULL, NULL, 0},
    };
    for (int i = 0; i < 6; i++)
        feed_one(&f, &s[i]);
    t1 = (db_thread){.tid = 1, .pid = 1, .name = "after"};
    assert_int_equal(db_writer_thread(w, &t1, &err), 0);
    assert_int_equal(db_writer_proc(w, 1, "proc-new", &err), 0);
    graph_feed_named(&f);
    for (int i = 6; i < 8; i++)
        feed_one(&f, &s[i]);
    graph_stats st;
    assert_int_equal(graph_feed_end(&f, &st), 0);
    assert_int_equal(db_writer_commit(w, NULL, &err), 0);
    rd = db_reader_open(arch, "g", &err);
    assert_non_null(rd);
    db_node a = node(node_of(1)), b = node(node_of(5)), c = node(node_of(8));
    assert_string_equal(a.thread, "before");
    assert_string_equal(a.proc, "proc-old");
    assert_string_equal(b.thread, "before");
    assert_string_equal(c.thread, "after");
    assert_string_equal(c.proc, "proc-new");
    assert_true(sig_has(node_of(3), "wakeup:before"));
    assert_int_not_equal(node_of(3), node_of(7));
    assert_true(sig_has(node_of(7), "wakeup:after"));
    assert_false(sig_has(node_of(7), "wakeup:before"));
}

/* Event ids as the graph sees them (the feed counts them from the
 * writer's first answer): three threads' syscalls and waits interleaved
 * over several event blocks, and every node's first and last events are
 * its own events as stored, every event inside its node's range. */
static void test_feed_event_ids(void **state)
{
    (void)state;
    db_error err = {0};
    graph_feed f;
    db_writer *w = feed_begin(&f, false, &err);
    enum { EVENTS = 3000 };
    static const uint8_t type[] = {DB_EV_SYSCALL, DB_EV_SYSCALL, DB_EV_WAIT};
    static const uint8_t phase[] = {DB_PH_BEGIN, DB_PH_END, 0};
    for (int i = 0; i < EVENTS; i++) {
        int step = i / 3 + i % 3; /* each thread a step behind the one before */
        spec x = {(uint64_t)(10 + i), (uint32_t)(1 + i % 3), N, T, type[step % 3], phase[step % 3],
                  1, NULL, NULL, 0};
        feed_one(&f, &x);
    }
    graph_stats st;
    assert_int_equal(graph_feed_end(&f, &st), 0);
    assert_int_equal(db_writer_commit(w, NULL, &err), 0);
    rd = db_reader_open(arch, "g", &err);
    assert_non_null(rd);
    for (uint64_t id = 1; id <= EVENTS; id++) {
        uint32_t nid = node_of(id);
        db_node n = node(nid);
        assert_true(n.first_event <= id && id <= n.last_event);
        assert_int_equal(node_of(n.first_event), nid);
        assert_int_equal(node_of(n.last_event), nid);
        db_event ev;
        assert_int_equal(db_get_event(rd, n.first_event, &ev, &err), 1);
        assert_int_equal(ev.ts, n.begin);
        assert_int_equal(ev.tid, n.tid);
    }
}

/* A wakeup's form kept with the thread woken (graph_sig_add): a thread
 * woken again in the same naming gives its form again (its name, or "?"
 * for one the writer does not know), and a renaming the new one. */
static void test_wakeup_form_cached(void **state)
{
    (void)state;
    db_error err = {0};
    graph_feed f;
    db_writer *w = feed_begin(&f, true, &err);
    db_thread t1 = {.tid = 1, .pid = 1, .name = "a"}, t2 = {.tid = 2, .pid = 2, .name = "waker"},
              t3 = {.tid = 3, .pid = 3, .name = "c"};
    assert_int_equal(db_writer_thread(w, &t1, &err), 0);
    assert_int_equal(db_writer_thread(w, &t2, &err), 0);
    assert_int_equal(db_writer_thread(w, &t3, &err), 0);
    graph_feed_named(&f);
    spec s[] = {
        {10, 1, N, T, DB_EV_SYSCALL, DB_PH_BEGIN, 1, NULL, NULL, 0},
        {20, 1, N, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {30, 2, N, T, DB_EV_WAKEUP, 0, 1, NULL, NULL, 0},
        {31, 2, N, T, DB_EV_WAKEUP, 0, 3, NULL, NULL, 0},
        {32, 2, N, T, DB_EV_WAKEUP, 0, 4, NULL, NULL, 0}, /* no such thread */
        {35, 2, N, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {40, 2, N, T, DB_EV_WAKEUP, 0, 1, NULL, NULL, 0}, /* again: from the cache */
        {41, 2, N, T, DB_EV_WAKEUP, 0, 4, NULL, NULL, 0},
        {45, 2, N, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        /* renamed here */
        {60, 2, N, T, DB_EV_WAKEUP, 0, 1, NULL, NULL, 0},
        {65, 2, N, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
    };
    for (int i = 0; i < 9; i++)
        feed_one(&f, &s[i]);
    t1 = (db_thread){.tid = 1, .pid = 1, .name = "after"};
    assert_int_equal(db_writer_thread(w, &t1, &err), 0);
    graph_feed_named(&f);
    for (int i = 9; i < 11; i++)
        feed_one(&f, &s[i]);
    graph_stats st;
    assert_int_equal(graph_feed_end(&f, &st), 0);
    assert_int_equal(db_writer_commit(w, NULL, &err), 0);
    rd = db_reader_open(arch, "g", &err);
    assert_non_null(rd);
    uint32_t first = node_of(3), second = node_of(7), third = node_of(10);
    assert_int_not_equal(first, second);
    assert_int_not_equal(second, third);
    assert_true(sig_has(first, "wakeup:a"));
    assert_true(sig_has(first, "wakeup:c"));
    assert_true(sig_has(first, "wakeup:?"));
    assert_true(sig_has(second, "wakeup:a"));
    assert_true(sig_has(second, "wakeup:?"));
    assert_false(sig_has(second, "wakeup:c"));
    assert_true(sig_has(third, "wakeup:after"));
    assert_false(sig_has(third, "wakeup:a"));
}

/* Source events and backtraces join a node but give its signature no
 * form (graph_sig_add tells them before graph_normalize); the events
 * around them give theirs. */
static void test_raw_no_form(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, 0, T, DB_EV_SYSCALL, DB_PH_BEGIN, 3, NULL, "name=read", 0},
        {11, 1, 0, T, DB_EV_RAW, 0, 0, "sched_foo", "reason=sleep state=S", 0},
        {12, 1, 0, T, DB_EV_BACKTRACE, 0, 0, NULL, "frame=0x1", 0},
        {13, 1, 0, T, DB_EV_WAIT, 0, 0, NULL, "reason=io", 0},
    };
    build(s, 4);
    uint32_t nd = node_of(1);
    assert_int_equal(node_of(2), nd);
    assert_int_equal(node_of(3), nd);
    db_sig sig;
    db_error err = {0};
    assert_int_equal(db_get_sig(rd, nd, &sig, &err), 1);
    assert_int_equal(sig.n, 2);
    assert_true(sig_has(nd, "syscall:read"));
    assert_true(sig_has(nd, "wait:io"));
}

/* paper/000 2.f: a flag write connects to a later read of its value at
 * its address (and to no read elsewhere): flag events are among the
 * types graph_connect gives to the rules (GRAPH_CONNECT_TYPES). */
static void test_flag_write_read(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, N, T, DB_EV_FLAG_WRITE, 0, 0x40, NULL, NULL, 0},
        {20, 2, N, T, DB_EV_SYSCALL, DB_PH_BEGIN, 1, NULL, NULL, 0},
        {30, 2, N, T, DB_EV_FLAG_READ, 0, 0x40, NULL, NULL, 0},
        {40, 3, N, T, DB_EV_FLAG_READ, 0, 0x41, NULL, NULL, 0},
    };
    build(s, 4);
    assert_true(has_edge(node_of(1), node_of(3), DB_EDGE_FLAG));
    assert_false(has_edge(node_of(1), node_of(4), DB_EDGE_FLAG));
}

/* A wait's form cached by its reason (graph_sig_add, wait_key): a reason
 * seen before, none, an empty one, 7 bytes (the longest cached), 8 (not
 * cached) and one that is not the event's first entry each give the form
 * its text would, in nodes of their own; so do reasons of every length
 * from 2 to 6, some differing from another only in their first or last
 * byte (reason_bytes' two loads). */
static void test_wait_form_cached(void **state)
{
    (void)state;
    const char *reasons[] = {"reason=S",        "reason=S",        NULL,          "reason=",
                             "reason=1234567", "reason=12345678", "reason=12345678",
                             "state=R reason=D", "reason=D",       "reason=1234567",
                             "reason=R+",      "reason=R-",       "reason=abc",  "reason=xbc",
                             "reason=abcd",    "reason=abcde",    "reason=abcdf", "reason=abcdef",
                             "reason=abcdeg",  "reason=abcd",     "reason=1234X67", "reason=abd"};
    const char *forms[] = {"wait:S",        "wait:S",        "wait",        "wait:",       "wait:1234567",
                           "wait:12345678", "wait:12345678", "wait:D",      "wait:D",      "wait:1234567",
                           "wait:R+",       "wait:R-",       "wait:abc",    "wait:xbc",    "wait:abcd",
                           "wait:abcde",    "wait:abcdf",    "wait:abcdef", "wait:abcdeg", "wait:abcd",
                           "wait:1234X67",  "wait:abd"};
    enum { K = sizeof reasons / sizeof *reasons };
    spec s[2 * K];
    for (int i = 0; i < K; i++) {
        s[2 * i] = (spec){100 * (uint64_t)i + 10, 1, N, T, DB_EV_SYSCALL, DB_PH_BEGIN, 3, NULL, "name=read", 0};
        s[2 * i + 1] = (spec){100 * (uint64_t)i + 20, 1, N, T, DB_EV_WAIT, 0, 0, NULL, reasons[i], 0};
    }
    build(s, 2 * K);
    for (int i = 0; i < K; i++) {
        uint32_t nd = node_of(2 * (uint64_t)i + 2);
        assert_int_equal(node_of(2 * (uint64_t)i + 1), nd);
        assert_true(sig_has(nd, forms[i]));
        assert_true(sig_has(nd, "syscall:read"));
        for (int j = 0; j < K; j++)
            if (strcmp(forms[j], forms[i]))
                assert_false(sig_has(nd, forms[j]));
    }
}

/* graph_attr_n answers as db_event_attr does: a new event's first entry
 * read in place when it is the key, the others through the table of
 * entries, on lookups of several keys of one event in turn and of the
 * same text as a new event. */
static void test_attr_lookup(void **state)
{
    (void)state;
    db_error err = {0};
    db_writer *w = db_writer_begin(arch, "attrs", "test", "unit", &err);
    assert_non_null(w);
    graph_builder *g = graph_begin(w, NULL, 0, &err);
    assert_non_null(g);
    static const char *const texts[] = {"reason=sleep state=S next_pid=5", "reasons=x reason=io", "reason",
                                        "reason= state=R", "reaso=n reason=y", "=reason reason=z", "", "state=R+",
                                        "reason=a reason=b"};
    static const char *const keys[] = {"reason", "state", "next_pid", "reaso", "x"};
    int found = 0;
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++)
        for (int cut = 0; cut < 2; cut++) { /* the last NUL there or left off */
            char a[64];
            size_t n = strlen(texts[t]);
            memcpy(a, texts[t], n + 1);
            for (size_t j = 0; j < n; j++)
                if (a[j] == ' ')
                    a[j] = 0;
            db_event ev = {.attrs = a, .attrs_len = n ? n + 1 - (size_t)cut : 0};
            for (size_t first = 0; first < sizeof keys / sizeof keys[0]; first++) {
                g->ev_seq++; /* a new event: `first` is looked up first, then every key */
                for (size_t k = 0; k <= sizeof keys / sizeof keys[0]; k++) {
                    const char *key = keys[k == 0 ? first : k - 1], *v1 = NULL, *v2 = NULL;
                    size_t l1 = 0, l2 = 0;
                    bool want = db_event_attr(&ev, key, &v1, &l1);
                    assert_int_equal(graph_attr_n(g, &ev, key, strlen(key), &v2, &l2), want);
                    if (want) {
                        assert_ptr_equal(v2, v1);
                        assert_int_equal(l2, l1);
                        found++;
                    }
                }
            }
        }
    assert_true(found > 0);
    graph_abort(g);
    db_writer_abort(w);
}

/* graph_entry_end finds what memchr of the NUL finds: entries of 0 to 24
 * bytes (bytes 0x01, 0x80 and 0xff among them, which a word's zero test
 * must not take for a NUL) with their NUL and more entries after, or
 * ending the buffer without one, each in a buffer of its own length. */
static void test_entry_end(void **state)
{
    (void)state;
    static const unsigned char fill[] = {'a', 0x01, 0x80, 0xff, '=', 0x7f};
    for (size_t len = 0; len <= 24; len++)
        for (size_t after = 0; after < 3; after++) { /* 0: no NUL; else a NUL and after - 1 bytes */
            size_t n = len + after;
            char *a = malloc(n ? n : 1);
            assert_non_null(a);
            for (size_t i = 0; i < n; i++)
                a[i] = (char)fill[(i * 7 + len) % sizeof fill];
            if (after)
                a[len] = 0;
            for (size_t from = 0; from <= len; from++) {
                const char *want = memchr(a + from, 0, n - from);
                assert_ptr_equal(graph_entry_end(a + from, a + n), want ? want : a + n);
            }
            free(a);
        }
}

/* The source events the rules know by name (sched_waking, sched_switch,
 * block_*), told from names that only begin or end alike. */
static void test_event_names(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, 0, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {11, 3, 0, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {20, 2, 1, T, DB_EV_RAW, 0, 0, "sched_waking", "tid=1", 0},
        {21, 2, 1, T, DB_EV_RAW, 0, 0, "sched_waking_x", "tid=3", 0},
        {30, 1, 0, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL, NULL, 0},
        {31, 3, 0, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL, NULL, 0},
        /* the idle task switching out ends its node; a longer name does not */
        {40, 0, 2, T, DB_EV_RAW, 0, 0, "sched_switches", NULL, 0},
        {41, 0, 2, T, DB_EV_RAW, 0, 0, "sched_switch", NULL, 0},
        {42, 0, 2, T, DB_EV_RAW, 0, 0, "cpu_idle", NULL, 0},
        /* a block request's completion, from its submitter */
        {50, 4, 3, T, DB_EV_RAW, 0, 0, "block_rq_issue", "dev=8,0 sector=64", 0},
        {60, 5, 3, H, DB_EV_RAW, 0, 0, "block_rq_complete", "dev=8,0 sector=64", 0},
    };
    build(s, 11);
    assert_true(has_edge(node_of(3), node_of(5), DB_EDGE_WAKEUP));
    assert_false(has_edge(node_of(4), node_of(6), DB_EDGE_WAKEUP));
    assert_int_equal(node_of(7), node_of(8));
    assert_int_not_equal(node_of(8), node_of(9));
    assert_true(has_edge(node_of(10), node_of(11), DB_EDGE_IO));
}

/* test_event_names' events fed as the ingest pipe's replay gives them,
 * with their names' lengths (db_event's name_len, which ev_name reads
 * instead of measuring): the same names told apart. */
static void test_feed_name_len(void **state)
{
    (void)state;
    db_error err = {0};
    graph_feed f;
    db_writer *w = feed_begin(&f, false, &err);
    spec s[] = {
        {10, 1, 0, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {11, 3, 0, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {20, 2, 1, T, DB_EV_RAW, 0, 0, "sched_waking", "tid=1", 0},
        {21, 2, 1, T, DB_EV_RAW, 0, 0, "sched_waking_x", "tid=3", 0},
        {30, 1, 0, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL, NULL, 0},
        {31, 3, 0, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL, NULL, 0},
        {40, 0, 2, T, DB_EV_RAW, 0, 0, "sched_switches", NULL, 0},
        {41, 0, 2, T, DB_EV_RAW, 0, 0, "sched_switch", NULL, 0},
        {42, 0, 2, T, DB_EV_RAW, 0, 0, "cpu_idle", NULL, 0},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        const char *name = s[i].name ? s[i].name : db_evtype_name(s[i].type);
        const char *attrs = s[i].attrs ? s[i].attrs : "";
        db_event ev = {.ts = s[i].ts, .tid = s[i].tid, .pid = s[i].tid, .cpu = s[i].cpu, .ctx = s[i].ctx,
                       .type = s[i].type, .phase = s[i].phase, .name = name, .name_len = (uint32_t)strlen(name),
                       .attrs = attrs, .attrs_len = strlen(attrs) + 1};
        assert_int_equal(graph_feed_event(&f, &ev), 0);
    }
    graph_stats st;
    assert_int_equal(graph_feed_end(&f, &st), 0);
    assert_int_equal(db_writer_commit(w, NULL, &err), 0);
    rd = db_reader_open(arch, "g", &err);
    assert_non_null(rd);
    assert_true(has_edge(node_of(3), node_of(5), DB_EDGE_WAKEUP));
    assert_false(has_edge(node_of(4), node_of(6), DB_EDGE_WAKEUP));
    assert_int_equal(node_of(7), node_of(8));
    assert_int_not_equal(node_of(8), node_of(9));
}

/* A message's peer, found once an event (graph_msg_peer) for the peer
 * set and the normal form, through one db_event the feed is given again
 * and again, as the ingest replay's: each event's own peer splits the
 * thread's node at a new one (a peer kept from the event before would
 * not), and two sends to a peer not seen before are alike. */
static void test_peer_cached(void **state)
{
    (void)state;
    db_error err = {0};
    graph_feed f;
    db_writer *w = feed_begin(&f, false, &err);
    static const char *peers[] = {"peer=4", "peer=4", "peer=5", "peer=5", "peer=4"};
    db_event ev;
    for (size_t i = 0; i < 5; i++) {
        const char *name = db_evtype_name(DB_EV_MACH_MSG);
        ev = (db_event){.ts = 10 + i, .tid = 3, .pid = 3, .cpu = N, .ctx = T, .type = DB_EV_MACH_MSG,
                        .phase = DB_PH_BEGIN, .obj = 0x300, .name = name, .name_len = (uint32_t)strlen(name),
                        .attrs = peers[i], .attrs_len = strlen(peers[i]) + 1};
        assert_int_equal(graph_feed_event(&f, &ev), 0);
    }
    graph_stats st;
    assert_int_equal(graph_feed_end(&f, &st), 0);
    assert_int_equal(db_writer_commit(w, NULL, &err), 0);
    rd = db_reader_open(arch, "g", &err);
    assert_non_null(rd);
    assert_int_equal(node_of(1), node_of(2));
    assert_int_not_equal(node_of(2), node_of(3));
    assert_int_equal(node_of(3), node_of(4));
    assert_int_not_equal(node_of(4), node_of(5));
}

/* A sched_waking's tid (rule_waking, through graph_attr) as its first
 * entry, the way ftrace_sched.c writes it, and after others: each wakes
 * its thread. */
static void test_waking_tid(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, 0, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {11, 3, 0, T, DB_EV_WAIT, 0, 0, NULL, NULL, 0},
        {20, 2, 1, T, DB_EV_RAW, 0, 0, "sched_waking", "tid=1 comm=t1 prio=120", 0},
        {21, 2, 1, T, DB_EV_RAW, 0, 0, "sched_waking", "comm=t3 tids=1 prio=120 tid=3", 0},
        {30, 1, 0, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL, NULL, 0},
        {31, 3, 0, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL, NULL, 0},
    };
    build(s, 6);
    assert_true(has_edge(node_of(3), node_of(5), DB_EDGE_WAKEUP));
    assert_true(has_edge(node_of(4), node_of(6), DB_EDGE_WAKEUP));
}

/* A thread preempted (switched out with state R) for one that
 * has no node yet gets its preempt edge from that thread's next node,
 * found by tid when its first event comes. */
static void test_preempt_owed(void **state)
{
    (void)state;
    spec s[] = {
        {10, 1, 0, T, DB_EV_SYSCALL, DB_PH_BEGIN, 0, NULL, NULL, 0},
        {20, 1, 0, T, DB_EV_RAW, 0, 2, "sched_switch", "state=R", 0},
        {25, 3, 1, T, DB_EV_SYSCALL, DB_PH_BEGIN, 0, NULL, NULL, 0},
        {30, 2, 0, T, DB_EV_SYSCALL, DB_PH_END, 0, NULL, NULL, 0},
    };
    build(s, 4);
    assert_int_equal(node_of(1), node_of(2));
    assert_true(has_edge(node_of(4), node_of(2), DB_EDGE_PREEMPT));
    assert_false(has_edge(node_of(3), node_of(2), DB_EDGE_PREEMPT));
}

/* A switch's preempted state read by graph_sched_preempted's own scan is
 * what db_event_attr's "state" gives: the first entry that is the key and
 * '=', whatever comes before it (entries that begin with 's', or with
 * "state" and more, a bare "state", an empty entry) and with the last
 * NUL left off. */
static bool preempted_by_attr(const db_event *ev)
{
    const char *v;
    size_t n;
    return db_event_attr(ev, "state", &v, &n) && n >= 1 && ((n == 1 && v[0] == 'R') || v[n - 1] == '+');
}

static void test_preempted_state(void **state)
{
    (void)state;
    static const char *const before[] = {"", "reason=sleep", "s=1", "stat=R", "states=R", "state", "xstate=R",
                                         "stateR", "", "sleep"};
    static const char *const states[] = {"R", "R+", "S", "D", "", "RR", "S|D+", "+", "R=", "r"};
    int pre = 0, not = 0;
    for (size_t b = 0; b < sizeof before / sizeof before[0]; b++)
        for (size_t k = 0; k < sizeof states / sizeof states[0]; k++)
            for (int form = 0; form < 4; form++) {
                char a[128];
                size_t n = 0;
                if (b > 0 || form & 2) /* an entry before it (the empty one too) */
                    n += (size_t)snprintf(a + n, sizeof a - n, "%s", before[b]) + 1;
                n += (size_t)snprintf(a + n, sizeof a - n, "state=%s", states[k]) + 1;
                n += (size_t)snprintf(a + n, sizeof a - n, "state=R") + 1; /* a second: never read */
                if (form & 1) /* only the state, its NUL left off */
                    n -= 9;
                db_event ev = {.attrs = a, .attrs_len = n};
                bool want = preempted_by_attr(&ev);
                assert_int_equal(graph_sched_preempted(&ev), want);
                want ? pre++ : not++;
            }
    db_event none = {0};
    assert_false(graph_sched_preempted(&none));
    assert_true(pre > 0 && not > 0);
}

/* The threads by slot (graph_thread_get / _find and the direct-mapped
 * table in front of the thread table): a slot always gives its one
 * thread, whichever slots took the same entry in between; a slot without
 * a thread gives none until one is made for it. */
static void test_thread_slots(void **state)
{
    (void)state;
    db_error err = {0};
    db_writer *w = db_writer_begin(arch, "slots", "test", "unit", &err);
    assert_non_null(w);
    graph_builder *g = graph_begin(w, NULL, 0, &err);
    assert_non_null(g);
    enum { T = 1500 };
    static graph_thread *got[T];
    assert_null(graph_thread_find(g, 0)); /* none yet, for slot 0 too */
    assert_null(graph_thread_find(g, 7));
    for (uint32_t i = 0; i < T; i++) { /* tids i * 64: four of them to each entry */
        got[i] = graph_thread_get(g, i * 64 + 1, DB_CPU_NONE);
        assert_non_null(got[i]);
        assert_int_equal(got[i]->tid, i * 64 + 1);
    }
    for (uint32_t r = 0; r < 3; r++)
        for (uint32_t i = 0; i < T; i++) {
            uint32_t k = (i * 7 + r * 13) % T;
            assert_ptr_equal(graph_thread_get(g, k * 64 + 1, DB_CPU_NONE), got[k]);
            assert_ptr_equal(graph_thread_find(g, (k * 311) % T * 64 + 1), got[(k * 311) % T]);
            assert_null(graph_thread_find(g, k * 64 + 2)); /* absent, same entries */
        }
    /* absent, then made, then found */
    assert_null(graph_thread_find(g, 0));
    graph_thread *t0 = graph_thread_get(g, 0, DB_CPU_NONE);
    assert_non_null(t0);
    assert_ptr_equal(graph_thread_find(g, 0), t0);
    assert_null(graph_thread_find(g, 66));
    graph_thread *t66 = graph_thread_get(g, 66, DB_CPU_NONE);
    assert_ptr_equal(graph_thread_get(g, 1, DB_CPU_NONE), got[0]);
    assert_ptr_equal(graph_thread_find(g, 66), t66);
    /* a cpu's idle is not the tid 0 of no cpu */
    graph_thread *idle3 = graph_thread_get(g, 0, 3);
    assert_non_null(idle3);
    assert_ptr_not_equal(idle3, t0);
    assert_ptr_equal(graph_thread_find(g, graph_thread_slot(0, 3)), idle3);
    assert_ptr_equal(graph_thread_find(g, 0), t0);
    assert_null(graph_thread_find(g, graph_thread_slot(0, 4)));
    graph_abort(g);
    /* slot 0 the first got: no thread got yet is told by recent_slot
     * (GRAPH_SLOT_NONE), not by slot 0 */
    g = graph_begin(w, NULL, 0, &err);
    assert_non_null(g);
    t0 = graph_thread_get(g, 0, DB_CPU_NONE);
    assert_non_null(t0);
    assert_int_equal(t0->tid, 0);
    assert_ptr_equal(graph_thread_get(g, 0, DB_CPU_NONE), t0);
    assert_ptr_equal(graph_thread_find(g, 0), t0);
    graph_abort(g);
    db_writer_abort(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_wait_and_wakeup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupt_isolated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timer_not_across_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_callouts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_thread_and_running_thread, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ipc_pairing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_set_and_voucher, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mig_service, setup, teardown),
        cmocka_unit_test_setup_teardown(test_runloop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timers_back_to_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_feed_names_tracked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_feed_event_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_waking_tid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_feed_name_len, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preempt_owed, setup, teardown),
        cmocka_unit_test(test_preempted_state),
        cmocka_unit_test(test_entry_end),
        cmocka_unit_test_setup_teardown(test_attr_lookup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_raw_no_form, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait_form_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flag_write_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wakeup_form_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thread_slots, setup, teardown),
    };
    return cmocka_run_group_tests_name("graph", tests, NULL, NULL);
}
