/* db/writer.c -- one ingest: a new trace, its events and indexes, then
 * its nodes and edges, written in batches of LMDB transactions so that
 * memory stays bounded whatever the size of the trace.  The catalog says
 * DB_TRACE_INGESTING until db_writer_commit: readers never see part of a
 * trace, and what a killed ingest leaves is deleted by the next writer. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "db_int.h"

enum { IX_KEY_MAX = 32 };

/* Puts per transaction in a batched ingest: about 150,000 events, some
 * 40 MB of dirty pages, then a commit (make bench: peak RSS). */
#define DB_BATCH_OPS 600000u
/* At most DB_BATCH_KEYS index keys (or edges of a table) wait to be
 * sorted (keysort.c): 80 bytes each until the drain (an edge too), and
 * the pages the drain dirties are counted (count_put) only then.  A
 * batch usually ends on its pages with some 110k keys; but when the
 * graph's edges came in a burst of their own (a synced ingest at 19M
 * events) a batch of 600k keys and nothing else took 62 MB of sort
 * buffers and 32 MB of LMDB's dirty pages, and peak memory grew with
 * the trace. */
#define DB_BATCH_KEYS 131072u

/* Keys deleted per transaction when a hidden trace is deleted (clear.c). */
#define DB_CLEAR_BUDGET (8u << 20) /* bytes of leaf entries a step deletes (clear.c) */

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
                                        its appends tell (tail_put) */
        size_t page_room;            /* bytes of nodes a leaf page holds */
    } tail;

    /* batch sizing: when a batch ends (batch_full), and the map's trim */
    struct {
        uint64_t ops;  /* puts in the current transaction */
        uint64_t touched, appended; /* of them: puts into a page (not at the
                                       end of a table), in 1/1024 pages, and
                                       bytes appended */
        uint32_t touch_w;   /* what such a put counts: 1024, less in a sorted run */
        /* what the work a commit does first cost in the last: pages guessed
         * per event patch, per byte of node records, per index key (batch_full) */
        double patch_pages, node_pages, key_pages;
        /* batch_full's pages in whole numbers (pages_recount): what the
         * batch may still add, in 1/4096 pages, before its page test can be
         * true; each count above takes its share off as it grows */
        int64_t pages_left;
        int64_t patch_w, node_w, key_w; /* the three above in 1/4096 pages, rounded up */
        bool pages_unbounded;           /* one of them is not (pages_weigh) */
        base_slots runs;    /* the chunk runs the batch put into (count_chunk) */
        uint64_t max_ops;   /* DB_BATCH_OPS, or $ARGUSQ_BATCH_OPS (tests) */
        bool nosync;        /* $ARGUSQ_BATCH_SYNC=0: batches unsynced (make bench) */
        uint64_t untrimmed; /* puts (or bytes of pages touched) since the last trim */
        uint64_t trim_base; /* the file pages mapped after it (trim_every) */
    } batch;

    /* deferred key sorts: index keys and edges, put sorted as a batch ends */
    struct {
        db_keysort *ks;              /* index keys that do not arrive in order
                                        (keysort.c); made on the first */
        size_t nkeys;                /* ... and how many wait there (keys and
                                        edges of either table): batch_full
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
        bool objects_due;    /* an object index said it holds too much (put_obj) */
        db_normbuf *norms;   /* new normal forms, put sorted (normbuf.c) */
        bool norms_due;      /* ... and too many wait (db_writer_norm) */
        bool thr_failed;     /* ... and a batch's commit failed there: thr_err */
        db_error thr_err;
        db_chunkq *chunks;   /* a batch's chunks, put at its end (chunk_put) */
    } ix;

    /* event blocks and patches */
    struct {
        db_evfront front;    /* an unthreaded writer's events into blocks (evfront.c) */
        db_evblock_enc *enc; /* a block re-encoded with its events' nodes (apply_patches) */
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

static int scan_blocks(db_writer *w, uint32_t trace, db_event_cb cb, void *ctx, db_error *err);
static int hand_block(db_writer *w, db_error *err);

/* A call made on a threaded writer from another thread than its own: it
 * goes through the queue (wqueue.c), and the writer's thread makes it. */
/* The thread's id is the writer's own copy, compared inline, not asked of
 * db_wq_here (wqueue.c) by a call: front() runs for every event, event id,
 * node, signature and edge the graph's thread hands the writer. */
static bool front(const db_writer *w) { return w->q && !writer_same(writer_self(), w->q_thread); }

/* Each public call tests front() and hands the call to the queue (db_wq_*,
 * db_wsync_*) or makes it at once through its single-threaded half
 * (db_writer_*_back, db_int.h); the queue's thread calls those halves
 * directly.  The calls the graph makes for every event, node, signature
 * and edge are inlined where they are made; the others are kept out of
 * line (noinline), a call each as the graph's code expects: inlined, the
 * front test and the queue's own answers (db_wsync_get_thread's names,
 * say) grew the graph's per-event functions (node_append) by hundreds of
 * bytes for calls most events never make. */


/* Puts a key, appending when it sorts after the last key this writer put
 * into the same table (every key of a new trace sorts after older traces). */
/* MDB_APPEND when k is past the last key this writer put in the table (a
 * new trace's keys are past every older trace's), else 0. */
/* memcmp of n bytes, 8 at a time as big-endian words: the keys are 8 to
 * 28 bytes, too short for a call to memcmp (and its result's use) to pay
 * on every append */
static int key_cmp(const unsigned char *a, const unsigned char *b, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x = db_get_be64(a + i), y = db_get_be64(b + i);
        if (x != y)
            return x < y ? -1 : 1;
    }
    for (; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

static bool past_last(const db_writer *w, int dbi, const unsigned char *k, size_t klen)
{
    if (klen > IX_KEY_MAX || w->existing)
        return false;
    size_t n = klen < w->tail.last_len[dbi] ? klen : w->tail.last_len[dbi];
    int cmp = key_cmp(k, w->tail.last[dbi], n);
    return !(w->tail.last_len[dbi] && cmp <= 0 && !(cmp == 0 && klen > w->tail.last_len[dbi]));
}

static unsigned append_flag(db_writer *w, int dbi, const unsigned char *k, size_t klen)
{
    if (!past_last(w, dbi, k, klen))
        return 0;
    memcpy(w->tail.last[dbi], k, klen);
    w->tail.last_len[dbi] = klen;
    return MDB_APPEND;
}

static void trim_every(db_writer *w, size_t vlen);

/* An append through the table's cursor.  LMDB's MDB_APPEND first finds the
 * table's last leaf again from the root (mdb_cursor_last searches whenever
 * the tree has more than one level), a good part of what an append
 * costs.  A put without the flag from a cursor left on the last leaf
 * compares the key with that leaf's first and last and, its parents being
 * the last of theirs, takes the end of the leaf with no search: the same
 * node in the same place -- but when the leaf is full, LMDB splits it in
 * the middle, where MDB_APPEND would start a new leaf and leave this one
 * full.  So the leaf's bytes are counted (db_tail_*, db_int.h): a put that
 * fits goes in without the flag, one that does not with MDB_APPEND, which
 * splits as an append does.  The pages come out as MDB_APPEND alone makes
 * them (test_db compares the page counts), and whatever the count says,
 * LMDB puts every key where it belongs: a wrong count could only leave
 * pages emptier.  The flagless put is not free (mdb_cursor_set still
 * compares the key), but cheaper than the search from the root. */
static __attribute__((noinline)) int tail_split(db_writer *w, int dbi, MDB_val *key, MDB_val *val);

/* Inline, and put_as with it: as calls, put_nodes, put_as and tail_put
 * cost a frame each for every node record, chunk and block of edges
 * appended. */
static inline __attribute__((always_inline)) int tail_put(db_writer *w, int dbi, MDB_val *key, MDB_val *val)
{
    db_tail *t = &w->tail.leaf[dbi];
    size_t node = db_tail_node(key->mv_size, val->mv_size);
    if (!w->tail.cur[dbi] || !db_tail_fits(t, node, w->tail.page_room))
        return tail_split(w, dbi, key, val);
    t->used += node;
    return mdb_cursor_put(w->tail.cur[dbi], key, val, 0);
}

/* ... and the put that may not fit, or to a leaf not known */
static int tail_split(db_writer *w, int dbi, MDB_val *key, MDB_val *val)
{
    int rc = w->tail.cur[dbi] ? 0 : mdb_cursor_open(w->txn, w->a->dbi[dbi], &w->tail.cur[dbi]);
    if (rc)
        return rc;
    db_tail *t = &w->tail.leaf[dbi];
    size_t node = db_tail_node(key->mv_size, val->mv_size);
    if (db_tail_fits(t, node, w->tail.page_room)) {
        t->used += node;
        return mdb_cursor_put(w->tail.cur[dbi], key, val, 0);
    }
    bool small = db_tail_small(node, w->tail.page_room), known = t->used != DB_TAIL_UNKNOWN;
    MDB_stat st;
    size_t leaves = small && !known && !mdb_stat(w->txn, w->a->dbi[dbi], &st) ? st.ms_leaf_pages : SIZE_MAX;
    rc = mdb_cursor_put(w->tail.cur[dbi], key, val, MDB_APPEND);
    /* a new leaf holds this node alone: after a put that did not fit the
     * known leaf, or one that the table's count of leaves shows split */
    bool split = known || (leaves != SIZE_MAX && !mdb_stat(w->txn, w->a->dbi[dbi], &st) && st.ms_leaf_pages != leaves);
    t->used = !rc && small && split ? node : DB_TAIL_UNKNOWN;
    return rc;
}

/* Any other write to a table: its last leaf is no longer known. */
static inline void tail_lost(db_writer *w, int dbi) { w->tail.leaf[dbi].used = DB_TAIL_UNKNOWN; }

static void tails_lost(db_writer *w)
{
    for (int i = 0; i < DBI__COUNT; i++)
        tail_lost(w, i);
}

/* What a batch's dirty pages are guessed from (batch_full): LMDB copies
 * every page a transaction changes into memory of its own until the
 * commit, and keeps those buffers for the next: the largest batch of an
 * ingest sets its memory to the end.  A put into the middle of a table
 * dirties a page (an upper bound: two puts can share one); an append
 * fills pages in turn. */
static void count_put(db_writer *w, unsigned flags, size_t bytes)
{
    if (flags == MDB_APPEND) {
        w->batch.appended += bytes + 10;
        w->batch.pages_left -= (int64_t)bytes + 10;
    } else {
        w->batch.touched += w->batch.touch_w;
        w->batch.pages_left -= 4 * (int64_t)w->batch.touch_w;
        /* a sorted run's puts fill its pages until they split: their
         * bytes land on new pages, half full */
        if (w->batch.touch_w < 1024) {
            w->batch.appended += 2 * (bytes + 10);
            w->batch.pages_left -= 2 * ((int64_t)bytes + 10);
        }
    }
}

/* A run of puts in key order into table dbi shares its pages: n puts into
 * a table of p pages dirty at most min(n, p) of them, so each counts
 * p/n of a page when n > p.  The objects' 312,000 sorted puts into a
 * 5,000-page ev_block at 19M events counted as as many pages and ended
 * 60 batches early, each commit writing its share of every table again.
 * But the run's inserts split the pages they fill, and the new pages and
 * their parents are dirty too: the batches that flushed the dictionary or
 * the object indexes at 19M events wrote up to 1.9 times the pages p gave
 * (measured by the bytes each commit wrote), and were the largest of the
 * ingest.  So a run counts 2p. */
static void sorted_run(db_writer *w, int dbi, size_t n)
{
    MDB_stat st;
    size_t pages = mdb_stat(w->txn, w->a->dbi[dbi], &st) ? n : 2 * (st.ms_leaf_pages + st.ms_branch_pages + 1);
    w->batch.touch_w = n > pages ? (uint32_t)(1024 * pages / n) + 1 : 1024;
}

/* put(), given append_flag's answer for the key */
static inline __attribute__((always_inline)) int put_as(db_writer *w, int dbi, const unsigned char *k, size_t klen,
                                                         const void *v, size_t vlen, unsigned flags, db_error *err)
{
    MDB_val key = {klen, (void *)k}, val = {vlen, (void *)v};
    if (flags != MDB_APPEND)
        trim_every(w, vlen);
    w->batch.ops++;
    int rc;
    count_put(w, flags, klen + vlen);
    if (flags == MDB_APPEND)
        rc = tail_put(w, dbi, &key, &val);
    else {
        tail_lost(w, dbi);
        rc = mdb_put(w->txn, w->a->dbi[dbi], &key, &val, flags);
    }
    return rc ? db_lmdb_fail(err, rc, "write") : 0;
}

static int put(db_writer *w, int dbi, const unsigned char *k, size_t klen, const void *v, size_t vlen,
               db_error *err)
{
    return put_as(w, dbi, k, klen, v, vlen, append_flag(w, dbi, k, klen), err);
}

/* Keys of the edge blocks and of the time index of a trace out of time
 * order arrive in event order, not key order: they wait for the end of the
 * batch and go in sorted (keysort.c). */
static int drain_later(db_writer *w, db_error *err);

static int later_added(db_writer *w, db_error *err);

static int put_later(db_writer *w, int dbi, const unsigned char *k, size_t klen, db_error *err)
{
    if (klen > DB_KEYSORT_MAX)
        return db_fail(err, -1, "index key too long");
    if ((!w->keys.ks && !(w->keys.ks = db_keysort_new())) || db_keysort_add(w->keys.ks, dbi, k, klen) < 0)
        return db_fail_oom(err);
    return later_added(w, err);
}

/* An edge of edges_in (side 0) or edges_out (1), as put_later's keys. */
static int edge_later(db_writer *w, int side, const db_edge_rec *r, db_error *err)
{
    if ((!w->keys.ks && !(w->keys.ks = db_keysort_new())) || db_keysort_add_edge(w->keys.ks, side, r) < 0)
        return db_fail_oom(err);
    return later_added(w, err);
}

static int later_added(db_writer *w, db_error *err)
{
    w->batch.ops++;
    w->keys.nkeys++;
    w->batch.pages_left -= w->batch.key_w;
    /* a writer of one transaction (rules, rebuild) puts them in as it
     * goes, a batch's worth at a time, so its memory stays bounded too */
    if (!w->batched && w->keys.nkeys >= DB_BATCH_KEYS)
        return drain_later(w, err);
    return 0;
}

/* ---- edges, in blocks of 16 nodes (codec.c) ----
 * A block's edges come out of the batch's sort together (keysort.c) and
 * go in as one entry.  A block that an earlier batch (or an older drain
 * of this one) already wrote is read and merged: a wakeup can join a node
 * to one of an earlier batch. */
/* appends r[0..n) after the stored recs w->keys.emerge[0..stored) (both
 * sorted) into w->keys.emerge, merged, once each */
static size_t merge_recs(db_writer *w, size_t stored, const db_edge_rec *r, size_t n)
{
    db_edge_rec *m = w->keys.emerge;
    /* the merge is written from the back */
    size_t i = stored, j = n, out = stored + n;
    while (i || j) {
        if (!j || (i && db_edge_rec_cmp(&m[i - 1], &r[j - 1]) > 0))
            m[--out] = m[--i];
        else
            m[--out] = r[--j];
    }
    size_t k = 0;
    for (size_t x = 0; x < stored + n; x++)
        if (!k || db_edge_rec_cmp(&m[k - 1], &m[x]))
            m[k++] = m[x];
    return k;
}

/* One block's recs, sorted, each once (db_keysort_drain's edges callback). */
static int edges_put(void *ctx, int side, const db_edge_rec *recs, size_t n)
{
    db_writer *w = ctx;
    int dbi = side ? DBI_EDGES_OUT : DBI_EDGES_IN;
    unsigned char k[8];
    db_put_be32(k, w->info.id);
    db_put_be32(k + 4, recs[0].a >> DB_EDGE_BLOCK_SHIFT);
    if (!past_last(w, dbi, k, sizeof k)) {
        MDB_val key = {sizeof k, k}, v;
        int rc = mdb_get(w->txn, w->a->dbi[dbi], &key, &v);
        if (rc && rc != MDB_NOTFOUND)
            return rc;
        size_t stored = 0;
        if (!rc) {
            db_edgeblk_it it;
            db_edge_rec r;
            int got;
            db_edgeblk_begin(&it, &key, &v);
            while ((got = db_edgeblk_next(&it, &r)) == 1) {
                if (!base_grow((void **)&w->keys.emerge, &w->keys.emerge_cap, stored + 1 + n, sizeof r))
                    return -1;
                w->keys.emerge[stored++] = r;
            }
            if (got < 0)
                return MDB_CORRUPTED;
        }
        if (!base_grow((void **)&w->keys.emerge, &w->keys.emerge_cap, stored + n, sizeof *recs))
            return -1;
        n = merge_recs(w, stored, recs, n);
        recs = w->keys.emerge;
    }
    if (!base_grow((void **)&w->keys.ebuf, &w->keys.ebuf_cap, n * DB_EDGE_REC_MAX, 1))
        return -1;
    MDB_val key = {sizeof k, k}, val = {db_edgeblk_encode(recs, n, w->keys.ebuf), w->keys.ebuf};
    unsigned flags = append_flag(w, dbi, k, sizeof k);
    count_put(w, flags, sizeof k + val.mv_size);
    if (flags != MDB_APPEND) {
        trim_every(w, val.mv_size);
        tail_lost(w, dbi);
        return mdb_put(w->txn, w->a->dbi[dbi], &key, &val, 0);
    }
    return tail_put(w, dbi, &key, &val);
}

static int put_sorted(void *ctx, int dbi, const unsigned char *k, size_t len)
{
    db_writer *w = ctx;
    int rc = 0;
    if (!w->tail.cur[dbi] && (rc = mdb_cursor_open(w->txn, w->a->dbi[dbi], &w->tail.cur[dbi])) != 0)
        return rc;
    MDB_val key = {len, (void *)k}, val = {0, ""};
    /* the first batch of a new trace appends every key */
    unsigned flags = append_flag(w, dbi, k, len);
    count_put(w, flags, len);
    if (flags == MDB_APPEND)
        return tail_put(w, dbi, &key, &val);
    trim_every(w, len);
    tail_lost(w, dbi);
    return mdb_cursor_put(w->tail.cur[dbi], &key, &val, flags);
}

static int drain_later(db_writer *w, db_error *err)
{
    if (!w->keys.nkeys)
        return 0;
    int rc = db_keysort_drain(w->keys.ks, put_sorted, edges_put, w);
    w->keys.nkeys = 0; /* the drain empties the sort, failed or not */
    if (rc == -1)
        return db_fail_oom(err);
    return rc ? db_lmdb_fail(err, rc, "write") : 0;
}

/* The batch's chunks, run by run (chunkq.c): a chunk past the table's
 * last key is appended, the others put through the cursor, which is left
 * next to where the one before went. */
struct chunk_drain {
    db_writer *w;
    int dbi;       /* the table of the chunks so far, or -1 */
    MDB_val last;  /* its last key (none: mv_data NULL) */
};

static int chunk_out(void *ctx, int dbi, MDB_val *key, MDB_val *val)
{
    struct chunk_drain *d = ctx;
    db_writer *w = d->w;
    int rc;
    if (dbi != d->dbi) {
        if (!w->tail.cur[dbi] && (rc = mdb_cursor_open(w->txn, w->a->dbi[dbi], &w->tail.cur[dbi])) != 0)
            return rc;
        MDB_val v;
        rc = mdb_cursor_get(w->tail.cur[dbi], &d->last, &v, MDB_LAST);
        if (rc && rc != MDB_NOTFOUND)
            return rc;
        if (rc)
            d->last.mv_data = NULL;
        d->dbi = dbi;
        tail_lost(w, dbi);
    }
    if (!d->last.mv_data || db_key_order(key, &d->last) > 0) {
        d->last = *key; /* in the chunks' memory, to the drain's end */
        return tail_put(w, dbi, key, val);
    }
    trim_every(w, val->mv_size);
    tail_lost(w, dbi);
    return mdb_cursor_put(w->tail.cur[dbi], key, val, 0);
}

static int drain_chunks(db_writer *w, db_error *err)
{
    if (!db_chunkq_count(w->ix.chunks))
        return 0;
    struct chunk_drain d = {w, -1, {0, NULL}};
    int rc = db_chunkq_drain(w->ix.chunks, chunk_out, &d);
    if (rc == -1)
        return db_fail_oom(err);
    return rc ? db_lmdb_fail(err, rc, "write") : 0;
}

/* ---- events: blocks, the thread index, nodes set afterwards ---- */

/* Nodes set by a graph pass wait in memory at most this many, then go
 * into their blocks (a block rewritten once for all of its events when
 * they come in id order). */
#define DB_PATCH_MAX (1u << 20)

/* Writes the block being re-encoded (write_patched), if it holds events. */
static int put_block(db_writer *w, db_error *err)
{
    if (!w->ev.enc || !db_evblock_enc_count(w->ev.enc))
        return 0;
    db_evblk blk = {.first = db_evblock_enc_first(w->ev.enc)};
    blk.bytes = db_evblock_enc_bytes(w->ev.enc, &blk.len);
    int rc = db_writer_put_block(w, &blk, err);
    db_evblock_enc_reset(w->ev.enc);
    return rc;
}

/* Appends an event to the block being re-encoded (a full one is written). */
static int add_to_block(db_writer *w, const db_event *ev, db_error *err)
{
    if (!w->ev.enc && !(w->ev.enc = db_evblock_enc_new()))
        return db_fail_oom(err);
    int rc = db_evblock_enc_add(w->ev.enc, ev);
    if (rc == 1) {
        if (put_block(w, err))
            return -1;
        rc = db_evblock_enc_add(w->ev.enc, ev);
    }
    return rc ? db_fail_oom(err) : 0;
}

static int flush(db_writer *w, db_error *err);
static uint64_t guessed(const db_writer *w);
static bool batch_ends(db_writer *w);
static void pages_weigh(db_writer *w);

/* -1 with err "interrupted" once the writer's interrupt is set; else 0.
 * A threaded writer's thread learns it from its queue's copy (relayed,
 * db_wq_interrupted): only the caller's thread reads the caller's flag. */
static int interrupted(const db_writer *w, db_error *err)
{
    bool set = w->relayed ? atomic_load_explicit(w->relayed, memory_order_relaxed) : w->interrupt && *w->interrupt;
    return set ? db_fail(err, -1, "interrupted") : 0;
}

/* The commit of a batch of an ingest or a rebuild, not made once the
 * writer is interrupted: its caller fails, and the abort deletes what
 * earlier batches committed.  (flush alone is also the abort's: reclaim
 * commits its deletes with it, interrupted or not.) */
static int flush_batch(db_writer *w, db_error *err)
{
    return interrupted(w, err) || flush(w, err) ? -1 : 0;
}

/* After a put of a run that may end the batch between two (chunk_commits):
 * the commit's failure is kept for the run's caller (thr_fail). */
static int between_puts(db_writer *w)
{
    if (w->ix.chunk_commits && batch_ends(w) && flush_batch(w, &w->ix.thr_err)) {
        w->ix.thr_failed = true;
        return -1;
    }
    return 0;
}

/* A chunk (up to a kilobyte: thrindex.c, sigindex.c, nodetop.c) goes in
 * after the chunk before it of the same thread or object: a batch's
 * chunks of one key land on the page at the end of that key's run, and
 * fill it.  Counted as a page each, the chunks made an ordinary batch
 * guess 5,700 pages where its commit wrote 2,800 (1.9M and 19M events
 * alike), while the batches of sorted runs guessed right: the largest
 * batch, and memory, grew with the trace.  So the first chunk of a key in
 * a batch counts a page, and every chunk twice its bytes (the pages it
 * fills split half full), as a sorted run's puts do; a flush of every
 * open chunk (a commit's, or when they hold too much) is then a page a
 * key, as it should be (counted a quarter page each, such a flush of a
 * rebuild at 19M events wrote 4,265 pages for 2,328 guessed).
 *
 * The key of a chunk without its last part (time and id, or first node)
 * names the run it goes to (chunk_run). */
static size_t chunk_run(int dbi, size_t klen)
{
    if (dbi == DBI_NODETOP)
        return klen; /* trace, thread key, field: one value each */
    if (dbi == DBI_SIGS)
        return klen > 4 ? klen - 4 : klen; /* thread key, trace | first node */
    return klen > 16 ? klen - 16 : klen;   /* trace, tid or object | time, id */
}

/* The run's name for the batch's maps (count_chunk's, chunkq.c's): the
 * table mixed in first, then the key part's words of 8 bytes (a thread
 * chunk's and a signature chunk's are one: trace and thread; no two of
 * one table then share a name), then its bytes past them; a word at a
 * time, not FNV-1a's byte at a time.  The words big-endian, so that the
 * thread is in their low bits: read as they lie, a thread's low bits went
 * to the high ones, and most names shared their slot (base_slots_home). */
static uint64_t run_hash(int dbi, const unsigned char *k, size_t klen)
{
    const uint64_t mul = 0x100000001b3ull;
    uint64_t h = (0xcbf29ce484222325ull ^ (uint64_t)dbi) * mul;
    size_t i = 0, n = chunk_run(dbi, klen);
    for (; i + 8 <= n; i += 8)
        h = (h ^ db_get_be64(k + i)) * mul;
    for (; i < n; i++)
        h = (h ^ k[i]) * mul;
    return h;
}

/* fresh: the chunk is its run's first in the batch (h: run_hash's);
 * NULL: asked of the writer's map of the runs of chunks put as they come
 * (those waiting for the batch's end are known to their queue, which
 * says: chunk_put) */
static inline __attribute__((always_inline)) void count_chunk(db_writer *w, uint64_t h, const bool *fresh,
                                                              size_t bytes)
{
    if (w->batch.touch_w < 1024) { /* a sorted run (flush_objects): the object indexes', which never wait */
        count_put(w, 0, bytes);
        return;
    }
    if (fresh ? *fresh : base_slots_get(&w->batch.runs, h) < 0) {
        w->batch.touched += 1024;
        w->batch.pages_left -= 4096;
        if (!fresh)
            (void)base_slots_put(&w->batch.runs, h, 0); /* out of memory: the next counts a page again */
    }
    w->batch.appended += 2 * (bytes + 10);
    w->batch.pages_left -= 2 * ((int64_t)bytes + 10);
}

/* A batch's chunks of the thread, node-thread and signature indexes wait
 * for its end (chunkq.c, drain_chunks), counted now as their puts were
 * (the batches end where they did), so that they go into LMDB in key
 * order: appends, less of LMDB's work, and tables of fewer pages. */
#define REBUILD_CHUNKS_MAX (1u << 20)
static bool chunk_waits(const db_writer *w, int dbi)
{
    /* A rebuild holds the signature chunks too (up to
     * REBUILD_CHUNKS_MAX): put as they came, a thread key's chunks land
     * on pages all over the file, and `match` and `diagnose` read all of
     * one key's.  It puts the thread indexes' chunks as they come: held,
     * they raise its peak memory (docs/PERFORMANCE.md). */
    return w->batched && (dbi == DBI_SIGS || (!w->rebuild && (dbi == DBI_EV_THREAD || dbi == DBI_NODE_THREAD)));
}

static int chunk_put(db_writer *w, int dbi, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    uint64_t h = run_hash(dbi, k, klen);
    w->batch.ops++;
    if (chunk_waits(w, dbi)) {
        bool fresh;
        if ((!w->ix.chunks && !(w->ix.chunks = db_chunkq_new())) ||
            db_chunkq_add(w->ix.chunks, h, dbi, k, klen, chunk_run(dbi, klen), v, vlen, &fresh)) {
            w->ix.thr_rc = ENOMEM;
            return -1;
        }
        count_chunk(w, h, &fresh, klen + vlen);
        if (w->rebuild && db_chunkq_bytes(w->ix.chunks) > REBUILD_CHUNKS_MAX) {
            struct chunk_drain d = {w, -1, {0, NULL}};
            int rc = db_chunkq_drain(w->ix.chunks, chunk_out, &d);
            if (rc) {
                w->ix.thr_rc = rc == -1 ? ENOMEM : rc;
                return -1;
            }
        }
        return between_puts(w);
    }
    count_chunk(w, h, NULL, klen + vlen);
    trim_every(w, vlen);
    MDB_val key = {klen, (void *)k}, val = {vlen, (void *)v};
    /* through the table's cursor, not mdb_put: a cursor left on the leaf
     * the key goes into skips the search from the root (the chunks of a
     * thread follow each other), and mdb_put sets one up every call */
    tail_lost(w, dbi);
    w->ix.thr_rc = w->tail.cur[dbi] ? 0 : mdb_cursor_open(w->txn, w->a->dbi[dbi], &w->tail.cur[dbi]);
    if (!w->ix.thr_rc)
        w->ix.thr_rc = mdb_cursor_put(w->tail.cur[dbi], &key, &val, 0);
    if (w->ix.thr_rc)
        return -1;
    /* The commit writes every open chunk of every index, each a put into
     * the middle of its table: batches end between them, or that last
     * transaction's copies of the pages it changes -- which LMDB keeps to
     * the end -- grow with the tables (66 MB more at 19M events). */
    return between_puts(w);
}

static int thr_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    return chunk_put(ctx, DBI_EV_THREAD, k, klen, v, vlen);
}

static int nthr_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    return chunk_put(ctx, DBI_NODE_THREAD, k, klen, v, vlen);
}

