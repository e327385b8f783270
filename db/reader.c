/* db/reader.c -- a read snapshot of one committed trace.  Readers never
 * block and are never blocked by an ingest (LMDB MVCC). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_int.h"

struct db_reader {
    db_archive *a;
    MDB_txn *txn;
    db_trace_info info;
    unsigned char tid[4]; /* the trace id as a key prefix */
    db_evblock blk;       /* db_get_event's block */
    /* the last trace id looked up by visible(): whether a committed trace
     * has it (a hidden one -- being ingested, or a rebuilt trace's old
     * copy on its way out -- does not), and its name */
    uint32_t vis_id;
    int vis_got;
    char vis_name[256];
    const volatile sig_atomic_t *interrupt; /* db_reader_interrupt */
};

db_reader *db_reader_open(db_archive *a, const char *trace, db_error *err)
{
    db_reader *r = calloc(1, sizeof *r);
    if (!r) {
        db_fail(err, -1, "out of memory");
        return NULL;
    }
    r->a = a;
    int rc = mdb_txn_begin(a->env, NULL, MDB_RDONLY, &r->txn);
    if (rc) {
        db_lmdb_fail(err, rc, "read transaction");
        free(r);
        return NULL;
    }
    int got = db_catalog_get(a, r->txn, trace, &r->info, err);
    if (got == 1 && r->info.state != DB_TRACE_COMPLETE)
        got = 0; /* an ingest is writing it */
    if (got <= 0) {
        if (got == 0)
            db_fail(err, -1, "no trace named \"%s\" in %s", trace, a->path);
        db_reader_close(r);
        return NULL;
    }
    db_put_be32(r->tid, r->info.id);
    return r;
}

const db_trace_info *db_reader_trace(const db_reader *r) { return &r->info; }

void db_reader_close(db_reader *r)
{
    if (!r)
        return;
    mdb_txn_abort(r->txn);
    db_evblock_free(&r->blk);
    free(r);
}

void db_reader_interrupt(db_reader *r, const volatile sig_atomic_t *flag) { r->interrupt = flag; }

/* -1 with err "interrupted" once the reader's interrupt is set; else 0.
 * Every lookup and every row of a scan asks (a load and a test). */
static inline int interrupted(const db_reader *r, db_error *err)
{
    return r->interrupt && *r->interrupt ? db_fail(err, -1, "interrupted") : 0;
}

static int get(db_reader *r, int dbi, const unsigned char *k, size_t klen, MDB_val *v, db_error *err)
{
    if (interrupted(r, err))
        return -1;
    MDB_val key = {klen, (void *)k};
    int rc = mdb_get(r->txn, r->a->dbi[dbi], &key, v);
    if (rc == MDB_NOTFOUND)
        return 0;
    return rc ? db_lmdb_fail(err, rc, "read") : 1;
}

/* A fixed-size record: the stored length is checked before it is copied. */
static int get_record(db_reader *r, int dbi, const unsigned char *k, size_t klen, void *out, size_t size,
                      const char *what, uint64_t id, db_error *err)
{
    MDB_val v;
    int got = get(r, dbi, k, klen, &v, err);
    if (got == 1) {
        if (v.mv_size != size)
            return db_fail(err, -1, "damaged %s %llu", what, (unsigned long long)id);
        memcpy(out, v.mv_data, size);
    }
    return got;
}

/* A text value, cut to fit buf and NUL-terminated. */
static int get_text(db_reader *r, int dbi, const unsigned char *k, size_t klen, char *buf, size_t len,
                    db_error *err)
{
    MDB_val v;
    int got = get(r, dbi, k, klen, &v, err);
    if (got == 1) {
        size_t n = v.mv_size < len - 1 ? v.mv_size : len - 1;
        memcpy(buf, v.mv_data, n);
        buf[n] = 0;
    }
    return got;
}

int db_get_node(db_reader *r, uint32_t id, db_node *out, db_error *err)
{
    return db_get_node_of(r, r->info.id, id, out, err);
}

int db_get_event(db_reader *r, uint64_t id, db_event *out, db_error *err)
{
    if (interrupted(r, err))
        return -1;
    int got = db_evblock_load(r->txn, r->a->dbi[DBI_EVENTS], r->info.id, id, &r->blk, err);
    if (got == 1)
        *out = *db_evblock_get(&r->blk, id);
    return got;
}

