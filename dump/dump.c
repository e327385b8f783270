/* dump/dump.c -- `argusq dump`: a committed trace back out as an
 * Argus trace with argusq's dump extensions (docs/ARGUS-DUMP.md), which
 * `argusq ingest` reads into the same events, nodes and edges.  In
 * babeltrace's words a sink, with the archive's reader as its source.
 *
 * What comes out, in this order:
 *   #argus-trace 1, a comment, the `dump` record (format, name, source,
 *   the number of events), the labels, the user rules, the symbols;
 *   then the events in id order, each thread and process declared before
 *   its first event and again where the trace renamed or moved it;
 *   last, every thread and process as the trace left them.
 *
 * The archive keeps each thread's and process's latest name only; the
 * names they had before are in the nodes (a node takes its thread's and
 * process's names as they stood at its first event, graph/build.c).  So a
 * declaration goes out before a node's first event whose names differ
 * from the declared ones: ingesting the dump, the graph finds the names
 * the original ingest found there.
 *
 * Memory: the trace's thread and process tables (sorted arrays), one line
 * buffer, one node; never the events. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "ingest/ingest.h"

/* one thread or process: as the trace left it, and as last declared */
typedef struct dump_ent {
    uint32_t id;
    uint32_t pid, flags;      /* threads: the final process and flags */
    char name[DB_NAME_MAX];   /* the final name */
    bool in_table;            /* the trace's table has it (else only events do) */
    bool declared;
    uint32_t decl_pid;
    char decl[DB_NAME_MAX];   /* the name last declared */
} dump_ent;

typedef struct dump_tab {
    dump_ent *v;
    size_t n, cap;
} dump_tab;

typedef struct dump_state {
    db_archive *a;
    db_reader *r;
    FILE *out;
    char *line; /* the line being written */
    size_t len, cap;
    bool oom;
    dump_tab threads, procs;
    db_node node; /* the node of the last event looked up */
    bool have_node;
    dump_stats *st;
    db_error *de;
} dump_state;

/* ---- the line buffer ---- */

static void put(dump_state *d, const char *p, size_t n)
{
    if (d->len + n + 1 > d->cap) {
        size_t cap = d->cap ? d->cap : 4096;
        while (d->len + n + 1 > cap)
            cap *= 2;
        char *l = realloc(d->line, cap);
        if (!l) {
            d->oom = true;
            return;
        }
        d->line = l;
        d->cap = cap;
    }
    memcpy(d->line + d->len, p, n);
    d->len += n;
}

static void puts_(dump_state *d, const char *s) { put(d, s, strlen(s)); }

static void put_u64(dump_state *d, uint64_t v)
{
    char b[24];
    put(d, b, base_fmt_u64(b, v));
}

static void put_i64(dump_state *d, int64_t v)
{
    char b[24];
    put(d, b, base_fmt_i64(b, v));
}

static void put_hex(dump_state *d, uint64_t v)
{
    char b[18] = "0x";
    put(d, b, 2 + base_fmt_hex(b + 2, v, 1));
}

/* A quoted string: \" \\ \n \t \r, and \xHH for other control bytes
 * (docs/ARGUS-DUMP.md, "Strings"); other bytes as they are. */
static void put_quoted(dump_state *d, const char *s, size_t n)
{
    put(d, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[4] = {'\\', 0, 0, 0};
        size_t en = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\t': esc[1] = 't'; break;
        case '\r': esc[1] = 'r'; break;
        default:
            if (c >= 0x20 && c != 0x7f) {
                put(d, s + i, 1);
                continue;
            }
            esc[1] = 'x';
            base_fmt_hex(esc + 2, c, 2);
            en = 4;
        }
        put(d, esc, en);
    }
    put(d, "\"", 1);
}

/* Would the scanner read [s, s+n) back as one number token too big for
 * 64 bits (argus_lex.re)?  Such a value must be quoted. */