/* the object indexes: events by port, block and timer address */
enum { OIX_PORT, OIX_BLOCK, OIX_TIMER, OIX__COUNT };

static int port_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    return chunk_put(ctx, DBI_EV_PORT, k, klen, v, vlen);
}

static int block_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    return chunk_put(ctx, DBI_EV_BLOCK, k, klen, v, vlen);
}

static int timer_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    return chunk_put(ctx, DBI_EV_TIMER, k, klen, v, vlen);
}

static db_thrindex_put const oix_put[OIX__COUNT] = {port_put, block_put, timer_put};
static const int oix_dbi[OIX__COUNT] = {DBI_EV_PORT, DBI_EV_BLOCK, DBI_EV_TIMER};

static int sig_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    return chunk_put(ctx, DBI_SIGS, k, klen, v, vlen);
}

static int top_put(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    return chunk_put(ctx, DBI_NODETOP, k, klen, v, vlen);
}

static int thr_fail(db_writer *w, int rc, db_error *err)
{
    if (w->ix.thr_failed) {
        *err = w->ix.thr_err;
        return -1;
    }
    return rc == -2 ? db_fail_oom(err) : db_lmdb_fail(err, w->ix.thr_rc, "write");
}

/* Writes back the block in patchblk with its new nodes (re-encoded: it
 * may come out as two blocks). */
