/* query/exec.c -- running a statement: the small statements here, find in
 * exec_find.c, slice in exec_slice.c. */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query_int.h"

/* The trace a statement reads: its `in trace`, else the session's
 * current trace, else the most recently ingested one. */
db_reader *query_open_trace(query_session *s, const query_name *in, query_error *err)
{
    db_error de = {0};
    char name[256];
    if (in && in->name)
        snprintf(name, sizeof name, "%s", in->name);
    else if (s->trace[0])
        snprintf(name, sizeof name, "%s", s->trace);
    else {
        db_trace_info t;
        int got = db_latest_trace(s->archive, &t, &de);
        if (got <= 0) {
            query_fail(err, NULL, "%s", got < 0 ? de.msg : "the archive holds no trace (ingest one first)");
            return NULL;
        }
        snprintf(name, sizeof name, "%s", t.name);
    }
    db_reader *r = db_reader_open(s->archive, name, &de);
    if (!r) {
        query_fail(err, in && in->name ? &in->pos : NULL, "%s", de.msg);
        return NULL;
    }
    db_reader_interrupt(r, s->interrupt); /* Ctrl-C ends the statement at its next read */
    if (!s->read_trace[0])
        snprintf(s->read_trace, sizeof s->read_trace, "%s", db_reader_trace(r)->name);
    return r;
}

/* ---- traces ---- */

struct traces_ctx {
    db_archive *a;
    query_trace_row *v;
    size_t n, cap;
};

static int label_of(void *ctx, const char *key, const char *value, size_t len)
{
    query_trace_row *t = ctx;
    query_label *l = realloc(t->labels, (t->nlabels + 1) * sizeof *l);
    if (!l)
        return -1;
    t->labels = l;
    l += t->nlabels;
    snprintf(l->key, sizeof l->key, "%s", key);
    if (!(l->value = strndup(value, len)))
        return -1;
    t->nlabels++;
    return 0;
}

static int collect_trace(void *p, const db_trace_info *t)
{
    struct traces_ctx *c = p;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        query_trace_row *v = realloc(c->v, cap * sizeof *v);
        if (!v)
            return -1;
        c->v = v;
        c->cap = cap;
    }
    query_trace_row *r = &c->v[c->n++];
    *r = (query_trace_row){.info = *t};
    db_error de = {0};
    return db_trace_labels(c->a, t->id, label_of, r, &de);
}

static void free_row(query_trace_row *r)
{
    for (size_t k = 0; k < r->nlabels; k++)
        free(r->labels[k].value);
    free(r->labels);
}

static void free_traces(struct traces_ctx *c)
{
    for (size_t i = 0; i < c->n; i++)
        free_row(&c->v[i]);
    free(c->v);
}

static void trace_json(FILE *f, const query_trace_row *r)
{
    const db_trace_info *t = &r->info;
    fputs("{\"name\":", f);
    query_json_str(f, t->name, strlen(t->name));
    fprintf(f,
            ",\"events\":%" PRIu64 ",\"nodes\":%" PRIu64 ",\"edges\":%" PRIu64 ",\"threads\":%" PRIu64
            ",\"processes\":%" PRIu64 ",\"skipped\":%" PRIu64 ",\"first_ts\":%" PRIu64 ",\"last_ts\":%" PRIu64
            ",\"ingested_at\":%" PRIu64 ",\"format\":",
            t->events, t->nodes, t->edges, t->threads, t->processes, t->skipped, t->first_ts, t->last_ts,
            t->ingested_at);
    query_json_str(f, t->format, strlen(t->format));
    fputs(",\"source\":", f);
    query_json_str(f, t->source, strlen(t->source));
    fputs(",\"labels\":{", f);
    for (size_t k = 0; k < r->nlabels; k++) {
        fputs(k ? "," : "", f);
        query_json_str(f, r->labels[k].key, strlen(r->labels[k].key));
        fputc(':', f);
        query_json_str(f, r->labels[k].value, strlen(r->labels[k].value));
    }
    fputs("}}", f);
}

/* The traces of archive a whose catalog entry and labels satisfy where
 * (every one when NULL), in catalog order, into c (free_traces). */
