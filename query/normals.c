/* query/normals.c -- the anomaly's step against every normal step like it,
 * not only the best one.
 *
 * One normal counterpart is a sample of one: it may have been lucky, and a
 * part the slow step shares with every normal step (a frame loop's sleep)
 * looks like a cause whenever the one counterpart had less of it.  Across
 * a list of traces (`against traces [where E]`) the steps like the anomaly
 * (paper/004 §Node Comparison: the signature index, the similar ones, the
 * most similar first, at most QUERY_NORMALS_MAX) each get their critical
 * path (critpath.c); per (thread, state) -- a thread by name, since tids
 * differ between runs; running on another's request is the requester's,
 * as attrib.c ranks it -- the anomaly's ns is set against their
 * distribution (stats.c).  Paths, not only totals: the threads that took
 * 1% of the anomaly's period and are on no normal critical path, the
 * threads that took 1% of every normal one's and are not on the
 * anomaly's, a wait ended by its own timer where no normal one was, and a
 * waker that woke no normal step. */
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

#define NORMALS_KEYS 512
#define NORMALS_SHARE 100 /* a thread is on a critical path with 1/100 of its period */

typedef struct key {
    char thread[DB_NAME_MAX];
    int state;
} key;

typedef struct acc {
    key *keys;
    size_t nkeys;
    uint64_t *anomaly;       /* [NORMALS_KEYS] */
    uint64_t *normal;        /* [NORMALS_KEYS * QUERY_NORMALS_MAX], key-major */
    uint32_t *on, *any;      /* per key of state -1 (a thread): normal paths it is on with
                                1% of the period, with any time at all */
    size_t steps;
} acc;

static const char *part_thread(const query_cp_part *p, int *state)
{
    *state = p->state;
    return p->state == QUERY_CP_RUNNING && p->for_tid ? p->for_thread : p->thread;
}

static long key_of(acc *c, const char *thread, int state)
{
    for (size_t i = 0; i < c->nkeys; i++)
        if (c->keys[i].state == state && strncmp(c->keys[i].thread, thread, DB_NAME_MAX) == 0)
            return (long)i;
    if (c->nkeys == NORMALS_KEYS)
        return -1;
    key *k = &c->keys[c->nkeys];
    memset(k, 0, sizeof *k);
    memcpy(k->thread, thread, strnlen(thread, DB_NAME_MAX - 1));
    k->state = state;
    return (long)c->nkeys++;
}

/* Adds ns to (thread, state) and to the thread's whole share (state -1),
 * in column `col` of the normal steps, or in the anomaly's (col < 0). */
static void tally(acc *c, const char *thread, int state, uint64_t ns, long col)
{
    long ks[2] = {key_of(c, thread, state), key_of(c, thread, -1)};
    for (int j = 0; j < 2; j++) {
        if (ks[j] < 0)
            continue;
        if (col < 0)
            c->anomaly[ks[j]] += ns;
        else
            c->normal[(size_t)ks[j] * QUERY_NORMALS_MAX + (size_t)col] += ns;
    }
}

static bool on_path(uint64_t ns, uint64_t period) { return ns && ns * NORMALS_SHARE >= period; }

/* cp as a step of the sample: its parts by (thread, state) in the order
 * they come (running on another's request is the requester's) */
static int sample_step(query_pool *p, const query_cp *cp, const query_pool_step *head)
{
    query_pool_part *parts = malloc((cp->n ? cp->n : 1) * sizeof *parts);
    if (!parts)
        return -1;
    for (size_t i = 0; i < cp->n; i++) {
        int state;
        const char *t = part_thread(&cp->parts[i], &state);
        memset(parts[i].thread, 0, DB_NAME_MAX);
        memcpy(parts[i].thread, t, strnlen(t, DB_NAME_MAX - 1));
        parts[i].state = state;
        parts[i].ns = cp->parts[i].ns;
    }
    query_pool_step st = *head;
    st.period = cp->end - cp->begin;
    st.timeout = cp->timeout;
    memcpy(st.waker, cp->waker, sizeof st.waker);
    int rc = query_pool_add(p, &st, parts, cp->n, NULL);
    free(parts);
    return rc;
}

