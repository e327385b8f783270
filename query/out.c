/* query/out.c -- how results look: JSON documents (stable shapes that
 * scripts depend on) and aligned tables for people.
 *
 * JSON is written straight to the stream as rows come: a 19-million-event
 * result never becomes a tree in memory. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query_int.h"

void query_json_str(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (c < 0x20)
                fprintf(f, "\\u%04x", c);
            else
                fputc(c, f);
        }
    }
    fputc('"', f);
}

static void key(FILE *f, bool *first, const char *k)
{
    if (!*first)
        fputc(',', f);
    *first = false;
    query_json_str(f, k, strlen(k));
    fputc(':', f);
}

void query_json_node(FILE *f, const db_node *n, int depth)
{
    query_json_node_open(f, n);
    if (depth >= 0)
        fprintf(f, ",\"depth\":%d", depth);
    fputc('}', f);
}

/* The node's object without its closing brace, for callers that add keys. */
void query_json_node_open(FILE *f, const db_node *n)
{
    fprintf(f,
            "{\"id\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"pid\":%" PRIu32 ",\"proc\":",
            n->id, n->tid, n->pid);
    query_json_str(f, n->proc, strnlen(n->proc, DB_NAME_MAX));
    fputs(",\"thread\":", f);
    query_json_str(f, n->thread, strnlen(n->thread, DB_NAME_MAX));
    fprintf(f,
            ",\"begin\":%" PRIu64 ",\"end\":%" PRIu64 ",\"duration\":%" PRIu64 ",\"blocked\":%" PRIu64
            ",\"events\":%" PRIu32 ",\"kind\":\"%s\"",
            n->begin, n->end, n->end - n->begin, n->blocked, n->events, db_node_kind_name(n->kind));
    if (n->cpu != DB_CPU_NONE)
        fprintf(f, ",\"cpu\":%u", n->cpu);
    fprintf(f, ",\"running\":%" PRIu64 ",\"runnable\":%" PRIu64, n->running, n->runnable);
}

void query_json_edge(FILE *f, const db_edge *e)
{
    fprintf(f,
            "{\"from\":%" PRIu32 ",\"to\":%" PRIu32 ",\"kind\":\"%s\",\"from_event\":%" PRIu64
            ",\"to_event\":%" PRIu64 "}",
            e->from, e->to, db_edge_kind_name(e->kind), e->from_event, e->to_event);
}

/* A value from the trace text: a decimal integer is a JSON number, all
 * else (addresses in hex, names) a string. */
static void json_value(FILE *f, const char *v, size_t n)
{
    size_t i = (n > 1 && v[0] == '-') ? 1 : 0;
    bool num = n > i && n - i <= 18 && !(v[i] == '0' && n - i > 1);
    for (size_t j = i; num && j < n; j++)
        num = v[j] >= '0' && v[j] <= '9';
    if (num)
        fwrite(v, 1, n, f);
    else
        query_json_str(f, v, n);
}

/* Whether attribute k=v says what the event's field (or object) of that
 * name already says. */
static bool repeats_field(const db_event *ev, const char *k, const char *v, size_t vn, const char *obj)
{
    char b[32];
    const char *s = b;
    if (obj && strcmp(k, obj) == 0) {
        if (db_evtype_obj_is_addr(ev->type))
            snprintf(b, sizeof b, "0x%" PRIx64, ev->obj);
        else
            snprintf(b, sizeof b, "%" PRIu64, ev->obj);
    } else if (!strcasecmp(k, "id"))
        snprintf(b, sizeof b, "%" PRIu64, ev->id);
    else if (!strcasecmp(k, "ts"))
        snprintf(b, sizeof b, "%" PRIu64, ev->ts);
    else if (!strcasecmp(k, "tid"))
        snprintf(b, sizeof b, "%" PRIu32, ev->tid);
    else if (!strcasecmp(k, "pid"))
        snprintf(b, sizeof b, "%" PRIu32, ev->pid);
    else if (!strcasecmp(k, "node"))
        snprintf(b, sizeof b, "%" PRIu32, ev->node);
    else if (!strcasecmp(k, "cpu"))
        snprintf(b, sizeof b, "%u", ev->cpu);
    else if (!strcasecmp(k, "type"))
        s = db_evtype_name(ev->type);
    else if (!strcasecmp(k, "event"))
        s = ev->name;
    else if (!strcasecmp(k, "phase"))
        s = query_event_phase(ev);
    else
        return false;
    return s && strlen(s) == vn && memcmp(s, v, vn) == 0;
}