static int select_traces(db_archive *a, const query_expr *where, struct traces_ctx *c, query_error *err)
{
    if (where && query_check_fields(where, QUERY_TARGET_TRACES, err))
        return -1;
    *c = (struct traces_ctx){.a = a};
    db_error de = {0};
    if (db_list_traces(a, collect_trace, c, &de)) {
        free_traces(c);
        return query_fail(err, NULL, "%s", de.msg[0] ? de.msg : "out of memory");
    }
    size_t kept = 0;
    for (size_t i = 0; i < c->n; i++) {
        query_row row = {.trace = &c->v[i]};
        if (where && !query_eval(where, &row)) {
            free_row(&c->v[i]);
            continue;
        }
        c->v[kept++] = c->v[i]; /* over a row already kept or freed */
    }
    c->n = kept;
    return 0;
}

int query_traces_where(query_session *s, const query_expr *where, const query_pos *pos, uint32_t **ids, size_t *n,
                       query_error *err)
{
    return query_traces_in(s->archive, NULL, where, pos, ids, n, err);
}

int query_traces_in(db_archive *a, const char *path, const query_expr *where, const query_pos *pos, uint32_t **ids,
                    size_t *n, query_error *err)
{
    struct traces_ctx c;
    *ids = NULL;
    *n = 0;
    if (select_traces(a, where, &c, err))
        return -1;
    if (c.n == 0) {
        free_traces(&c);
        if (!where)
            return 0;
        if (path)
            return query_fail(err, pos, "no trace of archive \"%s\" satisfies the where clause", path);
        return query_fail(err, pos, "no trace satisfies the where clause (`traces where ...` lists them)");
    }
    if (!(*ids = malloc(c.n * sizeof **ids))) {
        free_traces(&c);
        return query_fail(err, NULL, "out of memory");
    }
    for (size_t i = 0; i < c.n; i++)
        (*ids)[i] = c.v[i].info.id;
    *n = c.n;
    free_traces(&c);
    return 0;
}

/* traces [where EXPR]: the catalog, with each trace's labels (a column
 * of key=value pairs in a table, when any trace has one). */
static int exec_traces(query_session *s, const query_stmt *st, query_error *err)
{
    struct traces_ctx c;
    if (select_traces(s->archive, st->where, &c, err))
        return -1;
    bool labels = false;
    for (size_t i = 0; i < c.n; i++)
        labels = labels || c.v[i].nlabels;
    if (s->format == QUERY_FMT_JSON) {
        fputs("{\"traces\":[", s->out);
        for (size_t i = 0; i < c.n; i++) {
            fputs(i ? "," : "", s->out);
            trace_json(s->out, &c.v[i]);
        }
        fputs("]}\n", s->out);
        free_traces(&c);
        return 0;
    }
    static const char *const heads[] = {"trace", "events", "nodes", "edges", "threads", "span", "format", "labels"};
    query_table t;
    query_table_init(&t, s->format, labels ? 8 : 7, heads);
    for (size_t i = 0; i < c.n; i++) {
        const db_trace_info *ti = &c.v[i].info;
        query_table_str(&t, ti->name);
        query_table_u64(&t, ti->events);
        query_table_u64(&t, ti->nodes);
        query_table_u64(&t, ti->edges);
        query_table_u64(&t, ti->threads);
        query_table_dur(&t, ti->last_ts - ti->first_ts, false);
        query_table_str(&t, ti->format);
        if (labels) {
            char buf[2048];
            size_t n = 0;
            buf[0] = 0;
            for (size_t k = 0; k < c.v[i].nlabels && n < sizeof buf; k++) {
                int w = snprintf(buf + n, sizeof buf - n, "%s%s=%s", k ? " " : "", c.v[i].labels[k].key,
                                 c.v[i].labels[k].value);
                n += w > 0 ? (size_t)w : 0;
            }
            query_table_str(&t, buf);
        }
    }
    query_table_show(s, &t);
    query_table_free(&t);
    free_traces(&c);
    return 0;
}

