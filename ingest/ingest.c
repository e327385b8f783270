/* ingest/ingest.c -- format detection and the dispatch to each family's
 * reader.  What the readers share is in files of its own (lines.c,
 * numbers.c, attrs.c, errors.c, ...), so that the readers call nothing
 * here and this file alone calls them. */
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
