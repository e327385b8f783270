/* query/export_perfetto.c -- a view as Chrome JSON trace events (the Trace Event
 * Format that ui.perfetto.dev and chrome://tracing open):
 *
 *   - process_name / thread_name metadata events (ph "M") for every track;
 *   - a complete event (ph "X", ts and dur in microseconds) per node, on
 *     its thread's track, named by its kind, id and telling events, with
 *     the node's fields in args;
 *   - a flow per edge: ph "s" inside the source node (at the event that
 *     made the connection) and ph "f" with bp "e" inside the target node
 *     (at the event that received it), with the same id, cat and name (the
 *     edge kind), so that the UI draws an arrow from slice to slice.
 *
 * Slices on one track must nest or be disjoint, and a flow binds to the
 * slice open on its track at its timestamp.  Nodes of one thread do not
 * overlap, but isolated contexts (interrupts, softirqs, timer callouts)
 * carry the tid of the thread they interrupted: they go on a track of
 * their own ("NAME (irq)"), and any node that would still overlap another
 * on its track is moved to an extra track ("NAME #2").  A node without
 * duration is drawn 1 ns long so that a flow can bind to it.
 *
 * A thread's wait before a node is drawn too, on its track, as its
 * critical path splits it (query_node_wait): "blocked" from the wait's
 * start to what ended it (named, with its edge), then "runnable" to its
 * switch-in; cat "state", clipped so as not to reach back over the slice
 * before it.  A view with a critical path (critical path, diagnose) draws
 * it as a process of its own, "critical path", first in the list: one
 * slice per part of the period, named by thread and state (cat "critical
 * path"), the parts adding up to the period.
 *
 * When the view holds two traces (diagnose against another trace), the
 * second trace's pids and tids are offset by PERFETTO_GROUP_OFFSET so that
 * the two runs do not share processes; args keep the real ids. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

#define PERFETTO_GROUP_OFFSET 10000000u
#define PERFETTO_EXTRA_TID 2000000000u /* tids of extra tracks */
#define PERFETTO_CP_PID 2100000000u    /* the critical path's process and track */

typedef struct track {
    uint8_t grp, cls; /* cls 1: isolated context */
    uint32_t pid, tid, lane;
    uint32_t out_pid, out_tid;
    uint64_t last_end;
    size_t first;     /* a node on it */
} track;

static bool isolated(int kind)
{
    return kind == DB_NODE_INTERRUPT || kind == DB_NODE_SOFTIRQ || kind == DB_NODE_TIMER ||
           kind == DB_NODE_TIMESHARE;
}

static uint64_t disp_end(const db_node *n) { return n->end > n->begin ? n->end : n->begin + 1; }

static int by_track(const void *a, const void *b, void *ctx)
{
    const query_view_node *nodes = ctx, *x = &nodes[*(const size_t *)a], *y = &nodes[*(const size_t *)b];
    int cx = isolated(x->n.kind), cy = isolated(y->n.kind);
    if (x->grp != y->grp)
        return x->grp < y->grp ? -1 : 1;
    if (x->n.pid != y->n.pid)
        return x->n.pid < y->n.pid ? -1 : 1;
    if (x->n.tid != y->n.tid)
        return x->n.tid < y->n.tid ? -1 : 1;
    if (cx != cy)
        return cx - cy;
    if (x->n.begin != y->n.begin)
        return x->n.begin < y->n.begin ? -1 : 1;
    return (x->n.id > y->n.id) - (x->n.id < y->n.id);
}

/* Tracks for every node (n->track); *out malloc'd. */
static int assign_tracks(query_view *v, track **out, size_t *ntracks)
{
    size_t *ix = malloc((v->len ? v->len : 1) * sizeof *ix);
    track *t = NULL;
    size_t nt = 0, cap = 0, extra = 0;
    if (!ix)
        return -1;
    for (size_t i = 0; i < v->len; i++)
        ix[i] = i;
    qsort_r(ix, v->len, sizeof *ix, by_track, v->nodes);
    size_t key_first = 0; /* the first track of the current (grp, pid, tid, cls) */
    for (size_t k = 0; k < v->len; k++) {
        query_view_node *n = &v->nodes[ix[k]];
        uint8_t cls = isolated(n->n.kind);
        if (k > 0) {
            const query_view_node *p = &v->nodes[ix[k - 1]];
            if (p->grp != n->grp || p->n.pid != n->n.pid || p->n.tid != n->n.tid || isolated(p->n.kind) != cls)
                key_first = nt;
        }
        size_t j = key_first;
        while (j < nt && t[j].last_end > n->n.begin)
            j++;
        if (j == nt) {
            if (nt == cap) {
                size_t c = cap ? cap * 2 : 32;
                track *p = realloc(t, c * sizeof *p);
                if (!p) {
                    free(t);
                    free(ix);
                    return -1;
                }
                t = p;
                cap = c;
            }
            uint32_t lane = nt - key_first > UINT32_MAX ? UINT32_MAX : (uint32_t)(nt - key_first);
            uint32_t off = n->grp * PERFETTO_GROUP_OFFSET;
            t[nt] = (track){.grp = n->grp, .cls = cls, .pid = n->n.pid, .tid = n->n.tid, .lane = lane,
                            .out_pid = n->n.pid + off, .first = ix[k]};
            t[nt].out_tid = cls == 0 && lane == 0 ? n->n.tid + off : PERFETTO_EXTRA_TID + (uint32_t)extra++;
            nt++;
        }
        n->wait_from = t[j].last_end; /* its wait does not reach back over the slice before */
        t[j].last_end = disp_end(&n->n);
        n->track = (uint32_t)j;
    }
    free(ix);
    *out = t;
    *ntracks = nt;
    return 0;
}