static int step(db_reader *r, const query_cand *cand, const char *trace, query_pool *p, db_error *de)
{
    db_node n;
    int got = db_get_node(r, cand->node, &n, de);
    if (got <= 0)
        return got;
    query_cp cp;
    if (query_critical_path(r, &n, &cp, de))
        return -1;
    query_pool_step head = {.node = cand->node, .score = cand->score, .contained = cand->contained};
    memcpy(head.trace, trace, strnlen(trace, sizeof head.trace - 1));
    int rc = sample_step(p, &cp, &head);
    query_cp_free(&cp);
    return rc ? db_fail_oom(de) : 1;
}

struct at {
    query_cand c;
    size_t at; /* its rank among the similar ones */
};

static int by_trace(const void *x, const void *y)
{
    const struct at *a = x, *b = y;
    if (a->c.trace != b->c.trace)
        return a->c.trace < b->c.trace ? -1 : 1;
    return (a->c.node > b->c.node) - (a->c.node < b->c.node);
}

/* The similar candidates, best first, at most QUERY_NORMALS_MAX: not the
 * anomaly, and of its own trace only the steps that ended before it.
 * Group by group of equal scores, and no further than the first groups
 * that hold QUERY_STATS_MIN_STEPS: the steps most like it (the same
 * normal form, when there are enough of those), not a frame loop's sleep
 * that shares half its events (pool.c's query_pool_choose chooses so
 * again from a fleet's). */
static size_t similar(db_reader *r, const db_node *a, const query_source *src, query_cands *m, struct at *v,
                      db_error *de, int *rc)
{
    uint32_t own = src->scan ? 0 : db_reader_trace(r)->id;
    db_reader *cr = src->scan ? src->scan : r;
    size_t n = 0;
    query_cand c;
    double group = -1;
    while (n < QUERY_NORMALS_MAX && query_cands_next(m, &c) && query_cand_similar(&c)) {
        if (c.score != group && n >= QUERY_STATS_MIN_STEPS)
            break; /* enough of the ones more alike */
        group = c.score;
        if (own && c.trace == own) {
            db_node x;
            int got = db_get_node_of(cr, c.trace, c.node, &x, de);
            if (got < 0) {
                *rc = -1;
                return 0;
            }
            if (!got || x.end > a->begin)
                continue;
        }
        v[n] = (struct at){c, n};
        n++;
    }
    return n;
}

/* The archive's normal steps like the anomaly, each its critical path,
 * into *p best first. */
static int sample(db_reader *ra, const db_node *a, const query_source *src, query_cands *m, query_pool *p,
                  db_error *de)
{
    int rc = 0;
    struct at *v = malloc(QUERY_NORMALS_MAX * sizeof *v);
    size_t *order = malloc(QUERY_NORMALS_MAX * sizeof *order);
    query_pool got = {0};
    if (!v || !order)
        rc = db_fail_oom(de);
    size_t nv = rc ? 0 : similar(ra, a, src, m, v, de, &rc);
    /* trace by trace: one reader open at a time */
    qsort(v, nv, sizeof *v, by_trace);
    for (size_t i = 0; !rc && i < nv;) {
        size_t j = i;
        while (j < nv && v[j].c.trace == v[i].c.trace)
            j++;
        char name[256];
        db_reader *r = NULL;
        bool own = !src->scan && v[i].c.trace == db_reader_trace(ra)->id;
        int found = own ? 1 : query_source_trace_name(src, ra, v[i].c.trace, name, sizeof name, de);
        if (own)
            snprintf(name, sizeof name, "%s", db_reader_trace(ra)->name);
        if (found < 0 || (found && !own && !(r = db_reader_open(src->archive, name, de))))
            rc = -1;
        for (size_t k = i; !rc && found && k < j; k++) {
            size_t before = got.nsteps;
            int s = step(own ? ra : r, &v[k].c, name, &got, de);
            if (s < 0)
                rc = -1;
            else if (got.nsteps > before)
                order[before] = v[k].at;
        }
        if (r)
            db_reader_close(r);
        i = j;
    }
    /* back in their rank */
    for (size_t want = 0; !rc && want < nv; want++)
        for (size_t k = 0; k < got.nsteps; k++)
            if (order[k] == want && query_pool_add(p, &got.steps[k], got.parts + got.steps[k].first,
                                                   got.steps[k].n, NULL))
                rc = db_fail_oom(de);
    query_pool_free(&got);
    free(v);
    free(order);
    return rc;
}

