/* query/fields.c -- the fields of nodes and events, and evaluation of a
 * `where` expression on one row. */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "query_int.h"

/* ---- node fields ---- */
enum { NF_ID, NF_TID, NF_PID, NF_PROC, NF_THREAD, NF_BEGIN, NF_END, NF_DURATION, NF_BLOCKED,
       NF_EVENTS, NF_KIND, NF_CPU, NF_RUNNING, NF_RUNNABLE, NF__COUNT };
static const char *const node_fields[NF__COUNT] = {
    "id", "tid", "pid", "proc", "thread", "begin", "end", "duration", "blocked", "events", "kind", "cpu",
    "running", "runnable",
};

/* ---- event fields that are not attributes ---- */
enum { EF_ID, EF_TS, EF_TID, EF_PID, EF_TYPE, EF_NODE, EF_EVENT, EF_CPU, EF_PHASE, EF__COUNT };
static const char *const event_fields[EF__COUNT] = {
    "id", "ts", "tid", "pid", "type", "node", "event", "cpu", "phase",
};

static int field_index(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(names[i], s) == 0)
            return i;
    return -1;
}

bool query_event_is_fixed_field(const char *name)
{
    return field_index(event_fields, EF__COUNT, name) >= 0;
}

const char *query_event_phase(const db_event *ev)
{
    if (ev->phase == DB_PH_NONE)
        return NULL;
    if (ev->type == DB_EV_MACH_MSG)
        return ev->phase == DB_PH_BEGIN ? "send" : "recv";
    return ev->phase == DB_PH_BEGIN ? "begin" : "end";
}

int query_fail(query_error *err, const query_pos *pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->line = pos ? pos->line : 0;
    err->col = pos ? pos->col : 0;
    err->offset = pos ? pos->offset : 0;
    return -1;
}

/* ---- edge fields ---- */
enum { GF_FROM, GF_TO, GF_KIND, GF_FROM_EVENT, GF_TO_EVENT, GF__COUNT };
static const char *const edge_fields[GF__COUNT] = {"from", "to", "kind", "from_event", "to_event"};

static query_val edge_field(const db_edge *e, const char *name)
{
    switch (field_index(edge_fields, GF__COUNT, name)) {
    case GF_FROM: return (query_val){.t = QV_NUM, .mag = e->from};
    case GF_TO: return (query_val){.t = QV_NUM, .mag = e->to};
    case GF_KIND: {
        const char *k = db_edge_kind_name(e->kind);
        return (query_val){.t = QV_STR, .s = k, .n = strlen(k)};
    }
    case GF_FROM_EVENT: return (query_val){.t = QV_NUM, .mag = e->from_event};
    case GF_TO_EVENT: return (query_val){.t = QV_NUM, .mag = e->to_event};
    default: return (query_val){0};
    }
}

/* ---- trace fields (traces where) ---- */
enum { TF_NAME, TF_EVENTS, TF_NODES, TF_EDGES, TF_THREADS, TF_PROCESSES, TF_SKIPPED, TF_SPAN, TF_FIRST_TS,
       TF_LAST_TS, TF_INGESTED_AT, TF_FORMAT, TF_SOURCE, TF__COUNT };
static const char *const trace_fields[TF__COUNT] = {
    "name", "events", "nodes", "edges", "threads", "processes", "skipped", "span", "first_ts", "last_ts",
    "ingested_at", "format", "source",
};

void query_fields_words(query_words *ws)
{
    for (int i = 0; i < NF__COUNT; i++)
        query_words_add(ws, node_fields[i]);
    for (int i = 0; i < EF__COUNT; i++)
        query_words_add(ws, event_fields[i]);
    for (int i = 0; i < GF__COUNT; i++)
        query_words_add(ws, edge_fields[i]);
    for (int i = 0; i < TF__COUNT; i++)
        query_words_add(ws, trace_fields[i]);
}

static bool is_label_field(const char *name)
{
    return strncasecmp(name, "label.", 6) == 0 && name[6];
}

