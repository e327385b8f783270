/* db/codec.c -- the stored form of edges (in blocks) and of nodes, and the range scan every index
 * lookup in db/ goes through (events: evblock.c). */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "db_int.h"

/* (uv: LEB128 varint; zz: zigzag, for differences of either sign) */
unsigned char *db_uv_put(unsigned char *p, uint64_t v) { return db_uv_put_inline(p, v); }

uint64_t db_uv_get(const unsigned char **p, const unsigned char *end, bool *bad)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
        unsigned char b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    *bad = true;
    return 0;
}

static uint64_t zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static int64_t unzz(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

/* Edge keys: trace, a, b, kind, from_event, to_event -- (a, b) is (to,
 * from) for edges_in and (from, to) for edges_out.  memcmp order of these
 * keys (db_edge_rec_cmp's order, the one the writer sorts a batch's edges
 * in: keysort.c) is the order of edges in a block, and so the order a
 * node's edges are read in. */
void db_edge_key(unsigned char *k, uint32_t trace, uint32_t a, uint32_t b, const db_edge *e)
{
    db_put_be32(k, trace);
    db_put_be32(k + 4, a);
    db_put_be32(k + 8, b);
    k[12] = e->kind;
    db_put_be64(k + 13, e->from_event);
    db_put_be64(k + 21, e->to_event);
}

void db_edge_rec_from_key(const unsigned char *k, db_edge_rec *r)
{
    r->a = db_get_be32(k + 4);
    r->b = db_get_be32(k + 8);
    r->kind = k[12];
    r->from_event = db_get_be64(k + 13);
    r->to_event = db_get_be64(k + 21);
}

void db_edge_from_rec(const db_edge_rec *r, bool in, db_edge *e)
{
    e->to = in ? r->a : r->b;
    e->from = in ? r->b : r->a;
    e->kind = r->kind;
    e->from_event = r->from_event;
    e->to_event = r->to_event;
}

/* ---- edge blocks (format 6) ----
 * One entry holds the edges of DB_EDGE_BLOCK_NODES consecutive nodes:
 * key trace, node >> DB_EDGE_BLOCK_SHIFT; value, per edge in db_edge_rec
 * order: uv a - base (the block's first node), zz b - a, kind, zz
 * from_event - the previous edge's, zz to_event - from_event.  As one
 * LMDB entry per edge of 29 key bytes, edges_in and edges_out were a
 * large part of the archive (docs/PERFORMANCE.md) and two puts per edge;
 * the two nodes of an edge are close in id and its two events close in
 * time, so an edge is 5 to 8 bytes here. */
void db_edgeblk_key(unsigned char *k, uint32_t trace, uint32_t node)
{
    db_put_be32(k, trace);
    db_put_be32(k + 4, node >> DB_EDGE_BLOCK_SHIFT);
}

size_t db_edgeblk_encode(const db_edge_rec *r, size_t n, unsigned char *buf)
{
    unsigned char *p = buf;
    uint64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        p = db_uv_put(p, r[i].a & (DB_EDGE_BLOCK_NODES - 1));
        p = db_uv_put(p, zz((int64_t)r[i].b - (int64_t)r[i].a));
        *p++ = r[i].kind;
        p = db_uv_put(p, zz((int64_t)(r[i].from_event - prev)));
        p = db_uv_put(p, zz((int64_t)(r[i].to_event - r[i].from_event)));
        prev = r[i].from_event;
    }
    return (size_t)(p - buf);
}

void db_edgeblk_begin(db_edgeblk_it *it, const MDB_val *k, const MDB_val *v)
{
    it->p = v->mv_data;
    it->end = it->p + v->mv_size;
    it->base = k->mv_size == 8 ? db_get_be32((const unsigned char *)k->mv_data + 4) << DB_EDGE_BLOCK_SHIFT : 0;
    it->prev = 0;
    it->bad = k->mv_size != 8;
}

int db_edgeblk_next(db_edgeblk_it *it, db_edge_rec *r)
{
    if (it->bad)
        return -1;
    if (it->p >= it->end)
        return 0;
    bool bad = false;
    uint64_t off = db_uv_get(&it->p, it->end, &bad);
    int64_t db = unzz(db_uv_get(&it->p, it->end, &bad));
    if (bad || off >= DB_EDGE_BLOCK_NODES || it->p >= it->end)
        return it->bad = true, -1;
    r->a = it->base + (uint32_t)off;
    r->b = (uint32_t)((int64_t)r->a + db);
    r->kind = *it->p++;
    r->from_event = it->prev + (uint64_t)unzz(db_uv_get(&it->p, it->end, &bad));
    r->to_event = r->from_event + (uint64_t)unzz(db_uv_get(&it->p, it->end, &bad));
    it->prev = r->from_event;
    if (bad)
        return it->bad = true, -1;
    return 1;
}

/* Walks keys in [lo, hi] (memcmp order; hi compared on its first hi_len
 * bytes, so a prefix as hi means "everything starting with it"). */
int db_scan_prefix(MDB_txn *txn, MDB_dbi dbi, const unsigned char *lo, size_t lo_len,
                   const unsigned char *hi, size_t hi_len, db_key_cb cb, void *ctx, db_error *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn, dbi, &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    MDB_val k = {lo_len, (void *)lo}, v;
    int ret = 0;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        size_t n = k.mv_size < hi_len ? k.mv_size : hi_len;
        if (memcmp(k.mv_data, hi, n) > 0)
            break;
        if ((ret = cb(ctx, &k, &v)) != 0)
            break;
    }
    mdb_cursor_close(c);
    if (ret)
        return ret;
    if (rc && rc != MDB_NOTFOUND)
        return db_lmdb_fail(err, rc, "scan");
    return 0;
}

