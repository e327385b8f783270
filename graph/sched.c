/* graph/sched.c -- where a thread's time went between its events: on a
 * CPU, or runnable and waiting for one, so that the graph records
 * preemption.
 *
 * The paper's nodes say when a thread waited (paper/000 1.b: a wait ends
 * a node) but not whether, once woken, it got a CPU at once, nor whether
 * it was preempted while it ran.  Linux says both in sched_switch: the
 * task switched out (the event's task) with state R or R+ was preempted
 * and stays runnable; the task switched in (next_pid) ends whatever
 * runnable stretch it was in.  A wakeup starts one for a sleeping task.
 *
 * Every runnable stretch is charged to a node of its thread: the open one
 * when the thread is inside a node (a preemption), else the next one it
 * opens (the latency from its wakeup to its first instruction).  A node's
 * `running` is then its time on a CPU from the switch-in before its first
 * event to its last event, less what it spent off the CPU in between;
 * `runnable` is the wakeup latency before it plus the preemptions inside
 * it; `oncpu` is that switch-in, where the wakeup latency ends.  The
 * latency starts at sched_waking when the trace has it (many record it
 * alone: trace-cmd 3, Perfetto's configs), else at sched_wakeup; a new
 * thread's at its sched_wakeup_new, else at its fork.  A trace without
 * sched_switch (the paper's macOS traces) leaves runnable 0 and running
 * the node's span.
 *
 * Nothing is lost between a thread's nodes nor counted twice (the
 * running of a thread's nodes adds up to its time on a CPU by the
 * file's sched_switch events, tests/e2e/test_foreign_sched.py): a node
 * that ends with the thread still on the CPU (a callout's end, an IPC
 * peer or a user rule's boundary) hands its end to the next as that one's
 * start; a wait inside a callout, which does not end the node, is off the
 * CPU, not running; and a preemption after a node's last event (the node
 * closed at a boundary or at the trace's end) is the next node's, as a
 * wakeup latency is, not taken off this one's running.  What the trace
 * cannot say stays out: a thread running when it starts counts from its
 * first event, one running at its end up to its last.
 *
 * A preemption is also an edge (kind preempt) into the preempted node,
 * from the node of the thread switched in -- its open node, or the next
 * one it opens -- so that a slice from a node stretched by contention
 * reaches the threads that took its CPU.  One edge per pair of nodes: a
 * thread preempted at every tick by the same node gets one. */
#include <string.h>

#include "graph_int.h"

/* Whether a switch's state (its first entry "state=...", as
 * db_event_attr finds it) is R or ends with the preempted mark.  The
 * entries are skipped (graph_entry_end), and only one that begins with
 * 's' is compared with the key, not each by db_event_attr's byte-wise
 * compare and strnlen. */
bool graph_sched_preempted(const db_event *ev)
{
    const char *p = ev->attrs, *end = ev->attrs + ev->attrs_len;
    while (p && p < end) {
        size_t n = (size_t)(graph_entry_end(p, end) - p);
        if (n >= 6 && p[0] == 's' && memcmp(p, "state=", 6) == 0) {
            const char *v = p + 6;
            n -= 6;
            return n >= 1 && ((n == 1 && v[0] == 'R') || v[n - 1] == '+');
        }
        p += n + 1;
    }
    return false;
}

/* Whether the stretch off the cpu that ends now (t switched in) lies in
 * t's open node: the node began before the switch-out (a preemption, or a
 * wait inside a callout, which does not end the node) -- not a node the
 * thread opens after it.  A switch-out not seen (the node is open, the
 * trace said nothing of how it left the cpu) is the open node's too. */
static bool off_inside(const graph_thread *t)
{
    return t->cur.open && (!t->off_since || t->cur.n.begin <= t->off_since);
}

