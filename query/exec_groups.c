/* query/exec_groups.c -- `compare thread "NAME" in traces [where E1]
 * against traces [where E2]`: two groups of runs side by side.
 *
 * Each trace of a group gives the thread's worst step (the node it was
 * not running the longest, as `diagnose thread` picks it) and that step's
 * critical path (critpath.c); per (thread, state) -- by thread name: tids
 * differ between runs; running on another's request is the requester's --
 * each group's values over its runs are summarized (stats.c: median,
 * 5th-95th percentiles, MAD), and the first group's median is set against
 * the second group's distribution (a robust z-score; `outside` when above
 * its 95th percentile by more than 1% of the median step).  Rows most
 * outside first: what the first group's steps spend their time on that
 * the second's do not.  Fewer than 5 runs in the second group is said:
 * too few to judge a distribution.  --format svg draws a box per row, the
 * two groups side by side.
 *
 * `check fix of thread "NAME" in traces [where E1] after traces [where
 * E2]` is the same for paper/001's validation of a fix: the worst step's
 * wait (blocked before it) in each broken run against each fixed run, the
 * fixed runs' median set against the broken runs' distribution. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

#define GROUP_KEYS 256
#define GROUP_RUNS 512

typedef struct gkey {
    char thread[DB_NAME_MAX];
    int state;
} gkey;

typedef struct group {
    uint32_t *ids;
    size_t nids;
    size_t runs;           /* traces whose thread had a step */
    uint64_t *vals;        /* [GROUP_KEYS * GROUP_RUNS], key-major */
    uint64_t steps[GROUP_RUNS]; /* each run's step period */
} group;

typedef struct groups {
    query_session *s;
    const char *thread;
    gkey keys[GROUP_KEYS];
    size_t nkeys;
    group g[2];
} groups;

static long gkey_of(groups *G, const char *thread, int state)
{
    for (size_t i = 0; i < G->nkeys; i++)
        if (G->keys[i].state == state && strncmp(G->keys[i].thread, thread, DB_NAME_MAX) == 0)
            return (long)i;
    if (G->nkeys == GROUP_KEYS)
        return -1;
    memset(&G->keys[G->nkeys], 0, sizeof G->keys[G->nkeys]);
    memcpy(G->keys[G->nkeys].thread, thread, strnlen(thread, DB_NAME_MAX - 1));
    G->keys[G->nkeys].state = state;
    return (long)G->nkeys++;
}

struct by_id {
    uint32_t id;
    char name[256];
    bool found;
};

static int name_one(void *ctx, const db_trace_info *t)
{
    struct by_id *b = ctx;
    if (t->id == b->id) {
        memcpy(b->name, t->name, sizeof b->name);
        b->found = true;
    }
    return 0;
}

/* One run of group gi: trace id's worst step of the thread, its parts */
static int one_run(groups *G, int gi, uint32_t id, db_error *de)
{
    group *g = &G->g[gi];
    struct by_id b = {.id = id};
    if (db_list_traces(G->s->archive, name_one, &b, de))
        return -1;
    if (!b.found || g->runs == GROUP_RUNS)
        return 0;
    db_reader *r = db_reader_open(G->s->archive, b.name, de);
    if (!r)
        return -1;
    db_reader_interrupt(r, G->s->interrupt);
    db_node n;
    query_cp cp = {0};
    int got = query_worst_step(r, id, G->thread, &n, de);
    if (got == 1 && query_critical_path(r, &n, &cp, de))
        got = -1;
    if (got == 1) {
        size_t col = g->runs++;
        g->steps[col] = cp.end - cp.begin;
        for (size_t i = 0; i < cp.n; i++) {
            const query_cp_part *p = &cp.parts[i];
            const char *t = p->state == QUERY_CP_RUNNING && p->for_tid ? p->for_thread : p->thread;
            long k = gkey_of(G, t, p->state);
            if (k >= 0)
                g->vals[(size_t)k * GROUP_RUNS + col] += p->ns;
        }
        query_cp_free(&cp);
    }
    db_reader_close(r);
    return got < 0 ? -1 : 0;
}

