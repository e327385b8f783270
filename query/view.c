/* query/view.c -- nodes and edges drawn whole: the view a statement that
 * returns nodes collects, printed as Graphviz DOT (nodes grouped by
 * process, labelled with thread, time span and telling events, edges
 * styled by kind), as SVG (that DOT through Graphviz's `dot -Tsvg`), or as
 * Chrome JSON trace events (export_perfetto.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "query_int.h"

bool query_view_format(query_format f)
{
    return f == QUERY_FMT_DOT || f == QUERY_FMT_SVG || f == QUERY_FMT_PERFETTO;
}

void query_view_init(query_view *v) { memset(v, 0, sizeof *v); }

void query_view_free(query_view *v)
{
    free(v->nodes);
    free(v->edges);
    memset(v, 0, sizeof *v);
}

int query_view_group(query_view *v, db_reader *r, const char *role)
{
    for (int i = 0; i < v->ngrp; i++)
        if (v->r[i] == r)
            return i;
    if (v->ngrp == QUERY_VIEW_GROUPS)
        return -1;
    v->r[v->ngrp] = r;
    snprintf(v->role[v->ngrp], sizeof v->role[0], "%s", role ? role : "");
    return v->ngrp++;
}

void query_view_add_node(query_view *v, int grp, const db_node *n, bool start)
{
    if (grp < 0 || v->oom)
        return;
    if (!query_grow((void **)&v->nodes, &v->cap, v->len + 1, sizeof *v->nodes)) {
        v->oom = true;
        return;
    }
    v->nodes[v->len++] = (query_view_node){.n = *n, .grp = (uint8_t)grp, .start = start};
    v->sorted = false;
}

void query_view_add_edge(query_view *v, int grp, const db_edge *e)
{
    if (grp < 0 || v->oom)
        return;
    if (!query_grow((void **)&v->edges, &v->ecap, v->elen + 1, sizeof *v->edges)) {
        v->oom = true;
        return;
    }
    v->edges[v->elen++] = (query_view_edge){.e = *e, .grp = (uint8_t)grp};
    v->sorted = false;
}

void query_view_add_path(query_view *v, int grp, const query_path *p)
{
    for (size_t i = 0; p && i < p->len; i++)
        query_view_add_node(v, grp, &p->items[i].node, i == 0);
    for (size_t i = 0; p && i < p->elen; i++)
        query_view_add_edge(v, grp, &p->edges[i]);
}

int query_view_paths(query_session *s, db_reader *ra, const query_path *anomaly, db_reader *rn,
                     const query_path *normal, bool same, const query_cp *cp, query_error *err)
{
    query_view v;
    query_view_init(&v);
    int ga = query_view_group(&v, ra, "anomaly");
    v.cp = cp;
    v.cp_grp = ga;
    query_view_add_path(&v, ga, anomaly);
    if (rn) {
        /* the same trace (read twice) is one group */
        query_view_add_path(&v, same ? ga : query_view_group(&v, rn, "normal"), normal);
    }
    int rc = query_view_print(s, &v, err);
    query_view_free(&v);
    return rc;
}

/* ---- sorting and merging ---- */

static int node_cmp(const void *a, const void *b)
{
    const query_view_node *x = a, *y = b;
    if (x->grp != y->grp)
        return x->grp < y->grp ? -1 : 1;
    return (x->n.id > y->n.id) - (x->n.id < y->n.id);
}

static int edge_cmp(const void *a, const void *b)
{
    const query_view_edge *x = a, *y = b;
    if (x->grp != y->grp)
        return x->grp < y->grp ? -1 : 1;
    if (x->e.from != y->e.from)
        return x->e.from < y->e.from ? -1 : 1;
    if (x->e.to != y->e.to)
        return x->e.to < y->e.to ? -1 : 1;
    if (x->e.kind != y->e.kind)
        return x->e.kind < y->e.kind ? -1 : 1;
    return (x->e.from_event > y->e.from_event) - (x->e.from_event < y->e.from_event);
}

