/* tests/unit/test_sigindex.c -- the signature index's chunks
 * (db/sigindex.c): every signature comes back once, with its hashes,
 * under its thread key; a chunk's nodes ascend and lie within
 * DB_SIG_SPAN of its key (what a point lookup relies on); repeated
 * signatures are stored once; damaged chunks are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "db/db.h"
#include "db/db_int.h"

#define MAXC 4096

typedef struct kept {
    size_t n;
    unsigned char key[MAXC][12];
    unsigned char *val[MAXC];
    size_t vlen[MAXC];
    size_t bytes;
} kept;

static int keep(void *ctx, const unsigned char *k, size_t klen, const void *v, size_t vlen)
{
    kept *c = ctx;
    assert_int_equal(klen, 12);
    assert_true(c->n < MAXC);
    memcpy(c->key[c->n], k, 12);
    c->val[c->n] = malloc(vlen + 1);
    memcpy(c->val[c->n], v, vlen);
    c->vlen[c->n++] = vlen;
    c->bytes += vlen;
    return 0;
}

static void kept_free(kept *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->val[i]);
    free(c);
}

/* node i's signature: thread key by i % 3; hashes a function of i / 12,
 * so runs of equal signatures */
static void sig_of(uint32_t node, db_sig *s)
{
    memset(s, 0, sizeof *s);
    s->node = node;
    s->thread_key = 100 + node % 3;
    s->n = 1 + (node / 12) % 5;
    for (uint32_t i = 0; i < s->n; i++)
        s->h[i] = (node / 12) * 7919u + i * 104729u;
}

static void test_roundtrip(void **state)
{
    (void)state;
    db_sigindex *x = db_sigindex_new();
    kept *c = calloc(1, sizeof *c);
    /* nodes 1..20000 in order, then 5..500 again late (nodes that ended
     * late: below the chunk's last, they start chunks of their own), then
     * one far ahead (past DB_SIG_SPAN) */
    static unsigned char seen[30001];
    db_sig s;
    uint32_t order[21000], n = 0;
    for (uint32_t i = 1; i <= 20000; i++)
        if (i < 5 || i > 500)
            order[n++] = i;
    for (uint32_t i = 5; i <= 500; i++)
        order[n++] = i;
    order[n++] = 30000;
    for (uint32_t i = 0; i < n; i++) {
        sig_of(order[i], &s);
        assert_int_equal(db_sigindex_add(x, 9, &s, keep, c), 0);
    }
    assert_int_equal(db_sigindex_flush(x, 9, keep, c), 0);
    assert_int_equal(db_sigindex_flush(x, 9, keep, c), 0); /* nothing twice */
    size_t got = 0;
    for (size_t i = 0; i < c->n; i++) {
        MDB_val k = {12, c->key[i]}, v = {c->vlen[i], c->val[i]};
        uint32_t first = db_get_be32(c->key[i] + 8), prev = 0;
        assert_int_equal(db_get_be32(c->key[i] + 4), 9);
        assert_true(c->vlen[i] <= 1000 + 10 + 4 * DB_SIG_MAX);
        db_sigchunk it;
        db_sig out, want;
        db_sigchunk_begin(&it, &k, &v);
        int r;
        bool head = true;
        while ((r = db_sigchunk_next(&it, &out)) == 1) {
            if (head)
                assert_int_equal(out.node, first);
            else
                assert_true(out.node > prev);
            head = false;
            prev = out.node;
            assert_true(out.node - first <= DB_SIG_SPAN);
            sig_of(out.node, &want);
            assert_int_equal(out.thread_key, want.thread_key);
            assert_int_equal(db_get_be32(c->key[i]), want.thread_key);
            assert_int_equal(out.trace, 9);
            assert_int_equal(out.n, want.n);
            assert_memory_equal(out.h, want.h, 4 * want.n);
            assert_int_equal(seen[out.node]++, 0);
            got++;
        }
        assert_int_equal(r, 0);
    }
    assert_int_equal(got, n);
    /* runs of four equal signatures per thread key: repeats cost two
     * bytes, so well under the 4 bytes a hash of every signature */
    assert_true(c->bytes < (size_t)n * 6);
    kept_free(c);
    db_sigindex_free(x);
}

