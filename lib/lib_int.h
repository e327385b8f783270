/* lib/lib_int.h -- what the files of lib/ share (not a public header: the
 * public one is include/argusq.h).  lib/ is libargusq's thin layer over
 * db/, ingest/, graph/ and query/: it turns their errors into
 * argusq_error, owns the process-wide registry of open archives
 * (registry.c), and holds the orchestration of an ingest (ingest.c) that
 * the argusq command used to do itself. */
#ifndef ARGUSQ_LIB_INT_H
#define ARGUSQ_LIB_INT_H

#include <stdbool.h>

#include "db/db.h"
#include "include/argusq.h"
#include "query/query.h"

/* One file open in this process (registry.c): its database environment,
 * held by `owner`, and how many argusq_archive handles use it. */
typedef struct lib_shared lib_shared;

struct argusq_archive {
    db_archive *db;     /* this handle's own (db_share of the shared owner) */
    lib_shared *shared; /* the file's entry in the registry */
    char *path;         /* as the caller named it */
};

/* registry.c: a handle on the archive at path, sharing the environment of
 * the file if this process has it open already; NULL with err filled. */
argusq_archive *lib_registry_open(const char *path, unsigned flags, argusq_error *err);
void lib_registry_close(argusq_archive *a);

/* archive.c: errors.  lib_clear empties err (NULL: nothing); lib_fail
 * sets its code and message and returns -1. */
void lib_clear(argusq_error *err);
int lib_fail(argusq_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A query error about src (the text the caller passed, or a rules file's):
 * its position, and the line holding it when src is not the caller's
 * (where: its name for err->source). */
void lib_query_error(argusq_error *err, const query_error *e, const char *where, const char *src, size_t len);

/* archive.c: the query format of a public one (enum argusq_format): 0,
 * or -1 when it names none */
int lib_format(int format, query_format *out);

#endif