void query_view_sort(query_view *v)
{
    if (v->sorted)
        return;
    if (v->len) /* qsort and bsearch want a non-null array */
        qsort(v->nodes, v->len, sizeof *v->nodes, node_cmp);
    size_t k = 0;
    for (size_t i = 0; i < v->len; i++) {
        if (k && node_cmp(&v->nodes[k - 1], &v->nodes[i]) == 0)
            v->nodes[k - 1].start |= v->nodes[i].start;
        else
            v->nodes[k++] = v->nodes[i];
    }
    v->len = k;
    if (v->elen)
        qsort(v->edges, v->elen, sizeof *v->edges, edge_cmp);
    k = 0;
    for (size_t i = 0; i < v->elen; i++) {
        /* an edge is drawn only between nodes of the view */
        if (!query_view_find(v, v->edges[i].grp, v->edges[i].e.from) ||
            !query_view_find(v, v->edges[i].grp, v->edges[i].e.to))
            continue;
        if (!k || edge_cmp(&v->edges[k - 1], &v->edges[i]) != 0)
            v->edges[k++] = v->edges[i];
    }
    v->elen = k;
    v->sorted = true;
}

const query_view_node *query_view_find(const query_view *v, int grp, uint32_t id)
{
    query_view_node key = {.grp = (uint8_t)grp};
    key.n.id = id;
    if (!v->len)
        return NULL;
    return bsearch(&key, v->nodes, v->len, sizeof *v->nodes, node_cmp);
}

/* ---- telling events ---- */

/* What a normalized event says about why a node ran or waited, most
 * telling first: waits and wakeups, messages, timers, callouts, flags,
 * then system calls. */
static int tell_rank(const char *t)
{
    static const char *const order[] = {"wait", "wakeup", "mach_msg", "timer_arm", "timer_cancel",
                                        "timer_callout", "dispatch", "runloop", "flag", "interrupt",
                                        "voucher", "nsapp", "syscall"};
    size_t n = sizeof order / sizeof order[0];
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(order[i]);
        if (strncmp(t, order[i], l) == 0 && (t[l] == ':' || t[l] == '_' || t[l] == 0))
            return (int)i;
    }
    return (int)n;
}

static int tell_cmp(const void *a, const void *b)
{
    const char *x = a, *y = b;
    int rx = tell_rank(x), ry = tell_rank(y);
    return rx != ry ? rx - ry : strcmp(x, y);
}

int query_view_telling(const query_view *v, const query_view_node *n, char (*out)[64], int most)
{
    db_sig sig;
    db_error de;
    db_reader *r = v->r[n->grp];
    if (!r || most <= 0 || db_get_sig(r, n->n.id, &sig, &de) != 1)
        return 0;
    char texts[DB_SIG_MAX][64];
    int k = 0;
    for (uint32_t i = 0; i < sig.n && i < DB_SIG_MAX; i++)
        if (db_norm_text(r, sig.h[i], texts[k], sizeof texts[0], &de) == 1)
            k++;
    qsort(texts, (size_t)k, sizeof texts[0], tell_cmp);
    int m = k < most ? k : most;
    for (int i = 0; i < m; i++)
        memcpy(out[i], texts[i], sizeof texts[0]);
    return m;
}

/* ---- DOT ---- */

static void dot_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

static void dot_id(FILE *f, const query_view_node *n)
{
    if (n->grp)
        fprintf(f, "g%un%" PRIu32, n->grp, n->n.id);
    else
        fprintf(f, "n%" PRIu32, n->n.id);
}

static const char *kind_fill(int kind)
{
    switch (kind) {
    case DB_NODE_THREAD: return "white";
    case DB_NODE_DISPATCH:
    case DB_NODE_RUNLOOP:
    case DB_NODE_SERVICE: return "#e7f0fb"; /* callouts on the thread */
    default: return "#fdf1dc";              /* isolated contexts: irq, softirq, timer */
    }
}

static void dot_node(FILE *f, const query_view *v, const query_view_node *vn)
{
    const db_node *n = &vn->n;
    char b[32], d[32], bl[32], tell[4][64];
    query_fmt_ts(b, sizeof b, n->begin);
    query_fmt_duration(d, sizeof d, n->end - n->begin);
    query_fmt_duration(bl, sizeof bl, n->blocked);
    fputs("    ", f);
    dot_id(f, vn);
    fprintf(f, " [label=\"#%" PRIu32 " ", n->id);
    dot_str(f, n->thread);
    fprintf(f, " (%" PRIu32 ")\\n%s  %s +%s", n->tid, db_node_kind_name(n->kind), b, d);
    if (n->blocked)
        fprintf(f, "\\nblocked %s", bl);
    int k = query_view_telling(v, vn, tell, 4);
    for (int i = 0; i < k; i++) { /* two to a line */
        fputs(i == 0 ? "\\n" : i % 2 ? ", " : ",\\n", f);
        dot_str(f, tell[i]);
    }
    fprintf(f, "\", fillcolor=\"%s\"%s];\n", kind_fill(n->kind),
            vn->start ? ", color=red, penwidth=2.5, fontcolor=red" : "");
}