/* The event's attributes of one kind into f (NULL: none written): those
 * named as a field or as the object that say something else of it
 * (named), or the others.  Whether there was one. */
/* The next "key=value" of an event's attributes at *p (before end): its
 * key (shorter than 64 bytes; a longer one is passed over), its value and
 * the value's length.  False at the end. */
static bool attr_next(const char **p, const char *end, char k[64], const char **v, size_t *vn)
{
    while (*p < end) {
        const char *a = *p;
        size_t n = strnlen(a, (size_t)(end - a));
        *p = a + n + 1;
        const char *eq = memchr(a, '=', n);
        size_t kn = eq ? (size_t)(eq - a) : 0;
        if (!eq || kn >= 64)
            continue;
        memcpy(k, a, kn);
        k[kn] = 0;
        *v = eq + 1;
        *vn = n - kn - 1;
        return true;
    }
    return false;
}

/* Is attribute k named as a field of the event's JSON, or as its object
 * (obj, NULL none)?  Those are one JSON key each: the attribute goes in
 * "attributes" instead. */
static bool attr_is_named(const char *k, const char *obj)
{
    return query_event_is_fixed_field(k) || (obj && strcmp(k, obj) == 0) || strcmp(k, "attributes") == 0;
}

static bool json_attrs(FILE *f, const db_event *ev, const char *obj, bool named, bool *first)
{
    bool any = false;
    char k[64];
    const char *v;
    size_t vn;
    for (const char *p = ev->attrs, *end = ev->attrs + ev->attrs_len; attr_next(&p, end, k, &v, &vn);) {
        bool is_named = attr_is_named(k, obj);
        if (is_named != named || (named && repeats_field(ev, k, v, vn, obj)))
            continue;
        any = true;
        if (f) {
            key(f, first, k);
            json_value(f, v, vn);
        }
    }
    return any;
}

void query_json_event(FILE *f, const db_event *ev)
{
    bool first = true;
    fputc('{', f);
    key(f, &first, "id");
    fprintf(f, "%" PRIu64, ev->id);
    key(f, &first, "ts");
    fprintf(f, "%" PRIu64, ev->ts);
    key(f, &first, "tid");
    fprintf(f, "%" PRIu32, ev->tid);
    key(f, &first, "pid");
    fprintf(f, "%" PRIu32, ev->pid);
    key(f, &first, "type");
    fprintf(f, "\"%s\"", db_evtype_name(ev->type));
    key(f, &first, "node");
    fprintf(f, "%" PRIu32, ev->node);
    key(f, &first, "event");
    query_json_str(f, ev->name, strlen(ev->name));
    if (ev->cpu != DB_CPU_NONE) {
        key(f, &first, "cpu");
        fprintf(f, "%u", ev->cpu);
    }
    const char *ph = query_event_phase(ev);
    if (ph) {
        key(f, &first, "phase");
        fprintf(f, "\"%s\"", ph);
    }
    const char *obj = db_evtype_obj_name(ev->type);
    if (obj) {
        key(f, &first, obj);
        if (db_evtype_obj_is_addr(ev->type))
            fprintf(f, "\"0x%" PRIx64 "\"", ev->obj);
        else
            fprintf(f, "%" PRIu64, ev->obj);
    }
    /* attributes, beside the fields; one named as a field (or as the
     * object) goes in "attributes" instead, unless it repeats that field
     * (a wakeup's pid=TARGET is its "target") */
    json_attrs(f, ev, obj, false, &first);
    if (json_attrs(NULL, ev, obj, true, NULL)) {
        bool inner = true;
        key(f, &first, "attributes");
        fputc('{', f);
        json_attrs(f, ev, obj, true, &inner);
        fputc('}', f);
    }
    fputc('}', f);
}

/* ---- human units ---- */

