/* query/exec_compare.c -- `match node`, `compare node A with node B`, and
 * `compare path (SLICE) with (SLICE)` (paper/004 §Node Comparison, §Path
 * Comparison). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

#define MATCH_MAX 20 /* rows without a limit */
#define MATCH_LIMIT_MAX 100000

/* A node of the reader's trace named by the statement, or an error at its
 * position. */
static int get_node(db_reader *r, uint64_t id, const query_pos *pos, db_node *n, query_error *err)
{
    db_error de = {0};
    int got = id > UINT32_MAX ? 0 : db_get_node(r, (uint32_t)id, n, &de);
    if (got < 0)
        return query_fail(err, pos, "%s", de.msg);
    if (got == 0)
        return query_fail(err, pos, "no node %" PRIu64 " in trace \"%s\"", id, db_reader_trace(r)->name);
    return 0;
}

static void json_trace_name(FILE *f, const query_source *src, db_reader *r, uint32_t trace)
{
    char name[256];
    db_error de;
    if (query_source_trace_name(src, r, trace, name, sizeof name, &de) != 1)
        snprintf(name, sizeof name, "?");
    query_json_str(f, name, strlen(name));
}

/* match node N [in trace "T" | in traces [where E]] [in archive "P"]: N is
 * a node of the session's trace; the counterparts come from T, from the
 * traces that satisfy E, or from every trace of the archive -- the
 * session's, or P. */
int query_exec_match(query_session *s, const query_stmt *st, query_error *err)
{
    if (st->has_limit && st->limit > MATCH_LIMIT_MAX)
        return query_fail(err, NULL, "match shows at most %d nodes (limit %d)", MATCH_LIMIT_MAX, MATCH_LIMIT_MAX);
    query_source src;
    if (query_source_open(s, st, &st->trace, true, &src, err))
        return -1;
    db_reader *r = query_open_trace(s, NULL, err);
    if (!r) {
        query_source_close(s, &src);
        return -1;
    }
    db_node n;
    query_cands c = {0};
    size_t want = st->has_limit ? (size_t)st->limit : MATCH_MAX;
    query_match *m = malloc((want ? want : 1) * sizeof *m);
    size_t k = 0;
    db_error de = {0};
    db_reader *scan = src.scan ? src.scan : r;
    int rc = m ? get_node(r, st->node, &st->node_pos, &n, err) : query_fail(err, NULL, "out of memory");
    if (!rc && query_find_matches_in(r, &n, src.scan, src.ids, src.nids, &c, &de))
        rc = query_fail(err, NULL, "%s", de.msg);
    /* only the nodes shown are read */
    query_cand cd;
    while (!rc && k < want && query_cands_next(&c, &cd)) {
        int got = query_cand_node(scan, &cd, &m[k], &de);
        if (got < 0)
            rc = query_fail(err, NULL, "%s", de.msg);
        k += got == 1;
    }
    if (!rc) {
        if (s->format == QUERY_FMT_JSON) {
            fputs("{\"nodes\":[", s->out);
            for (size_t i = 0; i < k; i++) {
                fputs(i ? "," : "", s->out);
                query_json_node_open(s->out, &m[i].n);
                /* score_exact: the score to the last bit, for merging the
                 * answers of several archives in their order (argusq.fleet) */
                fprintf(s->out, ",\"score\":%.3f,\"score_exact\":%.17g,\"contained\":%s,\"trace\":", m[i].score,
                        m[i].score, m[i].contained ? "true" : "false");
                json_trace_name(s->out, &src, r, m[i].trace);
                if (src.path) {
                    fputs(",\"archive\":", s->out);
                    query_json_str(s->out, src.path, strlen(src.path));
                }
                fputc('}', s->out);
            }
            /* candidates: how many there are (the rows are the best `limit`) */
            fprintf(s->out, "],\"candidates\":%zu}\n", c.len);
        } else {
            static const char *const heads[] = {"score", "trace", "node", "thread", "begin", "duration",
                                                "blocked", "events", "archive"};
            query_table t;
            query_table_init(&t, s->format, src.path ? 9 : 8, heads);
            for (size_t i = 0; i < k; i++) {
                char name[256];
                if (query_source_trace_name(&src, r, m[i].trace, name, sizeof name, &de) != 1)
                    snprintf(name, sizeof name, "?");
                query_table_cell(&t, "%.2f%s", m[i].score, m[i].contained && !t.csv ? "*" : "");
                query_table_str(&t, name);
                query_table_u64(&t, m[i].n.id);
                query_table_str(&t, m[i].n.thread);
                query_table_ts(&t, m[i].n.begin);
                query_table_dur(&t, m[i].n.end - m[i].n.begin, false);
                query_table_dur(&t, m[i].n.blocked, true);
                query_table_u64(&t, m[i].n.events);
                if (src.path)
                    query_table_str(&t, src.path);
            }
            query_table_show(s, &t);
            query_table_free(&t);
            if (s->format == QUERY_FMT_TABLE)
                fprintf(s->out, "%zu nodes like node %" PRIu32 " (%s)%s%s\n", c.len, n.id, n.thread,
                        k < c.len ? (want == MATCH_MAX && !st->has_limit ? ", the best 20 shown (limit K for more)"
                                                                          : ", the best shown")
                                  : "",
                        k ? "; * = one normal form holds the other" : "");
        }
    }
    query_cands_free(&c);
    free(m);
    db_reader_close(r);
    query_source_close(s, &src);
    return rc;
}

