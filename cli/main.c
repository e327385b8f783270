/* cli/main.c -- the argusq command: ingest a trace, or run statements (one
 * from the command line, a script with -f, stdin, or a REPL).  Thin on
 * purpose: ingest and statements are calls of libargusq's public API
 * (include/argusq.h), as any client makes them; recording (record/) and
 * the archive's own commands (admin.c: db/) are not part of it.
 *
 * Exit status: 0 success, 1 a statement or an ingest failed, 2 usage or
 * I/O error (archive or script cannot be opened); killed by SIGINT (130
 * in a shell) when Ctrl-C ended a statement or an ingest, once undone. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <sys/stat.h>

#include <editline/readline.h>

#include "db/db.h"
#include "include/argusq.h"
#include "ingest/ingest.h"
#include "query/query.h"
#include "record/record.h"
#include "admin.h"
#include "progress.h"

static const char usage[] =
    "usage: argusq [-d ARCHIVE] ingest FILE|FOLDER [--name NAME] [--rules RULES] [--arch MACHINE]\n"
    "              [--label KEY=VALUE]... [--json]\n"
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
    "ingest reads (detected by content) ftrace text, trace-cmd report, trace.dat, systrace,\n"
    "the Argus format, perf script text, perf.data, Perfetto (plain or gzip'd) and a CTF (LTTng)\n"
    "trace's FOLDER; FILE - is standard input (copied to a temporary file first).\n"
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
    int format; /* enum argusq_format */
    bool ingest;
    bool list_traces; /* --list-traces: names, one a line (bash completion) */
    const char *file;
    const char *output; /* dump -o FILE */
    char *statement; /* owned */
    int words;       /* the command-line words it was joined from */
} options;

/* ---- Ctrl-C ----
 * The one thing a SIGINT handler does is set this flag, which libargusq
 * looks at through the interrupt of its options: a statement stops at its
 * next read of the archive, an ingest within 4096 events or at its next
 * batch (its trace then deleted, as after any failure).  The REPL then
 * goes back to its prompt (repl_getc looks at the flag there); a command
 * undoes what it did and ends by SIGINT, as without a handler.  Something
 * stuck where nothing looks at the flag still ends: at the second Ctrl-C
 * in a command, the third in the REPL, the handler gives SIGINT its
 * default action and raises it.  A signal handler's state, so static: the
 * command's one flag (damaged_msg, below, is written once before any
 * handler can run; `argusq record` has its own, record/record.c). */
static volatile sig_atomic_t interrupted;

#define EXIT_INTERRUPTED 130 /* what a shell shows for a death by SIGINT */

static void on_interrupt_command(int sig)
{
    if (++interrupted >= 2) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

static void on_interrupt_repl(int sig)
{
    if (++interrupted >= 3) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

/* No SA_RESTART: a wait for the archive's writer lock, or a write to a
 * terminal that reads no more for now, returns EINTR, and its statement
 * ends.  A SIGINT ignored when argusq started (a background job of a
 * shell without job control) stays ignored. */
static void catch_interrupts(bool repl)
{
    struct sigaction old, sa = {.sa_handler = repl ? on_interrupt_repl : on_interrupt_command};
    if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
        return;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
}

/* A command's end after Ctrl-C, once what it did was undone: death by
 * SIGINT, which tells a shell's loop or make to stop too (status 130). */
static int die_interrupted(void)
{
    fflush(stdout);
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
    return EXIT_INTERRUPTED; /* SIGINT blocked by the caller: an exit says the same */
}

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "argusq: %s%s%s\n%s", msg, arg ? " " : "", arg ? arg : "", usage);
    return 2;
}

