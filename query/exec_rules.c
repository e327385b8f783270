/* query/exec_rules.c -- user rules (paper/000 §User Interactions) and
 * `rebuild graph`.  A rule is kept with its trace as the statement's text;
 * `rebuild graph` compiles the trace's rules into graph_rule structures
 * and builds the graph again from the stored events into a hidden copy of
 * the trace, in batches as an ingest writes (db_writer_rebuild), which
 * takes the trace's place when it commits: readers keep seeing the old
 * graph until then, and memory stays bounded whatever the trace's size. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query_int.h"

/* The name of the trace a statement works on (see query_open_trace). */
static int trace_name(query_session *s, const query_name *in, char *name, size_t len, query_error *err)
{
    db_reader *r = query_open_trace(s, in, err);
    if (!r)
        return -1;
    snprintf(name, len, "%s", db_reader_trace(r)->name);
    db_reader_close(r);
    return 0;
}

/* A write transaction on the statement's trace; name receives its name. */
static db_writer *open_writer(query_session *s, const query_stmt *st, char *name, size_t len,
                              query_error *err)
{
    if (trace_name(s, &st->trace, name, len, err))
        return NULL;
    db_error de = {0};
    db_writer *w = db_writer_open(s->archive, name, &de);
    if (!w)
        query_fail(err, NULL, "%s", de.msg);
    return w;
}

static int copy_name(char *dst, const query_name *n, query_error *err)
{
    if (n->len >= GRAPH_KEY_MAX)
        return query_fail(err, &n->pos, "\"%s\" is too long for a rule (at most %d bytes)", n->name,
                          GRAPH_KEY_MAX - 1);
    memcpy(dst, n->name, n->len + 1);
    return 0;
}

/* where KEY = LIT and KEY = LIT ... -> the attribute tests of a match */
static int compile_where(const query_expr *e, graph_match *m, query_error *err)
{
    if (e->kind == QUERY_EX_AND)
        return compile_where(e->bin.lhs, m, err) || compile_where(e->bin.rhs, m, err) ? -1 : 0;
    const query_operand *f = &e->cmp.lhs, *l = &e->cmp.rhs;
    if (e->kind == QUERY_EX_CMP && f->kind != QUERY_OPD_FIELD) {
        f = &e->cmp.rhs;
        l = &e->cmp.lhs;
    }
    if (e->kind != QUERY_EX_CMP || e->cmp.op != QUERY_OP_EQ || f->kind != QUERY_OPD_FIELD)
        return query_fail(err, &e->pos, "a rule matches events with KEY = VALUE tests joined by `and`");
    if (m->nattrs == GRAPH_MATCH_MAX)
        return query_fail(err, &e->pos, "a rule matches at most %d attributes", GRAPH_MATCH_MAX);
    int i = m->nattrs++;
    if (copy_name(m->attrs[i].key, &f->field, err))
        return -1;
    if (l->kind == QUERY_OPD_FIELD) { /* `name = futex`: a rule's values are never fields */
        if (l->field.len >= GRAPH_VAL_MAX)
            return query_fail(err, &l->field.pos, "value too long for a rule");
        memcpy(m->attrs[i].val, l->field.name, l->field.len + 1);
        return 0;
    }
    const query_literal *lit = &l->lit;
    if (lit->kind == QUERY_LIT_STRING) {
        if (lit->len >= GRAPH_VAL_MAX)
            return query_fail(err, &lit->pos, "value too long for a rule");
        memcpy(m->attrs[i].val, lit->str, lit->len + 1);
    } else if (lit->is_negative)
        snprintf(m->attrs[i].val, GRAPH_VAL_MAX, "%" PRId64, lit->ival);
    else
        snprintf(m->attrs[i].val, GRAPH_VAL_MAX, "%" PRIu64, lit->uval);
    return 0;
}

static int compile_match(const query_rule_match *q, graph_match *m, query_error *err)
{
    memset(m, 0, sizeof *m);
    m->type = db_evtype_from_name(q->type.name, q->type.len);
    if (m->type < 0 && copy_name(m->event, &q->type, err))
        return -1;
    m->phase = -1;
    if (q->phase.name) {
        const char *p = q->phase.name;
        if (!strcasecmp(p, "begin") || !strcasecmp(p, "send"))
            m->phase = DB_PH_BEGIN;
        else if (!strcasecmp(p, "end") || !strcasecmp(p, "recv"))
            m->phase = DB_PH_END;
        else
            return query_fail(err, &q->phase.pos, "unknown phase \"%s\" (begin, end, send, recv)", p);
    }
    return q->where ? compile_where(q->where, m, err) : 0;
}

