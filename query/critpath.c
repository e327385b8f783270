/* query/critpath.c -- where a thread's time went: the critical path of a
 * node, every nanosecond of its period given to one (thread, node, state).
 *
 * The paper slices backward from an anomaly node (paper/004 §Path
 * Slicing) and compares paths; what it leaves to the reader is how much
 * of the wait each node on the slice is responsible for.  This is the
 * partition the critical-path analyses of Trace Compass and Perfetto and
 * wPerf's wait-for graphs compute, on the event graph:
 *
 *   A thread's timeline over [a, b] is its nodes in time order (the
 *   node_thread index), each preceded by the wait that ended in it
 *   (`blocked`).  Inside a node the thread ran (`running`) or was
 *   preempted (`runnable`: given to the nodes that took its CPU, the
 *   `preempt` edges into it, in proportion to their running).  A wait is
 *   followed to what ended it -- the causal edge into the node -- and
 *   split at the moment of the wakeup: before it the thread was blocked on
 *   the waker, so that stretch is the waker's timeline over the same
 *   interval, recursively (what the waker itself ran, waited on, ...);
 *   after it the thread was runnable, waiting for a CPU.  A wakeup from a
 *   timer is the timer's: `timer`, charged to the thread that armed it
 *   (the edge into the timer node); from the completion of a block request,
 *   `io`, charged to the thread that submitted it (the io edge into the
 *   completion); from other interrupts, `io` for device interrupts and the
 *   block and network softirqs, `interrupt` otherwise.
 *
 * A node's running is on the request of the thread that woke it when that
 * is another thread than the victim's (a server's loop woken by a client,
 * a pool's worker by the producer of a job): the part says so (for_*),
 * and suspects are ranked by it (attrib.c).
 *
 * Nothing outside [a, b] takes any of it: each recursion is clipped to the
 * interval of the wait it explains, so the parts add up to the period.
 * Depth and the number of parts are bounded (CP_DEPTH, CP_PARTS); what is
 * left past the bound is `blocked` on the thread where the walk stopped. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

#define CP_DEPTH 24
#define CP_PARTS 65536
#define CP_NODES 100000 /* nodes of one thread read for one interval */

static const char *const state_names[QUERY_CP__COUNT] = {
    [QUERY_CP_RUNNING] = "running", [QUERY_CP_RUNNABLE] = "runnable", [QUERY_CP_BLOCKED] = "blocked",
    [QUERY_CP_TIMER] = "timer",     [QUERY_CP_IO] = "io",             [QUERY_CP_INTERRUPT] = "interrupt",
};

const char *query_cp_state_name(int s) { return s >= 0 && s < QUERY_CP__COUNT ? state_names[s] : "?"; }

typedef struct walk {
    db_reader *r;
    db_error *de;
    query_cp *cp;
    int rc;
} walk;

static query_cp_part *add_part(walk *w, const db_node *n, int state, uint64_t begin, uint64_t ns)
{
    query_cp *cp = w->cp;
    if (!ns || w->rc)
        return NULL;
    if (cp->n && cp->parts[cp->n - 1].node == n->id && cp->parts[cp->n - 1].state == state &&
        cp->parts[cp->n - 1].begin + cp->parts[cp->n - 1].ns == begin) {
        cp->parts[cp->n - 1].ns += ns;
        return &cp->parts[cp->n - 1];
    }
    if (cp->n == cp->cap) {
        size_t c = cp->cap ? cp->cap * 2 : 64;
        void *p = realloc(cp->parts, c * sizeof *cp->parts);
        if (!p) {
            w->rc = db_fail_oom(w->de);
            return NULL;
        }
        cp->parts = p;
        cp->cap = c;
    }
    query_cp_part *p = &cp->parts[cp->n++];
    memset(p, 0, sizeof *p);
    p->tid = n->tid;
    p->node = n->id;
    p->kind = n->kind;
    memcpy(p->thread, n->thread, sizeof p->thread);
    p->state = (uint8_t)state;
    p->begin = begin;
    p->ns = ns;
    return p;
}

static bool isolated(int kind) { return db_node_kind_isolated(kind); }

static uint64_t on_cpu(const db_node *k) { return query_node_oncpu(k); }

/* ---- a thread's nodes over an interval ---- */

