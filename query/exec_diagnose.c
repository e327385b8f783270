/* query/exec_diagnose.c -- `diagnose` (paper/001 §Identify root cause of
 * anomaly, three steps) and `check fix` (paper/001 §Validation of bug fix).
 *
 *   1. classify the anomaly node: a long wait, busy processing, or
 *      repeated yields -- and, with the scheduler's view, waiting for a
 *      cpu (runnable) or for a device (io): where its critical path
 *      (critpath.c) says the period went;
 *   2. find its normal counterpart: a node like it on the same thread,
 *      earlier in the same trace or in the trace to compare against,
 *      without the anomaly (a short wait, a short run);
 *   3. slice the normal path back from the counterpart (whose first in-edge
 *      is the node that woke it: "the node wakes up the normal node ... is
 *      a target node to perform path slicing on") and the anomaly path back
 *      from the anomaly node, compare them (suspects.c), rank suspects.
 * Suspects come first by the time they took of the anomaly's period, less
 * what they took of the counterpart's (attrib.c); the threads the path
 * comparison alone points at follow. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

#define DIAG_DEPTH 12
#define YIELDS 3 /* this many sched_yield in one node is "repeated yields" */

static int count_yields(void *ctx, const db_event *ev)
{
    const char *v;
    size_t n;
    if (ev->type == DB_EV_SYSCALL && ev->phase != DB_PH_END && db_event_attr(ev, "name", &v, &n) && n == 11 &&
        memcmp(v, "sched_yield", 11) == 0)
        ++*(int *)ctx;
    return 0;
}

/* Step 1: yields, else where the period went. */
static const char *classify(db_reader *r, const db_node *n, const query_cp *cp, db_error *de, int *rc)
{
    int yields = 0;
    *rc = db_scan_node_events(r, n->id, count_yields, &yields, de);
    if (yields >= YIELDS)
        return "yield";
    /* nothing held it up: it did not wait, and took no time (a
     * node of one event is no "long wait" of 0ns) */
    if (n->blocked == 0 && n->runnable == 0 && n->end == n->begin)
        return "none";
    return query_cp_kind(cp);
}

/* The anomaly: node N of the trace, or the longest block of a thread. */
static int anomaly_node(query_session *s, db_reader *r, const query_stmt *st, db_node *n, query_error *err)
{
    db_error de = {0};
    int got;
    if (st->by_thread) {
        /* its worst step: the longest not running, waits and preemption alike */
        got = query_worst_step(r, db_reader_trace(r)->id, st->thread_name.name, n, &de);
        if (got == 0)
            return query_fail(err, &st->thread_name.pos, "no thread named \"%s\" in trace \"%s\"",
                              st->thread_name.name, db_reader_trace(r)->name);
    } else {
        got = st->node > UINT32_MAX ? 0 : db_get_node(r, (uint32_t)st->node, n, &de);
        if (got == 0)
            return query_fail(err, &st->node_pos, "no node %" PRIu64 " in trace \"%s\"", st->node,
                              db_reader_trace(r)->name);
    }
    (void)s;
    return got < 0 ? query_fail(err, NULL, "%s", de.msg) : 0;
}

/* One group of equal scores, v[lo .. hi), the better at the higher index:
 * its normal node, if any (pass 0: among the similar ones only).  In the
 * same trace the step closest before the anomaly (ids follow begin
 * order: the largest id below the anomaly's first), in another the best
 * ranked.  r reads the candidates' archive; own is the anomaly's trace id
 * there (0: another archive).  1 found (out), 0 not, -1 error. */
static int pick(db_reader *r, uint32_t own, const db_node *a, const char *kind, bool same, bool similar_only,
                query_cand *v, size_t lo, size_t hi, query_match *out, db_error *de)
{
    uint32_t bound = a->id; /* same trace: ids below it, largest first */
    for (size_t tries = 0, i = hi; tries < hi - lo; tries++) {
        const query_cand *c = NULL;
        if (same) {
            for (size_t j = lo; j < hi; j++)
                if (v[j].node < bound && (!c || v[j].node > c->node))
                    c = &v[j];
            if (!c)
                return 0;
            bound = c->node;
        } else
            c = &v[--i];
        if (similar_only && !query_cand_similar(c))
            continue;
        int got = query_cand_node(r, c, out, de);
        if (got < 0)
            return -1;
        const db_node *n = &out->n;
        if (!got || ((same || (own && out->trace == own)) && n->end > a->begin))
            continue; /* "earlier in the same trace" */
        if (strcmp(kind, "busy") == 0 ? (n->end - n->begin) * 2 < a->end - a->begin
                                      : query_not_running(n) * 2 < query_not_running(a))
            return 1;
    }
    return 0;
}

