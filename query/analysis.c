/* query/analysis.c -- what match, compare and diagnose share: a node's
 * counterparts through the signature index (paper/004 §Node Comparison),
 * and a thread's longest block. */
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

/* A candidate counts as similar when one normal form holds the other, or
 * when they share this much (the tolerance for events that come and go
 * between runs: page faults, an extra timer, a retried syscall). */
#define QUERY_SIMILAR 0.5

bool query_cand_similar(const query_cand *c)
{
    return c->contained || c->score >= QUERY_SIMILAR;
}

struct match_scan {
    const db_sig *sig;
    const base_arch *arch; /* sig's trace's machine */
    query_sysforms forms;  /* the candidates' machines (of the scanned archive) */
    db_reader *scan;
    uint32_t self_trace, self_node;
    query_cand *v;
    size_t len, cap;
    db_error *de;
};

/* Scores one candidate from its signature alone; its node is read only if
 * the caller gets that far down the ranking. */
static int match_one(void *ctx, const db_sig *c)
{
    struct match_scan *m = ctx;
    if (c->trace == m->self_trace && c->node == m->self_node)
        return 0;
    const base_arch *arch;
    if (query_sysforms_arch(&m->forms, m->scan, c->trace, &arch, m->de))
        return -1;
    bool contained;
    double score = query_sysforms_similarity(&m->forms, m->sig, m->arch, c, arch, &contained);
    if (score == 0 && !contained)
        return 0;
    if (m->len == m->cap) {
        size_t n = m->cap ? m->cap * 2 : 64;
        query_cand *p = realloc(m->v, n * sizeof *p);
        if (!p)
            return db_fail_oom(m->de);
        m->v = p;
        m->cap = n;
    }
    m->v[m->len++] = (query_cand){.score = score, .trace = c->trace, .node = c->node, .contained = contained};
    return 0;
}

/* Does x rank before y? */
static bool better(const query_cand *x, const query_cand *y)
{
    if (x->score != y->score)
        return x->score > y->score;
    if (x->contained != y->contained)
        return x->contained;
    if (x->trace != y->trace)
        return x->trace < y->trace;
    return x->node < y->node;
}

static void sift_down(query_cand *v, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && better(&v[l], &v[m]))
            m = l;
        if (r < n && better(&v[r], &v[m]))
            m = r;
        if (m == i)
            return;
        query_cand x = v[i];
        v[i] = v[m];
        v[m] = x;
        i = m;
    }
}

bool query_cands_next(query_cands *c, query_cand *out)
{
    if (c->heap == 0)
        return false;
    query_cand best = c->v[0];
    c->v[0] = c->v[--c->heap];
    c->v[c->heap] = best;
    sift_down(c->v, c->heap, 0);
    *out = best;
    return true;
}

int query_find_matches(db_reader *r, const db_node *n, uint32_t trace_id, query_cands *out, db_error *de)
{
    return query_find_matches_in(r, n, NULL, &trace_id, 1, out, de);
}

/* Each trace's signatures of the thread key, one trace after the other
 * (trace id 0: all of them in one scan).  Trace ids are per archive: in
 * another one (scan), no candidate is n itself (trace 0 is none). */
int query_find_matches_in(db_reader *r, const db_node *n, db_reader *scan, const uint32_t *ids, size_t nids,
                          query_cands *out, db_error *de)
{
    db_sig sig;
    *out = (query_cands){0};
    int got = db_get_sig(r, n->id, &sig, de);
    if (got <= 0)
        return got; /* a node without a signature has no counterparts */
    struct match_scan m = {.sig = &sig, .scan = scan ? scan : r, .self_trace = scan ? 0 : db_reader_trace(r)->id,
                           .self_node = n->id, .de = de};
    int rc = query_trace_arch(r, db_reader_trace(r)->id, &m.arch, de);
    for (size_t i = 0; !rc && i < nids; i++)
        rc = db_scan_sigs(m.scan, sig.thread_key, ids[i], match_one, &m, de);
    query_sysforms_free(&m.forms);
    if (rc) {
        free(m.v);
        return -1;
    }
    for (size_t i = m.len / 2; i-- > 0;) /* a heap, in linear time */
        sift_down(m.v, m.len, i);
    out->v = m.v;
    out->len = out->heap = m.len;
    return 0;
}

int query_cand_node(db_reader *r, const query_cand *c, query_match *out, db_error *de)
{
    out->trace = c->trace;
    out->score = c->score;
    out->contained = c->contained;
    return db_get_node_of(r, c->trace, c->node, &out->n, de);
}

void query_cands_free(query_cands *c)
{
    free(c->v);
    *c = (query_cands){0};
}

struct longest {
    db_reader *r;
    db_node best;
    uint32_t best_trace;
    bool found;
    db_error *de;
};

static int longest_one(void *ctx, const db_sig *c)
{
    struct longest *l = ctx;
    db_node n;
    int got = db_get_node_of(l->r, c->trace, c->node, &n, l->de);
    if (got < 0)
        return -1;
    /* ties: the first node by trace and id (the signature index hands
     * them out chunk by chunk, not strictly in that order) */
    bool first = l->found && n.blocked == l->best.blocked &&
                 (c->trace < l->best_trace || (c->trace == l->best_trace && n.id < l->best.id));
    if (got && (!l->found || n.blocked > l->best.blocked || first)) {
        l->best = n;
        l->best_trace = c->trace;
        l->found = true;
    }
    return 0;
}

/* The node of thread `name` (kind thread) that followed its longest wait,
 * in trace trace_id, through the signature index.  1 found, 0 not, -1. */
int query_longest_block(db_reader *r, uint32_t trace_id, const char *name, db_node *out, db_error *de)
{
    struct longest l = {.r = r, .de = de};
    if (db_scan_sigs(r, graph_thread_key(name, DB_NODE_THREAD), trace_id, longest_one, &l, de))
        return -1;
    if (l.found)
        *out = l.best;
    return l.found;
}

/* The id of a trace named by an `in trace` / `against trace` name. */
int query_trace_id(query_session *s, const query_name *n, uint32_t *id, query_error *err)
{
    db_trace_info t;
    db_error de = {0};
    int got = db_find_trace(s->archive, n->name, &t, &de);
    if (got <= 0)
        return query_fail(err, &n->pos, got < 0 ? "%s" : "no trace named \"%s\"", got < 0 ? de.msg : n->name);
    *id = t.id;
    return 0;
}
