/* graph/graph_int.h -- internals of graph/ (not a public header). */
#ifndef ARGUSQ_GRAPH_INT_H
#define ARGUSQ_GRAPH_INT_H

#include <stdbool.h>
#include <string.h>

#include "graph.h"

/* ---- build.c ---- */

/* An open node: in memory until its last event, then written once. */
/* node_open sets every member but sig one by one after n: a member
 * added here is set there. */
typedef struct graph_open {
    db_node n;
    bool open;
    bool anonymous; /* irq-context events with no entry event seen */
    uint64_t run_from;    /* sched.c: the switch-in its running counts from */
    uint64_t runnable_in; /* sched.c: ns preempted inside the node */
    uint64_t off_in;      /* sched.c: ns off the cpu inside the node (preempted,
                             or asleep in a wait inside a callout) */
    uint64_t off_last_from, off_last_to, off_last_rbl; /* sched.c: the latest such
                                                          stretch, its runnable ns */
    /* the node's normal form so far (normalize.c): sig.n hashes in sig.h
     * as they came, sorted and given the node in place when it closes
     * (graph_sig_done) */
    db_sig sig;
} graph_open;

/* Isolated contexts nest (a hardirq inside a softirq, a timer callout in
 * a hardirq); deeper nesting than this is folded into the innermost. */
#define GRAPH_STACK_MAX 6

typedef struct graph_stack {
    graph_open s[GRAPH_STACK_MAX];
    int depth;
    /* per cpu: the thread the cpu's latest sched_switch took off, while
     * every event since has been that thread's (logged in the switch) */
    bool off;
    uint32_t off_tid;
} graph_stack;

/* FIFOs of pending halves, one per key: the head and tail of each list
 * (pend entries linked by `next`), so that a push is O(1). */
typedef struct graph_fifo {
    base_map head, tail;
} graph_fifo;

/* One half of a connection waiting for its other half. */
typedef struct graph_pend {
    uint64_t ev;
    uint32_t node;
    uint32_t next; /* index+1 of the next pending in a FIFO, 0 = none */
    int64_t val;   /* flag value */
    uint64_t kmsg; /* a pending mach_msg send: its kmsg, 0 if none */
    uint32_t pid;  /* the process of the event */
    bool dead;     /* matched out of FIFO order (by kmsg); skipped on pop */
} graph_pend;

#define GRAPH_PEERS_MAX 16

/* A thread's or process's name as the writer gave it last (build.c,
 * graph_name_thread / graph_name_proc): valid while gen is the state's
 * names_gen and id is the one asked for. */
typedef struct graph_name {
    uint64_t gen; /* 0: never read */
    uint32_t id;  /* the tid or pid named */
    int got;      /* 1: named, 0: the writer has no such thread / process */
    char name[DB_NAME_MAX]; /* zero-padded, as a node holds it */
} graph_name;

typedef struct graph_thread {
    uint32_t tid, pid;
    graph_open cur;          /* the thread's open node */
    graph_stack stack;       /* isolated contexts, when events carry no cpu */
    int callout_level;       /* paper/000 1.b: callout_level */
    uint8_t callout_kind;    /* node kind of the innermost callout */
    bool mig;                /* inside dispatch_mig_service (paper/004) */
    uint32_t peers[GRAPH_PEERS_MAX]; /* paper/000 1.d: IPC_peer_set of cur */
    int npeers;
    uint32_t voucher_pid;    /* on whose behalf cur works (adopted voucher), 0 none */
    bool seen;               /* has had an event */
    bool waiting;            /* blocked in its latest wait */
    bool woken;              /* ...and a wakeup for it was seen */
    uint64_t wait_ev, wait_ts, wake_ev;
    uint32_t wait_node, wake_node;
    /* sched.c: the thread's CPU state, from sched_switch and wakeups */
    bool sched;              /* a sched_switch named it */
    bool on_cpu;
    uint64_t runnable_since; /* woken or preempted at, 0: not runnable */
    uint64_t pend_runnable;  /* runnable ns for the node it opens next */
    uint64_t pend_on;        /* switched in at, before that node's first event */
    uint64_t off_since;      /* switched out at (while on_cpu is false) */
    bool runnable_fork;      /* runnable_since is a fork's (sched_process_fork) */
    uint64_t preempt_ev;     /* a preemption of another thread's node this */
    uint32_t preempt_node;   /* thread took the cpu for, waiting for its node */
    uint32_t preempt_victim; /* ...and that node's thread */
    uint32_t preempt_last_from, preempt_last_to; /* the last preempt edge into
                                                    this thread's nodes */
    /* build.c: the thread keys of its nodes' name (zero-padded, as nodes
     * hold it) by kind, those of tk_have's bits */
    char tk_name[DB_NAME_MAX];
    uint8_t tk_have;
    uint32_t tk[DB_NODE__COUNT];
    /* build.c: the name of the thread (its tid), and of the process of
     * its latest node */
    graph_name tname, pname;
    /* normalize.c: the hash of the form "wakeup:NAME" of a wakeup of this
     * thread, good while wake_gen is the state's names_gen (0: none) */
    uint64_t wake_gen;
    uint32_t wake_h;
} graph_thread;