typedef struct grow {
    size_t key;
    query_stats_summary a, b;
    query_stats_effect eff;
} grow;

static int by_z(const void *x, const void *y)
{
    const grow *a = x, *b = y;
    if (a->eff.z != b->eff.z)
        return a->eff.z < b->eff.z ? 1 : -1;
    return (a->key > b->key) - (a->key < b->key);
}

static void json_sum(FILE *f, const query_stats_summary *s)
{
    fprintf(f, "{\"runs\":%zu,\"median\":%.0f,\"p5\":%.0f,\"p95\":%.0f,\"mad\":%.0f}", s->n, s->median, s->p5, s->p95,
            s->mad);
}

static void cell_range(query_table *t, const query_stats_summary *s)
{
    char a[32], b[32];
    query_fmt_duration(a, sizeof a, (uint64_t)s->p5);
    query_fmt_duration(b, sizeof b, (uint64_t)s->p95);
    query_table_cell(t, "%s-%s", a, b);
}

/* A box per row: each group's 5th-95th percentiles as a bar, its median a
 * tick, on one linear axis (0 to the largest 95th percentile) */
static void svg(FILE *f, const groups *G, const grow *rows, size_t n, const query_stats_summary *sa,
                const query_stats_summary *sb)
{
    double hi = 1;
    for (size_t i = 0; i < n; i++)
        hi = rows[i].a.p95 > hi ? rows[i].a.p95 : rows[i].b.p95 > hi ? rows[i].b.p95 : hi;
    const int left = 220, width = 520, rowh = 34, top = 50;
    int h = top + (int)n * rowh + 30;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
            "font-size=\"12\">\n<text x=\"8\" y=\"18\" font-size=\"14\">compare thread ",
            left + width + 40, h);
    query_xml_text(f, G->thread);
    fprintf(f, ": %zu runs (dark) against %zu (light); the step's median %.1f ms against %.1f ms</text>\n",
            G->g[0].runs, G->g[1].runs, sa->median / 1e6, sb->median / 1e6);
    for (size_t i = 0; i < n; i++) {
        const gkey *k = &G->keys[rows[i].key];
        int y = top + (int)i * rowh;
        fprintf(f, "<text x=\"8\" y=\"%d\">", y + 14);
        query_xml_text(f, k->thread);
        fprintf(f, " %s%s</text>\n", query_cp_state_name(k->state), rows[i].eff.outside ? " *" : "");
        const query_stats_summary *s2[2] = {&rows[i].a, &rows[i].b};
        for (int g = 0; g < 2; g++) {
            double x0 = left + width * s2[g]->p5 / hi, x1 = left + width * s2[g]->p95 / hi;
            double xm = left + width * s2[g]->median / hi;
            int yy = y + 2 + g * 14;
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"10\" fill=\"%s\"><title>%s: median %.3f ms, "
                    "5-95%% %.3f-%.3f ms</title></rect>\n",
                    x0, yy, x1 - x0 < 1 ? 1 : x1 - x0, g ? "#9ecae1" : "#08519c", g ? "second group" : "first group",
                    s2[g]->median / 1e6, s2[g]->p5 / 1e6, s2[g]->p95 / 1e6);
            fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#d62728\" stroke-width=\"2\"/>\n",
                    xm, xm, yy - 1, yy + 11);
        }
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.1f ms</text>\n</svg>\n",
            left, h - 10, left + width, h - 10, hi / 1e6);
}

