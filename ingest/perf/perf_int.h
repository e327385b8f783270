/* ingest/perf/perf_int.h -- perf's traces (internal): `perf script` text
 * and perf.data, which is read through `perf script` (perf.c).  Their
 * tracepoints' text is the kernel's print format, which the ftrace
 * mapping reads (ingest/ftrace/ftrace_map_int.h). */
#ifndef ARGUSQ_INGEST_PERF_INT_H
#define ARGUSQ_INGEST_PERF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/ftrace/ftrace_map_int.h"

/* perf.data's magic (perf's header, version 2) */
#define INGEST_PERF_MAGIC "PERFILE2"

/* One line of `perf script` with its default fields for tracepoints:
 *   COMM [PID/]TID [CPU] SECONDS.FRACTION: SYSTEM:EVENT: FIELDS
 * (comm may hold blanks; [CPU] is there for system-wide recordings).
 * Fills out (comm, tid, tgid, cpu, ts; name/name_len is the event
 * without its system, fields the rest of the line) without writing into
 * line.  strict: only tracepoint events (SYSTEM:EVENT) count, as
 * detection wants; otherwise any event name ("cycles").  Returns true
 * when the line is one. */
bool ingest_perf_lex_line(const char *line, ftrace_line *out, bool strict);

/* Reads the remaining lines of lb (`perf script` text) into sink. */
int ingest_perf_read(ingest_lines *lb, const ingest_sink *sink, const ingest_opts *opts, ingest_stats *st,
                     char *err, size_t errlen);

/* Reads perf.data at path by running `perf script` on it (ARGUSQ_PERF, or
 * perf on PATH, or Debian's versioned /usr/bin/perf_X.Y).  Without perf,
 * a message saying to install it. */
int ingest_perf_data_read(const char *path, const ingest_sink *sink, const ingest_opts *opts, ingest_stats *st,
                          char *err, size_t errlen);

#endif