/* The edit distance of a and b (case ignored), up to 3: a typo's. */
static int distance(const char *a, const char *b)
{
    size_t n = strlen(b);
    if (n > 31 || strlen(a) > 31)
        return 3;
    int row[32];
    for (size_t j = 0; j <= n; j++)
        row[j] = (int)j;
    for (size_t i = 1; a[i - 1]; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= n; j++) {
            int up = row[j];
            int sub = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            int best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            diag = up;
        }
    }
    return row[n] < 3 ? row[n] : 3;
}

/* "; did you mean \"thread\"?" when a field of names is a typo away */
static const char *did_you_mean(const char *name, const char *const *names, int n, char *buf, size_t len)
{
    int best = 3, at = -1;
    for (int i = 0; i < n; i++) {
        int d = distance(name, names[i]);
        if (d < best) {
            best = d;
            at = i;
        }
    }
    if (at < 0 || (best == 2 && strlen(name) < 4))
        return "";
    snprintf(buf, len, "; did you mean \"%s\"?", names[at]);
    return buf;
}

int query_check_field(const query_name *f, query_target target, query_error *err)
{
    char hint[64];
    if (target == QUERY_TARGET_TRACES && field_index(trace_fields, TF__COUNT, f->name) < 0 &&
        !is_label_field(f->name))
        return query_fail(err, &f->pos,
                          "unknown field \"%s\"%s (trace fields: name, events, nodes, edges, threads, processes, "
                          "skipped, span, first_ts, last_ts, ingested_at, format, source, label.KEY)",
                          f->name, did_you_mean(f->name, trace_fields, TF__COUNT, hint, sizeof hint));
    if (target == QUERY_TARGET_EDGES && field_index(edge_fields, GF__COUNT, f->name) < 0)
        return query_fail(err, &f->pos, "unknown field \"%s\"%s (edge fields: from, to, kind, from_event, to_event)",
                          f->name, did_you_mean(f->name, edge_fields, GF__COUNT, hint, sizeof hint));
    if (target == QUERY_TARGET_NODES && field_index(node_fields, NF__COUNT, f->name) < 0)
        return query_fail(err, &f->pos,
                          "unknown field \"%s\"%s (node fields: id, tid, pid, proc, thread, begin, end, "
                          "duration, blocked, running, runnable, events, kind, cpu)",
                          f->name, did_you_mean(f->name, node_fields, NF__COUNT, hint, sizeof hint));
    return 0;
}

/* `type = dispatch_enqueue`: a word where a value is meant (what sqlite3 or
 * jq users type first).  Compared with a field whose values are names
 * (an event's type, phase, state or reason; a node's or edge's kind), a
 * word that names no field of the target is refused with the quoted
 * string to write; an event's unknown word would otherwise be an absent
 * attribute, and the statement would quietly find nothing. */
static bool known_field(const char *name, query_target target)
{
    switch (target) {
    case QUERY_TARGET_EDGES: return field_index(edge_fields, GF__COUNT, name) >= 0;
    case QUERY_TARGET_NODES: return field_index(node_fields, NF__COUNT, name) >= 0;
    case QUERY_TARGET_TRACES: return field_index(trace_fields, TF__COUNT, name) >= 0 || is_label_field(name);
    default: return query_event_is_fixed_field(name);
    }
}

static int bare_word(const query_operand *f, const query_operand *w, query_target target, query_error *err)
{
    static const char *const named[] = {"type", "phase", "state", "reason", "kind"};
    if (f->kind != QUERY_OPD_FIELD || w->kind != QUERY_OPD_FIELD || known_field(w->field.name, target))
        return 0;
    /* an event's other words are attributes, which may be compared */
    bool quote = target != QUERY_TARGET_EVENTS && known_field(f->field.name, target);
    for (size_t i = 0; !quote && i < sizeof named / sizeof named[0]; i++)
        quote = strcmp(f->field.name, named[i]) == 0;
    if (quote)
        return query_fail(err, &w->field.pos,
                          "unknown field \"%s\": to compare %s with a value, quote it: %s = \"%s\"",
                          w->field.name, f->field.name, f->field.name, w->field.name);
    return 0;
}