/* The statistics of the anomaly's critical path against the sample's
 * steps p->steps[which[0 .. n)], per (thread, state) key, into out. */
static int judge(acc *c, const query_cp *cpa, const query_pool *p, const size_t *which, size_t n,
                 query_normals *out, db_error *de)
{
    for (size_t i = 0; i < cpa->n; i++) {
        int state;
        const char *t = part_thread(&cpa->parts[i], &state);
        tally(c, t, state, cpa->parts[i].ns, -1);
    }
    uint64_t *traces = malloc((n ? n : 1) * sizeof *traces);
    if (!traces)
        return db_fail_oom(de);
    for (size_t i = 0; i < n; i++) {
        const query_pool_step *s = &p->steps[which[i]];
        size_t col = c->steps++;
        for (size_t j = 0; j < s->n; j++) {
            const query_pool_part *q = &p->parts[s->first + j];
            tally(c, q->thread, q->state, q->ns, (long)col);
        }
        for (size_t k = 0; k < c->nkeys; k++)
            if (c->keys[k].state == -1 && c->normal[k * QUERY_NORMALS_MAX + col]) {
                c->any[k]++;
                c->on[k] += on_path(c->normal[k * QUERY_NORMALS_MAX + col], s->period);
            }
        out->timeouts += s->timeout;
        if (out->waker[0] && strncmp(s->waker, out->waker, DB_NAME_MAX) == 0)
            out->waker_seen++;
        size_t t = 0;
        while (t < out->traces && traces[t] != s->trace_id)
            t++;
        if (t == out->traces)
            traces[out->traces++] = s->trace_id;
        if (query_pool_add(&out->sample, s, p->parts + s->first, s->n, query_pool_archive(p, s))) {
            free(traces);
            return db_fail_oom(de);
        }
    }
    free(traces);
    out->steps = c->steps;
    if (!c->steps)
        return 0;
    /* the statistics, per (thread, state) key */
    int rc = 0;
    out->keys = calloc(c->nkeys ? c->nkeys : 1, sizeof *out->keys);
    uint64_t *row = malloc(c->nkeys * c->steps * sizeof *row + 1);
    query_stats_summary *sum = malloc((c->nkeys + 1) * sizeof *sum);
    query_stats_effect *eff = malloc((c->nkeys + 1) * sizeof *eff);
    size_t *order = malloc((c->nkeys + 1) * sizeof *order);
    if (!out->keys || !row || !sum || !eff || !order)
        rc = db_fail_oom(de);
    if (!rc) {
        for (size_t k = 0; k < c->nkeys; k++)
            memcpy(row + k * c->steps, c->normal + k * QUERY_NORMALS_MAX, c->steps * sizeof *row);
        uint64_t period = cpa->end - cpa->begin;
        query_stats_rank(c->anomaly, row, c->nkeys, c->steps, query_stats_floor_of_period(period), sum, eff, order);
        for (size_t i = 0; i < c->nkeys; i++) {
            size_t k = order[i];
            query_normal_key *o = &out->keys[out->nkeys++];
            memcpy(o->thread, c->keys[k].thread, DB_NAME_MAX);
            o->state = c->keys[k].state;
            o->anomaly = c->anomaly[k];
            o->sum = sum[k];
            o->eff = eff[k];
            if (o->state != -1)
                continue;
            /* paths: on the anomaly's (1% of it) and in no normal one at
             * all; on every normal one (1%) and not in the anomaly's */
            if (on_path(c->anomaly[k], period) && !c->any[k] && out->nfresh < QUERY_NORMALS_NAMES)
                memcpy(out->fresh[out->nfresh++], c->keys[k].thread, DB_NAME_MAX);
            if (!c->anomaly[k] && c->on[k] == c->steps && out->nmissing < QUERY_NORMALS_NAMES)
                memcpy(out->missing[out->nmissing++], c->keys[k].thread, DB_NAME_MAX);
        }
    }
    free(row);
    free(sum);
    free(eff);
    free(order);
    return rc;
}