/* ---- compare node A with node B ---- */

#define RET_MAX 8

typedef struct syscall_rets {
    char name[32];
    int64_t v[RET_MAX];
    int n;
} syscall_rets;

typedef struct rets {
    syscall_rets s[32];
    int n;
} rets;

/* paper/004 differential attributes: the return values of its syscalls */
static int collect_ret(void *ctx, const db_event *ev)
{
    rets *r = ctx;
    const char *name;
    size_t len;
    if (ev->type != DB_EV_SYSCALL || ev->phase != DB_PH_END || !db_event_attr(ev, "name", &name, &len))
        return 0;
    int i = 0;
    while (i < r->n && (strlen(r->s[i].name) != len || memcmp(r->s[i].name, name, len) != 0))
        i++;
    if (i == r->n) {
        if (r->n == 32)
            return 0;
        snprintf(r->s[r->n++].name, sizeof r->s[0].name, "%.*s", (int)len, name);
    }
    syscall_rets *sr = &r->s[i];
    for (int k = 0; k < sr->n; k++)
        if (sr->v[k] == ev->val)
            return 0;
    if (sr->n < RET_MAX)
        sr->v[sr->n++] = ev->val;
    return 0;
}

static void json_rets(FILE *f, const syscall_rets *s)
{
    fputc('[', f);
    for (int i = 0; s && i < s->n; i++)
        fprintf(f, "%s%" PRId64, i ? "," : "", s->v[i]);
    fputc(']', f);
}

static const syscall_rets *find_rets(const rets *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->s[i].name, name) == 0)
            return &r->s[i];
    return NULL;
}

/* The normal forms side by side: which events are in one node only. */
static void json_norm_list(FILE *f, db_reader *r, const db_sig *x, const db_sig *y, bool in_y)
{
    fputc('[', f);
    int k = 0;
    for (uint32_t i = 0; i < x->n; i++) {
        bool found = false;
        for (uint32_t j = 0; j < y->n && !found; j++)
            found = x->h[i] == y->h[j];
        if (found != in_y)
            continue;
        char text[256];
        db_error de;
        if (db_norm_text(r, x->h[i], text, sizeof text, &de) != 1)
            snprintf(text, sizeof text, "#%08x", x->h[i]);
        fputs(k++ ? "," : "", f);
        query_json_str(f, text, strlen(text));
    }
    fputc(']', f);
}

static void table_norm_list(FILE *f, db_reader *r, const char *title, const db_sig *x, const db_sig *y)
{
    fprintf(f, "%s:", title);
    int k = 0;
    for (uint32_t i = 0; i < x->n; i++) {
        bool found = false;
        for (uint32_t j = 0; j < y->n && !found; j++)
            found = x->h[i] == y->h[j];
        if (found)
            continue;
        char text[256];
        db_error de;
        if (db_norm_text(r, x->h[i], text, sizeof text, &de) != 1)
            snprintf(text, sizeof text, "#%08x", x->h[i]);
        fprintf(f, "%s %s", k++ ? "," : "", text);
    }
    fputs(k ? "\n" : " nothing\n", f);
}

