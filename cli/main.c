/* cli/main.c -- the argusq command: ingest a trace, or run statements (one
 * from the command line, a script with -f, stdin, or a REPL).  Thin on
 * purpose: everything it does is a call into ingest/, graph/, db/, query/.
 *
 * Exit status: 0 success, 1 a statement or an ingest failed, 2 usage or
 * I/O error (archive or script cannot be opened). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <editline/readline.h>

#include "db/db.h"
#include "graph/graph.h"
#include "ingest/ingest.h"
#include "query/query.h"
#include "admin.h"
#include "progress.h"

#define ARGUSQ_VERSION "0.1.0"

static const char usage[] =
    "usage: argusq [-d ARCHIVE] ingest FILE [--name NAME] [--rules RULES] [--arch MACHINE] [--label KEY=VALUE]...\n"
    "              [--json]\n"
    "       argusq record [-o FILE] [--max-mb N] [--events LIST] [--watch SYMBOL]... -- CMD [ARGS...]\n"
    "       argusq [-d ARCHIVE] [--trace NAME] [--json | --format table|json|csv|dot|svg|perfetto] 'STATEMENT'\n"
    "       argusq [-d ARCHIVE] [--trace NAME] [--json] -f SCRIPT\n"
    "       argusq [-d ARCHIVE]                      (statements from stdin, or a REPL)\n"
    "       argusq [-d ARCHIVE] [--json] info | compact | backup FILE\n"
    "       argusq [-d ARCHIVE] [--json] dump [--trace NAME] [-o FILE]\n"
    "\n"
    "info: the archive's file, its used and free space, format and contents.  compact: the\n"
    "archive rewritten without free pages (dropped traces, killed ingests), in its place.\n"
    "backup FILE: a consistent copy of the archive as last committed, while others use it.\n"
    "dump: a trace (default the latest) as an Argus trace (docs/ARGUS-DUMP.md) on standard\n"
    "output or in FILE; `argusq ingest FILE` gives back the same events, nodes and edges.\n"
    "\n"
    "ARCHIVE defaults to $ARGUSQ_DB, else ./argus.db.  `argusq help` lists the statements.\n"
    "\n"
    "record (as root) traces the whole system while CMD runs and writes FILE (default trace.dat),\n"
    "then `argusq ingest FILE` reads it:\n"
    "  -o FILE         the trace.dat to write\n"
    "  --max-mb N      ring buffer of N MiB for all CPUs (default 64); when it is full the\n"
    "                  oldest events are dropped, so FILE keeps the last N MiB of the run\n"
    "  --events LIST   ftrace events SYSTEM:EVENT or SYSTEM, comma-separated, instead of the\n"
    "                  ones the Argus mapping uses (`default` stands for those)\n"
    "  --watch SYMBOL  a global variable of CMD (1, 2, 4 or 8 bytes; at most two): each write\n"
    "                  and read becomes a flag_write / flag_read event of the accessing thread\n"
    "Exit status of record: 0 the trace was written, 1 it failed, 2 usage, 3 this machine\n"
    "cannot trace (not root, no tracefs).\n";

typedef struct options {
    const char *archive;
    const char *trace;
    const char *script;
    const char *name;
    const char *rules;
    const char *arch; /* ingest --arch: the machine a text trace was recorded on */
    const char *labels[32]; /* ingest --label KEY=VALUE */
    int nlabels;
    query_format format;
    bool ingest;
    bool list_traces; /* --list-traces: names, one a line (bash completion) */
    const char *file;
    const char *output; /* dump -o FILE */
    char *statement; /* owned */
} options;

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "argusq: %s%s%s\n%s", msg, arg ? " " : "", arg ? arg : "", usage);
    return 2;
}

/* The trace's labels: what its file says about its recording, then the
 * user's --label (which win over those of the same key). */