typedef struct nodes {
    db_node *v;
    size_t n, cap;
    uint64_t a, b;
    bool earlier; /* the thread has a node that began before a */
    bool oom;
} nodes;

static int keep_node(void *p, const db_node *n)
{
    nodes *l = p;
    if (isolated(n->kind))
        return 0;
    if (n->begin < l->a)
        l->earlier = true;
    if (n->end < l->a)
        return 0;
    if (l->n == CP_NODES)
        return 1;
    if (l->n == l->cap) {
        size_t c = l->cap ? l->cap * 2 : 16;
        void *q = realloc(l->v, c * sizeof *l->v);
        if (!q) {
            l->oom = true;
            return -1;
        }
        l->v = q;
        l->cap = c;
    }
    l->v[l->n++] = *n;
    return 0;
}

/* The causal edge into n that ended its wait: the latest wakeup-like edge
 * (not weak, not preempt) whose source event precedes n's first event. */
typedef struct cause {
    db_edge e;
    bool found;
    int rank;
    db_edge pre[16]; /* preempt edges into the node */
    int npre;
} cause;

static int kind_rank(int k)
{
    switch (k) {
    case DB_EDGE_WAKEUP: return 1;
    case DB_EDGE_IPC:
    case DB_EDGE_IPC_REPLY: return 2;
    case DB_EDGE_TIMER:
    case DB_EDGE_FLAG:
    case DB_EDGE_DISPATCH:
    case DB_EDGE_RUNLOOP:
    case DB_EDGE_USER: return 3;
    default: return 0;
    }
}

static int cause_one(void *p, const db_edge *e)
{
    cause *c = p;
    if (e->kind == DB_EDGE_PREEMPT) {
        if (c->npre < 16)
            c->pre[c->npre++] = *e;
        return 0;
    }
    int rank = kind_rank(e->kind);
    if (!rank)
        return 0;
    if (!c->found || rank < c->rank || (rank == c->rank && e->from_event > c->e.from_event)) {
        c->e = *e;
        c->found = true;
        c->rank = rank;
    }
    return 0;
}

static void attribute(walk *w, uint32_t tid, uint64_t a, uint64_t b, int depth, const db_node *waiter);

/* a runnable part charged to the thread that held the cpu: whose */
static void held_off(query_cp_part *p, const db_node *k)
{
    if (!p)
        return;
    p->held_tid = k->tid;
    memcpy(p->held_thread, k->thread, sizeof p->held_thread);
}

static void set_device(query_cp_part *p, int dev)
{
    if (p)
        p->device = (uint8_t)dev;
}

/* Of the block requests a completion node completed, the one whose
 * completion came last before the wakeup (event `before`): the request
 * the woken thread waited for, not another the same batch completed. */
typedef struct io_pick {
    uint64_t before;
    db_edge e;
} io_pick;

static int io_one(void *p, const db_edge *e)
{
    io_pick *x = p;
    if (e->kind == DB_EDGE_IO && e->to_event <= x->before && (!x->e.from || e->to_event > x->e.to_event))
        x->e = *e;
    return 0;
}

/* The thread node whose own code raised softirq node n: the
 * softirq_raise just before n's first event, on n's thread, in a thread
 * node (a loopback send raises NET_RX in the sender's context and runs it
 * at once; a network card's interrupt raises it in the interrupt). */
#define CP_RAISE_BACK 4

static bool raised_by(walk *w, const db_node *n, db_node *out)
{
    for (uint64_t id = n->first_event; id > 1 && n->first_event - id < CP_RAISE_BACK;) {
        db_event ev;
        if (db_get_event(w->r, --id, &ev, w->de) != 1)
            return false;
        if (ev.tid != n->tid || !ev.name || strcmp(ev.name, "softirq_raise") != 0)
            continue;
        return ev.node && db_get_node(w->r, ev.node, out, w->de) == 1 && !isolated(out->kind) && out->tid == n->tid;
    }
    return false;
}

/* A block request's wait [a, b], submitted by node sub: the submitter's,
 * or when it carried a cache flush, the writers' whose data the flush
 * made durable, in proportion to their bytes (flush.c), each writer's
 * share a stretch of its own in the order they come. */