static int write_patched(db_writer *w, db_error *err)
{
    db_evblock *b = &w->ev.patchblk;
    if (!b->n)
        return 0;
    size_t n = b->n;
    b->n = 0; /* what the archive has from now on */
    for (size_t i = 0; i < n; i++)
        if (add_to_block(w, &b->ev[i], err))
            return -1;
    return put_block(w, err);
}

static int cmp_patch(const void *a, const void *b)
{
    uint64_t x = ((const struct patch *)a)->id, y = ((const struct patch *)b)->id;
    return (x > y) - (x < y);
}

/* Puts the nodes db_writer_set_event_node collected into their blocks. */
static int apply_patches(db_writer *w, db_error *err)
{
    if (!w->ev.npatch)
        return 0;
    if (w->ev.patch_unsorted)
        qsort(w->ev.patch, w->ev.npatch, sizeof *w->ev.patch, cmp_patch);
    for (size_t i = 0; i < w->ev.npatch; i++) {
        uint64_t id = w->ev.patch[i].id;
        if (!db_evblock_get(&w->ev.patchblk, id)) {
            if (write_patched(w, err))
                return -1;
            trim_every(w, DB_EVBLOCK_BYTES);
            int got = db_evblock_load(w->txn, w->a->dbi[DBI_EVENTS], w->info.id, id, &w->ev.patchblk, err);
            if (got <= 0)
                return got < 0 ? -1 : db_fail(err, -1, "event %llu is missing", (unsigned long long)id);
        }
        ((db_event *)db_evblock_get(&w->ev.patchblk, id))->node = w->ev.patch[i].node;
    }
    w->ev.npatch = 0;
    w->ev.patch_unsorted = false;
    return write_patched(w, err);
}

/* ---- nodes ----
 * A node's id is given when it opens and it is written when it closes, so
 * ids arrive out of order; put one by one they would split pages in half.
 * They wait here and go in sorted at the end of the batch (or when
 * DB_NODES_MAX bytes wait), extending the table as appends do. */
#define DB_NODES_MAX (16u << 20)

static int cmp_nref(const void *a, const void *b)
{
    uint32_t x = ((const struct nref *)a)->id, y = ((const struct nref *)b)->id;
    return (x > y) - (x < y);
}

/* The batch's nodes in id order by their place in [lo, hi]: the ids of a
 * batch are nearly all of a range, so each goes straight to its place,
 * without qsort's merge sort over the batch (nor qsort_r's per run of ties
 * in keysort.c's sort_run).  false (nothing changed) when the range is
 * sparse, an id comes twice, or memory is short: qsort then. */
static bool place_nodes(db_writer *w, uint32_t lo, uint32_t hi)
{
    size_t n = w->nrec.nnref, range = (size_t)hi - lo + 1;
    if (range > 4 * n + 4096)
        return false;
    uint32_t *at = calloc(range, sizeof *at);
    /* out takes nref's place (and room), not copied back into it */
    struct nref *out = malloc(w->nrec.nref_cap * sizeof *out);
    bool ok = at && out;
    for (size_t i = 0; ok && i < n; i++) {
        uint32_t *slot = &at[w->nrec.nref[i].id - lo];
        ok = !*slot;
        *slot = (uint32_t)i + 1;
    }
    if (ok) {
        size_t k = 0;
        for (size_t j = 0; j < range; j++)
            if (at[j])
                out[k++] = w->nrec.nref[at[j] - 1];
        free(w->nrec.nref);
        w->nrec.nref = out;
        out = NULL;
    }
    free(at);
    free(out);
    return ok;
}

/* ... and when the range is sparse or an id came twice, a radix sort of
 * id - lo (stable: of an id that came twice, the later goes in last, as
 * qsort's merge sort left them), in as few passes of up to 16 bits as
 * the range needs, not qsort's call of a compare per pair.  false when
 * memory is short: qsort then. */
#define DB_NREF_DIGIT_MAX 16

static bool radix_nodes(db_writer *w, uint32_t lo, uint32_t hi)
{
    size_t n = w->nrec.nnref;
    unsigned bits = base_radix_bits(hi - lo), width = base_radix_width(bits, DB_NREF_DIGIT_MAX);
    struct nref *tmp = malloc(n * sizeof *tmp);
    uint32_t *count = malloc(((size_t)1 << width) * sizeof *count);
    bool ok = tmp && count;
    if (ok) {
        struct nref *src = base_radix_u32(w->nrec.nref, tmp, n, sizeof *tmp, offsetof(struct nref, id), lo, hi - lo, bits, width,
                                         count);
        if (src != w->nrec.nref)
            memcpy(w->nrec.nref, src, n * sizeof *src);
    }
    free(tmp);
    free(count);
    return ok;
}

static int put_nodes(db_writer *w, db_error *err)
{
    bool sorted = true;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < w->nrec.nnref; i++) {
        uint32_t id = w->nrec.nref[i].id;
        sorted = sorted && (i == 0 || w->nrec.nref[i - 1].id < id);
        lo = id < lo ? id : lo;
        hi = id > hi ? id : hi;
    }
    if (!sorted && !place_nodes(w, lo, hi) && !radix_nodes(w, lo, hi))
        qsort(w->nrec.nref, w->nrec.nnref, sizeof *w->nrec.nref, cmp_nref);
    /* A key whose id is above that of the key appended just before is
     * past the table's last (the same trace, big-endian ids): appended
     * without append_flag's compare and call to memcpy, as it would
     * answer. */
    unsigned flags = 0;
    for (size_t i = 0; i < w->nrec.nnref; i++) {
        unsigned char k[8];
        db_put_be32(k, w->info.id);
        db_put_be32(k + 4, w->nrec.nref[i].id);
        if (flags == MDB_APPEND && w->nrec.nref[i].id > w->nrec.nref[i - 1].id)
            memcpy(w->tail.last[DBI_NODES], k, 8); /* last_len[DBI_NODES] is 8 */
        else
            flags = append_flag(w, DBI_NODES, k, 8);
        if (put_as(w, DBI_NODES, k, 8, w->nrec.nodes + w->nrec.nref[i].off, w->nrec.nref[i].len, flags, err))
            return -1;
    }
    w->nrec.nnref = w->nrec.nodes_len = 0;
    return 0;
}

static void free_events(db_writer *w)
{
    free(w->nrec.nodes);
    free(w->nrec.nref);
    w->nrec.nodes = NULL;
    w->nrec.nref = NULL;
    db_evblock_enc_free(w->ev.enc);
    db_evfront_free(&w->ev.front);
    db_thrindex_free(w->ix.thr);
    db_thrindex_free(w->ix.nthr);
    w->ix.nthr = NULL;
    for (int i = 0; i < OIX__COUNT; i++) {
        db_thrindex_free(w->ix.oix[i]);
        w->ix.oix[i] = NULL;
    }
    db_sigindex_free(w->ix.sigs);
    w->ix.sigs = NULL;
    db_normbuf_free(w->ix.norms);
    w->ix.norms = NULL;
    db_nodetop_free(w->ix.top);
    w->ix.top = NULL;
    db_evblock_free(&w->ev.scanblk);
    db_evblock_free(&w->ev.patchblk);
    db_names_free(&w->names);
    free(w->ev.patch);
    free(w->keys.emerge);
    free(w->keys.ebuf);
    w->keys.emerge = NULL;
    w->keys.ebuf = NULL;
    w->keys.emerge_cap = w->keys.ebuf_cap = 0;
    w->ev.enc = NULL;
    w->ix.thr = NULL;
    w->ev.patch = NULL;
}

/* The writer lock goes with the writer's memory. */
static void writer_free(db_writer *w)
{
    if (w->lock_fd >= 0)
        close(w->lock_fd);
    db_keysort_free(w->keys.ks);
    db_chunkq_free(w->ix.chunks);
    base_slots_free(&w->batch.runs);
    free_events(w);
    free(w);
}

/* Cursors die with their transaction (and what their appends knew of
 * the last leaves: the next transaction copies them anew). */
static void close_cursors(db_writer *w)
{
    tails_lost(w);
    for (int i = 0; i < DBI__COUNT; i++)
        if (w->tail.cur[i]) {
            mdb_cursor_close(w->tail.cur[i]);
            w->tail.cur[i] = NULL;
        }
}

/* After each batch the pages the batch read are unmapped (db_archive_trim),
 * which keeps a long ingest's memory flat. */
static void trim_map(db_writer *w)
{
    db_archive_trim(w->a);
    w->batch.trim_base = db_archive_file_rss(w->a);
}

/* Within a batch too, and in the final commit's flushes: the pages a
 * batch reads (index pages all over the file as keys go in, the event
 * blocks it rewrites with their nodes, a block of edges merged) would
 * otherwise pile up until its commit -- 150 MB and more between two
 * commits at the paper's scale.  Every DB_TRIM_EVERY puts the process's
 * file pages are read from the kernel (db_archive_file_rss: a guess from
 * the puts missed what reads map), and past DB_TRIM_RSS more than after
 * the last trim the mapping goes.  Only puts that search a table count:
 * an append writes its own dirty page.  A read fault maps the 16 pages
 * around the one read (the kernel's fault-around), so each search may map
 * 64 KB: checked every 128 puts, the mapping reached 19 MB between two
 * checks at 19M events (8 at 1.9M), the largest share of the growth of
 * peak memory with the trace; every 32, 12 MB.
 * Without /proc, each put is counted as a page and twice its value, and
 * the mapping goes every DB_TRIM_BYTES.  Dropping the mapping of the
 * read-only map under a live write transaction is safe: its dirty pages
 * are its own memory, and a clean page read again faults back in from
 * the page cache, unchanged. */
