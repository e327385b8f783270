/* db/writer_int.h -- what the files of the single-threaded writer share
 * (not a public header; db/db_int.h is db/'s): struct db_writer, a part
 * per job, and the inline paths every put and safe point takes.
 *
 * The writer makes one ingest (or rebuild, or catalog change): a new
 * trace, its events and indexes, then its nodes and edges, written in
 * batches of LMDB transactions so that memory stays bounded whatever the
 * size of the trace.  The catalog says DB_TRACE_INGESTING until
 * db_writer_commit: readers never see part of a trace, and what a killed
 * ingest leaves is deleted by the next writer.  Its files, by job:
 *
 *   writer.c          the public calls: each forwards to the writer's
 *                     thread (wqueue.c, wsync.c) when made on the caller's
 *                     thread of a threaded writer, else calls its
 *                     single-threaded half (db_writer_*_back)
 *   writer_life.c     lifecycle and rebuild: the lock and transaction,
 *                     begin, open, rebuild's copy and swap, commit, abort,
 *                     what killed writers left (reclaim), catalog writers
 *   writer_records.c  the trace's small tables: threads, processes,
 *                     symbols, labels, rules
 *   writer_events.c   event blocks and patches: blocks, the time index,
 *                     the nodes set into stored events, scans of events
 *   writer_nodes.c    node records, put in id order as a batch ends
 *   writer_chunks.c   the chunked indexes (thread, node-thread, object,
 *                     signature), the top lists and the dictionary
 *   writer_keys.c     deferred key sorts: index keys and edge blocks put
 *                     in key order as a batch ends
 *   writer_tail.c     tail appends: a put at a table's end, its cursor
 *                     and the leaf it fills
 *   writer_batch.c    batch sizing: when a batch ends, its commit, and the
 *                     map trimmed as the writer reads
 *
 * Names: db_wr_* are shared by these files alone; db_writer_*_back (and
 * db_writer_put_block) are the halves the queue's thread calls (db_int.h). */
#ifndef ARGUSQ_DB_WRITER_INT_H
#define ARGUSQ_DB_WRITER_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "db_int.h"

enum { IX_KEY_MAX = 32 };

/* Puts per transaction in a batched ingest, then a commit: the bound on
 * a batch's dirty pages, and so on peak RSS (docs/PERFORMANCE.md). */
#define DB_BATCH_OPS 600000u
/* At most DB_BATCH_KEYS index keys (or edges of a table) wait to be
 * sorted (keysort.c): 80 bytes each until the drain (an edge too), and
 * the pages the drain dirties are counted (db_wr_count_put) only then.  A
 * batch usually ends on its pages first; but when the graph's edges came
 * in a burst of their own, a batch of keys and nothing else, bounded by
 * its puts alone, made peak memory grow with the trace (its sort buffers
 * and LMDB's dirty pages: docs/PERFORMANCE.md). */
#define DB_BATCH_KEYS 131072u

/* The calling thread, told apart from every other live thread by its
 * thread pointer (a load of %fs on x86-64; glibc's pthread_self returns
 * the same pointer), not by a call to pthread_self through the PLT:
 * front() asks it for every event, node and edge of the graph's thread. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_thread_pointer) && (defined(__x86_64__) || defined(__aarch64__))
#define WRITER_TP 1
#endif
#endif
#ifdef WRITER_TP
typedef const void *writer_tid;
static inline writer_tid writer_self(void) { return __builtin_thread_pointer(); }
static inline bool writer_same(writer_tid a, writer_tid b) { return a == b; }
#else
typedef pthread_t writer_tid;
static inline writer_tid writer_self(void) { return pthread_self(); }
static inline bool writer_same(writer_tid a, writer_tid b) { return pthread_equal(a, b); }
#endif

/* the object indexes: events by port, block and timer address */
enum { OIX_PORT, OIX_BLOCK, OIX_TIMER, OIX__COUNT };

/* The writer's state: the trace, its transaction and the writer's thread
 * first, then a part per job of the writer. */