/* Options may come before or after the command words. */
static int parse_args(int argc, char **argv, options *o)
{
    const char *env = getenv("ARGUSQ_DB");
    o->archive = env && *env ? env : "argus.db";
    o->format = ARGUSQ_FORMAT_TABLE;
    size_t stmt_len = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            exit(0);
        } else if (!strcmp(a, "--version")) {
            printf("argusq %s\n", argusq_version());
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
                return usage_error("missing machine (x86_64, arm64, arm, i386, riscv64) after", a);
            o->arch = argv[++i];
        } else if (!strcmp(a, "--label")) {
            if (!has_next)
                return usage_error("missing KEY=VALUE after", a);
            const char *kv = argv[++i], *eq = strchr(kv, '=');
            char key[ARGUSQ_LABEL_KEY_MAX + 1];
            argusq_error e;
            if (!eq || (size_t)(eq - kv) > ARGUSQ_LABEL_KEY_MAX)
                return usage_error("--label takes KEY=VALUE:", kv);
            snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
            if (argusq_label_check(key, eq + 1, &e))
                return usage_error(e.message, NULL);
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
            o->format = ARGUSQ_FORMAT_JSON;
        } else if (!strcmp(a, "--list-traces")) {
            o->list_traces = true;
        } else if (!strcmp(a, "--format")) {
            if (!has_next)
                return usage_error("missing format after", a);
            const char *f = argv[++i];
            if ((o->format = argusq_format_from_name(f)) < 0)
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
            o->words++;
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

/* ---- ingest: libargusq does it (lib/ingest.c); here the bar and the words ---- */

static void ingest_progress(void *ctx, uint64_t bytes, uint64_t total, uint64_t events, const char *phase)
{
    progress *pg = ctx;
    if (phase) {
        progress_phase(pg, phase);
        return;
    }
    progress_set_total(pg, total);
    progress_update(pg, bytes, events);
}

static void ingest_warning(void *ctx, const char *msg)
{
    progress_end(ctx);
    fprintf(stderr, "argusq: %s\n", msg);
}

/* The exit status of a failure: 1 a statement or an ingest failed, 2
 * usage, I/O or the archive. */
static int status_of(const argusq_error *e)
{
    return e->code == ARGUSQ_ERR_STATEMENT || e->code == ARGUSQ_ERR_INGEST ? 1 : 2;
}

static void report(const char *where, const char *src, size_t len, const argusq_error *e);

/* A trace on standard input ("-") or from a pipe (`<(zcat t.gz)`): the
 * readers detect a format by its first bytes and then read the file from
 * its start, some more than once (trace.dat, perf.data, Perfetto), so the
 * stream is copied into an unnamed temporary file first (O_TMPFILE: gone
 * with the process, however it ends), which is read by its /proc/self/fd
 * name (without /proc, or where O_TMPFILE is not supported, a named one,
 * *named, which the caller removes); messages and the catalog still name
 * what was given.  The fd, with the copy's path in copy, or -1 with the
 * message printed; -2: path is a file to read as it is. */
static int spool(const char *path, char *copy, size_t cap, bool *named)
{
    *named = false;
    struct stat st;
    bool std = strcmp(path, "-") == 0;
    if (!std && (stat(path, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode))))
        return -2;
    if (std && isatty(STDIN_FILENO)) { /* as gzip does: a trace is not typed in */
        fprintf(stderr, "argusq: -: standard input is a terminal: pipe a trace into it (trace-cmd report | "
                        "argusq ingest -)\n");
        return -1;
    }
    int in = std ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        fprintf(stderr, "argusq: %s: %s\n", path, strerror(errno));
        return -1;
    }
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    snprintf(copy, cap, "/proc/self/fd/%d", fd);
    if (fd >= 0 && access(copy, R_OK) != 0) { /* no /proc */
        close(fd);
        fd = -1;
    }
    if (fd < 0 && (size_t)snprintf(copy, cap, "%s/argusq-stdin-XXXXXX", dir) < cap &&
        (fd = mkostemp(copy, O_CLOEXEC)) >= 0)
        *named = true; /* a file with a name: the caller removes it */
    if (fd < 0) {
        fprintf(stderr, "argusq: %s: cannot make a temporary file in %s for it: %s\n", path, dir, strerror(errno));
        if (!std)
            close(in);
        return -1;
    }
    size_t bufsz = 1 << 20;
    char *buf = malloc(bufsz);
    ssize_t n = 0;
    while (buf && !interrupted && (n = read(in, buf, bufsz)) != 0) {
        if (n < 0 && errno == EINTR)
            continue; /* Ctrl-C: the loop's test */
        const char *what = n < 0 ? "cannot read it" : NULL;
        for (ssize_t done = 0; !what && done < n;) {
            ssize_t w = write(fd, buf + done, (size_t)(n - done));
            if (w < 0 && errno != EINTR)
                what = "cannot copy it to a temporary file";
            done += w > 0 ? w : 0;
        }
        if (what) {
            fprintf(stderr, "argusq: %s: %s: %s\n", path, what, strerror(errno));
            break;
        }
    }
    bool ok = buf && n == 0 && !interrupted;
    if (!buf)
        fprintf(stderr, "argusq: %s: out of memory\n", path);
    free(buf);
    if (!std)
        close(in);
    if (!ok) {
        close(fd);
        if (*named)
            unlink(copy);
        return -1;
    }
    return fd;
}