static int exec_use(query_session *s, const query_stmt *st, query_error *err)
{
    db_trace_info t;
    db_error de = {0};
    int got = db_find_trace(s->archive, st->trace.name, &t, &de);
    if (got <= 0)
        return query_fail(err, &st->trace.pos, got < 0 ? "%s" : "no trace named \"%s\"",
                          got < 0 ? de.msg : st->trace.name);
    snprintf(s->trace, sizeof s->trace, "%s", t.name);
    if (s->format == QUERY_FMT_JSON) {
        fputs("{\"trace\":", s->out);
        query_json_str(s->out, t.name, strlen(t.name));
        fputs("}\n", s->out);
    } else
        fprintf(s->out, "using trace \"%s\"\n", t.name);
    return 0;
}

/* ---- help ---- */

static const struct {
    const char *topic, *text;
} help_topics[] = {
    {"traces",
     "traces [where EXPR]\n  List the traces in the archive: name, events, nodes, edges, threads, span,\n"
     "  format, and their labels.  EXPR over name events nodes edges threads processes\n"
     "  skipped span first_ts last_ts ingested_at format source label.KEY, e.g.\n"
     "  traces where label.run = \"normal\" and label.kernel = \"6.1.0-28-amd64\"\n"
     "  ingested_at (unix seconds) also compares with a date or an age, in UTC:\n"
     "  traces where ingested_at > \"2026-11-17\" or ingested_at > \"7d ago\"\n"},
    {"label",
     "label trace \"NAME\" set KEY = VALUE | unset KEY\n"
     "  Sets or removes a label of the trace.  A trace.dat's labels come from its header\n"
     "  (host kernel arch cpus clock recorder); `ingest --label KEY=VALUE` adds more.\n"},
    {"use", "use trace \"NAME\"\n  Make NAME the current trace of this session.\n"},
    {"find",
     "find nodes|events|edges [where EXPR] [order by FIELD [asc|desc]] [limit K] [in trace \"NAME\"]\n"
     "  EXPR: comparisons (= != < <= > >=), and, or, not, ( ), FIELD [not] in (...).\n"
     "  Literals: \"strings\", 42, 0x2a, -110, durations 300ms 1.5us 2s.\n"
     "  Node fields: id tid pid proc thread begin end duration blocked running\n"
     "  runnable events kind cpu.\n"
     "  Event fields: id ts tid pid type node event cpu phase, the object (target, timer,\n"
     "  block, port, addr, nr, irq) and any attribute (name, ret, reason, func, ...).\n"
     "  Edge fields: from to kind from_event to_event.\n"
     "  e.g. find nodes where thread = \"ui-main\" order by blocked desc limit 1\n"
     "find ... [where EXPR] group by FIELD, ... [compute AGG, ...] [order by FIELD|AGG] [limit K]\n"
     "find ... [where EXPR] compute AGG, ...\n"
     "  Rows counted per value of the fields (or over all): AGG is count or FN(FIELD),\n"
     "  FN one of sum min max avg median p50 p90 p95 p99.\n"
     "  e.g. find nodes where blocked > 10ms group by thread order by sum(blocked) desc\n"},
    {"slice",
     "slice back|forward from node N [depth D] [via KIND, ...] [with weak] [in trace \"NAME\"]\n"
     "  The nodes reached by following edges into (back) or out of (forward) node N,\n"
     "  up to D steps (default 20).  Weak edges are followed only `with weak`;\n"
     "  `via` restricts the edge kinds: wakeup weak ipc ipc_reply dispatch runloop timer flag\n"
     "  user preempt io.\n"},
    {"show", "show node N [in trace \"NAME\"]\n  The node, with its incoming and outgoing edges.\n"},
    {"events", "events of node N [in trace \"NAME\"]\n  The node's events in time order.\n"},
    {"rule",
     "rule boundary TYPE [PHASE] [where KEY = VALUE and ...]\n"
     "rule connect TYPE [PHASE] [where ...] to TYPE [PHASE] [where ...] on KEY = KEY\n"
     "rule ignore wakeup [where KEY = VALUE and ...]\n"
     "  Adds a user rule to the trace (paper/000 User Interactions); `rebuild graph`\n"
     "  applies the trace's rules.  TYPE is an Argus event type (syscall, wakeup,\n"
     "  mach_msg, ...) or a source event name (sys_enter, sched_waking, ...); PHASE is\n"
     "  begin, end, send or recv; KEY is an attribute or tid, pid, event, or the\n"
     "  event's object (target, timer, block, port, addr, nr, irq).\n"
     "  boundary: each matching event begins a new node.\n"
     "  connect: an edge (kind user) from the latest matching first event to each\n"
     "  later matching second event whose KEY values are equal.\n"
     "  ignore wakeup: matching wakeups join nothing (a lock used only for mutual\n"
     "  exclusion).  e.g. rule ignore wakeup where tid = 4124\n"},
    {"rules", "rules [in trace \"NAME\"]\n  The trace's user rules, numbered.\n"},
    {"drop",
     "drop rule N [in trace \"NAME\"]\n  Removes rule N from the trace (`rebuild graph` applies it).\n"
     "drop trace \"NAME\"\n"
     "  Deletes the trace: its events, graph and rules.  Its space is free for the next\n"
     "  ingests at once (`argusq compact` gives it back to the file system).\n"},
    {"rename",
     "rename trace \"A\" to \"B\"\n  Gives trace A the name B (not one another trace has).\n"},
    {"rebuild",
     "rebuild graph [in trace \"NAME\"]\n"
     "  Builds the trace's nodes and edges again from its stored events, with its\n"
     "  rules, without re-ingesting: into a hidden copy of the trace, written in\n"
     "  batches (by a thread of its own while the old copy is read), that takes\n"
     "  its place when it commits (readers see the old graph until then; a kill\n"
     "  leaves it as it was).\n"},
    {"match",
     "match node N [in trace \"T\" | in traces where EXPR] [in archive \"PATH\"] [limit K]\n"
     "  The nodes like node N (of the current trace): same thread name and kind, and a\n"
     "  similar normal form (paper/004), from trace T, from the traces EXPR picks (as\n"
     "  `traces where EXPR`: catalog fields and label.KEY), or from every trace, best\n"
     "  first, the best K (default 20; at most 100000); of this archive, or of the\n"
     "  archive file PATH (read-only).\n"},
    {"compare",
     "compare node A with node B [in trace \"T\"]\n"
     "  Normal forms side by side (events in one node only) and the differential\n"
     "  attributes: wait before, execution time, syscall return values.  A is in the\n"
     "  current trace, B in T.\n"
     "compare path (SLICE) with (SLICE)\n"
     "  The first slice is the normal path, the second the anomalous one: for every\n"
     "  thread of the normal path, was it blocked during the anomaly, or did it never\n"
     "  run a similar node then?  Those threads, ranked (paper/004 Path Comparison).\n"
     "compare thread \"NAME\" in traces [where E1] against traces [where E2]\n"
     "  Two groups of runs: the thread's worst step in each trace, its critical path\n"
     "  per (thread, state) -- the first group's median against the second group's\n"
     "  distribution (median, 5-95%, robust z), most outside first.  --format svg\n"
     "  draws a box per row.\n"},
    {"diagnose",
     "diagnose node N [against trace \"T\" | against traces where EXPR] [in archive \"PATH\"]\n"
     "diagnose thread \"NAME\" [against trace \"T\" | against traces where EXPR] [in archive \"PATH\"]\n"
     "  The paper's three steps: classify the anomaly by where its period went (wait,\n"
     "  busy, runnable, io, yield), find its normal counterpart (earlier in this\n"
     "  trace, or in T, or the best in any trace EXPR picks, e.g. label.run =\n"
     "  \"normal\"), slice both paths and compare them.  Of counterparts alike, the\n"
     "  one from the trace that has the threads of the anomaly's path wins (the same\n"
     "  program's run).  Suspects are ranked by the time they took of the period\n"
     "  (its critical path) less what they took of the counterpart's.  `thread`\n"
     "  picks its worst step (longest not running).  `against traces` without\n"
     "  where: any trace.  `in archive`: the baseline comes from the traces of the\n"
     "  archive file PATH (all of them, by default).  A wait its own timeout ended is\n"
     "  followed along the thread that woke it in the normal run (expected_waker); a\n"
     "  thread the trace shows created is compared by its whole life too (lives).\n"
     "  Against traces, every normal step like it counts (5 at least, else the best\n"
     "  one alone): suspects ranked by how far outside their distribution (median,\n"
     "  5-95%, robust z) their time lies; threads on no normal path named.\n"},
    {"check",
     "check fix of node N | thread \"NAME\" [in trace \"BEFORE\"] after trace \"AFTER\"\n"
     "  Did the anomaly's wait shrink after the fix, and by how much?\n"
     "check fix of thread \"NAME\" in traces [where E1] after traces [where E2]\n"
     "  The same over groups of runs: the fixed runs' median wait against the broken\n"
     "  runs' distribution (shrank: below their 5th percentile; robust z).\n"},
    {"critical",
     "critical path of node N [in trace \"T\"]\n"
     "critical path of thread \"NAME\" [between T1 and T2] [in trace \"T\"]\n"
     "  Where the node's period went (the wait before it, and its run): every ns to\n"
     "  one thread, node and state (running, runnable, blocked, timer, io on the disk\n"
     "  or the network, interrupt).  A wait is followed to what ended it, through the\n"
     "  threads that caused it; runnable time from the wakeup to the switch-in goes\n"
     "  to the threads that took the cpu.  `thread`: its whole life, with totals per\n"
     "  state and device; `between` a stretch of it (T in ns, or 1089.09s).\n"},
    {"transaction",
     "transaction from node N [depth D]\n"
     "  paper/002's cluster from a user-input root: every connection but wakeups,\n"
     "  then the wakers of segments that wait and whose thread goes on in the cluster.\n"},
    {"export",
     "export STATEMENT to \"FILE\"\n"
     "  Writes the statement's output to FILE: in the session's format (--format), or,\n"
     "  by default, as Perfetto JSON (ui.perfetto.dev) for a statement that returns\n"
     "  nodes and as JSON for any other.  e.g. export slice back from node 188 to \"chain.json\"\n"},
    {"help", "help [STATEMENT | WORD]\n  This text, the text of one statement, or of those whose syntax has WORD.\n"},
};

