/* query/suspects.c -- path comparison (paper/004 §Path Comparison): "we
 * check the threads of every node from the sliced normal path, and report
 * the thread that either get blocked or never had a similar node appear
 * again within the timing constraint", ranked, with what the anomalous
 * path itself shows (paper/001 §Identify root cause, step 3).
 *
 * A thread is a stronger suspect the more of the anomalous period it spent
 * blocked, if it lies on the anomaly's own causal chain (the deeper, the
 * closer to the root), and above all if its wait on that chain was ended
 * by a timer it armed itself: it chose to sleep while others waited on it. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

query_period query_period_of(const db_node *n)
{
    if (n->blocked)
        return (query_period){n->begin - n->blocked, n->begin};
    return (query_period){n->begin, n->end};
}

static uint64_t overlap(uint64_t a0, uint64_t a1, const query_period *p)
{
    uint64_t lo = a0 > p->begin ? a0 : p->begin, hi = a1 < p->end ? a1 : p->end;
    return hi > lo ? hi - lo : 0;
}

typedef struct thread_scan {
    db_reader *r;
    const query_period *per;
    const db_sig *normal_sig; /* the thread's node on the normal path, if any */
    const base_arch *normal_arch, *arch; /* their traces' machines */
    query_sysforms *forms;
    uint64_t overlap;
    db_node worst;            /* its node whose wait overlapped most */
    bool have_worst, similar_in_period;
    db_error *de;
} thread_scan;

static int scan_thread_node(void *ctx, const db_sig *sig)
{
    thread_scan *t = ctx;
    db_node n;
    int got = db_get_node_of(t->r, sig->trace, sig->node, &n, t->de);
    if (got <= 0)
        return got;
    uint64_t ov = n.blocked ? overlap(n.begin - n.blocked, n.begin, t->per) : 0;
    t->overlap += ov;
    uint64_t wov = t->have_worst ? overlap(t->worst.begin - t->worst.blocked, t->worst.begin, t->per) : 0;
    /* ties: the first node (signatures come chunk by chunk, not by id) */
    if (ov && (!t->have_worst || ov > wov || (ov == wov && n.id < t->worst.id))) {
        t->worst = n;
        t->have_worst = true;
    }
    if (t->normal_sig && n.begin >= t->per->begin && n.begin <= t->per->end) {
        bool contained;
        double s = query_sysforms_similarity(t->forms, t->normal_sig, t->normal_arch, sig, t->arch, &contained);
        t->similar_in_period |= contained || s >= 0.5;
    }
    return 0;
}

static const query_path_item *find_item(const query_path *p, const char *thread)
{
    for (size_t i = 0; i < p->len; i++)
        if (p->items[i].node.kind == DB_NODE_THREAD && strcmp(p->items[i].node.thread, thread) == 0)
            return &p->items[i];
    return NULL;
}

static const db_node *node_in(const query_path *p, uint32_t id)
{
    for (size_t i = 0; i < p->len; i++)
        if (p->items[i].node.id == id)
            return &p->items[i].node;
    return NULL;
}

/* On the anomalous chain, was n's wait ended by a timer that n's own
 * thread armed (wakeup from a timer node, which a timer edge from the same
 * thread feeds)?  That is a sleep, not a wait on someone else. */
static const db_node *own_timer(const query_path *p, const db_node *n)
{
    for (size_t i = 0; i < p->elen; i++) {
        const db_edge *e = &p->edges[i];
        const db_node *t = node_in(p, e->from);
        if (e->to != n->id || e->kind != DB_EDGE_WAKEUP || !t || t->kind != DB_NODE_TIMER)
            continue;
        for (size_t j = 0; j < p->elen; j++) {
            const db_node *armer = node_in(p, p->edges[j].from);
            if (p->edges[j].to == t->id && p->edges[j].kind == DB_EDGE_TIMER && armer && armer->tid == n->tid)
                return t;
        }
    }
    return NULL;
}

static void add_thread(const char **names, size_t *n, size_t cap, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(names[i], name) == 0)
            return;
    if (*n < cap)
        names[(*n)++] = name;
}

static int by_score(const void *a, const void *b)
{
    const query_suspect *x = a, *y = b;
    return (x->score < y->score) - (x->score > y->score);
}