static bool long_number(const char *s, size_t n)
{
    size_t i = s[0] == '-';
    bool hex = n > i + 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X');
    size_t digits = 0;
    for (i += hex ? 2 : 0; i < n; i++, digits++)
        if (!(hex ? (s[i] >= '0' && s[i] <= '9') || ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'f')
                  : (s[i] >= '0' && s[i] <= '9')))
            return false;
    return digits > (hex ? 15u : 18u);
}

/* A value as the dump reader takes it back byte for byte: a bare word
 * when it is one (printable, no blank, '"' or '\'), else quoted. */
static void put_value(dump_state *d, const char *s, size_t n)
{
    bool bare = n > 0 && !long_number(s, n);
    for (size_t i = 0; bare && i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bare = c > 0x20 && c < 0x7f && c != '"' && c != '\\';
    }
    if (bare)
        put(d, s, n);
    else
        put_quoted(d, s, n);
}

static bool alpha_(char c) { return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_'; }

/* KEY of a KEY=VALUE the scanner reads as one: [A-Za-z_][A-Za-z0-9_]* */
static bool plain_key(const char *s, size_t n)
{
    if (n == 0 || !alpha_(s[0]))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!alpha_(s[i]) && !(s[i] >= '0' && s[i] <= '9'))
            return false;
    return true;
}

static int write_error(db_error *de)
{
    snprintf(de->msg, sizeof de->msg, "write error: %s", strerror(errno));
    return -1;
}

static int end_line(dump_state *d)
{
    put(d, "\n", 1);
    if (d->oom)
        return db_fail_oom(d->de);
    if (fwrite(d->line, 1, d->len, d->out) != d->len)
        return write_error(d->de);
    d->len = 0;
    return 0;
}

/* ---- threads and processes ---- */

static dump_ent *tab_add(dump_tab *t, uint32_t id)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        dump_ent *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return NULL;
        t->v = v;
        t->cap = cap;
    }
    size_t at = t->n;
    while (at > 0 && t->v[at - 1].id > id) /* kept sorted: scans come in id order */
        at--;
    memmove(t->v + at + 1, t->v + at, (t->n - at) * sizeof *t->v);
    t->n++;
    memset(&t->v[at], 0, sizeof t->v[at]);
    t->v[at].id = id;
    return &t->v[at];
}