/* Does a syntax line of a help text (those not indented) have word as a
 * word of its own? */
static bool syntax_has(const char *text, const char *word)
{
    size_t wl = strlen(word);
    for (const char *line = text; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0)) {
        size_t ll = strcspn(line, "\n");
        if (line[0] == ' ')
            continue;
        for (size_t k = 0; k + wl <= ll; k++) {
            bool before = k == 0 || !(isalnum((unsigned char)line[k - 1]) || line[k - 1] == '_');
            bool after = k + wl == ll || !(isalnum((unsigned char)line[k + wl]) || line[k + wl] == '_');
            if (before && after && strncasecmp(line + k, word, wl) == 0)
                return true;
        }
    }
    return false;
}

static int exec_help(query_session *s, const query_stmt *st, query_error *err)
{
    size_t n = sizeof help_topics / sizeof help_topics[0];
    FILE *f = s->out;
    char buf[8192];
    size_t len = 0;
    if (st->topic.name) {
        size_t i = 0;
        while (i < n && strcasecmp(help_topics[i].topic, st->topic.name) != 0)
            i++;
        if (i < n)
            len = (size_t)snprintf(buf, sizeof buf, "%s", help_topics[i].text);
        /* a keyword (`help to`, `help where`): the statements whose syntax has it */
        for (size_t j = 0; i == n && j < n && len < sizeof buf; j++)
            if (syntax_has(help_topics[j].text, st->topic.name))
                len += (size_t)snprintf(buf + len, sizeof buf - len, "%s", help_topics[j].text);
        if (len == 0)
            return query_fail(err, &st->topic.pos, "no help for \"%s\" (try: help)", st->topic.name);
    } else {
        /* every syntax line of every topic (those not indented) */
        len = (size_t)snprintf(buf, sizeof buf, "Statements (end each with ';' in scripts):\n");
        for (size_t i = 0; i < n && len < sizeof buf; i++)
            for (const char *t = help_topics[i].text; *t && len < sizeof buf; t += strcspn(t, "\n") + (t[strcspn(t, "\n")] != 0))
                if (*t != ' ')
                    len += (size_t)snprintf(buf + len, sizeof buf - len, "  %.*s\n", (int)strcspn(t, "\n"), t);
    }
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    if (s->format == QUERY_FMT_JSON) {
        fputs("{\"help\":", f);
        query_json_str(f, buf, len);
        fputs("}\n", f);
    } else
        fwrite(buf, 1, len, f);
    return 0;
}