/* Candidates of equal score from a set of traces, v[lo .. hi): the ones of
 * the traces most like the anomaly's last (pick() tries the last first),
 * in their order otherwise (likeness.c). */
struct ranked {
    query_like like;
    size_t at;
    query_cand c;
};

static int by_like(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->c.contained != y->c.contained) /* one form holding the other first, as ever */
        return x->c.contained ? 1 : -1;
    int c = query_like_cmp(&x->like, &y->like);
    if (c)
        return c;
    return (x->at > y->at) - (x->at < y->at);
}

static int order_by_likeness(query_likeness *l, query_cand *v, size_t lo, size_t hi, db_error *de)
{
    size_t i = lo + 1;
    while (i < hi && v[i].trace == v[lo].trace)
        i++;
    if (i == hi)
        return 0; /* one trace: nothing to order */
    struct ranked *t = malloc((hi - lo) * sizeof *t);
    if (!t)
        return db_fail_oom(de);
    for (i = lo; i < hi; i++) {
        t[i - lo] = (struct ranked){.at = i, .c = v[i]};
        if (query_likeness_of(l, v[i].trace, &t[i - lo].like, de)) {
            free(t);
            return -1;
        }
    }
    qsort(t, hi - lo, sizeof *t, by_like);
    for (i = lo; i < hi; i++)
        v[i] = t[i - lo].c;
    free(t);
    return 0;
}

/* Step 2: the most similar node of the thread without the anomaly: the
 * best score (a similar one if there is), and of equals the one pick()
 * prefers.  Candidates are handed out best first, so the first group of
 * equal scores that holds a normal one decides, and only the nodes looked
 * at are read.  *like: how alike the baseline's trace is to the anomaly's,
 * which with the score ranks baselines of several archives (argusq.fleet
 * picks the best of every archive's by it). */
static int baseline(db_reader *r, const db_node *a, const query_path *path, const char *kind,
                    const query_source *src, query_match *out, query_like *like, query_cands *keep, db_error *de)
{
    const uint32_t *ids = src->ids;
    size_t nids = src->nids;
    db_reader *cr = src->scan ? src->scan : r; /* the candidates' archive */
    uint32_t own = src->scan ? 0 : db_reader_trace(r)->id;
    query_cands m;
    if (query_find_matches_in(r, a, src->scan, ids, nids, &m, de))
        return -1;
    if (keep) { /* every candidate, for the statistics over them (normals.c) */
        *keep = m;
        if (m.len && !(keep->v = malloc(m.len * sizeof *m.v))) {
            query_cands_free(&m);
            return db_fail_oom(de);
        }
        if (m.len)
            memcpy(keep->v, m.v, m.len * sizeof *m.v);
    }
    bool rank = nids > 1; /* candidates of equal scores ordered by likeness */
    query_likeness *l = NULL;
    if (rank && !(l = query_likeness_new(r, path, src->archive, src->scan, de))) {
        query_cands_free(&m);
        return -1;
    }
    /* one trace, the anomaly's own: the step closest before it; in a list
     * of traces (against traces [where]), the best of them -- of equal
     * scores, from the trace most like the anomaly's --, its own trace's
     * nodes only if they ended before it began (also when the list is the
     * anomaly's trace alone: a list is ranked as one, so that the best of
     * each archive's list is the best of the lists' union) */
    bool same = !src->listed && nids == 1 && own && ids[0] == own;
    int found = 0;
    /* pass 0, the similar ones: group by group as they come out (each
     * lands at v[m.heap], below the ones out before it) */
    query_cand c;
    bool have = query_cands_next(&m, &c);
    while (have && !found) {
        double score = c.score;
        size_t hi = m.heap + 1;
        while ((have = query_cands_next(&m, &c)) && c.score == score)
            ;
        size_t lo = have ? m.heap + 1 : m.heap; /* c, when there is one, opens the next group */
        found = rank && order_by_likeness(l, m.v, lo, hi, de)
                    ? -1
                    : pick(cr, own, a, kind, same, true, m.v, lo, hi, out, de);
    }
    /* pass 1, any: all are out now, sorted with the best last */
    for (size_t hi = m.len; !found && hi > 0;) {
        size_t lo = hi - 1;
        while (lo > 0 && m.v[lo - 1].score == m.v[hi - 1].score)
            lo--;
        found = rank && order_by_likeness(l, m.v, lo, hi, de)
                    ? -1
                    : pick(cr, own, a, kind, same, false, m.v, lo, hi, out, de);
        hi = lo;
    }
    if (found == 1 && ((!l && !(l = query_likeness_new(r, path, src->archive, src->scan, de))) ||
                       query_likeness_of(l, out->trace, like, de)))
        found = -1;
    query_cands_free(&m);
    query_likeness_free(l);
    return found;
}