static dump_ent *tab_find(dump_tab *t, uint32_t id)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].id == id)
            return &t->v[mid];
        if (t->v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The entry of id, added (nameless) if the table has none: an event of a
 * thread the table does not hold cannot come from our readers, but the
 * dump must still declare it. */
static dump_ent *tab_get(dump_state *d, dump_tab *t, uint32_t id)
{
    dump_ent *e = tab_find(t, id);
    if (!e && !(e = tab_add(t, id)))
        db_fail_oom(d->de);
    return e;
}

static int thread_one(void *p, const db_thread *t)
{
    dump_state *d = p;
    dump_ent *e = tab_add(&d->threads, t->tid);
    if (!e)
        return db_fail_oom(d->de);
    e->in_table = true;
    e->pid = t->pid;
    e->flags = t->flags;
    snprintf(e->name, sizeof e->name, "%s", t->name);
    return 0;
}

static int proc_one(void *p, uint64_t pid, const char *name)
{
    dump_state *d = p;
    dump_ent *e = tab_add(&d->procs, (uint32_t)pid);
    if (!e)
        return db_fail_oom(d->de);
    e->in_table = true;
    snprintf(e->name, sizeof e->name, "%s", name);
    return 0;
}

static int declare_proc(dump_state *d, dump_ent *p, const char *name)
{
    puts_(d, "proc ");
    put_u64(d, p->id);
    put(d, " ", 1);
    put_quoted(d, name, strlen(name));
    p->declared = true;
    snprintf(p->decl, sizeof p->decl, "%s", name);
    d->st->declarations++;
    return end_line(d);
}

static int declare_thread(dump_state *d, dump_ent *t, uint32_t pid, const char *name)
{
    puts_(d, "thread ");
    put_u64(d, pid);
    put(d, " ", 1);
    put_u64(d, t->id);
    put(d, " ", 1);
    put_quoted(d, name, strlen(name));
    if (t->flags & DB_THREAD_MAIN)
        puts_(d, " main");
    if (t->flags & DB_THREAD_RUNLOOP)
        puts_(d, " runloop");
    t->declared = true;
    t->decl_pid = pid;
    snprintf(t->decl, sizeof t->decl, "%s", name);
    d->st->declarations++;
    return end_line(d);
}

/* Declarations before ev: its process and thread as the original ingest
 * had them here (the names of the node ev begins, if it begins one). */
static int declare_for(dump_state *d, const db_event *ev)
{
    dump_ent *t = tab_get(d, &d->threads, ev->tid), *p = tab_get(d, &d->procs, ev->pid);
    if (!t || !p)
        return -1;
    const char *tname = t->declared ? t->decl : t->name, *pname = p->declared ? p->decl : p->name;
    if (ev->node && (!d->have_node || d->node.id != ev->node)) {
        int got = db_get_node(d->r, ev->node, &d->node, d->de);
        if (got < 0)
            return -1;
        d->have_node = got == 1;
    }
    if (ev->node && d->have_node && d->node.id == ev->node && d->node.first_event == ev->id) {
        /* an isolated context is named after itself, not its thread */
        if (!db_node_kind_isolated(d->node.kind) && d->node.tid == ev->tid)
            tname = d->node.thread;
        if (d->node.pid == ev->pid)
            pname = d->node.proc;
    }
    if (!p->declared || strcmp(p->decl, pname) != 0) {
        char name[DB_NAME_MAX];
        snprintf(name, sizeof name, "%s", pname); /* pname may be p->decl */
        if (declare_proc(d, p, name))
            return -1;
    }
    if (!t->declared || t->decl_pid != ev->pid || strcmp(t->decl, tname) != 0) {
        char name[DB_NAME_MAX];
        snprintf(name, sizeof name, "%s", tname);
        if (declare_thread(d, t, ev->pid, name))
            return -1;
    }
    return 0;
}

/* ---- events ---- */

static int event_one(void *p, const db_event *ev)
{
    dump_state *d = p;
    if (declare_for(d, ev))
        return -1;
    put_u64(d, ev->ts);
    put(d, " ", 1);
    put_u64(d, ev->tid);
    put(d, " ", 1);
    const char *tn = db_evtype_name(ev->type);
    puts_(d, tn);
    if (ev->phase) {
        bool msg = ev->type == DB_EV_MACH_MSG;
        puts_(d, ev->phase == DB_PH_BEGIN ? (msg ? " send" : " begin") : (msg ? " recv" : " end"));
    }
    if (strcmp(ev->name, tn) != 0) {
        puts_(d, " @name=");
        put_value(d, ev->name, strlen(ev->name));
    }
    if (ev->cpu != DB_CPU_NONE) {
        puts_(d, " @cpu=");
        put_u64(d, ev->cpu);
    }
    if (ev->ctx != DB_CTX_THREAD) {
        puts_(d, " @ctx=");
        puts_(d, ingest_argus_ctx_name(ev->ctx));
    }
    if (ev->obj) {
        puts_(d, " @obj=");
        if (db_evtype_obj_is_addr(ev->type) || ev->obj == UINT64_MAX)
            put_hex(d, ev->obj);
        else
            put_u64(d, ev->obj);
    }
    if (ev->val) {
        puts_(d, " @val=");
        put_i64(d, ev->val);
    }
    for (const char *a = ev->attrs, *end = ev->attrs + ev->attrs_len; a < end;) {
        size_t n = strnlen(a, (size_t)(end - a));
        const char *eq = memchr(a, '=', n);
        put(d, " ", 1);
        if (eq && plain_key(a, (size_t)(eq - a))) {
            put(d, a, (size_t)(eq - a) + 1);
            put_value(d, eq + 1, n - (size_t)(eq - a) - 1);
        } else { /* a key the scanner would not read as one: the whole string */
            puts_(d, "@attr=");
            put_quoted(d, a, n);
        }
        a += n + 1;
    }
    d->st->events++;
    return end_line(d);
}

/* ---- header ---- */

static int label_one(void *p, const char *key, const char *value, size_t len)
{
    dump_state *d = p;
    puts_(d, "label ");
    put_quoted(d, key, strlen(key));
    put(d, " ", 1);
    put_quoted(d, value, len);
    d->st->labels++;
    return end_line(d);
}

static int rule_one(void *p, uint32_t seq, const char *text)
{
    dump_state *d = p;
    (void)seq;
    puts_(d, "rule ");
    put_quoted(d, text, strlen(text));
    d->st->rules++;
    return end_line(d);
}

static int symbol_one(void *p, uint64_t addr, const char *name)
{
    dump_state *d = p;
    puts_(d, "symbol ");
    put_hex(d, addr);
    put(d, " ", 1);
    put_quoted(d, name, strlen(name));
    d->st->symbols++;
    return end_line(d);
}

static int header(dump_state *d, const db_trace_info *ti, const char *generator)
{
    puts_(d, "#argus-trace 1");
    if (end_line(d))
        return -1;
    puts_(d, "# ");
    puts_(d, generator ? generator : "argusq");
    puts_(d, " dump (docs/ARGUS-DUMP.md); `argusq ingest` reads it back");
    if (end_line(d))
        return -1;
    puts_(d, "dump format=");
    put_value(d, ti->format, strlen(ti->format));
    puts_(d, " name=");
    put_quoted(d, ti->name, strlen(ti->name));
    puts_(d, " source=");
    put_quoted(d, ti->source, strlen(ti->source));
    puts_(d, " ingested=");
    put_u64(d, ti->ingested_at);
    puts_(d, " events=");
    put_u64(d, ti->events);
    if (end_line(d))
        return -1;
    if (db_trace_labels(d->a, ti->id, label_one, d, d->de) || db_scan_rules(d->r, rule_one, d, d->de) ||
        db_scan_symbols(d->r, symbol_one, d, d->de))
        return -1;
    return 0;
}

/* The threads and processes as the trace left them: those never declared
 * (no event) and those whose last declaration differs. */
static int trailer(dump_state *d)
{
    for (size_t i = 0; i < d->procs.n; i++) {
        dump_ent *p = &d->procs.v[i];
        if (p->in_table && (!p->declared || strcmp(p->decl, p->name) != 0) && declare_proc(d, p, p->name))
            return -1;
    }
    for (size_t i = 0; i < d->threads.n; i++) {
        dump_ent *t = &d->threads.v[i];
        if (!t->in_table)
            continue;
        if ((!t->declared || t->decl_pid != t->pid || strcmp(t->decl, t->name) != 0) &&
            declare_thread(d, t, t->pid, t->name))
            return -1;
    }
    return 0;
}

int dump_trace(db_archive *a, const char *trace, FILE *out, const char *generator, dump_stats *st, db_error *de)
{
    memset(st, 0, sizeof *st);
    db_reader *r = db_reader_open(a, trace, de);
    if (!r)
        return -1;
    dump_state d = {.a = a, .r = r, .out = out, .st = st, .de = de};
    const db_trace_info *ti = db_reader_trace(r);
    int rc = db_scan_threads(r, thread_one, &d, de) || db_scan_procs(r, proc_one, &d, de) ||
             header(&d, ti, generator) || db_scan_events(r, event_one, &d, de) || trailer(&d);
    if (!rc && fflush(out) != 0)
        rc = write_error(de);
    free(d.line);
    free(d.threads.v);
    free(d.procs.v);
    db_reader_close(r);
    return rc ? -1 : 0;
}