/* A signature is "the same as the one before" only when every hash is:
 * nodes of one thread key with as many hashes as the node before, equal
 * but for the first, a middle or the last one (or a repeat), come back
 * with their own hashes (same_hashes compares them inline). */
static void test_same_count_other_hashes(void **state)
{
    (void)state;
    db_sigindex *x = db_sigindex_new();
    kept *c = calloc(1, sizeof *c);
    enum { NODES = 400 };
    db_sig want[NODES + 1];
    for (uint32_t node = 1; node <= NODES; node++) {
        db_sig *s = &want[node];
        memset(s, 0, sizeof *s);
        s->node = node;
        s->thread_key = 7;
        s->n = 1 + (node / 40) % DB_SIG_MAX; /* runs of one count */
        for (uint32_t i = 0; i < s->n; i++)
            s->h[i] = 1000 * i + 1;
        uint32_t at = node % 4 == 0 ? 0 : node % 4 == 1 ? s->n / 2 : s->n - 1; /* 3: a repeat of 2's */
        if (node % 4 != 3)
            s->h[at] += node; /* still ascending */
        else
            *s = want[node - 1], s->node = node;
        assert_int_equal(db_sigindex_add(x, 9, s, keep, c), 0);
    }
    assert_int_equal(db_sigindex_flush(x, 9, keep, c), 0);
    uint32_t got = 0;
    for (size_t i = 0; i < c->n; i++) {
        MDB_val k = {12, c->key[i]}, v = {c->vlen[i], c->val[i]};
        db_sigchunk it;
        db_sig out;
        db_sigchunk_begin(&it, &k, &v);
        while (db_sigchunk_next(&it, &out) == 1) {
            assert_int_equal(out.node, ++got);
            assert_int_equal(out.n, want[out.node].n);
            assert_memory_equal(out.h, want[out.node].h, 4 * out.n);
        }
    }
    assert_int_equal(got, NODES);
    kept_free(c);
    db_sigindex_free(x);
}

static void test_damaged(void **state)
{
    (void)state;
    db_sigindex *x = db_sigindex_new();
    kept *c = calloc(1, sizeof *c);
    db_sig s;
    for (uint32_t i = 1; i <= 60; i += 3) {
        sig_of(i, &s);
        assert_int_equal(db_sigindex_add(x, 2, &s, keep, c), 0);
    }
    assert_int_equal(db_sigindex_flush(x, 2, keep, c), 0);
    assert_int_equal(c->n, 1);
    MDB_val k = {12, c->key[0]};
    db_sigchunk it;
    db_sig out;
    int r, count = 0;
    /* a cut value: the signatures before the cut, then damaged (or the
     * end, when the cut falls between two) */
    for (size_t cut = 1; cut < c->vlen[0]; cut++) {
        MDB_val v = {cut, c->val[0]};
        db_sigchunk_begin(&it, &k, &v);
        count = 0;
        while ((r = db_sigchunk_next(&it, &out)) == 1)
            count++;
        assert_true(r == -1 || (r == 0 && count < 20));
    }
    /* "same as the one before" with another count */
    unsigned char bad[] = {0, 2 << 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 3 << 1 | 1};
    MDB_val vb = {sizeof bad, bad};
    db_sigchunk_begin(&it, &k, &vb);
    assert_int_equal(db_sigchunk_next(&it, &out), 1);
    assert_int_equal(db_sigchunk_next(&it, &out), -1);
    /* more hashes than a signature holds */
    unsigned char big[] = {0, 0x82, 0x01}; /* uv 130: 65 hashes */
    MDB_val vg = {sizeof big, big};
    db_sigchunk_begin(&it, &k, &vg);
    assert_int_equal(db_sigchunk_next(&it, &out), -1);
    /* a key of another length */
    MDB_val k8 = {8, c->key[0]}, v = {c->vlen[0], c->val[0]};
    db_sigchunk_begin(&it, &k8, &v);
    assert_int_equal(db_sigchunk_next(&it, &out), -1);
    kept_free(c);
    db_sigindex_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_same_count_other_hashes),
        cmocka_unit_test(test_damaged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