/* "Its 283.9ms went to: hog timer 99.8%, ..." -- the breakdown by thread
 * and state, largest first, the five largest. */
static void print_breakdown(FILE *f, const query_cp *cp)
{
    struct agg {
        const char *thread;
        uint32_t tid;
        int state;
        uint64_t ns;
    } top[64];
    int n = 0;
    for (size_t i = 0; i < cp->n; i++) {
        const query_cp_part *p = &cp->parts[i];
        int j = 0;
        while (j < n && !(top[j].tid == p->tid && top[j].state == p->state))
            j++;
        if (j == n) {
            if (n == 64)
                continue;
            top[n++] = (struct agg){p->thread, p->tid, p->state, 0};
        }
        top[j].ns += p->ns;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && top[j].ns > top[j - 1].ns; j--) {
            struct agg x = top[j];
            top[j] = top[j - 1];
            top[j - 1] = x;
        }
    uint64_t period = cp->end - cp->begin;
    char d[32];
    query_fmt_duration(d, sizeof d, period);
    fprintf(f, "Its %s went to:", d);
    for (int i = 0; i < n && i < 5; i++)
        fprintf(f, "%s %s %s %.1f%%", i ? "," : "", top[i].thread, query_cp_state_name(top[i].state),
                period ? 100.0 * (double)top[i].ns / (double)period : 0.0);
    fputs(n > 5 ? ", ...\n" : "\n", f);
}

/* --format csv: the suspects, one table (the prose is the table
 * format's; the rest is in the JSON) */
static void print_csv(query_session *s, const query_suspect *sus, size_t n, uint64_t period)
{
    static const char *const heads[] = {"rank", "thread", "proc", "tid", "node", "state", "ns", "share",
                                        "score", "on_anomaly_path", "normal_steps", "normal_median",
                                        "normal_p5", "normal_p95", "z", "outside", "reason", "evidence"};
    query_table t;
    query_table_init(&t, s->format, 18, heads);
    for (size_t i = 0; i < n; i++) {
        const query_suspect *x = &sus[i];
        query_table_u64(&t, i + 1);
        query_table_str(&t, x->node.thread);
        query_table_str(&t, x->node.proc);
        query_table_u64(&t, x->node.tid);
        query_table_u64(&t, x->node.id);
        query_table_str(&t, x->attributed ? query_cp_state_name(x->state) : "blocked");
        uint64_t ns = x->attributed ? x->ns : x->overlap;
        query_table_u64(&t, ns);
        query_table_cell(&t, "%.6f", period ? (double)ns / (double)period : 0.0);
        query_table_cell(&t, "%.3f", x->score);
        query_table_str(&t, x->on_path ? "true" : "false");
        if (x->have_normal) {
            query_table_u64(&t, x->normal.n);
            query_table_cell(&t, "%.0f", x->normal.median);
            query_table_cell(&t, "%.0f", x->normal.p5);
            query_table_cell(&t, "%.0f", x->normal.p95);
            query_table_cell(&t, "%.3f", x->effect.z);
            query_table_str(&t, x->effect.outside ? "true" : "false");
        } else
            for (int k = 0; k < 6; k++)
                query_table_str(&t, "");
        query_table_str(&t, x->reason);
        query_table_str(&t, x->evidence);
    }
    query_table_show(s, &t);
    query_table_free(&t);
}

