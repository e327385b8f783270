/* ingest/ingest.h -- trace readers (sources, in babeltrace's words).
 *
 * A reader streams a trace file line by line and hands every event,
 * process and thread it finds to a sink; it never holds the whole trace.
 * The sink (lib/ingest.c, feeding the graph and a db_writer) owns storage.
 *
 *   ingest_detect   guess the format from the first bytes of the file
 *   ingest_file     read a whole file into a sink
 *
 * Errors name the file and line: "trace.txt:812: bad timestamp". */
#ifndef ARGUSQ_INGEST_H
#define ARGUSQ_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../db/db.h"

typedef enum ingest_format {
    INGEST_UNKNOWN = 0,
    INGEST_FTRACE_TRACE,      /* text of /sys/kernel/tracing/trace */
    INGEST_TRACE_CMD_REPORT,  /* `trace-cmd report`, with or without -l */
    INGEST_ARGUS,             /* the Argus trace format (#argus-trace 1) */
    INGEST_TRACE_DAT,         /* trace-cmd's binary trace.dat ("\x17\x08\x44tracing") */
    INGEST_SYSTRACE_HTML,     /* Android systrace: ftrace text in <script class="trace-data"> */
    INGEST_CTF,               /* a folder of CTF traces (LTTng, perf data convert --to-ctf; an LTTng session) */
    INGEST_PERF_SCRIPT,       /* `perf script` text of tracepoints (perf sched record) */
    INGEST_PERF_DATA,         /* perf.data ("PERFILE2"), read through `perf script` */
    INGEST_PERFETTO,          /* Perfetto's protobuf Trace (plain or gzip'd; ingest/perfetto/perfetto.c) */
} ingest_format;

const char *ingest_format_name(ingest_format f); /* "ftrace-trace", ... */

/* The callbacks return 0 to go on, non-zero to stop the read (the reader
 * then returns -1 and leaves err as the sink filled it, with "PATH:LINE: "
 * put in front unless the sink wrote it).  Any callback may be NULL.
 *
 * Call order (ftrace reader):
 *   - proc(pid) before the first thread() of that pid;
 *   - thread(tid) before the first event() of tid (whose ev->pid is then
 *     the pid of the latest thread() of tid), and again whenever tid moves
 *     to another process or is renamed; proc(pid) again when the process is
 *     renamed (exec, or a rename of its leader tid == pid);
 *   - the declarations a line causes (its own task, the child of a fork or
 *     task_newtask, a task_rename) come before that line's event();
 *   - exactly one event() per event line, in file order; one skip() per
 *     header line (cpus=2, version = 6, CPU 0 is empty, CPU:1 [LOST ..]);
 *     nothing for '#' comments and blank lines.
 * Threads that are only named in an event's fields (a wakeup's target, a
 * switch's next) are not declared until they are seen themselves. */
typedef struct ingest_sink {
    void *ctx;
    /* a process appeared or was renamed (exec, task_rename of its leader) */
    int (*proc)(void *ctx, uint32_t pid, const char *name, char *err, size_t errlen);
    /* a thread appeared, moved to a process, or was renamed */
    int (*thread)(void *ctx, const db_thread *t, char *err, size_t errlen);
    /* a symbol for an address (Argus `symbol ADDR "NAME"`) */
    int (*symbol)(void *ctx, uint64_t addr, const char *name, char *err, size_t errlen);
    /* one event, in file order; the sink assigns ev->id */
    int (*event)(void *ctx, db_event *ev, char *err, size_t errlen);
    /* a line that is not an event and not a comment/header (counted as skipped) */
    void (*skip)(void *ctx);
    /* how far the read is: bytes of the file read so far, of total (0 if
     * unknown); called now and then (every buffer refill), for a progress bar */
    void (*progress)(void *ctx, uint64_t bytes, uint64_t total);
    /* optional: the reader has made its last call; what it does now is
     * its own cleanup (the ingest pipe hands its last batch over early) */
    void (*end)(void *ctx);
} ingest_sink;

/* What a trace file says about its recording (a trace.dat's header):
 * empty strings and 0 where it says nothing.  They become the trace's
 * labels (host, kernel, arch, cpus, clock, recorder). */
typedef struct ingest_meta {
    char host[64], kernel[128], arch[32], clock[32], recorder[128];
    uint32_t cpus;
    /* argusq record's own marker, written as the command ended (record/record.c):
     * the command line, its start (UTC, ISO 8601), run time in seconds and
     * exit status */
    char command[512], started[32], duration[32], status[16];
} ingest_meta;

