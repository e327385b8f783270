/* lib/dump.c -- a trace written out as an Argus trace (ingest/argus_dump.c):
 * for the long term, or for another machine's archive (argusq.fleet takes
 * an anomaly's trace to the workers whose archives it is compared with). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "lib_int.h"

/* A new file beside path, made as fopen makes one (the umask applied by
 * the kernel: a library must not set the process's umask to read it, and
 * mkstemp's files are 0600), under a name of this thread's; NULL. */
static FILE *create_beside(const char *path, char *tmp, size_t len)
{
    for (int i = 0; i < 100; i++) {
        snprintf(tmp, len, "%s.tmp-%ld-%ld-%d", path, (long)getpid(), (long)gettid(), i);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            FILE *f = fdopen(fd, "w");
            if (!f) {
                close(fd);
                unlink(tmp);
            }
            return f;
        }
        if (errno != EEXIST) /* a leftover of a process that died: another name */
            return NULL;
    }
    return NULL;
}

/* The dump into path: written beside it under a temporary name and renamed
 * over it once whole, so that path is never half a dump. */
static int dump_to_file(db_archive *a, const char *trace, const char *path, const char *generator,
                        ingest_dump_stats *st, db_error *de, int *code)
{
    size_t n = strlen(path) + 64;
    char *tmp = malloc(n);
    if (!tmp)
        return db_fail_oom(de);
    FILE *f = create_beside(path, tmp, n);
    if (!f) {
        *code = ARGUSQ_ERR_IO;
        snprintf(de->msg, sizeof de->msg, "%s: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    int rc = ingest_dump(a, trace, f, generator, st, de);
    if (fclose(f) != 0 && rc == 0) {
        *code = ARGUSQ_ERR_IO;
        snprintf(de->msg, sizeof de->msg, "%s: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        *code = ARGUSQ_ERR_IO;
        snprintf(de->msg, sizeof de->msg, "%s: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

int argusq_dump(argusq_archive *a, const char *trace, const char *path, argusq_dump_info *info, argusq_error *err)
{
    lib_clear(err);
    if (!a || !path)
        return lib_fail(err, ARGUSQ_ERR_USAGE, "argusq_dump: no archive or path");
    db_error de = {0};
    db_trace_info t;
    int got = trace ? db_find_trace(a->db, trace, &t, &de) : db_latest_trace(a->db, &t, &de);
    if (got < 0)
        return lib_fail(err, ARGUSQ_ERR_ARCHIVE, "%s", de.msg);
    if (got == 0 && trace)
        return lib_fail(err, ARGUSQ_ERR_USAGE, "no trace \"%s\" in %s", trace, a->path);
    if (got == 0)
        return lib_fail(err, ARGUSQ_ERR_USAGE, "%s holds no trace to dump", a->path);
    ingest_dump_stats st = {0};
    int code = ARGUSQ_ERR_ARCHIVE, rc;
    const char *generator = "argusq " ARGUSQ_VERSION;
    if (strcmp(path, "-") == 0) {
        rc = ingest_dump(a->db, t.name, stdout, generator, &st, &de);
        if (rc == 0 && fflush(stdout) != 0) {
            code = ARGUSQ_ERR_IO;
            snprintf(de.msg, sizeof de.msg, "standard output: %s", strerror(errno));
            rc = -1;
        }
    } else
        rc = dump_to_file(a->db, t.name, path, generator, &st, &de, &code);
    if (rc)
        return lib_fail(err, strcmp(de.msg, "out of memory") ? code : ARGUSQ_ERR_NOMEM, "dump of trace \"%s\": %s",
                        t.name, de.msg);
    if (info) {
        argusq_dump_info o = {.size = info->size};
        snprintf(o.trace, sizeof o.trace, "%s", t.name);
        o.events = st.events;
        o.declarations = st.declarations;
        o.labels = st.labels;
        o.rules = st.rules;
        o.symbols = st.symbols;
        memcpy(info, &o, info->size < sizeof o ? info->size : sizeof o);
    }
    return 0;
}