static int cmd_ingest(const options *o)
{
    char copy[4200];
    bool named;
    int spooled = spool(o->file, copy, sizeof copy, &named);
    if (spooled == -1 && interrupted) {
        fprintf(stderr, "argusq: %s: interrupted; nothing of it was ingested\n", o->file);
        return EXIT_INTERRUPTED;
    }
    if (spooled == -1)
        return 2; /* as for a file that cannot be read */
    progress pg; /* on stderr, when it is a terminal */
    progress_begin(&pg, "ingest", 0);
    argusq_ingest_opts io = {.size = sizeof io, .name = o->name, .rules = o->rules, .arch = o->arch,
                             .labels = o->labels, .nlabels = (size_t)o->nlabels, .progress = ingest_progress,
                             .warning = ingest_warning, .ctx = &pg, .interrupt = &interrupted};
    if (spooled >= 0) {
        io.source = o->file;
        if (!io.name && strcmp(o->file, "-") == 0)
            io.name = "stdin";
    }
    argusq_ingest_info info = {.size = sizeof info};
    argusq_error e;
    int rc = argusq_ingest_into(o->archive, ARGUSQ_OPEN_LOG, spooled >= 0 ? copy : o->file, &io, &info, &e);
    if (spooled >= 0) {
        close(spooled);
        if (named)
            unlink(copy);
    }
    progress_end(&pg);
    if (rc && e.code == ARGUSQ_ERR_INTERRUPTED) {
        fprintf(stderr, "argusq: %s\n", e.message);
        return EXIT_INTERRUPTED;
    }
    if (rc) {
        if (e.source[0]) /* a rule of the rules file or of a dump */
            report(e.source, e.text, strlen(e.text), &e);
        else
            fprintf(stderr, "argusq: %s\n", e.message);
        return status_of(&e);
    }
    if (o->format == ARGUSQ_FORMAT_JSON) {
        printf("{\"trace\":\"");
        for (const char *p = info.trace; *p; p++)
            printf(*p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
        printf("\",\"events\":%llu,\"threads\":%llu,\"processes\":%llu,\"nodes\":%llu,\"edges\":%llu,"
               "\"skipped\":%llu,\"reordered\":%llu,\"late\":%llu,\"truncated_line\":%llu,\"format\":",
               (unsigned long long)info.events, (unsigned long long)info.threads,
               (unsigned long long)info.processes, (unsigned long long)info.nodes,
               (unsigned long long)info.edges, (unsigned long long)info.skipped,
               (unsigned long long)info.reordered, (unsigned long long)info.late,
               (unsigned long long)info.truncated_line);
        query_json_str(stdout, info.format, strlen(info.format));
        fputs(",\"recorder\":", stdout);
        query_json_str(stdout, info.recorder, strlen(info.recorder));
        printf(",\"userspace\":%llu,\"userspace_skipped\":%llu}\n", (unsigned long long)info.userspace,
               (unsigned long long)info.userspace_skipped);
    } else {
        printf("ingested %s as trace \"%s\" into %s (%s%s%s, %.2f s)\n", o->file, info.trace, o->archive,
               info.format, info.recorder[0] ? ", " : "", info.recorder, info.seconds);
        printf("  %llu events, %llu threads, %llu processes, %llu nodes, %llu edges, %llu lines skipped\n",
               (unsigned long long)info.events, (unsigned long long)info.threads,
               (unsigned long long)info.processes, (unsigned long long)info.nodes,
               (unsigned long long)info.edges, (unsigned long long)info.skipped);
        /* a session's userspace events, and why they are not in the graph */
        if (info.userspace_skipped)
            printf("  %llu userspace events (LTTng-UST), %llu of them skipped: their UST trace records no vtid "
                   "context (lttng add-context -u -t vtid -t vpid)\n",
                   (unsigned long long)info.userspace, (unsigned long long)info.userspace_skipped);
        else if (info.userspace)
            printf("  %llu userspace events (LTTng-UST), each on the thread of its vtid context\n",
                   (unsigned long long)info.userspace);
        if (info.reordered || info.late || info.truncated_line)
            printf("  %llu events put back in time order, %llu kept late, last line %s\n",
                   (unsigned long long)info.reordered, (unsigned long long)info.late,
                   info.truncated_line ? "cut short and left out" : "whole");
    }
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
    record_opts o = {.output = "trace.dat", .log = stderr};
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
    record_stats st;
    char err[1024] = "";
    progress bar;
    progress_begin(&bar, "record", 0);
    if (bar.on) {
        o.progress = record_progress;
        o.progress_ctx = &bar;
    }
    int rc = record_run(&o, &st, err, sizeof err);
    progress_end(&bar);
    free(watch);
    if (rc == 0) {
        fprintf(stderr, "argusq: ingest it with: argusq ingest %s\n", o.output);
        return 0;
    }
    fprintf(stderr, "argusq: record: %s\n", err);
    return rc == -2 ? 3 : 1;
}

/* ---- statements: libargusq runs them (lib/session.c) ---- */

/* "where: line:col: msg" and the offending source line with a caret.
 * src is the whole text, or the offending line alone when it is e->text
 * (the line of a rules file or a dump that libargusq read). */
static void report(const char *where, const char *src, size_t len, const argusq_error *e)
{
    if (e->line <= 0) {
        fprintf(stderr, "argusq: %s: %s\n", where, e->message);
        return;
    }
    fprintf(stderr, "argusq: %s:%d:%d: %s\n", where, e->line, e->col, e->message);
    const char *p = src, *end = src + len;
    for (int l = 1; l < e->line && p < end && src != e->text; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    int n = (int)((nl ? nl : end) - p);
    fprintf(stderr, "  %.*s\n  %*s^\n", n, p, e->col - 1, "");
}

/* Parses and runs src; stops at the first failing statement. */
static int run_source_to(argusq_session *s, const char *where, const char *src, size_t len, FILE *out)
{
    argusq_error e;
    long n = argusq_session_run_file(s, src, len, out, &e);
    /* `argusq ''` or `argusq ';'` asked for nothing: say so (a script or
     * stdin may well hold no statement) */
    if (n == 0 && !strcmp(where, "query")) {
        fprintf(stderr, "argusq: query: no statement (`argusq help` lists them)\n");
        return 2;
    }
    if (n >= 0)
        return 0;
    if (e.code == ARGUSQ_ERR_INTERRUPTED) {
        /* after what the statement wrote and the terminal's ^C, on a line of its own */
        fflush(stdout);
        if (isatty(STDOUT_FILENO))
            putchar('\n');
        fflush(stdout);
        fprintf(stderr, "argusq: interrupted\n");
        return EXIT_INTERRUPTED;
    }
    if (e.code != ARGUSQ_ERR_STATEMENT) {
        fprintf(stderr, "argusq: %s\n", e.message);
        return status_of(&e);
    }
    /* a script names the line of the statement that failed */
    if (e.stmt_count && e.line <= 0 && (e.stmt_count > 1 || strcmp(where, "query") != 0))
        fprintf(stderr, "argusq: %s:%d: %s\n", where, e.stmt_line, e.message);
    else
        report(where, src, len, &e);
    return 1;
}

static int run_source(argusq_session *s, const char *where, const char *src, size_t len)
{
    return run_source_to(s, where, src, len, stdout);
}


static int run_file(argusq_session *s, const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "argusq: %s: %s\n", path, strerror(errno));
        return 2;
    }
    size_t len;
    char *src = ingest_slurp(f, &len);
    if (f != stdin)
        fclose(f);
    if (!src && interrupted) /* a read cut short by Ctrl-C (EINTR) */
        return EXIT_INTERRUPTED;
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

/* A byte the REPL reads from the terminal, or EOF: at the end of the
 * input, and at a Ctrl-C (`interrupted` set).  libedit reads through it
 * too (rl_getc_function), which is why it exists: a Ctrl-C that came
 * after the prompt was written but before read(2) began would have run
 * its handler and left read to sleep through it (it did, under load).
 * Here SIGINT is blocked from the look at the flag on, and let in only
 * while ppoll waits: a Ctrl-C at any moment ends the wait.  (Bytes, not
 * characters: as libedit's own reading in argusq's C locale, which drops
 * what is not ASCII.) */
static int repl_getc(FILE *in)
{
    int fd = fileno(in);
    sigset_t intr, old;
    sigemptyset(&intr);
    sigaddset(&intr, SIGINT);
    for (;;) {
        pthread_sigmask(SIG_BLOCK, &intr, &old);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = interrupted ? -1 : ppoll(&p, 1, NULL, &old);
        int e = errno;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (interrupted)
            return EOF;
        if (rc < 0 && e == EINTR)
            continue; /* another signal: a resized window (libedit's SIGWINCH) */
        if (rc < 0)
            return EOF;
        unsigned char c;
        ssize_t n = read(fd, &c, 1);
        if (n == 1)
            return c;
        if (n == 0 || (errno != EINTR && errno != EAGAIN))
            return EOF;
    }
}

/* A line of the REPL: through libedit, or -- on a terminal that cannot
 * edit (TERM unset or dumb: an editor's shell buffer, a serial console),
 * where libedit took Ctrl-D for a character -- read as the terminal's own
 * line discipline gives it, where Ctrl-D ends the input.  NULL at the end,
 * and at a Ctrl-C (`interrupted` set); the caller frees the line. */
static char *read_line(const char *prompt, bool edit)
{
    if (edit)
        return readline(prompt);
    fputs(prompt, stdout);
    fflush(stdout);
    char *line = NULL;
    size_t len = 0, cap = 0;
    int c;
    while ((c = repl_getc(stdin)) != EOF && c != '\n') {
        if (len + 2 > cap) {
            char *p = realloc(line, cap = cap ? 2 * cap : 256);
            if (!p)
                break;
            line = p;
        }
        line[len++] = (char)c;
    }
    if (c != '\n' && (interrupted || len == 0)) { /* a line cut short by Ctrl-D is a line */
        free(line);
        return NULL;
    }
    if (!line && !(line = malloc(1)))
        return NULL;
    line[len] = '\0';
    return line;
}

/* ---- the REPL's settings and completion ---- */

typedef struct repl_state {
    argusq_session *s;
    argusq_archive *a;          /* the session's archive (completion reads it) */
    bool timer;                 /* .timer on: each statement's time */
    bool no_headers, expanded;  /* .headers off, .expanded on (\x) */
    bool rows;                  /* .rows on: "(N rows)" after a table */
    bool pager;                 /* .pager on: long output through $PAGER */
    int format;                 /* the session's output format */
    char trace[256];            /* the trace the completion's names are of */
    char **names;               /* completion: trace and thread names (malloc'd) */
    size_t nnames;
    bool have_names;
} repl_state;

/* One repl_state per process (libedit's completion callback takes no
 * context): set by repl() for its run, read by the generator. */
static repl_state *completing;

static void names_free(repl_state *r)
{
    for (size_t i = 0; i < r->nnames; i++)
        free(r->names[i]);
    free(r->names);
    r->names = NULL;
    r->nnames = 0;
    r->have_names = false;
}

static void names_add(repl_state *r, const char *s, size_t n)
{
    for (size_t i = 0; i < r->nnames; i++)
        if (strlen(r->names[i]) == n && memcmp(r->names[i], s, n) == 0)
            return;
    char **v = realloc(r->names, (r->nnames + 1) * sizeof *v);
    if (!v)
        return;
    r->names = v;
    if ((v[r->nnames] = strndup(s, n)) != NULL)
        r->nnames++;
}

/* the string values of "key": in a JSON text (argusq's own output: no
 * escapes but \" and \\ in names worth completing) */
static void names_from(repl_state *r, const char *json, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    for (const char *p = strstr(json, pat); p; p = strstr(p, pat)) {
        p += strlen(pat);
        const char *e = p;
        while (*e && *e != '"' && *e != '\\')
            e++;
        if (*e == '"')
            names_add(r, p, (size_t)(e - p));
    }
}

/* The trace names and the current trace's thread names, read once per
 * current trace (the threads: by `find nodes group by thread`). */
static void names_load(repl_state *r)
{
    const char *cur = argusq_session_trace(r->s);
    if (r->have_names && strcmp(r->trace, cur) == 0)
        return;
    names_free(r);
    snprintf(r->trace, sizeof r->trace, "%s", cur);
    r->have_names = true;
    argusq_query_opts qo = {.size = sizeof qo, .format = ARGUSQ_FORMAT_JSON, .trace = cur[0] ? cur : NULL};
    static const struct {
        const char *stmt, *key;
    } q[] = {{"traces", "name"}, {"find nodes group by thread", "thread"}};
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        char *out = NULL;
        size_t len = 0;
        argusq_error e;
        argusq_session *t = r->a ? argusq_session_new(r->a, &qo, &e) : NULL;
        if (t && argusq_session_query(t, q[i].stmt, strlen(q[i].stmt), &out, &len, &e) > 0 && out)
            names_from(r, out, q[i].key);
        argusq_free(out);
        argusq_session_free(t);
    }
}

