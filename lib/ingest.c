/* lib/ingest.c -- an ingest from the file to the commit: the format found
 * from the content, a dump's head restored (its rules and labels), the
 * rules file compiled, the reader (ingest/) feeding the graph (graph/)
 * and the writer (db/), labels written, the trace committed, and what
 * the reader mended reported.  The argusq command did this itself before
 * libargusq; it now calls argusq_ingest_into, so every client ingests the
 * same way. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "graph/graph.h"
#include "ingest/ingest.h"
#include "lib_int.h"

/* What an ingest knows before it touches the archive: the file's format,
 * a dump's head, the options as the caller's struct gives them. */
typedef struct prep {
    const char *path;
    argusq_ingest_opts o;
    ingest_format fmt;
    ingest_dump_head head;
    int dump; /* 1: path is an argusq dump (head filled) */
    const char *name;
    const char *shown; /* what the file is called in messages and the catalog */
    char base[256]; /* the default name: the path's last part */
} prep;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- the sink between the reader and the archive ----
 * While events come in time order (ftrace text always does) the graph is
 * built in the stream and each event is stored once, with its node; an
 * event out of order (an Argus file may interleave threads freely) stops
 * that, and the graph is built after the read from the time index instead
 * (graph_feed). */
typedef struct sink_ctx {
    db_writer *w;
    graph_feed feed;
    const argusq_ingest_opts *o;
    uint64_t events, bytes, total;
    double last; /* when progress was last reported */
    char *err;   /* sink_event's, for its failure */
    size_t errlen;
} sink_ctx;

/* The caller's progress callback, at most every 100 ms while reading
 * (a clock read every 4096 events and at each buffer refill). */
static void report_progress(sink_ctx *sc, bool force, const char *phase)
{
    if (!sc->o->progress)
        return;
    double t = now();
    if (!force && t - sc->last < 0.1)
        return;
    sc->last = t;
    sc->o->progress(sc->o->ctx, sc->bytes, sc->total, sc->events, phase);
}

static int sink_fail(const db_error *de, char *err, size_t len)
{
    snprintf(err, len, "%s", de->msg);
    return -1;
}

/* Names go to the archive only through these two, which tell the graph
 * (graph_feed_track_names). */
static int sink_proc(void *p, uint32_t pid, const char *name, char *err, size_t len)
{
    sink_ctx *sc = p;
    db_error de = {0};
    graph_feed_named(&sc->feed);
    return db_writer_proc(sc->w, pid, name, &de) ? sink_fail(&de, err, len) : 0;
}

static int sink_thread(void *p, const db_thread *t, char *err, size_t len)
{
    sink_ctx *sc = p;
    db_error de = {0};
    graph_feed_named(&sc->feed);
    return db_writer_thread(sc->w, t, &de) ? sink_fail(&de, err, len) : 0;
}

/* An event into the graph and the archive; a failure's message to the
 * replay's err (sink_event keeps it in sc). */
static inline int sink_feed(sink_ctx *sc, db_event *ev)
{
    return graph_feed_event(&sc->feed, ev) ? sink_fail(sc->feed.err, sc->err, sc->errlen) : 0;
}

static bool interrupted(const argusq_ingest_opts *o) { return o->interrupt && *o->interrupt; }

/* sink_event's every 4096th event, out of line (see there); and where
 * the reading stops once the caller's interrupt is set (a look at the
 * flag every 4096 events: a few ms of reading at most) */
static __attribute__((noinline)) int sink_event_progress(sink_ctx *sc, db_event *ev)
{
    if (interrupted(sc->o)) {
        snprintf(sc->err, sc->errlen, "interrupted");
        return -1;
    }
    report_progress(sc, false, NULL);
    return sink_feed(sc, ev);
}

/* The replay's err and len wait in sc for a failure, and the progress
 * report is out of line: across the call to the graph, only sc is kept
 * in a register, not also ev, err and len (four saved and restored, and
 * the stack realigned, for every event). */
static int sink_event(void *p, db_event *ev, char *err, size_t len)
{
    sink_ctx *sc = p;
    sc->err = err;
    sc->errlen = len;
    if ((++sc->events & 4095u) == 0)
        return sink_event_progress(sc, ev);
    return sink_feed(sc, ev);
}