static int write_labels(db_writer *w, const options *o, const ingest_meta *m, db_error *de)
{
    char n[16];
    snprintf(n, sizeof n, "%u", m->cpus);
    const char *arch = m->arch[0] ? m->arch : o->arch ? o->arch : "";
    const char *const meta[][2] = {{"host", m->host},         {"kernel", m->kernel},     {"arch", arch},
                                   {"cpus", m->cpus ? n : ""}, {"clock", m->clock},       {"recorder", m->recorder},
                                   {"command", m->command},    {"started", m->started},   {"duration", m->duration},
                                   {"status", m->status}};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        if (meta[i][1][0] && db_writer_label(w, meta[i][0], meta[i][1], de))
            return -1;
    for (int i = 0; i < o->nlabels; i++) {
        const char *eq = strchr(o->labels[i], '=');
        char key[DB_LABEL_KEY_MAX + 1];
        snprintf(key, sizeof key, "%.*s", (int)(eq - o->labels[i]), o->labels[i]);
        if (db_writer_label(w, key, eq + 1, de))
            return -1;
    }
    return 0;
}

/* Options may come before or after the command words. */
static int parse_args(int argc, char **argv, options *o)
{
    const char *env = getenv("ARGUSQ_DB");
    o->archive = env && *env ? env : "argus.db";
    size_t stmt_len = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            exit(0);
        } else if (!strcmp(a, "--version")) {
            puts("argusq " ARGUSQ_VERSION);
            exit(0);
        } else if (!strcmp(a, "-d") || !strcmp(a, "--db")) {
            if (!has_next)
                return usage_error("missing archive after", a);
            o->archive = argv[++i];
        } else if (!strcmp(a, "--trace")) {
            if (!has_next)
                return usage_error("missing trace name after", a);
            o->trace = argv[++i];
        } else if (!strcmp(a, "--name")) {
            if (!has_next)
                return usage_error("missing name after", a);
            o->name = argv[++i];
        } else if (!strcmp(a, "--arch")) {
            if (!has_next)
                return usage_error("missing machine (x86_64) after", a);
            o->arch = argv[++i];
        } else if (!strcmp(a, "--label")) {
            if (!has_next)
                return usage_error("missing KEY=VALUE after", a);
            const char *kv = argv[++i], *eq = strchr(kv, '=');
            char key[DB_LABEL_KEY_MAX + 1];
            db_error de = {0};
            if (!eq || (size_t)(eq - kv) > DB_LABEL_KEY_MAX)
                return usage_error("--label takes KEY=VALUE:", kv);
            snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
            if (db_label_check(key, strlen(eq + 1), &de))
                return usage_error(de.msg, NULL);
            if (o->nlabels == (int)(sizeof o->labels / sizeof o->labels[0]))
                return usage_error("too many --label (at most 32)", NULL);
            o->labels[o->nlabels++] = kv;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!has_next)
                return usage_error("missing file after", a);
            o->output = argv[++i];
        } else if (!strcmp(a, "--rules")) {
            if (!has_next)
                return usage_error("missing rules file after", a);
            o->rules = argv[++i];
        } else if (!strcmp(a, "-f")) {
            if (!has_next)
                return usage_error("missing script after", a);
            o->script = argv[++i];
        } else if (!strcmp(a, "--json")) {
            o->format = QUERY_FMT_JSON;
        } else if (!strcmp(a, "--list-traces")) {
            o->list_traces = true;
        } else if (!strcmp(a, "--format")) {
            if (!has_next)
                return usage_error("missing format after", a);
            const char *f = argv[++i];
            if (!query_format_from_name(f, &o->format))
                return usage_error("unknown format (table, json, csv, dot, svg, perfetto):", f);
        } else if (a[0] == '-' && a[1] && !o->statement) {
            return usage_error("unknown option", a);
        } else if (!o->statement && !o->ingest && !strcmp(a, "ingest")) {
            o->ingest = true;
        } else if (o->ingest && !o->file) {
            o->file = a;
        } else if (o->ingest) {
            return usage_error("unexpected argument", a);
        } else {
            /* statement words: `argusq find nodes` works like `argusq 'find nodes'` */
            size_t n = strlen(a);
            char *p = realloc(o->statement, stmt_len + n + 2);
            if (!p)
                return usage_error("out of memory", NULL);
            o->statement = p;
            if (stmt_len)
                p[stmt_len++] = ' ';
            memcpy(p + stmt_len, a, n + 1);
            stmt_len += n;
        }
    }
    if (o->ingest && !o->file)
        return usage_error("ingest needs a FILE", NULL);
    if (o->script && o->statement)
        return usage_error("give a statement or -f SCRIPT, not both", NULL);
    if (o->output && (!o->statement || strcmp(o->statement, "dump") != 0))
        return usage_error("-o FILE is an option of dump", NULL);
    return 0;
}