struct db_writer {
    db_archive *a;
    MDB_txn *txn;
    db_trace_info info;
    bool existing; /* db_writer_open: a committed trace, not the newest
                      keys, so nothing may be appended */
    bool batched;  /* commit every DB_BATCH_OPS puts (a new trace) */
    bool flushed;  /* a batch was committed: an abort must delete it */
    bool in_scan;  /* db_writer_scan_time flushes at its own safe points */
    bool rebuild;                /* db_writer_rebuild: a hidden copy of ... */
    db_trace_info replaces;      /* ... this trace, which it replaces at commit */
    int lock_fd;                 /* holds the archive's writer lock */
    db_names names;              /* threads and processes written or read */
    const volatile sig_atomic_t *interrupt; /* db_writer_interrupt: looked at as a batch ends */
    const atomic_bool *relayed; /* a threaded writer's: the queue's copy of it (db_wq_interrupted) */
    db_wq *q;                    /* the writer's thread (wqueue.c), or NULL */
    writer_tid q_thread;         /* ... which is this thread (front) */

    /* tail appends: a table's last key, cursor and leaf */
    struct {
        /* last key written per table: a larger key is appended (MDB_APPEND),
         * which keeps the B-tree pages full and skips the search */
        unsigned char last[DBI__COUNT][IX_KEY_MAX];
        size_t last_len[DBI__COUNT];
        MDB_cursor *cur[DBI__COUNT]; /* a write cursor per table, for appends:
                                        mdb_put would set one up every call */
        db_tail leaf[DBI__COUNT];    /* each table's last leaf page, as far as
                                        its appends tell (db_wr_tail_put) */
        size_t page_room;            /* bytes of nodes a leaf page holds */
    } tail;

    /* batch sizing: when a batch ends (db_wr_batch_full); the map's trim */
    struct {
        uint64_t ops;  /* puts in the current transaction */
        uint64_t touched, appended; /* of them: puts into a page (not at the
                                       end of a table), in 1/1024 pages, and
                                       bytes appended */
        uint32_t touch_w;   /* what such a put counts: 1024, less in a sorted run */
        /* what the work a commit does first cost in the last: pages
         * guessed per event patch, per byte of node records, per index key
         * (db_wr_batch_full) */
        double patch_pages, node_pages, key_pages;
        base_map runs;    /* the chunk runs the batch put into (count_chunk) */
        uint64_t max_ops;   /* DB_BATCH_OPS, or $ARGUSQ_BATCH_OPS (tests) */
        bool nosync;        /* $ARGUSQ_BATCH_SYNC=0: batches unsynced (make bench) */
        uint64_t untrimmed; /* puts (or bytes of pages touched) since the last trim */
        uint64_t trim_base; /* the file pages mapped after it (db_wr_trim_every) */
    } batch;

    /* deferred key sorts: index keys and edges, put sorted as a batch ends */
    struct {
        db_keysort *ks;              /* index keys that do not arrive in order
                                        (keysort.c); made on the first */
        size_t nkeys;                /* ... and how many wait there (keys and
                                        edges of either table): db_wr_batch_full
                                        reads it at every safe point */
        db_edge_rec *emerge;         /* a stored block merged with new edges */
        size_t emerge_cap;
        unsigned char *ebuf;         /* a block's value being encoded */
        size_t ebuf_cap;
    } keys;

    /* the chunked indexes, the top lists and the dictionary */
    struct {
        db_thrindex *thr;    /* the thread index's open chunks (thrindex.c) */
        db_thrindex *nthr;   /* node_thread's: a thread's nodes, the same way */
        db_thrindex *oix[3]; /* the object indexes', by OIX_* */
        db_sigindex *sigs;   /* the signature index's open chunks (sigindex.c) */
        db_nodetop *top;     /* each thread key's longest waits and runs (nodetop.c) */
        int thr_rc;          /* the LMDB error of a chunk's put */
        bool chunk_commits;  /* a batch may end between chunks (chunk_put): the
                                final commit's, flush_objects */
        bool objects_due;    /* an object index said it holds too much (db_wr_put_obj) */
        db_normbuf *norms;   /* new normal forms, put sorted (normbuf.c) */
        bool norms_due;      /* ... and too many wait (db_writer_norm) */
        bool thr_failed;     /* ... and a batch's commit failed there: thr_err */
        db_error thr_err;
        db_chunkq *chunks;   /* a batch's chunks, put at its end (chunk_put) */
    } ix;