static void flushed(walk *w, const db_edge *io, const db_node *sub, uint64_t a, uint64_t b)
{
    query_flush f;
    int got = query_flush_writers(w->r, io, &f, w->de);
    if (got < 0) {
        w->rc = -1;
        return;
    }
    uint64_t total = 0, done = 0, at = a;
    for (size_t i = 0; got && i < f.n; i++)
        total += f.w[i].bytes;
    for (size_t i = 0; got && i < f.n; i++) {
        done += f.w[i].bytes;
        uint64_t end = i + 1 == f.n ? b : a + (uint64_t)((double)(b - a) * (double)done / (double)total);
        db_node n;
        bool other = f.w[i].tid != sub->tid && f.w[i].node && db_get_node(w->r, f.w[i].node, &n, w->de) == 1 &&
                     !isolated(n.kind);
        query_cp_part *p = add_part(w, other ? &n : sub, QUERY_CP_IO, at, end - at);
        if (p) {
            p->device = QUERY_DEV_DISK;
            p->flush_tid = other ? sub->tid : 0;
            if (other)
                memcpy(p->flush_thread, sub->thread, sizeof p->flush_thread);
            p->flush_bytes += f.w[i].bytes;
        }
        at = end;
    }
    if (at < b)
        set_device(add_part(w, sub, QUERY_CP_IO, at, b - at), QUERY_DEV_DISK);
}

/* What ended a wait of node k: the stretch [a, b] before the wakeup.
 * waiter: whose wait it is when the trace shows nothing of what ended it
 * (k, or for a thread created by the wakeup, the waiter of its creation:
 * a thread is charged nothing before it existed). */
static void explain_wait(walk *w, const db_node *k, const db_node *waiter, const cause *c, uint64_t a, uint64_t b,
                         int depth)
{
    db_node src;
    int got = db_get_node(w->r, c->e.from, &src, w->de);
    if (got < 0) {
        w->rc = -1;
        return;
    }
    if (!got || depth >= CP_DEPTH || w->cp->n >= CP_PARTS) {
        add_part(w, waiter, QUERY_CP_BLOCKED, a, b - a);
        return;
    }
    bool own_wait = k->id == w->cp->node.id; /* the wait before the victim's node */
    if (src.kind == DB_NODE_TIMER) { /* the timer's: charged to who armed it */
        cause armed = {0};
        if (db_edges_in(w->r, src.id, cause_one, &armed, w->de)) {
            w->rc = -1;
            return;
        }
        db_node arm;
        bool known = armed.found && armed.e.kind == DB_EDGE_TIMER && db_get_node(w->r, armed.e.from, &arm, w->de) == 1;
        if (own_wait && known && arm.tid == k->tid) {
            w->cp->timeout = true;
            if (w->cp->expect_tid && w->cp->expect_tid != k->tid) {
                /* a wakeup that never came: what the expected waker did
                 * meanwhile (paper/004 §Path Comparison) */
                attribute(w, w->cp->expect_tid, a, b, depth + 1, waiter);
                return;
            }
        }
        add_part(w, known ? &arm : &src, QUERY_CP_TIMER, a, b - a);
        return;
    }
    if (own_wait && !isolated(src.kind) && src.tid != k->tid)
        memcpy(w->cp->waker, src.thread, sizeof w->cp->waker);
    if (src.kind == DB_NODE_INTERRUPT || src.kind == DB_NODE_SOFTIRQ) {
        /* an interrupt is the messenger: the wait was for a device doing
         * someone's I/O -- a block request's submitter (the io edge into
         * the completion, when a thread, not an interrupt, submitted it),
         * else the waiting thread's own -- or for a timer k's thread
         * armed (the timer softirqs); any other handler's run is its own */
        io_pick pick = {.before = c->e.from_event};
        if (db_edges_in(w->r, src.id, io_one, &pick, w->de)) {
            w->rc = -1;
            return;
        }
        const db_edge io = pick.e;
        db_node sub;
        int dev = query_cp_device_of(&src);
        if (dev == QUERY_DEV_NETWORK && raised_by(w, &src, &sub)) {
            /* a local send (loopback, a unix socket's peer): the thread
             * that sent it, whose work the wait was for */
            attribute(w, sub.tid, a, b, depth + 1, waiter);
            return;
        }
        if (io.from && db_get_node(w->r, io.from, &sub, w->de) == 1 && !isolated(sub.kind)) {
            flushed(w, &io, &sub, a, b);
            return;
        }
        if (io.from)
            dev = QUERY_DEV_DISK;
        if (dev == QUERY_DEV_TIMER)
            add_part(w, k, QUERY_CP_TIMER, a, b - a);
        else if (dev != QUERY_DEV_NONE)
            set_device(add_part(w, k, QUERY_CP_IO, a, b - a), dev);
        else
            add_part(w, &src, QUERY_CP_INTERRUPT, a, b - a);
        return;
    }
    if (src.tid == k->tid || isolated(src.kind)) {
        add_part(w, &src, QUERY_CP_BLOCKED, a, b - a);
        return;
    }
    /* blocked on another thread: what that thread did meanwhile */
    attribute(w, src.tid, a, b, depth + 1, waiter);
}