#define DB_TRIM_EVERY 32u
#define DB_TRIM_RSS (8u << 20)
#define DB_TRIM_BYTES (32u << 20)

static void trim_every(db_writer *w, size_t vlen)
{
    if (w->a->statm_fd >= 0) {
        if (++w->batch.untrimmed % DB_TRIM_EVERY == 0)
            (void)db_archive_trim_past(w->a, &w->batch.trim_base, DB_TRIM_RSS);
        return;
    }
    w->batch.untrimmed += 4096 + 2 * (uint64_t)vlen;
    if (w->batch.untrimmed >= DB_TRIM_BYTES) {
        trim_map(w);
        w->batch.untrimmed = 0;
    }
}

/* A commit that failed.  LMDB reports a short write (a disk that filled
 * up, a file size limit reached mid-page) as EIO: say which it was when
 * the file system or the limit shows it. */
static int commit_fail(db_writer *w, int rc, db_error *err)
{
    if (rc == EIO) {
        struct stat st;
        struct statvfs fs;
        struct rlimit rl;
        bool limit = fstat(w->lock_fd, &st) == 0 && getrlimit(RLIMIT_FSIZE, &rl) == 0 &&
                     rl.rlim_cur != RLIM_INFINITY && (uint64_t)st.st_size + (1u << 20) >= (uint64_t)rl.rlim_cur;
        bool full = fstatvfs(w->lock_fd, &fs) == 0 && (uint64_t)fs.f_bavail * fs.f_frsize < (1u << 20);
        if (limit || full)
            rc = limit ? EFBIG : ENOSPC;
    }
    return db_lmdb_fail(err, rc, "commit");
}

/* Commits the batch so far and starts the next transaction. */
static int flush(db_writer *w, db_error *err)
{
    size_t patches = w->ev.npatch, node_bytes = w->nrec.nodes_len, keys = w->keys.nkeys;
    uint64_t g0 = guessed(w);
    if (apply_patches(w, err))
        return -1;
    uint64_t g1 = guessed(w);
    if (put_nodes(w, err))
        return -1;
    uint64_t g2 = guessed(w);
    if (drain_later(w, err) || drain_chunks(w, err))
        return -1;
    uint64_t g3 = guessed(w);
    /* each averaged with the last; a few patches, nodes or keys (the last
     * batch of a phase) tell little */
    if (patches >= 1024)
        w->batch.patch_pages = (w->batch.patch_pages + (double)(g1 - g0) / patches) / 2;
    if (node_bytes >= 65536)
        w->batch.node_pages = (w->batch.node_pages + (double)(g2 - g1) / node_bytes) / 2;
    if (keys >= 1024)
        w->batch.key_pages = (w->batch.key_pages + (double)(g3 - g2) / keys) / 2;
    pages_weigh(w);
    close_cursors(w);
    /* A batch's data pages are synced before its meta page is written;
     * the meta page itself is synced with the next commit.  A crash can
     * then undo at most the last batch, never damage what the on-disk
     * meta points to.  Without any sync (MDB_NOSYNC) a meta page could
     * reach the disk before the pages it points to, and LMDB would reuse
     * pages of the snapshot on disk two commits later: a crash of the OS
     * could destroy the older traces (measured: most crash states
     * corrupt).  The trace stays hidden until its final commit either way.
     * $ARGUSQ_BATCH_SYNC=0 is the unsynced policy, for make bench only. */
    unsigned unsynced = w->batch.nosync ? MDB_NOSYNC : MDB_NOMETASYNC;
    mdb_env_set_flags(w->a->env, unsynced, 1);
    int rc = mdb_txn_commit(w->txn);
    mdb_env_set_flags(w->a->env, unsynced, 0);
    w->txn = NULL;
    if (rc)
        return commit_fail(w, rc, err);
    w->flushed = true;
    w->batch.ops = w->batch.touched = w->batch.appended = 0;
    base_slots_free(&w->batch.runs);
    db_chunkq_end_batch(w->ix.chunks);
    trim_map(w);
    rc = mdb_txn_begin(w->a->env, NULL, 0, &w->txn);
    return rc ? db_lmdb_fail(err, rc, "write transaction") : 0;
}

/* A batch ends after max_ops puts, or sooner when its dirty pages
 * would pass DB_BATCH_PAGES: as a trace grows, the pages a batch's
 * scattered puts land on grow with it (41 MB of them at 19M events
 * against 20 MB at 1.9M), and LMDB keeps the largest batch's buffers to
 * the end.  The pages are guessed from the puts made (count_put,
 * count_chunk, sorted_run) and from the work the commit does first --
 * events given their nodes, node records, index keys sorted in -- at
 * what that cost in the last commit.  Left out, that work (some 700
 * pages of node records and 550 of index keys a batch) came on top of the
 * bound, and the batches ended on their index keys (DB_BATCH_KEYS)
 * instead, at whatever their pages came to: a rebuild's largest commit
 * wrote 3,495 pages at 19M events against 2,968 at 1.9M (the largest of
 * 267 batches against 20).  Counted, 2,847 against 2,758 (ingest: 2,701
 * against 2,615), in fewer commits. */
#define DB_BATCH_PAGES 2800u

static uint64_t guessed(const db_writer *w) { return w->batch.touched / 1024 + w->batch.appended / 4096; }

/* ... or after DB_BATCH_KEYS index keys (put_later).  Asked at every safe
 * point, about once an event: the keys are counted here (nkeys), not
 * asked of the sort, and the counts go to double as signed numbers (a
 * single conversion each, where an unsigned 64-bit one branches; they are
 * far below 2^63, so the values, the sums and the batches are the same),
 * and maybe_flush's slow paths are out of line. */
static inline double as_double(uint64_t n) { return (double)(int64_t)n; }

static bool pages_full(const db_writer *w)
{
    double pending = as_double(w->ev.npatch) * w->batch.patch_pages + as_double(w->nrec.nodes_len) * w->batch.node_pages +
                     as_double(w->keys.nkeys) * w->batch.key_pages;
    return as_double(guessed(w)) + pending >= DB_BATCH_PAGES;
}

/* pages_full's sum is asked at every safe point, but its counts seldom
 * bring it near DB_BATCH_PAGES: the same sum in whole numbers, each
 * count times its weight in 1/4096 pages rounded up (touched, in
 * 1/1024 pages, times 4; appended's bytes as they are), is at least
 * 4096 times pages_full's sum (guessed's divisions round down), and the
 * counts take their shares off pages_left as they grow.  While
 * pages_left, counted from a page below the bound, stays above 0, the
 * exact sum is below DB_BATCH_PAGES - 1, and its rounding (a few parts
 * in 2^53 of it, every term positive) cannot reach the bound: the test
 * is false, as pages_full would say.  A count set back (a drain, the
 * patches applied) leaves pages_left lower than it could be, so still
 * safe; a commit weighs anew (pages_weigh) and counts again.  The same
 * batches (built with -DARGUSQ_BATCH_CHECK or the sanitizers, as the
 * tests are, batch_full compares the two at every safe point and aborts
 * where they differ: test_db's test_nodes_over_page_batches).  The
 * doubles' conversions and sum were much of db_writer_event_back's cost,
 * and an event changes none of the counts. */
static void pages_weigh(db_writer *w)
{
    const double *pages[3] = {&w->batch.patch_pages, &w->batch.node_pages, &w->batch.key_pages};
    w->batch.pages_unbounded = false;
    int64_t *weight[3] = {&w->batch.patch_w, &w->batch.node_w, &w->batch.key_w};
    for (int i = 0; i < 3; i++) {
        double x = *pages[i] * 4096;
        bool ok = x >= 0 && x < 1 << 20; /* not NaN, nor too large: always, in practice */
        *weight[i] = ok ? (int64_t)x + 1 : 0;
        w->batch.pages_unbounded |= !ok;
    }
    w->batch.pages_left = 0; /* counted again at the next safe point */
}

static __attribute__((noinline)) bool pages_recount(db_writer *w)
{
    if (pages_full(w))
        return true;
    if (w->batch.pages_unbounded) { /* pages_full at every safe point */
        w->batch.pages_left = 0;
        return false;
    }
    int64_t sum = 4 * (int64_t)w->batch.touched + (int64_t)w->batch.appended + (int64_t)w->ev.npatch * w->batch.patch_w +
                  (int64_t)w->nrec.nodes_len * w->batch.node_w + (int64_t)w->keys.nkeys * w->batch.key_w;
    w->batch.pages_left = (int64_t)4096 * (DB_BATCH_PAGES - 1) - sum;
    return false;
}

/* batch_full is false, and known to be by whole numbers alone */
static inline __attribute__((always_inline)) bool batch_short(const db_writer *w)
{
    bool yes = w->batch.ops < w->batch.max_ops && w->keys.nkeys < DB_BATCH_KEYS && w->batch.pages_left > 0;
#if defined(ARGUSQ_BATCH_CHECK) || defined(__SANITIZE_ADDRESS__)
    if (yes && pages_full(w))
        abort();
#endif
    return yes;
}

static inline __attribute__((always_inline)) bool batch_full(db_writer *w)
{
    if (w->batch.ops >= w->batch.max_ops || w->keys.nkeys >= DB_BATCH_KEYS)
        return true;
    return !batch_short(w) && pages_recount(w);
}

/* batch_short first: at nearly every safe point it answers, and the
 * three flags need not be read. */
static inline __attribute__((always_inline)) bool batch_ends(db_writer *w)
{
    return !batch_short(w) && w->batched && !w->in_scan && w->txn && batch_full(w);
}

/* A batch that may end here (batch_ends asked in full): the fast paths
 * of an event and an edge leave it to their whole paths, which ask
 * (maybe_flush), so that they call nothing (pages_recount) and save no
 * more registers; some of the last events before a commit take the
 * longer way.  (With pages_recount's call inline in
 * db_writer_event_back, it saved a fourth register and set up a frame.) */
static inline __attribute__((always_inline)) bool batch_near(const db_writer *w)
{
    return !batch_short(w) && w->batched;
}

/* The object indexes' chunks, written when they hold too much (thrindex.c):
 * some 60,000 puts all over ev_block at the paper's scale, each dirtying
 * a page of its own.  Done inside one batch they took 29 MB of LMDB's
 * dirty pages at 19M events against 9 MB at 1.9M, growing with the table;
 * here, between two events, the batch may end between two puts
 * (chunk_put), as the final commit's does. */
static int flush_objects(db_writer *w, db_error *err)
{
    int rc = 0;
    bool was = w->ix.chunk_commits;
    w->ix.chunk_commits = true;
    w->ix.objects_due = false;
    for (int i = 0; i < OIX__COUNT && !rc; i++)
        if (w->ix.oix[i] && db_thrindex_due(w->ix.oix[i])) {
            sorted_run(w, oix_dbi[i], db_thrindex_open(w->ix.oix[i]));
            if ((rc = db_thrindex_flush(w->ix.oix[i], w->info.id, oix_put[i], w)) != 0)
                rc = thr_fail(w, rc, err);
        }
    w->batch.touch_w = 1024;
    w->ix.chunk_commits = was;
    return rc;
}

/* A normal form into the dictionary: the first text of a hash stays.
 * The batch may end between two (chunk_commits), as between chunks. */
static int norm_put(void *ctx, uint32_t hash, const char *text, size_t len)
{
    db_writer *w = ctx;
    unsigned char k[4];
    db_put_be32(k, hash);
    MDB_val key = {4, k}, val = {len, (void *)text};
    trim_every(w, len);
    tail_lost(w, DBI_NORMS);
    w->ix.thr_rc = mdb_put(w->txn, w->a->dbi[DBI_NORMS], &key, &val, MDB_NOOVERWRITE);
    if (w->ix.thr_rc == MDB_KEYEXIST) /* a form already there changes no page */
        return w->ix.thr_rc = 0;
    if (w->ix.thr_rc)
        return -1;
    w->batch.ops++;
    count_put(w, 0, 4 + len);
    return between_puts(w);
}

static int flush_norms(db_writer *w, db_error *err)
{
    w->ix.norms_due = false;
    if (!db_normbuf_count(w->ix.norms))
        return 0;
    bool was = w->ix.chunk_commits;
    w->ix.chunk_commits = true;
    sorted_run(w, DBI_NORMS, db_normbuf_count(w->ix.norms));
    int rc = db_normbuf_flush(w->ix.norms, norm_put, w);
    w->batch.touch_w = 1024;
    w->ix.chunk_commits = was;
    return rc ? thr_fail(w, rc, err) : 0;
}

/* The object indexes' or the dictionary's writes a safe point found due. */
static __attribute__((noinline)) int flush_due(db_writer *w, db_error *err)
{
    if (w->ix.objects_due && flush_objects(w, err))
        return -1;
    return w->ix.norms_due ? flush_norms(w, err) : 0;
}

/* A safe point: between two events, edges or nodes, where a batch may end.
 * Inlined into its callers with batch_full, the same tests in the same
 * order, the commits out of line: as calls, their prologues and
 * epilogues, and the loads of w's fields the caller already holds, ran at
 * every safe point. */