static void print_text(query_session *s, const db_node *a, const char *kind, const query_match *base,
                       const char *base_trace, const char *base_archive, const query_suspect *sus, size_t n,
                       const query_path *normal, const query_path *anomaly, const query_cp *cp, const query_cp *life,
                       const query_cp *normal_life, const query_normals *nm)
{
    FILE *f = s->out;
    char bl[32], du[32], ts[32];
    query_fmt_duration(bl, sizeof bl, a->blocked);
    query_fmt_duration(du, sizeof du, a->end - a->begin);
    query_fmt_ts(ts, sizeof ts, a->begin);
    if (strcmp(kind, "runnable") == 0) {
        char rn[32];
        query_fmt_duration(rn, sizeof rn, a->runnable);
        fprintf(f, "%s (node %" PRIu32 ", %s) was runnable but off the cpu %s of its %s at %s: cpu contention.\n",
                a->thread, a->id, a->proc, rn, du, ts);
    } else if (strcmp(kind, "io") == 0) {
        int dev = query_cp_io_device(cp);
        fprintf(f, "%s (node %" PRIu32 ", %s) waited %s before it ran at %s, for %s: i/o.\n", a->thread, a->id,
                a->proc, bl, ts, dev == QUERY_DEV_NETWORK ? "the network" : dev == QUERY_DEV_DISK ? "the disk" : "devices");
    }
    else if (strcmp(kind, "none") == 0)
        fprintf(f, "%s (node %" PRIu32 ", %s) neither waited nor took any time at %s: nothing held it up.\n",
                a->thread, a->id, a->proc, ts);
    else if (strcmp(kind, "wait") == 0 && a->blocked == 0)
        fprintf(f, "%s (node %" PRIu32 ", %s) did not wait before it ran at %s.\n", a->thread, a->id, a->proc, ts);
    else if (strcmp(kind, "wait") == 0)
        fprintf(f, "%s (node %" PRIu32 ", %s) waited %s before it ran at %s: a long wait.\n", a->thread, a->id,
                a->proc, bl, ts);
    else if (strcmp(kind, "busy") == 0)
        fprintf(f, "%s (node %" PRIu32 ", %s) ran for %s at %s: busy processing.\n", a->thread, a->id, a->proc,
                du, ts);
    else
        fprintf(f, "%s (node %" PRIu32 ", %s) yielded the cpu again and again at %s.\n", a->thread, a->id,
                a->proc, ts);
    if (base) {
        char bb[32], bd[32];
        query_fmt_duration(bb, sizeof bb, base->n.blocked);
        query_fmt_duration(bd, sizeof bd, base->n.end - base->n.begin);
        fprintf(f, "Its normal counterpart is node %" PRIu32 " of trace \"%s\"", base->n.id, base_trace);
        if (base_archive)
            fprintf(f, " in archive \"%s\"", base_archive);
        fprintf(f, " (similarity %.2f): waited %s, ran %s.\n", base->score, bb, bd);
        fprintf(f, "The normal path back from it has %zu nodes; the anomaly path %zu.\n", normal ? normal->len : 0,
                anomaly->len);
    } else
        fprintf(f, "No normal counterpart was found; the anomaly path has %zu nodes.\n", anomaly->len);
    if (cp->expect_tid)
        fprintf(f, "Its wait ended by its own timeout; in the normal run %s woke it: the wakeup never came, and the "
                   "wait is followed along %s's timeline.\n",
                cp->expected, cp->expected);
    print_breakdown(f, cp);
    if (life)
        query_text_lives(f, life, normal_life);
    if (nm)
        query_normals_text(f, nm);
    if (n == 0) {
        fputs("No other thread was blocked on its path during the anomaly.\n", f);
        return;
    }
    fputs("Suspects, most likely first:\n", f);
    query_text_suspects(f, sus, n, 5);
}

/* paper/001: "anomaly nodes that have lengthy processing are likely to
 * reveal the root causes by themselves": a busy or yielding node is its own
 * first suspect, with what it did that its counterpart did not. */
static int self_suspect(db_reader *r, db_reader *rn, const db_node *a, const char *kind, const query_match *base,
                        query_suspect **sus, size_t *n, db_error *de)
{
    query_suspect *v = realloc(*sus, (*n + 1) * sizeof *v);
    if (!v)
        return db_fail_oom(de);
    memmove(v + 1, v, *n * sizeof *v);
    *sus = v;
    (*n)++;
    query_suspect *s = &v[0];
    memset(s, 0, sizeof *s);
    s->node = *a;
    s->on_path = true;
    s->score = 10;
    char du[32], bd[32];
    query_fmt_duration(du, sizeof du, a->end - a->begin);
    query_fmt_duration(bd, sizeof bd, base ? base->n.end - base->n.begin : 0);
    if (strcmp(kind, "yield") == 0)
        snprintf(s->reason, sizeof s->reason, "yielded the cpu again and again for %s instead of waiting", du);
    else if (base)
        snprintf(s->reason, sizeof s->reason, "ran %s where its normal counterpart ran %s", du, bd);
    else
        snprintf(s->reason, sizeof s->reason, "ran %s without waiting", du);
    db_sig sa, sb;
    size_t len = (size_t)snprintf(s->evidence, sizeof s->evidence, "node %" PRIu32, a->id);
    if (base && db_get_sig(r, a->id, &sa, de) == 1 && db_get_sig(rn, base->n.id, &sb, de) == 1) {
        int k = 0;
        for (uint32_t i = 0; i < sa.n && len < sizeof s->evidence; i++) {
            bool common = false;
            for (uint32_t j = 0; j < sb.n && !common; j++)
                common = sa.h[i] == sb.h[j];
            char text[128];
            if (common || db_norm_text(r, sa.h[i], text, sizeof text, de) != 1)
                continue;
            len += (size_t)snprintf(s->evidence + len, sizeof s->evidence - len, "%s%s", k++ ? ", " : "; only here: ",
                                    text);
        }
    }
    return 0;
}