int db_get_thread(db_reader *r, uint32_t tid, db_thread *out, db_error *err)
{
    unsigned char k[8];
    memcpy(k, r->tid, 4);
    db_put_be32(k + 4, tid);
    return get_record(r, DBI_THREADS, k, 8, out, sizeof *out, "thread", tid, err);
}

int db_get_symbol(db_reader *r, uint64_t addr, char *name, size_t len, db_error *err)
{
    unsigned char k[12];
    memcpy(k, r->tid, 4);
    db_put_be64(k + 4, addr);
    return get_text(r, DBI_SYMBOLS, k, 12, name, len, err);
}

int db_scan_rules(db_reader *r, db_rule_cb cb, void *ctx, db_error *err)
{
    return db_scan_rules_txn(r->txn, r->a->dbi[DBI_RULES], r->info.id, cb, ctx, err);
}

int db_get_sig(db_reader *r, uint32_t node, db_sig *out, db_error *err)
{
    return db_get_sig_of(r, r->info.id, node, out, err);
}

/* The signature index is keyed by thread key: the node's name and kind
 * give it.  The chunk that holds the node starts at most DB_SIG_SPAN ids
 * before it (sigindex.c). */
struct sig_find {
    uint32_t node;
    db_sig *out;
    bool found;
    db_error *err;
};

static int sig_find_one(void *p, const MDB_val *k, const MDB_val *v)
{
    struct sig_find *f = p;
    db_sigchunk it;
    int got;
    db_sigchunk_begin(&it, k, v);
    while ((got = db_sigchunk_next(&it, f->out)) == 1)
        if (f->out->node >= f->node) {
            f->found = f->out->node == f->node;
            if (f->found)
                return 1;
            break;
        }
    return got < 0 ? db_fail(f->err, -1, "damaged signatures of nodes from %u", it.sig.node) : 0;
}

int db_get_sig_of(db_reader *r, uint32_t trace_id, uint32_t node, db_sig *out, db_error *err)
{
    db_node n;
    int got = db_get_node_of(r, trace_id, node, &n, err);
    if (got <= 0)
        return got;
    unsigned char lo[12], hi[12];
    db_put_be32(lo, db_thread_key(n.thread, n.kind));
    db_put_be32(lo + 4, trace_id);
    memcpy(hi, lo, 8);
    db_put_be32(lo + 8, node > DB_SIG_SPAN ? node - DB_SIG_SPAN : 0);
    db_put_be32(hi + 8, node);
    struct sig_find f = {node, out, false, err};
    int rc = db_scan_prefix(r->txn, r->a->dbi[DBI_SIGS], lo, 12, hi, 12, sig_find_one, &f, err);
    if (rc < 0)
        return -1;
    return f.found ? 1 : 0;
}

static int visible(db_reader *r, uint32_t id, db_error *err);

struct sig_scan {
    db_sig_cb cb;
    void *ctx;
    db_reader *r;
    unsigned n;
    bool all;      /* every trace's: only committed ones are handed out */
    db_error *err;
};

/* A long scan unmaps what it has read every so often (db_archive_trim):
 * a busy thread's signatures lie on pages all over the table, and the
 * kernel maps their neighbours too.  Every DB_SCAN_TRIM signatures keeps
 * `match`'s peak memory from growing with the trace, at no cost in its
 * time (the trim, one madvise, costs microseconds; docs/PERFORMANCE.md). */
#define DB_SCAN_TRIM 4096u

static int sig_one(void *p, const MDB_val *k, const MDB_val *v)
{
    struct sig_scan *s = p;
    db_sigchunk it;
    db_sig sig;
    int got;
    db_sigchunk_begin(&it, k, v);
    if (s->all && it.sig.trace != s->r->info.id && !it.bad) {
        int vis = visible(s->r, it.sig.trace, s->err);
        if (vis <= 0)
            return vis;
    }
    while ((got = db_sigchunk_next(&it, &sig)) == 1) {
        if (++s->n % DB_SCAN_TRIM == 0)
            db_archive_trim(s->r->a);
        if (interrupted(s->r, s->err))
            return -1;
        int rc = s->cb(s->ctx, &sig);
        if (rc)
            return rc;
    }
    return got < 0 ? db_fail(s->err, -1, "damaged signatures of nodes from %u", it.sig.node) : 0;
}