    /* event blocks and patches */
    struct {
        db_evfront front;    /* an unthreaded writer's events into blocks (evfront.c) */
        db_evblock_enc *enc; /* a block re-encoded with its events' nodes (db_wr_apply_patches) */
        db_evblock scanblk;  /* db_writer_scan_time's block */
        db_evblock patchblk; /* a block being given its events' nodes */
        struct patch { uint64_t id; uint32_t node; } *patch; /* nodes to set */
        size_t npatch, patch_cap;
        bool patch_unsorted;
        uint64_t last_ts;   /* of the previous event: is the trace in time order? */
    } ev;

    /* node records */
    struct {
        unsigned char *nodes; /* node records waiting to go in in id order */
        size_t nodes_len, nodes_cap;
        struct nref { uint32_t id, off, len; } *nref;
        size_t nnref, nref_cap;
    } nrec;
};

/* ---- tail appends (writer_tail.c) ---- */

/* k is past the last key this writer put in table dbi (a new trace's
 * keys are past every older trace's); never for a committed trace's
 * writer (existing), whose keys are not the newest. */
bool db_wr_past_last(const db_writer *w, int dbi, const unsigned char *k, size_t klen);

/* MDB_APPEND when k is past the last key this writer put in the table (a
 * new trace's keys are past every older trace's), else 0. */
static inline unsigned db_wr_append_flag(db_writer *w, int dbi, const unsigned char *k, size_t klen)
{
    if (!db_wr_past_last(w, dbi, k, klen))
        return 0;
    memcpy(w->tail.last[dbi], k, klen);
    w->tail.last_len[dbi] = klen;
    return MDB_APPEND;
}

/* An append through the table's cursor, onto its last leaf while the
 * leaf's bytes say the node fits (writer_tail.c says why); else
 * db_wr_tail_split puts it with MDB_APPEND. */
__attribute__((noinline)) int db_wr_tail_split(db_writer *w, int dbi, MDB_val *key, MDB_val *val);

/* Inline, and db_wr_put_as with it: as calls, db_wr_put_nodes,
 * db_wr_put_as and db_wr_tail_put cost a frame each for every node
 * record, chunk and block of edges appended. */
static inline __attribute__((always_inline)) int db_wr_tail_put(db_writer *w, int dbi, MDB_val *key, MDB_val *val)
{
    db_tail *t = &w->tail.leaf[dbi];
    size_t node = db_tail_node(key->mv_size, val->mv_size);
    if (!w->tail.cur[dbi] || !db_tail_fits(t, node, w->tail.page_room))
        return db_wr_tail_split(w, dbi, key, val);
    t->used += node;
    return mdb_cursor_put(w->tail.cur[dbi], key, val, 0);
}

/* Any other write to a table: its last leaf is no longer known. */
static inline void db_wr_tail_lost(db_writer *w, int dbi) { w->tail.leaf[dbi].used = DB_TAIL_UNKNOWN; }

/* Every table's last leaf unknown (after deletes, or a caller's own puts). */
void db_wr_tails_lost(db_writer *w);
/* Cursors die with their transaction (and what their appends knew of
 * the last leaves: the next transaction copies them anew). */
void db_wr_close_cursors(db_writer *w);
/* A put of key k into table dbi: appended when k is past the table's
 * last key (db_wr_append_flag), else put where it belongs. */
int db_wr_put(db_writer *w, int dbi, const unsigned char *k, size_t klen, const void *v, size_t vlen, db_error *err);

/* ---- batch sizing (writer_batch.c) ---- */