/* The two signatures as they compare: syscall numbers of a trace whose
 * machine is not known read with the other's table (sysforms.c). */
static int align(db_reader *ra, db_sig *sa, db_reader *rb, db_sig *sb, db_error *de)
{
    const base_arch *ma, *mb;
    if (query_trace_arch(ra, db_reader_trace(ra)->id, &ma, de) || query_trace_arch(rb, db_reader_trace(rb)->id, &mb, de))
        return -1;
    query_sysforms f = {0};
    query_sysforms_align(&f, sa, ma, sb, mb);
    query_sysforms_free(&f);
    return 0;
}

static void print_compare(query_session *s, db_reader *ra, const db_node *a, const db_node *b, const db_sig *sa,
                          const db_sig *sb, const rets *xa, const rets *xb)
{
    bool contained;
    double score = graph_similarity(sa->h, sa->n, sb->h, sb->n, &contained);
    FILE *f = s->out;
    if (s->format == QUERY_FMT_JSON) {
        fputs("{\"a\":", f);
        query_json_node(f, a, -1);
        fputs(",\"b\":", f);
        query_json_node(f, b, -1);
        fprintf(f, ",\"score\":%.3f,\"contained\":%s,\"common\":", score, contained ? "true" : "false");
        json_norm_list(f, ra, sa, sb, true);
        fputs(",\"only_a\":", f);
        json_norm_list(f, ra, sa, sb, false);
        fputs(",\"only_b\":", f);
        json_norm_list(f, ra, sb, sa, false);
        fprintf(f,
                ",\"blocked\":{\"a\":%" PRIu64 ",\"b\":%" PRIu64 ",\"delta\":%" PRId64 "}"
                ",\"duration\":{\"a\":%" PRIu64 ",\"b\":%" PRIu64 ",\"delta\":%" PRId64 "},\"syscall_returns\":[",
                a->blocked, b->blocked, (int64_t)(b->blocked - a->blocked), a->end - a->begin, b->end - b->begin,
                (int64_t)((b->end - b->begin) - (a->end - a->begin)));
        int k = 0;
        const rets *both[2] = {xa, xb};
        for (int side = 0; side < 2; side++)
            for (int i = 0; i < both[side]->n; i++) {
                const char *name = both[side]->s[i].name;
                if (side == 1 && find_rets(xa, name))
                    continue; /* listed with a */
                fprintf(f, "%s{\"syscall\":", k++ ? "," : "");
                query_json_str(f, name, strlen(name));
                fputs(",\"a\":", f);
                json_rets(f, find_rets(xa, name));
                fputs(",\"b\":", f);
                json_rets(f, find_rets(xb, name));
                fputc('}', f);
            }
        fputs("]}\n", f);
        return;
    }
    char ba[32], bb[32], da[32], db[32];
    query_fmt_duration(ba, sizeof ba, a->blocked);
    query_fmt_duration(bb, sizeof bb, b->blocked);
    query_fmt_duration(da, sizeof da, a->end - a->begin);
    query_fmt_duration(db, sizeof db, b->end - b->begin);
    fprintf(f, "node %" PRIu32 " (%s) and node %" PRIu32 " (%s): similarity %.2f%s\n", a->id, a->thread, b->id,
            b->thread, score, contained ? ", one normal form holds the other" : "");
    fprintf(f, "blocked before:  %s  vs  %s\nexecution time:  %s  vs  %s\n", ba, bb, da, db);
    table_norm_list(f, ra, "only in a", sa, sb);
    table_norm_list(f, ra, "only in b", sb, sa);
    for (int i = 0; i < xa->n; i++) {
        const syscall_rets *o = find_rets(xb, xa->s[i].name);
        if (!o)
            continue;
        bool same = o->n == xa->s[i].n;
        for (int k = 0; same && k < o->n; k++)
            same = o->v[k] == xa->s[i].v[k];
        if (!same) {
            fprintf(f, "%s returned", xa->s[i].name);
            for (int k = 0; k < xa->s[i].n; k++)
                fprintf(f, " %" PRId64, xa->s[i].v[k]);
            fputs(" vs", f);
            for (int k = 0; k < o->n; k++)
                fprintf(f, " %" PRId64, o->v[k]);
            fputc('\n', f);
        }
    }
}

