/* ingest/ftrace/tracedat.c -- trace-cmd's binary trace.dat, read with libtracecmd
 * and libtraceevent.
 *
 * There is one mapping of ftrace events onto the Argus vocabulary
 * (ftrace_map.c, ftrace_sched.c), fed with an event's canonical pairs
 * (ftrace_map_int.h).  The text reader makes them from a line's text; this reader
 * makes them from each record's binary fields (tracedat_fields.c), so a
 * record becomes the event its line in `trace-cmd report` becomes, whether
 * that report was printed with libtraceevent's plugins or without, and
 * keeps the record's nanosecond timestamp (report -l prints microseconds).
 * No plugin is loaded: what a .dat ingests as must not depend on which
 * plugin packages a machine happens to have.  Events the mapping does not
 * use keep their text, which libtraceevent prints from the event's own
 * print format -- the text tracefs shows for them.
 *
 * Records come merged across CPUs in time order (tracecmd_iterate_events).
 * The task's name is the one trace-cmd saved for its pid (the whole comm;
 * report -l cuts it to 8 characters).  A marker's text of several lines
 * becomes one line (its newlines blanks).
 *
 * Memory: libtracecmd reads one page per CPU at a time; this reader keeps
 * a value buffer, a trace_seq for the rare printed event, and what each
 * event id needs, all reused for every record. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftrace_int.h"
#include "tracelib_int.h"

typedef struct dat_reader {
    ftrace_reader fr;
    const char *path;
    struct tep_handle *tep;
    const char *uname; /* the recording machine's, or NULL */
    dat_fields *df;
    struct trace_seq s;
    uint64_t nrec;
    int rc;
    ingest_tracelib lib;
} dat_reader;

/* The mapping says "PATH:RECORD: ..."; say where the record is in the
 * file instead: "PATH: offset N: ...". */
static void reword_error(dat_reader *d, unsigned long long offset)
{
    char *err = d->fr.err;
    size_t errlen = d->fr.errlen;
    char pre[600], rest[1024];
    int n = snprintf(pre, sizeof pre, "%s:%llu: ", d->path, (unsigned long long)d->nrec);
    if (n < 0 || (size_t)n >= sizeof pre || strncmp(err, pre, (size_t)n) != 0)
        return;
    snprintf(rest, sizeof rest, "%s", err + n);
    snprintf(err, errlen, "%s: offset %llu: %s", d->path, offset, rest);
}

/* The header's description of the recording: `uname -a`'s host, kernel
 * release and machine, the CPUs, the trace clock, and the recorder's
 * version string (argusq record writes its own). */
static void header_meta(dat_reader *d, struct tracecmd_input *h, ingest_meta *m)
{
    const char *u = d->uname;
    char words[3][128] = {{0}};
    const char *last = NULL;
    size_t lastn = 0;
    for (int i = 0; u && *u; i++) {
        while (*u == ' ' || *u == '\n')
            u++;
        const char *w = u;
        while (*u && *u != ' ' && *u != '\n')
            u++;
        if (u == w)
            break;
        if (i < 3)
            snprintf(words[i], sizeof words[i], "%.*s", (int)(u - w), w);
        last = w;
        lastn = (size_t)(u - w);
    }
    snprintf(m->host, sizeof m->host, "%.63s", words[1]);
    snprintf(m->kernel, sizeof m->kernel, "%s", words[2]);
    if (last)
        snprintf(m->arch, sizeof m->arch, "%.*s", (int)lastn, last);
    const char *c = d->lib.tracecmd_get_trace_clock(h);
    snprintf(m->clock, sizeof m->clock, "%s", c ? c : "");
    const char *v = d->lib.tracecmd_get_version(h);
    snprintf(m->recorder, sizeof m->recorder, "%s", v ? v : "");
    int n = d->lib.tracecmd_cpus(h);
    m->cpus = n > 0 ? (uint32_t)n : 0;
}

/* The record's text as its print format has it (no plugins), into
 * li->fields: newlines inside it stay (a stack's frames, a print's
 * string), as its `trace-cmd report` text, read back whole, has them. */
static int print_fields(dat_reader *d, struct tep_record *rec, ftrace_line *li)
{
    struct trace_seq *s = &d->s;
    d->lib.trace_seq_reset(s);
    d->lib.tep_print_event(d->tep, s, rec, "%s", TEP_PRINT_INFO);
    d->lib.trace_seq_terminate(s);
    if (s->state != TRACE_SEQ__GOOD)
        return -1;
    size_t len = s->len;
    while (len && (s->buffer[len - 1] == '\n' || s->buffer[len - 1] == '\r' || s->buffer[len - 1] == ' '))
        len--;
    for (size_t i = 0; i < len; i++)
        if (s->buffer[i] == '\r' || s->buffer[i] == '\0')
            s->buffer[i] = ' ';
    s->buffer[len] = '\0';
    li->fields = s->buffer;
    li->fields_len = len;
    return 0;
}