int db_scan_sigs(db_reader *r, uint32_t thread_key, uint32_t trace_id, db_sig_cb cb, void *ctx, db_error *err)
{
    unsigned char k[8];
    db_put_be32(k, thread_key);
    db_put_be32(k + 4, trace_id);
    struct sig_scan s = {cb, ctx, r, 0, trace_id == 0, err};
    return db_scan_prefix(r->txn, r->a->dbi[DBI_SIGS], k, trace_id ? 8 : 4, k, trace_id ? 8 : 4, sig_one, &s,
                          err);
}

int db_norm_text(db_reader *r, uint32_t hash, char *buf, size_t len, db_error *err)
{
    unsigned char k[4];
    db_put_be32(k, hash);
    return get_text(r, DBI_NORMS, k, 4, buf, len, err);
}

/* A node stored without a process name (graph/build.c: its name was a
 * guess then) is named after its process as the trace left it. */
static void node_proc(db_reader *r, uint32_t trace_id, db_node *n)
{
    if (n->proc[0])
        return;
    unsigned char k[8];
    db_put_be32(k, trace_id);
    db_put_be32(k + 4, n->pid);
    MDB_val key = {8, k}, v;
    if (mdb_get(r->txn, r->a->dbi[DBI_PROCS], &key, &v) == 0) {
        size_t len = v.mv_size < sizeof n->proc - 1 ? v.mv_size : sizeof n->proc - 1;
        memcpy(n->proc, v.mv_data, len);
        n->proc[len] = '\0';
    }
}

int db_get_node_of(db_reader *r, uint32_t trace_id, uint32_t node, db_node *out, db_error *err)
{
    unsigned char k[8];
    db_put_be32(k, trace_id);
    db_put_be32(k + 4, node);
    MDB_val v;
    int got = get(r, DBI_NODES, k, 8, &v, err);
    if (got == 1 && db_node_decode(v.mv_data, v.mv_size, node, out))
        return db_fail(err, -1, "damaged node %u", node);
    if (got == 1)
        node_proc(r, trace_id, out);
    return got;
}

int db_get_top(db_reader *r, uint32_t thread_key, int field, db_top *out, db_error *err)
{
    unsigned char k[9];
    memcpy(k, r->tid, 4);
    db_put_be32(k + 4, thread_key);
    k[8] = (unsigned char)field;
    MDB_val v;
    int got = get(r, DBI_NODETOP, k, sizeof k, &v, err);
    if (got == 1 && db_nodetop_decode(v.mv_data, v.mv_size, out))
        return db_fail(err, -1, "damaged top nodes of thread key %u", thread_key);
    return got;
}

/* Whether trace id `id` is a committed trace's (1, 0, -1): the catalog,
 * walked for it (a few entries; the answer is kept for the next
 * call, which is mostly about the same id). */
static int visible(db_reader *r, uint32_t id, db_error *err)
{
    if (r->vis_got > 0 && r->vis_id == id)
        return r->vis_got - 1;
    MDB_cursor *c;
    int rc = mdb_cursor_open(r->txn, r->a->dbi[DBI_TRACES], &c), got = 0;
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    MDB_val k, v;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0 && !got; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        db_trace_info t;
        if (db_catalog_decode(&v, &t) == 0 && t.id == id && t.state == DB_TRACE_COMPLETE) {
            db_name_copy(r->vis_name, sizeof r->vis_name, k.mv_data, k.mv_size);
            got = 1;
        }
    }
    mdb_cursor_close(c);
    if (!got && rc && rc != MDB_NOTFOUND)
        return db_lmdb_fail(err, rc, "catalog");
    r->vis_id = id;
    r->vis_got = got + 1;
    return got;
}

int db_trace_name(db_reader *r, uint32_t trace_id, char *buf, size_t len, db_error *err)
{
    int got = visible(r, trace_id, err);
    if (got == 1)
        snprintf(buf, len, "%s", r->vis_name);
    return got;
}

/* ---- scans ---- */