int query_compare_paths(db_reader *ra, db_reader *rn, const query_path *normal, const query_path *anomaly,
                        const query_period *per, const db_node *victim, query_suspect **out, size_t *len,
                        db_error *de)
{
    const char *names[256];
    size_t nn = 0;
    const query_path *paths[2] = {normal, anomaly};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; paths[k] && i < paths[k]->len; i++) {
            const db_node *n = &paths[k]->items[i].node;
            if (n->kind == DB_NODE_THREAD && strcmp(n->thread, victim->thread) != 0)
                add_thread(names, &nn, 256, n->thread);
        }
    query_suspect *v = calloc(nn ? nn : 1, sizeof *v);
    if (!v)
        return db_fail_oom(de);
    uint64_t span = per->end > per->begin ? per->end - per->begin : 1;
    char pspan[32];
    query_fmt_duration(pspan, sizeof pspan, span);
    /* the two traces' machines, read once (sysforms.c) */
    const base_arch *normal_arch = NULL, *arch = NULL;
    if ((normal && query_trace_arch(rn, db_reader_trace(rn)->id, &normal_arch, de)) ||
        query_trace_arch(ra, db_reader_trace(ra)->id, &arch, de)) {
        free(v);
        return -1;
    }
    query_sysforms forms = {0};
    size_t nv = 0;
    for (size_t i = 0; i < nn; i++) {
        const query_path_item *ni = normal ? find_item(normal, names[i]) : NULL;
        const query_path_item *ai = find_item(anomaly, names[i]);
        db_sig nsig;
        bool have_nsig = ni && db_get_sig(rn, ni->node.id, &nsig, de) == 1;
        thread_scan t = {.r = ra, .per = per, .normal_sig = have_nsig ? &nsig : NULL, .normal_arch = normal_arch,
                         .arch = arch, .forms = &forms, .de = de};
        if (db_scan_sigs(ra, graph_thread_key(names[i], DB_NODE_THREAD), db_reader_trace(ra)->id, scan_thread_node,
                         &t, de)) {
            query_sysforms_free(&forms);
            free(v);
            return -1;
        }
        query_suspect *s = &v[nv];
        s->overlap = t.overlap > span ? span : t.overlap;
        s->node = ai ? ai->node : t.have_worst ? t.worst : ni->node; /* a name comes from one path */
        s->on_path = ai != NULL;
        s->depth = ai ? ai->depth : -1;
        s->score = (double)s->overlap / (double)span;
        /* a thread that was waiting long before the anomaly and went on
         * waiting after it (a shell waiting for its child) was idle, not
         * in the way: count the part of its wait inside the period */
        if (!ai && t.have_worst && t.worst.blocked > s->overlap)
            s->score *= (double)s->overlap / (double)t.worst.blocked;
        char ov[32], bl[32];
        query_fmt_duration(ov, sizeof ov, s->overlap);
        query_fmt_duration(bl, sizeof bl, s->node.blocked);
        const db_node *timer = ai ? own_timer(anomaly, &ai->node) : NULL;
        const db_node *woke = ai && ai->depth > 0 ? &anomaly->items[ai->parent].node : NULL;
        if (ai && !timer && !s->overlap)
            continue; /* on the path, but not blocked during the period (a preempt edge's taker): nothing to say */
        if (ai) {
            s->score += 1.0 + 0.5 * ai->depth;
            if (timer) {
                s->score += 1.0;
                s->finding = true;
                snprintf(s->reason, sizeof s->reason,
                         "slept %s on a timer it armed itself while %s waited: the chain of wakeups to %s "
                         "starts here",
                         bl, victim->thread, victim->thread);
            } else
                snprintf(s->reason, sizeof s->reason, "blocked %s of the %s anomaly, then woke %s", ov, pspan,
                         woke ? woke->thread : victim->thread);
            snprintf(s->evidence, sizeof s->evidence,
                     "node %" PRIu32 " on the anomaly path at depth %d: blocked %s before it ran%s%s%s; "
                     "%s edge to %s#%" PRIu32,
                     ai->node.id, ai->depth, bl, timer ? ", woken by " : "", timer ? timer->thread : "",
                     timer ? " (its own timer)" : "", db_edge_kind_name(ai->via.kind),
                     woke ? woke->thread : victim->thread, woke ? woke->id : victim->id);
        } else if (t.overlap) {
            snprintf(s->reason, sizeof s->reason, "blocked %s of the %s anomaly", ov, pspan);
            snprintf(s->evidence, sizeof s->evidence, "node %" PRIu32 " followed a wait of %s; on the normal path",
                     t.worst.id, bl);
        } else if (ni && have_nsig && !t.similar_in_period) {
            s->score += 0.5;
            s->finding = true;
            snprintf(s->reason, sizeof s->reason, "never ran a node like its normal-path node during the anomaly");
            snprintf(s->evidence, sizeof s->evidence,
                     "normal path node %" PRIu32 " has no similar node of %s in the %s window", ni->node.id,
                     names[i], pspan);
        } else
            continue; /* ran normally: not a suspect */
        nv++;
    }
    query_sysforms_free(&forms);
    qsort(v, nv, sizeof *v, by_score);
    *out = v;
    *len = nv;
    return 0;
}