/* The path comparison's suspects after the ones ranked by time, for the
 * threads those do not name and for which it has a reason of its own (a
 * sleep on its own timer, a normal node it never ran): a thread that was
 * merely blocked during the period took none of it.  Their scores stay
 * below; at most DIAG_SUSPECTS in all. */
#define DIAG_SUSPECTS 8

static int merge_suspects(query_suspect **sus, size_t *n, const query_suspect *cmp, size_t ncmp, db_error *de)
{
    query_suspect *v = realloc(*sus, (*n + ncmp + 1) * sizeof *v);
    if (!v)
        return db_fail_oom(de);
    *sus = v;
    size_t first = *n;
    for (size_t i = 0; i < ncmp; i++) {
        bool named = false;
        for (size_t j = 0; j < first && !named; j++)
            named = v[j].node.tid == cmp[i].node.tid;
        if (named || (first && !cmp[i].finding))
            continue;
        v[*n] = cmp[i];
        if (first && v[*n].score >= 10)
            v[*n].score = 9.999;
        (*n)++;
    }
    if (*n > DIAG_SUSPECTS)
        *n = DIAG_SUSPECTS;
    return 0;
}

/* The baseline's rank, beside its node: what orders the baselines of
 * several archives as one archive holding them all orders its candidates
 * (a similar one first, then the score, one form holding the other, the
 * likeness of the traces) -- argusq.fleet's fleet-wide baseline; and the
 * archive it is in, when it is not the session's. */
static void json_baseline(FILE *f, const query_match *base, const char *trace, const char *archive,
                          const query_like *like)
{
    query_json_node_open(f, &base->n);
    fprintf(f, ",\"score\":%.3f,\"trace\":", base->score);
    query_json_str(f, trace, strlen(trace));
    if (archive) {
        fputs(",\"archive\":", f);
        query_json_str(f, archive, strlen(archive));
    }
    query_cand c = {.score = base->score, .contained = base->contained};
    fprintf(f,
            ",\"rank\":{\"similar\":%s,\"score\":%.17g,\"contained\":%s,\"likeness\":{\"path\":%.17g,"
            "\"whole\":%.17g}}}",
            query_cand_similar(&c) ? "true" : "false", base->score, base->contained ? "true" : "false", like->path,
            like->whole);
}

/* What diagnose works out, step by step (query_exec_diagnose): the
 * anomaly node a of trace ra and its critical path cpa; its baseline
 * (the normal run's counterpart base in trace rn, got) and that one's
 * critical path cpn; the suspects.  Each step runs only if the ones
 * before it succeeded (rc), and diag_free releases what they made. */
typedef struct diag {
    query_session *s;
    const query_stmt *st;
    query_source src;
    db_reader *ra, *rn; /* the anomaly's trace; the normal run's (ra itself when same) */
    db_error de;
    int rc;
    db_node a;
    const char *kind;
    query_cp cpa, cpn;
    bool have_cpa, have_cpn;
    query_cands cands; /* a list of traces: every candidate, for normals.c */
    int got;           /* a baseline was found */
    bool same;         /* ... in the anomaly's own trace */
    query_match base;
    query_like like;
    char base_trace[256];
    query_path normal, anomaly;
    query_cp lifa, lifn; /* a short-lived thread's whole life, and the normal one's */
    bool lives;
    query_normals nm;
    bool have_nm, many;
    query_suspect *sus;
    size_t nsus;
} diag;

/* The anomaly, its critical path and causal path, its kind, and its
 * baseline: the normal run's counterpart and its critical path.  The
 * normal run's reader is the anomaly's own (the same trace), another
 * trace of its archive, or a trace of the other archive. */
static void diag_anomaly(diag *d, query_error *err)
{
    db_error *de = &d->de;
    d->rc = anomaly_node(d->s, d->ra, d->st, &d->a, err);
    if (!d->rc) {
        if (query_critical_path(d->ra, &d->a, &d->cpa, de))
            d->rc = query_fail(err, NULL, "%s", de->msg);
        d->have_cpa = !d->rc;
    }
    if (!d->rc && query_path_walk(d->ra, d->a.id, QUERY_WALK_IN, query_causal_kinds(), DIAG_DEPTH, &d->anomaly, de) < 0)
        d->rc = query_fail(err, NULL, "%s", de->msg);
    if (!d->rc) {
        d->kind = classify(d->ra, &d->a, &d->cpa, de, &d->rc);
        if (!d->rc)
            d->got = baseline(d->ra, &d->a, &d->anomaly, d->kind, &d->src, &d->base, &d->like,
                              d->src.listed ? &d->cands : NULL, de);
        if (d->rc || d->got < 0)
            d->rc = query_fail(err, NULL, "%s", de->msg);
    }
    d->same = d->got && !d->src.path && d->base.trace == db_reader_trace(d->ra)->id;
    if (!d->rc && d->got) {
        if (query_source_trace_name(&d->src, d->ra, d->base.trace, d->base_trace, sizeof d->base_trace, de) == 1 &&
            (d->rn = d->same ? d->ra : db_reader_open(d->src.archive, d->base_trace, de)) != NULL)
            db_reader_interrupt(d->rn, d->s->interrupt);
        if (!d->rn ||
            query_path_walk(d->rn, d->base.n.id, QUERY_WALK_IN, query_causal_kinds(), DIAG_DEPTH, &d->normal, de) < 0 ||
            query_critical_path(d->rn, &d->base.n, &d->cpn, de))
            d->rc = query_fail(err, NULL, "%s", de->msg);
        d->have_cpn = !d->rc;
    }
}

