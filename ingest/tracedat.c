/* ingest/tracedat.c -- trace-cmd's binary trace.dat, read with libtracecmd
 * and libtraceevent.
 *
 * There is one mapping of ftrace events onto the Argus vocabulary, the
 * text reader's (ftrace_map.c, ftrace_sched.c).  This reader therefore
 * prints each record as the line `trace-cmd report -l` prints for it --
 * with the same libraries, the same plugins, records merged across CPUs
 * in the same order, the timestamp rounded to the microsecond the same
 * way -- and hands that line to the text reader.  Ingesting FILE.dat thus
 * stores exactly the events of ingesting `trace-cmd report -l FILE.dat`.
 * Two differences, both in the text's favour of being parseable: the comm
 * column is the whole comm (report -l cuts it to 8 characters, which the
 * text reader otherwise repairs from sched_switch fields), and a newline
 * inside an event's text (a trace_marker write of several lines) becomes
 * a blank instead of breaking the line.
 *
 * Memory: libtracecmd reads one page per CPU at a time; this reader keeps
 * one trace_seq and one line buffer, reused for every record. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-cmd.h>

#include "ftrace.h"
#include "tracecmd_priv.h"

typedef struct dat_reader {
    ftrace_reader fr;
    const char *path;
    struct tep_handle *tep;
    bool in_usecs;
    struct trace_seq s;
    char *line;
    size_t cap;
    uint64_t lineno;
    int rc;
} dat_reader;


/* The text reader says "PATH:LINE: ..."; a record has no line, so say
 * where it is in the file instead: "PATH: offset N: ...". */
static void reword_error(dat_reader *d, unsigned long long offset)
{
    char *err = d->fr.err;
    size_t errlen = d->fr.errlen;
    char pre[600], rest[1024];
    int n = snprintf(pre, sizeof pre, "%s:%llu: ", d->path, (unsigned long long)d->lineno);
    if (n < 0 || (size_t)n >= sizeof pre || strncmp(err, pre, (size_t)n) != 0)
        return;
    snprintf(rest, sizeof rest, "%s", err + n);
    snprintf(err, errlen, "%s: offset %llu: %s", d->path, offset, rest);
}

static int feed(dat_reader *d, const char *text, size_t len, unsigned long long offset)
{
    if (len + 1 > d->cap) {
        size_t cap = d->cap ? d->cap : 4096;
        while (cap < len + 1)
            cap *= 2;
        char *p = realloc(d->line, cap);
        if (!p) {
            ingest_errf(d->fr.err, d->fr.errlen, "%s: offset %llu: out of memory", d->path, offset);
            return -1;
        }
        d->line = p;
        d->cap = cap;
    }
    memcpy(d->line, text, len);
    d->line[len] = '\0';
    d->lineno++;
    d->fr.lineno = d->lineno;
    if (ingest_ft_reader_line(&d->fr, d->line, len) < 0) {
        reword_error(d, offset);
        return -1;
    }
    return 0;
}

/* One record: the lines trace-cmd report -l prints for it. */
static int on_record(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *ctx)
{
    (void)h;
    (void)cpu;
    dat_reader *d = ctx;
    struct trace_seq *s = &d->s;
    char head[64];
    int n;

    if (rec->missed_events) { /* a header line: counted as skipped */
        if (rec->missed_events > 0)
            n = snprintf(head, sizeof head, "CPU:%d [%lld EVENTS DROPPED]", rec->cpu,
                         (long long)rec->missed_events);
        else
            n = snprintf(head, sizeof head, "CPU:%d [EVENTS DROPPED]", rec->cpu);
        if (feed(d, head, (size_t)n, rec->offset) < 0)
            return d->rc = -1;
    }

    struct tep_event *ev = tep_find_event_by_record(d->tep, rec);
    if (!ev) {
        ingest_errf(d->fr.err, d->fr.errlen, "%s: offset %llu: record of unknown event id %d", d->path,
             (unsigned long long)rec->offset, tep_data_type(d->tep, rec));
        return d->rc = -1;
    }
    int pid = tep_data_pid(d->tep, rec);
    const char *comm = tep_data_comm_from_pid(d->tep, pid);
    if (!comm || !*comm)
        comm = "<...>";

    trace_seq_reset(s);
    trace_seq_printf(s, "%s-%d %d", comm, pid, rec->cpu);
    tep_print_event(d->tep, s, rec, "%s", TEP_PRINT_LATENCY);
    unsigned long long ts = rec->ts;
    if (d->in_usecs) { /* trace-cmd's " %6.1000d:": microseconds, rounded */
        unsigned long long us = (ts + 500) / 1000;
        trace_seq_printf(s, " %llu.%06llu: ", us / 1000000, us % 1000000);
    } else { /* a counter clock: the raw value, as nanoseconds */
        trace_seq_printf(s, " %llu.%09llu: ", ts / 1000000000, ts % 1000000000);
    }
    trace_seq_printf(s, "%s: ", ev->name);
    size_t info = s->len;
    tep_print_event(d->tep, s, rec, "%s", TEP_PRINT_INFO);
    trace_seq_terminate(s);
    if (s->state != TRACE_SEQ__GOOD) {
        ingest_errf(d->fr.err, d->fr.errlen, "%s: offset %llu: out of memory", d->path,
             (unsigned long long)rec->offset);
        return d->rc = -1;
    }
    size_t len = s->len;
    while (len > info && (s->buffer[len - 1] == '\n' || s->buffer[len - 1] == '\r'))
        len--;
    for (size_t i = info; i < len; i++)
        if (s->buffer[i] == '\n' || s->buffer[i] == '\r' || s->buffer[i] == '\0')
            s->buffer[i] = ' ';
    if (feed(d, s->buffer, len, rec->offset) < 0)
        return d->rc = -1;
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

    /* the libraries' own warnings would go to stderr; errors are ours */
    tracecmd_set_loglevel(TEP_LOG_NONE);
    tep_set_loglevel(TEP_LOG_NONE);

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
    struct tracecmd_input *h = tracecmd_open(path, 0);
    if (!h) {
        ingest_errf(err, errlen, "%s: cannot read the trace.dat headers and sections: the file is cut short "
             "or corrupt", path);
        return -1;
    }
    d.tep = tracecmd_get_tep(h);
    d.in_usecs = (tracecmd_get_flags(h) & ARGUS_TRACECMD_FL_IN_USECS) != 0;
    if (ingest_ft_reader_init(&d.fr, path, sink, st, err, errlen) < 0) {
        tracecmd_close(h);
        ingest_ft_reader_free(&d.fr);
        return -1;
    }
    uint32_t(*tgids)[2] = NULL;
    d.fr.ntgids = load_tgids(path, &tgids);
    d.fr.tgids = (const uint32_t(*)[2])tgids;
    trace_seq_init(&d.s);
    char cpus[32];
    int n = snprintf(cpus, sizeof cpus, "cpus=%d", tep_get_cpus(d.tep));
    int rc = feed(&d, cpus, (size_t)n, 0);
    if (rc == 0) {
        int r = tracecmd_iterate_events(h, NULL, 0, on_record, &d);
        rc = d.rc;
        if (rc == 0 && r < 0) {
            ingest_errf(err, errlen, "%s: cannot read the trace data (cut short or corrupt)", path);
            rc = -1;
        }
    }
    trace_seq_destroy(&d.s);
    free(d.line);
    free(tgids);
    ingest_ft_reader_free(&d.fr);
    tracecmd_close(h);
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