/* ---- ingest ---- */

/* The sink between a reader and the archive.  While events come in time
 * order (ftrace text always does) the graph is built in the stream and
 * each event is stored once, with its node; an event out of order (an
 * Argus file may interleave threads freely) stops that, and the graph is
 * built after the read from the time index instead. */
typedef struct sink_ctx {
    db_writer *w;
    graph_feed feed; /* events with their nodes into the archive */
    progress *pg;    /* the bar on a terminal */
} sink_ctx;

static int sink_fail(const db_error *de, char *err, size_t len)
{
    snprintf(err, len, "%s", de->msg);
    return -1;
}

static int sink_proc(void *p, uint32_t pid, const char *name, char *err, size_t len)
{
    db_error de = {0};
    return db_writer_proc(((sink_ctx *)p)->w, pid, name, &de) ? sink_fail(&de, err, len) : 0;
}

static int sink_thread(void *p, const db_thread *t, char *err, size_t len)
{
    db_error de = {0};
    return db_writer_thread(((sink_ctx *)p)->w, t, &de) ? sink_fail(&de, err, len) : 0;
}

static int sink_event(void *p, db_event *ev, char *err, size_t len)
{
    sink_ctx *sc = p;
    progress_event(sc->pg);
    return graph_feed_event(&sc->feed, ev) ? sink_fail(sc->feed.err, err, len) : 0;
}

static int sink_symbol(void *p, uint64_t addr, const char *name, char *err, size_t len)
{
    db_error de = {0};
    return db_writer_symbol(((sink_ctx *)p)->w, addr, name, &de) ? sink_fail(&de, err, len) : 0;
}

static void sink_skip(void *p) { db_writer_skip(((sink_ctx *)p)->w); }

static void sink_progress(void *p, uint64_t bytes, uint64_t total)
{
    progress *pg = ((sink_ctx *)p)->pg;
    progress_set_total(pg, total);
    progress_update(pg, bytes, pg->events);
}

static int detect(const char *path, ingest_format *fmt)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "argusq: %s: %s\n", path, strerror(errno));
        return 2;
    }
    char head[4096];
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    *fmt = ingest_detect(head, n);
    return 0;
}

static char *slurp(FILE *f, size_t *len);
static void report(const char *where, const char *src, size_t len, const query_error *e);

/* Rule statements (`rule ...;`) from src, compiled onto *rules (grown) for
 * graph_build, and kept with the trace so that `rebuild graph` applies
 * them again.  where names src in messages.  Returns 0, 1 (bad rules), or
 * 2 (out of memory, archive). */
static int add_rules(const char *where, const char *src, size_t len, db_writer *w, graph_rule **rules, size_t *n)
{
    query_error e = {0};
    query_script *sc = query_parse(src, len, &e);
    int rc = sc ? 0 : 1;
    size_t count = query_script_count(sc);
    graph_rule *grown = count ? realloc(*rules, (*n + count) * sizeof **rules) : *rules;
    if (count && !grown)
        rc = 2;
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
        else if (db_writer_add_rule(w, text, tl, &seq, &de)) {
            fprintf(stderr, "argusq: %s\n", de.msg);
            rc = 2;
        } else
            ++*n;
    }
    if (rc == 1)
        report(where, src, len, &e);
    query_script_free(sc);
    return rc;
}

/* A rules file (ingest --rules): add_rules of its text.  Returns 0, 1
 * (bad rules), or 2 (I/O). */
static int load_rules(const char *path, db_writer *w, graph_rule **rules, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "argusq: %s: %s\n", path, strerror(errno));
        return 2;
    }
    size_t len;
    char *src = slurp(f, &len);
    fclose(f);
    if (!src) {
        fprintf(stderr, "argusq: %s: read error\n", path);
        return 2;
    }
    int rc = add_rules(path, src, len, w, rules, n);
    free(src);
    return rc;
}