/* The nodes that took the CPU from k during [a, b]: the sources of the
 * preempt edges into k, and of the preempt edges into those (threads
 * preempting each other on a contended CPU), that overlap [a, b], but
 * k's own thread.  Each weighs what it ran of [a, b]: its overlap with
 * it, times the share of its span it was running. */
#define CP_TAKERS 16

typedef struct taker {
    db_node n;
    double w;
} taker;

static uint64_t overlap(const db_node *n, uint64_t a, uint64_t b)
{
    uint64_t lo = n->begin > a ? n->begin : a, hi = n->end < b ? n->end : b;
    return hi > lo ? hi - lo : 0;
}

static void add_takers(walk *w, const cause *c, const db_node *k, uint64_t a, uint64_t b, taker *t, int *nt)
{
    for (int i = 0; i < c->npre && *nt < CP_TAKERS; i++) {
        db_node n;
        bool dup = false;
        for (int j = 0; j < *nt; j++)
            dup = dup || t[j].n.id == c->pre[i].from;
        if (dup || db_get_node(w->r, c->pre[i].from, &n, w->de) != 1 || n.tid == k->tid)
            continue;
        uint64_t ov = overlap(&n, a, b), span = n.end - n.begin;
        if (!ov)
            continue;
        double run = span ? (double)(n.running < span ? n.running : span) / (double)span : 1.0;
        t[*nt].n = n;
        t[*nt].w = (double)ov * (run > 0 ? run : 0.01);
        (*nt)++;
    }
}

/* On whose request node n ran: the chain of wakeups back from n, through
 * the threads that passed the request on, to where it began (a thread
 * woken by an interrupt or nobody; a node the chain met before).  A
 * thread woken by its own timer is followed back to the node that armed
 * it (a pipeline stage that sleeps, then asks the next: the victim's
 * request still), the origin staying the thread the wakeups led to.  The victim's own request when the chain reaches the victim's
 * thread during (or just before) the period -- it asked a server, which
 * asked a worker: then the worker's run is the cause, not the server that
 * passed the request on (false).  Else a third party's (head-of-line
 * blocking): *origin, the thread that began it. */
#define CP_CHAIN 8

static bool third_party(walk *w, const db_node *n, db_node *origin)
{
    const query_cp *cp = w->cp;
    uint64_t since = cp->begin - (cp->end - cp->begin < cp->begin ? cp->end - cp->begin : cp->begin);
    uint32_t seen[CP_CHAIN];
    db_node x = *n;
    *origin = x;
    bool own_timer = false; /* the chain went back through a thread's own timer */
    for (int i = 0; i < CP_CHAIN; i++) {
        if (x.tid == cp->node.tid)
            return x.end < since;
        if (x.end < since)
            return true;
        for (int j = 0; j < i; j++) /* a loop (a thread's own earlier node is no loop) */
            if (seen[j] == x.id)
                return true;
        seen[i] = x.id;
        if (!own_timer) /* past a timer the chain only says whether the victim began it */
            *origin = x;
        cause c = {0};
        if (db_edges_in(w->r, x.id, cause_one, &c, w->de) || !c.found || !kind_rank(c.e.kind) ||
            db_get_node(w->r, c.e.from, &x, w->de) != 1)
            return true;
        if (x.kind == DB_NODE_TIMER) { /* a timer is its arming thread's doing (paper/000 2.e) */
            cause armed = {0};
            if (db_edges_in(w->r, x.id, cause_one, &armed, w->de) || !armed.found ||
                armed.e.kind != DB_EDGE_TIMER || db_get_node(w->r, armed.e.from, &x, w->de) != 1)
                return true;
            own_timer = true;
        }
        if (isolated(x.kind))
            return true;
    }
    return true;
}