/* The source event names the rules look for (graph_state.ev_name). */
enum graph_ev_name {
    GRAPH_NAME_OTHER,
    GRAPH_NAME_SCHED_SWITCH,
    GRAPH_NAME_SCHED_WAKING,
    GRAPH_NAME_BLOCK, /* "block_..." */
};

#define GRAPH_NEAR 256u /* entries of graph_state.near */
typedef struct graph_state {
    db_writer *w;
    bool proc_guess; /* process names may be guesses until the leader shows */
    uint64_t names_gen;  /* 0: names are asked of the writer every time; else
                            bumped at every naming (graph_feed_named) */
    db_error *err;
    graph_stats *st;
    graph_stats stats;       /* st points here */
    uint32_t last_node;      /* the node the current event was given */
    uint8_t ev_name;         /* the current event's name (graph_ev_name) */
    bool post_pass;          /* events are stored: write their node back */
    uint32_t next_node;
    graph_thread **threads;  /* each allocated alone, so pointers stay valid
                                while the table grows; `tids`: slot -> index */
    size_t nthreads, cthreads;
    base_map tids;
    /* the thread last got (graph_thread_get): an event asks for its own
     * thread two or three times (NULL: none yet, while recent_slot is
     * GRAPH_SLOT_NONE, which no slot equals) */
    graph_thread *recent;
    uint64_t recent_slot;
    /* threads got before, by slot, direct-mapped (graph_thread_near) */
    graph_thread *near[GRAPH_NEAR];
    uint64_t near_slot[GRAPH_NEAR];
    graph_stack *cpus;       /* per-cpu isolated contexts */
    size_t ncpus;
    graph_pend *pend;        /* pool of pending halves; free list via next */
    size_t npend, cpend;
    uint32_t pend_free;
    graph_fifo timers;       /* timer address -> FIFO of uncancelled arms */
    graph_fifo dispatch;     /* block -> FIFO of pending enqueues */
    graph_fifo runloop;      /* block -> FIFO of pending submits */
    base_map flags;         /* flag address -> pend (the latest write) */
    base_map kmsgs;         /* kmsg -> pending send */
    graph_fifo ports;        /* dest port -> FIFO of pending sends */
    base_map replies;       /* reply port -> the receipt that carried it */
    base_map port_owner;    /* port -> pid that receives on it */
    base_map vouchers;      /* voucher address -> on_behalf_of pid */
    base_map wakings;       /* target tid -> the waker's sched_waking (Linux) */
    base_map requests;      /* block request (device, sector) -> its submission */
    base_map *user;         /* per connect rule: hash of key -> latest `a` */
    uint32_t *norms;         /* GRAPH_NORMS_SEEN hashes last put into the dictionary,
                                by their low bits (normalize.c) */
    base_map norm_cache;    /* syscall number -> hash of its normal form */
    const graph_rule *rules;
    size_t nrules;
    uint32_t preempter;      /* sched.c: the thread switched in by the
                                current event's preemption, 0 none */
    uint32_t preempts_owed;  /* sched.c: threads with a preempt edge to give
                                (the lookup per event is skipped at 0) */
    bool have_match;         /* the send matched to the current recv */
    graph_pend match;
    /* normalize.c: the current event's attributes, split at its first
     * lookup (graph_attr); valid while attr_seq == ev_seq */
    uint64_t ev_seq, attr_seq;
    const db_event *attr_ev;
    const char *attr_p, *attr_end; /* its entries not measured yet */
    struct graph_attr {
        const char *p; /* "key=value", len bytes */
        size_t len;
    } *attrs;
    size_t nattrs, attrs_cap;
    /* edges.c: the current event's graph_msg_peer, valid while peer_seq
     * == ev_seq (and peer_ev is the event) */
    uint64_t peer_seq;
    const db_event *peer_ev;
    uint32_t peer_pid;
    bool peer_ok;
} graph_state;

