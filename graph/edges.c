/* graph/edges.c -- part 2 of paper/000's algorithm: pairing connection
 * events (the pairing table of spec/argus-trace-format.md) into edges.
 * Each rule keeps the pending half of a connection until its other half
 * comes by in time order, then writes the edge and forgets the pair. */
#include <stdlib.h>
#include <string.h>

#include "graph_int.h"

int graph_edge(graph_state *g, int kind, uint64_t from_ev, uint32_t from, uint64_t to_ev, uint32_t to)
{
    db_edge e = {.from = from, .to = to, .kind = (uint8_t)kind, .from_event = from_ev, .to_event = to_ev};
    g->st->edges++;
    return db_writer_edge(g->w, &e, g->err);
}

/* ---- the pool of pending halves ---- */

static uint32_t pend_new(graph_state *g, const db_event *ev, uint32_t node)
{
    uint32_t ix;
    if (g->pend_free) {
        ix = g->pend_free;
        g->pend_free = g->pend[ix - 1].next;
    } else {
        if (g->npend == g->cpend) {
            size_t n = g->cpend ? g->cpend * 2 : 256;
            graph_pend *p = realloc(g->pend, n * sizeof *p);
            if (!p)
                return 0;
            g->pend = p;
            g->cpend = n;
        }
        ix = (uint32_t)++g->npend;
    }
    g->pend[ix - 1] = (graph_pend){.ev = ev->id, .node = node, .val = ev->val, .pid = ev->pid};
    return ix;
}

static void pend_release(graph_state *g, uint32_t ix)
{
    g->pend[ix - 1].next = g->pend_free;
    g->pend_free = ix;
}

/* Replaces the one pending half kept for key (timers, flags, replies). */
int graph_pend_keep(graph_state *g, base_map *m, uint64_t key, const db_event *ev, uint32_t node)
{
    uint32_t old;
    if (base_map_get(m, key, &old))
        pend_release(g, old);
    uint32_t ix = pend_new(g, ev, node);
    return ix ? base_map_put(m, key, ix) : -1;
}

static void pend_drop(graph_state *g, base_map *m, uint64_t key)
{
    uint32_t old;
    if (base_map_del(m, key, &old))
        pend_release(g, old);
}

/* FIFO per key (dispatch queues, run loops, ports, timer arms): append at
 * the tail; returns the new entry, 0 when out of memory... */
static uint32_t fifo_push(graph_state *g, graph_fifo *f, uint64_t key, const db_event *ev, uint32_t node)
{
    uint32_t ix = pend_new(g, ev, node), tail;
    if (!ix)
        return 0;
    if (base_map_get(&f->tail, key, &tail))
        g->pend[tail - 1].next = ix;
    else if (base_map_put(&f->head, key, ix))
        return 0;
    return base_map_put(&f->tail, key, ix) ? 0 : ix;
}

/* ...and take from the head; returns false if nothing is pending. */
static bool fifo_pop(graph_state *g, graph_fifo *f, uint64_t key, graph_pend *out)
{
    uint32_t head;
    if (!base_map_get(&f->head, key, &head))
        return false;
    *out = g->pend[head - 1];
    if (out->next)
        base_map_put(&f->head, key, out->next);
    else {
        base_map_del(&f->head, key, NULL);
        base_map_del(&f->tail, key, NULL);
    }
    pend_release(g, head);
    return true;
}

static void fifo_free(graph_fifo *f)
{
    base_map_free(&f->head);
    base_map_free(&f->tail);
}

void graph_edges_free(graph_state *g)
{
    free(g->pend);
    base_map *maps[] = {&g->flags, &g->kmsgs, &g->replies, &g->port_owner, &g->vouchers, &g->wakings,
                         &g->requests};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        base_map_free(maps[i]);
    graph_fifo *fifos[] = {&g->timers, &g->dispatch, &g->runloop, &g->ports};
    for (size_t i = 0; i < sizeof fifos / sizeof fifos[0]; i++)
        fifo_free(fifos[i]);
    for (size_t i = 0; g->user && i < g->nrules; i++)
        base_map_free(&g->user[i]);
    free(g->user);
}