/* Node k's own span clipped to [a, b]: running, and preempted (given to
 * the nodes that took the CPU, by weight). */
static void own_span(walk *w, const db_node *k, const cause *c, uint64_t a, uint64_t b)
{
    uint64_t span = k->end - on_cpu(k), len = b - a;
    uint64_t run = k->running < span ? k->running : span;
    uint64_t pre = span ? (uint64_t)((double)(span - run) * ((double)len / (double)span)) : 0;
    if (pre > len)
        pre = len;
    taker t[CP_TAKERS];
    int nt = 0;
    if (pre) {
        add_takers(w, c, k, a, b, t, &nt);
        for (int i = 0, first = nt; i < first && nt < CP_TAKERS; i++) {
            cause c2 = {0};
            if (db_edges_in(w->r, t[i].n.id, cause_one, &c2, w->de)) {
                w->rc = -1;
                return;
            }
            add_takers(w, &c2, k, a, b, t, &nt);
        }
    }
    double weight = 0;
    for (int i = 0; i < nt; i++)
        weight += t[i].w;
    query_cp_part *run_part = add_part(w, k, QUERY_CP_RUNNING, a, len - pre);
    /* on whose request: the thread that began the request that woke the
     * node, if a third party's (not the victim's own request, passed on) */
    db_node waker, req;
    if (run_part && c->found && kind_rank(c->e.kind) && db_get_node(w->r, c->e.from, &waker, w->de) == 1 &&
        !isolated(waker.kind) && waker.tid != k->tid && k->tid != w->cp->node.tid && third_party(w, &waker, &req) &&
        req.tid != k->tid) {
        run_part->for_tid = req.tid;
        run_part->for_node = req.id;
        memcpy(run_part->for_thread, req.thread, sizeof run_part->for_thread);
    }
    uint64_t at = a + (len - pre), left = pre;
    for (int i = 0; i < nt && left && weight > 0; i++) {
        uint64_t share = i == nt - 1 ? left : (uint64_t)((double)pre * t[i].w / weight);
        if (share > left)
            share = left;
        held_off(add_part(w, &t[i].n, QUERY_CP_RUNNABLE, at, share), k);
        at += share;
        left -= share;
    }
    add_part(w, k, QUERY_CP_RUNNABLE, at, left);
}

/* What thread tid did before its first node we know of, over [a, b]: the
 * trace shows nothing of it (it did not exist yet, or the trace had not
 * seen it), so nothing is charged to it -- the wait stays the waiter's,
 * blocked with no cause the trace shows. */
static void before_life(walk *w, uint32_t tid, const db_node *waiter, uint64_t a, uint64_t b)
{
    if (waiter) {
        add_part(w, waiter, QUERY_CP_BLOCKED, a, b - a);
        return;
    }
    db_node none = {.tid = tid};
    db_thread th;
    if (db_get_thread(w->r, tid, &th, w->de) == 1)
        memcpy(none.thread, th.name, sizeof none.thread);
    add_part(w, &none, QUERY_CP_BLOCKED, a, b - a);
}

/* The wakeup that ended k's wait, at or after pos: its time, else 0. */
static uint64_t woke_at(walk *w, const cause *c, uint64_t pos, uint64_t until)
{
    db_event ev;
    if (!c->found || db_get_event(w->r, c->e.from_event, &ev, w->de) != 1 || ev.ts < pos || ev.ts > until)
        return 0;
    return ev.ts;
}

/* Node k woken at a and switched in at b: runnable, while the thread it
 * took the cpu from at b held it (the preempt edges out of k: the thread
 * switched out runnable when k's came in), else the thread that had its
 * cpu most of [a, b] by the cpu's events (cpuholder.c: another ran
 * between them), else k's own (the cpu was idle: the scheduler's
 * latency, not contention). */
typedef struct holders {
    uint32_t id[CP_TAKERS];
    int n;
} holders;

static int holder_out(void *p, const db_edge *e)
{
    holders *h = p;
    if (e->kind == DB_EDGE_PREEMPT && h->n < CP_TAKERS)
        h->id[h->n++] = e->to;
    return 0;
}