int query_rule_compile(const query_stmt *st, graph_rule *out, query_error *err)
{
    memset(out, 0, sizeof *out);
    if (st->kind != QUERY_ST_RULE)
        return query_fail(err, &st->pos, "only `rule` statements belong in a rules file");
    switch (st->rule) {
    case QUERY_RULE_BOUNDARY: out->kind = GRAPH_RULE_BOUNDARY; break;
    case QUERY_RULE_CONNECT: out->kind = GRAPH_RULE_CONNECT; break;
    case QUERY_RULE_IGNORE:
        out->kind = GRAPH_RULE_IGNORE_WAKEUP;
        if (strcasecmp(st->ra.type.name, "wakeup") != 0)
            return query_fail(err, &st->ra.type.pos, "only wakeups can be ignored (`rule ignore wakeup ...`)");
        break;
    }
    if (compile_match(&st->ra, &out->a, err))
        return -1;
    if (out->kind == GRAPH_RULE_CONNECT)
        return compile_match(&st->rb, &out->b, err) || copy_name(out->a_key, &st->a_key, err) ||
                       copy_name(out->b_key, &st->b_key, err)
                   ? -1
                   : 0;
    return 0;
}

/* ---- the trace's rules, compiled ---- */

struct rule_set {
    graph_rule *v;
    size_t n, cap;
    query_error *err;
    uint32_t bad; /* the stored rule that did not compile */
};

static int compile_stored(void *ctx, uint32_t seq, const char *text)
{
    struct rule_set *rs = ctx;
    query_script *sc = query_parse(text, strlen(text), rs->err);
    int rc = -1;
    if (sc && query_script_count(sc) == 1) {
        if (rs->n == rs->cap) {
            size_t n = rs->cap ? rs->cap * 2 : 8;
            graph_rule *p = realloc(rs->v, n * sizeof *p);
            if (p) {
                rs->v = p;
                rs->cap = n;
            }
        }
        if (rs->n < rs->cap)
            rc = query_rule_compile(query_script_stmt(sc, 0), &rs->v[rs->n], rs->err);
        if (rc == 0)
            rs->n++;
    }
    query_script_free(sc);
    if (rc)
        rs->bad = seq;
    return rc;
}

/* ---- statements ---- */

static void json_summary(query_session *s, const char *key, uint32_t n, const char *trace, const char *text,
                         size_t len)
{
    fprintf(s->out, "{\"%s\":%" PRIu32 ",\"trace\":", key, n);
    query_json_str(s->out, trace, strlen(trace));
    if (text) {
        fputs(",\"text\":", s->out);
        query_json_str(s->out, text, len);
    }
    fputs("}\n", s->out);
}

static int finish(db_writer *w, const db_error *de, query_error *err)
{
    db_error ce = {0};
    if (de->msg[0]) {
        db_writer_abort(w);
        return query_fail(err, NULL, "%s", de->msg);
    }
    return db_writer_commit(w, NULL, &ce) ? query_fail(err, NULL, "%s", ce.msg) : 0;
}

static int exec_rule(query_session *s, const query_stmt *st, query_error *err)
{
    graph_rule r;
    char name[256];
    if (query_rule_compile(st, &r, err))
        return -1;
    db_writer *w = open_writer(s, st, name, sizeof name, err);
    if (!w)
        return -1;
    db_error de = {0};
    /* kept as written; an `in trace` clause in it is ignored by rebuild */
    uint32_t seq = 0;
    db_writer_add_rule(w, st->text, st->text_len, &seq, &de);
    if (finish(w, &de, err))
        return -1;
    if (s->format == QUERY_FMT_JSON)
        json_summary(s, "rule", seq, name, st->text, st->text_len);
    else
        fprintf(s->out, "rule %" PRIu32 " added to trace \"%s\"; `rebuild graph` applies it\n", seq, name);
    return 0;
}

struct rule_list {
    query_session *s;
    int n;
    query_table t;
};

