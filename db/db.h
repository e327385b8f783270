/* db/db.h -- the archive: one LMDB environment holding many named traces.
 *
 * This is the only public header of db/, and db/ is the only code that
 * includes lmdb.h.  Everything else sees the archive through these types:
 *
 *   db_archive   an open environment (many traces)
 *   db_writer    one ingest: a write transaction that creates one new trace;
 *                the trace becomes visible only when db_writer_commit succeeds
 *   db_reader    a read snapshot bound to one committed trace
 *
 * Keys are big-endian composite byte strings (trace id first), so LMDB's
 * memcmp order is numeric order and a range scan is a cursor walk.
 *
 * Ownership: every db_event / db_node handed out by a cursor points into
 * LMDB's map or into the cursor's own buffer and is valid until the next
 * call on that cursor; copy what you keep. */
#ifndef ARGUSQ_DB_H
#define ARGUSQ_DB_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../base/base.h"

/* ---- the Argus event vocabulary (paper/000 table of event types) ---- */
typedef enum db_evtype {
    DB_EV_RAW = 0,          /* a source event the mapping does not use; kept */
    DB_EV_SYSCALL,
    DB_EV_BACKTRACE,
    DB_EV_NSAPP_EVENT,
    DB_EV_WAIT,
    DB_EV_WAKEUP,
    DB_EV_INTERRUPT,
    DB_EV_TIMESHARE,
    DB_EV_DISPATCH_ENQUEUE,
    DB_EV_DISPATCH_INVOKE,
    DB_EV_DISPATCH_MIG_SERVICE,
    DB_EV_RUNLOOP_SUBMIT,
    DB_EV_RUNLOOP_INVOKE,
    DB_EV_RUNLOOP_OBSERVER,
    DB_EV_MACH_MSG,
    DB_EV_VOUCHER,
    DB_EV_TIMER_ARM,
    DB_EV_TIMER_CANCEL,
    DB_EV_TIMER_CALLOUT,
    DB_EV_FLAG_WRITE,
    DB_EV_FLAG_READ,
    DB_EV__COUNT
} db_evtype;

/* The word after the type: begin/end, or send/recv for mach_msg. */
typedef enum db_phase {
    DB_PH_NONE = 0,
    DB_PH_BEGIN = 1, /* also mach_msg send */
    DB_PH_END = 2    /* also mach_msg recv */
} db_phase;

/* Execution context the event ran in (ftrace flag column: h / s). */
typedef enum db_ctx {
    DB_CTX_THREAD = 0,
    DB_CTX_HARDIRQ = 1,
    DB_CTX_SOFTIRQ = 2,
    DB_CTX_UNKNOWN = 3 /* the source has no flag column (trace-cmd report without -l) */
} db_ctx;

#define DB_CPU_NONE 0xffffu

/* One event.  `obj` is the object the event is about, so the graph pass
 * needs no attribute parsing on hot event types:
 *   wakeup: target tid      timer_*: timer address    dispatch_*: block
 *   mach_msg: dest port     flag_*: flag address      runloop_*: block
 *   syscall: syscall number
 * `val`: flag value; syscall return value (end); 0 otherwise.
 * `attrs` is a packed list of NUL-terminated "key=value" strings, attrs_len
 * bytes in all (the last string's NUL included); values are the source text
 * (strings unquoted).  `name` is the source event name (ftrace event name,
 * or the Argus type name); `name_len` its strlen when the producer knows
 * it, else 0 (read it with db_event_name_len). */
typedef struct db_event {
    uint64_t id;   /* 1-based, file order, per trace */
    uint64_t ts;   /* nanoseconds */
    uint32_t tid, pid;
    uint32_t node; /* 0 until the graph pass assigns one */
    uint16_t cpu;  /* DB_CPU_NONE if unknown */
    uint8_t type;  /* db_evtype */
    uint8_t phase; /* db_phase */
    uint8_t ctx;   /* db_ctx */
    /* strlen(name) where it is known for free, 0 where not: the ingest
     * pipe's replay has it (the call carries it), and the graph thread
     * would otherwise measure the name up to twice an event (the graph's
     * rules, the event block encoder).  In the padding before obj:
     * db_event stays 80 bytes, and the calls as long. */
    uint32_t name_len;
    uint64_t obj;
    int64_t val;
    const char *name;
    const char *attrs;
    size_t attrs_len;
} db_event;

