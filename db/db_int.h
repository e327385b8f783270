/* db/db_int.h -- internals shared by the files of db/ (not a public header).
 *
 * Tables (LMDB named databases); every key starts with the trace id (BE32):
 *
 *   meta        "format" -> u32, "next_id" -> u32, "latest" -> u32 (the default trace)
 *   traces      name -> db_trace_info                (the catalog)
 *   trace_ids   id -> name
 *   events      id, eid(8) -> a block of events from eid on (evblock.c)
 *   ev_time     id, ts(8), eid(8) -> ""              (time index, only for a
 *               trace whose ids are not in time order: `unordered`)
 *   ev_thread   id, tid(4), ts(8), eid(8) -> uv deltas of the thread's next
 *               event ids (thread index: a chunk of one thread's events in
 *               time order, from the key's event on; thrindex.c)
 *   node_thread id, tid(4), begin(8), node(8) -> uv deltas of the thread's next
 *               node ids (a thread's own nodes in time order, in chunks
 *               as ev_thread: critical paths, scans by thread id)
 *   ev_port     id, port(8), ts(8), eid(8) -> uv deltas (mach_msg dest)
 *   ev_block    id, block(8), ts(8), eid(8) -> uv deltas (dispatch / runloop block)
 *   ev_timer    id, timer(8), ts(8), eid(8) -> uv deltas (timer address): the
 *               object indexes, chunked as ev_thread
 *   nodes       id, node(4) -> node record (codec.c: varints and names)
 *   edges_in    id, to >> 4 (4) -> the edges into 16 nodes (codec.c: by
 *               to, from, kind, from_ev, to_ev; varints and deltas)
 *   edges_out   id, from >> 4 (4) -> the edges out of 16 nodes, as edges_in
 *   threads     id, tid(4) -> db_thread
 *   procs       id, pid(4) -> name
 *   symbols     id, addr(8) -> name
 *   rules       id, seq(4) -> rule text (user rules of the graph)
 *   labels      id, key -> value (the trace's labels: what the recording
 *               says about itself, and the user's; manage.c)
 *   norms       hash(4) -> normalized event text    (one dictionary for all traces)
 *   nodesig     id, thread key(4), field(1) -> the thread key's top list
 *               (nodetop.c): its number of nodes (4), then value(8) id(4)
 *               of each of its DB_TOP_MAX nodes with the longest wait
 *               (field 0) or the longest span (field 1), largest first;
 *               the table is named for what it held before format 4
 *   sigs        thread key(4), id, node(4) -> a chunk of the signatures of
 *               nodes from that one on (sigindex.c; the signature index:
 *               the nodes of one thread name and kind, across every trace)
 *
 * A backward slice reads a node's block of edges_in. */
#ifndef ARGUSQ_DB_INT_H
#define ARGUSQ_DB_INT_H

#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

enum {
    DBI_META,
    DBI_TRACES,
    DBI_TRACE_IDS,
    DBI_EVENTS,
    DBI_EV_TIME,
    DBI_EV_THREAD,
    DBI_NODE_THREAD,
    DBI_EV_PORT,
    DBI_EV_BLOCK,
    DBI_EV_TIMER,
    DBI_NODES,
    DBI_EDGES_IN,
    DBI_EDGES_OUT,
    DBI_THREADS,
    DBI_PROCS,
    DBI_SYMBOLS,
    DBI_RULES,
    DBI_NORMS,
    DBI_NODETOP, /* LMDB name "nodesig" (its first use): db/nodetop.c */
    DBI_SIGS,
    DBI_LABELS,
    DBI__COUNT
};

/* One handle may be used by several threads at once (libargusq: many
 * readers in one process), so what it finds lazily is set once, under
 * map_mu or by an atomic exchange, and read atomically; the rest is set
 * at open and only read afterwards. */
struct db_archive {
    MDB_env *env;
    MDB_dbi dbi[DBI__COUNT];
    bool readonly;
    /* 0, or why this read-only handle's environment has no lock file (an
     * errno: EACCES, EPERM): db_open found that this user cannot create
     * or write PATH-lock (db_open says what that gives up) */
    int nolock_errno;
    char path[4096];
    /* db_share: the handle whose environment this one uses (LMDB allows one
     * environment per file in a process), which must outlive it; NULL: the
     * environment is this handle's own */
    db_archive *env_owner;
    pthread_mutex_t map_mu; /* the first db_archive_trim's search for the map */
    void *_Atomic map; /* LMDB's map of the file, found by the first db_archive_trim */
    _Atomic size_t map_len; /* set before map */
    _Atomic bool map_looked;
    _Atomic int statm_fd; /* /proc/self/statm, for a writable archive (db_archive_file_rss);
                             -2 until it is first wanted */
};