/* edges.c */
int graph_edge(graph_state *g, int kind, uint64_t from_ev, uint32_t from, uint64_t to_ev, uint32_t to);
int graph_pend_keep(graph_state *g, base_map *m, uint64_t key, const db_event *ev, uint32_t node);
/* The connection rules (paper/000 part 2) by event type: each type a rule
 * of edges.c applies to, and the call that applies it (expanded only in
 * edges.c, where the rule_* functions are).  One list makes both the
 * switch of graph_connect_more and GRAPH_CONNECT_TYPES, the mask
 * graph_connect tests inline, so a rule added to the list is in both.  A
 * source event is raw (a waking, a block request). */
#define GRAPH_CONNECT_RULES(X)                                                                                  \
    X(DB_EV_MACH_MSG, rule_mach_msg(g, ev, node))                                                               \
    X(DB_EV_VOUCHER, rule_voucher(g, ev))                                                                       \
    X(DB_EV_WAKEUP, rule_wakeup(g, ev, node))                                                                   \
    X(DB_EV_TIMER_ARM, rule_timer(g, ev, node))                                                                 \
    X(DB_EV_TIMER_CANCEL, rule_timer(g, ev, node))                                                              \
    X(DB_EV_TIMER_CALLOUT, rule_timer(g, ev, node))                                                             \
    X(DB_EV_DISPATCH_ENQUEUE, rule_queue(g, &g->dispatch, DB_EDGE_DISPATCH, true, ev, node))                    \
    X(DB_EV_DISPATCH_INVOKE, rule_queue(g, &g->dispatch, DB_EDGE_DISPATCH, false, ev, node))                    \
    X(DB_EV_RUNLOOP_SUBMIT, rule_queue(g, &g->runloop, DB_EDGE_RUNLOOP, true, ev, node))                        \
    X(DB_EV_RUNLOOP_INVOKE, rule_queue(g, &g->runloop, DB_EDGE_RUNLOOP, false, ev, node))                       \
    X(DB_EV_FLAG_WRITE, rule_flag(g, ev, node))                                                                 \
    X(DB_EV_FLAG_READ, rule_flag(g, ev, node))                                                                  \
    X(DB_EV_RAW, rule_waking(g, ev, node) || rule_block(g, ev, node) ? -1 : 0)
/* The types of the list, told inline: the others -- syscalls, waits, most
 * source events -- would go through the call and its switch for nothing.
 * With user rules, every event goes to the call. */
#define GRAPH_CONNECT_BIT(type, call) | 1u << (type)
#define GRAPH_CONNECT_TYPES (0u GRAPH_CONNECT_RULES(GRAPH_CONNECT_BIT))
int graph_connect_more(graph_state *g, const db_event *ev, uint32_t node);
int graph_thread_waits_more(graph_state *g, graph_thread *t, const db_event *ev, uint32_t node);
/* paper/000 2.a, the thread side of a wakeup (edges.c).  A thread seen and
 * not waiting, whose event is no wait, only forgets any wakeup: that,
 * inline, for most events, without a call and its frame for each. */