static void json_path(FILE *f, const query_path *p)
{
    fputc('[', f);
    for (size_t i = 0; p && i < p->len; i++) {
        fputs(i ? "," : "", f);
        query_json_node(f, &p->items[i].node, p->items[i].depth);
    }
    fputc(']', f);
}

void query_json_suspects(FILE *f, const query_suspect *s, size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s{\"node\":%" PRIu32 ",\"thread\":", i ? "," : "", s[i].node.id);
        query_json_str(f, s[i].node.thread, strlen(s[i].node.thread));
        fputs(",\"proc\":", f);
        query_json_str(f, s[i].node.proc, strlen(s[i].node.proc));
        fputs(",\"reason\":", f);
        query_json_str(f, s[i].reason, strlen(s[i].reason));
        fputs(",\"evidence\":", f);
        query_json_str(f, s[i].evidence, strlen(s[i].evidence));
        fprintf(f, ",\"score\":%.3f,\"blocked_overlap\":%" PRIu64 ",\"on_anomaly_path\":%s", s[i].score,
                s[i].overlap, s[i].on_path ? "true" : "false");
        /* what it took of the period, and in which state (a suspect of the
         * path comparison alone: its blocked overlap) */
        fprintf(f, ",\"ns\":%" PRIu64 ",\"state\":\"%s\"", s[i].attributed ? s[i].ns : s[i].overlap,
                s[i].attributed ? query_cp_state_name(s[i].state) : "blocked");
        /* against many normal steps (normals.c): its distribution there, and
         * how far outside it the anomaly lies */
        if (s[i].have_normal)
            fprintf(f,
                    ",\"normal\":{\"steps\":%zu,\"median\":%.0f,\"p5\":%.0f,\"p95\":%.0f,\"mad\":%.0f},"
                    "\"effect\":{\"z\":%.3f,\"excess\":%" PRIu64 ",\"outside\":%s}}",
                    s[i].normal.n, s[i].normal.median, s[i].normal.p5, s[i].normal.p95, s[i].normal.mad, s[i].effect.z,
                    s[i].effect.excess, s[i].effect.outside ? "true" : "false");
        else
            fputs(",\"normal\":null,\"effect\":null}", f);
    }
    fputc(']', f);
}

void query_json_paths(FILE *f, const query_path *normal, const query_path *anomaly)
{
    fputs(",\"normal_path\":", f);
    json_path(f, normal);
    fputs(",\"anomaly_path\":", f);
    json_path(f, anomaly);
}

void query_text_suspects(FILE *f, const query_suspect *s, size_t n, size_t most)
{
    for (size_t i = 0; i < n && i < most; i++)
        fprintf(f, "  %zu. %s (%s, node %" PRIu32 "): %s\n     %s\n", i + 1, s[i].node.thread, s[i].node.proc,
                s[i].node.id, s[i].reason, s[i].evidence);
}

void query_print_comparison(query_session *s, const query_period *per, const db_node *victim,
                            const query_suspect *sus, size_t n, const query_path *normal, const query_path *anomaly)
{
    FILE *f = s->out;
    if (s->format == QUERY_FMT_JSON) {
        fprintf(f, "{\"period\":{\"begin\":%" PRIu64 ",\"end\":%" PRIu64 "},\"threads\":", per->begin, per->end);
        query_json_suspects(f, sus, n);
        query_json_paths(f, normal, anomaly);
        fputs("}\n", f);
        return;
    }
    char d[32], b[32];
    query_fmt_duration(d, sizeof d, per->end - per->begin);
    query_fmt_ts(b, sizeof b, per->begin);
    fprintf(f, "anomalous period: %s from %s (node %" PRIu32 ", %s)\n", d, b, victim->id, victim->thread);
    fprintf(f, "normal path: %zu nodes; anomaly path: %zu nodes\n", normal ? normal->len : 0, anomaly->len);
    if (n == 0)
        fputs("no thread of the normal path was blocked or missing during the anomaly\n", f);
    else
        fputs("threads, most suspect first:\n", f);
    query_text_suspects(f, sus, n, n);
}
