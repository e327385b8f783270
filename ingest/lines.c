/* ingest/lines.c -- the streaming line splitter every text reader uses
 * and their loop over its lines, the names of the formats, and a whole
 * stream read into memory.
 *
 * The splitter keeps one buffer of INGEST_LINE_MAX (+2) bytes: lines are
 * split in place (the '\n' becomes a NUL), the unfinished tail is moved to
 * the front before the next fread, so memory does not depend on the size
 * of the trace and no line is ever copied. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest_int.h"

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

int ingest_lines_each(const ingest_line_loop *l, char *err, size_t errlen)
{
    assert(l->lb && l->st && l->lineno && l->line);
    for (;;) {
        char *line;
        size_t len;
        int n = l->next ? l->next(l->src, &line, &len, err, errlen)
                        : ingest_lines_next(l->lb, &line, &len, err, errlen);
        if (n <= 0)
            return n;
        *l->lineno = l->lb->lineno;
        l->st->lines++;
        int rc = l->line(l->reader, line, len);
        if (rc != 0)
            return rc;
    }
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