static int sink_symbol(void *p, uint64_t addr, const char *name, char *err, size_t len)
{
    db_error de = {0};
    return db_writer_symbol(((sink_ctx *)p)->w, addr, name, &de) ? sink_fail(&de, err, len) : 0;
}

static void sink_skip(void *p) { db_writer_skip(((sink_ctx *)p)->w); }

static void sink_progress(void *p, uint64_t bytes, uint64_t total)
{
    sink_ctx *sc = p;
    sc->bytes = bytes;
    sc->total = total;
    report_progress(sc, false, NULL);
}

/* ---- rules ---- */


/* Rule statements (`rule ...;`) from src, compiled onto *rules (grown) for
 * the graph, and kept with the trace so that `rebuild graph` applies them
 * again.  where names src in messages. */
static int add_rules(const char *where, const char *src, size_t len, db_writer *w, graph_rule **rules, size_t *n,
                     argusq_error *err)
{
    query_error e = {0};
    query_script *sc = query_parse(src, len, &e);
    int rc = sc ? 0 : 1;
    size_t count = query_script_count(sc);
    graph_rule *grown = count ? realloc(*rules, (*n + count) * sizeof **rules) : *rules;
    if (count && !grown)
        rc = lib_fail(err, ARGUSQ_ERR_NOMEM, "out of memory");
    else
        *rules = grown;
    for (size_t i = 0; !rc && i < count; i++) {
        const query_stmt *st = query_script_stmt(sc, i);
        size_t tl;
        const char *text = query_stmt_text(st, &tl);
        db_error de = {0};
        uint32_t seq;
        memset(&(*rules)[*n], 0, sizeof **rules);
        if (query_rule_compile(st, &(*rules)[*n], &e))
            rc = 1;
        else if (db_writer_add_rule(w, text, tl, &seq, &de))
            rc = lib_fail(err, ARGUSQ_ERR_ARCHIVE, "%s", de.msg);
        else
            ++*n;
    }
    if (rc == 1) {
        lib_query_error(err, &e, where, src, len);
        if (e.line <= 0) /* no position: the message still names the source */
            snprintf(err->source, sizeof err->source, "%s", where);
    }
    query_script_free(sc);
    return rc ? -1 : 0;
}

/* A rules file (the rules option): add_rules of its text. */
static int load_rules(const char *path, db_writer *w, graph_rule **rules, size_t *n, argusq_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return lib_fail(err, ARGUSQ_ERR_IO, "%s: %s", path, strerror(errno));
    size_t len;
    char *src = ingest_slurp(f, &len);
    fclose(f);
    if (!src)
        return lib_fail(err, ARGUSQ_ERR_IO, "%s: read error", path);
    int rc = add_rules(path, src, len, w, rules, n, err);
    free(src);
    return rc;
}

/* A dump's rules (its `rule` records), then its labels: the trace's own,
 * before what the options add. */
static int restore_head(const prep *p, db_writer *w, graph_rule **rules, size_t *n, argusq_error *err)
{
    const ingest_dump_head *h = &p->head;
    for (size_t i = 0; i < h->nrules; i++) {
        char where[600];
        snprintf(where, sizeof where, "%s:%llu (rule record)", p->shown, (unsigned long long)h->rule_lines[i]);
        if (add_rules(where, h->rules[i], strlen(h->rules[i]), w, rules, n, err))
            return -1;
    }
    for (size_t i = 0; i < h->nlabels; i++) {
        db_error de = {0};
        if (db_writer_label(w, h->labels[2 * i], h->labels[2 * i + 1], &de))
            return lib_fail(err, ARGUSQ_ERR_INGEST, "%s: label \"%s\": %s", p->shown, h->labels[2 * i], de.msg);
    }
    return 0;
}

/* The trace's labels: what its file says about its recording, then the
 * caller's (which win over those of the same key). */