/* The event's name's length: name_len, or the name measured when it is
 * 0 (a producer that does not know it, or an empty name). */
static inline size_t db_event_name_len(const db_event *ev)
{
    return ev->name_len ? ev->name_len : ev->name ? strlen(ev->name) : 0;
}

const char *db_evtype_name(int type);           /* "wakeup", ... ; "raw" */
int db_evtype_from_name(const char *s, size_t len); /* -1 if unknown */
/* The name users know an event's `obj` by: "target" (wakeup), "timer",
 * "block", "port", "addr", "nr", "irq"; NULL if the type has none. */
const char *db_evtype_obj_name(int type);
bool db_evtype_obj_is_addr(int type);

/* Attribute lookup in an event's packed attrs.  Returns false if absent. */
bool db_event_attr(const db_event *ev, const char *key, const char **val, size_t *len);
bool db_event_attr_u64(const db_event *ev, const char *key, uint64_t *out);
/* The number an attribute's value of n bytes gives, as db_event_attr_u64
 * reads it. */
bool db_attr_u64(const char *v, size_t n, uint64_t *out);

/* ---- graph tables ---- */
typedef enum db_node_kind {
    DB_NODE_THREAD = 0,   /* an execution segment of a thread */
    DB_NODE_INTERRUPT,    /* hardirq, isolated (paper/000 1.a) */
    DB_NODE_SOFTIRQ,      /* softirq, isolated (paper/000 1.a) */
    DB_NODE_TIMER,        /* a timer callout, isolated */
    DB_NODE_DISPATCH,     /* a dispatch / workqueue callout (paper/000 1.c) */
    DB_NODE_RUNLOOP,      /* a run-loop callout (paper/000 1.c) */
    DB_NODE_SERVICE,      /* one service of dispatch_mig_service (paper/004) */
    DB_NODE_TIMESHARE,    /* timeshare maintenance, isolated (paper/000 1.a) */
    DB_NODE__COUNT
} db_node_kind;

const char *db_node_kind_name(int kind);
/* An isolated context (interrupt, softirq, timer callout, timeshare): it
 * runs on a cpu, not as the thread it landed on (paper/000 1.a).  Inline:
 * asked of every node by the graph and again by the writer. */
static inline bool db_node_kind_isolated(int kind)
{
    return kind == DB_NODE_INTERRUPT || kind == DB_NODE_SOFTIRQ || kind == DB_NODE_TIMER ||
           kind == DB_NODE_TIMESHARE;
}
int db_node_kind_from_name(const char *s, size_t len); /* -1 if unknown */

#define DB_NAME_MAX 48

typedef struct db_node {
    uint32_t id; /* 1-based per trace */
    uint32_t tid, pid;
    uint8_t kind;
    uint16_t cpu;          /* for isolated context nodes; else DB_CPU_NONE */
    uint64_t begin, end;   /* ts of first and last event */
    uint64_t blocked;      /* ns the thread waited just before the first event */
    uint64_t running;      /* ns on a cpu: from its switch-in to the last event,
                              less preemptions (the span, without scheduler events) */
    uint64_t runnable;     /* ns runnable but off cpu: from its wakeup to its
                              switch-in, and preempted inside the node */
    uint64_t oncpu;        /* when it got the cpu it ran its first event on: its
                              switch-in before begin (begin without scheduler events) */
    uint32_t events;
    uint64_t first_event, last_event;
    char thread[DB_NAME_MAX];
    char proc[DB_NAME_MAX];
} db_node;

