/* graph/build.c -- part 1 of paper/000's algorithm: cutting each thread's
 * events into nodes by the boundary rules, in one time-ordered pass. */
#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_int.h"


/* ---- nodes ---- */

/* The thread key of a node (its signature's and the writer's top lists'):
 * a thread's nodes mostly share its name, so the key is kept with the
 * name rather than hashed byte by byte for every node, here and again on
 * the writer's thread. */
static uint32_t node_key(graph_thread *t, const db_node *n)
{
    if (!t || n->kind >= DB_NODE__COUNT)
        return graph_thread_key(n->thread, n->kind);
    if (memcmp(t->tk_name, n->thread, sizeof t->tk_name) != 0) {
        memcpy(t->tk_name, n->thread, sizeof t->tk_name);
        t->tk_have = 0;
    }
    if (!(t->tk_have & 1u << n->kind)) {
        t->tk[n->kind] = graph_thread_key(n->thread, n->kind);
        t->tk_have |= (uint8_t)(1u << n->kind);
    }
    return t->tk[n->kind];
}

static int node_close(graph_state *g, graph_open *o)
{
    if (!o->open)
        return 0;
    o->open = false;
    graph_thread *t = NULL;
    if (!db_node_kind_isolated(o->n.kind))
        t = graph_thread_find(g, graph_thread_slot(o->n.tid, o->n.cpu));
    graph_sched_close(t, o);
    g->st->nodes++;
    uint32_t key = node_key(t, &o->n);
    return db_writer_node_sig(g->w, &o->n, key, graph_sig_done(o, key), g->err);
}

/* Appends at most n bytes of s (up to a NUL) to the name in dst[0..at),
 * cut at DB_NAME_MAX - 1; the new length.  Names are made for every node,
 * and snprintf's format parsing showed in an ftrace ingest's profile
 * (docs/PERFORMANCE.md). */
static size_t name_cat(char *dst, size_t at, const char *s, size_t n)
{
    size_t room = DB_NAME_MAX - 1 - at;
    n = strnlen(s, n < room ? n : room);
    memcpy(dst + at, s, n);
    dst[at + n] = 0;
    return at + n;
}

static void name_copy(char *dst, const char *src, size_t len) { name_cat(dst, 0, src, len); }

/* ---- names ----
 * A node is named after its thread and process, and a wakeup's normal form
 * after the thread woken: asking the writer for each (its front's copy,
 * through a call and a table) cost far more than following the few
 * namings a trace has.  While the caller tells the graph of every naming
 * (graph_feed_named), a name read stays good until the next one. */

static void name_zero(char dst[DB_NAME_MAX]) { memset(dst, 0, DB_NAME_MAX); }

static int read_thread(graph_state *g, uint32_t tid, char dst[DB_NAME_MAX], db_error *err)
{
    db_thread th;
    name_zero(dst);
    int got = db_writer_get_thread(g->w, tid, &th, err);
    if (got > 0)
        name_copy(dst, th.name, strlen(th.name));
    return got;
}

static int read_proc(graph_state *g, uint32_t pid, char dst[DB_NAME_MAX], db_error *err)
{
    name_zero(dst);
    return db_writer_get_proc(g->w, pid, dst, DB_NAME_MAX, err);
}

/* The name through the cache c: read (by `read`) when c is stale. */
static int cached(graph_state *g, graph_name *c, uint32_t id, char dst[DB_NAME_MAX], db_error *err,
                  int (*read)(graph_state *g, uint32_t id, char dst[DB_NAME_MAX], db_error *err))
{
    if (!c || !g->names_gen)
        return read(g, id, dst, err);
    if (c->gen != g->names_gen || c->id != id) {
        int got = read(g, id, c->name, err);
        if (got < 0) {
            c->gen = 0;
            return -1;
        }
        c->got = got;
        c->gen = g->names_gen;
        c->id = id;
    }
    memcpy(dst, c->name, DB_NAME_MAX);
    return c->got;
}

int graph_name_thread(graph_state *g, graph_name *c, uint32_t tid, char dst[DB_NAME_MAX], db_error *err)
{
    return cached(g, c, tid, dst, err, read_thread);
}

int graph_name_proc(graph_state *g, graph_name *c, uint32_t pid, char dst[DB_NAME_MAX], db_error *err)
{
    return cached(g, c, pid, dst, err, read_proc);
}