static inline __attribute__((always_inline)) int maybe_flush(db_writer *w, db_error *err)
{
    if ((w->ix.objects_due || w->ix.norms_due) && !w->in_scan && flush_due(w, err))
        return -1;
    return batch_ends(w) ? flush_batch(w, err) : 0;
}

/* Deletes the traces an interrupted ingest left in the catalog as
 * DB_TRACE_INGESTING.  Only called with the writer lock held, so no live
 * ingest can own them. */
static int reclaim(db_writer *w, db_error *err)
{
    tails_lost(w); /* its deletes change pages */
    if (db_catalog_drop_repeats(w->a, w->txn, err))
        return -1;
    uint32_t ids[64];
    char names[64][256];
    int n = 0;
    MDB_cursor *c;
    int rc = mdb_cursor_open(w->txn, w->a->dbi[DBI_TRACES], &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    MDB_val k, v;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0 && n < 64; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size >= sizeof names[0])
            continue;
        memcpy(names[n], k.mv_data, k.mv_size);
        names[n][k.mv_size] = 0;
        db_trace_info t;
        if (db_catalog_get(w->a, w->txn, names[n], &t, err) == 1 && t.state != DB_TRACE_COMPLETE)
            ids[n++] = t.id;
    }
    mdb_cursor_close(c);
    for (int i = 0; i < n; i++) {
        /* in steps, each committed: the trace is hidden all along, and a
         * big one would otherwise be copied into memory page by page */
        db_clear st = {.trace = ids[i]};
        while ((rc = db_clear_step(w->a, w->txn, &st, DB_CLEAR_BUDGET, err)) == 1)
            if (flush(w, err))
                return -1;
        if (rc)
            return -1;
        unsigned char id[4];
        db_put_be32(id, ids[i]);
        MDB_val nk = {strlen(names[i]), names[i]}, ik = {4, id}, iv;
        mdb_del(w->txn, w->a->dbi[DBI_TRACES], &nk, NULL);
        /* the id's entry, unless it names another trace now */
        if (mdb_get(w->txn, w->a->dbi[DBI_TRACE_IDS], &ik, &iv) == 0 && iv.mv_size == nk.mv_size &&
            memcmp(iv.mv_data, nk.mv_data, nk.mv_size) == 0)
            mdb_del(w->txn, w->a->dbi[DBI_TRACE_IDS], &ik, NULL);
    }
    if (!n)
        return 0;
    /* LMDB reuses a page two commits after the one that freed it (the
     * last commit is the snapshot a new reader would get): one more,
     * small, commit lets the next one -- an ingest's first batch, often
     * its only one -- write into the space just freed */
    uint32_t fmt = DB_FORMAT_VERSION;
    MDB_val fk = {6, "format"}, fv = {4, &fmt};
    if (flush(w, err))
        return -1;
    rc = mdb_put(w->txn, w->a->dbi[DBI_META], &fk, &fv, 0);
    return rc ? db_lmdb_fail(err, rc, "write") : flush(w, err);
}

/* A writer with its write transaction, holding the archive's writer lock:
 * LMDB serializes transactions, not the batches of one ingest, so a second
 * ingest waits here until the first has finished. */
static db_writer *writer_new(db_archive *a, db_error *err)
{
    if (a->readonly) {
        db_fail_readonly(a, err);
        return NULL;
    }
    db_writer *w = calloc(1, sizeof *w);
    if (!w) {
        db_fail(err, -1, "out of memory");
        return NULL;
    }
    w->a = a;
    w->batch.touch_w = 1024;
    tails_lost(w);
    MDB_stat es;
    w->tail.page_room = mdb_env_stat(a->env, &es) ? 0 : db_tail_room(es.ms_psize);
    /* A writer's reads land all over the file (a leaf per put), and for
     * each the kernel would map 64 KB around it: the resident set then
     * grew by tens of MB between two trims.  Advice for the whole map,
     * which only this process's writer and readers share. */
    if (a->map)
        madvise(a->map, a->map_len, MADV_RANDOM);
    /* tests make batches small to exercise many commits on small traces */
    const char *bo = getenv("ARGUSQ_BATCH_OPS");
    w->batch.max_ops = bo && atoll(bo) > 0 ? (uint64_t)atoll(bo) : DB_BATCH_OPS;
    const char *bs = getenv("ARGUSQ_BATCH_SYNC");
    w->batch.nosync = bs && strcmp(bs, "0") == 0;
    w->lock_fd = open(a->path, O_RDONLY | O_CLOEXEC);
    if (w->lock_fd < 0 || flock(w->lock_fd, LOCK_EX) != 0) {
        db_fail(err, -1, "%s: cannot take the writer lock: %s", a->path, strerror(errno));
        if (w->lock_fd >= 0)
            close(w->lock_fd);
        free(w);
        return NULL;
    }
    /* `argusq compact` puts a new file in the archive's place: a process
     * that opened the old one must not write into it (its writes would
     * go to a file no one opens again) */
    struct stat here, there;
    int envfd;
    if (mdb_env_get_fd(a->env, &envfd) == 0 && fstat(envfd, &here) == 0 && stat(a->path, &there) == 0 &&
        (here.st_ino != there.st_ino || here.st_dev != there.st_dev)) {
        db_fail(err, -1, "%s: the archive was replaced (compacted) since it was opened: open it again", a->path);
        close(w->lock_fd);
        free(w);
        return NULL;
    }
    int rc = mdb_txn_begin(a->env, NULL, 0, &w->txn);
    if (rc) {
        db_lmdb_fail(err, rc, "write transaction");
        close(w->lock_fd);
        free(w);
        return NULL;
    }
    if (reclaim(w, err)) {
        db_writer_abort(w);
        return NULL;
    }
    w->flushed = false;
    return w;
}

/* A trace id never given before (ids only grow). */
static int new_id(db_writer *w, uint32_t *id, db_error *err)
{
    uint32_t next = 1;
    MDB_val k = {7, "next_id"}, v;
    int rc = mdb_get(w->txn, w->a->dbi[DBI_META], &k, &v);
    if (rc == 0 && v.mv_size == 4)
        memcpy(&next, v.mv_data, 4);
    uint32_t after = next + 1;
    v = (MDB_val){4, &after};
    rc = mdb_put(w->txn, w->a->dbi[DBI_META], &k, &v, 0);
    if (rc)
        return db_lmdb_fail(err, rc, "write");
    *id = next;
    return 0;
}

static db_writer *begin_here(db_archive *a, const char *name, const char *format, const char *source,
                             db_error *err)
{
    if (db_name_check(name, err))
        return NULL;
    db_writer *w = writer_new(a, err);
    if (!w)
        return NULL;
    db_trace_info old;
    int got = db_catalog_get(a, w->txn, name, &old, err);
    if (got != 0) {
        if (got > 0)
            db_fail(err, -1, "trace \"%s\" already exists in %s (use --name to give another name)", name,
                    a->path);
        db_writer_abort(w);
        return NULL;
    }
    if (new_id(w, &w->info.id, err)) {
        db_writer_abort(w);
        return NULL;
    }
    memcpy(w->info.name, name, strlen(name) + 1);
    snprintf(w->info.format, sizeof w->info.format, "%s", format ? format : "");
    snprintf(w->info.source, sizeof w->info.source, "%s", source ? source : "");
    w->info.first_ts = UINT64_MAX;
    /* listed as ingesting until the commit: hidden from readers, and known
     * to the next writer if this process dies */
    w->info.state = DB_TRACE_INGESTING;
    if (db_catalog_put(a, w->txn, &w->info, false, err)) {
        db_writer_abort(w);
        return NULL;
    }
    w->batched = true;
    return w;
}

struct begin_args {
    db_archive *a;
    const char *name, *format, *source;
    db_error *err;
};

static db_writer *begin_there(db_wq *q, void *ctx)
{
    struct begin_args *b = ctx;
    db_writer *w = begin_here(b->a, b->name, b->format, b->source, b->err);
    if (w) { /* on the writer's thread */
        w->q = q;
        w->q_thread = writer_self();
        w->relayed = db_wq_interrupted(q);
    }
    return w;
}

/* A new trace is written by a thread of its own (wqueue.c), unless
 * $ARGUSQ_WRITER_THREAD=0 or no thread can be had. */
db_writer *db_writer_begin(db_archive *a, const char *name, const char *format, const char *source,
                           db_error *err)
{
    const char *env = getenv("ARGUSQ_WRITER_THREAD");
    db_wq *q = env && strcmp(env, "0") == 0 ? NULL : db_wq_start(false);
    if (!q)
        return begin_here(a, name, format, source, err);
    struct begin_args b = {a, name, format, source, err};
    db_writer *w = db_wq_begin(q, begin_there, &b);
    if (!w)
        db_wq_stop(q);
    return w;
}

db_writer *db_writer_open(db_archive *a, const char *trace, db_error *err)
{
    db_writer *w = writer_new(a, err);
    if (!w)
        return NULL;
    w->existing = true;
    int got = db_catalog_get(a, w->txn, trace, &w->info, err);
    if (got <= 0) {
        if (got == 0)
            db_fail(err, -1, "no trace named \"%s\" in %s", trace, a->path);
        db_writer_abort(w);
        return NULL;
    }
    return w;
}

/* Copies the keys of trace `from` in one table to the writer's trace
 * (keys start with the trace id; the rest and the values as they are). */
