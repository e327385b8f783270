/* ingest/ingest.c -- format detection, dispatch, and the streaming line
 * splitter every text reader uses.
 *
 * The splitter keeps one buffer of INGEST_LINE_MAX (+2) bytes: lines are
 * split in place (the '\n' becomes a NUL), the unfinished tail is moved to
 * the front before the next fread, so memory does not depend on the size
 * of the trace and no line is ever copied. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "ingest_int.h"
#include "argus/argus_int.h"
#include "ctf/ctf_int.h"
#include "ftrace/ftrace_int.h"
#include "perf/perf_int.h"
#include "perfetto/perfetto_int.h"


const char *ingest_format_name(ingest_format f)
{
    switch (f) {
    case INGEST_FTRACE_TRACE:
        return "ftrace-trace";
    case INGEST_TRACE_CMD_REPORT:
        return "trace-cmd-report";
    case INGEST_ARGUS:
        return "argus";
    case INGEST_TRACE_DAT:
        return "trace-dat";
    case INGEST_SYSTRACE_HTML:
        return "systrace-html";
    case INGEST_CTF:
        return "ctf";
    case INGEST_PERF_SCRIPT:
        return "perf-script";
    case INGEST_PERF_DATA:
        return "perf-data";
    case INGEST_PERFETTO:
        return "perfetto";
    case INGEST_UNKNOWN:
        break;
    }
    return "unknown";
}

/* ---- line splitter ---- */

int ingest_lines_open(ingest_lines *lb, const char *path, char *err, size_t errlen)
{
    memset(lb, 0, sizeof *lb);
    lb->path = path;
    lb->f = fopen(path, "rb");
    if (!lb->f) {
        ingest_errf(err, errlen, "%s:0: cannot open: %s", path, strerror(errno));
        return -1;
    }
    /* a line of INGEST_LINE_MAX bytes plus its '\n', plus a NUL for a
     * last line that has no '\n' */
    lb->cap = INGEST_LINE_MAX + 1;
    lb->buf = malloc(lb->cap + 1);
    if (!lb->buf) {
        fclose(lb->f);
        lb->f = NULL;
        ingest_errf(err, errlen, "%s:0: out of memory", path);
        return -1;
    }
    return 0;
}

void ingest_lines_close(ingest_lines *lb)
{
    if (lb->f)
        fclose(lb->f);
    free(lb->buf);
    lb->f = NULL;
    lb->buf = NULL;
}

int ingest_lines_fill(ingest_lines *lb, char *err, size_t errlen)
{
    if (lb->eof)
        return 0;
    if (lb->pos > 0) {
        memmove(lb->buf, lb->buf + lb->pos, lb->len - lb->pos);
        lb->len -= lb->pos;
        lb->pos = 0;
    }
    while (lb->len < lb->cap && !lb->eof) {
        size_t n = fread(lb->buf + lb->len, 1, lb->cap - lb->len, lb->f);
        lb->len += n;
        lb->read += n;
        if (lb->progress && n)
            lb->progress(lb->progress_ctx, lb->read, lb->size);
        if (n == 0) {
            if (ferror(lb->f)) {
                ingest_errf(err, errlen, "%s:%llu: read error: %s", lb->path,
                     (unsigned long long)lb->lineno + 1, strerror(errno));
                return -1;
            }
            lb->eof = true;
        }
        /* one fread is enough once the buffer holds a complete line */
        if (memchr(lb->buf, '\n', lb->len))
            break;
    }
    return 0;
}

static int line_done(ingest_lines *lb, char *s, size_t n, char **line, size_t *len, char *err,
                     size_t errlen)
{
    lb->lineno++;
    if (n > INGEST_LINE_MAX) {
        ingest_errf(err, errlen, "%s:%llu: line too long (more than %zu bytes)", lb->path,
             (unsigned long long)lb->lineno, INGEST_LINE_MAX);
        return -1;
    }
    /* the scanners stop at a NUL, so one inside a line would hide text */
    if (memchr(s, '\0', n)) {
        ingest_errf(err, errlen, "%s:%llu: NUL byte in line", lb->path, (unsigned long long)lb->lineno);
        return -1;
    }
    if (n > 0 && s[n - 1] == '\r')
        n--;
    s[n] = '\0';
    *line = s;
    *len = n;
    return 1;
}