/* Opens a node on the thread (or landing thread) t of ev.  Names come from
 * the thread table as it stands at this point of the trace. */
static int node_open(graph_state *g, graph_open *o, graph_thread *t, const db_event *ev, int kind, uint64_t blocked)
{
    /* all but the names, which the name reads below write in full, and
     * the signature's hashes, which sig.n = 0 makes unused (a quarter KB
     * less to clear per node; the names' 96 bytes) */
    memset(o, 0, offsetof(graph_open, n.thread));
    o->open = true;
    o->anonymous = false;
    o->sig.n = 0;
    o->run_from = o->runnable_in = o->off_in = o->off_last_from = o->off_last_to = o->off_last_rbl = 0;
    db_node *n = &o->n;
    n->id = ++g->next_node;
    n->tid = ev->tid;
    n->pid = ev->pid;
    n->kind = (uint8_t)kind;
    n->cpu = ev->cpu;
    n->blocked = blocked;
    if (graph_name_thread(g, &t->tname, ev->tid, n->thread, g->err) < 0 ||
        graph_name_proc(g, &t->pname, ev->pid, n->proc, g->err) < 0)
        return -1;
    /* A process first seen through one of its threads is named after that
     * thread until its leader shows up (ftrace text without the leader's
     * name).  While the name may be such a guess (its leader not seen),
     * the node keeps none and readers name it after the process as the
     * trace leaves it, so that every node of a process answers to one
     * name.  "<...>" is compared as 6 bytes of the DB_NAME_MAX-byte name,
     * two loads, not by a call to strcmp per node. */
    uint32_t ix;
    if (g->proc_guess && ev->pid != 0 &&
        ((ev->tid != ev->pid && !(base_map_get(&g->tids, ev->pid, &ix) && g->threads[ix]->seen)) ||
         memcmp(n->proc, "<...>", 6) == 0)) /* tracefs did not know the comm yet */
        n->proc[0] = '\0';
    return 0;
}

static int node_append(graph_state *g, graph_open *o, const db_event *ev)
{
    db_node *n = &o->n;
    /* a node is a stretch of one thread's execution (paper/000 1.a): its
     * events come in time order (the feed's promise, graph/feed.c) */
    assert(n->events == 0 || ev->ts >= n->end);
    if (n->events++ == 0) {
        n->begin = ev->ts;
        n->first_event = ev->id;
    }
    n->end = ev->ts;
    n->last_event = ev->id;
    g->last_node = n->id;
    if (g->post_pass && db_writer_set_event_node(g->w, ev->id, n->id, g->err))
        return -1;
    /* normalized before graph_connect consumes the ipc match, which names
     * the peer of a receipt */
    if (graph_sig_add(g, o, ev))
        return -1;
    return graph_connect(g, ev, n->id);
}

/* ---- isolated contexts: interrupts, softirqs, timer callouts,
 * timeshare maintenance (paper/000 1.a; paper/002 heartbeat isolation) ---- */

static int iso_kind(const db_event *ev)
{
    switch (ev->type) {
    case DB_EV_INTERRUPT: {
        uint64_t soft;
        return ev->ctx == DB_CTX_SOFTIRQ || db_event_attr_u64(ev, "softirq", &soft) ? DB_NODE_SOFTIRQ
                                                                                   : DB_NODE_INTERRUPT;
    }
    case DB_EV_TIMER_CALLOUT: return DB_NODE_TIMER;
    case DB_EV_TIMESHARE: return DB_NODE_TIMESHARE;
    default: return -1;
    }
}

/* An isolated node is named for what ran, not for the thread it landed on:
 * "irq/36 virtio1-req.0", "softirq/RCU", "timer/hrtimer_wakeup". */
static void iso_name(graph_open *o, const db_event *ev, int kind)
{
    const char *v;
    size_t n;
    char *d = o->n.thread;
    if (kind == DB_NODE_SOFTIRQ && db_event_attr(ev, "action", &v, &n))
        name_cat(d, name_cat(d, 0, "softirq/", 8), v, n);
    else if (kind == DB_NODE_INTERRUPT && db_event_attr(ev, "name", &v, &n)) {
        char num[20];
        size_t at = name_cat(d, 0, "irq/", 4);
        at = name_cat(d, at, num, base_fmt_u64(num, ev->obj));
        name_cat(d, name_cat(d, at, " ", 1), v, n);
    } else if (kind == DB_NODE_TIMER && db_event_attr(ev, "func", &v, &n)) {
        const char *slash = memchr(v, '/', n); /* "hrtimer_wakeup/0x0" */
        name_cat(d, name_cat(d, 0, "timer/", 6), v, slash ? (size_t)(slash - v) : n);
    } else {
        const char *k = db_node_kind_name(kind);
        name_cat(d, 0, k, strlen(k));
    }
}