static int copy_table(db_writer *w, int dbi, uint32_t from, db_error *err)
{
    unsigned char k[4];
    db_put_be32(k, from);
    MDB_cursor *c;
    int rc = mdb_cursor_open(w->txn, w->a->dbi[dbi], &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    MDB_val key = {4, k}, v;
    int ret = 0;
    for (rc = mdb_cursor_get(c, &key, &v, MDB_SET_RANGE); rc == 0 && !ret;
         rc = mdb_cursor_get(c, &key, &v, MDB_NEXT)) {
        if (key.mv_size < 4 || key.mv_size > IX_KEY_MAX || memcmp(key.mv_data, k, 4) != 0)
            break;
        unsigned char nk[IX_KEY_MAX];
        memcpy(nk, key.mv_data, key.mv_size);
        db_put_be32(nk, w->info.id);
        /* keys of the new id sort after every other trace's: appended,
         * which does not disturb this cursor's place */
        ret = put(w, dbi, nk, key.mv_size, v.mv_data, v.mv_size, err);
    }
    mdb_cursor_close(c);
    if (!ret && rc && rc != MDB_NOTFOUND)
        ret = db_lmdb_fail(err, rc, "read");
    return ret;
}

static db_writer *rebuild_here(db_archive *a, const char *trace, db_error *err)
{
    db_writer *w = writer_new(a, err);
    if (!w)
        return NULL;
    int got = db_catalog_get(a, w->txn, trace, &w->replaces, err);
    if (got <= 0 || w->replaces.state != DB_TRACE_COMPLETE) {
        if (got >= 0)
            db_fail(err, -1, "no trace named \"%s\" in %s", trace, a->path);
        db_writer_abort(w);
        return NULL;
    }
    w->rebuild = true;
    db_trace_info *t = &w->info;
    *t = w->replaces;
    if (new_id(w, &t->id, err)) {
        db_writer_abort(w);
        return NULL;
    }
    /* hidden (a name no user can give) until the commit swaps it in */
    snprintf(t->name, sizeof t->name, "\001rebuild of %u", w->replaces.id);
    t->state = DB_TRACE_INGESTING;
    t->events = t->nodes = t->edges = 0; /* counted again as they are written */
    t->first_ts = UINT64_MAX;
    t->last_ts = 0;
    t->unordered = 0;
    static const int copied[] = {DBI_THREADS, DBI_PROCS, DBI_SYMBOLS, DBI_RULES, DBI_LABELS};
    if (db_catalog_put(a, w->txn, t, false, err)) {
        db_writer_abort(w);
        return NULL;
    }
    for (size_t i = 0; i < sizeof copied / sizeof copied[0]; i++)
        if (copy_table(w, copied[i], w->replaces.id, err)) {
            db_writer_abort(w);
            return NULL;
        }
    w->batched = true;
    return w;
}

/* The names the copy starts with, told to the queue's front (the graph
 * asks it for a thread's name; it answers from what it carried), read
 * from the old copy in a read transaction of the caller's thread. */
static int know_one(void *ctx, const MDB_val *k, const MDB_val *v)
{
    db_writer *w = ctx;
    if (k->mv_size != 8)
        return 0;
    if (v->mv_size == sizeof(db_thread)) {
        db_thread t;
        memcpy(&t, v->mv_data, sizeof t);
        t.name[DB_NAME_MAX - 1] = 0;
        db_wq_know_thread(w->q, &t);
    }
    return 0;
}

static int know_proc(void *ctx, const MDB_val *k, const MDB_val *v)
{
    db_writer *w = ctx;
    if (k->mv_size != 8)
        return 0;
    char name[DB_NAME_MAX];
    db_name_copy(name, sizeof name, v->mv_data, v->mv_size);
    db_wq_know_proc(w->q, db_get_be32((const unsigned char *)k->mv_data + 4), name);
    return 0;
}

static int know_names(db_writer *w, db_error *err)
{
    MDB_txn *rt;
    int rc = mdb_txn_begin(w->a->env, NULL, MDB_RDONLY, &rt);
    if (rc)
        return db_lmdb_fail(err, rc, "read transaction");
    unsigned char k[4];
    db_put_be32(k, w->replaces.id);
    rc = db_scan_prefix(rt, w->a->dbi[DBI_THREADS], k, 4, k, 4, know_one, w, err);
    if (!rc)
        rc = db_scan_prefix(rt, w->a->dbi[DBI_PROCS], k, 4, k, 4, know_proc, w, err);
    mdb_txn_abort(rt);
    return rc;
}

struct rebuild_args {
    db_archive *a;
    const char *trace;
    db_error *err;
};

static db_writer *rebuild_there(db_wq *q, void *ctx)
{
    struct rebuild_args *b = ctx;
    db_writer *w = rebuild_here(b->a, b->trace, b->err);
    if (w) { /* on the writer's thread */
        w->q = q;
        w->q_thread = writer_self();
        w->relayed = db_wq_interrupted(q);
    }
    return w;
}

/* A rebuild's copy is written by a thread of its own too, while the
 * caller reads the old copy and builds the graph (scan_source). */
db_writer *db_writer_rebuild(db_archive *a, const char *trace, db_error *err)
{
    const char *env = getenv("ARGUSQ_WRITER_THREAD");
    db_wq *q = env && strcmp(env, "0") == 0 ? NULL : db_wq_start(true);
    if (!q)
        return rebuild_here(a, trace, err);
    struct rebuild_args b = {a, trace, err};
    db_writer *w = db_wq_begin(q, rebuild_there, &b);
    if (!w) {
        db_wq_stop(q);
        return NULL;
    }
    if (know_names(w, err)) {
        db_writer_abort(w);
        return NULL;
    }
    return w;
}

/* At the commit of a rebuild: the new copy takes the trace's name, the
 * old one becomes a hidden trace that is deleted afterwards, step by step
 * (reclaim), all in the one last transaction: readers see the old copy or
 * the new one.  Trace ids name the copies; the listing (trace_ids) keeps
 * the id the trace was first ingested with, which names it. */
static int swap_in(db_writer *w, db_error *err)
{
    db_trace_info t = w->info, old = w->replaces;
    unsigned char id[4];
    db_put_be32(id, t.id);
    MDB_val hk = {strlen(t.name), t.name}, ik = {4, id};
    int rc = mdb_del(w->txn, w->a->dbi[DBI_TRACES], &hk, NULL);
    if (!rc)
        rc = mdb_del(w->txn, w->a->dbi[DBI_TRACE_IDS], &ik, NULL);
    if (rc)
        return db_lmdb_fail(err, rc, "catalog");
    /* the trace keeps its entry in trace_ids (its place in the listing,
     * and the latest mark if it has it), which names it */
    memcpy(t.name, old.name, sizeof t.name);
    t.ingested_at = old.ingested_at;
    t.state = DB_TRACE_COMPLETE;
    snprintf(old.name, sizeof old.name, "\001replaced %u", old.id);
    old.state = DB_TRACE_INGESTING;
    if (db_catalog_put_entry(w->a, w->txn, &t, err) || db_catalog_put_entry(w->a, w->txn, &old, err))
        return -1;
    w->info = t;
    return 0;
}

/* After a rebuild's commit: the old copy goes, in steps.  If this fails
 * or the process dies, the next writer finishes it (reclaim). */
static void drop_replaced(db_writer *w)
{
    db_error e;
    if (mdb_txn_begin(w->a->env, NULL, 0, &w->txn))
        return;
    if (reclaim(w, &e) == 0 && w->txn)
        mdb_txn_commit(w->txn);
    else if (w->txn)
        mdb_txn_abort(w->txn);
    w->txn = NULL;
}

/* A threaded rebuild reads the old copy on the caller's thread, in a read
 * transaction of its own, while the writer's thread writes and commits
 * the new copy: the old one is committed and nothing changes it before
 * the swap.  The transaction is renewed every SCAN_RENEW blocks, or it
 * would keep every page the writer's batches free from being reused (the
 * file would grow by a batch's pages per batch), and the map is trimmed
 * as the writer's is. */
#define SCAN_RENEW 64u

static int scan_old(db_writer *w, db_event_cb cb, void *ctx, db_error *err)
{
    MDB_txn *rt;
    int rc = mdb_txn_begin(w->a->env, NULL, MDB_RDONLY, &rt);
    if (rc)
        return db_lmdb_fail(err, rc, "read transaction");
    db_evblock blk = {0};
    int ret = 0;
    for (uint64_t next = 1, n = 1; !ret; n++) {
        if (n % SCAN_RENEW == 0) {
            mdb_txn_reset(rt);
            if ((rc = mdb_txn_renew(rt)) != 0) {
                ret = db_lmdb_fail(err, rc, "read transaction");
                break;
            }
            db_archive_trim(w->a);
        }
        int got = db_evblock_load(rt, w->a->dbi[DBI_EVENTS], w->replaces.id, next, &blk, err);
        if (got <= 0) {
            ret = got;
            break;
        }
        const db_event *ev;
        for (; !ret && (ev = db_evblock_get(&blk, next)) != NULL; next++) {
            db_event e = *ev; /* the callback may not change the block's copy */
            ret = cb(ctx, &e);
        }
    }
    db_evblock_free(&blk);
    mdb_txn_abort(rt);
    return ret;
}

int db_writer_scan_source(db_writer *w, db_event_cb cb, void *ctx, db_error *err)
{
    if (!w->rebuild)
        return db_fail(err, -1, "scan_source: not a rebuild");
    return front(w) ? scan_old(w, cb, ctx, err) : db_writer_scan_source_back(w, cb, ctx, err);
}

int db_writer_scan_source_back(db_writer *w, db_event_cb cb, void *ctx, db_error *err)
{
    w->in_scan = true;
    int rc = scan_blocks(w, w->replaces.id, cb, ctx, err);
    w->in_scan = false;
    return rc;
}

__attribute__((noinline)) int db_writer_clear_graph(db_writer *w, db_error *err)
{
    if (front(w))
        return db_wq_hand_block(w->q, err) ? -1 : db_wsync_clear_graph(w->q, w, err);
    return db_writer_clear_graph_back(w, err);
}

int db_writer_clear_graph_back(db_writer *w, db_error *err)
{
    if (hand_block(w, err))
        return -1;
    /* what an abandoned graph pass left waiting goes in first, so that
     * the clearing deletes it too */
    int rc;
    if (apply_patches(w, err) || put_nodes(w, err) || drain_later(w, err))
        return -1;
    if (w->ix.nthr && (rc = db_thrindex_flush(w->ix.nthr, w->info.id, nthr_put, w)) != 0)
        return thr_fail(w, rc, err);
    if (drain_chunks(w, err))
        return -1;
    tails_lost(w); /* the clearing deletes what the last leaves held */
    if (db_clear_trace_txn(w->a, w->txn, w->info.id, true, err))
        return -1;
    db_nodetop_free(w->ix.top); /* the lists of the graph cleared */
    w->ix.top = NULL;
    w->info.nodes = w->info.edges = 0;
    return 0;
}

struct last_rule {
    uint32_t seq;
};

static int last_rule_cb(void *ctx, uint32_t seq, const char *text)
{
    (void)text;
    ((struct last_rule *)ctx)->seq = seq;
    return 0;
}

__attribute__((noinline)) int db_writer_add_rule(db_writer *w, const char *text, size_t len, uint32_t *seq,
                                                  db_error *err)
{
    return front(w) ? db_wsync_add_rule(w->q, w, text, len, seq, err) : db_writer_add_rule_back(w, text, len, seq, err);
}

int db_writer_add_rule_back(db_writer *w, const char *text, size_t len, uint32_t *seq, db_error *err)
{
    struct last_rule l = {0};
    if (db_writer_scan_rules_back(w, last_rule_cb, &l, err))
        return -1;
    unsigned char k[8];
    db_put_be32(k, w->info.id);
    db_put_be32(k + 4, l.seq + 1);
    *seq = l.seq + 1;
    MDB_val key = {8, k}, v = {len, (void *)text};
    int rc = mdb_put(w->txn, w->a->dbi[DBI_RULES], &key, &v, 0);
    return rc ? db_lmdb_fail(err, rc, "write") : 0;
}

__attribute__((noinline)) int db_writer_drop_rule(db_writer *w, uint32_t seq, db_error *err)
{
    return front(w) ? db_wsync_drop_rule(w->q, w, seq, err) : db_writer_drop_rule_back(w, seq, err);
}

int db_writer_drop_rule_back(db_writer *w, uint32_t seq, db_error *err)
{
    unsigned char k[8];
    db_put_be32(k, w->info.id);
    db_put_be32(k + 4, seq);
    MDB_val key = {8, k};
    int rc = mdb_del(w->txn, w->a->dbi[DBI_RULES], &key, NULL);
    if (rc == MDB_NOTFOUND)
        return 0;
    return rc ? db_lmdb_fail(err, rc, "delete") : 1;
}

__attribute__((noinline)) int db_writer_scan_rules(db_writer *w, db_rule_cb cb, void *ctx, db_error *err)
{
    return front(w) ? db_wsync_scan_rules(w->q, w, cb, ctx, err) : db_writer_scan_rules_back(w, cb, ctx, err);
}

int db_writer_scan_rules_back(db_writer *w, db_rule_cb cb, void *ctx, db_error *err)
{
    return db_scan_rules_txn(w->txn, w->a->dbi[DBI_RULES], w->info.id, cb, ctx, err);
}

__attribute__((noinline)) void db_writer_abort(db_writer *w)
{
    if (!w)
        return;
    if (front(w))
        db_wsync_abort(w->q, w);
    else
        db_writer_abort_back(w);
}

void db_writer_abort_back(db_writer *w)
{
    close_cursors(w);
    db_keysort_free(w->keys.ks);
    w->keys.ks = NULL;
    w->keys.nkeys = 0;
    if (w->txn)
        mdb_txn_abort(w->txn);
    w->txn = NULL;
    /* batches already committed: delete them now (if this fails too, the
     * next writer's reclaim does it) */
    db_error e;
    if (w->flushed && !mdb_txn_begin(w->a->env, NULL, 0, &w->txn) && reclaim(w, &e) == 0 && w->txn)
        mdb_txn_commit(w->txn);
    else if (w->txn)
        mdb_txn_abort(w->txn);
    writer_free(w);
}

/* ---- a writer of catalog changes (manage.c) ---- */

db_writer *db_writer_catalog(db_archive *a, db_error *err) { return writer_new(a, err); }

/* the caller writes through it as it likes: no leaf is known after */
MDB_txn *db_writer_txn(db_writer *w)
{
    tails_lost(w);
    return w->txn;
}

int db_writer_copy(db_writer *w, int fd, bool compact, db_error *err)
{
    /* the catalog writer's transaction holds nothing (leftovers were
     * deleted and committed when it began): the copy reads the last
     * commit, and nobody writes while the lock is held */
    close_cursors(w);
    if (w->txn)
        mdb_txn_abort(w->txn);
    w->txn = NULL;
    w->flushed = false;
    int rc = mdb_env_copyfd2(w->a->env, fd, compact ? MDB_CP_COMPACT : 0);
    return rc ? db_lmdb_fail(err, rc, "copy") : 0;
}

int db_writer_catalog_commit(db_writer *w, db_error *err)
{
    close_cursors(w);
    int rc = mdb_txn_commit(w->txn);
    w->txn = NULL;
    int ret = rc ? commit_fail(w, rc, err) : 0;
    if (!ret)
        drop_replaced(w); /* what the change hid goes now, in steps */
    writer_free(w);
    return ret;
}

void db_writer_interrupt(db_writer *w, const volatile sig_atomic_t *flag)
{
    w->interrupt = flag;
    if (w->q)
        db_wq_interrupt(w->q, flag);
}

/* The front's look at the caller's interrupt before it asks for the
 * commit (the thread's is relayed: interrupted). */
static int front_interrupted(const db_writer *w, db_error *err)
{
    return w->interrupt && *w->interrupt ? db_fail(err, -1, "interrupted") : 0;
}

__attribute__((noinline)) int db_writer_commit(db_writer *w, db_trace_info *out, db_error *err)
{
    if (front(w))
        return front_interrupted(w, err) || db_wq_hand_block(w->q, err) ? (db_writer_abort(w), -1)
                                                                         : db_wsync_commit(w->q, w, out, err);
    return db_writer_commit_back(w, out, err);
}

int db_writer_commit_back(db_writer *w, db_trace_info *out, db_error *err)
{
    if (w->info.first_ts == UINT64_MAX)
        w->info.first_ts = 0;
    if (!w->existing)
        w->info.ingested_at = (uint64_t)time(NULL);
    w->info.state = DB_TRACE_COMPLETE;
    w->ix.chunk_commits = true;
    int ret = interrupted(w, err) || hand_block(w, err) || apply_patches(w, err) || put_nodes(w, err);
    if (!ret && w->ix.thr && (ret = db_thrindex_flush(w->ix.thr, w->info.id, thr_put, w)) != 0)
        ret = thr_fail(w, ret, err);
    if (!ret && w->ix.nthr && (ret = db_thrindex_flush(w->ix.nthr, w->info.id, nthr_put, w)) != 0)
        ret = thr_fail(w, ret, err);
    for (int i = 0; i < OIX__COUNT && !ret; i++)
        if (w->ix.oix[i]) {
            sorted_run(w, oix_dbi[i], db_thrindex_open(w->ix.oix[i]));
            if ((ret = db_thrindex_flush(w->ix.oix[i], w->info.id, oix_put[i], w)) != 0)
                ret = thr_fail(w, ret, err);
            w->batch.touch_w = 1024;
        }
    if (!ret && w->ix.sigs && (ret = db_sigindex_flush(w->ix.sigs, w->info.id, sig_put, w)) != 0)
        ret = thr_fail(w, ret, err);
    if (!ret && w->ix.top && (ret = db_nodetop_flush(w->ix.top, w->info.id, top_put, w)) != 0)
        ret = thr_fail(w, ret, err);
    ret = ret || flush_norms(w, err) || drain_later(w, err) || drain_chunks(w, err) ||
          /* a trace already listed keeps its slot in trace_ids, which
           * after a rebuild is not its id: only its entry is written */
          (w->rebuild     ? swap_in(w, err)
           : w->existing ? db_catalog_put_entry(w->a, w->txn, &w->info, err)
                         : db_catalog_put(w->a, w->txn, &w->info, true, err));
    if (!ret) {
        close_cursors(w);
        int rc = mdb_txn_commit(w->txn);
        w->txn = NULL;
        if (rc)
            ret = commit_fail(w, rc, err);
    }
    if (!ret && out)
        *out = w->info;
    if (ret) { /* the abort deletes what earlier batches committed */
        db_writer_abort_back(w);
        return ret;
    }
    if (w->rebuild)
        drop_replaced(w);
    writer_free(w);
    return ret;
}

__attribute__((noinline)) int db_writer_proc(db_writer *w, uint32_t pid, const char *name, db_error *err)
{
    return front(w) ? db_wq_proc(w->q, pid, name, err) : db_writer_proc_back(w, pid, name, err);
}

int db_writer_proc_back(db_writer *w, uint32_t pid, const char *name, db_error *err)
{
    unsigned char k[8];
    db_put_be32(k, w->info.id);
    db_put_be32(k + 4, pid);
    MDB_val key = {8, k}, v;
    int rc = db_names_proc(&w->names, pid) ? 0 : mdb_get(w->txn, w->a->dbi[DBI_PROCS], &key, &v);
    if (rc == MDB_NOTFOUND)
        w->info.processes++;
    else if (rc)
        return db_lmdb_fail(err, rc, "read");
    size_t n = strnlen(name, DB_NAME_MAX - 1);
    db_names_set_proc(&w->names, pid, name, n);
    return put(w, DBI_PROCS, k, 8, name, n, err);
}

__attribute__((noinline)) int db_writer_thread(db_writer *w, const db_thread *t, db_error *err)
{
    return front(w) ? db_wq_thread(w->q, t, err) : db_writer_thread_back(w, t, err);
}

int db_writer_thread_back(db_writer *w, const db_thread *t, db_error *err)
{
    unsigned char k[8];
    db_put_be32(k, w->info.id);
    db_put_be32(k + 4, t->tid);
    MDB_val key = {8, k}, v;
    int rc = db_names_thread(&w->names, t->tid) ? 0 : mdb_get(w->txn, w->a->dbi[DBI_THREADS], &key, &v);
    if (rc == MDB_NOTFOUND)
        w->info.threads++;
    else if (rc)
        return db_lmdb_fail(err, rc, "read");
    db_thread copy = db_thread_stored(t);
    db_names_set_thread(&w->names, &copy);
    return put(w, DBI_THREADS, k, 8, &copy, sizeof copy, err);
}

__attribute__((noinline)) int db_writer_symbol(db_writer *w, uint64_t addr, const char *name, db_error *err)
{
    return front(w) ? db_wq_symbol(w->q, addr, name, err) : db_writer_symbol_back(w, addr, name, err);
}

int db_writer_symbol_back(db_writer *w, uint64_t addr, const char *name, db_error *err)
{
    unsigned char k[12];
    db_put_be32(k, w->info.id);
    db_put_be64(k + 4, addr);
    return put(w, DBI_SYMBOLS, k, 12, name, strnlen(name, 255), err);
}

__attribute__((noinline)) int db_writer_label(db_writer *w, const char *key, const char *value, db_error *err)
{
    if (db_label_check(key, strlen(value), err))
        return -1;
    return front(w) ? db_wq_label(w->q, key, value, err) : db_writer_label_back(w, key, value, err);
}

/* key and value checked (db_writer_label) */
int db_writer_label_back(db_writer *w, const char *key, const char *value, db_error *err)
{
    unsigned char k[4 + DB_LABEL_KEY_MAX];
    return put(w, DBI_LABELS, k, db_label_key(k, w->info.id, key), value, strlen(value), err);
}

__attribute__((noinline)) int db_writer_get_thread(db_writer *w, uint32_t tid, db_thread *out, db_error *err)
{
    return front(w) ? db_wsync_get_thread(w->q, w, tid, out, err) : db_writer_get_thread_back(w, tid, out, err);
}

int db_writer_get_thread_back(db_writer *w, uint32_t tid, db_thread *out, db_error *err)
{
    const db_thread *t = db_names_thread(&w->names, tid);
    if (t) {
        *out = *t;
        return 1;
    }
    unsigned char k[8];
    db_put_be32(k, w->info.id);
    db_put_be32(k + 4, tid);
    MDB_val key = {8, k}, v;
    int rc = mdb_get(w->txn, w->a->dbi[DBI_THREADS], &key, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc || v.mv_size != sizeof *out)
        return rc ? db_lmdb_fail(err, rc, "read") : db_fail(err, -1, "damaged thread record");
    memcpy(out, v.mv_data, sizeof *out);
    db_names_set_thread(&w->names, out);
    return 1;
}

__attribute__((noinline)) int db_writer_get_proc(db_writer *w, uint32_t pid, char *name, size_t len, db_error *err)
{
    return front(w) ? db_wsync_get_proc(w->q, w, pid, name, len, err) : db_writer_get_proc_back(w, pid, name, len, err);
}

int db_writer_get_proc_back(db_writer *w, uint32_t pid, char *name, size_t len, db_error *err)
{
    const char *have = db_names_proc(&w->names, pid);
    if (have) {
        db_name_copy(name, len, have, strlen(have));
        return 1;
    }
    unsigned char k[8];
    db_put_be32(k, w->info.id);
    db_put_be32(k + 4, pid);
    MDB_val key = {8, k}, v;
    int rc = mdb_get(w->txn, w->a->dbi[DBI_PROCS], &key, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return db_lmdb_fail(err, rc, "read");
    db_names_set_proc(&w->names, pid, v.mv_data, v.mv_size);
    db_name_copy(name, len, v.mv_data, v.mv_size);
    return 1;
}

void db_writer_skip(db_writer *w)
{
    if (front(w))
        db_wq_skip(w->q);
    else
        db_writer_skip_back(w);
}

void db_writer_skip_back(db_writer *w) { w->info.skipped++; }

const char *db_writer_format(const db_writer *w) { return w->info.format; }

/* An object index key: trace, object, ts, event id. */
static int put_obj(db_writer *w, int ix, const db_evix *x, db_error *err)
{
    if (!w->ix.oix[ix] && !(w->ix.oix[ix] = db_thrindex_new(8, true)))
        return db_fail_oom(err);
    int rc = db_thrindex_add(w->ix.oix[ix], w->info.id, x->obj, x->ts, x->id, oix_put[ix], w);
    if (rc == 1 && !w->batched) /* one transaction: no commit between */
        rc = db_thrindex_flush(w->ix.oix[ix], w->info.id, oix_put[ix], w);
    w->ix.objects_due |= rc == 1; /* the next safe point writes them (flush_objects) */
    return rc < 0 ? thr_fail(w, rc, err) : 0;
}

uint64_t db_writer_next_event_id(const db_writer *w)
{
    return front(w) ? db_wq_next_event_id(w->q) : w->ev.front.events + 1;
}

static int time_key(db_writer *w, uint64_t ts, uint64_t id, db_error *err)
{
    unsigned char k[20];
    db_put_be32(k, w->info.id);
    db_put_be64(k + 4, ts);
    db_put_be64(k + 12, id);
    return put_later(w, DBI_EV_TIME, k, 20, err);
}

/* The trace turned out not to be in time order: index the events stored
 * so far (ids 1..upto, read back block by block). */
static int time_index_from_start(db_writer *w, uint64_t upto, db_error *err)
{
    w->info.unordered = 1;
    uint64_t next = 1;
    while (next <= upto) {
        trim_every(w, DB_EVBLOCK_BYTES); /* a graph pass reads every block */
        int got = db_evblock_load(w->txn, w->a->dbi[DBI_EVENTS], w->info.id, next, &w->ev.scanblk, err);
        if (got <= 0)
            return got < 0 ? -1 : db_fail(err, -1, "event %llu is missing", (unsigned long long)next);
        const db_event *ev;
        for (; next <= upto && (ev = db_evblock_get(&w->ev.scanblk, next)) != NULL; next++)
            if (time_key(w, ev->ts, next, err))
                return -1;
        if (next <= upto && batch_full(w) && flush(w, err))
            return -1;
    }
    return 0;
}

/* A block of events, into the events table under its first event's id. */
int db_writer_put_block(db_writer *w, const db_evblk *blk, db_error *err)
{
    unsigned char k[12];
    db_put_be32(k, w->info.id);
    db_put_be64(k + 4, blk->first);
    return put(w, DBI_EVENTS, k, sizeof k, blk->bytes, blk->len, err);
}

/* The unthreaded front's block being filled, put (a threaded writer's
 * front queues its own: db_wq_hand_block). */
static int hand_block(db_writer *w, db_error *err)
{
    db_evblk blk;
    return db_evfront_take(&w->ev.front, &blk) ? db_writer_put_block(w, &blk, err) : 0;
}

/* The public calls that a threaded writer queues (events, nodes,
 * signatures, edges) test front() and hand the rest to a function of its
 * own, out of line, which the queue's replay calls directly (*_back): in
 * one function, the body's prologue and epilogue (six registers saved and
 * restored) ran for every call the graph's thread queued, and the front()
 * test for every call the writer's thread replayed. */
static __attribute__((noinline)) int event_here(db_writer *w, db_event *ev, db_error *err);

int db_writer_event(db_writer *w, db_event *ev, db_error *err)
{
    return front(w) ? db_wq_event(w->q, ev, err) : event_here(w, ev, err);
}

static int event_here(db_writer *w, db_event *ev, db_error *err)
{
    db_evblk blk;
    int handed = db_evfront_add(&w->ev.front, ev, &blk);
    if (handed < 0)
        return db_fail_oom(err);
    db_evix x;
    db_evix_of(&x, ev);
    return db_writer_event_back(w, &x, handed ? &blk : NULL, err);
}

/* The object index (OIX_*) an event of this type goes into, or -1. */
static inline int obj_index(unsigned type)
{
    switch (type) {
    case DB_EV_MACH_MSG: return OIX_PORT;
    case DB_EV_DISPATCH_ENQUEUE:
    case DB_EV_DISPATCH_INVOKE:
    case DB_EV_RUNLOOP_SUBMIT:
    case DB_EV_RUNLOOP_INVOKE: return OIX_BLOCK;
    case DB_EV_TIMER_ARM:
    case DB_EV_TIMER_CANCEL:
    case DB_EV_TIMER_CALLOUT: return OIX_TIMER;
    default: return -1;
    }
}

static __attribute__((noinline)) int event_back(db_writer *w, const db_evix *x, const db_evblk *blk, db_error *err);

/* An event that only extends its thread's open chunk by a byte, with no
 * block, no commit due, in time order and of no object, is done here,
 * where nothing is called and so no register saved; anything else, or
 * what the chunk cannot take, goes to event_back whole, nothing of the
 * event done before (db_thrindex_add_fast changes nothing when it says
 * no).  What it saves is event_back's six registers saved and restored,
 * and the type's switch, for nearly every event. */
int db_writer_event_back(db_writer *w, const db_evix *x, const db_evblk *blk, db_error *err)
{
    if (blk || w->ix.objects_due || w->ix.norms_due || batch_near(w) || w->info.unordered || x->ts < w->ev.last_ts ||
        !w->ix.thr || obj_index(x->type) >= 0 || !db_thrindex_add_fast(w->ix.thr, x->tid, x->ts, x->id))
        return event_back(w, x, blk, err);
    w->info.events = x->id;
    w->batch.ops++;
    w->ev.last_ts = x->ts;
    if (x->ts < w->info.first_ts)
        w->info.first_ts = x->ts;
    if (x->ts > w->info.last_ts)
        w->info.last_ts = x->ts;
    return 0;
}

static int event_back(db_writer *w, const db_evix *x, const db_evblk *blk, db_error *err)
{
    if (maybe_flush(w, err))
        return -1;
    w->info.events = x->id;
    w->batch.ops++;
    if (blk && db_writer_put_block(w, blk, err))
        return -1;
    /* while ids follow time (ftrace always does), the events table is its
     * own time index; the first event out of order starts a real one
     * (the front handed over the events before it) */
    if (!w->info.unordered && x->ts < w->ev.last_ts && time_index_from_start(w, x->id - 1, err))
        return -1;
    w->ev.last_ts = x->ts;
    if (w->info.unordered && time_key(w, x->ts, x->id, err))
        return -1;
    if (!w->ix.thr && !(w->ix.thr = db_thrindex_new(4, false)))
        return db_fail_oom(err);
    int rc = db_thrindex_add(w->ix.thr, w->info.id, x->tid, x->ts, x->id, thr_put, w);
    if (rc)
        return thr_fail(w, rc, err);
    int obj_ix = obj_index(x->type);
    if (obj_ix >= 0 && put_obj(w, obj_ix, x, err))
        return -1;

    if (x->ts < w->info.first_ts)
        w->info.first_ts = x->ts;
    if (x->ts > w->info.last_ts)
        w->info.last_ts = x->ts;
    return 0;
}

int db_writer_node(db_writer *w, const db_node *n, db_error *err)
{
    return db_writer_node_key(w, n, db_thread_key(n->thread, n->kind), err);
}

int db_writer_node_key(db_writer *w, const db_node *n, uint32_t thread_key, db_error *err)
{
    return front(w) ? db_wq_node(w->q, n, thread_key, err) : db_writer_node_back(w, n, thread_key, err);
}

__attribute__((noinline)) int db_writer_node_back(db_writer *w, const db_node *n, uint32_t thread_key, db_error *err)
{
    /* the first room is what a batch's records may take (pages are
     * mapped as they are written), so that realloc does not copy them
     * again and again as it doubles from 64 KB */
    if (w->nrec.nodes_len + DB_NODE_REC_MAX > w->nrec.nodes_cap) {
        size_t c = w->nrec.nodes_cap ? w->nrec.nodes_cap * 2 : DB_NODES_MAX + 2 * DB_NODE_REC_MAX;
        void *p = realloc(w->nrec.nodes, c);
        if (!p)
            return db_fail_oom(err);
        w->nrec.nodes = p;
        w->nrec.nodes_cap = c;
    }
    if (w->nrec.nnref == w->nrec.nref_cap) {
        size_t c = w->nrec.nref_cap ? w->nrec.nref_cap * 2 : 4096;
        void *p = realloc(w->nrec.nref, c * sizeof *w->nrec.nref);
        if (!p)
            return db_fail_oom(err);
        w->nrec.nref = p;
        w->nrec.nref_cap = c;
    }
    /* the thread's own timeline: not the interrupts that landed on it */
    bool isolated = db_node_kind_isolated(n->kind);
    if (!isolated) { /* chunks of (begin, id), as the thread index's */
        if (!w->ix.nthr && !(w->ix.nthr = db_thrindex_new(4, false)))
            return db_fail_oom(err);
        int rc = db_thrindex_add(w->ix.nthr, w->info.id, n->tid, n->begin, n->id, nthr_put, w);
        if (rc)
            return thr_fail(w, rc, err);
    }
    if ((!w->ix.top && !(w->ix.top = db_nodetop_new())) || db_nodetop_add(w->ix.top, n, thread_key))
        return db_fail_oom(err);
    size_t len = db_node_encode(n, w->nrec.nodes + w->nrec.nodes_len);
    w->nrec.nref[w->nrec.nnref++] = (struct nref){n->id, (uint32_t)w->nrec.nodes_len, (uint32_t)len};
    w->nrec.nodes_len += len;
    w->batch.pages_left -= (int64_t)len * w->batch.node_w;
    w->info.nodes++;
    w->batch.ops++;
    return w->nrec.nodes_len > DB_NODES_MAX ? put_nodes(w, err) : 0;
}

int db_writer_signature(db_writer *w, const db_sig *sig, db_error *err)
{
    return front(w) ? db_wq_signature(w->q, sig, err) : db_writer_signature_back(w, sig, err);
}

/* front() asked once for both (a pthread_self call and the test), and
 * one call from the graph, not two. */
int db_writer_node_sig(db_writer *w, const db_node *n, uint32_t thread_key, const db_sig *sig, db_error *err)
{
    if (front(w))
        return db_wq_node_sig(w->q, n, thread_key, sig, err);
    return db_writer_node_back(w, n, thread_key, err) || db_writer_signature_back(w, sig, err) ? -1 : 0;
}

__attribute__((noinline)) int db_writer_signature_back(db_writer *w, const db_sig *sig, db_error *err)
{
    /* chunks of a committed trace are not reopened: a trace's signatures
     * are written with its graph (ingest, rebuild's new copy) */
    if (w->existing)
        return db_fail(err, -1, "signatures are written with their trace's graph");
    if (!w->ix.sigs && !(w->ix.sigs = db_sigindex_new()))
        return db_fail_oom(err);
    int rc = db_sigindex_add(w->ix.sigs, w->info.id, sig, sig_put, w);
    return rc ? thr_fail(w, rc, err) : 0;
}

__attribute__((noinline)) int db_writer_norm(db_writer *w, uint32_t hash, const char *text, db_error *err)
{
    return front(w) ? db_wq_norm(w->q, hash, text, err) : db_writer_norm_back(w, hash, text, err);
}

int db_writer_norm_back(db_writer *w, uint32_t hash, const char *text, db_error *err)
{
    /* the dictionary is one table for every trace: a form another trace
     * (or an earlier flush) brought is there already, and its put is
     * refused (norm_put).  Not looked up here: a lookup per form, at a
     * random place of the table, was 70% of the writer's page faults at
     * 19M events and kept mapping pages between two trims; the sorted
     * flush visits the table in order instead. */
    if (!w->ix.norms && !(w->ix.norms = db_normbuf_new()))
        return db_fail_oom(err);
    int rc = db_normbuf_add(w->ix.norms, hash, text, strnlen(text, 255));
    if (rc < 0)
        return db_fail_oom(err);
    if (rc && !w->batched) /* one transaction: no commit between */
        return flush_norms(w, err);
    w->ix.norms_due |= rc == 1; /* the next safe point writes them (flush_norms) */
    return 0;
}

int db_writer_edge(db_writer *w, const db_edge *e, db_error *err)
{
    return front(w) ? db_wq_edge(w->q, e, err) : db_writer_edge_back(w, e, err);
}

static __attribute__((noinline)) int edge_back(db_writer *w, const db_edge *e, db_error *err);

/* An edge with no commit due and room in both of the sort's tables is
 * added here, where nothing is called, so no register saved (as an
 * event is: db_writer_event_back); anything else goes to edge_back
 * whole. */
int db_writer_edge_back(db_writer *w, const db_edge *e, db_error *err)
{
    if (w->ix.objects_due || w->ix.norms_due || batch_near(w) || !w->keys.ks || !(w->batched || w->keys.nkeys + 2 < DB_BATCH_KEYS))
        return edge_back(w, e, err);
    db_edge_rec r = {e->to, e->from, e->kind, e->from_event, e->to_event};
    if (!db_keysort_add_edge_pair_fast(w->keys.ks, &r))
        return edge_back(w, e, err);
    w->batch.ops += 2;
    w->keys.nkeys += 2;
    w->batch.pages_left -= 2 * w->batch.key_w;
    w->info.edges++;
    return 0;
}

static int edge_back(db_writer *w, const db_edge *e, db_error *err)
{
    /* a batch ends between two edges too: a node that ends can bring
     * hundreds (the graph's end, a broadcast), and they wait in memory */
    if (maybe_flush(w, err))
        return -1;
    /* by target and by source: neither in key order as edges come (a
     * wakeup joins an old node to a new one), so they go in sorted at the
     * end of the batch, filling pages as appends do */
    db_edge_rec r = {e->to, e->from, e->kind, e->from_event, e->to_event};
    /* both sides in one call, not edge_later's two, counted together,
     * unless a writer of one transaction would drain between them
     * (later_added) */
    if (w->batched || w->keys.nkeys + 2 < DB_BATCH_KEYS) {
        if ((!w->keys.ks && !(w->keys.ks = db_keysort_new())) || db_keysort_add_edge_pair(w->keys.ks, &r) < 0)
            return db_fail_oom(err);
        w->batch.ops += 2;
        w->keys.nkeys += 2;
        w->batch.pages_left -= 2 * w->batch.key_w;
    } else {
        if (edge_later(w, 0, &r, err))
            return -1;
        r.a = e->from;
        r.b = e->to;
        if (edge_later(w, 1, &r, err))
            return -1;
    }
    w->info.edges++;
    return 0;
}

/* The node is kept in memory and goes into the event's block later
 * (apply_patches): rewriting a block per event would cost hundreds of
 * events' encoding each. */
__attribute__((noinline)) int db_writer_set_event_node(db_writer *w, uint64_t event_id, uint32_t node, db_error *err)
{
    return front(w) ? db_wq_set_event_node(w->q, event_id, node, err)
                    : db_writer_set_event_node_back(w, event_id, node, err);
}

int db_writer_set_event_node_back(db_writer *w, uint64_t event_id, uint32_t node, db_error *err)
{
    if (w->ev.npatch == w->ev.patch_cap) {
        size_t c = w->ev.patch_cap ? w->ev.patch_cap * 2 : 4096;
        void *p = realloc(w->ev.patch, c * sizeof *w->ev.patch);
        if (!p)
            return db_fail_oom(err);
        w->ev.patch = p;
        w->ev.patch_cap = c;
    }
    if (w->ev.npatch && event_id < w->ev.patch[w->ev.npatch - 1].id)
        w->ev.patch_unsorted = true;
    w->ev.patch[w->ev.npatch++] = (struct patch){event_id, node};
    w->batch.pages_left -= w->batch.patch_w;
    w->batch.ops++;
    return w->ev.npatch >= DB_PATCH_MAX ? apply_patches(w, err) : 0;
}

struct scan_ctx {
    db_writer *w;
    db_event_cb cb;
    void *ctx;
    db_error *err;
};

/* One event of the time index, by id, to the callback. */
static int scan_one(void *p, const MDB_val *key, const MDB_val *val)
{
    (void)val;
    struct scan_ctx *s = p;
    db_writer *w = s->w;
    uint64_t id = db_get_be64((const unsigned char *)key->mv_data + key->mv_size - 8);
    if (!db_evblock_get(&w->ev.scanblk, id)) /* a block read, not the one in hand */
        trim_every(w, DB_EVBLOCK_BYTES);
    int got = db_evblock_load(w->txn, w->a->dbi[DBI_EVENTS], w->info.id, id, &w->ev.scanblk, s->err);
    if (got <= 0)
        return got < 0 ? -1 : db_fail(s->err, -1, "event %llu is missing", (unsigned long long)id);
    db_event e = *db_evblock_get(&w->ev.scanblk, id);
    return s->cb(s->ctx, &e);
}

/* A trace in time order: its blocks in id order. */
static int scan_blocks(db_writer *w, uint32_t trace, db_event_cb cb, void *ctx, db_error *err)
{
    for (uint64_t next = 1;;) {
        trim_every(w, DB_EVBLOCK_BYTES); /* a graph pass reads every block */
        int got = db_evblock_load(w->txn, w->a->dbi[DBI_EVENTS], trace, next, &w->ev.scanblk, err);
        if (got <= 0)
            return got;
        const db_event *ev;
        for (; (ev = db_evblock_get(&w->ev.scanblk, next)) != NULL; next++) {
            db_event e = *ev; /* the callback may not change the block's copy */
            int rc = cb(ctx, &e);
            if (rc)
                return rc;
        }
        if (w->batched && batch_full(w) && flush(w, err))
            return -1;
    }
}

/* Walks the events in time order.  In a batched writer it commits every
 * DB_BATCH_OPS puts (the callback's writes); the time index's walk then
 * seeks back to the key it stopped at: a cursor does not survive its
 * transaction. */
__attribute__((noinline)) int db_writer_scan_time(db_writer *w, db_event_cb cb, void *ctx, db_error *err)
{
    if (front(w))
        return db_wq_hand_block(w->q, err) ? -1 : db_wsync_scan_time(w->q, w, cb, ctx, err);
    return db_writer_scan_time_back(w, cb, ctx, err);
}

int db_writer_scan_time_back(db_writer *w, db_event_cb cb, void *ctx, db_error *err)
{
    if (hand_block(w, err))
        return -1;
    if (apply_patches(w, err) || drain_later(w, err))
        return -1;
    w->in_scan = true;
    if (!w->info.unordered) {
        int rc = scan_blocks(w, w->info.id, cb, ctx, err);
        w->in_scan = false;
        return rc;
    }
    int table = DBI_EV_TIME;
    size_t full = 20;
    unsigned char key[20];
    size_t klen = 4;
    db_put_be32(key, w->info.id);
    struct scan_ctx s = {w, cb, ctx, err};
    int ret = 0;
    bool again = true, resumed = false;
    while (again && !ret) {
        again = false;
        MDB_cursor *c;
        int rc = mdb_cursor_open(w->txn, w->a->dbi[table], &c);
        if (rc) {
            ret = db_lmdb_fail(err, rc, "cursor");
            break;
        }
        MDB_val k = {klen, key}, v;
        rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
        if (resumed && rc == 0 && k.mv_size == klen && memcmp(k.mv_data, key, klen) == 0)
            rc = mdb_cursor_get(c, &k, &v, MDB_NEXT); /* done before the commit */
        for (; rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
            if (k.mv_size != full || memcmp(k.mv_data, key, 4) != 0)
                break;
            memcpy(key, k.mv_data, full);
            klen = full;
            if ((ret = scan_one(&s, &k, &v)) != 0)
                break;
            if (w->batched && batch_full(w)) {
                again = resumed = true;
                break;
            }
        }
        mdb_cursor_close(c);
        if (!ret && rc && rc != MDB_NOTFOUND)
            ret = db_lmdb_fail(err, rc, "scan");
        if (!ret && again)
            ret = flush(w, err);
    }
    w->in_scan = false;
    return ret;
}