typedef struct ingest_stats {
    ingest_meta meta;
    uint64_t lines;   /* lines read */
    uint64_t events;  /* events handed to the sink */
    uint64_t skipped; /* lines that were neither events nor headers */
    uint64_t reordered; /* events put back in time order (reorder window) */
    uint64_t late;      /* events too far out of order: kept at the time before them */
    uint64_t joined;    /* lines that continued the event before them */
    uint64_t unnamed;   /* raw syscall events whose number was left unnamed:
                           the machine's syscall table is not known */
    uint64_t truncated; /* the last line, left out because the file ends inside
                           it (a recorder killed, a full disk); 0: none */
    uint64_t ust;        /* LTTng-UST (userspace) events read, in events or skipped */
    uint64_t ust_no_tid; /* of them, skipped: no vtid context says their thread */
    char warning[2400]; /* what else the reader read around rather than refused
                           (perf's header that perf could not print), for the
                           ingest's warnings; "" none */
} ingest_stats;

/* What a file does not say about itself. */
typedef struct ingest_opts {
    /* the machine a trace was recorded on ("x86_64", "arm64", ...:
     * base_arch_find): its syscall table names raw syscall numbers where
     * the file does not say its machine itself (text; a .dat, a Perfetto
     * trace with system_info and a CTF trace do).  NULL: unknown, numbers
     * are kept without names */
    const char *arch;
} ingest_opts;

ingest_format ingest_detect(const char *buf, size_t len);
/* A folder that is a CTF trace (a metadata file) or holds some below it
 * (an LTTng session): INGEST_CTF; anything else INGEST_UNKNOWN (a file's
 * format is in its content: ingest_detect). */
ingest_format ingest_detect_folder(const char *path);

/* All of f (to its end) in one malloc'd buffer, *len its length (a
 * script, a rules file); NULL on a read error or out of memory. */
char *ingest_slurp(FILE *f, size_t *len);

/* Reads path (format detected from its content; a folder: a CTF trace) into sink.
 * Returns 0, or -1 with err = "PATH:LINE: message".  opts may be NULL. */
int ingest_file_opts(const char *path, const ingest_sink *sink, const ingest_opts *opts, ingest_format *format,
                     ingest_stats *st, char *err, size_t errlen);
/* ingest_file_opts without options */
int ingest_file(const char *path, const ingest_sink *sink, ingest_format *format, ingest_stats *st,
                char *err, size_t errlen);

/* ---- reading a dump (argus_restore.c) ----
 *
 * `argusq dump` (dump/dump.h) writes a trace as an Argus trace with
 * argusq's dump extensions (docs/ARGUS-DUMP.md); the Argus reader reads it
 * back into the same events, nodes and edges. */

/* A dump's header: what must be known before its ingest begins (the
 * trace's format, which the graph's rules depend on, its name, labels
 * and user rules).  Owns its strings: ingest_dump_head_free. */
typedef struct ingest_dump_head {
    char format[32]; /* the dumped trace's: "ftrace-trace", "argus", ... */
    char name[256];  /* the dumped trace's name ("" if not given) */
    char source[512];
    uint64_t events; /* how many events the dump holds, if have_events */
    bool have_events;
    char **labels; /* KEY, VALUE, KEY, VALUE, ...: nlabels pairs */
    size_t nlabels;
    char **rules;  /* rule statements, and the line of each */
    uint64_t *rule_lines;
    size_t nrules;
} ingest_dump_head;

/* Reads the header of path: 1 (a dump; h filled), 0 (not a dump: no
 * `dump` record first), -1 (err = "PATH:LINE: ..."). */
int ingest_dump_head_read(const char *path, ingest_dump_head *h, char *err, size_t errlen);
void ingest_dump_head_free(ingest_dump_head *h);

/* The word a dump gives an event's context (@ctx=, a db_ctx): "thread",
 * "hardirq", "softirq", "unknown"; the reader takes back these words and
 * no others, so the writer (dump/dump.c) names contexts with this. */
const char *ingest_argus_ctx_name(int ctx);

/* ---- two cores (pipe.c) ----
 *
 * ingest_file with the reader in a second thread: it parses the file while
 * the calling thread makes the same sink calls, in the same order, from
 * bounded batches (at most 32 of 1 MiB), so the sink sees what ingest_file would
 * have shown it and runs only in the calling thread.  A call the sink
 * refuses stops the reader; the message then names the file but no line
 * ("PATH: message").  Without a second thread it is ingest_file. */
int ingest_file_threaded(const char *path, const ingest_sink *sink, const ingest_opts *opts, ingest_format *format,
                         ingest_stats *st, char *err, size_t errlen);

#endif