typedef enum db_edge_kind {
    DB_EDGE_WAKEUP = 0,
    DB_EDGE_WEAK,
    DB_EDGE_IPC,
    DB_EDGE_IPC_REPLY,
    DB_EDGE_DISPATCH,
    DB_EDGE_RUNLOOP,
    DB_EDGE_TIMER,
    DB_EDGE_FLAG,
    DB_EDGE_USER,
    DB_EDGE_PREEMPT, /* the node's thread was preempted; from the node that took its cpu */
    DB_EDGE_IO,      /* a block request's completion, from the node that submitted it */
    DB_EDGE__COUNT
} db_edge_kind;

const char *db_edge_kind_name(int kind);
int db_edge_kind_from_name(const char *s, size_t len); /* -1 if unknown */

typedef struct db_edge {
    uint32_t from, to; /* node ids */
    uint8_t kind;      /* db_edge_kind */
    uint64_t from_event, to_event;
} db_edge;

/* ---- the trace catalog ---- */
typedef struct db_trace_info {
    char name[256];
    uint32_t id;
    uint64_t events, threads, processes, nodes, edges, skipped;
    uint64_t first_ts, last_ts;
    uint64_t ingested_at; /* unix seconds */
    char format[32];      /* "ftrace-trace", "trace-cmd-report", "argus" */
    char source[512];     /* the file it came from */
    uint32_t state;       /* DB_TRACE_COMPLETE, or DB_TRACE_INGESTING while
                             an ingest writes it in batches (never listed) */
    uint32_t unordered;   /* event ids are not in time order: the time index
                             exists (else time scans search the events) */
} db_trace_info;

#define DB_TRACE_COMPLETE 0u
#define DB_TRACE_INGESTING 1u

typedef struct db_thread {
    uint32_t tid, pid;
    uint8_t flags; /* DB_THREAD_MAIN | DB_THREAD_RUNLOOP */
    char name[DB_NAME_MAX];
} db_thread;

#define DB_THREAD_MAIN 1u
#define DB_THREAD_RUNLOOP 2u

/* ---- big-endian key encoding (exposed for tests and for db/ itself) ---- */
/* inline: the keysort reads two of them a key it sorts, and the writer
 * puts a few in every key and chunk (compilers make each a load or a
 * store and a byte swap); as calls into types.c, their callers saved
 * registers around them. */
/* a byte swap and one store: written as byte stores, GCC 12 merged a
 * be32's but built a be64's a byte at a time */
static inline void db_put_be32(unsigned char *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    __builtin_memcpy(p, &v, sizeof v);
}
static inline void db_put_be64(unsigned char *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    __builtin_memcpy(p, &v, sizeof v);
}
static inline uint32_t db_get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t db_get_be64(const unsigned char *p)
{
    return (uint64_t)db_get_be32(p) << 32 | db_get_be32(p + 4);
}

/* ---- errors: every call that can fail returns 0 or -1 and fills err ---- */
typedef struct db_error {
    char msg[512];
    uint32_t old_format; /* db_open: the archive's earlier format, which
                            db_migrate_begin can make current; else 0 */
} db_error;

int db_fail_oom(db_error *err); /* "out of memory"; returns -1 */

/* ---- archive ---- */
typedef struct db_archive db_archive;

/* Opens (creating if needed, unless readonly) the archive file at path.
 * Read-only, an archive whose lock file this user cannot make or write
 * (a directory it may not write, read-only media) is opened without one:
 * safe while nobody writes the archive (db_open says why).  A failed
 * open leaves no file it made (the lock file, a new archive). */
db_archive *db_open(const char *path, bool readonly, db_error *err);
/* Whether this user may write the archive at path: the file, and its
 * lock file or, when there is none yet, its directory (access(2): the
 * real user).  Commands that write when they may open read-only when not. */
bool db_writable(const char *path);
/* Another handle on a's LMDB environment, under the name path (its
 * messages and writer lock use it), read-only or not (not: a must be
 * writable).  LMDB allows one environment per file in a process (closing a
 * second one drops the first one's locks), so a process that opens a file
 * again shares the first environment this way (lib/registry.c); a must
 * outlive the new handle.  Handles may be used from several threads at
 * once: each call makes its own transaction. */