/* ---- show node, events of node ---- */

static int node_or_fail(db_reader *r, const query_stmt *st, db_node *n, query_error *err)
{
    db_error de = {0};
    int got = st->node > UINT32_MAX ? 0 : db_get_node(r, (uint32_t)st->node, n, &de);
    if (got < 0)
        return query_fail(err, &st->node_pos, "%s", de.msg);
    if (got == 0)
        return query_fail(err, &st->node_pos, "no node %" PRIu64 " in trace \"%s\"", st->node,
                          db_reader_trace(r)->name);
    return 0;
}

struct edge_list {
    query_session *s;
    db_reader *r;
    int n;
    query_table *t;
    bool in;
    query_view *view; /* DOT, SVG, Perfetto */
};

/* show node as CSV, one table: the node's row (dir "node"), then each
 * neighbour's, with the edge that joins them */
static const char *const show_csv_heads[] = {"id", "kind", "thread", "tid", "proc", "pid", "begin",
                                             "duration", "blocked", "events", "end", "running", "runnable",
                                             "cpu", "dir", "edge", "from_event", "to_event"};

static void show_csv_row(query_table *t, const db_node *n, const char *dir, const db_edge *e)
{
    query_table_node(t, n);
    query_table_str(t, dir);
    if (e) {
        query_table_str(t, db_edge_kind_name(e->kind));
        query_table_u64(t, e->from_event);
        query_table_u64(t, e->to_event);
    } else
        for (int i = 0; i < 3; i++)
            query_table_str(t, "");
}