/* What a batch's dirty pages are guessed from (db_wr_batch_full): LMDB copies
 * every page a transaction changes into memory of its own until the
 * commit, and keeps those buffers for the next: the largest batch of an
 * ingest sets its memory to the end.  A put into the middle of a table
 * dirties a page (an upper bound: two puts can share one); an append
 * fills pages in turn. */
static inline void db_wr_count_put(db_writer *w, unsigned flags, size_t bytes)
{
    if (flags == MDB_APPEND) {
        w->batch.appended += bytes + 10;
    } else {
        w->batch.touched += w->batch.touch_w;
        /* a sorted run's puts fill its pages until they split: their
         * bytes land on new pages, half full */
        if (w->batch.touch_w < 1024) {
            w->batch.appended += 2 * (bytes + 10);
        }
    }
}

/* A run of n puts in key order into table dbi: each counts its share of
 * the table's pages (the comment in writer_batch.c says why). */
void db_wr_sorted_run(db_writer *w, int dbi, size_t n);
/* the map trimmed every so many puts that search a table (vlen: the
 * value's bytes) */
void db_wr_trim_every(db_writer *w, size_t vlen);

/* db_wr_put, given db_wr_append_flag's answer for the key */
static inline __attribute__((always_inline)) int db_wr_put_as(db_writer *w, int dbi, const unsigned char *k,
                                                              size_t klen, const void *v, size_t vlen, unsigned flags,
                                                              db_error *err)
{
    MDB_val key = {klen, (void *)k}, val = {vlen, (void *)v};
    if (flags != MDB_APPEND)
        db_wr_trim_every(w, vlen);
    w->batch.ops++;
    int rc;
    db_wr_count_put(w, flags, klen + vlen);
    if (flags == MDB_APPEND)
        rc = db_wr_tail_put(w, dbi, &key, &val);
    else {
        db_wr_tail_lost(w, dbi);
        rc = mdb_put(w->txn, w->a->dbi[dbi], &key, &val, flags);
    }
    return rc ? db_lmdb_fail(err, rc, "write") : 0;
}

/* -1 with err "interrupted" once the writer's interrupt is set; else 0. */
int db_wr_interrupted(const db_writer *w, db_error *err);
/* Commits the batch so far and starts the next transaction. */
int db_wr_flush(db_writer *w, db_error *err);
/* A commit that failed: its message, -1. */
int db_wr_commit_fail(db_writer *w, int rc, db_error *err);

/* The commit of a batch of an ingest or a rebuild, not made once the
 * writer is interrupted: its caller fails, and the abort deletes what
 * earlier batches committed.  (db_wr_flush alone is also the abort's:
 * reclaim commits its deletes with it, interrupted or not.) */
static inline int db_wr_flush_batch(db_writer *w, db_error *err)
{
    return db_wr_interrupted(w, err) || db_wr_flush(w, err) ? -1 : 0;
}

/* After a put of a run that may end the batch between two
 * (ix.chunk_commits): the commit's failure is kept for the run's caller
 * (db_wr_thr_fail); 0, -1. */
int db_wr_between_puts(db_writer *w);
/* the batch's pages as guessed, at or past DB_BATCH_PAGES (writer_batch.c) */
bool db_wr_pages_full(const db_writer *w);

/* The batch is full: max_ops puts, DB_BATCH_KEYS keys waiting for their
 * sort, or its guessed pages at DB_BATCH_PAGES. */
static inline __attribute__((always_inline)) bool db_wr_batch_full(const db_writer *w)
{
    return w->batch.ops >= w->batch.max_ops || w->keys.nkeys >= DB_BATCH_KEYS || db_wr_pages_full(w);
}

/* A batch that ends at this safe point. */
static inline __attribute__((always_inline)) bool db_wr_batch_ends(const db_writer *w)
{
    return w->batched && !w->in_scan && w->txn && db_wr_batch_full(w);
}