/* A dump's rules (its `rule` records), then its labels: the trace's own,
 * before what the ingest's options add. */
static int restore_head(const char *path, const ingest_dump_head *h, db_writer *w, graph_rule **rules,
                        size_t *n)
{
    for (size_t i = 0; i < h->nrules; i++) {
        char where[600];
        snprintf(where, sizeof where, "%s:%llu (rule record)", path, (unsigned long long)h->rule_lines[i]);
        int rc = add_rules(where, h->rules[i], strlen(h->rules[i]), w, rules, n);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < h->nlabels; i++) {
        db_error de = {0};
        if (db_writer_label(w, h->labels[2 * i], h->labels[2 * i + 1], &de)) {
            fprintf(stderr, "argusq: %s: label \"%s\": %s\n", path, h->labels[2 * i], de.msg);
            return 1;
        }
    }
    return 0;
}

static int cmd_ingest(const options *o)
{
    ingest_format fmt;
    int rc = detect(o->file, &fmt);
    if (rc)
        return rc;
    /* an argusq dump restores the trace it holds: its format (the graph's
     * rules depend on it), name, labels and user rules */
    ingest_dump_head head = {0};
    char err[1024] = "";
    int dump = fmt == INGEST_ARGUS ? ingest_dump_head_read(o->file, &head, err, sizeof err) : 0;
    if (dump < 0) {
        fprintf(stderr, "argusq: %s\n", err);
        return 1;
    }
    const char *name = o->name;
    if (!name && dump && head.name[0])
        name = head.name;
    if (!name) {
        const char *slash = strrchr(o->file, '/');
        name = slash ? slash + 1 : o->file;
    }
    db_error de = {0};
    db_archive *a = cli_open_archive(o->archive, false, &de);
    if (!a) {
        fprintf(stderr, "argusq: %s\n", de.msg);
        ingest_dump_head_free(&head);
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    db_writer *w = db_writer_begin(a, name, dump ? head.format : ingest_format_name(fmt), o->file, &de);
    if (!w) {
        fprintf(stderr, "argusq: %s\n", de.msg);
        ingest_dump_head_free(&head);
        db_close(a);
        return 1;
    }
    progress pg; /* on stderr, when it is a terminal */
    progress_begin(&pg, "ingest", 0);
    sink_ctx sc = {.w = w, .pg = &pg};
    ingest_sink sink = {.ctx = &sc, .proc = sink_proc, .thread = sink_thread, .symbol = sink_symbol,
                        .event = sink_event, .skip = sink_skip, .progress = sink_progress};
    ingest_stats st = {0};
    ingest_opts iop = {.arch = o->arch};
    graph_stats gs;
    db_trace_info info;
    graph_rule *rules = NULL;
    size_t nrules = 0;
    if (dump)
        rc = restore_head(o->file, &head, w, &rules, &nrules);
    ingest_dump_head_free(&head);
    if (rc || (o->rules && (rc = load_rules(o->rules, w, &rules, &nrules)) != 0)) {
        free(rules);
        db_writer_abort(w);
        db_close(a);
        return rc;
    }
    bool fed = graph_feed_begin(&sc.feed, w, rules, nrules, &de) == 0;
    if (!fed)
        snprintf(err, sizeof err, "%s", de.msg);
    /* two cores: the reader in a second thread, graph and archive here
     * (ARGUSQ_THREADS=1: one thread; the archive is the same) */
    const char *threads = getenv("ARGUSQ_THREADS");
    int irc = -1;
    if (fed)
        irc = threads && strcmp(threads, "1") == 0
                  ? ingest_file_opts(o->file, &sink, &iop, &fmt, &st, err, sizeof err)
                  : ingest_file_threaded(o->file, &sink, &iop, &fmt, &st, err, sizeof err);
    if (irc) {
        progress_end(&pg);
        /* the message quotes the bad line: a hostile file must not send
         * escape sequences to the terminal */
        for (char *c = err; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                *c = '?';
        fprintf(stderr, "argusq: %s\n", err);
        graph_feed_abort(&sc.feed);
        free(rules);
        db_writer_abort(w);
        db_close(a);
        return 1;
    }
    progress_phase(&pg, "building the graph");
    rc = graph_feed_end(&sc.feed, &gs);
    free(rules);
    if (rc) {
        progress_end(&pg);
        fprintf(stderr, "argusq: %s: %s\n", o->file, de.msg);
        db_writer_abort(w);
        db_close(a);
        return 1;
    }
    progress_phase(&pg, "writing the archive");
    rc = write_labels(w, o, &st.meta, &de);
    if (!rc)
        rc = db_writer_commit(w, &info, &de);
    else
        db_writer_abort(w);
    progress_end(&pg);
    if (rc) {
        fprintf(stderr, "argusq: %s: %s\n", o->file, de.msg);
        db_close(a);
        return 1;
    }
    /* what the reader mended rather than refused */
    if (st.truncated)
        fprintf(stderr, "argusq: %s:%llu: the file ends inside this line; it is left out, the rest is in\n",
                o->file, (unsigned long long)st.truncated);
    if (st.unnamed)
        fprintf(stderr,
                "argusq: %s: %llu syscall events keep their number without a name: the file does not say "
                "the machine it was recorded on (ingest --arch x86_64 names them)\n",
                o->file, (unsigned long long)st.unnamed);
    if (st.reordered || st.late)
        fprintf(stderr,
                "argusq: %s: %llu events were out of time order and were put in order; %llu were too far "
                "behind to be and are kept at the time of the event before them\n",
                o->file, (unsigned long long)st.reordered, (unsigned long long)st.late);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (o->format == QUERY_FMT_JSON) {
        printf("{\"trace\":\"");
        for (const char *p = info.name; *p; p++)
            printf(*p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
        printf("\",\"events\":%llu,\"threads\":%llu,\"processes\":%llu,\"nodes\":%llu,\"edges\":%llu,"
               "\"skipped\":%llu,\"reordered\":%llu,\"late\":%llu,\"truncated_line\":%llu}\n",
               (unsigned long long)info.events, (unsigned long long)info.threads,
               (unsigned long long)info.processes, (unsigned long long)info.nodes,
               (unsigned long long)info.edges, (unsigned long long)info.skipped,
               (unsigned long long)st.reordered, (unsigned long long)st.late,
               (unsigned long long)st.truncated);
    } else {
        printf("ingested %s as trace \"%s\" into %s (%s, %.2f s)\n", o->file, info.name, o->archive,
               info.format, secs);
        printf("  %llu events, %llu threads, %llu processes, %llu nodes, %llu edges, %llu lines skipped\n",
               (unsigned long long)info.events, (unsigned long long)info.threads,
               (unsigned long long)info.processes, (unsigned long long)info.nodes,
               (unsigned long long)info.edges, (unsigned long long)info.skipped);
        if (st.reordered || st.late || st.truncated)
            printf("  %llu events put back in time order, %llu kept late, last line %s\n",
                   (unsigned long long)st.reordered, (unsigned long long)st.late,
                   st.truncated ? "cut short and left out" : "whole");
    }
    db_close(a);
    return 0;
}

/* ---- record ---- */

/* argusq [-d ARCHIVE] record [-o FILE] [--max-mb N] [--events LIST]
 * [--watch SYMBOL]... [--] CMD [ARGS...]: options up to CMD, then CMD's
 * own arguments untouched.  Returns the exit status. */
/* The recording's bar: what the kernel's buffers hold so far. */
static void record_progress(void *ctx, uint64_t bytes, uint64_t events)
{
    if (bytes == UINT64_MAX)
        progress_end(ctx); /* CMD ended: the summary follows */
    else
        progress_update(ctx, bytes, events);
}

static int cmd_record(int argc, char **argv, int first)
{
    ingest_record_opts o = {.output = "trace.dat", .log = stderr};
    const char **watch = calloc((size_t)argc, sizeof *watch);
    if (!watch)
        return usage_error("out of memory", NULL);
    int i = first;
    for (; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!has_next) {
                free(watch);
                return usage_error("missing file after", a);
            }
            o.output = argv[++i];
        } else if (!strcmp(a, "--max-mb")) {
            char *end;
            unsigned long v = has_next ? strtoul(argv[i + 1], &end, 10) : 0;
            if (!has_next || !*argv[i + 1] || *end || v == 0 || v > 1u << 20) {
                free(watch);
                return usage_error("--max-mb wants a number of MiB (1 to 1048576), not",
                                   has_next ? argv[i + 1] : "nothing");
            }
            o.max_mb = (unsigned)v;
            i++;
        } else if (!strcmp(a, "--events")) {
            if (!has_next) {
                free(watch);
                return usage_error("missing event list after", a);
            }
            o.events = argv[++i];
        } else if (!strcmp(a, "--watch")) {
            if (!has_next) {
                free(watch);
                return usage_error("missing symbol after", a);
            }
            watch[o.nwatch++] = argv[++i];
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            free(watch);
            fputs(usage, stdout);
            return 0;
        } else if (a[0] == '-') {
            free(watch);
            return usage_error("unknown record option", a);
        } else {
            break;
        }
    }
    if (i >= argc) {
        free(watch);
        return usage_error("record needs a command: argusq record [OPTIONS] -- CMD [ARGS...]", NULL);
    }
    o.watch = watch;
    o.argv = argv + i;
    ingest_record_stats st;
    char err[1024] = "";
    progress bar;
    progress_begin(&bar, "record", 0);
    if (bar.on) {
        o.progress = record_progress;
        o.progress_ctx = &bar;
    }
    int rc = ingest_record(&o, &st, err, sizeof err);
    progress_end(&bar);
    free(watch);
    if (rc == 0) {
        fprintf(stderr, "argusq: ingest it with: argusq ingest %s\n", o.output);
        return 0;
    }
    fprintf(stderr, "argusq: record: %s\n", err);
    return rc == -2 ? 3 : 1;
}

/* ---- statements ---- */

/* "where: line:col: msg" and the offending source line with a caret. */
static void report(const char *where, const char *src, size_t len, const query_error *e)
{
    if (e->line <= 0) {
        fprintf(stderr, "argusq: %s: %s\n", where, e->msg);
        return;
    }
    fprintf(stderr, "argusq: %s:%d:%d: %s\n", where, e->line, e->col, e->msg);
    const char *p = src, *end = src + len;
    for (int l = 1; l < e->line && p < end; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    int n = (int)((nl ? nl : end) - p);
    fprintf(stderr, "  %.*s\n  %*s^\n", n, p, e->col - 1, "");
}

/* Parses and runs src; stops at the first failing statement. */
static int run_source(query_session *s, const char *where, const char *src, size_t len)
{
    query_error e = {0};
    query_script *sc = query_parse(src, len, &e);
    if (!sc) {
        report(where, src, len, &e);
        return 1;
    }
    /* `argusq ''` or `argusq ';'` asked for nothing: say so (a script or
     * stdin may well hold no statement) */
    if (!query_script_count(sc) && !strcmp(where, "query")) {
        fprintf(stderr, "argusq: query: no statement (`argusq help` lists them)\n");
        query_script_free(sc);
        return 2;
    }
    int rc = 0;
    for (size_t i = 0; i < query_script_count(sc) && !rc; i++) {
        memset(&e, 0, sizeof e);
        const query_stmt *st = query_script_stmt(sc, i);
        if (query_exec(s, st, &e)) {
            /* a script names the line of the statement that failed */
            if (e.line <= 0 && (query_script_count(sc) > 1 || strcmp(where, "query") != 0))
                fprintf(stderr, "argusq: %s:%d: %s\n", where, query_stmt_line(st), e.msg);
            else
                report(where, src, len, &e);
            rc = 1;
        }
        fflush(s->out);
    }
    query_script_free(sc);
    return rc;
}

static char *slurp(FILE *f, size_t *len)
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

static int run_file(query_session *s, const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "argusq: %s: %s\n", path, strerror(errno));
        return 2;
    }
    size_t len;
    char *src = slurp(f, &len);
    if (f != stdin)
        fclose(f);
    if (!src) {
        fprintf(stderr, "argusq: %s: read error\n", path);
        return 2;
    }
    int rc = run_source(s, strcmp(path, "-") ? path : "stdin", src, len);
    free(src);
    return rc;
}