/* "512 B", "12.0 KiB", "320.2 MiB", "1.5 GiB" */
void query_fmt_bytes(char *buf, size_t len, uint64_t b)
{
    if (b < 1024)
        snprintf(buf, len, "%" PRIu64 " B", b);
    else if (b < 1024 * 1024)
        snprintf(buf, len, "%.1f KiB", (double)b / 1024.0);
    else if (b < 1024ull * 1024 * 1024)
        snprintf(buf, len, "%.1f MiB", (double)b / 1048576.0);
    else
        snprintf(buf, len, "%.1f GiB", (double)b / 1073741824.0);
}

void query_fmt_duration(char *buf, size_t len, uint64_t ns)
{
    if (ns < 1000)
        snprintf(buf, len, "%" PRIu64 "ns", ns);
    else if (ns < 1000000)
        snprintf(buf, len, "%.1fus", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, len, "%.1fms", (double)ns / 1e6);
    else
        snprintf(buf, len, "%.3fs", (double)ns / 1e9);
}

/* seconds, a point and six digits of microseconds (printf's "%llu.%06llu",
 * without its format parsing: a table prints one per row) */
void query_fmt_ts(char *buf, size_t len, uint64_t ns)
{
    if (len < 28) {
        snprintf(buf, len, "%" PRIu64 ".%06" PRIu64, ns / 1000000000u, ns % 1000000000u / 1000u);
        return;
    }
    size_t n = base_fmt_u64(buf, ns / 1000000000u);
    buf[n++] = '.';
    uint64_t us = ns % 1000000000u / 1000u;
    for (int i = 5; i >= 0; i--, us /= 10)
        buf[n + (size_t)i] = (char)('0' + us % 10);
    buf[n + 6] = '\0';
}

/* ---- tables ---- */

bool query_rows_format(query_format f) { return f == QUERY_FMT_TABLE || f == QUERY_FMT_CSV; }

static const char *const format_names[] = {"table", "json", "csv", "dot", "svg", "perfetto"};

const char *query_format_name(query_format f)
{
    return (size_t)f < sizeof format_names / sizeof format_names[0] ? format_names[f] : "?";
}

bool query_format_from_name(const char *name, query_format *out)
{
    static const query_format fmts[] = {QUERY_FMT_TABLE, QUERY_FMT_JSON, QUERY_FMT_CSV,
                                        QUERY_FMT_DOT,   QUERY_FMT_SVG,  QUERY_FMT_PERFETTO};
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++)
        if (strcmp(name, format_names[fmts[i]]) == 0) {
            *out = fmts[i];
            return true;
        }
    return false;
}

void query_table_init(query_table *t, query_format f, int ncols, const char *const *heads)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->csv = f == QUERY_FMT_CSV;
    for (int i = 0; i < ncols; i++)
        query_table_str(t, heads[i]);
}

/* Room for n more bytes of cell text and one more cell.  Cells live in
 * one arena (a malloc per cell was half of a one-shot slice's printing). */
static bool table_room(query_table *t, size_t n)
{
    if (t->oom)
        return false;
    if (t->ncells == t->cap) {
        size_t c = t->cap ? t->cap * 2 : 64;
        size_t *p = realloc(t->cells, c * sizeof *p);
        if (!p)
            return !(t->oom = true);
        t->cells = p;
        t->cap = c;
    }
    if (t->bcap - t->len < n) {
        size_t c = t->bcap ? t->bcap : 4096;
        while (c - t->len < n)
            c *= 2;
        char *p = realloc(t->buf, c);
        if (!p)
            return !(t->oom = true);
        t->buf = p;
        t->bcap = c;
    }
    return true;
}

/* The cell just written at t->buf + t->len (n bytes and its NUL) joins
 * the table.  A table is for a terminal: a value's line breaks and tabs
 * (a stack trace, a print's text) are shown as \n, \t, not made. */
static void table_add(query_table *t, size_t n)
{
    char *s = t->buf + t->len;
    size_t esc = 0;
    if (!t->csv)
        for (size_t i = 0; i < n; i++)
            esc += s[i] == '\n' || s[i] == '\r' || s[i] == '\t';
    if (esc) {
        if (!table_room(t, n + 1 + esc)) /* this cell's own slot is free still */
            return;
        s = t->buf + t->len;
        /* from the end backwards, in place */
        for (size_t i = n, o = n + esc; i-- > 0;) {
            char c = s[i];
            if (c == '\n' || c == '\r' || c == '\t') {
                s[--o] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
                s[--o] = '\\';
            } else
                s[--o] = c;
        }
        n += esc;
        s[n] = '\0';
    }
    t->cells[t->ncells++] = t->len;
    t->len += n + 1;
}