/* A batch that may end here (db_wr_batch_ends asked in full): the fast
 * paths of an event and an edge leave it to their whole paths, which ask
 * (db_wr_maybe_flush). */
static inline __attribute__((always_inline)) bool db_wr_batch_near(const db_writer *w)
{
    return w->batched && db_wr_batch_full(w);
}

/* The object indexes' or the dictionary's writes a safe point found due
 * (writer_chunks.c). */
__attribute__((noinline)) int db_wr_flush_due(db_writer *w, db_error *err);

/* A safe point: between two events, edges or nodes, where a batch may end.
 * Inlined into its callers with db_wr_batch_full, the same tests in the same
 * order, the commits out of line: as calls, their prologues and
 * epilogues, and the loads of w's fields the caller already holds, ran at
 * every safe point. */
static inline __attribute__((always_inline)) int db_wr_maybe_flush(db_writer *w, db_error *err)
{
    if ((w->ix.objects_due || w->ix.norms_due) && !w->in_scan && db_wr_flush_due(w, err))
        return -1;
    return db_wr_batch_ends(w) ? db_wr_flush_batch(w, err) : 0;
}

/* ---- deferred key sorts (writer_keys.c) ---- */

/* An index key that does not arrive in key order (the time index of a
 * trace out of time order), put sorted as the batch ends; 0, -1. */
int db_wr_put_later(db_writer *w, int dbi, const unsigned char *k, size_t klen, db_error *err);
/* The keys and edges waiting, put in key order; 0, -1. */
int db_wr_drain_later(db_writer *w, db_error *err);

/* ---- the chunked indexes, top lists and dictionary (writer_chunks.c) ---- */

/* put callbacks of the thread and node-thread indexes (thrindex.c) */
int db_wr_thr_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen);
int db_wr_nthr_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen);

/* A chunked index's add or flush that failed (rc: -2 out of memory, else
 * its put's, whose LMDB error is ix.thr_rc): err filled, -1; the error
 * of a batch's commit between two puts (db_wr_between_puts) first. */
static inline int db_wr_thr_fail(db_writer *w, int rc, db_error *err)
{
    if (w->ix.thr_failed) {
        *err = w->ix.thr_err;
        return -1;
    }
    return rc == -2 ? db_fail_oom(err) : db_lmdb_fail(err, w->ix.thr_rc, "write");
}

/* An event's object index entry (ix: OIX_*); 0, -1. */
int db_wr_put_obj(db_writer *w, int ix, const db_evix *x, db_error *err);
/* The chunks the batch holds back, put run by run; 0, -1. */
int db_wr_drain_chunks(db_writer *w, db_error *err);
/* What the final commit writes of the indexes: every open chunk of each,
 * the top lists, the dictionary's waiting forms; 0, -1. */
int db_wr_flush_indexes(db_writer *w, db_error *err);

/* ---- event blocks and patches (writer_events.c) ---- */

/* The nodes db_writer_set_event_node collected, put into their blocks;
 * 0, -1. */
int db_wr_apply_patches(db_writer *w, db_error *err);
/* The unthreaded front's block being filled, put; 0, -1. */
int db_wr_hand_block(db_writer *w, db_error *err);
/* db_writer_event on an unthreaded writer (or on the writer's thread):
 * the event's id and block (evfront.c), then db_writer_event_back. */
__attribute__((noinline)) int db_writer_event_here(db_writer *w, db_event *ev, db_error *err);

/* ---- node records (writer_nodes.c) ---- */

/* The node records waiting, put in id order; 0, -1. */
int db_wr_put_nodes(db_writer *w, db_error *err);

/* ---- lifecycle (writer_life.c) ---- */

/* The writer of a new trace (begin) or of a rebuild's hidden copy, made
 * on the calling thread (writer.c's db_writer_begin and _rebuild call
 * them, there or on the writer's thread). */
db_writer *db_writer_begin_here(db_archive *a, const char *name, const char *format, const char *source,
                                db_error *err);
db_writer *db_writer_rebuild_here(db_archive *a, const char *trace, db_error *err);

#endif