/* Edge styles by kind: what connected two nodes shows at a glance. */
static const char *edge_style(int kind)
{
    switch (kind) {
    case DB_EDGE_WAKEUP: return "color=\"#1c5fb8\"";
    case DB_EDGE_WEAK: return "style=dashed, color=gray55, fontcolor=gray45";
    case DB_EDGE_IPC: return "style=bold, color=\"#7b2cbf\", fontcolor=\"#7b2cbf\"";
    case DB_EDGE_IPC_REPLY: return "style=\"bold,dashed\", color=\"#7b2cbf\", fontcolor=\"#7b2cbf\"";
    case DB_EDGE_DISPATCH: return "color=\"#2b8a3e\", fontcolor=\"#2b8a3e\"";
    case DB_EDGE_RUNLOOP: return "style=dashed, color=\"#2b8a3e\", fontcolor=\"#2b8a3e\"";
    case DB_EDGE_TIMER: return "style=dotted, penwidth=2, color=\"#d9480f\", fontcolor=\"#d9480f\"";
    case DB_EDGE_FLAG: return "color=\"#c2255c\", fontcolor=\"#c2255c\"";
    default: return "style=bold";
    }
}

/* The node an end of an edge is drawn as: its fold's, if folded. */
static size_t drawn_as(const query_view *v, const query_view_node *n)
{
    size_t i = (size_t)(n - v->nodes);
    return n->fold_rep ? n->fold_rep - 1 : i;
}

typedef struct dot_edge {
    size_t from, to; /* indexes of the nodes drawn */
    int kind;
} dot_edge;

static int dot_edge_cmp(const void *a, const void *b)
{
    const dot_edge *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    return (x->kind > y->kind) - (x->kind < y->kind);
}

/* The style of a bundle of edges: its first kind that is neither weak nor
 * a preemption (what connected the two), else a preemption, else weak. */
static int bundle_kind(const dot_edge *e, size_t n)
{
    int k = e[0].kind;
    for (size_t i = 0; i < n; i++) {
        if (e[i].kind != DB_EDGE_WEAK && e[i].kind != DB_EDGE_PREEMPT)
            return e[i].kind;
        if (e[i].kind == DB_EDGE_PREEMPT)
            k = DB_EDGE_PREEMPT;
    }
    return k;
}

/* One arrow per pair of nodes drawn: edges of several kinds between the
 * same two ("preempt + wakeup"), or of one kind several times ("wakeup
 * x2"), were drawn on top of each other with their labels overprinted. */
static void dot_edges(FILE *f, query_view *v)
{
    dot_edge *d = malloc((v->elen ? v->elen : 1) * sizeof *d);
    if (!d) {
        v->oom = true;
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < v->elen; i++) {
        const query_view_edge *e = &v->edges[i];
        const query_view_node *a = query_view_find(v, e->grp, e->e.from), *b = query_view_find(v, e->grp, e->e.to);
        size_t x = drawn_as(v, a), y = drawn_as(v, b);
        if (x != y) /* inside a fold */
            d[n++] = (dot_edge){x, y, e->e.kind};
    }
    if (n)
        qsort(d, n, sizeof *d, dot_edge_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && d[j].from == d[i].from && d[j].to == d[i].to)
            j++;
        fputs("  ", f);
        dot_id(f, &v->nodes[d[i].from]);
        fputs(" -> ", f);
        dot_id(f, &v->nodes[d[i].to]);
        fputs(" [label=\"", f);
        for (size_t k = i; k < j;) {
            size_t m = k;
            while (m < j && d[m].kind == d[k].kind)
                m++;
            fprintf(f, "%s%s", k > i ? " + " : "", db_edge_kind_name(d[k].kind));
            if (m - k > 1)
                fprintf(f, " x%zu", m - k);
            k = m;
        }
        fprintf(f, "\", %s];\n", edge_style(bundle_kind(d + i, j - i)));
        i = j;
    }
    free(d);
}

/* A fold: the repetitions it stands for, between the first and the last
 * drawn beside it. */