/* t is switched in at ts: the stretch off the cpu since its switch-out
 * ends.  Inside its open node, the stretch is not running (all of it:
 * preempted, or asleep in a wait inside a callout) and its runnable part
 * is the node's; else the runnable part (the wakeup latency) is charged
 * to the node the thread opens next, which runs from here. */
static void switched_in(graph_thread *t, uint64_t ts)
{
    uint64_t r = t->runnable_since && t->runnable_since <= ts ? ts - t->runnable_since : 0;
    t->runnable_since = 0;
    t->runnable_fork = false;
    if (off_inside(t)) {
        t->cur.runnable_in += r;
        if (t->off_since && t->off_since <= ts) {
            t->cur.off_in += ts - t->off_since;
            t->cur.off_last_from = t->off_since;
            t->cur.off_last_to = ts;
            t->cur.off_last_rbl = r;
        }
    } else {
        t->pend_runnable += r;
        t->pend_on = ts;
    }
    t->off_since = 0;
}

/* A wakeup of tid at ts: runnable from then, unless it is on a cpu or
 * runnable already (sched_waking comes first, sched_wakeup after it: the
 * task is runnable from the waking, as the kernel's state says).  A
 * fork's child is runnable from the fork when nothing else says when
 * (kernel/fork.c wakes it right after that tracepoint); a
 * sched_wakeup_new after it is that wakeup itself: the child is TASK_NEW,
 * on no run queue, until then. */
static int woken(graph_state *g, uint64_t tid, uint64_t ts, bool fork)
{
    if (tid == 0 || tid > UINT32_MAX)
        return 0;
    graph_thread *t = graph_thread_get(g, (uint32_t)tid, DB_CPU_NONE);
    if (!t)
        return -1;
    if (!t->on_cpu && (!t->runnable_since || (t->runnable_fork && !fork))) {
        t->runnable_since = ts ? ts : 1;
        t->runnable_fork = fork;
    }
    return 0;
}

/* A wakeup that is a fork (every reader's sched_process_fork; perf's
 * sched:sched_process_fork is named without its system) */
static bool is_fork(const db_event *ev)
{
    return ev->name && db_event_name_len(ev) == 18 && memcmp(ev->name, "sched_process_fork", 18) == 0;
}

int graph_sched_event(graph_state *g, const db_event *ev)
{
    if (ev->type == DB_EV_WAKEUP)
        return woken(g, ev->obj, ev->ts, is_fork(ev));
    uint64_t tid;
    if (g->ev_name == GRAPH_NAME_SCHED_WAKING) /* kept raw, the target in tid= */
        return graph_attr_u64(g, ev, "tid", &tid) ? woken(g, tid, ev->ts, false) : 0;
    if (g->ev_name != GRAPH_NAME_SCHED_SWITCH || ev->obj > UINT32_MAX)
        return 0;
    graph_thread *prev = graph_thread_get(g, ev->tid, ev->cpu);
    if (!prev)
        return -1;
    prev->sched = true;
    prev->on_cpu = false;
    prev->off_since = ev->ts ? ev->ts : 1;
    bool pre = ev->tid != 0 && graph_sched_preempted(ev);
    prev->runnable_since = pre ? (ev->ts ? ev->ts : 1) : 0;
    prev->runnable_fork = false;
    if (ev->obj == 0) /* the cpu goes idle */
        return 0;
    if (pre && ev->obj != ev->tid)
        g->preempter = (uint32_t)ev->obj;
    graph_thread *next = graph_thread_get(g, (uint32_t)ev->obj, DB_CPU_NONE);
    if (!next)
        return -1;
    next->sched = true;
    switched_in(next, ev->ts);
    next->on_cpu = true;
    return 0;
}

void graph_sched_open(graph_thread *t, graph_open *o, const db_event *ev)
{
    o->n.runnable = t->pend_runnable;
    o->run_from = t->pend_on && t->pend_on <= ev->ts ? t->pend_on : ev->ts;
    t->pend_runnable = 0;
    t->pend_on = 0;
}