/* LMDB's map is read-only shared memory over the archive: every page a
 * writer or a long scan reads stays mapped, so the process's resident set
 * grows with the archive although the pages are only page cache.  This
 * unmaps them all (they stay cached, and fault back in when read again);
 * safe under live transactions, whose dirty pages are their own memory.
 * A no-op when the map was not found. */
void db_archive_trim(db_archive *a);
/* Bytes of files the process has mapped in (the archive's map, and the
 * program's own text): /proc/self/statm's third field; 0 when unknown. */
uint64_t db_archive_file_rss(db_archive *a);
/* The map trimmed when the file pages mapped have grown past *base (what
 * was mapped after the last trim) by more than slack, *base then set
 * anew; false when /proc does not tell (nothing done): the callers'
 * check between two trims, writer_batch.c's and clear.c's. */
bool db_archive_trim_past(db_archive *a, uint64_t *base, uint64_t slack);

/* evblock.c, evblock_enc.c: the events table's blocks.  The encoder
 * takes events in id order: add returns 0, 1 when the block is full (the
 * event was not added: write the block, reset, add it again), -1 out of
 * memory.  A decoded block's events point into its own buffers: valid
 * until the block is decoded again or freed. */
#define DB_EVBLOCK_EVENTS 512
#define DB_EVBLOCK_BYTES 8150 /* with its key, two LMDB overflow pages */
typedef struct db_evblock_enc db_evblock_enc;
db_evblock_enc *db_evblock_enc_new(void);
void db_evblock_enc_free(db_evblock_enc *e);
void db_evblock_enc_reset(db_evblock_enc *e);
int db_evblock_enc_add(db_evblock_enc *e, const db_event *ev);
/* Whether events are written by the shortcuts (the default: repeated
 * events from the memo, others by their name's latest shape) or all in
 * full: the bytes are the same either way (tests prove it). */
void db_evblock_enc_memo(db_evblock_enc *e, bool on);
size_t db_evblock_enc_memo_hits(const db_evblock_enc *e); /* events written from it so far */
size_t db_evblock_enc_shape_hits(const db_evblock_enc *e); /* ... and by their name's latest shape */
size_t db_evblock_enc_count(const db_evblock_enc *e);
uint64_t db_evblock_enc_first(const db_evblock_enc *e);
const unsigned char *db_evblock_enc_bytes(db_evblock_enc *e, size_t *len);

/* evfront.c: an event's id and block, made where db_writer_event is called
 * (the graph's thread in a threaded writer); the writer gets the index
 * entries (db_evix) and the blocks (db_evblk) to put. */
typedef struct db_evblk {
    const unsigned char *bytes; /* valid until the front's next hand-over */
    size_t len;
    uint64_t first; /* the id of its first event: the block's key */
} db_evblk;
typedef struct db_evix { /* what the indexes need of an event */
    uint64_t id, ts, obj;
    uint32_t tid;
    uint8_t type;
} db_evix;
typedef struct db_evfront {
    db_evblock_enc *fill, *done; /* the block being filled; the last handed over */
    uint64_t events;             /* ids given */
    uint64_t last_ts;
    bool unordered;
} db_evfront;
/* db_evfront_add's event that needs more than the block being filled
 * (rc: what the block's add said, or 0) */
int db_evfront_add_more(db_evfront *f, db_event *ev, db_evblk *out, int rc);
/* Gives ev its id and adds it to the block being filled: 1 when *out is
 * a block to put before the event's index entries, 0, -1 out of memory.
 * The common case inline in its callers (db_wq_event, on the graph's
 * thread): as a call, its prologue and epilogue cost nearly as much as
 * its body, for every event.  test_evblock's test_front takes every
 * path. */
static inline int db_evfront_add(db_evfront *f, db_event *ev, db_evblk *out)
{
    if (!f->fill || (!f->unordered && ev->ts < f->last_ts))
        return db_evfront_add_more(f, ev, out, 0);
    ev->id = ++f->events;
    f->last_ts = ev->ts;
    int rc = db_evblock_enc_add(f->fill, ev);
    return rc ? db_evfront_add_more(f, ev, out, rc) : 0;
}
/* The block being filled, handed over: 1, or 0 when it is empty. */
int db_evfront_take(db_evfront *f, db_evblk *out);
void db_evfront_free(db_evfront *f);
/* inline: it is called for each event on the graph's thread (db_wq_event,
 * which also does not copy the entries through a db_evix of its own) */
static inline void db_evix_of(db_evix *x, const db_event *ev)
{
    *x = (db_evix){.id = ev->id, .ts = ev->ts, .obj = ev->obj, .tid = ev->tid, .type = ev->type};
}

