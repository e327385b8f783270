/* cli/cli.h -- what the files of the argusq command share.  The command
 * is thin: main.c reads the command line and picks one of
 *
 *   ingest.c   `argusq ingest FILE` and `argusq record -- CMD`
 *   usage.c    the usage text and usage errors
 *   run.c      statements from the command line, a script or stdin
 *   repl.c     the interactive shell (libedit)
 *   admin.c    `argusq info|compact|backup|dump` (db/ does the work)
 *
 * signals.c owns the process's Ctrl-C flag and the damaged-archive
 * message (the only state a signal handler may touch); progress.c draws
 * the progress bar of long ingests and recordings. */
#ifndef ARGUSQ_CLI_H
#define ARGUSQ_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "db/db.h"
#include "include/argusq.h"

#define CLI_EXIT_INTERRUPTED 130 /* what a shell shows for a death by SIGINT */

/* The command line, as main.c's parse_args read it. */
typedef struct cli_options {
    const char *archive;
    const char *trace;
    const char *script;
    const char *name;
    const char *rules;
    const char *arch; /* ingest --arch: the machine a text trace was recorded on */
    const char *labels[32]; /* ingest --label KEY=VALUE */
    int nlabels;
    int format; /* enum argusq_format */
    bool ingest;
    bool list_traces; /* --list-traces: names, one a line (bash completion) */
    const char *file;
    const char *output; /* dump -o FILE */
    char *statement; /* owned */
    int words;       /* the command-line words it was joined from */
} cli_options;

/* ---- usage.c ---- */
/* "argusq: MSG ARG" and the usage on stderr; returns 2 (usage). */
int cli_usage_error(const char *msg, const char *arg);
void cli_usage(FILE *out);
/* `argusq record -h`: the usage and the events `default` stands for */
void cli_usage_record(FILE *out);

/* ---- signals.c ---- */
/* Ctrl-C: a handler that sets the flag libargusq's options point at
 * (cli_interrupt_flag); repl: the REPL's handler (three Ctrl-C to kill). */
void cli_catch_interrupts(bool repl);
volatile sig_atomic_t *cli_interrupt_flag(void);
bool cli_interrupted(void);
void cli_interrupt_reset(void);
/* A command's end after Ctrl-C, once what it did was undone. */
int cli_die_interrupted(void);
/* SIGSEGV/SIGBUS (a damaged archive's page) end with a message naming it. */
void cli_catch_faults(const char *archive);

/* ---- run.c ---- */
/* The exit status of a failure: 1 a statement or an ingest failed, 2
 * usage, I/O or the archive. */
int cli_status_of(const argusq_error *e);
/* "where:line:col: msg" and the offending line with a caret. */
void cli_report(const char *where, const char *src, size_t len, const argusq_error *e);
/* Parses and runs src, to out; stops at the first failing statement. */
int cli_run_to(argusq_session *s, const char *where, const char *src, size_t len, FILE *out);
int cli_run(argusq_session *s, const char *where, const char *src, size_t len);
/* A script file, or "-" standard input. */
int cli_run_file(argusq_session *s, const char *path);

/* ---- ingest.c ---- */
int cli_ingest(const cli_options *o);
/* argv[first..]: record's options, then CMD and its arguments. */
int cli_record(int argc, char **argv, int first);

/* ---- repl.c ---- */
int cli_repl(argusq_session *s, argusq_archive *a, const char *archive, int format);

/* ---- admin.c: each returns the process's exit status (0, 1 failed, 2 no
 * archive) ---- */
/* db_open, and an archive of an earlier format migrated first when it
 * may be written (query_migrate; its progress on stderr). */
db_archive *cli_open_archive(const char *path, bool readonly, db_error *de);
int cli_compact(const char *archive, bool json);
int cli_backup(const char *archive, const char *to, bool json);
int cli_info(const char *archive, bool json);
/* `argusq dump [--trace NAME] [-o FILE]`: trace NAME (NULL: the latest)
 * as an Argus trace, to FILE (NULL or "-": standard output), through
 * libargusq's argusq_dump. */
int cli_dump(const char *archive, const char *trace, const char *to, bool json);

/* ---- progress.c: a progress bar on stderr for long ingests and
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
 * a measure ("building the graph"), progress_end to erase the line. ---- */
typedef struct progress {
    bool on;            /* stderr is a terminal */
    bool drawn;         /* a line is on the screen */
    char what[24];      /* "ingest", "record" */
    uint64_t total;     /* bytes expected; 0 unknown */
    uint64_t bytes, events;
    double t0, last;    /* monotonic seconds: start, last redraw */
} progress;

/* Starts a bar for `what` (on only if stderr is a terminal). */
void progress_begin(progress *p, const char *what, uint64_t total);
void progress_set_total(progress *p, uint64_t total);
/* Work done so far (absolute values).  Redraws at most every 100 ms. */
void progress_update(progress *p, uint64_t bytes, uint64_t events);
/* A step with no measure: "ingest: building the graph... 1.2M events". */
void progress_phase(progress *p, const char *phase);
/* Erases the line. */
void progress_end(progress *p);

#endif