static int write_labels(db_writer *w, const prep *p, const ingest_meta *m, db_error *de)
{
    char n[16];
    snprintf(n, sizeof n, "%u", m->cpus);
    /* the file's word for its machine as it says it; else --arch's, by its one name */
    const char *arch = m->arch[0] ? m->arch : p->o.arch && p->o.arch[0] ? base_arch_name(base_arch_find(p->o.arch)) : "";
    const char *const meta[][2] = {{"host", m->host},         {"kernel", m->kernel},     {"arch", arch},
                                   {"cpus", m->cpus ? n : ""}, {"clock", m->clock},       {"recorder", m->recorder},
                                   {"command", m->command},    {"started", m->started},   {"duration", m->duration},
                                   {"status", m->status}};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        if (meta[i][1][0] && db_writer_label(w, meta[i][0], meta[i][1], de))
            return -1;
    for (size_t i = 0; i < p->o.nlabels; i++) {
        const char *kv = p->o.labels[i], *eq = strchr(kv, '=');
        char key[DB_LABEL_KEY_MAX + 1];
        snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
        if (db_writer_label(w, key, eq + 1, de))
            return -1;
    }
    return 0;
}

static void shown_as(char *msg, size_t cap, const char *path, const char *shown);

/* ---- before the archive ---- */

/* The options, checked; the file's format; a dump's head.  prep_free
 * after. */
static int prepare(prep *p, const char *path, const argusq_ingest_opts *opts, argusq_error *err)
{
    memset(p, 0, sizeof *p);
    p->path = path;
    if (opts)
        memcpy(&p->o, opts, opts->size < sizeof p->o ? opts->size : sizeof p->o);
    p->shown = p->o.source && p->o.source[0] ? p->o.source : path;
    if (!path)
        return lib_fail(err, ARGUSQ_ERR_USAGE, "no trace file to ingest");
    if (p->o.arch && p->o.arch[0] && !base_arch_find(p->o.arch))
        return lib_fail(err, ARGUSQ_ERR_USAGE,
                        "no syscall table of the machine \"%s\": argusq has those of " BASE_ARCH_LIST
                        " (without --arch, syscall numbers stay numbers)",
                        p->o.arch);
    for (size_t i = 0; i < p->o.nlabels; i++) {
        const char *kv = p->o.labels[i], *eq = kv ? strchr(kv, '=') : NULL;
        char key[DB_LABEL_KEY_MAX + 1];
        if (!eq || (size_t)(eq - kv) > DB_LABEL_KEY_MAX)
            return lib_fail(err, ARGUSQ_ERR_USAGE, "a label is KEY=VALUE, not \"%s\"", kv ? kv : "(null)");
        snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
        if (argusq_label_check(key, eq + 1, err))
            return -1;
    }
    FILE *f = fopen(path, "rb");
    if (!f)
        return lib_fail(err, ARGUSQ_ERR_IO, "%s: %s", p->shown, strerror(errno));
    char head[4096];
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    p->fmt = ingest_detect(head, n);
    if (p->fmt == INGEST_UNKNOWN) /* a folder: a CTF trace's */
        p->fmt = ingest_detect_folder(path);
    /* an argusq dump restores the trace it holds: its format (the graph's
     * rules depend on it), name, labels and user rules */
    char msg[1024] = "";
    p->dump = p->fmt == INGEST_ARGUS ? ingest_dump_head_read(path, &p->head, msg, sizeof msg) : 0;
    if (p->dump < 0) {
        shown_as(msg, sizeof msg, path, p->shown);
        return lib_fail(err, ARGUSQ_ERR_INGEST, "%s", msg);
    }
    p->name = p->o.name;
    if (!p->name && p->dump && p->head.name[0])
        p->name = p->head.name;
    if (!p->name) { /* a folder given as DIR/ (as a shell completes it) is named DIR */
        path = p->shown;
        size_t end = strlen(path);
        while (end > 1 && path[end - 1] == '/')
            end--;
        size_t start = end;
        while (start > 0 && path[start - 1] != '/')
            start--;
        if (end - start < sizeof p->base) {
            memcpy(p->base, path + start, end - start);
            p->base[end - start] = 0;
            p->name = p->base;
        } else
            p->name = path + start; /* too long: the catalog says so */
    }
    return 0;
}

static void prep_free(prep *p) { ingest_dump_head_free(&p->head); }

/* A reader's message names the file it opened: the name the caller gave
 * it goes in its place (argusq's "-" for a spooled standard input). */