db_archive *db_share(db_archive *a, const char *path, bool readonly, db_error *err);
/* The device and inode of the file a's environment has open: 0, -1. */
int db_file_id(db_archive *a, uint64_t *dev, uint64_t *ino);
/* Closes a handle (a shared one leaves its environment to the owner). */
void db_close(db_archive *a);

/* migrate.c: an archive of an earlier format made current, keeping its
 * traces: begin takes the writer lock and copies what was recorded into
 * a new file beside the archive (NULL with err->msg empty when there is
 * nothing left to do: another process migrated it meanwhile, or the change
 * was made in place; *from: the format found); the caller
 * rebuilds the graph of each trace in db_migrate_archive (query_migrate);
 * commit puts the new file in the archive's place.  Abort removes it. */
typedef struct db_migration db_migration;
uint32_t db_format_version(void); /* the format this argusq writes */
db_migration *db_migrate_begin(const char *path, uint32_t *from, db_error *err);
db_archive *db_migrate_archive(db_migration *m);
int db_migrate_commit(db_migration *m, db_error *err); /* frees m */
void db_migrate_abort(db_migration *m);

/* Catalog: list committed traces (oldest first), find one, the latest. */
typedef int (*db_trace_cb)(void *ctx, const db_trace_info *t);
int db_list_traces(db_archive *a, db_trace_cb cb, void *ctx, db_error *err);
int db_find_trace(db_archive *a, const char *name, db_trace_info *out, db_error *err); /* 1 found, 0 not, -1 error */
int db_latest_trace(db_archive *a, db_trace_info *out, db_error *err);                  /* 1, 0, -1 */
/* manage.c: a trace dropped (out: its entry, may be NULL; its space is
 * free for the next writes when this returns) or renamed; 0 or -1. */
int db_drop_trace(db_archive *a, const char *name, db_trace_info *out, db_error *err);
int db_rename_trace(db_archive *a, const char *from, const char *to, db_error *err);
/* The archive rewritten without free pages (a copy put in its place with
 * the writer lock held); *before and *after its sizes in bytes.  Other
 * processes that have it open read the old file until they open it again;
 * their writers are refused. */
int db_compact(db_archive *a, uint64_t *before, uint64_t *after, db_error *err);
/* A consistent copy of the archive (its last commit) into a new file
 * `path` (never over an existing one), while readers and a writer go on:
 * through base_outfile, so a failed backup leaves nothing at path. */
int db_backup(db_archive *a, const char *path, db_error *err);

/* A trace's labels: what its recording says about itself (host, kernel,
 * arch, cpus, clock, command, ...) and what users set.  A key is a letter
 * or '_' and then letters, digits, '_', '.' (a query names it label.KEY). */
#define DB_LABEL_KEY_MAX 64
#define DB_LABEL_VALUE_MAX 1024
int db_label_check(const char *key, size_t value_len, db_error *err);
/* Sets (value) or removes (NULL) a label of the trace `name`, in one
 * commit: 1, 0 (removing a label it does not have), -1. */
int db_label_trace(db_archive *a, const char *name, const char *key, const char *value, db_error *err);
/* The labels of the trace whose catalog id is `trace`, in key order. */
typedef int (*db_label_cb)(void *ctx, const char *key, const char *value, size_t len);
int db_trace_labels(db_archive *a, uint32_t trace, db_label_cb cb, void *ctx, db_error *err);
/* What an archive holds, for `argusq info`. */
typedef struct db_archive_info {
    uint64_t file_bytes, page_size, pages_used, pages_free;
    uint32_t format;
    uint64_t traces, events, nodes, edges;
} db_archive_info;
int db_info(db_archive *a, db_archive_info *out, db_error *err);

/* ---- writer: one ingest ----
 * An ingest writes in batches of transactions (bounded memory for any size
 * of trace); its catalog entry says DB_TRACE_INGESTING until
 * db_writer_commit, so readers never see part of a trace.  One writer at a
 * time: a second one waits for the first (a lock on the archive file).  A
 * writer first deletes what an interrupted ingest left (kill -9, power
 * loss), so its space is reused.  db_writer_open (rules, rebuild) works in
 * one transaction: its change is seen whole or not at all. */
