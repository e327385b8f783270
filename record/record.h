/* record/record.h -- `argusq record`: a system-wide kernel trace of a
 * command, written as a trace.dat that `argusq ingest` reads (paper/003
 * §Event Tracing, on Linux).
 *
 * Sets up tracefs with libtracefs (the events the ftrace mapping uses,
 * trace clock "mono", record-tgid, an overwriting ring buffer of max_mb
 * MiB), runs argv while tracing system-wide, then saves the ring buffers
 * as a trace.dat with libtracecmd and restores every tracing setting it
 * changed, on success, error and SIGINT/SIGTERM alike. */
#ifndef ARGUSQ_RECORD_H
#define ARGUSQ_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RECORD_DEFAULT_MB 64u

typedef struct record_opts {
    const char *output;       /* the trace.dat to write */
    unsigned max_mb;          /* ring buffer, all CPUs together; 0: the default */
    const char *events;       /* "sys:event,..." ("default" = the default set); NULL: default */
    const char *const *watch; /* global variables of argv[0] to watch (--watch) */
    size_t nwatch;
    char *const *argv;        /* CMD ARGS..., NULL-terminated */
    FILE *log;                /* progress and summary lines, or NULL */
    /* called about five times a second while CMD runs, with what the
     * kernel's buffers hold so far (bytes, events), and once with
     * UINT64_MAX, UINT64_MAX when CMD has ended; may be NULL */
    void (*progress)(void *ctx, uint64_t bytes, uint64_t events);
    void *progress_ctx;
} record_opts;

typedef struct record_stats {
    int cmd_status;     /* wait status of CMD */
    int cpus;
    unsigned long long data_bytes; /* ring buffer pages saved */
    unsigned long long overrun;    /* oldest events the full ring buffer overwrote */
    unsigned long long file_bytes; /* size of the trace.dat */
} record_stats;

/* The default event list, "system:event,..." */
const char *record_default_events(void);

/* Returns 0 (the trace was written), -1 (err: what failed), or -2 (err:
 * why this machine cannot trace: not root, no tracefs). */
int record_run(const record_opts *o, record_stats *st, char *err, size_t errlen);

#endif