struct rule_scan {
    db_rule_cb cb;
    void *ctx;
};

static int rule_one(void *p, const MDB_val *k, const MDB_val *v)
{
    struct rule_scan *s = p;
    char text[4096];
    size_t n = v->mv_size < sizeof text - 1 ? v->mv_size : sizeof text - 1;
    memcpy(text, v->mv_data, n);
    text[n] = 0;
    return k->mv_size == 8 ? s->cb(s->ctx, db_get_be32((const unsigned char *)k->mv_data + 4), text) : 0;
}

/* The rules of a trace in number order, in any transaction. */
int db_scan_rules_txn(MDB_txn *txn, MDB_dbi dbi, uint32_t trace, db_rule_cb cb, void *ctx, db_error *err)
{
    unsigned char k[4];
    db_put_be32(k, trace);
    struct rule_scan s = {cb, ctx};
    return db_scan_prefix(txn, dbi, k, 4, k, 4, rule_one, &s, err);
}

/* ---- nodes: varints, then the two names (a node record was 168 bytes
 * of fixed fields, most of them zero or small) ---- */

/* The name's whole room is copied, DB_NAME_MAX - 1 bytes whatever its
 * length: a copy of constant size is a few moves, where one of its length
 * was a call to memcpy for every name.  What lies past the name is
 * written over by what follows, or is past the record; the record is at
 * most DB_NODE_REC_MAX bytes with both names full, and so is what this
 * writes. */
/* strnlen(s, DB_NAME_MAX - 1) of a name's room (DB_NAME_MAX bytes, all
 * of them readable), inline and without a loop: its NULs as a mask of
 * three 16-byte compares, the first one's place the length; not a call
 * to strnlen for every name, nor a loop of eight bytes a step (the
 * process names are long, "com.google.android...").  Bytes past the
 * first NUL do not matter. */
static inline size_t name_len(const char *s)
{
#ifdef __SSE2__
    _Static_assert(DB_NAME_MAX == 48, "name_len reads the name's room as three 16-byte words");
    const __m128i zero = _mm_setzero_si128();
    uint64_t m0 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)s), zero));
    uint64_t m1 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + 16)), zero));
    uint64_t m2 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + 32)), zero));
    uint64_t m = m0 | m1 << 16 | m2 << 32 | (uint64_t)1 << (DB_NAME_MAX - 1); /* at most DB_NAME_MAX - 1 */
    return (size_t)__builtin_ctzll(m);
#else
    return strnlen(s, DB_NAME_MAX - 1);
#endif
}

static inline unsigned char *name_put(unsigned char *p, const char *s)
{
    size_t n = name_len(s);
    *p++ = (unsigned char)n;
    memcpy(p, s, DB_NAME_MAX - 1);
    return p + n;
}

size_t db_node_encode(const db_node *n, unsigned char *buf)
{
    unsigned char *p = buf;
    p = db_uv_put(p, n->tid);
    p = db_uv_put(p, zz((int64_t)n->pid - (int64_t)n->tid));
    *p++ = n->kind;
    p = db_uv_put(p, n->cpu == DB_CPU_NONE ? 0 : (uint64_t)n->cpu + 1);
    p = db_uv_put(p, n->begin);
    p = db_uv_put(p, n->end - n->begin);
    p = db_uv_put(p, n->blocked);
    p = db_uv_put(p, n->running);
    p = db_uv_put(p, n->runnable);
    p = db_uv_put(p, n->oncpu && n->oncpu <= n->begin ? n->begin - n->oncpu : 0);
    p = db_uv_put(p, n->events);
    p = db_uv_put(p, n->first_event);
    p = db_uv_put(p, n->last_event - n->first_event);
    p = name_put(p, n->thread);
    p = name_put(p, n->proc);
    return (size_t)(p - buf);
}

static bool name_get(const unsigned char **p, const unsigned char *end, char *out)
{
    if (*p >= end || **p >= DB_NAME_MAX || (size_t)(end - *p) < 1u + **p)
        return false;
    size_t n = *(*p)++;
    memcpy(out, *p, n);
    memset(out + n, 0, DB_NAME_MAX - n);
    *p += n;
    return true;
}

int db_node_decode(const void *data, size_t len, uint32_t id, db_node *out)
{
    const unsigned char *p = data, *end = p + len;
    bool bad = false;
    memset(out, 0, sizeof *out);
    out->id = id;
    uint64_t tid = db_uv_get(&p, end, &bad), zd = db_uv_get(&p, end, &bad);
    out->tid = (uint32_t)tid;
    out->pid = (uint32_t)((int64_t)tid + unzz(zd));
    if (p >= end)
        return -1;
    out->kind = *p++;
    uint64_t cpu = db_uv_get(&p, end, &bad);
    out->cpu = cpu ? (uint16_t)(cpu - 1) : DB_CPU_NONE;
    out->begin = db_uv_get(&p, end, &bad);
    out->end = out->begin + db_uv_get(&p, end, &bad);
    out->blocked = db_uv_get(&p, end, &bad);
    out->running = db_uv_get(&p, end, &bad);
    out->runnable = db_uv_get(&p, end, &bad);
    uint64_t before = db_uv_get(&p, end, &bad);
    out->oncpu = before <= out->begin ? out->begin - before : out->begin;
    out->events = (uint32_t)db_uv_get(&p, end, &bad);
    out->first_event = db_uv_get(&p, end, &bad);
    out->last_event = out->first_event + db_uv_get(&p, end, &bad);
    if (bad || out->kind >= DB_NODE__COUNT || !name_get(&p, end, out->thread) || !name_get(&p, end, out->proc))
        return -1;
    return p == end ? 0 : -1;
}