/* Tab: the keywords, fields, kinds and aggregates of the language; in a
 * string ("..."), the archive's trace and thread names. */
static char *complete_word(const char *text, int state)
{
    static const char *const words[] = {
        "traces", "use", "trace", "help", "show", "node", "events", "of", "find", "nodes", "edges", "where",
        "order", "by", "asc", "desc", "limit", "slice", "back", "forward", "from", "depth", "via", "with", "weak",
        "match", "compare", "path", "diagnose", "thread", "against", "archive", "check", "fix", "after",
        "transaction", "critical", "export", "to", "rename", "label", "set", "unset", "drop", "rebuild", "graph",
        "rules", "rule", "boundary", "connect", "ignore", "on", "between", "group", "compute", "and", "or", "not",
        "in", "id", "tid", "pid", "proc", "begin", "end", "duration", "blocked", "running", "runnable", "kind",
        "cpu", "ts", "type", "phase", "name", "count", "sum", "min", "max", "avg", "median", "p50", "p90",
        "p95", "p99", "interrupt", "softirq", "timer", "dispatch", "runloop", "wakeup", "ipc", "ipc_reply",
        "preempt", "flag", "user", "io", ".format", ".timer", ".headers", ".expanded", ".rows", ".pager", ".help", "quit", NULL};
    static size_t i;
    static bool quoted;
    if (!state) {
        i = 0;
        /* the word follows a '"' when the character before it is one */
        quoted = rl_line_buffer && text >= rl_line_buffer + 0 && rl_point > (int)strlen(text) &&
                 rl_line_buffer[rl_point - strlen(text) - 1] == '"';
        if (quoted && completing)
            names_load(completing);
    }
    size_t n = strlen(text);
    if (quoted) {
        while (completing && i < completing->nnames)
            if (strncmp(completing->names[i++], text, n) == 0)
                return strdup(completing->names[i - 1]);
        return NULL;
    }
    while (words[i])
        if (strncasecmp(words[i++], text, n) == 0)
            return strdup(words[i - 1]);
    return NULL;
}