/* ---- rules ---- */

/* paper/000 2.a: the thread side of a wakeup.  Called with each
 * thread-context event before it joins node `node`: the first event after
 * a wait (or a new thread's first event) receives the wakeup edge; a wait
 * becomes the pending wait that a later wakeup answers. */
int graph_thread_waits_more(graph_state *g, graph_thread *t, const db_event *ev, uint32_t node)
{
    uint32_t ix;
    /* Linux traced with sched_waking alone (recent tools enable only it):
     * the waking that nothing followed is the wakeup */
    if ((t->waiting || !t->seen) && !t->woken && g->wakings.len && base_map_get(&g->wakings, t->tid, &ix)) {
        uint64_t wev = g->pend[ix - 1].ev;
        uint32_t wnode = g->pend[ix - 1].node;
        pend_drop(g, &g->wakings, t->tid);
        if (t->waiting && graph_edge(g, DB_EDGE_WEAK, t->wait_ev, t->wait_node, wev, wnode))
            return -1;
        t->woken = true;
        t->wake_ev = wev;
        t->wake_node = wnode;
    }
    if ((t->waiting || !t->seen) && t->woken &&
        graph_edge(g, DB_EDGE_WAKEUP, t->wake_ev, t->wake_node, ev->id, node))
        return -1;
    t->seen = true;
    t->waiting = t->woken = false;
    if (ev->type == DB_EV_WAIT) {
        if (g->wakings.len) /* a waking from before this wait woke nothing of it */
            pend_drop(g, &g->wakings, t->tid);
        t->waiting = true;
        t->wait_ev = ev->id;
        t->wait_node = node;
        t->wait_ts = ev->ts;
    }
    return 0;
}

/* paper/000 2.a: a wakeup of T answers T's latest wait (weak edge from
 * that wait to the wakeup, now; wakeup edge to T's first event after the
 * wait, when it comes).  A thread not seen yet is being created: its
 * first event is the target (sched_process_fork, sched_wakeup_new).  A
 * wakeup of a thread that is not waiting, or was already woken, joins
 * nothing. */
static int rule_wakeup(graph_state *g, const db_event *ev, uint32_t node)
{
    if (ev->obj > UINT32_MAX)
        return 0;
    if (g->nrules && graph_rule_ignores_wakeup(g, ev)) {
        pend_drop(g, &g->wakings, ev->obj); /* nor does its waking wake */
        return 0;
    }
    /* Linux: the waker is where sched_waking was emitted.  A remote wakeup
     * (through the target cpu's wake list) emits sched_wakeup later, on the
     * target cpu, in whatever runs there -- often idle -- so the waking is
     * the true source of the edge when there is one. */
    uint64_t src_ev = ev->id;
    uint32_t src_node = node, ix;
    if (base_map_get(&g->wakings, ev->obj, &ix)) {
        src_ev = g->pend[ix - 1].ev;
        src_node = g->pend[ix - 1].node;
        pend_drop(g, &g->wakings, ev->obj);
    }
    graph_thread *t = graph_thread_get(g, (uint32_t)ev->obj, DB_CPU_NONE);
    if (!t)
        return -1;
    if (t->woken || (t->seen && !t->waiting))
        return 0;
    if (t->waiting && graph_edge(g, DB_EDGE_WEAK, t->wait_ev, t->wait_node, src_ev, src_node))
        return -1;
    t->woken = true;
    t->wake_ev = src_ev;
    t->wake_node = src_node;
    return 0;
}

/* sched_waking tid=T: the start of a wakeup, in the waker's context.
 * tid is a waking's first entry (ftrace_sched.c writes it so): found by
 * graph_attr's inline first-entry test and word-wise end, not by
 * db_event_attr's compare and strnlen call. */
static int rule_waking(graph_state *g, const db_event *ev, uint32_t node)
{
    uint64_t tid;
    if (g->ev_name != GRAPH_NAME_SCHED_WAKING || !graph_attr_u64(g, ev, "tid", &tid) || tid == 0)
        return 0;
    return graph_pend_keep(g, &g->wakings, tid, ev, node);
}

