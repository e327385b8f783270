/* query/fold.c -- long chains folded for the pictures (DOT, SVG).
 *
 * A slice back from a thread that a timer wakes over and over is a chain
 * of the same two nodes repeated (hog <- its timer <- hog <- ...): drawn
 * whole, a depth-20 slice was a strip of 9,154 x 387 px.  A chain here is
 * a run of nodes each with one neighbour before and one after it in the
 * view (not the node the statement started from); where its nodes repeat
 * one pattern of 1 to 3 (thread name, kind, process) at least 4 times, the
 * first and the last repetition stay and the ones between are drawn as one
 * node that says how many there were, over what time.  The view's other
 * outputs (table, JSON, Perfetto) keep every node. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

#define FOLD_PERIOD_MAX 3
#define FOLD_MIN 4 /* repetitions before a chain is folded: two at least go */
#define NONE SIZE_MAX
#define MANY (SIZE_MAX - 1)

static bool same_shape(const query_view_node *a, const query_view_node *b)
{
    return a->grp == b->grp && a->n.kind == b->n.kind && a->n.pid == b->n.pid &&
           strncmp(a->n.thread, b->n.thread, DB_NAME_MAX) == 0;
}

/* the one neighbour: NONE none yet, MANY more than one */
static void neighbour(size_t *slot, size_t other)
{
    if (*slot == NONE || *slot == other)
        *slot = other;
    else
        *slot = MANY;
}

/* How many times seq[p, p + len) repeats from p (whole repetitions). */
static size_t repeats(const query_view *v, const size_t *seq, size_t n, size_t p, size_t len)
{
    size_t t = 0;
    while (p + t < n && same_shape(&v->nodes[seq[p + t]], &v->nodes[seq[p + t % len]]))
        t++;
    return t / len;
}

/* Folds the repetitions of one chain seq[0, n). */
static void fold_chain(query_view *v, const size_t *seq, size_t n)
{
    for (size_t p = 0; p < n;) {
        size_t best_len = 0, best_r = 0;
        for (size_t len = 1; len <= FOLD_PERIOD_MAX; len++) {
            size_t r = repeats(v, seq, n, p, len);
            if (r >= FOLD_MIN && r * len > best_r * best_len) {
                best_len = len;
                best_r = r;
            }
        }
        if (!best_len) {
            p++;
            continue;
        }
        assert(best_len <= FOLD_PERIOD_MAX && best_r >= FOLD_MIN && p + best_r * best_len <= n);
        /* keep the first and the last repetition; the rest is one node */
        size_t a = p + best_len, b = p + (best_r - 1) * best_len; /* folded: [a, b) */
        query_view_node *rep = &v->nodes[seq[a]];
        rep->fold_n = (uint32_t)(best_r - 2);
        rep->fold_len = (uint8_t)best_len;
        rep->fold_end = rep->n.end;
        for (size_t i = a; i < b; i++) {
            query_view_node *x = &v->nodes[seq[i]];
            x->fold_rep = (uint32_t)(seq[a] + 1);
            if (x->n.end > rep->fold_end)
                rep->fold_end = x->n.end;
        }
        p += best_r * best_len;
    }
}

int query_view_fold(query_view *v)
{
    query_view_sort(v);
    size_t *pred = malloc((v->len ? v->len : 1) * sizeof *pred), *succ = malloc((v->len ? v->len : 1) * sizeof *succ);
    size_t *seq = malloc((v->len ? v->len : 1) * sizeof *seq);
    if (!pred || !succ || !seq) {
        free(pred);
        free(succ);
        free(seq);
        return -1;
    }
    for (size_t i = 0; i < v->len; i++) {
        pred[i] = succ[i] = NONE;
        v->nodes[i].fold_rep = v->nodes[i].fold_n = 0;
    }
    for (size_t i = 0; i < v->elen; i++) {
        const query_view_edge *e = &v->edges[i];
        const query_view_node *a = query_view_find(v, e->grp, e->e.from), *b = query_view_find(v, e->grp, e->e.to);
        if (!a || !b || a == b)
            continue;
        neighbour(&succ[a - v->nodes], (size_t)(b - v->nodes));
        neighbour(&pred[b - v->nodes], (size_t)(a - v->nodes));
    }
    /* a chain node: one neighbour each way, and not where the statement began */
#define CHAIN(i) (pred[i] < MANY && succ[i] < MANY && !v->nodes[i].start)
    for (size_t i = 0; i < v->len; i++) {
        /* a chain starts at a chain node whose predecessor does not lead to it alone */
        if (!CHAIN(i) || (CHAIN(pred[i]) && succ[pred[i]] == i))
            continue;
        size_t n = 0;
        for (size_t k = i; n < v->len && CHAIN(k); k = succ[k]) {
            seq[n++] = k;
            if (pred[succ[k]] != k)
                break;
        }
        fold_chain(v, seq, n);
    }
#undef CHAIN
    free(pred);
    free(succ);
    free(seq);
    return 0;
}