int ingest_lines_next(ingest_lines *lb, char **line, size_t *len, char *err, size_t errlen)
{
    for (;;) {
        char *s = lb->buf + lb->pos;
        size_t avail = lb->len - lb->pos;
        char *nl = memchr(s, '\n', avail);
        if (nl) {
            lb->pos += (size_t)(nl - s) + 1;
            return line_done(lb, s, (size_t)(nl - s), line, len, err, errlen);
        }
        if (lb->eof) {
            if (avail == 0)
                return 0;
            lb->pos = lb->len;
            return line_done(lb, s, avail, line, len, err, errlen);
        }
        if (avail >= lb->cap) { /* the buffer is full and holds no '\n' */
            lb->lineno++;
            ingest_errf(err, errlen, "%s:%llu: line too long (more than %zu bytes)", lb->path,
                 (unsigned long long)lb->lineno, INGEST_LINE_MAX);
            return -1;
        }
        if (ingest_lines_fill(lb, err, errlen) < 0)
            return -1;
    }
}

/* ---- detection ---- */

ingest_format ingest_detect(const char *buf, size_t len)
{
    char line[4096];
    bool comments = false;
    size_t pos = 0;
    /* trace-cmd's magic; a file cut inside it is still meant as one */
    if (len >= 3 && memcmp(buf, "\x17\x08\x44tracing", len < 10 ? len : 10) == 0)
        return INGEST_TRACE_DAT;
    /* systrace's page: <!DOCTYPE html> or <html> first (a BOM, blanks before) */
    size_t h = len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    while (h < len && (buf[h] == ' ' || buf[h] == '\t' || buf[h] == '\r' || buf[h] == '\n'))
        h++;
    if (len >= 8 && memcmp(buf, INGEST_PERF_MAGIC, 8) == 0)
        return INGEST_PERF_DATA;
    if ((len - h >= 14 && strncasecmp(buf + h, "<!DOCTYPE html", 14) == 0) ||
        (len - h >= 5 && strncasecmp(buf + h, "<html", 5) == 0))
        return INGEST_SYSTRACE_HTML;
    /* binary: packets of a Perfetto Trace, or gzip holding them */
    if (ingest_perfetto_sniff(buf, len))
        return INGEST_PERFETTO;
    for (int n = 0; pos < len && n < 256; n++) {
        const char *s = buf + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - s) : len - pos;
        pos += l + 1;
        if (l > 0 && s[l - 1] == '\r')
            l--;
        /* any version: the reader then says which one it wants */
        if (n == 0 && l >= 12 && memcmp(s, "#argus-trace", 12) == 0)
            return INGEST_ARGUS;
        if (l >= 9 && memcmp(s, "# tracer:", 9) == 0)
            return INGEST_FTRACE_TRACE;
        size_t i = 0;
        while (i < l && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i == l)
            continue;
        if (s[0] == '#') {
            comments = true;
            continue;
        }
        if (l >= sizeof line)
            l = sizeof line - 1;
        memcpy(line, s, l);
        line[l] = '\0';
        if (ingest_ftrace_lex_header(line)) {
            /* cpus= and version = are written by trace-cmd only */
            if (strstr(line, "cpus=") || strstr(line, "version"))
                return INGEST_TRACE_CMD_REPORT;
            continue;
        }
        ftrace_line fl;
        /* perf script: its SYSTEM:EVENT name, which ftrace never prints */
        if (ingest_perf_lex_line(line, &fl, true))
            return INGEST_PERF_SCRIPT;
        memset(&fl, 0, sizeof fl);
        ftrace_lex_status st = ingest_ftrace_lex_line(line, &fl);
        if (st == FTRACE_LEX_NOMATCH)
            return INGEST_UNKNOWN;
        return fl.form == FTRACE_FORM_TRACEFS ? INGEST_FTRACE_TRACE : INGEST_TRACE_CMD_REPORT;
    }
    /* only comments: a tracefs trace whose buffer was empty */
    return comments ? INGEST_FTRACE_TRACE : INGEST_UNKNOWN;
}

