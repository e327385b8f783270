/* argusq.h -- libargusq, the argusq trace database as a C library: open an
 * archive, run statements of the query language, ingest trace files.  The
 * argusq command is a client of it; the Python bindings (python/argusq)
 * call it through ctypes.  man 3 argusq is the reference.
 *
 * Stability: this is the only public header, and every name in it begins
 * with argusq_ (or ARGUSQ_).  Handles are opaque.  The structs a caller
 * fills or receives begin with a `size` member that the caller sets to
 * sizeof the struct it was compiled with: a newer library reads and writes
 * only that much, and new members are only ever added at the end, so a
 * program built against this header keeps working with any later
 * libargusq.so.0.  argusq_error alone has a fixed size (with room to grow).
 *
 * Ownership: what the library allocates for the caller (output buffers) is
 * freed with argusq_free; strings the caller passes in are only read during
 * the call; handles are freed by their close/free function.
 *
 * Threads: an argusq_archive may be used by many threads at once (each
 * call runs in its own read snapshot), and opening the same file twice in
 * a process gives two handles on one shared database environment.  An
 * argusq_session is for one thread at a time.  Callbacks run in the thread
 * that made the call. */
#ifndef ARGUSQ_H
#define ARGUSQ_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ARGUSQ_API __attribute__((visibility("default")))
#else
#define ARGUSQ_API
#endif

/* The version of the headers; argusq_version() is the library's. */
#define ARGUSQ_VERSION "0.1.0"
ARGUSQ_API const char *argusq_version(void);

/* ---- errors ----
 * Every call that can fail returns -1 (or NULL) and fills an argusq_error
 * the caller provides (it may pass NULL to ignore it).  code says what
 * kind of failure it was; message says what is wrong, without a trailing
 * newline.  For an error about a token of a statement (a parse error, an
 * unknown field, a node that does not exist), line and col locate the
 * token in the statement text (1-based, col in bytes) and offset is its
 * byte offset there: enough to put a caret under it. */
enum argusq_code {
    ARGUSQ_OK = 0,
    ARGUSQ_ERR_STATEMENT = 1, /* a statement did not parse or failed to run */
    ARGUSQ_ERR_INGEST = 2,    /* a trace file was refused, or its ingest failed: nothing of it was kept */
    ARGUSQ_ERR_USAGE = 3,     /* a bad argument: a NULL handle, an unknown format, a bad label */
    ARGUSQ_ERR_IO = 4,        /* a file could not be opened or read */
    ARGUSQ_ERR_ARCHIVE = 5,   /* the archive could not be opened or written */
    ARGUSQ_ERR_NOMEM = 6,     /* out of memory */
    ARGUSQ_ERR_STOPPED = 7,   /* a callback of the caller's asked to stop */
    ARGUSQ_ERR_INTERRUPTED = 8, /* the caller's interrupt flag was set (argusq: Ctrl-C): a statement
                                   stopped (its output cut short, a rebuilt graph not kept), an
                                   ingest kept nothing of its trace */
};

typedef struct argusq_error {
    int code;           /* enum argusq_code */
    int line, col;      /* the offending token's position (1-based); 0: none */
    size_t offset;      /* its byte offset in the text */
    /* a script's failing statement: its index (from 0), how many the
     * script holds, and the line it begins on; all 0 when the script did
     * not parse or the error is not a statement's */
    size_t stmt_index, stmt_count;
    int stmt_line;
    /* what the position is in, when it is not the text the caller passed:
     * a rules file (argusq_ingest's rules), "FILE:N (rule record)" (a
     * dump's rule); and the line of that text holding the position, for
     * the caret.  "" otherwise. */
    char source[4096];
    char text[4096];
    char message[5120];
    char reserved[512]; /* room for later members; the size never changes */
} argusq_error;

/* ---- archives ---- */
typedef struct argusq_archive argusq_archive;

#define ARGUSQ_OPEN_READ 0x0u   /* read-only: statements that change a trace are refused */
#define ARGUSQ_OPEN_WRITE 0x1u  /* read-write; an archive of an earlier format is migrated */
#define ARGUSQ_OPEN_CREATE 0x2u /* with WRITE: a missing archive is created */
#define ARGUSQ_OPEN_LOG 0x4u    /* a migration's progress lines on stderr (as argusq prints them) */