void query_table_cell(query_table *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = table_room(t, 64) ? vsnprintf(t->buf + t->len, t->bcap - t->len, fmt, ap) : -1;
    va_end(ap);
    if (n < 0) {
        t->oom = true;
        return;
    }
    if ((size_t)n >= t->bcap - t->len) { /* longer than the room: again with enough */
        if (!table_room(t, (size_t)n + 1))
            return;
        va_start(ap, fmt);
        vsnprintf(t->buf + t->len, t->bcap - t->len, fmt, ap);
        va_end(ap);
    }
    table_add(t, (size_t)n);
}

void query_table_str(query_table *t, const char *s)
{
    size_t n = strlen(s);
    if (!table_room(t, n + 1))
        return;
    memcpy(t->buf + t->len, s, n + 1);
    table_add(t, n);
}

void query_table_u64(query_table *t, uint64_t v)
{
    if (!table_room(t, 21))
        return;
    size_t n = base_fmt_u64(t->buf + t->len, v);
    t->buf[t->len + n] = '\0';
    table_add(t, n);
}

void query_table_ts(query_table *t, uint64_t ns)
{
    char b[32];
    if (t->csv) {
        query_table_u64(t, ns);
        return;
    }
    query_fmt_ts(b, sizeof b, ns);
    query_table_str(t, b);
}

void query_table_dur(query_table *t, uint64_t ns, bool dash_if_zero)
{
    char b[32];
    if (t->csv) {
        query_table_u64(t, ns);
        return;
    }
    query_fmt_duration(b, sizeof b, ns);
    query_table_str(t, ns == 0 && dash_if_zero ? "-" : b);
}