static void latency(walk *w, const db_node *k, const cause *c, uint64_t a, uint64_t b)
{
    if (a >= b || w->rc)
        return;
    holders h = {.n = 0};
    for (int i = 0; i < c->npre && h.n < CP_TAKERS; i++) /* the preempt edges into k, read with its cause */
        h.id[h.n++] = c->pre[i].from;
    if (db_edges_out(w->r, k->id, holder_out, &h, w->de)) {
        w->rc = -1;
        return;
    }
    db_node best, n;
    uint64_t most = 0;
    for (int i = 0; i < h.n; i++) {
        uint64_t ov = db_get_node(w->r, h.id[i], &n, w->de) == 1 && n.tid != k->tid ? overlap(&n, a, b) : 0;
        if (ov > most) {
            most = ov;
            best = n;
        }
    }
    if (!most) { /* no edge names it: the cpu's own events may (cpuholder.c) */
        int got = query_cpu_holder(w->r, k, a, b, &best, w->de);
        if (got < 0) {
            w->rc = -1;
            return;
        }
        most = got;
    }
    if (!most) {
        add_part(w, k, QUERY_CP_RUNNABLE, a, b - a);
        return;
    }
    uint64_t from = best.begin > a ? best.begin : a; /* the holder's part of the stretch, to its end */
    add_part(w, k, QUERY_CP_RUNNABLE, a, from - a);
    held_off(add_part(w, &best, QUERY_CP_RUNNABLE, from, b - from), k);
}

/* The thread's first node that begins after t: 1, 0 none, -1. */
typedef struct next {
    uint64_t t;
    db_node n;
    bool found;
} next;

static int next_one(void *p, const db_node *n)
{
    next *x = p;
    if (isolated(n->kind) || n->begin <= x->t)
        return 0;
    x->n = *n;
    x->found = true;
    return 1;
}

static int next_node(walk *w, uint32_t tid, uint64_t t, db_node *out)
{
    next x = {.t = t};
    if (db_scan_thread_nodes(w->r, tid, t, UINT64_MAX, next_one, &x, w->de) < 0) {
        w->rc = -1;
        return -1;
    }
    if (x.found)
        *out = x.n;
    return x.found;
}

/* Thread tid's timeline over [a, b], into parts.  Per node k: the wait
 * before it (from the wait's start to the wakeup: what ended it, by
 * explain_wait), runnable from the wakeup to its switch-in (oncpu), then
 * its own span from the switch-in.  waiter: the node whose wait this
 * explains (NULL: the victim's own timeline). */
static void attribute(walk *w, uint32_t tid, uint64_t a, uint64_t b, int depth, const db_node *waiter)
{
    if (w->rc || a >= b)
        return;
    nodes l = {.a = a, .b = b};
    int rc = db_scan_thread_nodes(w->r, tid, a, b, keep_node, &l, w->de);
    if (rc < 0 || l.oom) {
        w->rc = l.oom ? db_fail_oom(w->de) : -1;
        free(l.v);
        return;
    }
    uint64_t pos = a;
    const db_node *last = NULL;
    for (size_t i = 0; i < l.n && pos < b && !w->rc; i++) {
        const db_node *k = &l.v[i];
        uint64_t on = on_cpu(k);
        uint64_t gs = k->blocked && k->blocked <= k->begin ? k->begin - k->blocked : on;
        cause c = {0};
        if (k->end >= pos && db_edges_in(w->r, k->id, cause_one, &c, w->de)) {
            w->rc = -1;
            break;
        }
        const db_node *waits = k; /* whose wait the one before k is */
        if (gs > pos) {
            uint64_t e = gs < b ? gs : b;
            if (last || l.earlier) /* between nodes, no wait recorded: it ran on */
                add_part(w, last ? last : k, QUERY_CP_RUNNING, pos, e - pos);
            else if (woke_at(w, &c, pos, on)) { /* created (or first seen) by a wakeup */
                gs = pos;
                waits = waiter ? waiter : k;
            } else
                before_life(w, tid, waiter, pos, e);
            pos = gs < b ? gs : b;
        }
        if (pos < on && pos < b) { /* the wait before k */
            uint64_t we = on < b ? on : b;
            uint64_t woke = woke_at(w, &c, 0, we); /* before pos: runnable already */
            woke = !woke ? we : woke < pos ? pos : woke;
            if (c.found && woke > pos)
                explain_wait(w, k, waits, &c, pos, woke, depth);
            else if (woke > pos)
                add_part(w, waits, QUERY_CP_BLOCKED, pos, woke - pos);
            latency(w, k, &c, woke, we); /* woken, not yet on a cpu */
            pos = we;
        }
        if (pos < b && k->end > pos) {
            uint64_t e = k->end < b ? k->end : b;
            own_span(w, k, &c, pos, e);
            pos = e;
        }
        last = k;
    }
    if (pos < b && !w->rc) { /* after its last node in [a, b]: waiting */
        db_node nx;
        int got = (last || l.earlier) ? next_node(w, tid, b, &nx) : 0;
        cause c = {0};
        if (got > 0 && nx.blocked && nx.begin - nx.blocked <= pos && db_edges_in(w->r, nx.id, cause_one, &c, w->de))
            w->rc = -1;
        else if (got > 0 && c.found && nx.blocked && nx.begin - nx.blocked <= pos)
            explain_wait(w, &nx, &nx, &c, pos, b, depth); /* on what ended that wait, after b */
        else if (last)
            add_part(w, last, QUERY_CP_BLOCKED, pos, b - pos);
        else
            before_life(w, tid, waiter, pos, b);
    }
    free(l.v);
}