typedef struct db_evblock_str {
    uint32_t off, len; /* in sbuf */
} db_evblock_str;

typedef struct db_evblock {
    uint64_t first_id;
    size_t n; /* 0: nothing decoded */
    db_event *ev;
    size_t ev_cap;
    char *sbuf, *text; /* the block's strings; the events' attrs */
    size_t sbuf_len, sbuf_cap, text_len, text_cap;
    db_evblock_str *str;
    size_t nstrs, str_cap;
    uint32_t *words; /* shapes: name, nkeys, keys (string indexes) */
    size_t nwords, words_cap;
    size_t *off; /* per event: name in sbuf, attrs in text */
    size_t off_cap;
} db_evblock;

/* 0, or -1 damaged, -2 out of memory */
int db_evblock_decode(db_evblock *b, uint64_t first_id, const void *data, size_t len);
int db_evblock_peek(const void *data, size_t len, size_t *n, uint64_t *first_ts);
const db_event *db_evblock_get(const db_evblock *b, uint64_t id); /* NULL: not in b */
void db_evblock_free(db_evblock *b);
/* Positions c at the last key <= *key (memcmp order): 0, MDB_NOTFOUND
 * (none), or an LMDB error; key and v are then the key found. */
int db_cursor_at_or_before(MDB_cursor *c, MDB_val *key, MDB_val *v);
/* The block of `trace` holding event `id`, decoded into b unless b holds
 * it already: 1, 0 (no such event), -1 (err filled). */
int db_evblock_load(MDB_txn *txn, MDB_dbi dbi, uint32_t trace, uint64_t id, db_evblock *b, db_error *err);

#define DB_EDGE_KEY_LEN 29
#define DB_TRACE_INFO_VERSION 3u
/* The archive's format, kept in meta "format"; an archive of another
 * format is refused with both numbers. */
#define DB_FORMAT_VERSION 8u /* 4: events in blocks, thread index in chunks;
                                5: nodes' running and runnable, node_thread;
                                6: edges in blocks of 16 nodes, object
                                   indexes and signatures in chunks;
                                7: labels (migrated in place from 6);
                                8: nodes' oncpu, runnable from sched_waking */

/* writer_life.c: a writer for catalog changes (manage.c): the writer lock, a
 * write transaction, leftovers of killed writers deleted; its commit
 * deletes what the change hid (DB_TRACE_INGESTING entries), in steps. */
db_writer *db_writer_catalog(db_archive *a, db_error *err);
MDB_txn *db_writer_txn(db_writer *w);
int db_writer_catalog_commit(db_writer *w, db_error *err);
/* the archive's last commit copied into fd (compact: without free pages);
 * the writer keeps the lock until it is aborted */
int db_writer_copy(db_writer *w, int fd, bool compact, db_error *err);
/* catalog.c: 0, or -1 with err naming what is wrong with a trace name */
int db_name_check(const char *name, db_error *err);

/* archive.c */
/* tmp, a finished archive file, renamed to path with a new lock file
 * (archive.c says why); the directory synced. */
int db_replace_file(const char *tmp, const char *path, db_error *err);
/* What killed compacts and migrations left beside the archive, removed
 * (with the writer lock held). */
void db_remove_leftovers(const char *path);
/* A change refused on a read-only handle: "PATH: the archive is
 * read-only: WHY" (the user may not write the file, its file system is
 * read-only, it has no lock file, or the caller opened it so); -1. */
int db_fail_readonly(const db_archive *a, db_error *err);
/* catalog.c: a labels key (trace, key bytes) into k (4 + DB_LABEL_KEY_MAX
 * bytes, key checked); its length. */
size_t db_label_key(unsigned char *k, uint32_t trace, const char *key);
/* LEB128 varints (codec.c): put returns the byte after; get sets *bad at
 * the end of the buffer or past 64 bits */
unsigned char *db_uv_put(unsigned char *p, uint64_t v);
uint64_t db_uv_get(const unsigned char **p, const unsigned char *end, bool *bad);
/* db_uv_put's loop, for callers outside codec.c that put a few varints
 * per call (the signature index's two a signature), where a call each
 * would cost more than the work */