static void print(query_session *s, const groups *G, const grow *rows, size_t n, const query_stats_summary *sa,
                  const query_stats_summary *sb)
{
    FILE *f = s->out;
    if (s->format == QUERY_FMT_JSON) {
        fputs("{\"thread\":", f);
        query_json_str(f, G->thread, strlen(G->thread));
        fprintf(f, ",\"runs\":[%zu,%zu],\"too_few\":%s,\"step\":[", G->g[0].runs, G->g[1].runs,
                query_stats_too_few(G->g[1].runs) ? "true" : "false");
        json_sum(f, sa);
        fputc(',', f);
        json_sum(f, sb);
        fputs("],\"rows\":[", f);
        for (size_t i = 0; i < n; i++) {
            const gkey *k = &G->keys[rows[i].key];
            fputs(i ? ",{\"thread\":" : "{\"thread\":", f);
            query_json_str(f, k->thread, strnlen(k->thread, DB_NAME_MAX));
            fprintf(f, ",\"state\":\"%s\",\"a\":", query_cp_state_name(k->state));
            json_sum(f, &rows[i].a);
            fputs(",\"b\":", f);
            json_sum(f, &rows[i].b);
            fprintf(f, ",\"effect\":{\"z\":%.3f,\"excess\":%" PRIu64 ",\"outside\":%s}}", rows[i].eff.z,
                    rows[i].eff.excess, rows[i].eff.outside ? "true" : "false");
        }
        fputs("]}\n", f);
        return;
    }
    if (s->format == QUERY_FMT_SVG) {
        svg(f, G, rows, n, sa, sb);
        return;
    }
    if (s->format == QUERY_FMT_TABLE) {
        char ma[32], mb[32];
        query_fmt_duration(ma, sizeof ma, (uint64_t)sa->median);
        query_fmt_duration(mb, sizeof mb, (uint64_t)sb->median);
        fprintf(f, "%s's worst step: %zu runs, median %s, against %zu runs, median %s.\n", G->thread, G->g[0].runs,
                ma, G->g[1].runs, mb);
        if (query_stats_too_few(G->g[1].runs))
            fprintf(f, "Only %zu runs in the second group: too few to judge what they do (%d at least).\n",
                    G->g[1].runs, QUERY_STATS_MIN_STEPS);
    }
    static const char *const heads[] = {"thread", "state", "median", "5-95%", "against median", "5-95%",
                                        "z", "outside"};
    query_table t;
    query_table_init(&t, s->format, 8, heads);
    for (size_t i = 0; i < n; i++) {
        const gkey *k = &G->keys[rows[i].key];
        query_table_str(&t, k->thread);
        query_table_str(&t, query_cp_state_name(k->state));
        query_table_dur(&t, (uint64_t)rows[i].a.median, false);
        cell_range(&t, &rows[i].a);
        query_table_dur(&t, (uint64_t)rows[i].b.median, false);
        cell_range(&t, &rows[i].b);
        query_table_cell(&t, "%.1f", rows[i].eff.z);
        query_table_str(&t, rows[i].eff.outside ? "yes" : "no");
    }
    query_table_show(s, &t);
    query_table_free(&t);
}

int query_exec_compare_groups(query_session *s, const query_stmt *st, query_error *err)
{
    if (s->format == QUERY_FMT_DOT || s->format == QUERY_FMT_PERFETTO)
        return query_fail(err, &st->pos, "compare thread draws as svg, not %s", query_format_name(s->format));
    groups *G = calloc(1, sizeof *G);
    if (!G)
        return query_fail(err, NULL, "out of memory");
    G->s = s;
    G->thread = st->thread_name.name;
    db_error de = {0};
    int rc = 0;
    const query_expr *where[2] = {st->traces_where, st->against_where};
    const query_pos *pos[2] = {&st->traces_pos, &st->against_traces_pos};
    for (int gi = 0; gi < 2 && !rc; gi++) {
        if (query_traces_in(s->archive, NULL, where[gi], pos[gi], &G->g[gi].ids, &G->g[gi].nids, err))
            rc = -1;
        else if (!(G->g[gi].vals = calloc((size_t)GROUP_KEYS * GROUP_RUNS, sizeof *G->g[gi].vals)))
            rc = query_fail(err, NULL, "out of memory");
        for (size_t i = 0; !rc && i < G->g[gi].nids; i++)
            if (one_run(G, gi, G->g[gi].ids[i], &de))
                rc = query_fail(err, NULL, "%s", de.msg);
        if (!rc && !G->g[gi].runs)
            rc = query_fail(err, pos[gi], "no trace of that group has a thread \"%s\"", G->thread);
    }
    grow *rows = NULL;
    uint64_t *buf = NULL;
    if (!rc && (!(rows = calloc(G->nkeys ? G->nkeys : 1, sizeof *rows)) ||
                !(buf = malloc(GROUP_RUNS * sizeof *buf))))
        rc = query_fail(err, NULL, "out of memory");
    if (!rc) {
        query_stats_summary sa, sb;
        memcpy(buf, G->g[0].steps, G->g[0].runs * sizeof *buf);
        sa = query_stats_summarize(buf, G->g[0].runs);
        memcpy(buf, G->g[1].steps, G->g[1].runs * sizeof *buf);
        sb = query_stats_summarize(buf, G->g[1].runs);
        uint64_t floor = query_stats_floor_of_period((uint64_t)sa.median);
        for (size_t k = 0; k < G->nkeys; k++) {
            grow *r = &rows[k];
            r->key = k;
            memcpy(buf, G->g[0].vals + k * GROUP_RUNS, G->g[0].runs * sizeof *buf);
            r->a = query_stats_summarize(buf, G->g[0].runs);
            memcpy(buf, G->g[1].vals + k * GROUP_RUNS, G->g[1].runs * sizeof *buf);
            r->b = query_stats_summarize(buf, G->g[1].runs);
            r->eff = query_stats_effect_of(&r->b, (uint64_t)r->a.median, floor);
        }
        qsort(rows, G->nkeys, sizeof *rows, by_z);
        print(s, G, rows, G->nkeys, &sa, &sb);
    }
    free(rows);
    free(buf);
    for (int gi = 0; gi < 2; gi++) {
        free(G->g[gi].ids);
        free(G->g[gi].vals);
    }
    free(G);
    return rc;
}

