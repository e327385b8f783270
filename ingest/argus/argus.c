/* ingest/argus/argus.c -- the Argus trace format reader (spec: "The Argus trace
 * format, version 1"): the line loop, the declarations, and the tid table.
 * Tokens come from argus_lex.re, each event's mapping from argus_event.c.
 *
 *   #argus-trace 1                               the first line, exactly
 *   proc PID "NAME"                              sink->proc (again: rename)
 *   thread PID TID "NAME" [main] [runloop]       sink->thread
 *   symbol ADDR "NAME"                           sink->symbol
 *   TS TID TYPE [WORD ...] [KEY=VALUE ...]       sink->event
 *
 * Sink call order: proc(pid) before the first thread() of pid (a thread
 * of an undeclared process declares it, named after the thread); thread()
 * before the first event() of tid; one event() per event line, in file
 * order; nothing for comments and blank lines.
 *
 * Memory: the line buffer, one attribute buffer reused for every event,
 * and the id table (an entry per thread and process id: pid, last
 * timestamp), which grows with the number of distinct ids only. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_int.h"

enum {
    A_THREAD = 2, /* declared as a thread (pid, ts, line valid) */
    A_PROC = 4,   /* declared as a process */
    A_EVENT = 8,  /* the thread had an event (ts, line valid) */
};

typedef struct argus_tent {
    uint32_t pid;
    uint32_t flags;
    uint64_t ts;   /* timestamp of the thread's latest event */
    uint64_t line; /* and its line */
} argus_tent;

typedef struct argus_reader {
    const char *path;
    const ingest_sink *sink;
    ingest_stats *st;
    char *err;
    size_t errlen;
    uint64_t lineno;
    argus_tent *tab; /* the ids' entries, in the order the ids came */
    size_t tcap, tused;
    base_map ids;    /* id -> its entry in tab */
    char *ab; /* the current event's attributes */
    size_t alen, acap;
    /* argusq's dump extensions (argus_restore.c) */
    bool dump;          /* the first record was `dump ...` */
    bool body;          /* a declaration or event was read */
    bool any_record;    /* a record was read (not a comment) */
    uint64_t want;      /* the events the dump record promised */
    bool have_want;
    char evname[256];   /* the current event's @name= */
} argus_reader;

