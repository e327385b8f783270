/* db/keysort.c -- the index keys of a batch, handed out in key order.
 *
 * The thread, object and time indexes get their keys in event order, not
 * key order; inserted one by one they would land all over the tree and
 * split pages in half, so the writer keeps a batch's keys here and puts
 * them in sorted at its end: each thread's keys then extend the end of its
 * range, where LMDB splits as it does for an append, leaving full pages.
 *
 * Every such key ends in (ts, id), 16 bytes, and within one thread or one
 * object the events arrive in time order (the ftrace reader checks it per
 * thread), so the keys of one prefix -- table and key minus (ts, id) --
 * already come sorted.  Sorting a batch is therefore grouping: keys are
 * chained per prefix in arrival order, the few prefixes are sorted, and
 * only a prefix whose keys did not arrive in order (an Argus trace out of
 * time order) is sorted on its own.  A batch of 600,000 keys took a
 * general sort of 64-byte records over 50 ms; this is linear. */
#include <stdlib.h>
#include <string.h>

#include "db_int.h"

#define KS_SUFFIX 16 /* ts, id */

typedef struct ks_key {
    uint8_t dbi, len;
    unsigned char k[DB_KEYSORT_MAX];
} ks_key;

typedef struct ks_group {
    uint32_t first, last; /* chain through next[] in arrival order */
    uint32_t count;
    bool unordered;
    bool used;
} ks_group;

struct db_keysort {
    ks_key *key;
    uint32_t *next;
    size_t n, cap;
    ks_group *grp; /* open addressing on (dbi, prefix) */
    size_t gcap, ngrp;
    uint32_t *order; /* scratch: key indices in output order */
};

db_keysort *db_keysort_new(void) { return calloc(1, sizeof(db_keysort)); }

void db_keysort_free(db_keysort *ks)
{
    if (!ks)
        return;
    free(ks->key);
    free(ks->next);
    free(ks->grp);
    free(ks->order);
    free(ks);
}

size_t db_keysort_count(const db_keysort *ks) { return ks->n; }

int db_keysort_add(db_keysort *ks, int dbi, const unsigned char *k, size_t len)
{
    if (len > DB_KEYSORT_MAX)
        return -1;
    if (ks->n == ks->cap) {
        size_t cap = ks->cap ? ks->cap * 2 : 65536;
        ks_key *nk = realloc(ks->key, cap * sizeof *nk);
        if (!nk)
            return -1;
        ks->key = nk;
        uint32_t *nn = realloc(ks->next, cap * sizeof *nn);
        if (!nn)
            return -1;
        ks->next = nn;
        ks->cap = cap;
    }
    ks_key *e = &ks->key[ks->n++];
    e->dbi = (uint8_t)dbi;
    e->len = (uint8_t)len;
    memcpy(e->k, k, len);
    return 0;
}

static size_t prefix_len(const ks_key *e) { return e->len > KS_SUFFIX ? e->len - KS_SUFFIX : 0; }

/* table first, then the key's bytes (memcmp order: LMDB's order) */
static int key_cmp(const ks_key *x, const ks_key *y)
{
    if (x->dbi != y->dbi)
        return x->dbi < y->dbi ? -1 : 1;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->k, y->k, n);
    if (c)
        return c;
    return (x->len > y->len) - (x->len < y->len);
}

static uint64_t prefix_hash(const ks_key *e)
{
    uint64_t h = 1469598103934665603ull ^ e->dbi; /* FNV-1a */
    for (size_t i = 0, n = prefix_len(e); i < n; i++)
        h = (h ^ e->k[i]) * 1099511628211ull;
    return h;
}

static bool same_prefix(const ks_key *x, const ks_key *y)
{
    size_t n = prefix_len(x);
    return x->dbi == y->dbi && n == prefix_len(y) && memcmp(x->k, y->k, n) == 0;
}

static int grow_groups(db_keysort *ks)
{
    size_t cap = ks->gcap ? ks->gcap * 2 : 1024;
    ks_group *g = calloc(cap, sizeof *g);
    if (!g)
        return -1;
    for (size_t i = 0; i < ks->gcap; i++) {
        if (!ks->grp[i].used)
            continue;
        size_t j = (size_t)prefix_hash(&ks->key[ks->grp[i].first]) & (cap - 1);
        while (g[j].used)
            j = (j + 1) & (cap - 1);
        g[j] = ks->grp[i];
    }
    free(ks->grp);
    ks->grp = g;
    ks->gcap = cap;
    return 0;
}

/* qsort_r comparators; keys: the batch's keys */
static int group_cmp(const void *a, const void *b, void *keys)
{
    const ks_key *k = keys;
    return key_cmp(&k[((const ks_group *)a)->first], &k[((const ks_group *)b)->first]);
}

static int index_cmp(const void *a, const void *b, void *keys)
{
    const ks_key *k = keys;
    return key_cmp(&k[*(const uint32_t *)a], &k[*(const uint32_t *)b]);
}

int db_keysort_drain(db_keysort *ks, db_keysort_cb cb, void *ctx)
{
    int rc = 0;
    if (!ks->n)
        return 0;
    /* chain every key to its prefix's group */
    if (ks->gcap) {
        memset(ks->grp, 0, ks->gcap * sizeof *ks->grp);
        ks->ngrp = 0;
    }
    for (uint32_t i = 0; i < ks->n; i++) {
        const ks_key *e = &ks->key[i];
        if ((ks->ngrp + 1) * 2 > ks->gcap && grow_groups(ks) < 0) {
            rc = -1;
            goto done;
        }
        size_t j = (size_t)prefix_hash(e) & (ks->gcap - 1);
        while (ks->grp[j].used && !same_prefix(&ks->key[ks->grp[j].first], e))
            j = (j + 1) & (ks->gcap - 1);
        ks_group *g = &ks->grp[j];
        ks->next[i] = UINT32_MAX;
        if (!g->used) {
            *g = (ks_group){.first = i, .last = i, .count = 1, .used = true};
            ks->ngrp++;
            continue;
        }
        if (key_cmp(&ks->key[g->last], e) > 0)
            g->unordered = true;
        ks->next[g->last] = i;
        g->last = i;
        g->count++;
    }
    /* the groups in key order (packed to the front first) */
    size_t ng = 0;
    for (size_t j = 0; j < ks->gcap; j++)
        if (ks->grp[j].used)
            ks->grp[ng++] = ks->grp[j];
    for (size_t j = ng; j < ks->gcap; j++)
        ks->grp[j].used = false;
    qsort_r(ks->grp, ng, sizeof *ks->grp, group_cmp, ks->key);
    uint32_t *order = realloc(ks->order, ks->n * sizeof *order);
    if (!order) {
        rc = -1;
        goto done;
    }
    ks->order = order;
    size_t o = 0;
    for (size_t j = 0; j < ng; j++) {
        size_t start = o;
        for (uint32_t i = ks->grp[j].first; i != UINT32_MAX; i = ks->next[i])
            order[o++] = i;
        if (ks->grp[j].unordered)
            qsort_r(order + start, o - start, sizeof *order, index_cmp, ks->key);
    }
    for (size_t i = 0; i < o && !rc; i++) {
        const ks_key *e = &ks->key[order[i]];
        rc = cb(ctx, e->dbi, e->k, e->len);
    }
done:
    ks->n = 0;
    return rc;
}