/* ---- check fix over groups of runs ---- */

typedef struct fixrun {
    uint64_t blocked;
    db_node n;
    char trace[256];
} fixrun;

static int fix_runs(query_session *s, const char *thread, const uint32_t *ids, size_t nids, fixrun *out,
                    size_t *n, db_error *de)
{
    *n = 0;
    for (size_t i = 0; i < nids && *n < GROUP_RUNS; i++) {
        struct by_id b = {.id = ids[i]};
        if (db_list_traces(s->archive, name_one, &b, de))
            return -1;
        if (!b.found)
            continue;
        db_reader *r = db_reader_open(s->archive, b.name, de);
        if (!r)
            return -1;
        db_reader_interrupt(r, s->interrupt);
        int got = query_worst_step(r, ids[i], thread, &out[*n].n, de);
        db_reader_close(r);
        if (got < 0)
            return -1;
        if (got) {
            out[*n].blocked = out[*n].n.blocked;
            memcpy(out[*n].trace, b.name, sizeof out[*n].trace);
            (*n)++;
        }
    }
    return 0;
}

/* the run whose wait is the group's median (the lower of two) */
static const fixrun *median_run(const fixrun *v, size_t n, uint64_t *buf)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = v[i].blocked;
    query_stats_summary m = query_stats_summarize(buf, n);
    const fixrun *best = &v[0];
    for (size_t i = 1; i < n; i++)
        if ((double)v[i].blocked <= m.median &&
            ((double)best->blocked > m.median || v[i].blocked > best->blocked))
            best = &v[i];
    return best;
}