/* A short-lived process or thread (the trace shows its creation, and the
 * normal run's): its whole life beside the normal one's, where the
 * difference may lie outside the worst step (disk waits gone) -- the
 * baseline's thread, else the thread of its name in the one trace it was
 * compared against. */
static void diag_lives(diag *d, query_error *err)
{
    db_error *de = &d->de;
    db_reader *rl = d->got && !d->same ? d->rn : NULL, *own = NULL;
    uint32_t tid = d->got ? d->base.n.tid : 0;
    char name[256];
    int found = 1;
    const query_source *src = &d->src;
    if (!d->got && src->nids == 1 && src->ids[0] && (src->path || src->ids[0] != db_reader_trace(d->ra)->id)) {
        found = query_source_trace_name(src, d->ra, src->ids[0], name, sizeof name, de);
        if (found == 1 && !(rl = own = db_reader_open(src->archive, name, de)))
            found = -1;
        if (found == 1)
            found = query_thread_tid(rl, d->a.thread, &tid, de);
    }
    if (found < 0 || (rl && found == 1 && query_compare_lives(d->ra, &d->a, rl, tid, &d->lifa, &d->lifn, &d->lives, de)))
        d->rc = query_fail(err, NULL, "%s", de->msg);
    if (own)
        db_reader_close(own);
}

/* A wakeup that never came: the anomaly's wait ended by its own timer
 * where the normal run's was ended by a thread (the counterpart's waker,
 * else the thread that woke its thread most often there) -- follow the
 * period along that thread's timeline (paper/004 §Path Comparison: what
 * the threads of the normal path did instead). */
static void diag_missed_wakeup(diag *d, query_error *err)
{
    db_error *de = &d->de;
    query_cp *cpa = &d->cpa;
    char waker[DB_NAME_MAX] = "";
    if (!(d->have_cpa && d->have_cpn && cpa->timeout))
        return;
    if (!d->cpn.timeout && d->cpn.waker[0])
        memcpy(waker, d->cpn.waker, sizeof waker);
    else if (query_usual_waker(d->rn, d->base.n.tid,
                               d->base.n.begin > cpa->end - cpa->begin ? d->base.n.begin - (cpa->end - cpa->begin) : 0,
                               waker, de) < 0) /* the counterpart timed out too: its neighbours' wakers */
        d->rc = query_fail(err, NULL, "%s", de->msg);
    if (d->rc || !waker[0] || strncmp(waker, d->a.thread, DB_NAME_MAX) == 0)
        return;
    uint32_t tid;
    int found = query_thread_tid(d->ra, waker, &tid, de);
    query_cp via;
    if (found < 0 || (found && query_critical_path_expect(d->ra, &d->a, tid, waker, &via, de)))
        d->rc = query_fail(err, NULL, "%s", de->msg);
    else if (found) {
        query_cp_free(cpa);
        *cpa = via;
    }
}

/* The suspects: the critical path's parts against the baseline's, the
 * paths compared, the node's own kind (busy, yield) and a spinner's
 * holder; with a list of traces, every normal step like it, not only the
 * best (normals.c), and with enough of them they, not the one baseline,
 * say what is more than usual. */