static int list_rule(void *ctx, uint32_t seq, const char *text)
{
    struct rule_list *l = ctx;
    if (l->s->format == QUERY_FMT_JSON) {
        fprintf(l->s->out, "%s{\"rule\":%" PRIu32 ",\"text\":", l->n ? "," : "", seq);
        query_json_str(l->s->out, text, strlen(text));
        fputc('}', l->s->out);
    } else {
        query_table_u64(&l->t, seq);
        query_table_str(&l->t, text);
    }
    l->n++;
    return 0;
}

static int exec_rules(query_session *s, const query_stmt *st, query_error *err)
{
    db_reader *r = query_open_trace(s, &st->trace, err);
    if (!r)
        return -1;
    static const char *const heads[] = {"rule", "text"};
    struct rule_list l = {s, 0, {0}};
    query_table_init(&l.t, s->format, 2, heads);
    db_error de = {0};
    if (s->format == QUERY_FMT_JSON)
        fputs("{\"rules\":[", s->out);
    int rc = db_scan_rules(r, list_rule, &l, &de);
    if (s->format == QUERY_FMT_JSON)
        fputs("]}\n", s->out);
    else if (!rc && l.n == 0 && !l.t.csv)
        fprintf(s->out, "trace \"%s\" has no rules\n", db_reader_trace(r)->name);
    else if (!rc)
        query_table_show(s, &l.t);
    query_table_free(&l.t);
    db_reader_close(r);
    return rc ? query_fail(err, NULL, "%s", de.msg) : 0;
}

static int exec_drop(query_session *s, const query_stmt *st, query_error *err)
{
    char name[256];
    db_writer *w = open_writer(s, st, name, sizeof name, err);
    if (!w)
        return -1;
    db_error de = {0};
    int got = st->node > UINT32_MAX ? 0 : db_writer_drop_rule(w, (uint32_t)st->node, &de);
    if (got == 0) {
        db_writer_abort(w);
        return query_fail(err, &st->node_pos, "trace \"%s\" has no rule %" PRIu64, name, st->node);
    }
    if (finish(w, &de, err))
        return -1;
    if (s->format == QUERY_FMT_JSON)
        json_summary(s, "dropped", (uint32_t)st->node, name, NULL, 0);
    else
        fprintf(s->out, "rule %" PRIu64 " dropped from trace \"%s\"; `rebuild graph` applies it\n", st->node, name);
    return 0;
}

struct rebuild {
    graph_feed feed;
    const volatile sig_atomic_t *interrupt;
    bool interrupted;
};

/* One event of the old copy into the new one, with its new node; or the
 * end of the rebuild, once interrupted. */
static int feed_one(void *ctx, const db_event *ev)
{
    struct rebuild *rb = ctx;
    if (rb->interrupt && *rb->interrupt) {
        rb->interrupted = true;
        return -1;
    }
    db_event e = *ev;
    return graph_feed_event(&rb->feed, &e);
}

int query_rebuild_trace(db_archive *a, const char *name, const volatile sig_atomic_t *interrupt, size_t *nrules,
                        db_trace_info *info, query_error *err)
{
    db_error de = {0};
    db_writer *w = db_writer_rebuild(a, name, &de);
    if (!w)
        return query_fail(err, NULL, "%s", de.msg);
    db_writer_interrupt(w, interrupt);
    struct rule_set rs = {.err = err};
    if (db_writer_scan_rules(w, compile_stored, &rs, &de)) {
        db_writer_abort(w);
        free(rs.v);
        if (rs.bad)
            return query_fail(err, NULL, "rule %" PRIu32 " of trace \"%s\" does not compile: %s", rs.bad, name,
                              err->msg);
        return query_fail(err, NULL, "%s", de.msg);
    }
    graph_stats gs;
    struct rebuild rb = {.interrupt = interrupt};
    graph_feed *feed = &rb.feed;
    int rc = graph_feed_begin(feed, w, rs.v, rs.n, &de);
    /* a rebuild names no thread or process: the copy's names are the old
     * copy's, known before the first event (db_writer_rebuild), so the
     * graph may keep the names it reads (as an ingest does between two
     * namings) instead of asking the writer at every node and wakeup */
    if (!rc)
        graph_feed_track_names(feed);
    if (!rc && (db_writer_scan_source(w, feed_one, &rb, &de) || graph_feed_end(feed, &gs))) {
        graph_feed_abort(feed);
        rc = -1;
    }
    free(rs.v);
    if (rc) {
        db_writer_abort(w); /* the new copy goes: the trace keeps its graph */
        return query_fail(err, NULL, "%s", rb.interrupted ? "interrupted" : de.msg);
    }
    if (db_writer_commit(w, info, &de))
        return query_fail(err, NULL, "%s", de.msg);
    *nrules = rs.n;
    return 0;
}