static inline unsigned char *db_uv_put_inline(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}
int db_fail(db_error *err, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int db_lmdb_fail(db_error *err, int rc, const char *what);
/* every table's key compare (archive.c): LMDB's memcmp order, faster */
int db_key_order(const MDB_val *a, const MDB_val *b);
/* catalog.c: an entry by name (1, 0, -1), in any transaction; an entry
 * written, `latest` making it the default trace */
int db_catalog_get(db_archive *a, MDB_txn *txn, const char *name, db_trace_info *out, db_error *err);
int db_catalog_put(db_archive *a, MDB_txn *txn, const db_trace_info *t, bool latest, db_error *err);
/* Deletes the slots of trace_ids that repeat a name of a lower slot (catalog.c). */
int db_catalog_drop_repeats(db_archive *a, MDB_txn *txn, db_error *err);
/* A catalog value as read by a cursor: 0, or -1 (damaged, or another
 * version's). */
int db_catalog_decode(const MDB_val *v, db_trace_info *out);
/* The name's entry alone: not the trace_ids entry (the listing's order,
 * whose id a rebuilt trace keeps) nor the latest mark. */
int db_catalog_put_entry(db_archive *a, MDB_txn *txn, const db_trace_info *t, db_error *err);
int db_clear_trace_txn(db_archive *a, MDB_txn *txn, uint32_t trace, bool graph_only, db_error *err);
/* The same in steps (clear.c): a step deletes keys for at most `budget` bytes of leaf entries and
 * returns 1 while keys are left (commit, then step again with the same
 * st), 0 when the trace is gone, -1 on error.  st starts as {trace,
 * graph_only} with the rest zero. */
typedef struct db_clear {
    uint32_t trace;
    bool graph_only;
    unsigned stage;     /* 0: signatures; then the tables */
    uint32_t next_tk;   /* the signatures' resume point: a thread key */
} db_clear;
int db_clear_step(db_archive *a, MDB_txn *txn, db_clear *st, uint64_t budget, db_error *err);
int db_scan_rules_txn(MDB_txn *txn, MDB_dbi dbi, uint32_t trace, db_rule_cb cb, void *ctx, db_error *err);

/* thrindex.c: the chunked indexes, by thread (ev_thread, node_thread:
 * keys of 4 bytes) and by object (ev_port, ev_block, ev_timer: 8).  add:
 * the event (in arrival order) under its key; a chunk that ends is handed
 * to put (key, value).  flush: every open chunk.  0, -1 (put failed), -2
 * out of memory.  An index made deferred does not flush itself when its
 * chunks hold too much: add returns 1, and the caller flushes it where
 * it may commit between the puts (db_thrindex_due says it is time). */
typedef struct db_thrindex db_thrindex;
typedef int (*db_thrindex_put)(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen);
db_thrindex *db_thrindex_new(unsigned key_bytes, bool deferred);
bool db_thrindex_due(const db_thrindex *t);
void db_thrindex_free(db_thrindex *t);
int db_thrindex_flush(db_thrindex *t, uint32_t trace, db_thrindex_put put, void *ctx);
size_t db_thrindex_open(const db_thrindex *t); /* chunks a flush would put */

/* ---- new normal forms waiting for the dictionary (normbuf.c) ----
 * add: 0, 1 when the caller should flush now (too much waits), -1 out of
 * memory.  flush: each waiting form once, by hash, then none waits. */
typedef struct db_normbuf db_normbuf;
typedef int (*db_normbuf_put)(void *ctx, uint32_t hash, const char *text, size_t len);
db_normbuf *db_normbuf_new(void);
void db_normbuf_free(db_normbuf *b);
size_t db_normbuf_count(const db_normbuf *b);
int db_normbuf_add(db_normbuf *b, uint32_t hash, const char *text, size_t len);
int db_normbuf_flush(db_normbuf *b, db_normbuf_put put, void *ctx);

/* ---- a table's last leaf page, as its appends fill it (writer_tail.c,
 * db_wr_tail_put) ----
 * LMDB 0.9's layout: a page's header is 16 bytes; a leaf node is 8 bytes
 * of header, the key and the value, padded to even, plus its 2-byte
 * pointer; a node of more than half the room goes to overflow pages (the
 * value) and is not counted here. */
#define DB_TAIL_UNKNOWN SIZE_MAX
typedef struct db_tail {
    size_t used; /* bytes of the leaf's nodes, or DB_TAIL_UNKNOWN */
} db_tail;
static inline size_t db_tail_room(size_t page_size) { return page_size > 16 ? page_size - 16 : 0; }
static inline size_t db_tail_node(size_t klen, size_t vlen) { return (10 + klen + vlen + 1) & ~(size_t)1; }
/* a node the count can follow: on the leaf itself */
static inline bool db_tail_small(size_t node, size_t room) { return node <= room / 2; }
/* the node goes onto the known leaf without a split */
static inline bool db_tail_fits(const db_tail *t, size_t node, size_t room)
{
    return t->used != DB_TAIL_UNKNOWN && db_tail_small(node, room) && t->used + node <= room;
}

/* thrindex.c's open chunks and index, here for db_thrindex_add's common
 * case inline (below) */
#define DB_THR_CHUNK_BYTES 1000u
#define DB_THR_PENDING_MAX (4u << 20)
#define DB_THR_HELD_MAX (4u << 20)
typedef struct db_thrix_chunk {
    uint64_t key;
    bool open;
    /* what len + 10 may reach: 0 when not open, else the smaller of cap
     * and DB_THR_CHUNK_BYTES (in open's padding: thrindex.c counts a
     * chunk's size into the memory it holds, which decides when it
     * writes them all) */
    uint32_t lim;
    uint64_t first_ts, first_id, last_ts, last_id;
    unsigned char *buf;
    size_t len, cap;
} db_thrix_chunk;
struct db_thrindex {
    db_thrix_chunk *c;
    size_t n, cap;
    base_map slots; /* tid -> chunk */
    size_t pending; /* bytes in open chunks */
    size_t held;    /* bytes of chunks and their buffers, open or not */
    unsigned key_bytes; /* 4 (a tid) or 8 (an object) */
    bool deferred;      /* the caller flushes when db_thrindex_due */
};
int db_thrindex_add_more(db_thrindex *t, uint32_t trace, uint64_t key, uint64_t ts, uint64_t id,
                         db_thrindex_put put, void *ctx);
/* An event (or node) after its key's last in the key's open chunk, one
 * byte of id delta, the index not due after it -- what db_thrindex_add_more
 * does then, inline in the writer's callers; anything else is asked of
 * it.  Most events and nodes are this case, and the call for every one
 * cost more than the case's work; without always_inline, LTO made it a
 * function of its own. */
static inline __attribute__((always_inline)) bool db_thrindex_add_fast(db_thrindex *t, uint64_t key, uint64_t ts,
                                                                       uint64_t id)
{
    uint32_t i;
    if (base_map_get(&t->slots, key, &i)) {
        db_thrix_chunk *c = &t->c[i];
        if (c->len + 10 <= c->lim && ts >= c->last_ts && id > c->last_id && id - c->last_id < 0x80 &&
            t->pending < DB_THR_PENDING_MAX && t->held <= DB_THR_HELD_MAX) {
            c->buf[c->len++] = (unsigned char)(id - c->last_id);
            t->pending++;
            c->last_ts = ts;
            c->last_id = id;
            return true;
        }
    }
    return false; /* nothing changed */
}
static inline __attribute__((always_inline)) int db_thrindex_add(db_thrindex *t, uint32_t trace, uint64_t key,
                                                                 uint64_t ts, uint64_t id,
                                  db_thrindex_put put, void *ctx)
{
    return db_thrindex_add_fast(t, key, ts, id) ? 0 : db_thrindex_add_more(t, trace, key, ts, id, put, ctx);
}

/* ---- the single-threaded writer: the _back half of each db_writer_*
 * call, which makes it (writer.c forwards a call made on the caller's
 * thread of a threaded writer to the queue; the queue's thread, replay
 * in wqueue.c and the calls of wsync.c, and an unthreaded writer call
 * these, never the forwarding db_writer_* again).  Arguments and results
 * as db_writer_*'s (db.h). ----
 * db_writer_event_back is the writer's half of db_writer_event: blk (or
 * NULL) is a block the front handed over before this event;
 * db_writer_put_block a block handed over alone. */
int db_writer_event_back(db_writer *w, const db_evix *x, const db_evblk *blk, db_error *err);
int db_writer_put_block(db_writer *w, const db_evblk *blk, db_error *err);
int db_writer_node_back(db_writer *w, const db_node *n, uint32_t thread_key, db_error *err);
int db_writer_signature_back(db_writer *w, const db_sig *sig, db_error *err);
int db_writer_edge_back(db_writer *w, const db_edge *e, db_error *err);
int db_writer_norm_back(db_writer *w, uint32_t hash, const char *text, db_error *err);
int db_writer_proc_back(db_writer *w, uint32_t pid, const char *name, db_error *err);
int db_writer_thread_back(db_writer *w, const db_thread *t, db_error *err);
int db_writer_symbol_back(db_writer *w, uint64_t addr, const char *name, db_error *err);
int db_writer_label_back(db_writer *w, const char *key, const char *value, db_error *err); /* checked */
void db_writer_skip_back(db_writer *w);
int db_writer_set_event_node_back(db_writer *w, uint64_t event_id, uint32_t node, db_error *err);
int db_writer_get_thread_back(db_writer *w, uint32_t tid, db_thread *out, db_error *err);
int db_writer_get_proc_back(db_writer *w, uint32_t pid, char *name, size_t len, db_error *err);
int db_writer_commit_back(db_writer *w, db_trace_info *out, db_error *err);
void db_writer_abort_back(db_writer *w);
int db_writer_clear_graph_back(db_writer *w, db_error *err);
int db_writer_add_rule_back(db_writer *w, const char *text, size_t len, uint32_t *seq, db_error *err);
int db_writer_drop_rule_back(db_writer *w, uint32_t seq, db_error *err);
int db_writer_scan_rules_back(db_writer *w, db_rule_cb cb, void *ctx, db_error *err);
int db_writer_scan_time_back(db_writer *w, db_event_cb cb, void *ctx, db_error *err);
int db_writer_scan_source_back(db_writer *w, db_event_cb cb, void *ctx, db_error *err);

/* ---- the writer's thread (wqueue.c) ----
 * start: NULL when no thread can be had (the writer then works unthreaded).
 * here: the caller is the thread (a db_writer_* call then runs at once).
 * begin: runs fn on the thread (it makes the writer and sets its queue).
 * The calls of the writer's API that return nothing the caller needs are
 * queued; run calls fn(ctx) on the thread after them (not if one of them
 * failed: its error instead; run_always: even then).  known_*: what the
 * front knows of the trace's threads (*absent: no such thread). */
typedef struct db_wq db_wq;
db_wq *db_wq_start(bool rebuild); /* rebuild: a rebuild's queue (wqueue.c WQ_BATCHES_REBUILD) */
db_writer *db_wq_begin(db_wq *q, db_writer *(*fn)(db_wq *q, void *ctx), void *ctx);
/* threads and processes the trace has without the queue having carried
 * them (a rebuild's copies) */
void db_wq_know_thread(db_wq *q, const db_thread *t);
void db_wq_know_proc(db_wq *q, uint32_t pid, const char *name);
int db_wq_run(db_wq *q, int (*fn)(void *ctx), void *ctx, db_error *err);
int db_wq_run_always(db_wq *q, int (*fn)(void *ctx), void *ctx, db_error *err);
int db_wq_failed(db_wq *q, db_error *err);
void db_wq_stop(db_wq *q);
/* The caller's interrupt (db_writer_interrupt), read on the front only:
 * as it hands over a batch and while it waits for the thread, every 50
 * ms.  Once the front saw it set, *db_wq_interrupted (the thread's) is
 * true: the flag itself, written by a signal handler, is never read by
 * the thread, which would race with the write. */
void db_wq_interrupt(db_wq *q, const volatile sig_atomic_t *flag);
const atomic_bool *db_wq_interrupted(db_wq *q);
int db_wq_event(db_wq *q, db_event *ev, db_error *err);
/* the front's block being filled, queued to be put (before a scan, a
 * clearing, the commit) */
int db_wq_hand_block(db_wq *q, db_error *err);
uint64_t db_wq_next_event_id(const db_wq *q);
int db_wq_node(db_wq *q, const db_node *n, uint32_t thread_key, db_error *err);
int db_wq_edge(db_wq *q, const db_edge *e, db_error *err);
int db_wq_signature(db_wq *q, const db_sig *s, db_error *err);
/* db_wq_node and db_wq_signature as one op */
int db_wq_node_sig(db_wq *q, const db_node *n, uint32_t thread_key, const db_sig *s, db_error *err);
int db_wq_norm(db_wq *q, uint32_t hash, const char *text, db_error *err);
int db_wq_proc(db_wq *q, uint32_t pid, const char *name, db_error *err);
int db_wq_thread(db_wq *q, const db_thread *t, db_error *err);
int db_wq_symbol(db_wq *q, uint64_t addr, const char *name, db_error *err);
int db_wq_label(db_wq *q, const char *key, const char *value, db_error *err);
void db_wq_skip(db_wq *q);
int db_wq_set_event_node(db_wq *q, uint64_t event_id, uint32_t node, db_error *err);
const db_thread *db_wq_known_thread(const db_wq *q, uint32_t tid, bool *absent);
const char *db_wq_known_proc(const db_wq *q, uint32_t pid, bool *absent);

/* the writer's calls that wait for its thread (wsync.c): as db_writer_* */
int db_wsync_get_thread(db_wq *q, db_writer *w, uint32_t tid, db_thread *out, db_error *err);
int db_wsync_get_proc(db_wq *q, db_writer *w, uint32_t pid, char *name, size_t len, db_error *err);
int db_wsync_commit(db_wq *q, db_writer *w, db_trace_info *out, db_error *err);
void db_wsync_abort(db_wq *q, db_writer *w);
int db_wsync_clear_graph(db_wq *q, db_writer *w, db_error *err);
int db_wsync_add_rule(db_wq *q, db_writer *w, const char *text, size_t len, uint32_t *seq, db_error *err);
int db_wsync_drop_rule(db_wq *q, db_writer *w, uint32_t seq, db_error *err);
int db_wsync_scan_rules(db_wq *q, db_writer *w, db_rule_cb cb, void *ctx, db_error *err);
int db_wsync_scan_time(db_wq *q, db_writer *w, db_event_cb cb, void *ctx, db_error *err);

/* ---- the writer's threads and processes by id (names.c) ----
 * A lookup that misses is for the archive to answer; set keeps a copy
 * (or nothing, past its bound). */
typedef struct db_names {
    base_map thr_ix, proc_ix;
    db_thread *thr;
    char (*proc)[DB_NAME_MAX];
    size_t nthr, thr_cap, nproc, proc_cap;
} db_names;
void db_names_free(db_names *c);
const db_thread *db_names_thread(const db_names *c, uint32_t tid);
void db_names_set_thread(db_names *c, const db_thread *t);
const char *db_names_proc(const db_names *c, uint32_t pid);
void db_names_set_proc(db_names *c, uint32_t pid, const char *name, size_t len);
/* A thread record as the archive keeps it: the name cut to DB_NAME_MAX - 1
 * bytes, zeroes after it and in the padding (never the caller's stack). */
db_thread db_thread_stored(const db_thread *t);
/* Copies n bytes of a name into buf (len bytes), cut and NUL-terminated. */
void db_name_copy(char *buf, size_t len, const char *name, size_t n);

/* ---- each thread's top nodes while a graph is written (nodetop.c) ---- */
typedef db_thrindex_put db_put_fn;
typedef struct db_nodetop db_nodetop;
db_nodetop *db_nodetop_new(void);
void db_nodetop_free(db_nodetop *t);
/* key: db_thread_key(n->thread, n->kind); 0, -1 out of memory */
int db_nodetop_add(db_nodetop *t, const db_node *n, uint32_t key);
/* One put per thread key and field; 0, or what put returned. */
int db_nodetop_flush(db_nodetop *t, uint32_t trace, db_put_fn put, void *ctx);
int db_nodetop_decode(const void *data, size_t len, db_top *out); /* 0, -1 damaged */

/* sigindex.c: the signature index in chunks.  add: a node's signature
 * (nodes of a thread key in any order); flush: every open chunk.  0, -1
 * (put failed), -2 out of memory.  The chunk holding node N starts in
 * [N - DB_SIG_SPAN, N]. */
#define DB_SIG_SPAN 4096u
typedef struct db_sigindex db_sigindex;
db_sigindex *db_sigindex_new(void);
void db_sigindex_free(db_sigindex *s);
int db_sigindex_add(db_sigindex *s, uint32_t trace, const db_sig *sig, db_put_fn put, void *ctx);
int db_sigindex_flush(db_sigindex *s, uint32_t trace, db_put_fn put, void *ctx);
/* A chunk's signatures: next gives 1 (out filled), 0 (end), -1 (damaged). */
typedef struct db_sigchunk {
    const unsigned char *p, *end;
    db_sig sig; /* the last one read */
    bool bad;
} db_sigchunk;
void db_sigchunk_begin(db_sigchunk *it, const MDB_val *k, const MDB_val *v);
int db_sigchunk_next(db_sigchunk *it, db_sig *out);

/* A chunk's event ids, first to last. */
typedef struct db_thrchunk {
    uint64_t first_ts, next;
    const unsigned char *p, *end;
    bool started;
} db_thrchunk;
void db_thrchunk_begin(db_thrchunk *it, const void *key, size_t klen, const void *val, size_t vlen);
bool db_thrchunk_next(db_thrchunk *it, uint64_t *id);

/* codec.c: edge keys; node records (encode: at most DB_NODE_REC_MAX bytes;
 * decode: 0, or -1 damaged) */
#define DB_NODE_REC_MAX (13 * 10 + 2 * DB_NAME_MAX)
size_t db_node_encode(const db_node *n, unsigned char *buf);
int db_node_decode(const void *data, size_t len, uint32_t id, db_node *out);
/* codec.c: edges.  A db_edge_rec is an edge as one table holds it: a is
 * the node the table is keyed by (to in edges_in, from in edges_out). */
typedef struct db_edge_rec {
    uint32_t a, b;
    uint8_t kind;
    uint64_t from_event, to_event;
} db_edge_rec;
#define DB_EDGE_BLOCK_SHIFT 4
#define DB_EDGE_BLOCK_NODES (1u << DB_EDGE_BLOCK_SHIFT)
#define DB_EDGE_REC_MAX 32 /* bytes of one encoded edge, at most */
/* the writer's sort key of an edge (DB_EDGE_KEY_LEN bytes), and back */
void db_edge_key(unsigned char *k, uint32_t trace, uint32_t a, uint32_t b, const db_edge *e);
void db_edge_rec_from_key(const unsigned char *k, db_edge_rec *r);
void db_edge_from_rec(const db_edge_rec *r, bool in, db_edge *e);
/* the order of the edge keys' bytes (codec.c); inline: the writer's
 * sort and merges compare runs of a node's edges with it */
static inline int db_edge_rec_cmp(const db_edge_rec *x, const db_edge_rec *y)
{
    if (x->a != y->a)
        return x->a < y->a ? -1 : 1;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->from_event != y->from_event)
        return x->from_event < y->from_event ? -1 : 1;
    if (x->to_event != y->to_event)
        return x->to_event < y->to_event ? -1 : 1;
    return 0;
}
/* the block key (8 bytes) of a node's edges; a block's value from recs
 * sorted by db_edge_rec_cmp (buf: DB_EDGE_REC_MAX bytes per rec) */