/* ns as microseconds, exactly: 1088969362123 -> 1088969.362123 */
static void us(FILE *f, uint64_t ns)
{
    fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

static void str(FILE *f, const char *s) { query_json_str(f, s, strlen(s)); }

static void meta(FILE *f, bool *first, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
    fputs(*first ? "\n" : ",\n", f);
    *first = false;
    fprintf(f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{\"name\":", what,
            pid, tid);
    str(f, name);
    fputs("}}", f);
}

static void track_names(FILE *f, bool *first, const query_view *v, const track *t, size_t nt)
{
    for (size_t i = 0; i < nt; i++) {
        const db_node *n = &v->nodes[t[i].first].n;
        char name[160];
        /* tracks come in process order */
        if (i == 0 || t[i - 1].out_pid != t[i].out_pid) {
            if (v->ngrp > 1 && v->role[t[i].grp][0])
                snprintf(name, sizeof name, "%s [%s]", n->proc, v->role[t[i].grp]);
            else
                snprintf(name, sizeof name, "%s", n->proc);
            meta(f, first, "process_name", t[i].out_pid, t[i].out_tid, name);
        }
        /* the thread's own name: a thread node's, else the trace's */
        char th[DB_NAME_MAX + 8] = "";
        db_thread dt;
        db_error de;
        if (!t[i].cls && !isolated(n->kind))
            snprintf(th, sizeof th, "%s", n->thread);
        else if (v->r[t[i].grp] && db_get_thread(v->r[t[i].grp], t[i].tid, &dt, &de) == 1)
            snprintf(th, sizeof th, "%s", dt.name);
        else
            snprintf(th, sizeof th, "tid %" PRIu32, t[i].tid);
        int len = snprintf(name, sizeof name, "%s%s", th, t[i].cls ? " (irq)" : "");
        if (t[i].lane && len > 0 && (size_t)len < sizeof name)
            snprintf(name + len, sizeof name - (size_t)len, " #%" PRIu32, t[i].lane + 1);
        meta(f, first, "thread_name", t[i].out_pid, t[i].out_tid, name);
    }
}

static void slice(FILE *f, const query_view *v, const query_view_node *vn, const track *t)
{
    const db_node *n = &vn->n;
    char tell[QUERY_VIEW_TELL][64];
    int k = query_view_telling(v, vn, tell, QUERY_VIEW_TELL);
    char name[256];
    int len = snprintf(name, sizeof name, "%s #%" PRIu32, db_node_kind_name(n->kind), n->id);
    for (int i = 0; i < k && i < 3 && len > 0 && (size_t)len < sizeof name; i++)
        len += snprintf(name + len, sizeof name - (size_t)len, "%s%s", i ? ", " : ": ", tell[i]);
    fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", db_node_kind_name(n->kind));
    str(f, name);
    fputs(",\"ts\":", f);
    us(f, n->begin);
    fputs(",\"dur\":", f);
    us(f, disp_end(n) - n->begin);
    fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{\"node\":%" PRIu32, t->out_pid, t->out_tid,
            n->id);
    if (v->r[vn->grp]) {
        fputs(",\"trace\":", f);
        str(f, db_reader_trace(v->r[vn->grp])->name);
    }
    if (v->ngrp > 1 && v->role[vn->grp][0]) {
        fputs(",\"role\":", f);
        str(f, v->role[vn->grp]);
    }
    fprintf(f, ",\"kind\":\"%s\",\"thread\":", db_node_kind_name(n->kind));
    str(f, n->thread);
    fprintf(f, ",\"tid\":%" PRIu32 ",\"proc\":", n->tid);
    str(f, n->proc);
    fprintf(f,
            ",\"pid\":%" PRIu32 ",\"begin_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64
            ",\"blocked_ns\":%" PRIu64 ",\"events\":%" PRIu32,
            n->pid, n->begin, n->end, n->end - n->begin, n->blocked, n->events);
    if (n->cpu != DB_CPU_NONE)
        fprintf(f, ",\"cpu\":%u", n->cpu);
    fputs(",\"key_events\":[", f);
    for (int i = 0; i < k; i++) {
        fputs(i ? "," : "", f);
        str(f, tell[i]);
    }
    fprintf(f, "]%s}}", vn->start ? ",\"start\":true" : "");
}

/* A slice of a thread's state or of the critical path: cat, name, span,
 * and args opened for the caller to fill and close. */
static void state_slice(FILE *f, const char *cat, const char *name, const char *cname, uint64_t b, uint64_t e,
                        uint32_t pid, uint32_t tid)
{
    fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
    str(f, name);
    fputs(",\"ts\":", f);
    us(f, b);
    fputs(",\"dur\":", f);
    us(f, e - b);
    fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"cname\":\"%s\",\"args\":{", pid, tid, cname);
}

/* The wait before thread node vn on its track: blocked, then runnable. */
static int wait_slices(FILE *f, const query_view *v, const query_view_node *vn, const track *t, db_error *de)
{
    db_reader *r = v->r[vn->grp];
    query_wait w;
    if (!r || isolated(vn->n.kind) || t->cls)
        return 0;
    int got = query_node_wait(r, &vn->n, &w, de);
    if (got <= 0)
        return got;
    uint64_t from = w.from > vn->wait_from ? w.from : vn->wait_from;
    if (from < w.woke) {
        char name[DB_NAME_MAX + 64] = "blocked";
        db_node by;
        db_error e2;
        bool waker = w.known && db_get_node(r, w.by.from, &by, &e2) == 1;
        if (waker)
            snprintf(name, sizeof name, "blocked: %s by %s", db_edge_kind_name(w.by.kind), by.thread);
        state_slice(f, "state", name, w.by.kind == DB_EDGE_IO ? "thread_state_iowait" : "thread_state_sleeping", from,
                    w.woke, t->out_pid, t->out_tid);
        fprintf(f, "\"state\":\"blocked\",\"node\":%" PRIu32 ",\"wait_ns\":%" PRIu64, vn->n.id, w.woke - w.from);
        if (waker) {
            fprintf(f, ",\"edge\":\"%s\",\"waker\":", db_edge_kind_name(w.by.kind));
            str(f, by.thread);
            fprintf(f, ",\"waker_node\":%" PRIu32, by.id);
        }
        fputs("}}", f);
    }
    uint64_t rb = w.woke > from ? w.woke : from;
    if (rb < w.on) {
        state_slice(f, "state", "runnable", "thread_state_runnable", rb, w.on, t->out_pid, t->out_tid);
        fprintf(f, "\"state\":\"runnable\",\"node\":%" PRIu32 "}}", vn->n.id);
    }
    return 0;
}

static const char *const cp_cname[QUERY_CP__COUNT] = {
    [QUERY_CP_RUNNING] = "thread_state_running",  [QUERY_CP_RUNNABLE] = "thread_state_runnable",
    [QUERY_CP_BLOCKED] = "thread_state_sleeping", [QUERY_CP_TIMER] = "thread_state_sleeping",
    [QUERY_CP_IO] = "thread_state_iowait",        [QUERY_CP_INTERRUPT] = "thread_state_unknown",
};

/* The critical path: a process of its own, one track, a slice per part. */
static void cp_track(FILE *f, bool *first, const query_view *v)
{
    const query_cp *cp = v->cp;
    char name[DB_NAME_MAX + 64];
    meta(f, first, "process_name", PERFETTO_CP_PID, PERFETTO_CP_PID, "critical path");
    fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%u,\"tid\":%u,\"args\":{\"sort_index\":-1}}",
            PERFETTO_CP_PID, PERFETTO_CP_PID);
    snprintf(name, sizeof name, "node %" PRIu32 " (%s)", cp->node.id, cp->node.thread);
    meta(f, first, "thread_name", PERFETTO_CP_PID, PERFETTO_CP_PID, name);
    uint64_t period = cp->end > cp->begin ? cp->end - cp->begin : 1;
    for (size_t i = 0; i < cp->n; i++) {
        const query_cp_part *p = &cp->parts[i];
        if (!p->ns)
            continue;
        const char *dev = p->state == QUERY_CP_IO ? query_cp_device_name(p->device) : "";
        int len = snprintf(name, sizeof name, "%.*s: %s", DB_NAME_MAX, p->thread, query_cp_state_name(p->state));
        if (dev[0] && len > 0 && (size_t)len < sizeof name)
            snprintf(name + len, sizeof name - (size_t)len, " (%s)", dev);
        state_slice(f, "critical path", name, p->state < QUERY_CP__COUNT ? cp_cname[p->state] : "thread_state_unknown",
                    p->begin, p->begin + p->ns, PERFETTO_CP_PID, PERFETTO_CP_PID);
        fputs("\"thread\":", f);
        query_json_str(f, p->thread, strnlen(p->thread, DB_NAME_MAX));
        fprintf(f, ",\"tid\":%" PRIu32 ",\"node\":%" PRIu32 ",\"state\":\"%s\",\"ns\":%" PRIu64 ",\"share\":%.4f",
                p->tid, p->node, query_cp_state_name(p->state), p->ns, (double)p->ns / (double)period);
        if (dev[0])
            fprintf(f, ",\"device\":\"%s\"", dev);
        if (p->for_tid) {
            fputs(",\"for_thread\":", f);
            query_json_str(f, p->for_thread, strnlen(p->for_thread, DB_NAME_MAX));
        }
        if (p->held_tid) {
            fputs(",\"held_by\":", f);
            query_json_str(f, p->held_thread, strnlen(p->held_thread, DB_NAME_MAX));
        }
        fputs("}}", f);
    }
}