/* on/off of a setting, or a toggle without one (psql's \x, \timing) */
static bool setting(const char *cmd, const char *arg, bool now, bool *ok)
{
    *ok = true;
    if (!strcmp(arg, "on"))
        return true;
    if (!strcmp(arg, "off"))
        return false;
    if (!arg[0] && cmd[0] == '\\')
        return !now;
    *ok = false;
    return now;
}

/* `.format table|json|csv|...`, `.timer`, `.headers`, `.expanded` (psql's
 * \x), `.rows`, `.pager`, `.help`: the REPL's own settings (sqlite3's
 * dot-commands, psql's backslash ones).  Returns false for a line that is
 * none of them. */
static bool dot_command(repl_state *r, const char *line)
{
    const char *w = line + strspn(line, " \t");
    if (*w != '.' && *w != '\\')
        return false;
    char cmd[32] = "", arg[32] = "";
    sscanf(w, "%31s %31s", cmd, arg);
    bool ok = true;
    argusq_error e;
    if (!strcmp(cmd, ".format") || !strcmp(cmd, ".mode")) {
        int f = arg[0] ? argusq_format_from_name(arg) : -1;
        if (f < 0 || argusq_session_set_format(r->s, f, &e))
            fprintf(stderr, "argusq: .format table|json|csv|dot|svg|perfetto, not \"%s\"\n", arg);
        else
            r->format = f;
    } else if (!strcmp(cmd, ".timer") || !strcmp(cmd, "\\timing"))
        r->timer = setting(cmd, arg, r->timer, &ok);
    else if (!strcmp(cmd, ".headers"))
        r->no_headers = !setting(cmd, arg, !r->no_headers, &ok);
    else if (!strcmp(cmd, ".expanded") || !strcmp(cmd, "\\x"))
        r->expanded = setting(cmd, arg, r->expanded, &ok);
    else if (!strcmp(cmd, ".rows"))
        r->rows = setting(cmd, arg, r->rows, &ok);
    else if (!strcmp(cmd, ".pager"))
        r->pager = setting(cmd, arg, r->pager, &ok);
    else if (!strcmp(cmd, ".help") || !strcmp(cmd, "\\?"))
        printf(".format table|json|csv|dot|svg|perfetto  the output of the statements after it\n"
               ".timer on|off      (\\timing)  the time each statement took\n"
               ".headers on|off               the header row of tables\n"
               ".expanded on|off   (\\x)       a table's rows as blocks, a line per column\n"
               ".rows on|off                  \"(N rows)\" after a table\n"
               ".pager on|off                 output longer than the terminal through $PAGER (less)\n"
               ".help              (\\?)       this\n"
               "Tab completes keywords and fields, and in a string trace and thread names.\n");
    else
        fprintf(stderr, "argusq: unknown command %s (.help lists them)\n", cmd);
    if (!ok)
        fprintf(stderr, "argusq: %s on|off\n", cmd);
    else if (argusq_session_set_display(r->s, (r->no_headers ? ARGUSQ_DISPLAY_NO_HEADERS : 0) |
                                                  (r->expanded ? ARGUSQ_DISPLAY_EXPANDED : 0),
                                        &e))
        fprintf(stderr, "argusq: %s\n", e.message);
    else if (cmd[0] == '\\' && !arg[0]) /* a toggle says where it left the setting */
        printf("%s is %s.\n", !strcmp(cmd, "\\x") ? "Expanded display" : "Timing",
               (!strcmp(cmd, "\\x") ? r->expanded : r->timer) ? "on" : "off");
    return true;
}