static inline int graph_thread_waits(graph_state *g, graph_thread *t, const db_event *ev, uint32_t node)
{
    if (t->seen && !t->waiting && ev->type != DB_EV_WAIT) {
        t->woken = false;
        return 0;
    }
    return graph_thread_waits_more(g, t, ev, node);
}
static inline int graph_connect(graph_state *g, const db_event *ev, uint32_t node)
{
    bool none = ev->type >= 32 || !(GRAPH_CONNECT_TYPES >> ev->type & 1) ||
                (ev->type == DB_EV_RAW && g->ev_name != GRAPH_NAME_SCHED_WAKING && g->ev_name != GRAPH_NAME_BLOCK);
    return none && !g->nrules ? 0 : graph_connect_more(g, ev, node);
}
/* A message's receipt paired with its send (edges.c): the test inline, as
 * graph_thread_waits', for the events that are no receipt. */
void graph_ipc_match_more(graph_state *g, const db_event *ev);
static inline void graph_ipc_match(graph_state *g, const db_event *ev)
{
    g->have_match = false;
    if (ev->type == DB_EV_MACH_MSG && ev->phase == DB_PH_END)
        graph_ipc_match_more(g, ev);
}
int graph_msg_peer(graph_state *g, const db_event *ev, uint32_t *pid);
uint32_t graph_voucher_pid(graph_state *g, const graph_thread *t, const db_event *ev);
void graph_edges_free(graph_state *g);
/* build.c */
/* A thread's slot in `tids`: the idle task has pid 0 on every cpu, and
 * each cpu's idle is its own thread. */
/* Above every slot (a tid, or 1 << 32 | cpu): recent_slot before the
 * first thread is got, so that recent is not tested for NULL as well by
 * each lookup (two or three an event) */
#define GRAPH_SLOT_NONE UINT64_MAX
static inline uint64_t graph_thread_slot(uint32_t tid, uint16_t cpu)
{
    return tid == 0 && cpu != DB_CPU_NONE ? (1ULL << 32) | cpu : tid;
}
/* The thread of tid (on cpu), made if new; NULL when out of memory.  The
 * one got last is answered inline: an event asks for its own thread two
 * or three times. */
graph_thread *graph_thread_get_more(graph_state *g, uint64_t slot, uint32_t tid);
/* The entry of g->near for slot (build.c says how the table stays right):
 * a thread id, or a cpu's idle (1 << 32 | cpu) folded onto ids far from
 * the small ones.
 * Read inline too, after the one got last, without a call. */
static inline size_t graph_near_ix(uint64_t slot)
{
    return (size_t)((uint32_t)slot ^ (uint32_t)(slot >> 32) * 0x9e5u) % GRAPH_NEAR;
}
static inline graph_thread *graph_thread_get(graph_state *g, uint32_t tid, uint16_t cpu)
{
    uint64_t slot = graph_thread_slot(tid, cpu);
    if (g->recent_slot == slot)
        return g->recent;
    size_t i = graph_near_ix(slot);
    graph_thread *t = g->near[i];
    if (!t || g->near_slot[i] != slot)
        return graph_thread_get_more(g, slot, tid);
    g->recent = t;
    g->recent_slot = slot;
    return t;
}
/* The thread of a slot, NULL if it has had none: no thread is made. */
graph_thread *graph_thread_find_more(graph_state *g, uint64_t slot);
static inline graph_thread *graph_thread_find(graph_state *g, uint64_t slot)
{
    if (g->recent_slot == slot)
        return g->recent;
    size_t i = graph_near_ix(slot);
    return g->near_slot[i] == slot ? g->near[i] : graph_thread_find_more(g, slot);
}
/* The name of thread tid / process pid as the writer has it, zero-padded
 * into dst: 1 named, 0 not, -1 error (in err); c (NULL: none) keeps it
 * while the names are tracked (graph_feed_track_names). */