static void dot_fold(FILE *f, const query_view *v, const query_view_node *vn)
{
    char b[32], d[32];
    query_fmt_ts(b, sizeof b, vn->n.begin);
    query_fmt_duration(d, sizeof d, vn->fold_end - vn->n.begin);
    fputs("    ", f);
    dot_id(f, vn);
    fprintf(f, " [label=\"%" PRIu32 " more x (", vn->fold_n);
    /* the pattern: the fold's first fold_len nodes, in order along the chain */
    const query_view_node *x = vn;
    for (uint8_t i = 0; i < vn->fold_len; i++) {
        if (i)
            fputs(" -> ", f);
        dot_str(f, x->n.thread);
        const query_view_node *next = NULL;
        for (size_t k = 0; k < v->elen && !next; k++)
            if (v->edges[k].grp == x->grp && v->edges[k].e.from == x->n.id) {
                const query_view_node *t = query_view_find(v, x->grp, v->edges[k].e.to);
                if (t && t->fold_rep == vn->fold_rep)
                    next = t;
            }
        if (!next)
            break;
        x = next;
    }
    fprintf(f, ")\\nfolded: %s  %s +%s\", style=\"rounded,dashed,filled\", fillcolor=\"#eeeeee\"];\n",
            db_node_kind_name(vn->n.kind), b, d);
}

static int by_process(const void *a, const void *b, void *ctx)
{
    const query_view_node *nodes = ctx, *x = &nodes[*(const size_t *)a], *y = &nodes[*(const size_t *)b];
    if (x->grp != y->grp)
        return x->grp < y->grp ? -1 : 1;
    if (x->n.pid != y->n.pid)
        return x->n.pid < y->n.pid ? -1 : 1;
    if (x->n.begin != y->n.begin)
        return x->n.begin < y->n.begin ? -1 : 1;
    return (x->n.id > y->n.id) - (x->n.id < y->n.id);
}

static void dot_print(FILE *f, query_view *v)
{
    query_view_sort(v);
    if (query_view_fold(v)) {
        v->oom = true;
        return;
    }
    fputs("digraph argusq {\n  rankdir=LR;\n  newrank=true;\n"
          "  node [shape=box, style=\"rounded,filled\", fontname=\"monospace\", fontsize=10];\n"
          "  edge [fontname=\"monospace\", fontsize=9];\n",
          f);
    /* one cluster per process (of each trace), its nodes in time order,
     * named by the process name of its first node */
    size_t *ix = malloc((v->len ? v->len : 1) * sizeof *ix);
    if (!ix) {
        v->oom = true;
        return;
    }
    for (size_t i = 0; i < v->len; i++)
        ix[i] = i;
    qsort_r(ix, v->len, sizeof *ix, by_process, v->nodes);
    for (size_t i = 0; i < v->len;) {
        const query_view_node *first = &v->nodes[ix[i]];
        fprintf(f, "  subgraph cluster_%u_%" PRIu32 " {\n    label=\"", first->grp, first->n.pid);
        if (v->ngrp > 1 && v->role[first->grp][0]) {
            dot_str(f, v->role[first->grp]);
            fputs(": ", f);
        }
        dot_str(f, first->n.proc);
        fprintf(f, " (pid %" PRIu32 ")\";\n    style=\"rounded,filled\"; fillcolor=\"#f5f5f5\"; color=\"#a0a0a0\";\n"
                   "    fontname=\"monospace\"; fontsize=11;\n",
                first->n.pid);
        size_t j = i;
        for (; j < v->len && v->nodes[ix[j]].grp == first->grp && v->nodes[ix[j]].n.pid == first->n.pid; j++) {
            const query_view_node *n = &v->nodes[ix[j]];
            if (!n->fold_rep)
                dot_node(f, v, n);
        }
        fputs("  }\n", f);
        i = j;
    }
    free(ix);
    /* a fold spans the processes of its pattern: outside their boxes (one
     * whose nodes are all folded is empty, and Graphviz leaves it out) */
    for (size_t i = 0; i < v->len; i++)
        if (v->nodes[i].fold_rep == i + 1)
            dot_fold(f, v, &v->nodes[i]);
    dot_edges(f, v);
    fputs("}\n", f);
}

/* ---- SVG: the DOT through Graphviz ---- */

static bool on_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        char buf[4096];
        if (n < sizeof buf - strlen(prog) - 2) {
            snprintf(buf, sizeof buf, "%.*s/%s", (int)n, n ? path : ".", prog);
            if (access(buf, X_OK) == 0)
                return true;
        }
        path += n + (path[n] == ':');
    }
    return false;
}