void graph_sched_close(graph_thread *t, graph_open *o)
{
    db_node *n = &o->n;
    if (!t || !t->sched) {
        n->running = n->end - n->begin;
        n->oncpu = n->begin;
        return;
    }
    uint64_t from = o->run_from && o->run_from <= n->begin ? o->run_from : n->begin;
    n->oncpu = from;
    uint64_t span = n->end - from;
    /* running is on the cpu from `from` to the node's last event, less
     * the stretches off the cpu inside; the latest stretch may have ended
     * after that event, when the node closes (at a boundary, or at the
     * trace's end) before the thread had another: the part after the
     * event is between this node and the next -- not running of this one,
     * and its runnable time is the next one's, as a wakeup latency is
     * (graph_sched_open), which then runs from that switch-in */
    uint64_t off = o->off_in, runnable_in = o->runnable_in;
    if (o->off_last_to > n->end) {
        uint64_t after = o->off_last_to - (n->end > o->off_last_from ? n->end : o->off_last_from);
        uint64_t r = o->off_last_rbl < after ? o->off_last_rbl : after;
        off -= after;
        runnable_in -= r;
        t->pend_runnable += r;
        t->pend_on = o->off_last_to;
    } else if (!t->waiting && (t->on_cpu || t->off_since >= n->end)) {
        /* a node that ends with the thread still on the cpu (a callout's
         * end, an IPC peer or a user rule's boundary; not a wait): the
         * node it opens next runs from here, so the time between the two
         * is neither lost nor counted twice (off_since: the switch-out
         * that is the event the next node begins with) */
        t->pend_on = n->end;
    }
    n->running = off < span ? span - off : 0;
    n->runnable += runnable_in;
}

static int preempt_edge(graph_state *g, graph_thread *victim, uint64_t from_ev, uint32_t from, uint64_t to_ev,
                        uint32_t to)
{
    if (!from || !to || from == to || (victim->preempt_last_from == from && victim->preempt_last_to == to))
        return 0;
    victim->preempt_last_from = from;
    victim->preempt_last_to = to;
    return graph_edge(g, DB_EDGE_PREEMPT, from_ev, from, to_ev, to);
}

/* After the event has its node: the preemption it records becomes an
 * edge, now or when the preempter has a node; and a thread's first event
 * in a node gives it the node a pending preemption was waiting for. */
int graph_sched_after(graph_state *g, const db_event *ev, uint32_t node)
{
    if (g->preempts_owed && (ev->ctx == DB_CTX_THREAD || ev->ctx == DB_CTX_UNKNOWN)) {
        /* by tid alone, the idle task's slot without a cpu: the event's
         * own thread mostly, the one got last, else graph_state.near,
         * which knows the idle task's slot has none (no table lookup once
         * a preemption is owed) */
        graph_thread *t = graph_thread_find(g, ev->tid);
        if (t && t->preempt_ev && t->cur.open && t->cur.n.id == node) {
            uint64_t to_ev = t->preempt_ev;
            uint32_t to = t->preempt_node;
            t->preempt_ev = 0;
            g->preempts_owed--;
            graph_thread *victim = graph_thread_find(g, t->preempt_victim);
            if (victim && preempt_edge(g, victim, ev->id, node, to_ev, to))
                return -1;
        }
    }
    if (!g->preempter)
        return 0;
    uint32_t tid = g->preempter;
    g->preempter = 0;
    graph_thread *x = graph_thread_get(g, tid, DB_CPU_NONE);
    graph_thread *victim = graph_thread_get(g, ev->tid, ev->cpu);
    if (!x || !victim)
        return -1;
    if (x->cur.open && !x->waiting)
        return preempt_edge(g, victim, x->cur.n.last_event, x->cur.n.id, ev->id, node);
    if (!x->preempt_ev)
        g->preempts_owed++;
    x->preempt_ev = ev->id;
    x->preempt_node = node;
    x->preempt_victim = ev->tid;
    return 0;
}