/* kernel_stack / user_stack: the print format shows a fixed 8 frames; the
 * record holds them all (caller[], up to the record's end, ended by 0 or
 * ULONG_MAX).  Written as `trace-cmd report` prints them, for the text
 * parser (ftrace_text.c), which makes the backtrace either way.  0, or 1
 * when the record is not of that shape (the printed text is used). */
static int stack_fields(dat_reader *d, struct tep_event *ev, struct tep_record *rec, ftrace_line *li)
{
    struct tep_format_field *f = d->lib.tep_find_field(ev, "caller");
    int lsize = d->lib.tep_get_long_size(d->tep);
    if (!f || (lsize != 4 && lsize != 8) || f->offset < 0 || f->offset > rec->size)
        return 1;
    struct trace_seq *s = &d->s;
    d->lib.trace_seq_reset(s);
    d->lib.trace_seq_puts(s, "<stack trace >");
    const unsigned char *p = (const unsigned char *)rec->data + f->offset,
                        *end = (const unsigned char *)rec->data + rec->size;
    for (; p + lsize <= end; p += lsize) {
        unsigned long long a = d->lib.tep_read_number(d->tep, p, lsize);
        if (a == 0 || a == (lsize == 4 ? 0xffffffffull : ~0ull))
            break;
        const char *fn = d->lib.tep_find_function(d->tep, a);
        if (fn)
            d->lib.trace_seq_printf(s, "\n=> %s (%llx)", fn, a);
        else
            d->lib.trace_seq_printf(s, "\n=> 0x%llx", a);
    }
    d->lib.trace_seq_terminate(s);
    if (s->state != TRACE_SEQ__GOOD)
        return -1;
    li->fields = s->buffer;
    li->fields_len = s->len;
    return 0;
}

/* trace_flag_type: the context the kernel recorded the event in (the
 * latency format's h/H/s column; NMI 0x40 runs with HARDIRQ set) */
static uint8_t record_ctx(dat_reader *d, struct tep_record *rec)
{
    int fl = d->lib.tep_data_flags(d->tep, rec);
    if (fl < 0)
        return DB_CTX_UNKNOWN;
    if (fl & (TRACE_FLAG_HARDIRQ | 0x40))
        return DB_CTX_HARDIRQ;
    return (fl & TRACE_FLAG_SOFTIRQ) ? DB_CTX_SOFTIRQ : DB_CTX_THREAD;
}

static int oom(dat_reader *d, struct tep_record *rec)
{
    ingest_errf(d->fr.err, d->fr.errlen, "%s: offset %llu: out of memory", d->path,
                (unsigned long long)rec->offset);
    return d->rc = -1;
}

/* One record: one event (and a skip for a "events dropped" mark). */
static int on_record(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *ctx)
{
    (void)h;
    (void)cpu;
    dat_reader *d = ctx;
    ftrace_reader *r = &d->fr;
    r->lineno = ++d->nrec;
    r->st->lines++;
    if (rec->missed_events) { /* the buffer overflowed before this record */
        r->st->skipped++;
        if (r->sink->skip)
            r->sink->skip(r->sink->ctx);
    }
    struct tep_event *ev = NULL;
    ftrace_ev_kind k = FTRACE_EV_OTHER;
    int rc = ingest_dat_pairs(d->df, r, rec, &ev, &k);
    if (rc == 2) {
        ingest_errf(r->err, r->errlen, "%s: offset %llu: record of unknown event id %d", d->path,
                    (unsigned long long)rec->offset, d->lib.tep_data_type(d->tep, rec));
        return d->rc = -1;
    }
    ftrace_line li;
    memset(&li, 0, sizeof li);
    int pid = d->lib.tep_data_pid(d->tep, rec);
    const char *comm = d->lib.tep_data_comm_from_pid(d->tep, pid);
    if (!comm || !*comm)
        comm = "<...>";
    li.comm = comm;
    li.comm_len = strlen(comm);
    li.tid = (uint32_t)pid;
    li.cpu = (uint16_t)rec->cpu;
    li.ts = rec->ts;
    li.name = ev->name;
    li.name_len = strlen(ev->name);
    li.fields = "";
    li.ctx = record_ctx(d, rec);

    if (rc == 1) { /* not read from fields: its printed text, as tracefs has it */
        int got = k == FTRACE_EV_STACK ? stack_fields(d, ev, rec, &li) : 1;
        if (got < 0 || (got == 1 && print_fields(d, rec, &li) < 0))
            return oom(d, rec);
        rc = ingest_ft_text_pairs(r, k, &li);
    } else if (rc < 0 && rc != FTRACE_BAD_FIELDS) {
        return oom(d, rec);
    }
    if (rc == 0)
        rc = ingest_ft_event(r, &li, k);
    if (rc == FTRACE_BAD_FIELDS) {
        if (!*li.fields && print_fields(d, rec, &li) < 0)
            return oom(d, rec);
        rc = ingest_ft_bad_fields(r, &li);
    }
    if (rc < 0) {
        reword_error(d, rec->offset);
        return d->rc = -1;
    }
    return 0;
}