/* True when the REPL should run what it has: the input ends with ';'
 * (statements may span lines, as in psql or sqlite3), or it is one of the
 * one-word statements people type bare. */
static bool repl_complete(const char *buf, size_t len)
{
    while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t' || buf[len - 1] == '\n'))
        len--;
    if (len && buf[len - 1] == ';')
        return true;
    while (len && (*buf == ' ' || *buf == '\t' || *buf == '\n'))
        buf++, len--;
    static const char *const bare[] = {"help", "traces", "rules", "quit", "exit"};
    for (size_t i = 0; i < sizeof bare / sizeof bare[0]; i++)
        if (len == strlen(bare[i]) && strncasecmp(buf, bare[i], len) == 0)
            return true;
    return len > 5 && strncasecmp(buf, "help ", 5) == 0 && !memchr(buf, '\n', len);
}

/* A line of the REPL: through libedit, or -- on a terminal that cannot
 * edit (TERM unset or dumb: an editor's shell buffer, a serial console),
 * where libedit took Ctrl-D for a character -- read as the terminal's own
 * line discipline gives it, where Ctrl-D ends the input.  NULL at the end;
 * the caller frees the line. */
static char *read_line(const char *prompt, bool edit)
{
    if (edit)
        return readline(prompt);
    fputs(prompt, stdout);
    fflush(stdout);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
        free(line);
        return NULL;
    }
    if (n > 0 && line[n - 1] == '\n')
        line[n - 1] = '\0';
    return line;
}