void db_edgeblk_key(unsigned char *k, uint32_t trace, uint32_t node);
size_t db_edgeblk_encode(const db_edge_rec *r, size_t n, unsigned char *buf);
/* reading a block: next gives 1 (r filled), 0 (end) or -1 (damaged) */
typedef struct db_edgeblk_it {
    const unsigned char *p, *end;
    uint32_t base;
    uint64_t prev;
    bool bad;
} db_edgeblk_it;
void db_edgeblk_begin(db_edgeblk_it *it, const MDB_val *k, const MDB_val *v);
int db_edgeblk_next(db_edgeblk_it *it, db_edge_rec *r);

/* keysort.c: a batch's index keys, handed out in key order (table, then
 * memcmp of the key) at its end.  add: -1 when out of memory or the key
 * is longer than DB_KEYSORT_MAX.  add_edge: an edge of edges_in (side 0)
 * or edges_out (1), -1 out of memory.  drain: cb for every key, in order,
 * then ecb for every block of each side's edges (side 0 first; recs of
 * one block, in db_edge_rec_cmp order, each once), then empty; stops at
 * the first non-zero callback (returned), -1 out of memory.  count: keys
 * and edges. */
#define DB_KEYSORT_MAX 30
typedef struct db_keysort db_keysort;
typedef int (*db_keysort_cb)(void *ctx, int dbi, const unsigned char *k, size_t len);
typedef int (*db_keysort_edges_cb)(void *ctx, int side, const db_edge_rec *r, size_t n);
db_keysort *db_keysort_new(void);
void db_keysort_free(db_keysort *ks);
size_t db_keysort_count(const db_keysort *ks);
int db_keysort_add(db_keysort *ks, int dbi, const unsigned char *k, size_t len);
int db_keysort_add_edge(db_keysort *ks, int side, const db_edge_rec *r);
/* the edge r of edges_in and, a and b swapped, of edges_out: add_edge's
 * two calls in one */