/* PATH.tgids, written by argusq record from tracefs's saved_tgids ("TID
 * TGID" lines): the processes of tasks that existed before the recording,
 * which trace.dat has no table for.  Absent or unreadable: none. */
static int cmp_pair(const void *a, const void *b)
{
    uint32_t x = ((const uint32_t *)a)[0], y = ((const uint32_t *)b)[0];
    return (x > y) - (x < y);
}

static size_t load_tgids(const char *path, uint32_t (**out)[2])
{
    char name[4096];
    *out = NULL;
    if (snprintf(name, sizeof name, "%s.tgids", path) >= (int)sizeof name)
        return 0;
    FILE *f = fopen(name, "r");
    if (!f)
        return 0;
    size_t n = 0, cap = 0;
    uint32_t(*v)[2] = NULL;
    unsigned long tid, tgid;
    while (fscanf(f, "%lu %lu", &tid, &tgid) == 2) {
        if (tid > UINT32_MAX || tgid > UINT32_MAX || tgid == 0)
            continue;
        if (n == cap) {
            size_t c = cap ? cap * 2 : 1024;
            void *p = realloc(v, c * sizeof *v);
            if (!p)
                break;
            v = p;
            cap = c;
        }
        v[n][0] = (uint32_t)tid;
        v[n][1] = (uint32_t)tgid;
        n++;
    }
    fclose(f);
    if (n)
        qsort(v, n, sizeof *v, cmp_pair);
    *out = v;
    return n;
}


int ingest_tracedat_read(const char *path, const ingest_sink *sink, ingest_stats *st, char *err,
                         size_t errlen)
{
    dat_reader d;
    memset(&d, 0, sizeof d);
    d.path = path;

    if (ingest_tracelib_open(&d.lib, err, errlen) < 0)
        return -1;
    /* the libraries' own warnings would go to stderr; errors are ours */
    d.lib.tracecmd_set_loglevel(TEP_LOG_NONE);
    d.lib.tep_set_loglevel(TEP_LOG_NONE);

    FILE *f = fopen(path, "rb");
    if (!f) {
        ingest_errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    unsigned char head[10];
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    if (memcmp(head, "\x17\x08\x44tracing", got) != 0) {
        ingest_errf(err, errlen, "%s: offset 0: not a trace-cmd trace.dat file (bad magic)", path);
        return -1;
    }
    if (got < sizeof head) {
        ingest_errf(err, errlen, "%s: offset %zu: the file ends inside the trace.dat magic", path, got);
        return -1;
    }
    struct tracecmd_input *h = d.lib.tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
    if (!h) {
        ingest_errf(err, errlen, "%s: cannot read the trace.dat headers and sections: the file is cut short "
             "or corrupt", path);
        return -1;
    }
    d.tep = d.lib.tracecmd_get_tep(h);
    d.uname = d.lib.tracecmd_get_uname(h);
    d.df = ingest_dat_fields_new(d.tep, &d.lib);
    if (!d.df || ingest_ft_reader_init(&d.fr, path, sink, st, err, errlen) < 0) {
        if (!d.df)
            ingest_errf(err, errlen, "%s: out of memory", path);
        ingest_dat_fields_free(d.df);
        d.lib.tracecmd_close(h);
        ingest_ft_reader_free(&d.fr);
        return -1;
    }
    header_meta(&d, h, &st->meta);
    d.fr.unit = "record";
    d.fr.arch = base_arch_find(st->meta.arch); /* uname's last word */
    d.fr.check_order = true;
    uint32_t(*tgids)[2] = NULL;
    d.fr.ntgids = load_tgids(path, &tgids);
    d.fr.tgids = (const uint32_t(*)[2])tgids;
    d.lib.trace_seq_init(&d.s);
    int r = d.lib.tracecmd_iterate_events(h, NULL, 0, on_record, &d);
    int rc = d.rc;
    if (rc == 0 && r < 0) {
        ingest_errf(err, errlen, "%s: cannot read the trace data (cut short or corrupt)", path);
        rc = -1;
    }
    /* closing frees libtraceevent's parse of every format and symbol,
     * which takes a while (docs/PERFORMANCE.md): the sink need not wait
     * for it */
    if (rc == 0 && sink->end)
        sink->end(sink->ctx);
    d.lib.trace_seq_destroy(&d.s);
    free(tgids);
    ingest_dat_fields_free(d.df);
    ingest_ft_reader_free(&d.fr);
    d.lib.tracecmd_close(h);
    return rc;
}

/* libtraceevent and libtracecmd keep a few bytes of some event formats
 * past tep_free (tep_parse_event); not ours to free.  LeakSanitizer reads
 * this hook in the sanitizer builds (make test); elsewhere it is unused. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libtraceevent.so\nleak:libtracecmd.so\nleak:libtracefs.so\n";
}

const char *__lsan_default_options(void);
const char *__lsan_default_options(void) { return "print_suppressions=0"; }