typedef struct db_writer db_writer;

db_writer *db_writer_begin(db_archive *a, const char *name, const char *format,
                           const char *source, db_error *err);
int db_writer_proc(db_writer *w, uint32_t pid, const char *name, db_error *err);
int db_writer_thread(db_writer *w, const db_thread *t, db_error *err);
int db_writer_symbol(db_writer *w, uint64_t addr, const char *name, db_error *err);
/* A label of the trace being written (db_label_check'ed by the caller). */
int db_writer_label(db_writer *w, const char *key, const char *value, db_error *err);
/* Appends one event; ev->id is assigned (1, 2, ...) and written back.
 * ev->node, when set, is stored with it (db_scan_node_events finds a
 * node's events through the thread index and this). */
int db_writer_event(db_writer *w, db_event *ev, db_error *err);
uint64_t db_writer_next_event_id(const db_writer *w); /* the id the next event gets */
void db_writer_skip(db_writer *w); /* a source line that held no event */
int db_writer_node(db_writer *w, const db_node *n, db_error *err);
/* The same, given db_thread_key(n->thread, n->kind) (the graph has it for
 * the node's signature): the writer does not hash the name again. */
int db_writer_node_key(db_writer *w, const db_node *n, uint32_t thread_key, db_error *err);
int db_writer_edge(db_writer *w, const db_edge *e, db_error *err);
int db_writer_set_event_node(db_writer *w, uint64_t event_id, uint32_t node, db_error *err);
/* Looks up a thread or process of the trace being written (1, 0, -1). */
int db_writer_get_thread(db_writer *w, uint32_t tid, db_thread *out, db_error *err);
int db_writer_get_proc(db_writer *w, uint32_t pid, char *name, size_t len, db_error *err);
/* The trace's format name ("argus", "ftrace-trace", ...). */
const char *db_writer_format(const db_writer *w);
/* Commits the whole trace (it becomes visible) and frees w. */
int db_writer_commit(db_writer *w, db_trace_info *out, db_error *err);
void db_writer_abort(db_writer *w); /* nothing of the trace remains */
/* Once *flag is non-zero (a signal handler's: argusq's Ctrl-C), the
 * writer commits no further batch and db_writer_commit fails: the call
 * that meets it fails with "interrupted", and the caller's abort deletes
 * what was committed.  Set it right after db_writer_begin or
 * db_writer_rebuild; NULL (as begun): never. */
void db_writer_interrupt(db_writer *w, const volatile sig_atomic_t *flag);

/* A write transaction on a committed trace: to change its rules and
 * rebuild its graph without re-ingesting.  Commit makes the change visible
 * at once; abort leaves the trace as it was. */
db_writer *db_writer_open(db_archive *a, const char *trace, db_error *err);
/* Removes the trace's nodes and edges (before graph_build runs again). */
int db_writer_clear_graph(db_writer *w, db_error *err);

/* User rules of a trace, kept as statement text, numbered from 1. */
typedef int (*db_rule_cb)(void *ctx, uint32_t seq, const char *text);
int db_writer_add_rule(db_writer *w, const char *text, size_t len, uint32_t *seq, db_error *err);
int db_writer_drop_rule(db_writer *w, uint32_t seq, db_error *err); /* 1 dropped, 0 no such rule */
int db_writer_scan_rules(db_writer *w, db_rule_cb cb, void *ctx, db_error *err);

/* Walk the events of the trace being written in time order (ts, then id):
 * the graph pass reads what ingest wrote, within the same transaction. */
typedef int (*db_event_cb)(void *ctx, const db_event *ev);
int db_writer_scan_time(db_writer *w, db_event_cb cb, void *ctx, db_error *err);