/* `kind = "wakeup"` of a node: a kind no node has is a mistake, not an
 * empty answer */
static int check_kind(const query_operand *f, const query_literal *l, query_target target, query_error *err)
{
    if (f->kind != QUERY_OPD_FIELD || strcasecmp(f->field.name, "kind") != 0 || l->kind != QUERY_LIT_STRING ||
        (target != QUERY_TARGET_NODES && target != QUERY_TARGET_EDGES))
        return 0;
    bool nodes = target == QUERY_TARGET_NODES;
    if ((nodes ? db_node_kind_from_name(l->str, l->len) : db_edge_kind_from_name(l->str, l->len)) >= 0)
        return 0;
    char names[256];
    size_t len = 0;
    int n = nodes ? DB_NODE__COUNT : DB_EDGE__COUNT;
    for (int i = 0; i < n && len < sizeof names; i++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
                                nodes ? db_node_kind_name(i) : db_edge_kind_name(i));
    return query_fail(err, &l->pos, "no %s kind \"%.*s\" (%s kinds: %s)", nodes ? "node" : "edge",
                      l->len > 40 ? 40 : (int)l->len, l->str, nodes ? "node" : "edge", names);
}

/* ---- dates: `traces where ingested_at > "2026-11-17"` ----
 * ingested_at counts unix seconds, which nobody types: a string compared
 * with it is a date or an age, in UTC. */