static int fail(argus_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(argus_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ingest_vfail(r->err, r->errlen, r->path, r->lineno, fmt, ap);
    va_end(ap);
    return -1;
}

static int sink_failed(argus_reader *r)
{
    return ingest_sink_failed(r->err, r->errlen, r->path, r->lineno);
}

/* ---- id table ---- */

static argus_tent *tab_find(argus_reader *r, uint32_t id)
{
    uint32_t i;
    return base_map_get(&r->ids, id, &i) ? &r->tab[i] : NULL;
}

/* The entry of id, added if new (tab may move: a pointer into it taken
 * before is not used after). */
static argus_tent *tab_get(argus_reader *r, uint32_t id)
{
    argus_tent *t = tab_find(r, id);
    if (t)
        return t;
    if (!base_grow((void **)&r->tab, &r->tcap, r->tused + 1, sizeof *r->tab) ||
        base_map_put(&r->ids, id, (uint32_t)r->tused)) {
        fail(r, "out of memory (%zu threads)", r->tused);
        return NULL;
    }
    t = &r->tab[r->tused++];
    memset(t, 0, sizeof *t);
    return t;
}

/* ---- fields ---- */

/* An id (PID, TID) token: a number below 2^32. */
static bool tok_u32(const argus_tok *t, uint32_t *out)
{
    if (t->kind != ARGUS_TK_NUM || t->v.neg || t->v.num > UINT32_MAX)
        return false;
    *out = (uint32_t)t->v.num;
    return true;
}

/* The text of a token for a message. */
static int tok_len(const argus_tok *t)
{
    size_t n = strcspn(t->at, " \t");
    return n > 60 ? 60 : (int)n;
}

/* The quoted name of a declaration, unescaped in place: the token points
 * into the line, which is the reader's own, and the scanner is past it. */
static const char *tok_name(const argus_reader *r, char *line, const argus_tok *t)
{
    char *dst = line + (t->v.p - line);
    size_t n = r->dump ? ingest_argus_dump_text(&t->v, dst) : ingest_argus_val_text(&t->v, dst);
    dst[n] = '\0';
    return dst;
}

/* ---- declarations ---- */

static int emit_proc(argus_reader *r, uint32_t pid, const char *name)
{
    argus_tent *p = tab_get(r, pid);
    if (!p)
        return -1;
    p->flags |= A_PROC;
    if (r->sink->proc && r->sink->proc(r->sink->ctx, pid, name, r->err, r->errlen) != 0)
        return sink_failed(r);
    return 0;
}

/* proc PID "NAME" / thread PID TID "NAME" [main] [runloop] / symbol ADDR "NAME" */
static int declaration(argus_reader *r, char *line, const char *p, const char *what)
{
    argus_tok t;
    uint32_t pid = 0, tid = 0;
    uint64_t addr = 0;
    const char *form = what[0] == 'p'   ? "proc PID \"NAME\""
                       : what[0] == 't' ? "thread PID TID \"NAME\" [main] [runloop]"
                                        : "symbol ADDR \"NAME\"";
    argus_tk k = ingest_argus_lex(&p, &t);
    bool ok = what[0] == 's' ? k == ARGUS_TK_NUM && !t.v.neg : tok_u32(&t, &pid);
    addr = t.v.num;
    if (k == ARGUS_TK_ERR)
        return fail(r, "bad %s declaration: %s (want %s)", what, t.err, form);
    if (!ok)
        return fail(r, "bad %s declaration: bad %s \"%.*s\" (want %s)", what,
                    what[0] == 's' ? "address" : "pid", tok_len(&t), t.at, form);
    k = ingest_argus_lex(&p, &t);
    if (what[0] == 't') {
        if (k != ARGUS_TK_ERR && !tok_u32(&t, &tid))
            return fail(r, "bad thread declaration: bad tid \"%.*s\" (want %s)", tok_len(&t), t.at,
                        form);
        k = ingest_argus_lex(&p, &t);
    }
    if (k == ARGUS_TK_ERR)
        return fail(r, "bad %s declaration: %s (want %s)", what, t.err, form);
    if (k != ARGUS_TK_STR)
        return fail(r, "bad %s declaration: missing the quoted name (want %s)", what, form);
    argus_tok name = t;
    if (name.v.n > INGEST_NAME_MAX)
        return fail(r, "bad %s declaration: name too long (%zu bytes, at most %d)", what, name.v.n,
                    INGEST_NAME_MAX);
    db_thread th;
    memset(&th, 0, sizeof th);
    while ((k = ingest_argus_lex(&p, &t)) != ARGUS_TK_END) {
        if (k == ARGUS_TK_ERR)
            return fail(r, "bad %s declaration: %s (want %s)", what, t.err, form);
        if (what[0] == 't' && k == ARGUS_TK_WORD && t.v.n == 4 && memcmp(t.v.p, "main", 4) == 0)
            th.flags |= DB_THREAD_MAIN;
        else if (what[0] == 't' && k == ARGUS_TK_WORD && t.v.n == 7 &&
                 memcmp(t.v.p, "runloop", 7) == 0)
            th.flags |= DB_THREAD_RUNLOOP;
        else
            return fail(r, "bad %s declaration: unexpected \"%.*s\" (want %s)", what, tok_len(&t),
                        t.at, form);
    }
    const char *nm = tok_name(r, line, &name);
    if (what[0] == 'p')
        return emit_proc(r, pid, nm);
    if (what[0] == 's') {
        if (r->sink->symbol && r->sink->symbol(r->sink->ctx, addr, nm, r->err, r->errlen) != 0)
            return sink_failed(r);
        return 0;
    }
    /* a thread of a process never declared declares it, named after it */
    argus_tent *pe = tab_get(r, pid);
    if (!pe || (!(pe->flags & A_PROC) && emit_proc(r, pid, nm) < 0))
        return -1;
    argus_tent *te = tab_get(r, tid);
    if (!te)
        return -1;
    te->flags |= A_THREAD;
    te->pid = pid;
    th.tid = tid;
    th.pid = pid;
    snprintf(th.name, sizeof th.name, "%s", nm);
    if (r->sink->thread && r->sink->thread(r->sink->ctx, &th, r->err, r->errlen) != 0)
        return sink_failed(r);
    return 0;
}

/* ---- events ---- */

static int event(argus_reader *r, const char *p, const argus_tok *tst)
{
    argus_tok t;
    if (tst->v.neg)
        return fail(r, "bad timestamp \"%.*s\" (want nanoseconds)", tok_len(tst), tst->at);
    uint64_t ts = tst->v.num;
    uint32_t tid;
    argus_tk k = ingest_argus_lex(&p, &t);
    if (k == ARGUS_TK_ERR)
        return fail(r, "bad thread id: %s: %.40s", t.err, t.at);
    if (k == ARGUS_TK_END)
        return fail(r, "missing thread id and event type (want TS TID TYPE ...)");
    if (!tok_u32(&t, &tid))
        return fail(r, "bad thread id \"%.*s\" (want TS TID TYPE ...)", tok_len(&t), t.at);
    argus_tent *te = tab_find(r, tid);
    if (!te || !(te->flags & A_THREAD))
        return fail(r, "thread %lu is not declared", (unsigned long)tid);
    /* a dump keeps the order the archive had, whatever it was */
    if (!r->dump && (te->flags & A_EVENT) && ts < te->ts)
        return fail(r, "thread %lu: timestamp %llu is before %llu of line %llu", (unsigned long)tid,
                    (unsigned long long)ts, (unsigned long long)te->ts,
                    (unsigned long long)te->line);

    db_event ev;
    memset(&ev, 0, sizeof ev);
    ev.ts = ts;
    ev.tid = tid;
    ev.pid = te->pid;
    ev.cpu = DB_CPU_NONE;
    ev.ctx = DB_CTX_THREAD;
    r->alen = 0;
    argus_attrs at = {&r->ab, &r->alen, &r->acap};
    char msg[400];
    int rc = r->dump ? ingest_argus_dump_event(p, &at, &ev, r->evname, sizeof r->evname, msg, sizeof msg)
                     : ingest_argus_event(p, &at, &ev, msg, sizeof msg);
    if (rc < 0)
        return fail(r, "%s", msg);
    te->flags |= A_EVENT;
    te->ts = ts;
    te->line = r->lineno;
    ev.attrs = r->ab;
    ev.attrs_len = r->alen;
    if (r->sink->event && r->sink->event(r->sink->ctx, &ev, r->err, r->errlen) != 0)
        return sink_failed(r);
    r->st->events++;
    return 0;
}

/* ---- argusq's dump extensions (argus_restore.c) ---- */

/* `dump format=...`: the file is a dump (docs/ARGUS-DUMP.md) */
static int dump_record(argus_reader *r, const char *p, bool first)
{
    if (!first)
        return fail(r, "the dump record must be the first record of the file");
    ingest_dump_head h;
    char msg[400];
    if (ingest_argus_dump_record(p, &h, msg, sizeof msg) < 0)
        return fail(r, "%s", msg);
    r->dump = true;
    r->want = h.events;
    r->have_want = h.have_events;
    return 0;
}

/* label / rule: read before the ingest began (ingest_dump_head_read);
 * here they are only checked */
static int header_record(argus_reader *r, const char *p, const char *what)
{
    if (r->body)
        return fail(r, "%s records belong to the dump's header, before any declaration or event", what);
    char *a[2];
    char msg[400];
    int n = what[0] == 'l' ? 2 : 1;
    if (ingest_argus_dump_strings(p, what, a, n, msg, sizeof msg) < 0)
        return fail(r, "%s", msg);
    for (int i = 0; i < n; i++)
        free(a[i]);
    return 0;
}

static int do_line(argus_reader *r, char *line)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p || *p == '#') /* comments and blank lines */
        return 0;
    argus_tok t;
    argus_tk k = ingest_argus_lex(&p, &t);
    bool first = !r->any_record;
    r->any_record = true;
    if (k == ARGUS_TK_NUM) {
        r->body = true;
        return event(r, p, &t);
    }
    if (k == ARGUS_TK_ERR)
        return fail(r, "%s: %.40s", t.err, t.at);
    if (k == ARGUS_TK_WORD) {
        static const char *const decl[] = {"proc", "thread", "symbol"};
        for (int i = 0; i < 3; i++)
            if (strlen(decl[i]) == t.v.n && memcmp(decl[i], t.v.p, t.v.n) == 0) {
                r->body = true;
                return declaration(r, line, p, decl[i]);
            }
        if (t.v.n == 4 && memcmp(t.v.p, "dump", 4) == 0)
            return dump_record(r, p, first);
        if (r->dump && ((t.v.n == 5 && memcmp(t.v.p, "label", 5) == 0) ||
                        (t.v.n == 4 && memcmp(t.v.p, "rule", 4) == 0)))
            return header_record(r, p, t.v.n == 5 ? "label" : "rule");
        if (t.v.p[0] >= '0' && t.v.p[0] <= '9')
            return fail(r, "bad timestamp \"%.*s\" (want nanoseconds)", tok_len(&t), t.at);
    }
    return fail(r, "unknown record \"%.*s\" (want proc, thread, symbol or TS TID TYPE ...%s)",
                tok_len(&t), t.at, r->dump ? "; label and rule in the header" : "");
}

