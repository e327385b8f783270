/* db/writer_batch.c -- batch sizing: where a batch of an ingest or a
 * rebuild ends, and its commit.  A batch ends after batch.max_ops puts,
 * DB_BATCH_KEYS index keys waiting for their sort, or sooner when the
 * dirty pages guessed for it reach DB_BATCH_PAGES (db_wr_pages_full,
 * asked at every safe point).  The counts grow as puts are
 * made (db_wr_count_put, writer_int.h; count_chunk, writer_chunks.c).  Also
 * here: the map of the archive trimmed as the writer reads, which keeps
 * an ingest's memory flat between commits. */
#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "writer_int.h"

/* A run of puts in key order into table dbi shares its pages: n puts into
 * a table of p pages dirty at most min(n, p) of them, so each counts
 * p/n of a page when n > p.  Counted a page each, a big flush of sorted
 * puts ended batches early, each commit writing its share of every table
 * again.  But the run's inserts split the pages they fill, and the new
 * pages and their parents are dirty too: the batches that flushed the
 * dictionary or the object indexes wrote well more than the pages p
 * gave, and were the largest of the ingest (docs/PERFORMANCE.md).  So a
 * run counts 2p. */
void db_wr_sorted_run(db_writer *w, int dbi, size_t n)
{
    MDB_stat st;
    size_t pages = mdb_stat(w->txn, w->a->dbi[dbi], &st) ? n : 2 * (st.ms_leaf_pages + st.ms_branch_pages + 1);
    w->batch.touch_w = n > pages ? (uint32_t)(1024 * pages / n) + 1 : 1024;
}

/* A batch ends after max_ops puts, or sooner when its dirty pages
 * would pass DB_BATCH_PAGES: as a trace grows, the pages a batch's
 * scattered puts land on grow with it, and LMDB keeps the largest
 * batch's buffers to the end.  The pages are guessed from the puts made
 * (db_wr_count_put, count_chunk, db_wr_sorted_run) and from the work the
 * commit does first -- events given their nodes, node records, index
 * keys sorted in -- at what that cost in the last commit.  Left out,
 * that work came on top of the bound, and the batches ended on their
 * index keys (DB_BATCH_KEYS) instead, at whatever their pages came to:
 * the largest commit grew with the trace (docs/PERFORMANCE.md). */
#define DB_BATCH_PAGES 2800u

static uint64_t guessed(const db_writer *w) { return w->batch.touched / 1024 + w->batch.appended / 4096; }

/* ... or after DB_BATCH_KEYS index keys (db_wr_put_later).  Asked at
 * every safe point, about once an event: the keys are counted (nkeys), not
 * asked of the sort, and the counts go to double as signed numbers (a
 * single conversion each, where an unsigned 64-bit one branches; they are
 * far below 2^63, so the values, the sums and the batches are the same),
 * and db_wr_maybe_flush's slow paths are out of line. */
static inline double as_double(uint64_t n) { return (double)(int64_t)n; }

bool db_wr_pages_full(const db_writer *w)
{
    double pending = as_double(w->ev.npatch) * w->batch.patch_pages +
                     as_double(w->nrec.nodes_len) * w->batch.node_pages + as_double(w->keys.nkeys) * w->batch.key_pages;
    return as_double(guessed(w)) + pending >= DB_BATCH_PAGES;
}

/* -1 with err "interrupted" once the writer's interrupt is set; else 0.
 * A threaded writer's thread learns it from its queue's copy (relayed,
 * db_wq_interrupted): only the caller's thread reads the caller's flag. */
int db_wr_interrupted(const db_writer *w, db_error *err)
{
    bool set = w->relayed ? atomic_load_explicit(w->relayed, memory_order_relaxed) : w->interrupt && *w->interrupt;
    return set ? db_fail(err, -1, "interrupted") : 0;
}

/* After a put of a run that may end the batch between two (chunk_commits):
 * the commit's failure is kept for the run's caller (db_wr_thr_fail). */
int db_wr_between_puts(db_writer *w)
{
    if (w->ix.chunk_commits && db_wr_batch_ends(w) && db_wr_flush_batch(w, &w->ix.thr_err)) {
        w->ix.thr_failed = true;
        return -1;
    }
    return 0;
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
 * otherwise pile up until its commit, more the larger the trace.  Every
 * DB_TRIM_EVERY puts the process's file pages are read from the kernel
 * (db_archive_file_rss: a guess from
 * the puts missed what reads map), and past DB_TRIM_RSS more than after
 * the last trim the mapping goes.  Only puts that search a table count:
 * an append writes its own dirty page.  A read fault maps the 16 pages
 * around the one read (the kernel's fault-around), so each search may map
 * 64 KB: checked less often, what was mapped between two checks was the
 * largest share of the growth of peak memory with the trace
 * (docs/PERFORMANCE.md).
 * Without /proc, each put is counted as a page and twice its value, and
 * the mapping goes every DB_TRIM_BYTES.  Dropping the mapping of the
 * read-only map under a live write transaction is safe: its dirty pages
 * are its own memory, and a clean page read again faults back in from
 * the page cache, unchanged. */
#define DB_TRIM_EVERY 32u
#define DB_TRIM_RSS (8u << 20)
#define DB_TRIM_BYTES (32u << 20)

void db_wr_trim_every(db_writer *w, size_t vlen)
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
int db_wr_commit_fail(db_writer *w, int rc, db_error *err)
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
int db_wr_flush(db_writer *w, db_error *err)
{
    size_t patches = w->ev.npatch, node_bytes = w->nrec.nodes_len, keys = w->keys.nkeys;
    uint64_t g0 = guessed(w);
    if (db_wr_apply_patches(w, err))
        return -1;
    uint64_t g1 = guessed(w);
    if (db_wr_put_nodes(w, err))
        return -1;
    uint64_t g2 = guessed(w);
    if (db_wr_drain_later(w, err) || db_wr_drain_chunks(w, err))
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
    db_wr_close_cursors(w);
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
        return db_wr_commit_fail(w, rc, err);
    w->flushed = true;
    w->batch.ops = w->batch.touched = w->batch.appended = 0;
    base_map_free(&w->batch.runs);
    db_chunkq_end_batch(w->ix.chunks);
    trim_map(w);
    rc = mdb_txn_begin(w->a->env, NULL, 0, &w->txn);
    return rc ? db_lmdb_fail(err, rc, "write transaction") : 0;
}