/* A block request by device and first sector: the key of its events. */
static bool block_key(const db_event *ev, uint64_t *key)
{
    const char *dev;
    size_t dl;
    uint64_t sector;
    if (!db_event_attr(ev, "dev", &dev, &dl) || !db_event_attr_u64(ev, "sector", &sector))
        return false;
    *key = ((uint64_t)graph_fnv1a(dev, dl) << 40) ^ sector;
    return true;
}

/* Linux's block layer (waits for I/O): a request's completion -- in the
 * device's interrupt or the block softirq, whatever thread it lands on --
 * is connected (edge io) to the node that submitted the request: its
 * first event of block_bio_queue, block_rq_insert, block_rq_issue (a
 * request issued later from a kworker or from another completion keeps
 * its submitter), keyed by device and sector; block_rq_complete ends it.
 * The wakeup the completion then makes joins the waiting thread as usual,
 * so a wait for a read leads back to whoever issued the read. */
static int rule_block(graph_state *g, const db_event *ev, uint32_t node)
{
    uint64_t key;
    uint32_t ix;
    if (g->ev_name != GRAPH_NAME_BLOCK || !block_key(ev, &key))
        return 0;
    if (strcmp(ev->name, "block_rq_complete") == 0) {
        if (!base_map_get(&g->requests, key, &ix))
            return 0;
        graph_pend p = g->pend[ix - 1];
        pend_drop(g, &g->requests, key);
        return p.node && p.node != node ? graph_edge(g, DB_EDGE_IO, p.ev, p.node, ev->id, node) : 0;
    }
    if (base_map_get(&g->requests, key, &ix))
        return 0; /* submitted already: keep the first */
    return strcmp(ev->name, "block_bio_queue") == 0 || strcmp(ev->name, "block_rq_insert") == 0 ||
                   strcmp(ev->name, "block_rq_issue") == 0
               ? graph_pend_keep(g, &g->requests, key, ev, node)
               : 0;
}

/* paper/000 2.e and the spec's pairing table: each timer_arm -> the next
 * timer_callout begin of the same timer, unless a timer_cancel comes
 * between.  An arm repeated before the callout (a restart) is connected
 * too: nothing cancelled it.  At most GRAPH_ARMS_MAX arms wait per timer
 * (the oldest go first), so a timer re-armed forever costs bounded memory. */
#define GRAPH_ARMS_MAX 8

static void drop_arms(graph_state *g, uint64_t timer)
{
    graph_pend p;
    while (fifo_pop(g, &g->timers, timer, &p))
        ;
}

static int rule_timer(graph_state *g, const db_event *ev, uint32_t node)
{
    uint32_t head;
    switch (ev->type) {
    case DB_EV_TIMER_ARM:
        if (base_map_get(&g->timers.head, ev->obj, &head)) {
            int n = 1;
            for (uint32_t i = head; g->pend[i - 1].next; i = g->pend[i - 1].next)
                n++;
            graph_pend old;
            if (n >= GRAPH_ARMS_MAX)
                fifo_pop(g, &g->timers, ev->obj, &old);
        }
        return fifo_push(g, &g->timers, ev->obj, ev, node) ? 0 : -1;
    case DB_EV_TIMER_CANCEL: drop_arms(g, ev->obj); return 0;
    default: {
        if (ev->phase != DB_PH_BEGIN)
            return 0;
        graph_pend p;
        while (fifo_pop(g, &g->timers, ev->obj, &p))
            if (graph_edge(g, DB_EDGE_TIMER, p.ev, p.node, ev->id, node))
                return -1;
        return 0;
    }
    }
}

/* paper/000 2.c and 2.d: an enqueued (submitted) block -> the next invoke
 * of the same block, first in first out. */
static int rule_queue(graph_state *g, graph_fifo *m, int kind, bool submit, const db_event *ev, uint32_t node)
{
    if (submit)
        return fifo_push(g, m, ev->obj, ev, node) ? 0 : -1;
    graph_pend p;
    if (ev->phase != DB_PH_BEGIN || !fifo_pop(g, m, ev->obj, &p))
        return 0;
    return graph_edge(g, kind, p.ev, p.node, ev->id, node);
}