/* a line of the trace; the first is its header */
static int argus_line(void *reader, char *line, size_t len)
{
    argus_reader *r = reader;
    (void)len;
    if (r->lineno == 1) {
        if (strcmp(line, "#argus-trace 1") != 0)
            return fail(r, "the first line must be exactly \"#argus-trace 1\", not \"%.40s\"", line);
        return 0;
    }
    return do_line(r, line);
}

int ingest_argus_read(ingest_lines *lb, const ingest_sink *sink, ingest_stats *st, char *err,
                      size_t errlen)
{
    argus_reader r;
    memset(&r, 0, sizeof r);
    r.path = lb->path;
    r.sink = sink;
    r.st = st;
    r.err = err;
    r.errlen = errlen;
    int rc = ingest_lines_each(&(ingest_line_loop){.lb = lb, .st = st, .lineno = &r.lineno,
                                                    .line = argus_line, .reader = &r},
                                err, errlen);
    if (rc == 0 && r.dump && r.have_want && st->events != r.want)
        rc = fail(&r, "the dump holds %llu events, its dump record says %llu: the file is cut short or was edited",
                  (unsigned long long)st->events, (unsigned long long)r.want);
    free(r.tab);
    base_map_free(&r.ids);
    free(r.ab);
    return rc;
}