static int repl(query_session *s)
{
    const char *term = getenv("TERM");
    bool edit = term && *term && strcmp(term, "dumb") != 0;
    char hist[4096] = "";
    const char *home = getenv("HOME");
    if (home)
        snprintf(hist, sizeof hist, "%s/.argusq_history", home);
    using_history();
    if (hist[0])
        read_history(hist);
    printf("argusq %s on %s -- end statements with ';', `help` lists them, Ctrl-D quits\n", ARGUSQ_VERSION,
           s->archive_path);
    char *buf = NULL;
    size_t len = 0;
    for (;;) {
        char *line = read_line(len ? "   ...> " : "argusq> ", edit);
        if (!line)
            break;
        size_t n = strlen(line);
        char *p = realloc(buf, len + n + 2);
        if (!p) {
            free(line);
            break;
        }
        buf = p;
        memcpy(buf + len, line, n);
        len += n;
        buf[len++] = '\n';
        buf[len] = 0;
        free(line);
        if (!repl_complete(buf, len))
            continue;
        buf[len - 1] = 0;
        /* one history entry per statement, however many lines it took */
        for (char *c = buf; *c; c++)
            if (*c == '\n')
                *c = ' ';
        add_history(buf);
        const char *w = buf + strspn(buf, " \t");
        if (!strncasecmp(w, "quit", 4) || !strncasecmp(w, "exit", 4))
            break;
        run_source(s, "query", buf, len - 1);
        len = 0;
    }
    free(buf);
    if (hist[0])
        write_history(hist);
    putchar('\n');
    return 0;
}

