/* graph/feed.c -- a trace's events into the archive as they come, each
 * given its node on the way (graph_event) so that it is written once.
 *
 * Used by ingest (events from a file) and by `rebuild graph` (events from
 * the trace's old copy, db_writer_scan_source).  The streaming graph needs
 * events in time order; the first event that goes back in time ends it:
 * what it wrote is cleared at the end and the graph is built again from
 * the stored events in time order (graph_build), as for any trace stored
 * out of order. */
#include "graph_int.h"

int graph_feed_begin(graph_feed *f, db_writer *w, const graph_rule *rules, size_t nrules, db_error *err)
{
    *f = (graph_feed){.w = w, .rules = rules, .nrules = nrules, .err = err};
    f->g = graph_begin(w, rules, nrules, err);
    return f->g ? 0 : -1;
}

int graph_feed_event(graph_feed *f, db_event *ev)
{
    if (f->g && ev->ts < f->last_ts) { /* out of time order: built at the end */
        graph_abort(f->g);
        f->g = NULL;
        f->rebuild = true;
    }
    ev->node = 0;
    if (f->g) {
        f->last_ts = ev->ts;
        if (!f->next_id)
            f->next_id = db_writer_next_event_id(f->w);
        ev->id = f->next_id;
        if (graph_event(f->g, ev, &ev->node))
            return -1;
    }
    /* The writer numbers the events it is given one after another
     * (db_evfront_add), and this feed gives it all of them, so the next
     * id is the one it gave this event plus one: asked of the writer once,
     * not for each event, whose call tested which thread asks (front:
     * a pthread_self). */
    if (db_writer_event(f->w, ev, f->err))
        return -1;
    f->next_id = ev->id + 1;
    return 0;
}

int graph_feed_end(graph_feed *f, graph_stats *st)
{
    if (f->g) {
        graph_builder *g = f->g;
        f->g = NULL;
        return graph_end(g, st);
    }
    return (f->rebuild && db_writer_clear_graph(f->w, f->err)) ||
                   graph_build(f->w, f->rules, f->nrules, st, f->err)
               ? -1
               : 0;
}

void graph_feed_track_names(graph_feed *f)
{
    if (f->g && !f->g->names_gen)
        f->g->names_gen = 1;
}

/* Every name read before is stale.  A graph_build at the end (events out
 * of time order) does not track names, and needs no telling. */
void graph_feed_named(graph_feed *f)
{
    if (f->g && f->g->names_gen)
        f->g->names_gen++;
}

void graph_feed_abort(graph_feed *f)
{
    graph_abort(f->g);
    f->g = NULL;
}
