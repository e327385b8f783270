/* lib/session.c -- running statements: a session (the current trace that
 * `use trace` changes, the output format) and three ways to get the
 * output: into a FILE (the argusq command's stdout), to the caller's
 * callback as it is produced, or into one malloc'd buffer.  The executor
 * (query/) writes to a FILE, so the other two are FILEs too: a glibc
 * cookie stream over the callback, and open_memstream. */
#include <stdlib.h>
#include <string.h>

#include "lib_int.h"

struct argusq_session {
    argusq_archive *archive; /* NULL: help only */
    query_session q;
    query_pool pool; /* argusq_session_normals; q.pool points here when it holds steps */
};

/* The options a caller's struct holds: what its size covers, the rest as
 * a zeroed struct would say. */
static int read_opts(const argusq_query_opts *opts, query_session *q, const char **trace, argusq_error *err)
{
    argusq_query_opts o = {0};
    if (opts)
        memcpy(&o, opts, opts->size < sizeof o ? opts->size : sizeof o);
    if (lib_format(o.format, &q->format))
        return lib_fail(err, ARGUSQ_ERR_USAGE, "unknown output format %d", o.format);
    q->interrupt = o.interrupt;
    *trace = o.trace;
    if (o.trace && strlen(o.trace) >= sizeof ((query_session *)0)->trace)
        return lib_fail(err, ARGUSQ_ERR_USAGE, "trace name too long");
    return 0;
}

/* `in archive "PATH"`: another archive, opened read-only for one
 * statement through the registry, so that a file this process has open
 * already (the session's own, another session's) shares its environment. */
static void *open_other(void *ctx, const char *path, db_archive **db, char *msg, size_t msglen)
{
    (void)ctx;
    argusq_error *e = malloc(sizeof *e); /* 14 KB: not on a caller's stack */
    if (!e) {
        snprintf(msg, msglen, "out of memory");
        return NULL;
    }
    lib_clear(e);
    argusq_archive *h = lib_registry_open(path, ARGUSQ_OPEN_READ, e);
    if (h)
        *db = h->db;
    else
        snprintf(msg, msglen, "%s", e->message);
    free(e);
    return h;
}

static void close_other(void *ctx, void *h)
{
    (void)ctx;
    lib_registry_close(h);
}

static int session_init(argusq_session *s, argusq_archive *a, const argusq_query_opts *opts, argusq_error *err)
{
    const char *trace = NULL;
    memset(s, 0, sizeof *s);
    if (read_opts(opts, &s->q, &trace, err))
        return -1;
    s->archive = a;
    s->q.archive = a ? a->db : NULL;
    s->q.archive_path = a ? a->path : NULL;
    s->q.opener = (query_opener){.open = open_other, .close = close_other};
    s->q.rows = -1;
    if (trace)
        snprintf(s->q.trace, sizeof s->q.trace, "%s", trace);
    return 0;
}