static int edge_row(void *p, const db_edge *e)
{
    struct edge_list *l = p;
    FILE *f = l->s->out;
    if (l->s->format == QUERY_FMT_JSON) {
        fputs(l->n++ ? "," : "", f);
        query_json_edge(f, e);
    } else if (l->view) {
        db_node other;
        db_error de = {0};
        if (db_get_node(l->r, l->in ? e->from : e->to, &other, &de) == 1)
            query_view_add_node(l->view, 0, &other, false);
        query_view_add_edge(l->view, 0, e);
    } else if (l->t->csv) { /* the other node's row, then the edge's columns */
        db_node other;
        db_error de = {0};
        int got = db_get_node(l->r, l->in ? e->from : e->to, &other, &de);
        if (got < 0)
            return -1;
        if (got)
            show_csv_row(l->t, &other, l->in ? "in" : "out", e);
    } else {
        query_table_str(l->t, l->in ? "in" : "out");
        query_table_str(l->t, db_edge_kind_name(e->kind));
        query_table_u64(l->t, l->in ? e->from : e->to);
        query_table_cell(l->t, "%" PRIu64 " -> %" PRIu64, e->from_event, e->to_event);
    }
    return 0;
}

static int exec_show(query_session *s, const query_stmt *st, query_error *err)
{
    db_reader *r = query_open_trace(s, &st->trace, err);
    if (!r)
        return -1;
    db_node n;
    db_error de = {0};
    int rc = node_or_fail(r, st, &n, err);
    bool json = s->format == QUERY_FMT_JSON, view = query_view_format(s->format);
    query_table t;
    static const char *const heads[] = {"dir", "edge", "node", "events"};
    bool csv = s->format == QUERY_FMT_CSV;
    if (csv)
        query_table_init(&t, s->format, 18, show_csv_heads);
    else
        query_table_init(&t, s->format, 4, heads);
    query_view v;
    query_view_init(&v);
    struct edge_list l = {s, r, 0, &t, true, view ? &v : NULL};
    if (!rc) {
        if (json) {
            fputs("{\"node\":", s->out);
            query_json_node(s->out, &n, -1);
            fputs(",\"in\":[", s->out);
        } else if (view) {
            query_view_group(&v, r, NULL);
            query_view_add_node(&v, 0, &n, true);
        } else if (csv)
            show_csv_row(&t, &n, "node", NULL);
        else {
            query_table nt;
            query_table_nodes_init(&nt, s->format);
            query_table_node(&nt, &n);
            query_table_show(s, &nt);
            query_table_free(&nt);
        }
        rc = db_edges_in(r, n.id, edge_row, &l, &de);
        if (json)
            fputs("],\"out\":[", s->out);
        l.in = false;
        l.n = 0;
        if (!rc)
            rc = db_edges_out(r, n.id, edge_row, &l, &de);
        if (json)
            fputs("]}\n", s->out);
        else if (view && !rc)
            rc = query_view_print(s, &v, err) ? -2 : 0;
        else if (csv && !rc)
            query_table_show(s, &t);
        else if (!view && t.ncells > 4) {
            fputc('\n', s->out);
            query_table_show(s, &t);
        }
        if (rc == -2)
            rc = -1; /* err is filled */
        else if (rc)
            query_fail(err, NULL, "%s", de.msg);
    }
    query_view_free(&v);
    query_table_free(&t);
    db_reader_close(r);
    return rc;
}