/* The terminal's height in lines; 0 not a terminal. */
static int term_lines(void)
{
    struct winsize ws;
    return ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_row : 0;
}

/* A statement's output, held (with .pager on, on a terminal): through the
 * pager when it is longer than the terminal, else as it is. */
static void page(const char *out, size_t len)
{
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += out[i] == '\n';
    int rows = term_lines();
    const char *pager = getenv("PAGER");
    FILE *p = rows > 0 && lines >= (size_t)rows ? popen(pager && *pager ? pager : "less -FRX", "w") : NULL;
    fwrite(out, 1, len, p ? p : stdout);
    if (p)
        pclose(p);
    fflush(stdout);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int repl(argusq_session *s, argusq_archive *a, const char *archive, int format)
{
    repl_state rs = {.s = s, .a = a, .rows = true, .format = format};
    completing = &rs;
    rl_completion_entry_function = complete_word;
    rl_basic_word_break_characters = " \t\n\"(),=<>;";
    const char *term = getenv("TERM");
    bool edit = term && *term && strcmp(term, "dumb") != 0;
    char hist[4096] = "";
    const char *home = getenv("HOME");
    if (home)
        snprintf(hist, sizeof hist, "%s/.argusq_history", home);
    rl_getc_function = repl_getc; /* before libedit's first call, which reads it */
    using_history();
    if (hist[0])
        read_history(hist);
    printf("argusq %s on %s -- end statements with ';', `help` lists them, Ctrl-D quits\n", argusq_version(),
           archive);
    char *buf = NULL;
    size_t len = 0;
    for (;;) {
        interrupted = 0;
        /* the prompt names the current trace once `use trace` set one */
        char prompt[300];
        const char *cur = argusq_session_trace(s);
        if (len)
            snprintf(prompt, sizeof prompt, "   ...> ");
        else if (cur[0])
            snprintf(prompt, sizeof prompt, "(%.256s) argusq> ", cur);
        else
            snprintf(prompt, sizeof prompt, "argusq> ");
        char *line = read_line(prompt, edit);
        if (interrupted) {
            /* Ctrl-C at the prompt: the line being typed goes, with the
             * lines of the statement it continued; a fresh prompt (the
             * terminal echoed ^C itself where libedit is not reading) */
            free(line);
            len = 0;
            fputs(edit ? "^C\n" : "\n", stdout);
            continue;
        }
        if (!line)
            break;
        if (!len && line[strspn(line, " \t")] == '\0') { /* Enter on an empty line: the prompt again */
            free(line);
            continue;
        }
        if (!len && dot_command(&rs, line)) {
            add_history(line);
            free(line);
            continue;
        }
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
        if (w[strspn(w, " \t;")] == '\0') { /* a lone `;`: nothing asked */
            len = 0;
            continue;
        }
        double t0 = now_s();
        char *held = NULL;
        size_t nheld = 0;
        FILE *out = rs.pager && isatty(STDOUT_FILENO) ? open_memstream(&held, &nheld) : NULL;
        run_source_to(s, "query", buf, len - 1, out ? out : stdout);
        if (out) {
            fclose(out);
            page(held, nheld);
            free(held);
        }
        long rows = argusq_session_rows(s);
        if (rs.rows && rows >= 0 && rs.format == ARGUSQ_FORMAT_TABLE)
            printf("(%ld row%s)\n", rows, rows == 1 ? "" : "s");
        if (rs.timer)
            printf("time: %.3f s\n", now_s() - t0);
        clearerr(stdout); /* a write Ctrl-C cut short (EINTR) is no reason to stop writing */
        len = 0;
    }
    free(buf);
    if (hist[0])
        write_history(hist);
    putchar('\n');
    names_free(&rs);
    completing = NULL;
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
        catch_interrupts(false);
        rc = cmd_ingest(&o);
        free(o.statement);
        return rc == EXIT_INTERRUPTED ? die_interrupted() : rc;
    }
    if (o.list_traces) {
        free(o.statement);
        return list_traces(o.archive);
    }
    /* the archive's own commands (admin.c) */
    bool json = o.format == ARGUSQ_FORMAT_JSON;
    if (o.statement && (!strcmp(o.statement, "info") || !strcmp(o.statement, "compact"))) {
        rc = o.statement[0] == 'i' ? cli_info(o.archive, json) : cli_compact(o.archive, json);
        free(o.statement);
        return rc;
    }
    if (o.statement && !strcmp(o.statement, "dump")) {
        rc = cli_dump(o.archive, o.trace, o.output, json);
        free(o.statement);
        return rc;
    }
    if (o.statement && (!strcmp(o.statement, "backup") || !strncmp(o.statement, "backup ", 7))) {
        rc = o.statement[6] ? cli_backup(o.archive, o.statement + 7, json) : usage_error("backup needs a FILE", NULL);
        free(o.statement);
        return rc;
    }
    /* statements that change a trace (rules, rebuild graph) need a writable
     * archive; reading works on a read-only one (and on one whose
     * directory this user may not write: db_open) */
    argusq_error e;
    bool readonly = !db_writable(o.archive);
    argusq_archive *a = argusq_open(o.archive, readonly ? ARGUSQ_OPEN_READ : ARGUSQ_OPEN_WRITE | ARGUSQ_OPEN_LOG, &e);
    if (!a && !(o.statement && help_only(o.statement))) { /* help needs no archive */
        fprintf(stderr, "argusq: %s\n", e.message);
        free(o.statement);
        return 2;
    }
    /* Ctrl-C from here on ends the statement running (not an archive's
     * migration in argusq_open: a kill leaves that undone) */
    bool is_repl = !o.statement && !o.script && isatty(STDIN_FILENO);
    catch_interrupts(is_repl);
    argusq_query_opts qo = {.size = sizeof qo, .format = o.format, .trace = o.trace, .interrupt = &interrupted};
    argusq_session *s = argusq_session_new(a, &qo, &e);
    if (!s) {
        fprintf(stderr, "argusq: %s\n", e.message);
        rc = 2;
    } else if (o.statement) {
        rc = run_source(s, "query", o.statement, strlen(o.statement));
        /* `argusq find nodes where thread = "hog"`: the shell ate the quotes */
        if (rc == 1 && o.words > 1 && !strchr(o.statement, '"'))
            fprintf(stderr, "argusq: the shell takes double quotes away from words: put the whole statement in "
                            "single quotes, argusq '... = \"VALUE\"'\n");
    }
    else if (o.script)
        rc = run_file(s, o.script);
    else if (!is_repl)
        rc = run_file(s, "-");
    else
        rc = repl(s, a, o.archive, o.format);
    argusq_session_free(s);
    argusq_close(a);
    free(o.statement);
    return rc == EXIT_INTERRUPTED && !is_repl ? die_interrupted() : rc;
}