int query_normals_collect(db_reader *ra, const db_node *a, const query_cp *cpa, const query_source *src,
                          query_cands *m, const query_pool *given, query_normals *out, db_error *de)
{
    memset(out, 0, sizeof *out);
    memcpy(out->waker, cpa->waker, sizeof out->waker);
    out->timeout = cpa->timeout;
    acc c = {0};
    query_pool mine = {0};
    const query_pool *p = given ? given : &mine;
    c.keys = calloc(NORMALS_KEYS, sizeof *c.keys);
    c.anomaly = calloc(NORMALS_KEYS, sizeof *c.anomaly);
    c.normal = calloc((size_t)NORMALS_KEYS * QUERY_NORMALS_MAX, sizeof *c.normal);
    c.on = calloc(NORMALS_KEYS, sizeof *c.on);
    c.any = calloc(NORMALS_KEYS, sizeof *c.any);
    int rc = 0;
    if (!c.keys || !c.anomaly || !c.normal || !c.on || !c.any)
        rc = db_fail_oom(de);
    if (!rc && !given)
        rc = sample(ra, a, src, m, &mine, de);
    size_t *which = rc ? NULL : malloc((p->nsteps ? p->nsteps : 1) * sizeof *which);
    size_t n = 0;
    if (!rc && (!which || (n = query_pool_choose(p, which)) == SIZE_MAX))
        rc = db_fail_oom(de);
    if (!rc)
        rc = judge(&c, cpa, p, which, n, out, de);
    free(which);
    query_pool_free(&mine);
    free(c.keys);
    free(c.anomaly);
    free(c.normal);
    free(c.on);
    free(c.any);
    if (rc)
        query_normals_free(out);
    return rc ? -1 : 0;
}

const query_normal_key *query_normals_key(const query_normals *n, const char *thread, int state)
{
    for (size_t i = 0; i < n->nkeys; i++)
        if (n->keys[i].state == state && strncmp(n->keys[i].thread, thread, DB_NAME_MAX) == 0)
            return &n->keys[i];
    return NULL;
}

void query_normals_free(query_normals *n)
{
    query_pool_free(&n->sample);
    free(n->keys);
    n->keys = NULL;
    n->nkeys = 0;
}

/* Each attributed suspect's (thread, state) against the normal steps: a
 * thread on no normal critical path has all zeros there.  sort: the
 * annotated ones first, most outside (robust z) first, the rest after in
 * their order. */
void query_normals_rank(const query_normals *n, query_suspect *sus, size_t nsus, uint64_t period, bool sort)
{
    if (query_stats_too_few(n->steps))
        return;
    uint64_t floor = query_stats_floor_of_period(period);
    for (size_t i = 0; i < nsus; i++) {
        query_suspect *s = &sus[i];
        if (!s->attributed || s->have_normal)
            continue;
        const query_normal_key *k = query_normals_key(n, s->node.thread, s->state);
        uint64_t zero = 0;
        s->normal = k ? k->sum : query_stats_summarize(&zero, 1);
        s->normal.n = n->steps;
        s->effect = query_stats_effect_of(&s->normal, k ? k->anomaly : s->ns, floor);
        s->have_normal = true;
        char md[32], lo[32], hi[32];
        query_fmt_duration(md, sizeof md, (uint64_t)s->normal.median);
        query_fmt_duration(lo, sizeof lo, (uint64_t)s->normal.p5);
        query_fmt_duration(hi, sizeof hi, (uint64_t)s->normal.p95);
        size_t len = strlen(s->evidence);
        snprintf(s->evidence + len, sizeof s->evidence - len,
                 "; %s the %zu normal steps: median %s, 5-95%% %s-%s, robust z %.1f",
                 s->effect.outside ? "outside" : "within", n->steps, md, lo, hi, s->effect.z);
    }
    if (!sort)
        return;
    for (size_t i = 1; i < nsus; i++) /* stable: insertion */
        for (size_t j = i; j > 0; j--) {
            query_suspect *x = &sus[j - 1], *y = &sus[j];
            bool before = y->have_normal && (!x->have_normal || y->effect.z > x->effect.z);
            if (!before)
                break;
            query_suspect t = *x;
            *x = *y;
            *y = t;
        }
}

