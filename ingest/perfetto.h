/* ingest/perfetto.h -- the Perfetto reader's entry points (not public):
 * perfetto.c streams the packets, perfetto_map.c turns each ftrace event
 * of a packet into the canonical pairs of the ftrace mapping
 * (ingest/ftrace/ftrace_map_int.h). */
#ifndef ARGUSQ_INGEST_PERFETTO_H
#define ARGUSQ_INGEST_PERFETTO_H

#include <stdbool.h>
#include <stddef.h>

#include "ingest.h"

/* Do the first len bytes of a file look like a Perfetto trace (a Trace
 * message: field 1 packets whose own fields parse), plain or gzip'd? */
bool ingest_perfetto_sniff(const char *buf, size_t len);

/* Reads the Perfetto trace at path (gzip'd or not) into sink.  Errors:
 * "PATH: byte N: message" (N: the offset of the packet, in the
 * uncompressed stream).  opts->arch: the machine, when the file has no
 * system_info.  Returns 0 or -1. */
int ingest_perfetto_read(const char *path, const ingest_sink *sink, const ingest_opts *opts, ingest_stats *st,
                         char *err, size_t errlen);
/* The same over size bytes in memory (named path in messages): the fuzz
 * harness and the unit tests. */
int ingest_perfetto_read_mem(const char *path, const void *data, size_t size, const ingest_sink *sink,
                             ingest_stats *st, char *err, size_t errlen);

#endif