/* The trace names, one a line, for shell completion: quiet and 0 when
 * there is no archive. */
static int print_name(void *ctx, const db_trace_info *t)
{
    (void)ctx;
    puts(t->name);
    return 0;
}

static int list_traces(const char *archive)
{
    db_error de = {0};
    if (access(archive, R_OK) != 0)
        return 0;
    db_archive *a = db_open(archive, true, &de);
    if (!a)
        return 0;
    int rc = db_list_traces(a, print_name, NULL, &de) ? 1 : 0;
    db_close(a);
    return rc;
}

/* LMDB reads pages it trusts: a damaged archive file can make it fault.
 * Say so and exit, rather than dying silently.  The message is prepared
 * before any archive is read because a handler may only write(2); it is the
 * one piece of state a signal handler has, hence static. */
static char damaged_msg[4200];
static size_t damaged_len;

static void on_fault(int sig)
{
    (void)sig;
    ssize_t n = write(STDERR_FILENO, damaged_msg, damaged_len);
    (void)n;
    _exit(3);
}

static void catch_faults(const char *archive)
{
    int n = snprintf(damaged_msg, sizeof damaged_msg,
                     "argusq: %s: the archive is damaged (a page could not be read); "
                     "argusq stopped without changing it\n",
                     archive);
    damaged_len = n > 0 ? (size_t)n < sizeof damaged_msg ? (size_t)n : sizeof damaged_msg - 1 : 0;
    struct sigaction sa = {.sa_handler = on_fault, .sa_flags = SA_RESETHAND};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    /* a file-size limit (ulimit -f) is an error, EFBIG, not a kill */
    signal(SIGXFSZ, SIG_IGN);
}