/* Builds the graph of a stored trace again, with its rules: a new copy
 * of the trace, swapped in whole when it commits. */
static int exec_rebuild(query_session *s, const query_stmt *st, query_error *err)
{
    char name[256];
    if (trace_name(s, &st->trace, name, sizeof name, err))
        return -1;
    db_trace_info info;
    size_t nrules;
    if (query_rebuild_trace(s->archive, name, s->interrupt, &nrules, &info, err))
        return -1;
    if (s->format == QUERY_FMT_JSON) {
        fputs("{\"trace\":", s->out);
        query_json_str(s->out, name, strlen(name));
        fprintf(s->out, ",\"rules\":%zu,\"nodes\":%" PRIu64 ",\"edges\":%" PRIu64 "}\n", nrules, info.nodes,
                info.edges);
    } else
        fprintf(s->out, "rebuilt the graph of \"%s\" with %zu rules: %" PRIu64 " nodes, %" PRIu64 " edges\n",
                name, nrules, info.nodes, info.edges);
    return 0;
}

/* ---- an archive of an earlier format (db/migrate.c) ---- */

struct names {
    char (*v)[256];
    size_t n;
};

static int collect_name(void *ctx, const db_trace_info *t)
{
    struct names *ns = ctx;
    void *p = realloc(ns->v, (ns->n + 1) * sizeof *ns->v);
    if (!p)
        return -1;
    ns->v = p;
    snprintf(ns->v[ns->n++], sizeof ns->v[0], "%s", t->name);
    return 0;
}

int query_migrate(const char *path, FILE *log, query_error *err)
{
    db_error de = {0};
    uint32_t from = 0;
    db_migration *m = db_migrate_begin(path, &from, &de);
    if (!m && de.msg[0])
        return query_fail(err, NULL, "%s", de.msg);
    if (!m) { /* current, or migrated by another process meanwhile */
        if (log && from && from != db_format_version())
            fprintf(log, "argusq: %s: archive format %u was migrated to %u meanwhile\n", path, from,
                    db_format_version());
        return 0;
    }
    db_archive *a = db_migrate_archive(m);
    struct names ns = {0};
    if (db_list_traces(a, collect_name, &ns, &de)) {
        free(ns.v);
        db_migrate_abort(m);
        return query_fail(err, NULL, "%s", de.msg[0] ? de.msg : "out of memory");
    }
    if (log)
        fprintf(log, "argusq: %s: migrating archive format %u to %u (%zu traces: their graphs are built again)\n",
                path, from, db_format_version(), ns.n);
    for (size_t i = 0; i < ns.n; i++) {
        db_trace_info info;
        size_t nrules;
        if (query_rebuild_trace(a, ns.v[i], NULL, &nrules, &info, err)) {
            char why[sizeof err->msg], name[sizeof ns.v[0]];
            snprintf(why, sizeof why, "%s", err->msg);
            snprintf(name, sizeof name, "%s", ns.v[i]);
            free(ns.v);
            db_migrate_abort(m);
            return query_fail(err, NULL, "%s: migrating trace \"%s\": %s (the archive is unchanged)", path, name,
                              why);
        }
    }
    free(ns.v);
    if (db_migrate_commit(m, &de))
        return query_fail(err, NULL, "%s", de.msg);
    if (log)
        fprintf(log, "argusq: %s: migrated to format %u\n", path, db_format_version());
    return 0;
}

int query_exec_rule_stmt(query_session *s, const query_stmt *st, query_error *err)
{
    switch (st->kind) {
    case QUERY_ST_RULE: return exec_rule(s, st, err);
    case QUERY_ST_RULES: return exec_rules(s, st, err);
    case QUERY_ST_DROP_RULE: return exec_drop(s, st, err);
    default: return exec_rebuild(s, st, err);
    }
}
