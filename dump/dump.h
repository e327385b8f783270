/* dump/dump.h -- `argusq dump`: a committed trace written out as an Argus
 * trace with argusq's dump extensions (docs/ARGUS-DUMP.md): its labels,
 * user rules, symbols, threads and processes (with their renames), and
 * every event with all its fields and attributes, so that `argusq ingest`
 * of the file gives the same events, nodes and edges.  The reading side
 * (the dump's header, its records) is the Argus reader's: ingest/ingest.h. */
#ifndef ARGUSQ_DUMP_H
#define ARGUSQ_DUMP_H

#include <stdint.h>
#include <stdio.h>

#include "db/db.h"

typedef struct dump_stats {
    uint64_t events, declarations, labels, rules, symbols;
} dump_stats;

/* Writes trace `trace` of a to out (which the caller opens and closes).
 * generator: "argusq 0.1.0", for the file's comment.  Returns 0 or -1. */
int dump_trace(db_archive *a, const char *trace, FILE *out, const char *generator, dump_stats *st, db_error *de);

#endif