ingest_format ingest_detect_folder(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return INGEST_UNKNOWN;
    return ingest_ctf_holds_traces(path) ? INGEST_CTF : INGEST_UNKNOWN;
}

int ingest_file(const char *path, const ingest_sink *sink, ingest_format *format, ingest_stats *st,
                char *err, size_t errlen)
{
    return ingest_file_opts(path, sink, NULL, format, st, err, errlen);
}

int ingest_file_opts(const char *path, const ingest_sink *sink, const ingest_opts *opts, ingest_format *format,
                     ingest_stats *st, char *err, size_t errlen)
{
    ingest_stats local;
    char errbuf[512];
    if (!st)
        st = &local;
    if (!err || errlen == 0) {
        err = errbuf;
        errlen = sizeof errbuf;
    }
    memset(st, 0, sizeof *st);
    err[0] = '\0';
    if (format)
        *format = INGEST_UNKNOWN;

    struct stat dsb;
    if (stat(path, &dsb) == 0 && S_ISDIR(dsb.st_mode)) { /* a folder: a CTF trace's */
        if (format)
            *format = INGEST_CTF;
        return ingest_ctf_read(path, sink, opts, st, err, errlen);
    }
    ingest_lines lb;
    if (ingest_lines_open(&lb, path, err, errlen) < 0)
        return -1;
    if (sink && sink->progress) {
        struct stat sb;
        lb.progress = sink->progress;
        lb.progress_ctx = sink->ctx;
        lb.size = fstat(fileno(lb.f), &sb) == 0 && S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
    }
    if (ingest_lines_fill(&lb, err, errlen) < 0) {
        ingest_lines_close(&lb);
        return -1;
    }
    ingest_format f = ingest_detect(lb.buf, lb.len);
    if (format)
        *format = f;
    int rc;
    switch (f) {
    case INGEST_FTRACE_TRACE:
    case INGEST_TRACE_CMD_REPORT:
    case INGEST_SYSTRACE_HTML:
        rc = ingest_ftrace_read(&lb, sink, opts, f == INGEST_SYSTRACE_HTML, st, err, errlen);
        break;
    case INGEST_ARGUS:
        rc = ingest_argus_read(&lb, sink, st, err, errlen);
        break;
    case INGEST_PERF_SCRIPT:
        rc = ingest_perf_read(&lb, sink, opts, st, err, errlen);
        break;
    case INGEST_PERF_DATA: /* binary: perf script reads the file itself */
        ingest_lines_close(&lb);
        return ingest_perf_data_read(path, sink, opts, st, err, errlen);
    case INGEST_TRACE_DAT: /* binary: libtracecmd reads the file itself */
        ingest_lines_close(&lb);
        return ingest_tracedat_read(path, sink, st, err, errlen);
    case INGEST_PERFETTO: /* binary: read packet by packet (perfetto.c) */
        ingest_lines_close(&lb);
        return ingest_perfetto_read(path, sink, opts, st, err, errlen);
    default:
        ingest_errf(err, errlen,
             "%s:1: unknown trace format (expected ftrace text, trace-cmd report, trace.dat, #argus-trace 1, "
             "Android systrace (text or HTML), perf script text, perf.data, a Perfetto trace or a CTF trace's "
             "folder)",
             path);
        rc = -1;
        break;
    }
    ingest_lines_close(&lb);
    return rc;
}

char *ingest_slurp(FILE *f, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *p = realloc(buf, cap *= 2);
            if (!p) {
                free(buf);
                return NULL;
            }
            buf = p;
        }
    }
    if (buf && ferror(f)) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}