static int stack_pop(graph_state *g, graph_stack *s)
{
    return s->depth ? node_close(g, &s->s[--s->depth]) : 0;
}

static int stack_clear(graph_state *g, graph_stack *s)
{
    while (s->depth)
        if (stack_pop(g, s))
            return -1;
    return 0;
}

/* t: the thread of ev, which the context landed on */
static int stack_push(graph_state *g, graph_stack *s, graph_thread *t, const db_event *ev, int kind, bool anonymous)
{
    if (s->depth == GRAPH_STACK_MAX && stack_pop(g, s))
        return -1;
    graph_open *o = &s->s[s->depth++];
    if (node_open(g, o, t, ev, kind, 0))
        return -1;
    o->anonymous = anonymous;
    iso_name(o, ev, kind);
    return 0;
}

static graph_stack *cpu_stack(graph_state *g, uint16_t cpu)
{
    if (cpu >= g->ncpus) {
        size_t n = (size_t)cpu + 1;
        graph_stack *p = realloc(g->cpus, n * sizeof *p);
        if (!p)
            return NULL;
        memset(p + g->ncpus, 0, (n - g->ncpus) * sizeof *p);
        g->cpus = p;
        g->ncpus = n;
    }
    return &g->cpus[cpu];
}

/* ---- threads ---- */

/* slot's thread is t (NULL: none yet) */
static void near_put(graph_state *g, uint64_t slot, graph_thread *t)
{
    size_t i = graph_near_ix(slot);
    g->near[i] = t;
    g->near_slot[i] = slot;
}

/* t, of slot, is the thread got last */
static graph_thread *recent(graph_state *g, uint64_t slot, graph_thread *t)
{
    near_put(g, slot, t);
    g->recent = t;
    g->recent_slot = slot;
    return t;
}

/* Whether g->near knows slot (*t: its thread, NULL for none).  The threads
 * got before the last, without the table: a switch's next thread, a
 * wakeup's target (more than one lookup an event; with only the thread got
 * before the last, in place of this, they cost much more), and the idle
 * task's slot without a cpu, which has no thread (graph_sched_after's table
 * lookups).  It stays right: threads are never taken out of the table, and
 * one is made only by graph_thread_get_more, which puts it here in its
 * slot's place.  (The zeroed table says slot 0 has none, as the empty table
 * does.) */
static bool near(const graph_state *g, uint64_t slot, graph_thread **t)
{
    size_t i = graph_near_ix(slot);
    *t = g->near[i];
    return g->near_slot[i] == slot;
}

/* graph_thread_find past the thread got last */
graph_thread *graph_thread_find_more(graph_state *g, uint64_t slot)
{
    uint32_t ix;
    graph_thread *t;
    if (near(g, slot, &t))
        return t;
    t = base_map_get(&g->tids, slot, &ix) ? g->threads[ix] : NULL;
    near_put(g, slot, t);
    return t;
}

/* graph_thread_get past the thread got last */
graph_thread *graph_thread_get_more(graph_state *g, uint64_t slot, uint32_t tid)
{
    graph_thread *t;
    if (near(g, slot, &t) && t) {
        g->recent = t;
        g->recent_slot = slot;
        return t;
    }
    uint32_t ix;
    if (base_map_get(&g->tids, slot, &ix))
        return recent(g, slot, g->threads[ix]);
    if (g->nthreads == g->cthreads) {
        size_t n = g->cthreads ? g->cthreads * 2 : 256;
        graph_thread **p = realloc(g->threads, n * sizeof *p);
        if (!p)
            return NULL;
        g->threads = p;
        g->cthreads = n;
    }
    t = calloc(1, sizeof *t);
    if (!t || base_map_put(&g->tids, slot, (uint32_t)g->nthreads)) {
        free(t);
        return NULL;
    }
    g->threads[g->nthreads++] = t;
    t->tid = tid;
    return recent(g, slot, t);
}