/* RFC 4180: quote a field that holds a comma, a quote or a line break */
static void csv_field(FILE *f, const char *s)
{
    if (!s[strcspn(s, ",\"\r\n")]) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void pad(FILE *f, size_t n)
{
    static const char spaces[] = "                                                                ";
    for (; n > sizeof spaces - 1; n -= sizeof spaces - 1)
        fwrite(spaces, 1, sizeof spaces - 1, f);
    fwrite(spaces, 1, n, f);
}

/* ---- events in CSV: every key of the JSON a column ----
 * An event's pairs beyond the seven columns (pid, cpu, phase, its object,
 * its attributes) are kept per row as "k\0v\0...\0" in xbuf; the header
 * is the seven, then every key in the order the rows brought them, and a
 * row leaves empty what it does not have.  The `attributes` column stays,
 * as it was. */
static void x_put(query_table *t, const char *s, size_t n)
{
    if (t->oom)
        return;
    if (!query_grow((void **)&t->xbuf, &t->xcap, t->xlen + n + 1, 1)) {
        t->oom = true;
        return;
    }
    memcpy(t->xbuf + t->xlen, s, n);
    t->xbuf[t->xlen + n] = 0;
    t->xlen += n + 1;
}

static void x_pair(query_table *t, const char *k, const char *v, size_t vn)
{
    x_put(t, k, strlen(k));
    x_put(t, v, vn);
}

static void x_row(query_table *t, const db_event *ev)
{
    if (!query_grow((void **)&t->xrow, &t->xrowcap, t->nxrow + 1, sizeof *t->xrow)) {
        t->oom = true;
        return;
    }
    t->xrow[t->nxrow++] = t->xlen;
    char b[32];
    x_pair(t, "pid", b, (size_t)snprintf(b, sizeof b, "%" PRIu32, ev->pid));
    if (ev->cpu != DB_CPU_NONE)
        x_pair(t, "cpu", b, (size_t)snprintf(b, sizeof b, "%u", ev->cpu));
    const char *ph = query_event_phase(ev);
    if (ph)
        x_pair(t, "phase", ph, strlen(ph));
    const char *obj = db_evtype_obj_name(ev->type);
    if (obj)
        x_pair(t, obj, b,
               (size_t)(db_evtype_obj_is_addr(ev->type) ? snprintf(b, sizeof b, "0x%" PRIx64, ev->obj)
                                                        : snprintf(b, sizeof b, "%" PRIu64, ev->obj)));
    char k[64];
    const char *v;
    size_t vn;
    for (const char *p = ev->attrs, *end = ev->attrs + ev->attrs_len; attr_next(&p, end, k, &v, &vn);)
        if (!attr_is_named(k, obj)) /* the JSON's own keys, not its "attributes" object's */
            x_pair(t, k, v, vn);
    x_put(t, "", 0);
}

/* the value of key k in the row at xbuf + at, NULL none */
static const char *x_get(const query_table *t, size_t at, const char *k)
{
    for (const char *p = t->xbuf + at; *p; p += strlen(p) + 1) {
        const char *v = p + strlen(p) + 1;
        if (strcmp(p, k) == 0)
            return v;
        p = v;
    }
    return NULL;
}

static void x_print(query_table *t, FILE *f, bool head)
{
    /* the keys, by first appearance: offsets of their names in xbuf */
    size_t *keys = NULL, nkeys = 0, kcap = 0;
    for (size_t r = 0; r < t->nxrow; r++)
        for (const char *p = t->xbuf + t->xrow[r]; *p; p += strlen(p) + 1) {
            size_t i = 0;
            while (i < nkeys && strcmp(t->xbuf + keys[i], p) != 0)
                i++;
            if (i == nkeys) {
                if (!query_grow((void **)&keys, &kcap, nkeys + 1, sizeof *keys)) {
                    free(keys);
                    t->oom = true;
                    return;
                }
                keys[nkeys++] = (size_t)(p - t->xbuf);
            }
            p += strlen(p) + 1; /* past the value */
        }
    size_t nc = (size_t)t->ncols;
    for (size_t row = head ? 0 : 1; row * nc < t->ncells; row++) {
        for (size_t c = 0; c < nc && row * nc + c < t->ncells; c++) {
            csv_field(f, t->buf + t->cells[row * nc + c]);
            if (c + 1 < nc || nkeys)
                fputc(',', f);
        }
        for (size_t i = 0; i < nkeys; i++) {
            const char *v = row == 0 ? t->xbuf + keys[i] : x_get(t, t->xrow[row - 1], t->xbuf + keys[i]);
            csv_field(f, v ? v : "");
            if (i + 1 < nkeys)
                fputc(',', f);
        }
        fputc('\n', f);
    }
    free(keys);
}

/* The table to f; head: with its header row. */
static void table_print(query_table *t, FILE *f, bool head)
{
    if (t->csv && t->xrow) {
        x_print(t, f, head);
        return;
    }
    size_t from = head ? 0 : (size_t)t->ncols; /* the first cell printed */
    if (t->csv) {
        for (size_t i = from; i < t->ncells; i++) {
            csv_field(f, t->buf + t->cells[i]);
            fputc((int)(i % (size_t)t->ncols) == t->ncols - 1 || i + 1 == t->ncells ? '\n' : ',', f);
        }
        return;
    }
    size_t w[32] = {0};
    int nc = t->ncols < 32 ? t->ncols : 32;
    for (size_t i = from; i < t->ncells; i++) {
        /* a cell's length: where the next starts (its NUL before it) */
        size_t n = (i + 1 < t->ncells ? t->cells[i + 1] : t->len) - t->cells[i] - 1;
        if ((int)(i % (size_t)t->ncols) < nc && n > w[i % (size_t)t->ncols])
            w[i % (size_t)t->ncols] = n;
    }
    for (size_t i = from; i < t->ncells; i++) {
        int c = (int)(i % (size_t)t->ncols);
        bool last = c == t->ncols - 1 || i + 1 == t->ncells;
        size_t n = (i + 1 < t->ncells ? t->cells[i + 1] : t->len) - t->cells[i] - 1;
        fwrite(t->buf + t->cells[i], 1, n, f);
        if (last)
            fputc('\n', f);
        else {
            size_t width = w[c < nc ? c : 0];
            pad(f, (width > n ? width - n : 0) + 2);
        }
    }
}

void query_table_print(query_table *t, FILE *f) { table_print(t, f, true); }

/* psql's \x: a block per row, a line per column ("name | value"). */
static void table_expanded(const query_table *t, FILE *f, bool head)
{
    size_t nc = (size_t)t->ncols, w = 0;
    for (size_t c = 0; c < nc && c < t->ncells; c++)
        if (strlen(t->buf + t->cells[c]) > w)
            w = strlen(t->buf + t->cells[c]);
    for (size_t row = 1; row * nc < t->ncells; row++) {
        if (head)
            fprintf(f, "-[ RECORD %zu ]%s\n", row, "----------------------------------------");
        for (size_t c = 0; c < nc && row * nc + c < t->ncells; c++) {
            const char *h = t->buf + t->cells[c];
            fputs(h, f);
            pad(f, w - strlen(h));
            fprintf(f, " | %s\n", t->buf + t->cells[row * nc + c]);
        }
    }
}

void query_table_show(query_session *s, query_table *t)
{
    size_t rows = t->ncols && t->ncells > (size_t)t->ncols ? (t->ncells - 1) / (size_t)t->ncols : 0;
    s->rows = (s->rows < 0 ? 0 : s->rows) + (long)rows;
    if (s->expanded && !t->csv)
        table_expanded(t, s->out, !s->no_headers);
    else
        table_print(t, s->out, !s->no_headers);
}

void query_table_free(query_table *t)
{
    free(t->cells);
    free(t->buf);
    free(t->xbuf);
    free(t->xrow);
    memset(t, 0, sizeof *t);
}

/* The node columns; in CSV the names of the JSON keys. */
static const char *const node_heads[] = {"node", "kind", "thread", "tid", "proc", "pid",
                                         "begin", "duration", "blocked", "events"};
/* CSV: every field of the JSON's node, the table's first */
static const char *const node_csv_heads[] = {"id", "kind", "thread", "tid", "proc", "pid", "begin", "duration",
                                             "blocked", "events", "end", "running", "runnable", "cpu"};

void query_table_nodes_init(query_table *t, query_format f)
{
    query_table_init(t, f, f == QUERY_FMT_CSV ? 14 : 10, f == QUERY_FMT_CSV ? node_csv_heads : node_heads);
}

void query_table_node(query_table *t, const db_node *n)
{
    query_table_u64(t, n->id);
    query_table_str(t, db_node_kind_name(n->kind));
    query_table_str(t, n->thread);
    query_table_u64(t, n->tid);
    query_table_str(t, n->proc);
    query_table_u64(t, n->pid);
    query_table_ts(t, n->begin); /* CSV: raw ns, as the durations */
    query_table_dur(t, n->end - n->begin, false);
    query_table_dur(t, n->blocked, true);
    query_table_u64(t, n->events);
    if (!t->csv)
        return;
    query_table_u64(t, n->end);
    query_table_u64(t, n->running);
    query_table_u64(t, n->runnable);
    if (n->cpu != DB_CPU_NONE)
        query_table_u64(t, n->cpu);
    else
        query_table_str(t, "");
}

static const char *const event_heads[] = {"event", "ts", "tid", "node", "type", "source", "attributes"};
static const char *const event_csv_heads[] = {"id", "ts", "tid", "node", "type", "event", "attributes"};

void query_table_events_init(query_table *t, query_format f)
{
    query_table_init(t, f, 7, f == QUERY_FMT_CSV ? event_csv_heads : event_heads);
}

void query_table_event(query_table *t, const db_event *ev)
{
    query_table_u64(t, ev->id);
    query_table_ts(t, ev->ts);
    query_table_u64(t, ev->tid);
    query_table_u64(t, ev->node);
    query_table_str(t, db_evtype_name(ev->type));
    query_table_str(t, ev->name);
    char attrs[512];
    size_t len = 0;
    attrs[0] = 0;
    const char *ph = query_event_phase(ev);
    if (ph)
        len += (size_t)snprintf(attrs, sizeof attrs, "%s", ph);
    for (const char *a = ev->attrs, *end = ev->attrs + ev->attrs_len; a < end && len < sizeof attrs;
         a += strlen(a) + 1)
        len += (size_t)snprintf(attrs + len, sizeof attrs - len, "%s%s", len ? " " : "", a);
    query_table_str(t, attrs);
    if (t->csv)
        x_row(t, ev);
}

void query_xml_text(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
}