struct ev_list {
    query_session *s;
    int n;
    query_table t;
};

static int ev_row(void *p, const db_event *ev)
{
    struct ev_list *l = p;
    if (l->s->format == QUERY_FMT_JSON) {
        fputs(l->n++ ? "," : "", l->s->out);
        query_json_event(l->s->out, ev);
    } else
        query_table_event(&l->t, ev);
    return 0;
}

static int exec_events_of(query_session *s, const query_stmt *st, query_error *err)
{
    db_reader *r = query_open_trace(s, &st->trace, err);
    if (!r)
        return -1;
    db_node n;
    db_error de = {0};
    int rc = node_or_fail(r, st, &n, err);
    if (!rc) {
        struct ev_list l = {s, 0, {0}};
        query_table_events_init(&l.t, s->format);
        if (s->format == QUERY_FMT_JSON)
            fputs("{\"events\":[", s->out);
        rc = db_scan_node_events(r, n.id, ev_row, &l, &de);
        if (s->format == QUERY_FMT_JSON)
            fputs("]}\n", s->out);
        else if (!rc)
            query_table_show(s, &l.t);
        query_table_free(&l.t);
        if (rc)
            query_fail(err, NULL, "%s", de.msg);
    }
    db_reader_close(r);
    return rc;
}

/* Statements that return nodes: what --format dot, svg and perfetto draw. */
static bool returns_nodes(const query_stmt *st)
{
    switch (st->kind) {
    case QUERY_ST_SLICE:
    case QUERY_ST_SHOW_NODE:
    case QUERY_ST_TRANSACTION:
    case QUERY_ST_DIAGNOSE:
    case QUERY_ST_CRITICAL_PATH:
    case QUERY_ST_COMPARE_PATHS: return true;
    case QUERY_ST_FIND: return st->target == QUERY_TARGET_NODES;
    default: return false;
    }
}

/* export STMT to "FILE": STMT's output into FILE, in the session's format,
 * or (when that is the table) as Perfetto JSON for a statement that
 * returns nodes and as JSON for any other.  Written through base_outfile:
 * FILE is replaced only by a whole output, so a statement that fails (or
 * is interrupted) leaves the file that was there, and no file when there
 * was none. */
static int exec_export(query_session *s, const query_stmt *st, query_error *err)
{
    const query_stmt *in = st->inner;
    if (in->kind == QUERY_ST_EXPORT)
        return query_fail(err, &in->pos, "export takes one statement, not another export");
    query_session sub = *s;
    sub.format = s->format != QUERY_FMT_TABLE ? s->format : returns_nodes(in) ? QUERY_FMT_PERFETTO : QUERY_FMT_JSON;
    if (sub.format == QUERY_FMT_SVG && returns_nodes(in) && query_need_dot(err))
        return -1;
    base_outfile o;
    db_error de = {0};
    if (base_outfile_open(&o, st->file.name, 0, de.msg, sizeof de.msg))
        return query_fail(err, &st->file.pos, "%s", de.msg);
    sub.out = o.f;
    int rc = query_exec(&sub, in, err);
    memcpy(s->trace, sub.trace, sizeof s->trace); /* an exported `use trace` still switches */
    memcpy(s->read_trace, sub.read_trace, sizeof s->read_trace);
    if (rc) {
        base_outfile_abort(&o);
        return -1;
    }
    if (base_outfile_commit(&o, de.msg, sizeof de.msg))
        return query_fail(err, &st->file.pos, "%s", de.msg);
    if (s->format == QUERY_FMT_JSON) {
        fputs("{\"export\":", s->out);
        query_json_str(s->out, st->file.name, st->file.len);
        fprintf(s->out, ",\"format\":\"%s\"}\n", query_format_name(sub.format));
    } else
        fprintf(s->out, "exported to %s (%s)\n", st->file.name, query_format_name(sub.format));
    return 0;
}