static void diag_suspects(diag *d, query_error *err)
{
    db_error *de = &d->de;
    /* the period the breakdown partitions: the wait before the node and
     * the node, for the path comparison too */
    query_period per = d->have_cpa ? (query_period){d->cpa.begin, d->cpa.end} : query_period_of(&d->a);
    if (d->have_cpa && d->src.listed) {
        if (query_normals_collect(d->ra, &d->a, &d->cpa, &d->src, &d->cands, d->s->pool, &d->nm, de))
            d->rc = query_fail(err, NULL, "%s", de->msg);
        d->have_nm = !d->rc;
    }
    d->many = d->have_nm && !query_stats_too_few(d->nm.steps);
    query_suspect *cmp = NULL;
    size_t ncmp = 0;
    uint64_t len = d->cpa.end - d->cpa.begin;
    if (!d->rc &&
        (query_attrib_suspects(d->ra, &d->cpa, d->have_cpn && !d->many ? &d->cpn : NULL, &d->anomaly, &d->sus,
                               &d->nsus, de) ||
         query_compare_paths(d->ra, d->rn ? d->rn : d->ra, d->got ? &d->normal : NULL, &d->anomaly, &per, &d->a, &cmp,
                             &ncmp, de) ||
         merge_suspects(&d->sus, &d->nsus, cmp, ncmp, de)))
        d->rc = query_fail(err, NULL, "%s", de->msg);
    free(cmp);
    if (!d->rc && d->many)
        query_normals_rank(&d->nm, d->sus, d->nsus, len, true);
    if (!d->rc && (strcmp(d->kind, "busy") == 0 || strcmp(d->kind, "yield") == 0) &&
        self_suspect(d->ra, d->rn, &d->a, d->kind, d->got ? &d->base : NULL, &d->sus, &d->nsus, de))
        d->rc = query_fail(err, NULL, "%s", de->msg);
    if (!d->rc && d->have_cpa &&
        query_spin_suspect(d->ra, &d->cpa, d->have_cpn ? &d->cpn : NULL, &d->sus, &d->nsus, DIAG_SUSPECTS, de))
        d->rc = query_fail(err, NULL, "%s", de->msg);
    if (!d->rc && d->many) /* the spinner's holder */
        query_normals_rank(&d->nm, d->sus, d->nsus, len, false);
}

static void diag_json(const diag *d, FILE *f)
{
    fputs("{\"anomaly\":", f);
    query_json_node(f, &d->a, -1);
    fprintf(f, ",\"kind\":\"%s\",\"baseline\":", d->kind);
    if (d->got)
        json_baseline(f, &d->base, d->base_trace, d->src.path, &d->like);
    else
        fputs("null", f);
    fputs(",\"lives\":", f); /* a short-lived thread: its life beside the normal one's */
    if (d->lives) {
        query_cp_totals ta = query_cp_sum(&d->lifa), tn = query_cp_sum(&d->lifn);
        fprintf(f, "{\"anomaly\":{\"ns\":%" PRIu64 ",", d->lifa.end - d->lifa.begin);
        query_json_cp_totals(f, &ta);
        fprintf(f, "},\"normal\":{\"ns\":%" PRIu64 ",", d->lifn.end - d->lifn.begin);
        query_json_cp_totals(f, &tn);
        fputs("}}", f);
    } else
        fputs("null", f);
    fputs(",\"expected_waker\":", f); /* a missed wakeup: who woke it in the normal run */
    if (d->cpa.expect_tid)
        query_json_str(f, d->cpa.expected, strnlen(d->cpa.expected, DB_NAME_MAX));
    else
        fputs("null", f);
    query_normals_json(f, d->have_nm ? &d->nm : NULL);
    fputs(",\"suspects\":", f);
    query_json_suspects(f, d->sus, d->nsus);
    query_json_paths(f, d->got ? &d->normal : NULL, &d->anomaly);
    fprintf(f, ",\"period\":{\"begin\":%" PRIu64 ",\"end\":%" PRIu64 ",\"ns\":%" PRIu64 "},\"breakdown\":",
            d->cpa.begin, d->cpa.end, d->cpa.end - d->cpa.begin);
    query_json_cp_parts(f, &d->cpa);
    fputs("}\n", f);
}

static void diag_free(diag *d)
{
    free(d->sus);
    query_cands_free(&d->cands);
    if (d->have_nm)
        query_normals_free(&d->nm);
    if (d->lives) {
        query_cp_free(&d->lifa);
        query_cp_free(&d->lifn);
    }
    if (d->have_cpa)
        query_cp_free(&d->cpa);
    if (d->have_cpn)
        query_cp_free(&d->cpn);
    query_path_free(&d->normal);
    query_path_free(&d->anomaly);
    if (d->rn && d->rn != d->ra)
        db_reader_close(d->rn);
    db_reader_close(d->ra);
    query_source_close(d->s, &d->src);
}