/* `rebuild graph` without one unbounded transaction: a writer of a hidden
 * copy of the trace (its threads, processes, symbols and rules copied;
 * events, nodes and edges to be written again, in batches, as an ingest
 * does), whose commit puts it in the trace's place and deletes the old
 * copy afterwards, step by step.  Readers see the old graph or the new
 * one, never a mix; a crash leaves the old one. */
db_writer *db_writer_rebuild(db_archive *a, const char *trace, db_error *err);
/* The old copy's events in id order, each once (node as stored there). */
int db_writer_scan_source(db_writer *w, db_event_cb cb, void *ctx, db_error *err);

/* ---- node signatures (paper/004 §Node Comparison) ----
 * A node's normal form is the set of its distinct normalized events, each
 * a 32-bit hash of a text such as "syscall:futex" or "wakeup:worker"; the
 * texts are kept once for the whole archive.  The signature index groups
 * nodes by thread key (thread name and node kind), across traces, so that
 * finding the counterparts of a node is a prefix scan of one thread's
 * nodes, not a scan of every node. */
#define DB_SIG_MAX 64

typedef struct db_sig {
    uint32_t trace, node;
    uint32_t thread_key;
    uint32_t n;
    uint32_t h[DB_SIG_MAX]; /* sorted, distinct */
} db_sig;

/* ---- each thread's top nodes (db/nodetop.c) ----
 * Per thread key (name and kind), the DB_TOP_MAX nodes with the longest
 * wait before them (DB_TOP_BLOCKED) and the longest span
 * (DB_TOP_DURATION), largest first, ties by id. */
#define DB_TOP_MAX 128
enum { DB_TOP_BLOCKED = 0, DB_TOP_DURATION, DB_TOP__COUNT };
typedef struct db_top {
    uint32_t total; /* nodes of the thread key; == n: the list is all of them */
    uint32_t n;
    uint64_t v[DB_TOP_MAX];
    uint32_t id[DB_TOP_MAX];
} db_top;

/* The thread key of a node's thread name and kind. */
uint32_t db_thread_key(const char *thread, int kind);

/* The signature of a node written just before (db_writer_node); its
 * thread key must be db_thread_key of the node's name and kind. */
int db_writer_signature(db_writer *w, const db_sig *sig, db_error *err);
/* db_writer_node_key and db_writer_signature of the node, in one call:
 * the graph closes a node with both (one test of the calling thread for
 * the two, not one each). */
int db_writer_node_sig(db_writer *w, const db_node *n, uint32_t thread_key, const db_sig *sig, db_error *err);
int db_writer_norm(db_writer *w, uint32_t hash, const char *text, db_error *err);

/* ---- reader: a read snapshot of one committed trace ---- */
typedef struct db_reader db_reader;

db_reader *db_reader_open(db_archive *a, const char *trace, db_error *err);
const db_trace_info *db_reader_trace(const db_reader *r);
void db_reader_close(db_reader *r);
/* The label `key` of trace `trace` (a catalog id) in r's snapshot, into
 * val (cut to cap): 1, 0 if it has none, -1. */
int db_reader_label(db_reader *r, uint32_t trace, const char *key, char *val, size_t cap, db_error *err);
/* Once *flag is non-zero (a signal handler's: argusq's Ctrl-C), every read
 * through r fails with "interrupted" -- a lookup at once, a scan at its
 * next row -- so that a statement reading the trace stops soon, wherever
 * its loops are.  NULL (as opened): never. */
void db_reader_interrupt(db_reader *r, const volatile sig_atomic_t *flag);

int db_get_node(db_reader *r, uint32_t id, db_node *out, db_error *err);  /* 1, 0, -1 */
int db_get_event(db_reader *r, uint64_t id, db_event *out, db_error *err); /* 1, 0, -1; valid until next call */
int db_get_thread(db_reader *r, uint32_t tid, db_thread *out, db_error *err);
int db_get_symbol(db_reader *r, uint64_t addr, char *name, size_t len, db_error *err); /* 1, 0, -1 */

int db_scan_rules(db_reader *r, db_rule_cb cb, void *ctx, db_error *err);

