/* lib/archive.c -- libargusq's small calls: version, open and close (the
 * registry does the work), formats, labels, and the errors every call
 * fills. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib_int.h"

const char *argusq_version(void) { return ARGUSQ_VERSION; }

void lib_clear(argusq_error *err)
{
    if (!err)
        return;
    /* not a memset of the whole struct: it is 14 KB, and a one-shot query
     * should not pay for it; the strings are empty, the numbers 0 */
    err->code = ARGUSQ_OK;
    err->line = err->col = err->stmt_line = 0;
    err->offset = err->stmt_index = err->stmt_count = 0;
    err->source[0] = err->text[0] = err->message[0] = '\0';
}

int lib_fail(argusq_error *err, int code, const char *fmt, ...)
{
    if (err) {
        err->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return -1;
}

void lib_query_error(argusq_error *err, const query_error *e, const char *where, const char *src, size_t len)
{
    lib_fail(err, ARGUSQ_ERR_STATEMENT, "%s", e->msg);
    if (!err || e->line <= 0)
        return;
    err->line = e->line;
    err->col = e->col;
    err->offset = e->offset;
    if (!where)
        return;
    /* the caller does not have this text (a rules file, a dump's rule):
     * give it the line to show */
    snprintf(err->source, sizeof err->source, "%s", where);
    const char *p = src, *end = src + len;
    for (int l = 1; l < e->line && p < end; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    snprintf(err->text, sizeof err->text, "%.*s", (int)((nl ? nl : end) - p), p);
}

argusq_archive *argusq_open(const char *path, unsigned flags, argusq_error *err)
{
    lib_clear(err);
    argusq_error scratch; /* the registry reads back what it reported */
    if (!err)
        err = &scratch, lib_clear(err);
    if (!path) {
        lib_fail(err, ARGUSQ_ERR_USAGE, "argusq_open: no path");
        return NULL;
    }
    if (flags & ~(ARGUSQ_OPEN_WRITE | ARGUSQ_OPEN_CREATE | ARGUSQ_OPEN_LOG)) {
        lib_fail(err, ARGUSQ_ERR_USAGE, "argusq_open: unknown flags 0x%x", flags);
        return NULL;
    }
    return lib_registry_open(path, flags, err);
}

void argusq_close(argusq_archive *a)
{
    if (a)
        lib_registry_close(a);
}

const char *argusq_path(const argusq_archive *a) { return a ? a->path : NULL; }

void argusq_free(void *p) { free(p); }

/* the public numbering (JSON first: a zeroed options struct asks for JSON)
 * and query/'s */
static const struct {
    const char *name;
    query_format f;
} formats[] = {
    [ARGUSQ_FORMAT_JSON] = {"json", QUERY_FMT_JSON},   [ARGUSQ_FORMAT_TABLE] = {"table", QUERY_FMT_TABLE},
    [ARGUSQ_FORMAT_CSV] = {"csv", QUERY_FMT_CSV},      [ARGUSQ_FORMAT_DOT] = {"dot", QUERY_FMT_DOT},
    [ARGUSQ_FORMAT_SVG] = {"svg", QUERY_FMT_SVG},      [ARGUSQ_FORMAT_PERFETTO] = {"perfetto", QUERY_FMT_PERFETTO},
};

int argusq_format_from_name(const char *name)
{
    query_format f;
    if (!name || !query_format_from_name(name, &f))
        return -1;
    for (int i = 0; i < (int)(sizeof formats / sizeof formats[0]); i++)
        if (formats[i].f == f)
            return i;
    return -1;
}

/* The query format of a public one: 0, or -1 when it is none. */
int lib_format(int format, query_format *out)
{
    if (format < 0 || format >= (int)(sizeof formats / sizeof formats[0]))
        return -1;
    *out = formats[format].f;
    return 0;
}

int argusq_label_check(const char *key, const char *value, argusq_error *err)
{
    lib_clear(err);
    if (!key || !value)
        return lib_fail(err, ARGUSQ_ERR_USAGE, "a label needs a key and a value");
    db_error de = {0};
    return db_label_check(key, strlen(value), &de) ? lib_fail(err, ARGUSQ_ERR_USAGE, "%s", de.msg) : 0;
}