int query_exec_diagnose(query_session *s, const query_stmt *st, query_error *err)
{
    diag d = {.s = s, .st = st, .kind = "wait"};
    if (query_source_open(s, st, &st->against, false, &d.src, err))
        return -1;
    if (!(d.ra = query_open_trace(s, &st->trace, err))) {
        query_source_close(s, &d.src);
        return -1;
    }
    if (!d.src.path && !d.src.listed && !st->against.name)
        d.src.one = db_reader_trace(d.ra)->id; /* the default: earlier in the anomaly's own trace */
    diag_anomaly(&d, err);
    if (!d.rc)
        diag_lives(&d, err);
    if (!d.rc)
        diag_missed_wakeup(&d, err);
    if (!d.rc)
        diag_suspects(&d, err);
    if (!d.rc && s->format == QUERY_FMT_JSON)
        diag_json(&d, s->out);
    else if (!d.rc && query_view_format(s->format))
        d.rc = query_view_paths(s, d.ra, &d.anomaly, d.got ? d.rn : NULL, &d.normal, d.same, d.have_cpa ? &d.cpa : NULL,
                                err);
    else if (!d.rc && s->format == QUERY_FMT_CSV)
        print_csv(s, d.sus, d.nsus, d.cpa.end - d.cpa.begin);
    else if (!d.rc)
        print_text(s, &d.a, d.kind, d.got ? &d.base : NULL, d.base_trace, d.src.path, d.sus, d.nsus,
                   d.got ? &d.normal : NULL, &d.anomaly, &d.cpa, d.lives ? &d.lifa : NULL, d.lives ? &d.lifn : NULL,
                   d.have_nm ? &d.nm : NULL);
    int rc = d.rc;
    diag_free(&d);
    return rc;
}

/* check fix of node N | thread "NAME" [in trace "BEFORE"] after trace
 * "AFTER": paper/001 §Validation -- did the anomaly's wait shrink?  The
 * wait after the fix is the longest of the nodes like the anomaly node in
 * AFTER (else the thread's longest block there). */
int query_exec_check_fix(query_session *s, const query_stmt *st, query_error *err)
{
    if (st->against_all) /* in traces ... after traces ...: groups of runs (exec_groups.c) */
        return query_exec_check_fix_groups(s, st, err);
    uint32_t after_id;
    if (query_trace_id(s, &st->after, &after_id, err))
        return -1;
    db_reader *r = query_open_trace(s, &st->trace, err);
    if (!r)
        return -1;
    db_error de = {0};
    db_node before, after;
    int rc = anomaly_node(s, r, st, &before, err), got = 0;
    if (!rc) {
        query_cands m = {0};
        if (query_find_matches(r, &before, after_id, &m, &de))
            rc = query_fail(err, NULL, "%s", de.msg);
        /* the most similar nodes (best first), and of those the longest wait */
        query_cand cd;
        double best = 0;
        for (bool first = true; !rc && query_cands_next(&m, &cd) && (first || cd.score >= best - 0.05); first = false) {
            if (first)
                best = cd.score;
            query_match c;
            int ok = query_cand_similar(&cd) ? query_cand_node(r, &cd, &c, &de) : 0;
            if (ok < 0)
                rc = query_fail(err, NULL, "%s", de.msg);
            else if (ok && (!got || c.n.blocked > after.blocked)) {
                after = c.n;
                got = 1;
            }
        }
        query_cands_free(&m);
        if (!rc && !got && (got = query_longest_block(r, after_id, before.thread, &after, &de)) < 0)
            rc = query_fail(err, NULL, "%s", de.msg);
    }
    if (rc) {
        db_reader_close(r);
        return rc;
    }
    int64_t by = got ? (int64_t)before.blocked - (int64_t)after.blocked : 0;
    bool shrank = got && after.blocked < before.blocked;
    double ratio = got && before.blocked ? (double)after.blocked / (double)before.blocked : 1.0;
    FILE *f = s->out;
    if (s->format == QUERY_FMT_JSON) {
        fputs("{\"thread\":", f);
        query_json_str(f, before.thread, strlen(before.thread));
        fputs(",\"before\":", f);
        query_json_node(f, &before, -1);
        fputs(",\"after\":", f);
        if (got)
            query_json_node(f, &after, -1);
        else
            fputs("null", f);
        fprintf(f, ",\"shrank\":%s,\"by\":%" PRId64 ",\"ratio\":%.3f}\n", shrank ? "true" : "false", by, ratio);
    } else {
        char b[32], a[32], d[32];
        query_fmt_duration(b, sizeof b, before.blocked);
        query_fmt_duration(a, sizeof a, got ? after.blocked : 0);
        query_fmt_duration(d, sizeof d, (uint64_t)(by < 0 ? -by : by));
        if (!got)
            fprintf(f, "%s waited %s before the fix; trace \"%s\" has no such thread\n", before.thread, b,
                    st->after.name);
        else
            fprintf(f, "%s waited %s before the fix (node %" PRIu32 ") and %s after it (node %" PRIu32
                       " of \"%s\"): the wait %s by %s (%.0f%%)\n",
                    before.thread, b, before.id, a, after.id, st->after.name, shrank ? "shrank" : "did not shrink",
                    d, (shrank ? 1.0 - ratio : ratio - 1.0) * 100.0);
    }
    db_reader_close(r);
    return 0;
}
