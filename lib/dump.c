/* lib/dump.c -- a trace written out as an Argus trace (dump/dump.c):
 * for the long term, or for another machine's archive (argusq.fleet takes
 * an anomaly's trace to the workers whose archives it is compared with). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dump/dump.h"
#include "lib_int.h"

/* The dump into path, through base_outfile: path is never half a dump, and
 * a failed dump leaves the file that was there. */
static int dump_to_file(db_archive *a, const char *trace, const char *path, const char *generator,
                        dump_stats *st, db_error *de, int *code)
{
    base_outfile o;
    if (base_outfile_open(&o, path, 0, de->msg, sizeof de->msg)) {
        *code = ARGUSQ_ERR_IO;
        return -1;
    }
    setvbuf(o.f, NULL, _IOFBF, 1 << 20);
    if (dump_trace(a, trace, o.f, generator, st, de)) {
        base_outfile_abort(&o);
        return -1;
    }
    if (base_outfile_commit(&o, de->msg, sizeof de->msg)) {
        *code = ARGUSQ_ERR_IO;
        return -1;
    }
    return 0;
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
    dump_stats st = {0};
    int code = ARGUSQ_ERR_ARCHIVE, rc;
    const char *generator = "argusq " ARGUSQ_VERSION;
    if (strcmp(path, "-") == 0) {
        rc = dump_trace(a->db, t.name, stdout, generator, &st, &de);
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