/* The partition's invariant (this file's header): parts in time order,
 * each beginning where the one before it ended, from the period's begin
 * to its end. */
static void cp_check(const query_cp *cp)
{
#ifndef NDEBUG
    uint64_t pos = cp->begin;
    for (size_t i = 0; i < cp->n; i++) {
        assert(cp->parts[i].ns > 0);
        assert(cp->parts[i].begin == pos);
        pos += cp->parts[i].ns;
    }
    assert(pos == cp->end);
#else
    (void)cp;
#endif
}

int query_critical_path(db_reader *r, const db_node *n, query_cp *cp, db_error *de)
{
    return query_critical_path_expect(r, n, 0, NULL, cp, de);
}

int query_critical_path_expect(db_reader *r, const db_node *n, uint32_t expect_tid, const char *expected, query_cp *cp,
                               db_error *de)
{
    memset(cp, 0, sizeof *cp);
    cp->expect_tid = expect_tid;
    if (expected)
        snprintf(cp->expected, sizeof cp->expected, "%s", expected);
    cp->begin = n->blocked && n->blocked <= n->begin ? n->begin - n->blocked : n->begin;
    cp->end = n->end > cp->begin ? n->end : cp->begin;
    cp->node = *n;
    walk w = {r, de, cp, 0};
    attribute(&w, n->tid, cp->begin, cp->end, 0, NULL);
    if (w.rc) {
        query_cp_free(cp);
        return -1;
    }
    cp_check(cp);
    return 0;
}

int query_critical_path_span(db_reader *r, const db_node *n, uint64_t begin, uint64_t end, query_cp *cp, db_error *de)
{
    memset(cp, 0, sizeof *cp);
    cp->begin = begin;
    cp->end = end > begin ? end : begin;
    cp->node = *n;
    cp->node.id = 0; /* no node's own wait: a stretch of the thread's life */
    walk w = {r, de, cp, 0};
    attribute(&w, n->tid, cp->begin, cp->end, 0, NULL);
    cp->node = *n;
    if (w.rc) {
        query_cp_free(cp);
        return -1;
    }
    cp_check(cp);
    return 0;
}

void query_cp_free(query_cp *cp)
{
    free(cp->parts);
    cp->parts = NULL;
    cp->n = cp->cap = 0;
}

int query_node_wait(db_reader *r, const db_node *k, query_wait *out, db_error *de)
{
    memset(out, 0, sizeof *out);
    uint64_t on = on_cpu(k);
    if (!k->blocked || k->blocked > k->begin || k->begin - k->blocked >= on)
        return 0;
    out->from = k->begin - k->blocked;
    out->woke = out->on = on;
    cause c = {0};
    if (db_edges_in(r, k->id, cause_one, &c, de))
        return -1;
    walk w = {r, de, NULL, 0};
    uint64_t t = woke_at(&w, &c, out->from, on); /* as attribute(): what ended the wait, when */
    if (t) {
        out->woke = t;
        out->by = c.e;
        out->known = true;
    }
    return 1;
}