static void json_names(FILE *f, char (*v)[DB_NAME_MAX], size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(',', f);
        query_json_str(f, v[i], strnlen(v[i], DB_NAME_MAX));
    }
    fputc(']', f);
}

/* the steps judged against, for a fleet to pool (argusq.fleet): also
 * when they are too few here, as they may not be in the fleet */
static void json_sample(FILE *f, const query_normals *n)
{
    fputs(",\"normal_sample\":", f);
    if (!n) {
        fputs("null", f);
        return;
    }
    query_pool_json(f, &n->sample, NULL, n->sample.nsteps);
}

void query_normals_json(FILE *f, const query_normals *n)
{
    fprintf(f, ",\"normal_steps\":%zu,\"normal_traces\":%zu,\"outside_paths\":", n ? n->steps : 0,
            n ? n->traces : 0);
    if (!n || query_stats_too_few(n->steps)) {
        fputs("null", f);
        json_sample(f, n);
        return;
    }
    fputs("{\"new_threads\":", f);
    json_names(f, (char(*)[DB_NAME_MAX])n->fresh, n->nfresh);
    fputs(",\"missing_threads\":", f);
    json_names(f, (char(*)[DB_NAME_MAX])n->missing, n->nmissing);
    fprintf(f, ",\"timeout\":%s,\"normal_timeouts\":%zu,\"waker\":", n->timeout ? "true" : "false", n->timeouts);
    if (n->waker[0])
        query_json_str(f, n->waker, strnlen(n->waker, DB_NAME_MAX));
    else
        fputs("null", f);
    fprintf(f, ",\"waker_in_normal\":%zu}", n->waker_seen);
    json_sample(f, n);
}

static void text_names(FILE *f, const char (*v)[DB_NAME_MAX], size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%.*s", i ? ", " : "", DB_NAME_MAX, v[i]);
}

void query_normals_text(FILE *f, const query_normals *n)
{
    if (query_stats_too_few(n->steps)) {
        fprintf(f, "Only %zu normal step%s like it in those traces: too few to judge what normal runs do (%d at "
                   "least); compared with the best one alone.\n",
                n->steps, n->steps == 1 ? "" : "s", QUERY_STATS_MIN_STEPS);
        return;
    }
    fprintf(f, "Against %zu normal steps like it (in %zu trace%s):", n->steps, n->traces, n->traces == 1 ? "" : "s");
    bool any = false;
    if (n->nfresh) {
        fputs(" on no normal critical path: ", f);
        text_names(f, n->fresh, n->nfresh);
        any = true;
    }
    if (n->nmissing) {
        fprintf(f, "%s on every normal one but not this: ", any ? ";" : "");
        text_names(f, n->missing, n->nmissing);
        any = true;
    }
    if (n->timeout && n->timeouts == 0) {
        fprintf(f, "%s its wait ended by its own timer, no normal one's did", any ? ";" : "");
        any = true;
    } else if (n->waker[0] && !n->waker_seen) {
        fprintf(f, "%s %.*s woke it, which woke no normal one", any ? ";" : "", DB_NAME_MAX, n->waker);
        any = true;
    }
    fputs(any ? ".\n" : " its path goes through the threads theirs do.\n", f);
}
