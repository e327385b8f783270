/* cli/progress.h -- a progress bar on stderr for long ingests and
 * recordings, drawn only when stderr is a terminal (nothing at all
 * otherwise, so logs and pipes stay clean):
 *
 *   ingest [##########..........]  52%  61.3/118.0 MB  412k ev/s  0:03 left
 *
 * With no known total (a recording) it shows what has been done so far:
 *
 *   record  1.2M events  412k ev/s  61.3 MB  0:05
 *
 * Usage: progress_begin, then progress_update as work is done (cheap: it
 * redraws at most ten times a second), progress_phase for a step without
 * a measure ("building the graph"), progress_end to erase the line. */
#ifndef ARGUSQ_CLI_PROGRESS_H
#define ARGUSQ_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct progress {
    bool on;            /* stderr is a terminal */
    bool drawn;         /* a line is on the screen */
    char what[24];      /* "ingest", "record" */
    uint64_t total;     /* bytes expected; 0 unknown */
    uint64_t bytes, events;
    double t0, last;    /* monotonic seconds: start, last redraw */
    unsigned calls;
} progress;

/* Starts a bar for `what` (on only if stderr is a terminal). */
void progress_begin(progress *p, const char *what, uint64_t total);
void progress_set_total(progress *p, uint64_t total);
/* Work done so far (absolute values).  Redraws at most every 100 ms. */
void progress_update(progress *p, uint64_t bytes, uint64_t events);
/* One more event; the cheap call for a per-event hook. */
void progress_event(progress *p);
/* A step with no measure: "ingest: building the graph... 1.2M events". */
void progress_phase(progress *p, const char *phase);
/* Erases the line. */
void progress_end(progress *p);

#endif
