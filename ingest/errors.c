/* ingest/errors.c -- the readers' messages: "PATH:LINE: what", and a
 * sink's refusal given the place it stopped the read. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ingest_int.h"

int ingest_sink_failed(char *err, size_t errlen, const char *path, uint64_t line)
{
    char pre[600];
    int n = snprintf(pre, sizeof pre, "%s:%llu: ", path, (unsigned long long)line);
    if (n < 0 || (size_t)n >= sizeof pre || errlen == 0)
        return -1;
    size_t pl = (size_t)n, el = strnlen(err, errlen), fl = strlen(path);
    if (el == errlen)
        el = errlen - 1;
    if (el == 0) {
        snprintf(err, errlen, "%sthe sink stopped the read", pre);
        return -1;
    }
    /* a message that names the file already (the ingest pipe's) is kept */
    if ((el > fl && memcmp(err, path, fl) == 0 && err[fl] == ':') || pl >= errlen)
        return -1;
    if (el > errlen - 1 - pl)
        el = errlen - 1 - pl;
    memmove(err + pl, err, el);
    memcpy(err, pre, pl);
    err[pl + el] = '\0';
    return -1;
}

int ingest_vfail(char *err, size_t errlen, const char *path, uint64_t line, const char *fmt, va_list ap)
{
    int n = snprintf(err, errlen, "%s:%llu: ", path, (unsigned long long)line);
    if (n >= 0 && (size_t)n < errlen)
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    return -1;
}

void ingest_errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
