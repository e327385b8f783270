/* query/query.h -- the query language: parse (the re2c lexer query_lex.re
 * and the lemon parser query_grammar.y) and execute against an archive.
 *
 *   query_parse   source text -> a script of statements (AST, query_ast.h)
 *   query_exec    run one statement, writing its result to an output
 *
 * Errors carry the position of the offending token (1-based line and
 * column in the source) so the cli can put a caret under it. */
#ifndef ARGUSQ_QUERY_H
#define ARGUSQ_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../db/db.h"

typedef struct query_error {
    int line, col;   /* 1-based; 0 when the error has no position */
    size_t offset;   /* byte offset of the offending token in the source */
    char msg[256];
} query_error;

/* A parsed script: one or more statements separated by ';'.  Owns all of
 * its memory; free with query_script_free. */
typedef struct query_script query_script;
typedef struct query_stmt query_stmt;

query_script *query_parse(const char *src, size_t len, query_error *err);
/* The statements of src up to its first error, which a script runs before
 * it reports the error (as sqlite3 and psql do): err->msg is "" when there
 * is none.  NULL only out of memory. */
query_script *query_parse_some(const char *src, size_t len, query_error *err);
size_t query_script_count(const query_script *s);
const query_stmt *query_script_stmt(const query_script *s, size_t i);
void query_script_free(query_script *s);

/* Where a statement starts in the source (for "script line N" messages). */
int query_stmt_line(const query_stmt *st);
/* `help` is the one statement that answers without an archive. */
bool query_stmt_needs_archive(const query_stmt *st);

typedef enum query_format {
    QUERY_FMT_TABLE = 0, /* aligned columns, readable units */
    QUERY_FMT_JSON,      /* one document per statement, one per line */
    QUERY_FMT_CSV,       /* a header row, raw values */
    QUERY_FMT_DOT,       /* Graphviz: statements that return nodes (query_view) */
    QUERY_FMT_SVG,       /* that DOT drawn by Graphviz's `dot -Tsvg` */
    QUERY_FMT_PERFETTO,  /* Chrome JSON trace events, for ui.perfetto.dev */
} query_format;

/* "table", "json", "csv", "dot", "svg", "perfetto" -> the format; false if
 * the name is none of these. */
bool query_format_from_name(const char *name, query_format *out);
const char *query_format_name(query_format f);
/* The words of the language for a shell's completion: keywords, fields,
 * aggregates, kinds of nodes and edges, each once.  Fills
 * words[0 .. min(n, cap)) with static strings; returns n (with cap too
 * small, a bound of it: call again with as many). */
size_t query_words_list(const char **words, size_t cap);

/* How a session opens another archive file for one statement (`match ...
 * in archive "PATH"`, `diagnose ... in archive "PATH"`): read-only, and
 * through whoever knows the files the process has open already (LMDB
 * allows one environment per file in a process: libargusq's registry).
 * open returns a handle for close and sets *db, or NULL with msg filled. */
typedef struct query_opener {
    void *(*open)(void *ctx, const char *path, db_archive **db, char *msg, size_t msglen);
    void (*close)(void *ctx, void *handle);
    void *ctx;
} query_opener;

/* Normal steps given from outside (argusq.fleet: every archive's
 * "normal_sample", pooled): `diagnose ... against traces` judges the
 * anomaly against them, not against the ones its archive holds
 * (query/normals.c).  A step's parts -- its critical path's ns per
 * (thread, state) -- are parts[first .. first + n).  Owned by whoever
 * fills it: query_pool_add copies, query_pool_free frees. */
typedef struct query_pool_part {
    char thread[DB_NAME_MAX];
    int state; /* query/query_int.h's QUERY_CP_* */
    uint64_t ns;
} query_pool_part;
typedef struct query_pool_step {
    char trace[256];   /* its trace's name */
    uint32_t archive;  /* its archive: archives[archive - 1] (0: the session's) */
    uint64_t trace_id; /* what tells its trace from the others' (a hash of archive and name) */
    uint32_t node;
    double score;      /* how like the anomaly: what ranks it */
    bool contained;
    uint64_t period;   /* of its critical path */
    bool timeout;      /* its wait ended by its own timer */
    char waker[DB_NAME_MAX]; /* "" none */
    size_t first, n;
} query_pool_step;
typedef struct query_pool {
    query_pool_step *steps;
    size_t nsteps, scap;
    query_pool_part *parts;
    size_t nparts, pcap;
    char **archives; /* malloc'd paths */
    size_t narchives;
} query_pool;
/* A step and its parts appended (copied); -1 out of memory.  A part of a
 * (thread, state) the step has already adds to it.  archive: the path of
 * the step's archive (NULL: the session's, or as step->archive says in
 * from, a pool the step comes from); sets the step's trace_id. */
int query_pool_add(query_pool *p, const query_pool_step *step, const query_pool_part *parts, size_t n,
                   const char *archive);
const char *query_pool_archive(const query_pool *p, const query_pool_step *s); /* NULL: the session's */
void query_pool_free(query_pool *p);
/* "running", ... -> QUERY_CP_*; -1 for no state of that name */
int query_pool_state(const char *name);

/* The session a statement runs in: the archive, the current trace (may be
 * changed by `use trace`), and where results go. */
typedef struct query_session {
    db_archive *archive;
    const char *archive_path;
    query_opener opener; /* open NULL: `in archive` is refused */
    char trace[256];   /* current trace; "" = the latest ingested */
    query_format format;
    FILE *out;
    /* the trace the statement being run read first (query_open_trace sets
     * it when it is empty; the caller empties it before a statement):
     * whose rows a statement's output holds, for libargusq's callers */
    char read_trace[256];
    /* the caller's Ctrl-C (NULL: none): once set, the statement's readers
     * fail at their next read (db_reader_interrupt), `rebuild graph` at
     * its next event, and query_exec fails the statement with
     * "interrupted" however it ended, unless it changed the archive */
    const volatile sig_atomic_t *interrupt;
    /* normal steps given (NULL: diagnose finds them in the archive) */
    const query_pool *pool;
    /* tables: without their header row; psql's \x, a block per row */
    bool no_headers, expanded;
    /* the rows of the tables the last statement printed (query_table_show),
     * -1 for one that printed none: the caller sets it -1 before each */
    long rows;
} query_session;

/* Compiles one `rule` statement into a graph rule (ingest --rules). */
struct graph_rule;
int query_rule_compile(const query_stmt *st, struct graph_rule *out, query_error *err);
/* A statement's source text, without its ';'. */
const char *query_stmt_text(const query_stmt *st, size_t *len);

/* The graph of the trace `name` built again with its rules (`rebuild
 * graph`): *nrules the rules applied, *info the new catalog entry.  Once
 * *interrupt is set (NULL: never) it stops at its next event, and the
 * trace keeps its old graph. */
int query_rebuild_trace(db_archive *a, const char *name, const volatile sig_atomic_t *interrupt, size_t *nrules,
                        db_trace_info *info, query_error *err);
/* The archive at path, of an earlier format, migrated in place: what was
 * recorded copied into this format, every graph rebuilt, the new file
 * renamed over the old (db/migrate.c).  0 also when another process
 * migrated it first; progress lines go to log (may be NULL). */
int query_migrate(const char *path, FILE *log, query_error *err);

/* Runs one statement.  Returns 0, or -1 with err filled (position set when
 * the error is about a token of the statement). */
int query_exec(query_session *s, const query_stmt *st, query_error *err);

/* s (n bytes) as a JSON string, quotes included (out.c) */
void query_json_str(FILE *f, const char *s, size_t n);

#endif
