/* ingest/ctf/ctf_int.h -- CTF traces (LTTng's kernel and userspace
 * tracers, perf's CTF conversion): internals shared by the babeltrace2 side (ctf.c), the
 * search of a session folder (ctf_find.c) and the mapping (ctf_map.c),
 * and by the unit tests, which feed the mapping field sets written by
 * hand.
 *
 * The mapping sees an event as plain values (ctf_event_in), not as
 * babeltrace2 objects, so it can be tested without a trace and without
 * the library. */
#ifndef ARGUSQ_INGEST_CTF_INT_H
#define ARGUSQ_INGEST_CTF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ingest/ftrace/ftrace_map_int.h"

typedef enum ctf_ftype {
    CTF_F_OTHER = 0, /* arrays, structures, reals: not mapped */
    CTF_F_UINT,
    CTF_F_INT,
    CTF_F_STR,
} ctf_ftype;

/* One field of an event's payload or context. */
typedef struct ctf_field {
    const char *name;
    uint8_t type; /* ctf_ftype */
    bool hex;     /* the trace prefers to show it in hex (addresses) */
    uint64_t u;   /* CTF_F_UINT */
    int64_t i;    /* CTF_F_INT */
    const char *s; /* CTF_F_STR: slen bytes (not necessarily NUL-terminated) */
    size_t slen;
} ctf_field;

typedef struct ctf_event_in {
    const char *name; /* the event class's: "sched_switch", "sched:sched_switch", "myapp:request" */
    /* an LTTng-UST event (its trace's env says domain "ust"): a userspace
     * tracepoint, named provider:event, whose task is its vtid context */
    bool ust;
    uint64_t ts;      /* ns from the clock's origin */
    int64_t cpu;      /* the packet context's cpu_id; -1: the packet has none */
    const ctf_field *ctx; /* the event's contexts (LTTng's `add-context`: tid, pid, procname) */
    size_t nctx;
    const ctf_field *pay; /* its payload */
    size_t npay;
} ctf_event_in;

typedef struct ctf_map ctf_map;

/* The mapping's state: the ftrace reader's thread table and mapping (one
 * event of ftrace's naming becomes the db event the ftrace readers make),
 * the task on each CPU, the syscall each thread is in.  opts may be NULL.
 * NULL with err set when out of memory. */
ctf_map *ingest_ctf_map_new(const char *path, const ingest_sink *sink, const ingest_opts *opts,
                            ingest_stats *st, char *err, size_t errlen);
void ingest_ctf_map_free(ctf_map *m);

/* The syscall table of the machine: x86-64 names syscall numbers. */
void ingest_ctf_map_set_arch(ctf_map *m, const base_arch *arch);

/* Before the first event: the task running on cpu when the trace begins
 * (LTTng's events carry no task: the one on a CPU is the next of the last
 * sched_switch there, or for the first events the prev of the first). */
int ingest_ctf_map_seed(ctf_map *m, uint32_t cpu, uint32_t tid, const char *comm, size_t n);

/* Is e a sched_switch (either naming) that says which task ran on its
 * CPU before it?  Then *cpu, *tid, *comm, *n are that task's. */
bool ingest_ctf_prev_task(const ctf_event_in *e, uint32_t *cpu, uint32_t *tid, const char **comm, size_t *n);

/* One event to the sink.  n: its number in the trace, for messages.
 * Returns 0, or -1 with err = "PATH: event N (NAME): message". */
int ingest_ctf_map_event(ctf_map *m, const ctf_event_in *e, uint64_t n);

/* ---- damaged metadata (ctf_meta.c) ---- */

/* In what babeltrace2 logged (len bytes; its log lines, colours or not),
 * the metadata parser's first complaint: "At line N in metadata stream:
 * MSG" gives *line = N and msg = MSG.  Lines that are not babeltrace2's
 * log lines are written to other (when not NULL): what other threads
 * wrote to stderr meanwhile.  False when the log holds no such line. */
bool ingest_ctf_meta_complaint(const char *log, size_t len, unsigned *line, char *msg, size_t cap, FILE *other);

/* Where line `line` of a metadata file's text is.  A packetized file
 * (LTTng's: each packet a binary header, then text) says in which packet
 * and at which byte; a text file's line is the line of the file. */
typedef struct ctf_meta_place {
    bool packetized;
    bool found;        /* packetized and the text has that line */
    uint64_t packet;   /* from 1 */
    uint64_t packets;  /* the file's */
    uint64_t offset;   /* the line's first byte in the file */
    uint64_t end;      /* the end of the last packet's text */
} ctf_meta_place;

/* 0, or -1 when the file cannot be read. */
int ingest_ctf_meta_locate(const char *path, unsigned line, ctf_meta_place *where);

/* ---- the traces of a folder (ctf_find.c) ---- */

/* Is dir a CTF trace (it holds a file named metadata)? */
bool ingest_ctf_is_trace(const char *dir);

typedef struct ctf_traces {
    char **dirs; /* sorted */
    size_t n;
} ctf_traces;

/* The CTF traces of folder dir: dir itself when it is one, else every
 * trace folder below it (an LTTng session: kernel/, ust/uid/1000/64-bit/).
 * 0 (t->n may be 0: none), or -1 with err set (out of memory, too many). */
int ingest_ctf_find(const char *dir, ctf_traces *t, char *err, size_t errlen);
void ingest_ctf_traces_free(ctf_traces *t);
/* Is dir a CTF trace, or does it hold some below it? */
bool ingest_ctf_holds_traces(const char *dir);

/* ---- the reader (ctf.c) ---- */

/* Reads the CTF traces of folder dir (ingest_ctf_find) into sink as one
 * trace through libbabeltrace2: a source.ctf.fs for each, all into one
 * filter.utils.muxer (events in time order).  Errors name the folder (or
 * a trace's metadata or stream file) and the event. */
int ingest_ctf_read(const char *dir, const ingest_sink *sink, const ingest_opts *opts, ingest_stats *st,
                    char *err, size_t errlen);

#endif