/* Statements that change the archive or the session: they answer for
 * what they did, interrupted or not. */
static bool changes(const query_stmt *st)
{
    switch (st->kind) {
    case QUERY_ST_USE:
    case QUERY_ST_RULE:
    case QUERY_ST_DROP_RULE:
    case QUERY_ST_REBUILD:
    case QUERY_ST_DROP_TRACE:
    case QUERY_ST_RENAME_TRACE:
    case QUERY_ST_LABEL:
    case QUERY_ST_EXPORT: return true; /* its statement is asked below */
    default: return false;
    }
}

static int dispatch(query_session *s, const query_stmt *st, query_error *err);

int query_exec(query_session *s, const query_stmt *st, query_error *err)
{
    int rc = dispatch(s, st, err);
    /* An interrupted read fails, also where it ended well: a reader's
     * "interrupted" taken for an absence (a node not found) leaves an
     * answer that is not the whole one, which must not pass for it. */
    if (!rc && s->interrupt && *s->interrupt && !changes(st))
        rc = query_fail(err, NULL, "interrupted");
    return rc;
}

static int dispatch(query_session *s, const query_stmt *st, query_error *err)
{
    if (query_view_format(s->format) && !returns_nodes(st) && st->kind != QUERY_ST_HELP &&
        st->kind != QUERY_ST_USE && st->kind != QUERY_ST_EXPORT && st->kind != QUERY_ST_COMPARE_GROUPS)
        return query_fail(err, &st->pos,
                          "--format %s draws statements that return nodes: find nodes, show node, slice, "
                          "transaction, diagnose, critical path, compare path",
                          query_format_name(s->format));
    if (s->format == QUERY_FMT_SVG && returns_nodes(st) && query_need_dot(err))
        return -1;
    switch (st->kind) {
    case QUERY_ST_TRACES: return exec_traces(s, st, err);
    case QUERY_ST_USE: return exec_use(s, st, err);
    case QUERY_ST_HELP: return exec_help(s, st, err);
    case QUERY_ST_SHOW_NODE: return exec_show(s, st, err);
    case QUERY_ST_EVENTS_OF: return exec_events_of(s, st, err);
    case QUERY_ST_FIND: return query_exec_find(s, st, err);
    case QUERY_ST_SLICE: return query_exec_slice(s, st, err);
    case QUERY_ST_RULE:
    case QUERY_ST_RULES:
    case QUERY_ST_DROP_RULE:
    case QUERY_ST_REBUILD: return query_exec_rule_stmt(s, st, err);
    case QUERY_ST_MATCH: return query_exec_match(s, st, err);
    case QUERY_ST_COMPARE_NODES:
    case QUERY_ST_COMPARE_PATHS: return query_exec_compare(s, st, err);
    case QUERY_ST_COMPARE_GROUPS: return query_exec_compare_groups(s, st, err);
    case QUERY_ST_DIAGNOSE: return query_exec_diagnose(s, st, err);
    case QUERY_ST_CHECK_FIX: return query_exec_check_fix(s, st, err);
    case QUERY_ST_TRANSACTION: return query_exec_transaction(s, st, err);
    case QUERY_ST_EXPORT: return exec_export(s, st, err);
    case QUERY_ST_CRITICAL_PATH: return query_exec_critical(s, st, err);
    case QUERY_ST_DROP_TRACE:
    case QUERY_ST_RENAME_TRACE:
    case QUERY_ST_LABEL: return query_exec_trace_stmt(s, st, err);
    }
    return query_fail(err, &st->pos, "unknown statement");
}
