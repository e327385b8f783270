/* cli/admin.c -- the archive's own commands: `argusq compact`, `argusq
 * backup FILE`, `argusq info` (db/manage.c does the work), and `argusq
 * dump` (dump/dump.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "db/db.h"
#include "include/argusq.h"
#include "query/query.h"

db_archive *cli_open_archive(const char *path, bool readonly, db_error *de)
{
    db_archive *a = db_open(path, readonly, de);
    if (a || !de->old_format || readonly)
        return a;
    /* an archive of an earlier format, and this process may write it */
    query_error qe = {0};
    if (query_migrate(path, stderr, &qe)) {
        snprintf(de->msg, sizeof de->msg, "%s", qe.msg);
        return NULL;
    }
    *de = (db_error){0};
    return db_open(path, readonly, de);
}

static db_archive *open_archive(const char *path, bool readonly)
{
    db_error de = {0};
    if (access(path, F_OK) != 0) {
        fprintf(stderr, "argusq: %s: no such archive\n", path);
        return NULL;
    }
    db_archive *a = cli_open_archive(path, readonly, &de);
    if (!a)
        fprintf(stderr, "argusq: %s\n", de.msg);
    return a;
}

static void mib(char *buf, size_t len, uint64_t b)
{
    snprintf(buf, len, "%.1f MiB", (double)b / (1024.0 * 1024.0));
}

int cli_compact(const char *path, bool json)
{
    db_archive *a = open_archive(path, false);
    if (!a)
        return 2;
    db_error de = {0};
    uint64_t before = 0, after = 0;
    int rc = db_compact(a, &before, &after, &de);
    db_close(a);
    if (rc) {
        fprintf(stderr, "argusq: %s\n", de.msg);
        return 1;
    }
    if (json) {
        fputs("{\"compacted\":", stdout);
        query_json_str(stdout, path, strlen(path));
        printf(",\"before\":%" PRIu64 ",\"after\":%" PRIu64 ",\"saved\":%" PRIu64 "}\n", before, after,
               before > after ? before - after : 0);
    }
    else {
        char b[32], f[32], s[32];
        mib(b, sizeof b, before);
        mib(f, sizeof f, after);
        mib(s, sizeof s, before > after ? before - after : 0);
        printf("compacted %s: %s -> %s (%s saved)\n", path, b, f, s);
    }
    return 0;
}

int cli_backup(const char *path, const char *to, bool json)
{
    db_archive *a = open_archive(path, !db_writable(path));
    if (!a)
        return 2;
    db_error de = {0};
    int rc = db_backup(a, to, &de);
    db_close(a);
    if (rc) {
        fprintf(stderr, "argusq: %s\n", de.msg);
        return 1;
    }
    if (json) {
        fputs("{\"backup\":", stdout);
        query_json_str(stdout, to, strlen(to));
        fputs(",\"of\":", stdout);
        query_json_str(stdout, path, strlen(path));
        fputs("}\n", stdout);
    }
    else
        printf("backed up %s to %s\n", path, to);
    return 0;
}

int cli_info(const char *path, bool json)
{
    db_archive *a = open_archive(path, !db_writable(path)); /* an old format: migrated */
    if (!a)
        return 2;
    db_error de = {0};
    db_archive_info in;
    int rc = db_info(a, &in, &de);
    db_close(a);
    if (rc) {
        fprintf(stderr, "argusq: %s\n", de.msg);
        return 1;
    }
    uint64_t used = (in.pages_used - (in.pages_free < in.pages_used ? in.pages_free : 0)) * in.page_size;
    double per_event = in.events ? (double)in.file_bytes / (double)in.events : 0;
    if (json) {
        fputs("{\"archive\":", stdout);
        query_json_str(stdout, path, strlen(path));
        printf(",\"format\":%u,\"file_bytes\":%" PRIu64 ",\"page_size\":%" PRIu64
               ",\"pages\":%" PRIu64 ",\"free_pages\":%" PRIu64 ",\"used_bytes\":%" PRIu64
               ",\"traces\":%" PRIu64 ",\"events\":%" PRIu64 ",\"nodes\":%" PRIu64 ",\"edges\":%" PRIu64
               ",\"bytes_per_event\":%.1f}\n",
               in.format, in.file_bytes, in.page_size, in.file_bytes / in.page_size, in.pages_free, used,
               in.traces, in.events, in.nodes, in.edges, per_event);
        return 0;
    }
    char f[32], u[32], fr[32];
    mib(f, sizeof f, in.file_bytes);
    mib(u, sizeof u, used);
    mib(fr, sizeof fr, in.pages_free * in.page_size);
    printf("archive      %s\n", path);
    printf("format       %u\n", in.format);
    printf("file         %s (%" PRIu64 " pages of %" PRIu64 " bytes)\n", f, in.file_bytes / in.page_size,
           in.page_size);
    printf("used         %s\n", u);
    printf("free         %s (%" PRIu64 " pages; `argusq compact` gives them back)\n", fr, in.pages_free);
    printf("traces       %" PRIu64 "\n", in.traces);
    printf("events       %" PRIu64 " (%.1f bytes of file each)\n", in.events, per_event);
    printf("nodes        %" PRIu64 "\n", in.nodes);
    printf("edges        %" PRIu64 "\n", in.edges);
    return 0;
}

int cli_dump(const char *path, const char *trace, const char *to, bool json)
{
    if (access(path, F_OK) != 0) {
        fprintf(stderr, "argusq: %s: no such archive\n", path);
        return 2;
    }
    argusq_error e;
    /* an archive of an earlier format is migrated first when this process may write it */
    unsigned flags = db_writable(path) ? ARGUSQ_OPEN_WRITE | ARGUSQ_OPEN_LOG : ARGUSQ_OPEN_READ;
    argusq_archive *a = argusq_open(path, flags, &e);
    if (!a) {
        fprintf(stderr, "argusq: %s\n", e.message);
        return 2;
    }
    bool to_stdout = !to || strcmp(to, "-") == 0;
    argusq_dump_info st = {.size = sizeof st};
    int rc = argusq_dump(a, trace, to_stdout ? "-" : to, &st, &e);
    argusq_close(a);
    if (rc) {
        fprintf(stderr, "argusq: %s\n", e.message);
        return 1;
    }
    if (to_stdout)
        return 0; /* the dump is the output */
    if (json) {
        fputs("{\"dump\":", stdout);
        query_json_str(stdout, to, strlen(to));
        fputs(",\"trace\":", stdout);
        query_json_str(stdout, st.trace, strlen(st.trace));
        printf(",\"events\":%" PRIu64 ",\"declarations\":%" PRIu64 ",\"labels\":%" PRIu64
               ",\"rules\":%" PRIu64 ",\"symbols\":%" PRIu64 "}\n",
               st.events, st.declarations, st.labels, st.rules, st.symbols);
    } else
        printf("dumped trace \"%s\" to %s: %" PRIu64 " events, %" PRIu64 " declarations, %" PRIu64
               " labels, %" PRIu64 " rules, %" PRIu64 " symbols\n",
               st.trace, to, st.events, st.declarations, st.labels, st.rules, st.symbols);
    return 0;
}
