/* cli/ingest.c -- `argusq ingest FILE` and `argusq record -- CMD`:
 * libargusq ingests (lib/ingest.c) and record/ records; here the
 * progress bar, a pipe or standard input spooled to a file, and the
 * words of the summary. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ingest/ingest.h"
#include "query/query.h"
#include "record/record.h"

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
    while (buf && !cli_interrupted() && (n = read(in, buf, bufsz)) != 0) {
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
    bool ok = buf && n == 0 && !cli_interrupted();
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

int cli_ingest(const cli_options *o)
{
    char copy[4200];
    bool named;
    int spooled = spool(o->file, copy, sizeof copy, &named);
    if (spooled == -1 && cli_interrupted()) {
        fprintf(stderr, "argusq: %s: interrupted; nothing of it was ingested\n", o->file);
        return CLI_EXIT_INTERRUPTED;
    }
    if (spooled == -1)
        return 2; /* as for a file that cannot be read */
    progress pg; /* on stderr, when it is a terminal */
    progress_begin(&pg, "ingest", 0);
    argusq_ingest_opts io = {.size = sizeof io, .name = o->name, .rules = o->rules, .arch = o->arch,
                             .labels = o->labels, .nlabels = (size_t)o->nlabels, .progress = ingest_progress,
                             .warning = ingest_warning, .ctx = &pg, .interrupt = cli_interrupt_flag()};
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
        return CLI_EXIT_INTERRUPTED;
    }
    if (rc) {
        if (e.source[0]) /* a rule of the rules file or of a dump */
            cli_report(e.source, e.text, strlen(e.text), &e);
        else
            fprintf(stderr, "argusq: %s\n", e.message);
        return cli_status_of(&e);
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

/* The recording's bar: what the kernel's buffers hold so far. */
static void bar_of_record(void *ctx, uint64_t bytes, uint64_t events)
{
    if (bytes == UINT64_MAX)
        progress_end(ctx); /* CMD ended: the summary follows */
    else
        progress_update(ctx, bytes, events);
}

/* argusq [-d ARCHIVE] record [-o FILE] [--max-mb N] [--events LIST]
 * [--watch SYMBOL]... [--] CMD [ARGS...]: options up to CMD, then CMD's
 * own arguments untouched.  Returns the exit status. */
int cli_record(int argc, char **argv, int first)
{
    record_opts o = {.output = "trace.dat", .log = stderr};
    const char **watch = calloc((size_t)argc, sizeof *watch);
    if (!watch)
        return cli_usage_error("out of memory", NULL);
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
                return cli_usage_error("missing file after", a);
            }
            o.output = argv[++i];
        } else if (!strcmp(a, "--max-mb")) {
            char *end;
            unsigned long v = has_next ? strtoul(argv[i + 1], &end, 10) : 0;
            if (!has_next || !*argv[i + 1] || *end || v == 0 || v > 1u << 20) {
                free(watch);
                return cli_usage_error("--max-mb wants a number of MiB (1 to 1048576), not",
                                   has_next ? argv[i + 1] : "nothing");
            }
            o.max_mb = (unsigned)v;
            i++;
        } else if (!strcmp(a, "--events")) {
            if (!has_next) {
                free(watch);
                return cli_usage_error("missing event list after", a);
            }
            o.events = argv[++i];
        } else if (!strcmp(a, "--watch")) {
            if (!has_next) {
                free(watch);
                return cli_usage_error("missing symbol after", a);
            }
            watch[o.nwatch++] = argv[++i];
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            free(watch);
            cli_usage_record(stdout);
            return 0;
        } else if (a[0] == '-') {
            free(watch);
            return cli_usage_error("unknown record option", a);
        } else {
            break;
        }
    }
    if (i >= argc) {
        free(watch);
        return cli_usage_error("record needs a command: argusq record [OPTIONS] -- CMD [ARGS...]", NULL);
    }
    o.watch = watch;
    o.argv = argv + i;
    record_stats st;
    char err[1024] = "";
    progress bar;
    progress_begin(&bar, "record", 0);
    if (bar.on) {
        o.progress = bar_of_record;
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
