/* db/sigindex.c -- the signature index (paper/004 2: nodes normalized and
 * compared by their sets of normalized events) in chunks.
 *
 *   sigs: thread key(4), trace(4), first node(4) -> the signatures of some
 *         of that thread key's nodes in that trace, node ids ascending;
 *         per node:
 *           uv node - the previous node's (the first: 0),
 *           uv n << 1 | same (same: the hashes of the node before, which
 *                             do not follow again),
 *           n hashes, BE32 each, sorted as db_sig holds them.
 *
 * A key per node, its hashes the value, cost more than the hashes: a
 * 12-byte key and LMDB's 10 bytes of overhead for a few hashes, inserted
 * all over the table (pages part full), while many of a busy thread's
 * nodes repeat the one before (docs/PERFORMANCE.md).
 *
 * The writer keeps an open chunk per thread key.  A chunk ends at
 * SIG_CHUNK_BYTES, when a node id is not above the chunk's last (nodes are
 * numbered when they start and written when they end), when it would span
 * more than DB_SIG_SPAN ids, or when the writer flushes (at commit; and
 * when open chunks hold SIG_PENDING_MAX bytes, so memory stays bounded).
 * So the chunk holding node N starts in [N - DB_SIG_SPAN, N]: a point
 * lookup reads the chunks of that range.  Chunks of a thread key may
 * overlap: scans hand out a trace's signatures by chunk, not strictly by
 * node id, and their callers break ties by node id. */
#include <stdlib.h>
#include <string.h>

#include "db_int.h"

#define SIG_CHUNK_BYTES 1000u
#define SIG_PENDING_MAX (4u << 20)
#define SIG_KEEP_MAX 4096u

typedef struct chunk {
    uint32_t tk;
    bool open;
    uint32_t first, last;
    uint32_t n, h[DB_SIG_MAX]; /* the last node's hashes */
    unsigned char *buf;
    size_t len, cap;
} chunk;

struct db_sigindex {
    chunk *c;
    size_t n, cap;
    base_map slots; /* thread key -> chunk */
    size_t pending;
};

db_sigindex *db_sigindex_new(void) { return calloc(1, sizeof(db_sigindex)); }

static void forget(db_sigindex *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->c[i].buf);
    s->n = 0;
    base_map_free(&s->slots);
}

void db_sigindex_free(db_sigindex *s)
{
    if (!s)
        return;
    forget(s);
    free(s->c);
    free(s);
}

static chunk *find(db_sigindex *s, uint32_t tk)
{
    uint32_t i;
    if (base_map_get(&s->slots, tk, &i))
        return &s->c[i];
    if (s->n == s->cap) {
        size_t c = s->cap ? s->cap * 2 : 64;
        void *p = realloc(s->c, c * sizeof *s->c);
        if (!p)
            return NULL;
        s->c = p;
        s->cap = c;
    }
    if (base_map_put(&s->slots, tk, (uint32_t)s->n))
        return NULL;
    chunk *c = &s->c[s->n++];
    memset(c, 0, sizeof *c);
    c->tk = tk;
    return c;
}

static int put_chunk(db_sigindex *s, chunk *c, uint32_t trace, db_put_fn put, void *ctx)
{
    if (!c->open)
        return 0;
    unsigned char k[12];
    db_put_be32(k, c->tk);
    db_put_be32(k + 4, trace);
    db_put_be32(k + 8, c->first);
    c->open = false;
    s->pending -= c->len;
    int rc = put(ctx, k, sizeof k, c->buf, c->len);
    c->len = 0;
    return rc ? -1 : 0;
}

int db_sigindex_flush(db_sigindex *s, uint32_t trace, db_put_fn put, void *ctx)
{
    for (size_t i = 0; i < s->n; i++)
        if (put_chunk(s, &s->c[i], trace, put, ctx))
            return -1;
    if (s->n > SIG_KEEP_MAX)
        forget(s);
    return 0;
}

/* a[0..n) == b[0..n), inline: a node has a few hashes, and many
 * signatures have as many as the node before, so the call to memcmp and
 * the registers it spilled cost more than the compare */
static inline bool same_hashes(const uint32_t *a, const uint32_t *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

int db_sigindex_add(db_sigindex *s, uint32_t trace, const db_sig *sig, db_put_fn put, void *ctx)
{
    chunk *c = find(s, sig->thread_key);
    if (!c)
        return -2;
    uint32_t n = sig->n < DB_SIG_MAX ? sig->n : DB_SIG_MAX;
    if (c->open && (c->len + 10 + 4 * n > SIG_CHUNK_BYTES || sig->node <= c->last ||
                    sig->node - c->first > DB_SIG_SPAN) &&
        put_chunk(s, c, trace, put, ctx))
        return -1;
    size_t need = c->len + 10 + 4 * (size_t)n;
    if (need > c->cap) {
        size_t cap = c->cap ? c->cap : 64;
        while (cap < need)
            cap *= 2;
        void *p = realloc(c->buf, cap);
        if (!p)
            return -2;
        c->buf = p;
        c->cap = cap;
    }
    size_t before = c->len;
    bool same = c->open && n == c->n && same_hashes(c->h, sig->h, n);
    if (!c->open) {
        c->open = true;
        c->first = c->last = sig->node;
    }
    c->len = (size_t)(db_uv_put_inline(c->buf + c->len, sig->node - c->last) - c->buf);
    c->len = (size_t)(db_uv_put_inline(c->buf + c->len, (uint64_t)n << 1 | same) - c->buf);
    if (!same) { /* kept for the next in the same loop, not copied by a
                  * memcpy after it */
        for (uint32_t i = 0; i < n; i++) {
            db_put_be32(c->buf + c->len + 4 * i, sig->h[i]);
            c->h[i] = sig->h[i];
        }
        c->len += 4 * (size_t)n;
        c->n = n;
    }
    c->last = sig->node;
    s->pending += c->len - before;
    return s->pending > SIG_PENDING_MAX ? db_sigindex_flush(s, trace, put, ctx) : 0;
}

/* ---- reading a chunk ---- */

void db_sigchunk_begin(db_sigchunk *it, const MDB_val *k, const MDB_val *v)
{
    const unsigned char *kb = k->mv_data;
    it->p = v->mv_data;
    it->end = it->p + v->mv_size;
    it->bad = k->mv_size != 12;
    it->sig.thread_key = it->bad ? 0 : db_get_be32(kb);
    it->sig.trace = it->bad ? 0 : db_get_be32(kb + 4);
    it->sig.node = it->bad ? 0 : db_get_be32(kb + 8);
    it->sig.n = 0;
}

int db_sigchunk_next(db_sigchunk *it, db_sig *out)
{
    if (it->bad)
        return -1;
    if (it->p >= it->end)
        return 0;
    uint64_t d = db_uv_get(&it->p, it->end, &it->bad), nb = db_uv_get(&it->p, it->end, &it->bad);
    uint64_t n = nb >> 1;
    if (it->bad || d > UINT32_MAX - it->sig.node || n > DB_SIG_MAX)
        return it->bad = true, -1;
    it->sig.node += (uint32_t)d;
    if (!(nb & 1)) {
        if ((size_t)(it->end - it->p) < 4 * n)
            return it->bad = true, -1;
        for (uint64_t i = 0; i < n; i++)
            it->sig.h[i] = db_get_be32(it->p + 4 * i);
        it->p += 4 * n;
        it->sig.n = (uint32_t)n;
    } else if (n != it->sig.n)
        return it->bad = true, -1;
    *out = it->sig;
    return 1;
}