static void shown_as(char *msg, size_t cap, const char *path, const char *shown)
{
    size_t pl = strlen(path), sl = strlen(shown);
    if (path == shown || !pl || strcmp(path, shown) == 0)
        return;
    char out[1024];
    size_t o = 0;
    for (const char *m = msg; *m && o + 1 < sizeof out;) {
        if (strncmp(m, path, pl) == 0 && o + sl < sizeof out) {
            memcpy(out + o, shown, sl);
            o += sl;
            m += pl;
        } else
            out[o++] = *m++;
    }
    out[o] = 0;
    snprintf(msg, cap, "%s", out);
}

/* A message that quotes a line of the file: a hostile file must not send
 * escape sequences to the terminal that shows it. */
static void defang(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

static void warn(const prep *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(const prep *p, const char *fmt, ...)
{
    if (!p->o.warning)
        return;
    char msg[5120];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->o.warning(p->o.ctx, msg);
}

/* ---- the ingest ---- */

static int ingest_trace(argusq_archive *a, prep *p, argusq_ingest_info *out, argusq_error *err)
{
    double t0 = now();
    db_error de = {0};
    db_writer *w = db_writer_begin(a->db, p->name, p->dump ? p->head.format : ingest_format_name(p->fmt), p->shown,
                                   &de);
    if (!w)
        return lib_fail(err, ARGUSQ_ERR_INGEST, "%s", de.msg);
    db_writer_interrupt(w, p->o.interrupt); /* the archive's writing, after the reading, stops too */
    sink_ctx sc = {.w = w, .o = &p->o};
    ingest_sink sink = {.ctx = &sc, .proc = sink_proc, .thread = sink_thread, .symbol = sink_symbol,
                        .event = sink_event, .skip = sink_skip, .progress = sink_progress};
    ingest_stats st = {0};
    ingest_opts iop = {.arch = p->o.arch};
    graph_stats gs;
    db_trace_info info;
    graph_rule *rules = NULL;
    size_t nrules = 0;
    if ((p->dump && restore_head(p, w, &rules, &nrules, err)) ||
        (p->o.rules && load_rules(p->o.rules, w, &rules, &nrules, err))) {
        free(rules);
        db_writer_abort(w);
        return -1;
    }
    char msg[1024] = "";
    bool fed = graph_feed_begin(&sc.feed, w, rules, nrules, &de) == 0;
    if (!fed)
        snprintf(msg, sizeof msg, "%s", de.msg);
    else
        graph_feed_track_names(&sc.feed);
    /* the reader in a second thread, the graph here, the archive's writes
     * in the writer's own thread (threads 1, or ARGUSQ_THREADS=1: the
     * reader here too; the archive is the same) */
    const char *env = getenv("ARGUSQ_THREADS");
    bool one = p->o.threads == 1 || (p->o.threads == 0 && env && strcmp(env, "1") == 0);
    ingest_format fmt = p->fmt;
    int irc = -1;
    if (fed)
        irc = one ? ingest_file_opts(p->path, &sink, &iop, &fmt, &st, msg, sizeof msg)
                  : ingest_file_threaded(p->path, &sink, &iop, &fmt, &st, msg, sizeof msg);
    if (irc) {
        shown_as(msg, sizeof msg, p->path, p->shown);
        defang(msg);
        lib_fail(err, ARGUSQ_ERR_INGEST, "%s", msg);
        graph_feed_abort(&sc.feed);
        free(rules);
        db_writer_abort(w);
        return -1;
    }
    report_progress(&sc, true, "building the graph");
    /* the caller's interrupt is looked at before each phase too: a file
     * read in one go (the last 4096 events), a graph built after it */
    bool stop = interrupted(&p->o);
    int rc = stop ? -1 : graph_feed_end(&sc.feed, &gs);
    if (stop)
        graph_feed_abort(&sc.feed);
    free(rules);
    if (rc) {
        db_writer_abort(w);
        return lib_fail(err, ARGUSQ_ERR_INGEST, "%s: %s", p->shown, de.msg);
    }
    report_progress(&sc, true, "writing the archive");
    rc = interrupted(&p->o) ? -1 : write_labels(w, p, &st.meta, &de);
    if (!rc)
        rc = db_writer_commit(w, &info, &de);
    else
        db_writer_abort(w);
    if (rc)
        return lib_fail(err, ARGUSQ_ERR_INGEST, "%s: %s", p->shown, de.msg);
    /* what the reader mended rather than refused */
    if (st.truncated)
        warn(p, "%s:%llu: the file ends inside this line; it is left out, the rest is in", p->shown,
             (unsigned long long)st.truncated);
    if (st.unnamed && st.meta.arch[0])
        warn(p,
             "%s: %llu syscall events keep their number without a name: argusq has no syscall table of the "
             "machine the file says it was recorded on, %s (it has " BASE_ARCH_LIST ")",
             p->shown, (unsigned long long)st.unnamed, st.meta.arch);
    else if (st.unnamed)
        warn(p,
             "%s: %llu syscall events keep their number without a name: the file does not say the machine it "
             "was recorded on; ingest --arch MACHINE names them (" BASE_ARCH_LIST ")",
             p->shown, (unsigned long long)st.unnamed);
    if (st.warning[0])
        warn(p, "%s: %s", p->shown, st.warning);
    if (st.reordered || st.late)
        warn(p,
             "%s: %llu events were out of time order and were put in order; %llu were too far behind to be and "
             "are kept at the time of the event before them",
             p->shown, (unsigned long long)st.reordered, (unsigned long long)st.late);
    argusq_ingest_info r = {.size = sizeof r};
    snprintf(r.trace, sizeof r.trace, "%s", info.name);
    snprintf(r.format, sizeof r.format, "%s", info.format);
    r.events = info.events;
    r.threads = info.threads;
    r.processes = info.processes;
    r.nodes = info.nodes;
    r.edges = info.edges;
    r.skipped = info.skipped;
    r.reordered = st.reordered;
    r.late = st.late;
    r.truncated_line = st.truncated;
    r.unnamed = st.unnamed;
    r.first_ts = info.first_ts;
    r.last_ts = info.last_ts;
    r.seconds = now() - t0;
    snprintf(r.recorder, sizeof r.recorder, "%s", st.meta.recorder);
    r.userspace = st.ust;
    r.userspace_skipped = st.ust_no_tid;
    if (out) {
        size_t size = out->size < sizeof r ? out->size : sizeof r;
        memcpy(out, &r, size);
        out->size = size;
    }
    return 0;
}

/* An ingest that failed while the caller's interrupt was set failed for
 * it, whatever the failure said (a read cut short by the signal, the
 * writer lock not taken); its trace is gone (db_writer_abort), as after
 * any failure. */
static int ingest(argusq_archive *a, prep *p, argusq_ingest_info *out, argusq_error *err)
{
    int rc = ingest_trace(a, p, out, err);
    if (rc && interrupted(&p->o)) {
        lib_clear(err);
        return lib_fail(err, ARGUSQ_ERR_INTERRUPTED, "%s: interrupted; nothing of it was kept", p->shown);
    }
    return rc;
}

int argusq_ingest(argusq_archive *a, const char *path, const argusq_ingest_opts *opts, argusq_ingest_info *info,
                  argusq_error *err)
{
    lib_clear(err);
    argusq_error scratch;
    if (!err)
        err = &scratch, lib_clear(err);
    if (!a)
        return lib_fail(err, ARGUSQ_ERR_USAGE, "argusq_ingest: no archive");
    prep p;
    int rc = prepare(&p, path, opts, err);
    if (!rc)
        rc = ingest(a, &p, info, err);
    prep_free(&p);
    return rc;
}

int argusq_ingest_into(const char *archive_path, unsigned flags, const char *path, const argusq_ingest_opts *opts,
                       argusq_ingest_info *info, argusq_error *err)
{
    lib_clear(err);
    argusq_error scratch;
    if (!err)
        err = &scratch, lib_clear(err);
    prep p;
    int rc = prepare(&p, path, opts, err);
    argusq_archive *a = NULL;
    if (!rc && !(a = argusq_open(archive_path, ARGUSQ_OPEN_WRITE | ARGUSQ_OPEN_CREATE | (flags & ARGUSQ_OPEN_LOG),
                                 err)))
        rc = -1;
    if (!rc)
        rc = ingest(a, &p, info, err);
    argusq_close(a);
    prep_free(&p);
    return rc;
}