static bool is_callout(const db_event *ev)
{
    return ev->type == DB_EV_DISPATCH_INVOKE || ev->type == DB_EV_RUNLOOP_INVOKE;
}

static __attribute__((noinline)) bool observer_stage(graph_state *g, const db_event *ev, const char *stage)
{
    const char *v;
    size_t n;
    return graph_attr(g, ev, "stage", &v, &n) && n == strlen(stage) && memcmp(v, stage, n) == 0;
}

/* A run loop observer's stage: the type test inline, the attribute out of
 * line, as it is asked twice of every thread event and most traces have
 * no run loops. */
static inline bool is_stage(graph_state *g, const db_event *ev, const char *stage)
{
    return ev->type == DB_EV_RUNLOOP_OBSERVER && observer_stage(g, ev, stage);
}

static bool in_peers(const graph_thread *t, uint32_t pid)
{
    for (int i = 0; i < t->npeers; i++)
        if (t->peers[i] == pid)
            return true;
    return false;
}

/* paper/000 1.d (and paper/002 "IPC and vouchers"): a message to or from a
 * process outside the node's IPC peer set begins a new node, unless a
 * voucher says the work is done on behalf of a process already in it. */
static bool peer_boundary(graph_state *g, const graph_thread *t, const db_event *ev, uint32_t peer)
{
    if (!t->cur.open || t->npeers == 0 || in_peers(t, peer))
        return false;
    uint32_t obo = graph_voucher_pid(g, t, ev);
    return !(obo && in_peers(t, obo));
}

/* A thread-context event: the boundary rules of paper/000 part 1. */
static int thread_event(graph_state *g, graph_thread *t, const db_event *ev, bool after_out)
{
    /* An event logged under a thread after its own switch-out -- the stack
     * trace a sched_switch triggers, an old kernel's wakeup printed in the
     * sleeper's context -- is not the thread running again (it runs when
     * it is switched in): it ends no wait and belongs to the node the wait
     * closed (paper/000 1.b). */
    if (after_out && t->sched && !t->on_cpu && t->waiting && t->wait_node) {
        g->last_node = t->wait_node;
        if (g->post_pass && db_writer_set_event_node(g->w, ev->id, t->wait_node, g->err))
            return -1;
        return graph_connect(g, ev, t->wait_node);
    }
    bool fresh = !t->cur.open;
    int kind = t->callout_level == 0 ? DB_NODE_THREAD : t->mig ? DB_NODE_SERVICE : t->callout_kind;
    uint64_t blocked = 0;
    /* paper/000 1.b: the first event after a wait starts a node, unless the
     * wait was inside a callout (callout_level > 0) */
    if (t->waiting) {
        blocked = ev->ts - t->wait_ts;
        if (t->callout_level == 0)
            fresh = true;
    }
    /* paper/000 1.c: the begin of each dispatch / run-loop callout starts
     * its own node */
    if (is_callout(ev) && ev->phase == DB_PH_BEGIN) {
        fresh = true;
        kind = ev->type == DB_EV_DISPATCH_INVOKE ? DB_NODE_DISPATCH : DB_NODE_RUNLOOP;
        t->callout_level++;
        t->callout_kind = (uint8_t)kind;
    }
    /* paper/002 RunLoop: every RunLoopEntry begins an execution segment */
    if (is_stage(g, ev, "entry"))
        fresh = true;
    /* paper/001, 004: dispatch_mig_service runs a server loop inside one
     * callout; each request it receives is its own service node (fontd) */
    if (ev->type == DB_EV_DISPATCH_MIG_SERVICE && ev->phase == DB_PH_BEGIN)
        t->mig = true;
    if (t->mig && ev->type == DB_EV_MACH_MSG && ev->phase == DB_PH_END) {
        fresh = true;
        kind = DB_NODE_SERVICE;
    }
    uint32_t peer = 0;
    bool has_peer = ev->type == DB_EV_MACH_MSG && graph_msg_peer(g, ev, &peer);
    if (has_peer && !fresh && peer_boundary(g, t, ev, peer))
        fresh = true;
    /* paper/000 1.f: boundaries the user added */
    if (g->nrules && graph_rule_boundary(g, ev))
        fresh = true;
    if (fresh) {
        if (node_close(g, &t->cur) || node_open(g, &t->cur, t, ev, kind, blocked))
            return -1;
        graph_sched_open(t, &t->cur, ev);
        t->npeers = 0;
        t->voucher_pid = 0;
    }
    if (has_peer && !in_peers(t, peer) && t->npeers < GRAPH_PEERS_MAX)
        t->peers[t->npeers++] = peer;
    if (ev->type == DB_EV_VOUCHER) {
        uint64_t obo;
        if (db_event_attr_u64(ev, "on_behalf_of", &obo) && obo <= UINT32_MAX)
            t->voucher_pid = (uint32_t)obo;
    }
    if (graph_thread_waits(g, t, ev, t->cur.n.id))
        return -1;
    if (node_append(g, &t->cur, ev))
        return -1;
    /* paper/000 1.c: the end of a callout completes its node */
    if (is_callout(ev) && ev->phase == DB_PH_END) {
        if (t->callout_level > 0)
            t->callout_level--;
        if (t->callout_level == 0)
            t->mig = false;
        return node_close(g, &t->cur);
    }
    /* the end of the server loop: what is left of the callout is its own node */
    if (ev->type == DB_EV_DISPATCH_MIG_SERVICE && ev->phase == DB_PH_END) {
        t->mig = false;
        return node_close(g, &t->cur);
    }
    if (is_stage(g, ev, "exit"))
        return node_close(g, &t->cur);
    /* paper/000 1.b: a wait ends the node when callout_level is 0 */
    if (ev->type == DB_EV_WAIT && t->callout_level == 0)
        return node_close(g, &t->cur);
    /* paper/000 1.e (other heuristics): the idle task switching out has
     * found work; its idle stretch ends like a wait */
    if (ev->tid == 0 && ev->type == DB_EV_RAW && g->ev_name == GRAPH_NAME_SCHED_SWITCH)
        return node_close(g, &t->cur);
    return 0;
}