int query_need_dot(query_error *err)
{
    if (on_path("dot"))
        return 0;
    return query_fail(err, NULL,
                      "--format svg needs Graphviz's `dot` on PATH (install graphviz, e.g. apt-get install "
                      "graphviz), or use --format dot");
}

/* Writes dot[0..len) into fd and, when from >= 0, copies what comes out
 * of from into out, until both are done: dot may write before it has read
 * all its input, so neither pipe may wait for the other.  SIGPIPE (dot
 * gone early) is blocked in this thread and taken back, so that a library
 * caller is not killed: the write fails with EPIPE and dot's status says
 * what happened.  0, or the errno of a failed poll. */
static int svg_pump(int fd, const char *dot, size_t len, int from, FILE *out)
{
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE);
    size_t done = 0;
    int rc = 0;
    if (len == 0)
        close(fd), fd = -1;
    while (fd >= 0 || from >= 0) {
        struct pollfd p[2] = {{.fd = fd, .events = POLLOUT}, {.fd = from, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            rc = errno;
            break;
        }
        if (fd >= 0 && p[0].revents) {
            ssize_t n = write(fd, dot + done, len - done);
            if (n < 0 && errno != EINTR && errno != EAGAIN) {
                close(fd), fd = -1; /* dot went away: its exit status tells */
            } else if (n > 0 && (done += (size_t)n) == len)
                close(fd), fd = -1;
        }
        if (from >= 0 && p[1].revents) {
            char buf[65536];
            ssize_t n = read(from, buf, sizeof buf);
            if (n > 0)
                fwrite(buf, 1, (size_t)n, out);
            else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                close(from), from = -1;
        }
    }
    if (fd >= 0)
        close(fd);
    if (from >= 0)
        close(from);
    if (!was_pending) {
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE)) {
            struct timespec zero = {0, 0};
            sigtimedwait(&pipe_set, NULL, &zero);
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* Runs `dot -Tsvg` on the DOT of v: its output goes straight to out's file
 * descriptor when out has one (argusq's stdout), else (libargusq's memory
 * and callback streams) through a pipe into out. */
static int svg_print(FILE *out, query_view *v, query_error *err)
{
    if (query_need_dot(err))
        return -1;
    char *dot = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&dot, &len);
    if (!m)
        return query_fail(err, NULL, "out of memory");
    dot_print(m, v);
    if (fclose(m) != 0) {
        free(dot);
        return query_fail(err, NULL, "out of memory");
    }
    fflush(out);
    int direct = fileno(out);
    int in[2], back[2] = {-1, -1};
    if (pipe2(in, O_CLOEXEC) < 0 || (direct < 0 && pipe2(back, O_CLOEXEC) < 0)) {
        free(dot);
        return query_fail(err, NULL, "pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(in[0]);
        close(in[1]);
        if (back[0] >= 0)
            close(back[0]), close(back[1]);
        free(dot);
        return query_fail(err, NULL, "fork: %s", strerror(errno));
    }
    if (pid == 0) { /* dup2 leaves the copies without O_CLOEXEC */
        if (dup2(in[0], 0) < 0 || dup2(direct >= 0 ? direct : back[1], 1) < 0)
            _exit(127);
        execlp("dot", "dot", "-Tsvg", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    if (back[1] >= 0)
        close(back[1]);
    /* a blocking write of the whole DOT would wait for dot, which may be
     * waiting for us to read its output */
    fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
    int rc = svg_pump(in[1], dot, len, back[0], out);
    free(dot);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return query_fail(err, NULL, "waitpid: %s", strerror(errno));
    if (rc)
        return query_fail(err, NULL, "dot -Tsvg: %s", strerror(rc));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return query_fail(err, NULL, "dot -Tsvg failed (exit status %d)",
                          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

int query_view_print(query_session *s, query_view *v, query_error *err)
{
    if (v->oom)
        return query_fail(err, NULL, "out of memory");
    int rc = 0;
    db_error de = {0};
    if (s->format == QUERY_FMT_SVG)
        rc = svg_print(s->out, v, err);
    else if (s->format == QUERY_FMT_PERFETTO) {
        if (query_perfetto_print(s->out, v, &de))
            rc = query_fail(err, NULL, "%s", de.msg);
    } else
        dot_print(s->out, v);
    if (!rc && v->oom)
        rc = query_fail(err, NULL, "out of memory");
    return rc;
}