/* paper/000 2.f: a flag write -> each later read of the written value,
 * until the next write. */
static int rule_flag(graph_state *g, const db_event *ev, uint32_t node)
{
    uint32_t ix;
    if (ev->type == DB_EV_FLAG_WRITE)
        return graph_pend_keep(g, &g->flags, ev->obj, ev, node);
    if (!base_map_get(&g->flags, ev->obj, &ix) || g->pend[ix - 1].val != ev->val)
        return 0;
    return graph_edge(g, DB_EDGE_FLAG, g->pend[ix - 1].ev, g->pend[ix - 1].node, ev->id, node);
}

/* ---- mach messages (paper/000 2.b, paper/002 "Mach IPC") ---- */

/* Pairs a receipt with its send, before the receipt is given a node:
 * by kmsg when both have one, else the earliest unmatched send to the
 * same port (FIFO).  The match waits in g->match for graph_connect. */
void graph_ipc_match_more(graph_state *g, const db_event *ev)
{
    uint64_t kmsg = 0;
    uint32_t ix;
    graph_fifo *f = &g->ports;
    graph_attr_u64(g, ev, "kmsg", &kmsg);
    if (kmsg && base_map_get(&g->kmsgs, kmsg, &ix)) {
        g->match = g->pend[ix - 1];
        g->pend[ix - 1].dead = true;
        base_map_del(&g->kmsgs, kmsg, NULL);
        g->have_match = true;
        /* a send matched by kmsg leaves its port's FIFO when it reaches the
         * head; usually it is the head, so the lists stay short */
        graph_pend gone;
        uint32_t head;
        while (base_map_get(&f->head, ev->obj, &head) && g->pend[head - 1].dead)
            fifo_pop(g, f, ev->obj, &gone);
        return;
    }
    uint32_t head;
    if (!base_map_get(&f->head, ev->obj, &head))
        return;
    uint32_t prev = 0;
    for (uint32_t cur = head; cur;) {
        graph_pend *p = &g->pend[cur - 1];
        uint32_t next = p->next;
        /* a send matched by kmsg, or one that belongs to another kmsg */
        bool skip = p->dead || (kmsg && p->kmsg);
        if (!skip) {
            g->match = *p;
            g->have_match = true;
        }
        if (p->dead || !skip) { /* unlink it */
            if (prev)
                g->pend[prev - 1].next = next;
            else if (next)
                base_map_put(&f->head, ev->obj, next);
            else
                base_map_del(&f->head, ev->obj, NULL);
            if (!next) { /* it was the tail */
                if (prev)
                    base_map_put(&f->tail, ev->obj, prev);
                else
                    base_map_del(&f->tail, ev->obj, NULL);
            }
            if (!skip && p->kmsg)
                base_map_del(&g->kmsgs, p->kmsg, NULL);
            pend_release(g, cur);
        } else
            prev = cur;
        if (!skip)
            return;
        cur = next;
    }
}

/* The process at the other end of a message, if it can be told: the
 * `peer=` the trace gives, the sender of a receipt, or the process that
 * receives on the destination port of a send (paper/000 1.d: a node
 * ends where its thread's IPC peer changes; the normal form names it). */
static bool msg_peer_find(graph_state *g, const db_event *ev, uint32_t *pid)
{
    uint64_t v;
    uint32_t owner;
    if (graph_attr_u64(g, ev, "peer", &v) && v <= UINT32_MAX)
        *pid = (uint32_t)v;
    else if (ev->phase == DB_PH_END && g->have_match)
        *pid = g->match.pid;
    else if (ev->phase == DB_PH_BEGIN && base_map_get(&g->port_owner, ev->obj, &owner))
        *pid = owner;
    else
        return false;
    return true;
}

/* Found once an event: the thread's peer set (build.c) and the normal
 * form (normalize.c) both ask, with nothing it reads changed between
 * (the match and the port owners change in graph_connect, after both),
 * so its lookup of peer= (past the other entries of a receipt, which has
 * none) and the match or port owner after it are not done twice. */