int graph_name_thread(graph_state *g, graph_name *c, uint32_t tid, char dst[DB_NAME_MAX], db_error *err);
int graph_name_proc(graph_state *g, graph_name *c, uint32_t pid, char dst[DB_NAME_MAX], db_error *err);
/* sched.c: running and runnable time of thread nodes.  event: every
 * event, before it is given a node; open / close: a thread node's. */
int graph_sched_event(graph_state *g, const db_event *ev);
bool graph_sched_preempted(const db_event *ev); /* a switch's state: R or ...+ */
int graph_sched_after(graph_state *g, const db_event *ev, uint32_t node);
void graph_sched_open(graph_thread *t, graph_open *o, const db_event *ev);
void graph_sched_close(graph_thread *t, graph_open *o);

/* normalize.c */
uint32_t graph_fnv1a(const void *p, size_t n);
/* The end of an event's "key=value" entry at p: its NUL, or end.  Eight
 * bytes a load (the lowest byte of the word that is zero, as the event
 * block encoder's entry_end finds it), not a call to memchr per entry:
 * entries are mostly shorter than sixteen bytes, and memchr's call and
 * setup cost more than the loads. */
static inline const char *graph_entry_end(const char *p, const char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; end - p >= 8; p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t z = (w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull; /* its lowest: the first NUL */
        if (z)
            return p + ((unsigned)__builtin_ctzll(z) >> 3);
    }
#endif
    while (p < end && *p)
        p++;
    return p;
}
/* db_event_attr and db_event_attr_u64 of the event graph_event is given,
 * each of its entries measured once (key: kl bytes, no '='); graph_attr
 * and graph_attr_u64 take a literal key */
bool graph_attr_more(graph_state *g, const db_event *ev, const char *key, size_t kl, const char **val, size_t *len);
static inline bool graph_attr_n(graph_state *g, const db_event *ev, const char *key, size_t kl, const char **val,
                                size_t *len)
{
    /* A new event's first entry, when it is the one, inline and without
     * measuring it into the table: a wait's reason (a Linux switch's
     * first entry) -- inline, the key's length and bytes are the
     * literal's, the compare a load or two, not a call to memcmp.  Later
     * lookups of the event measure from the start. */
    if (g->attr_ev != ev || g->attr_seq != g->ev_seq) {
        size_t room = ev->attrs ? ev->attrs_len : 0;
        if (room > kl && ev->attrs[kl] == '=' && memcmp(ev->attrs, key, kl) == 0) {
            *val = ev->attrs + kl + 1;
            *len = (size_t)(graph_entry_end(*val, ev->attrs + room) - *val);
            return true;
        }
    }
    return graph_attr_more(g, ev, key, kl, val, len);
}
/* inline as graph_attr_n, so that a literal key stays one */
static inline bool graph_attr_u64_n(graph_state *g, const db_event *ev, const char *key, size_t kl, uint64_t *out)
{
    const char *v;
    size_t n;
    return graph_attr_n(g, ev, key, kl, &v, &n) && db_attr_u64(v, n, out);
}
#define graph_attr(g, ev, key, val, len) graph_attr_n(g, ev, key, sizeof key - 1, val, len)
#define graph_attr_u64(g, ev, key, out) graph_attr_u64_n(g, ev, key, sizeof key - 1, out)
size_t graph_normalize(graph_state *g, const db_event *ev, char *buf, size_t len);
/* the node's normal form so far, with ev's (normalize.c); source events
 * and backtraces have none, told inline, without the call */
int graph_sig_add_more(graph_state *g, graph_open *o, const db_event *ev);
static inline int graph_sig_add(graph_state *g, graph_open *o, const db_event *ev)
{
    return ev->type == DB_EV_RAW || ev->type == DB_EV_BACKTRACE ? 0 : graph_sig_add_more(g, o, ev);
}
const db_sig *graph_sig_done(graph_open *o, uint32_t thread_key);
/* rules.c */
bool graph_rule_boundary(const graph_state *g, const db_event *ev);
bool graph_rule_ignores_wakeup(const graph_state *g, const db_event *ev);
int graph_rule_connect(graph_state *g, const db_event *ev, uint32_t node);

#endif