struct node_scan {
    db_node_cb cb;
    void *ctx;
    db_reader *r;
    db_error *err;
};

static int node_one(void *p, const MDB_val *k, const MDB_val *v)
{
    struct node_scan *s = p;
    if (interrupted(s->r, s->err))
        return -1;
    db_node n;
    if (k->mv_size != 8 || db_node_decode(v->mv_data, v->mv_size, db_get_be32((const unsigned char *)k->mv_data + 4), &n))
        return 0;
    node_proc(s->r, db_get_be32(k->mv_data), &n);
    return s->cb(s->ctx, &n);
}

int db_scan_nodes(db_reader *r, db_node_cb cb, void *ctx, db_error *err)
{
    struct node_scan s = {cb, ctx, r, err};
    return db_scan_prefix(r->txn, r->a->dbi[DBI_NODES], r->tid, 4, r->tid, 4, node_one, &s, err);
}

struct thread_scan {
    db_thread_cb cb;
    void *ctx;
    db_reader *r;
    db_error *err;
};

static int thread_one(void *p, const MDB_val *k, const MDB_val *v)
{
    struct thread_scan *s = p;
    if (interrupted(s->r, s->err))
        return -1;
    db_thread t;
    if (k->mv_size != 8 || v->mv_size != sizeof t)
        return 0;
    memcpy(&t, v->mv_data, sizeof t);
    t.name[DB_NAME_MAX - 1] = 0;
    return s->cb(s->ctx, &t);
}

int db_scan_threads(db_reader *r, db_thread_cb cb, void *ctx, db_error *err)
{
    struct thread_scan s = {cb, ctx, r, err};
    return db_scan_prefix(r->txn, r->a->dbi[DBI_THREADS], r->tid, 4, r->tid, 4, thread_one, &s, err);
}

/* Processes and symbols: name records keyed by pid / address. */
struct name_scan {
    db_name_cb cb;
    void *ctx;
    size_t id_bytes;
    db_reader *r;
    db_error *err;
};

static int name_one(void *p, const MDB_val *k, const MDB_val *v)
{
    struct name_scan *s = p;
    if (interrupted(s->r, s->err))
        return -1;
    if (k->mv_size != 4 + s->id_bytes)
        return 0;
    const unsigned char *kp = (const unsigned char *)k->mv_data + 4;
    uint64_t id = s->id_bytes == 8 ? db_get_be64(kp) : db_get_be32(kp);
    char name[256]; /* symbols: at most 255 bytes (db_writer_symbol), processes 47 */
    size_t n = v->mv_size < sizeof name - 1 ? v->mv_size : sizeof name - 1;
    memcpy(name, v->mv_data, n);
    name[n] = '\0';
    return s->cb(s->ctx, id, name);
}

int db_scan_procs(db_reader *r, db_name_cb cb, void *ctx, db_error *err)
{
    struct name_scan s = {cb, ctx, 4, r, err};
    return db_scan_prefix(r->txn, r->a->dbi[DBI_PROCS], r->tid, 4, r->tid, 4, name_one, &s, err);
}

int db_scan_symbols(db_reader *r, db_name_cb cb, void *ctx, db_error *err)
{
    struct name_scan s = {cb, ctx, 8, r, err};
    return db_scan_prefix(r->txn, r->a->dbi[DBI_SYMBOLS], r->tid, 4, r->tid, 4, name_one, &s, err);
}

/* ---- chunked thread indexes (ev_thread, node_thread; thrindex.c) ----
 * A thread's ids in time order, from the chunk that may hold t0 (the last
 * that starts before it) to the last that starts by t1.  The callback
 * sets *past once it has seen past t1; a non-zero return stops the walk
 * and is returned. */
typedef int (*chunk_id_cb)(void *ctx, uint64_t id, bool *past);
/* Where in the first chunk's ids (time order) the walk may start: *start,
 * 0 or -1 (an error).  NULL: from its first id. */
typedef int (*chunk_seek_cb)(void *ctx, const uint64_t *ids, size_t n, size_t *start);

/* The ids of a chunk; at most DB_THR_CHUNK_BYTES deltas of a byte each,
 * and the first id in the key */