/* Signatures.  db_get_sig: the signature of a node of this trace (1, 0, -1).
 * db_scan_sigs: every node with the thread key, in trace `trace_id` (0:
 * every trace of the archive).  db_norm_text: the text of a hash. */
int db_get_sig(db_reader *r, uint32_t node, db_sig *out, db_error *err);
int db_get_sig_of(db_reader *r, uint32_t trace_id, uint32_t node, db_sig *out, db_error *err);
typedef int (*db_sig_cb)(void *ctx, const db_sig *sig);
int db_scan_sigs(db_reader *r, uint32_t thread_key, uint32_t trace_id, db_sig_cb cb, void *ctx, db_error *err);
int db_norm_text(db_reader *r, uint32_t hash, char *buf, size_t len, db_error *err); /* 1, 0, -1 */
/* A node of any committed trace, and the name of a trace id (1, 0, -1). */
int db_get_node_of(db_reader *r, uint32_t trace_id, uint32_t node, db_node *out, db_error *err);
/* A thread key's top nodes (db_top): 1 found, 0 none (no node of that
 * key, or an archive written before the lists), -1 error. */
int db_get_top(db_reader *r, uint32_t thread_key, int field, db_top *out, db_error *err);
int db_trace_name(db_reader *r, uint32_t trace_id, char *buf, size_t len, db_error *err);

typedef int (*db_node_cb)(void *ctx, const db_node *n);
typedef int (*db_edge_cb)(void *ctx, const db_edge *e);

/* Every node in id order.  A callback returning non-zero stops the walk
 * (the walk then returns that value). */
int db_scan_nodes(db_reader *r, db_node_cb cb, void *ctx, db_error *err);
/* Every thread of the trace (its latest name), by tid. */
typedef int (*db_thread_cb)(void *ctx, const db_thread *t);
int db_scan_threads(db_reader *r, db_thread_cb cb, void *ctx, db_error *err);
/* Every process (pid, its latest name) and every symbol (address, name)
 * of the trace, by id.  The name is valid during the call. */
typedef int (*db_name_cb)(void *ctx, uint64_t id, const char *name);
int db_scan_procs(db_reader *r, db_name_cb cb, void *ctx, db_error *err);
int db_scan_symbols(db_reader *r, db_name_cb cb, void *ctx, db_error *err);
/* The nodes of thread tid that begin in [t0, t1], and the last one that
 * begins before t0 (it may still run at t0), in time order: the thread's
 * own nodes, not the interrupts, softirqs and timers that landed on it. */
int db_scan_thread_nodes(db_reader *r, uint32_t tid, uint64_t t0, uint64_t t1, db_node_cb cb, void *ctx,
                         db_error *err);
/* Edges into / out of a node: index lookups (edges by target, by source). */
int db_edges_in(db_reader *r, uint32_t node, db_edge_cb cb, void *ctx, db_error *err);
int db_edges_out(db_reader *r, uint32_t node, db_edge_cb cb, void *ctx, db_error *err);
/* Every edge of the trace, by source node. */
int db_scan_edges(db_reader *r, db_edge_cb cb, void *ctx, db_error *err);

/* Event scans, each an index range:
 *   all events in id order;  events in [t0, t1] by the time index;
 *   one thread's events in [t0, t1];  one node's events;
 *   events about one object (port / block / timer address) */
typedef enum db_obj_index { DB_IX_PORT, DB_IX_BLOCK, DB_IX_TIMER } db_obj_index;
int db_scan_events(db_reader *r, db_event_cb cb, void *ctx, db_error *err);
int db_scan_time(db_reader *r, uint64_t t0, uint64_t t1, db_event_cb cb, void *ctx, db_error *err);
int db_scan_thread(db_reader *r, uint32_t tid, uint64_t t0, uint64_t t1, db_event_cb cb, void *ctx,
                   db_error *err);
int db_scan_node_events(db_reader *r, uint32_t node, db_event_cb cb, void *ctx, db_error *err);
int db_scan_object(db_reader *r, db_obj_index ix, uint64_t obj, db_event_cb cb, void *ctx, db_error *err);

#endif
