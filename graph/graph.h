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

#include <stdint.h>

#include "../db/db.h"

typedef struct graph_stats {
    uint64_t nodes, edges;
} graph_stats;

int graph_build(db_writer *w, graph_stats *st, db_error *err);

#endif