/* The time of an event of the group's trace, clamped into node n's slice. */
static uint64_t at(const query_view *v, int grp, uint64_t event, const db_node *n, uint64_t dflt)
{
    db_event ev;
    db_error de;
    uint64_t ts = dflt;
    if (event && v->r[grp] && db_get_event(v->r[grp], event, &ev, &de) == 1)
        ts = ev.ts;
    uint64_t hi = disp_end(n) - 1;
    return ts < n->begin ? n->begin : ts > hi ? hi : ts;
}

static void flow(FILE *f, char ph, size_t id, const char *kind, uint64_t ts, const track *t)
{
    fprintf(f, ",\n{\"ph\":\"%c\",%s\"id\":%zu,\"cat\":\"edge\",\"name\":\"%s\",\"ts\":", ph,
            ph == 'f' ? "\"bp\":\"e\"," : "", id, kind);
    us(f, ts);
    fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 "}", t->out_pid, t->out_tid);
}

int query_perfetto_print(FILE *f, query_view *v, db_error *de)
{
    query_view_sort(v);
    track *t = NULL;
    size_t nt = 0;
    uint64_t *ts = malloc((v->elen ? v->elen : 1) * 2 * sizeof *ts);
    if (!ts || assign_tracks(v, &t, &nt)) {
        free(ts);
        return db_fail_oom(de);
    }
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"argusq\"", f);
    for (int g = 0; g < v->ngrp; g++) {
        fprintf(f, ",\"trace%d\":", g + 1);
        str(f, db_reader_trace(v->r[g])->name);
    }
    fputs("},\"traceEvents\":[", f);
    bool first = true;
    track_names(f, &first, v, t, nt);
    if (v->cp)
        cp_track(f, &first, v);
    if (first) /* no node: an empty, valid trace */
        fputs("\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"argusq\"}}", f);
    for (size_t i = 0; i < v->len; i++) {
        slice(f, v, &v->nodes[i], &t[v->nodes[i].track]);
        if (wait_slices(f, v, &v->nodes[i], &t[v->nodes[i].track], de)) {
            free(ts);
            free(t);
            return -1;
        }
    }
    /* where each flow starts and ends: the connecting events, inside the
     * slices, the end never before the start */
    for (size_t i = 0; i < v->elen; i++) {
        const query_view_edge *e = &v->edges[i];
        const db_node *a = &query_view_find(v, e->grp, e->e.from)->n, *b = &query_view_find(v, e->grp, e->e.to)->n;
        ts[2 * i] = at(v, e->grp, e->e.from_event, a, a->end);
        ts[2 * i + 1] = at(v, e->grp, e->e.to_event, b, b->begin);
        if (ts[2 * i + 1] < ts[2 * i] && ts[2 * i] <= disp_end(b) - 1)
            ts[2 * i + 1] = ts[2 * i];
    }
    /* every start before every end: at equal timestamps the file order holds */
    for (size_t i = 0; i < v->elen; i++) {
        const query_view_edge *e = &v->edges[i];
        flow(f, 's', i + 1, db_edge_kind_name(e->e.kind), ts[2 * i],
             &t[query_view_find(v, e->grp, e->e.from)->track]);
    }
    for (size_t i = 0; i < v->elen; i++) {
        const query_view_edge *e = &v->edges[i];
        flow(f, 'f', i + 1, db_edge_kind_name(e->e.kind), ts[2 * i + 1],
             &t[query_view_find(v, e->grp, e->e.to)->track]);
    }
    fputs("\n]}\n", f);
    free(ts);
    free(t);
    return 0;
}