/* Opens the archive file at path.  A file this process has open already
 * (the same device and inode, whatever the path) is not opened again: the
 * new handle shares its database environment, which LMDB requires.  A
 * file open read-only in this process cannot be opened for writing until
 * that handle is closed.  NULL on error (code ARCHIVE). */
ARGUSQ_API argusq_archive *argusq_open(const char *path, unsigned flags, argusq_error *err);
/* Closes a handle, once no call and no session uses it any more (NULL:
 * nothing).  The file's environment is closed with its last handle. */
ARGUSQ_API void argusq_close(argusq_archive *a);
ARGUSQ_API const char *argusq_path(const argusq_archive *a); /* as given to argusq_open */

/* ---- statements ----
 * Output formats, as argusq's --format: JSON is one document per
 * statement, one per line (docs/QUERY.md gives their shapes). */
enum argusq_format {
    ARGUSQ_FORMAT_JSON = 0,
    ARGUSQ_FORMAT_TABLE = 1,
    ARGUSQ_FORMAT_CSV = 2,
    ARGUSQ_FORMAT_DOT = 3,
    ARGUSQ_FORMAT_SVG = 4,     /* the DOT drawn by Graphviz's dot -Tsvg */
    ARGUSQ_FORMAT_PERFETTO = 5,
};
/* "json", "table", "csv", "dot", "svg", "perfetto" -> the format; -1 */
ARGUSQ_API int argusq_format_from_name(const char *name);

/* interrupt (here and in argusq_ingest_opts): a flag the caller's
 * signal handler sets (argusq's, for Ctrl-C); NULL: none.  Once *interrupt
 * is non-zero, a running statement stops at its next read of the archive
 * and the run ends with ARGUSQ_ERR_INTERRUPTED ("interrupted"); no further
 * statement starts.  The library only reads it: the caller clears it
 * before the next run. */
typedef struct argusq_query_opts {
    size_t size;       /* sizeof (argusq_query_opts) */
    int format;        /* enum argusq_format (0: JSON) */
    const char *trace; /* the current trace (argusq --trace); NULL: the latest ingested */
    const volatile sig_atomic_t *interrupt;
} argusq_query_opts;

/* Where output goes, for the streaming calls: write gets the bytes as
 * statements produce them (in pieces of up to 64 KiB) and returns 0, or
 * non-zero to stop (the run then ends with ARGUSQ_ERR_STOPPED; the
 * statement being run finishes without writing more).  statement, when
 * set, is called after each statement's output: its index in the script
 * and the trace it read ("" for a statement that read none: traces,
 * help, use trace), which is the trace its rows come from. */
typedef struct argusq_output {
    size_t size; /* sizeof (argusq_output) */
    int (*write)(void *ctx, const char *buf, size_t len);
    void (*statement)(void *ctx, size_t index, const char *trace);
    void *ctx;
} argusq_output;

/* A session: the state a run of statements keeps from one to the next,
 * as argusq's REPL does (`use trace "NAME"` changes its current trace).
 * a may be NULL for a session that only answers `help`.  One thread at a
 * time; a session per thread on a shared archive. */
typedef struct argusq_session argusq_session;
ARGUSQ_API argusq_session *argusq_session_new(argusq_archive *a, const argusq_query_opts *opts, argusq_error *err);
ARGUSQ_API void argusq_session_free(argusq_session *s);
ARGUSQ_API const char *argusq_session_trace(const argusq_session *s); /* its current trace; "" the latest */
/* The output format of the statements run after it (enum argusq_format):
 * a REPL's `.format`.  0, or -1 with err filled (an unknown format). */
ARGUSQ_API int argusq_session_set_format(argusq_session *s, int format, argusq_error *err);
/* How tables (table and csv formats) are shown from now on: a REPL's
 * `.headers off` and psql's `\x`.  0, or -1 with err filled. */
enum argusq_display {
    ARGUSQ_DISPLAY_NO_HEADERS = 1, /* no header row */
    ARGUSQ_DISPLAY_EXPANDED = 2    /* table: a block per row, a line per column */
};
ARGUSQ_API int argusq_session_set_display(argusq_session *s, unsigned flags, argusq_error *err);
/* The rows of the tables the last statement run printed (table and csv
 * formats), -1 when it printed none (JSON, prose, a picture): a REPL's
 * "(N rows)". */