int graph_msg_peer(graph_state *g, const db_event *ev, uint32_t *pid)
{
    if (g->peer_ev != ev || g->peer_seq != g->ev_seq) {
        g->peer_ev = ev;
        g->peer_seq = g->ev_seq;
        g->peer_ok = msg_peer_find(g, ev, &g->peer_pid);
    }
    if (g->peer_ok)
        *pid = g->peer_pid;
    return g->peer_ok;
}

/* On whose behalf a message is: its voucher= (declared by a voucher event
 * anywhere), else, for a send, the voucher the thread adopted in this
 * node.  A receipt from a new process is never covered by the receiver's
 * own voucher. */
uint32_t graph_voucher_pid(graph_state *g, const graph_thread *t, const db_event *ev)
{
    uint64_t v;
    uint32_t pid;
    if (graph_attr_u64(g, ev, "voucher", &v) && v && base_map_get(&g->vouchers, v, &pid))
        return pid;
    return ev->phase == DB_PH_BEGIN ? t->voucher_pid : 0;
}

static int rule_mach_msg(graph_state *g, const db_event *ev, uint32_t node)
{
    uint64_t reply = 0, kmsg = 0;
    graph_attr_u64(g, ev, "reply", &reply);
    if (ev->phase == DB_PH_END) {
        /* whoever receives on a port owns it */
        if (base_map_put(&g->port_owner, ev->obj, ev->pid))
            return -1;
        /* paper/000 2.b: receipt of a message that wants a reply -> the
         * next send to the reply port, on any thread (ipc_reply) */
        if (reply && graph_pend_keep(g, &g->replies, reply, ev, node))
            return -1;
        if (g->have_match) {
            g->have_match = false;
            return graph_edge(g, DB_EDGE_IPC, g->match.ev, g->match.node, ev->id, node);
        }
        return 0;
    }
    /* a send: the sender will receive the reply on `reply` */
    if (reply && base_map_put(&g->port_owner, reply, ev->pid))
        return -1;
    uint32_t ix;
    if (base_map_get(&g->replies, ev->obj, &ix)) {
        graph_pend p = g->pend[ix - 1];
        pend_drop(g, &g->replies, ev->obj);
        if (graph_edge(g, DB_EDGE_IPC_REPLY, p.ev, p.node, ev->id, node))
            return -1;
    }
    uint32_t sent = fifo_push(g, &g->ports, ev->obj, ev, node);
    if (!sent)
        return -1;
    if (graph_attr_u64(g, ev, "kmsg", &kmsg) && kmsg) {
        g->pend[sent - 1].kmsg = kmsg;
        if (base_map_put(&g->kmsgs, kmsg, sent))
            return -1;
    }
    return 0;
}

/* A voucher (bank attribute): the work of `addr` is done for a process. */
static int rule_voucher(graph_state *g, const db_event *ev)
{
    uint64_t pid;
    if (!db_event_attr_u64(ev, "on_behalf_of", &pid) || pid > UINT32_MAX)
        return 0;
    return base_map_put(&g->vouchers, ev->obj, (uint32_t)pid);
}

/* The rules by type: GRAPH_CONNECT_RULES (graph_int.h), whose types
 * graph_connect tests before the call. */
#define CONNECT_CASE(type, call)                                                                                \
    case type: return call;
int graph_connect_more(graph_state *g, const db_event *ev, uint32_t node)
{
    if (g->nrules && graph_rule_connect(g, ev, node))
        return -1;
    switch (ev->type) {
        GRAPH_CONNECT_RULES(CONNECT_CASE)
    default: return 0;
    }
}
#undef CONNECT_CASE
/* GRAPH_CONNECT_TYPES holds every type of the list: none past bit 31 */
#define CONNECT_FITS(type, call) _Static_assert((type) < 32, "GRAPH_CONNECT_TYPES is 32 bits: " #type);
GRAPH_CONNECT_RULES(CONNECT_FITS)
#undef CONNECT_FITS