/* Routes one event to its node: an isolated context if it runs in one,
 * else its thread (paper/000 1.a). */
static int on_event(void *p, const db_event *ev)
{
    graph_state *g = p;
    graph_thread *t = graph_thread_get(g, ev->tid, ev->cpu);
    if (!t)
        return -1;
    t->pid = ev->pid;
    /* with a cpu, isolated contexts belong to the cpu (an interrupt runs on
     * a cpu, whatever thread it lands on); without, to the thread */
    bool per_cpu = ev->cpu != DB_CPU_NONE;
    graph_stack *s = per_cpu ? cpu_stack(g, ev->cpu) : &t->stack;
    if (!s)
        return -1;
    bool irq = ev->ctx == DB_CTX_HARDIRQ || ev->ctx == DB_CTX_SOFTIRQ;
    /* logged on this cpu right after the switch that took the thread off */
    bool after_out = per_cpu && s->off && s->off_tid == ev->tid;
    if (graph_sched_event(g, ev))
        return -1;
    if (per_cpu) {
        s->off = t->sched && !t->on_cpu && !irq;
        s->off_tid = ev->tid;
    }
    /* a receipt is paired with its send before it is given a node: the
     * sender is the peer of the IPC peer-set rule (paper/000 1.d) */
    graph_ipc_match(g, ev);
    /* the flag column says we are back in thread context: whatever
     * interrupt we thought was running has returned */
    if (per_cpu && ev->ctx == DB_CTX_THREAD && s->depth && stack_clear(g, s))
        return -1;
    int kind = iso_kind(ev);
    if (kind >= 0 && ev->phase == DB_PH_BEGIN) {
        /* paper/002 "kernel thread for timers": timers fired back to back
         * are not nested; each callout is its own node */
        graph_open *top = s->depth ? &s->s[s->depth - 1] : NULL;
        if (top && (top->anonymous || (kind == DB_NODE_TIMER && top->n.kind == DB_NODE_TIMER)) &&
            stack_pop(g, s))
            return -1;
        if (stack_push(g, s, t, ev, kind, false))
            return -1;
        return node_append(g, &s->s[s->depth - 1], ev);
    }
    if (s->depth && (irq || ev->ctx == DB_CTX_UNKNOWN || !per_cpu)) {
        if (node_append(g, &s->s[s->depth - 1], ev))
            return -1;
        /* an end closes the innermost context of its kind */
        if (kind >= 0 && ev->phase == DB_PH_END) {
            for (int i = s->depth - 1; i >= 0; i--)
                if (s->s[i].n.kind == kind && !s->s[i].anonymous) {
                    while (s->depth > i)
                        if (stack_pop(g, s))
                            return -1;
                    break;
                }
        }
        return 0;
    }
    if (irq) {
        /* interrupt context without an entry event (the trace began inside
         * it, or the entry is not traced): still isolated */
        if (stack_push(g, s, t, ev, ev->ctx == DB_CTX_SOFTIRQ ? DB_NODE_SOFTIRQ : DB_NODE_INTERRUPT, true))
            return -1;
        return node_append(g, &s->s[s->depth - 1], ev);
    }
    return thread_event(g, t, ev, after_out);
}