int db_keysort_add_edge_pair(db_keysort *ks, const db_edge_rec *r);
/* ... when both tables have room for it, without a call; false (nothing
 * added) when one would grow */
bool db_keysort_add_edge_pair_fast(db_keysort *ks, const db_edge_rec *r);
int db_keysort_drain(db_keysort *ks, db_keysort_cb cb, db_keysort_edges_cb ecb, void *ctx);

/* ---- a batch's chunks, by run (chunkq.c) ----
 * add: a chunk of table dbi whose key's first plen bytes name its run
 * (hash: of those bytes, and dbi; equal runs, equal hashes); *fresh: the
 * run's first chunk since the batch began (end_batch), drained or not;
 * drain: cb for every chunk, the runs in (dbi, key part) order, a run's
 * chunks in key order, then empty; stops at the first non-zero callback
 * (returned), -1 out of memory.  end_batch: the runs forgotten (after
 * the batch's last drain). */
typedef struct db_chunkq db_chunkq;
typedef int (*db_chunkq_cb)(void *ctx, int dbi, MDB_val *key, MDB_val *val);
db_chunkq *db_chunkq_new(void);
void db_chunkq_free(db_chunkq *q);
size_t db_chunkq_count(const db_chunkq *q);
size_t db_chunkq_bytes(const db_chunkq *q); /* of the keys and values held */
int db_chunkq_add(db_chunkq *q, uint64_t hash, int dbi, const unsigned char *k, size_t klen, size_t plen, const void *v,
                  size_t vlen, bool *fresh);
int db_chunkq_drain(db_chunkq *q, db_chunkq_cb cb, void *ctx);
void db_chunkq_end_batch(db_chunkq *q);

/* trace-prefixed range scans shared by reader.c and writer.c */
typedef int (*db_key_cb)(void *ctx, const MDB_val *key, const MDB_val *val);
int db_scan_prefix(MDB_txn *txn, MDB_dbi dbi, const unsigned char *lo, size_t lo_len,
                   const unsigned char *hi, size_t hi_len, db_key_cb cb, void *ctx, db_error *err);

#endif