static bool two_digits(const char *p, int *v)
{
    if (p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9')
        return false;
    *v = (p[0] - '0') * 10 + (p[1] - '0');
    return true;
}

/* "YYYY-MM-DD", "YYYY-MM-DD HH:MM[:SS]" (or T between), an optional Z;
 * or "N{s,m,h,d,w} ago", before now. */
bool query_date_seconds(const char *s, size_t n, uint64_t now, uint64_t *out)
{
    char b[40];
    if (n == 0 || n >= sizeof b)
        return false;
    memcpy(b, s, n);
    b[n] = '\0';
    if (n > 4 && strcmp(b + n - 4, " ago") == 0) {
        char *e;
        unsigned long long k = strtoull(b, &e, 10);
        static const char units[] = "smhdw";
        static const uint64_t secs[] = {1, 60, 3600, 86400, 604800};
        const char *u = e != b && e[0] && e[1] == ' ' ? strchr(units, e[0]) : NULL;
        if (!u || b[0] < '0' || b[0] > '9' || k > UINT64_MAX / 604800)
            return false;
        uint64_t back = k * secs[u - units];
        *out = back > now ? 0 : now - back;
        return true;
    }
    int y1, y2, mo, d, h = 0, mi = 0, sec = 0;
    if (n < 10 || !two_digits(b, &y1) || !two_digits(b + 2, &y2) || b[4] != '-' || !two_digits(b + 5, &mo) ||
        b[7] != '-' || !two_digits(b + 8, &d))
        return false;
    const char *p = b + 10;
    if (*p == ' ' || *p == 'T') {
        if (!two_digits(p + 1, &h) || p[3] != ':' || !two_digits(p + 4, &mi))
            return false;
        p += 6;
        if (*p == ':') {
            if (!two_digits(p + 1, &sec))
                return false;
            p += 3;
        }
    }
    if (*p == 'Z')
        p++;
    if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
        return false;
    struct tm tm = {.tm_year = y1 * 100 + y2 - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
                    .tm_min = mi, .tm_sec = sec};
    time_t t = timegm(&tm);
    if (t < 0 || tm.tm_mday != d) /* the 30th of February is no date */
        return false;
    *out = (uint64_t)t;
    return true;
}

static bool is_date_field(const query_operand *o)
{
    return o->kind == QUERY_OPD_FIELD && strcasecmp(o->field.name, "ingested_at") == 0;
}

static int check_date(const query_operand *f, const query_literal *l, query_error *err)
{
    uint64_t t;
    if (!is_date_field(f) || l->kind != QUERY_LIT_STRING || query_date_seconds(l->str, l->len, 0, &t))
        return 0;
    return query_fail(err, &l->pos,
                      "\"%.*s\" is no date: %s takes unix seconds, a date in UTC (\"2026-11-17\", "
                      "\"2026-11-17 09:30:00\") or an age (\"7d ago\"; s, m, h, d, w)",
                      l->len > 40 ? 40 : (int)l->len, l->str, f->field.name);
}

int query_check_fields(const query_expr *e, query_target target, query_error *err)
{
    switch (e->kind) {
    case QUERY_EX_AND:
    case QUERY_EX_OR:
        return query_check_fields(e->bin.lhs, target, err) || query_check_fields(e->bin.rhs, target, err)
                   ? -1 : 0;
    case QUERY_EX_NOT: return query_check_fields(e->unary.arg, target, err);
    case QUERY_EX_CMP:
        if (bare_word(&e->cmp.lhs, &e->cmp.rhs, target, err) || bare_word(&e->cmp.rhs, &e->cmp.lhs, target, err))
            return -1;
        if (e->cmp.lhs.kind == QUERY_OPD_FIELD && query_check_field(&e->cmp.lhs.field, target, err))
            return -1;
        if (e->cmp.rhs.kind == QUERY_OPD_FIELD && query_check_field(&e->cmp.rhs.field, target, err))
            return -1;
        if (target == QUERY_TARGET_TRACES &&
            ((e->cmp.rhs.kind == QUERY_OPD_LITERAL && check_date(&e->cmp.lhs, &e->cmp.rhs.lit, err)) ||
             (e->cmp.lhs.kind == QUERY_OPD_LITERAL && check_date(&e->cmp.rhs, &e->cmp.lhs.lit, err))))
            return -1;
        if ((e->cmp.rhs.kind == QUERY_OPD_LITERAL && check_kind(&e->cmp.lhs, &e->cmp.rhs.lit, target, err)) ||
            (e->cmp.lhs.kind == QUERY_OPD_LITERAL && check_kind(&e->cmp.rhs, &e->cmp.lhs.lit, target, err)))
            return -1;
        return 0;
    case QUERY_EX_IN:
        if (query_check_field(&e->in.lhs.field, target, err))
            return -1;
        for (size_t i = 0; i < e->in.count; i++)
            if (check_kind(&e->in.lhs, &e->in.items[i], target, err))
                return -1;
        for (size_t i = 0; target == QUERY_TARGET_TRACES && i < e->in.count; i++)
            if (check_date(&e->in.lhs, &e->in.items[i], err))
                return -1;
        return 0;
    }
    return 0;
}

static query_val num(uint64_t v) { return (query_val){.t = QV_NUM, .mag = v}; }
static query_val str(const char *s) { return (query_val){.t = QV_STR, .s = s, .n = strlen(s)}; }

static query_val node_field(const db_node *n, const char *name)
{
    switch (field_index(node_fields, NF__COUNT, name)) {
    case NF_ID: return num(n->id);
    case NF_TID: return num(n->tid);
    case NF_PID: return num(n->pid);
    case NF_PROC: return (query_val){.t = QV_STR, .s = n->proc, .n = strnlen(n->proc, DB_NAME_MAX)};
    case NF_THREAD: return (query_val){.t = QV_STR, .s = n->thread, .n = strnlen(n->thread, DB_NAME_MAX)};
    case NF_BEGIN: return num(n->begin);
    case NF_END: return num(n->end);
    case NF_DURATION: return num(n->end - n->begin);
    case NF_BLOCKED: return num(n->blocked);
    case NF_EVENTS: return num(n->events);
    case NF_KIND: return str(db_node_kind_name(n->kind));
    case NF_CPU: return n->cpu == DB_CPU_NONE ? (query_val){0} : num(n->cpu);
    case NF_RUNNING: return num(n->running);
    case NF_RUNNABLE: return num(n->runnable);
    default: return (query_val){0};
    }
}

/* An attribute's text: a number when it reads as one (decimal, 0x hex,
 * or the bare hex of hashed kernel pointers is left a string). */
static query_val text_val(const char *v, size_t n)
{
    char buf[32];
    if (n > 0 && n < sizeof buf) {
        memcpy(buf, v, n);
        buf[n] = 0;
        bool neg = buf[0] == '-';
        char *e;
        unsigned long long m = strtoull(buf + neg, &e, 0);
        if (*e == 0 && e != buf + neg)
            return (query_val){.t = QV_NUM, .neg = neg && m != 0, .mag = m, .s = v, .n = n};
    }
    return (query_val){.t = QV_STR, .s = v, .n = n};
}

static query_val event_field(const db_event *ev, const char *name)
{
    switch (field_index(event_fields, EF__COUNT, name)) {
    case EF_ID: return num(ev->id);
    case EF_TS: return num(ev->ts);
    case EF_TID: return num(ev->tid);
    case EF_PID: return num(ev->pid);
    case EF_TYPE: return str(db_evtype_name(ev->type));
    case EF_NODE: return num(ev->node);
    case EF_EVENT: return str(ev->name);
    case EF_CPU: return ev->cpu == DB_CPU_NONE ? (query_val){0} : num(ev->cpu);
    case EF_PHASE: {
        const char *p = query_event_phase(ev);
        return p ? str(p) : (query_val){0};
    }
    default: break;
    }
    const char *obj = db_evtype_obj_name(ev->type);
    if (obj && strcasecmp(obj, name) == 0)
        return num(ev->obj);
    if (ev->type == DB_EV_SYSCALL && ev->phase == DB_PH_END && strcasecmp(name, "ret") == 0)
        return (query_val){.t = QV_NUM, .neg = ev->val < 0,
                           .mag = ev->val < 0 ? 0 - (uint64_t)ev->val : (uint64_t)ev->val};
    const char *v;
    size_t n;
    if (db_event_attr(ev, name, &v, &n))
        return text_val(v, n);
    return (query_val){0};
}

/* A label's value reads as an attribute's: a number when it is one. */
static query_val trace_field(const query_trace_row *t, const char *name)
{
    const db_trace_info *i = &t->info;
    switch (field_index(trace_fields, TF__COUNT, name)) {
    case TF_NAME: return str(i->name);
    case TF_EVENTS: return num(i->events);
    case TF_NODES: return num(i->nodes);
    case TF_EDGES: return num(i->edges);
    case TF_THREADS: return num(i->threads);
    case TF_PROCESSES: return num(i->processes);
    case TF_SKIPPED: return num(i->skipped);
    case TF_SPAN: return num(i->last_ts >= i->first_ts ? i->last_ts - i->first_ts : 0);
    case TF_FIRST_TS: return num(i->first_ts);
    case TF_LAST_TS: return num(i->last_ts);
    case TF_INGESTED_AT: return num(i->ingested_at);
    case TF_FORMAT: return str(i->format);
    case TF_SOURCE: return str(i->source);
    default: break;
    }
    if (!is_label_field(name))
        return (query_val){0};
    for (size_t k = 0; k < t->nlabels; k++)
        if (strcmp(t->labels[k].key, name + 6) == 0)
            return text_val(t->labels[k].value, strlen(t->labels[k].value));
    return (query_val){0};
}

query_val query_field(const query_name *f, const query_row *row)
{
    if (row->trace)
        return trace_field(row->trace, f->name);
    if (row->edge)
        return edge_field(row->edge, f->name);
    return row->node ? node_field(row->node, f->name) : event_field(row->ev, f->name);
}

static query_val lit_val(const query_literal *l)
{
    if (l->kind == QUERY_LIT_STRING)
        return (query_val){.t = QV_STR, .s = l->str, .n = l->len};
    return (query_val){.t = QV_NUM, .neg = l->is_negative, .mag = l->uval};
}

static query_val operand(const query_operand *o, const query_row *row)
{
    return o->kind == QUERY_OPD_FIELD ? query_field(&o->field, row) : lit_val(&o->lit);
}

/* A literal compared with a trace's ingested_at: a date string is its
 * unix seconds (query_check_fields refused any other string). */
static query_val date_lit(const query_operand *field, const query_literal *l, const query_row *row, query_val v)
{
    uint64_t t;
    if (row->trace && is_date_field(field) && l->kind == QUERY_LIT_STRING &&
        query_date_seconds(l->str, l->len, (uint64_t)time(NULL), &t))
        return num(t);
    return v;
}

/* Orders two values; *comparable is false when one is missing or they are
 * of different types (such a comparison is false, whatever the operator). */
int query_val_cmp(const query_val *a, const query_val *b, bool *comparable)
{
    *comparable = a->t != QV_NONE && a->t == b->t;
    if (!*comparable) {
        /* a number written as text (an attribute) against a string */
        if (a->t != QV_NONE && b->t != QV_NONE && a->s && b->t == QV_STR) {
            *comparable = true;
            size_t n = a->n < b->n ? a->n : b->n;
            int c = memcmp(a->s, b->s, n);
            return c ? c : (a->n > b->n) - (a->n < b->n);
        }
        return 0;
    }
    if (a->t == QV_STR) {
        size_t n = a->n < b->n ? a->n : b->n;
        int c = memcmp(a->s, b->s, n);
        return c ? c : (a->n > b->n) - (a->n < b->n);
    }
    if (a->neg != b->neg)
        return a->neg ? -1 : 1;
    int c = (a->mag > b->mag) - (a->mag < b->mag);
    return a->neg ? -c : c;
}

static bool cmp_holds(query_cmp_op op, int c)
{
    switch (op) {
    case QUERY_OP_EQ: return c == 0;
    case QUERY_OP_NE: return c != 0;
    case QUERY_OP_LT: return c < 0;
    case QUERY_OP_LE: return c <= 0;
    case QUERY_OP_GT: return c > 0;
    case QUERY_OP_GE: return c >= 0;
    }
    return false;
}

bool query_eval(const query_expr *e, const query_row *row)
{
    switch (e->kind) {
    case QUERY_EX_AND: return query_eval(e->bin.lhs, row) && query_eval(e->bin.rhs, row);
    case QUERY_EX_OR: return query_eval(e->bin.lhs, row) || query_eval(e->bin.rhs, row);
    case QUERY_EX_NOT: return !query_eval(e->unary.arg, row);
    case QUERY_EX_CMP: {
        query_val a = operand(&e->cmp.lhs, row), b = operand(&e->cmp.rhs, row);
        if (e->cmp.lhs.kind == QUERY_OPD_LITERAL)
            a = date_lit(&e->cmp.rhs, &e->cmp.lhs.lit, row, a);
        if (e->cmp.rhs.kind == QUERY_OPD_LITERAL)
            b = date_lit(&e->cmp.lhs, &e->cmp.rhs.lit, row, b);
        bool ok;
        int c = query_val_cmp(&a, &b, &ok);
        return ok && cmp_holds(e->cmp.op, c);
    }
    case QUERY_EX_IN: {
        query_val a = operand(&e->in.lhs, row);
        bool found = false;
        for (size_t i = 0; i < e->in.count && !found; i++) {
            query_val b = date_lit(&e->in.lhs, &e->in.items[i], row, lit_val(&e->in.items[i]));
            bool ok;
            int c = query_val_cmp(&a, &b, &ok);
            found = ok && c == 0;
        }
        return a.t != QV_NONE && found != e->in.negated;
    }
    }
    return false;
}