/* compare node A with node B [in trace "T"]: A is a node of the session's
 * trace, B of T (default: the same trace). */
int query_exec_compare_nodes(query_session *s, const query_stmt *st, query_error *err)
{
    db_reader *ra = query_open_trace(s, NULL, err);
    if (!ra)
        return -1;
    db_reader *rb = st->trace.name ? query_open_trace(s, &st->trace, err) : ra;
    int rc = rb ? 0 : -1;
    db_node a, b;
    db_sig sa = {0}, sb = {0};
    rets xa = {.n = 0}, xb = {.n = 0};
    db_error de = {0};
    if (!rc)
        rc = get_node(ra, st->node, &st->node_pos, &a, err) || get_node(rb, st->node2, &st->node2_pos, &b, err);
    if (!rc && (db_get_sig(ra, a.id, &sa, &de) < 0 || db_get_sig(rb, b.id, &sb, &de) < 0 ||
                db_scan_node_events(ra, a.id, collect_ret, &xa, &de) ||
                db_scan_node_events(rb, b.id, collect_ret, &xb, &de)))
        rc = query_fail(err, NULL, "%s", de.msg);
    if (!rc && align(ra, &sa, rb, &sb, &de))
        rc = query_fail(err, NULL, "%s", de.msg);
    if (!rc)
        print_compare(s, ra, &a, &b, &sa, &sb, &xa, &xb);
    if (rb && rb != ra)
        db_reader_close(rb);
    db_reader_close(ra);
    return rc;
}

/* ---- compare path (SLICE) with (SLICE) ---- */

static int run_slice(query_session *s, const query_stmt *sl, db_reader **r, query_path *p, query_error *err)
{
    if (sl->kind != QUERY_ST_SLICE)
        return query_fail(err, &sl->pos, "compare path takes two slices: (slice back from node N ...)");
    *r = query_open_trace(s, &sl->trace, err);
    if (!*r)
        return -1;
    uint32_t kinds = query_causal_kinds();
    db_error de = {0};
    int depth = sl->has_depth ? (int)sl->depth : 20; /* the parser keeps it to QUERY_DEPTH_MAX */
    int rc = sl->node > UINT32_MAX ? 1
                                   : query_path_walk(*r, (uint32_t)sl->node,
                                                     sl->dir == QUERY_SLICE_BACK ? QUERY_WALK_IN : QUERY_WALK_OUT,
                                                     kinds, depth, p, &de);
    return rc ? query_path_fail(rc, *r, sl, &de, err) : 0;
}

int query_exec_compare_paths(query_session *s, const query_stmt *st, query_error *err)
{
    db_reader *rn = NULL, *ra = NULL;
    query_path normal = {0}, anomaly = {0};
    query_suspect *sus = NULL;
    size_t nsus = 0;
    int rc = run_slice(s, st->path_a, &rn, &normal, err) || run_slice(s, st->path_b, &ra, &anomaly, err) ? -1 : 0;
    if (!rc) {
        const db_node *start = &anomaly.items[0].node;
        query_period per = query_period_of(start);
        db_error de = {0};
        if (query_compare_paths(ra, rn, &normal, &anomaly, &per, start, &sus, &nsus, &de))
            rc = query_fail(err, NULL, "%s", de.msg);
        else if (query_view_format(s->format)) {
            bool same = db_reader_trace(rn)->id == db_reader_trace(ra)->id; /* one archive: ids say it */
            rc = query_view_paths(s, ra, &anomaly, rn, &normal, same, NULL, err);
        } else
            query_print_comparison(s, &per, start, sus, nsus, &normal, &anomaly);
    }
    free(sus);
    query_path_free(&normal);
    query_path_free(&anomaly);
    db_reader_close(rn);
    db_reader_close(ra);
    return rc;
}

int query_exec_compare(query_session *s, const query_stmt *st, query_error *err)
{
    return st->kind == QUERY_ST_COMPARE_NODES ? query_exec_compare_nodes(s, st, err)
                                              : query_exec_compare_paths(s, st, err);
}