/* `help` or `help WORD`, alone: answered without an archive */
static bool help_only(const char *stmt)
{
    while (*stmt == ' ' || *stmt == '\t' || *stmt == '\n')
        stmt++;
    return strncasecmp(stmt, "help", 4) == 0 && (!stmt[4] || strchr(" \t\n;", stmt[4])) && !strchr(stmt, ';');
}

int main(int argc, char **argv)
{
    /* `record` takes a command line of its own: parsed apart */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "record"))
            return cmd_record(argc, argv, i + 1);
        if (!strcmp(argv[i], "-d") || !strcmp(argv[i], "--db"))
            i++;
        else
            break;
    }
    options o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc) {
        free(o.statement);
        return rc;
    }
    catch_faults(o.archive);
    if (o.ingest) {
        rc = cmd_ingest(&o);
        free(o.statement);
        return rc;
    }
    if (o.list_traces) {
        free(o.statement);
        return list_traces(o.archive);
    }
    /* the archive's own commands (admin.c) */
    bool json = o.format == QUERY_FMT_JSON;
    if (o.statement && (!strcmp(o.statement, "info") || !strcmp(o.statement, "compact"))) {
        rc = o.statement[0] == 'i' ? cli_info(o.archive, json) : cli_compact(o.archive, json);
        free(o.statement);
        return rc;
    }
    if (o.statement && !strcmp(o.statement, "dump")) {
        rc = cli_dump(o.archive, o.trace, o.output, json, "argusq " ARGUSQ_VERSION);
        free(o.statement);
        return rc;
    }
    if (o.statement && (!strcmp(o.statement, "backup") || !strncmp(o.statement, "backup ", 7))) {
        rc = o.statement[6] ? cli_backup(o.archive, o.statement + 7, json) : usage_error("backup needs a FILE", NULL);
        free(o.statement);
        return rc;
    }
    /* statements that change a trace (rules, rebuild graph) need a writable
     * archive; reading works on a read-only one */
    db_error de = {0};
    bool readonly = access(o.archive, F_OK) != 0 || access(o.archive, W_OK) != 0;
    db_archive *a = cli_open_archive(o.archive, readonly, &de);
    if (!a && o.statement && help_only(o.statement)) { /* help needs no archive */
        query_session s = {.archive = NULL, .archive_path = o.archive, .format = o.format, .out = stdout};
        rc = run_source(&s, "query", o.statement, strlen(o.statement));
        free(o.statement);
        return rc;
    }
    if (!a) {
        fprintf(stderr, "argusq: %s\n", de.msg);
        free(o.statement);
        return 2;
    }
    query_session s = {.archive = a, .archive_path = o.archive, .format = o.format, .out = stdout};
    if (o.trace)
        snprintf(s.trace, sizeof s.trace, "%s", o.trace);
    if (o.statement)
        rc = run_source(&s, "query", o.statement, strlen(o.statement));
    else if (o.script)
        rc = run_file(&s, o.script);
    else if (!isatty(STDIN_FILENO))
        rc = run_file(&s, "-");
    else
        rc = repl(&s);
    db_close(a);
    free(o.statement);
    return rc;
}