graph_builder *graph_begin(db_writer *w, const graph_rule *rules, size_t nrules, db_error *err)
{
    graph_state *g = calloc(1, sizeof *g);
    if (!g || (nrules && !(g->user = calloc(nrules, sizeof *g->user)))) {
        free(g);
        db_fail_oom(err);
        return NULL;
    }
    g->w = w;
    g->err = err;
    g->recent_slot = GRAPH_SLOT_NONE;
    /* the Argus format declares every process by name; the others name a
     * process after whichever of its threads shows first */
    g->proc_guess = strcmp(db_writer_format(w), "argus") != 0;
    g->st = &g->stats;
    g->rules = rules;
    g->nrules = nrules;
    return g;
}

/* The event's name among those the rules look for, measured once, not
 * compared by each rule's strcmp with its names.  Those names start with
 * 's' or 'b': another name is not measured. */
static uint8_t ev_name(const db_event *ev)
{
    const char *s = ev->name ? ev->name : "";
    if (s[0] != 's' && s[0] != 'b') /* not measured: no name looked for */
        return GRAPH_NAME_OTHER;
    size_t n = db_event_name_len(ev);
    if (n == 12 && memcmp(s, "sched_switch", 12) == 0)
        return GRAPH_NAME_SCHED_SWITCH;
    if (n == 12 && memcmp(s, "sched_waking", 12) == 0)
        return GRAPH_NAME_SCHED_WAKING;
    if (n >= 6 && memcmp(s, "block_", 6) == 0)
        return GRAPH_NAME_BLOCK;
    return GRAPH_NAME_OTHER;
}

int graph_event(graph_builder *g, const db_event *ev, uint32_t *node)
{
    g->last_node = 0;
    g->ev_name = ev_name(ev);
    g->ev_seq++; /* graph_attr's entries are the event before's */
    if (on_event(g, ev) || graph_sched_after(g, ev, g->last_node)) {
        if (!g->err->msg[0])
            db_fail_oom(g->err);
        return -1;
    }
    *node = g->last_node;
    return 0;
}

void graph_abort(graph_builder *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->nthreads; i++)
        free(g->threads[i]);
    free(g->threads);
    free(g->cpus);
    base_map_free(&g->tids);
    free(g->norms);
    g->norms = NULL;
    base_map_free(&g->norm_cache);
    free(g->attrs);
    graph_edges_free(g);
    free(g);
}

int graph_end(graph_builder *g, graph_stats *st)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < g->nthreads; i++)
        if (node_close(g, &g->threads[i]->cur) || stack_clear(g, &g->threads[i]->stack))
            rc = -1;
    for (size_t i = 0; rc == 0 && i < g->ncpus; i++)
        if (stack_clear(g, &g->cpus[i]))
            rc = -1;
    if (rc && !g->err->msg[0])
        db_fail_oom(g->err);
    if (st)
        *st = g->stats;
    graph_abort(g);
    return rc ? -1 : 0;
}

static int post_event(void *p, const db_event *ev)
{
    uint32_t node;
    return graph_event(p, ev, &node);
}

int graph_build(db_writer *w, const graph_rule *rules, size_t nrules, graph_stats *st, db_error *err)
{
    graph_builder *g = graph_begin(w, rules, nrules, err);
    if (!g)
        return -1;
    g->post_pass = true;
    if (db_writer_scan_time(w, post_event, g, err)) {
        graph_abort(g);
        return -1;
    }
    return graph_end(g, st);
}
