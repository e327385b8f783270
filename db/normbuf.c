/* db/normbuf.c -- the normal forms a writer has yet to put into the
 * archive's dictionary (norms: hash -> text, paper/004 2, one table for
 * every trace).
 *
 * The dictionary is keyed by hash, so each new form lands anywhere in
 * it.  Put as they came, the forms dirtied a page of the whole table per
 * put, and every batch's commit wrote most of the table again, a large
 * share of what the ingest wrote (docs/PERFORMANCE.md).  Here they wait,
 * each once, and go in sorted by hash when NORMBUF_MAX bytes wait or the
 * trace commits: neighbours share pages, and the table is written about
 * once per flush.  A trace's forms
 * only need to be there when the trace becomes visible (its final
 * commit); nothing reads the dictionary through the writer. */
#include <stdlib.h>
#include <string.h>

#include "db_int.h"

#define NORMBUF_MAX (4u << 20)

struct norm {
    uint32_t hash, len;
    size_t off;
};

struct db_normbuf {
    struct norm *v;
    size_t n, cap;
    char *text;
    size_t len, tcap;
    base_map seen; /* hash -> index in v */
};

db_normbuf *db_normbuf_new(void) { return calloc(1, sizeof(db_normbuf)); }

static void clear(db_normbuf *b)
{
    b->n = b->len = 0;
    base_map_free(&b->seen);
}

void db_normbuf_free(db_normbuf *b)
{
    if (!b)
        return;
    clear(b);
    free(b->v);
    free(b->text);
    free(b);
}

size_t db_normbuf_count(const db_normbuf *b) { return b ? b->n : 0; }

int db_normbuf_add(db_normbuf *b, uint32_t hash, const char *text, size_t len)
{
    uint32_t i;
    if (base_map_get(&b->seen, hash, &i)) /* the first text of a hash wins, as in the table */
        return 0;
    if (!base_grow((void **)&b->v, &b->cap, b->n + 1, sizeof *b->v) ||
        !base_grow((void **)&b->text, &b->tcap, b->len + len, 1) ||
        base_map_put(&b->seen, hash, (uint32_t)b->n))
        return -1;
    memcpy(b->text + b->len, text, len);
    b->v[b->n++] = (struct norm){hash, (uint32_t)len, b->len};
    b->len += len;
    /* what waits: the texts, their entries, and the map's slots (two per
     * entry, 24 bytes: a constant, so that where the flushes fall, and so
     * the archive, does not follow the map's layout) */
    return b->len + b->n * (sizeof(struct norm) + 24) > NORMBUF_MAX ? 1 : 0;
}

static int by_hash(const void *a, const void *b)
{
    uint32_t x = ((const struct norm *)a)->hash, y = ((const struct norm *)b)->hash;
    return (x > y) - (x < y);
}

int db_normbuf_flush(db_normbuf *b, db_normbuf_put put, void *ctx)
{
    if (!b || !b->n)
        return 0;
    qsort(b->v, b->n, sizeof *b->v, by_hash);
    for (size_t i = 0; i < b->n; i++) {
        int rc = put(ctx, b->v[i].hash, b->text + b->v[i].off, b->v[i].len);
        if (rc) /* the writer aborts: what waits goes with it */
            return rc;
    }
    clear(b);
    return 0;
}