ARGUSQ_API long argusq_session_rows(const argusq_session *s);
/* The words of the query language, for a shell's completion: its
 * keywords, the fields of nodes, events, edges and traces, the aggregates
 * and the kinds of nodes and edges, each once.  Fills words[0 .. cap)
 * with static strings (never freed) and returns how many there are: more
 * than cap means the list was cut (call again with room for as many). */
ARGUSQ_API size_t argusq_language_words(const char **words, size_t cap);

/* Normal steps from elsewhere: `diagnose ... against traces [where E]` in
 * this session judges the anomaly against steps[0 .. n) -- pooled from
 * the "normal_sample" every archive of a fleet answered with (argusq.fleet)
 * -- instead of the normal steps its archive holds, choosing among them as
 * it chooses among its own (the most similar first, docs/QUERY.md).  The
 * steps are copied; n 0 goes back to the archive's own.  A part is a
 * critical path's ns of one thread in one state ("running", "runnable",
 * "blocked", "timer", "io", "interrupt"); trace and archive (NULL: the
 * session's) tell the step's trace from the others'.  0, or -1 with err
 * filled (an unknown state, a NULL name). */
typedef struct argusq_normal_part {
    const char *thread;
    const char *state;
    uint64_t ns;
} argusq_normal_part;
typedef struct argusq_normal_step {
    const char *trace;
    const char *archive;
    uint32_t node;
    double score;  /* how like the anomaly (its "score") */
    int contained; /* one normal form holds the other */
    uint64_t period;
    int timeout;        /* its wait ended by its own timer */
    const char *waker;  /* NULL or "": none */
    const argusq_normal_part *parts;
    size_t nparts;
} argusq_normal_step;
ARGUSQ_API int argusq_session_normals(argusq_session *s, const argusq_normal_step *steps, size_t n,
                                      argusq_error *err);

/* Runs the script src (len bytes: statements separated by ';'), stopping
 * at the first that fails.  Returns how many statements ran (0: src holds
 * none), or -1 with err filled; the output of the statements that ran
 * before a failure has been written.  The forms differ only in where the
 * output goes:
 *   _file:   into out (argusq passes stdout), flushed after each statement;
 *   _stream: to o->write as it is produced (nothing is held whole);
 *   _query:  into one buffer, *out (NUL-terminated, *outlen bytes without
 *            the NUL), set also when the run fails; free it with argusq_free. */
ARGUSQ_API long argusq_session_run_file(argusq_session *s, const char *src, size_t len, FILE *out,
                                        argusq_error *err);
ARGUSQ_API long argusq_session_stream(argusq_session *s, const char *src, size_t len,
                                      const argusq_output *o, argusq_error *err);
ARGUSQ_API long argusq_session_query(argusq_session *s, const char *src, size_t len, char **out,
                                     size_t *outlen, argusq_error *err);

/* One-shot forms: a session of its own for src (a NUL-terminated script). */
ARGUSQ_API long argusq_query(argusq_archive *a, const char *src, const argusq_query_opts *opts, char **out,
                             size_t *outlen, argusq_error *err);
ARGUSQ_API long argusq_query_stream(argusq_archive *a, const char *src, const argusq_query_opts *opts,
                                    const argusq_output *o, argusq_error *err);

ARGUSQ_API void argusq_free(void *p);

/* ---- ingest ---- */
#define ARGUSQ_LABEL_KEY_MAX 64

/* A label KEY = VALUE as argusq_ingest takes it: 0, or -1 (USAGE) saying
 * what is wrong (a key is a letter or '_', then letters, digits, '_', '.'). */
ARGUSQ_API int argusq_label_check(const char *key, const char *value, argusq_error *err);