int query_exec_check_fix_groups(query_session *s, const query_stmt *st, query_error *err)
{
    const query_expr *where[2] = {st->traces_where, st->against_where};
    const query_pos *pos[2] = {&st->traces_pos, &st->against_traces_pos};
    uint32_t *ids[2] = {NULL, NULL};
    size_t nids[2] = {0, 0}, n[2] = {0, 0};
    fixrun *runs[2] = {NULL, NULL};
    uint64_t *buf = malloc(GROUP_RUNS * sizeof *buf);
    db_error de = {0};
    int rc = buf ? 0 : query_fail(err, NULL, "out of memory");
    for (int g = 0; g < 2 && !rc; g++) {
        if (query_traces_in(s->archive, NULL, where[g], pos[g], &ids[g], &nids[g], err))
            rc = -1;
        else if (!(runs[g] = calloc(GROUP_RUNS, sizeof *runs[g])))
            rc = query_fail(err, NULL, "out of memory");
        else if (fix_runs(s, st->thread_name.name, ids[g], nids[g], runs[g], &n[g], &de))
            rc = query_fail(err, NULL, "%s", de.msg);
        else if (!n[g])
            rc = query_fail(err, pos[g], "no trace of that group has a thread \"%s\"", st->thread_name.name);
    }
    if (!rc) {
        query_stats_summary sb, sa;
        for (size_t i = 0; i < n[0]; i++)
            buf[i] = runs[0][i].blocked;
        sb = query_stats_summarize(buf, n[0]);
        for (size_t i = 0; i < n[1]; i++)
            buf[i] = runs[1][i].blocked;
        sa = query_stats_summarize(buf, n[1]);
        const fixrun *mb = median_run(runs[0], n[0], buf), *ma = median_run(runs[1], n[1], buf);
        uint64_t floor = query_stats_floor_of_period((uint64_t)sb.median);
        double z = (sa.median - sb.median) / query_stats_scale(&sb, floor);
        bool few = query_stats_too_few(n[0]) || query_stats_too_few(n[1]);
        /* fixed: the typical fixed run waits less than nearly every broken one */
        bool shrank = few ? sa.median < sb.median : sa.median + (double)floor < sb.p5;
        int64_t by = (int64_t)sb.median - (int64_t)sa.median;
        double ratio = sb.median > 0 ? sa.median / sb.median : 1.0;
        FILE *f = s->out;
        if (s->format == QUERY_FMT_JSON) {
            fputs("{\"thread\":", f);
            query_json_str(f, st->thread_name.name, strlen(st->thread_name.name));
            fputs(",\"before\":", f);
            query_json_node(f, &mb->n, -1);
            fputs(",\"after\":", f);
            query_json_node(f, &ma->n, -1);
            fprintf(f, ",\"shrank\":%s,\"by\":%" PRId64 ",\"ratio\":%.3f,\"before_runs\":", shrank ? "true" : "false",
                    by, ratio);
            json_sum(f, &sb);
            fputs(",\"after_runs\":", f);
            json_sum(f, &sa);
            fprintf(f, ",\"effect\":{\"z\":%.3f},\"too_few\":%s}\n", z, few ? "true" : "false");
        } else {
            char b[32], a[32], d[32], b5[32], b95[32], a5[32], a95[32];
            query_fmt_duration(b, sizeof b, (uint64_t)sb.median);
            query_fmt_duration(a, sizeof a, (uint64_t)sa.median);
            query_fmt_duration(d, sizeof d, (uint64_t)(by < 0 ? -by : by));
            query_fmt_duration(b5, sizeof b5, (uint64_t)sb.p5);
            query_fmt_duration(b95, sizeof b95, (uint64_t)sb.p95);
            query_fmt_duration(a5, sizeof a5, (uint64_t)sa.p5);
            query_fmt_duration(a95, sizeof a95, (uint64_t)sa.p95);
            fprintf(f,
                    "%s waited a median %s (5-95%% %s-%s) over %zu runs before the fix and %s (%s-%s) over %zu "
                    "after it: the wait %s by %s (%.0f%%), robust z %.1f.\n",
                    st->thread_name.name, b, b5, b95, n[0], a, a5, a95, n[1],
                    shrank ? "shrank" : "did not shrink", d, (by >= 0 ? 1.0 - ratio : ratio - 1.0) * 100.0, z);
            if (few)
                fprintf(f, "Too few runs to judge a distribution (%d in each group at least): the medians alone.\n",
                        QUERY_STATS_MIN_STEPS);
            else if (!shrank && by > 0)
                fputs("The typical fixed run is not below the broken runs' 5th percentile: the fix is within "
                      "what broken runs do.\n", f);
            fprintf(f, "Median runs: node %" PRIu32 " of \"%s\" before, node %" PRIu32 " of \"%s\" after.\n", mb->n.id,
                    mb->trace, ma->n.id, ma->trace);
        }
    }
    for (int g = 0; g < 2; g++) {
        free(ids[g]);
        free(runs[g]);
    }
    free(buf);
    return rc;
}