argusq_session *argusq_session_new(argusq_archive *a, const argusq_query_opts *opts, argusq_error *err)
{
    lib_clear(err);
    argusq_session *s = malloc(sizeof *s);
    if (!s) {
        lib_fail(err, ARGUSQ_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (session_init(s, a, opts, err)) {
        free(s);
        return NULL;
    }
    return s;
}

void argusq_session_free(argusq_session *s)
{
    if (s)
        query_pool_free(&s->pool);
    free(s);
}

/* name into a fixed field, or an error saying which */
static int copy_name(char *dst, size_t cap, const char *src, const char *what, size_t i, argusq_error *err)
{
    if (!src)
        return lib_fail(err, ARGUSQ_ERR_USAGE, "normal step %zu: no %s", i, what);
    memset(dst, 0, cap);
    memcpy(dst, src, strnlen(src, cap - 1));
    return 0;
}

int argusq_session_normals(argusq_session *s, const argusq_normal_step *steps, size_t n, argusq_error *err)
{
    lib_clear(err);
    if (!s || (n && !steps))
        return lib_fail(err, ARGUSQ_ERR_USAGE, "argusq_session_normals: a NULL argument");
    query_pool p = {0};
    for (size_t i = 0; i < n; i++) {
        const argusq_normal_step *g = &steps[i];
        query_pool_step st = {.node = g->node, .score = g->score, .contained = g->contained != 0,
                              .period = g->period, .timeout = g->timeout != 0};
        query_pool_part *parts = malloc((g->nparts ? g->nparts : 1) * sizeof *parts);
        int rc = parts ? 0 : lib_fail(err, ARGUSQ_ERR_NOMEM, "out of memory");
        if (!rc && (g->nparts && !g->parts))
            rc = lib_fail(err, ARGUSQ_ERR_USAGE, "normal step %zu: no parts", i);
        if (!rc)
            rc = copy_name(st.trace, sizeof st.trace, g->trace, "trace", i, err);
        if (!rc && g->waker)
            rc = copy_name(st.waker, sizeof st.waker, g->waker, "waker", i, err);
        for (size_t j = 0; !rc && j < g->nparts; j++) {
            const argusq_normal_part *q = &g->parts[j];
            rc = copy_name(parts[j].thread, sizeof parts[j].thread, q->thread, "thread", i, err);
            parts[j].state = q->state ? query_pool_state(q->state) : -1;
            if (!rc && parts[j].state < 0)
                rc = lib_fail(err, ARGUSQ_ERR_USAGE, "normal step %zu: no state named \"%s\"", i,
                              q->state ? q->state : "");
            parts[j].ns = q->ns;
        }
        if (!rc && query_pool_add(&p, &st, parts, g->nparts, g->archive))
            rc = lib_fail(err, ARGUSQ_ERR_NOMEM, "out of memory");
        free(parts);
        if (rc) {
            query_pool_free(&p);
            return -1;
        }
    }
    query_pool_free(&s->pool);
    s->pool = p;
    s->q.pool = n ? &s->pool : NULL;
    return 0;
}

const char *argusq_session_trace(const argusq_session *s) { return s ? s->q.trace : ""; }

int argusq_session_set_display(argusq_session *s, unsigned flags, argusq_error *err)
{
    lib_clear(err);
    if (!s)
        return lib_fail(err, ARGUSQ_ERR_USAGE, "argusq_session_set_display: a NULL session");
    if (flags & ~(unsigned)(ARGUSQ_DISPLAY_NO_HEADERS | ARGUSQ_DISPLAY_EXPANDED))
        return lib_fail(err, ARGUSQ_ERR_USAGE, "argusq_session_set_display: unknown flags 0x%x", flags);
    s->q.no_headers = flags & ARGUSQ_DISPLAY_NO_HEADERS;
    s->q.expanded = flags & ARGUSQ_DISPLAY_EXPANDED;
    return 0;
}

long argusq_session_rows(const argusq_session *s) { return s ? s->q.rows : -1; }

size_t argusq_language_words(const char **words, size_t cap) { return query_words_list(words, cap); }

int argusq_session_set_format(argusq_session *s, int format, argusq_error *err)
{
    lib_clear(err);
    if (!s)
        return lib_fail(err, ARGUSQ_ERR_USAGE, "argusq_session_set_format: a NULL session");
    if (lib_format(format, &s->q.format))
        return lib_fail(err, ARGUSQ_ERR_USAGE, "unknown output format %d", format);
    return 0;
}

static bool interrupted(const argusq_session *s) { return s->q.interrupt && *s->q.interrupt; }

/* Parses and runs src, each statement's output into out (flushed after
 * it), o->statement called after each; stops at the first failure (one
 * that does not parse included: those before it run), or
 * once *stopped is set (by the cookie stream's writer), or once the
 * caller's interrupt is (then the statement running fails, whatever it
 * said, and none starts after it). */
static long run(argusq_session *s, const char *src, size_t len, FILE *out,
                const argusq_output *o, const bool *stopped, argusq_error *err)
{
    query_error bad = {0}, e = {0};
    query_script *sc = query_parse_some(src, len, &bad);
    if (!sc) {
        lib_query_error(err, &bad, NULL, src, len);
        return -1;
    }
    size_t n = query_script_count(sc);
    long rc = (long)n;
    s->q.out = out;
    for (size_t i = 0; i < n; i++) {
        const query_stmt *st = query_script_stmt(sc, i);
        memset(&e, 0, sizeof e);
        s->q.read_trace[0] = '\0';
        s->q.rows = -1;
        int failed;
        if (interrupted(s))
            failed = -1;
        else if (!s->q.archive && query_stmt_needs_archive(st))
            failed = lib_fail(err, ARGUSQ_ERR_USAGE, "no archive: only help answers without one");
        else if ((failed = query_exec(&s->q, st, &e)) != 0)
            lib_query_error(err, &e, NULL, src, len);
        fflush(out);
        if (failed && interrupted(s)) {
            lib_clear(err);
            failed = lib_fail(err, ARGUSQ_ERR_INTERRUPTED, "interrupted");
        }
        if (!failed && stopped && *stopped)
            failed = lib_fail(err, ARGUSQ_ERR_STOPPED, "stopped by the output's writer");
        if (failed) {
            err->stmt_index = i;
            err->stmt_count = n;
            err->stmt_line = query_stmt_line(st);
            rc = -1;
            break;
        }
        if (o && o->statement)
            o->statement(o->ctx, i, s->q.read_trace);
    }
    /* a statement that does not parse fails where it stands: those
     * before it ran */
    if (rc >= 0 && bad.msg[0]) {
        lib_query_error(err, &bad, NULL, src, len); /* its line and column */
        rc = -1;
    }
    query_script_free(sc);
    s->q.out = NULL;
    return rc;
}

long argusq_session_run_file(argusq_session *s, const char *src, size_t len, FILE *out,
                             argusq_error *err)
{
    lib_clear(err);
    argusq_error scratch;
    if (!err)
        err = &scratch;
    if (!s || !src || !out)
        return lib_fail(err, ARGUSQ_ERR_USAGE, "argusq_session_run_file: no session, text or output");
    return run(s, src, len, out, NULL, NULL, err);
}

/* ---- to the caller's callback ---- */

typedef struct cookie {
    const argusq_output *o;
    bool stopped;
} cookie;

/* Every byte is taken, also after the caller said stop (they are then
 * dropped): a short count would only make stdio try again. */
static ssize_t cookie_write(void *c, const char *buf, size_t n)
{
    cookie *k = c;
    if (!k->stopped && n && k->o->write(k->o->ctx, buf, n) != 0)
        k->stopped = true;
    return (ssize_t)n;
}

long argusq_session_stream(argusq_session *s, const char *src, size_t len,
                           const argusq_output *o, argusq_error *err)
{
    lib_clear(err);
    argusq_error scratch;
    if (!err)
        err = &scratch;
    argusq_output out = {0};
    if (o)
        memcpy(&out, o, o->size < sizeof out ? o->size : sizeof out);
    if (!s || !src || !out.write)
        return lib_fail(err, ARGUSQ_ERR_USAGE, "argusq_session_stream: no session, text or writer");
    cookie k = {&out, false};
    FILE *f = fopencookie(&k, "w", (cookie_io_functions_t){.write = cookie_write});
    if (!f)
        return lib_fail(err, ARGUSQ_ERR_NOMEM, "out of memory");
    setvbuf(f, NULL, _IOFBF, 1 << 16); /* fewer, larger calls into the caller (Python) */
    long rc = run(s, src, len, f, &out, &k.stopped, err);
    fclose(f);
    return rc;
}

/* ---- into one buffer ---- */

long argusq_session_query(argusq_session *s, const char *src, size_t len, char **out,
                          size_t *outlen, argusq_error *err)
{
    lib_clear(err);
    argusq_error scratch;
    if (!err)
        err = &scratch;
    if (out)
        *out = NULL;
    if (outlen)
        *outlen = 0;
    if (!s || !src || !out)
        return lib_fail(err, ARGUSQ_ERR_USAGE, "argusq_session_query: no session, text or output");
    size_t n = 0;
    FILE *f = open_memstream(out, &n);
    if (!f)
        return lib_fail(err, ARGUSQ_ERR_NOMEM, "out of memory");
    long rc = run(s, src, len, f, NULL, NULL, err);
    if (fclose(f) != 0 || !*out) {
        free(*out);
        *out = NULL;
        return lib_fail(err, ARGUSQ_ERR_NOMEM, "out of memory");
    }
    if (outlen)
        *outlen = n;
    return rc;
}

/* ---- one-shot ---- */

long argusq_query(argusq_archive *a, const char *src, const argusq_query_opts *opts, char **out, size_t *outlen,
                  argusq_error *err)
{
    lib_clear(err);
    argusq_session s;
    if (!a || !src) {
        if (out)
            *out = NULL;
        return lib_fail(err, ARGUSQ_ERR_USAGE, "argusq_query: no archive or text");
    }
    if (session_init(&s, a, opts, err)) {
        if (out)
            *out = NULL;
        return -1;
    }
    return argusq_session_query(&s, src, strlen(src), out, outlen, err);
}

long argusq_query_stream(argusq_archive *a, const char *src, const argusq_query_opts *opts, const argusq_output *o,
                         argusq_error *err)
{
    lib_clear(err);
    argusq_session s;
    if (!a || !src)
        return lib_fail(err, ARGUSQ_ERR_USAGE, "argusq_query_stream: no archive or text");
    if (session_init(&s, a, opts, err))
        return -1;
    return argusq_session_stream(&s, src, strlen(src), o, err);
}