typedef struct argusq_ingest_opts {
    size_t size;      /* sizeof (argusq_ingest_opts) */
    const char *name; /* the trace's name; NULL: a dump's own, else the file's base name */
    const char *rules; /* a file of `rule ...;` statements, kept with the trace; NULL: none */
    const char *arch;  /* the machine a text trace was recorded on ("x86_64"); NULL: unknown */
    const char *const *labels; /* nlabels "KEY=VALUE" strings: the trace's labels */
    size_t nlabels;
    /* progress, now and then (at most every 100 ms while the file is
     * read, and at each later phase): bytes of the file read of total (0:
     * unknown), events so far; phase is NULL while reading, then
     * "building the graph", "writing the archive" */
    void (*progress)(void *ctx, uint64_t bytes, uint64_t total, uint64_t events, const char *phase);
    /* what the reader mended rather than refused (a last line cut short,
     * events put back in time order, syscalls left unnamed, a perf.data
     * read without the header perf could not print): one message each,
     * after the trace was committed */
    void (*warning)(void *ctx, const char *message);
    void *ctx;
    int threads; /* 1: the file is read in the calling thread, which builds
                    the graph; 0: as $ARGUSQ_THREADS says (default: read
                    in a second thread).  The archive is written in a
                    thread of its own either way, unless
                    $ARGUSQ_WRITER_THREAD=0 */
    /* what the file is called in the catalog's source, the default name
     * and messages, when path is a copy (argusq: "-", its standard input
     * spooled to a temporary file); NULL: path */
    const char *source;
    /* as argusq_query_opts's: once it is set, the ingest stops (within
     * 4096 events, or at its next phase), its trace is deleted from the
     * archive as for any failed ingest, and it returns -1 with
     * ARGUSQ_ERR_INTERRUPTED */
    const volatile sig_atomic_t *interrupt;
} argusq_ingest_opts;

/* What an ingest made: the trace's catalog entry and what the reader
 * mended. */
typedef struct argusq_ingest_info {
    size_t size; /* set by the caller: sizeof (argusq_ingest_info) */
    char trace[256];
    char format[32]; /* "ftrace-trace", "trace-cmd-report", "argus", "trace-dat", ... */
    uint64_t events, threads, processes, nodes, edges, skipped;
    uint64_t reordered, late, truncated_line, unnamed;
    uint64_t first_ts, last_ts; /* nanoseconds */
    double seconds;             /* from the archive's writer lock to the commit */
    char recorder[128];         /* what recorded it, as the file says ("lttng-modules 2.8.0", "perf 6.1"); "" */
    /* LTTng-UST (userspace) events read (a CTF trace, an LTTng session),
     * and how many of them were skipped (in skipped) for want of a vtid
     * context saying their thread */
    uint64_t userspace, userspace_skipped;
} argusq_ingest_info;

/* Ingests the trace file at path (its format found from its content) into
 * a (opened with ARGUSQ_OPEN_WRITE) as a new trace.  A second ingest
 * into the same archive waits for the first.  opts and info may be NULL.
 * 0, or -1 (nothing of the trace is kept). */
ARGUSQ_API int argusq_ingest(argusq_archive *a, const char *path, const argusq_ingest_opts *opts,
                             argusq_ingest_info *info, argusq_error *err);
/* The same into the archive at archive_path (created if missing), opened
 * for this ingest alone once the trace file was found readable: a missing
 * trace file leaves no new archive behind.  flags: ARGUSQ_OPEN_LOG. */
ARGUSQ_API int argusq_ingest_into(const char *archive_path, unsigned flags, const char *path,
                                  const argusq_ingest_opts *opts, argusq_ingest_info *info, argusq_error *err);

/* ---- dump ---- */
typedef struct argusq_dump_info {
    size_t size;    /* set by the caller: sizeof (argusq_dump_info) */
    char trace[256]; /* the trace dumped */
    uint64_t events, declarations, labels, rules, symbols;
} argusq_dump_info;

/* Writes trace `trace` of a (NULL: the latest ingested) to the file at
 * path as an Argus trace with argusq's dump records (docs/ARGUS-DUMP.md),
 * which argusq_ingest reads back into the same events, nodes and edges
 * (a trace taken to another machine's archive).  The file is written
 * under a temporary name beside path and renamed over it once whole and
 * synced, so a failure leaves the file that was there; path "-" is
 * standard output.  info may be NULL.  0, or -1: USAGE (no
 * such trace), IO (the file), ARCHIVE. */
ARGUSQ_API int argusq_dump(argusq_archive *a, const char *trace, const char *path, argusq_dump_info *info,
                           argusq_error *err);

#ifdef __cplusplus
}
#endif

#endif
