/* graph/graph.h -- the event graph (paper/000 "Graph Computing Algorithm").
 *
 * graph_build reads the events a db_writer has stored, in time order, and
 * writes the graph into the same transaction:
 *   part 1, nodes: each event is given to a node by the boundary rules
 *           (interrupt isolation 1.a, wait 1.b, callouts 1.c, ...);
 *   part 2, edges: connection events are paired (wakeup, weak, timer,
 *           dispatch, ...) and an edge joins the nodes of the two events.
 * It is one streaming pass: memory holds one open node per thread and per
 * interrupted CPU, and the pending half of each connection, never the trace. */
#ifndef ARGUSQ_GRAPH_H
#define ARGUSQ_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/base.h"
#include "../db/db.h"

typedef struct graph_stats {
    uint64_t nodes, edges;
} graph_stats;

/* ---- user-defined rules (paper/000 §User Interactions) ----
 * Users inject knowledge without recompiling: extra boundary events,
 * extra connections, and wakeups that are not causal.  The query language
 * parses rules (`rule boundary ...`) into these structures. */
typedef enum graph_rule_kind {
    GRAPH_RULE_BOUNDARY,      /* an event matching `a` begins a new node */
    GRAPH_RULE_CONNECT,       /* edge (kind user) from the latest `a` to each
                                 later `b` whose b_key equals a's a_key */
    GRAPH_RULE_IGNORE_WAKEUP  /* wakeups matching `a` join nothing */
} graph_rule_kind;

#define GRAPH_MATCH_MAX 4
#define GRAPH_KEY_MAX 32
#define GRAPH_VAL_MAX 96

/* An event pattern: its type (or source event name), optional phase, and
 * attributes that must equal given values.  A key is an attribute name or
 * one of the fields tid, pid, target (the event's object), event. */
typedef struct graph_match {
    int type;                 /* db_evtype, or -1 to match `event` by name */
    char event[GRAPH_KEY_MAX];
    int phase;                /* db_phase, or -1 for any */
    int nattrs;
    struct {
        char key[GRAPH_KEY_MAX];
        char val[GRAPH_VAL_MAX];
    } attrs[GRAPH_MATCH_MAX];
} graph_match;

typedef struct graph_rule {
    graph_rule_kind kind;
    graph_match a, b;
    char a_key[GRAPH_KEY_MAX], b_key[GRAPH_KEY_MAX];
} graph_rule;

bool graph_match_event(const graph_match *m, const db_event *ev);
/* The value of key on ev as text, for matching and for connect keys. */
bool graph_event_key(const db_event *ev, const char *key, char *buf, size_t len);

/* The graph of a stored trace, in one pass over its events in time order
 * (ingest of an out-of-order file, `rebuild graph`). */
int graph_build(db_writer *w, const graph_rule *rules, size_t nrules, graph_stats *st, db_error *err);

/* The same pass fed event by event while a time-ordered trace is read:
 * graph_event gives each event its node before the event is stored, so
 * ingest writes every event once.  Events must come in time order (ts, then
 * id); the caller checks and falls back to graph_build when they do not.
 * graph_end closes the open nodes and frees the builder; graph_abort only
 * frees it.  rules must outlive the builder. */
typedef struct graph_state graph_builder;
graph_builder *graph_begin(db_writer *w, const graph_rule *rules, size_t nrules, db_error *err);
int graph_event(graph_builder *g, const db_event *ev, uint32_t *node);
int graph_end(graph_builder *g, graph_stats *st);
void graph_abort(graph_builder *g);

/* Events into the archive with their nodes (feed.c): the streaming build
 * while they come in time order, graph_build at the end once they do not.
 * feed_event assigns ev->id and ev->node and writes the event;
 * feed_end finishes the graph (graph_end or graph_build).  Errors in err. */
typedef struct graph_feed {
    db_writer *w;
    const graph_rule *rules;
    size_t nrules;
    graph_builder *g; /* NULL once the events left time order */
    bool rebuild;     /* nodes were written by the abandoned stream build */
    uint64_t last_ts;
    uint64_t next_id; /* the id the writer gives the next event, 0 = not yet asked */
    db_error *err;
} graph_feed;
int graph_feed_begin(graph_feed *f, db_writer *w, const graph_rule *rules, size_t nrules, db_error *err);
int graph_feed_event(graph_feed *f, db_event *ev);
int graph_feed_end(graph_feed *f, graph_stats *st);
void graph_feed_abort(graph_feed *f);
/* A caller that tells the graph of every naming of a thread or process
 * (db_writer_thread, db_writer_proc) with graph_feed_named, just before
 * or after it (no event comes in between), may say so once, after
 * graph_feed_begin: the graph then keeps the names it read until the
 * next naming instead of asking the writer for them at every node and
 * wakeup.  A rebuild names nothing and says so at once. */
void graph_feed_track_names(graph_feed *f);
void graph_feed_named(graph_feed *f);

/* ---- node comparison (paper/004), normalize.c ---- */
/* The key of the signature index: a thread name and a node kind (role). */
uint32_t graph_thread_key(const char *thread, int kind);
/* |A and B| / |A or B| of two sorted signatures; *contained: one holds the other. */
double graph_similarity(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb, bool *contained);
/* The hashes of syscall nr's two normal forms on machine a: by number
 * ("syscall:202", a trace whose machine is not known) and by name
 * ("syscall:futex"); false if a has no syscall of that number. */
bool graph_syscall_forms(const base_arch *a, uint64_t nr, uint32_t *by_number, uint32_t *by_name);

#endif