#define CHUNK_IDS_MAX (DB_THR_CHUNK_BYTES + 1)

static int walk_chunks(db_reader *r, int dbi, uint64_t of, unsigned of_bytes, uint64_t t0, uint64_t t1,
                       chunk_seek_cb seek, chunk_id_cb cb, void *ctx, db_error *err)
{
    unsigned char k[28];
    size_t pre = 4 + of_bytes, klen = pre + 16; /* trace and thread (or object), ts, id */
    memcpy(k, r->tid, 4);
    if (of_bytes == 8)
        db_put_be64(k + 4, of);
    else
        db_put_be32(k + 4, (uint32_t)of);
    db_put_be64(k + pre, t0);
    memset(k + pre + 8, 0, 8); /* no id is 0: the last chunk that starts before t0 */
    MDB_cursor *c;
    int rc = mdb_cursor_open(r->txn, r->a->dbi[dbi], &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    MDB_val key = {klen, k}, v;
    rc = db_cursor_at_or_before(c, &key, &v);
    if (rc == 0 && !(key.mv_size == klen && memcmp(key.mv_data, k, pre) == 0))
        rc = mdb_cursor_get(c, &key, &v, MDB_NEXT); /* another thread's: start after it */
    else if (rc == MDB_NOTFOUND) { /* nothing before: from the first key */
        key = (MDB_val){klen, k};
        rc = mdb_cursor_get(c, &key, &v, MDB_SET_RANGE);
    }
    int ret = 0;
    bool past = false, first = true;
    for (; rc == 0 && !ret && !past; rc = mdb_cursor_get(c, &key, &v, MDB_NEXT), first = false) {
        if (key.mv_size != klen || memcmp(key.mv_data, k, pre) != 0)
            break;
        db_thrchunk it;
        db_thrchunk_begin(&it, key.mv_data, key.mv_size, v.mv_data, v.mv_size);
        if (it.first_ts > t1)
            break;
        uint64_t id;
        if (first && seek) { /* the chunk that may hold t0: from where seek says */
            uint64_t ids[CHUNK_IDS_MAX];
            size_t n = 0, at = 0;
            while (n < CHUNK_IDS_MAX && db_thrchunk_next(&it, &id))
                ids[n++] = id;
            bool more = n == CHUNK_IDS_MAX && db_thrchunk_next(&it, &id); /* a chunk of another writer's size */
            if (!more)
                ret = seek(ctx, ids, n, &at);
            for (size_t i = at; !ret && !past && i < n; i++)
                ret = cb(ctx, ids[i], &past);
            if (more && !ret && !past)
                ret = cb(ctx, id, &past);
        }
        while (!ret && !past && db_thrchunk_next(&it, &id))
            ret = cb(ctx, id, &past);
    }
    mdb_cursor_close(c);
    if (ret || past)
        return ret;
    return rc && rc != MDB_NOTFOUND ? db_lmdb_fail(err, rc, "scan") : 0;
}

/* Of the thread's nodes, the last that begins before t0 is handed out
 * first, then those that begin in [t0, t1]. */
struct tnode_scan {
    db_reader *r;
    uint64_t t0, t1;
    db_node_cb cb;
    void *ctx;
    db_error *err;
    bool have_before;
    db_node before;
};

static int tnode_one(void *p, uint64_t id, bool *past)
{
    struct tnode_scan *s = p;
    db_node n;
    int got = id > UINT32_MAX ? 0 : db_get_node(s->r, (uint32_t)id, &n, s->err);
    if (got <= 0)
        return got < 0 ? -1 : db_fail(s->err, -1, "the thread index names missing node %llu", (unsigned long long)id);
    if (n.begin < s->t0) {
        s->before = n;
        s->have_before = true;
        return 0;
    }
    if (n.begin > s->t1) {
        *past = true;
        return 0;
    }
    if (s->have_before) {
        s->have_before = false;
        int rc = s->cb(s->ctx, &s->before);
        if (rc)
            return rc;
    }
    return s->cb(s->ctx, &n);
}

/* The last node of the chunk that begins before t0, by bisection: a
 * chunk holds up to a thousand nodes, and reading each to find where t0
 * falls was most of a critical path's time (docs/PERFORMANCE.md). */
static int tnode_seek(void *p, const uint64_t *ids, size_t n, size_t *start)
{
    struct tnode_scan *s = p;
    size_t lo = 0, hi = n; /* ids[lo..hi): the first that begins at t0 or later lies here */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        db_node m;
        int got = ids[mid] > UINT32_MAX ? 0 : db_get_node(s->r, (uint32_t)ids[mid], &m, s->err);
        if (got < 0)
            return -1;
        if (got && m.begin < s->t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *start = lo ? lo - 1 : 0;
    return 0;
}

int db_scan_thread_nodes(db_reader *r, uint32_t tid, uint64_t t0, uint64_t t1, db_node_cb cb, void *ctx,
                         db_error *err)
{
    struct tnode_scan s = {r, t0, t1, cb, ctx, err, false, {0}};
    int rc = walk_chunks(r, DBI_NODE_THREAD, tid, 4, t0, t1, tnode_seek, tnode_one, &s, err);
    if (!rc && s.have_before)
        rc = cb(ctx, &s.before);
    return rc;
}

/* Edges are stored in blocks of 16 nodes (codec.c).  A node's edges are
 * the recs of its block with a == node; the callback sees them in the
 * order a block holds them, as it saw keys in the format before blocks. */
struct edge_scan {
    db_edge_cb cb;
    void *ctx;
    bool in;
    bool one;      /* only the edges of node */
    uint32_t node;
    db_reader *r;
    db_error *err;
};

static int edge_block(void *p, const MDB_val *k, const MDB_val *v)
{
    struct edge_scan *s = p;
    db_edgeblk_it it;
    db_edge_rec rec;
    int got;
    db_edgeblk_begin(&it, k, v);
    while ((got = db_edgeblk_next(&it, &rec)) == 1) {
        if (s->one && rec.a != s->node) {
            if (rec.a > s->node)
                return 0;
            continue;
        }
        if (interrupted(s->r, s->err))
            return -1;
        db_edge e;
        db_edge_from_rec(&rec, s->in, &e);
        int rc = s->cb(s->ctx, &e);
        if (rc)
            return rc;
    }
    return got < 0 ? db_fail(s->err, -1, "damaged edge block") : 0;
}

static int edges(db_reader *r, int dbi, bool in, uint32_t node, db_edge_cb cb, void *ctx, db_error *err)
{
    unsigned char k[8];
    db_edgeblk_key(k, r->info.id, node);
    MDB_val key = {8, k}, v;
    int rc = mdb_get(r->txn, r->a->dbi[dbi], &key, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return db_lmdb_fail(err, rc, "edges");
    struct edge_scan s = {cb, ctx, in, true, node, r, err};
    return edge_block(&s, &key, &v);
}

int db_scan_edges(db_reader *r, db_edge_cb cb, void *ctx, db_error *err)
{
    struct edge_scan s = {cb, ctx, false, false, 0, r, err};
    return db_scan_prefix(r->txn, r->a->dbi[DBI_EDGES_OUT], r->tid, 4, r->tid, 4, edge_block, &s, err);
}

int db_edges_in(db_reader *r, uint32_t node, db_edge_cb cb, void *ctx, db_error *err)
{
    return edges(r, DBI_EDGES_IN, true, node, cb, ctx, err);
}

int db_edges_out(db_reader *r, uint32_t node, db_edge_cb cb, void *ctx, db_error *err)
{
    return edges(r, DBI_EDGES_OUT, false, node, cb, ctx, err);
}

/* ---- event scans ----
 * Each scan decodes blocks into a block of its own, so a callback may
 * call db_get_event or start another scan on the same reader. */

struct event_scan {
    db_reader *r;
    db_event_cb cb;
    void *ctx;
    db_error *err;
    db_evblock blk;
};

/* The event `id` to the callback (an index names it). */
static int scan_id(struct event_scan *s, uint64_t id)
{
    if (interrupted(s->r, s->err))
        return -1;
    int got = db_evblock_load(s->r->txn, s->r->a->dbi[DBI_EVENTS], s->r->info.id, id, &s->blk, s->err);
    if (got <= 0)
        return got < 0 ? -1 : db_fail(s->err, -1, "index names missing event %llu", (unsigned long long)id);
    db_event e = *db_evblock_get(&s->blk, id);
    return s->cb(s->ctx, &e);
}

/* Index keys that end with the event id. */
static int index_one(void *p, const MDB_val *k, const MDB_val *v)
{
    (void)v;
    return scan_id(p, db_get_be64((const unsigned char *)k->mv_data + k->mv_size - 8));
}

/* Every event of the blocks from `from` on, in id order, from event id
 * `first`; s->cb's non-zero return stops the walk. */
static int block_one(void *p, const MDB_val *k, const MDB_val *v)
{
    struct event_scan *s = p;
    if (k->mv_size != 12)
        return 0;
    uint64_t first = db_get_be64((const unsigned char *)k->mv_data + 4);
    int d = db_evblock_decode(&s->blk, first, v->mv_data, v->mv_size);
    if (d)
        return d == -2 ? db_fail_oom(s->err)
                       : db_fail(s->err, -1, "damaged block of events from %llu", (unsigned long long)first);
    for (size_t i = 0; i < s->blk.n; i++) {
        if (interrupted(s->r, s->err))
            return -1;
        db_event e = s->blk.ev[i];
        int rc = s->cb(s->ctx, &e);
        if (rc)
            return rc;
    }
    return 0;
}

static int scan_blocks_from(db_reader *r, uint64_t first, db_event_cb cb, void *ctx, db_error *err)
{
    struct event_scan s = {r, cb, ctx, err, {0}};
    unsigned char lo[12];
    memcpy(lo, r->tid, 4);
    db_put_be64(lo + 4, first);
    int rc = db_scan_prefix(r->txn, r->a->dbi[DBI_EVENTS], lo, 12, r->tid, 4, block_one, &s, err);
    db_evblock_free(&s.blk);
    return rc;
}

int db_scan_events(db_reader *r, db_event_cb cb, void *ctx, db_error *err)
{
    return scan_blocks_from(r, 0, cb, ctx, err);
}

/* The first event of the block that holds the last event before t0 (or
 * the first block), in a trace whose ids follow time: a binary search
 * over the blocks, reading only their headers. */
static int block_before(db_reader *r, uint64_t t0, uint64_t *out, db_error *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(r->txn, r->a->dbi[DBI_EVENTS], &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    uint64_t lo = 1, hi = r->info.events, best = 1;
    int ret = 0;
    while (lo <= hi && !ret) {
        uint64_t mid = lo + (hi - lo) / 2;
        unsigned char k[12];
        memcpy(k, r->tid, 4);
        db_put_be64(k + 4, mid);
        MDB_val key = {12, k}, v;
        rc = db_cursor_at_or_before(c, &key, &v);
        size_t n;
        uint64_t ts;
        if (rc || key.mv_size != 12 || memcmp(key.mv_data, r->tid, 4) != 0 ||
            db_evblock_peek(v.mv_data, v.mv_size, &n, &ts)) {
            ret = rc && rc != MDB_NOTFOUND ? db_lmdb_fail(err, rc, "read")
                                           : db_fail(err, -1, "event %llu is missing", (unsigned long long)mid);
            break;
        }
        uint64_t first = db_get_be64((const unsigned char *)key.mv_data + 4);
        if (ts < t0) {
            best = first;
            lo = first + n;
        } else {
            if (first <= 1)
                break;
            hi = first - 1;
        }
    }
    mdb_cursor_close(c);
    *out = best;
    return ret;
}

struct until {
    uint64_t t0, t1;
    db_event_cb cb;
    void *ctx;
};

static int until_one(void *p, const db_event *ev)
{
    struct until *u = p;
    if (ev->ts < u->t0)
        return 0;
    return ev->ts > u->t1 ? 1 : u->cb(u->ctx, ev);
}

int db_scan_time(db_reader *r, uint64_t t0, uint64_t t1, db_event_cb cb, void *ctx, db_error *err)
{
    if (!r->info.unordered) { /* the events table is in time order */
        uint64_t first = 1;
        if (block_before(r, t0, &first, err))
            return -1;
        struct until u = {t0, t1, cb, ctx};
        int rc = scan_blocks_from(r, first, until_one, &u, err);
        return rc == 1 ? 0 : rc; /* 1: stopped past t1 */
    }
    unsigned char lo[12], hi[12];
    memcpy(lo, r->tid, 4);
    memcpy(hi, r->tid, 4);
    db_put_be64(lo + 4, t0);
    db_put_be64(hi + 4, t1);
    struct event_scan s = {r, cb, ctx, err, {0}};
    int rc = db_scan_prefix(r->txn, r->a->dbi[DBI_EV_TIME], lo, 12, hi, 12, index_one, &s, err);
    db_evblock_free(&s.blk);
    return rc;
}

/* The thread's events in [t0, t1], through its chunks. */
struct tev_scan {
    struct event_scan s;
    uint64_t t0, t1;
};

static int tev_one(void *p, uint64_t id, bool *past)
{
    struct tev_scan *t = p;
    db_reader *r = t->s.r;
    if (interrupted(r, t->s.err))
        return -1;
    int got = db_evblock_load(r->txn, r->a->dbi[DBI_EVENTS], r->info.id, id, &t->s.blk, t->s.err);
    if (got <= 0)
        return got < 0 ? -1 : db_fail(t->s.err, -1, "index names missing event %llu", (unsigned long long)id);
    db_event e = *db_evblock_get(&t->s.blk, id);
    if (e.ts > t->t1) {
        *past = true;
        return 0;
    }
    return e.ts >= t->t0 ? t->s.cb(t->s.ctx, &e) : 0;
}

int db_scan_thread(db_reader *r, uint32_t tid, uint64_t t0, uint64_t t1, db_event_cb cb, void *ctx,
                   db_error *err)
{
    struct tev_scan t = {{r, cb, ctx, err, {0}}, t0, t1};
    int rc = walk_chunks(r, DBI_EV_THREAD, tid, 4, t0, t1, NULL, tev_one, &t, err);
    db_evblock_free(&t.s.blk);
    return rc;
}

/* A node's events lie in its thread's index between its first and last
 * event (an isolated interrupt node under the thread it landed on): that
 * range, filtered by node, is the node's events in time order -- no index
 * of its own, which would cost ingest a random insert per event. */
struct node_filter {
    uint32_t node;
    db_event_cb cb;
    void *ctx;
};

static int node_filter_one(void *p, const db_event *ev)
{
    struct node_filter *f = p;
    return ev->node == f->node ? f->cb(f->ctx, ev) : 0;
}

int db_scan_node_events(db_reader *r, uint32_t node, db_event_cb cb, void *ctx, db_error *err)
{
    db_node n;
    int got = db_get_node(r, node, &n, err);
    if (got <= 0)
        return got;
    struct node_filter f = {node, cb, ctx};
    return db_scan_thread(r, n.tid, n.begin, n.end, node_filter_one, &f, err);
}

/* An object's events, through its chunks (thrindex.c): in time order
 * chunk by chunk, as a thread's. */
static int obj_one(void *p, uint64_t id, bool *past)
{
    (void)past;
    return scan_id(p, id);
}

int db_scan_object(db_reader *r, db_obj_index ix, uint64_t obj, db_event_cb cb, void *ctx, db_error *err)
{
    static const int dbis[] = {[DB_IX_PORT] = DBI_EV_PORT, [DB_IX_BLOCK] = DBI_EV_BLOCK,
                               [DB_IX_TIMER] = DBI_EV_TIMER};
    struct event_scan s = {r, cb, ctx, err, {0}};
    int rc = walk_chunks(r, dbis[ix], obj, 8, 0, UINT64_MAX, NULL, obj_one, &s, err);
    db_evblock_free(&s.blk);
    return rc;
}

int db_reader_label(db_reader *r, uint32_t trace, const char *key, char *val, size_t cap, db_error *err)
{
    assert(cap > 0);
    unsigned char k[4 + DB_LABEL_KEY_MAX];
    if (strlen(key) > DB_LABEL_KEY_MAX)
        return 0;
    MDB_val kv = {db_label_key(k, trace, key), k}, v;
    int rc = mdb_get(r->txn, r->a->dbi[DBI_LABELS], &kv, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return db_lmdb_fail(err, rc, "label");
    snprintf(val, cap, "%.*s", (int)v.mv_size, (const char *)v.mv_data);
    return 1;
}
